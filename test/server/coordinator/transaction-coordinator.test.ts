// The transaction coordinator driven directly over a real ReplicaManager and LogManager (real files) with a
// mock clock: InitProducerId (new ids, epoch bumps, KIP-360 retries, fencing an ongoing transaction),
// AddPartitionsToTxn, EndTxn with the COMMIT/ABORT markers written to the partitions' logs, every error
// the issue lists, timed-out transactions aborted under a bumped epoch, transactional ids expiring, and the
// whole state reloaded from __transaction_state by a fresh coordinator (a PrepareCommit found there is
// completed).

import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrorCode } from "../../../src/protocol/errors.js";
import { buildRecordBatch, decodeRecordBatches } from "../../../src/protocol/records/memory-records.js";
import { TransactionCoordinator } from "../../../src/server/coordinator/transaction/transaction-coordinator.js";
import {
  readTransactionLogKeyRecord,
  readTransactionLogValueRecord,
} from "../../../src/server/coordinator/transaction/transaction-log.js";
import type { AppendTxnMarkers } from "../../../src/server/coordinator/transaction/transaction-marker-channel-manager.js";
import {
  TRANSACTION_STATE_TOPIC_NAME,
  TransactionStateManager,
} from "../../../src/server/coordinator/transaction/transaction-state-manager.js";
import { type Broker, createTopics, startBroker } from "../replication/replication-test-utils.js";

const TXN_PARTITIONS = 5;
const MAX_TIMEOUT = 900_000;
const ABORT_INTERVAL = 10_000;
// Shorter than Kafka's 7 days / 1 hour, so the mock clock does not tick through a week of periodic tasks.
const EXPIRATION_MS = 3600_000;
const EXPIRATION_CHECK_MS = 600_000;

let nextProducerId = 1000n;

function coordinatorOver(b: Broker, appendTxnMarkers?: AppendTxnMarkers): TransactionCoordinator {
  const manager = new TransactionStateManager(
    0,
    {
      transactionLogNumPartitions: TXN_PARTITIONS,
      transactionalIdExpirationMs: EXPIRATION_MS,
      removeExpiredTransactionalIdsIntervalMs: EXPIRATION_CHECK_MS,
      transactionLogLoadBufferSize: 5 * 1024 * 1024,
      requestTimeoutMs: 30_000,
    },
    b.replicaManager,
    b.time,
    b.scheduler,
  );
  const tc = new TransactionCoordinator(
    0,
    { transactionMaxTimeoutMs: MAX_TIMEOUT, abortTimedOutTransactionsIntervalMs: ABORT_INTERVAL },
    manager,
    async () => nextProducerId++,
    appendTxnMarkers ?? ((m) => b.replicaManager.appendTxnMarkers(m)),
    (topic) => b.replicaManager.allPartitions().some((p) => p.topic === topic),
    b.time,
    b.scheduler,
  );
  tc.startup();
  return tc;
}

async function elect(b: Broker, tc: TransactionCoordinator, epoch = 0): Promise<void> {
  for (let p = 0; p < TXN_PARTITIONS; p++) tc.onElection(p, epoch);
  await b.scheduler.tick(0);
}

async function setup(): Promise<{ b: Broker; tc: TransactionCoordinator }> {
  const b = startBroker();
  createTopics(b, { [TRANSACTION_STATE_TOPIC_NAME]: TXN_PARTITIONS, t: 3 });
  const tc = coordinatorOver(b);
  await elect(b, tc);
  return { b, tc };
}

/** A transactional producer's batch to t-<partition>. */
async function produceTxn(
  b: Broker,
  partition: number,
  producerId: bigint,
  producerEpoch: number,
  baseSequence: number,
  value: string,
): Promise<string> {
  const batch = buildRecordBatch({
    records: [{ key: null, value: Buffer.from(value) }],
    producerId,
    producerEpoch,
    baseSequence,
    isTransactional: true,
    timestamp: BigInt(b.time.milliseconds()),
  });
  const [r] = await b.replicaManager.appendRecords(5000, 1, [
    { topicPartition: { topic: "t", partition }, records: batch },
  ]);
  return r.error;
}

/** The control batches of a partition's log: [producerId, epoch, "COMMIT"|"ABORT", coordinatorEpoch]. */
function markers(b: Broker, topic: string, partition: number): Array<[bigint, number, string, number]> {
  const log = b.replicaManager.getPartition({ topic, partition })?.log;
  assert.ok(log);
  const read = log.read(log.logStartOffset, 1 << 20, "log-end", true);
  const out: Array<[bigint, number, string, number]> = [];
  for (const batch of decodeRecordBatches(read.records)) {
    if (!batch.header.isControl) continue;
    const r = batch.records[0];
    assert.ok(r.key !== null && r.value !== null);
    const type = r.key.readInt16BE(2) === 1 ? "COMMIT" : "ABORT";
    out.push([batch.header.producerId, batch.header.producerEpoch, type, r.value.readInt32BE(2)]);
  }
  return out;
}

/** The states written for a transactional id in __transaction_state, in order. */
function writtenStates(b: Broker, tc: TransactionCoordinator, txnId: string): string[] {
  const log = b.replicaManager.getPartition({
    topic: TRANSACTION_STATE_TOPIC_NAME,
    partition: tc.partitionFor(txnId),
  })?.log;
  assert.ok(log);
  const out: string[] = [];
  for (const batch of decodeRecordBatches(log.read(log.logStartOffset, 1 << 20, "log-end", true).records)) {
    for (const r of batch.records) {
      assert.ok(r.key !== null);
      if (readTransactionLogKeyRecord(r.key) !== txnId) continue;
      out.push(readTransactionLogValueRecord(txnId, r.value)?.state ?? "tombstone");
    }
  }
  return out;
}

test("init, add partitions, commit: markers in every partition, state in __transaction_state", async () => {
  const { b, tc } = await setup();
  try {
    const init = await tc.handleInitProducerId("tx-a", 60_000, undefined);
    assert.equal(init.error, ErrorCode.NONE);
    assert.equal(init.producerEpoch, 0);
    const pid = init.producerId;
    const again = await tc.handleInitProducerId("tx-a", 60_000, undefined);
    assert.deepEqual([again.error, again.producerId, again.producerEpoch], [ErrorCode.NONE, pid, 1]);

    const tps = [
      { topic: "t", partition: 0 },
      { topic: "t", partition: 2 },
    ];
    assert.equal(await tc.handleAddPartitionsToTransaction("tx-a", pid, 1, tps), ErrorCode.NONE);
    // Adding the same partitions again is answered without a write.
    assert.equal(await tc.handleAddPartitionsToTransaction("tx-a", pid, 1, tps.slice(0, 1)), ErrorCode.NONE);
    assert.equal(await produceTxn(b, 0, pid, 1, 0, "a0"), "NONE");
    assert.equal(await produceTxn(b, 2, pid, 1, 0, "a2"), "NONE");
    assert.equal(await tc.handleEndTransaction("tx-a", pid, 1, "COMMIT"), ErrorCode.NONE);
    await tc.idle();
    assert.deepEqual(markers(b, "t", 0), [[pid, 1, "COMMIT", 0]]);
    assert.deepEqual(markers(b, "t", 2), [[pid, 1, "COMMIT", 0]]);
    assert.deepEqual(markers(b, "t", 1), []);
    assert.equal(tc.describeTransaction("tx-a").metadata?.state, "CompleteCommit");
    assert.deepEqual(writtenStates(b, tc, "tx-a"), [
      "Empty",
      "Empty",
      "Ongoing",
      "PrepareCommit",
      "CompleteCommit",
    ]);
    // A retried EndTxn of the completed transaction succeeds; the other outcome is INVALID_TXN_STATE.
    assert.equal(await tc.handleEndTransaction("tx-a", pid, 1, "COMMIT"), ErrorCode.NONE);
    assert.equal(await tc.handleEndTransaction("tx-a", pid, 1, "ABORT"), ErrorCode.INVALID_TXN_STATE);

    // A second transaction, aborted.
    assert.equal(
      await tc.handleAddPartitionsToTransaction("tx-a", pid, 1, [{ topic: "t", partition: 1 }]),
      ErrorCode.NONE,
    );
    assert.equal(await produceTxn(b, 1, pid, 1, 0, "b1"), "NONE");
    assert.equal(await tc.handleEndTransaction("tx-a", pid, 1, "ABORT"), ErrorCode.NONE);
    await tc.idle();
    assert.deepEqual(markers(b, "t", 1), [[pid, 1, "ABORT", 0]]);
    assert.equal(tc.describeTransaction("tx-a").metadata?.state, "CompleteAbort");
  } finally {
    tc.shutdown();
    b.cleanup();
  }
});

test("errors: wrong epoch, wrong producer id, unknown id, nothing added, timeout above max, concurrent", async () => {
  const { b, tc } = await setup();
  try {
    assert.equal(
      (await tc.handleInitProducerId("tx-e", MAX_TIMEOUT + 1, undefined)).error,
      ErrorCode.INVALID_TRANSACTION_TIMEOUT,
    );
    assert.equal(
      (await tc.handleInitProducerId("tx-e", 0, undefined)).error,
      ErrorCode.INVALID_TRANSACTION_TIMEOUT,
    );
    assert.equal((await tc.handleInitProducerId("", 1000, undefined)).error, ErrorCode.INVALID_REQUEST);
    const tp = [{ topic: "t", partition: 0 }];
    assert.equal(
      await tc.handleAddPartitionsToTransaction("unknown", 5n, 0, tp),
      ErrorCode.INVALID_PRODUCER_ID_MAPPING,
    );
    assert.equal(
      await tc.handleEndTransaction("unknown", 5n, 0, "COMMIT"),
      ErrorCode.INVALID_PRODUCER_ID_MAPPING,
    );
    const { producerId: pid } = await tc.handleInitProducerId("tx-e", 60_000, undefined);
    // EndTxn with nothing added: Kafka's transaction version 1 answers INVALID_TXN_STATE for an Empty transaction.
    assert.equal(await tc.handleEndTransaction("tx-e", pid, 0, "COMMIT"), ErrorCode.INVALID_TXN_STATE);
    assert.equal(await tc.handleEndTransaction("tx-e", pid, 0, "ABORT"), ErrorCode.INVALID_TXN_STATE);
    assert.equal(await tc.handleAddPartitionsToTransaction("tx-e", pid, 3, tp), ErrorCode.PRODUCER_FENCED);
    assert.equal(
      await tc.handleAddPartitionsToTransaction("tx-e", pid + 1n, 0, tp),
      ErrorCode.INVALID_PRODUCER_ID_MAPPING,
    );
    assert.equal(await tc.handleAddPartitionsToTransaction("tx-e", pid, 0, tp), ErrorCode.NONE);
    assert.equal(await tc.handleEndTransaction("tx-e", pid, 1, "COMMIT"), ErrorCode.PRODUCER_FENCED);
    // While PrepareCommit is being written, the id answers CONCURRENT_TRANSACTIONS.
    const end = tc.handleEndTransaction("tx-e", pid, 0, "COMMIT");
    assert.equal(
      await tc.handleAddPartitionsToTransaction("tx-e", pid, 0, tp),
      ErrorCode.CONCURRENT_TRANSACTIONS,
    );
    assert.equal(await end, ErrorCode.NONE);
    await tc.idle();
  } finally {
    tc.shutdown();
    b.cleanup();
  }
});

test("while the markers are being written the transactional id answers CONCURRENT_TRANSACTIONS", async () => {
  const b = startBroker();
  createTopics(b, { [TRANSACTION_STATE_TOPIC_NAME]: TXN_PARTITIONS, t: 3 });
  let open: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const tc = coordinatorOver(b, async (m) => {
    await gate;
    return b.replicaManager.appendTxnMarkers(m);
  });
  await elect(b, tc);
  try {
    const { producerId: pid } = await tc.handleInitProducerId("tx-c", 60_000, undefined);
    const tp = [{ topic: "t", partition: 0 }];
    assert.equal(await tc.handleAddPartitionsToTransaction("tx-c", pid, 0, tp), ErrorCode.NONE);
    assert.equal(await tc.handleEndTransaction("tx-c", pid, 0, "COMMIT"), ErrorCode.NONE);
    assert.equal(tc.describeTransaction("tx-c").metadata?.state, "PrepareCommit");
    assert.equal(
      (await tc.handleInitProducerId("tx-c", 60_000, undefined)).error,
      ErrorCode.CONCURRENT_TRANSACTIONS,
    );
    assert.equal(
      await tc.handleAddPartitionsToTransaction("tx-c", pid, 0, tp),
      ErrorCode.CONCURRENT_TRANSACTIONS,
    );
    assert.equal(await tc.handleEndTransaction("tx-c", pid, 0, "COMMIT"), ErrorCode.CONCURRENT_TRANSACTIONS);
    open();
    await tc.idle();
    assert.equal(tc.describeTransaction("tx-c").metadata?.state, "CompleteCommit");
    assert.deepEqual(markers(b, "t", 0), [[pid, 0, "COMMIT", 0]]);
    const next = await tc.handleInitProducerId("tx-c", 60_000, undefined);
    assert.deepEqual([next.error, next.producerEpoch], [ErrorCode.NONE, 1]);
  } finally {
    tc.shutdown();
    b.cleanup();
  }
});

test("a new producer session fences the ongoing transaction: aborted under a bumped epoch", async () => {
  const { b, tc } = await setup();
  try {
    const { producerId: pid } = await tc.handleInitProducerId("tx-f", 60_000, undefined);
    assert.equal(
      await tc.handleAddPartitionsToTransaction("tx-f", pid, 0, [{ topic: "t", partition: 1 }]),
      ErrorCode.NONE,
    );
    assert.equal(await produceTxn(b, 1, pid, 0, 0, "zombie"), "NONE");
    const first = await tc.handleInitProducerId("tx-f", 60_000, undefined);
    assert.equal(first.error, ErrorCode.CONCURRENT_TRANSACTIONS);
    await tc.idle();
    assert.deepEqual(markers(b, "t", 1), [[pid, 1, "ABORT", 0]]);
    const retry = await tc.handleInitProducerId("tx-f", 60_000, undefined);
    assert.deepEqual([retry.error, retry.producerId, retry.producerEpoch], [ErrorCode.NONE, pid, 2]);
    // The zombie (epoch 0) is fenced at the coordinator and at the partition.
    assert.equal(
      await tc.handleAddPartitionsToTransaction("tx-f", pid, 0, [{ topic: "t", partition: 1 }]),
      ErrorCode.PRODUCER_FENCED,
    );
    assert.equal(await tc.handleEndTransaction("tx-f", pid, 0, "COMMIT"), ErrorCode.PRODUCER_FENCED);
    assert.equal(await produceTxn(b, 1, pid, 0, 1, "zombie2"), "INVALID_PRODUCER_EPOCH");
    assert.deepEqual(writtenStates(b, tc, "tx-f"), [
      "Empty",
      "Ongoing",
      "PrepareAbort",
      "CompleteAbort",
      "Empty",
    ]);
  } finally {
    tc.shutdown();
    b.cleanup();
  }
});

test("KIP-360: InitProducerId with the producer's id and epoch bumps once; a retry gets the same epoch", async () => {
  const { b, tc } = await setup();
  try {
    const { producerId: pid } = await tc.handleInitProducerId("tx-k", 60_000, undefined);
    const bump = await tc.handleInitProducerId("tx-k", 60_000, { producerId: pid, producerEpoch: 0 });
    assert.deepEqual([bump.error, bump.producerEpoch], [ErrorCode.NONE, 1]);
    const retried = await tc.handleInitProducerId("tx-k", 60_000, { producerId: pid, producerEpoch: 0 });
    assert.deepEqual([retried.error, retried.producerId, retried.producerEpoch], [ErrorCode.NONE, pid, 1]);
    assert.equal(
      (await tc.handleInitProducerId("tx-k", 60_000, { producerId: pid, producerEpoch: 7 })).error,
      ErrorCode.PRODUCER_FENCED,
    );
    assert.equal(
      (await tc.handleInitProducerId("tx-k", 60_000, { producerId: 99999n, producerEpoch: 1 })).error,
      ErrorCode.PRODUCER_FENCED,
    );
  } finally {
    tc.shutdown();
    b.cleanup();
  }
});

test("a transaction older than its timeout is aborted under a bumped epoch; the producer is fenced", async () => {
  const { b, tc } = await setup();
  try {
    const { producerId: pid } = await tc.handleInitProducerId("tx-t", 15_000, undefined);
    assert.equal(
      await tc.handleAddPartitionsToTransaction("tx-t", pid, 0, [{ topic: "t", partition: 0 }]),
      ErrorCode.NONE,
    );
    assert.equal(await produceTxn(b, 0, pid, 0, 0, "late"), "NONE");
    await b.scheduler.tick(ABORT_INTERVAL); // 10 s: not timed out yet
    assert.equal(tc.describeTransaction("tx-t").metadata?.state, "Ongoing");
    await b.scheduler.tick(ABORT_INTERVAL); // 20 s > 15 s
    await tc.idle();
    const m = tc.describeTransaction("tx-t").metadata;
    assert.equal(m?.state, "CompleteAbort");
    assert.equal(m?.producerEpoch, 1);
    assert.deepEqual(markers(b, "t", 0), [[pid, 1, "ABORT", 0]]);
    assert.equal(await tc.handleEndTransaction("tx-t", pid, 0, "COMMIT"), ErrorCode.PRODUCER_FENCED);
    assert.equal(
      await tc.handleAddPartitionsToTransaction("tx-t", pid, 0, [{ topic: "t", partition: 0 }]),
      ErrorCode.PRODUCER_FENCED,
    );
    const next = await tc.handleInitProducerId("tx-t", 15_000, undefined);
    assert.deepEqual([next.error, next.producerEpoch], [ErrorCode.NONE, 2]);
  } finally {
    tc.shutdown();
    b.cleanup();
  }
});

test("loading: COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR, and the state reloaded (a PrepareCommit completes)", async () => {
  const { b, tc } = await setup();
  try {
    const { producerId: pid } = await tc.handleInitProducerId("tx-r", 60_000, undefined);
    const { producerId: pid2 } = await tc.handleInitProducerId("tx-r2", 60_000, undefined);
    assert.equal(
      await tc.handleAddPartitionsToTransaction("tx-r2", pid2, 0, [{ topic: "t", partition: 2 }]),
      ErrorCode.NONE,
    );
    assert.equal(await produceTxn(b, 2, pid2, 0, 0, "pending"), "NONE");
    tc.shutdown();

    // A coordinator whose marker writes fail leaves tx-r2 in PrepareCommit on disk.
    const failing = coordinatorOver(b, async (ms) =>
      ms.map((m) => ({
        producerId: m.producerId,
        results: m.partitions.map((tp) => ({
          topicPartition: tp,
          errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER,
        })),
      })),
    );
    await elect(b, failing, 1);
    assert.equal(await failing.handleEndTransaction("tx-r2", pid2, 0, "COMMIT"), ErrorCode.NONE);
    await b.scheduler.tick(0);
    assert.deepEqual(markers(b, "t", 2), []);
    for (let p = 0; p < TXN_PARTITIONS; p++) failing.onResignation(p);
    await b.scheduler.tick(200);
    await failing.idle();
    failing.shutdown();

    const fresh = coordinatorOver(b);
    assert.equal(
      (await fresh.handleInitProducerId("tx-r", 60_000, undefined)).error,
      ErrorCode.NOT_COORDINATOR,
    );
    for (let p = 0; p < TXN_PARTITIONS; p++) fresh.onElection(p, 2);
    assert.equal(
      (await fresh.handleInitProducerId("tx-r", 60_000, undefined)).error,
      ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    );
    await b.scheduler.tick(0);
    await fresh.idle();
    assert.deepEqual(markers(b, "t", 2), [[pid2, 0, "COMMIT", 2]]);
    assert.equal(fresh.describeTransaction("tx-r2").metadata?.state, "CompleteCommit");
    const again = await fresh.handleInitProducerId("tx-r", 60_000, undefined);
    assert.deepEqual([again.error, again.producerId, again.producerEpoch], [ErrorCode.NONE, pid, 1]);
    const listed = fresh.listTransactions([], [], -1n);
    assert.deepEqual(listed.transactions.map((t) => t.transactionalId).sort(), ["tx-r", "tx-r2"]);
    assert.deepEqual(
      fresh.listTransactions(["CompleteCommit"], [], -1n).transactions.map((t) => t.transactionalId),
      ["tx-r2"],
    );
    fresh.shutdown();
  } finally {
    b.cleanup();
  }
});

test("transactional ids idle for transactional.id.expiration.ms are removed with a tombstone", async () => {
  const { b, tc } = await setup();
  try {
    await tc.handleInitProducerId("tx-x", 60_000, undefined);
    await b.scheduler.tick(EXPIRATION_MS - EXPIRATION_CHECK_MS);
    assert.equal(tc.describeTransaction("tx-x").error, ErrorCode.NONE);
    await b.scheduler.tick(EXPIRATION_CHECK_MS);
    assert.equal(tc.describeTransaction("tx-x").error, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND);
    assert.deepEqual(writtenStates(b, tc, "tx-x"), ["Empty", "tombstone"]);
    tc.shutdown();
    const fresh = coordinatorOver(b);
    await elect(b, fresh, 1);
    assert.equal(fresh.describeTransaction("tx-x").error, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND);
    fresh.shutdown();
  } finally {
    b.cleanup();
  }
});
