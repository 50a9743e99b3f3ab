// `npm run generate`: reads Kafka's message specifications from ../shared/kafka-protocol and writes
// the codecs into src/protocol/generated/. With --check it writes nothing and exits 1 when the
// committed output differs from what the generator produces now (CI runs this).

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { emitMessage } from "./emit-message.js";
import { emitApiTable, emitErrorTable } from "./emit-tables.js";
import { loadSpecDir, SHARED_PROTOCOL_DIR } from "./spec.js";

const root = process.cwd();
const shared = join(root, SHARED_PROTOCOL_DIR);
const outDir = join(root, "src/protocol/generated");
const check = process.argv.includes("--check");

if (!existsSync(shared)) {
  console.error(
    `generate: protocol specs not found at ${shared} (expected the shared/ folder beside the repository)`,
  );
  process.exit(2);
}

const files = new Map<string, string>();
const groups: Array<[string, string]> = [
  ["messages", "messages"],
  ["coordinator-records", "coordinator-records"],
  ["storage-records", "storage-records"],
];
const allMessages = [];
for (const [srcDir, dstDir] of groups) {
  const specs = loadSpecDir(join(shared, srcDir));
  for (const spec of specs) files.set(`${dstDir}/${spec.name}.ts`, emitMessage(spec, "../../"));
  if (srcDir === "messages") allMessages.push(...specs);
}
files.set("api-table.ts", emitApiTable(allMessages));
files.set("errors.ts", emitErrorTable(JSON.parse(readFileSync(join(shared, "errors.json"), "utf8"))));

function listExisting(dir: string, base = dir): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listExisting(join(dir, e.name), base) : [relative(base, join(dir, e.name))],
  );
}

const existing = new Set(listExisting(outDir));
const differences: string[] = [];
for (const [rel, content] of files) {
  const path = join(outDir, rel);
  const current = existing.has(rel) ? readFileSync(path, "utf8") : undefined;
  existing.delete(rel);
  if (current === content) continue;
  differences.push(current === undefined ? `missing ${rel}` : `differs ${rel}`);
  if (!check) {
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, content);
  }
}
for (const rel of existing) {
  differences.push(`stale ${rel}`);
  if (!check) rmSync(join(outDir, rel));
}

if (check) {
  if (differences.length > 0) {
    console.error(`generated code is out of date (${differences.length} files); run \`npm run generate\`:`);
    for (const d of differences.slice(0, 20)) console.error(`  ${d}`);
    process.exit(1);
  }
  console.log(`generated code is up to date (${files.size} files)`);
} else {
  console.log(`generated ${files.size} files into src/protocol/generated (${differences.length} changed)`);
}
