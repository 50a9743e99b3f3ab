// Dynamic broker configs at runtime (issue 4, Kafka's KIP-226 DynamicLogConfig) on a real broker: the
// cluster default (`""`, /config/brokers/<default>) set with IncrementalAlterConfigs (raw requests: KafkaJS
// and confluent-kafka 1.7 refuse an empty resource name) and this broker's id (/config/brokers/0) set with
// KafkaJS's AlterConfigs change the log defaults of topics without an
// override at once — compression.type (a gzip producer's batches stored as zstd, checked with dump-log),
// log.segment.bytes (segments roll at the new size), message.max.bytes (MESSAGE_TOO_LARGE) — while a topic
// override still wins; DescribeConfigs reports DYNAMIC_DEFAULT_BROKER_CONFIG / DYNAMIC_BROKER_CONFIG; the
// values are in the metadata store and survive a restart; a static key is refused with Kafka's error.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import kafkajs from "kafkajs";
import { ErrorCode } from "../../../src/protocol/errors.js";
import { Apis } from "../../../src/protocol/generated/api-table.js";
import { BrokerHarness, readWithKcat } from "../../support/broker-harness.js";
import { WireClient } from "../wire-client.js";
import { dumpLogCodecs } from "./validation-support.js";

const { Kafka, logLevel, CompressionTypes, ConfigResourceTypes } = kafkajs;
const SEGMENT = "00000000000000000000.log";
const DYNAMIC_BROKER_CONFIG = 2;
const DYNAMIC_DEFAULT_BROKER_CONFIG = 3;
const SET = 0;

describe("dynamic broker configs take effect at runtime and survive a restart", { timeout: 180_000 }, () => {
  let broker: BrokerHarness;
  let kafka: kafkajs.Kafka;

  before(async () => {
    broker = await BrokerHarness.start({ name: "dynamic-broker-configs" });
    kafka = new Kafka({
      clientId: "dynamic-configs",
      brokers: [broker.bootstrap],
      logLevel: logLevel.NOTHING,
      retry: { retries: 3, initialRetryTime: 100 },
    });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        { topic: "plain", numPartitions: 1 },
        {
          topic: "overridden",
          numPartitions: 1,
          configEntries: [{ name: "compression.type", value: "producer" }],
        },
      ],
    });
    await admin.disconnect();
  });
  after(async () => {
    await broker?.close();
  });

  async function withAdmin<T>(fn: (admin: kafkajs.Admin) => Promise<T>): Promise<T> {
    const admin = kafka.admin();
    await admin.connect();
    try {
      return await fn(admin);
    } finally {
      await admin.disconnect();
    }
  }

  async function sendGzip(topic: string, values: string[]): Promise<void> {
    const producer = kafka.producer();
    await producer.connect();
    try {
      for (const v of values)
        await producer.send({
          topic,
          compression: CompressionTypes.GZIP,
          messages: [{ key: "k", value: v }],
        });
    } finally {
      await producer.disconnect();
    }
  }

  /** DescribeConfigs of a BROKER resource ("0" or "" for the cluster default), raw. */
  async function brokerEntries(name: string): Promise<Map<string, { value: string | null; source: number }>> {
    const c = await WireClient.connect(broker.port);
    try {
      const res = await c.request(Apis.DescribeConfigs, 4, {
        resources: [
          { resourceType: ConfigResourceTypes.BROKER, resourceName: name, configurationKeys: null },
        ],
        includeSynonyms: false,
        includeDocumentation: false,
      });
      assert.equal(res.results[0].errorCode, 0, res.results[0].errorMessage ?? "");
      return new Map(res.results[0].configs.map((e) => [e.name, { value: e.value, source: e.configSource }]));
    } finally {
      c.close();
    }
  }

  /** IncrementalAlterConfigs SET on a BROKER resource, raw: the resource's error code and message. */
  async function incrementalSet(
    name: string,
    configs: Record<string, string>,
  ): Promise<{ errorCode: number; errorMessage: string | null }> {
    const c = await WireClient.connect(broker.port);
    try {
      const res = await c.request(Apis.IncrementalAlterConfigs, 1, {
        validateOnly: false,
        resources: [
          {
            resourceType: ConfigResourceTypes.BROKER,
            resourceName: name,
            configs: Object.entries(configs).map(([k, value]) => ({ name: k, configOperation: SET, value })),
          },
        ],
      });
      return res.responses[0];
    } finally {
      c.close();
    }
  }

  test("before: a gzip producer's batch is stored as gzip (compression.type=producer)", async () => {
    await sendGzip("plain", ["first"]);
    assert.deepEqual(await dumpLogCodecs(join(broker.logDir, "plain-0", SEGMENT)), ["gzip"]);
  });

  test("IncrementalAlterConfigs on the cluster default: compression.type and log.segment.bytes apply at once", async () => {
    const r = await incrementalSet("", { "compression.type": "zstd", "log.segment.bytes": "2048" });
    assert.equal(r.errorCode, 0, r.errorMessage ?? "");
    const values = Array.from({ length: 12 }, (_, i) => `v${i}-${randomBytes(300).toString("hex")}`);
    await sendGzip("plain", values);
    await sendGzip("overridden", ["kept gzip"]);
    const segments = readdirSync(join(broker.logDir, "plain-0"))
      .filter((f) => f.endsWith(".log"))
      .sort();
    assert.ok(segments.length >= 3, `segments roll at the new log.segment.bytes: ${segments.join(",")}`);
    const codecs: string[] = [];
    for (const s of segments) codecs.push(...(await dumpLogCodecs(join(broker.logDir, "plain-0", s))));
    assert.equal(codecs[0], "gzip");
    assert.ok(
      codecs.slice(1).every((c) => c === "zstd"),
      codecs.join(","),
    );
    assert.deepEqual(await dumpLogCodecs(join(broker.logDir, "overridden-0", SEGMENT)), ["gzip"]);
    const read = await readWithKcat(broker.bootstrap, "plain");
    assert.deepEqual(
      read.map((m) => m.value),
      ["first", ...values],
    );
    const entries = await brokerEntries("");
    assert.equal(entries.get("compression.type")?.value, "zstd");
    assert.equal(entries.get("compression.type")?.source, DYNAMIC_DEFAULT_BROKER_CONFIG);
  });

  test("KafkaJS AlterConfigs on this broker: message.max.bytes applies at once", async () => {
    await withAdmin((admin) =>
      admin.alterConfigs({
        validateOnly: false,
        resources: [
          {
            type: ConfigResourceTypes.BROKER,
            name: "0",
            configEntries: [{ name: "message.max.bytes", value: "4000" }],
          },
        ],
      }),
    );
    const producer = kafka.producer({ retry: { retries: 0 } });
    await producer.connect();
    try {
      await assert.rejects(
        producer.send({ topic: "plain", messages: [{ key: "k", value: randomBytes(6000) }] }),
        (e: Error & { type?: string }) => e.type === "MESSAGE_TOO_LARGE",
      );
      await producer.send({ topic: "plain", messages: [{ key: "k", value: randomBytes(1000) }] });
    } finally {
      await producer.disconnect();
    }
    const entries = await brokerEntries("0");
    assert.equal(entries.get("message.max.bytes")?.value, "4000");
    assert.equal(entries.get("message.max.bytes")?.source, DYNAMIC_BROKER_CONFIG);
    assert.equal(entries.get("compression.type")?.source, DYNAMIC_DEFAULT_BROKER_CONFIG);
  });

  test("a key Kafka does not update dynamically is refused with INVALID_REQUEST", async () => {
    const r = await incrementalSet("", { "log.dirs": "/elsewhere", "log.retention.ms": "1000" });
    assert.equal(r.errorCode, ErrorCode.INVALID_REQUEST);
    assert.equal(r.errorMessage, "Cannot update these configs dynamically: Set(log.dirs)");
    // The whole resource was refused: log.retention.ms is not set either.
    assert.notEqual((await brokerEntries("")).get("log.retention.ms")?.value, "1000");
  });

  test("the dynamic configs are in the metadata store and apply again after a restart", async () => {
    // The embedded store: a snapshot plus a journal of node records (path, base64 data), ZooKeeper's layout.
    const nodes = new Map<string, unknown>();
    for (const f of ["__tributary_metadata.json", "__tributary_metadata.log"]) {
      const text = existsSync(join(broker.logDir, f)) ? readFileSync(join(broker.logDir, f), "utf8") : "";
      for (const m of text.matchAll(/\{"path":"(\/config\/brokers\/[^"]+)","data":"([^"]*)"/g))
        nodes.set(m[1], JSON.parse(Buffer.from(m[2], "base64").toString("utf8")));
    }
    assert.deepEqual(nodes.get("/config/brokers/<default>"), {
      version: 1,
      config: { "compression.type": "zstd", "log.segment.bytes": "2048" },
    });
    assert.deepEqual(nodes.get("/config/brokers/0"), { version: 1, config: { "message.max.bytes": "4000" } });
    await broker.restart();
    await sendGzip("plain", ["after restart"]);
    const segments = readdirSync(join(broker.logDir, "plain-0"))
      .filter((f) => f.endsWith(".log"))
      .sort();
    const last = await dumpLogCodecs(join(broker.logDir, "plain-0", segments[segments.length - 1]));
    assert.equal(last[last.length - 1], "zstd");
    const producer = kafka.producer({ retry: { retries: 0 } });
    await producer.connect();
    try {
      await assert.rejects(
        producer.send({ topic: "plain", messages: [{ key: "k", value: randomBytes(6000) }] }),
        (e: Error & { type?: string }) => e.type === "MESSAGE_TOO_LARGE",
      );
    } finally {
      await producer.disconnect();
    }
    const entries = await brokerEntries("0");
    assert.equal(entries.get("message.max.bytes")?.source, DYNAMIC_BROKER_CONFIG);
    assert.equal(entries.get("log.segment.bytes")?.value, "2048");
    assert.equal(entries.get("log.segment.bytes")?.source, DYNAMIC_DEFAULT_BROKER_CONFIG);
  });
});
