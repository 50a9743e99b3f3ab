// Every client's group consumer against a real Tributary broker (issue 6, "Must show"): kcat -G,
// confluent-kafka Consumer and kafka-python KafkaConsumer (each with synchronous, asynchronous and auto
// commit), KafkaJS consumer.run and @platformatic/kafka consume() each join their own group on a
// 4-partition topic, get the partitions, read every record and commit. Then the broker is restarted (SIGTERM) and each group
// resumes exactly at its committed offsets: the records written after the commit (before and after the
// restart) are read, none before it. Committed offsets are also checked independently, by OffsetFetch on
// a raw socket and by kafka-python's KafkaAdminClient.list_consumer_group_offsets.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type kafkajs from "kafkajs";
import {
  type BrokerHarness,
  describeResult,
  parseKcat,
  runCommand,
  sleep,
  withDeadline,
} from "../../support/broker-harness.js";
import { skipUnlessInstalled } from "../../support/required-tools.js";
import {
  closeBounded,
  committedOffsets,
  expectedValues,
  kafkaFor,
  platformaticClassicConsumer,
  produceTo,
  runDriver,
  startGroupBroker,
} from "./group-support.js";

const PARTITIONS = 4;
/** Records per partition: read and committed before the restart ("a"), written after the commit but
 * before the restart ("b"), written after the restart ("c"). */
const A = 10;
const B = 4;
const C = 6;
const KCAT = "/usr/bin/kcat";
/** How long a client keeps polling after its last expected record, to show nothing more arrives. */
const LINGER_MS = 400;

type Rec = [partition: number, offset: number, value: string];
interface Run {
  readonly assigned: number[];
  readonly records: Rec[];
  readonly extra: Rec[];
}
interface Case {
  readonly name: string;
  readonly slug: string;
  readonly run: (broker: BrokerHarness, group: string, topic: string, expect: number) => Promise<Run>;
}

async function kcatRun(broker: BrokerHarness, group: string, topic: string, expect: number): Promise<Run> {
  // Balanced consumer; -e: exit once every assigned partition is at its end. Offsets are stored as
  // messages are delivered and committed by librdkafka's auto commit, finally on close.
  const r = await runCommand(
    KCAT,
    [
      ...["-b", broker.bootstrap, "-G", group, topic, "-e"],
      ...["-X", "auto.offset.reset=earliest", "-X", "client.id=groups-kcat", "-X", "session.timeout.ms=6000"],
      ...["-X", "fetch.wait.max.ms=100", "-f", "%p\\t%o\\t%T\\t%k\\t%s\\t%h\\n"],
    ],
    { timeoutMs: 40_000 },
  );
  assert.equal(r.code, 0, `${describeResult("kcat -G", r)}\n${broker.output}`);
  // "% Group g rebalanced (memberid …): assigned: t [0], t [1], …"
  const assigned = [...r.stderr.matchAll(new RegExp(`${topic} \\[(\\d+)\\]`, "g"))].map((m) => Number(m[1]));
  const records = parseKcat(r.stdout).map((m): Rec => [m.partition, m.offset, m.value]);
  assert.ok(/assigned:/.test(r.stderr), r.stderr);
  return {
    assigned: [...new Set(assigned)].sort(),
    records: records.slice(0, expect),
    extra: records.slice(expect),
  };
}

function pythonCase(name: string, slug: string, client: string, commit: string): Case {
  return {
    name,
    slug,
    run: async (broker, group, topic, expect) => {
      const r = await runDriver(broker, "consume", {
        client,
        group,
        topic,
        commit,
        expect,
        client_id: `groups-${slug}`,
        linger_ms: LINGER_MS,
      });
      // What the client itself reads back as committed, right after its commit.
      const committed = Object.fromEntries(Object.entries(r.committed as Record<string, number>));
      const last = new Map<number, number>();
      for (const [p, o] of r.records as Rec[]) last.set(p, Math.max(last.get(p) ?? -1, o));
      for (const p of r.assigned as number[])
        assert.equal(
          committed[String(p)],
          (last.get(p) ?? -1) + 1,
          `${name}: committed offset of partition ${p}`,
        );
      return r;
    },
  };
}

async function kafkajsRun(broker: BrokerHarness, group: string, topic: string, expect: number): Promise<Run> {
  const consumer = kafkaFor(broker, "groups-kafkajs").consumer({
    groupId: group,
    maxWaitTimeInMs: 100,
    sessionTimeout: 6000,
    heartbeatInterval: 500,
  });
  let assigned: number[] = [];
  consumer.on(consumer.events.GROUP_JOIN, (e: kafkajs.ConsumerGroupJoinEvent) => {
    assigned = [...(e.payload.memberAssignment[topic] ?? [])].sort();
  });
  const records: Rec[] = [];
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await withDeadline(
      "KafkaJS consumer.run",
      30_000,
      new Promise<void>((res, rej) => {
        consumer
          .run({
            // autoCommit (the default): resolved offsets are committed after each batch and on disconnect.
            eachMessage: async ({ partition, message }) => {
              records.push([partition, Number(message.offset), message.value?.toString() ?? ""]);
              if (records.length === expect) res();
            },
          })
          .catch(rej);
      }),
    );
    await sleep(LINGER_MS);
  } finally {
    await consumer.disconnect();
  }
  return { assigned, records: records.slice(0, expect), extra: records.slice(expect) };
}

async function platformaticRun(
  broker: BrokerHarness,
  group: string,
  topic: string,
  expect: number,
): Promise<Run> {
  const consumer = platformaticClassicConsumer(broker, "groups-platformatic", group);
  let assigned: number[] = [];
  consumer.on(
    "consumer:group:join",
    (e: { assignments?: Array<{ topic: string; partitions: number[] }> }) => {
      assigned = [...(e.assignments?.find((a) => a.topic === topic)?.partitions ?? [])].sort();
    },
  );
  const records: Rec[] = [];
  let stream: Awaited<ReturnType<typeof consumer.consume>> | undefined;
  try {
    // Start at the committed offsets (earliest when the group has none); commit each message.
    const s = await consumer.consume({
      topics: [topic],
      mode: "committed",
      fallbackMode: "earliest",
      autocommit: false,
    });
    stream = s;
    await withDeadline(
      "@platformatic/kafka consume",
      30_000,
      (async () => {
        for await (const m of s) {
          records.push([m.partition, Number(m.offset), String(m.value)]);
          await m.commit();
          if (records.length === expect) break;
        }
      })(),
    );
  } finally {
    // The stream must be closed before the consumer can leave the group.
    await withDeadline("@platformatic/kafka stream close", 10_000, stream?.close() ?? Promise.resolve());
    await closeBounded(consumer, "@platformatic/kafka consumer");
  }
  return { assigned, records, extra: [] };
}

const CASES: Case[] = [
  { name: "kcat -G", slug: "kcat", run: kcatRun },
  pythonCase("confluent-kafka Consumer, synchronous commit", "cf-sync", "confluent-kafka", "sync"),
  pythonCase("confluent-kafka Consumer, asynchronous commit", "cf-async", "confluent-kafka", "async"),
  pythonCase("confluent-kafka Consumer, enable.auto.commit", "cf-auto", "confluent-kafka", "auto"),
  pythonCase("kafka-python KafkaConsumer, commit()", "kp-sync", "kafka-python", "sync"),
  pythonCase("kafka-python KafkaConsumer, commit_async()", "kp-async", "kafka-python", "async"),
  pythonCase("kafka-python KafkaConsumer, enable_auto_commit", "kp-auto", "kafka-python", "auto"),
  { name: "KafkaJS consumer.run", slug: "kafkajs", run: kafkajsRun },
  { name: "@platformatic/kafka consume()", slug: "platformatic", run: platformaticRun },
];

const topicOf = (c: Case) => `gc-${c.slug}`;
const groupOf = (c: Case) => `gc-group-${c.slug}`;

/** Checks a run read exactly `tags`' records (per partition, in offset order from `from`), nothing else. */
function assertRead(c: Case, run: Run, tags: Array<[tag: string, count: number]>, from: number): void {
  assert.deepEqual(run.assigned, [0, 1, 2, 3], `${c.name}: the only member is assigned every partition`);
  assert.deepEqual(run.extra, [], `${c.name}: nothing more after the expected records`);
  const expected = tags.flatMap(([tag, n]) => expectedValues(PARTITIONS, n, tag)).sort();
  assert.deepEqual(run.records.map((r) => r[2]).sort(), expected, `${c.name}: the records read`);
  const total = tags.reduce((s, [, n]) => s + n, 0);
  for (let p = 0; p < PARTITIONS; p++) {
    const mine = run.records.filter((r) => r[0] === p);
    assert.deepEqual(
      mine.map((r) => r[1]),
      Array.from({ length: total }, (_, i) => from + i),
      `${c.name}: offsets read from partition ${p}`,
    );
    const values = tags.flatMap(([tag, n]) => Array.from({ length: n }, (_, i) => `${tag}-p${p}-${i}`));
    assert.deepEqual(
      mine.map((r) => r[2]),
      values,
      `${c.name}: values of partition ${p} in offset order`,
    );
  }
}

describe("every client's group consumer resumes from its committed offsets after a broker restart", {
  skip: skipUnlessInstalled("python3", "confluent-kafka", "kafka-python", "kcat"),
  timeout: 180_000,
}, () => {
  let broker: BrokerHarness;
  let producer: kafkajs.Producer;

  const allCommitted = async (expected: number) => {
    for (const c of CASES)
      assert.deepEqual(
        await committedOffsets(broker, groupOf(c), topicOf(c), PARTITIONS),
        { 0: expected, 1: expected, 2: expected, 3: expected },
        `${c.name}: committed offsets (OffsetFetch)`,
      );
    const listed = await runDriver(broker, "offsets", { groups: CASES.map(groupOf) });
    for (const c of CASES)
      assert.deepEqual(
        listed[groupOf(c)],
        { [topicOf(c)]: { 0: expected, 1: expected, 2: expected, 3: expected } },
        `${c.name}: committed offsets (kafka-python list_consumer_group_offsets)`,
      );
  };

  before(async () => {
    ({ broker, producer } = await startGroupBroker(
      "group-clients",
      "groups-setup",
      CASES.map((c) => ({ topic: topicOf(c), numPartitions: PARTITIONS })),
    ));
    for (const c of CASES) await produceTo(producer, topicOf(c), PARTITIONS, A, "a");
  });

  after(async () => {
    await producer?.disconnect().catch(() => undefined);
    await broker?.close();
  });

  describe("first run: join, get the partitions, read everything, commit", { concurrency: true }, () => {
    for (const c of CASES)
      test(c.name, async () => {
        const run = await c.run(broker, groupOf(c), topicOf(c), PARTITIONS * A);
        assertRead(c, run, [["a", A]], 0);
      });
  });

  test("the commits are there; more records arrive; the broker restarts (SIGTERM); the commits survive", async () => {
    await allCommitted(A);
    for (const c of CASES) await produceTo(producer, topicOf(c), PARTITIONS, B, "b");
    await producer.disconnect();
    assert.equal(await broker.stop("SIGTERM"), 0, `clean exit on SIGTERM\n${broker.output}`);
    await broker.restart();
    await allCommitted(A);
    producer = kafkaFor(broker, "groups-setup-2").producer({ allowAutoTopicCreation: false });
    await producer.connect();
    for (const c of CASES) await produceTo(producer, topicOf(c), PARTITIONS, C, "c");
  });

  describe("second run, same groups: resume exactly at the committed offsets", { concurrency: true }, () => {
    for (const c of CASES)
      test(c.name, async () => {
        const run = await c.run(broker, groupOf(c), topicOf(c), PARTITIONS * (B + C));
        assertRead(
          c,
          run,
          [
            ["b", B],
            ["c", C],
          ],
          A,
        );
      });
  });

  test("every group committed everything it read", async () => {
    await allCommitted(A + B + C);
  });
});
