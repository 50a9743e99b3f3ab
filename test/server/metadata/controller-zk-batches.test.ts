// Issue 34: the controller writes many partitions' state per ZooKeeper multi (fenced-batches.ts) and keeps
// Kafka's semantics. Against a real ZooKeeper server: creation and elections take one fenced multi per
// PARTITIONS_PER_MULTI partitions; a partition whose znode moved on (or exists already) fails alone; a newer
// controller epoch fences every multi, so nothing is written. On the embedded store, a controller that
// died between two batches (some partitions created or re-elected, the rest not) leaves a state the next
// controller completes without writing a partition twice, and each broker gets the LeaderAndIsr of a
// change before the UpdateMetadata that announces it.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setLogLevel } from "../../../src/common/logger.js";
import { MockTime } from "../../../src/common/time.js";
import { EmbeddedMetadataStore } from "../../../src/server/metadata/embedded-metadata-store.js";
import { PARTITIONS_PER_MULTI } from "../../../src/server/metadata/fenced-batches.js";
import { ControllerMovedError, KafkaZkClient } from "../../../src/server/metadata/kafka-zk-client.js";
import type { MetadataStore, Op } from "../../../src/server/metadata/metadata-store.js";
import {
  ControllerEpochZNode,
  type LeaderAndIsr,
  TopicPartitionStateZNode,
  TopicZNode,
  ZkPaths,
} from "../../../src/server/metadata/zk-data.js";
import { ZooKeeperMetadataStore } from "../../../src/server/metadata/zookeeper-metadata-store.js";
import { ZooKeeperHarness } from "../../support/zookeeper-harness.js";
import { MetadataStack, removeDir, tempDir } from "./metadata-test-utils.js";

setLogLevel("WARN");

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

/** The multis a store ran, as their op lists (the store itself is real: this only records). */
function recordMultis(store: MetadataStore): Op[][] {
  const seen: Op[][] = [];
  const multi = store.multi.bind(store);
  store.multi = (ops) => {
    seen.push([...ops]);
    return multi(ops);
  };
  return seen;
}

async function stateOf(store: MetadataStore, topic: string, partition: number) {
  const path = ZkPaths.partitionState(topic, partition);
  const n = await store.get(path);
  assert.ok(n, `${path} exists`);
  return { ...TopicPartitionStateZNode.decode(path, n.data), zkVersion: n.stat.version };
}

async function createTopicZnode(store: MetadataStore, topic: string, replicas: Map<number, number[]>) {
  await store.create(
    ZkPaths.topic(topic),
    TopicZNode.encode({
      topicId: "AAAAAAAAAAAAAAAAAAAAAQ",
      partitions: replicas,
      addingReplicas: new Map(),
      removingReplicas: new Map(),
    }),
  );
}

describe("controller writes batched into fenced multis (real ZooKeeper)", () => {
  let zk: ZooKeeperHarness;
  let store: ZooKeeperMetadataStore;
  let client: KafkaZkClient;
  let epochZkVersion: number;
  let epoch: number;
  const N = 450;
  const leader0 = (): LeaderAndIsr => ({ leader: 0, leaderEpoch: 0, isr: [0, 1], controllerEpoch: epoch });

  before(async () => {
    zk = await ZooKeeperHarness.start({ servers: 1 });
    store = await ZooKeeperMetadataStore.connect(zk.connectString, {
      sessionTimeoutMs: 6000,
      connectionTimeoutMs: 10_000,
    });
    client = new KafkaZkClient(store);
    await client.createTopLevelPaths();
    const won = await client.registerControllerAndIncrementControllerEpoch(0, Date.now());
    assert.ok(won);
    ({ epoch, epochZkVersion } = won);
    for (const t of ["t", "u"]) await createTopicZnode(store, t, new Map(range(N).map((p) => [p, [0, 1]])));
  });
  after(async () => {
    await store?.close();
    await zk?.close();
  });

  it(`creates ${N} partitions' state in ${Math.ceil(N / PARTITIONS_PER_MULTI)} multis, each fenced by the controller epoch`, async () => {
    const multis = recordMultis(store);
    const result = await client.createTopicPartitionStates(
      range(N).map((partition) => ({ topic: "t", partition, leaderAndIsr: leader0() })),
      epochZkVersion,
    );
    assert.deepEqual(
      [...result.values()].filter((v) => v !== 0),
      [],
    );
    const stateMultis = multis.filter((ops) =>
      ops.some((op) => op.type === "create" && op.path.endsWith("/state")),
    );
    assert.equal(stateMultis.length, Math.ceil(N / PARTITIONS_PER_MULTI));
    for (const ops of multis)
      assert.deepEqual(ops[0], { type: "check", path: ZkPaths.controllerEpoch, version: epochZkVersion });
    assert.deepEqual(await stateOf(store, "t", N - 1), { ...leader0(), zkVersion: 0 });
  });

  it("one partition whose zkVersion moved on fails with BadVersion; the others are written", async () => {
    const stale = 17;
    const { written, failed } = await client.updateLeaderAndIsr(
      range(N).map((partition) => ({
        topic: "t",
        partition,
        leaderAndIsr: { leader: 1, leaderEpoch: 1, isr: [1], controllerEpoch: epoch },
        zkVersion: partition === stale ? 5 : 0,
      })),
      epochZkVersion,
    );
    assert.deepEqual([...failed], [[`t-${stale}`, "BadVersion"]]);
    assert.equal(written.size, N - 1);
    assert.ok([...written.values()].every((v) => v === 1));
    assert.deepEqual(await stateOf(store, "t", stale), { ...leader0(), zkVersion: 0 });
    assert.deepEqual(await stateOf(store, "t", stale + 1), {
      leader: 1,
      leaderEpoch: 1,
      isr: [1],
      controllerEpoch: epoch,
      zkVersion: 1,
    });
  });

  it("one partition whose state exists already answers NodeExists; the others are created", async () => {
    const existing = 3;
    await store.create(ZkPaths.partitions("u"), Buffer.alloc(0));
    await store.create(ZkPaths.partition("u", existing), Buffer.alloc(0));
    await store.create(ZkPaths.partitionState("u", existing), TopicPartitionStateZNode.encode(leader0()));
    const result = await client.createTopicPartitionStates(
      range(300).map((partition) => ({
        topic: "u",
        partition,
        leaderAndIsr: { ...leader0(), leader: 1 },
      })),
      epochZkVersion,
    );
    assert.equal(result.get(`u-${existing}`), "NodeExists");
    assert.deepEqual(
      [...result].filter(([, v]) => v !== 0),
      [[`u-${existing}`, "NodeExists"]],
    );
    assert.equal((await stateOf(store, "u", existing)).leader, 0);
    assert.equal((await stateOf(store, "u", 299)).leader, 1);
  });

  it("a newer controller epoch fences every multi: ControllerMovedError and nothing written", async () => {
    // Another controller took the epoch.
    await store.set(ZkPaths.controllerEpoch, ControllerEpochZNode.encode(epoch + 1));
    await assert.rejects(
      client.updateLeaderAndIsr(
        range(N).map((partition) => ({
          topic: "t",
          partition,
          leaderAndIsr: { leader: 0, leaderEpoch: 2, isr: [0], controllerEpoch: epoch },
          zkVersion: 1,
        })),
        epochZkVersion,
      ),
      ControllerMovedError,
    );
    await assert.rejects(
      client.createTopicPartitionStates(
        range(N - 300).map((i) => ({ topic: "u", partition: 300 + i, leaderAndIsr: leader0() })),
        epochZkVersion,
      ),
      ControllerMovedError,
    );
    for (const p of [0, 200, 449]) assert.equal((await stateOf(store, "t", p)).leaderEpoch, 1);
    assert.ok(!(await store.exists(ZkPaths.partitionState("u", 300))), "nothing created");
  });
});

describe("a controller that died between two batches (embedded store)", () => {
  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) removeDir(d);
  });
  const N = 500;
  const FIRST_BATCH = PARTITIONS_PER_MULTI;

  /** A stack's directory after `write` ran there as the stack's (stopped) controller, with its epoch. */
  async function diedMidway(
    prepare: (store: EmbeddedMetadataStore, zk: KafkaZkClient, epochZkVersion: number) => Promise<void>,
  ): Promise<string> {
    const d = tempDir("ctrl-batches");
    dirs.push(d);
    await (await MetadataStack.start(d)).stop();
    const store = await EmbeddedMetadataStore.open(d, new MockTime());
    const node = await store.get(ZkPaths.controllerEpoch);
    assert.ok(node);
    await prepare(store, new KafkaZkClient(store), node.stat.version);
    await store.close();
    return d;
  }

  it("creation: the partitions of the batch that landed keep their state, the next controller creates the rest", async () => {
    const d = await diedMidway(async (store, zk, v) => {
      await createTopicZnode(store, "half", new Map(range(N).map((p) => [p, [0]])));
      const first = range(FIRST_BATCH).map((partition) => ({
        topic: "half",
        partition,
        leaderAndIsr: { leader: 0, leaderEpoch: 0, isr: [0], controllerEpoch: 1 },
      }));
      const r = await zk.createTopicPartitionStates(first, v);
      assert.ok([...r.values()].every((x) => x === 0));
    });
    const s = await MetadataStack.start(d);
    try {
      assert.equal(s.controller.epoch, 2);
      const states = await Promise.all(range(N).map((p) => stateOf(s.store, "half", p)));
      assert.ok(states.every((st) => st.leader === 0 && st.leaderEpoch === 0 && st.zkVersion === 0));
      assert.deepEqual(
        [...new Set(states.slice(0, FIRST_BATCH).map((st) => st.controllerEpoch))],
        [1],
        "the first batch is not written again",
      );
      assert.deepEqual([...new Set(states.slice(FIRST_BATCH).map((st) => st.controllerEpoch))], [2]);
      assert.equal(s.cache.partitionStates("half").filter((p) => p.leader === 0).length, N);
    } finally {
      await s.stop();
    }
  });

  it("election: the next controller elects the partitions the dead one did not reach, once; LeaderAndIsr before UpdateMetadata", async () => {
    const d = await diedMidway(async (store, zk, v) => {
      // Broker 1 led every partition; it died, and one batch of re-elections landed before the controller died.
      await createTopicZnode(store, "moved", new Map(range(N).map((p) => [p, [1, 0]])));
      await zk.createTopicPartitionStates(
        range(N).map((partition) => ({
          topic: "moved",
          partition,
          leaderAndIsr: { leader: 1, leaderEpoch: 0, isr: [1, 0], controllerEpoch: 1 },
        })),
        v,
      );
      const { failed } = await zk.updateLeaderAndIsr(
        range(FIRST_BATCH).map((partition) => ({
          topic: "moved",
          partition,
          leaderAndIsr: { leader: 0, leaderEpoch: 1, isr: [0], controllerEpoch: 1 },
          zkVersion: 0,
        })),
        v,
      );
      assert.equal(failed.size, 0);
    });
    const s = await MetadataStack.start(d);
    try {
      const states = await Promise.all(range(N).map((p) => stateOf(s.store, "moved", p)));
      assert.ok(
        states.every((st) => st.leader === 0 && st.leaderEpoch === 1 && st.zkVersion === 1),
        "every partition led by broker 0 at leader epoch 1: none elected twice",
      );
      assert.deepEqual([...new Set(states.slice(0, FIRST_BATCH).map((st) => st.controllerEpoch))], [1]);
      assert.deepEqual([...new Set(states.slice(FIRST_BATCH).map((st) => st.controllerEpoch))], [2]);
      // The broker learns of the elections by LeaderAndIsr first, then by UpdateMetadata.
      const mentions = (kind: string, epochWanted: number) =>
        s.received.findIndex(
          (r) =>
            r.kind === kind &&
            r.request.topicStates.some(
              (t) =>
                t.topicName === "moved" &&
                t.partitionStates.some((p) => p.partitionIndex === N - 1 && p.leaderEpoch === epochWanted),
            ),
        );
      const lai = mentions("LeaderAndIsr", 1);
      const um = mentions("UpdateMetadata", 1);
      assert.ok(lai >= 0 && um >= 0, `both requests arrived (${s.received.map((r) => r.kind).join(",")})`);
      assert.ok(lai < um, `LeaderAndIsr (#${lai}) before UpdateMetadata (#${um})`);
    } finally {
      await s.stop();
    }
  });
});
