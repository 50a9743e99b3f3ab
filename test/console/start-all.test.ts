// `npm start`'s program (dist/src/console/start-all.js): starts a broker and the console together,
// prints both addresses, the console answers and sees the broker, and SIGTERM stops both (exit 0).

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { waitFor, withDeadline } from "../support/broker-harness.js";

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
