// Issue 21: SASL/SCRAM (SCRAM-SHA-256, SCRAM-SHA-512) on a real broker process with real clients — kcat,
// confluent-kafka and kafka-python (python3), KafkaJS and @platformatic/kafka — over SASL_SSL with
// SCRAM-SHA-512, and KafkaJS over SASL_PLAINTEXT with SCRAM-SHA-256: produce, consume in a group, an admin
// call. The users are created while the broker runs, with `tributary configs --alter --add-config
// 'SCRAM-SHA-512=[…]'` (AlterUserScramCredentials over the PLAINTEXT listener, credentials in
// /config/users/<u>), and described as Kafka's kafka-configs prints them.
//   - A wrong password and an unknown user get the same SASL_AUTHENTICATION_FAILED message.
//   - `--delete-config SCRAM-SHA-512` removes a credential: the user no longer authenticates with it.
//   - Describe/AlterUserScramCredentials error cases on the wire (RESOURCE_NOT_FOUND, DUPLICATE_RESOURCE,
//     UNSUPPORTED_SASL_MECHANISM, UNACCEPTABLE_CREDENTIAL).
//   - The project's tools (topics, console-producer, console-consumer in a group) over SASL_SSL with
//     SCRAM-SHA-512 from their properties files; a wrong password is one line.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Apis } from "../../src/protocol/generated/api-table.js";
import { ErrorCode } from "../../src/protocol/generated/errors.js";
import { BrokerHarness, runCommand, tributaryArgv, withDeadline } from "../support/broker-harness.js";
import { skipUnlessInstalled } from "../support/required-tools.js";
import { WireClient } from "./wire-client.js";

const KCAT = "/usr/bin/kcat";
const PYTHON = "/usr/bin/python3";
const dir = mkdtempSync(join(tmpdir(), "tributary-scram-"));
const f = (name: string): string => join(dir, name);
let broker: BrokerHarness;
let plainPort = 0;
let saslPort = 0;
let saslSslPort = 0;

function tributary(args: readonly string[]) {
  return runCommand(process.execPath, tributaryArgv(args), { timeoutMs: 30_000 });
}

async function configs(args: readonly string[]) {
  return tributary(["configs", "--bootstrap-server", `127.0.0.1:${plainPort}`, ...args]);
}

before(async () => {
  execFileSync(
    "openssl",
    [
      ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f("b.key"), "-out", f("b.pem")],
      ...["-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
    ],
    { stdio: "pipe" },
  );
  writeFileSync(f("keystore.pem"), readFileSync(f("b.key"), "utf8") + readFileSync(f("b.pem"), "utf8"));
  broker = await BrokerHarness.start({
    name: "scram",
    overrides: {
      listeners: "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
      "sasl.enabled.mechanisms": "SCRAM-SHA-512,SCRAM-SHA-256",
      "ssl.keystore.type": "PEM",
      "ssl.keystore.location": f("keystore.pem"),
      "group.initial.rebalance.delay.ms": "0",
    },
  });
  const ports = broker.listenerPorts();
  assert.equal(ports.length, 3, broker.output);
  [plainPort, saslPort, saslSslPort] = ports;
  // The users, created while the broker runs.
  const alice = await configs([
    ...["--alter", "--entity-type", "users", "--entity-name", "alice"],
    ...[
      "--add-config",
      "SCRAM-SHA-512=[iterations=8192,password=alice-secret],SCRAM-SHA-256=[password=alice-256]",
    ],
  ]);
  assert.equal(alice.code, 0, alice.stdout + alice.stderr);
  assert.equal(alice.stdout, "Completed updating config for user alice.\n");
  const bob = await configs([
    ...["--alter", "--entity-type", "users", "--entity-name", "bob"],
    ...["--add-config", "SCRAM-SHA-512=[password=bob-secret]"],
  ]);
  assert.equal(bob.code, 0, bob.stdout + bob.stderr);
});

after(async () => {
  await broker?.close();
  rmSync(dir, { recursive: true, force: true });
});

test("configs --describe --entity-type users prints what kafka-configs prints", async () => {
  const one = await configs(["--describe", "--entity-type", "users", "--entity-name", "alice"]);
  assert.equal(one.code, 0, one.stderr);
  assert.equal(
    one.stdout,
    "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=4096, SCRAM-SHA-512=iterations=8192\n",
  );
  const all = await configs(["--describe", "--entity-type", "users"]);
  assert.equal(
    all.stdout,
    "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=4096, SCRAM-SHA-512=iterations=8192\n" +
      "SCRAM credential configs for user-principal 'bob' are SCRAM-SHA-512=iterations=4096\n",
  );
  const nobody = await configs(["--describe", "--entity-type", "users", "--entity-name", "nobody"]);
  // Kafka's DescribeUserScramCredentialsResult.users() leaves out users without credentials: no line.
  assert.equal(nobody.stdout, "");
  // Bad input: one line naming what was wrong.
  for (const [args, expected] of [
    [
      ["--add-config", "SCRAM-SHA-512=[iterations=100,password=x]"],
      /Iterations 100 is less than the minimum 4096 required for SCRAM-SHA-512/,
    ],
    [["--add-config", "SCRAM-SHA-512=[pass=x]"], /Invalid credential property SCRAM-SHA-512=pass=x/],
    [
      ["--add-config", "sasl_thing=1"],
      /Only quota and SCRAM credential configs can be added for 'users' using --bootstrap-server. Unexpected config names: Set\(sasl_thing\)/,
    ],
  ] as const) {
    const r = await configs(["--alter", "--entity-type", "users", "--entity-name", "carol", ...args]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, expected);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  }
  const defaults = await configs([
    ...[
      "--alter",
      "--entity-type",
      "users",
      "--entity-default",
      "--add-config",
      "SCRAM-SHA-256=[password=x]",
    ],
  ]);
  assert.notEqual(defaults.code, 0);
  assert.match(
    defaults.stderr,
    /The use of --entity-default or --user-defaults is not allowed with User SCRAM Credentials using --bootstrap-server\./,
  );
  // No credential was written for carol by any of these.
  const carol = await configs(["--describe", "--entity-type", "users", "--entity-name", "carol"]);
  assert.equal(carol.code, 0);
  assert.equal(carol.stdout, ""); // no credential: no line (RESOURCE_NOT_FOUND on the wire, tested below)
});

describe("SCRAM with real clients", {
  skip: skipUnlessInstalled("kcat", "python3", "confluent-kafka", "openssl"),
}, () => {
  const kcatScram = (user: string, password: string, mechanism = "SCRAM-SHA-512"): string[] => [
    ...[
      "-b",
      `127.0.0.1:${saslSslPort}`,
      "-X",
      "security.protocol=sasl_ssl",
      "-X",
      `ssl.ca.location=${f("b.pem")}`,
    ],
    ...[
      "-X",
      `sasl.mechanisms=${mechanism}`,
      "-X",
      `sasl.username=${user}`,
      "-X",
      `sasl.password=${password}`,
    ],
  ];

  test("kcat over SASL_SSL with SCRAM-SHA-512: produce, consume in a group, metadata; failures alike", async () => {
    const produced = await runCommand(
      KCAT,
      [...kcatScram("alice", "alice-secret"), "-P", "-t", "scram-kcat"],
      {
        input: "a\nb\n",
        timeoutMs: 20_000,
      },
    );
    assert.equal(produced.code, 0, produced.stderr);
    const consumed = await runCommand(
      KCAT,
      [
        ...kcatScram("alice", "alice-secret"),
        "-G",
        "scram-kcat-group",
        "-o",
        "beginning",
        "-c",
        "2",
        "-q",
        "-f",
        "%s\\n",
        "scram-kcat",
      ],
      { timeoutMs: 40_000 },
    );
    assert.equal(consumed.code, 0, consumed.stderr);
    assert.deepEqual(consumed.stdout.trim().split("\n").sort(), ["a", "b"]);
    const md = await runCommand(KCAT, [...kcatScram("bob", "bob-secret"), "-L", "-t", "scram-kcat"], {
      timeoutMs: 20_000,
    });
    assert.equal(md.code, 0, md.stderr);
    assert.match(md.stdout, /topic "scram-kcat" with 1 partitions/);
    const messages: string[] = [];
    for (const [user, password] of [
      ["alice", "wrong"],
      ["mallory", "alice-secret"],
    ]) {
      const r = await runCommand(KCAT, [...kcatScram(user, password), "-L", "-m", "5"], {
        timeoutMs: 20_000,
      });
      assert.notEqual(r.code, 0);
      const m = /Authentication failed[^(\n"]*/.exec(r.stderr + r.stdout);
      assert.ok(m, r.stderr + r.stdout);
      messages.push(m[0].trim());
    }
    assert.equal(messages[0], messages[1], "the same answer for a wrong password and an unknown user");
    assert.equal(
      messages[0],
      "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512",
    );
  });

  test("confluent-kafka over SASL_SSL with SCRAM-SHA-512: admin, produce, consume in a group", async () => {
    const script = `
import sys, time
from confluent_kafka import Producer, Consumer
from confluent_kafka.admin import AdminClient, NewTopic
base = {"bootstrap.servers": "127.0.0.1:" + sys.argv[1], "security.protocol": "SASL_SSL", "ssl.ca.location": sys.argv[2],
        "sasl.mechanisms": "SCRAM-SHA-512", "sasl.username": "alice", "sasl.password": "alice-secret"}
a = AdminClient(base)
for f in a.create_topics([NewTopic("scram-ck", num_partitions=2, replication_factor=1)]).values(): f.result(15)
assert "scram-ck" in a.list_topics(timeout=10).topics
p = Producer(base)
for i in range(4): p.produce("scram-ck", ("c%d" % i).encode())
assert p.flush(15) == 0
c = Consumer(dict(base, **{"group.id": "scram-ck-group", "auto.offset.reset": "earliest"}))
c.subscribe(["scram-ck"])
got = []
deadline = time.time() + 30
while len(got) < 4 and time.time() < deadline:
    m = c.poll(0.5)
    if m is not None and not m.error(): got.append(m.value().decode())
c.close()
print(",".join(sorted(got)))
`;
    const r = await runCommand(PYTHON, ["-c", script, String(saslSslPort), f("b.pem")], {
      timeoutMs: 60_000,
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(r.stdout.trim(), "c0,c1,c2,c3");
  });

  test("kafka-python over SASL_SSL with SCRAM-SHA-512: admin, produce, consume in a group", async () => {
    const script = `
import sys
from kafka import KafkaProducer, KafkaConsumer
from kafka.admin import KafkaAdminClient, NewTopic
kw = dict(bootstrap_servers="127.0.0.1:" + sys.argv[1], security_protocol="SASL_SSL", ssl_cafile=sys.argv[2],
          sasl_mechanism="SCRAM-SHA-512", sasl_plain_username="bob", sasl_plain_password="bob-secret")
a = KafkaAdminClient(**kw)
a.create_topics([NewTopic("scram-kp", 1, 1)])
assert "scram-kp" in a.list_topics()
a.close()
p = KafkaProducer(**kw)
for i in range(3): p.send("scram-kp", ("p%d" % i).encode()).get(timeout=15)
p.close()
c = KafkaConsumer("scram-kp", group_id="scram-kp-group", auto_offset_reset="earliest", consumer_timeout_ms=10000, **kw)
print(",".join(m.value.decode() for m in c))
c.close()
`;
    const r = await runCommand(PYTHON, ["-c", script, String(saslSslPort), f("b.pem")], {
      timeoutMs: 60_000,
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(r.stdout.trim(), "p0,p1,p2");
  });

  test("KafkaJS: SCRAM-SHA-512 over SASL_SSL and SCRAM-SHA-256 over SASL_PLAINTEXT", async () => {
    const { Kafka, logLevel } = await import("kafkajs");
    const ca = readFileSync(f("b.pem"), "utf8");
    const runs = [
      {
        topic: "scram-kafkajs-512",
        config: {
          brokers: [`127.0.0.1:${saslSslPort}`],
          ssl: { ca: [ca] },
          sasl: { mechanism: "scram-sha-512" as const, username: "alice", password: "alice-secret" },
        },
      },
      {
        topic: "scram-kafkajs-256",
        config: {
          brokers: [`127.0.0.1:${saslPort}`],
          sasl: { mechanism: "scram-sha-256" as const, username: "alice", password: "alice-256" },
        },
      },
    ];
    for (const { topic, config } of runs) {
      const kafka = new Kafka({ ...config, logLevel: logLevel.NOTHING });
      const admin = kafka.admin();
      await admin.connect();
      await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
      assert.ok((await admin.listTopics()).includes(topic));
      await admin.disconnect();
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({ topic, messages: [{ value: "j1" }, { value: "j2" }] });
      await producer.disconnect();
      const consumer = kafka.consumer({ groupId: `${topic}-group` });
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      const got: string[] = [];
      await withDeadline(
        "KafkaJS group consume",
        30_000,
        new Promise<void>((resolve) => {
          void consumer.run({
            eachMessage: async ({ message }) => {
              got.push(String(message.value));
              if (got.length === 2) resolve();
            },
          });
        }),
      );
      await consumer.disconnect();
      assert.deepEqual(got, ["j1", "j2"]);
    }
    // SCRAM-SHA-256 with the SHA-512 password: refused with Kafka's message.
    const bad = new Kafka({
      brokers: [`127.0.0.1:${saslPort}`],
      sasl: { mechanism: "scram-sha-256", username: "alice", password: "alice-secret" },
      logLevel: logLevel.NOTHING,
      retry: { retries: 0 },
    }).admin();
    await assert.rejects(
      bad.connect(),
      /Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256/,
    );
  });

  test("@platformatic/kafka over SASL_SSL with SCRAM-SHA-512: admin, produce, consume in a group", async () => {
    const { Admin, Consumer, Producer } = await import("@platformatic/kafka");
    const base = {
      bootstrapBrokers: [`127.0.0.1:${saslSslPort}`],
      tls: { ca: readFileSync(f("b.pem"), "utf8") },
      sasl: { mechanism: "SCRAM-SHA-512" as const, username: "bob", password: "bob-secret" },
      timeout: 10_000,
      retries: 20,
      retryDelay: 200,
    };
    const admin = new Admin({ ...base, clientId: "scram-pk-admin" });
    try {
      await admin.createTopics({ topics: ["scram-pk"], partitions: 1, replicas: 1 });
      assert.ok((await admin.listTopics()).includes("scram-pk"));
    } finally {
      await admin.close();
    }
    const producer = new Producer({ ...base, clientId: "scram-pk-producer", autocreateTopics: false });
    try {
      await producer.send({
        messages: [
          { topic: "scram-pk", value: Buffer.from("k1") },
          { topic: "scram-pk", value: Buffer.from("k2") },
        ],
      });
    } finally {
      await producer.close();
    }
    const consumer = new Consumer({
      ...base,
      clientId: "scram-pk-consumer",
      groupId: "scram-pk-group",
      maxWaitTime: 200,
    });
    try {
      const stream = await consumer.consume({ topics: ["scram-pk"], mode: "earliest", autocommit: false });
      const got: string[] = [];
      await withDeadline(
        "group consume",
        30_000,
        (async () => {
          for await (const m of stream) {
            got.push(String(m.value));
            if (got.length >= 2) break;
          }
        })(),
      );
      await stream.close();
      assert.deepEqual(got, ["k1", "k2"]);
    } finally {
      await consumer.close();
    }
  });

  test("--delete-config SCRAM-SHA-512: the credential is gone, the user's SCRAM-SHA-256 stays", async () => {
    const r = await configs([
      ...["--alter", "--entity-type", "users", "--entity-name", "alice", "--delete-config", "SCRAM-SHA-512"],
    ]);
    assert.equal(r.code, 0, r.stderr);
    const d = await configs(["--describe", "--entity-type", "users", "--entity-name", "alice"]);
    assert.equal(
      d.stdout,
      "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=4096\n",
    );
    const refused = await runCommand(KCAT, [...kcatScram("alice", "alice-secret"), "-L", "-m", "5"], {
      timeoutMs: 20_000,
    });
    assert.notEqual(refused.code, 0);
    assert.match(
      refused.stderr + refused.stdout,
      /Authentication failed during authentication due to invalid credentials/,
    );
    const ok = await runCommand(
      KCAT,
      [...kcatScram("alice", "alice-256", "SCRAM-SHA-256"), "-L", "-m", "5"],
      {
        timeoutMs: 20_000,
      },
    );
    assert.equal(ok.code, 0, ok.stderr);
    // Deleting it again: RESOURCE_NOT_FOUND, in one line.
    const again = await configs([
      ...["--alter", "--entity-type", "users", "--entity-name", "alice", "--delete-config", "SCRAM-SHA-512"],
    ]);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /Attempt to delete a user credential that does not exist/);
  });
});

test("the project's tools over SASL_SSL with SCRAM-SHA-512 (--command-config, --producer.config, --consumer.config)", async () => {
  const config = (password: string): string => {
    const file = f(`bob-${password}.properties`);
    writeFileSync(
      file,
      [
        "security.protocol=SASL_SSL",
        "sasl.mechanism=SCRAM-SHA-512",
        `sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="bob" password="${password}";`,
        "ssl.truststore.type=PEM",
        `ssl.truststore.location=${f("b.pem")}`,
        "",
      ].join("\n"),
    );
    return file;
  };
  const bob = config("bob-secret");
  const bootstrap = `127.0.0.1:${saslSslPort}`;
  const created = await tributary([
    ...["topics", "--bootstrap-server", bootstrap, "--command-config", bob],
    ...["--create", "--topic", "scram-tools", "--partitions", "2"],
  ]);
  assert.equal(created.code, 0, created.stderr);
  const produced = await runCommand(
    process.execPath,
    tributaryArgv([
      ...["console-producer", "--bootstrap-server", bootstrap, "--producer.config", bob],
      ...["--topic", "scram-tools"],
    ]),
    { input: "s1\ns2\n", timeoutMs: 30_000 },
  );
  assert.equal(produced.code, 0, produced.stderr);
  const consumed = await tributary([
    ...[
      "console-consumer",
      "--bootstrap-server",
      bootstrap,
      "--consumer.config",
      bob,
      "--topic",
      "scram-tools",
    ],
    ...["--group", "scram-tools-group", "--from-beginning", "--max-messages", "2", "--timeout-ms", "20000"],
  ]);
  assert.equal(consumed.code, 0, consumed.stderr);
  assert.deepEqual(consumed.stdout.trim().split("\n").sort(), ["s1", "s2"]);
  const wrong = await tributary([
    ...["topics", "--bootstrap-server", bootstrap, "--command-config", config("wrong"), "--list"],
  ]);
  assert.equal(wrong.code, 1);
  assert.match(wrong.stderr, /Authentication failed during authentication due to invalid credentials/);
  assert.equal(wrong.stderr.trim().split("\n").length, 1, wrong.stderr);
});

test("Describe/AlterUserScramCredentials error cases on the wire", async () => {
  const c = await WireClient.connect(plainPort);
  try {
    const described = await c.request(Apis.DescribeUserScramCredentials, 0, {
      users: [{ name: "bob" }, { name: "nobody" }, { name: "" }, { name: "dup" }, { name: "dup" }],
    });
    assert.equal(described.errorCode, ErrorCode.NONE);
    const byUser = new Map(described.results.map((r) => [r.user, r]));
    assert.deepEqual(
      byUser.get("bob")?.credentialInfos.map((i) => [i.mechanism, i.iterations]),
      [[2, 4096]],
    );
    assert.equal(byUser.get("nobody")?.errorCode, ErrorCode.RESOURCE_NOT_FOUND);
    assert.equal(
      byUser.get("nobody")?.errorMessage,
      "Attempt to describe a user credential that does not exist: nobody",
    );
    assert.equal(byUser.get("")?.errorCode, ErrorCode.RESOURCE_NOT_FOUND);
    assert.equal(byUser.get("")?.errorMessage, "Username must not be empty");
    assert.equal(byUser.get("dup")?.errorCode, ErrorCode.DUPLICATE_RESOURCE);
    assert.equal(described.results.length, 4);

    const salt = Buffer.from("salt");
    const salted = Buffer.alloc(64, 1);
    const altered = await c.request(Apis.AlterUserScramCredentials, 0, {
      deletions: [
        { name: "both", mechanism: 2 },
        { name: "gone", mechanism: 1 },
        { name: "weird-del", mechanism: 7 },
      ],
      upsertions: [
        { name: "", mechanism: 2, iterations: 4096, salt, saltedPassword: salted },
        { name: "weird", mechanism: 9, iterations: 4096, salt, saltedPassword: salted },
        { name: "few", mechanism: 2, iterations: 4095, salt, saltedPassword: salted },
        { name: "many", mechanism: 1, iterations: 16385, salt, saltedPassword: salted },
        { name: "both", mechanism: 2, iterations: 4096, salt, saltedPassword: salted },
        { name: "fine", mechanism: 1, iterations: 16384, salt, saltedPassword: Buffer.alloc(32, 2) },
      ],
    });
    const res = new Map(altered.results.map((r) => [r.user, [r.errorCode, r.errorMessage]]));
    assert.deepEqual(Object.fromEntries(res), {
      "": [ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"],
      weird: [ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"],
      "weird-del": [ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"],
      few: [ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"],
      many: [ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations"],
      both: [ErrorCode.DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the same request"],
      gone: [ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"],
      fine: [ErrorCode.NONE, null],
    });
    const fine = await c.request(Apis.DescribeUserScramCredentials, 0, {
      users: [{ name: "fine" }, { name: "both" }],
    });
    assert.deepEqual(
      fine.results.map((r) => [r.user, r.errorCode, r.credentialInfos.map((i) => i.iterations)]),
      [
        ["fine", ErrorCode.NONE, [16384]],
        ["both", ErrorCode.RESOURCE_NOT_FOUND, []],
      ],
    );
  } finally {
    c.close();
  }
});
