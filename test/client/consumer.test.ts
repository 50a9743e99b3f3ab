// KafkaConsumer against a real broker: what confluent-kafka (librdkafka) writes with every codec is read
// back exactly (keys, values, headers, offsets, timestamps); assign/seek/seekToBeginning/seekToEnd/
// position; OFFSET_OUT_OF_RANGE with auto.offset.reset earliest, latest and none; partial trailing
// batches (max.partition.fetch.bytes cutting batches) read exactly once; long polling; the incremental
// fetch session (KIP-227) driven over a real connection; offsetsForTimes; prefetching stops once a
// response's worth of data is buffered, and fetch sizes of 0 still make progress (one batch a fetch);
// pause()/resume(): a paused partition's records wait (those already fetched are kept and do not hold back
// the other partitions), then arrive in order; wakeup() ends a waiting poll with WakeupException.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { FetchSessionHandler, fetchPartition } from "../../src/client/consumer/fetch-session.js";
import type { ConsumerRecord } from "../../src/client/consumer/fetcher.js";
import { KafkaConsumer } from "../../src/client/consumer/kafka-consumer.js";
import { BrokerConnection } from "../../src/client/network/broker-connection.js";
import { KafkaProducer } from "../../src/client/producer/kafka-producer.js";
import { Apis } from "../../src/protocol/generated/api-table.js";
import { BrokerHarness, describeResult, runCommand } from "../support/broker-harness.js";
import { skipUnlessInstalled } from "../support/required-tools.js";

const PYTHON = "/usr/bin/python3";
let broker: BrokerHarness;

before(async () => {
  broker = await BrokerHarness.start({ name: "consumer-test", overrides: { "num.partitions": "3" } });
});
after(async () => {
  await broker?.close();
});

function consumer(extra: Record<string, string> = {}): KafkaConsumer {
  return new KafkaConsumer({
    "bootstrap.servers": broker.bootstrap,
    "auto.offset.reset": "earliest",
    ...extra,
  });
}

/** Polls until `n` records came (or fails after `ms`). */
async function pollN(c: KafkaConsumer, n: number, ms = 20_000): Promise<ConsumerRecord[]> {
  const out: ConsumerRecord[] = [];
  const deadline = Date.now() + ms;
  while (out.length < n) {
    if (Date.now() > deadline) throw new Error(`got ${out.length} of ${n} records within ${ms} ms`);
    out.push(...(await c.poll(500)));
  }
  return out;
}

/** The broker's count of answered requests under one RequestMetrics name (all versions), from /metrics. */
async function fetchRequests(request: string): Promise<number> {
  const text = await (await fetch(broker.metricsUrl)).text();
  let total = 0;
  for (const line of text.split("\n")) {
    if (
      line.startsWith("kafka_network_requestmetrics_requests_total{") &&
      line.includes(`request="${request}"`)
    )
      total += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return total;
}

async function produce(
  topic: string,
  partition: number,
  values: string[],
  extra: Record<string, string> = {},
) {
  const p = new KafkaProducer({ "bootstrap.servers": broker.bootstrap, ...extra });
  await Promise.all(values.map((value) => p.send({ topic, partition, value })));
  await p.close();
}

const PRODUCE_SCRIPT = `
import sys, json
from confluent_kafka import Producer
bootstrap, topic, codec, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
p = Producer({"bootstrap.servers": bootstrap, "compression.codec": codec, "linger.ms": 20, "acks": "all"})
errors = []
def cb(err, msg):
    if err is not None: errors.append(str(err))
for i in range(n):
    p.produce(topic, key=("k%d" % i).encode(), value=("value-%d-" % i).encode() + b"z" * (i % 97),
              partition=i % 3, headers=[("h", ("hv%d" % i).encode())], timestamp=1700000000000 + i, on_delivery=cb)
    p.poll(0)
p.flush(30)
print(json.dumps({"errors": errors}))
`;

describe("KafkaConsumer", () => {
  for (const codec of ["none", "gzip", "snappy", "lz4", "zstd"]) {
    test(`reads what confluent-kafka wrote with compression.codec=${codec}`, {
      skip: skipUnlessInstalled("python3", "confluent-kafka"),
    }, async () => {
      const topic = `cf-${codec}`;
      const n = 600;
      const r = await runCommand(PYTHON, ["-c", PRODUCE_SCRIPT, broker.bootstrap, topic, codec, String(n)], {
        timeoutMs: 60_000,
      });
      assert.equal(r.code, 0, describeResult("confluent-kafka producer", r));
      assert.deepEqual(JSON.parse(r.stdout).errors, []);
      const c = consumer();
      c.assign([0, 1, 2].map((partition) => ({ topic, partition })));
      const got = await pollN(c, n);
      assert.equal((await c.poll(300)).length, 0, "no record twice");
      await c.close();
      got.sort((a, b) => Number(a.key!.toString().slice(1)) - Number(b.key!.toString().slice(1)));
      const next = [0n, 0n, 0n];
      for (const [i, rec] of got.entries()) {
        assert.equal(rec.key?.toString(), `k${i}`);
        assert.equal(rec.value?.toString(), `value-${i}-${"z".repeat(i % 97)}`);
        assert.equal(rec.partition, i % 3);
        assert.equal(rec.offset, next[i % 3]++);
        assert.equal(rec.timestamp, BigInt(1_700_000_000_000 + i));
        assert.equal(rec.timestampType, "CreateTime");
        assert.deepEqual(
          rec.headers.map((h) => [h.key, h.value?.toString()]),
          [["h", `hv${i}`]],
        );
      }
    });
  }

  test("seek, seekToBeginning, seekToEnd and position", async () => {
    await produce("seeks", 0, ["a", "b", "c", "d", "e"]);
    const c = consumer({ "auto.offset.reset": "latest" });
    const tp = { topic: "seeks", partition: 0 };
    c.assign([tp]);
    assert.equal(await c.position(tp), 5n, "latest");
    c.seek(tp, 2);
    assert.deepEqual(
      (await pollN(c, 3)).map((r) => r.value?.toString()),
      ["c", "d", "e"],
    );
    assert.equal(await c.position(tp), 5n);
    c.seekToBeginning();
    assert.equal(await c.position(tp), 0n);
    assert.deepEqual(
      (await pollN(c, 5)).map((r) => Number(r.offset)),
      [0, 1, 2, 3, 4],
    );
    c.seekToEnd([tp]);
    assert.equal(await c.position(tp), 5n);
    assert.deepEqual(await c.poll(200), []);
    await produce("seeks", 0, ["f"]);
    assert.deepEqual(
      (await pollN(c, 1)).map((r) => [r.offset, r.value?.toString()]),
      [[5n, "f"]],
    );
    assert.deepEqual(await c.endOffsets([tp]), new Map([["seeks-0", 6n]]));
    assert.deepEqual(await c.beginningOffsets([tp]), new Map([["seeks-0", 0n]]));
    await c.close();
  });

  test("offsetsForTimes: the first offset at or after a time, with its timestamp; null past the end", async () => {
    const topic = "times";
    const p = new KafkaProducer({ "bootstrap.servers": broker.bootstrap, "linger.ms": "0" });
    for (const [i, ts] of [1000, 2000, 3000, 4000, 5000].entries()) {
      await p.send({ topic, partition: 0, value: `t${i}`, timestamp: ts });
    }
    await p.close();
    const c = consumer();
    const found = await c.offsetsForTimes([
      { topic, partition: 0, timestamp: 2500 },
      { topic, partition: 1, timestamp: 0 },
    ]);
    assert.deepEqual(found.get(`${topic}-0`), { offset: 2n, timestamp: 3000n, leaderEpoch: 0 });
    assert.equal(found.get(`${topic}-1`), null, "an empty partition has no such offset");
    const edges = await c.offsetsForTimes([{ topic, partition: 0, timestamp: 0n }]);
    assert.equal(edges.get(`${topic}-0`)?.offset, 0n);
    const past = await c.offsetsForTimes([{ topic, partition: 0, timestamp: 5001 }]);
    assert.equal(past.get(`${topic}-0`), null);
    await assert.rejects(c.offsetsForTimes([{ topic, partition: 0, timestamp: -1 }]), (e: Error) => {
      assert.equal(e.name, "IllegalArgumentException");
      assert.equal(
        e.message,
        "The target time for partition times-0 is -1. The target time cannot be negative.",
      );
      return true;
    });
    await assert.rejects(c.offsetsForTimes([{ topic, partition: 0, timestamp: 1.5 }]), (e: Error) => {
      assert.equal(e.name, "IllegalArgumentException");
      assert.match(e.message, /is 1\.5: expected milliseconds since the epoch, an integer\./);
      return true;
    });
    await c.close();
  });

  test("OFFSET_OUT_OF_RANGE: auto.offset.reset earliest, latest, none", async () => {
    await produce("oor", 0, ["r0", "r1", "r2"]);
    const tp = { topic: "oor", partition: 0 };
    const early = consumer({ "auto.offset.reset": "earliest" });
    early.assign([tp]);
    early.seek(tp, 1000);
    assert.deepEqual(
      (await pollN(early, 3)).map((r) => r.value?.toString()),
      ["r0", "r1", "r2"],
    );
    await early.close();

    const late = consumer({ "auto.offset.reset": "latest" });
    late.assign([tp]);
    late.seek(tp, 1000);
    assert.deepEqual(await late.poll(1000), []);
    assert.equal(await late.position(tp), 3n);
    await late.close();

    const none = consumer({ "auto.offset.reset": "none" });
    none.assign([tp]);
    await assert.rejects(none.poll(100), /Undefined offset with no reset policy for partitions: \[oor-0\]/);
    none.seek(tp, 1000);
    await assert.rejects(
      (async () => {
        for (let i = 0; i < 20; i++) await none.poll(200);
      })(),
      (e: Error & { errorName?: string }) =>
        e.errorName === "OFFSET_OUT_OF_RANGE" && /out of range for partition oor-0/.test(e.message),
    );
    await none.close();
  });

  test("partial trailing batches: a small max.partition.fetch.bytes still reads each record once, in order", async () => {
    const values = Array.from({ length: 300 }, (_, i) => `p${i}-${"q".repeat(200)}`);
    // linger + batch.size give batches of ~10 records (~2.3 KB); the fetch size cuts them mid-batch.
    await produce("partial", 0, values, { "batch.size": "2300", "linger.ms": "50" });
    const c = consumer({ "max.partition.fetch.bytes": "3000", "fetch.max.bytes": "3000" });
    c.assign([{ topic: "partial", partition: 0 }]);
    const got = await pollN(c, 300, 30_000);
    assert.deepEqual(
      got.map((r) => r.value?.toString()),
      values,
    );
    assert.deepEqual(
      got.map((r) => Number(r.offset)),
      values.map((_, i) => i),
    );
    await c.close();
  });

  test("prefetching stops once a response's worth is buffered (max.partition.fetch.bytes per partition)", async () => {
    const topic = "prefetch-bound";
    const values = Array.from({ length: 300 }, (_, i) => `b${i}-${"r".repeat(500)}`);
    // ~150 KB per partition in batches of ~5 KB; a response carries at most 6000 bytes per partition.
    await produce(topic, 0, values, { "batch.size": "5000", "linger.ms": "50" });
    await produce(topic, 1, values, { "batch.size": "5000", "linger.ms": "50" });
    const fetchesSoFar = () => fetchRequests("FetchConsumer");
    const c = consumer({ "max.partition.fetch.bytes": "6000", "max.poll.records": "1" });
    c.assign([0, 1].map((partition) => ({ topic, partition })));
    const before = await fetchesSoFar();
    const first = await pollN(c, 1);
    assert.equal(first.length, 1);
    // Were prefetching bounded only by fetch.max.bytes (50 MiB), the consumer would go on fetching until
    // all ~300 KB were buffered: 25+ requests. Bounded by 2 × 6000 bytes it stops after two or three.
    await new Promise((r) => setTimeout(r, 1500));
    const sent = (await fetchesSoFar()) - before;
    assert.ok(sent >= 1 && sent <= 3, `${sent} Fetch requests while one record was taken`);
    // And every record still arrives once, in order, per partition.
    const all = [...first, ...(await pollN(c, 599, 30_000))];
    for (const p of [0, 1]) {
      const got = all.filter((r) => r.partition === p).map((r) => r.value?.toString());
      assert.deepEqual(got, values);
    }
    await c.close();
  });

  test("pause/resume: a paused partition's fetched records wait, the others keep flowing, then it resumes in order", async () => {
    const topic = "pausing";
    const values = Array.from({ length: 300 }, (_, i) => `v${i}-${"s".repeat(500)}`);
    await produce(topic, 0, values, { "batch.size": "5000", "linger.ms": "50" });
    await produce(topic, 1, values, { "batch.size": "5000", "linger.ms": "50" });
    const c = consumer({ "max.partition.fetch.bytes": "6000", "max.poll.records": "1" });
    const [p0, p1] = [0, 1].map((partition) => ({ topic, partition }));
    c.assign([p0, p1]);
    // The first response carries a batch of each partition: p0's stays buffered while it is paused.
    const first = await pollN(c, 1);
    c.pause([p0]);
    assert.deepEqual(c.paused(), [p0]);
    const fromP1 = first.filter((r) => r.partition === 1);
    const whilePaused: ConsumerRecord[] = [];
    const deadline = Date.now() + 30_000;
    while (fromP1.length < 300 && Date.now() < deadline) {
      for (const r of await c.poll(500)) (r.partition === 1 ? fromP1 : whilePaused).push(r);
    }
    // p0's buffered bytes do not count against the prefetch bound: p1 is read to its end.
    assert.equal(fromP1.length, 300, "every record of the partition not paused");
    assert.deepEqual(
      fromP1.map((r) => r.value?.toString()),
      values,
    );
    for (let i = 0; i < 3; i++) whilePaused.push(...(await c.poll(200)));
    assert.deepEqual(whilePaused, [], "nothing of the paused partition");
    c.resume([p0]);
    assert.deepEqual(c.paused(), []);
    const fromP0 = [...first.filter((r) => r.partition === 0)];
    fromP0.push(...(await pollN(c, 300 - fromP0.length, 30_000)));
    assert.deepEqual(
      fromP0.map((r) => [r.partition, Number(r.offset), r.value?.toString()]),
      values.map((v, i) => [0, i, v]),
    );
    assert.throws(
      () => c.pause([{ topic, partition: 7 }]),
      (e: Error) =>
        e.name === "IllegalStateException" && e.message === "No current assignment for partition pausing-7",
    );
    assert.throws(
      () => c.resume([{ topic: "elsewhere", partition: 0 }]),
      /No current assignment for partition elsewhere-0/,
    );
    await c.close();
  });

  test("max.partition.fetch.bytes=0 and fetch.max.bytes=0 (allowed, as in Kafka) still read every record", async () => {
    const topic = "zero-fetch-sizes";
    const values = Array.from({ length: 30 }, (_, i) => `z${i}`);
    await produce(topic, 0, values, { "batch.size": "200", "linger.ms": "20" });
    const c = consumer({ "max.partition.fetch.bytes": "0", "fetch.max.bytes": "0" });
    c.assign([{ topic, partition: 0 }]);
    const got = await pollN(c, 30, 15_000);
    assert.deepEqual(
      got.map((r) => r.value?.toString()),
      values,
    );
    await c.close();
  });

  test("wakeup(): a waiting poll throws WakeupException at once; one before a poll makes the next throw", async () => {
    await produce("wakeups", 0, ["w0"]);
    const c = consumer({ "auto.offset.reset": "latest" });
    c.assign([{ topic: "wakeups", partition: 0 }]);
    const started = Date.now();
    const waiting = c.poll(10_000);
    setTimeout(() => c.wakeup(), 300);
    await assert.rejects(waiting, (e: Error) => e.name === "WakeupException");
    assert.ok(Date.now() - started < 3000, `woke after ${Date.now() - started} ms`);
    c.wakeup();
    await assert.rejects(c.poll(0), (e: Error) => e.name === "WakeupException");
    // Then the consumer goes on as before.
    await produce("wakeups", 0, ["w1"]);
    const got = await pollN(c, 1);
    assert.deepEqual(
      got.map((r) => r.value?.toString()),
      ["w1"],
    );
    await c.close();
  });

  test("long polling: poll returns soon after a record arrives, not at fetch.max.wait.ms", async () => {
    const c = consumer({ "fetch.max.wait.ms": "5000", "auto.offset.reset": "latest" });
    const tp = { topic: "longpoll", partition: 0 };
    await produce("longpoll", 0, ["first"]);
    c.assign([tp]);
    assert.equal(await c.position(tp), 1n);
    const started = Date.now();
    const polled = c.poll(8000);
    await new Promise((r) => setTimeout(r, 300));
    await produce("longpoll", 0, ["second"]);
    const recs = await polled;
    assert.deepEqual(
      recs.map((r) => r.value?.toString()),
      ["second"],
    );
    assert.ok(Date.now() - started < 4000, `took ${Date.now() - started} ms`);
    await c.close();
  });

  test("incremental fetch session over a real connection (KIP-227)", async () => {
    await produce("session", 0, ["s0", "s1"]);
    await produce("session", 1, ["t0"]);
    const conn = await BrokerConnection.connect(broker.host, broker.port);
    const session = new FetchSessionHandler();
    const fetch = async (targets: Array<{ partition: number; fetchOffset: bigint }>) => {
      const built = session.build(targets.map((t) => ({ topic: "session", ...t, maxBytes: 1 << 20 })));
      const res = await conn.send(Apis.Fetch, conn.versionFor(Apis.Fetch, { max: 12 }), {
        clusterId: null,
        replicaId: -1,
        replicaState: { replicaId: -1, replicaEpoch: -1n },
        maxWaitMs: 100,
        minBytes: 0,
        maxBytes: 1 << 20,
        isolationLevel: 0,
        sessionId: built.sessionId,
        sessionEpoch: built.sessionEpoch,
        topics:
          built.toSend.length === 0
            ? []
            : [
                {
                  topic: "session",
                  topicId: "AAAAAAAAAAAAAAAAAAAAAA",
                  partitions: built.toSend.map(fetchPartition),
                },
              ],
        forgottenTopicsData:
          built.toForget.length === 0
            ? []
            : [
                {
                  topic: "session",
                  topicId: "AAAAAAAAAAAAAAAAAAAAAA",
                  partitions: built.toForget.map((f) => f.partition),
                },
              ],
        rackId: "",
      });
      assert.equal(session.handleResponse(res.errorCode, res.sessionId), true);
      return {
        built,
        res,
        partitions: res.responses.flatMap((t) => t.partitions.map((p) => p.partitionIndex)),
      };
    };
    const first = await fetch([
      { partition: 0, fetchOffset: 0n },
      { partition: 1, fetchOffset: 0n },
    ]);
    assert.equal(first.built.full, true);
    assert.ok(first.res.sessionId > 0, "the broker created a session");
    assert.deepEqual(first.partitions.sort(), [0, 1]);
    // Both partitions advanced: the incremental request lists them with their new offsets.
    const second = await fetch([
      { partition: 0, fetchOffset: 2n },
      { partition: 1, fetchOffset: 1n },
    ]);
    assert.equal(second.built.full, false);
    assert.equal(second.built.sessionEpoch, 1);
    assert.equal(second.built.toSend.length, 2);
    assert.deepEqual(second.partitions, [], "nothing new: an incremental response lists no partition");
    // Nothing changed: an empty incremental request; then partition 1 is forgotten.
    const third = await fetch([
      { partition: 0, fetchOffset: 2n },
      { partition: 1, fetchOffset: 1n },
    ]);
    assert.deepEqual(third.built.toSend, []);
    assert.equal(third.built.sessionEpoch, 2);
    await produce("session", 1, ["t1"]);
    await produce("session", 0, ["s2"]);
    const fourth = await fetch([{ partition: 0, fetchOffset: 2n }]);
    assert.deepEqual(fourth.built.toForget, [{ topic: "session", partition: 1 }]);
    assert.deepEqual(fourth.partitions, [0], "the forgotten partition's new record is not sent");
    // A wrong epoch resets the session to a full fetch.
    session.nextEpoch = 99;
    const bad = session.build([{ topic: "session", partition: 0, fetchOffset: 3n, maxBytes: 1000 }]);
    const res = await conn.send(Apis.Fetch, conn.versionFor(Apis.Fetch, { max: 12 }), {
      clusterId: null,
      replicaId: -1,
      replicaState: { replicaId: -1, replicaEpoch: -1n },
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 1000,
      isolationLevel: 0,
      sessionId: bad.sessionId,
      sessionEpoch: bad.sessionEpoch,
      topics: [],
      forgottenTopicsData: [],
      rackId: "",
    });
    assert.equal(res.errorCode, 71, "INVALID_FETCH_SESSION_EPOCH");
    assert.equal(session.handleResponse(res.errorCode, res.sessionId), false);
    assert.equal(session.build([]).full, true);
    conn.close();
  });

  test("an unknown topic is a clear error", async () => {
    const c = consumer();
    await assert.rejects(c.partitionsFor("no-such-topic"), /Topic 'no-such-topic' does not exist/);
    await c.close();
  });
  test("keeps reading across a broker restart (new connection, new fetch session)", async () => {
    await produce("c-restart", 0, ["a", "b"]);
    const c = consumer({ "request.timeout.ms": "3000", "retry.backoff.ms": "50" });
    c.assign([{ topic: "c-restart", partition: 0 }]);
    assert.deepEqual(
      (await pollN(c, 2)).map((r) => r.value?.toString()),
      ["a", "b"],
    );
    await broker.restart();
    await produce("c-restart", 0, ["c"]);
    assert.deepEqual(
      (await pollN(c, 1, 30_000)).map((r) => [r.offset, r.value?.toString()]),
      [[2n, "c"]],
    );
    await c.close();
  });
});
