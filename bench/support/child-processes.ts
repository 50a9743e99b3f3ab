// Benchmark support: the child processes and temporary directories of a benchmark run. Spawns programs
// (Tributary's own CLI through a tiny loader, iperf3, redis-*) with a deadline, exposing the pid for
// /proc sampling and echoing output lines while they run; and guarantees cleanup on every exit path:
// children still running are killed and registered temporary directories removed when the process
// exits, including on SIGINT/SIGTERM and uncaught errors.

import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants, rmSync, statSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { TRIBUTARY_NODE_OPTIONS } from "../../src/cli/node-options.js";

const children = new Set<ChildProcess>();
const tempDirs = new Set<string>();
let installed = false;

function cleanupNow(): void {
  for (const c of children) {
    try {
      c.kill("SIGKILL");
    } catch {
      // already gone
    }
  }
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  tempDirs.clear();
}

/** Installs the exit, SIGINT and SIGTERM hooks that kill children and remove temporary directories. */
export function installCleanup(): void {
  if (installed) return;
  installed = true;
  process.on("exit", cleanupNow);
  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
    ["SIGHUP", 129],
  ] as const) {
    process.on(signal, () => {
      console.error(`\n${signal}: stopping the benchmark, cleaning up`);
      process.exit(code); // runs cleanupNow through the exit hook
    });
  }
}

/** Removes `dir` (recursively) when the process exits, unless removed earlier with removeTempDir. */
export function registerTempDir(dir: string): void {
  tempDirs.add(dir);
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  tempDirs.delete(dir);
}

/** The path of `program` on PATH, or undefined. */
export function onPath(program: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const p = join(dir, program);
    try {
      accessSync(p, constants.X_OK);
      if (statSync(p).isFile()) return p;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * The command running `tributary <args>` from the compiled tree at `distRoot` (the directory holding
 * src/cli/main.js), through the same kind of loader the broker harness uses for TRIBUTARY_DIST.
 */
export function tributaryCommand(distRoot: string, args: readonly string[]): { cmd: string; argv: string[] } {
  const main = pathToFileURL(resolve(distRoot, "src/cli/main.js")).href;
  const script = `import(${JSON.stringify(main)}).then((m) => m.run(process.argv.slice(1))).then((c) => { process.exitCode = c; })`;
  return { cmd: process.execPath, argv: [...TRIBUTARY_NODE_OPTIONS, "-e", script, ...args] };
}

export interface Finished {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  /** True when the deadline passed and the child was killed. */
  readonly timedOut: boolean;
  readonly wallMs: number;
}

export interface Running {
  readonly pid: number;
  readonly done: Promise<Finished>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the result. */
  stop(graceMs?: number): Promise<Finished>;
}

export interface SpawnOptions {
  /** Kill (SIGKILL) after this many ms; the result says timedOut. */
  readonly timeoutMs: number;
  /** Echo complete stdout lines prefixed with this while the child runs. */
  readonly echo?: string;
  /** Called with each complete stdout line and the Date.now() at which it arrived. */
  readonly onLine?: (line: string, atMs: number) => void;
  readonly cwd?: string;
}

/** Spawns `cmd args` (no shell) with a deadline. Never rejects: a spawn error becomes code null + stderr. */
export function spawnChild(cmd: string, args: readonly string[], options: SpawnOptions): Running {
  const t0 = performance.now();
  const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], cwd: options.cwd });
  children.add(child);
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let partial = "";
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill("SIGKILL");
  }, options.timeoutMs);
  child.stdout?.on("data", (d: Buffer) => {
    out.push(d);
    if (options.echo === undefined && options.onLine === undefined) return;
    const at = Date.now();
    const lines = (partial + d.toString("utf8")).split(/[\r\n]+/);
    partial = lines.pop() ?? "";
    for (const l of lines) {
      if (l.trim() === "") continue;
      options.onLine?.(l, at);
      if (options.echo !== undefined) console.log(`${options.echo}${l}`);
    }
  });
  child.stderr?.on("data", (d: Buffer) => err.push(d));
  const done = new Promise<Finished>((res) => {
    let spawnError = "";
    child.once("error", (e) => {
      spawnError = `${cmd}: ${e.message}`;
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      children.delete(child);
      const stderr = Buffer.concat(err).toString("utf8") + spawnError;
      res({
        code,
        signal,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: timedOut ? `${stderr}\n${cmd} killed after ${options.timeoutMs} ms` : stderr,
        timedOut,
        wallMs: performance.now() - t0,
      });
    });
  });
  return {
    pid: child.pid ?? -1,
    done,
    stop: async (graceMs = 5_000) => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const grace = setTimeout(() => child.kill("SIGKILL"), graceMs);
      const r = await done;
      clearTimeout(grace);
      return r;
    },
  };
}

/** Runs a child to completion (see spawnChild). */
export function runChild(cmd: string, args: readonly string[], options: SpawnOptions): Promise<Finished> {
  return spawnChild(cmd, args, options).done;
}

/** The last `n` non-empty lines of a result's stderr (else stdout), joined with " | ", for one-line errors. */
export function tail(r: Finished, n = 3): string {
  const text = r.stderr.trim() !== "" ? r.stderr : r.stdout;
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "")
    .slice(-n)
    .join(" | ");
}
