import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { MockTime } from "../../../src/common/time.js";
import { ErrorCode } from "../../../src/protocol/errors.js";
import { KafkaController } from "../../../src/server/controller/kafka-controller.js";
import type { EmbeddedMetadataStore } from "../../../src/server/metadata/embedded-metadata-store.js";
import { KafkaZkClient } from "../../../src/server/metadata/kafka-zk-client.js";
import { TopicPartitionStateZNode, ZkPaths } from "../../../src/server/metadata/zk-data.js";
import { MetadataStack, removeDir, tempDir } from "./metadata-test-utils.js";

const dirs: string[] = [];
function dir(): string {
  const d = tempDir("ctrl");
  dirs.push(d);
  return d;
}
after(() => {
  for (const d of dirs) removeDir(d);
});

async function json(stack: MetadataStack, path: string): Promise<unknown> {
  const n = await stack.store.get(path);
  assert.ok(n, `${path} exists`);
  return JSON.parse(n.data.toString("utf8"));
}

async function raw(stack: MetadataStack, path: string): Promise<string> {
  const n = await stack.store.get(path);
  assert.ok(n, `${path} exists`);
  return n.data.toString("utf8");
}

describe("KafkaController on the embedded store", () => {
  it("on an empty store: creates the top-level paths, cluster id, registration, controller epoch 1", async () => {
    const time = new MockTime(1_700_000_000_000);
    const s = await MetadataStack.start(dir(), { port: 9093 }, time);
    for (const p of [
      "/brokers/ids",
      "/brokers/topics",
      "/config/topics",
      "/config/changes",
      "/admin/delete_topics",
    ]) {
      assert.ok(await s.store.exists(p), p);
    }
    const cid = (await json(s, "/cluster/id")) as { version: string; id: string };
    assert.equal(cid.version, "1");
    assert.match(cid.id, /^[A-Za-z0-9_-]{22}$/);
    assert.equal(s.cache.clusterId, cid.id);
    assert.equal(s.clusterId, cid.id);
    assert.equal(
      await raw(s, "/controller"),
      '{"version":2,"brokerid":0,"timestamp":"1700000000000","kraftControllerEpoch":-1}',
    );
    assert.ok((await s.store.exists("/controller"))!.ephemeralOwner !== 0n);
    assert.equal(await raw(s, "/controller_epoch"), "1");
    assert.equal(s.controller.epoch, 1);
    assert.ok(s.controller.isActive);
    assert.equal(s.cache.controllerId, 0);
    assert.equal(
      await raw(s, "/brokers/ids/0"),
      '{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://localhost:9093"],"jmx_port":-1,"port":9093,"host":"localhost","version":5,"timestamp":"1700000000000"}',
    );
    assert.ok((await s.store.exists("/brokers/ids/0"))!.ephemeralOwner !== 0n);
    assert.deepEqual(
      s.cache.aliveBrokers().map((b) => [b.id, b.endpoints[0].host, b.endpoints[0].port, b.rack]),
      [[0, "localhost", 9093, null]],
    );
    await s.stop();
  });

  it("writes the rack in the registration", async () => {
    const s = await MetadataStack.start(dir(), { rack: "r1" });
    const reg = (await json(s, "/brokers/ids/0")) as Record<string, unknown>;
    assert.equal(reg.rack, "r1");
    assert.equal(s.cache.aliveBroker(0)?.rack, "r1");
    await s.stop();
  });

  it("bumps the controller epoch on each restart and keeps the cluster id and topics", async () => {
    let s = await MetadataStack.start(dir());
    const cid = s.cache.clusterId;
    await s.admin.createTopics(
      [{ name: "t", numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }],
      {
        validateOnly: false,
        timeoutMs: 5000,
      },
    );
    s = await s.restart();
    assert.equal(await raw(s, "/controller_epoch"), "2");
    assert.equal(s.controller.epoch, 2);
    s = await s.restart();
    assert.equal(s.controller.epoch, 3);
    assert.equal(s.cache.clusterId, cid);
    // Partition states survive, leader epoch stays 0 (the same broker is still the leader).
    const states = s.cache.partitionStates("t");
    assert.deepEqual(
      states.map((p) => [p.partition, p.leader, p.leaderEpoch, p.isr]),
      [
        [0, 0, 0, [0]],
        [1, 0, 0, [0]],
      ],
    );
    // The initial delta hands every partition to the broker.
    assert.deepEqual(
      s.deltas[0].partitions.map((p) => `${p.topic}-${p.partition}`),
      ["t-0", "t-1"],
    );
    await s.stop();
  });

  it("writes Kafka's topic and partition-state JSON", async () => {
    const s = await MetadataStack.start(dir());
    const [r] = await s.admin.createTopics(
      [
        {
          name: "orders",
          numPartitions: 2,
          replicationFactor: 1,
          assignments: [],
          configs: [{ name: "retention.ms", value: "1000" }],
        },
      ],
      { validateOnly: false, timeoutMs: 5000 },
    );
    assert.equal(r.error, null);
    const id = s.cache.topicId("orders")!;
    assert.equal(r.topicId, id);
    assert.equal(
      await raw(s, "/brokers/topics/orders"),
      `{"version":3,"topic_id":"${id}","partitions":{"0":[0],"1":[0]},"adding_replicas":{},"removing_replicas":{}}`,
    );
    assert.equal(
      await raw(s, "/brokers/topics/orders/partitions/1/state"),
      '{"controller_epoch":1,"leader":0,"version":1,"leader_epoch":0,"isr":[0]}',
    );
    assert.equal(await raw(s, "/config/topics/orders"), '{"version":1,"config":{"retention.ms":"1000"}}');
    await s.stop();
  });

  it("deletes topics queued at /admin/delete_topics, znodes and config", async () => {
    const s = await MetadataStack.start(dir());
    await s.admin.createTopics(
      [{ name: "gone", numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }],
      {
        validateOnly: false,
        timeoutMs: 5000,
      },
    );
    s.deltas.length = 0;
    await s.store.create(ZkPaths.deleteTopic("gone"), Buffer.alloc(0));
    await s.settle();
    assert.equal(await s.store.exists("/brokers/topics/gone"), undefined);
    assert.equal(await s.store.exists("/config/topics/gone"), undefined);
    assert.equal(await s.store.exists("/admin/delete_topics/gone"), undefined);
    assert.equal(s.cache.hasTopic("gone"), false);
    assert.deepEqual(
      s.deltas.flatMap((d) => d.removed),
      [
        { topic: "gone", partition: 0 },
        { topic: "gone", partition: 1 },
      ],
    );
    await s.stop();
  });

  it("leaves topics alone and clears the queue entry when delete.topic.enable=false", async () => {
    const s = await MetadataStack.start(dir(), { deleteTopicEnable: false });
    await s.admin.createTopics(
      [{ name: "kept", numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
      {
        validateOnly: false,
        timeoutMs: 5000,
      },
    );
    await s.store.create(ZkPaths.deleteTopic("kept"), Buffer.alloc(0));
    await s.settle();
    assert.ok(await s.store.exists("/brokers/topics/kept"));
    assert.equal(await s.store.exists("/admin/delete_topics/kept"), undefined);
    await s.stop();
  });

  it("gives new partitions (assignment change) a state", async () => {
    const s = await MetadataStack.start(dir());
    await s.admin.createTopics(
      [{ name: "grow", numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
      {
        validateOnly: false,
        timeoutMs: 5000,
      },
    );
    const [r] = await s.admin.createPartitions([{ name: "grow", count: 3, assignments: null }], {
      validateOnly: false,
      timeoutMs: 5000,
    });
    assert.equal(r.error, null);
    assert.deepEqual(
      s.cache.partitionStates("grow").map((p) => [p.partition, p.leader, p.replicas]),
      [
        [0, 0, [0]],
        [1, 0, [0]],
        [2, 0, [0]],
      ],
    );
    await s.stop();
  });

  it("second controller on the same store waits; takes over (epoch + 1) when the first goes", async () => {
    const time = new MockTime();
    const d = dir();
    const s = await MetadataStack.start(d, {}, time);
    const otherZk = new KafkaZkClient(s.store);
    await otherZk.registerBroker({
      id: 1,
      endpoints: [{ listenerName: "PLAINTEXT", securityProtocol: "PLAINTEXT", host: "127.0.0.1", port: 1 }],
      rack: null,
      jmxPort: -1,
      timestampMs: 0,
    });
    const other = new KafkaController(otherZk, {
      brokerId: 1,
      time,
      deleteTopicEnable: true,
      uncleanLeaderElectionEnable: false,
      interBrokerListenerName: "PLAINTEXT",
    });
    await other.startup();
    await s.settle();
    assert.equal(other.isActive, false);
    assert.deepEqual(
      s.cache.aliveBrokers().map((b) => b.id),
      [0, 1],
    );
    // Broker 0 resigns (its /controller znode goes): broker 1 is elected with epoch 2.
    await s.controller.shutdown();
    await s.store.delete("/controller");
    await s.settle();
    await other.idle();
    assert.equal(other.isActive, true);
    assert.equal(other.epoch, 2);
    assert.equal(JSON.parse((await s.store.get("/controller"))!.data.toString()).brokerid, 1);
    await other.shutdown();
    await s.stop();
  });

  it("moves leadership off a dead broker and bumps the leader epoch (CAS)", async () => {
    const time = new MockTime();
    const s = await MetadataStack.start(dir(), {}, time);
    // A second broker registers; a topic is placed on [1, 0].
    const store: EmbeddedMetadataStore = s.store;
    await store.create(
      ZkPaths.brokerId(1),
      Buffer.from(
        '{"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://h1:9094"],"jmx_port":-1,"port":9094,"host":"h1","version":5,"timestamp":"0"}',
      ),
      { ephemeral: true },
    );
    await s.settle();
    await s.admin.createTopics(
      [
        {
          name: "ha",
          numPartitions: -1,
          replicationFactor: -1,
          assignments: [{ partitionIndex: 0, brokerIds: [1, 0] }],
          configs: [],
        },
      ],
      { validateOnly: false, timeoutMs: 5000 },
    );
    await s.settle();
    let st = s.cache.partitionState("ha", 0)!;
    assert.deepEqual([st.leader, st.leaderEpoch, st.isr], [1, 0, [1, 0]]);
    await store.delete(ZkPaths.brokerId(1));
    await s.settle();
    st = s.cache.partitionState("ha", 0)!;
    assert.deepEqual([st.leader, st.leaderEpoch, st.isr, st.zkVersion], [0, 1, [0], 1]);
    const state = TopicPartitionStateZNode.decode(
      "x",
      (await store.get(ZkPaths.partitionState("ha", 0)))!.data,
    );
    assert.equal(state.controllerEpoch, 1);
    await s.stop();
  });
});

describe("MetadataCache", () => {
  it("sees a topic deleted and re-created under the same name as a removal, then a new topic", async () => {
    const s = await MetadataStack.start(dir());
    await s.admin.createTopics(
      [{ name: "re", numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
      {
        validateOnly: false,
        timeoutMs: 5000,
      },
    );
    const oldId = s.cache.topicId("re");
    s.deltas.length = 0;
    await s.admin.deleteTopics([{ name: "re", topicId: "AAAAAAAAAAAAAAAAAAAAAA" }], 5000);
    await s.admin.createTopics(
      [{ name: "re", numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }],
      {
        validateOnly: false,
        timeoutMs: 5000,
      },
    );
    await s.settle();
    assert.notEqual(s.cache.topicId("re"), oldId);
    assert.equal(s.cache.topicName(oldId!), undefined);
    assert.equal(s.cache.partitionStates("re").length, 2);
    for (const d of s.deltas) {
      const added = new Set(d.partitions.map((p) => `${p.topic}-${p.partition}`));
      assert.ok(
        !d.removed.some((r) => added.has(`${r.topic}-${r.partition}`)),
        "no removal and creation in one delta",
      );
    }
    const firstRemoval = s.deltas.findIndex((d) => d.removed.length > 0);
    const newId = s.cache.topicId("re");
    let lastAdd = -1;
    s.deltas.forEach((d, i) => {
      if (d.partitions.some((p) => p.topicId === newId)) lastAdd = i;
    });
    assert.ok(firstRemoval >= 0 && firstRemoval < lastAdd);
    await s.stop();
  });

  it("learns the controller and the live brokers from the controller's UpdateMetadata", async () => {
    const s = await MetadataStack.start(dir());
    await s.store.delete("/controller");
    await s.settle();
    // The controller re-elects itself (epoch 2) and tells the broker.
    assert.equal(s.cache.controllerId, 0);
    assert.equal(s.controller.epoch, 2);
    // A broker that nobody can reach registers and goes: every UpdateMetadata carries the live set.
    const zk = new KafkaZkClient(s.store);
    await zk.registerBroker({
      id: 1,
      endpoints: [{ listenerName: "PLAINTEXT", securityProtocol: "PLAINTEXT", host: "127.0.0.1", port: 1 }],
      rack: "r1",
      jmxPort: -1,
      timestampMs: 0,
    });
    await s.settle();
    assert.deepEqual(
      s.cache.aliveBrokers().map((b) => [b.id, b.rack]),
      [
        [0, null],
        [1, "r1"],
      ],
    );
    await s.store.delete("/brokers/ids/1");
    await s.settle();
    assert.deepEqual(
      s.cache.aliveBrokers().map((b) => b.id),
      [0],
    );
    await s.stop();
  });

  it("AlterPartition: the exact broker epoch, a repeat of the current state answered with it, newer epochs NOT_CONTROLLER", async () => {
    const s = await MetadataStack.start(dir());
    await s.admin.createTopics(
      [{ name: "isr", numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
      { validateOnly: false, timeoutMs: 5000 },
    );
    await s.settle();
    const epoch = (await s.store.exists("/brokers/ids/0"))!.czxid;
    const item = { topic: "isr", partition: 0, leaderEpoch: 0, newIsr: [0], partitionEpoch: 0 };
    const code = async (brokerEpoch: bigint, over: Partial<typeof item> = {}): Promise<number> =>
      (await s.controller.alterPartition(0, brokerEpoch, [{ ...item, ...over }]))[0].errorCode;
    // Only the broker's current registration: a newer epoch is as stale as an older one (Kafka: exact match).
    assert.equal(await code(epoch + 1n), ErrorCode.STALE_BROKER_EPOCH);
    assert.equal(await code(epoch - 1n), ErrorCode.STALE_BROKER_EPOCH);
    // Already the state: answered with it (the leader's retry of a change whose answer it lost).
    const [same] = await s.controller.alterPartition(0, epoch, [item]);
    assert.deepEqual([same.errorCode, same.isr, same.leaderEpoch, same.partitionEpoch], [0, [0], 0, 0]);
    // Epochs newer than the controller knows come from a newer controller.
    assert.equal(await code(epoch, { partitionEpoch: 3 }), ErrorCode.NOT_CONTROLLER);
    assert.equal(await code(epoch, { leaderEpoch: 2 }), ErrorCode.NOT_CONTROLLER);
    assert.equal(await code(epoch, { leaderEpoch: -1 }), ErrorCode.FENCED_LEADER_EPOCH);
    // A member that is not alive is refused.
    assert.equal(await code(epoch, { newIsr: [0, 5] }), ErrorCode.INELIGIBLE_REPLICA);
    await s.stop();
  });
});
