// Issue 17, fetch sessions between brokers (KIP-227), the follower's side: FetchSessionHandler's request
// building (full first, then incremental requests naming only added/changed partitions and forgetting the
// removed ones; epochs; back to a full fetch on FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH,
// a transport error or a response that does not match the session), its requests answered by a real
// leader's Fetch handler (a replica's session, and incremental responses holding only partitions with
// records or changed offsets), and Kafka's getFetcherId with Java's String.hashCode.

import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrorCode } from "../../../src/protocol/errors.js";
import {
  defaultFetchPartition,
  defaultFetchRequest,
  type FetchRequest,
} from "../../../src/protocol/generated/messages/FetchRequest.js";
import {
  type FetchResponse,
  readFetchResponse,
  writeFetchResponse,
} from "../../../src/protocol/generated/messages/FetchResponse.js";
import { fetchHandler } from "../../../src/server/handlers/01-fetch.js";
import { ZERO_UUID } from "../../../src/server/replication/fetch-session.js";
import {
  FetchSessionHandler,
  type SessionFetchRequest,
  type SessionPartitionData,
} from "../../../src/server/replication/fetch-session-handler.js";
import { getFetcherId, javaStringHashCode } from "../../../src/server/replication/fetcher-id.js";
import { call, leaderState, records, roundTrip, startBroker } from "./replication-test-utils.js";

const pd = (topic: string, partition: number, fetchOffset: bigint): SessionPartitionData => ({
  topic,
  partition,
  fetchOffset,
  currentLeaderEpoch: 3,
  lastFetchedEpoch: 2,
  logStartOffset: 0n,
  partitionMaxBytes: 1 << 20,
});

const names = (r: SessionFetchRequest) => r.toSend.map((p) => `${p.topic}-${p.partition}@${p.fetchOffset}`);

const resp = (errorCode: number, sessionId: number, parts: Array<[string, number]>) => ({
  errorCode,
  sessionId,
  responses: parts.map(([topic, p]) => ({ topic, partitions: [{ partitionIndex: p }] })),
});

test("full fetch first, then incremental requests with only the changes", () => {
  const h = new FetchSessionHandler(0);
  const first = h.build([pd("a", 0, 0n), pd("a", 1, 0n), pd("b", 0, 5n)]);
  assert.deepEqual([first.sessionId, first.sessionEpoch, first.isFull], [0, 0, true]);
  assert.deepEqual(names(first), ["a-0@0", "a-1@0", "b-0@5"]);
  assert.equal(
    h.handleResponse(
      resp(0, 77, [
        ["a", 0],
        ["a", 1],
        ["b", 0],
      ]),
    ),
    true,
  );

  // a-0 advanced, a-1 unchanged, b-0 gone, c-0 new.
  const second = h.build([pd("a", 0, 10n), pd("a", 1, 0n), pd("c", 0, 0n)]);
  assert.deepEqual([second.sessionId, second.sessionEpoch, second.isFull], [77, 1, false]);
  assert.deepEqual(names(second), ["a-0@10", "c-0@0"]);
  assert.deepEqual(second.forgotten, [{ topic: "b", partition: 0 }]);
  // An incremental response names only partitions with news.
  assert.equal(h.handleResponse(resp(0, 77, [["c", 0]])), true);

  const third = h.build([pd("a", 0, 10n), pd("a", 1, 0n), { ...pd("c", 0, 0n), lastFetchedEpoch: 3 }]);
  assert.deepEqual([third.sessionEpoch, names(third), third.forgotten], [2, ["c-0@0"], []]);
  assert.equal(h.handleResponse(resp(0, 77, [])), true);
  assert.equal(
    h.build([pd("a", 0, 10n), pd("a", 1, 0n), { ...pd("c", 0, 0n), lastFetchedEpoch: 3 }]).toSend.length,
    0,
  );
});

test("session errors, transport errors and mismatched responses lead back to a full fetch", () => {
  const parts = [pd("a", 0, 0n), pd("a", 1, 0n)];
  const start = (): FetchSessionHandler => {
    const h = new FetchSessionHandler(0);
    h.build(parts);
    assert.ok(
      h.handleResponse(
        resp(0, 9, [
          ["a", 0],
          ["a", 1],
        ]),
      ),
    );
    assert.equal(h.build(parts).sessionEpoch, 1);
    return h;
  };
  // Unknown session: a new one (id 0, epoch 0).
  let h = start();
  assert.equal(h.handleResponse(resp(ErrorCode.FETCH_SESSION_ID_NOT_FOUND, 0, [])), false);
  let r = h.build(parts);
  assert.deepEqual([r.sessionId, r.sessionEpoch, r.isFull, r.toSend.length], [0, 0, true, 2]);
  // Wrong epoch: a full fetch closing the old session (its id, epoch 0).
  h = start();
  assert.equal(h.handleResponse(resp(ErrorCode.INVALID_FETCH_SESSION_EPOCH, 0, [])), false);
  r = h.build(parts);
  assert.deepEqual([r.sessionId, r.sessionEpoch, r.isFull, r.toSend.length], [9, 0, true, 2]);
  // No response at all.
  h = start();
  h.handleError();
  assert.deepEqual([h.build(parts).sessionId, h.build(parts).sessionEpoch], [9, 0]);
  // An incremental response naming a partition outside the session.
  h = start();
  assert.equal(h.handleResponse(resp(0, 9, [["zz", 0]])), false);
  assert.equal(h.build(parts).sessionEpoch, 0);
  // A full response that omits a requested partition: no session.
  h = new FetchSessionHandler(0);
  h.build(parts);
  assert.equal(h.handleResponse(resp(0, 5, [["a", 0]])), false);
  assert.deepEqual([h.build(parts).sessionId, h.build(parts).sessionEpoch], [0, 0]);
  // The leader made no session: full fetches from then on.
  h = new FetchSessionHandler(0);
  h.build(parts);
  assert.ok(
    h.handleResponse(
      resp(0, 0, [
        ["a", 0],
        ["a", 1],
      ]),
    ),
  );
  assert.equal(h.build(parts).isFull, true);
});

test("a real leader serves the follower's session: incremental responses carry only what changed", async () => {
  const b = startBroker();
  try {
    const states = [0, 1, 2].map((p) =>
      leaderState("s", p, { leaderEpoch: 3, replicas: [0, 1], isr: [0, 1] }),
    );
    b.replicaManager.becomeLeaderOrFollower(states);
    for (const p of [0, 1, 2])
      b.replicaManager.getPartition({ topic: "s", partition: p })!.appendRecordsToLeader(records(2), 1);
    const h = new FetchSessionHandler(0);
    const send = async (r: SessionFetchRequest): Promise<FetchResponse> => {
      const req: FetchRequest = {
        ...defaultFetchRequest(),
        replicaId: 1,
        maxWaitMs: 0,
        minBytes: 0,
        maxBytes: 1 << 20,
        sessionId: r.sessionId,
        sessionEpoch: r.sessionEpoch,
        topics: r.toSend.length
          ? [
              {
                topic: "s",
                topicId: ZERO_UUID,
                partitions: r.toSend.map((p) => ({
                  ...defaultFetchPartition(),
                  ...p,
                  partition: p.partition,
                })),
              },
            ]
          : [],
        forgottenTopicsData: r.forgotten.length
          ? [{ topic: "s", topicId: ZERO_UUID, partitions: r.forgotten.map((f) => f.partition) }]
          : [],
      };
      const res = await call<FetchRequest, FetchResponse>(fetchHandler(b.services), 12, req);
      const decoded = roundTrip(writeFetchResponse, readFetchResponse, res, 12);
      assert.ok(h.handleResponse(decoded), `session response accepted: error ${decoded.errorCode}`);
      return decoded;
    };
    const at = (offsets: bigint[]) => offsets.map((o, p) => ({ ...pd("s", p, o), lastFetchedEpoch: 3 }));
    const listed = (res: FetchResponse) =>
      res.responses.flatMap((t) =>
        t.partitions.map((p) => [p.partitionIndex, p.highWatermark, (p.records?.length ?? 0) > 0]),
      );

    const full = await send(h.build(at([0n, 0n, 0n])));
    assert.notEqual(full.sessionId, 0);
    assert.deepEqual(listed(full), [
      [0, 0n, true],
      [1, 0n, true],
      [2, 0n, true],
    ]);
    // The follower appended everything: its new fetch offsets are sent; nothing new to read, and the high
    // watermark is the one read before those offsets moved it (as Kafka): an empty response.
    const caughtUp = await send(h.build(at([2n, 2n, 2n])));
    assert.equal(caughtUp.sessionId, full.sessionId);
    assert.deepEqual(listed(caughtUp), []);
    // Nothing changed on the follower (no partitions named): the moved high watermarks come back.
    const hw = await send(h.build(at([2n, 2n, 2n])));
    assert.equal(hw.sessionId, full.sessionId);
    assert.deepEqual(listed(hw), [
      [0, 2n, false],
      [1, 2n, false],
      [2, 2n, false],
    ]);
    // New data on partition 2 only: the next incremental response carries it alone, with its records.
    b.replicaManager.getPartition({ topic: "s", partition: 2 })!.appendRecordsToLeader(records(1), 1);
    const next = await send(h.build(at([2n, 2n, 2n])));
    assert.deepEqual(listed(next), [[2, 2n, true]]);
  } finally {
    b.cleanup();
  }
});

test("getFetcherId is Kafka's: abs(31 * String.hashCode + partition) % numFetchers, Java int arithmetic", () => {
  // Values of java.lang.String.hashCode.
  assert.equal(javaStringHashCode(""), 0);
  assert.equal(javaStringHashCode("abc"), 96354);
  assert.equal(javaStringHashCode("foo"), 101574);
  assert.equal(javaStringHashCode("hello"), 99162322);
  assert.equal(javaStringHashCode("polygenelubricants"), -2147483648);
  // 31 * 101574 = 3148794.
  assert.deepEqual(
    [0, 1, 2, 3].map((p) => getFetcherId("foo", p, 2)),
    [0, 1, 0, 1],
  );
  assert.equal(getFetcherId("foo", 0, 5), 3148794 % 5);
  // 31 * Integer.MIN_VALUE wraps to MIN_VALUE; Utils.abs(MIN_VALUE) = 0; MIN_VALUE + 1 → 2147483647.
  assert.equal(getFetcherId("polygenelubricants", 0, 3), 0);
  assert.equal(getFetcherId("polygenelubricants", 1, 3), 2147483647 % 3);
  assert.equal(getFetcherId("anything", 7, 1), 0);
});
