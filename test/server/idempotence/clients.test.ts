// Idempotence under retries with real clients (issue 7, "Must show"): confluent-kafka with
// enable.idempotence=true and KafkaJS with idempotent: true produce through a proxy that closes the
// client connection instead of returning Produce responses (DroppingProxy: the request reached the broker,
// the response is lost, the client retries the same sequence numbers). Read back with kcat, every record
// is in the log exactly once and in order per partition. The last test restarts the broker (SIGTERM:
// shutdown snapshot; SIGKILL: rebuilt from the log) between a lost response and the client's retry.

import assert from "node:assert/strict";
import { resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import kafkajs from "kafkajs";
import {
  BrokerHarness,
  describeResult,
  freePort,
  type KcatMessage,
  readWithKcat,
  runCommand,
  waitFor,
} from "../../support/broker-harness.js";
import { Random } from "../../support/random.js";
import { skipUnlessInstalled } from "../../support/required-tools.js";
import { DroppingProxy } from "./dropping-proxy.js";

const { Kafka, logLevel, Partitioners } = kafkajs;
const PYTHON = "/usr/bin/python3";
const DRIVER = resolve(process.cwd(), "test/server/idempotence/idempotent-producer.py");

/** Asserts every `<prefix>-<i>` for i < count is present exactly once, with increasing i per partition. */
function assertExactlyOnce(messages: readonly KcatMessage[], prefix: string, count: number): void {
  const seen = new Map<string, number>();
  const lastPerPartition = new Map<number, number>();
  for (const m of messages) {
    if (!m.key.startsWith(`${prefix}-`)) continue;
    seen.set(m.key, (seen.get(m.key) ?? 0) + 1);
    const i = Number(m.key.slice(prefix.length + 1));
    const last = lastPerPartition.get(m.partition) ?? -1;
    assert.ok(i > last, `${m.key} after ${prefix}-${last} in partition ${m.partition}: out of order`);
    lastPerPartition.set(m.partition, i);
  }
  const dups = [...seen].filter(([, n]) => n > 1).map(([k, n]) => `${k}×${n}`);
  assert.deepEqual(dups.slice(0, 20), [], `${dups.length} records written more than once`);
  const missing: string[] = [];
  for (let i = 0; i < count; i++) if (!seen.has(`${prefix}-${i}`)) missing.push(`${prefix}-${i}`);
  assert.deepEqual(missing.slice(0, 20), [], `${missing.length} records missing`);
}

describe("idempotent producers through a proxy that loses Produce responses", { timeout: 300_000 }, () => {
  let broker: BrokerHarness;
  let proxy: DroppingProxy;
  const random = new Random(Number(process.env.IDEMPOTENCE_SEED ?? 7));
  let kafka: kafkajs.Kafka;

  before(async () => {
    const proxyPort = await freePort();
    broker = await BrokerHarness.start({
      name: "idempotence-clients",
      overrides: { "advertised.listeners": `PLAINTEXT://127.0.0.1:${proxyPort}` },
    });
    proxy = await DroppingProxy.start(
      proxyPort,
      () => broker.port,
      () => false,
    );
    kafka = new Kafka({
      clientId: "idempotence-test",
      brokers: [`127.0.0.1:${proxy.port}`],
      logLevel: logLevel.NOTHING,
      connectionTimeout: 3000,
      requestTimeout: 10_000,
      retry: { retries: 60, initialRetryTime: 100, maxRetryTime: 1000 },
    });
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.createTopics({
        topics: [
          { topic: "idem-cf", numPartitions: 3, replicationFactor: 1 },
          { topic: "idem-kjs", numPartitions: 2, replicationFactor: 1 },
          { topic: "idem-restart", numPartitions: 1, replicationFactor: 1 },
        ],
        waitForLeaders: true,
      });
    } finally {
      await admin.disconnect();
    }
  });
  after(async () => {
    await proxy?.close();
    await broker?.close();
  });

  test("confluent-kafka enable.idempotence=true: every record exactly once", {
    skip: skipUnlessInstalled("python3", "confluent-kafka"),
  }, async () => {
    const count = 3000;
    proxy.dropped = 0;
    proxy.shouldDrop = () => random.next() < 0.25;
    const r = await runCommand(PYTHON, [DRIVER, `127.0.0.1:${proxy.port}`, "idem-cf", String(count), "cf"], {
      timeoutMs: 180_000,
    });
    proxy.shouldDrop = () => false;
    assert.equal(r.code, 0, `${describeResult("idempotent-producer.py", r)}\n${broker.output}`);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(out, { delivered: count, errors: [], undelivered: 0 }, r.stderr);
    assert.ok(proxy.dropped >= 5, `only ${proxy.dropped} Produce responses were dropped`);
    const messages = await readWithKcat(broker.bootstrap, "idem-cf");
    assert.equal(messages.length, count);
    assertExactlyOnce(messages, "cf", count);
  });

  test("KafkaJS idempotent: true: every record exactly once", async () => {
    proxy.dropped = 0;
    proxy.shouldDrop = () => random.next() < 0.25;
    const producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    await producer.connect();
    const perSend = 20;
    const sends = 60;
    try {
      for (let s = 0; s < sends; s++) {
        await producer.send({
          topic: "idem-kjs",
          acks: -1,
          messages: Array.from({ length: perSend }, (_, i) => ({
            key: `kjs-${s * perSend + i}`,
            value: String(s * perSend + i),
          })),
        });
      }
    } finally {
      proxy.shouldDrop = () => false;
      await producer.disconnect();
    }
    assert.ok(proxy.dropped >= 5, `only ${proxy.dropped} Produce responses were dropped`);
    const messages = await readWithKcat(broker.bootstrap, "idem-kjs");
    assert.equal(messages.length, sends * perSend);
    assertExactlyOnce(messages, "kjs", sends * perSend);
  });

  test("a broker restart between a lost response and the retry keeps duplicate detection", async () => {
    const producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    await producer.connect();
    const perSend = 10;
    const sends = 30;
    const restarts: Array<"SIGTERM" | "SIGKILL"> = ["SIGTERM", "SIGKILL", "SIGKILL"];
    let armedAt = new Set([5, 15, 25]);
    let sendNo = 0;
    let lost = 0;
    proxy.shouldDrop = () => {
      if (!armedAt.has(sendNo)) return false;
      armedAt.delete(sendNo);
      proxy.paused = true;
      lost++;
      return true;
    };
    const sending = (async () => {
      for (; sendNo < sends; sendNo++) {
        await producer.send({
          topic: "idem-restart",
          acks: -1,
          messages: Array.from({ length: perSend }, (_, i) => ({
            key: `rs-${sendNo * perSend + i}`,
            value: String(sendNo * perSend + i),
          })),
        });
      }
    })();
    try {
      for (const signal of restarts) {
        const n = lost;
        await waitFor("a lost Produce response", 60_000, async () => (lost > n ? true : undefined));
        // The retry cannot reach the broker until it has restarted.
        await broker.stop(signal);
        await broker.restart();
        proxy.paused = false;
      }
      await sending;
    } finally {
      armedAt = new Set();
      proxy.paused = false;
      proxy.shouldDrop = () => false;
      await sending.catch(() => undefined);
      await producer.disconnect();
    }
    assert.equal(lost, 3);
    const messages = await readWithKcat(broker.bootstrap, "idem-restart");
    assert.equal(messages.length, sends * perSend);
    assertExactlyOnce(messages, "rs", sends * perSend);
  });
});
