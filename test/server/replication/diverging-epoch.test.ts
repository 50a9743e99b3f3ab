// Issue 17, KIP-595's DivergingEpoch between brokers (Fetch v12+), on the leader's side and on real logs
// (segment files and leader-epoch-checkpoint in a temp dir): the decision itself
// (validateFetchOffsetAgainstEpoch) for a leader whose log holds epochs 0, 2 and 4, and the Fetch handler
// answering a follower's fetch with DivergingEpoch and no records, at once, without taking the diverging
// fetch offset as the follower's log end, and keeping the answer in an incremental session's response.

import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrorCode } from "../../../src/protocol/errors.js";
import {
  defaultFetchPartition,
  defaultFetchRequest,
  defaultFetchTopic,
  type FetchRequest,
} from "../../../src/protocol/generated/messages/FetchRequest.js";
import {
  type FetchResponse,
  readFetchResponse,
  writeFetchResponse,
} from "../../../src/protocol/generated/messages/FetchResponse.js";
import { fetchHandler } from "../../../src/server/handlers/01-fetch.js";
import { validateFetchOffsetAgainstEpoch } from "../../../src/server/replication/diverging-epoch.js";
import { ZERO_UUID } from "../../../src/server/replication/fetch-session.js";
import { type Broker, call, leaderState, records, roundTrip, startBroker } from "./replication-test-utils.js";

const TOPIC = "diverge";
const FOLLOWER = 1;

/** A leader of diverge-0 (replicas 0 and 1) whose log holds epoch 0 at 0–2, epoch 2 at 3–5, epoch 4 at 6–7. */
function leaderWithEpochs(): Broker {
  const b = startBroker();
  for (const [epoch, count] of [
    [0, 3],
    [2, 3],
    [4, 2],
  ]) {
    b.replicaManager.becomeLeaderOrFollower([
      leaderState(TOPIC, 0, { leaderEpoch: epoch, replicas: [0, FOLLOWER], isr: [0, FOLLOWER] }),
    ]);
    b.replicaManager.getPartition({ topic: TOPIC, partition: 0 })!.appendRecordsToLeader(records(count), 1);
  }
  return b;
}

function logOf(b: Broker) {
  const log = b.replicaManager.getPartition({ topic: TOPIC, partition: 0 })?.log;
  assert.ok(log);
  return log;
}

test("the leader's decision on its own log: agree, diverge (ending earlier / unknown epoch), out of range", () => {
  const b = leaderWithEpochs();
  try {
    const log = logOf(b);
    assert.deepEqual(
      log.leaderEpochCache?.epochEntries().map((e) => [e.epoch, e.startOffset]),
      [
        [0, 0n],
        [2, 3n],
        [4, 6n],
      ],
    );
    assert.equal(log.logEndOffset, 8n);
    const check = (offset: bigint, epoch: number) => validateFetchOffsetAgainstEpoch(log, offset, epoch);
    assert.deepEqual(check(5n, -1), { kind: "ok" }, "no last fetched epoch: nothing to check");
    assert.deepEqual(check(6n, 2), { kind: "ok" }, "epoch 2 ends at 6 on the leader too");
    assert.deepEqual(check(4n, 2), { kind: "ok" }, "a follower behind within the epoch");
    assert.deepEqual(check(8n, 4), { kind: "ok" }, "caught up in the current epoch");
    // The follower holds epoch 2 past where the leader ended it.
    assert.deepEqual(check(7n, 2), { kind: "diverging", epoch: 2, endOffset: 6n });
    // Epoch 1 was never the leader's: its largest epoch below is 0, ending at 3.
    assert.deepEqual(check(5n, 1), { kind: "diverging", epoch: 0, endOffset: 3n });
    // Past the leader's log end in the current epoch.
    assert.deepEqual(check(9n, 4), { kind: "diverging", epoch: 4, endOffset: 8n });
    // An epoch above every epoch the leader knows cannot be placed.
    assert.equal(check(8n, 5).kind, "out-of-range");
  } finally {
    b.cleanup();
  }
});

function followerFetch(
  offset: bigint,
  lastFetchedEpoch: number,
  session: { id: number; epoch: number } = { id: 0, epoch: -1 },
  withPartition = true,
): FetchRequest {
  return {
    ...defaultFetchRequest(),
    replicaId: FOLLOWER,
    maxWaitMs: 10_000, // a diverging partition must not wait for it
    minBytes: 1 << 20,
    maxBytes: 1 << 20,
    sessionId: session.id,
    sessionEpoch: session.epoch,
    topics: withPartition
      ? [
          {
            ...defaultFetchTopic(),
            topic: TOPIC,
            topicId: ZERO_UUID,
            partitions: [
              {
                ...defaultFetchPartition(),
                partition: 0,
                fetchOffset: offset,
                lastFetchedEpoch,
                currentLeaderEpoch: 4,
                partitionMaxBytes: 1 << 20,
              },
            ],
          },
        ]
      : [],
  };
}

async function fetch(b: Broker, req: FetchRequest): Promise<FetchResponse> {
  const res = await call<FetchRequest, FetchResponse>(fetchHandler(b.services), 12, req);
  return roundTrip(writeFetchResponse, readFetchResponse, res, 12);
}

test("Fetch v12 from a follower: DivergingEpoch, no records, no wait, follower LEO not taken", async () => {
  const b = leaderWithEpochs();
  try {
    const partition = b.replicaManager.getPartition({ topic: TOPIC, partition: 0 })!;
    const res = await fetch(b, followerFetch(7n, 2));
    assert.equal(res.errorCode, ErrorCode.NONE);
    const p = res.responses[0].partitions[0];
    assert.equal(p.errorCode, ErrorCode.NONE);
    assert.deepEqual(p.divergingEpoch, { epoch: 2, endOffset: 6n });
    assert.equal(p.records?.length ?? 0, 0);
    assert.equal(
      partition.remoteReplicaState(FOLLOWER)?.logEndOffset,
      -1n,
      "offset 7 is not the follower's LEO",
    );

    // Agreeing epochs read as usual (and the fetch offset becomes the follower's LEO).
    const ok = await fetch(b, { ...followerFetch(6n, 2), minBytes: 1 });
    const q = ok.responses[0].partitions[0];
    assert.deepEqual(q.divergingEpoch, { epoch: -1, endOffset: -1n });
    assert.ok((q.records?.length ?? 0) > 0);
    assert.equal(partition.remoteReplicaState(FOLLOWER)?.logEndOffset, 6n);

    // Unplaceable epoch: OFFSET_OUT_OF_RANGE with the leader's real log start.
    const oor = await fetch(b, followerFetch(8n, 5));
    assert.equal(oor.responses[0].partitions[0].errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
    assert.equal(oor.responses[0].partitions[0].logStartOffset, 0n);
  } finally {
    b.cleanup();
  }
});

test("in an incremental fetch session the diverging partition is answered every time", async () => {
  const b = leaderWithEpochs();
  try {
    const full = await fetch(b, followerFetch(7n, 2, { id: 0, epoch: 0 }));
    assert.notEqual(full.sessionId, 0, "a follower's full fetch creates a session");
    assert.deepEqual(full.responses[0].partitions[0].divergingEpoch, { epoch: 2, endOffset: 6n });
    // Nothing changed in the request (no partitions named), the same HW: still sent, with its DivergingEpoch.
    const inc = await fetch(b, followerFetch(7n, 2, { id: full.sessionId, epoch: 1 }, false));
    assert.equal(inc.errorCode, ErrorCode.NONE);
    assert.equal(inc.sessionId, full.sessionId);
    assert.equal(inc.responses.length, 1);
    assert.deepEqual(inc.responses[0].partitions[0].divergingEpoch, { epoch: 2, endOffset: 6n });
  } finally {
    b.cleanup();
  }
});
