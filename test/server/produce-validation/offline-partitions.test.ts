// Offline partitions and log dirs on a real broker (issue 4, Kafka's KAFKA_STORAGE_ERROR). The tests run as
// root, which chmod does not stop, so the failures are ones root still gets: a partition whose segment
// file `.log` was replaced by a directory (EISDIR when the log is opened), and a second log dir that is a
// regular file (ENOTDIR). The broken partition answers KAFKA_STORAGE_ERROR to Produce, Fetch and
// ListOffsets, Metadata lists it with LEADER_NOT_AVAILABLE, leader -1 and this broker in offline_replicas;
// DescribeLogDirs marks a failed dir KAFKA_STORAGE_ERROR; everything else keeps working (KafkaJS round trip)
// and the broker logs exactly one ERROR line naming the partition and the cause. ENOSPC is not a failure
// but a full log dir (issue 17; a segment that is /dev/full here, the real disk in log-dir-full.test.ts):
// every append to the dir answers KAFKA_STORAGE_ERROR, reads go on, nothing goes offline, and the dir takes
// writes again once its probe finds space.

import assert from "node:assert/strict";
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import kafkajs from "kafkajs";
import { ErrorCode } from "../../../src/protocol/errors.js";
import { buildRecordBatch, decodeRecordBatches } from "../../../src/protocol/records/index.js";
import { BrokerHarness, readWithKcat, sleep, waitFor } from "../../support/broker-harness.js";
import {
  describeLogDirsRaw,
  fetchRaw,
  listLatestRaw,
  metadataRaw,
  produceRaw,
} from "./validation-support.js";

const { Kafka, logLevel } = kafkajs;
const SEGMENT = "00000000000000000000.log";

function client(broker: BrokerHarness): kafkajs.Kafka {
  return new Kafka({
    clientId: "offline-test",
    brokers: [broker.bootstrap],
    logLevel: logLevel.NOTHING,
    retry: { retries: 3, initialRetryTime: 100 },
  });
}

function oneBatch(value: string): Buffer {
  return buildRecordBatch({
    records: [{ key: Buffer.from("k"), value: Buffer.from(value) }],
    timestamp: BigInt(Date.now()),
  });
}

describe("offline partitions: a partition whose log cannot be opened", { timeout: 120_000 }, () => {
  let broker: BrokerHarness | undefined;
  after(async () => {
    await broker?.close();
  });

  test("answers KAFKA_STORAGE_ERROR, shows as offline in Metadata, and leaves the rest working", async () => {
    broker = await BrokerHarness.start({ name: "offline-partition" });
    const b = broker;
    const kafka = client(b);
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        { topic: "broken", numPartitions: 2 },
        { topic: "healthy", numPartitions: 1 },
      ],
    });
    await admin.disconnect();
    for (const p of [0, 1])
      assert.equal((await produceRaw(b.port, "broken", p, oneBatch(`before-${p}`))).errorCode, 0);
    assert.equal((await produceRaw(b.port, "healthy", 0, oneBatch("before"))).errorCode, 0);
    await b.stop();

    // Root ignores chmod; a directory where the segment file should be fails for root too.
    const segment = join(b.logDir, "broken-1", SEGMENT);
    const saved = join(b.root, "saved-segment.log");
    renameSync(segment, saved);
    mkdirSync(segment);
    const errorsBefore = b.errorLines.length;
    await b.restart();

    // One ERROR line naming the partition and the cause.
    const errors = b.errorLines.slice(errorsBefore);
    const about = errors.filter((l) => l.includes("broken-1"));
    assert.equal(about.length, 1, `${errors.join("\n")}\n${b.output}`);
    assert.match(about[0], /EISDIR|is a directory/i);
    assert.equal(errors.length, 1, errors.join("\n"));

    // Produce / Fetch / ListOffsets to the broken partition: KAFKA_STORAGE_ERROR.
    const produced = await produceRaw(b.port, "broken", 1, oneBatch("after"));
    assert.equal(produced.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, produced.errorMessage ?? "");
    assert.equal((await fetchRaw(b.port, "broken", 1)).errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
    assert.equal((await listLatestRaw(b.port, "broken", 1)).errorCode, ErrorCode.KAFKA_STORAGE_ERROR);

    // Metadata: the broken partition is leaderless with this broker offline; partition 0 is fine.
    const md = await metadataRaw(b.port, "broken");
    const parts = new Map(md.topics[0].partitions.map((p) => [p.partitionIndex, p]));
    assert.equal(parts.get(1)?.errorCode, ErrorCode.LEADER_NOT_AVAILABLE);
    assert.equal(parts.get(1)?.leaderId, -1);
    assert.deepEqual(parts.get(1)?.offlineReplicas, [0]);
    assert.equal(parts.get(0)?.errorCode, 0);
    assert.equal(parts.get(0)?.leaderId, 0);
    assert.deepEqual(parts.get(0)?.offlineReplicas, []);

    // DescribeLogDirs: the dir itself is fine; the offline partition is not listed.
    const dirs = await describeLogDirsRaw(b.port);
    assert.equal(dirs.results.length, 1);
    assert.equal(dirs.results[0].errorCode, 0);
    const listed = dirs.results[0].topics.flatMap((t) =>
      t.partitions.map((p) => `${t.name}-${p.partitionIndex}`),
    );
    assert.ok(listed.includes("broken-0") && listed.includes("healthy-0") && !listed.includes("broken-1"));

    // The other partitions keep working with a real client.
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: "healthy", messages: [{ key: "k", value: "after" }] });
    await producer.disconnect();
    assert.deepEqual(
      (await readWithKcat(b.bootstrap, "healthy")).map((m) => m.value),
      ["before", "after"],
    );
    // (KafkaJS refuses a topic with a leaderless partition, as it does with Kafka: raw requests here.)
    assert.equal((await produceRaw(b.port, "broken", 0, oneBatch("after-0"))).errorCode, 0);
    assert.equal((await listLatestRaw(b.port, "broken", 0)).offset, 2n);
    const f0 = await fetchRaw(b.port, "broken", 0);
    assert.equal(f0.errorCode, 0);
    assert.ok((f0.records?.length ?? 0) > 0);

    // A clean shutdown keeps the offline partition's checkpointed offsets; once repaired it is back.
    await b.stop();
    for (const f of ["recovery-point-offset-checkpoint", "replication-offset-checkpoint"])
      assert.match(readFileSync(join(b.logDir, f), "utf8"), /^broken 1 1$/m, f);
    rmSync(segment, { recursive: true });
    renameSync(saved, segment);
    await b.restart();
    const repaired = await fetchRaw(b.port, "broken", 1);
    assert.equal(repaired.errorCode, 0);
    assert.deepEqual(
      decodeRecordBatches(repaired.records ?? Buffer.alloc(0)).flatMap((x) =>
        x.records.map((r) => r.value?.toString()),
      ),
      ["before-1"],
    );
    assert.equal((await listLatestRaw(b.port, "broken", 1)).offset, 1n);
    const healed = (await metadataRaw(b.port, "broken")).topics[0].partitions.find(
      (p) => p.partitionIndex === 1,
    );
    assert.deepEqual([healed?.errorCode, healed?.leaderId, healed?.offlineReplicas], [0, 0, []]);
  });
});

describe("offline partitions: a write that fails at runtime", { timeout: 120_000 }, () => {
  let broker: BrokerHarness | undefined;
  after(async () => {
    await broker?.close();
  });

  test("an append hitting ENOSPC marks the log dir full: writes refused, reads served, nothing offline", async () => {
    broker = await BrokerHarness.start({
      name: "offline-at-runtime",
      overrides: { "log.dir.full.probe.interval.ms": "3000" },
    });
    const b = broker;
    const admin = client(b).admin();
    await admin.connect();
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic: "full", numPartitions: 2 }] });
    await admin.disconnect();
    await b.stop();
    // The empty active segment of full-1 becomes /dev/full: it opens (size 0), and every write fails with
    // ENOSPC, for root too.
    const segment = join(b.logDir, "full-1", SEGMENT);
    rmSync(segment);
    symlinkSync("/dev/full", segment);
    await b.restart();
    const errorsBefore = b.errorLines.length;
    assert.equal((await produceRaw(b.port, "full", 0, oneBatch("fine"))).errorCode, 0);
    const first = await produceRaw(b.port, "full", 1, oneBatch("no space"));
    assert.equal(first.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, first.errorMessage ?? "");
    // The whole dir is full: every append to it is refused at once, until the probe.
    const second = await produceRaw(b.port, "full", 0, oneBatch("no space either"));
    assert.equal(second.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, second.errorMessage ?? "");
    // Reads go on; nothing was appended to full-1 (the failed append was undone).
    const f0 = await fetchRaw(b.port, "full", 0);
    assert.equal(f0.errorCode, 0);
    assert.deepEqual(
      decodeRecordBatches(f0.records ?? Buffer.alloc(0)).flatMap((x) =>
        x.records.map((r) => r.value?.toString()),
      ),
      ["fine"],
    );
    assert.equal((await fetchRaw(b.port, "full", 1)).errorCode, 0);
    assert.equal((await listLatestRaw(b.port, "full", 1)).offset, 0n);
    const errors = b.errorLines.slice(errorsBefore);
    assert.equal(errors.length, 1, errors.join("\n"));
    assert.match(errors[0], /Log dir .* is full: .*(ENOSPC|no space)/i);
    // Nothing is offline: the leader stays.
    const md = await metadataRaw(b.port, "full");
    const p1 = md.topics[0].partitions.find((p) => p.partitionIndex === 1);
    assert.deepEqual([p1?.errorCode, p1?.leaderId, p1?.offlineReplicas], [0, 0, []]);
    // The disk is not really full: the probe finds space and full-0 takes writes again.
    await waitFor("full-0 writable again", 15_000, async () => {
      const r = await produceRaw(b.port, "full", 0, oneBatch("still fine"));
      if (r.errorCode === 0) return true;
      await sleep(200);
      return undefined;
    });
    assert.equal((await listLatestRaw(b.port, "full", 0)).offset, 2n);
  });
});

describe("offline log dirs: a log dir that is a regular file", { timeout: 120_000 }, () => {
  let broker: BrokerHarness | undefined;
  after(async () => {
    await broker?.close();
  });

  test("DescribeLogDirs marks it KAFKA_STORAGE_ERROR; the good dir serves new topics", async () => {
    // Our own two dirs: the first a real directory (the embedded metadata store lives in the first log
    // dir), the second a regular file.
    const root = mkdtempSync(join(tmpdir(), "offline-dir-"));
    const goodDir = join(root, "logs");
    const fileDir = join(root, "not-a-dir");
    writeFileSync(fileDir, "not a directory\n");
    try {
      broker = await BrokerHarness.start({
        name: "offline-dir",
        overrides: { "log.dirs": `${goodDir},${fileDir}` },
      });
      const b = broker;
      const dirs = await describeLogDirsRaw(b.port);
      const byDir = new Map(dirs.results.map((r) => [r.logDir, r.errorCode]));
      assert.equal(byDir.get(fileDir), ErrorCode.KAFKA_STORAGE_ERROR, JSON.stringify([...byDir]));
      assert.equal(byDir.get(goodDir), 0);
      const dirErrors = b.errorLines.filter((l) => l.includes(fileDir));
      assert.equal(dirErrors.length, 1, b.errorLines.join("\n"));
      assert.match(dirErrors[0], /ENOTDIR|EEXIST|not a directory|file already exists/i);

      const kafka = client(b);
      const admin = kafka.admin();
      await admin.connect();
      await admin.createTopics({
        waitForLeaders: true,
        topics: [{ topic: "on-good-dir", numPartitions: 2 }],
      });
      await admin.disconnect();
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({
        topic: "on-good-dir",
        messages: [
          { key: "a", value: "1", partition: 0 },
          { key: "b", value: "2", partition: 1 },
        ],
      });
      await producer.disconnect();
      assert.equal((await readWithKcat(b.bootstrap, "on-good-dir")).length, 2);
      const listed = await describeLogDirsRaw(b.port);
      const good = listed.results.find((r) => r.logDir === goodDir);
      assert.deepEqual(
        good?.topics
          .find((t) => t.name === "on-good-dir")
          ?.partitions.map((p) => p.partitionIndex)
          .sort(),
        [0, 1],
      );
    } finally {
      await broker?.close();
      broker = undefined;
      rmSync(root, { recursive: true, force: true });
    }
  });

  test("with every log dir failed the broker refuses to start, as Kafka", async () => {
    const root = mkdtempSync(join(tmpdir(), "offline-all-"));
    const fileDir = join(root, "file");
    writeFileSync(fileDir, "x");
    try {
      await assert.rejects(
        BrokerHarness.start({
          name: "offline-all",
          overrides: { "log.dirs": fileDir },
          startTimeoutMs: 15_000,
        }),
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
