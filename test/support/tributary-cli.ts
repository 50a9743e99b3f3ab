// Test-only: runs the `tributary` executable as a child process — the TRIBUTARY_DIST build when set (a
// private `tsc --outDir` build), else the repository's bin/tributary.js — with a deadline.

import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { TRIBUTARY_NODE_OPTIONS } from "../../src/cli/node-options.js";
import { type CommandResult, runCommand } from "./broker-harness.js";

/** node's argv that runs `tributary <args>`. */
export function tributaryArgv(args: readonly string[]): string[] {
  const dist = process.env.TRIBUTARY_DIST;
  if (!dist) return [...TRIBUTARY_NODE_OPTIONS, resolve(process.cwd(), "bin/tributary.js"), ...args];
  const main = pathToFileURL(resolve(dist, "src/cli/main.js")).href;
  return [
    ...TRIBUTARY_NODE_OPTIONS,
    "-e",
    `import(${JSON.stringify(main)}).then((m) => m.run(process.argv.slice(1))).then((c) => { process.exitCode = c; })`,
    ...args,
  ];
}

/** Runs `tributary <args>` (stdin from `input`), bounded by timeoutMs (default 30 s). */
export function runTributary(
  args: readonly string[],
  options: { input?: string; timeoutMs?: number } = {},
): Promise<CommandResult> {
  return runCommand(process.execPath, tributaryArgv(args), {
    timeoutMs: options.timeoutMs ?? 30_000,
    input: options.input,
  });
}

/** Runs `tributary <args>` and waits for it (for tests that need no deadline: local files only). */
export function runTributarySync(args: readonly string[]): {
  status: number | null;
  stdout: string;
  stderr: string;
} {
  return spawnSync(process.execPath, tributaryArgv(args), { encoding: "utf8" });
}
