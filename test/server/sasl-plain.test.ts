// Issue 21 (second part): SASL/PLAIN on SASL_PLAINTEXT and SASL_SSL listeners, on a real broker process,
// with real clients (kcat, confluent-kafka, kafka-python, KafkaJS). Users come from the listener's
// PlainLoginModule JAAS configuration (`listener.name.<l>.plain.sasl.jaas.config`).
//   - Each client produces and consumes after authenticating; a wrong password and an unknown user get the
//     same SASL_AUTHENTICATION_FAILED message (no hint which part was wrong).
//   - Before authenticating, a connection may send only ApiVersions and the SASL requests, each at most
//     sasl.server.max.receive.size bytes: a huge announced frame or a Metadata request closes it at once.
//   - SaslHandshake on a plaintext listener (or after authenticating) is ILLEGAL_SASL_STATE.
//   - @platformatic/kafka over SASL_SSL with PLAIN: admin, produce, consume in a group.
//   - The project's tools over SASL_SSL with PLAIN (security.protocol, sasl.mechanism, sasl.jaas.config in
//     --command-config / --producer.config / --consumer.config): topics, console-producer,
//     console-consumer in a group; a wrong password is one line with SASL_AUTHENTICATION_FAILED's message,
//     a mechanism the listener does not enable is one line naming the enabled ones.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Apis } from "../../src/protocol/generated/api-table.js";
import { ErrorCode } from "../../src/protocol/generated/errors.js";
import { defaultMetadataRequest } from "../../src/protocol/generated/messages/MetadataRequest.js";
import { BrokerHarness, runCommand } from "../support/broker-harness.js";
import { kafkajsRoundTrip, metadataV1Frame, platformaticRoundTrip } from "../support/raw-requests.js";
import { skipUnlessInstalled } from "../support/required-tools.js";
import { runTributary } from "../support/tributary-cli.js";
import { WireClient } from "./wire-client.js";

const KCAT = "/usr/bin/kcat";
const PYTHON = "/usr/bin/python3";
const dir = mkdtempSync(join(tmpdir(), "tributary-sasl-"));
const f = (name: string): string => join(dir, name);
const JAAS =
  'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";';
let broker: BrokerHarness;
let saslPort = 0;
let saslSslPort = 0;

before(async () => {
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      f("b.key"),
      "-out",
      f("b.pem"),
      "-days",
      "2",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=DNS:localhost,IP:127.0.0.1",
    ],
    { stdio: "pipe" },
  );
  writeFileSync(f("keystore.pem"), readFileSync(f("b.key"), "utf8") + readFileSync(f("b.pem"), "utf8"));
  broker = await BrokerHarness.start({
    name: "sasl",
    overrides: {
      listeners: "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
      "sasl.enabled.mechanisms": "PLAIN",
      "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
      "listener.name.sasl_ssl.plain.sasl.jaas.config": JAAS,
      "ssl.keystore.type": "PEM",
      "ssl.keystore.location": f("keystore.pem"),
    },
  });
  const ports = broker.listenerPorts();
  assert.equal(ports.length, 3, broker.output);
  [, saslPort, saslSslPort] = ports;
});

after(async () => {
  await broker?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("SASL/PLAIN with real clients", {
  skip: skipUnlessInstalled("kcat", "python3", "confluent-kafka", "openssl"),
}, () => {
  const kcatSasl = (user: string, password: string): string[] => [
    "-b",
    `127.0.0.1:${saslPort}`,
    "-X",
    "security.protocol=sasl_plaintext",
    "-X",
    "sasl.mechanisms=PLAIN",
    "-X",
    `sasl.username=${user}`,
    "-X",
    `sasl.password=${password}`,
  ];

  test("kcat: produce and consume as alice; a wrong password and an unknown user fail alike", async () => {
    const produced = await runCommand(KCAT, [...kcatSasl("alice", "alice-secret"), "-P", "-t", "sasl-kcat"], {
      input: "a\nb\n",
      timeoutMs: 20_000,
    });
    assert.equal(produced.code, 0, produced.stderr);
    const consumed = await runCommand(
      KCAT,
      [...kcatSasl("alice", "alice-secret"), "-C", "-t", "sasl-kcat", "-o", "beginning", "-e", "-q"],
      { timeoutMs: 20_000 },
    );
    assert.deepEqual(consumed.stdout.trim().split("\n"), ["a", "b"]);
    const messages: string[] = [];
    for (const [user, password] of [
      ["alice", "wrong"],
      ["mallory", "alice-secret"],
    ]) {
      const r = await runCommand(KCAT, [...kcatSasl(user, password), "-L", "-m", "5"], { timeoutMs: 20_000 });
      assert.notEqual(r.code, 0);
      const m = /Authentication failed: [^(\n"]*/.exec(r.stderr + r.stdout);
      assert.ok(m, r.stderr + r.stdout);
      messages.push(m[0]);
    }
    assert.equal(messages[0], messages[1], "the same answer for a wrong password and an unknown user");
    assert.match(messages[0], /Authentication failed: Invalid username or password/);
  });

  test("confluent-kafka over SASL_SSL: produce, consume in a group", async () => {
    const script = `
import sys, time
from confluent_kafka import Producer, Consumer
port = sys.argv[1]
base = {"bootstrap.servers": "127.0.0.1:" + port, "security.protocol": "SASL_SSL", "ssl.ca.location": sys.argv[2],
        "sasl.mechanisms": "PLAIN", "sasl.username": "alice", "sasl.password": "alice-secret"}
p = Producer(base)
for i in range(4): p.produce("sasl-ck", ("c%d" % i).encode())
assert p.flush(15) == 0
c = Consumer(dict(base, **{"group.id": "sasl-group", "auto.offset.reset": "earliest"}))
c.subscribe(["sasl-ck"])
got = []
deadline = time.time() + 20
while len(got) < 4 and time.time() < deadline:
    m = c.poll(0.5)
    if m is not None and not m.error(): got.append(m.value().decode())
c.close()
print(",".join(got))
`;
    const r = await runCommand(PYTHON, ["-c", script, String(saslSslPort), f("b.pem")], {
      timeoutMs: 60_000,
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(r.stdout.trim(), "c0,c1,c2,c3");
  });

  test("kafka-python over SASL_PLAINTEXT", async () => {
    const script = `
import sys
from kafka import KafkaProducer, KafkaConsumer
kw = dict(bootstrap_servers="127.0.0.1:" + sys.argv[1], security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
          sasl_plain_username="alice", sasl_plain_password="alice-secret")
p = KafkaProducer(**kw)
for i in range(3): p.send("sasl-kp", ("p%d" % i).encode()).get(timeout=15)
p.close()
c = KafkaConsumer("sasl-kp", auto_offset_reset="earliest", consumer_timeout_ms=8000, **kw)
print(",".join(m.value.decode() for m in c))
c.close()
`;
    const r = await runCommand(PYTHON, ["-c", script, String(saslPort)], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(r.stdout.trim(), "p0,p1,p2");
  });

  test("KafkaJS over SASL_PLAINTEXT", async () => {
    await kafkajsRoundTrip(
      {
        brokers: [`127.0.0.1:${saslPort}`],
        sasl: { mechanism: "plain", username: "alice", password: "alice-secret" },
      },
      "sasl-kafkajs",
    );
    const { Kafka, logLevel } = await import("kafkajs");
    const bad = new Kafka({
      brokers: [`127.0.0.1:${saslPort}`],
      sasl: { mechanism: "plain", username: "alice", password: "nope" },
      logLevel: logLevel.NOTHING,
      retry: { retries: 0 },
    }).admin();
    await assert.rejects(bad.connect(), /Authentication failed: Invalid username or password/);
  });
});

test("before authentication: a huge announced frame or a Metadata request closes the connection", async () => {
  const closesAfter = (bytes: Buffer): Promise<boolean> =>
    new Promise((resolve) => {
      const s = connect({ host: "127.0.0.1", port: saslPort }, () => s.write(bytes));
      const t = setTimeout(() => {
        s.destroy();
        resolve(false);
      }, 5000);
      s.on("error", () => {});
      s.on("close", () => {
        clearTimeout(t);
        resolve(true);
      });
    });
  const huge = Buffer.alloc(4);
  huge.writeInt32BE(100 * 1024 * 1024, 0);
  assert.ok(await closesAfter(huge), "a 100 MB size prefix closes an unauthenticated connection");
  // A Metadata request before the handshake.
  const md = metadataV1Frame();
  assert.ok(await closesAfter(md), "Metadata before authenticating closes the connection");
  assert.match(broker.output, /Unexpected Kafka request of type Metadata during SASL handshake/);
});

test("SaslHandshake on a plaintext listener is ILLEGAL_SASL_STATE; the SASL APIs are advertised", async () => {
  const c = await WireClient.connect(broker.port);
  try {
    const versions = await c.request(Apis.ApiVersions, 3, {
      clientSoftwareName: "t",
      clientSoftwareVersion: "1",
    });
    const keys = versions.apiKeys.map((k: { apiKey: number }) => k.apiKey);
    assert.ok(keys.includes(17) && keys.includes(36), JSON.stringify(keys));
    const r = await c.request(Apis.SaslHandshake, 1, { mechanism: "PLAIN" });
    assert.equal(r.errorCode, ErrorCode.ILLEGAL_SASL_STATE);
    const md = await c.request(Apis.Metadata, 9, { ...defaultMetadataRequest(), topics: [] });
    assert.ok(md.brokers.length > 0);
  } finally {
    c.close();
  }
});

test("a SASL listener without users, or with GSSAPI (Kafka's default), stops the broker in one line", async () => {
  const { tributaryArgv } = await import("../support/broker-harness.js");
  for (const [extra, expected] of [
    [
      ["sasl.enabled.mechanisms=PLAIN"],
      /Missing configuration listener\.name\.sasl_plaintext\.plain\.sasl\.jaas\.config/,
    ],
    [
      [],
      /Invalid value GSSAPI for configuration sasl\.enabled\.mechanisms: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 \(GSSAPI is not supported; GSSAPI is Kafka's default, set sasl\.enabled\.mechanisms\)/,
    ],
  ] as const) {
    const args = [
      "server-start",
      "--override",
      `log.dirs=${f("bad-logs")}`,
      "--override",
      "listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
      "--override",
      "metrics.http.listener=",
    ];
    for (const e of extra) args.push("--override", e);
    const r = await runCommand(process.execPath, tributaryArgv(args), { timeoutMs: 30_000 });
    assert.notEqual(r.code, 0);
    assert.match(r.stdout + r.stderr, expected);
    assert.doesNotMatch(r.stdout + r.stderr, /^\s+at /m);
  }
});

test("@platformatic/kafka over SASL_SSL with PLAIN: admin, produce, consume in a group", async () => {
  await platformaticRoundTrip(
    `127.0.0.1:${saslSslPort}`,
    {
      tls: { ca: readFileSync(f("b.pem")) },
      sasl: { mechanism: "PLAIN", username: "alice", password: "alice-secret" },
    },
    "sasl-platformatic",
  );
});

test("the project's tools over SASL_SSL with PLAIN (--command-config, --producer.config, --consumer.config)", async () => {
  const config = (user: string, password: string, mechanism = "PLAIN"): string => {
    const file = f(`client-${user}-${password}-${mechanism}.properties`);
    writeFileSync(
      file,
      [
        "security.protocol=SASL_SSL",
        `sasl.mechanism=${mechanism}`,
        `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="${user}" password="${password}";`,
        "ssl.truststore.type=PEM",
        `ssl.truststore.location=${f("b.pem")}`,
        "",
      ].join("\n"),
    );
    return file;
  };
  const alice = config("alice", "alice-secret");
  const bootstrap = `127.0.0.1:${saslSslPort}`;
  const created = await runTributary([
    "topics",
    "--bootstrap-server",
    bootstrap,
    "--command-config",
    alice,
    "--create",
    "--topic",
    "sasl-tools",
    "--partitions",
    "2",
  ]);
  assert.equal(created.code, 0, created.stderr);
  const produced = await runTributary(
    [
      "console-producer",
      "--bootstrap-server",
      bootstrap,
      "--producer.config",
      alice,
      "--topic",
      "sasl-tools",
    ],
    { input: "t1\nt2\nt3\n" },
  );
  assert.equal(produced.code, 0, produced.stderr);
  const consumed = await runTributary([
    "console-consumer",
    "--bootstrap-server",
    bootstrap,
    "--consumer.config",
    alice,
    "--topic",
    "sasl-tools",
    "--group",
    "sasl-tools-group",
    "--from-beginning",
    "--max-messages",
    "3",
    "--timeout-ms",
    "20000",
  ]);
  assert.equal(consumed.code, 0, consumed.stderr);
  assert.deepEqual(consumed.stdout.trim().split("\n").sort(), ["t1", "t2", "t3"]);
  const described = await runTributary([
    "topics",
    "--bootstrap-server",
    bootstrap,
    "--command-config",
    alice,
    "--describe",
    "--topic",
    "sasl-tools",
  ]);
  assert.equal(described.code, 0, described.stderr);
  assert.match(described.stdout, /Topic: sasl-tools\s+TopicId: \S+\s+PartitionCount: 2/);

  const wrong = await runTributary([
    "topics",
    "--bootstrap-server",
    bootstrap,
    "--command-config",
    config("alice", "wrong"),
    "--list",
  ]);
  assert.equal(wrong.code, 1, wrong.stdout + wrong.stderr);
  assert.match(wrong.stderr, /Authentication failed: Invalid username or password/);
  assert.equal(wrong.stderr.trim().split("\n").length, 1, wrong.stderr);
  const gssapi = await runTributary([
    "topics",
    "--bootstrap-server",
    bootstrap,
    "--command-config",
    config("alice", "alice-secret", "GSSAPI"),
    "--list",
  ]);
  assert.equal(gssapi.code, 1);
  assert.match(
    gssapi.stderr,
    /Invalid value GSSAPI for configuration sasl\.mechanism: one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512$/m,
  );
  assert.equal(gssapi.stderr.trim().split("\n").length, 1, gssapi.stderr);
  // A mechanism the client has but the listener does not enable: UNSUPPORTED_SASL_MECHANISM, naming them.
  const scramFile = f("client-scram.properties");
  writeFileSync(
    scramFile,
    [
      "security.protocol=SASL_SSL",
      "sasl.mechanism=SCRAM-SHA-512",
      'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="alice-secret";',
      "ssl.truststore.type=PEM",
      `ssl.truststore.location=${f("b.pem")}`,
      "",
    ].join("\n"),
  );
  const unsupported = await runTributary([
    "topics",
    "--bootstrap-server",
    bootstrap,
    "--command-config",
    scramFile,
    "--list",
  ]);
  assert.equal(unsupported.code, 1);
  assert.match(
    unsupported.stderr,
    /Client SASL mechanism 'SCRAM-SHA-512' not enabled in the server, enabled mechanisms are \[PLAIN\]/,
  );
  assert.equal(unsupported.stderr.trim().split("\n").length, 1, unsupported.stderr);
  // SASL towards a PLAINTEXT listener: the broker answers the handshake with ILLEGAL_SASL_STATE.
  const plainListener = f("sasl-to-plaintext.properties");
  writeFileSync(
    plainListener,
    `security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-secret";\n`,
  );
  const illegal = await runTributary([
    "topics",
    "--bootstrap-server",
    broker.bootstrap,
    "--command-config",
    plainListener,
    "--list",
  ]);
  assert.equal(illegal.code, 1);
  assert.match(
    illegal.stderr,
    /does not expect a SASL handshake: is its listener SASL_PLAINTEXT or SASL_SSL\?/,
  );
  assert.equal(illegal.stderr.trim().split("\n").length, 1, illegal.stderr);
});
