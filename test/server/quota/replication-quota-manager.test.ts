// The replication quotas' rate math (Kafka's SimpleRate over sampled windows) and throttled-replica
// bookkeeping, on a controlled clock: exact rates while the samples fill, roll over and expire; the quota
// exceeded only above its bound; which partitions a `partition:brokerId` list throttles on this broker;
// the dynamic configs applied as Kafka's config handlers apply them.

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  ConfigValidationError,
  validateBrokerConfigs,
  validateTopicConfigs,
} from "../../../src/server/metadata/config-definitions.js";
import {
  DEFAULT_REPLICATION_THROTTLED_RATE,
  parseThrottledPartitions,
  ReplicationQuotaManager,
} from "../../../src/server/quota/replication-quota-manager.js";
import { ReplicationQuotas } from "../../../src/server/quota/replication-quotas.js";
import { SimpleRate } from "../../../src/server/quota/simple-rate.js";

const KAFKA_DEFAULT = { samples: 11, windowMs: 1000 };

test("a burst is divided by at least one window, then by the time since the oldest sample began", () => {
  const r = new SimpleRate(KAFKA_DEFAULT);
  r.record(1000, 0);
  assert.equal(r.measure(0), 1000);
  assert.equal(r.measure(500), 1000);
  assert.equal(r.measure(2000), 500);
  assert.equal(r.measure(4000), 250);
});

test("11 samples of 1 s: steady 1000 B/s measures 1100 while the current sample is fresh, 1000 once the first expires", () => {
  const r = new SimpleRate(KAFKA_DEFAULT);
  for (let t = 0; t <= 10_000; t += 1000) r.record(1000, t);
  // 11 samples hold 11000 bytes; the oldest began 10 s ago.
  assert.equal(r.measure(10_000), 1100);
  // At 11 s the first sample (started at 0) is 11 windows old: obsolete, reset. 10000 bytes over 10 s.
  assert.equal(r.measure(11_000), 1000);
  // Recording at 11 s reuses the oldest slot (the ring of 11).
  r.record(1000, 11_000);
  assert.equal(r.measure(11_000), 1100);
  // Long silence: every sample expires, the rate falls to 0.
  assert.equal(r.measure(30_000), 0);
});

test("records within one window add up in one sample", () => {
  const r = new SimpleRate({ samples: 2, windowMs: 1000 });
  for (let t = 0; t < 1000; t += 100) r.record(100, t);
  assert.equal(r.measure(999), 1000);
  r.record(500, 1000); // a new sample
  assert.equal(r.measure(1000), 1500);
  // A window is obsolete `samples` windows after its last event (Kafka 3.7+'s lastEventMs): at 2000 the
  // first (last event at 900) still counts, 1500 bytes over the 2 s since it began.
  assert.equal(r.measure(2000), 750);
  // At 2900 it is reset: 500 bytes over the 1.9 s since the second began.
  assert.equal(r.measure(2900), 500 / 1.9);
});

test("the quota is exceeded only while the measured rate is above the bound", () => {
  let now = 0;
  const q = new ReplicationQuotaManager("LeaderReplication", KAFKA_DEFAULT, () => now);
  assert.equal(q.upperBound, DEFAULT_REPLICATION_THROTTLED_RATE);
  q.record(10_000_000);
  assert.equal(q.isQuotaExceeded(), false, "unbounded by default (Long.MAX_VALUE)");
  q.updateQuota(1000n);
  now = 5_000; // 10 MB over 5 s
  assert.equal(q.isQuotaExceeded(), true);
  const q2 = new ReplicationQuotaManager("FollowerReplication", KAFKA_DEFAULT, () => now);
  q2.updateQuota(1000n);
  now = 0;
  q2.record(2000);
  assert.equal(q2.isQuotaExceeded(), true);
  now = 2000; // 2000 bytes over 2 s = the bound: acceptable
  assert.equal(q2.isQuotaExceeded(), false);
  assert.equal(q2.byteRate(), 1000);
  now = 1999;
  assert.equal(q2.isQuotaExceeded(), true);
});

test("throttle time: how long until the rate is back at the bound (Kafka's QuotaUtils.throttleTime)", () => {
  let now = 0;
  const q = new ReplicationQuotaManager("FollowerReplication", KAFKA_DEFAULT, () => now);
  q.record(1_000_000);
  assert.equal(q.throttleTimeMs(), 0, "unbounded");
  q.updateQuota(1000n);
  now = 2000;
  q.record(3_000); // samples: 1,000,000 at 0 and 3,000 at 2000 (window 2 s: 501,500 B/s)
  // (501500 - 1000) / 1000 × 2000 ms
  assert.equal(q.throttleTimeMs(), 1_001_000);
  const r = new ReplicationQuotaManager("FollowerReplication", KAFKA_DEFAULT, () => now);
  r.updateQuota(1000n);
  now = 0;
  r.record(3000);
  now = 1500; // 3000 B over 1.5 s: 2000 B/s; back to 1000 B/s at 3 s
  assert.equal(r.throttleTimeMs(), 1500);
  now = 3000;
  assert.equal(r.throttleTimeMs(), 0);
});

test("a throttled rate holds the long-run average at the bound when bytes move only while under it", () => {
  // The leader's loop: each 100 ms tick sends a 1 MB chunk unless the quota is exceeded.
  let now = 0;
  const q = new ReplicationQuotaManager("LeaderReplication", KAFKA_DEFAULT, () => now);
  q.updateQuota(2_000_000n);
  let sent = 0;
  for (; now < 60_000; now += 100) {
    if (!q.isQuotaExceeded()) {
      q.record(1_000_000);
      sent += 1_000_000;
    }
  }
  const rate = sent / 60;
  assert.ok(rate > 1_900_000 && rate < 2_200_000, `${rate} B/s`);
});

test("throttled replicas: the entries naming this broker, or every partition for *", () => {
  assert.deepEqual(parseThrottledPartitions("0:1,1:2,2:1", 1), [0, 2]);
  assert.deepEqual(parseThrottledPartitions(" 0:1 , 1:2 ", 2), [1]);
  assert.deepEqual(parseThrottledPartitions("", 1), []);
  assert.equal(parseThrottledPartitions("*", 7), "*");
  const q = new ReplicationQuotaManager("FollowerReplication", KAFKA_DEFAULT, () => 0);
  q.markThrottled("a", [0, 2]);
  q.markThrottled("b", "*");
  assert.equal(q.isThrottled({ topic: "a", partition: 0 }), true);
  assert.equal(q.isThrottled({ topic: "a", partition: 1 }), false);
  assert.equal(q.isThrottled({ topic: "b", partition: 99 }), true);
  assert.equal(q.isThrottled({ topic: "c", partition: 0 }), false);
  q.removeThrottle("b");
  assert.equal(q.isThrottled({ topic: "b", partition: 99 }), false);
});

test("the dynamic configs drive the three quotas as Kafka's config handlers do", () => {
  const quotas = new ReplicationQuotas(
    {
      brokerId: 3,
      replicationWindows: { samples: 11, windowSeconds: 1 },
      alterLogDirsWindows: { samples: 11, windowSeconds: 1 },
    },
    () => 0,
  );
  quotas.applyBrokerConfig({
    "leader.replication.throttled.rate": "10000000",
    "follower.replication.throttled.rate": "20000000",
    "replica.alter.log.dirs.io.max.bytes.per.second": "5000",
  });
  assert.equal(quotas.leader.upperBound, 10_000_000n);
  assert.equal(quotas.follower.upperBound, 20_000_000n);
  assert.equal(quotas.alterLogDirs.upperBound, 5000n);
  quotas.applyBrokerConfig({ "leader.replication.throttled.rate": "1" });
  assert.equal(quotas.leader.upperBound, 1n);
  assert.equal(quotas.follower.upperBound, DEFAULT_REPLICATION_THROTTLED_RATE);
  assert.equal(quotas.alterLogDirs.upperBound, DEFAULT_REPLICATION_THROTTLED_RATE);

  quotas.applyTopicConfig("t", {
    "leader.replication.throttled.replicas": "0:3,1:4",
    "follower.replication.throttled.replicas": "1:3",
  });
  assert.equal(quotas.leader.isThrottled({ topic: "t", partition: 0 }), true);
  assert.equal(quotas.leader.isThrottled({ topic: "t", partition: 1 }), false);
  assert.equal(quotas.follower.isThrottled({ topic: "t", partition: 1 }), true);
  quotas.applyTopicConfig("t", { "leader.replication.throttled.replicas": "" });
  assert.deepEqual(quotas.leader.throttledTopics(), []);
  assert.deepEqual(quotas.follower.throttledTopics(), []);
});

test("config validation: Kafka's ThrottledReplicaListValidator and the rates as longs >= 0", () => {
  for (const ok of ["", "*", " * ", "0:1", "0:1,1:2", "0:1,,1:2", " 0:1 , 1:2 "])
    validateTopicConfigs({ "leader.replication.throttled.replicas": ok });
  for (const bad of ["0-1", "1:a", "0:1:2", "*,0:1", "0 : 1"])
    assert.throws(
      () => validateTopicConfigs({ "follower.replication.throttled.replicas": bad }),
      (e: Error) =>
        e instanceof ConfigValidationError &&
        e.errorName === "INVALID_CONFIG" &&
        e.message.includes("follower.replication.throttled.replicas") &&
        e.message.includes("[partitionId]:[brokerId],[partitionId]:[brokerId],..."),
      bad,
    );
  for (const ok of ["0", "1024", "9223372036854775807"])
    validateBrokerConfigs({ "leader.replication.throttled.rate": ok }, true);
  for (const bad of ["-1", "abc", "1.5", "9223372036854775808"])
    assert.throws(
      () => validateBrokerConfigs({ "replica.alter.log.dirs.io.max.bytes.per.second": bad }, true),
      (e: Error) =>
        e instanceof ConfigValidationError &&
        e.errorName === "INVALID_CONFIG" &&
        e.message ===
          `Invalid value ${JSON.stringify(bad)} for configuration replica.alter.log.dirs.io.max.bytes.per.second: expected a long >= 0 (bytes/s)`,
      bad,
    );
});
