// The KIP-848 consumer group protocol driven directly over a real ReplicaManager and LogManager (real
// files) with a mock clock: joins, the target assignment recomputed on each group epoch, revocation before
// assignment across members (no partition ever held by two members), leave, session and rebalance
// timeouts, every error Kafka answers, offsets with member epochs, ListGroups/ConsumerGroupDescribe, and
// the whole state reloaded from __consumer_offsets by a fresh coordinator.

import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrorCode } from "../../../src/protocol/errors.js";
import type {
  ConsumerGroupHeartbeatParams,
  ConsumerGroupHeartbeatResult,
} from "../../../src/server/coordinator/group/consumer-group-coordinator.js";
import {
  type Assignment,
  assignmentEntries,
  assignmentOf,
  assignmentSize,
  intersects,
} from "../../../src/server/coordinator/group/consumer-group-member.js";
import type { TopicsImage } from "../../../src/server/coordinator/group/consumer-group-target-assignment.js";
import type { GroupCoordinator } from "../../../src/server/coordinator/group/group-coordinator.js";
import { type CommittedOffset, offsetKey } from "../../../src/server/coordinator/group/group-metadata.js";
import { type Broker, createTopics, startBroker, topicIdOf } from "../replication/replication-test-utils.js";
import { coordinatorOver, electAll, joinParams } from "./group-coordinator-support.js";

const PARTITIONS = 3;

/** The cluster's topics as the coordinator sees them (the broker's MetadataCache in production). */
class Topics implements TopicsImage {
  constructor(readonly counts: Map<string, number>) {}
  topicId(topic: string): string | undefined {
    return this.counts.has(topic) ? topicIdOf(topic) : undefined;
  }
  topicName(topicId: string): string | undefined {
    return [...this.counts.keys()].find((t) => topicIdOf(t) === topicId);
  }
  numPartitions(topic: string): number | undefined {
    return this.counts.get(topic);
  }
}

/** The coordinator over `b` with this file's settings. */
function coordinatorOf(b: Broker, consumerGroupMaxSize = 1000): GroupCoordinator {
  return coordinatorOver(b, {
    partitions: PARTITIONS,
    offsetsRetentionMs: 7 * 24 * 3600 * 1000,
    initialRebalanceDelayMs: 0,
    consumerGroupMaxSize,
  });
}

async function setup(
  t: { after(fn: () => void): void },
  topics: Record<string, number> = { t: 6 },
  consumerMaxSize?: number,
): Promise<{ b: Broker; gc: GroupCoordinator; image: Topics }> {
  const b = startBroker();
  t.after(() => b.cleanup());
  createTopics(b, { __consumer_offsets: PARTITIONS, ...topics });
  const gc = coordinatorOf(b, consumerMaxSize);
  await electAll(b, gc, PARTITIONS);
  return { b, gc, image: new Topics(new Map(Object.entries(topics))) };
}

const T = topicIdOf("t");

function owned(partitions: number[], topic = "t"): Assignment {
  return assignmentOf([{ topicId: topicIdOf(topic), partitions }]);
}

function parts(a: Assignment | null | undefined, topic = "t"): number[] {
  return [...(a?.get(topicIdOf(topic)) ?? [])].sort((x, y) => x - y);
}

function params(over: Partial<ConsumerGroupHeartbeatParams>): ConsumerGroupHeartbeatParams {
  return {
    apiVersion: 1,
    groupId: "g",
    memberId: "m1",
    memberEpoch: 0,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: 30_000,
    subscribedTopicNames: ["t"],
    subscribedTopicRegex: null,
    serverAssignor: null,
    ownedTopicPartitions: new Map(),
    clientId: "client",
    clientHost: "/127.0.0.1",
    ...over,
  };
}

/** A steady-state heartbeat: only the epoch and the owned partitions. */
function beat(
  memberId: string,
  memberEpoch: number,
  own: Assignment | null,
): Partial<ConsumerGroupHeartbeatParams> {
  return {
    memberId,
    memberEpoch,
    rebalanceTimeoutMs: -1,
    subscribedTopicNames: null,
    ownedTopicPartitions: own,
  };
}

function ok(r: ConsumerGroupHeartbeatResult): ConsumerGroupHeartbeatResult {
  assert.equal(r.errorCode, ErrorCode.NONE, `heartbeat failed: ${r.errorCode} ${r.errorMessage}`);
  return r;
}

/** No partition is in two members' current assignments (assigned or pending revocation). */
function assertNoOverlap(gc: GroupCoordinator, groupId = "g"): void {
  const d = gc.consumerGroupDescribe(groupId);
  const group = gc.consumerGroups.group(groupId)!;
  const held = d.members.map(({ member }) => [member.assignedPartitions, member.partitionsPendingRevocation]);
  for (let i = 0; i < held.length; i++)
    for (let j = i + 1; j < held.length; j++)
      for (const a of held[i])
        for (const b of held[j]) assert.ok(!intersects(a, b), "a partition is owned twice");
  assert.ok(group);
}

test("two members: the second gets its partitions only after the first revoked them", async (t) => {
  const { gc, image } = await setup(t);
  const r1 = ok(await gc.consumerGroupHeartbeat(params({ memberId: "m1" }), image));
  assert.equal(r1.memberEpoch, 1);
  assert.equal(r1.heartbeatIntervalMs, 5000);
  assert.deepEqual(parts(r1.assignment), [0, 1, 2, 3, 4, 5]);
  assert.equal(gc.consumerGroupDescribe("g").state, "Stable");

  const r2 = ok(await gc.consumerGroupHeartbeat(params({ memberId: "m2" }), image));
  assert.equal(r2.memberEpoch, 2, "a joining member bumps the group epoch and moves to it");
  assert.deepEqual(parts(r2.assignment), [], "its partitions are still owned by m1");
  let d = gc.consumerGroupDescribe("g");
  assert.equal(d.state, "Reconciling");
  assert.equal(d.groupEpoch, 2);
  assert.equal(d.assignmentEpoch, 2);
  assert.equal(d.assignorName, "uniform");
  const target = new Map(d.members.map((m) => [m.member.memberId, parts(m.targetAssignment)]));
  assert.equal(target.get("m1")!.length, 3);
  assert.equal(target.get("m2")!.length, 3);
  assertNoOverlap(gc);

  // m1 is asked to revoke: it stays in epoch 1 with its shrunk assignment.
  const r3 = ok(await gc.consumerGroupHeartbeat(params(beat("m1", 1, owned([0, 1, 2, 3, 4, 5]))), image));
  assert.equal(r3.memberEpoch, 1);
  assert.deepEqual(parts(r3.assignment), target.get("m1"));
  assertNoOverlap(gc);
  // m2 still waits.
  const r4 = ok(await gc.consumerGroupHeartbeat(params(beat("m2", 2, owned([]))), image));
  assert.equal(r4.memberEpoch, 2);
  assert.equal(r4.assignment, null, "nothing changed");
  // m1 acknowledges the revocation: it moves to epoch 2.
  const r5 = ok(await gc.consumerGroupHeartbeat(params(beat("m1", 1, owned(target.get("m1")!))), image));
  assert.equal(r5.memberEpoch, 2);
  // Now m2 receives the released partitions.
  const r6 = ok(await gc.consumerGroupHeartbeat(params(beat("m2", 2, owned([]))), image));
  assert.deepEqual(parts(r6.assignment), target.get("m2"));
  assertNoOverlap(gc);
  d = gc.consumerGroupDescribe("g");
  assert.equal(d.state, "Stable");
  for (const m of d.members) assert.equal(m.member.memberEpoch, 2);
});

test("leave (-1) hands the partitions to the others; a new member id is generated for v0", async (t) => {
  const { gc, image } = await setup(t);
  const a = ok(await gc.consumerGroupHeartbeat(params({ apiVersion: 0, memberId: "" }), image));
  assert.match(a.memberId!, /^[A-Za-z0-9_-]{22}$/);
  const aId = a.memberId!;
  const b = ok(await gc.consumerGroupHeartbeat(params({ memberId: "b" }), image));
  ok(await gc.consumerGroupHeartbeat(params(beat(aId, 1, owned([0, 1, 2, 3, 4, 5]))), image));
  const aTarget = parts(
    gc.consumerGroupDescribe("g").members.find((m) => m.member.memberId === aId)!.targetAssignment,
  );
  ok(await gc.consumerGroupHeartbeat(params(beat(aId, 1, owned(aTarget))), image));
  ok(await gc.consumerGroupHeartbeat(params(beat("b", b.memberEpoch, owned([]))), image));
  assert.equal(gc.consumerGroupDescribe("g").state, "Stable");

  const left = ok(await gc.consumerGroupHeartbeat(params({ ...beat(aId, -1, null) }), image));
  assert.equal(left.memberEpoch, -1);
  const d = gc.consumerGroupDescribe("g");
  assert.equal(d.members.length, 1);
  assert.equal(d.groupEpoch, 3);
  const bNext = ok(
    await gc.consumerGroupHeartbeat(
      params(beat("b", 2, owned(parts(d.members[0].member.assignedPartitions)))),
      image,
    ),
  );
  assert.equal(bNext.memberEpoch, 3);
  assert.deepEqual(parts(bNext.assignment), [0, 1, 2, 3, 4, 5]);
  // The member that left is unknown now.
  const again = await gc.consumerGroupHeartbeat(params(beat(aId, 2, null)), image);
  assert.equal(again.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  // The last one leaves: the group is Empty, and listed as a consumer group.
  ok(await gc.consumerGroupHeartbeat(params(beat("b", -1, null)), image));
  assert.deepEqual(gc.listGroups([], ["consumer"]).groups, [
    { groupId: "g", protocolType: "consumer", state: "Empty", type: "consumer" },
  ]);
  assert.deepEqual(gc.listGroups([], ["classic"]).groups, []);
  assert.deepEqual(gc.listGroups(["stable"], []).groups, []);
});

test("session timeout removes a silent member; a rebalance timeout fences one that does not revoke", async (t) => {
  const { b, gc, image } = await setup(t);
  ok(await gc.consumerGroupHeartbeat(params({ memberId: "m1" }), image));
  ok(await gc.consumerGroupHeartbeat(params({ memberId: "m2", rebalanceTimeoutMs: 10_000 }), image));
  // m1 keeps heartbeating (revoking what it is asked to), m2 goes silent.
  let m1Epoch = 1;
  let m1Owned = [0, 1, 2, 3, 4, 5];
  for (let i = 0; i < 10; i++) {
    await b.scheduler.tick(5000);
    const r = ok(await gc.consumerGroupHeartbeat(params(beat("m1", m1Epoch, owned(m1Owned))), image));
    m1Epoch = r.memberEpoch;
    if (r.assignment !== null) m1Owned = parts(r.assignment);
  }
  const d = gc.consumerGroupDescribe("g");
  assert.deepEqual(
    d.members.map((m) => m.member.memberId),
    ["m1"],
    "m2 was removed after group.consumer.session.timeout.ms",
  );
  assert.equal(d.groupEpoch, 3);
  assert.equal(m1Epoch, 3);
  assert.deepEqual(m1Owned, [0, 1, 2, 3, 4, 5], "m1 took m2's partitions over");

  // Rebalance timeout: m3 joins, m1 is asked to revoke and never does within its rebalance timeout (30 s).
  ok(await gc.consumerGroupHeartbeat(params({ memberId: "m3" }), image));
  const revoke = ok(await gc.consumerGroupHeartbeat(params(beat("m1", 3, owned([0, 1, 2, 3, 4, 5]))), image));
  assert.equal(revoke.memberEpoch, 3);
  assert.equal(parts(revoke.assignment).length, 3);
  let m3Epoch = 4;
  let m3Owned: number[] = [];
  for (let i = 0; i < 7; i++) {
    await b.scheduler.tick(5000);
    const m3 = ok(await gc.consumerGroupHeartbeat(params(beat("m3", m3Epoch, owned(m3Owned))), image));
    m3Epoch = m3.memberEpoch;
    if (m3.assignment !== null) m3Owned = parts(m3.assignment);
    const still = await gc.consumerGroupHeartbeat(params(beat("m1", 3, owned([0, 1, 2, 3, 4, 5]))), image);
    if (still.errorCode !== ErrorCode.NONE) {
      assert.equal(still.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
      break;
    }
  }
  assert.deepEqual(
    gc.consumerGroupDescribe("g").members.map((m) => m.member.memberId),
    ["m3"],
  );
  const m3 = ok(await gc.consumerGroupHeartbeat(params(beat("m3", m3Epoch, owned(m3Owned))), image));
  assert.equal(m3.memberEpoch, 5);
  if (m3.assignment !== null) m3Owned = parts(m3.assignment);
  assert.deepEqual(m3Owned, [0, 1, 2, 3, 4, 5], "m3 took over the fenced member's partitions");
  // A fenced member rejoins with epoch 0 and the same id.
  const back = ok(await gc.consumerGroupHeartbeat(params({ memberId: "m1" }), image));
  assert.ok(back.memberEpoch > 5);
});

test("errors: INVALID_REQUEST, UNSUPPORTED_ASSIGNOR, UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, GROUP_MAX_SIZE_REACHED, protocol mismatch", async (t) => {
  const { gc, image } = await setup(t, { t: 6 }, 2);
  const code = async (over: Partial<ConsumerGroupHeartbeatParams>) =>
    (await gc.consumerGroupHeartbeat(params(over), image)).errorCode;
  assert.equal(await code({ groupId: "" }), ErrorCode.INVALID_REQUEST);
  assert.equal(await code({ memberId: "" }), ErrorCode.INVALID_REQUEST, "v1: the client generates the id");
  assert.equal(await code({ rebalanceTimeoutMs: -1 }), ErrorCode.INVALID_REQUEST);
  assert.equal(await code({ ownedTopicPartitions: owned([1]) }), ErrorCode.INVALID_REQUEST);
  assert.equal(await code({ subscribedTopicNames: [] }), ErrorCode.INVALID_REQUEST);
  assert.equal(await code({ memberEpoch: -3 }), ErrorCode.INVALID_REQUEST);
  assert.equal(await code({ memberEpoch: -2, instanceId: null }), ErrorCode.INVALID_REQUEST);
  const bad = await gc.consumerGroupHeartbeat(params({ serverAssignor: "sticky" }), image);
  assert.equal(bad.errorCode, ErrorCode.UNSUPPORTED_ASSIGNOR);
  assert.equal(
    bad.errorMessage,
    "ServerAssignor sticky is not supported. Supported assignors: uniform, range.",
  );
  assert.equal(await code(beat("nobody", 3, null)), ErrorCode.UNKNOWN_MEMBER_ID, "no such group");
  assert.deepEqual(gc.listGroups([], []).groups, [], "failed requests leave no group behind");

  ok(await gc.consumerGroupHeartbeat(params({ memberId: "m1" }), image));
  assert.equal(await code(beat("nobody", 1, null)), ErrorCode.UNKNOWN_MEMBER_ID);
  assert.equal(await code(beat("m1", 5, null)), ErrorCode.FENCED_MEMBER_EPOCH);
  ok(await gc.consumerGroupHeartbeat(params({ memberId: "m2" }), image));
  assert.equal(await code({ memberId: "m3" }), ErrorCode.GROUP_MAX_SIZE_REACHED, "group.consumer.max.size=2");
  // m1 moves to epoch 2 (revocation done); epoch 1 is then only accepted with a subset of its assignment.
  const target = parts(
    gc.consumerGroupDescribe("g").members.find((m) => m.member.memberId === "m1")!.targetAssignment,
  );
  ok(await gc.consumerGroupHeartbeat(params(beat("m1", 1, owned(target))), image));
  ok(await gc.consumerGroupHeartbeat(params(beat("m1", 1, owned(target))), image));
  assert.equal(await code(beat("m1", 1, owned([0, 1, 2, 3, 4, 5]))), ErrorCode.FENCED_MEMBER_EPOCH);

  // A group id is classic or consumer, not both.
  const join = await gc.joinGroup(joinParams({ protocols: [{ name: "range", metadata: Buffer.alloc(0) }] }));
  assert.equal(join.errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  const classic = gc.joinGroup(
    joinParams({
      groupId: "classic",
      requireKnownMemberId: false,
      protocols: [{ name: "range", metadata: Buffer.alloc(0) }],
    }),
  );
  void classic;
  const onClassic = await gc.consumerGroupHeartbeat(params({ groupId: "classic", memberId: "x" }), image);
  assert.equal(onClassic.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  assert.equal(onClassic.errorMessage, "Group classic is not a consumer group.");
  assert.equal(gc.consumerGroupDescribe("classic").errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  assert.equal(gc.consumerGroupDescribe("absent").errorMessage, "Group absent not found.");
});

const offset = (o: bigint): CommittedOffset => ({
  offset: o,
  leaderEpoch: -1,
  metadata: "",
  commitTimestamp: 0n,
  expireTimestamp: null,
});

test("offsets: commits and fetches checked against member epochs, and everything reloads from the log", async (t) => {
  const { b, gc, image } = await setup(t, { t: 6, v: 2 });
  // (topicIdOf gives "t" and "u" the same id: "v" is the second topic.)
  // Offsets committed by an admin before the group exists are kept when the consumer group takes over.
  const pre = await gc.commitOffsets("g", "", null, -1, new Map([[offsetKey("v", 0), offset(3n)]]));
  assert.equal(pre.get(offsetKey("v", 0)), ErrorCode.NONE);
  ok(await gc.consumerGroupHeartbeat(params({ memberId: "m1", subscribedTopicNames: ["t", "v"] }), image));
  ok(
    await gc.consumerGroupHeartbeat(
      params({ memberId: "m2", serverAssignor: "range", subscribedTopicNames: ["t", "v"] }),
      image,
    ),
  );
  const k = offsetKey("t", 0);
  const commit = async (memberId: string, epoch: number) =>
    (await gc.commitOffsets("g", memberId, null, epoch, new Map([[k, offset(42n)]]))).get(k);
  assert.equal(await commit("m1", 2), ErrorCode.STALE_MEMBER_EPOCH, "m1 has not moved past epoch 1 yet");
  assert.equal(await commit("zz", 1), ErrorCode.UNKNOWN_MEMBER_ID);
  assert.equal(await commit("", -1), ErrorCode.UNKNOWN_MEMBER_ID, "the group has members");
  assert.equal(await commit("m2", 2), ErrorCode.NONE);
  assert.equal(
    gc.fetchOffsets("g", [{ topic: "t", partition: 0 }], { memberId: "m2", memberEpoch: 1 }).errorCode,
    ErrorCode.STALE_MEMBER_EPOCH,
  );
  assert.equal(
    gc.fetchOffsets("g", null, { memberId: "zz", memberEpoch: 2 }).errorCode,
    ErrorCode.UNKNOWN_MEMBER_ID,
  );
  const f = gc.fetchOffsets("g", null);
  assert.deepEqual(f.partitions.map((p) => [p.topic, p.partition, p.offset]).sort(), [
    ["t", 0, 42n],
    ["v", 0, 3n],
  ]);
  // OffsetDelete: a subscribed topic's offsets stay, the others go.
  const w0 = offsetKey("w", 0);
  assert.equal(
    (await gc.commitOffsets("g", "m2", null, 2, new Map([[w0, offset(9n)]]))).get(w0),
    ErrorCode.NONE,
  );
  assert.equal(gc.fetchOffsets("g", [{ topic: "w", partition: 0 }]).partitions[0].offset, 9n);
  const del = await gc.deleteOffsets("g", [
    { topic: "t", partition: 0 },
    { topic: "w", partition: 0 },
  ]);
  assert.equal(del.errorCode, ErrorCode.NONE);
  assert.equal(del.partitions.get(offsetKey("t", 0)), ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC);
  assert.equal(del.partitions.get(w0), ErrorCode.NONE);
  assert.equal(gc.fetchOffsets("g", [{ topic: "w", partition: 0 }]).partitions[0].offset, -1n);
  // Range is preferred by one member, uniform by none: range wins.
  const before = gc.consumerGroupDescribe("g");
  assert.equal(before.assignorName, "range");
  const targets = new Map(before.members.map((m) => [m.member.memberId, m.targetAssignment]));
  assert.deepEqual(parts(targets.get("m1")), [0, 1, 2]);
  assert.deepEqual(parts(targets.get("m2")), [3, 4, 5]);
  assert.deepEqual(parts(targets.get("m1"), "v"), [0]);
  assert.deepEqual(parts(targets.get("m2"), "v"), [1]);

  gc.shutdown();
  const again = coordinatorOf(b);
  await electAll(b, again, PARTITIONS);
  const after = again.consumerGroupDescribe("g");
  const view = (d: typeof before) =>
    d.members
      .map((m) => ({
        id: m.member.memberId,
        epoch: m.member.memberEpoch,
        previous: m.member.previousMemberEpoch,
        state: m.member.state,
        subscribed: m.member.subscribedTopicNames,
        assignor: m.member.serverAssignorName,
        assigned: assignmentEntries(m.member.assignedPartitions),
        pending: assignmentEntries(m.member.partitionsPendingRevocation),
        target: assignmentEntries(m.targetAssignment),
      }))
      .sort((x, y) => (x.id < y.id ? -1 : 1));
  assert.equal(after.errorCode, ErrorCode.NONE);
  assert.equal(after.groupEpoch, before.groupEpoch);
  assert.equal(after.assignmentEpoch, before.assignmentEpoch);
  assert.equal(after.state, before.state);
  assert.deepEqual(view(after), view(before));
  assert.deepEqual(
    again
      .fetchOffsets("g", null)
      .partitions.map((p) => [p.topic, p.partition, p.offset])
      .sort(),
    f.partitions.map((p) => [p.topic, p.partition, p.offset]).sort(),
  );
  // The reloaded members carry on from where they were.
  const m1 = ok(
    await again.consumerGroupHeartbeat(
      params(beat("m1", 1, assignmentOf([{ topicId: T, partitions: [0, 1, 2, 3, 4, 5] }]))),
      image,
    ),
  );
  assert.equal(m1.memberEpoch, 1);
  // Deleting a non-empty consumer group is refused; once empty it goes, with its offsets.
  assert.equal((await again.deleteGroups(["g"])).get("g"), ErrorCode.NON_EMPTY_GROUP);
  ok(await again.consumerGroupHeartbeat(params(beat("m1", -1, null)), image));
  ok(await again.consumerGroupHeartbeat(params(beat("m2", -1, null)), image));
  assert.equal((await again.deleteGroups(["g"])).get("g"), ErrorCode.NONE);
  again.shutdown();
  const third = coordinatorOf(b);
  await electAll(b, third, PARTITIONS);
  assert.equal(third.consumerGroupDescribe("g").errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  assert.deepEqual(third.fetchOffsets("g", null).partitions, []);
});

test("a subscribed topic's partition count change bumps the group epoch and spreads the new partitions", async (t) => {
  const { gc, image } = await setup(t, { t: 2 });
  ok(await gc.consumerGroupHeartbeat(params({ memberId: "m1" }), image));
  image.counts.set("t", 4);
  const r = ok(await gc.consumerGroupHeartbeat(params(beat("m1", 1, owned([0, 1]))), image));
  assert.equal(r.memberEpoch, 2);
  assert.deepEqual(parts(r.assignment), [0, 1, 2, 3]);
  assert.equal(assignmentSize(r.assignment!), 4);
});

test("static member: leaving with -2 keeps its assignment, rejoining with a new id takes it back", async (t) => {
  const { gc, image } = await setup(t);
  ok(await gc.consumerGroupHeartbeat(params({ memberId: "s1", instanceId: "i1" }), image));
  const left = ok(
    await gc.consumerGroupHeartbeat(params({ ...beat("s1", -2, null), instanceId: "i1" }), image),
  );
  assert.equal(left.memberEpoch, -2);
  assert.equal(gc.consumerGroupDescribe("g").groupEpoch, 1, "no rebalance");
  const other = await gc.consumerGroupHeartbeat(params({ memberId: "s2", instanceId: "i1" }), image);
  const back = ok(other);
  assert.equal(back.memberEpoch, 1);
  assert.deepEqual(parts(back.assignment), [0, 1, 2, 3, 4, 5]);
  const dup = await gc.consumerGroupHeartbeat(params({ memberId: "s3", instanceId: "i1" }), image);
  assert.equal(dup.errorCode, ErrorCode.UNRELEASED_INSTANCE_ID);
});

test("members heartbeating in random order, joining and leaving: never a partition owned twice, then all balanced", async (t) => {
  const { gc, image } = await setup(t, { t: 12 });
  // A deterministic pseudo-random order (LCG) so a failure replays.
  let seed = 42;
  const rand = (n: number): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  /** What each well-behaved client believes: its epoch and the partitions it owns. */
  const clients = new Map<string, { epoch: number; owned: number[] }>();
  const step = async (id: string): Promise<void> => {
    const c = clients.get(id)!;
    const r = ok(
      await gc.consumerGroupHeartbeat(
        params(c.epoch === 0 ? { memberId: id } : beat(id, c.epoch, owned(c.owned))),
        image,
      ),
    );
    c.epoch = r.memberEpoch;
    if (r.assignment !== null) c.owned = parts(r.assignment);
    // What the clients own never overlaps either.
    const seen = new Set<number>();
    for (const other of clients.values())
      for (const p of other.owned) {
        assert.ok(!seen.has(p), `partition ${p} owned by two clients`);
        seen.add(p);
      }
    assertNoOverlap(gc);
  };
  const join = async (id: string) => {
    clients.set(id, { epoch: 0, owned: [] });
    await step(id);
  };
  await join("a");
  await join("b");
  for (let round = 0; round < 200; round++) {
    const ids = [...clients.keys()];
    if (round === 40) await join("c");
    else if (round === 80) await join("d");
    else if (round === 120) {
      const leaving = ids[rand(ids.length)];
      ok(await gc.consumerGroupHeartbeat(params(beat(leaving, -1, null)), image));
      clients.delete(leaving);
    } else await step(ids[rand(ids.length)]);
  }
  for (let i = 0; i < 3; i++) for (const id of clients.keys()) await step(id);
  const d = gc.consumerGroupDescribe("g");
  assert.equal(d.state, "Stable");
  assert.deepEqual(
    [...clients.values()].map((c) => c.owned.length),
    [4, 4, 4],
    "12 partitions over 3 members",
  );
  assert.deepEqual(
    [...clients.values()].flatMap((c) => c.owned).sort((x, y) => x - y),
    Array.from({ length: 12 }, (_, i) => i),
  );
});
