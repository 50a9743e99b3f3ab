// KIP-430 authorized operations on a real broker over the wire: without an authorizer Kafka answers every
// operation the resource type supports — 8 for a topic (Metadata v8+), 7 for the cluster (Metadata v8–10,
// DescribeCluster), 3 for a group (DescribeGroups v3+, ConsumerGroupDescribe) — and Integer.MIN_VALUE
// when the request did not ask.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { type LogSink, setLogSink } from "../../src/common/logger.js";
import { Apis } from "../../src/protocol/generated/api-table.js";
import { ErrorCode } from "../../src/protocol/generated/errors.js";
import { defaultCreateTopicsRequest } from "../../src/protocol/generated/messages/CreateTopicsRequest.js";
import { defaultMetadataRequest } from "../../src/protocol/generated/messages/MetadataRequest.js";
import { KafkaServer } from "../../src/server/broker-server.js";
import { KafkaConfig } from "../../src/server/kafka-config.js";
import { WireClient } from "./wire-client.js";

const MIN = -2147483648;
// Bit n for AclOperation code n (READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9,
// DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12).
const bits = (...ops: number[]): number => ops.reduce((b, op) => b | (1 << op), 0);
const TOPIC_OPS = bits(3, 4, 5, 6, 7, 8, 10, 11);
const CLUSTER_OPS = bits(5, 7, 8, 9, 10, 11, 12);
const GROUP_OPS = bits(3, 6, 8);
const count = (b: number): number =>
  b
    .toString(2)
    .split("")
    .filter((c) => c === "1").length;

const root = mkdtempSync(join(tmpdir(), "tributary-authorized-ops-"));
let server: KafkaServer;
let prevSink: LogSink;

before(async () => {
  prevSink = setLogSink(() => {});
  server = new KafkaServer(
    new KafkaConfig({
      "log.dirs": join(root, "logs"),
      "metrics.http.listener": "",
      listeners: "PLAINTEXT://127.0.0.1:0",
    }),
  );
  await server.startup();
});

after(async () => {
  await server.shutdown();
  setLogSink(prevSink);
  rmSync(root, { recursive: true, force: true });
});

test("every supported operation when asked, Integer.MIN_VALUE when not", async () => {
  assert.equal(count(TOPIC_OPS), 8);
  assert.equal(count(CLUSTER_OPS), 7);
  const c = await WireClient.connect(server.boundPort());
  try {
    const created = await c.request(Apis.CreateTopics, 7, {
      ...defaultCreateTopicsRequest(),
      topics: [{ name: "ops", numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 10_000,
    });
    assert.equal(created.topics[0].errorCode, ErrorCode.NONE);
    const md = (version: number, include: boolean) =>
      c.request(Apis.Metadata, version, {
        ...defaultMetadataRequest(),
        topics: [{ topicId: "AAAAAAAAAAAAAAAAAAAAAA", name: "ops" }],
        allowAutoTopicCreation: false,
        includeClusterAuthorizedOperations: version <= 10 && include,
        includeTopicAuthorizedOperations: include,
      });
    const m12 = await md(12, true);
    assert.equal(m12.topics[0].topicAuthorizedOperations, TOPIC_OPS);
    const m9 = await md(9, true);
    assert.equal(m9.topics[0].topicAuthorizedOperations, TOPIC_OPS);
    assert.equal(m9.clusterAuthorizedOperations, CLUSTER_OPS);
    const m9no = await md(9, false);
    assert.equal(m9no.topics[0].topicAuthorizedOperations, MIN);
    assert.equal(m9no.clusterAuthorizedOperations, MIN);

    const dc = await c.request(Apis.DescribeCluster, 1, {
      includeClusterAuthorizedOperations: true,
      endpointType: 1,
    });
    assert.equal(dc.clusterAuthorizedOperations, CLUSTER_OPS);
    const dcNo = await c.request(Apis.DescribeCluster, 1, {
      includeClusterAuthorizedOperations: false,
      endpointType: 1,
    });
    assert.equal(dcNo.clusterAuthorizedOperations, MIN);

    const dg = await c.request(Apis.DescribeGroups, 5, { groups: ["g"], includeAuthorizedOperations: true });
    assert.equal(dg.groups[0].authorizedOperations, GROUP_OPS);
    const dgNo = await c.request(Apis.DescribeGroups, 5, {
      groups: ["g"],
      includeAuthorizedOperations: false,
    });
    assert.equal(dgNo.groups[0].authorizedOperations, MIN);
  } finally {
    c.close();
  }
});
