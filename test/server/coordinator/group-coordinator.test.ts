// The group coordinator driven directly over a real ReplicaManager and LogManager (real files), with a
// mock clock: the classic protocol's rebalances (KIP-394 member id required, the initial delayed join,
// rebalance and session timeouts), static membership (KIP-345), every error the issue lists, offsets
// committed, fetched, deleted and expired, groups deleted, and everything reloaded from
// __consumer_offsets by a fresh coordinator.

import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrorCode } from "../../../src/protocol/errors.js";
import type { JoinGroupParams } from "../../../src/server/coordinator/group/classic-group-coordinator.js";
import type { GroupCoordinator } from "../../../src/server/coordinator/group/group-coordinator.js";
import { type CommittedOffset, offsetKey } from "../../../src/server/coordinator/group/group-metadata.js";
import { partitionForGroup } from "../../../src/server/coordinator/group/group-metadata-manager.js";
import type { JoinGroupResult } from "../../../src/server/coordinator/group/member-metadata.js";
import {
  type Broker,
  createTopics,
  flushMicrotasks,
  startBroker,
} from "../replication/replication-test-utils.js";
import {
  type CoordinatorSettings,
  coordinatorOver,
  electAll,
  joinParams,
  subscription,
  syncParams,
} from "./group-coordinator-support.js";

const PARTITIONS = 5;
const INITIAL_DELAY = 3000;
const RETENTION_MS = 24 * 3600 * 1000;
const CHECK_INTERVAL = 600_000;

function settings(groupMaxSize?: number): CoordinatorSettings {
  return {
    partitions: PARTITIONS,
    offsetsRetentionMs: RETENTION_MS,
    offsetsRetentionCheckIntervalMs: CHECK_INTERVAL,
    initialRebalanceDelayMs: INITIAL_DELAY,
    groupMaxSize,
  };
}

async function setup(groupMaxSize?: number): Promise<{ b: Broker; gc: GroupCoordinator }> {
  const b = startBroker();
  createTopics(b, { __consumer_offsets: PARTITIONS, t: 4 });
  const gc = coordinatorOver(b, settings(groupMaxSize));
  await electAll(b, gc, PARTITIONS);
  return { b, gc };
}

/** Resolves `p` by advancing the mock clock in steps; fails if it never settles. */
async function settle<T>(b: Broker, p: Promise<T>, maxMs = 60_000, stepMs = 100): Promise<T> {
  let done = false;
  let value: T | undefined;
  void p.then((v) => {
    done = true;
    value = v;
  });
  for (let t = 0; t <= maxMs && !done; t += stepMs) {
    await flushMicrotasks();
    if (done) break;
    await b.scheduler.tick(stepMs);
  }
  await flushMicrotasks();
  assert.ok(done, "the request did not complete");
  return value as T;
}

/** A dynamic member joining with KIP-394's two steps; returns the final JoinGroup answer. */
async function joinNew(
  b: Broker,
  gc: GroupCoordinator,
  over: Partial<JoinGroupParams> = {},
): Promise<JoinGroupResult> {
  const first = await gc.joinGroup(joinParams(over));
  assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED);
  assert.match(first.memberId, /^c-[0-9a-f-]{36}$/);
  return settle(b, gc.joinGroup(joinParams({ ...over, memberId: first.memberId })));
}

const offset = (n: bigint, metadata = ""): CommittedOffset => ({
  offset: n,
  leaderEpoch: 0,
  metadata,
  commitTimestamp: 0n,
  expireTimestamp: null,
});

test("partitionFor is Kafka's abs(String.hashCode) % partitions", () => {
  // An independent String.hashCode: s[0]*31^(n-1) + ... + s[n-1], reduced to a signed 32-bit int.
  const hash = (s: string): number => {
    let h = 0n;
    for (const ch of s)
      for (const unit of ch.length === 2 ? [ch.charCodeAt(0), ch.charCodeAt(1)] : [ch.charCodeAt(0)])
        h = h * 31n + BigInt(unit);
    return Number(BigInt.asIntN(32, h));
  };
  for (const g of [
    "",
    "grp1",
    "console-consumer-12345",
    "my-group",
    "ünïcödé",
    "𝄞 group",
    "polygenelubricants",
  ]) {
    const h = hash(g);
    const abs = h === -2147483648 ? 0 : Math.abs(h);
    assert.equal(partitionForGroup(g, 50), abs % 50, g);
  }
  // "polygenelubricants".hashCode() is Integer.MIN_VALUE, which Kafka's Utils.abs maps to 0.
  assert.equal(hash("polygenelubricants"), -2147483648);
  assert.equal(partitionForGroup("polygenelubricants", 50), 0);
});

test("first join: MEMBER_ID_REQUIRED, then the initial delay, then leader with every member; sync makes it Stable", async (t) => {
  const { b, gc } = await setup();
  t.after(() => b.cleanup());
  const joined = await joinNew(b, gc);
  assert.equal(joined.errorCode, ErrorCode.NONE);
  assert.equal(joined.generationId, 1);
  assert.equal(joined.leaderId, joined.memberId);
  assert.equal(joined.protocolName, "range");
  assert.deepEqual(
    joined.members.map((m) => m.memberId),
    [joined.memberId],
  );
  assert.equal(gc.describeGroup("g").state, "CompletingRebalance");
  const assignment = Buffer.from("assignment-bytes");
  const synced = await settle(
    b,
    gc.syncGroup(
      syncParams({
        generationId: 1,
        memberId: joined.memberId,
        protocolType: "consumer",
        protocolName: "range",
        assignments: new Map([[joined.memberId, assignment]]),
      }),
    ),
  );
  assert.equal(synced.errorCode, ErrorCode.NONE);
  assert.deepEqual(synced.assignment, assignment);
  const d = gc.describeGroup("g");
  assert.equal(d.state, "Stable");
  assert.equal(d.protocol, "range");
  assert.deepEqual(d.members[0].assignment, assignment);
  assert.equal(gc.heartbeat("g", joined.memberId, null, 1), ErrorCode.NONE);
});

test("a second member triggers a rebalance: heartbeat says REBALANCE_IN_PROGRESS, both rejoin into generation 2", async (t) => {
  const { b, gc } = await setup();
  t.after(() => b.cleanup());
  const a = await joinNew(b, gc);
  await settle(b, gc.syncGroup(syncParams({ generationId: 1, memberId: a.memberId })));
  const first = await gc.joinGroup(joinParams({ clientId: "c" }));
  const bJoin = gc.joinGroup(joinParams({ memberId: first.memberId }));
  await flushMicrotasks();
  assert.equal(gc.describeGroup("g").state, "PreparingRebalance");
  assert.equal(gc.heartbeat("g", a.memberId, null, 1), ErrorCode.REBALANCE_IN_PROGRESS);
  // SyncGroup during PreparingRebalance, and a commit of the old generation's member: the errors Kafka gives.
  const sync = await gc.syncGroup(syncParams({ generationId: 1, memberId: a.memberId }));
  assert.equal(sync.errorCode, ErrorCode.REBALANCE_IN_PROGRESS);
  const aJoin = gc.joinGroup(joinParams({ memberId: a.memberId }));
  const [ra, rb] = await settle(b, Promise.all([aJoin, bJoin]));
  assert.equal(ra.generationId, 2);
  assert.equal(rb.generationId, 2);
  assert.equal(ra.leaderId, a.memberId, "the leader stays");
  assert.equal(ra.members.length, 2);
  assert.equal(rb.members.length, 0);
  // CompletingRebalance: commits are REBALANCE_IN_PROGRESS, an old generation ILLEGAL_GENERATION.
  const k = offsetKey("t", 0);
  assert.equal(
    (await gc.commitOffsets("g", a.memberId, null, 2, new Map([[k, offset(1n)]]))).get(k),
    ErrorCode.REBALANCE_IN_PROGRESS,
  );
  assert.equal(
    (await gc.commitOffsets("g", a.memberId, null, 1, new Map([[k, offset(1n)]]))).get(k),
    ErrorCode.ILLEGAL_GENERATION,
  );
  assert.equal(gc.heartbeat("g", a.memberId, null, 1), ErrorCode.ILLEGAL_GENERATION);
  // The follower's SyncGroup waits for the leader's.
  const follower = gc.syncGroup(
    syncParams({ generationId: 2, memberId: rb.memberId, protocolType: "consumer", protocolName: "range" }),
  );
  const leader = gc.syncGroup(
    syncParams({
      generationId: 2,
      memberId: ra.memberId,
      protocolType: "consumer",
      protocolName: "range",
      assignments: new Map([
        [ra.memberId, Buffer.from("A")],
        [rb.memberId, Buffer.from("B")],
      ]),
    }),
  );
  const [fs, ls] = await settle(b, Promise.all([follower, leader]));
  assert.equal(fs.assignment.toString(), "B");
  assert.equal(ls.assignment.toString(), "A");
  assert.equal(
    (await gc.commitOffsets("g", rb.memberId, null, 2, new Map([[k, offset(5n)]]))).get(k),
    ErrorCode.NONE,
  );
});

test("session timeout removes a silent member; the rebalance timeout removes one that does not rejoin", async (t) => {
  const { b, gc } = await setup();
  t.after(() => b.cleanup());
  const a = await joinNew(b, gc, { sessionTimeoutMs: 6000 });
  await settle(b, gc.syncGroup(syncParams({ generationId: 1, memberId: a.memberId })));
  const second = await gc.joinGroup(joinParams({ sessionTimeoutMs: 6000 }));
  const bJoin = gc.joinGroup(joinParams({ memberId: second.memberId, sessionTimeoutMs: 6000 }));
  // `a` never rejoins nor heartbeats: after its session timeout it is removed and the rebalance completes.
  const rb = await settle(b, bJoin, 20_000);
  assert.equal(rb.errorCode, ErrorCode.NONE);
  assert.equal(rb.generationId, 2);
  assert.equal(rb.leaderId, rb.memberId);
  assert.deepEqual(
    rb.members.map((m) => m.memberId),
    [rb.memberId],
  );
  assert.equal(gc.heartbeat("g", a.memberId, null, 1), ErrorCode.UNKNOWN_MEMBER_ID);
  await settle(b, gc.syncGroup(syncParams({ generationId: 2, memberId: rb.memberId })));
  // Now `rb` stops heartbeating: it is removed after 6 s and the group becomes Empty.
  await b.scheduler.tick(5000);
  assert.equal(gc.describeGroup("g").state, "Stable");
  await b.scheduler.tick(1500);
  await flushMicrotasks();
  assert.equal(gc.describeGroup("g").state, "Empty");
  assert.equal(gc.heartbeat("g", rb.memberId, null, 2), ErrorCode.UNKNOWN_MEMBER_ID);
});

test("static membership: a restart with the same group.instance.id keeps the generation and fences the old id", async (t) => {
  const { b, gc } = await setup();
  t.after(() => b.cleanup());
  const first = await settle(b, gc.joinGroup(joinParams({ groupInstanceId: "instance-1" })));
  assert.equal(first.errorCode, ErrorCode.NONE, "static members need no member id round trip");
  await settle(
    b,
    gc.syncGroup(
      syncParams({
        generationId: 1,
        memberId: first.memberId,
        groupInstanceId: "instance-1",
        assignments: new Map([[first.memberId, Buffer.from("P0")]]),
      }),
    ),
  );
  const again = await settle(b, gc.joinGroup(joinParams({ groupInstanceId: "instance-1" })));
  assert.equal(again.errorCode, ErrorCode.NONE);
  assert.notEqual(again.memberId, first.memberId);
  assert.equal(again.generationId, 1, "no rebalance");
  assert.equal(gc.describeGroup("g").state, "Stable");
  assert.equal(gc.heartbeat("g", first.memberId, "instance-1", 1), ErrorCode.FENCED_INSTANCE_ID);
  assert.equal(gc.heartbeat("g", again.memberId, "instance-1", 1), ErrorCode.NONE);
  const sync = await settle(
    b,
    gc.syncGroup(syncParams({ generationId: 1, memberId: again.memberId, groupInstanceId: "instance-1" })),
  );
  assert.equal(sync.assignment.toString(), "P0", "the assignment carries over");
  // LeaveGroup by instance id only.
  const left = gc.leaveGroup("g", [{ memberId: "", groupInstanceId: "instance-1" }]);
  assert.equal(left.members[0].errorCode, ErrorCode.NONE);
  await settle(b, Promise.resolve());
  assert.equal(gc.describeGroup("g").state, "Empty");
});

test("request errors: INVALID_GROUP_ID, INVALID_SESSION_TIMEOUT, UNKNOWN_MEMBER_ID, INCONSISTENT_GROUP_PROTOCOL, OFFSET_METADATA_TOO_LARGE", async (t) => {
  const { b, gc } = await setup(2);
  t.after(() => b.cleanup());
  assert.equal((await gc.joinGroup(joinParams({ groupId: "" }))).errorCode, ErrorCode.INVALID_GROUP_ID);
  assert.equal(
    (await gc.joinGroup(joinParams({ sessionTimeoutMs: 10 }))).errorCode,
    ErrorCode.INVALID_SESSION_TIMEOUT,
  );
  assert.equal(
    (await gc.joinGroup(joinParams({ memberId: "nobody" }))).errorCode,
    ErrorCode.UNKNOWN_MEMBER_ID,
  );
  assert.equal(gc.heartbeat("g", "nobody", null, 0), ErrorCode.UNKNOWN_MEMBER_ID);
  const a = await joinNew(b, gc);
  assert.equal(
    (await gc.joinGroup(joinParams({ protocolType: "connect" }))).errorCode,
    ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
  );
  assert.equal(
    (await gc.joinGroup(joinParams({ protocols: [{ name: "roundrobin", metadata: Buffer.alloc(0) }] })))
      .errorCode,
    ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
  );
  await settle(b, gc.syncGroup(syncParams({ generationId: 1, memberId: a.memberId })));
  const k = offsetKey("t", 1);
  const big = await gc.commitOffsets("g", a.memberId, null, 1, new Map([[k, offset(1n, "x".repeat(4097))]]));
  assert.equal(big.get(k), ErrorCode.OFFSET_METADATA_TOO_LARGE);
  // A member-less (simple) commit into a group with members: UNKNOWN_MEMBER_ID.
  assert.equal(
    (await gc.commitOffsets("g", "", null, -1, new Map([[k, offset(1n)]]))).get(k),
    ErrorCode.UNKNOWN_MEMBER_ID,
  );
  // A generation for a group that does not exist: ILLEGAL_GENERATION.
  assert.equal(
    (await gc.commitOffsets("nope", "m", null, 3, new Map([[k, offset(1n)]]))).get(k),
    ErrorCode.ILLEGAL_GENERATION,
  );
});

test("GROUP_MAX_SIZE_REACHED: a full group takes no new member", async (t) => {
  const { b, gc } = await setup(1);
  t.after(() => b.cleanup());
  await joinNew(b, gc);
  assert.equal((await gc.joinGroup(joinParams())).errorCode, ErrorCode.GROUP_MAX_SIZE_REACHED);
});

test("COORDINATOR_LOAD_IN_PROGRESS until the partition is loaded; NOT_COORDINATOR after resignation", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  createTopics(b, { __consumer_offsets: PARTITIONS, t: 1 });
  const gc = coordinatorOver(b, settings());
  const p = gc.partitionFor("g");
  gc.onElection(p);
  assert.equal((await gc.joinGroup(joinParams())).errorCode, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.equal(gc.fetchOffsets("g", null).errorCode, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.equal(gc.describeGroup("g").errorCode, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.equal((await gc.deleteGroups(["g"])).get("g"), ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  await b.scheduler.tick(0);
  assert.equal(gc.fetchOffsets("g", null).errorCode, ErrorCode.NONE);
  gc.onResignation(p);
  assert.equal(gc.fetchOffsets("g", null).errorCode, ErrorCode.NOT_COORDINATOR);
});

test("offsets: simple commits, fetch of some or all, and a fresh coordinator reloads groups and offsets from the log", async (t) => {
  const { b, gc } = await setup();
  t.after(() => b.cleanup());
  const k0 = offsetKey("t", 0);
  const k1 = offsetKey("t", 1);
  const r = await gc.commitOffsets(
    "standalone",
    "",
    null,
    -1,
    new Map([
      [k0, offset(10n, "m0")],
      [k1, offset(20n)],
    ]),
  );
  assert.deepEqual([...r.values()], [ErrorCode.NONE, ErrorCode.NONE]);
  assert.equal(
    (await gc.commitOffsets("standalone", "", null, -1, new Map([[k0, offset(11n, "m1")]]))).get(k0),
    ErrorCode.NONE,
  );
  const some = gc.fetchOffsets("standalone", [
    { topic: "t", partition: 0 },
    { topic: "t", partition: 3 },
  ]);
  assert.deepEqual(
    some.partitions.map((p) => [p.partition, p.offset, p.metadata]),
    [
      [0, 11n, "m1"],
      [3, -1n, ""],
    ],
  );
  const a = await joinNew(b, gc, { groupId: "members" });
  await settle(
    b,
    gc.syncGroup(
      syncParams({
        groupId: "members",
        generationId: 1,
        memberId: a.memberId,
        assignments: new Map([[a.memberId, Buffer.from("X")]]),
      }),
    ),
  );
  await gc.commitOffsets("members", a.memberId, null, 1, new Map([[k1, offset(7n)]]));

  gc.shutdown();
  const again = coordinatorOver(b, settings());
  await electAll(b, again, PARTITIONS);
  const all = again.fetchOffsets("standalone", null);
  assert.deepEqual(all.partitions.map((p) => [p.topic, p.partition, p.offset, p.metadata]).sort(), [
    ["t", 0, 11n, "m1"],
    ["t", 1, 20n, ""],
  ]);
  const d = again.describeGroup("members");
  assert.equal(d.state, "Stable");
  assert.equal(d.members[0].memberId, a.memberId);
  assert.equal(d.members[0].assignment.toString(), "X");
  assert.equal(again.fetchOffsets("members", [{ topic: "t", partition: 1 }]).partitions[0].offset, 7n);
  // The reloaded member keeps its session only by heartbeating.
  assert.equal(again.heartbeat("members", a.memberId, null, 1), ErrorCode.NONE);
  await b.scheduler.tick(11_000);
  assert.equal(again.describeGroup("members").state, "Empty");
});

test("DeleteGroups (NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND) and OffsetDelete (GROUP_SUBSCRIBED_TO_TOPIC)", async (t) => {
  const { b, gc } = await setup();
  t.after(() => b.cleanup());
  const a = await joinNew(b, gc, { protocols: [{ name: "range", metadata: subscription(["t"]) }] });
  await settle(b, gc.syncGroup(syncParams({ generationId: 1, memberId: a.memberId })));
  await gc.commitOffsets(
    "g",
    a.memberId,
    null,
    1,
    new Map([
      [offsetKey("t", 0), offset(3n)],
      [offsetKey("other", 0), offset(4n)],
    ]),
  );
  assert.equal((await gc.deleteGroups(["g"])).get("g"), ErrorCode.NON_EMPTY_GROUP);
  assert.equal((await gc.deleteGroups(["missing"])).get("missing"), ErrorCode.GROUP_ID_NOT_FOUND);
  const od = await gc.deleteOffsets("g", [
    { topic: "t", partition: 0 },
    { topic: "other", partition: 0 },
  ]);
  assert.equal(od.errorCode, ErrorCode.NONE);
  assert.equal(od.partitions.get(offsetKey("t", 0)), ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC);
  assert.equal(od.partitions.get(offsetKey("other", 0)), ErrorCode.NONE);
  assert.equal(gc.fetchOffsets("g", [{ topic: "other", partition: 0 }]).partitions[0].offset, -1n);
  assert.equal(
    (await gc.deleteOffsets("missing", [{ topic: "t", partition: 0 }])).errorCode,
    ErrorCode.GROUP_ID_NOT_FOUND,
  );
  gc.leaveGroup("g", [{ memberId: a.memberId, groupInstanceId: null }]);
  await settle(b, Promise.resolve());
  assert.equal((await gc.deleteGroups(["g"])).get("g"), ErrorCode.NONE);
  assert.equal(gc.describeGroup("g").state, "Dead");
  assert.equal(gc.fetchOffsets("g", [{ topic: "t", partition: 0 }]).partitions[0].offset, -1n);
  assert.equal((await gc.deleteGroups(["g"])).get("g"), ErrorCode.GROUP_ID_NOT_FOUND);
  // The tombstones are in the log: a reload finds nothing.
  gc.shutdown();
  const again = coordinatorOver(b, settings());
  await electAll(b, again, PARTITIONS);
  assert.equal(again.describeGroup("g").state, "Dead");
  assert.deepEqual(again.fetchOffsets("g", null).partitions, []);
});

test("offsets of an empty group expire after offsets.retention.minutes; the group is then removed", async (t) => {
  const { b, gc } = await setup();
  t.after(() => b.cleanup());
  const k = offsetKey("t", 2);
  await gc.commitOffsets(
    "old",
    "",
    null,
    -1,
    new Map([[k, { ...offset(9n), commitTimestamp: BigInt(b.time.milliseconds()) }]]),
  );
  await b.scheduler.tick(RETENTION_MS - CHECK_INTERVAL);
  assert.equal(gc.fetchOffsets("old", [{ topic: "t", partition: 2 }]).partitions[0].offset, 9n);
  await b.scheduler.tick(2 * CHECK_INTERVAL);
  await flushMicrotasks();
  assert.equal(gc.fetchOffsets("old", [{ topic: "t", partition: 2 }]).partitions[0].offset, -1n);
  assert.equal(gc.describeGroup("old").state, "Dead");
});
