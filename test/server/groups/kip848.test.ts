// The KIP-848 consumer protocol with a real client: @platformatic/kafka consumers with
// groupProtocol: 'consumer' (ConsumerGroupHeartbeat, the broker's uniform assignor). Two consumers split
// the partitions of a 6-partition topic and commit what they read; a third joins and partitions move
// without ever being owned by two consumers at once (sampled from the clients and from
// ConsumerGroupDescribe); one closes (leave with epoch -1) and the others take its partitions over. The
// committed offsets cover every record, the group is listed as a "consumer" group, and after a broker
// restart the group is reloaded from __consumer_offsets and its members carry on.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Consumer, type MessagesStream } from "@platformatic/kafka";
import type kafkajs from "kafkajs";
import { Apis } from "../../../src/protocol/generated/api-table.js";
import { type BrokerHarness, sleep, withDeadline } from "../../support/broker-harness.js";
import { runTributary } from "../../support/tributary-cli.js";
import { WireClient } from "../wire-client.js";
import { closeBounded, committedOffsets, produceTo, startGroupBroker } from "./group-support.js";

const TOPIC = "kip848-t";
const GROUP = "kip848-g";
const PARTITIONS = 6;
const PER_PARTITION = 5;
/** COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, GROUP_ID_NOT_FOUND (not yet). */
const NOT_YET = new Set([14, 15, 16, 69]);

interface Member {
  readonly name: string;
  readonly consumer: Consumer<Buffer, Buffer, Buffer, Buffer>;
  stream?: MessagesStream<Buffer, Buffer, Buffer, Buffer>;
  readonly read: Array<[partition: number, offset: number]>;
  reading?: Promise<void>;
  closed: boolean;
}

function partitionsOf(m: Member): number[] {
  return [...(m.consumer.assignments?.find((a) => a.topic === TOPIC)?.partitions ?? [])].sort(
    (a, b) => a - b,
  );
}

/** ConsumerGroupDescribe v0: each member's assigned partitions of TOPIC, and the group state. */
async function describeConsumerGroup(broker: BrokerHarness): Promise<{
  state: string;
  epoch: number;
  assignor: string;
  members: Map<string, number[]>;
}> {
  const c = await WireClient.connect(broker.port);
  try {
    const res = await c.request(Apis.ConsumerGroupDescribe, 0, {
      groupIds: [GROUP],
      includeAuthorizedOperations: false,
    });
    const g = res.groups[0];
    // Until a consumer's FindCoordinator creates and loads __consumer_offsets and the first heartbeat
    // creates the group, there is nothing to describe.
    if (NOT_YET.has(g.errorCode))
      return { state: `error ${g.errorCode}`, epoch: -1, assignor: "", members: new Map() };
    assert.equal(g.errorCode, 0, `ConsumerGroupDescribe: ${g.errorMessage}`);
    const members = new Map<string, number[]>();
    for (const m of g.members) {
      const mine = m.assignment.topicPartitions.filter((tp) => tp.topicName === TOPIC);
      members.set(
        m.memberId,
        mine.flatMap((tp) => tp.partitions).sort((a, b) => a - b),
      );
    }
    return { state: g.groupState, epoch: g.groupEpoch, assignor: g.assignorName, members };
  } finally {
    c.close();
  }
}

describe("KIP-848 consumer protocol with @platformatic/kafka", { timeout: 240_000 }, () => {
  let broker: BrokerHarness;
  let producer: kafkajs.Producer;
  const members: Member[] = [];
  const overlaps: string[] = [];
  let sampling = true;
  let sampler: Promise<void> | undefined;

  const live = () => members.filter((m) => !m.closed);

  function startMember(name: string): Member {
    const consumer = new Consumer({
      bootstrapBrokers: [broker.bootstrap],
      clientId: `kip848-${name}`,
      groupId: GROUP,
      groupProtocol: "consumer",
      timeout: 10_000,
      // Long enough to ride out the broker restart of the last test on a loaded machine (~15 s).
      retries: 60,
      retryDelay: 250,
      maxWaitTime: 100,
    });
    const m: Member = { name, consumer, read: [], closed: false };
    members.push(m);
    m.reading = (async () => {
      m.stream = await consumer.consume({
        topics: [TOPIC],
        mode: "committed",
        fallbackMode: "earliest",
        autocommit: false,
      });
      for await (const msg of m.stream) {
        m.read.push([msg.partition, Number(msg.offset)]);
        // A commit racing an epoch bump is STALE_MEMBER_EPOCH; the next record's commit covers it.
        await Promise.resolve(msg.commit()).catch(() => undefined);
      }
    })();
    return m;
  }

  async function closeMember(m: Member): Promise<void> {
    m.closed = true;
    await withDeadline(`${m.name} stream close`, 10_000, m.stream?.close() ?? Promise.resolve());
    await closeBounded(m.consumer, `${m.name} consumer`);
    await m.reading?.catch(() => undefined);
  }

  /** Waits until the live consumers hold every partition, `sizes` of them each, as the broker says too. */
  async function waitForSplit(sizes: number[], what: string): Promise<void> {
    const deadline = Date.now() + 90_000;
    let last = "";
    while (Date.now() < deadline) {
      const views = live().map(partitionsOf);
      const all = views.flat().sort((a, b) => a - b);
      const d = await describeConsumerGroup(broker);
      const brokerSizes = [...d.members.values()].map((p) => p.length).sort();
      last = `clients ${JSON.stringify(views)}; broker ${d.state} ${JSON.stringify([...d.members.values()])}`;
      if (
        JSON.stringify(all) === JSON.stringify([0, 1, 2, 3, 4, 5]) &&
        JSON.stringify(views.map((v) => v.length).sort()) === JSON.stringify(sizes) &&
        JSON.stringify(brokerSizes) === JSON.stringify(sizes) &&
        d.state === "Stable"
      )
        return;
      await sleep(200);
    }
    assert.fail(`${what}: the partitions were not split as ${JSON.stringify(sizes)}: ${last}`);
  }

  before(async () => {
    ({ broker, producer } = await startGroupBroker("kip848", "kip848-setup", [
      { topic: TOPIC, numPartitions: PARTITIONS },
    ]));
    await produceTo(producer, TOPIC, PARTITIONS, PER_PARTITION, "a");
    // No partition may be held by two live consumers at any sampled moment.
    sampler = (async () => {
      while (sampling) {
        const seen = new Map<number, string>();
        for (const m of live()) {
          for (const p of partitionsOf(m)) {
            const other = seen.get(p);
            if (other !== undefined) overlaps.push(`partition ${p} held by ${other} and ${m.name}`);
            seen.set(p, m.name);
          }
        }
        await sleep(20);
      }
    })();
  });

  after(async () => {
    sampling = false;
    await sampler;
    for (const m of live()) await closeMember(m).catch(() => undefined);
    await producer?.disconnect().catch(() => undefined);
    await broker?.close();
  });

  test("two consumers split the partitions and commit what they read", async () => {
    startMember("c1");
    startMember("c2");
    await waitForSplit([3, 3], "two consumers");
    const d = await describeConsumerGroup(broker);
    assert.equal(d.assignor, "uniform");
    // kafka-consumer-groups.sh describes it through ConsumerGroupDescribe, as Kafka's admin client does.
    const tool = await runTributary([
      "consumer-groups",
      "--bootstrap-server",
      broker.bootstrap,
      "--describe",
      "--group",
      GROUP,
      "--members",
    ]);
    assert.equal(tool.code, 0, tool.stderr);
    const rows = tool.stdout.split("\n").filter((l) => l.startsWith(`${GROUP} `));
    assert.equal(rows.length, 2, tool.stdout);
    for (const row of rows) assert.equal(row.trim().split(/\s+/).at(-1), "3", row);
    await waitForCommitted(PER_PARTITION);
    const read = members.flatMap((m) => m.read.map(([p, o]) => `${p}:${o}`));
    assert.equal(new Set(read).size, PARTITIONS * PER_PARTITION, "every record was read");
  });

  async function waitForCommitted(expected: number): Promise<void> {
    const want: Record<number, number> = {};
    for (let p = 0; p < PARTITIONS; p++) want[p] = expected;
    let got: Record<number, number> = {};
    for (let i = 0; i < 150; i++) {
      got = await committedOffsets(broker, GROUP, TOPIC, PARTITIONS);
      if (JSON.stringify(got) === JSON.stringify(want)) return;
      await sleep(200);
    }
    assert.deepEqual(got, want, "committed offsets");
  }

  test("a third consumer joins: partitions move without overlap, 2 each", async () => {
    startMember("c3");
    await waitForSplit([2, 2, 2], "three consumers");
    await produceTo(producer, TOPIC, PARTITIONS, PER_PARTITION, "b");
    await waitForCommitted(2 * PER_PARTITION);
    assert.deepEqual(overlaps, []);
    const c3 = members.find((m) => m.name === "c3")!;
    assert.ok(c3.read.length > 0, "the new consumer reads its partitions");
    assert.ok(
      c3.read.every(([, o]) => o >= PER_PARTITION),
      "it starts at the committed offsets",
    );
  });

  test("one consumer closes (leaves with epoch -1): the others take over its partitions", async () => {
    await closeMember(members.find((m) => m.name === "c1")!);
    await waitForSplit([3, 3], "after c1 left");
    await produceTo(producer, TOPIC, PARTITIONS, PER_PARTITION, "c");
    await waitForCommitted(3 * PER_PARTITION);
    assert.deepEqual(overlaps, []);
    const c = await WireClient.connect(broker.port);
    try {
      const res = await c.request(Apis.ListGroups, 5, { statesFilter: [], typesFilter: ["consumer"] });
      const g = res.groups.find((x: { groupId: string }) => x.groupId === GROUP);
      assert.deepEqual(
        { type: g?.groupType, state: g?.groupState, protocolType: g?.protocolType },
        { type: "consumer", state: "Stable", protocolType: "consumer" },
      );
    } finally {
      c.close();
    }
  });

  test("the broker restarts: the group comes back from __consumer_offsets and the members carry on", async () => {
    const before = await describeConsumerGroup(broker);
    assert.equal(await broker.stop("SIGTERM"), 0, `clean exit on SIGTERM\n${broker.output}`);
    await broker.restart();
    await produceTo(producer, TOPIC, PARTITIONS, PER_PARTITION, "d");
    await waitForCommitted(4 * PER_PARTITION);
    const after = await describeConsumerGroup(broker);
    assert.ok(
      after.epoch >= before.epoch,
      `group epoch ${before.epoch} → ${after.epoch} (reloaded, not reset)`,
    );
    await waitForSplit([3, 3], "after the restart");
    assert.deepEqual(overlaps, []);
  });
});
