// Test-only: runs a real Tributary broker as a child process for the real-client tests.
//
// `BrokerHarness.start()` spawns `tributary server-start` with its own temporary log dir and
// `listeners=PLAINTEXT://127.0.0.1:0` (or a given port), waits for the line telling the bound port
// ("Awaiting socket connections on 127.0.0.1:NNNNN.", as Kafka's acceptor prints it), then waits until
// the broker answers an ApiVersions request on that port. `stop(signal)` waits for the exit and returns
// the exit code; `restart()` starts again on the same log dir and the same port; `close()` kills
// whatever is left and removes the temporary directory. Every wait is bounded; all traffic is on
// 127.0.0.1. A process-exit hook SIGKILLs brokers still running, so a crashed test run leaves none.
//
// Which build runs: by default `node bin/tributary.js` from the repository root (process.cwd()), which
// loads the repo's dist/ as `npm test` builds it. With TRIBUTARY_DIST=/some/outDir the harness runs
// `<outDir>/src/cli/main.js` instead, so a private build (tsc --outDir) can be tested without touching
// dist/.
//
// Also here: `runCommand` (an external program such as kcat or python3, with a deadline), `freePort`,
// `withDeadline` and `waitFor`.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

import { TRIBUTARY_NODE_OPTIONS } from "../../src/cli/node-options.js";
import { withDeadline } from "./deadline.js";
import { assertCommandInstalled } from "./required-tools.js";

export { withDeadline };

/** The line the acceptor prints once a listener is bound; the port is the last group. */
const PORT_LINE = /Awaiting socket connections on ([0-9.]+|\[[0-9a-f:]+\]|[\w.-]+):(\d+)/;
/** The line the broker prints once its Prometheus endpoint is bound. */
const METRICS_LINE = /Metrics HTTP endpoint listening on http:\/\/([^\s/]+):(\d+)\/metrics/;

export interface BrokerOptions {
  /** Extra `--override key=value` settings (log.dirs and listeners are set by the harness unless given). */
  readonly overrides?: Readonly<Record<string, string>>;
  /** Port to listen on; 0 (the default) lets the OS choose. A restart always reuses the bound port. */
  readonly port?: number;
  /** Bound on start-up (spawn → port line → ApiVersions answered). Default 30 s. */
  readonly startTimeoutMs?: number;
  /** Prefix for the temporary directory. */
  readonly name?: string;
  /**
   * Keep only about this many trailing characters of each output stream (stdout/stderr), for tests that
   * make the broker log a line per bad request; the lines are still counted (`outputLines`, and by log
   * level in `levelLines`) and ERROR lines kept (`errorLines`, the first 100). Trimming
   * starts once the broker is up. Default: keep everything.
   */
  readonly outputLimit?: number;
  /** Node options of the broker process; default TRIBUTARY_NODE_OPTIONS, as `tributary` runs. */
  readonly nodeOptions?: readonly string[];
}

export interface ExitStatus {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

const running = new Set<ChildProcess>();
/** The temporary directories of brokers not yet closed, removed at exit (a bench stopped by Ctrl-C). */
const roots = new Set<string>();
process.on("exit", () => {
  for (const c of running) {
    try {
      c.kill("SIGKILL");
    } catch {
      // already gone
    }
  }
  for (const r of roots) {
    try {
      rmSync(r, { recursive: true, force: true, maxRetries: 3, retryDelay: 20 });
    } catch {
      // left behind: nothing more can be done at exit
    }
  }
});

/**
 * node's argv that runs `tributary <args>` with `nodeOptions` (default: those `tributary` runs with): the
 * repo's bin/tributary.js, or TRIBUTARY_DIST's compiled CLI.
 */
export function tributaryArgv(
  args: readonly string[],
  nodeOptions: readonly string[] = TRIBUTARY_NODE_OPTIONS,
): string[] {
  const dist = process.env.TRIBUTARY_DIST;
  if (!dist) return [...nodeOptions, resolve(process.cwd(), "bin/tributary.js"), ...args];
  const main = pathToFileURL(resolve(dist, "src/cli/main.js")).href;
  const script = `import(${JSON.stringify(main)}).then((m) => m.run(process.argv.slice(1))).then((c) => { process.exitCode = c; })`;
  return [...nodeOptions, "-e", script, ...args];
}

export class BrokerHarness {
  readonly host = "127.0.0.1";
  /** The temporary directory: log dir under `logs/`. Removed by close(). */
  readonly root: string;
  readonly logDir: string;
  port: number;
  /**
   * The bound port of the broker's /metrics endpoint (the harness sets metrics.http.listener to
   * http://127.0.0.1:0 unless overridden); undefined when disabled or not bound.
   */
  metricsPort: number | undefined;
  /** Everything the broker wrote, across restarts. */
  stdout = "";
  stderr = "";
  /** How the last broker process ended (undefined while it runs or before the first stop). */
  lastExit: ExitStatus | undefined;
  /** Lines the broker wrote (stdout and stderr), across restarts. */
  outputLines = 0;
  /** Lines per log level ("[time] LEVEL ..."), across restarts. */
  readonly levelLines: Record<string, number> = {};
  /** The broker's first 100 ERROR lines. */
  readonly errorLines: string[] = [];

  private child: ChildProcess | undefined;
  private exited: Promise<ExitStatus> | undefined;
  private readonly overrides: Readonly<Record<string, string>>;
  private readonly startTimeoutMs: number;
  private readonly outputLimit: number;
  private readonly nodeOptions: readonly string[] | undefined;
  private trimOutput = false;
  private starts = 0;

  private constructor(options: BrokerOptions) {
    this.root = mkdtempSync(join(tmpdir(), `${options.name ?? "tributary-broker"}-`));
    roots.add(this.root);
    this.logDir = join(this.root, "logs");
    this.port = options.port ?? 0;
    this.overrides = options.overrides ?? {};
    this.startTimeoutMs = options.startTimeoutMs ?? 30_000;
    this.outputLimit = options.outputLimit ?? Number.POSITIVE_INFINITY;
    this.nodeOptions = options.nodeOptions;
  }

  /** Starts a broker and waits until it answers ApiVersions. */
  static async start(options: BrokerOptions = {}): Promise<BrokerHarness> {
    const b = new BrokerHarness(options);
    try {
      await b.launch();
    } catch (e) {
      await b.close();
      throw e;
    }
    return b;
  }

  get bootstrap(): string {
    return `${this.host}:${this.port}`;
  }

  /** http://127.0.0.1:<metricsPort>/metrics; throws when the broker has no metrics endpoint. */
  get metricsUrl(): string {
    if (this.metricsPort === undefined) throw new Error(`the broker has no metrics endpoint\n${this.output}`);
    return `http://${this.host}:${this.metricsPort}/metrics`;
  }

  get isRunning(): boolean {
    return this.child !== undefined && this.lastExit === undefined;
  }

  /** The child's pid (for tests that signal it directly). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** stdout and stderr together, for assertion messages. */
  get output(): string {
    return `--- broker stdout ---\n${this.stdout.slice(-8000)}\n--- broker stderr ---\n${this.stderr.slice(-8000)}`;
  }

  /** The port of every listener of the current run, in the order of `listeners` (the broker binds them so). */
  listenerPorts(): number[] {
    const run = this.stdout.slice(this.stdout.lastIndexOf("=== start #"));
    return [...run.matchAll(new RegExp(PORT_LINE.source, "g"))].map((m) => Number(m[2]));
  }

  private async launch(): Promise<void> {
    const settings: Record<string, string> = {
      "log.dirs": this.logDir,
      listeners: `PLAINTEXT://${this.host}:${this.port}`,
      "metrics.http.listener": `http://${this.host}:0`,
      ...this.overrides,
    };
    const args = ["server-start"];
    for (const [k, v] of Object.entries(settings)) args.push("--override", `${k}=${v}`);
    this.lastExit = undefined;
    this.trimOutput = false;
    this.starts++;
    const marker = `\n=== start #${this.starts} ===\n`;
    this.stdout += marker;
    this.stderr += marker;
    const child = spawn(process.execPath, tributaryArgv(args, this.nodeOptions), {
      cwd: process.cwd(),
      stdio: ["ignore", "pipe", "pipe"],
      env: process.env,
    });
    this.child = child;
    running.add(child);
    const stdoutFrom = this.stdout.length;
    const stderrFrom = this.stderr.length;
    child.stdout?.setEncoding("utf8");
    child.stderr?.setEncoding("utf8");
    let onOutput: () => void = () => {};
    const limit = this.outputLimit;
    const partial = { out: "", err: "" };
    const countLines = (stream: "out" | "err", d: string): void => {
      const lines = (partial[stream] + d).split("\n");
      partial[stream] = lines.pop() ?? "";
      for (const line of lines) {
        this.outputLines++;
        const level = /^\[[^\]]*\] ([A-Z]+) /.exec(line)?.[1];
        if (level === undefined) continue;
        this.levelLines[level] = (this.levelLines[level] ?? 0) + 1;
        if (level === "ERROR" && this.errorLines.length < 100) this.errorLines.push(line);
      }
    };
    child.stdout?.on("data", (d: string) => {
      countLines("out", d);
      this.stdout += d;
      if (this.trimOutput && this.stdout.length > 2 * limit) this.stdout = this.stdout.slice(-limit);
      onOutput();
    });
    child.stderr?.on("data", (d: string) => {
      countLines("err", d);
      this.stderr += d;
      if (this.trimOutput && this.stderr.length > 2 * limit) this.stderr = this.stderr.slice(-limit);
      onOutput();
    });
    this.exited = new Promise<ExitStatus>((res) => {
      child.once("exit", (code, signal) => {
        running.delete(child);
        this.lastExit = { code, signal };
        onOutput();
        res({ code, signal });
      });
    });

    const deadline = Date.now() + this.startTimeoutMs;
    // 1. The port line (either stream).
    const port = await new Promise<number>((res, rej) => {
      const timer = setTimeout(
        () =>
          rej(
            new Error(
              `broker printed no "Awaiting socket connections on" line within ${this.startTimeoutMs} ms\n${this.output}`,
            ),
          ),
        this.startTimeoutMs,
      );
      onOutput = () => {
        const m =
          PORT_LINE.exec(this.stdout.slice(stdoutFrom)) ?? PORT_LINE.exec(this.stderr.slice(stderrFrom));
        if (m) {
          clearTimeout(timer);
          res(Number(m[2]));
        } else if (this.lastExit) {
          clearTimeout(timer);
          rej(new Error(`broker exited during start-up (${JSON.stringify(this.lastExit)})\n${this.output}`));
        }
      };
      onOutput();
    });
    onOutput = () => {};
    if (this.port !== 0 && port !== this.port)
      throw new Error(`broker bound port ${port}, expected ${this.port}\n${this.output}`);
    this.port = port;
    // 2. Ready when it answers ApiVersions.
    for (;;) {
      if (this.lastExit)
        throw new Error(`broker exited during start-up (${JSON.stringify(this.lastExit)})\n${this.output}`);
      if (await apiVersionsAnswered(this.host, port, 2000)) {
        // The metrics endpoint is bound before requests are served, so its line (or, when the bind failed,
        // an ERROR line about it) was written already; the pipe may deliver it a moment after the answer.
        this.metricsPort = undefined;
        if (settings["metrics.http.listener"].trim() !== "") {
          for (let waited = 0; waited <= 2000; waited += 20) {
            const out = this.stdout.slice(stdoutFrom) + this.stderr.slice(stderrFrom);
            const m = METRICS_LINE.exec(out);
            if (m) this.metricsPort = Number(m[2]);
            if (m || /Metrics HTTP endpoint failed/.test(out)) break;
            await sleep(20);
          }
        }
        this.trimOutput = true;
        return;
      }
      if (Date.now() > deadline)
        throw new Error(`broker on port ${port} did not answer ApiVersions\n${this.output}`);
      await sleep(100);
    }
  }

  /** Sends `signal` and waits (bounded) for the exit. Returns the exit code (null when killed by a signal). */
  async stop(signal: NodeJS.Signals = "SIGTERM", timeoutMs = 20_000): Promise<number | null> {
    const child = this.child;
    if (!child || !this.exited) throw new Error("broker was never started");
    if (this.lastExit) return this.lastExit.code;
    child.kill(signal);
    const status = await withDeadline(`broker exit after ${signal}`, timeoutMs, this.exited).catch(
      async (e) => {
        child.kill("SIGKILL");
        await this.exited;
        throw new Error(`${(e as Error).message}; killed it\n${this.output}`);
      },
    );
    return status.code;
  }

  /** Stops the broker if it still runs (SIGTERM), then starts it again on the same log dir and port. */
  async restart(): Promise<void> {
    if (this.isRunning) await this.stop("SIGTERM");
    await this.launch();
  }

  /** Kills the broker if it still runs and removes the temporary directory. Safe to call twice. */
  async close(): Promise<void> {
    if (this.child && !this.lastExit) {
      this.child.kill("SIGKILL");
      await withDeadline("broker exit after SIGKILL", 10_000, this.exited!).catch(() => undefined);
    }
    rmSync(this.root, { recursive: true, force: true });
    roots.delete(this.root);
  }
}

/** True when a broker on host:port answers an ApiVersions v0 request within `timeoutMs`. */
function apiVersionsAnswered(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((res) => {
    const socket = connect({ host, port });
    let got = Buffer.alloc(0);
    const finish = (ok: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      res(ok);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on("error", () => finish(false));
    socket.on("close", () => finish(false));
    socket.on("connect", () => {
      // size, api key 18, version 0, correlation id 0x7ead, client id "harness"
      const clientId = Buffer.from("harness");
      const body = Buffer.alloc(2 + 2 + 4 + 2 + clientId.length);
      body.writeInt16BE(18, 0);
      body.writeInt16BE(0, 2);
      body.writeInt32BE(0x7ead, 4);
      body.writeInt16BE(clientId.length, 8);
      clientId.copy(body, 10);
      const size = Buffer.alloc(4);
      size.writeInt32BE(body.length, 0);
      socket.write(Buffer.concat([size, body]));
    });
    socket.on("data", (d: Buffer) => {
      got = Buffer.concat([got, d]);
      if (got.length >= 8) finish(got.readInt32BE(4) === 0x7ead);
    });
  });
}

/** A port that was free a moment ago on 127.0.0.1 (bind port 0, read it, close). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((res, rej) => {
    server.once("error", rej);
    server.listen(0, "127.0.0.1", () => res());
  });
  const addr = server.address();
  await new Promise<void>((res) => server.close(() => res()));
  if (addr === null || typeof addr === "string") throw new Error("no TCP address");
  return addr.port;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls `check` until it returns a value other than undefined, or throws after `ms`. */
export async function waitFor<T>(what: string, ms: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(`${what}: not reached within ${ms} ms${last ? ` (last error: ${String(last)})` : ""}`);
    await sleep(100);
  }
}

export interface CommandResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs an external program with a deadline (SIGKILL when it passes, and the result says so),
 * feeding `input` on stdin. Never rejects for a non-zero exit: the caller asserts on the result.
 */
export function runCommand(
  cmd: string,
  args: readonly string[],
  options: { input?: string | Buffer; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<CommandResult> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  return new Promise((res, rej) => {
    assertCommandInstalled(cmd); // inside the executor: a missing tool rejects
    const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "pipe"], env: options.env ?? process.env });
    running.add(child);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.stdout.on("data", (d: Buffer) => out.push(d));
    child.stderr.on("data", (d: Buffer) => err.push(d));
    child.stdin.on("error", () => {}); // the program may exit before reading all its input
    child.once("error", (e) => {
      clearTimeout(timer);
      running.delete(child);
      rej(e);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      const stderr = Buffer.concat(err).toString("utf8");
      res({
        code,
        signal,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: timedOut ? `${stderr}\n[harness] ${cmd} killed after ${timeoutMs} ms` : stderr,
      });
    });
    child.stdin.end(options.input ?? "");
  });
}

/** A program running in the background (see `startCommand`). */
export interface BackgroundCommand {
  /** The program's process id (undefined when it could not be started). */
  readonly pid: number | undefined;
  /** Output so far. */
  readonly stdout: () => string;
  /** Settles when the program exits by itself (or is stopped). */
  readonly exited: Promise<CommandResult>;
  /** Sends `signal` (SIGTERM by default) and waits (bounded; SIGKILL after) for the exit. */
  readonly stop: (signal?: NodeJS.Signals, timeoutMs?: number) => Promise<CommandResult>;
}

/** Starts an external program in the background (e.g. a long-running `kcat -C`); stop() ends it. */
export function startCommand(cmd: string, args: readonly string[]): BackgroundCommand {
  assertCommandInstalled(cmd);
  const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on("data", (d: Buffer) => out.push(d));
  child.stderr.on("data", (d: Buffer) => err.push(d));
  const closed = new Promise<CommandResult>((res) => {
    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      running.delete(child);
      res({
        code,
        signal,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      });
    };
    child.once("error", (e) => {
      err.push(Buffer.from(String(e)));
      finish(null, null);
    });
    child.once("close", finish);
  });
  return {
    pid: child.pid,
    stdout: () => Buffer.concat(out).toString("utf8"),
    exited: closed,
    stop: async (signal = "SIGTERM", timeoutMs = 10_000) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return withDeadline(`${cmd} exit after ${signal}`, timeoutMs, closed).catch(async () => {
        child.kill("SIGKILL");
        return closed;
      });
    },
  };
}

/** Formats a command result for an assertion message. */
/** A tool's whole result for an assertion message: exit code, stdout and stderr. */
export function showResult(r: CommandResult): string {
  return `exit ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;
}

/** A tool's output as its non-empty lines. */
export function outputLines(s: string): string[] {
  return s.split("\n").filter((l) => l !== "");
}

export function describeResult(what: string, r: CommandResult): string {
  return `${what}: exit ${r.code ?? r.signal}\n--- stdout (tail) ---\n${r.stdout.slice(-3000)}\n--- stderr (tail) ---\n${r.stderr.slice(-5000)}`;
}

/** One message as kcat prints it with KCAT_FORMAT. */
export interface KcatMessage {
  readonly partition: number;
  readonly offset: number;
  readonly timestamp: number;
  readonly key: string;
  readonly value: string;
  /** kcat's `%h`: `k=v,k2=v2`, or empty. */
  readonly headers: string;
}

/** partition, offset, timestamp, key, value, headers; tab-separated, one message a line. */
export const KCAT_FORMAT = "%p\\t%o\\t%T\\t%k\\t%s\\t%h\\n";

export function parseKcat(stdout: string): KcatMessage[] {
  const out: KcatMessage[] = [];
  for (const line of stdout.split("\n")) {
    if (line === "") continue;
    const f = line.split("\t");
    if (f.length !== 6) throw new Error(`unexpected kcat output line: ${JSON.stringify(line)}`);
    out.push({
      partition: Number(f[0]),
      offset: Number(f[1]),
      timestamp: Number(f[2]),
      key: f[3],
      value: f[4],
      headers: f[5],
    });
  }
  return out;
}

/**
 * Reads a topic from the beginning to its current end with kcat (`-C -o beginning -e`): an independent
 * reader for the tests of clients that can only consume through a consumer group. Throws when kcat fails.
 */
export async function readWithKcat(
  bootstrap: string,
  topic: string,
  timeoutMs = 30_000,
): Promise<KcatMessage[]> {
  const r = await runCommand(
    "/usr/bin/kcat",
    ["-b", bootstrap, "-C", "-t", topic, "-o", "beginning", "-e", "-q", "-f", KCAT_FORMAT],
    { timeoutMs },
  );
  if (r.code !== 0) throw new Error(describeResult(`kcat -C -t ${topic}`, r));
  return parseKcat(r.stdout);
}

/** Appends `v` to the list at `k`, creating it. */
export function pushTo<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const l = m.get(k);
  if (l) l.push(v);
  else m.set(k, [v]);
}
