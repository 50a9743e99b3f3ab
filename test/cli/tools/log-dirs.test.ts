// `tributary log-dirs --describe` end to end: the real executable against a real broker, LogDirsCommand's
// two header lines and JSON document, each partition's size checked against the segment files on disk,
// --topic-list / --broker-list filters, and unknown brokers reported in one line.

import assert from "node:assert/strict";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { describeResult, runCommand } from "../../support/broker-harness.js";
import { cliToolFixture, lines } from "../../support/cli-tool-fixture.js";

/** Bytes of the .log segments of a partition directory. */
function logBytes(topic: string, partition: number): number {
  const dir = join(fx.broker.logDir, `${topic}-${partition}`);
  return readdirSync(dir)
    .filter((f) => f.endsWith(".log"))
    .reduce((n, f) => n + statSync(join(dir, f)).size, 0);
}

interface Doc {
  version: number;
  brokers: Array<{
    broker: number;
    logDirs: Array<{
      logDir: string;
      error: string | null;
      partitions: Array<{ partition: string; size: number; offsetLag: number; isFuture: boolean }>;
    }>;
  }>;
}

const fx = cliToolFixture({
  name: "tributary-log-dirs-tool",
  admin: true,
  setup: async () => {
    await fx.createTopics([
      { name: "ld-a", partitions: 2 },
      { name: "ld-b", partitions: 1 },
    ]);
    const k = await runCommand("/usr/bin/kcat", ["-b", fx.broker.bootstrap, "-P", "-t", "ld-a", "-p", "1"], {
      input: "one\ntwo\nthree\n",
    });
    assert.equal(k.code, 0, describeResult("kcat -P", k));
  },
});
const logDirs = fx.tool("log-dirs");

describe("tributary log-dirs", () => {
  test("--describe prints the header lines and the JSON document with real sizes", async () => {
    const r = await logDirs("--describe");
    assert.equal(r.code, 0, describeResult("log-dirs", r));
    const out = lines(r.stdout);
    assert.equal(out.length, 3, r.stdout);
    assert.equal(out[0], "Querying brokers for log directories information");
    assert.equal(out[1], "Received log directory information from brokers 0");
    assert.match(
      out[2],
      /^\{"brokers":\[\{"broker":0,"logDirs":\[\{"partitions":\[\{"partition":"[^"]+","size":\d+,"offsetLag":0,"isFuture":false\}.*\],"error":null,"logDir":"[^"]+"\}\]\}\],"version":1\}$/,
    );
    const doc = JSON.parse(out[2]) as Doc;
    assert.equal(doc.brokers[0].logDirs[0].logDir, fx.broker.logDir);
    const parts = doc.brokers[0].logDirs[0].partitions.sort((a, b) => (a.partition < b.partition ? -1 : 1));
    assert.deepEqual(
      parts.map((p) => p.partition),
      ["ld-a-0", "ld-a-1", "ld-b-0"],
    );
    for (const p of parts) {
      const m = /^(.*)-(\d+)$/.exec(p.partition)!;
      assert.equal(p.size, logBytes(m[1], Number(m[2])), `size of ${p.partition}`);
      assert.deepEqual([p.offsetLag, p.isFuture], [0, false]);
    }
    assert.ok(parts[1].size > 0, "ld-a-1 holds the records");
    assert.deepEqual(Object.keys(parts[0]), ["partition", "size", "offsetLag", "isFuture"]);
  });

  test("--topic-list and --broker-list filter; an unknown broker is one line", async () => {
    const r = await logDirs("--describe", "--topic-list", "ld-b", "--broker-list", "0");
    assert.equal(r.code, 0, describeResult("log-dirs", r));
    const doc = JSON.parse(lines(r.stdout)[2]) as Doc;
    assert.deepEqual(
      doc.brokers[0].logDirs[0].partitions.map((p) => p.partition),
      ["ld-b-0"],
    );
    const bad = await logDirs("--describe", "--broker-list", "0,7");
    assert.equal(bad.code, 1);
    assert.equal(bad.stdout, "");
    assert.equal(
      bad.stderr,
      "ERROR: The given brokers do not exist from --broker-list: 7. Current existent brokers: 0\n",
    );
    const noDescribe = await logDirs("--topic-list", "ld-a");
    assert.equal(noDescribe.code, 1);
    assert.equal(noDescribe.stderr, 'Missing required argument "[describe]"\n');
    const badList = await logDirs("--describe", "--broker-list", "zero");
    assert.equal(badList.code, 1);
    assert.equal(badList.stderr, 'For input string: "zero"\n');
  });
});
