// Mixed clients in one consumer group with the range assignor (issue 6, "Must show"): two confluent-kafka
// Consumers (partition.assignment.strategy=range) and two kafka-python KafkaConsumers
// (RangePartitionAssignor) in one group on an 8-partition topic, each a separate python process. Once the
// rebalance settles, the group is Stable with the protocol "range", the members' assignments (decoded
// from DescribeGroups with the generated ConsumerProtocolAssignment codec) cover every partition exactly
// once, are Kafka's range split (contiguous blocks of two, in member-id order), and are what each client
// itself reports; the group then reads and commits everything.
//
// KafkaJS is not in the group: its only assignor is "RoundRobinAssigner" (a protocol name no other client
// offers), so it can never agree on a protocol with these members (Kafka answers such a JoinGroup with
// INCONSISTENT_GROUP_PROTOCOL); two KafkaJS consumers share a group of their own instead.
// @platformatic/kafka likewise only ships a round-robin assigner (protocol "roundrobin"); it joins the
// second group, with kcat -G, confluent-kafka and kafka-python all using "roundrobin".

import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { after, before, describe, test } from "node:test";
import type kafkajs from "kafkajs";
import { type BrokerHarness, waitFor, withDeadline } from "../../support/broker-harness.js";
import { skipUnlessInstalled } from "../../support/required-tools.js";
import {
  closeBounded,
  committedOffsets,
  type DescribedGroup,
  describeGroup,
  expectedValues,
  kafkaFor,
  Member,
  platformaticClassicConsumer,
  produceTo,
  startGroupBroker,
} from "./group-support.js";

const PARTITIONS = 8;
const PER_PARTITION = 25;
const KCAT = "/usr/bin/kcat";
const all = Array.from({ length: PARTITIONS }, (_, i) => i);

/** Every partition of the topic is in exactly one member's assignment. */
function assertCoversOnce(g: DescribedGroup): void {
  const owned = g.members.flatMap((m) => m.partitions).sort((a, b) => a - b);
  assert.deepEqual(owned, all, `each partition owned exactly once: ${JSON.stringify(g.members)}`);
}

describe("mixed clients in one group", {
  skip: skipUnlessInstalled("python3", "confluent-kafka", "kafka-python", "kcat"),
  timeout: 120_000,
}, () => {
  let broker: BrokerHarness;
  let producer: kafkajs.Producer;
  const members: Member[] = [];

  before(async () => {
    ({ broker, producer } = await startGroupBroker("mixed-group", "mixed-setup", [
      { topic: "mixed-range", numPartitions: PARTITIONS },
      { topic: "mixed-rr", numPartitions: PARTITIONS },
      { topic: "mixed-kjs", numPartitions: 6 },
    ]));
    await produceTo(producer, "mixed-range", PARTITIONS, PER_PARTITION, "r");
    await produceTo(producer, "mixed-rr", PARTITIONS, PER_PARTITION, "rr");
    await produceTo(producer, "mixed-kjs", 6, PER_PARTITION, "kjs");
  });

  after(async () => {
    await Promise.all(members.map((m) => m.stop("SIGKILL").catch(() => undefined)));
    await producer?.disconnect().catch(() => undefined);
    await broker?.close();
  });

  /** Waits until the group is Stable with `ids` as members and each client reports what the broker says. */
  async function settled(
    group: string,
    topic: string,
    ids: string[],
    reported: (id: string) => number[] | undefined,
  ) {
    return waitFor(`group ${group} settles with ${ids.join(", ")}`, 40_000, async () => {
      const g = await describeGroup(broker, group, topic);
      if (g.state !== "Stable" || g.members.length !== ids.length) return undefined;
      for (const m of g.members) {
        const r = reported(m.clientId);
        if (r === undefined || JSON.stringify([...r].sort((a, b) => a - b)) !== JSON.stringify(m.partitions))
          return undefined;
      }
      return g;
    }).catch((e) => {
      throw new Error(
        `${(e as Error).message}\n${members.map((m) => m.describe()).join("\n")}\n${broker.output}`,
      );
    });
  }

  test("confluent-kafka (range) and kafka-python (RangePartitionAssignor) share 8 partitions without overlap", async () => {
    const group = "mixed-range-group";
    const kinds = ["confluent-kafka", "kafka-python", "confluent-kafka", "kafka-python"];
    const mine = kinds.map(
      (client, i) =>
        new Member(broker, `mixed-${client}-${i}`, {
          client,
          group,
          topic: "mixed-range",
          assignor: "range",
          session_timeout_ms: 6000,
        }),
    );
    members.push(...mine);
    const g = await settled(
      group,
      "mixed-range",
      mine.map((m) => m.clientId),
      (id) => mine.find((m) => m.clientId === id)?.assignment,
    );
    assert.equal(g.errorCode, 0);
    assert.equal(g.protocolType, "consumer");
    assert.equal(g.protocol, "range");
    assert.deepEqual(g.members.map((m) => m.clientId).sort(), mine.map((m) => m.clientId).sort());
    assertCoversOnce(g);
    // Kafka's range split: members sorted by member id get consecutive blocks of PARTITIONS / members.
    const byId = [...g.members].sort((a, b) => (a.memberId < b.memberId ? -1 : 1));
    byId.forEach((m, i) => {
      assert.deepEqual(m.partitions, [2 * i, 2 * i + 1], `range block of ${m.clientId} (${m.memberId})`);
    });
    // Together they read and commit everything.
    await waitFor("the group commits every record", 30_000, async () => {
      const c = await committedOffsets(broker, group, "mixed-range", PARTITIONS);
      return Object.values(c).every((o) => o === PER_PARTITION) ? c : undefined;
    });
    // Each member only committed partitions it was assigned at the time (its last assignment).
    for (const m of mine) {
      const commits = m.events.filter((e) => e.event === "commit");
      const lastAssigned = Math.max(...m.events.filter((e) => e.event === "assigned").map((e) => e.seq));
      for (const c of commits.filter((e) => e.seq > lastAssigned))
        for (const p of Object.keys(c.offsets ?? {}))
          assert.ok(
            m.assignment?.includes(Number(p)),
            `${m.clientId} committed partition ${p}\n${m.describe()}`,
          );
    }
    // Leaving (LeaveGroup on close): the group ends Empty with its offsets kept.
    await Promise.all(mine.map((m) => m.stop("SIGTERM")));
    for (const m of mine)
      assert.ok(
        m.events.some((e) => e.event === "closed"),
        m.describe(),
      );
    const after = await describeGroup(broker, group, "mixed-range");
    assert.equal(after.state, "Empty");
    assert.deepEqual(after.members, []);
  });

  test("@platformatic/kafka (leader), kcat -G, confluent-kafka and kafka-python share 8 partitions with roundrobin", async () => {
    // @platformatic/kafka joins first and so stays the group's leader, computing the assignment with its
    // round-robin assigner. (It sends a version-1 subscription without the OwnedPartitions field that
    // version 1 adds; librdkafka, as leader, cannot parse that and assigns it nothing; the broker passes
    // member metadata through untouched, as Kafka does.)
    const group = "mixed-rr-group";
    const consumer = platformaticClassicConsumer(broker, "mixed-rr-platformatic", group);
    let pkAssigned: number[] | undefined;
    let pkLeader: boolean | undefined;
    consumer.on(
      "consumer:group:join",
      (e: { isLeader?: boolean; assignments?: Array<{ topic: string; partitions: number[] }> }) => {
        pkLeader = e.isLeader;
        pkAssigned = [...(e.assignments?.find((a) => a.topic === "mixed-rr")?.partitions ?? [])];
      },
    );
    let stream: Awaited<ReturnType<typeof consumer.consume>> | undefined;
    const mine: Member[] = [];
    let kcat: ChildProcess | undefined;
    let kcatExit: Promise<void> = Promise.resolve();
    let kcatStderr = "";
    try {
      stream = await consumer.consume({
        topics: ["mixed-rr"],
        mode: "committed",
        fallbackMode: "earliest",
        autocommit: 100,
      });
      stream.on("data", () => {});
      await waitFor("@platformatic/kafka is alone in the group, with every partition", 20_000, async () =>
        pkAssigned?.length === PARTITIONS ? true : undefined,
      );
      assert.equal(pkLeader, true);

      for (const client of ["confluent-kafka", "kafka-python"])
        mine.push(
          new Member(broker, `mixed-rr-${client}`, {
            client,
            group,
            topic: "mixed-rr",
            assignor: "roundrobin",
            session_timeout_ms: 6000,
          }),
        );
      members.push(...mine);
      // kcat's balanced consumer prints each rebalance on stderr:
      // "% Group g rebalanced (memberid …): assigned: mixed-rr [1], mixed-rr [5]".
      kcat = spawn(
        KCAT,
        [
          ...[
            "-b",
            broker.bootstrap,
            "-G",
            group,
            "mixed-rr",
            "-X",
            "partition.assignment.strategy=roundrobin",
          ],
          ...["-X", "client.id=mixed-rr-kcat", "-X", "auto.offset.reset=earliest"],
          ...["-X", "auto.commit.interval.ms=200", "-X", "fetch.wait.max.ms=100", "-f", "%p %o\\n"],
        ],
        { stdio: ["ignore", "ignore", "pipe"] },
      );
      const k = kcat;
      kcatExit = new Promise<void>((res) => k.once("exit", () => res()));
      k.stderr?.setEncoding("utf8");
      k.stderr?.on("data", (d: string) => {
        kcatStderr += d;
      });
      const kcatAssigned = (): number[] | undefined => {
        const lines = kcatStderr.split("\n").filter((l) => / rebalanced .*: (assigned|revoked):/.test(l));
        const lastLine = lines.at(-1);
        if (lastLine === undefined || !lastLine.includes("assigned:")) return undefined;
        return [...lastLine.matchAll(/mixed-rr \[(\d+)\]/g)].map((m) => Number(m[1]));
      };
      const reported = (id: string) => {
        if (id === "mixed-rr-platformatic") return pkAssigned;
        if (id === "mixed-rr-kcat") return kcatAssigned();
        return mine.find((m) => m.clientId === id)?.assignment;
      };

      const g = await settled(
        group,
        "mixed-rr",
        [...mine.map((m) => m.clientId), "mixed-rr-platformatic", "mixed-rr-kcat"],
        reported,
      ).catch((e) => {
        throw new Error(
          `${(e as Error).message}\n--- kcat stderr ---\n${kcatStderr.slice(-3000)}\nplatformatic: ${pkAssigned}`,
        );
      });
      assert.equal(g.protocol, "roundrobin");
      assert.equal(pkLeader, true, "@platformatic/kafka is still the leader");
      assertCoversOnce(g);
      // Round robin over 4 members: two partitions each.
      for (const m of g.members) assert.equal(m.partitions.length, 2, JSON.stringify(g));
      await waitFor("the group commits every record", 30_000, async () => {
        const c = await committedOffsets(broker, group, "mixed-rr", PARTITIONS);
        return Object.values(c).every((o) => o === PER_PARTITION) ? c : undefined;
      });
    } finally {
      // Cleanup errors must not hide the test's own failure.
      await withDeadline("platformatic stream close", 10_000, stream?.close() ?? Promise.resolve()).catch(
        () => undefined,
      );
      await closeBounded(consumer, "@platformatic/kafka consumer").catch(() => undefined);
      kcat?.kill("SIGTERM");
      await withDeadline("kcat exit after SIGTERM", 10_000, kcatExit).catch(() => kcat?.kill("SIGKILL"));
      await Promise.all(mine.map((m) => m.stop("SIGTERM")));
    }
  });

  test("KafkaJS: two consumers in one group (RoundRobinAssigner) share 6 partitions and read everything", async () => {
    const group = "mixed-kafkajs-group";
    const kafka = kafkaFor(broker, "mixed-kafkajs");
    const consumers = [0, 1].map(() =>
      kafka.consumer({ groupId: group, maxWaitTimeInMs: 100, sessionTimeout: 6000, heartbeatInterval: 500 }),
    );
    const assigned = new Map<string, number[]>();
    const values: string[] = [];
    try {
      for (const c of consumers) {
        c.on(c.events.GROUP_JOIN, (e: kafkajs.ConsumerGroupJoinEvent) => {
          assigned.set(e.payload.memberId, [...(e.payload.memberAssignment["mixed-kjs"] ?? [])].sort());
        });
        await c.connect();
        await c.subscribe({ topics: ["mixed-kjs"], fromBeginning: true });
      }
      for (const c of consumers)
        await c.run({
          eachMessage: async ({ message }) => {
            values.push(message.value?.toString() ?? "");
          },
        });
      const g = await waitFor("the KafkaJS group settles with two members", 40_000, async () => {
        const d = await describeGroup(broker, group, "mixed-kjs");
        if (d.state !== "Stable" || d.members.length !== 2) return undefined;
        for (const m of d.members)
          if (JSON.stringify(assigned.get(m.memberId)) !== JSON.stringify(m.partitions)) return undefined;
        return d;
      });
      assert.equal(g.protocol, "RoundRobinAssigner");
      assert.deepEqual(
        g.members.flatMap((m) => m.partitions).sort(),
        [0, 1, 2, 3, 4, 5],
        JSON.stringify(g.members),
      );
      for (const m of g.members) assert.equal(m.partitions.length, 3, JSON.stringify(g.members));
      await waitFor("the KafkaJS group commits every record", 30_000, async () => {
        const c = await committedOffsets(broker, group, "mixed-kjs", 6);
        return Object.values(c).every((o) => o === PER_PARTITION) ? c : undefined;
      });
      assert.deepEqual([...new Set(values)].sort(), expectedValues(6, PER_PARTITION, "kjs"));
    } finally {
      await Promise.all(consumers.map((c) => c.disconnect().catch(() => undefined)));
    }
  });
});
