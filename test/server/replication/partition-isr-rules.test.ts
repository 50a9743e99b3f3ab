// Kafka's ISR rules on one leader, driven directly (issue 31): the caught-up rule with the log end of the
// follower's previous fetch, the maximal ISR for the high watermark while an expansion is pending, one ISR
// change in flight, the answers and errors of AlterPartition, LeaderAndIsr at an equal leader epoch changing
// nothing, and the AlterPartitionManager sending a change again until it is answered.

import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrorCode } from "../../../src/protocol/errors.js";
import type {
  AlterPartitionItem,
  AlterPartitionResult,
} from "../../../src/server/replication/alter-partition-manager.js";
import {
  ALTER_PARTITION_RETRY_BACKOFF_MS,
  AlterPartitionManager,
} from "../../../src/server/replication/alter-partition-manager.js";
import type { Partition } from "../../../src/server/replication/partition.js";
import {
  CommittedPartitionState,
  PendingExpandIsr,
  PendingShrinkIsr,
} from "../../../src/server/replication/partition-isr-state.js";
import type { FetchParams } from "../../../src/server/replication/replica-manager.js";
import {
  BROKER_ID,
  type Broker,
  flushMicrotasks,
  leaderState,
  records,
  startBroker,
} from "./replication-test-utils.js";

const LAG_MS = 1000;
const tp = { topic: "t", partition: 0 };

function leaderOf(b: Broker, replicas: number[], isr: number[], leaderEpoch = 0): Partition {
  b.replicaManager.becomeLeaderOrFollower([leaderState("t", 0, { replicas, isr, leaderEpoch })]);
  const p = b.replicaManager.getPartition(tp);
  assert.ok(p?.isLeader);
  return p;
}

const followerFetch = (b: Broker, replicaId: number, fetchOffset: bigint, leaderEpoch = 0): void => {
  const params: FetchParams = {
    replicaId,
    maxWaitMs: 0,
    minBytes: 1,
    maxBytes: 1 << 20,
    isolation: "log-end",
    fetchOnlyFromLeader: true,
  };
  b.replicaManager.readFromLocalLog(params, [
    {
      topicPartition: tp,
      fetchOffset,
      currentLeaderEpoch: leaderEpoch,
      logStartOffset: 0n,
      partitionMaxBytes: 1 << 20,
    },
  ]);
};

const append = async (b: Broker, n: number): Promise<void> => {
  void b.replicaManager.appendRecords(30_000, 1, [{ topicPartition: tp, records: records(n) }]);
  await flushMicrotasks();
};

test("a follower one fetch behind under steady appends stays in sync: it reached the log end of its previous fetch", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  const p = leaderOf(b, [BROKER_ID, 1], [BROKER_ID, 1]);
  // Every round: the leader appends, then the follower fetches from where the leader's log ended at its
  // previous fetch — it never reaches the log end of *now*, as with latency between the brokers.
  let previousEnd = 0n;
  for (let round = 0; round < 20; round++) {
    await append(b, 5);
    b.time.sleep(300);
    followerFetch(b, 1, previousEnd);
    previousEnd = p.log!.logEndOffset;
    await append(b, 5);
  }
  assert.ok(p.log!.logEndOffset > 0n);
  assert.notEqual(p.remoteReplicaState(1)?.logEndOffset, p.log!.logEndOffset);
  // 6 s without ever being at the leader's log end, yet caught up as of each previous fetch.
  assert.deepEqual(p.outOfSyncReplicas(LAG_MS), []);
  assert.equal(p.maybeShrinkIsr(LAG_MS), undefined);
  // A follower that stops fetching is out of sync once the lag time has passed since its last catch-up.
  b.time.sleep(LAG_MS + 1);
  await append(b, 1);
  assert.deepEqual(p.outOfSyncReplicas(LAG_MS), [1]);
});

test("a follower that falls behind the previous fetch's log end is not counted caught up", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  const p = leaderOf(b, [BROKER_ID, 1], [BROKER_ID, 1]);
  await append(b, 10);
  followerFetch(b, 1, 0n);
  // Each fetch lands below the log end the leader had at the previous one.
  for (let round = 0; round < 5; round++) {
    b.time.sleep(400);
    await append(b, 10);
    followerFetch(b, 1, BigInt(round + 1));
  }
  assert.deepEqual(p.outOfSyncReplicas(LAG_MS), [1]);
});

test("while an expansion is pending the high watermark waits for the new member (the maximal ISR)", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  const p = leaderOf(b, [BROKER_ID, 1, 2], [BROKER_ID, 1]);
  await append(b, 10);
  followerFetch(b, 1, 10n);
  assert.equal(p.log!.highWatermark, 10n);
  // Broker 2 catches up: the leader proposes [0,1,2] and, until the answer, counts 2 for the HW.
  followerFetch(b, 2, 10n);
  const proposal = p.maybeExpandIsr(2);
  assert.deepEqual(proposal, { leaderEpoch: 0, newIsr: [BROKER_ID, 1, 2], partitionEpoch: 0 });
  assert.ok(p.isrState instanceof PendingExpandIsr);
  assert.deepEqual(p.isr, [BROKER_ID, 1], "the committed ISR is unchanged");
  assert.deepEqual(p.maximalIsr, [BROKER_ID, 1, 2]);
  await append(b, 5);
  followerFetch(b, 1, 15n);
  assert.equal(p.log!.highWatermark, 10n, "not past the log end of the member being added");
  followerFetch(b, 2, 15n);
  assert.equal(p.log!.highWatermark, 15n);
  // The controller commits it.
  assert.ok(p.handleAlterPartitionUpdate(p.isrState as PendingExpandIsr, 0, [BROKER_ID, 1, 2], 1));
  assert.ok(p.isrState instanceof CommittedPartitionState);
  assert.deepEqual(p.isr, [BROKER_ID, 1, 2]);
  assert.equal(p.zkVersion, 1);
});

test("one ISR change in flight: nothing more is proposed until the answer", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  const p = leaderOf(b, [BROKER_ID, 1, 2], [BROKER_ID, 1]);
  await append(b, 3);
  followerFetch(b, 1, 3n);
  followerFetch(b, 2, 3n);
  assert.ok(p.maybeExpandIsr(2));
  const pending = p.isrState;
  // Broker 1 stops fetching past the lag time: no shrink while the expansion is pending.
  b.time.sleep(LAG_MS + 1);
  await append(b, 1);
  assert.deepEqual(p.outOfSyncReplicas(LAG_MS), [1]);
  assert.equal(p.maybeShrinkIsr(LAG_MS), undefined);
  assert.equal(p.maybeExpandIsr(2), undefined);
  assert.equal(p.isrState, pending);
  // Refused as ineligible: back to the last committed state, and the shrink can be proposed.
  assert.equal(p.handleAlterPartitionError(pending as PendingExpandIsr, "INELIGIBLE_REPLICA"), false);
  assert.ok(p.isrState instanceof CommittedPartitionState);
  assert.deepEqual(p.maybeShrinkIsr(LAG_MS)?.newIsr, [BROKER_ID]);
  assert.ok(p.isrState instanceof PendingShrinkIsr);
  // During a pending shrink the HW still waits for the replica being removed.
  assert.deepEqual(p.maximalIsr, [BROKER_ID, 1]);
});

test("AlterPartition answers: stale ones ignored, a repeat at the same partition epoch commits, errors keep or reset the state", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  const p = leaderOf(b, [BROKER_ID, 1], [BROKER_ID, 1]);
  b.time.sleep(LAG_MS + 1);
  await append(b, 1);
  const first = p.maybeShrinkIsr(LAG_MS);
  assert.deepEqual(first, { leaderEpoch: 0, newIsr: [BROKER_ID], partitionEpoch: 0 });
  const pending = p.isrState as PendingShrinkIsr;
  // Errors that say this leader's view is stale keep the change pending (no retry); others are retried.
  assert.equal(p.handleAlterPartitionError(pending, "INVALID_UPDATE_VERSION"), false);
  assert.equal(p.isrState, pending);
  assert.equal(p.handleAlterPartitionError(pending, "NOT_CONTROLLER"), true);
  assert.equal(p.handleAlterPartitionError(pending, "REQUEST_TIMED_OUT"), true);
  // An answer with another leader epoch or an older partition epoch is ignored.
  assert.equal(p.handleAlterPartitionUpdate(pending, 1, [BROKER_ID], 1), false);
  assert.equal(p.isrState, pending);
  // The controller's answer to a repeat of an applied change: same partition epoch as held is committed too.
  assert.equal(p.handleAlterPartitionUpdate(pending, 0, [BROKER_ID], 0), true);
  assert.deepEqual(p.isr, [BROKER_ID]);
  // An answer for a state that is no longer the current one changes nothing.
  assert.equal(p.handleAlterPartitionUpdate(pending, 0, [BROKER_ID, 1], 5), false);
  assert.deepEqual(p.isr, [BROKER_ID]);
});

test("LeaderAndIsr at the current leader epoch changes nothing; a newer epoch replaces the state and ends a pending change", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  const p = leaderOf(b, [BROKER_ID, 1], [BROKER_ID, 1], 4);
  b.time.sleep(LAG_MS + 1);
  await append(b, 1);
  p.maybeShrinkIsr(LAG_MS);
  assert.ok(p.handleAlterPartitionUpdate(p.isrState as PendingShrinkIsr, 4, [BROKER_ID], 7));
  // The controller's LeaderAndIsr from before the change, replayed (a failover or a retried send).
  const replay = b.replicaManager.becomeLeaderOrFollower([
    leaderState("t", 0, { replicas: [BROKER_ID, 1], isr: [BROKER_ID, 1], leaderEpoch: 4 }),
  ]);
  assert.equal(replay.get("t-0")?.errorCode, ErrorCode.STALE_CONTROLLER_EPOCH);
  assert.equal(replay.get("t-0")?.ignored, true);
  assert.deepEqual(p.isr, [BROKER_ID]);
  assert.equal(p.zkVersion, 7);
  // A pending change is ended by a new leader epoch.
  followerFetch(b, 1, 1n, 4);
  assert.ok(p.maybeExpandIsr(1));
  const newer = b.replicaManager.becomeLeaderOrFollower([
    leaderState("t", 0, { replicas: [BROKER_ID, 1], isr: [BROKER_ID, 1], leaderEpoch: 5 }),
  ]);
  assert.equal(newer.get("t-0")?.errorCode, ErrorCode.NONE);
  assert.ok(p.isrState instanceof CommittedPartitionState);
  assert.deepEqual(p.isr, [BROKER_ID, 1]);
  assert.equal(p.leaderEpoch, 5);
});

test("AlterPartitionManager sends a change again until it is answered, and drops it once the leader epoch moved on", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  const p = leaderOf(b, [BROKER_ID, 1, 2], [BROKER_ID, 1, 2]);
  const sent: AlterPartitionItem[][] = [];
  // The controller as the local controller target: the first request fails as a timeout would, the second
  // answers NOT_CONTROLLER for the partition, the third applies it.
  const answers: Array<(items: AlterPartitionItem[]) => Promise<AlterPartitionResult[]>> = [
    () => Promise.reject(new Error("request timed out")),
    (items) =>
      Promise.resolve(
        items.map((i) => ({
          ...i,
          errorCode: ErrorCode.NOT_CONTROLLER,
          isr: [],
          leaderEpoch: -1,
          partitionEpoch: -1,
        })),
      ),
    (items) =>
      Promise.resolve(
        items.map((i) => ({ ...i, errorCode: ErrorCode.NONE, isr: [...i.newIsr], partitionEpoch: 1 })),
      ),
  ];
  const manager = new AlterPartitionManager(
    BROKER_ID,
    () => 5n,
    b.replicaManager,
    {
      local: () => (_id, _epoch, items) => {
        sent.push(items);
        const answer = answers.shift();
        return answer ? answer(items) : Promise.reject(new Error("no answer"));
      },
      controllerId: () => BROKER_ID,
      endpointOf: () => undefined,
    },
    b.scheduler,
    LAG_MS,
    1000,
  );
  manager.startup();
  t.after(() => manager.shutdown());
  await append(b, 2);
  followerFetch(b, 1, 2n);
  b.time.sleep(LAG_MS + 1);
  await append(b, 1);
  followerFetch(b, 1, 3n);
  await b.scheduler.tick(LAG_MS / 2);
  await flushMicrotasks();
  assert.equal(sent.length, 1);
  assert.deepEqual(sent[0][0].newIsr, [BROKER_ID, 1]);
  assert.ok(p.isrState instanceof PendingShrinkIsr);
  await b.scheduler.tick(ALTER_PARTITION_RETRY_BACKOFF_MS);
  await flushMicrotasks();
  assert.equal(sent.length, 2, "sent again after the failure");
  await b.scheduler.tick(ALTER_PARTITION_RETRY_BACKOFF_MS);
  await flushMicrotasks();
  assert.equal(sent.length, 3, "sent again after NOT_CONTROLLER");
  assert.deepEqual(p.isr, [BROKER_ID, 1]);
  assert.equal(p.zkVersion, 1);
  assert.equal(manager.pendingCount, 0);

  // A change whose leader epoch moved on while it failed is not sent again (broker 1 stops fetching).
  b.time.sleep(LAG_MS + 1);
  await append(b, 1);
  await b.scheduler.tick(LAG_MS / 2);
  await flushMicrotasks();
  assert.equal(sent.length, 4);
  b.replicaManager.becomeLeaderOrFollower([
    leaderState("t", 0, { replicas: [BROKER_ID, 1, 2], isr: [BROKER_ID, 1], leaderEpoch: 1 }),
  ]);
  await b.scheduler.tick(ALTER_PARTITION_RETRY_BACKOFF_MS * 4);
  await flushMicrotasks();
  assert.equal(sent.length, 4);
  assert.equal(manager.pendingCount, 0);
});
