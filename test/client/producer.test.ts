// KafkaProducer against a real broker (test/support/broker-harness.ts), cross-checked with kcat:
// keyed records land on the partition librdkafka's murmur2 partitioner picks for the same key (kcat
// -X partitioner=murmur2_random), every codec is readable by kcat, acks 0/1/all, offsets and timestamps
// in the send results, keyless records stick to a partition (KIP-794), linger/batching, flush/close,
// metadata for auto-created topics, and the errors a caller sees (bad partition, too-large record).

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { KafkaProducer } from "../../src/client/producer/kafka-producer.js";
import { ConfigException } from "../../src/client/producer/producer-config.js";
import {
  BrokerHarness,
  describeResult,
  KCAT_FORMAT,
  parseKcat,
  readWithKcat,
  runCommand,
} from "../support/broker-harness.js";

let broker: BrokerHarness;

before(async () => {
  broker = await BrokerHarness.start({ name: "producer-test", overrides: { "num.partitions": "6" } });
});
after(async () => {
  await broker?.close();
});

function producer(extra: Record<string, string> = {}): KafkaProducer {
  return new KafkaProducer({ "bootstrap.servers": broker.bootstrap, ...extra });
}

describe("KafkaProducer", () => {
  test("keyed records go to murmur2(key) partitions, the same as kcat's murmur2_random", async () => {
    const p = producer();
    const keys = Array.from({ length: 60 }, (_, i) => `key-${i * 7919}`);
    const results = await Promise.all(keys.map((k) => p.send({ topic: "keyed", key: k, value: `v-${k}` })));
    await p.close();
    // kcat writes the same keys to another 6-partition topic with librdkafka's Java-compatible partitioner.
    const input = keys.map((k) => `${k}:x`).join("\n");
    const w = await runCommand(
      "/usr/bin/kcat",
      ["-b", broker.bootstrap, "-P", "-t", "keyed-kcat", "-K:", "-X", "partitioner=murmur2_random"],
      { input },
    );
    assert.equal(w.code, 0, describeResult("kcat -P", w));
    const theirs = new Map(
      (await readWithKcat(broker.bootstrap, "keyed-kcat")).map((m) => [m.key, m.partition]),
    );
    const ours = await readWithKcat(broker.bootstrap, "keyed");
    assert.equal(ours.length, keys.length);
    for (const m of ours) {
      assert.equal(m.partition, theirs.get(m.key), `partition of ${m.key}`);
      assert.equal(m.value, `v-${m.key}`);
    }
    // The send results name the partition and offset where kcat found each record.
    for (const [i, r] of results.entries()) {
      const m = ours.find((x) => x.key === keys[i])!;
      assert.equal(r.partition, m.partition);
      assert.equal(r.offset, BigInt(m.offset));
      assert.equal(r.topic, "keyed");
    }
  });

  for (const codec of ["none", "gzip", "snappy", "lz4", "zstd"]) {
    test(`compression.type=${codec}: kcat reads every record, headers and timestamps`, async () => {
      const topic = `codec-${codec}`;
      const p = producer({ "compression.type": codec, "linger.ms": "20" });
      const sends = [];
      for (let i = 0; i < 200; i++) {
        sends.push(
          p.send({
            topic,
            partition: i % 2,
            key: `k${i}`,
            value: `value ${i} ${"x".repeat(i % 50)}`,
            headers: [{ key: "h", value: Buffer.from(`hv${i}`) }],
            timestamp: 1_700_000_000_000 + i,
          }),
        );
      }
      const results = await Promise.all(sends);
      await p.close();
      assert.deepEqual(
        results.map((r) => r.timestamp),
        Array.from({ length: 200 }, (_, i) => BigInt(1_700_000_000_000 + i)),
      );
      const r = await runCommand("/usr/bin/kcat", [
        "-b",
        broker.bootstrap,
        "-C",
        "-t",
        topic,
        "-o",
        "beginning",
        "-e",
        "-q",
        "-f",
        KCAT_FORMAT,
      ]);
      assert.equal(r.code, 0, describeResult("kcat -C", r));
      const got = parseKcat(r.stdout).sort((a, b) => Number(a.key.slice(1)) - Number(b.key.slice(1)));
      assert.equal(got.length, 200);
      for (const [i, m] of got.entries()) {
        assert.equal(m.key, `k${i}`);
        assert.equal(m.value, `value ${i} ${"x".repeat(i % 50)}`);
        assert.equal(m.partition, i % 2);
        assert.equal(m.headers, `h=hv${i}`);
        assert.equal(m.timestamp, 1_700_000_000_000 + i);
      }
      // Records of one partition were sent in order: offsets follow send order.
      const p0 = results.filter((x) => x.partition === 0).map((x) => Number(x.offset));
      assert.deepEqual(
        p0,
        [...p0].sort((a, b) => a - b),
      );
    });
  }

  test("acks=0 completes with offset -1; acks=1 and acks=all give offsets", async () => {
    for (const [acks, expectOffsets] of [
      ["0", false],
      ["1", true],
      ["all", true],
    ] as const) {
      const p = producer({ acks });
      const rs = await Promise.all(
        [0, 1, 2].map((i) => p.send({ topic: `acks-${acks}`, partition: 0, value: `a${i}` })),
      );
      await p.close();
      if (expectOffsets)
        assert.deepEqual(
          rs.map((r) => r.offset),
          [0n, 1n, 2n],
        );
      else
        assert.deepEqual(
          rs.map((r) => r.offset),
          [-1n, -1n, -1n],
        );
      const read = await readWithKcat(broker.bootstrap, `acks-${acks}`);
      assert.deepEqual(
        read.map((m) => m.value),
        ["a0", "a1", "a2"],
      );
    }
  });

  test("keyless records stick to one partition per batch.size and then move on", async () => {
    const p = producer({ "batch.size": "2000", "linger.ms": "0" });
    const rs = [];
    for (let i = 0; i < 200; i++) rs.push(await p.send({ topic: "sticky", value: Buffer.alloc(100, 65) }));
    await p.close();
    // Runs of the same partition, each about batch.size bytes (~16 records of ~120 bytes).
    const runs: number[] = [];
    let prev = -1;
    for (const r of rs) {
      if (r.partition !== prev) runs.push(0);
      runs[runs.length - 1]++;
      prev = r.partition;
    }
    assert.ok(runs.length >= 5, `partition changed ${runs.length} times`);
    for (const n of runs.slice(0, -1)) assert.ok(n >= 10 && n <= 20, `run of ${n} records`);
    assert.ok(new Set(rs.map((r) => r.partition)).size > 1);
  });

  test("linger.ms batches records into few requests; flush() sends at once", async () => {
    const p = producer({ "linger.ms": "60000", "batch.size": "1000000" });
    const pending = [0, 1, 2, 3, 4].map((i) => p.send({ topic: "linger", partition: 0, value: `l${i}` }));
    let settled = false;
    void Promise.all(pending).then(() => {
      settled = true;
    });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(settled, false, "records wait for linger.ms");
    await p.flush();
    const rs = await Promise.all(pending);
    assert.deepEqual(
      rs.map((r) => r.offset),
      [0n, 1n, 2n, 3n, 4n],
    );
    await p.close();
    // One batch: kcat sees the 5 records, and the log holds them in one batch (same timestamp base).
    const read = await readWithKcat(broker.bootstrap, "linger");
    assert.deepEqual(
      read.map((m) => m.value),
      ["l0", "l1", "l2", "l3", "l4"],
    );
  });

  test("errors: a partition that does not exist, a record over max.request.size, bad configs", async () => {
    const p = producer({ "max.request.size": "1000" });
    await p.send({ topic: "errs", value: "x" });
    await assert.rejects(
      p.send({ topic: "errs", partition: 99, value: "x" }),
      /Invalid partition given with record: 99/,
    );
    await assert.rejects(
      p.send({ topic: "errs", value: Buffer.alloc(2000) }),
      /larger than 1000, which is the value of the max.request.size/,
    );
    // A name the broker refuses (INVALID_TOPIC_EXCEPTION) fails at once, not after max.block.ms (60 s).
    const started = Date.now();
    await assert.rejects(p.send({ topic: "bad topic!", value: "x" }), (e: Error) => {
      assert.equal(e.message, "Invalid topics: [bad topic!]");
      return true;
    });
    await assert.rejects(p.partitionsFor("bad topic!"), /Invalid topics: \[bad topic!\]/);
    assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
    await p.close();
    await assert.rejects(p.send({ topic: "errs", value: "x" }), /after producer has been closed/);
    assert.throws(() => producer({ acks: "2" }), ConfigException);
    assert.throws(() => producer({ "compression.type": "brotli" }), /compression.type/);
    assert.throws(() => new KafkaProducer({}), /bootstrap.servers/);
    assert.throws(() => producer({ "enable.idempotence": "true" }), /idempotence/);
  });

  test("many records with small buffer.memory: back-pressure keeps order and loses nothing", async () => {
    const p = producer({ "buffer.memory": "65536", "batch.size": "16384", acks: "1" });
    const n = 5000;
    await p.send({ topic: "pressure-warmup", partition: 0, value: "metadata first" });
    await p.partitionsFor("pressure");
    const sends = [];
    for (let i = 0; i < n; i++)
      sends.push(p.send({ topic: "pressure", partition: 0, value: `r${i}-${"y".repeat(80)}` }));
    assert.equal(p.bufferFull, true);
    const rs = await Promise.all(sends);
    await p.close();
    assert.deepEqual(
      rs.map((r) => Number(r.offset)),
      Array.from({ length: n }, (_, i) => i),
    );
  });
  test("retries across a broker restart: every record is delivered (metadata refresh, reconnect)", async () => {
    const p = producer({ "linger.ms": "0", "retry.backoff.ms": "50", "request.timeout.ms": "5000" });
    await p.send({ topic: "restart", partition: 0, value: "before" });
    const sends: Array<Promise<unknown>> = [];
    const restarted = broker.restart();
    for (let i = 0; i < 50; i++) {
      sends.push(p.send({ topic: "restart", partition: 0, value: `during-${i}` }));
      await new Promise((r) => setTimeout(r, 20));
    }
    await restarted;
    const results = await Promise.allSettled(sends);
    await p.close();
    const failed = results.filter((r) => r.status === "rejected");
    assert.deepEqual(failed, [], "no record failed");
    const values = new Set((await readWithKcat(broker.bootstrap, "restart")).map((m) => m.value));
    for (let i = 0; i < 50; i++) assert.ok(values.has(`during-${i}`), `during-${i} delivered`);
  });

  test("delivery.timeout.ms fails records the broker never acknowledges", async () => {
    const p = producer({
      "linger.ms": "0",
      "delivery.timeout.ms": "1500",
      "request.timeout.ms": "1000",
      "retry.backoff.ms": "50",
    });
    await p.send({ topic: "timeout", partition: 0, value: "first" });
    await broker.stop("SIGTERM");
    try {
      const started = Date.now();
      await assert.rejects(p.send({ topic: "timeout", partition: 0, value: "lost" }), (e: Error) => {
        assert.match(
          e.message,
          /^Expiring 1 record\(s\) for timeout-0:\d+ ms has passed since batch creation$/,
        );
        return true;
      });
      const took = Date.now() - started;
      assert.ok(took >= 1000 && took < 10_000, `failed after ${took} ms`);
      await p.close(0);
    } finally {
      await broker.restart();
    }
  });
});
