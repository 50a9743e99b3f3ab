// ReplicaManager.appendTxnMarkers, the API the transaction coordinator calls (and WriteTxnMarkers serves):
// one control batch per partition appended as the leader with acks=-1 (resolved only once the ISR has it),
// per-partition error codes (unknown partition, not leader, old producer epoch), internal topics
// accepted, the onTxnMarkerAppended listeners told of each successful partition only after it is
// replicated, and a read_committed long poll woken by the marker moving the LSO.

import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrorCode } from "../../../src/protocol/errors.js";
import { buildRecordBatch, decodeRecordBatches } from "../../../src/protocol/records/index.js";
import type { FetchParams } from "../../../src/server/replication/replica-manager.js";
import {
  BROKER_ID,
  flushMicrotasks,
  leaderState,
  startBroker,
} from "../replication/replication-test-utils.js";

const tp = (topic: string, partition = 0) => ({ topic, partition });

function txnBatch(pid: bigint, seq: number, values: string[], epoch = 0): Buffer {
  return buildRecordBatch({
    records: values.map((v) => ({ key: null, value: Buffer.from(v) })),
    timestamp: 1_700_000_000_000n,
    producerId: pid,
    producerEpoch: epoch,
    baseSequence: seq,
    isTransactional: true,
  });
}

const committed: FetchParams = {
  replicaId: -1,
  maxWaitMs: 10_000,
  minBytes: 1,
  maxBytes: 1 << 20,
  isolation: "committed",
  fetchOnlyFromLeader: true,
};

test("appendTxnMarkers: per-partition errors, internal topics, listeners after acks=-1, long polls woken", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  const rm = b.replicaManager;
  rm.becomeLeaderOrFollower([
    leaderState("t", 0),
    leaderState("t", 1),
    leaderState("t", 2, { leader: 1, replicas: [1, BROKER_ID] }),
    leaderState("__consumer_offsets", 0),
  ]);
  const heard: string[] = [];
  rm.onTxnMarkerAppended((p, pid, epoch, isCommit) =>
    heard.push(`${p.topic}-${p.partition}:${pid}:${epoch}:${isCommit}`),
  );
  for (const p of [0, 1]) {
    const [r] = await rm.appendRecords(1000, -1, [
      { topicPartition: tp("t", p), records: txnBatch(7n, 0, ["x"], 2) },
    ]);
    assert.equal(r.error, "NONE");
  }
  const [off] = await rm.appendRecords(
    1000,
    -1,
    [{ topicPartition: tp("__consumer_offsets"), records: txnBatch(7n, 0, ["o"], 2) }],
    { internalTopicsAllowed: true },
  );
  assert.equal(off.error, "NONE");
  const log0 = rm.getPartition(tp("t"))?.log;
  assert.ok(log0);
  assert.equal(log0.lastStableOffset, 0n);

  // A read_committed long poll at the LSO waits for the marker.
  let woke: Buffer | undefined;
  void rm
    .fetchMessages(committed, [
      {
        topicPartition: tp("t"),
        fetchOffset: 0n,
        currentLeaderEpoch: -1,
        logStartOffset: -1n,
        partitionMaxBytes: 1 << 20,
      },
    ])
    .then((r) => {
      woke = r[0].records;
    });
  await flushMicrotasks();
  assert.equal(woke, undefined);

  const results = await rm.appendTxnMarkers([
    {
      producerId: 7n,
      producerEpoch: 1,
      coordinatorEpoch: 0,
      committed: true,
      partitions: [tp("t", 1)],
    },
    {
      producerId: 7n,
      producerEpoch: 2,
      coordinatorEpoch: 0,
      committed: true,
      partitions: [tp("t", 0), tp("t", 2), tp("nope", 0), tp("__consumer_offsets")],
    },
  ]);
  assert.deepEqual(results, [
    {
      producerId: 7n,
      results: [{ topicPartition: tp("t", 1), errorCode: ErrorCode.INVALID_PRODUCER_EPOCH }],
    },
    {
      producerId: 7n,
      results: [
        { topicPartition: tp("t", 0), errorCode: ErrorCode.NONE },
        { topicPartition: tp("t", 2), errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER },
        { topicPartition: tp("nope", 0), errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION },
        { topicPartition: tp("__consumer_offsets"), errorCode: ErrorCode.NONE },
      ],
    },
  ]);
  assert.deepEqual(heard, ["t-0:7:2:true", "__consumer_offsets-0:7:2:true"]);
  assert.equal(log0.lastStableOffset, 2n);
  await flushMicrotasks();
  assert.ok(woke !== undefined, "the long poll woke when the LSO moved");
  const batches = decodeRecordBatches(woke);
  assert.deepEqual(
    batches.map((x) => [x.header.isControl, x.header.baseOffset]),
    [
      [false, 0n],
      [true, 1n],
    ],
  );
  // The refused partition still has its transaction open.
  assert.equal(rm.getPartition(tp("t", 1))?.log?.lastStableOffset, 0n);
});

test("appendTxnMarkers waits for the ISR (acks=-1); listeners hear only once the marker is replicated", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  const rm = b.replicaManager;
  rm.becomeLeaderOrFollower([leaderState("r", 0, { replicas: [BROKER_ID, 1], isr: [BROKER_ID, 1] })]);
  void rm.appendRecords(30_000, -1, [{ topicPartition: tp("r"), records: txnBatch(9n, 0, ["a", "b"]) }]);
  const heard: string[] = [];
  rm.onTxnMarkerAppended((p, pid, _epoch, isCommit) =>
    heard.push(`${p.topic}-${p.partition}:${pid}:${isCommit}`),
  );
  let result: unknown;
  void rm
    .appendTxnMarkers([
      { producerId: 9n, producerEpoch: 0, coordinatorEpoch: 3, committed: false, partitions: [tp("r")] },
    ])
    .then((r) => {
      result = r;
    });
  await flushMicrotasks();
  assert.equal(result, undefined, "not answered before the follower has the marker");
  assert.deepEqual(heard, []);
  const log = rm.getPartition(tp("r"))?.log;
  assert.equal(log?.logEndOffset, 3n);
  // The abort is already in the .txnindex (the HW, hence the LSO, waits for the follower).
  assert.deepEqual(log?.activeSegment.txnIndex.allAbortedTxns(), [
    { producerId: 9n, firstOffset: 0n, lastOffset: 2n, lastStableOffset: 3n },
  ]);
  assert.equal(log?.lastStableOffset, 0n);
  rm.readFromLocalLog({ ...committed, replicaId: 1, isolation: "log-end", fetchOnlyFromLeader: false }, [
    {
      topicPartition: tp("r"),
      fetchOffset: 3n,
      currentLeaderEpoch: 0,
      logStartOffset: 0n,
      partitionMaxBytes: 1 << 20,
    },
  ]);
  await flushMicrotasks();
  assert.deepEqual(result, [
    { producerId: 9n, results: [{ topicPartition: tp("r"), errorCode: ErrorCode.NONE }] },
  ]);
  assert.deepEqual(heard, ["r-0:9:false"]);
  assert.equal(log?.lastStableOffset, 3n);
});
