// ReplicaManager and Partition driven directly: leadership, appends with acks 0/1/-1, min.insync.replicas,
// the high watermark, fetch long polling through the purgatory (woken by an append, expiring after
// max_wait), stopReplicas, and the replication-offset-checkpoint written and restored.

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { ErrorCode } from "../../../src/protocol/errors.js";
import {
  DelayedOperation,
  DelayedOperationPurgatory,
} from "../../../src/server/replication/delayed-operation-purgatory.js";
import type { FetchParams, FetchPartitionData } from "../../../src/server/replication/replica-manager.js";
import {
  BROKER_ID,
  createTopics,
  flushMicrotasks,
  leaderState,
  records,
  startBroker,
  tempRoot,
} from "./replication-test-utils.js";

const consumer = (over: Partial<FetchParams> = {}): FetchParams => ({
  replicaId: -1,
  maxWaitMs: 0,
  minBytes: 1,
  maxBytes: 1 << 20,
  isolation: "high-watermark",
  fetchOnlyFromLeader: true,
  ...over,
});

const tp = (topic: string, partition = 0) => ({ topic, partition });

test("becomeLeaderOrFollower creates logs, writes partition.metadata and makes this broker leader", (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  const errors = b.replicaManager.becomeLeaderOrFollower([
    leaderState("orders", 0),
    leaderState("orders", 1),
  ]);
  assert.deepEqual(
    [...errors.values()].map((e) => e.errorCode),
    [0, 0],
  );
  const p = b.replicaManager.getPartition(tp("orders", 1));
  assert.ok(p?.isLeader);
  assert.equal(p.leaderEpoch, 0);
  assert.deepEqual(p.isr, [BROKER_ID]);
  assert.ok(existsSync(join(b.logDirs[0], "orders-1", "partition.metadata")));
  assert.equal(b.replicaManager.topicNameFor(p.topicId), "orders");
  // An older leader epoch is refused (Kafka answers STALE_CONTROLLER_EPOCH and changes nothing).
  b.replicaManager.becomeLeaderOrFollower([leaderState("orders", 0, { leaderEpoch: 3 })]);
  const stale = b.replicaManager.becomeLeaderOrFollower([leaderState("orders", 0, { leaderEpoch: 2 })]);
  assert.equal(stale.get("orders-0")?.errorCode, ErrorCode.STALE_CONTROLLER_EPOCH);
  assert.equal(stale.get("orders-0")?.ignored, true);
  assert.equal(b.replicaManager.getPartition(tp("orders"))?.leaderEpoch, 3);
});

test("acks=1 and acks=0 append at once; the high watermark follows the log end offset with RF 1", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  createTopics(b, { t: 1 });
  const [r1] = await b.replicaManager.appendRecords(1000, 1, [
    { topicPartition: tp("t"), records: records(3) },
  ]);
  assert.equal(r1.error, "NONE");
  assert.equal(r1.baseOffset, 0n);
  assert.equal(r1.logAppendTimeMs, -1n);
  assert.equal(r1.logStartOffset, 0n);
  const [r0] = await b.replicaManager.appendRecords(1000, 0, [
    { topicPartition: tp("t"), records: records(2) },
  ]);
  assert.equal(r0.baseOffset, 3n);
  const log = b.replicaManager.getPartition(tp("t"))?.log;
  assert.equal(log?.logEndOffset, 5n);
  assert.equal(log?.highWatermark, 5n);
});

test("acks=-1 completes through the produce purgatory once the ISR has the data", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  createTopics(b, { t: 2 });
  const results = await b.replicaManager.appendRecords(30_000, -1, [
    { topicPartition: tp("t", 0), records: records(4) },
    { topicPartition: tp("t", 1), records: records(1) },
    { topicPartition: tp("nope", 0), records: records(1) },
  ]);
  assert.deepEqual(
    results.map((r) => [r.error, r.baseOffset]),
    [
      ["NONE", 0n],
      ["NONE", 0n],
      ["UNKNOWN_TOPIC_OR_PARTITION", -1n],
    ],
  );
  assert.equal(b.replicaManager.delayedProducePurgatory.numDelayed, 0);
});

test("acks=-1 waits for a follower in the ISR and times out with REQUEST_TIMED_OUT; a follower fetch completes it", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  b.replicaManager.becomeLeaderOrFollower([
    leaderState("t", 0, { replicas: [BROKER_ID, 1], isr: [BROKER_ID, 1] }),
  ]);
  // Times out: the follower never fetches.
  let timedOut: string | undefined;
  void b.replicaManager
    .appendRecords(500, -1, [{ topicPartition: tp("t"), records: records(2) }])
    .then((r) => {
      timedOut = r[0].error;
    });
  await flushMicrotasks();
  assert.equal(timedOut, undefined);
  assert.equal(b.replicaManager.delayedProducePurgatory.numDelayed, 1);
  await b.scheduler.tick(500);
  await flushMicrotasks();
  assert.equal(timedOut, "REQUEST_TIMED_OUT");
  // Completed by the follower fetching past the append.
  let done: string | undefined;
  void b.replicaManager
    .appendRecords(30_000, -1, [{ topicPartition: tp("t"), records: records(1) }])
    .then((r) => {
      done = r[0].error;
    });
  await flushMicrotasks();
  assert.equal(done, undefined);
  b.replicaManager.readFromLocalLog({ ...consumer(), replicaId: 1, isolation: "log-end" }, [
    {
      topicPartition: tp("t"),
      fetchOffset: 3n,
      currentLeaderEpoch: 0,
      logStartOffset: 0n,
      partitionMaxBytes: 1 << 20,
    },
  ]);
  await flushMicrotasks();
  assert.equal(done, "NONE");
  assert.equal(b.replicaManager.getPartition(tp("t"))?.log?.highWatermark, 3n);
});

test("min.insync.replicas: acks=-1 gets NOT_ENOUGH_REPLICAS when the ISR is too small, acks=1 is accepted", async (t) => {
  const b = startBroker({
    rmConfig: { minInsyncReplicas: (topic) => (topic === "strict" || topic === "single" ? 2 : 1) },
  });
  t.after(() => b.cleanup());
  createTopics(b, { loose: 1, single: 1 });
  // Two replicas, one of them in sync: below min.insync.replicas=2.
  b.replicaManager.becomeLeaderOrFollower([
    leaderState("strict", 0, { replicas: [BROKER_ID, 1], isr: [BROKER_ID] }),
  ]);
  const [r] = await b.replicaManager.appendRecords(1000, -1, [
    { topicPartition: tp("strict"), records: records(1) },
  ]);
  assert.equal(r.error, "NOT_ENOUGH_REPLICAS");
  // One replica, in sync: Kafka's effective min ISR is min(min.insync.replicas, replicas) = 1.
  const [single] = await b.replicaManager.appendRecords(1000, -1, [
    { topicPartition: tp("single"), records: records(1) },
  ]);
  assert.equal(single.error, "NONE");
  assert.equal(b.replicaManager.getPartition(tp("single"))?.log?.highWatermark, 1n);
  const [r1] = await b.replicaManager.appendRecords(1000, 1, [
    { topicPartition: tp("strict"), records: records(1) },
  ]);
  assert.equal(r1.error, "NONE");
  // Accepted with acks=1, but the high watermark stays while the ISR is under min.insync.replicas
  // (Kafka since KAFKA-15583): consumers do not see the record yet.
  const strict = b.replicaManager.getPartition(tp("strict"))!;
  assert.equal(strict.log?.logEndOffset, 1n);
  assert.equal(strict.log?.highWatermark, 0n);
  const [r2] = await b.replicaManager.appendRecords(1000, -1, [
    { topicPartition: tp("loose"), records: records(1) },
  ]);
  assert.equal(r2.error, "NONE");
});

test("required acks other than -1/0/1 is INVALID_REQUIRED_ACKS; internal topics need the admin client", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  createTopics(b, { t: 1, __consumer_offsets: 1 });
  const [r] = await b.replicaManager.appendRecords(1000, 2, [
    { topicPartition: tp("t"), records: records(1) },
  ]);
  assert.equal(r.error, "INVALID_REQUIRED_ACKS");
  const [i] = await b.replicaManager.appendRecords(1000, 1, [
    { topicPartition: tp("__consumer_offsets"), records: records(1) },
  ]);
  assert.equal(i.error, "INVALID_TOPIC_EXCEPTION");
  const [ok] = await b.replicaManager.appendRecords(
    1000,
    1,
    [{ topicPartition: tp("__consumer_offsets"), records: records(1) }],
    { internalTopicsAllowed: true },
  );
  assert.equal(ok.error, "NONE");
});

test("a follower partition refuses appends and consumer reads with NOT_LEADER_OR_FOLLOWER", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  b.replicaManager.becomeLeaderOrFollower([leaderState("t", 0, { leader: 7, replicas: [7, BROKER_ID] })]);
  const [r] = await b.replicaManager.appendRecords(1000, 1, [
    { topicPartition: tp("t"), records: records(1) },
  ]);
  assert.equal(r.error, "NOT_LEADER_OR_FOLLOWER");
  const [f] = await b.replicaManager.fetchMessages(consumer(), [
    {
      topicPartition: tp("t"),
      fetchOffset: 0n,
      currentLeaderEpoch: -1,
      logStartOffset: -1n,
      partitionMaxBytes: 1000,
    },
  ]);
  assert.equal(f.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
});

test("fetch long polling: waits for min_bytes, is woken by an append, no polling", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  createTopics(b, { t: 2 });
  const info = {
    topicPartition: tp("t", 1),
    fetchOffset: 0n,
    currentLeaderEpoch: 0,
    logStartOffset: -1n,
    partitionMaxBytes: 1 << 20,
  };
  const box: { result?: FetchPartitionData[] } = {};
  void b.replicaManager.fetchMessages(consumer({ maxWaitMs: 10_000, minBytes: 1 }), [info]).then((r) => {
    box.result = r;
  });
  await flushMicrotasks();
  assert.equal(box.result, undefined);
  assert.equal(b.replicaManager.delayedFetchPurgatory.numDelayed, 1);
  // An append to another partition does not wake it.
  await b.replicaManager.appendRecords(1000, 1, [{ topicPartition: tp("t", 0), records: records(1) }]);
  await flushMicrotasks();
  assert.equal(box.result, undefined);
  // An append to its partition does, with no time passing.
  const batch = records(5);
  await b.replicaManager.appendRecords(1000, 1, [{ topicPartition: tp("t", 1), records: batch }]);
  await flushMicrotasks();
  const result = box.result as FetchPartitionData[] | undefined;
  assert.ok(result);
  assert.equal(result[0].errorCode, 0);
  assert.equal(result[0].records.length, batch.length);
  assert.equal(result[0].highWatermark, 5n);
  assert.equal(b.replicaManager.delayedFetchPurgatory.numDelayed, 0);
});

test("fetch long polling: min_bytes larger than one append waits for more; expires after max_wait with what there is", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  createTopics(b, { t: 1 });
  const one = records(1);
  const info = {
    topicPartition: tp("t"),
    fetchOffset: 0n,
    currentLeaderEpoch: -1,
    logStartOffset: -1n,
    partitionMaxBytes: 1 << 20,
  };
  const box: { result?: FetchPartitionData[]; empty?: FetchPartitionData[] } = {};
  void b.replicaManager
    .fetchMessages(consumer({ maxWaitMs: 500, minBytes: one.length * 2 + 1 }), [info])
    .then((r) => {
      box.result = r;
    });
  await b.replicaManager.appendRecords(1000, 1, [{ topicPartition: tp("t"), records: records(1) }]);
  await b.replicaManager.appendRecords(1000, 1, [{ topicPartition: tp("t"), records: records(1) }]);
  await flushMicrotasks();
  assert.equal(box.result, undefined, "two batches are fewer than min_bytes");
  await b.scheduler.tick(499);
  await flushMicrotasks();
  assert.equal(box.result, undefined);
  await b.scheduler.tick(1);
  await flushMicrotasks();
  const expired = box.result as FetchPartitionData[] | undefined;
  assert.ok(expired, "expired after max_wait_ms");
  assert.equal(expired[0].records.length, one.length * 2);
  // Nothing new at all: an empty response after max_wait.
  void b.replicaManager
    .fetchMessages(consumer({ maxWaitMs: 100 }), [{ ...info, fetchOffset: 2n }])
    .then((r) => {
      box.empty = r;
    });
  await b.scheduler.tick(100);
  await flushMicrotasks();
  assert.equal(box.empty?.[0].records.length, 0);
  assert.equal(box.empty?.[0].errorCode, 0);
});

test("a waiting fetch completes at once when its partition is stopped or leadership moves", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  createTopics(b, { t: 1, u: 1 });
  const info = (topic: string) => ({
    topicPartition: tp(topic),
    fetchOffset: 0n,
    currentLeaderEpoch: -1,
    logStartOffset: -1n,
    partitionMaxBytes: 1000,
  });
  let r1: Awaited<ReturnType<typeof b.replicaManager.fetchMessages>> | undefined;
  let r2: typeof r1;
  void b.replicaManager.fetchMessages(consumer({ maxWaitMs: 60_000 }), [info("t")]).then((r) => {
    r1 = r;
  });
  void b.replicaManager.fetchMessages(consumer({ maxWaitMs: 60_000 }), [info("u")]).then((r) => {
    r2 = r;
  });
  await flushMicrotasks();
  b.replicaManager.stopReplicas([tp("t")], true);
  b.replicaManager.becomeLeaderOrFollower([
    leaderState("u", 0, { leader: 5, leaderEpoch: 1, replicas: [5, BROKER_ID] }),
  ]);
  await flushMicrotasks();
  assert.equal(r1?.[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  assert.equal(r2?.[0].errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
  assert.equal(existsSync(join(b.logDirs[0], "t-0")), false, "stopReplicas(delete) removed the log");
  assert.equal(b.replicaManager.topicIdFor("t"), undefined);
});

test("shutdown answers waiting fetches", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  createTopics(b, { t: 1 });
  let r: unknown;
  void b.replicaManager
    .fetchMessages(consumer({ maxWaitMs: 60_000 }), [
      {
        topicPartition: tp("t"),
        fetchOffset: 0n,
        currentLeaderEpoch: -1,
        logStartOffset: -1n,
        partitionMaxBytes: 1000,
      },
    ])
    .then((x) => {
      r = x;
    });
  await flushMicrotasks();
  b.replicaManager.shutdown();
  await flushMicrotasks();
  assert.ok(r);
});

test("the high watermark is checkpointed every replica.high.watermark.checkpoint.interval.ms and restored on load", async (t) => {
  const root = tempRoot();
  const b = startBroker({ root });
  let b2: ReturnType<typeof startBroker> | undefined;
  t.after(() => {
    b2?.stop();
    b.cleanup();
  });
  createTopics(b, { t: 1 });
  await b.replicaManager.appendRecords(1000, 1, [{ topicPartition: tp("t"), records: records(7) }]);
  const file = join(b.logDirs[0], "replication-offset-checkpoint");
  await b.scheduler.tick(5000);
  await b.logManager.checkpointsWritten(); // written off the event loop
  assert.equal(readFileSync(file, "utf8"), "0\n1\nt 0 7\n");
  b.stop();
  // Restart as a follower (the HW then does not simply follow the LEO): the checkpointed HW is restored.
  b2 = startBroker({ root });
  b2.replicaManager.becomeLeaderOrFollower([
    leaderState("t", 0, { leader: 3, leaderEpoch: 1, replicas: [3, BROKER_ID] }),
  ]);
  assert.equal(b2.replicaManager.getPartition(tp("t"))?.log?.highWatermark, 7n);
  assert.equal(b2.replicaManager.getPartition(tp("t"))?.log?.logEndOffset, 7n);
});

class TestOp extends DelayedOperation {
  ready = false;
  completions = 0;
  expirations = 0;
  tryComplete(): boolean {
    return this.ready ? this.forceComplete() : false;
  }
  onComplete(): void {
    this.completions++;
  }
  onExpiration(): void {
    this.expirations++;
  }
}

test("DelayedOperationPurgatory: watch keys, checkAndComplete, expiry once, shutdown", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  const purgatory = new DelayedOperationPurgatory<TestOp>("Test", b.scheduler);
  const a = new TestOp(100);
  const c = new TestOp(100);
  assert.equal(purgatory.tryCompleteElseWatch(a, ["x", "y"]), false);
  assert.equal(purgatory.tryCompleteElseWatch(c, ["y"]), false);
  assert.equal(purgatory.numDelayed, 2);
  assert.equal(purgatory.checkAndComplete("x"), 0);
  a.ready = true;
  assert.equal(purgatory.checkAndComplete("x"), 1);
  assert.equal(purgatory.numDelayed, 1);
  assert.equal(purgatory.checkAndComplete("y"), 0, "a is no longer watched under y");
  await b.scheduler.tick(100);
  assert.equal(a.completions, 1);
  assert.equal(a.expirations, 0);
  assert.equal(c.completions, 1);
  assert.equal(c.expirations, 1);
  assert.equal(purgatory.numDelayed, 0);
  assert.equal(purgatory.watchedKeys, 0);
  const d = new TestOp(1000);
  purgatory.tryCompleteElseWatch(d, ["z"]);
  purgatory.shutdown();
  assert.equal(d.completions, 1);
  await b.scheduler.tick(1000);
  assert.equal(d.completions, 1);
  assert.equal(d.expirations, 0);
});
