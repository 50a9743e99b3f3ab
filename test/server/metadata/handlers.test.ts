// The metadata/admin API handlers driven directly (no socket): every version of each API, the response
// encoded and decoded with the generated codecs at that version.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ErrorCode } from "../../../src/protocol/errors.js";
import { decodeResponse, encodeResponse } from "../../../src/protocol/framing.js";
import { API_BY_KEY, type ApiDefinition } from "../../../src/protocol/generated/api-table.js";
import { defaultRequestHeader } from "../../../src/protocol/generated/messages/RequestHeader.js";
import { AuthHelper } from "../../../src/server/auth-helper.js";
import type { BrokerServices } from "../../../src/server/broker-services.js";
import type { HandlerRegistration } from "../../../src/server/handler.js";
import { metadataHandler } from "../../../src/server/handlers/03-metadata.js";
import { createTopicsHandler } from "../../../src/server/handlers/19-create-topics.js";
import { deleteTopicsHandler } from "../../../src/server/handlers/20-delete-topics.js";
import { describeConfigsHandler } from "../../../src/server/handlers/32-describe-configs.js";
import { alterConfigsHandler } from "../../../src/server/handlers/33-alter-configs.js";
import { createPartitionsHandler } from "../../../src/server/handlers/37-create-partitions.js";
import { incrementalAlterConfigsHandler } from "../../../src/server/handlers/44-incremental-alter-configs.js";
import { describeClusterHandler } from "../../../src/server/handlers/60-describe-cluster.js";
import { ZERO_UUID } from "../../../src/server/metadata/zk-data.js";
import type { RequestContext } from "../../../src/server/request-context.js";
import { MetadataStack, removeDir, type StackOptions, tempDir } from "./metadata-test-utils.js";

const dirs: string[] = [];
after(() => {
  for (const d of dirs) removeDir(d);
});

async function stack(options: StackOptions = {}): Promise<{ s: MetadataStack; services: BrokerServices }> {
  const d = tempDir("handlers");
  dirs.push(d);
  const s = await MetadataStack.start(d, options);
  const services = {
    brokerId: 0,
    time: s.time,
    scheduler: s.scheduler,
    metadata: s.cache,
    topicAdmin: s.admin,
    auth: new AuthHelper(),
  } as unknown as BrokerServices;
  return { s, services };
}

function ctx(apiKey: number, apiVersion: number): RequestContext {
  const api = API_BY_KEY[apiKey]!;
  return {
    api,
    header: {
      ...defaultRequestHeader(),
      requestApiKey: apiKey,
      requestApiVersion: apiVersion,
      clientId: "t",
    },
    apiVersion,
    clientId: "t",
    listenerName: "PLAINTEXT",
    securityProtocol: "PLAINTEXT",
    connectionId: "c",
    clientAddress: "127.0.0.1",
    principal: "User:ANONYMOUS",
    receivedNs: 0n,
  };
}

/** Calls the handler at `version` and returns the response as a client decodes it. */
async function call<Res>(reg: HandlerRegistration, version: number, request: unknown): Promise<Res> {
  const res = await reg.handle(ctx(reg.apiKey, version), request);
  const api = API_BY_KEY[reg.apiKey] as ApiDefinition<unknown, Res>;
  const frame = Buffer.concat(encodeResponse(api, version, 7, res as Res)).subarray(4);
  return decodeResponse(api, version, frame).body;
}

describe("Metadata handler", () => {
  let s: MetadataStack;
  let services: BrokerServices;
  before(async () => {
    ({ s, services } = await stack({ numPartitions: 2 }));
    await s.admin.createTopics(
      [{ name: "m1", numPartitions: 3, replicationFactor: 1, assignments: [], configs: [] }],
      { validateOnly: false, timeoutMs: 5000 },
    );
  });
  after(() => s.stop());

  it("answers every version with brokers, cluster id, controller and partitions", async () => {
    const h = metadataHandler(services);
    for (let v = 0; v <= 12; v++) {
      const topics = v === 0 ? [] : null;
      // biome-ignore lint/suspicious/noExplicitAny: decoded response shape checked field by field
      const r: any = await call(h, v, {
        topics,
        allowAutoTopicCreation: true,
        includeClusterAuthorizedOperations: false,
        includeTopicAuthorizedOperations: false,
      });
      assert.deepEqual(
        r.brokers.map((b: { nodeId: number; host: string; port: number }) => [b.nodeId, b.host, b.port]),
        [[0, "localhost", 9092]],
        `v${v}`,
      );
      if (v >= 2) assert.equal(r.clusterId, s.cache.clusterId);
      if (v >= 1) assert.equal(r.controllerId, 0);
      const t = r.topics.find((x: { name: string }) => x.name === "m1");
      assert.ok(t, `v${v} lists m1`);
      assert.equal(t.errorCode, 0);
      assert.equal(t.partitions.length, 3);
      if (v >= 10) assert.equal(t.topicId, s.cache.topicId("m1"));
      const p = t.partitions[2];
      assert.deepEqual([p.partitionIndex, p.leaderId, p.replicaNodes, p.isrNodes], [2, 0, [0], [0]]);
      if (v >= 7) assert.equal(p.leaderEpoch, 0);
    }
  });

  it("v1+: empty list means no topics; unknown, invalid and by-id lookups", async () => {
    const h = metadataHandler(services);
    // biome-ignore lint/suspicious/noExplicitAny: decoded response
    let r: any = await call(h, 1, {
      topics: [],
      allowAutoTopicCreation: true,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    assert.equal(r.topics.length, 0);
    r = await call(h, 12, {
      topics: [
        { topicId: ZERO_UUID, name: "nope" },
        { topicId: ZERO_UUID, name: "bad name" },
        { topicId: s.cache.topicId("m1")!, name: null },
        { topicId: "AAAAAAAAAAAAAAAAAAAAAQ", name: null },
      ],
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: true,
    });
    assert.deepEqual(
      r.topics.map((t: { name: string | null; errorCode: number }) => [t.name, t.errorCode]),
      [
        ["nope", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
        ["bad name", ErrorCode.INVALID_TOPIC_EXCEPTION],
        ["m1", 0],
        [null, ErrorCode.UNKNOWN_TOPIC_ID],
      ],
    );
    // Asked for, without an authorizer: every topic operation (READ … ALTER_CONFIGS, KIP-430 bits 3–11).
    assert.equal(r.topics[2].topicAuthorizedOperations, 3576);
  });

  it("auto-creates a missing topic and answers LEADER_NOT_AVAILABLE, then the partitions", async () => {
    const h = metadataHandler(services);
    const req = {
      topics: [{ topicId: ZERO_UUID, name: "auto" }],
      allowAutoTopicCreation: true,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    };
    // biome-ignore lint/suspicious/noExplicitAny: decoded response
    let r: any = await call(h, 9, req);
    assert.equal(r.topics[0].errorCode, ErrorCode.LEADER_NOT_AVAILABLE);
    await s.settle();
    r = await call(h, 9, req);
    assert.equal(r.topics[0].errorCode, 0);
    assert.equal(r.topics[0].partitions.length, 2);
    // allow_auto_topic_creation=false
    r = await call(h, 9, {
      ...req,
      topics: [{ topicId: ZERO_UUID, name: "auto2" }],
      allowAutoTopicCreation: false,
    });
    assert.equal(r.topics[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });

  it("auto.create.topics.enable=false: UNKNOWN_TOPIC_OR_PARTITION even for v0", async () => {
    const { s: s2, services: sv2 } = await stack({ autoCreateTopicsEnable: false });
    // biome-ignore lint/suspicious/noExplicitAny: decoded response
    const r: any = await call(metadataHandler(sv2), 0, {
      topics: [{ topicId: ZERO_UUID, name: "x" }],
      allowAutoTopicCreation: true,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    assert.equal(r.topics[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    await s2.stop();
  });
});

describe("admin handlers", () => {
  it("CreateTopics every version, DeleteTopics every version", async () => {
    const { s, services } = await stack();
    const ct = createTopicsHandler(services);
    const dt = deleteTopicsHandler(services);
    for (let v = 0; v <= 7; v++) {
      // biome-ignore lint/suspicious/noExplicitAny: decoded response
      const r: any = await call(ct, v, {
        topics: [
          {
            name: `c${v}`,
            numPartitions: 2,
            replicationFactor: 1,
            assignments: [],
            configs: [{ name: "retention.ms", value: "1000" }],
          },
          { name: "bad name", numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] },
        ],
        timeoutMs: 5000,
        validateOnly: false,
      });
      assert.equal(r.topics[0].errorCode, 0, `v${v}`);
      assert.equal(r.topics[1].errorCode, ErrorCode.INVALID_TOPIC_EXCEPTION);
      if (v >= 1) assert.match(r.topics[1].errorMessage, /illegal/);
      if (v >= 5) {
        assert.equal(r.topics[0].numPartitions, 2);
        const ret = r.topics[0].configs.find((c: { name: string }) => c.name === "retention.ms");
        assert.deepEqual([ret.value, ret.configSource], ["1000", 1]);
      }
      if (v >= 7) assert.equal(r.topics[0].topicId, s.cache.topicId(`c${v}`));
    }
    for (let v = 0; v <= 6; v++) {
      const req =
        v >= 6
          ? {
              topics: [
                { name: `c${v}`, topicId: ZERO_UUID },
                { name: null, topicId: s.cache.topicId(`c${v + 1}`)! },
              ],
              topicNames: [],
              timeoutMs: 5000,
            }
          : { topics: [], topicNames: [`c${v}`, "missing"], timeoutMs: 5000 };
      // biome-ignore lint/suspicious/noExplicitAny: decoded response
      const r: any = await call(dt, v, req);
      assert.equal(r.responses[0].errorCode, 0, `v${v}`);
      if (v >= 6) assert.deepEqual([r.responses[1].name, r.responses[1].errorCode], [`c${v + 1}`, 0]);
      else assert.equal(r.responses[1].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    }
    assert.deepEqual(s.cache.topicNames(), []);
    await s.stop();
  });

  it("CreatePartitions, DescribeConfigs, AlterConfigs, IncrementalAlterConfigs, DescribeCluster at every version", async () => {
    const { s, services } = await stack();
    await s.admin.createTopics(
      [{ name: "t", numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
      {
        validateOnly: false,
        timeoutMs: 5000,
      },
    );
    const cp = createPartitionsHandler(services);
    for (let v = 0; v <= 3; v++) {
      // biome-ignore lint/suspicious/noExplicitAny: decoded response
      const r: any = await call(cp, v, {
        topics: [{ name: "t", count: v + 2, assignments: null }],
        timeoutMs: 5000,
        validateOnly: false,
      });
      assert.equal(r.results[0].errorCode, 0, `v${v}`);
    }
    // biome-ignore lint/suspicious/noExplicitAny: decoded response
    const bad: any = await call(cp, 3, {
      topics: [{ name: "t", count: 2, assignments: null }],
      timeoutMs: 0,
      validateOnly: false,
    });
    assert.equal(bad.results[0].errorCode, ErrorCode.INVALID_PARTITIONS);
    assert.equal(s.cache.partitionStates("t").length, 5);

    const ac = alterConfigsHandler(services);
    for (let v = 0; v <= 2; v++) {
      // biome-ignore lint/suspicious/noExplicitAny: decoded response
      const r: any = await call(ac, v, {
        resources: [
          {
            resourceType: 2,
            resourceName: "t",
            configs: [{ name: "retention.ms", value: String(1000 + v) }],
          },
        ],
        validateOnly: false,
      });
      assert.equal(r.responses[0].errorCode, 0);
    }
    const iac = incrementalAlterConfigsHandler(services);
    for (let v = 0; v <= 1; v++) {
      // biome-ignore lint/suspicious/noExplicitAny: decoded response
      const r: any = await call(iac, v, {
        resources: [
          {
            resourceType: 2,
            resourceName: "t",
            configs: [{ name: "segment.ms", configOperation: 0, value: "bad" }],
          },
        ],
        validateOnly: false,
      });
      assert.equal(r.responses[0].errorCode, ErrorCode.INVALID_CONFIG);
      assert.match(r.responses[0].errorMessage, /segment.ms/);
    }
    const dc = describeConfigsHandler(services);
    for (let v = 0; v <= 4; v++) {
      // biome-ignore lint/suspicious/noExplicitAny: decoded response
      const r: any = await call(dc, v, {
        resources: [
          { resourceType: 2, resourceName: "t", configurationKeys: null },
          { resourceType: 4, resourceName: "0", configurationKeys: ["log.retention.hours"] },
        ],
        includeSynonyms: true,
        includeDocumentation: true,
      });
      const ret = r.results[0].configs.find((c: { name: string }) => c.name === "retention.ms");
      assert.equal(ret.value, "1002");
      if (v === 0) assert.equal(ret.isDefault, false);
      else {
        assert.equal(ret.configSource, 1);
        assert.equal(ret.synonyms[0].name, "retention.ms");
      }
      if (v >= 3) assert.ok(ret.documentation);
      const seg = r.results[0].configs.find((c: { name: string }) => c.name === "segment.bytes");
      if (v === 0) assert.equal(seg.isDefault, true);
      assert.equal(r.results[1].configs[0].value, "168");
    }
    const cl = describeClusterHandler(services);
    for (let v = 0; v <= 1; v++) {
      // biome-ignore lint/suspicious/noExplicitAny: decoded response
      const r: any = await call(cl, v, { includeClusterAuthorizedOperations: false, endpointType: 1 });
      assert.deepEqual(
        [r.errorCode, r.clusterId, r.controllerId, r.brokers.length],
        [0, s.cache.clusterId, 0, 1],
      );
    }
    // biome-ignore lint/suspicious/noExplicitAny: decoded response
    const ctrl: any = await call(cl, 1, { includeClusterAuthorizedOperations: false, endpointType: 2 });
    assert.equal(ctrl.errorCode, ErrorCode.UNSUPPORTED_ENDPOINT_TYPE);
    await s.stop();
  });
});
