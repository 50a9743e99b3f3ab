// FetchSessionCache unit tests (KIP-227): session creation and epochs, LRU eviction of stale sessions,
// a follower's session evicting a consumer's, and what an incremental response includes.

import assert from "node:assert/strict";
import { test } from "node:test";
import { MockTime } from "../../../src/common/time.js";
import {
  type FetchRequestPartition,
  FetchSessionCache,
  INVALID_SESSION_ID,
  nextEpoch,
  ZERO_UUID,
} from "../../../src/server/replication/fetch-session.js";

const part = (topic: string, partition: number, fetchOffset = 0n): FetchRequestPartition => ({
  topic,
  topicId: ZERO_UUID,
  partition,
  fetchOffset,
  currentLeaderEpoch: -1,
  logStartOffset: -1n,
  partitionMaxBytes: 1000,
  lastFetchedEpoch: -1,
});

const summary = (hw: bigint, recordsSize = 0, errorCode = 0) => ({
  errorCode,
  highWatermark: hw,
  lastStableOffset: hw,
  logStartOffset: 0n,
  recordsSize,
});

function fullSession(cache: FetchSessionCache, follower: boolean, parts: FetchRequestPartition[]): number {
  const ctx = cache.newContext(
    { sessionId: 0, sessionEpoch: 0, partitions: parts, forgotten: [] },
    false,
    follower,
    () => undefined,
  );
  assert.equal(ctx.kind, "full");
  return ctx.updateAndGenerateResponseData(parts.map(() => summary(0n))).sessionId;
}

test("epochs wrap to 1; FINAL stays FINAL", () => {
  assert.equal(nextEpoch(0), 1);
  assert.equal(nextEpoch(0x7fffffff), 1);
  assert.equal(nextEpoch(-1), -1);
});

test("a full cache evicts the least recently used session once it is stale; followers evict consumers", () => {
  const time = new MockTime();
  const cache = new FetchSessionCache(2, 1000, time);
  const a = fullSession(cache, false, [part("t", 0)]);
  time.sleep(10);
  const b = fullSession(cache, false, [part("t", 1)]);
  assert.notEqual(a, INVALID_SESSION_ID);
  assert.notEqual(b, INVALID_SESSION_ID);
  assert.equal(fullSession(cache, false, [part("t", 2)]), INVALID_SESSION_ID, "full and nothing stale");
  // A follower's session takes a consumer's slot (the least recently used one).
  const f = fullSession(cache, true, [part("t", 3)]);
  assert.notEqual(f, INVALID_SESSION_ID);
  assert.equal(cache.get(a), undefined);
  assert.ok(cache.get(b));
  // Using b keeps it fresh; after the eviction time the follower's session (idle) is evicted first.
  time.sleep(500);
  const inc = cache.newContext(
    { sessionId: b, sessionEpoch: 1, partitions: [], forgotten: [] },
    false,
    false,
    () => undefined,
  );
  assert.equal(inc.kind, "incremental");
  time.sleep(600);
  const c = fullSession(cache, false, [part("t", 4)]);
  assert.notEqual(c, INVALID_SESSION_ID);
  assert.equal(cache.get(f), undefined);
  assert.ok(cache.get(b));
  assert.equal(cache.evictions, 2);
  assert.equal(cache.totalPartitions, 2);
});

test("incremental responses carry partitions with records, a changed HW or an error, and rotate them", () => {
  const time = new MockTime();
  const cache = new FetchSessionCache(10, 1000, time);
  const parts = [part("t", 0), part("t", 1), part("t", 2)];
  const id = fullSession(cache, false, parts);
  const inc = (epoch: number, summaries: ReturnType<typeof summary>[]) => {
    const ctx = cache.newContext(
      { sessionId: id, sessionEpoch: epoch, partitions: [], forgotten: [] },
      false,
      false,
      () => undefined,
    );
    const order = ctx.partitions.map((p) => p.partition);
    const r = ctx.updateAndGenerateResponseData(summaries);
    return { order, included: r.include.map((i) => order[i]) };
  };
  assert.deepEqual(inc(1, [summary(0n), summary(0n), summary(0n)]).included, []);
  // Partition 1 has records: included and moved to the end of the session's order.
  const r2 = inc(2, [summary(0n), summary(5n, 100), summary(0n)]);
  assert.deepEqual(r2.included, [1]);
  assert.deepEqual(inc(3, [summary(0n), summary(0n), summary(5n)]).order, [0, 2, 1]);
  // An error is always included, and the partition comes back once it clears.
  const r4 = inc(4, [summary(-1n, 0, 6), summary(0n), summary(5n)]);
  assert.deepEqual(r4.included, [0]);
  assert.deepEqual(inc(5, [summary(0n), summary(0n), summary(5n)]).included, [0]);
  // Wrong epoch.
  const bad = cache.newContext(
    { sessionId: id, sessionEpoch: 5, partitions: [], forgotten: [] },
    false,
    false,
    () => undefined,
  );
  assert.equal(bad.error, "INVALID_FETCH_SESSION_EPOCH");
  // Forgetting every partition ends the session.
  const gone = cache.newContext(
    {
      sessionId: id,
      sessionEpoch: 6,
      partitions: [],
      forgotten: [{ topic: "t", topicId: ZERO_UUID, partitions: [0, 1, 2] }],
    },
    false,
    false,
    () => undefined,
  );
  assert.equal(gone.kind, "sessionless");
  assert.equal(cache.get(id), undefined);
  assert.equal(cache.totalPartitions, 0);
});
