// One process that `tributary dev-cluster` runs (ZooKeeper or a broker): spawned in its own process group
// (so a Ctrl-C in the terminal reaches dev-cluster alone, which then stops the processes in order), with
// stdout and stderr appended to a file. dev-cluster waits for a line in that file (a broker's "started"),
// shows its last lines when it failed, and stops it with a signal and a bound (SIGKILL after).

import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readSync, statSync } from "node:fs";

export interface ExitStatus {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Set when the program could not be started at all (e.g. not found). */
  readonly error?: string;
}

/** "code 0", "signal SIGKILL", or why it could not start. */
export function describeExit(s: ExitStatus): string {
  if (s.error !== undefined) return `could not be started: ${s.error}`;
  return s.code !== null ? `exit code ${s.code}` : `signal ${s.signal}`;
}

export class ManagedProcess {
  /** How it ended; undefined while it runs. */
  exitStatus: ExitStatus | undefined;
  readonly exited: Promise<ExitStatus>;
  private scanned: number;
  private partial = "";

  private constructor(
    /** For messages: "ZooKeeper", "Broker 0". */
    readonly name: string,
    /** The file its stdout and stderr go to. */
    readonly logFile: string,
    private readonly child: ChildProcess,
    /** Where this run's output starts in `logFile` (the file is appended to). */
    private readonly outputStart: number,
  ) {
    this.scanned = outputStart;
    this.exited = new Promise((resolve) => {
      child.once("error", (e) => {
        this.exitStatus ??= { code: null, signal: null, error: e.message };
        resolve(this.exitStatus);
      });
      child.once("exit", (code, signal) => {
        this.exitStatus ??= { code, signal };
        resolve(this.exitStatus);
      });
    });
  }

  /** Starts `command args` with its output appended to `logFile`. */
  static spawn(
    name: string,
    command: string,
    args: readonly string[],
    logFile: string,
    options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
  ): ManagedProcess {
    const start = existsSync(logFile) ? statSync(logFile).size : 0;
    const fd = openSync(logFile, "a");
    try {
      const child = spawn(command, args, {
        stdio: ["ignore", fd, fd],
        detached: true,
        cwd: options.cwd,
        env: options.env ?? process.env,
      });
      return new ManagedProcess(name, logFile, child, start);
    } finally {
      closeSync(fd);
    }
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.exitStatus === undefined;
  }

  /** Sends a signal if it still runs. */
  signal(signal: NodeJS.Signals): void {
    if (!this.running) return;
    try {
      this.child.kill(signal);
    } catch {
      // exited meanwhile
    }
  }

  /**
   * Waits until a line of this run's output matches `pattern` (true), or the process exits first or
   * `timeoutMs` passes (false). Reads the file as it grows, line by line.
   */
  async waitForLine(pattern: RegExp, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const exitedBefore = !this.running;
      for (const line of this.newLines()) if (pattern.test(line)) return true;
      // A process that exited has written everything: one last read above, then give up.
      if (exitedBefore) return false;
      if (Date.now() >= deadline) return false;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Complete lines written since the last call. */
  private newLines(): string[] {
    if (!existsSync(this.logFile)) return [];
    const size = statSync(this.logFile).size;
    if (size <= this.scanned) return [];
    const fd = openSync(this.logFile, "r");
    try {
      const chunks: string[] = [];
      const buf = Buffer.alloc(64 * 1024);
      while (this.scanned < size) {
        const n = readSync(fd, buf, 0, Math.min(buf.length, size - this.scanned), this.scanned);
        if (n <= 0) break;
        this.scanned += n;
        chunks.push(buf.toString("utf8", 0, n));
      }
      const lines = (this.partial + chunks.join("")).split("\n");
      this.partial = lines.pop() ?? "";
      return lines;
    } finally {
      closeSync(fd);
    }
  }

  /** The last `n` lines this run wrote (from the last 64 KiB of its output). */
  tail(n: number): string[] {
    if (!existsSync(this.logFile)) return [];
    const size = statSync(this.logFile).size;
    const from = Math.max(this.outputStart, size - 64 * 1024);
    if (size <= from) return [];
    const fd = openSync(this.logFile, "r");
    try {
      const buf = Buffer.alloc(size - from);
      const read = readSync(fd, buf, 0, buf.length, from);
      const lines = buf.toString("utf8", 0, read).split("\n");
      if (lines[lines.length - 1] === "") lines.pop();
      if (from > this.outputStart) lines.shift(); // a partial first line
      return lines.slice(-n);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Sends `signal` and waits up to `timeoutMs` for the exit; SIGKILL after that. Returns how it ended and
   * whether it had to be killed.
   */
  async stop(signal: NodeJS.Signals, timeoutMs: number): Promise<{ status: ExitStatus; killed: boolean }> {
    if (!this.running) return { status: await this.exited, killed: false };
    this.signal(signal);
    let timer: NodeJS.Timeout | undefined;
    const inTime = await Promise.race([
      this.exited.then(() => true),
      new Promise<boolean>((r) => {
        timer = setTimeout(() => r(false), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (inTime) return { status: await this.exited, killed: false };
    this.signal("SIGKILL");
    return { status: await this.exited, killed: true };
  }
}
