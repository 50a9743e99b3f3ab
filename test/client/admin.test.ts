// AdminClient against a real broker: topics (create with configs/assignments/validateOnly, list,
// describe, add partitions, delete), configs (describe with synonyms, incremental alter), offsets
// (earliest/latest/timestamp/max-timestamp), DeleteRecords, DescribeLogDirs and DescribeCluster, with
// per-resource errors as KafkaClientError. Records are written with a plain Produce request.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { AdminClient } from "../../src/client/admin/admin-client.js";
import { CONFIG_SOURCE_NAMES, throwFirstError } from "../../src/client/admin/admin-types.js";
import { KafkaClientError } from "../../src/client/errors.js";
import { ErrorCode } from "../../src/protocol/generated/errors.js";
import { BrokerHarness } from "../support/broker-harness.js";
import { produceWithTimestamps } from "../support/produce-timestamps.js";

let broker: BrokerHarness;
let admin: AdminClient;

before(async () => {
  broker = await BrokerHarness.start({ name: "tributary-admin" });
  admin = new AdminClient({ bootstrapServers: broker.bootstrap, defaultApiTimeoutMs: 5000 });
});
after(async () => {
  await admin?.close();
  await broker?.close();
});

function hasCode(e: KafkaClientError | undefined, code: number): void {
  assert.ok(e instanceof KafkaClientError, "expected an error");
  assert.equal(e.code, code, `${e.errorName}: ${e.message}`);
}

/** Appends one batch with these record timestamps (acks=1). */
function produce(topic: string, partition: number, timestamps: readonly number[]): Promise<void> {
  return produceWithTimestamps(admin, topic, partition, timestamps);
}

describe("AdminClient topics", () => {
  test("createTopics: partitions, configs, assignments, validateOnly and per-topic errors", async () => {
    const results = await admin.createTopics([
      { name: "adm-a", numPartitions: 4, replicationFactor: 1, configs: { "retention.ms": "123456" } },
      { name: "adm-b", assignments: [[0], [0]] },
      { name: "adm-bad-rf", numPartitions: 1, replicationFactor: 3 },
    ]);
    assert.equal(results[0].error, undefined);
    assert.equal(results[0].numPartitions, 4);
    assert.equal(results[0].replicationFactor, 1);
    assert.match(results[0].topicId ?? "", /^[A-Za-z0-9_-]{22}$/);
    assert.deepEqual(
      results[0].configs?.find((c) => c.name === "retention.ms"),
      { name: "retention.ms", value: "123456", source: 1 },
    );
    assert.equal(results[1].error, undefined);
    assert.equal(results[1].numPartitions, 2);
    hasCode(results[2].error, ErrorCode.INVALID_REPLICATION_FACTOR);

    const again = await admin.createTopics([{ name: "adm-a", numPartitions: 1 }]);
    hasCode(again[0].error, ErrorCode.TOPIC_ALREADY_EXISTS);
    assert.throws(() => throwFirstError(again), KafkaClientError);

    const dry = await admin.createTopics([{ name: "adm-dry", numPartitions: 3 }], { validateOnly: true });
    assert.equal(dry[0].error, undefined);
    const names = (await admin.listTopics()).map((t) => t.name);
    assert.ok(names.includes("adm-a") && names.includes("adm-b"));
    assert.ok(!names.includes("adm-dry"), "validateOnly creates nothing");
    assert.ok(!names.includes("adm-bad-rf"));
    assert.deepEqual(names, [...names].sort());
  });

  test("describeTopics: topic id, leader, replicas, isr per partition; unknown topic is an error", async () => {
    const [a, missing] = await admin.describeTopics(["adm-a", "adm-missing"]);
    assert.equal(a.error, undefined);
    assert.equal(a.isInternal, false);
    assert.notEqual(a.topicId, "AAAAAAAAAAAAAAAAAAAAAA");
    assert.deepEqual(
      a.partitions.map((p) => [p.partition, p.leader, p.replicas, p.isr, p.offlineReplicas]),
      [0, 1, 2, 3].map((i) => [i, 0, [0], [0], []]),
    );
    hasCode(missing.error, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.match(missing.error?.message ?? "", /adm-missing/);
    const listed = await admin.listTopics({ listInternal: true });
    assert.equal(listed.find((t) => t.name === "adm-a")?.topicId, a.topicId);
  });

  test("createPartitions grows a topic; shrinking or an unknown topic is an error", async () => {
    const r = await admin.createPartitions([
      { topic: "adm-b", totalCount: 5 },
      { topic: "adm-a", totalCount: 2 },
      { topic: "adm-nope", totalCount: 2 },
    ]);
    assert.equal(r[0].error, undefined);
    hasCode(r[1].error, ErrorCode.INVALID_PARTITIONS);
    hasCode(r[2].error, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const [b] = await admin.describeTopics(["adm-b"]);
    assert.equal(b.partitions.length, 5);
  });

  test("deleteTopics removes a topic; deleting it again is UNKNOWN_TOPIC_OR_PARTITION", async () => {
    await admin.createTopics([{ name: "adm-del", numPartitions: 1 }]);
    const [ok] = await admin.deleteTopics(["adm-del"]);
    assert.equal(ok.error, undefined);
    const [again] = await admin.deleteTopics(["adm-del"]);
    hasCode(again.error, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const [d] = await admin.describeTopics(["adm-del"]);
    hasCode(d.error, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });
});

describe("AdminClient configs", () => {
  test("describeConfigs: topic value with its synonyms; broker configs by id", async () => {
    const [topic, brokerCfg, missing] = await admin.describeConfigs(
      [
        { type: "topic", name: "adm-a" },
        { type: "broker", name: "0" },
        { type: "topic", name: "adm-missing" },
      ],
      { includeSynonyms: true },
    );
    assert.equal(topic.error, undefined);
    const retention = topic.entries.find((e) => e.name === "retention.ms");
    assert.ok(retention);
    assert.equal(retention.value, "123456");
    assert.equal(CONFIG_SOURCE_NAMES[retention.source], "DYNAMIC_TOPIC_CONFIG");
    // Kafka's synonyms start at the primary broker key (log.retention.ms, which has no default here).
    assert.deepEqual(retention.synonyms, [{ name: "retention.ms", value: "123456", source: 1 }]);
    const cleanup = topic.entries.find((e) => e.name === "cleanup.policy");
    assert.equal(cleanup?.value, "delete");
    assert.equal(cleanup?.isDefault, true);
    assert.deepEqual(cleanup?.synonyms, [{ name: "log.cleanup.policy", value: "delete", source: 5 }]);
    assert.equal(brokerCfg.error, undefined);
    assert.equal(brokerCfg.entries.find((e) => e.name === "broker.id")?.value, "0");
    hasCode(missing.error, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });

  test("incrementalAlterConfigs: SET, DELETE, validateOnly and a bad value", async () => {
    const topic = { type: "topic" as const, name: "adm-a" };
    const [set] = await admin.incrementalAlterConfigs([
      { resource: topic, ops: [{ name: "cleanup.policy", op: "SET", value: "compact" }] },
    ]);
    assert.equal(set.error, undefined);
    const [del] = await admin.incrementalAlterConfigs([
      { resource: topic, ops: [{ name: "retention.ms", op: "DELETE" }] },
    ]);
    assert.equal(del.error, undefined);
    const [dry] = await admin.incrementalAlterConfigs(
      [{ resource: topic, ops: [{ name: "segment.ms", op: "SET", value: "1000" }] }],
      { validateOnly: true },
    );
    assert.equal(dry.error, undefined);
    const [bad] = await admin.incrementalAlterConfigs([
      { resource: topic, ops: [{ name: "retention.ms", op: "SET", value: "soon" }] },
    ]);
    hasCode(bad.error, ErrorCode.INVALID_CONFIG);
    const [d] = await admin.describeConfigs([topic]);
    const byName = new Map(d.entries.map((e) => [e.name, e]));
    assert.equal(byName.get("cleanup.policy")?.value, "compact");
    assert.equal(byName.get("retention.ms")?.value, "604800000");
    assert.equal(byName.get("retention.ms")?.isDefault, true);
    assert.equal(byName.get("segment.ms")?.isDefault, true, "validateOnly changed nothing");
  });
});

describe("AdminClient offsets, records, log dirs, cluster", () => {
  test("listOffsets: earliest, latest, by timestamp, max-timestamp; unknown partition", async () => {
    await admin.createTopics([{ name: "adm-off", numPartitions: 2 }]);
    await produce("adm-off", 0, [1000, 2000, 5000, 3000]);
    await produce("adm-off", 0, [6000, 4000]);
    const r = await admin.listOffsets([
      { topic: "adm-off", partition: 0, spec: "earliest" },
      { topic: "adm-off", partition: 0, spec: "latest" },
      { topic: "adm-off", partition: 0, spec: { timestamp: 2500 } },
      { topic: "adm-off", partition: 0, spec: { timestamp: 9999 } },
      { topic: "adm-off", partition: 0, spec: "max-timestamp" },
      { topic: "adm-off", partition: 1, spec: "latest" },
      { topic: "adm-off", partition: 9, spec: "latest" },
      { topic: "adm-none", partition: 0, spec: "latest" },
    ]);
    assert.deepEqual(
      [0, 1, 2, 3, 5].map((i) => [r[i].offset, r[i].error]),
      [
        [0n, undefined],
        [6n, undefined],
        [2n, undefined],
        [-1n, undefined],
        [0n, undefined],
      ],
    );
    assert.equal(r[2].timestamp, 5000n);
    // max-timestamp: the batch holding 6000 (offsets 4-5); as Kafka 3.8+, the record's own offset (4).
    assert.equal(r[4].error, undefined);
    assert.equal(r[4].timestamp, 6000n);
    assert.equal(r[4].offset, 4n);
    hasCode(r[6].error, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    hasCode(r[7].error, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.match(r[7].error?.message ?? "", /adm-none/);
  });

  test("deleteRecords moves the log start offset; beyond the high watermark is OFFSET_OUT_OF_RANGE", async () => {
    const r = await admin.deleteRecords([
      { topic: "adm-off", partition: 0, offset: 2n },
      { topic: "adm-off", partition: 1, offset: 5n },
    ]);
    assert.equal(r[0].error, undefined);
    assert.equal(r[0].lowWatermark, 2n);
    hasCode(r[1].error, ErrorCode.OFFSET_OUT_OF_RANGE);
    const [earliest] = await admin.listOffsets([{ topic: "adm-off", partition: 0, spec: "earliest" }]);
    assert.equal(earliest.offset, 2n);
    const [all] = await admin.deleteRecords([{ topic: "adm-off", partition: 0, offset: -1n }]);
    assert.equal(all.lowWatermark, 6n, "-1 deletes up to the high watermark");
  });

  test("describeLogDirs lists the broker's log dir with each replica and its size", async () => {
    const [b] = await admin.describeLogDirs();
    assert.equal(b.brokerId, 0);
    assert.equal(b.error, undefined);
    assert.equal(b.logDirs.length, 1);
    const dir = b.logDirs[0];
    assert.equal(dir.path, broker.logDir);
    const p0 = dir.replicas.find((x) => x.topic === "adm-off" && x.partition === 0);
    assert.ok(
      p0 && p0.size > 0n,
      JSON.stringify(dir.replicas, (_, v) => (typeof v === "bigint" ? String(v) : v)),
    );
    assert.equal(p0.offsetLag, 0n);
    assert.ok(dir.totalBytes > 0n && dir.usableBytes > 0n && dir.usableBytes <= dir.totalBytes);
    const [missing] = await admin.describeLogDirs([5]);
    hasCode(missing.error, ErrorCode.BROKER_NOT_AVAILABLE);
  });

  test("describeCluster: cluster id, controller and brokers", async () => {
    const c = await admin.describeCluster();
    assert.match(c.clusterId, /^[A-Za-z0-9_-]{22}$/);
    assert.equal(c.controllerId, 0);
    assert.deepEqual(c.brokers, [{ id: 0, host: broker.host, port: broker.port, rack: null }]);
  });
});
