// kcat (librdkafka 2.0) against a real Tributary broker started by the harness (issue 4, "Must show"):
// `-L` lists the broker and the topics; `-P`/`-C` round trip of keyed messages over several partitions
// with every compression codec (every key/value back once, per-partition order kept, offsets dense);
// `-C -o beginning`, `-o -10`, `-o s@<timestamp>`; `-Q` offsets for times; acks=0 and acks=1; a consumer
// parked at the end in a long-poll Fetch woken by an append.
//
// KCAT_MESSAGES (default 100000) is the count for the `none` and `zstd` round trips, KCAT_MESSAGES_OTHER
// (default 100000) for gzip, snappy and lz4: lower them if the file ever nears a minute on two cores
// (about 20 s measured here).
// Topics are created with KafkaJS's admin client (kcat cannot create topics), except one that kcat
// creates itself through auto-creation.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import kafkajs from "kafkajs";
import {
  BrokerHarness,
  describeResult,
  pushTo,
  runCommand,
  sleep,
  startCommand,
  waitFor,
  withDeadline,
} from "../../support/broker-harness.js";
import { skipUnlessInstalled } from "../../support/required-tools.js";

const KCAT = "/usr/bin/kcat";
const MANY = Number(process.env.KCAT_MESSAGES ?? 100_000);
const FEWER = Number(process.env.KCAT_MESSAGES_OTHER ?? 100_000);
const PARTITIONS = 4;
const CODECS: ReadonlyArray<[codec: string, count: number]> = [
  ["none", MANY],
  ["gzip", FEWER],
  ["snappy", FEWER],
  ["lz4", FEWER],
  ["zstd", MANY],
];
/** One consumed message, as printed by `-f '%p\t%o\t%T\t%k\t%s\n'`. */
interface Consumed {
  readonly partition: number;
  readonly offset: number;
  readonly timestamp: number;
  readonly key: string;
  readonly value: string;
}
const FORMAT = "%p\\t%o\\t%T\\t%k\\t%s\\n";

function parseConsumed(stdout: string): Consumed[] {
  const out: Consumed[] = [];
  for (const line of stdout.split("\n")) {
    if (line === "") continue;
    const [p, o, ts, key, value] = line.split("\t");
    assert.ok(value !== undefined, `unexpected kcat output line: ${JSON.stringify(line)}`);
    out.push({ partition: Number(p), offset: Number(o), timestamp: Number(ts), key, value });
  }
  return out;
}

function byPartition(msgs: readonly Consumed[]): Map<number, Consumed[]> {
  const m = new Map<number, Consumed[]>();
  for (const c of msgs) {
    pushTo(m, c.partition, c);
  }
  return m;
}

describe("kcat against a single Tributary broker", {
  skip: skipUnlessInstalled("kcat"),
  timeout: 180_000,
}, () => {
  let broker: BrokerHarness;
  let admin: kafkajs.Admin;

  const kcat = async (args: string[], input?: string, timeoutMs = 60_000) => {
    const r = await runCommand(KCAT, ["-b", broker.bootstrap, ...args], { input, timeoutMs });
    assert.equal(r.code, 0, `${describeResult(`kcat ${args.join(" ")}`, r)}\n${broker.output}`);
    return r;
  };
  /** Everything in the topic, from the beginning to the current end (`-e`). */
  const consumeAll = async (topic: string, extra: string[] = []) =>
    parseConsumed(
      (await kcat(["-C", "-t", topic, "-o", "beginning", "-e", "-q", "-f", FORMAT, ...extra])).stdout,
    );
  const produce = (topic: string, lines: string[], extra: string[] = []) =>
    kcat(["-P", "-t", topic, "-K", ":", ...extra], `${lines.join("\n")}\n`);

  before(async () => {
    broker = await BrokerHarness.start({
      name: "kcat-test",
      overrides: { "num.partitions": String(PARTITIONS) },
    });
    const kafka = new kafkajs.Kafka({
      clientId: "kcat-test-admin",
      brokers: [broker.bootstrap],
      logLevel: kafkajs.logLevel.NOTHING,
      connectionTimeout: 3000,
      requestTimeout: 10_000,
      retry: { retries: 3, initialRetryTime: 100 },
    });
    admin = kafka.admin();
    await admin.connect();
    const created = await admin.createTopics({
      topics: [
        ...CODECS.map(([codec]) => ({
          topic: `kcat-${codec}`,
          numPartitions: PARTITIONS,
          replicationFactor: 1,
        })),
        { topic: "kcat-offsets", numPartitions: 2, replicationFactor: 1 },
      ],
      waitForLeaders: true,
      timeout: 10_000,
    });
    assert.equal(created, true, "createTopics returned false (some topic already existed)");
  });

  after(async () => {
    await admin?.disconnect().catch(() => undefined);
    await broker?.close();
  });

  test("-L lists the broker and every topic with its partitions", async () => {
    const md = JSON.parse((await kcat(["-L", "-J"])).stdout) as {
      brokers: Array<{ id: number; name: string }>;
      topics: Array<{ topic: string; partitions: Array<{ partition: number; leader: number }> }>;
    };
    assert.deepEqual(md.brokers, [{ id: 0, name: broker.bootstrap }]);
    const topics = new Map(md.topics.map((t) => [t.topic, t]));
    for (const [codec] of CODECS) {
      const t = topics.get(`kcat-${codec}`);
      assert.ok(t, `kcat -L does not list kcat-${codec}: ${JSON.stringify(md.topics.map((x) => x.topic))}`);
      assert.deepEqual(
        t.partitions.map((p) => [p.partition, p.leader]).sort((a, b) => a[0] - b[0]),
        Array.from({ length: PARTITIONS }, (_, i) => [i, 0]),
      );
    }
    // The plain text form names the broker too.
    const text = (await kcat(["-L"])).stdout;
    assert.match(text, new RegExp(`broker 0 at ${broker.bootstrap.replace(/\./g, "\\.")}`));
    assert.match(text, /topic "kcat-offsets" with 2 partitions/);
  });

  test("-P to an unknown topic auto-creates it with num.partitions", async () => {
    await produce("kcat-auto", ["a:1", "b:2", "c:3"]);
    const md = JSON.parse((await kcat(["-L", "-J", "-t", "kcat-auto"])).stdout) as {
      topics: Array<{ topic: string; partitions: unknown[] }>;
    };
    assert.equal(md.topics[0]?.partitions.length, PARTITIONS, JSON.stringify(md));
    const got = await consumeAll("kcat-auto");
    assert.deepEqual(got.map((m) => `${m.key}:${m.value}`).sort(), ["a:1", "b:2", "c:3"]);
  });

  for (const [codec, count] of CODECS) {
    test(`-P/-C round trip of ${count} keyed messages over ${PARTITIONS} partitions, -z ${codec}`, async () => {
      const topic = `kcat-${codec}`;
      const lines: string[] = [];
      for (let i = 0; i < count; i++)
        lines.push(`key-${i % 997}:${codec}-${String(i).padStart(7, "0")}-${"x".repeat(i % 50)}`);
      await produce(topic, lines, ["-z", codec, "-X", "linger.ms=5"]);
      const got = await consumeAll(topic);
      assert.equal(got.length, count, `consumed ${got.length} of ${count} messages`);

      const seen = new Set<string>();
      const keyPartition = new Map<string, number>();
      for (const m of got) {
        const line = `${m.key}:${m.value}`;
        assert.ok(!seen.has(line), `message ${line} came back twice`);
        seen.add(line);
        const p = keyPartition.get(m.key);
        if (p === undefined) keyPartition.set(m.key, m.partition);
        else assert.equal(m.partition, p, `key ${m.key} is in partitions ${p} and ${m.partition}`);
      }
      for (const l of lines) assert.ok(seen.has(l), `message ${l} did not come back`);

      const parts = byPartition(got);
      assert.ok(parts.size > 1, `all messages went to one partition: ${[...parts.keys()]}`);
      for (const [p, msgs] of parts) {
        msgs.forEach((m, i) => {
          assert.equal(m.offset, i, `partition ${p}: message #${i} has offset ${m.offset}`);
        });
        for (let i = 1; i < msgs.length; i++)
          assert.ok(
            msgs[i - 1].value < msgs[i].value,
            `partition ${p}: order not kept at offset ${i}: ${msgs[i - 1].value} then ${msgs[i].value}`,
          );
      }
    });
  }

  for (const acks of ["0", "1"]) {
    test(`-P with acks=${acks}: 10000 messages land, in order`, async () => {
      const topic = `kcat-acks-${acks}`;
      const lines = Array.from(
        { length: 10_000 },
        (_, i) => `k${i % 13}:acks${acks}-${String(i).padStart(6, "0")}`,
      );
      await produce(topic, lines, ["-X", `acks=${acks}`]);
      // acks=0 has no acknowledgement to wait for: read until all are there (bounded).
      const got = await waitFor(`all ${lines.length} acks=${acks} messages readable`, 15_000, async () => {
        const g = await consumeAll(topic);
        return g.length >= lines.length ? g : undefined;
      });
      assert.deepEqual(got.map((m) => `${m.key}:${m.value}`).sort(), [...lines].sort());
      for (const msgs of byPartition(got).values())
        for (let i = 1; i < msgs.length; i++) assert.ok(msgs[i - 1].value < msgs[i].value);
    });
  }

  test("a consumer waiting at the end (fetch.wait.max.ms=8000) gets a new message as soon as it is appended", async () => {
    const topic = "kcat-long-poll";
    await produce(topic, ["k:before"]);
    const consumer = startCommand(KCAT, [
      "-b",
      broker.bootstrap,
      "-C",
      "-t",
      topic,
      // One partition: librdkafka keeps one Fetch in flight per broker, and partitions whose start
      // offset resolves after it was sent only join the next one, so a multi-partition kcat would
      // legitimately wait out the 8 s for partitions not yet in its Fetch.
      "-p",
      "2",
      "-o",
      "end",
      "-c",
      "1",
      "-q",
      "-X",
      "fetch.wait.max.ms=8000",
      "-f",
      "%s\\n",
    ]);
    try {
      await sleep(1500); // the consumer is parked in a long-poll Fetch by now
      const t0 = Date.now();
      await produce(topic, ["k:after"], ["-p", "2"]);
      const r = await withDeadline("the waiting consumer", 15_000, consumer.exited);
      const waited = Date.now() - t0;
      assert.equal(r.code, 0, describeResult("kcat -C -o end -c 1", r));
      assert.equal(r.stdout, "after\n");
      // Without a wake-up on append the Fetch would be answered only when its 8 s wait ran out.
      assert.ok(waited < 4000, `the consumer got the message ${waited} ms after it was produced`);
    } finally {
      await consumer.stop("SIGKILL");
    }
  });

  test("-C -o beginning / -o -10 / -o s@<timestamp>, and -Q offsets for times", async () => {
    const topic = "kcat-offsets";
    // Two rounds, with a timestamp between them: CreateTime of the first < t < CreateTime of the second.
    const first = Array.from({ length: 40 }, (_, i) => `k${i}:first-${String(i).padStart(3, "0")}`);
    const second = Array.from({ length: 40 }, (_, i) => `k${i}:second-${String(i).padStart(3, "0")}`);
    await produce(topic, first);
    await sleep(50);
    const t = Date.now();
    await sleep(50);
    await produce(topic, second);

    const all = await consumeAll(topic);
    assert.equal(all.length, 80);
    const parts = byPartition(all);
    assert.equal(parts.size, 2, "keys k0..k39 should spread over both partitions");
    for (const msgs of parts.values())
      for (const m of msgs) assert.equal(m.value.startsWith("first"), m.timestamp < t);

    for (const [p, msgs] of parts) {
      // -o -10: the last ten of the partition.
      const last10 = parseConsumed(
        (await kcat(["-C", "-t", topic, "-p", String(p), "-o", "-10", "-e", "-q", "-f", FORMAT])).stdout,
      );
      assert.deepEqual(
        last10.map((m) => m.offset),
        msgs.slice(-10).map((m) => m.offset),
        `partition ${p}: -o -10`,
      );
      // -o s@t: exactly the second round.
      const since = parseConsumed(
        (await kcat(["-C", "-t", topic, "-p", String(p), "-o", `s@${t}`, "-e", "-q", "-f", FORMAT])).stdout,
      );
      assert.deepEqual(
        since.map((m) => m.value),
        msgs.filter((m) => m.value.startsWith("second")).map((m) => m.value),
        `partition ${p}: -o s@${t}`,
      );
    }

    // -Q: the first offset at or after t, and past the end -1 (Kafka's "no such offset").
    const q = async (ts: number) => {
      const out = (await kcat(["-Q", "-t", `${topic}:0:${ts}`, "-t", `${topic}:1:${ts}`])).stdout;
      const res = new Map<number, number>();
      for (const m of out.matchAll(/^\S+ \[(\d+)\] offset (-?\d+)$/gm)) res.set(Number(m[1]), Number(m[2]));
      assert.equal(res.size, 2, `kcat -Q output: ${out}`);
      return res;
    };
    const atT = await q(t);
    const future = await q(Date.now() + 3_600_000);
    const beginning = await q(0);
    for (const [p, msgs] of parts) {
      const firstSecond = msgs.find((m) => m.value.startsWith("second"));
      assert.equal(atT.get(p), firstSecond?.offset, `partition ${p}: -Q at ${t}`);
      assert.equal(future.get(p), -1, `partition ${p}: -Q in the future`);
      assert.equal(beginning.get(p), 0, `partition ${p}: -Q at 0`);
    }
  });
});
