// TxnOffsetCommit in the group coordinator, over a real ReplicaManager: offsets written in a producer's
// transaction stay pending (OffsetFetch answers -1, or UNSTABLE_OFFSET_COMMIT with require_stable) until
// the transaction's marker reaches __consumer_offsets — COMMIT makes them the group's offsets, ABORT drops
// them — and a fresh coordinator replaying the partition from the log (transactional batches and markers)
// ends with the same committed offsets and the same still-open transaction.

import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrorCode } from "../../../src/protocol/errors.js";
import type { GroupCoordinator } from "../../../src/server/coordinator/group/group-coordinator.js";
import { type CommittedOffset, offsetKey } from "../../../src/server/coordinator/group/group-metadata.js";
import { type Broker, createTopics, startBroker } from "../replication/replication-test-utils.js";
import { coordinatorOver, electAll } from "./group-coordinator-support.js";

const PARTITIONS = 3;
const SETTINGS = { partitions: PARTITIONS, offsetsRetentionMs: 86_400_000, initialRebalanceDelayMs: 0 };

const at = (n: bigint): CommittedOffset => ({
  offset: n,
  leaderEpoch: -1,
  metadata: "",
  commitTimestamp: 0n,
  expireTimestamp: null,
});

async function setup(): Promise<{ b: Broker; gc: GroupCoordinator }> {
  const b = startBroker();
  createTopics(b, { __consumer_offsets: PARTITIONS, t: 2 });
  const gc = coordinatorOver(b, SETTINGS);
  await electAll(b, gc, PARTITIONS);
  return { b, gc };
}

/** What the transaction coordinator does at EndTxn for the group's partition: the marker, then the hook. */
async function endTxn(
  b: Broker,
  gc: GroupCoordinator,
  groupId: string,
  producerId: bigint,
  committed: boolean,
) {
  const partition = gc.partitionFor(groupId);
  const [r] = await b.replicaManager.appendTxnMarkers([
    {
      producerId,
      producerEpoch: 0,
      coordinatorEpoch: 0,
      committed,
      partitions: [{ topic: "__consumer_offsets", partition }],
    },
  ]);
  assert.equal(r.results[0].errorCode, ErrorCode.NONE);
  gc.onTransactionCompleted(partition, producerId, committed);
}

const fetch = (gc: GroupCoordinator, groupId: string, requireStable = false) =>
  gc.fetchOffsets(groupId, [{ topic: "t", partition: 0 }], undefined, requireStable).partitions[0];

test("transactional offsets are pending until COMMIT, dropped on ABORT, and replayed from the log", async (t) => {
  const { b, gc } = await setup();
  t.after(() => b.cleanup());
  const k = offsetKey("t", 0);
  const r1 = await gc.commitTransactionalOffsets("g", 1000n, 0, "", null, -1, new Map([[k, at(5n)]]));
  assert.equal(r1.get(k), ErrorCode.NONE);
  assert.equal(fetch(gc, "g").offset, -1n, "not visible before the marker");
  assert.equal(fetch(gc, "g", true).errorCode, ErrorCode.UNSTABLE_OFFSET_COMMIT);
  await endTxn(b, gc, "g", 1000n, true);
  assert.equal(fetch(gc, "g").offset, 5n);
  assert.equal(fetch(gc, "g", true).errorCode, ErrorCode.NONE);

  // An aborted transaction leaves the committed offset alone.
  await gc.commitTransactionalOffsets("g", 1001n, 0, "", null, -1, new Map([[k, at(9n)]]));
  await endTxn(b, gc, "g", 1001n, false);
  assert.equal(fetch(gc, "g").offset, 5n);

  // A transaction still open when the coordinator moves: pending again after the replay.
  await gc.commitTransactionalOffsets("g", 1002n, 0, "", null, -1, new Map([[k, at(12n)]]));
  gc.shutdown();
  const again = coordinatorOver(b, SETTINGS);
  await electAll(b, again, PARTITIONS);
  assert.equal(fetch(again, "g").offset, 5n, "COMMIT replayed, ABORT dropped");
  assert.equal(
    fetch(again, "g", true).errorCode,
    ErrorCode.UNSTABLE_OFFSET_COMMIT,
    "the open one is pending",
  );
  await endTxn(b, again, "g", 1002n, true);
  assert.equal(fetch(again, "g").offset, 12n);
});

test("member and generation (v3+) are checked as for OffsetCommit", async (t) => {
  const { b, gc } = await setup();
  t.after(() => b.cleanup());
  const k = offsetKey("t", 1);
  const offsets = new Map([[k, at(1n)]]);
  assert.equal(
    (await gc.commitTransactionalOffsets("g2", 7n, 0, "nobody", null, 1, offsets)).get(k),
    ErrorCode.UNKNOWN_MEMBER_ID,
  );
  assert.equal(
    (await gc.commitTransactionalOffsets("", 7n, 0, "", null, -1, offsets)).get(k),
    ErrorCode.NONE,
    "the empty group id is accepted, as for OffsetCommit",
  );
});
