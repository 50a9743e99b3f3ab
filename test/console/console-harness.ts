// Test-only: runs `tributary console` as a child process (the build TRIBUTARY_DIST names, as the broker
// harness does), waits for its "Console listening on http://…/" line, and stops it with SIGTERM
// (SIGKILL after a bound). Also launches the Debian chromium through playwright-core with the flags a
// sandboxed CI machine needs, and makes the folder screenshots go to.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { tributaryArgv, withDeadline } from "../support/broker-harness.js";

const LISTEN_LINE = /Console listening on (http:\/\/\S+?)\/? /;

export class ConsoleHarness {
  stdout = "";
  stderr = "";
  private readonly exited: Promise<number | null>;

  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
    exited: Promise<number | null>,
  ) {
    this.exited = exited;
  }

  /**
   * The tests' usual console: `--config <config>` on a free port, sampling every 500 ms, its history in
   * SQLite under `dir`.
   */
  static startSampling(config: string, dir: string): Promise<ConsoleHarness> {
    const history = `sqlite:${join(dir, "history.db")}`;
    return ConsoleHarness.start([
      "--config",
      config,
      "--port",
      "0",
      "--sample-interval-ms",
      "500",
      "--history-url",
      history,
    ]);
  }

  static async start(args: readonly string[], timeoutMs = 30_000): Promise<ConsoleHarness> {
    const child = spawn(process.execPath, tributaryArgv(["console", ...args]), {
      cwd: process.cwd(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const out = { stdout: "", stderr: "" };
    child.stdout?.setEncoding("utf8").on("data", (d: string) => (out.stdout += d));
    child.stderr?.setEncoding("utf8").on("data", (d: string) => (out.stderr += d));
    const exited = new Promise<number | null>((res) => child.once("exit", (code) => res(code)));
    try {
      const url = await withDeadline(
        "console start",
        timeoutMs,
        new Promise<string>((resolve, reject) => {
          const check = (): void => {
            const m = LISTEN_LINE.exec(out.stdout);
            if (m) resolve(m[1]);
          };
          child.stdout?.on("data", check);
          void exited.then((code) =>
            reject(new Error(`console exited with ${code}\n${out.stdout}\n${out.stderr}`)),
          );
        }),
      );
      const h = new ConsoleHarness(child, url, exited);
      Object.defineProperty(h, "stdout", { get: () => out.stdout });
      Object.defineProperty(h, "stderr", { get: () => out.stderr });
      return h;
    } catch (e) {
      child.kill("SIGKILL");
      throw e;
    }
  }

  async stop(): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGTERM");
    return withDeadline("console exit", 10_000, this.exited).catch(async () => {
      this.child.kill("SIGKILL");
      return this.exited;
    });
  }

  async json<T>(path: string): Promise<T> {
    const res = await fetch(`${this.url}${path}`);
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  }
}

export const CHROMIUM = "/usr/bin/chromium";

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    timeout: 30_000,
  });
}

/** The screenshot folder: $CONSOLE_SCREENSHOTS, else a new temporary folder. */
export function screenshotDir(name: string): string {
  const dir = process.env.CONSOLE_SCREENSHOTS
    ? join(process.env.CONSOLE_SCREENSHOTS, name)
    : mkdtempSync(join(tmpdir(), `${name}-`));
  mkdirSync(dir, { recursive: true });
  return dir;
}
