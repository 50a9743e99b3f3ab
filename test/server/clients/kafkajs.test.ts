// KafkaJS 2.2 against a real Tributary broker started by the harness (issue 4, "Must show"): admin
// (create topics with partitions and configs, list, fetch metadata, describe cluster, describe/alter
// configs, create partitions, offsets, delete records, delete topics), producer (acks -1 and 1, gzip
// and none) and reading everything back, with kcat (assign-style `-C -e`) and with KafkaJS's own group
// consumer (FindCoordinator/JoinGroup/SyncGroup/Heartbeat/OffsetFetch).

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import kafkajs from "kafkajs";
import { BrokerHarness, pushTo, readWithKcat, withDeadline } from "../../support/broker-harness.js";

const { Kafka, logLevel, CompressionTypes, ConfigResourceTypes, Partitioners } = kafkajs;

const PER_MODE = 3000;
const BATCH = 250;

describe("KafkaJS against a single Tributary broker", { timeout: 120_000 }, () => {
  let broker: BrokerHarness;
  let kafka: kafkajs.Kafka;
  let admin: kafkajs.Admin;

  before(async () => {
    broker = await BrokerHarness.start({ name: "kafkajs-test" });
    kafka = new Kafka({
      clientId: "kafkajs-test",
      brokers: [broker.bootstrap],
      logLevel: logLevel.NOTHING,
      connectionTimeout: 3000,
      requestTimeout: 10_000,
      retry: { retries: 3, initialRetryTime: 100 },
    });
    admin = kafka.admin();
    await admin.connect();
  });

  after(async () => {
    await admin?.disconnect().catch(() => undefined);
    await broker?.close();
  });

  test("admin: create topics with partitions and configs, list them, fetch metadata, describe the cluster", async () => {
    const created = await admin.createTopics({
      topics: [
        {
          topic: "kjs-data",
          numPartitions: 3,
          replicationFactor: 1,
          configEntries: [
            { name: "retention.ms", value: "3600000" },
            { name: "max.message.bytes", value: "2000000" },
          ],
        },
        { topic: "kjs-grow", numPartitions: 1, replicationFactor: 1 },
        { topic: "kjs-doomed", numPartitions: 2, replicationFactor: 1 },
      ],
      waitForLeaders: true,
      timeout: 10_000,
    });
    assert.equal(created, true);
    // Creating an existing topic again: KafkaJS resolves false on TOPIC_ALREADY_EXISTS.
    assert.equal(
      await admin.createTopics({ topics: [{ topic: "kjs-data", numPartitions: 3 }], timeout: 5000 }),
      false,
    );

    const topics = await admin.listTopics();
    for (const t of ["kjs-data", "kjs-grow", "kjs-doomed"])
      assert.ok(topics.includes(t), `${t} not in ${topics}`);

    const md = await admin.fetchTopicMetadata({ topics: ["kjs-data"] });
    assert.equal(md.topics.length, 1);
    const parts = [...md.topics[0].partitions].sort((a, b) => a.partitionId - b.partitionId);
    assert.deepEqual(
      parts.map((p) => ({
        id: p.partitionId,
        leader: p.leader,
        replicas: p.replicas,
        isr: p.isr,
        err: p.partitionErrorCode,
      })),
      [0, 1, 2].map((id) => ({ id, leader: 0, replicas: [0], isr: [0], err: 0 })),
    );

    const cluster = await admin.describeCluster();
    assert.deepEqual(cluster.brokers, [{ nodeId: 0, host: broker.host, port: broker.port }]);
    assert.equal(cluster.controller, 0);
    assert.ok(cluster.clusterId && cluster.clusterId.length > 0, `clusterId ${cluster.clusterId}`);
  });

  test("admin: describe configs (topic and broker), alter a topic config", async () => {
    const describe = async () => {
      const r = await admin.describeConfigs({
        resources: [{ type: ConfigResourceTypes.TOPIC, name: "kjs-data" }],
        includeSynonyms: false,
      });
      assert.equal(r.resources[0].errorCode, 0);
      return new Map(r.resources[0].configEntries.map((e) => [e.configName, e]));
    };
    let entries = await describe();
    assert.equal(entries.get("retention.ms")?.configValue, "3600000");
    assert.equal(entries.get("retention.ms")?.isDefault, false);
    assert.equal(entries.get("max.message.bytes")?.configValue, "2000000");
    // A config not set on the topic is still described, with its default.
    assert.equal(entries.get("cleanup.policy")?.configValue, "delete");
    assert.equal(entries.get("cleanup.policy")?.isDefault, true);

    await admin.alterConfigs({
      validateOnly: false,
      resources: [
        {
          type: ConfigResourceTypes.TOPIC,
          name: "kjs-data",
          configEntries: [
            { name: "retention.ms", value: "7200000" },
            { name: "max.message.bytes", value: "2000000" },
          ],
        },
      ],
    });
    entries = await describe();
    assert.equal(entries.get("retention.ms")?.configValue, "7200000");

    const b = await admin.describeConfigs({
      resources: [{ type: ConfigResourceTypes.BROKER, name: "0" }],
      includeSynonyms: false,
    });
    assert.equal(b.resources[0].errorCode, 0);
    const brokerEntries = new Map(b.resources[0].configEntries.map((e) => [e.configName, e.configValue]));
    assert.equal(brokerEntries.get("broker.id"), "0");
    assert.equal(brokerEntries.get("num.partitions"), "1");
  });

  test("admin: create partitions", async () => {
    await admin.createPartitions({ topicPartitions: [{ topic: "kjs-grow", count: 4 }], timeout: 10_000 });
    const md = await admin.fetchTopicMetadata({ topics: ["kjs-grow"] });
    assert.deepEqual(md.topics[0].partitions.map((p) => p.partitionId).sort(), [0, 1, 2, 3]);
    // Shrinking is refused (INVALID_PARTITIONS).
    await assert.rejects(
      admin.createPartitions({ topicPartitions: [{ topic: "kjs-grow", count: 2 }], timeout: 10_000 }),
    );
  });

  test(`producer: acks=-1 with gzip and acks=1 without compression, ${2 * PER_MODE} keyed messages, all read back`, async () => {
    const producer = kafka.producer({
      createPartitioner: Partitioners.DefaultPartitioner,
      allowAutoTopicCreation: false,
    });
    await producer.connect();
    const modes = [
      { name: "all-gzip", acks: -1, compression: CompressionTypes.GZIP },
      { name: "leader-none", acks: 1, compression: CompressionTypes.None },
    ];
    const acked = new Map<number, bigint[]>();
    const sent: string[] = [];
    try {
      for (const mode of modes) {
        for (let start = 0; start < PER_MODE; start += BATCH) {
          const messages = [];
          for (let i = start; i < Math.min(PER_MODE, start + BATCH); i++) {
            const value = `${mode.name}-${String(i).padStart(6, "0")}`;
            messages.push({ key: `key-${i % 61}`, value, headers: { mode: mode.name } });
            sent.push(value);
          }
          const res = await withDeadline(
            "producer.send",
            15_000,
            producer.send({ topic: "kjs-data", acks: mode.acks, compression: mode.compression, messages }),
          );
          for (const r of res) {
            assert.equal(r.errorCode, 0, JSON.stringify(r));
            pushTo(acked, r.partition, BigInt(r.baseOffset ?? "-1"));
          }
        }
      }
    } finally {
      await producer.disconnect();
    }

    const got = await readWithKcat(broker.bootstrap, "kjs-data");
    assert.equal(got.length, sent.length, `read back ${got.length} of ${sent.length}`);
    assert.deepEqual(got.map((m) => m.value).sort(), [...sent].sort());
    for (const m of got)
      assert.equal(m.headers, `mode=${m.value.startsWith("all") ? "all-gzip" : "leader-none"}`);
    // Dense offsets per partition, per-partition order kept, and every acknowledged base offset is the
    // offset of a message that is there.
    const byPartition = new Map<number, typeof got>();
    for (const m of got) {
      pushTo(byPartition, m.partition, m);
    }
    assert.equal(byPartition.size, 3);
    for (const [p, msgs] of byPartition) {
      for (const [i, m] of msgs.entries()) assert.equal(m.offset, i, `partition ${p}`);
      for (let i = 1; i < msgs.length; i++) {
        const [a, b] = [msgs[i - 1].value, msgs[i].value];
        if (a.slice(0, 3) === b.slice(0, 3)) assert.ok(a < b, `partition ${p}: ${a} before ${b}`);
      }
      const bases = acked.get(p) ?? [];
      for (let i = 1; i < bases.length; i++)
        assert.ok(bases[i] > bases[i - 1], `partition ${p} bases ${bases}`);
      for (const base of bases)
        assert.ok(base >= 0n && base < BigInt(msgs.length), `base ${base} in partition ${p}`);
    }

    // ListOffsets: earliest 0, latest = the count in each partition.
    const offsets = await admin.fetchTopicOffsets("kjs-data");
    for (const o of offsets) {
      assert.equal(o.low, "0");
      assert.equal(o.high, String(byPartition.get(o.partition)?.length ?? 0));
    }
  });

  test("admin: offsets by timestamp and delete records", async () => {
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    await admin.createTopics({ topics: [{ topic: "kjs-times", numPartitions: 1 }], waitForLeaders: true });
    let t = 0;
    try {
      await producer.send({ topic: "kjs-times", acks: -1, messages: [{ value: "a" }, { value: "b" }] });
      await new Promise((r) => setTimeout(r, 30));
      t = Date.now();
      await new Promise((r) => setTimeout(r, 30));
      await producer.send({ topic: "kjs-times", acks: -1, messages: [{ value: "c" }, { value: "d" }] });
    } finally {
      await producer.disconnect();
    }
    const before = Date.now() - 60_000;
    assert.deepEqual(await admin.fetchTopicOffsetsByTimestamp("kjs-times", before), [
      { partition: 0, offset: "0" },
    ]);
    assert.deepEqual(await admin.fetchTopicOffsetsByTimestamp("kjs-times", t), [
      { partition: 0, offset: "2" },
    ]);

    await admin.deleteTopicRecords({ topic: "kjs-times", partitions: [{ partition: 0, offset: "3" }] });
    const o = await admin.fetchTopicOffsets("kjs-times");
    assert.deepEqual(
      o.map((x) => ({ p: x.partition, low: x.low, high: x.high })),
      [{ p: 0, low: "3", high: "4" }],
    );
    const left = await readWithKcat(broker.bootstrap, "kjs-times");
    assert.deepEqual(
      left.map((m) => [m.offset, m.value]),
      [[3, "d"]],
    );
  });

  test("timestamps: CreateTime keeps the producer's, LogAppendTime replaces it with the broker's", async () => {
    await admin.createTopics({
      topics: [
        { topic: "kjs-create-time", numPartitions: 1 },
        {
          topic: "kjs-append-time",
          numPartitions: 1,
          configEntries: [{ name: "message.timestamp.type", value: "LogAppendTime" }],
        },
      ],
      waitForLeaders: true,
    });
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    const messages = [
      { value: "a", timestamp: String(Date.now() - 3_600_000) },
      { value: "b", timestamp: String(Date.now() - 1_800_000) },
    ];
    try {
      const created = await producer.send({ topic: "kjs-create-time", acks: -1, messages });
      assert.equal(created[0].logAppendTime, "-1");
      const before = Date.now();
      const appended = await producer.send({ topic: "kjs-append-time", acks: -1, messages });
      const after = Date.now();
      const t = Number(appended[0].logAppendTime);
      assert.ok(t >= before - 1000 && t <= after + 1000, `logAppendTime ${t} not in [${before}, ${after}]`);
      const readAppend = await readWithKcat(broker.bootstrap, "kjs-append-time");
      assert.deepEqual(
        readAppend.map((m) => [m.value, m.timestamp]),
        [
          ["a", t],
          ["b", t],
        ],
      );
    } finally {
      await producer.disconnect();
    }
    const readCreate = await readWithKcat(broker.bootstrap, "kjs-create-time");
    assert.deepEqual(
      readCreate.map((m) => [m.value, m.timestamp]),
      messages.map((m) => [m.value, Number(m.timestamp)]),
    );
  });

  test("admin: delete topics", async () => {
    await admin.deleteTopics({ topics: ["kjs-doomed"], timeout: 10_000 });
    const topics = await admin.listTopics();
    assert.ok(!topics.includes("kjs-doomed"), `kjs-doomed still listed: ${topics}`);
    assert.ok(topics.includes("kjs-data"));
    // Deleting it again: UNKNOWN_TOPIC_OR_PARTITION.
    await assert.rejects(
      admin.deleteTopics({ topics: ["kjs-doomed"], timeout: 5000 }),
      /does not host this topic-partition|UNKNOWN_TOPIC/i,
    );
  });

  test("consumer: a group consumer reads everything back", async () => {
    const consumer = kafka.consumer({ groupId: "kjs-group", maxWaitTimeInMs: 200 });
    await consumer.connect();
    await consumer.subscribe({ topics: ["kjs-data"], fromBeginning: true });
    let got = 0;
    await withDeadline(
      "group consume",
      20_000,
      new Promise<void>((resolve) => {
        void consumer.run({
          eachMessage: async () => {
            if (++got === 2 * PER_MODE) resolve();
          },
        });
      }),
    );
    await consumer.disconnect();
    assert.equal(got, 2 * PER_MODE);
  });
});
