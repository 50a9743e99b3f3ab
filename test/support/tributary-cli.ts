// Test-only: runs the `tributary` executable as a child process — the TRIBUTARY_DIST build when set (a
// private `tsc --outDir` build), else the repository's bin/tributary.js — with a deadline.

import { spawnSync } from "node:child_process";
import { type CommandResult, runCommand, tributaryArgv } from "./broker-harness.js";

export { tributaryArgv };

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
