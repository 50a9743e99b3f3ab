// `npm start`'s program (dist/src/console/start-all.js): starts a broker and the console together,
// prints both addresses, the console answers and sees the broker, and SIGTERM stops both (exit 0). With
// the default's empty listener host, the printed broker address is the one the broker advertises in
// Metadata (kcat -L), and kcat bootstrapping on localhost produces and consumes through it. The console
// reads the broker's /metrics it started (the Overview in Chromium shows broker 0's traffic), and on the
// first start only prints the password of the first-run admin, which logs in.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { describeResult, runCommand, waitFor, withDeadline } from "../support/broker-harness.js";
import { skipUnlessInstalled } from "../support/required-tools.js";
import { launchChromium } from "./console-harness.js";

test("npm start's program prints the broker's and the console's addresses; SIGTERM stops both", async () => {
  const dir = mkdtempSync(join(tmpdir(), "console-start-"));
  const dist = process.env.TRIBUTARY_DIST ?? resolve(process.cwd(), "dist");
  const child = spawn(
    process.execPath,
    [
      join(dist, "src/console/start-all.js"),
      "--override",
      `log.dirs=${join(dir, "logs")}`,
      "--override",
      "listeners=PLAINTEXT://127.0.0.1:0",
      "--override",
      "metrics.http.listener=http://127.0.0.1:0",
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        TRIBUTARY_CONSOLE_PORT: "0",
        TRIBUTARY_CONSOLE_HISTORY: `sqlite:${join(dir, "h.db")}`,
      },
    },
  );
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
  const exited = new Promise<number | null>((res) => child.once("exit", (code) => res(code)));
  try {
    const urls = await waitFor("both addresses", 30_000, async () => {
      const broker = /^Broker listening on PLAINTEXT:\/\/(127\.0\.0\.1:\d+)$/m.exec(out);
      const console = /^Console listening on (http:\/\/127\.0\.0\.1:\d+)\/ /m.exec(out);
      return broker && console ? { broker: broker[1], console: console[1] } : undefined;
    });
    const clusters = await waitFor("a first sample", 20_000, async () => {
      const list = (await (await fetch(`${urls.console}/api/clusters`)).json()) as Array<{
        alias: string;
        bootstrapServers: string;
        samples: number;
      }>;
      return list[0]?.samples > 0 ? list : undefined;
    });
    assert.equal(clusters[0].alias, "local");
    assert.equal(clusters[0].bootstrapServers, urls.broker);
    child.kill("SIGTERM");
    assert.equal(await withDeadline("exit after SIGTERM", 20_000, exited), 0, `${out.slice(-2000)}\n${err}`);
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
});

test("npm start with the default's empty listener host prints what it advertises; kcat on localhost works through it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "console-start-"));
  const dist = process.env.TRIBUTARY_DIST ?? resolve(process.cwd(), "dist");
  // `PLAINTEXT://:9092` as npm start's default, on a port of the OS's choosing instead of 9092.
  const child = spawn(
    process.execPath,
    [
      join(dist, "src/console/start-all.js"),
      "--override",
      `log.dirs=${join(dir, "logs")}`,
      "--override",
      "listeners=PLAINTEXT://:0",
      "--override",
      "metrics.http.listener=",
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
      // A process group of its own: on a failure, the broker it started goes with it (it would hold the
      // pipes open and keep this test running).
      detached: true,
      env: {
        ...process.env,
        TRIBUTARY_CONSOLE_PORT: "0",
        TRIBUTARY_CONSOLE_HISTORY: `sqlite:${join(dir, "h.db")}`,
      },
    },
  );
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
  const exited = new Promise<number | null>((res) => child.once("exit", (code) => res(code)));
  try {
    const printed = await waitFor("the broker's address", 30_000, async () => {
      const m = /^Broker listening on (.*)$/m.exec(out);
      return m ? m[1] : undefined;
    });
    const m = /^PLAINTEXT:\/\/([^:\s,]+):(\d+)$/.exec(printed);
    assert.ok(m, `one PLAINTEXT endpoint printed: ${printed}`);
    const [, host, port] = m;
    const bootstrap = `localhost:${port}`;
    const metadata = await runCommand("/usr/bin/kcat", ["-b", bootstrap, "-L"]);
    assert.equal(metadata.code, 0, describeResult("kcat -L", metadata));
    assert.match(metadata.stdout, /^ {2}broker 0 at (\S+) \(controller\)$/m, metadata.stdout);
    assert.equal(/^ {2}broker 0 at (\S+) /m.exec(metadata.stdout)![1], `${host}:${port}`, metadata.stdout);
    const produced = await runCommand("/usr/bin/kcat", ["-b", bootstrap, "-P", "-t", "zero-setup"], {
      input: "one\ntwo\nthree",
    });
    assert.equal(produced.code, 0, describeResult("kcat -P", produced));
    const consumed = await runCommand("/usr/bin/kcat", [
      "-b",
      bootstrap,
      "-C",
      "-t",
      "zero-setup",
      "-e",
      "-q",
    ]);
    assert.equal(consumed.code, 0, describeResult("kcat -C", consumed));
    assert.deepEqual(consumed.stdout.split("\n").filter(Boolean), ["one", "two", "three"]);
    child.kill("SIGTERM");
    assert.equal(await withDeadline("exit after SIGTERM", 20_000, exited), 0, `${out.slice(-2000)}\n${err}`);
  } finally {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // the group has exited
    }
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Runs npm start's program in `dir` until `body` is done, then SIGTERM; returns its output. */
async function withStartAll(
  dir: string,
  body: (urls: { console: string }, out: () => string) => Promise<void>,
) {
  const dist = process.env.TRIBUTARY_DIST ?? resolve(process.cwd(), "dist");
  const child = spawn(
    process.execPath,
    [
      join(dist, "src/console/start-all.js"),
      "--override",
      `log.dirs=${join(dir, "logs")}`,
      "--override",
      "listeners=PLAINTEXT://127.0.0.1:0",
      "--override",
      "metrics.http.listener=http://127.0.0.1:0",
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
      env: {
        ...process.env,
        TRIBUTARY_CONSOLE_PORT: "0",
        TRIBUTARY_CONSOLE_HISTORY: `sqlite:${join(dir, "h.db")}`,
      },
    },
  );
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
  const exited = new Promise<number | null>((res) => child.once("exit", (code) => res(code)));
  try {
    const url = await waitFor("the console's address", 30_000, async () => {
      const m = /^Console listening on (http:\/\/127\.0\.0\.1:\d+)\/ /m.exec(out);
      return m ? m[1] : undefined;
    });
    await body({ console: url }, () => out);
    child.kill("SIGTERM");
    assert.equal(await withDeadline("exit after SIGTERM", 20_000, exited), 0, `${out.slice(-2000)}\n${err}`);
    return out;
  } finally {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // the group has exited
    }
  }
}

test("npm start's console shows the broker's traffic and prints a first-run admin once", {
  skip: skipUnlessInstalled("chromium"),
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), "console-start-"));
  const browser = await launchChromium();
  try {
    let password = "";
    const first = await withStartAll(dir, async (urls, out) => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await page.goto(`${urls.console}/#/c/local/overview`);
      // The console's own requests give broker 0 a request rate once two samples are in.
      await waitFor("broker 0's traffic row", 30_000, async () =>
        /^\d+\.\d\/s$/.test(
          (
            (await page
              .locator("[data-testid=broker-rates] tr[data-broker='0'] td.requests")
              .textContent({ timeout: 500 })) ?? ""
          ).trim(),
        )
          ? true
          : undefined,
      );
      assert.equal(await page.getByText("set local.metrics.port").count(), 0);
      const m = /created with password: (\S+)$/m.exec(out());
      assert.ok(m, out());
      password = m[1];
      const login = await fetch(`${urls.console}/api/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ user: "admin", password }),
      });
      assert.equal(login.status, 200);
      await page.close();
    });
    assert.match(
      first,
      new RegExp(
        `its hash is kept in ${join(dir, "tributary-console-users.properties").replace(/[.]/g, "\\.")}`,
      ),
    );
    const second = await withStartAll(dir, async () => {});
    assert.doesNotMatch(second, /First run/);
    assert.ok(!second.includes(password));
  } finally {
    await browser.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
