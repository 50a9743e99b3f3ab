// The test command's runner (`npm run test:run`): every compiled test file under dist/test through
// `node --test` (spec reporter, two files at a time), then one line saying what was skipped for want of
// an installed tool and why (test/support/required-tools.ts records each skip in TRIBUTARY_SKIP_LOG).
// Exits with node --test's status. Extra arguments are passed to node --test before the files.

import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";

/** Every `*.test.js` under `dir`, sorted by path. */
function testFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...testFiles(path));
    else if (entry.name.endsWith(".test.js")) found.push(path);
  }
  return found.sort();
}

/** The summary line for the recorded skips: each reason once, with the files it skipped. */
export function skipSummary(logText: string): string | undefined {
  const byReason = new Map<string, Set<string>>();
  for (const line of logText.split("\n")) {
    if (line.trim() === "") continue;
    const { file, reason } = JSON.parse(line) as { file: string; reason: string };
    const files = byReason.get(reason) ?? new Set<string>();
    files.add(file);
    byReason.set(reason, files);
  }
  if (byReason.size === 0) return undefined;
  const parts = [...byReason].map(([reason, files]) => `${reason} → ${[...files].sort().join(", ")}`);
  return `skipped (set CI=true to fail instead): ${parts.join("; ")}`;
}

async function main(): Promise<number> {
  const root = join(process.cwd(), "dist", "test");
  const files = testFiles(root).map((f) => relative(process.cwd(), f));
  const logDir = mkdtempSync(join(tmpdir(), "tributary-skips-"));
  const log = join(logDir, "skipped.jsonl");
  try {
    const args = [
      "--test",
      "--test-reporter=spec",
      "--test-concurrency=2",
      ...process.argv.slice(2),
      ...files,
    ];
    const child = spawn(process.execPath, args, {
      stdio: "inherit",
      env: { ...process.env, TRIBUTARY_SKIP_LOG: log },
    });
    const code = await new Promise<number>((resolve) => {
      child.on("exit", (status, signal) => resolve(status ?? (signal ? 1 : 0)));
    });
    let recorded = "";
    try {
      recorded = readFileSync(log, "utf8");
    } catch {
      // Nothing was skipped: the file was never written.
    }
    const summary = skipSummary(recorded);
    if (summary) process.stdout.write(`${summary}\n`);
    return code;
  } finally {
    rmSync(logDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  process.exitCode = await main();
