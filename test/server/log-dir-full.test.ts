// A single broker whose log dir is a 64 MiB tmpfs, filled for real by a confluent-kafka producer (acks=all,
// no retries), as issue 17 tried it as a new user: once the dir is full, a produce answers
// KAFKA_STORAGE_ERROR at once (not a timeout), CreateTopics is refused (not acknowledged and then lost), a
// restart on the full disk (clean, and after SIGKILL) starts and serves every acknowledged record and
// nothing else, DeleteRecords and topic deletion free space while full, and the dir takes writes again
// by itself once space is free (log.dir.full.probe.interval.ms), the next offset right after the last
// acknowledged one. Skipped when a tmpfs cannot be mounted (not root).

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { BrokerHarness, describeResult, runCommand, sleep, waitFor } from "../support/broker-harness.js";
import {
  freeBytes,
  mountTmpfs,
  type ProduceOutcome,
  produceWithOutcomes,
  unmount,
} from "../support/tmpfs-mount.js";
import { runTributary } from "../support/tributary-cli.js";

const RECORD_BYTES = 64 * 1024;
const MIB = 1024 * 1024;

const mount = mountTmpfs("tributary-full-dir-", 64);
const skip = "skip" in mount ? mount.skip : false;

/** Offset and key of every record of the topic, read with kcat from the log start to the end. */
async function readKeys(bootstrap: string, topic: string): Promise<Array<[number, number, number]>> {
  const r = await runCommand(
    "/usr/bin/kcat",
    ["-b", bootstrap, "-C", "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%o\\t%k\\t%S\\n"],
    { timeoutMs: 60_000 },
  );
  if (r.code !== 0) throw new Error(describeResult(`kcat -C -t ${topic}`, r));
  return r.stdout
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => l.split("\t").map(Number) as [number, number, number]);
}

describe("a full log dir (64 MiB tmpfs, one broker)", { skip }, () => {
  const dir = "dir" in mount ? mount.dir : "";
  const logDir = join(dir, "logs");
  const work = mkdtempSync(join(tmpdir(), "tributary-full-dir-work-"));
  let broker: BrokerHarness;
  /** Every record acknowledged so far, by key → offset. */
  const acked = new Map<number, number>();
  let nextKey = 0;

  async function produce(topic: string, count: number, stopOnError: boolean): Promise<ProduceOutcome> {
    const out = await produceWithOutcomes(broker.bootstrap, topic, {
      first: nextKey,
      count,
      size: RECORD_BYTES,
      stopOnError,
      workDir: work,
    });
    nextKey += count;
    if (topic === "acked") for (const [k, , o] of out.acked) acked.set(k, o);
    return out;
  }

  /** The topic holds exactly the acknowledged records at or above `from`: same keys, same offsets. */
  async function assertExactlyAcked(from: number): Promise<void> {
    const read = await readKeys(broker.bootstrap, "acked");
    const expected = [...acked.entries()].filter(([, o]) => o >= from).sort((a, b) => a[1] - b[1]);
    assert.deepEqual(
      read.map(([o, k]) => [k, o]),
      expected,
      `the log should hold exactly the acknowledged records from offset ${from}`,
    );
    for (const [, , size] of read) assert.ok(size > RECORD_BYTES, "whole values");
  }

  async function scrape(): Promise<string> {
    return (await fetch(broker.metricsUrl)).text();
  }

  before(async () => {
    broker = await BrokerHarness.start({
      name: "full-dir",
      overrides: {
        "log.dirs": logDir,
        "log.segment.bytes": String(4 * MIB),
        "log.dir.space.reserve.bytes": String(4 * MIB),
        "log.dir.full.probe.interval.ms": "500",
        "offsets.topic.replication.factor": "1",
      },
    });
    const r = await runTributary([
      "topics",
      "--bootstrap-server",
      broker.bootstrap,
      "--create",
      "--topic",
      "acked",
      "--partitions",
      "1",
    ]);
    assert.equal(r.code, 0, describeResult("topics --create", r));
  });

  after(async () => {
    await broker?.close();
    if (dir) unmount(dir);
    rmSync(work, { recursive: true, force: true });
  });

  test("filling the dir: the first failed produce is KAFKA_STORAGE_ERROR at once, nothing partial stays", async () => {
    const out = await produce("acked", 2000, true);
    assert.ok(out.acked.length > 100, `some records acknowledged first (${out.acked.length})`);
    assert.ok(out.errors.length > 0, "the dir filled up before 2000 records of 64 KiB");
    for (const [key, name, seconds] of out.errors) {
      assert.equal(name, "KAFKA_STORAGE_ERROR", `record ${key}`);
      assert.ok(seconds < 5, `record ${key} failed after ${seconds} s, not at once`);
    }
    // Offsets of the acknowledged records are 0..n-1: no failed append took an offset.
    const offsets = out.acked.map(([, , o]) => o).sort((a, b) => a - b);
    assert.deepEqual(
      offsets,
      offsets.map((_, i) => i),
    );
    assert.match(broker.output, /Log dir \S+ is full/);
    assert.doesNotMatch(broker.output, /is offline/);
  });

  test("while full every produce answers KAFKA_STORAGE_ERROR at once (seconds, not the 30 s timeout)", async () => {
    const out = await produce("acked", 5, false);
    assert.equal(out.acked.length, 0);
    assert.equal(out.errors.length, 5);
    for (const [key, name, seconds] of out.errors) {
      assert.equal(name, "KAFKA_STORAGE_ERROR", `record ${key}`);
      // (The time includes the client's own batching; under a loaded machine it is ~1 s.)
      assert.ok(seconds < 3, `record ${key} failed after ${seconds} s`);
    }
    // log-dirs reports the full dir with Kafka's storage error.
    const dirs = await runTributary(["log-dirs", "--bootstrap-server", broker.bootstrap, "--describe"]);
    assert.equal(dirs.code, 0, describeResult("log-dirs --describe", dirs));
    assert.match(dirs.stdout, /"error":"org\.apache\.kafka\.common\.errors\.KafkaStorageException"/);
    // …and so does Kafka's gauge.
    assert.match(await scrape(), /^kafka_log_logmanager_offlinelogdirectorycount 1$/m);
  });

  test("CreateTopics while full is refused, and no topic appears", async () => {
    const r = await runTributary([
      "topics",
      "--bootstrap-server",
      broker.bootstrap,
      "--create",
      "--topic",
      "while-full",
      "--partitions",
      "1",
    ]);
    assert.notEqual(r.code, 0, describeResult("topics --create while full", r));
    assert.match(r.stdout + r.stderr, /full/);
    const list = await runTributary(["topics", "--bootstrap-server", broker.bootstrap, "--list"]);
    assert.doesNotMatch(list.stdout, /while-full/);
  });

  test("a clean restart on the full disk starts and serves every acknowledged record", async () => {
    await broker.restart();
    await assertExactlyAcked(0);
    const out = await produce("acked", 1, false);
    assert.deepEqual(
      out.errors.map((e) => e[1]),
      ["KAFKA_STORAGE_ERROR"],
      "still full after the restart",
    );
    const list = await runTributary(["topics", "--bootstrap-server", broker.bootstrap, "--list"]);
    assert.doesNotMatch(list.stdout, /while-full/);
  });

  test("a restart after SIGKILL on the full disk recovers and serves every acknowledged record", async () => {
    await broker.stop("SIGKILL");
    await broker.restart();
    await assertExactlyAcked(0);
  });

  test("DeleteRecords frees space while full, and the dir takes writes again by itself", async () => {
    const before = freeBytes(dir);
    const half = Math.floor(acked.size / 2);
    const json = join(work, "delete.json");
    writeFileSync(
      json,
      JSON.stringify({ partitions: [{ topic: "acked", partition: 0, offset: half }], version: 1 }),
    );
    const r = await runTributary([
      "delete-records",
      "--bootstrap-server",
      broker.bootstrap,
      "--offset-json-file",
      json,
    ]);
    assert.equal(r.code, 0, describeResult("delete-records", r));
    assert.match(r.stdout, new RegExp(`low_watermark: ${half}`));
    const freed = freeBytes(dir) - before;
    assert.ok(freed > 16 * MIB, `DeleteRecords freed ${freed} bytes at once`);
    // The probe (every 500 ms) finds the space: a produce is acknowledged, right after the last one.
    const last = Math.max(...acked.values());
    const out = await waitFor("a produce acknowledged after DeleteRecords", 15_000, async () => {
      const o = await produce("acked", 1, false);
      if (o.acked.length === 1) return o;
      await sleep(200);
      return undefined;
    });
    assert.equal(out.acked[0][2], last + 1);
    assert.match(broker.output, /has free space again/);
    assert.match(await scrape(), /^kafka_log_logmanager_offlinelogdirectorycount 0$/m);
    await assertExactlyAcked(half);
  });

  test("deleting a topic frees its space while full", async () => {
    const fill = await produce("acked", 2000, true);
    assert.ok(fill.errors.length > 0, "full again");
    assert.equal(fill.errors[0][1], "KAFKA_STORAGE_ERROR");
    const before = freeBytes(dir);
    const r = await runTributary([
      "topics",
      "--bootstrap-server",
      broker.bootstrap,
      "--delete",
      "--topic",
      "acked",
    ]);
    assert.equal(r.code, 0, describeResult("topics --delete", r));
    await waitFor("the deleted topic's space back", 15_000, async () => {
      if (freeBytes(dir) - before > 40 * MIB) return true;
      await sleep(100);
      return undefined;
    });
    // Writable again: a new topic is created and takes records.
    await waitFor("a topic created after the deletion", 15_000, async () => {
      const c = await runTributary([
        "topics",
        "--bootstrap-server",
        broker.bootstrap,
        "--create",
        "--topic",
        "after",
        "--partitions",
        "1",
      ]);
      if (c.code === 0) return true;
      await sleep(300);
      return undefined;
    });
    const out = await produce("after", 10, false);
    assert.equal(out.acked.length, 10, JSON.stringify(out.errors));
  });
});
