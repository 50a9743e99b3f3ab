// @platformatic/kafka 1.35 against a real Tributary broker started by the harness (issue 4, "Must
// show"): admin (create topics with partitions and configs, list, metadata, describe/alter/incremental
// alter configs, create partitions, list offsets, delete records, describe log dirs, delete topics),
// producer (acks -1 and 1; gzip, none, snappy, lz4), a long-poll Fetch over several partitions woken by
// an append, everything read back with the consumer's plain Fetch (`Consumer.fetch`, by topic id), and
// with a group consumer (`consume()`: FindCoordinator, JoinGroup, SyncGroup, Heartbeat, OffsetFetch).

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  Admin,
  ConfigResourceTypes,
  Consumer,
  type MessageToProduce,
  ProduceAcks,
  Producer,
} from "@platformatic/kafka";
import { BrokerHarness, withDeadline } from "../../support/broker-harness.js";

const PER_MODE = 3000;
const BATCH = 250;

interface Fetched {
  readonly partition: number;
  readonly offset: bigint;
  readonly key: string;
  readonly value: string;
  readonly headers: string;
}

describe("@platformatic/kafka against a single Tributary broker", { timeout: 120_000 }, () => {
  let broker: BrokerHarness;
  let admin: Admin;
  let base: { bootstrapBrokers: string[]; timeout: number; retries: number; retryDelay: number };

  before(async () => {
    broker = await BrokerHarness.start({ name: "platformatic-test" });
    base = { bootstrapBrokers: [broker.bootstrap], timeout: 10_000, retries: 3, retryDelay: 100 };
    admin = new Admin({ ...base, clientId: "platformatic-test-admin" });
  });

  after(async () => {
    await admin?.close().catch(() => undefined);
    await broker?.close();
  });

  /** Every record of `topic` from offset 0 to the high watermark, with plain Fetch requests (no group). */
  async function readAll(topic: string, partitions: number): Promise<Fetched[]> {
    const md = await admin.metadata({ topics: [topic] });
    const topicId = md.topics.get(topic)?.id;
    assert.ok(topicId, `no topic id for ${topic}`);
    const consumer = new Consumer({
      ...base,
      clientId: "platformatic-test-reader",
      groupId: "unused-no-group",
    });
    const out: Fetched[] = [];
    try {
      for (let p = 0; p < partitions; p++) {
        let next = 0n;
        for (let round = 0; ; round++) {
          assert.ok(round < 1000, `partition ${p}: too many fetches`);
          const res: Awaited<ReturnType<typeof consumer.fetch>> = await withDeadline(
            "fetch",
            15_000,
            consumer.fetch({
              node: 0,
              maxWaitTime: 100,
              minBytes: 1,
              maxBytes: 1 << 20,
              topics: [
                {
                  topicId,
                  partitions: [
                    {
                      partition: p,
                      currentLeaderEpoch: -1,
                      fetchOffset: next,
                      lastFetchedEpoch: -1,
                      partitionMaxBytes: 1 << 20,
                    },
                  ],
                },
              ],
            }),
          );
          assert.equal(res.errorCode, 0);
          const part = res.responses[0]?.partitions[0];
          assert.ok(
            part,
            `empty fetch response: ${JSON.stringify(res, (_, v) => (typeof v === "bigint" ? String(v) : v))}`,
          );
          assert.equal(part.errorCode, 0, `fetch ${topic}-${p} at ${next}: error ${part.errorCode}`);
          for (const batch of part.records ?? []) {
            for (const r of batch.records) {
              const offset = batch.firstOffset + BigInt(r.offsetDelta);
              if (offset < next) continue; // a batch may start before the fetch offset
              out.push({
                partition: p,
                offset,
                key: r.key?.toString() ?? "",
                value: r.value?.toString() ?? "",
                headers: r.headers
                  .map(([k, v]: [Buffer | null, Buffer | null]) => `${k?.toString()}=${v?.toString()}`)
                  .join(","),
              });
              next = offset + 1n;
            }
          }
          if (next >= part.highWatermark) break;
        }
      }
    } finally {
      await consumer.close();
    }
    return out;
  }

  test("admin: create topics with partitions and configs, list them, metadata", async () => {
    const created = await admin.createTopics({
      topics: ["pk-data"],
      partitions: 3,
      replicas: 1,
      configs: [{ name: "retention.ms", value: "3600000" }],
    });
    assert.equal(created.length, 1);
    assert.equal(created[0].name, "pk-data");
    assert.equal(created[0].partitions, 3);
    assert.match(created[0].id, /^[0-9a-f-]{36}$/, `topic id ${created[0].id}`);
    await admin.createTopics({ topics: ["pk-grow", "pk-doomed"], partitions: 1, replicas: 1 });
    // An existing topic: TOPIC_ALREADY_EXISTS.
    await assert.rejects(admin.createTopics({ topics: ["pk-data"], partitions: 3, replicas: 1 }));

    const topics = await admin.listTopics();
    for (const t of ["pk-data", "pk-grow", "pk-doomed"])
      assert.ok(topics.includes(t), `${t} not in ${topics}`);

    const md = await admin.metadata({ topics: ["pk-data"] });
    assert.deepEqual([...md.brokers.keys()], [0]);
    assert.equal(md.brokers.get(0)?.host, broker.host);
    assert.equal(md.brokers.get(0)?.port, broker.port);
    assert.equal(md.controllerId, 0);
    const t = md.topics.get("pk-data");
    assert.ok(t);
    assert.equal(t.id, created[0].id);
    assert.equal(t.partitionsCount, 3);
    for (const p of t.partitions) {
      assert.equal(p.leader, 0);
      assert.equal(p.leaderEpoch, 0);
      assert.deepEqual(p.replicas, [0]);
      assert.deepEqual(p.isr, [0]);
    }
  });

  test("admin: describe, alter and incrementally alter configs", async () => {
    const describeTopic = async () => {
      const [r] = await admin.describeConfigs({
        resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: "pk-data" }],
      });
      return new Map(r.configs.map((c) => [c.name, c]));
    };
    let c = await describeTopic();
    assert.equal(c.get("retention.ms")?.value, "3600000");
    assert.equal(c.get("retention.ms")?.configSource, 1, "retention.ms: DYNAMIC_TOPIC_CONFIG");
    assert.equal(c.get("segment.bytes")?.value, "1073741824");
    assert.equal(c.get("segment.bytes")?.configSource, 5, "segment.bytes: DEFAULT_CONFIG");

    await admin.alterConfigs({
      resources: [
        {
          resourceType: ConfigResourceTypes.TOPIC,
          resourceName: "pk-data",
          configs: [{ name: "retention.ms", value: "7200000" }],
        },
      ],
    });
    c = await describeTopic();
    assert.equal(c.get("retention.ms")?.value, "7200000");

    await admin.incrementalAlterConfigs({
      resources: [
        {
          resourceType: ConfigResourceTypes.TOPIC,
          resourceName: "pk-data",
          configs: [{ name: "segment.bytes", value: "1048576", configOperation: 0 }], // SET
        },
      ],
    });
    c = await describeTopic();
    assert.equal(c.get("segment.bytes")?.value, "1048576");
    assert.equal(c.get("retention.ms")?.value, "7200000", "incremental alter kept the other override");

    const [b] = await admin.describeConfigs({
      resources: [{ resourceType: ConfigResourceTypes.BROKER, resourceName: "0" }],
    });
    const bc = new Map(b.configs.map((x) => [x.name, x.value]));
    assert.equal(bc.get("broker.id"), "0");
    assert.equal(bc.get("log.dirs"), broker.logDir);
  });

  test("admin: create partitions", async () => {
    await admin.createPartitions({ topics: [{ name: "pk-grow", count: 3 }] });
    const md = await admin.metadata({ topics: ["pk-grow"], forceUpdate: true });
    assert.equal(md.topics.get("pk-grow")?.partitionsCount, 3);
  });

  // (zstd is left out: @platformatic/kafka 1.35 supports it only on newer Node versions.)
  const modes = [
    { name: "all-gzip", acks: ProduceAcks.ALL, compression: "gzip" as const },
    { name: "leader-none", acks: ProduceAcks.LEADER, compression: "none" as const },
    { name: "all-snappy", acks: ProduceAcks.ALL, compression: "snappy" as const },
    { name: "leader-lz4", acks: ProduceAcks.LEADER, compression: "lz4" as const },
  ];
  const TOTAL = modes.length * PER_MODE;
  /** Production order of a value: modes in turn, then the sequence number. */
  const rank = (value: string) =>
    modes.findIndex((m) => m.name === value.slice(0, -7)) * 1e6 + Number(value.slice(-6));

  test(`producer: acks=-1 and acks=1 with gzip, none, snappy, lz4, ${TOTAL} keyed messages, all fetched back`, async () => {
    const sent: string[] = [];
    for (const mode of modes) {
      const producer = new Producer({
        ...base,
        clientId: `platformatic-test-${mode.name}`,
        acks: mode.acks,
        compression: mode.compression,
        autocreateTopics: false,
      });
      try {
        for (let start = 0; start < PER_MODE; start += BATCH) {
          const messages: MessageToProduce[] = [];
          for (let i = start; i < Math.min(PER_MODE, start + BATCH); i++) {
            const value = `${mode.name}-${String(i).padStart(6, "0")}`;
            messages.push({
              topic: "pk-data",
              partition: i % 3,
              key: Buffer.from(`key-${i % 61}`),
              value: Buffer.from(value),
              headers: new Map([[Buffer.from("mode"), Buffer.from(mode.name)]]),
            });
            sent.push(value);
          }
          const res = await withDeadline("producer.send", 15_000, producer.send({ messages }));
          assert.ok(res.offsets && res.offsets.length > 0, "no offsets acknowledged");
        }
      } finally {
        await producer.close();
      }
    }

    const got = await readAll("pk-data", 3);
    assert.equal(got.length, sent.length, `fetched ${got.length} of ${sent.length}`);
    assert.deepEqual(got.map((m) => m.value).sort(), [...sent].sort());
    for (const m of got) {
      assert.equal(m.headers, `mode=${m.value.slice(0, -7)}`);
      assert.equal(Number(m.value.slice(-6)) % 3, m.partition, `${m.value} in partition ${m.partition}`);
    }
    for (let p = 0; p < 3; p++) {
      const msgs = got.filter((m) => m.partition === p);
      for (const [i, m] of msgs.entries()) assert.equal(m.offset, BigInt(i));
      for (let i = 1; i < msgs.length; i++)
        assert.ok(rank(msgs[i - 1].value) < rank(msgs[i].value), `order in partition ${p}`);
    }

    // ListOffsets latest (-1) and earliest (-2).
    const listed = async (timestamp: bigint) => {
      const [t] = await admin.listOffsets({
        topics: [
          { name: "pk-data", partitions: [0, 1, 2].map((partitionIndex) => ({ partitionIndex, timestamp })) },
        ],
      });
      return t.partitions.sort((a, b) => a.partitionIndex - b.partitionIndex).map((p) => p.offset);
    };
    assert.deepEqual(
      await listed(-1n),
      [0, 1, 2].map(() => BigInt(TOTAL / 3)),
    );
    assert.deepEqual(await listed(-2n), [0n, 0n, 0n]);
  });

  test("admin: delete records, describe log dirs", async () => {
    const [d] = await admin.deleteRecords({
      topics: [{ name: "pk-data", partitions: [{ partition: 1, offset: 10n }] }],
    });
    assert.deepEqual(d.partitions, [{ partition: 1, lowWatermark: 10n }]);
    const [t] = await admin.listOffsets({
      topics: [{ name: "pk-data", partitions: [{ partitionIndex: 1, timestamp: -2n }] }],
    });
    assert.equal(t.partitions[0].offset, 10n);

    const dirs = await admin.describeLogDirs({ topics: [{ name: "pk-data", partitions: [0, 1, 2] }] });
    assert.equal(dirs.length, 1);
    assert.equal(dirs[0].broker, 0);
    const dir = dirs[0].results.find((r) => r.logDir === broker.logDir);
    assert.ok(dir, `log dir ${broker.logDir} not in ${dirs[0].results.map((r) => r.logDir)}`);
    const parts = dir.topics.find((x) => x.name === "pk-data")?.partitions ?? [];
    assert.deepEqual(parts.map((p) => p.partitionIndex).sort(), [0, 1, 2]);
    for (const p of parts)
      assert.ok(p.partitionSize > 0n, `partition ${p.partitionIndex} size ${p.partitionSize}`);
  });

  test("a long-poll Fetch over four partitions is answered as soon as one of them gets a record", async () => {
    await admin.createTopics({ topics: ["pk-long-poll"], partitions: 4, replicas: 1 });
    const md = await admin.metadata({ topics: ["pk-long-poll"] });
    const topicId = md.topics.get("pk-long-poll")?.id;
    assert.ok(topicId);
    const consumer = new Consumer({
      ...base,
      clientId: "platformatic-test-long-poll",
      groupId: "unused-no-group",
    });
    const producer = new Producer({
      ...base,
      clientId: "platformatic-test-long-poll",
      acks: ProduceAcks.LEADER,
    });
    try {
      const t0 = Date.now();
      const fetch = consumer
        .fetch({
          node: 0,
          maxWaitTime: 8000,
          minBytes: 1,
          maxBytes: 1 << 20,
          topics: [
            {
              topicId,
              partitions: [0, 1, 2, 3].map((partition) => ({
                partition,
                currentLeaderEpoch: -1,
                fetchOffset: 0n,
                lastFetchedEpoch: -1,
                partitionMaxBytes: 1 << 20,
              })),
            },
          ],
        })
        .then((r) => ({ r, at: Date.now() - t0 }));
      await new Promise((r) => setTimeout(r, 1000)); // the Fetch is parked by now
      await producer.send({
        messages: [{ topic: "pk-long-poll", partition: 3, value: Buffer.from("wake") }],
      });
      const { r, at } = await withDeadline("long-poll fetch", 15_000, fetch);
      const withRecords = r.responses[0]?.partitions
        .filter((p) => (p.records?.length ?? 0) > 0)
        .map((p) => p.partitionIndex);
      assert.deepEqual(withRecords, [3]);
      // Without a wake-up on append it would be answered at its 8 s max wait.
      assert.ok(at < 4000, `the Fetch was answered ${at} ms after it was sent (the record came at ~1000 ms)`);
    } finally {
      await producer.close();
      await consumer.close();
    }
  });

  test("admin: delete topics", async () => {
    await admin.deleteTopics({ topics: ["pk-doomed"] });
    const topics = await admin.listTopics();
    assert.ok(!topics.includes("pk-doomed"), `pk-doomed still listed: ${topics}`);
    assert.ok(topics.includes("pk-data"));
  });

  test("consumer: a group consumer reads everything back", async () => {
    const consumer = new Consumer({
      ...base,
      // FindCoordinator answers COORDINATOR_NOT_AVAILABLE until __consumer_offsets' 50 partitions exist and
      // are loaded (as Kafka does); on a loaded machine that outlasts 3 retries 100 ms apart.
      retries: 20,
      clientId: "platformatic-test-group",
      groupId: "pk-group",
      maxWaitTime: 200,
    });
    try {
      const stream = await consumer.consume({ topics: ["pk-data"], mode: "earliest", autocommit: false });
      let got = 0;
      await withDeadline(
        "group consume",
        20_000,
        (async () => {
          for await (const _ of stream) if (++got >= TOTAL - 10) break;
        })(),
      );
      await stream.close();
      assert.equal(got, TOTAL - 10);
    } finally {
      await consumer.close();
    }
  });
});
