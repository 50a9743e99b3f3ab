// Restarts of a real Tributary broker under a live KafkaJS producer (issue 4, "Must show"): a SIGTERM
// stop is clean (exit status 0, `.kafka_cleanshutdown` written) and a SIGKILL is not; after each the
// broker restarts on the same log dir and port, the same producer object reconnects and carries on,
// and every message acknowledged with acks=1 — before or after either restart — is readable at the
// offset the broker acknowledged (read back with kcat, no consumer group). A confluent-kafka consumer
// (assign, no group) left running across both restarts reconnects too, and has seen every acknowledged
// message once, at its offset. Topic metadata (ids, partition counts, config overrides, a deletion) is
// also the same after the restarts.

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { Admin, ConfigResourceTypes } from "@platformatic/kafka";
import kafkajs from "kafkajs";
import {
  type BackgroundCommand,
  BrokerHarness,
  freePort,
  readWithKcat,
  sleep,
  startCommand,
  waitFor,
} from "../../support/broker-harness.js";

const { Kafka, logLevel } = kafkajs;
const TOPIC = "restarts";
const PARTITIONS = 3;
const BATCH = 30;

/** The tail scenario's output: partition TAB offset TAB value lines (a last partial line is ignored). */
function parseTail(out: string): Array<{ partition: number; offset: number; value: string }> {
  return out
    .slice(0, out.lastIndexOf("\n") + 1)
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => {
      const [p, o, value] = l.split("\t");
      return { partition: Number(p), offset: Number(o), value };
    });
}

/** Value → (partition, offset) for every acknowledged message. */
type Acked = Map<string, { partition: number; offset: number }>;

/** Produces batches in a loop until stopped, recording every acknowledged message; failures are counted, not fatal. */
class ProducerLoop {
  readonly acked: Acked = new Map();
  failures = 0;
  lastError = "";
  private seq = 0;
  private stopped = false;
  private readonly done: Promise<void>;

  constructor(private readonly producer: kafkajs.Producer) {
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const values = Array.from({ length: BATCH }, () => `m-${String(this.seq++).padStart(7, "0")}`);
      const messages = values.map((value, i) => ({ key: `k${i % 7}`, value, partition: i % PARTITIONS }));
      try {
        const res = await this.producer.send({ topic: TOPIC, acks: 1, messages });
        const base = new Map(res.map((r) => [r.partition, Number(r.baseOffset)]));
        const next = new Map<number, number>();
        values.forEach((value, i) => {
          const p = i % PARTITIONS;
          const b = base.get(p);
          if (b === undefined)
            throw new Error(`no acknowledgement for partition ${p}: ${JSON.stringify(res)}`);
          const k = next.get(p) ?? 0;
          next.set(p, k + 1);
          this.acked.set(value, { partition: p, offset: b + k });
        });
      } catch (e) {
        this.failures++;
        this.lastError = String(e);
        await sleep(50);
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }
}

describe("broker restarts keep every acknowledged message; clients reconnect", { timeout: 180_000 }, () => {
  let broker: BrokerHarness;
  let kafka: kafkajs.Kafka;
  let producer: kafkajs.Producer;
  let tail: BackgroundCommand | undefined;
  let topicIdsBefore: Map<string, string>;

  /** name → topic id, for every topic the broker has. */
  async function topicIds(admin: Admin): Promise<Map<string, string>> {
    const names = await admin.listTopics();
    const md = await admin.metadata({ topics: names, forceUpdate: true });
    return new Map([...md.topics].map(([name, t]) => [name, t.id]));
  }

  before(async () => {
    // Small segments, so the restarts recover a log of many segments (and their indexes).
    broker = await BrokerHarness.start({
      name: "restarts-test",
      port: await freePort(), // fixed, so every restart listens where the clients already point
      overrides: { "log.segment.bytes": "16384" },
    });
    kafka = new Kafka({
      clientId: "restarts-test",
      brokers: [broker.bootstrap],
      logLevel: logLevel.NOTHING,
      connectionTimeout: 1000,
      requestTimeout: 5000,
      retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 1000 },
    });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS }], waitForLeaders: true });
    await admin.disconnect();
    // Topic metadata that must survive the restarts too: ids, partition counts, config overrides, a deletion.
    const plt = new Admin({
      clientId: "restarts-test-admin",
      bootstrapBrokers: [broker.bootstrap],
      timeout: 10_000,
    });
    try {
      await plt.createTopics({
        topics: ["restarts-config"],
        partitions: 2,
        replicas: 1,
        configs: [{ name: "retention.ms", value: "12345678" }],
      });
      await plt.createTopics({ topics: ["restarts-doomed"], partitions: 1, replicas: 1 });
      await plt.createPartitions({ topics: [{ name: "restarts-config", count: 5 }] });
      await plt.deleteTopics({ topics: ["restarts-doomed"] });
      topicIdsBefore = await topicIds(plt);
    } finally {
      await plt.close();
    }
    producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
  });

  after(async () => {
    await tail?.stop("SIGKILL");
    await producer?.disconnect().catch(() => undefined);
    await broker?.close();
  });

  test("SIGTERM and SIGKILL restarts under a live acks=1 producer", { timeout: 120_000 }, async () => {
    const loop = new ProducerLoop(producer);
    // A consumer that stays up through both restarts: confluent-kafka (librdkafka) with assign(), printing
    // what it gets; librdkafka reconnects by itself. (kcat cannot: it exits on "all brokers down".)
    const consumer = startCommand("/usr/bin/python3", [
      resolve(process.cwd(), "test/support/clients/broker-confluent-kafka.py"),
      broker.bootstrap,
      "tail",
      JSON.stringify({ topic: TOPIC }),
    ]);
    tail = consumer;
    const ackedAtLeast = (n: number, what: string) =>
      waitFor(`${what}: ${n} acknowledged messages (last error: ${loop.lastError})`, 30_000, async () =>
        loop.acked.size >= n ? true : undefined,
      );
    try {
      await ackedAtLeast(2000, "before any restart");

      // SIGTERM: a clean stop.
      const termCode = await broker.stop("SIGTERM");
      assert.equal(termCode, 0, `exit status after SIGTERM\n${broker.output}`);
      assert.ok(
        existsSync(join(broker.logDir, ".kafka_cleanshutdown")),
        "no .kafka_cleanshutdown after SIGTERM",
      );
      const beforeTerm = loop.acked.size;
      await sleep(300); // the producer meets a dead broker for a moment
      await broker.restart();
      assert.ok(
        !existsSync(join(broker.logDir, ".kafka_cleanshutdown")),
        "clean-shutdown marker left after start",
      );
      await ackedAtLeast(beforeTerm + 2000, "after the SIGTERM restart (the same producer carries on)");

      // SIGKILL: no clean shutdown; recovery on start.
      const killCode = await broker.stop("SIGKILL");
      assert.equal(killCode, null);
      assert.equal(broker.lastExit?.signal, "SIGKILL");
      assert.ok(
        !existsSync(join(broker.logDir, ".kafka_cleanshutdown")),
        "clean-shutdown marker after SIGKILL",
      );
      const beforeKill = loop.acked.size;
      await sleep(300);
      await broker.restart();
      await ackedAtLeast(beforeKill + 2000, "after the SIGKILL restart (the same producer carries on)");
    } finally {
      await loop.stop();
    }
    // The tailing consumer catches up with everything acknowledged, then stops.
    const lastAcked = new Map<number, number>();
    for (const { partition, offset } of loop.acked.values())
      lastAcked.set(partition, Math.max(lastAcked.get(partition) ?? -1, offset));
    let seen = new Map<number, number>();
    const caughtUp = await waitFor("tailing consumer", 30_000, async () => {
      seen = new Map<number, number>();
      for (const m of parseTail(consumer.stdout()))
        seen.set(m.partition, Math.max(seen.get(m.partition) ?? -1, m.offset));
      for (const [p, o] of lastAcked) if ((seen.get(p) ?? -1) < o) return undefined;
      return true;
    }).catch(() => false);
    const tailed = await consumer.stop("SIGTERM");
    assert.ok(
      caughtUp,
      `the confluent-kafka consumer that lived through the restarts did not catch up within 30 s: last offsets seen ${JSON.stringify([...seen])}, last acknowledged ${JSON.stringify([...lastAcked])}\n--- consumer stderr ---\n${tailed.stderr.slice(-4000)}\n${broker.output}`,
    );
    const tailedAt = new Map<string, string>();
    for (const m of parseTail(tailed.stdout)) {
      const k = `${m.partition}/${m.offset}`;
      assert.ok(!tailedAt.has(k), `the tailing consumer saw offset ${k} twice`);
      tailedAt.set(k, m.value);
    }
    for (const [value, { partition, offset }] of loop.acked)
      assert.equal(
        tailedAt.get(`${partition}/${offset}`),
        value,
        `tailing consumer at ${partition}/${offset}`,
      );

    // Every acknowledged message is there, at its acknowledged offset.
    const got = await readWithKcat(broker.bootstrap, TOPIC, 60_000);
    const at = new Map(got.map((m) => [`${m.partition}/${m.offset}`, m.value]));
    let missing = 0;
    const examples: string[] = [];
    for (const [value, { partition, offset }] of loop.acked) {
      if (at.get(`${partition}/${offset}`) !== value) {
        missing++;
        if (examples.length < 5)
          examples.push(
            `${value} acked at ${partition}/${offset}, found ${at.get(`${partition}/${offset}`) ?? "nothing"}`,
          );
      }
    }
    assert.equal(
      missing,
      0,
      `${missing} of ${loop.acked.size} acknowledged messages not readable: ${examples.join("; ")}`,
    );
    // Dense offsets in every partition (no holes after recovery).
    for (let p = 0; p < PARTITIONS; p++) {
      const offs = got.filter((m) => m.partition === p).map((m) => m.offset);
      for (const [i, o] of offs.entries()) assert.equal(o, i, `partition ${p}: offset #${i} is ${o}`);
    }
  });

  test("topic ids, partition counts, config overrides and deletions survive the restarts", async () => {
    const admin = new Admin({
      clientId: "restarts-test-admin-2",
      bootstrapBrokers: [broker.bootstrap],
      timeout: 10_000,
    });
    try {
      const ids = await topicIds(admin);
      assert.deepEqual(
        [...ids].sort(),
        [...topicIdsBefore].sort(),
        "topics and their ids before the restarts vs after",
      );
      assert.ok(!ids.has("restarts-doomed"));
      const md = await admin.metadata({ topics: ["restarts-config", TOPIC] });
      assert.equal(md.topics.get("restarts-config")?.partitionsCount, 5);
      assert.equal(md.topics.get(TOPIC)?.partitionsCount, PARTITIONS);
      const [c] = await admin.describeConfigs({
        resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: "restarts-config" }],
      });
      assert.equal(c.configs.find((x) => x.name === "retention.ms")?.value, "12345678");
    } finally {
      await admin.close();
    }
  });
});
