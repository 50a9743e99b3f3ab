// KafkaConfig: Kafka's keys and defaults, server.properties + --override precedence, unknown keys warned
// once each, invalid values rejected with one line naming key, value and expectation, listener parsing,
// the log.* keys through brokerLogConfigFrom, and the LogManagerConfig derived from it all.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { parseServerStartArgs } from "../../src/cli/tools/server-start.js";
import { Logger, setLogSink } from "../../src/common/logger.js";
import { parseListeners } from "../../src/server/end-point.js";
import { KafkaConfig } from "../../src/server/kafka-config.js";
import { ConfigException } from "../../src/server/kafka-config-def.js";
import { NEVER_MS } from "../../src/storage/log-config.js";

const root = mkdtempSync(join(tmpdir(), "tributary-kafka-config-"));
after(() => rmSync(root, { recursive: true, force: true }));

function quiet(props: Record<string, string>): { config: KafkaConfig; warnings: string[] } {
  const warnings: string[] = [];
  const prev = setLogSink((line) => warnings.push(line));
  try {
    return { config: new KafkaConfig(props, { logger: new Logger("kafka.server.KafkaConfig") }), warnings };
  } finally {
    setLogSink(prev);
  }
}

function invalid(props: Record<string, string>): string {
  try {
    quiet(props);
  } catch (e) {
    assert.ok(e instanceof ConfigException, `a ConfigException, got ${e}`);
    assert.ok(!(e as Error).message.includes("\n"), "one line");
    return (e as Error).message;
  }
  assert.fail(`accepted ${JSON.stringify(props)}`);
}

describe("KafkaConfig", () => {
  test("defaults are Kafka's, and the embedded single node gets broker.id 0", () => {
    const { config: c, warnings } = quiet({});
    assert.deepEqual(warnings, []);
    assert.equal(c.brokerId, 0);
    assert.deepEqual(c.listeners, [
      { listenerName: "PLAINTEXT", host: "", port: 9092, securityProtocol: "PLAINTEXT" },
    ]);
    assert.deepEqual(c.advertisedListeners, c.listeners);
    assert.equal(c.interBrokerListenerName, "PLAINTEXT");
    assert.deepEqual(c.logDirs, ["/tmp/kafka-logs"]);
    assert.equal(c.numPartitions, 1);
    assert.equal(c.defaultReplicationFactor, 1);
    assert.equal(c.autoCreateTopicsEnable, true);
    assert.equal(c.deleteTopicEnable, true);
    assert.equal(c.socketRequestMaxBytes, 104857600);
    assert.equal(c.socketSendBufferBytes, 102400);
    assert.equal(c.socketReceiveBufferBytes, 102400);
    assert.equal(c.connectionsMaxIdleMs, 600000);
    assert.equal(c.queuedMaxRequests, 500);
    assert.equal(c.messageMaxBytes, 1048588);
    assert.equal(c.zookeeperConnect, null);
    assert.equal(c.brokerRack, null);
    assert.equal(c.logRetentionCheckIntervalMs, 300000);
    assert.equal(c.logFlushOffsetCheckpointIntervalMs, 60000);
    assert.equal(c.logFlushStartOffsetCheckpointIntervalMs, 60000);
    assert.equal(c.replicaHighWatermarkCheckpointIntervalMs, 5000);
    assert.equal(c.logFlushSchedulerIntervalMs, NEVER_MS);
    assert.equal(c.getInt("num.network.threads"), 3);
    assert.equal(c.getInt("num.io.threads"), 8);
    assert.equal(c.getInt("offsets.topic.num.partitions"), 50);
    assert.equal(c.getInt("offsets.topic.replication.factor"), 3);
    assert.equal(c.getInt("transaction.state.log.min.isr"), 2);
    assert.equal(c.getInt("group.initial.rebalance.delay.ms"), 3000);
    assert.equal(c.defaultLogConfig.segmentBytes, 1073741824);
    assert.equal(c.defaultLogConfig.retentionMs, 604800000);
    assert.equal(c.cleanerConfig.enableCleaner, true);
    assert.equal(c.cleanerConfig.backoffMs, 15000);
    assert.equal(c.valueString("num.partitions"), "1");
    assert.equal(c.isSupplied("num.partitions"), false);
  });

  test("broker.id: explicit values kept; -1 kept when ZooKeeper would generate one", () => {
    assert.equal(quiet({ "broker.id": "7" }).config.brokerId, 7);
    assert.equal(quiet({ "broker.id": "-1" }).config.brokerId, 0);
    assert.equal(quiet({ "broker.id": "-1", "zookeeper.connect": "localhost:2181" }).config.brokerId, -1);
    assert.match(invalid({ "broker.id": "-2" }), /broker\.id/);
  });

  test("Kafka's stock server.properties loads without warnings; overrides win over the file", () => {
    const file = join(root, "server.properties");
    writeFileSync(
      file,
      [
        "# Licensed to the Apache Software Foundation (ASF)",
        "broker.id=0",
        "#listeners=PLAINTEXT://:9092",
        "num.network.threads=3",
        "num.io.threads=8",
        "socket.send.buffer.bytes=102400",
        "socket.receive.buffer.bytes=102400",
        "socket.request.max.bytes=104857600",
        `log.dirs=${join(root, "a")},${join(root, "b")}`,
        "num.partitions=1",
        "num.recovery.threads.per.data.dir=1",
        "offsets.topic.replication.factor=1",
        "transaction.state.log.replication.factor=1",
        "transaction.state.log.min.isr=1",
        "#log.flush.interval.messages=10000",
        "log.retention.hours=168",
        "#log.retention.bytes=1073741824",
        "log.segment.bytes=1073741824",
        "log.retention.check.interval.ms=300000",
        "zookeeper.connection.timeout.ms=18000",
        "group.initial.rebalance.delay.ms=0",
      ].join("\n"),
    );
    const warnings: string[] = [];
    const prev = setLogSink((l) => warnings.push(l));
    let c: KafkaConfig;
    try {
      c = KafkaConfig.load(file, ["num.partitions=3", "log.segment.bytes=1048576", "log.retention.ms=1000"]);
    } finally {
      setLogSink(prev);
    }
    assert.deepEqual(warnings, []);
    assert.deepEqual(c.logDirs, [join(root, "a"), join(root, "b")]);
    assert.equal(c.numPartitions, 3);
    assert.equal(c.defaultLogConfig.segmentBytes, 1048576);
    assert.equal(c.defaultLogConfig.retentionMs, 1000, "log.retention.ms wins over log.retention.hours");
    assert.equal(c.getInt("group.initial.rebalance.delay.ms"), 0);
    const lm = c.logManagerConfig("cid");
    assert.deepEqual(lm.logDirs, c.logDirs);
    assert.equal(lm.clusterId, "cid");
    assert.equal(lm.retentionCheckIntervalMs, 300000);
    assert.equal(lm.defaultLogConfig.segmentBytes, 1048576);
  });

  test("log.dir is used when log.dirs is absent; log.dirs wins", () => {
    assert.deepEqual(quiet({ "log.dir": "/x" }).config.logDirs, ["/x"]);
    assert.deepEqual(quiet({ "log.dir": "/x", "log.dirs": "/y,/z" }).config.logDirs, ["/y", "/z"]);
  });

  test("unknown keys: one WARN line each, as Kafka", () => {
    const { warnings } = quiet({ "foo.bar": "1", "x.y": "2", "num.partitions": "2" });
    assert.equal(warnings.length, 2);
    assert.match(warnings[0], /WARN The configuration 'foo\.bar' was supplied but isn't a known config\./);
    assert.match(warnings[1], /The configuration 'x\.y' was supplied but isn't a known config\./);
  });

  test("invalid values: one line naming the key, the value and what was expected", () => {
    assert.equal(
      invalid({ "num.partitions": "abc" }),
      "Invalid value abc for configuration num.partitions: expected an integer >= 1",
    );
    assert.equal(
      invalid({ "num.partitions": "0" }),
      "Invalid value 0 for configuration num.partitions: expected an integer >= 1",
    );
    assert.match(
      invalid({ "auto.create.topics.enable": "yes" }),
      /auto\.create\.topics\.enable: expected true or false/,
    );
    assert.match(invalid({ "socket.request.max.bytes": "99999999999" }), /socket\.request\.max\.bytes/);
    assert.match(
      invalid({ "connections.max.idle.ms": "soon" }),
      /Invalid value soon for configuration connections\.max\.idle\.ms: expected a long/,
    );
    assert.match(invalid({ "log.segment.bytes": "tiny" }), /log\.segment\.bytes/);
    assert.match(
      invalid({ "log.retention.hours": "x" }),
      /Invalid value x for configuration log\.retention\.hours/,
    );
    assert.match(invalid({ "log.cleanup.policy": "shred" }), /log\.cleanup\.policy/);
    assert.match(invalid({ "compression.type": "brotli" }), /compression\.type: expected one of/);
  });

  test("authorizer settings: Kafka's two authorizer class names; bad values in one line", () => {
    for (const name of [
      "kafka.security.authorizer.AclAuthorizer",
      "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    ])
      assert.equal(quiet({ "authorizer.class.name": name }).config.getString("authorizer.class.name"), name);
    assert.equal(quiet({}).config.getString("authorizer.class.name"), "");
    assert.equal(quiet({}).config.getBoolean("allow.everyone.if.no.acl.found"), false);
    assert.match(
      invalid({ "authorizer.class.name": "com.example.MyAuthorizer" }),
      /^Invalid value com\.example\.MyAuthorizer for configuration authorizer\.class\.name: expected empty \(no authorizer\) or one of kafka\.security\.authorizer\.AclAuthorizer, /,
    );
    assert.match(
      invalid({ "allow.everyone.if.no.acl.found": "maybe" }),
      /allow\.everyone\.if\.no\.acl\.found: expected true or false/,
    );
  });

  test("metrics are served where the first listener binds unless metrics.http.listener says otherwise", () => {
    assert.deepEqual(quiet({}).config.metricsHttpListener, { host: "0.0.0.0", port: 9404 });
    assert.deepEqual(quiet({ listeners: "PLAINTEXT://127.0.0.1:9092" }).config.metricsHttpListener, {
      host: "127.0.0.1",
      port: 9404,
    });
    assert.deepEqual(quiet({ listeners: "PLAINTEXT://[::1]:9092" }).config.metricsHttpListener, {
      host: "::1",
      port: 9404,
    });
    assert.deepEqual(
      quiet({ listeners: "PLAINTEXT://127.0.0.1:9092", "metrics.http.listener": "http://0.0.0.0:9500" })
        .config.metricsHttpListener,
      { host: "0.0.0.0", port: 9500 },
    );
    assert.equal(quiet({ "metrics.http.listener": "" }).config.metricsHttpListener, null);
  });

  test("listeners: parsed, validated, several allowed; empty host = all interfaces; port 0 = ephemeral", () => {
    const map = new Map([
      ["PLAINTEXT", "PLAINTEXT"],
      ["INTERNAL", "PLAINTEXT"],
      ["SSL", "SSL"],
    ]);
    assert.deepEqual(parseListeners("listeners", "PLAINTEXT://:0, internal://[::1]:9093", map), [
      { listenerName: "PLAINTEXT", host: "", port: 0, securityProtocol: "PLAINTEXT" },
      { listenerName: "INTERNAL", host: "::1", port: 9093, securityProtocol: "PLAINTEXT" },
    ]);
    assert.throws(
      () => parseListeners("listeners", "PLAINTEXT:9092", map),
      /expected listeners of the form NAME:\/\/host:port/,
    );
    assert.throws(() => parseListeners("listeners", "PLAINTEXT://h:70000", map), /a port in \[0, 65535\]/);
    assert.throws(
      () => parseListeners("listeners", "OTHER://h:1", map),
      /OTHER to be in listener\.security\.protocol\.map/,
    );
    assert.throws(
      () => parseListeners("listeners", "PLAINTEXT://a:1,PLAINTEXT://b:2", map),
      /PLAINTEXT is repeated/,
    );

    // SSL listeners need a keystore, SASL ones a supported mechanism (tls-listeners / sasl-plain tests run real ones).
    assert.match(
      invalid({ listeners: "SSL://:9093", "inter.broker.listener.name": "SSL" }),
      /^Invalid value \(none\) for configuration ssl\.keystore\.location: an SSL listener needs a keystore/,
    );
    assert.match(
      invalid({ listeners: "PLAINTEXT://:9092,SASL_PLAINTEXT://:9093" }),
      /sasl\.enabled\.mechanisms: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 \(GSSAPI is not supported/,
    );
    assert.match(
      invalid({
        listeners: "PLAINTEXT://:9092,INTERNAL://:9092",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
      }),
      /each port used once/,
    );
    assert.match(invalid({ "advertised.listeners": "PLAINTEXT://0.0.0.0:9092" }), /non-routable/);
    assert.match(
      invalid({
        "advertised.listeners": "OTHER://h:1",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,OTHER:PLAINTEXT",
      }),
      /OTHER is not/,
    );
    assert.match(invalid({ "inter.broker.listener.name": "NOPE" }), /inter\.broker\.listener\.name/);
    assert.match(
      invalid({ "listener.security.protocol.map": "PLAINTEXT:TLS" }),
      /listener\.security\.protocol\.map/,
    );

    const { config } = quiet({
      listeners: "PLAINTEXT://127.0.0.1:0,INTERNAL://:9093",
      "advertised.listeners": "PLAINTEXT://broker.example:19092,INTERNAL://10.0.0.1:9093",
      "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
      "inter.broker.listener.name": "INTERNAL",
    });
    assert.equal(config.listeners.length, 2);
    assert.equal(config.advertisedListeners[0].host, "broker.example");
    assert.equal(config.interBrokerListenerName, "INTERNAL");
    assert.equal(config.controlPlaneListenerName, null);

    // control.plane.listener.name (KIP-291): one of the listeners, not the inter-broker one.
    const twoListeners = {
      listeners: "PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0",
      "advertised.listeners": "PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0",
      "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    };
    assert.equal(
      quiet({ ...twoListeners, "control.plane.listener.name": "CONTROLLER" }).config.controlPlaneListenerName,
      "CONTROLLER",
    );
    assert.match(
      invalid({ ...twoListeners, "control.plane.listener.name": "NOPE" }),
      /control\.plane\.listener\.name.*expected a listener name in advertised\.listeners/,
    );
    assert.match(
      invalid({ ...twoListeners, "control.plane.listener.name": "PLAINTEXT" }),
      /control\.plane\.listener\.name, inter\.broker\.listener\.name should be different/,
    );
  });

  test("a missing file and bad --override syntax are one-line ConfigExceptions", () => {
    assert.throws(
      () => KafkaConfig.load(join(root, "nope.properties"), []),
      (e: Error) => {
        return e instanceof ConfigException && /Cannot read .*nope\.properties: ENOENT/.test(e.message);
      },
    );
    assert.throws(
      () => KafkaConfig.load(undefined, ["novalue"]),
      /Invalid --override novalue: expected key=value/,
    );
  });

  test("server-start arguments: one file and any number of --override", () => {
    assert.deepEqual(parseServerStartArgs(["a.properties", "--override", "x=1", "--override=y=2"]), {
      file: "a.properties",
      overrides: ["x=1", "y=2"],
    });
    assert.deepEqual(parseServerStartArgs([]), { file: undefined, overrides: [] });
    assert.throws(() => parseServerStartArgs(["--override"]), /--override needs/);
    assert.throws(() => parseServerStartArgs(["a", "b"]), /only one properties file/);
    assert.throws(() => parseServerStartArgs(["--bogus"]), /Unknown option --bogus/);
  });
});
