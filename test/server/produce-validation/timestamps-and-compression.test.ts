// The LogValidator on a real broker (issue 4): a topic with message.timestamp.before/after.max.ms refuses
// out-of-range CreateTime records with INVALID_TIMESTAMP (KafkaJS and confluent-kafka see the error; a raw
// Produce v9 carries Kafka's record_errors), a compacted topic refuses records without a key, and a topic
// with compression.type=zstd stores a gzip producer's batches as zstd (kcat reads them back, `tributary
// dump-log` shows compresscodec: zstd), while compression.type=producer keeps gzip.

import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import kafkajs from "kafkajs";
import { ErrorCode } from "../../../src/protocol/errors.js";
import { buildRecordBatch, CompressionType } from "../../../src/protocol/records/index.js";
import { BrokerHarness, readWithKcat } from "../../support/broker-harness.js";
import { skipUnlessInstalled } from "../../support/required-tools.js";
import { confluentProduce, dumpLogCodecs, produceRaw } from "./validation-support.js";

const { Kafka, logLevel, CompressionTypes } = kafkajs;
const SEGMENT = "00000000000000000000.log";

describe("produce validation: timestamps, keys and recompression on a real broker", {
  timeout: 180_000,
}, () => {
  let broker: BrokerHarness;
  let kafka: kafkajs.Kafka;
  let admin: kafkajs.Admin;

  before(async () => {
    broker = await BrokerHarness.start({ name: "produce-validation" });
    kafka = new Kafka({
      clientId: "produce-validation",
      brokers: [broker.bootstrap],
      logLevel: logLevel.NOTHING,
      retry: { retries: 2, initialRetryTime: 100 },
    });
    admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        {
          topic: "ts-bounded",
          numPartitions: 1,
          configEntries: [
            { name: "message.timestamp.before.max.ms", value: "3600000" },
            { name: "message.timestamp.after.max.ms", value: "60000" },
          ],
        },
        {
          topic: "compacted",
          numPartitions: 1,
          configEntries: [{ name: "cleanup.policy", value: "compact" }],
        },
        {
          topic: "zstd-topic",
          numPartitions: 1,
          configEntries: [{ name: "compression.type", value: "zstd" }],
        },
        { topic: "producer-codec", numPartitions: 1 },
      ],
    });
  });
  after(async () => {
    await admin?.disconnect();
    await broker?.close();
  });

  test("KafkaJS: an old timestamp is INVALID_TIMESTAMP, a current one is accepted", async () => {
    const producer = kafka.producer({ allowAutoTopicCreation: false, retry: { retries: 0 } });
    await producer.connect();
    try {
      const now = Date.now();
      await assert.rejects(
        producer.send({
          topic: "ts-bounded",
          acks: -1,
          messages: [{ key: "k", value: "too old", timestamp: String(now - 2 * 3_600_000) }],
        }),
        (e: Error & { type?: string }) => {
          assert.equal(e.type, "INVALID_TIMESTAMP", `${e.name}: ${e.message}`);
          return true;
        },
      );
      await assert.rejects(
        producer.send({
          topic: "ts-bounded",
          acks: -1,
          messages: [{ key: "k", value: "future", timestamp: String(now + 600_000) }],
        }),
        (e: Error & { type?: string }) => e.type === "INVALID_TIMESTAMP",
      );
      const ok = await producer.send({
        topic: "ts-bounded",
        acks: -1,
        messages: [{ key: "k", value: "now", timestamp: String(now) }],
      });
      assert.equal(ok[0].errorCode, 0);
    } finally {
      await producer.disconnect();
    }
  });

  test("Produce v9: INVALID_TIMESTAMP with Kafka's record_errors (batch_index + message)", async () => {
    const now = BigInt(Date.now());
    const records = buildRecordBatch({
      records: [
        { key: Buffer.from("a"), value: Buffer.from("ok"), timestamp: now },
        { key: Buffer.from("b"), value: Buffer.from("old"), timestamp: now - 7_200_000n },
        { key: Buffer.from("c"), value: Buffer.from("ok"), timestamp: now },
        { key: Buffer.from("d"), value: Buffer.from("future"), timestamp: now + 3_600_000n },
      ],
    });
    const r = await produceRaw(broker.port, "ts-bounded", 0, records);
    assert.equal(r.errorCode, ErrorCode.INVALID_TIMESTAMP);
    assert.equal(r.errorMessage, "One or more records have been rejected due to invalid timestamp");
    assert.deepEqual(
      r.recordErrors.map((e) => e.batchIndex),
      [1, 3],
    );
    assert.match(
      r.recordErrors[0].batchIndexErrorMessage ?? "",
      /^Timestamp \d+ of message with offset 1 is out of range\. The timestamp should be within \[\d+, \d+\]$/,
    );
    assert.equal(r.baseOffset, -1n);
  });

  test("confluent-kafka: the delivery report says INVALID_TIMESTAMP for the old record only", {
    skip: skipUnlessInstalled("python3", "confluent-kafka"),
  }, async () => {
    const now = Date.now();
    const outcome = await confluentProduce(
      broker.bootstrap,
      "ts-bounded",
      { "linger.ms": 0, acks: "all", "batch.num.messages": 1 },
      [
        { key: "x", value: "old", timestamp: now - 4 * 3_600_000 },
        { key: "y", value: "fresh", timestamp: now },
      ],
    );
    assert.deepEqual(outcome, ["INVALID_TIMESTAMP", null]);
  });

  test("a compacted topic refuses a record without a key: INVALID_RECORD with Kafka's message", async () => {
    const records = buildRecordBatch({
      records: [
        { key: Buffer.from("k1"), value: Buffer.from("v1") },
        { key: null, value: Buffer.from("no key") },
      ],
      timestamp: BigInt(Date.now()),
    });
    const r = await produceRaw(broker.port, "compacted", 0, records);
    assert.equal(r.errorCode, ErrorCode.INVALID_RECORD);
    assert.deepEqual(r.recordErrors, [
      {
        batchIndex: 1,
        batchIndexErrorMessage:
          "Compacted topic cannot accept message without key in topic partition compacted-0.",
      },
    ]);
    const producer = kafka.producer({ retry: { retries: 0 } });
    await producer.connect();
    try {
      await assert.rejects(
        producer.send({ topic: "compacted", messages: [{ value: "keyless" }] }),
        (e: Error & { type?: string }) => e.type === "INVALID_RECORD",
      );
      await producer.send({ topic: "compacted", messages: [{ key: "k", value: "keyed" }] });
    } finally {
      await producer.disconnect();
    }
  });

  test("compression.type=zstd: a gzip producer's batches are stored as zstd and read back", {
    skip: skipUnlessInstalled("python3", "confluent-kafka"),
  }, async () => {
    const messages = Array.from({ length: 500 }, (_, i) => ({
      key: `key-${i}`,
      value: `value-${i}-${"z".repeat(i % 50)}`,
    }));
    const outcome = await confluentProduce(
      broker.bootstrap,
      "zstd-topic",
      { "compression.type": "gzip", "linger.ms": 50, acks: "all" },
      messages,
    );
    assert.ok(
      outcome.every((o) => o === null),
      JSON.stringify(outcome.filter((o) => o !== null)),
    );
    // KafkaJS (gzip) into the same topic and into a producer-codec topic.
    const producer = kafka.producer();
    await producer.connect();
    try {
      await producer.send({
        topic: "zstd-topic",
        compression: CompressionTypes.GZIP,
        messages: [{ key: "kjs", value: "from kafkajs" }],
      });
      await producer.send({
        topic: "producer-codec",
        compression: CompressionTypes.GZIP,
        messages: [{ key: "kjs", value: "kept gzip" }],
      });
    } finally {
      await producer.disconnect();
    }
    const read = await readWithKcat(broker.bootstrap, "zstd-topic");
    assert.equal(read.length, 501);
    assert.deepEqual(
      read.slice(0, 500).map((m) => [m.key, m.value]),
      messages.map((m) => [m.key, m.value]),
    );
    assert.deepEqual(
      read.map((m) => m.offset),
      read.map((_, i) => i),
    );
    assert.equal(read[500].value, "from kafkajs");
    const codecs = await dumpLogCodecs(join(broker.logDir, "zstd-topic-0", SEGMENT));
    assert.ok(codecs.length >= 2);
    assert.ok(
      codecs.every((c) => c === "zstd"),
      codecs.join(","),
    );
    assert.deepEqual(await dumpLogCodecs(join(broker.logDir, "producer-codec-0", SEGMENT)), ["gzip"]);
  });

  test("compression.type=zstd also compresses an uncompressed batch (raw Produce)", async () => {
    const records = buildRecordBatch({
      records: [{ key: Buffer.from("raw"), value: Buffer.from("plain") }],
      compression: CompressionType.None,
      timestamp: BigInt(Date.now()),
    });
    const r = await produceRaw(broker.port, "zstd-topic", 0, records);
    assert.equal(r.errorCode, 0, r.errorMessage ?? "");
    const codecs = await dumpLogCodecs(join(broker.logDir, "zstd-topic-0", SEGMENT));
    assert.equal(codecs[codecs.length - 1], "zstd");
  });
});
