import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { ErrorCode } from "../../../src/protocol/errors.js";
import { AlterConfigOp } from "../../../src/server/metadata/config-admin.js";
import { ConfigResourceType, ConfigSource } from "../../../src/server/metadata/config-definitions.js";
import type { NewTopic } from "../../../src/server/metadata/topic-admin.js";
import { BrokerIdZNode, ZERO_UUID, ZkPaths } from "../../../src/server/metadata/zk-data.js";
import { MetadataStack, removeDir, type StackOptions, tempDir } from "./metadata-test-utils.js";

const dirs: string[] = [];
async function stack(options: StackOptions = {}): Promise<MetadataStack> {
  const d = tempDir("admin");
  dirs.push(d);
  return MetadataStack.start(d, options);
}
after(() => {
  for (const d of dirs) removeDir(d);
});

const topic = (name: string, over: Partial<NewTopic> = {}): NewTopic => ({
  name,
  numPartitions: 1,
  replicationFactor: 1,
  assignments: [],
  configs: [],
  ...over,
});
const create = { validateOnly: false, timeoutMs: 5000 };

describe("TopicAdmin.createTopics", () => {
  it("uses the broker defaults for -1 and returns the topic id", async () => {
    const s = await stack({ numPartitions: 3 });
    const [r] = await s.admin.createTopics(
      [topic("d", { numPartitions: -1, replicationFactor: -1 })],
      create,
    );
    assert.equal(r.error, null);
    assert.equal(r.numPartitions, 3);
    assert.equal(r.replicationFactor, 1);
    assert.notEqual(r.topicId, ZERO_UUID);
    assert.equal(s.cache.topicName(r.topicId), "d");
    assert.equal(s.cache.partitionStates("d").length, 3);
    assert.ok(r.configs.some((c) => c.name === "retention.ms" && c.value === "604800000"));
    await s.stop();
  });

  it("answers every validation error with Kafka's code", async () => {
    const s = await stack();
    await s.admin.createTopics([topic("a.b"), topic("exists")], create);
    const cases: Array<[NewTopic, number, RegExp?]> = [
      [topic(""), ErrorCode.INVALID_TOPIC_EXCEPTION, /can't be empty/],
      [topic("."), ErrorCode.INVALID_TOPIC_EXCEPTION],
      [topic(".."), ErrorCode.INVALID_TOPIC_EXCEPTION],
      [topic("x".repeat(250)), ErrorCode.INVALID_TOPIC_EXCEPTION, /longer than 249/],
      [topic("bad name"), ErrorCode.INVALID_TOPIC_EXCEPTION, /character other than/],
      [topic("a_b"), ErrorCode.INVALID_TOPIC_EXCEPTION, /collides with existing topic: a\.b/],
      [topic("exists"), ErrorCode.TOPIC_ALREADY_EXISTS],
      [topic("p0", { numPartitions: 0 }), ErrorCode.INVALID_PARTITIONS],
      [topic("p2", { numPartitions: -2 }), ErrorCode.INVALID_PARTITIONS],
      [topic("huge", { numPartitions: 4_194_242 }), ErrorCode.POLICY_VIOLATION, /Excessively large/],
      [topic("r0", { replicationFactor: 0 }), ErrorCode.INVALID_REPLICATION_FACTOR],
      [
        topic("r2", { replicationFactor: 2 }),
        ErrorCode.INVALID_REPLICATION_FACTOR,
        /larger than available brokers: 1/,
      ],
      [topic("both", { assignments: [{ partitionIndex: 0, brokerIds: [0] }] }), ErrorCode.INVALID_REQUEST],
      [
        topic("gap", {
          numPartitions: -1,
          replicationFactor: -1,
          assignments: [{ partitionIndex: 1, brokerIds: [0] }],
        }),
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
      ],
      [
        topic("dupb", {
          numPartitions: -1,
          replicationFactor: -1,
          assignments: [{ partitionIndex: 0, brokerIds: [0, 0] }],
        }),
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        /Duplicate brokers/,
      ],
      [
        topic("unk", {
          numPartitions: -1,
          replicationFactor: -1,
          assignments: [{ partitionIndex: 0, brokerIds: [5] }],
        }),
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        /Unknown broker/,
      ],
      [
        topic("c1", { configs: [{ name: "no.such.config", value: "1" }] }),
        ErrorCode.INVALID_CONFIG,
        /Unknown topic config name: no.such.config/,
      ],
      [
        topic("c2", { configs: [{ name: "retention.ms", value: "soon" }] }),
        ErrorCode.INVALID_CONFIG,
        /^Invalid value "soon" for configuration retention.ms: expected/,
      ],
      [topic("c3", { configs: [{ name: "compression.type", value: "brotli" }] }), ErrorCode.INVALID_CONFIG],
      [topic("c4", { configs: [{ name: "min.insync.replicas", value: "0" }] }), ErrorCode.INVALID_CONFIG],
      [topic("c5", { configs: [{ name: "retention.ms", value: null }] }), ErrorCode.INVALID_CONFIG],
    ];
    const results = await s.admin.createTopics(
      cases.map((c) => c[0]),
      create,
    );
    results.forEach((r, i) => {
      const [, code, msg] = cases[i];
      assert.equal(r.error?.code, code, `${cases[i][0].name.slice(0, 20)}: ${r.error?.message}`);
      if (msg) assert.match(r.error!.message, msg);
      assert.ok(!r.error!.message.includes("\n"));
      assert.equal(r.numPartitions, -1);
    });
    assert.deepEqual(s.cache.topicNames(), ["a.b", "exists"]);
    await s.stop();
  });

  it("rejects duplicate names in one request, validate_only writes nothing", async () => {
    const s = await stack();
    const [a, b2] = await s.admin.createTopics([topic("dup"), topic("dup")], create);
    assert.equal(a.error?.code, ErrorCode.INVALID_REQUEST);
    assert.equal(b2.error?.code, ErrorCode.INVALID_REQUEST);
    const [v] = await s.admin.createTopics([topic("v", { numPartitions: 4 })], {
      validateOnly: true,
      timeoutMs: 1000,
    });
    assert.equal(v.error, null);
    assert.equal(v.numPartitions, 4);
    await s.settle();
    assert.equal(s.cache.hasTopic("v"), false);
    assert.equal(await s.store.exists("/brokers/topics/v"), undefined);
    await s.stop();
  });

  it("accepts explicit assignments and a topic marked for deletion still blocks its name", async () => {
    const s = await stack({ deleteTopicEnable: false });
    const [r] = await s.admin.createTopics(
      [
        topic("expl", {
          numPartitions: -1,
          replicationFactor: -1,
          assignments: [
            { partitionIndex: 0, brokerIds: [0] },
            { partitionIndex: 1, brokerIds: [0] },
          ],
        }),
      ],
      create,
    );
    assert.equal(r.error, null);
    assert.equal(r.numPartitions, 2);
    await s.stop();
  });

  it("auto-creates for Metadata with the defaults", async () => {
    const s = await stack({ numPartitions: 2 });
    const res = await s.admin.autoCreateTopics(["auto1", "bad name"]);
    assert.equal(res.get("auto1"), null);
    assert.equal(res.get("bad name")?.code, ErrorCode.INVALID_TOPIC_EXCEPTION);
    await s.settle();
    assert.equal(s.cache.partitionStates("auto1").length, 2);
    await s.stop();
  });
});

describe("TopicAdmin.createInternalTopic", () => {
  it("creates __consumer_offsets with offsets.topic.* and refuses when brokers are too few", async () => {
    const s = await stack({
      staticConfig: { "offsets.topic.replication.factor": "1", "offsets.topic.num.partitions": "5" },
    });
    assert.equal(await s.admin.createInternalTopic("__consumer_offsets"), null);
    await s.settle();
    assert.equal(s.cache.partitionStates("__consumer_offsets").length, 5);
    assert.deepEqual(s.cache.topicConfig("__consumer_offsets"), {
      "cleanup.policy": "compact",
      "compression.type": "producer",
      "segment.bytes": "104857600",
    });
    // transaction.state.log.replication.factor defaults to 3: one broker is not enough.
    const e = await s.admin.createInternalTopic("__transaction_state");
    assert.equal(e?.code, ErrorCode.COORDINATOR_NOT_AVAILABLE);
    const viaMetadata = await s.admin.autoCreateTopics(["__transaction_state"]);
    assert.equal(viaMetadata.get("__transaction_state")?.code, ErrorCode.COORDINATOR_NOT_AVAILABLE);
    await s.stop();
  });
});

describe("TopicAdmin.deleteTopics", () => {
  it("deletes by name and by id, and reports unknown names and ids", async () => {
    const s = await stack();
    await s.admin.createTopics([topic("n1"), topic("i1")], create);
    const id = s.cache.topicId("i1")!;
    const results = await s.admin.deleteTopics(
      [
        { name: "n1", topicId: ZERO_UUID },
        { name: null, topicId: id },
        { name: "nope", topicId: ZERO_UUID },
        { name: null, topicId: "AAAAAAAAAAAAAAAAAAAAAQ" },
      ],
      5000,
    );
    assert.deepEqual(
      results.map((r) => [r.name, r.error?.code ?? 0]),
      [
        ["n1", 0],
        ["i1", 0],
        ["nope", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
        [null, ErrorCode.UNKNOWN_TOPIC_ID],
      ],
    );
    assert.equal(results[1].topicId, id);
    assert.equal(s.cache.hasTopic("n1"), false);
    assert.equal(s.cache.hasTopic("i1"), false);
    const [dup1] = await s.admin.deleteTopics(
      [
        { name: "x", topicId: ZERO_UUID },
        { name: "x", topicId: ZERO_UUID },
      ],
      0,
    );
    assert.equal(dup1.error?.code, ErrorCode.INVALID_REQUEST);
    // The name is free again.
    const [again] = await s.admin.createTopics([topic("n1")], create);
    assert.equal(again.error, null);
    await s.stop();
  });

  it("TOPIC_DELETION_DISABLED when delete.topic.enable=false", async () => {
    const s = await stack({ deleteTopicEnable: false });
    await s.admin.createTopics([topic("keep")], create);
    const [r] = await s.admin.deleteTopics([{ name: "keep", topicId: ZERO_UUID }], 1000);
    assert.equal(r.error?.code, ErrorCode.TOPIC_DELETION_DISABLED);
    assert.ok(s.cache.hasTopic("keep"));
    await s.stop();
  });
});

describe("TopicAdmin.createPartitions", () => {
  it("adds partitions and rejects non-increasing counts and bad assignments", async () => {
    const s = await stack();
    await s.admin.createTopics([topic("cp", { numPartitions: 2 })], create);
    const results = await s.admin.createPartitions(
      [
        { name: "cp", count: 2, assignments: null },
        { name: "missing", count: 3, assignments: null },
      ],
      create,
    );
    assert.equal(results[0].error?.code, ErrorCode.INVALID_PARTITIONS);
    assert.match(results[0].error!.message, /already has 2 partitions/);
    assert.equal(results[1].error?.code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const [lower] = await s.admin.createPartitions([{ name: "cp", count: 1, assignments: null }], create);
    assert.equal(lower.error?.code, ErrorCode.INVALID_PARTITIONS);
    // A hostile count (seen from a fuzzed request) is refused before anything is allocated for it.
    const [huge] = await s.admin.createPartitions(
      [{ name: "cp", count: 4_194_242, assignments: null }],
      create,
    );
    assert.equal(huge.error?.code, ErrorCode.POLICY_VIOLATION);
    for (const assignments of [[[0]], [[0, 0], [0]], [[3], [0]]]) {
      const [r] = await s.admin.createPartitions([{ name: "cp", count: 4, assignments }], create);
      assert.equal(r.error?.code, ErrorCode.INVALID_REPLICA_ASSIGNMENT, JSON.stringify(assignments));
    }
    const [dry] = await s.admin.createPartitions([{ name: "cp", count: 4, assignments: null }], {
      validateOnly: true,
      timeoutMs: 0,
    });
    assert.equal(dry.error, null);
    assert.equal(s.cache.numPartitions("cp"), 2);
    const [ok] = await s.admin.createPartitions([{ name: "cp", count: 4, assignments: [[0], [0]] }], create);
    assert.equal(ok.error, null);
    assert.equal(s.cache.partitionStates("cp").length, 4);
    await s.stop();
  });
});

describe("TopicAdmin configs", () => {
  it("describes topic configs with Kafka's sources and synonyms", async () => {
    const s = await stack({ staticConfig: { "log.segment.bytes": "1048576", "log.retention.hours": "24" } });
    await s.admin.createTopics(
      [topic("cfg", { configs: [{ name: "cleanup.policy", value: "compact" }] })],
      create,
    );
    const [r] = await s.admin.describeConfigs(
      [{ resourceType: ConfigResourceType.TOPIC, resourceName: "cfg", configurationKeys: null }],
      true,
      true,
    );
    assert.equal(r.error, null);
    const by = new Map(r.configs.map((c) => [c.name, c]));
    const cleanup = by.get("cleanup.policy")!;
    assert.equal(cleanup.value, "compact");
    assert.equal(cleanup.source, ConfigSource.DYNAMIC_TOPIC_CONFIG);
    assert.deepEqual(cleanup.synonyms, [
      { name: "cleanup.policy", value: "compact", source: ConfigSource.DYNAMIC_TOPIC_CONFIG },
      { name: "log.cleanup.policy", value: "delete", source: ConfigSource.DEFAULT_CONFIG },
    ]);
    assert.ok(cleanup.documentation);
    const seg = by.get("segment.bytes")!;
    assert.equal(seg.value, "1048576");
    assert.equal(seg.source, ConfigSource.STATIC_BROKER_CONFIG);
    assert.deepEqual(seg.synonyms, [
      { name: "log.segment.bytes", value: "1048576", source: ConfigSource.STATIC_BROKER_CONFIG },
      { name: "log.segment.bytes", value: "1073741824", source: ConfigSource.DEFAULT_CONFIG },
    ]);
    // retention.ms: the value follows log.retention.hours; the synonyms start at log.retention.ms, which is
    // unset, so Kafka lists none and reports DEFAULT_CONFIG.
    const ret = by.get("retention.ms")!;
    assert.equal(ret.value, "86400000");
    assert.equal(ret.source, ConfigSource.DEFAULT_CONFIG);
    assert.deepEqual(ret.synonyms, []);
    assert.equal(by.get("min.insync.replicas")!.configType, 3);
    const [only] = await s.admin.describeConfigs(
      [
        {
          resourceType: ConfigResourceType.TOPIC,
          resourceName: "cfg",
          configurationKeys: ["retention.bytes"],
        },
      ],
      false,
      false,
    );
    assert.deepEqual(
      only.configs.map((c) => [c.name, c.value, c.synonyms.length, c.documentation]),
      [["retention.bytes", "-1", 0, null]],
    );
    const [unknown, invalid, badType] = await s.admin.describeConfigs(
      [
        { resourceType: ConfigResourceType.TOPIC, resourceName: "nope", configurationKeys: null },
        { resourceType: ConfigResourceType.TOPIC, resourceName: "bad/name", configurationKeys: null },
        { resourceType: 99, resourceName: "x", configurationKeys: null },
      ],
      false,
      false,
    );
    assert.equal(unknown.error?.code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal(invalid.error?.code, ErrorCode.INVALID_TOPIC_EXCEPTION);
    assert.equal(badType.error?.code, ErrorCode.INVALID_REQUEST);
    await s.stop();
  });

  it("describes broker configs; dynamic broker and default configs take precedence", async () => {
    const s = await stack({ staticConfig: { "log.retention.hours": "24", "num.partitions": "3" } });
    const describe = async (name: string, keys: string[] | null) =>
      (
        await s.admin.describeConfigs(
          [{ resourceType: ConfigResourceType.BROKER, resourceName: name, configurationKeys: keys }],
          true,
          false,
        )
      )[0];
    let r = await describe("0", ["log.retention.hours", "num.partitions", "broker.id", "log.retention.ms"]);
    const by = new Map(r.configs.map((c) => [c.name, c]));
    assert.equal(by.get("log.retention.hours")!.source, ConfigSource.STATIC_BROKER_CONFIG);
    assert.deepEqual(by.get("log.retention.hours")!.synonyms, [
      { name: "log.retention.hours", value: "24", source: ConfigSource.STATIC_BROKER_CONFIG },
      { name: "log.retention.hours", value: "168", source: ConfigSource.DEFAULT_CONFIG },
    ]);
    assert.equal(by.get("log.retention.hours")!.readOnly, false);
    assert.equal(by.get("broker.id")!.readOnly, true);
    assert.equal(by.get("log.retention.ms")!.value, null);
    assert.equal(by.get("num.partitions")!.value, "3");
    // Dynamic default, then per-broker.
    let [a] = await s.admin.incrementalAlterConfigs(
      [
        {
          resourceType: ConfigResourceType.BROKER,
          resourceName: "",
          configs: [{ name: "log.retention.ms", configOperation: AlterConfigOp.SET, value: "5000" }],
        },
      ],
      false,
    );
    assert.equal(a.error, null);
    assert.ok(await s.store.exists("/config/brokers/<default>"));
    [a] = await s.admin.alterConfigs(
      [
        {
          resourceType: ConfigResourceType.BROKER,
          resourceName: "0",
          configs: [{ name: "log.retention.ms", value: "7000" }],
        },
      ],
      false,
    );
    assert.equal(a.error, null);
    r = await describe("0", ["log.retention.ms"]);
    assert.equal(r.configs[0].value, "7000");
    assert.equal(r.configs[0].source, ConfigSource.DYNAMIC_BROKER_CONFIG);
    assert.deepEqual(
      r.configs[0].synonyms.map((x) => [x.name, x.value, x.source]),
      [
        ["log.retention.ms", "7000", 2],
        ["log.retention.ms", "5000", 3],
        ["log.retention.hours", "24", 4],
        ["log.retention.hours", "168", 5],
      ],
    );
    const dflt = await describe("", null);
    assert.deepEqual(
      dflt.configs.map((c) => [c.name, c.value, c.source]),
      [["log.retention.ms", "5000", 3]],
    );
    // Topics see the dynamic broker value.
    await s.admin.createTopics([topic("t")], create);
    const [t] = await s.admin.describeConfigs(
      [{ resourceType: ConfigResourceType.TOPIC, resourceName: "t", configurationKeys: ["retention.ms"] }],
      false,
      false,
    );
    assert.equal(t.configs[0].value, "7000");
    assert.equal(t.configs[0].source, ConfigSource.DYNAMIC_BROKER_CONFIG);
    assert.equal((await describe("5", null)).error?.code, ErrorCode.INVALID_REQUEST);
    const [ro] = await s.admin.alterConfigs(
      [
        {
          resourceType: ConfigResourceType.BROKER,
          resourceName: "0",
          configs: [{ name: "broker.id", value: "3" }],
        },
      ],
      false,
    );
    assert.equal(ro.error?.code, ErrorCode.INVALID_REQUEST);
    await s.stop();
  });

  it("alters topic configs (replace) and delivers them as a delta", async () => {
    const s = await stack();
    await s.admin.createTopics(
      [topic("alt", { configs: [{ name: "retention.ms", value: "1000" }] })],
      create,
    );
    s.deltas.length = 0;
    const [ok, bad, missing] = await s.admin.alterConfigs(
      [
        {
          resourceType: ConfigResourceType.TOPIC,
          resourceName: "alt",
          configs: [{ name: "segment.bytes", value: "100000" }],
        },
        { resourceType: ConfigResourceType.TOPIC, resourceName: "alt2", configs: [] },
        { resourceType: ConfigResourceType.TOPIC, resourceName: "zzz", configs: [] },
      ],
      false,
    );
    assert.equal(ok.error, null);
    assert.equal(bad.error?.code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal(missing.error?.code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const [unknown] = await s.admin.alterConfigs(
      [
        {
          resourceType: ConfigResourceType.TOPIC,
          resourceName: "alt",
          configs: [{ name: "nope", value: "1" }],
        },
      ],
      false,
    );
    assert.equal(unknown.error?.code, ErrorCode.INVALID_CONFIG);
    const dups = await s.admin.alterConfigs(
      [
        { resourceType: ConfigResourceType.TOPIC, resourceName: "alt", configs: [] },
        { resourceType: ConfigResourceType.TOPIC, resourceName: "alt", configs: [] },
      ],
      false,
    );
    assert.deepEqual(
      dups.map((d) => d.error?.code),
      [ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST],
    );
    await s.settle();
    assert.deepEqual(s.cache.topicConfig("alt"), { "segment.bytes": "100000" });
    assert.equal(
      await (await s.store.get("/config/topics/alt"))!.data.toString(),
      '{"version":1,"config":{"segment.bytes":"100000"}}',
    );
    const changes = await s.store.getChildren(ZkPaths.configChanges);
    assert.ok(changes.length >= 1 && changes.every((c) => /^config_change_\d{10}$/.test(c)));
    const note = await s.store.get(`${ZkPaths.configChanges}/${changes.at(-1)}`);
    assert.equal(note!.data.toString(), '{"version":2,"entity_path":"topics/alt"}');
    assert.deepEqual(
      s.deltas.map((d) => Object.fromEntries(d.topicConfigs)),
      [{ alt: { "segment.bytes": "100000" } }],
    );
    const [invalid] = await s.admin.alterConfigs(
      [
        {
          resourceType: ConfigResourceType.TOPIC,
          resourceName: "alt",
          configs: [{ name: "segment.bytes", value: "-5" }],
        },
      ],
      false,
    );
    assert.equal(invalid.error?.code, ErrorCode.INVALID_CONFIG);
    const [dry] = await s.admin.alterConfigs(
      [{ resourceType: ConfigResourceType.TOPIC, resourceName: "alt", configs: [] }],
      true,
    );
    assert.equal(dry.error, null);
    assert.deepEqual(s.cache.topicConfig("alt"), { "segment.bytes": "100000" });
    await s.stop();
  });

  it("incrementally alters: SET, DELETE, APPEND, SUBTRACT", async () => {
    const s = await stack();
    await s.admin.createTopics(
      [topic("inc", { configs: [{ name: "retention.ms", value: "1000" }] })],
      create,
    );
    const op = (configs: Array<{ name: string; configOperation: number; value: string | null }>) =>
      s.admin.incrementalAlterConfigs(
        [{ resourceType: ConfigResourceType.TOPIC, resourceName: "inc", configs }],
        false,
      );
    let [r] = await op([
      { name: "segment.ms", configOperation: AlterConfigOp.SET, value: "60000" },
      { name: "retention.ms", configOperation: AlterConfigOp.DELETE, value: null },
      { name: "cleanup.policy", configOperation: AlterConfigOp.APPEND, value: "compact" },
    ]);
    assert.equal(r.error, null);
    assert.deepEqual(s.cache.topicConfig("inc"), {
      "segment.ms": "60000",
      "cleanup.policy": "delete,compact",
    });
    [r] = await op([{ name: "cleanup.policy", configOperation: AlterConfigOp.SUBTRACT, value: "delete" }]);
    assert.equal(r.error, null);
    assert.equal(s.cache.topicConfig("inc")["cleanup.policy"], "compact");
    [r] = await op([{ name: "segment.ms", configOperation: AlterConfigOp.APPEND, value: "1" }]);
    assert.equal(r.error?.code, ErrorCode.INVALID_CONFIG);
    [r] = await op([
      { name: "segment.ms", configOperation: AlterConfigOp.SET, value: "1" },
      { name: "segment.ms", configOperation: AlterConfigOp.DELETE, value: null },
    ]);
    assert.equal(r.error?.code, ErrorCode.INVALID_REQUEST);
    [r] = await op([{ name: "segment.ms", configOperation: 9, value: "1" }]);
    assert.equal(r.error?.code, ErrorCode.INVALID_REQUEST);
    await s.stop();
  });
});

/** Registers more brokers as a broker does (ephemeral /brokers/ids/<id>), so the cluster sees them alive. */
async function addBrokers(s: MetadataStack, racks: Record<number, string | null>): Promise<void> {
  for (const [key, rack] of Object.entries(racks)) {
    const id = Number(key);
    const data = BrokerIdZNode.encode({
      id,
      endpoints: [
        { listenerName: "PLAINTEXT", securityProtocol: "PLAINTEXT", host: "localhost", port: 9100 + id },
      ],
      rack,
      jmxPort: -1,
      timestampMs: 0,
    });
    await s.store.create(ZkPaths.brokerId(id), data, { ephemeral: true });
  }
  await s.settle();
}

const replicasOf = (s: MetadataStack, t: string): Record<number, readonly number[]> =>
  Object.fromEntries(s.cache.partitionStates(t).map((p) => [p.partition, p.replicas]));

describe("TopicAdmin placement in a multi-broker cluster", () => {
  it("RF -1 is default.replication.factor, placed round-robin; RF above the alive brokers is refused", async () => {
    const s = await stack({ numPartitions: 6, defaultReplicationFactor: 3 });
    await addBrokers(s, { 1: null, 2: null });
    const [d, four, dry] = [
      ...(await s.admin.createTopics(
        [topic("rf3", { numPartitions: -1, replicationFactor: -1 }), topic("rf4", { replicationFactor: 4 })],
        create,
      )),
      ...(await s.admin.createTopics([topic("rf4v", { replicationFactor: 4 })], {
        validateOnly: true,
        timeoutMs: 0,
      })),
    ];
    assert.equal(d.error, null);
    assert.equal(d.numPartitions, 6);
    assert.equal(d.replicationFactor, 3);
    // start index 0 and shift 0 (the stack's random is 0): Kafka's placement, shift + 1 after a full round.
    assert.deepEqual(replicasOf(s, "rf3"), {
      0: [0, 1, 2],
      1: [1, 2, 0],
      2: [2, 0, 1],
      3: [0, 2, 1],
      4: [1, 0, 2],
      5: [2, 1, 0],
    });
    assert.deepEqual(
      s.cache.partitionStates("rf3").map((p) => p.leader),
      [0, 1, 2, 0, 1, 2],
    );
    for (const r of [four, dry]) {
      assert.equal(r.error?.code, ErrorCode.INVALID_REPLICATION_FACTOR);
      assert.equal(r.error?.message, "Replication factor: 4 larger than available brokers: 3.");
    }
    assert.equal(s.cache.hasTopic("rf4"), false);
    await s.stop();
  });

  it("6 brokers in 3 racks: 60 partitions × RF 3 even per broker, one replica per rack, also when added", async () => {
    const s = await stack({ rack: "a" });
    const racks: Record<number, string> = { 0: "a", 1: "a", 2: "b", 3: "b", 4: "c", 5: "c" };
    await addBrokers(s, { 1: "a", 2: "b", 3: "b", 4: "c", 5: "c" });
    const [r] = await s.admin.createTopics(
      [topic("spread", { numPartitions: 60, replicationFactor: 3 })],
      create,
    );
    assert.equal(r.error, null);
    const [more] = await s.admin.createPartitions([{ name: "spread", count: 66, assignments: null }], create);
    assert.equal(more.error, null);
    const states = s.cache.partitionStates("spread");
    assert.equal(states.length, 66);
    for (const p of states)
      assert.equal(
        new Set(p.replicas.map((b) => racks[b])).size,
        3,
        `partition ${p.partition}: ${p.replicas}`,
      );
    const count = (f: (p: (typeof states)[number]) => readonly number[]): number[] => {
      const n = [0, 0, 0, 0, 0, 0];
      for (const p of states.filter((x) => x.partition < 60)) for (const b of f(p)) n[b]++;
      return n;
    };
    assert.deepEqual(
      count((p) => [p.replicas[0]]),
      [10, 10, 10, 10, 10, 10],
    );
    assert.deepEqual(
      count((p) => p.replicas),
      [30, 30, 30, 30, 30, 30],
    );
    await s.stop();
  });

  it("some brokers with a rack and others without: placement refused, explicit assignments still work", async () => {
    const s = await stack({ rack: "a" });
    await addBrokers(s, { 1: null, 2: "b" });
    const [auto, explicit] = await s.admin.createTopics(
      [
        topic("mixed", { numPartitions: 3, replicationFactor: 2 }),
        topic("manual", {
          numPartitions: -1,
          replicationFactor: -1,
          assignments: [{ partitionIndex: 0, brokerIds: [1, 2] }],
        }),
      ],
      create,
    );
    assert.equal(auto.error?.code, ErrorCode.UNKNOWN_SERVER_ERROR);
    assert.equal(
      auto.error?.message,
      "Not all brokers have rack information for replica rack aware assignment.",
    );
    assert.equal(explicit.error, null);
    const [grow] = await s.admin.createPartitions([{ name: "manual", count: 2, assignments: null }], create);
    assert.equal(grow.error?.code, ErrorCode.UNKNOWN_SERVER_ERROR);
    await s.stop();
  });

  it("new partitions continue from partition 0's first replica (Kafka's createNewPartitionsAssignment)", async () => {
    const s = await stack();
    await addBrokers(s, { 1: null, 2: null });
    await s.admin.createTopics(
      [
        topic("grow", {
          numPartitions: -1,
          replicationFactor: -1,
          assignments: [{ partitionIndex: 0, brokerIds: [1, 2] }],
        }),
      ],
      create,
    );
    const [r] = await s.admin.createPartitions([{ name: "grow", count: 3, assignments: null }], create);
    assert.equal(r.error, null);
    // start index: broker 1's index (1), shift 1, partitions numbered from 1.
    assert.deepEqual(replicasOf(s, "grow"), { 0: [1, 2], 1: [2, 1], 2: [0, 2] });
    await s.stop();
  });
});
