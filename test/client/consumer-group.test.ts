// KafkaConsumer.subscribe() in a consumer group against a real broker (group.initial.rebalance.delay.ms=0):
// two of our consumers split the partitions with no overlap and together read everything; commitSync
// (positions and explicit offsets) then a new member resumes at the committed offsets; a kcat -G member
// (librdkafka, range) and our consumer share the partitions without overlap; a member killed without
// LeaveGroup (SIGKILL of a console-consumer --group) loses its partitions to the other after the session
// timeout; `consumer-groups --describe --members` lists our consumer; after a broker restart the member
// rediscovers its coordinator and commits again; assign()/subscribe() exclusivity.

import assert from "node:assert/strict";
import { resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { AdminClient } from "../../src/client/admin/admin-client.js";
import { GroupAdmin, type GroupDescription } from "../../src/client/admin/group-admin.js";
import type { ConsumerRecord } from "../../src/client/consumer/fetcher.js";
import { IllegalStateException, KafkaConsumer } from "../../src/client/consumer/kafka-consumer.js";
import { RANGE_ASSIGNOR, ROUND_ROBIN_ASSIGNOR } from "../../src/client/consumer/partition-assignors.js";
import type { KafkaClientError } from "../../src/client/errors.js";
import { BrokerConnection } from "../../src/client/network/broker-connection.js";
import { KafkaProducer } from "../../src/client/producer/kafka-producer.js";
import { Apis } from "../../src/protocol/generated/api-table.js";
import {
  type BackgroundCommand,
  BrokerHarness,
  describeResult,
  runCommand,
  startCommand,
  waitFor,
} from "../support/broker-harness.js";
import { tributaryArgv } from "../support/tributary-cli.js";

const KCAT = "/usr/bin/kcat";
let broker: BrokerHarness;
let admin: AdminClient;
let groups: GroupAdmin;
const open: KafkaConsumer[] = [];

before(async () => {
  broker = await BrokerHarness.start({
    name: "consumer-group-test",
    overrides: { "group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "5" },
  });
  admin = new AdminClient({ bootstrapServers: broker.bootstrap });
  groups = new GroupAdmin(admin.cluster, { timeoutMs: 10_000 });
});
after(async () => {
  for (const c of open) await c.close(5000).catch(() => undefined);
  await admin?.close();
  await broker?.close();
});

async function createTopic(name: string, partitions: number): Promise<void> {
  const [r] = await admin.createTopics([{ name, numPartitions: partitions, replicationFactor: 1 }]);
  assert.equal(r.error, undefined, String(r.error));
}

async function produce(topic: string, perPartition: number, partitions: number, tag: string): Promise<void> {
  const p = new KafkaProducer({ "bootstrap.servers": broker.bootstrap });
  const sends: Promise<unknown>[] = [];
  for (let partition = 0; partition < partitions; partition++)
    for (let i = 0; i < perPartition; i++)
      sends.push(p.send({ topic, partition, value: `${tag}-${partition}-${i}` }));
  await Promise.all(sends);
  await p.close();
}

function member(group: string, extra: Record<string, string> = {}): KafkaConsumer {
  const c = new KafkaConsumer({
    "bootstrap.servers": broker.bootstrap,
    "group.id": group,
    "auto.offset.reset": "earliest",
    "session.timeout.ms": "10000",
    "heartbeat.interval.ms": "500",
    ...extra,
  });
  open.push(c);
  return c;
}

const tpName = (tp: { topic: string; partition: number }): string => `${tp.topic}-${tp.partition}`;
const recordId = (r: ConsumerRecord): string => `${r.topic}-${r.partition}@${r.offset}`;

/** Polls every consumer concurrently until `done()` holds (each poll's records go to its sink). */
async function pollUntil(
  consumers: readonly KafkaConsumer[],
  sinks: ConsumerRecord[][],
  what: string,
  done: () => boolean,
  ms = 30_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  await Promise.all(
    consumers.map(async (c, i) => {
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`${what}: not reached within ${ms} ms`);
        sinks[i].push(...(await c.poll(200)));
      }
    }),
  );
}

function disjointCover(assignments: string[][], all: string[]): boolean {
  const seen = assignments.flat();
  return (
    seen.length === all.length && new Set(seen).size === all.length && all.every((p) => seen.includes(p))
  );
}

describe("partition assignors (Kafka's RangeAssignor and RoundRobinAssignor)", () => {
  const members = [
    { memberId: "m-b", groupInstanceId: null, topics: ["t1", "t2"] },
    { memberId: "m-a", groupInstanceId: null, topics: ["t1", "t2"] },
    { memberId: "m-c", groupInstanceId: null, topics: ["t1"] },
  ];
  const counts = new Map([
    ["t1", 5],
    ["t2", 3],
  ]);
  const show = (m: Map<string, { topic: string; partition: number }[]>) =>
    Object.fromEntries([...m].map(([k, v]) => [k, v.map(tpName)]));

  test("range: per topic, consecutive ranges in member order, the first ones one more", () => {
    assert.deepEqual(show(RANGE_ASSIGNOR.assign(counts, members)), {
      "m-b": ["t1-2", "t1-3", "t2-2"],
      "m-a": ["t1-0", "t1-1", "t2-0", "t2-1"],
      "m-c": ["t1-4"],
    });
  });

  test("roundrobin: sorted partitions dealt in member order, skipping members not subscribed", () => {
    assert.deepEqual(show(ROUND_ROBIN_ASSIGNOR.assign(counts, members)), {
      "m-a": ["t1-0", "t1-3", "t2-0", "t2-2"],
      "m-b": ["t1-1", "t1-4", "t2-1"],
      "m-c": ["t1-2"],
    });
  });

  test("static members (group.instance.id) come first, by instance id", () => {
    const out = RANGE_ASSIGNOR.assign(new Map([["t", 3]]), [
      { memberId: "a", groupInstanceId: null, topics: ["t"] },
      { memberId: "z", groupInstanceId: "i2", topics: ["t"] },
      { memberId: "y", groupInstanceId: "i1", topics: ["t"] },
    ]);
    assert.deepEqual(show(out), { a: ["t-2"], z: ["t-1"], y: ["t-0"] });
  });
});

describe("KafkaConsumer in a consumer group", () => {
  test("two consumers split the partitions with no overlap and together read everything", async () => {
    await createTopic("split", 4);
    const all = [0, 1, 2, 3].map((p) => `split-${p}`);
    const a = member("g-split");
    const b = member("g-split");
    await a.subscribe(["split"]);
    await b.subscribe(["split"]);
    const sinks: ConsumerRecord[][] = [[], []];
    await pollUntil(
      [a, b],
      sinks,
      "both members assigned",
      () =>
        disjointCover([a.assignment().map(tpName), b.assignment().map(tpName)], all) &&
        a.assignment().length === 2,
    );
    assert.equal(a.groupMetadata().generationId, b.groupMetadata().generationId);
    assert.notEqual(a.groupMetadata().memberId, b.groupMetadata().memberId);
    await produce("split", 10, 4, "v");
    await pollUntil([a, b], sinks, "40 records", () => sinks[0].length + sinks[1].length >= 40);
    const mine = [new Set(a.assignment().map(tpName)), new Set(b.assignment().map(tpName))];
    sinks.forEach((recs, i) => {
      assert.ok(recs.length > 0, `consumer ${i} read something`);
      for (const r of recs)
        assert.ok(mine[i].has(`${r.topic}-${r.partition}`), `${recordId(r)} is consumer ${i}'s`);
    });
    const ids = [...sinks[0], ...sinks[1]].map(recordId);
    assert.equal(ids.length, 40);
    assert.equal(new Set(ids).size, 40, "no record read twice");
    // The coordinator sees the same split.
    const [g] = await groups.describeGroups(["g-split"]);
    assert.equal(g.state, "Stable");
    assert.equal(g.partitionAssignor, "range");
    assert.deepEqual(
      g.members.map((m) => m.assignment.map((tp) => `${tp.topic}-${tp.partition}`).sort()).sort(),
      mine.map((s) => [...s].sort()).sort(),
    );
    await a.close();
    // b gets everything after a left (LeaveGroup: no session timeout to wait for).
    await pollUntil(
      [b],
      [[]],
      "b owns all partitions after a left",
      () => b.assignment().length === 4,
      15_000,
    );
  });

  test("subscribe() to a missing topic has the broker create it (allow.auto.create.topics); false does not", async () => {
    const c = member("auto-create-g");
    await c.subscribe(["auto-created"]);
    const got: ConsumerRecord[] = [];
    const deadline = Date.now() + 15_000;
    const topicNames = async () => (await admin.listTopics()).map((t) => t.name);
    while (!(await topicNames()).includes("auto-created")) {
      assert.ok(Date.now() < deadline, "the subscribed topic was not created");
      got.push(...(await c.poll(200)));
    }
    // Created with the broker's defaults, then assigned to the member once it is there.
    await produce("auto-created", 2, 1, "ac");
    await pollUntil([c], [got], "the records of the created topic", () => got.length >= 2);
    assert.deepEqual(
      got.map((r) => r.value?.toString()),
      ["ac-0-0", "ac-0-1"],
    );
    const off = member("no-auto-create-g", { "allow.auto.create.topics": "false" });
    await off.subscribe(["not-auto-created"]);
    for (let i = 0; i < 10; i++) assert.deepEqual(await off.poll(200), []);
    assert.ok(!(await topicNames()).includes("not-auto-created"), "created though not allowed");
  });

  test("subscribe(pattern): every matching topic, whole names only, and a matching topic created later", async () => {
    await createTopic("pat-a", 1);
    await createTopic("pat-b", 2);
    await createTopic("xpat-a", 1); // "pat-.*" must match the whole name
    await produce("pat-a", 2, 1, "a");
    await produce("pat-b", 1, 2, "b");
    await produce("xpat-a", 1, 1, "x");
    const c = member("g-pattern", { "metadata.max.age.ms": "1000" });
    await c.subscribe(/pat-.*/);
    const got: ConsumerRecord[] = [];
    await pollUntil([c], [got], "the records of pat-a and pat-b", () => got.length >= 4);
    assert.deepEqual(c.subscription().sort(), ["pat-a", "pat-b"]);
    assert.deepEqual(got.map((r) => r.value?.toString()).sort(), ["a-0-0", "a-0-1", "b-0-0", "b-1-0"]);
    // A topic created later joins the subscription at the next metadata look (metadata.max.age.ms).
    await createTopic("pat-c", 1);
    await produce("pat-c", 1, 1, "c");
    await pollUntil([c], [got], "the record of pat-c", () => got.some((r) => r.topic === "pat-c"));
    assert.deepEqual(c.subscription().sort(), ["pat-a", "pat-b", "pat-c"]);
    assert.ok(!got.some((r) => r.topic === "xpat-a"), "a partial match is not a match");
    await assert.rejects(c.subscribe(["pat-a"]), IllegalStateException);
  });

  test("commitSync then a new member of the group resumes at the committed offsets", async () => {
    await createTopic("resume", 2);
    await produce("resume", 10, 2, "old");
    const a = member("g-resume", { "enable.auto.commit": "false" });
    await a.subscribe(["resume"]);
    const got: ConsumerRecord[][] = [[]];
    await pollUntil([a], got, "20 records", () => got[0].length >= 20);
    await a.commitSync();
    const committed = await a.committed([
      { topic: "resume", partition: 0 },
      { topic: "resume", partition: 1 },
    ]);
    assert.equal(committed.get("resume-0")?.offset, 10n);
    assert.equal(committed.get("resume-1")?.offset, 10n);
    // An explicit commit: partition 1 back to offset 7.
    await a.commitSync([{ topic: "resume", partition: 1, offset: 7n, metadata: "rewind" }]);
    await a.close();
    await produce("resume", 3, 2, "new");
    const b = member("g-resume");
    await b.subscribe(["resume"]);
    const again: ConsumerRecord[][] = [[]];
    await pollUntil([b], again, "the new records", () => again[0].length >= 3 + 6);
    await new Promise((r) => setTimeout(r, 500));
    again[0].push(...(await b.poll(300)));
    const byPartition = (p: number) =>
      again[0].filter((r) => r.partition === p).map((r) => [Number(r.offset), r.value?.toString()]);
    assert.deepEqual(byPartition(0), [
      [10, "new-0-0"],
      [11, "new-0-1"],
      [12, "new-0-2"],
    ]);
    assert.deepEqual(
      byPartition(1).map(([o]) => o),
      [7, 8, 9, 10, 11, 12],
    );
    // enable.auto.commit (default with a group.id): close() commits the consumed positions.
    await b.close();
    const c = member("g-resume");
    const after = await c.committed([
      { topic: "resume", partition: 0 },
      { topic: "resume", partition: 1 },
    ]);
    assert.equal(after.get("resume-0")?.offset, 13n);
    assert.equal(after.get("resume-1")?.offset, 13n);
  });

  test("enable.auto.commit commits before the partitions are revoked: the new owner goes on from there", async () => {
    await createTopic("handover", 2);
    await produce("handover", 10, 2, "old");
    const a = member("g-handover", { "auto.commit.interval.ms": "600000" });
    await a.subscribe(["handover"]);
    const got: ConsumerRecord[][] = [[], []];
    await pollUntil([a], [got[0]], "a read everything", () => got[0].length >= 20);
    const b = member("g-handover", { "auto.commit.interval.ms": "600000" });
    await b.subscribe(["handover"]);
    await pollUntil(
      [a, b],
      got,
      "one partition each",
      () => a.assignment().length === 1 && b.assignment().length === 1,
    );
    const committed = await b.committed([
      { topic: "handover", partition: 0 },
      { topic: "handover", partition: 1 },
    ]);
    assert.equal(
      committed.get("handover-0")?.offset,
      10n,
      "committed by a before its partitions were revoked",
    );
    assert.equal(committed.get("handover-1")?.offset, 10n);
    await produce("handover", 2, 2, "new");
    await pollUntil([a, b], got, "the 4 new records", () => got[0].length + got[1].length >= 24);
    assert.ok(
      got[1].every((r) => r.value?.toString().startsWith("new-")),
      "b read no record a had already read",
    );
    assert.equal(got[1].length, 2);
  });

  test("a kcat -G member (range) and our consumer share the partitions without overlap", async () => {
    await createTopic("mixed", 4);
    const all = [0, 1, 2, 3].map((p) => `mixed-${p}`);
    const kcat: BackgroundCommand = startCommand(KCAT, [
      "-b",
      broker.bootstrap,
      "-G",
      "g-mixed",
      "-q",
      "-u",
      "-f",
      "%p:%o\\n",
      "-X",
      "partition.assignment.strategy=range",
      "-X",
      "auto.offset.reset=earliest",
      "mixed",
    ]);
    try {
      const ours = member("g-mixed");
      await ours.subscribe(["mixed"]);
      let desc: GroupDescription | undefined;
      const sink: ConsumerRecord[][] = [[]];
      await pollUntil([ours], sink, "kcat and our consumer share the partitions", () => {
        groups
          .describeGroups(["g-mixed"])
          .then(([g]) => {
            desc = g;
          })
          .catch(() => undefined);
        return (
          desc?.state === "Stable" &&
          desc.members.length === 2 &&
          disjointCover(
            desc.members.map((m) => m.assignment.map((tp) => `${tp.topic}-${tp.partition}`)),
            all,
          ) &&
          ours.assignment().length === 2
        );
      });
      const ourParts = new Set(ours.assignment().map((tp) => tp.partition));
      const kcatMember = desc!.members.find((m) => m.memberId !== ours.groupMetadata().memberId)!;
      assert.match(kcatMember.clientId, /rdkafka/);
      const kcatParts = new Set(kcatMember.assignment.map((tp) => tp.partition));
      await produce("mixed", 5, 4, "m");
      await pollUntil([ours], sink, "our 10 records", () => sink[0].length >= 10);
      for (const r of sink[0]) assert.ok(ourParts.has(r.partition), `we read ${recordId(r)} of our own`);
      await waitFor("kcat printed its 10 records", 20_000, async () =>
        kcat.stdout().trim().split("\n").filter(Boolean).length >= 10 ? true : undefined,
      );
      const kcatLines = kcat.stdout().trim().split("\n").filter(Boolean);
      for (const line of kcatLines) assert.ok(kcatParts.has(Number(line.split(":")[0])), `kcat read ${line}`);
      assert.equal(sink[0].length + kcatLines.length, 20);
    } finally {
      await kcat.stop();
    }
  });

  test("a member killed without LeaveGroup loses its partitions after the session timeout", async () => {
    await createTopic("killed", 2);
    const victim = startCommand(process.execPath, [
      ...tributaryArgv([]),
      "console-consumer",
      "--bootstrap-server",
      broker.bootstrap,
      "--topic",
      "killed",
      "--group",
      "g-killed",
      "--consumer-property",
      "session.timeout.ms=6000",
      "--consumer-property",
      "heartbeat.interval.ms=500",
    ]);
    try {
      await waitFor("the console consumer joined g-killed", 20_000, async () => {
        const [g] = await groups.describeGroups(["g-killed"]);
        return g.state === "Stable" && g.members.length === 1 ? true : undefined;
      });
      const ours = member("g-killed", { "session.timeout.ms": "6000" });
      await ours.subscribe(["killed"]);
      await pollUntil([ours], [[]], "one partition each", () => ours.assignment().length === 1);
      const killedAt = Date.now();
      await victim.stop("SIGKILL");
      await pollUntil([ours], [[]], "both partitions ours", () => ours.assignment().length === 2, 30_000);
      const took = Date.now() - killedAt;
      assert.ok(took >= 4000, `moved after the session timeout, not before (${took} ms)`);
      const [g] = await groups.describeGroups(["g-killed"]);
      assert.equal(g.members.length, 1);
      assert.equal(g.members[0].memberId, ours.groupMetadata().memberId);
    } finally {
      await victim.stop("SIGKILL");
    }
  });

  test("consumer-groups --describe --members shows our consumer", async () => {
    await createTopic("described", 3);
    const c = member("g-described", { "client.id": "described-client" });
    await c.subscribe(["described"]);
    await pollUntil([c], [[]], "assigned", () => c.assignment().length === 3);
    const dist = process.env.TRIBUTARY_DIST;
    const argv = dist
      ? [
          "-e",
          `import(${JSON.stringify(pathToFileURL(resolve(dist, "src/cli/main.js")).href)}).then((m) => m.run(process.argv.slice(1))).then((c) => { process.exitCode = c; })`,
        ]
      : [resolve(process.cwd(), "bin/tributary.js")];
    const r = await runCommand(process.execPath, [
      ...argv,
      "consumer-groups",
      "--bootstrap-server",
      broker.bootstrap,
      "--describe",
      "--group",
      "g-described",
      "--members",
    ]);
    assert.equal(r.code, 0, describeResult("consumer-groups --describe --members", r));
    const line = r.stdout.split("\n").find((l) => l.includes(c.groupMetadata().memberId));
    assert.ok(line, describeResult("our member listed", r));
    assert.match(line, /^g-described\s+\S+\s+\/127\.0\.0\.1\s+described-client\s+3\s*$/);
  });

  test("coordinator failover: across a broker restart the member finds its coordinator again and goes on", async () => {
    await createTopic("failover", 2);
    await produce("failover", 5, 2, "before");
    const c = member("g-failover", { "enable.auto.commit": "false" });
    await c.subscribe(["failover"]);
    const got: ConsumerRecord[][] = [[]];
    await pollUntil([c], got, "10 records", () => got[0].length >= 10);
    await c.commitSync();
    await broker.restart();
    await produce("failover", 3, 2, "after");
    await pollUntil([c], got, "6 more records", () => got[0].length >= 16, 60_000);
    assert.equal(new Set(got[0].map(recordId)).size, got[0].length, "no record read twice");
    await c.commitSync();
    const committed = await c.committed([
      { topic: "failover", partition: 0 },
      { topic: "failover", partition: 1 },
    ]);
    assert.equal(committed.get("failover-0")?.offset, 8n);
    assert.equal(committed.get("failover-1")?.offset, 8n);
    const [g] = await groups.describeGroups(["g-failover"]);
    assert.deepEqual(
      g.members.map((m) => m.memberId),
      [c.groupMetadata().memberId],
    );
  });

  test("new partitions and a subscribed topic created later are assigned (metadata.max.age.ms)", async () => {
    await createTopic("grow", 2);
    // "later" is created by the test below, not by the consumer's Metadata requests.
    const c = member("g-grow", { "metadata.max.age.ms": "1000", "allow.auto.create.topics": "false" });
    await c.subscribe(["grow", "later"]);
    await pollUntil([c], [[]], "the 2 partitions of grow", () => c.assignment().length === 2);
    const [r] = await admin.createPartitions([{ topic: "grow", totalCount: 3 }]);
    assert.equal(r.error, undefined, String(r.error));
    await pollUntil([c], [[]], "the new partition", () => c.assignment().length === 3, 15_000);
    await createTopic("later", 2);
    await pollUntil([c], [[]], "the partitions of the new topic", () => c.assignment().length === 5, 15_000);
    assert.deepEqual(c.assignment().map(tpName).sort(), ["grow-0", "grow-1", "grow-2", "later-0", "later-1"]);
  });

  test("static membership: a restarted group.instance.id member takes its place back without a rebalance", async () => {
    await createTopic("static", 2);
    const first = member("g-static", { "group.instance.id": "instance-1" });
    await first.subscribe(["static"]);
    await pollUntil([first], [[]], "assigned", () => first.assignment().length === 2);
    const before = first.groupMetadata();
    assert.equal(before.groupInstanceId, "instance-1");
    await first.close(); // a static member does not send LeaveGroup
    const [kept] = await groups.describeGroups(["g-static"]);
    assert.equal(kept.state, "Stable");
    assert.deepEqual(
      kept.members.map((m) => [m.memberId, m.groupInstanceId]),
      [[before.memberId, "instance-1"]],
    );
    const second = member("g-static", { "group.instance.id": "instance-1" });
    await second.subscribe(["static"]);
    await pollUntil([second], [[]], "assigned again", () => second.assignment().length === 2);
    const after = second.groupMetadata();
    assert.equal(after.generationId, before.generationId, "no rebalance");
    assert.notEqual(after.memberId, before.memberId);
    const [g] = await groups.describeGroups(["g-static"]);
    assert.deepEqual(
      g.members.map((m) => [m.memberId, m.groupInstanceId]),
      [[after.memberId, "instance-1"]],
    );
  });

  test("partition.assignment.strategy: roundrobin when every member has it; none in common is refused", async () => {
    await createTopic("rr", 4);
    const a = member("g-rr", { "partition.assignment.strategy": "roundrobin,range" });
    const b = member("g-rr", {
      "partition.assignment.strategy": "org.apache.kafka.clients.consumer.RoundRobinAssignor",
    });
    await a.subscribe(["rr"]);
    await b.subscribe(["rr"]);
    await pollUntil(
      [a, b],
      [[], []],
      "two partitions each",
      () => a.assignment().length === 2 && b.assignment().length === 2,
    );
    const [g] = await groups.describeGroups(["g-rr"]);
    assert.equal(g.partitionAssignor, "roundrobin");
    // Round robin over members in member-id order: the first gets 0 and 2, the second 1 and 3.
    const [low, high] = [a, b].sort((x, y) =>
      x.groupMetadata().memberId < y.groupMetadata().memberId ? -1 : 1,
    );
    assert.deepEqual(low.assignment().map(tpName).sort(), ["rr-0", "rr-2"]);
    assert.deepEqual(high.assignment().map(tpName).sort(), ["rr-1", "rr-3"]);
    const c = member("g-rr", { "partition.assignment.strategy": "range" });
    await c.subscribe(["rr"]);
    await assert.rejects(
      (async () => {
        for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) await c.poll(200);
      })(),
      (e: KafkaClientError) => e.errorName === "INCONSISTENT_GROUP_PROTOCOL",
    );
    assert.throws(
      () => member("g-rr", { "partition.assignment.strategy": "sticky" }),
      /Invalid value sticky for configuration partition.assignment.strategy/,
    );
  });

  test("UNKNOWN_MEMBER_ID (the member was removed): it rejoins with a new member id", async () => {
    await createTopic("removed", 2);
    const c = member("g-removed");
    await c.subscribe(["removed"]);
    await pollUntil([c], [[]], "assigned", () => c.assignment().length === 2);
    const old = c.groupMetadata();
    // Another client removes the member (LeaveGroup with its id, as KIP-345's admin removal does).
    const node = await admin.cluster.findCoordinator("g-removed", "group");
    const conn = await BrokerConnection.connect(node.host, node.port, { clientId: "remover" });
    try {
      const res = await conn.send(Apis.LeaveGroup, 3, {
        groupId: "g-removed",
        memberId: "",
        members: [{ memberId: old.memberId, groupInstanceId: null, reason: null }],
      });
      assert.equal(res.errorCode, 0);
      assert.equal(res.members[0].errorCode, 0);
    } finally {
      conn.close();
    }
    await pollUntil([c], [[]], "rejoined with a new member id", () => {
      const now = c.groupMetadata();
      return now.memberId !== "" && now.memberId !== old.memberId && c.assignment().length === 2;
    });
    assert.ok(c.groupMetadata().generationId > old.generationId);
    // commitAsync with the new generation; the callback reports the result.
    await produce("removed", 1, 2, "x");
    const got: ConsumerRecord[][] = [[]];
    await pollUntil([c], got, "2 records", () => got[0].length >= 2);
    const error = await new Promise<Error | undefined>((res) =>
      c.commitAsync(undefined, (_offsets, e) => res(e)),
    );
    assert.equal(error, undefined);
    const committed = await c.committed([{ topic: "removed", partition: 0 }]);
    assert.equal(committed.get("removed-0")?.offset, 1n);
  });

  test("assign() and subscribe() are exclusive; group APIs need a group.id", async () => {
    const c = member("g-exclusive");
    c.assign([{ topic: "split", partition: 0 }]);
    await assert.rejects(c.subscribe(["split"]), (e: Error) => {
      assert.ok(e instanceof IllegalStateException);
      assert.equal(e.message, "Subscription to topics, partitions and pattern are mutually exclusive");
      return true;
    });
    await c.unsubscribe();
    await c.subscribe(["split"]);
    assert.throws(() => c.assign([{ topic: "split", partition: 0 }]), IllegalStateException);
    const noGroup = new KafkaConsumer({ "bootstrap.servers": broker.bootstrap });
    open.push(noGroup);
    await assert.rejects(noGroup.subscribe(["split"]), (e: KafkaClientError) => {
      assert.equal(e.errorName, "INVALID_GROUP_ID");
      assert.match(e.message, /you must provide a valid group\.id/);
      return true;
    });
    await assert.rejects(noGroup.poll(10), /not subscribed to any topics or assigned any partitions/);
  });
});
