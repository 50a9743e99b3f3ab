// Client quotas on a real broker process (issue 21), with real clients:
//   - AlterClientQuotas / DescribeClientQuotas: Kafka's errors (INVALID_REQUEST, UNSUPPORTED_VERSION),
//     validate_only, EXACT / DEFAULT / SPECIFIED matches, strict;
//   - `tributary configs --entity-type users|clients`: Kafka's output lines;
//   - confluent-kafka (librdkafka) producing as fast as it can under producer_byte_rate=1048576 moves
//     1 MB/s ± 15 % over 20 s (after the quota window filled) and reports throttle times in its stats;
//     raising the quota while it runs speeds it up within seconds;
//   - kafka-python consuming under consumer_byte_rate moves at that rate and reports
//     fetch-throttle-time-avg;
//   - precedence on the broker: /config/users/<default> wins over /config/clients/<c> (metric tags).

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { AdminClient } from "../../../src/client/admin/admin-client.js";
import { ClientQuotasAdmin } from "../../../src/client/admin/client-quotas-admin.js";
import { Apis } from "../../../src/protocol/generated/api-table.js";
import { ErrorCode } from "../../../src/protocol/generated/errors.js";
import {
  defaultCreatableTopic,
  defaultCreateTopicsRequest,
} from "../../../src/protocol/generated/messages/CreateTopicsRequest.js";
import { defaultMetadataRequest } from "../../../src/protocol/generated/messages/MetadataRequest.js";
import { defaultProduceRequest } from "../../../src/protocol/generated/messages/ProduceRequest.js";
import { buildRecordBatch } from "../../../src/protocol/records/memory-records.js";
import { BrokerHarness, runCommand, tributaryArgv, waitFor } from "../../support/broker-harness.js";
import { skipUnlessInstalled } from "../../support/required-tools.js";
import { WireClient } from "../wire-client.js";

const PYTHON = "/usr/bin/python3";
const KCAT = "/usr/bin/kcat";
const MB = 1048576;
let broker: BrokerHarness;
let admin: AdminClient;
let quotas: ClientQuotasAdmin;
let saslPort = 0;
const JAAS =
  'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_alice="alice-secret";';

before(async () => {
  broker = await BrokerHarness.start({
    name: "quotas",
    overrides: {
      listeners: "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
      "sasl.enabled.mechanisms": "PLAIN",
      "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
    },
  });
  saslPort = broker.listenerPorts()[1];
  admin = new AdminClient({ bootstrapServers: broker.bootstrap });
  quotas = new ClientQuotasAdmin(admin.cluster);
  await admin.createTopics([
    { name: "quota-produce", numPartitions: 1, replicationFactor: 1 },
    { name: "quota-misc", numPartitions: 1, replicationFactor: 1 },
  ]);
});

after(async () => {
  await admin?.close();
  await broker?.close();
});

function configs(...args: string[]) {
  return runCommand(
    process.execPath,
    tributaryArgv(["configs", "--bootstrap-server", broker.bootstrap, ...args]),
    {
      timeoutMs: 30_000,
    },
  );
}

test("AlterClientQuotas / DescribeClientQuotas: Kafka's validation and errors, validate_only, match types", async () => {
  const results = await quotas.alterClientQuotas([
    { entity: { user: "eve" }, ops: [{ key: "no_such_quota", value: 1 }] },
    { entity: { group: "g" }, ops: [{ key: "producer_byte_rate", value: 1 }] },
    { entity: {}, ops: [{ key: "producer_byte_rate", value: 1 }] },
    { entity: { user: "" }, ops: [{ key: "producer_byte_rate", value: 1 }] },
    { entity: { "client-id": "c1" }, ops: [{ key: "producer_byte_rate", value: 1.5 }] },
    { entity: { "client-id": "c1", ip: "127.0.0.1" }, ops: [{ key: "producer_byte_rate", value: 1 }] },
  ]);
  const codes = results.map((r) => r.error?.code ?? 0);
  assert.deepEqual(
    codes,
    Array(6).fill(ErrorCode.INVALID_REQUEST),
    results.map((r) => r.error?.message).join("; "),
  );
  assert.match(results[0].error!.message, /Invalid configuration key no_such_quota/);
  assert.match(results[1].error!.message, /Unhandled client quota entity type: group/);
  assert.match(results[4].error!.message, /producer_byte_rate must be a LONG value/);

  const ok = await quotas.alterClientQuotas(
    [{ entity: { user: "vo" }, ops: [{ key: "producer_byte_rate", value: 5000 }] }],
    { validateOnly: true },
  );
  assert.equal(ok[0].error, undefined);
  assert.deepEqual(await quotas.describeClientQuotas([{ entityType: "user", match: "vo" }], true), []);

  const set = await quotas.alterClientQuotas([
    { entity: { user: "u1" }, ops: [{ key: "request_percentage", value: 25 }] },
    { entity: { user: null }, ops: [{ key: "consumer_byte_rate", value: 9000 }] },
    { entity: { user: "u1", "client-id": "c1" }, ops: [{ key: "producer_byte_rate", value: 7000 }] },
    { entity: { "client-id": "c1" }, ops: [{ key: "producer_byte_rate", value: 8000 }] },
  ]);
  assert.deepEqual(
    set.map((r) => r.error),
    [undefined, undefined, undefined, undefined],
  );
  const show = (d: Awaited<ReturnType<ClientQuotasAdmin["describeClientQuotas"]>>) =>
    d.map((e) => `${JSON.stringify(e.entity)}=${JSON.stringify([...e.values])}`).sort();
  assert.deepEqual(show(await quotas.describeClientQuotas([{ entityType: "user", match: "u1" }], true)), [
    '{"user":"u1"}=[["request_percentage",25]]',
  ]);
  assert.deepEqual(show(await quotas.describeClientQuotas([{ entityType: "user", match: null }], true)), [
    '{"user":null}=[["consumer_byte_rate",9000]]',
  ]);
  // SPECIFIED: any name, the default included; not strict: entities with a client part too.
  assert.deepEqual(show(await quotas.describeClientQuotas([{ entityType: "user" }], true)), [
    '{"user":"u1"}=[["request_percentage",25]]',
    '{"user":null}=[["consumer_byte_rate",9000]]',
  ]);
  assert.deepEqual(show(await quotas.describeClientQuotas([{ entityType: "user", match: "u1" }], false)), [
    '{"user":"u1","client-id":"c1"}=[["producer_byte_rate",7000]]',
    '{"user":"u1"}=[["request_percentage",25]]',
  ]);
  assert.deepEqual(
    show(await quotas.describeClientQuotas([{ entityType: "client-id", match: "c1" }], true)),
    ['{"client-id":"c1"}=[["producer_byte_rate",8000]]'],
  );
  // Removing a key; the entity's other keys stay.
  await quotas.alterClientQuotas([
    { entity: { user: "u1" }, ops: [{ key: "request_percentage", value: null }] },
  ]);
  assert.deepEqual(await quotas.describeClientQuotas([{ entityType: "user", match: "u1" }], true), []);

  await assert.rejects(quotas.describeClientQuotas([{ entityType: "group" }]), (e: { code: number }) => {
    assert.equal(e.code, ErrorCode.UNSUPPORTED_VERSION);
    return true;
  });
  await assert.rejects(
    quotas.describeClientQuotas([{ entityType: "user" }, { entityType: "user", match: "x" }]),
    (e: { code: number; message: string }) => {
      assert.equal(e.code, ErrorCode.INVALID_REQUEST);
      assert.match(e.message, /Duplicate user filter component entity type/);
      return true;
    },
  );
  await assert.rejects(
    quotas.describeClientQuotas([{ entityType: "user" }, { entityType: "ip" }]),
    (e: { code: number }) => e.code === ErrorCode.INVALID_REQUEST,
  );
  // Clean up what later tests would otherwise see (the default user's quota).
  await quotas.alterClientQuotas([
    { entity: { user: null }, ops: [{ key: "consumer_byte_rate", value: null }] },
    { entity: { user: "u1", "client-id": "c1" }, ops: [{ key: "producer_byte_rate", value: null }] },
    { entity: { "client-id": "c1" }, ops: [{ key: "producer_byte_rate", value: null }] },
  ]);
});

test("configs --entity-type users|clients: alter, describe, delete with Kafka's output", async () => {
  let r = await configs(
    "--alter",
    "--add-config",
    "producer_byte_rate=1048576,consumer_byte_rate=2097152",
    "--entity-type",
    "users",
    "--entity-name",
    "alice",
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "Completed updating config for user alice.\n");
  r = await configs(
    "--alter",
    "--add-config",
    "producer_byte_rate=20000000",
    "--entity-type",
    "users",
    "--entity-name",
    "alice",
    "--entity-type",
    "clients",
    "--entity-name",
    "app",
  );
  assert.equal(r.code, 0, r.stderr);
  r = await configs(
    "--alter",
    "--add-config",
    "request_percentage=200",
    "--entity-type",
    "clients",
    "--entity-default",
  );
  assert.equal(r.stdout, "Completed updating default config for clients in the cluster.\n");
  r = await configs("--describe", "--entity-type", "users", "--entity-name", "alice");
  assert.equal(
    r.stdout,
    "Quota configs for user-principal 'alice' are consumer_byte_rate=2097152.0, producer_byte_rate=1048576.0\n",
  );
  r = await configs("--describe", "--entity-type", "users", "--entity-type", "clients");
  assert.equal(
    r.stdout,
    "Quota configs for user-principal 'alice', client-id 'app' are producer_byte_rate=2.0E7\n",
  );
  r = await configs("--describe", "--entity-type", "clients");
  assert.equal(r.stdout, "Quota configs for the default client-id are request_percentage=200.0\n");
  r = await configs(
    "--alter",
    "--delete-config",
    "consumer_byte_rate",
    "--entity-type",
    "users",
    "--entity-name",
    "alice",
  );
  assert.equal(r.code, 0, r.stderr);
  r = await configs(
    "--alter",
    "--delete-config",
    "consumer_byte_rate",
    "--entity-type",
    "users",
    "--entity-name",
    "alice",
  );
  assert.notEqual(r.code, 0);
  assert.match(r.stderr + r.stdout, /Invalid config\(s\): consumer_byte_rate/);
  r = await configs("--alter", "--add-config", "bogus=1", "--entity-type", "clients", "--entity-name", "x");
  assert.notEqual(r.code, 0);
  assert.match(r.stderr + r.stdout, /Only quota configs can be added for 'clients' using --bootstrap-server/);
  r = await configs(
    "--alter",
    "--add-config",
    "producer_byte_rate=fast",
    "--entity-type",
    "clients",
    "--entity-name",
    "x",
  );
  assert.match(r.stderr + r.stdout, /Cannot parse quota configuration value for producer_byte_rate: fast/);
  assert.doesNotMatch(r.stderr, /\n\s+at /, "no stack trace");
  await configs(
    "--alter",
    "--delete-config",
    "request_percentage",
    "--entity-type",
    "clients",
    "--entity-default",
  );
  await configs(
    "--alter",
    "--delete-config",
    "producer_byte_rate",
    "--entity-type",
    "users",
    "--entity-name",
    "alice",
  );
  await configs(
    "--alter",
    "--delete-config",
    "producer_byte_rate",
    "--entity-type",
    "users",
    "--entity-name",
    "alice",
    "--entity-type",
    "clients",
    "--entity-name",
    "app",
  );
  assert.equal((await configs("--describe", "--entity-type", "users")).stdout, "");
});

describe("throttling real clients", {
  skip: skipUnlessInstalled("python3", "confluent-kafka", "kcat"),
}, () => {
  test("confluent-kafka at producer_byte_rate=1048576: 1 MB/s ± 15 % over 20 s, throttle times, a raised quota applies within seconds", async () => {
    const r0 = await configs(
      "--alter",
      "--add-config",
      "producer_byte_rate=1048576",
      "--entity-type",
      "clients",
      "--entity-name",
      "quota-producer",
    );
    assert.equal(r0.code, 0, r0.stderr);
    // Phases: 11 s for the quota window to fill (a new client may send quota × 10 s at once), 20 s
    // measured, then the quota is raised to 4 MB/s with the tool and the next 5 s measured.
    const script = `
import sys, time, json, subprocess
from confluent_kafka import Producer
port, raise_cmd = sys.argv[1], json.loads(sys.argv[2])
throttles = []
def stats(s):
    for b in json.loads(s)["brokers"].values():
        t = b.get("throttle", {})
        if t.get("cnt", 0) > 0: throttles.append(t["max"])
p = Producer({"bootstrap.servers": "127.0.0.1:" + port, "client.id": "quota-producer", "linger.ms": 5, "batch.size": 131072,
              "statistics.interval.ms": 1000, "stats_cb": stats, "queue.buffering.max.kbytes": 2048})
val = b"x" * 1000
acked = [0]
def cb(err, msg):
    if err is None: acked[0] += len(msg.value())
def run(secs):
    end = time.time() + secs
    while time.time() < end:
        try: p.produce("quota-produce", val, callback=cb)
        except BufferError: p.poll(0.02)
        p.poll(0)
run(11)
a0, t0 = acked[0], time.time()
run(20)
a1, t1 = acked[0], time.time()
subprocess.run(raise_cmd, check=True, capture_output=True)
a2, t2 = acked[0], time.time()
run(5)
a3, t3 = acked[0], time.time()
p.flush(30)
print(json.dumps({"rate": (a1 - a0) / (t1 - t0), "raised_rate": (a3 - a2) / (t3 - t2), "throttle_max_ms": max(throttles or [0]), "throttle_reports": len(throttles)}))
`;
    const raise = [
      process.execPath,
      ...tributaryArgv([
        "configs",
        "--bootstrap-server",
        broker.bootstrap,
        "--alter",
        "--add-config",
        "producer_byte_rate=4194304",
        "--entity-type",
        "clients",
        "--entity-name",
        "quota-producer",
      ]),
    ];
    const r = await runCommand(PYTHON, ["-c", script, String(broker.port), JSON.stringify(raise)], {
      timeoutMs: 120_000,
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const m = JSON.parse(r.stdout.trim().split("\n").pop()!);
    console.log(`confluent-kafka under producer_byte_rate=1048576: ${JSON.stringify(m)}`);
    assert.ok(Math.abs(m.rate - MB) / MB <= 0.15, `rate ${m.rate} B/s is not 1 MB/s ± 15 %`);
    assert.ok(m.throttle_max_ms > 0 && m.throttle_reports > 0, "librdkafka saw throttle times");
    assert.ok(m.raised_rate > 2 * MB, `after raising the quota to 4 MB/s: ${m.raised_rate} B/s`);
    // The broker's metrics name the client's quota entity.
    const text = await (await fetch(broker.metricsUrl)).text();
    assert.match(
      text,
      /kafka_server_quota_throttle_time\{resource="Produce",user="",clientId="quota-producer"\} [1-9]/,
    );
    assert.match(
      text,
      /kafka_server_quota_byte_rate\{resource="Produce",user="",clientId="quota-producer"\} \d/,
    );
  });

  test("kafka-python at consumer_byte_rate=524288: consumes at that rate and reports fetch-throttle-time-avg", async () => {
    const r0 = await configs(
      "--alter",
      "--add-config",
      "consumer_byte_rate=524288",
      "--entity-type",
      "clients",
      "--entity-name",
      "quota-consumer",
    );
    assert.equal(r0.code, 0, r0.stderr);
    const script = `
import sys, time, json
from kafka import KafkaConsumer
c = KafkaConsumer("quota-produce", bootstrap_servers="127.0.0.1:" + sys.argv[1], client_id="quota-consumer",
                  auto_offset_reset="earliest", enable_auto_commit=False, fetch_max_bytes=1048576, max_partition_fetch_bytes=1048576)
got = [0]
def run(secs):
    end = time.time() + secs
    while time.time() < end:
        for recs in c.poll(timeout_ms=200).values():
            for m in recs: got[0] += len(m.value)
run(11)
g0, t0 = got[0], time.time()
run(10)
rate = (got[0] - g0) / (time.time() - t0)
throttle = c.metrics().get("consumer-fetch-manager-metrics", {}).get("fetch-throttle-time-avg", 0)
c.close()
print(json.dumps({"rate": rate, "fetch_throttle_time_avg": throttle}))
`;
    const r = await runCommand(PYTHON, ["-c", script, String(broker.port)], { timeoutMs: 90_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const m = JSON.parse(r.stdout.trim().split("\n").pop()!);
    console.log(`kafka-python under consumer_byte_rate=524288: ${JSON.stringify(m)}`);
    assert.ok(Math.abs(m.rate - MB / 2) / (MB / 2) <= 0.25, `rate ${m.rate} B/s is not 512 KB/s ± 25 %`);
    assert.ok(m.fetch_throttle_time_avg > 0, "kafka-python saw throttle times");
  });

  test("a SASL user's quota applies to its connections: the principal's name is the quota user", async () => {
    await quotas.alterClientQuotas([
      { entity: { user: "alice" }, ops: [{ key: "producer_byte_rate", value: 30_000_000 }] },
    ]);
    const sasl = ["-X", "security.protocol=sasl_plaintext", "-X", "sasl.mechanisms=PLAIN"];
    const r = await runCommand(
      KCAT,
      [
        "-b",
        `127.0.0.1:${saslPort}`,
        ...sasl,
        "-X",
        "sasl.username=alice",
        "-X",
        "sasl.password=alice-secret",
        "-P",
        "-t",
        "quota-misc",
      ],
      { input: "a\nb\n", timeoutMs: 20_000 },
    );
    assert.equal(r.code, 0, r.stderr);
    await waitFor("alice's quota metric", 10_000, async () => {
      const text = await (await fetch(broker.metricsUrl)).text();
      return /kafka_server_quota_byte_rate\{resource="Produce",user="alice",clientId=""\} [1-9]/.test(text)
        ? true
        : undefined;
    });
    await quotas.alterClientQuotas([
      { entity: { user: "alice" }, ops: [{ key: "producer_byte_rate", value: null }] },
    ]);
  });

  test("precedence on the broker: /config/users/<default> wins over /config/clients/<c>", async () => {
    await quotas.alterClientQuotas([
      { entity: { "client-id": "prec" }, ops: [{ key: "producer_byte_rate", value: 100_000_000 }] },
      { entity: { user: null }, ops: [{ key: "producer_byte_rate", value: 50_000_000 }] },
    ]);
    const r = await runCommand(
      KCAT,
      ["-b", broker.bootstrap, "-X", "client.id=prec", "-P", "-t", "quota-misc"],
      {
        input: "a\nb\nc\n",
        timeoutMs: 20_000,
      },
    );
    assert.equal(r.code, 0, r.stderr);
    // The unauthenticated user is ANONYMOUS: its default-user quota applies, tagged (user, "").
    await waitFor("the metric of the default-user quota", 10_000, async () => {
      const text = await (await fetch(broker.metricsUrl)).text();
      return /kafka_server_quota_byte_rate\{resource="Produce",user="ANONYMOUS",clientId=""\}/.test(text)
        ? true
        : undefined;
    });
    await quotas.alterClientQuotas([
      { entity: { "client-id": "prec" }, ops: [{ key: "producer_byte_rate", value: null }] },
      { entity: { user: null }, ops: [{ key: "producer_byte_rate", value: null }] },
    ]);
  });
});

function records(count: number, prefix: string, valueSize = 16): Buffer {
  return buildRecordBatch({
    records: Array.from({ length: count }, (_, i) => ({
      key: Buffer.from(`${prefix}-${i}`),
      value: Buffer.alloc(valueSize, 0x61 + (i % 26)),
    })),
    timestamp: BigInt(Date.now()),
  });
}

function produceRequest(topic: string, batch: Buffer) {
  return {
    ...defaultProduceRequest(),
    acks: 1,
    timeoutMs: 10_000,
    topicData: [{ name: topic, partitionData: [{ index: 0, records: batch }] }],
  };
}

describe("the throttled channel (a client that ignores throttle_time_ms)", () => {
  test("Produce v9: answered at once with the throttle time, then the connection is muted that long; Produce v5: the response itself waits", async () => {
    await quotas.alterClientQuotas([
      { entity: { "client-id": "wire-client" }, ops: [{ key: "producer_byte_rate", value: 100_000 }] },
    ]);
    const c = await WireClient.connect(broker.port);
    try {
      // 100 kB/s × 10 s = 1 MB passes; the second 600 kB request is over by 0.2 MB → about 2 s.
      const first = await c.request(Apis.Produce, 9, produceRequest("quota-misc", records(600, "a", 1000)));
      assert.equal(first.throttleTimeMs, 0);
      const sent = Date.now();
      c.send(Apis.Produce, 9, produceRequest("quota-misc", records(600, "b", 1000)));
      c.send(Apis.Produce, 9, produceRequest("quota-misc", records(1, "c")));
      const second = (await c.receive(Apis.Produce, 9, 10_000)).body;
      const secondAt = Date.now();
      const third = (await c.receive(Apis.Produce, 9, 20_000)).body;
      const thirdAt = Date.now();
      assert.equal(second.responses[0].partitionResponses[0].errorCode, 0);
      assert.ok(
        second.throttleTimeMs >= 1500 && second.throttleTimeMs <= 2500,
        String(second.throttleTimeMs),
      );
      assert.ok(secondAt - sent < second.throttleTimeMs, `answered at once (${secondAt - sent} ms)`);
      assert.ok(
        thirdAt - secondAt >= second.throttleTimeMs - 100,
        `the next request waited ${thirdAt - secondAt} ms, throttle ${second.throttleTimeMs} ms`,
      );
      assert.ok(third.throttleTimeMs > 0);
      // Before KIP-219 (Produce < v6) the broker holds the response for the throttle time.
      const oldSent = Date.now();
      const old = await c.request(Apis.Produce, 5, produceRequest("quota-misc", records(1, "d")));
      assert.ok(old.throttleTimeMs > 0);
      assert.ok(
        Date.now() - oldSent >= old.throttleTimeMs - 100,
        `${Date.now() - oldSent} ms, throttle ${old.throttleTimeMs}`,
      );
    } finally {
      c.close();
      await quotas.alterClientQuotas([
        { entity: { "client-id": "wire-client" }, ops: [{ key: "producer_byte_rate", value: null }] },
      ]);
    }
  });

  test("controller_mutation_rate: CreateTopics v7 past the token bucket gets THROTTLING_QUOTA_EXCEEDED and the time to wait", async () => {
    // 2 partitions/s: a bucket of 2 × 11 = 22 tokens. 30 partitions pass (the bucket was positive) and
    // leave it at −8: the next topic is refused with about 4 s to wait, and so is the one after it.
    await quotas.alterClientQuotas([
      { entity: { "client-id": "wire-client" }, ops: [{ key: "controller_mutation_rate", value: 2 }] },
    ]);
    const c = await WireClient.connect(broker.port);
    const create = (names: Array<[string, number]>) =>
      c.request(Apis.CreateTopics, 7, {
        ...defaultCreateTopicsRequest(),
        timeoutMs: 10_000,
        topics: names.map(([name, n]) => ({
          ...defaultCreatableTopic(),
          name,
          numPartitions: n,
          replicationFactor: 1,
        })),
      });
    try {
      const first = await create([["cm-big", 30]]);
      assert.equal(first.topics[0].errorCode, 0, first.topics[0].errorMessage ?? "");
      assert.equal(first.throttleTimeMs, 0, "a strict quota does not throttle the request that exhausts it");
      const second = await create([
        ["cm-refused-1", 1],
        ["cm-refused-2", 1],
      ]);
      assert.deepEqual(
        second.topics.map((t) => t.errorCode),
        [ErrorCode.THROTTLING_QUOTA_EXCEEDED, ErrorCode.THROTTLING_QUOTA_EXCEEDED],
      );
      assert.ok(
        second.throttleTimeMs >= 3000 && second.throttleTimeMs <= 4100,
        String(second.throttleTimeMs),
      );
      const listed = await admin.listTopics();
      assert.ok(!listed.some((t) => t.name.startsWith("cm-refused")), "refused topics were not created");
    } finally {
      c.close();
      await quotas.alterClientQuotas([
        { entity: { "client-id": "wire-client" }, ops: [{ key: "controller_mutation_rate", value: null }] },
      ]);
    }
  });

  test("request_percentage: Metadata requests over it get throttle times bounded by one window", async () => {
    await quotas.alterClientQuotas([
      { entity: { "client-id": "wire-client" }, ops: [{ key: "request_percentage", value: 0.001 }] },
    ]);
    const c = await WireClient.connect(broker.port);
    try {
      let throttle = 0;
      for (let i = 0; i < 500 && throttle === 0; i++)
        throttle = (await c.request(Apis.Metadata, 9, { ...defaultMetadataRequest(), topics: null }))
          .throttleTimeMs;
      assert.ok(throttle > 0 && throttle <= 1000, `throttle ${throttle} ms`);
      const text = await (await fetch(broker.metricsUrl)).text();
      assert.match(
        text,
        /kafka_server_quota_request_time\{resource="Request",user="",clientId="wire-client"\} \d/,
      );
    } finally {
      c.close();
      await quotas.alterClientQuotas([
        { entity: { "client-id": "wire-client" }, ops: [{ key: "request_percentage", value: null }] },
      ]);
    }
  });
});
