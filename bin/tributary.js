#!/usr/bin/env -S node --initial-old-space-size=256
// Entry point of the `tributary` executable: runs the compiled CLI (build with `npm run build`). The first
// line passes Node the options of src/cli/node-options.ts (keep the two the same).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const main = new URL("../dist/src/cli/main.js", import.meta.url);
if (!existsSync(fileURLToPath(main))) {
  console.error("tributary: not built yet; run `npm run build` first");
  process.exit(2);
}
const { run } = await import(main.href);
process.exitCode = await run(process.argv.slice(2));
