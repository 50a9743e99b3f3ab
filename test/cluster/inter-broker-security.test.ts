// Issue 21: brokers of a cluster authenticate to each other (inter.broker.listener.name on a SASL_SSL or a
// mutual-TLS SSL listener), real broker processes on a real ZooKeeper; clients stay on a PLAINTEXT
// listener. Certificates are made with openssl for the run (a CA and one broker certificate for
// localhost/127.0.0.1).
//   - SASL_SSL with PLAIN (sasl.mechanism.inter.broker.protocol=PLAIN, the broker's own username/password
//     in listener.name.internal.plain.sasl.jaas.config): the controller reaches every broker on its
//     INTERNAL port, a topic with RF 3 takes acks=all writes with every replica in sync; the leader of a
//     partition is SIGTERMed and the new leader serves every record and takes new acks=all writes.
//   - SSL with ssl.client.auth=required on the inter-broker listener and on a control-plane listener
//     (control.plane.listener.name): the brokers present their keystore as client certificates; the
//     controller reaches every broker on its CONTROLLER port; replication and acks=all work.
//   - A broker whose inter-broker password is wrong, or which does not trust its peers' certificates, does
//     not replicate, and says why in an ERROR line (Kafka's "Connection to node 0 (…) failed authentication
//     due to: …").

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { BrokerHarness, freePort, readWithKcat, waitFor } from "../support/broker-harness.js";
import { ClusterHarness, formatDescribe, parseDescribe, withLogTails } from "../support/cluster-harness.js";
import { createAssignedTopic, produceOne } from "../support/failover-steps.js";
import { skipUnlessInstalled } from "../support/required-tools.js";
import { ZooKeeperHarness } from "../support/zookeeper-harness.js";

const dir = mkdtempSync(join(tmpdir(), "tributary-ib-security-"));
const f = (name: string): string => join(dir, name);
const PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule";

function openssl(args: string[]): void {
  execFileSync("openssl", args, { stdio: "pipe" });
}

before(() => {
  openssl(
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f("ca.key"), "-out", f("ca.pem")].concat([
      "-days",
      "2",
      "-subj",
      "/CN=Tributary Test CA",
    ]),
  );
  writeFileSync(f("san.ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\n");
  openssl(
    ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", f("broker.key"), "-out", f("broker.csr")].concat([
      "-subj",
      "/CN=broker/O=Tributary",
    ]),
  );
  openssl(
    ["x509", "-req", "-in", f("broker.csr"), "-CA", f("ca.pem"), "-CAkey", f("ca.key")].concat([
      "-CAcreateserial",
      "-out",
      f("broker.pem"),
      "-days",
      "2",
      "-extfile",
      f("san.ext"),
    ]),
  );
  writeFileSync(
    f("keystore.pem"),
    readFileSync(f("broker.key"), "utf8") + readFileSync(f("broker.pem"), "utf8"),
  );
});

after(() => rmSync(dir, { recursive: true, force: true }));

/** The TLS settings of every broker: its keystore, and the CA it trusts (peers' certificates). */
const tls = (): Record<string, string> => ({
  "ssl.keystore.type": "PEM",
  "ssl.keystore.location": f("keystore.pem"),
  "ssl.truststore.type": "PEM",
  "ssl.truststore.location": f("ca.pem"),
});

/** Broker i's listeners: PLAINTEXT (clients, the harness's port) and INTERNAL (brokers, any port). */
const listeners = (_i: number, port: number): Record<string, string> => ({
  listeners: `PLAINTEXT://127.0.0.1:${port},INTERNAL://127.0.0.1:0`,
});

const jaas = (password: string): string =>
  `${PLAIN} required username="broker" password="${password}" user_broker="broker-secret";`;

const SASL_SSL_INTERNAL: Record<string, string> = {
  "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:SASL_SSL",
  "inter.broker.listener.name": "INTERNAL",
  "listener.name.internal.sasl.enabled.mechanisms": "PLAIN",
  "sasl.mechanism.inter.broker.protocol": "PLAIN",
};

/** The controller's connection to every other broker went to that broker's listener number `index`. */
async function controllerConnectsOn(c: ClusterHarness, index: number, name: string): Promise<void> {
  const controller = await c.waitForController();
  for (let i = 0; i < c.brokers.length; i++) {
    if (i === controller) continue;
    const port = c.broker(i).listenerPorts()[index];
    const at = await waitFor(
      `controller ${controller}'s connection to broker ${i}`,
      20_000,
      async () =>
        c
          .broker(controller)
          .stdout.match(new RegExp(`Controller ${controller} connected to broker ${i} at (\\S+)`))?.[1],
    );
    assert.equal(at, `127.0.0.1:${port}`, `broker ${i} reached on its ${name} listener`);
  }
}

describe("inter-broker SASL_SSL with PLAIN", { skip: skipUnlessInstalled("kcat", "openssl") }, () => {
  let cluster: ClusterHarness | undefined;
  before(async () => {
    cluster = await ClusterHarness.start({
      brokers: 3,
      name: "ib-sasl-ssl",
      overrides: {
        ...SASL_SSL_INTERNAL,
        ...tls(),
        "listener.name.internal.plain.sasl.jaas.config": jaas("broker-secret"),
      },
      brokerOverrides: listeners,
    });
  });
  after(async () => {
    await cluster?.close();
  });

  test("RF 3 with acks=all and every replica in sync; a SIGTERMed leader's successor serves everything", async () => {
    await withLogTails(
      () => cluster,
      async () => {
        const c = cluster!;
        await controllerConnectsOn(c, 1, "INTERNAL");
        await c.createTopic("ib-sasl", 3, 3, { "min.insync.replicas": "2" });
        const synced = await c.waitForDescribe(
          "ib-sasl",
          "3 partitions with 3 replicas in sync",
          30_000,
          (ps) => ps.length === 3 && ps.every((p) => p.leader >= 0 && p.isr.length === 3),
        );
        const values: string[] = [];
        for (let p = 0; p < 3; p++)
          for (let k = 0; k < 3; k++) {
            const v = `before-${p}-${k}`;
            await produceOne(c.bootstrap(), "ib-sasl", p, v, "all");
            values.push(v);
          }
        // Every replica has every record: the followers fetched them over SASL_SSL.
        const afterWrites = await c.waitForDescribe("ib-sasl", "still fully in sync", 20_000, (ps) =>
          ps.every((p) => p.isr.length === 3),
        );
        assert.equal(afterWrites.length, 3, formatDescribe(afterWrites));

        const victim = synced[0].leader;
        await c.stopBroker(victim, "SIGTERM");
        const moved = await c.waitForDescribe(
          "ib-sasl",
          `partition 0 led by a broker other than ${victim}, ISR without it`,
          30_000,
          (ps) => ps[0].leader >= 0 && ps[0].leader !== victim && !ps[0].isr.includes(victim),
        );
        assert.notEqual(moved[0].leader, victim, formatDescribe(moved));
        for (let p = 0; p < 3; p++) {
          const v = `after-${p}`;
          await produceOne(c.bootstrap([victim]), "ib-sasl", p, v, "all");
          values.push(v);
        }
        const read = await readWithKcat(c.bootstrap([victim]), "ib-sasl");
        assert.deepEqual(read.map((m) => m.value).sort(), [...values].sort());
      },
    );
  });
});

describe("inter-broker and control-plane mutual TLS (SSL, ssl.client.auth=required)", {
  skip: skipUnlessInstalled("kcat", "openssl"),
}, () => {
  let cluster: ClusterHarness | undefined;
  before(async () => {
    cluster = await ClusterHarness.start({
      brokers: 2,
      name: "ib-mtls",
      overrides: {
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:SSL,CONTROLLER:SSL",
        "inter.broker.listener.name": "INTERNAL",
        "control.plane.listener.name": "CONTROLLER",
        "listener.name.internal.ssl.client.auth": "required",
        "listener.name.controller.ssl.client.auth": "required",
        ...tls(),
      },
      brokerOverrides: (_i, port) => ({
        listeners: `PLAINTEXT://127.0.0.1:${port},INTERNAL://127.0.0.1:0,CONTROLLER://127.0.0.1:0`,
      }),
    });
  });
  after(async () => {
    await cluster?.close();
  });

  test("replication and acks=all over a mutual-TLS inter-broker listener", async () => {
    await withLogTails(
      () => cluster,
      async () => {
        const c = cluster!;
        await controllerConnectsOn(c, 2, "CONTROLLER");
        await createAssignedTopic(c, "ib-mtls", [0, 1], { "min.insync.replicas": "2" });
        for (const v of ["m0", "m1", "m2"]) await produceOne(c.bootstrap(), "ib-mtls", 0, v, "all");
        const read = await readWithKcat(c.broker(0).bootstrap, "ib-mtls");
        assert.deepEqual(
          read.map((m) => m.value),
          ["m0", "m1", "m2"],
        );
        const ps = await c.describe("ib-mtls");
        assert.deepEqual([...ps[0].isr].sort(), [0, 1], formatDescribe(ps));
      },
    );
  });
});

/**
 * Two brokers started one after the other (broker 0 is the controller) with `common` settings, broker 1 also
 * with `wrong1`; a partition led by broker 0 with broker 1 as follower. Broker 1 must log an ERROR
 * matching `error` about its connection to broker 0, replicate nothing, and leave the ISR.
 */
async function refusedFollower(
  name: string,
  common: Record<string, string>,
  wrong1: Record<string, string>,
  error: (internalPort0: number) => RegExp,
): Promise<void> {
  const zk = await ZooKeeperHarness.start({ servers: 1 });
  const brokers: BrokerHarness[] = [];
  try {
    for (const id of [0, 1]) {
      const port = await freePort();
      brokers.push(
        await BrokerHarness.start({
          name: `${name}-${id}`,
          port,
          overrides: {
            "broker.id": String(id),
            "zookeeper.connect": `${zk.connectString}/${name}`,
            "zookeeper.session.timeout.ms": "6000",
            "offsets.topic.replication.factor": "1",
            "replica.lag.time.max.ms": "5000",
            "controlled.shutdown.max.retries": "1",
            "controlled.shutdown.retry.backoff.ms": "200",
            ...listeners(id, port),
            ...common,
            ...(id === 1 ? wrong1 : {}),
          },
        }),
      );
    }
    const [b0, b1] = brokers;
    const { runTributary } = await import("../support/tributary-cli.js");
    const created = await runTributary([
      ...["topics", "--bootstrap-server", b0.bootstrap, "--create", "--topic", name],
      ...["--replica-assignment", "0:1"],
    ]);
    assert.equal(created.code, 0, created.stderr);
    const line = await waitFor("broker 1's ERROR line about its refused connection", 30_000, async () =>
      b1.errorLines.find((l) => /failed authentication due to/.test(l)),
    );
    if (process.env.CLUSTER_TEST_LOGS) process.stderr.write(`${line}\n`);
    assert.match(line, error(b0.listenerPorts()[1]));
    await produceOne(b0.bootstrap, name, 0, "only-on-the-leader", "1");
    // Nothing reaches broker 1's replica (its log stays empty), and the leader drops it from the ISR.
    await waitFor("broker 1 out of the ISR", 30_000, async () => {
      const r = await runTributary([
        "topics",
        "--bootstrap-server",
        b0.bootstrap,
        "--describe",
        "--topic",
        name,
      ]);
      const isr = parseDescribe(r.stdout)[0]?.isr;
      return isr?.length === 1 && isr[0] === 0 ? true : undefined;
    });
    const follower = join(b1.logDir, `${name}-0`, "00000000000000000000.log");
    assert.ok(!existsSync(follower) || readFileSync(follower).length === 0, "broker 1 replicated nothing");
  } finally {
    for (const b of brokers.reverse()) await b.close();
    await zk.close();
  }
}

test("a broker with a wrong inter-broker password does not replicate and logs why as an ERROR", async () => {
  await refusedFollower(
    "ib-wrong-password",
    {
      ...SASL_SSL_INTERNAL,
      ...tls(),
      "listener.name.internal.plain.sasl.jaas.config": jaas("broker-secret"),
    },
    { "listener.name.internal.plain.sasl.jaas.config": jaas("not-the-password") },
    (port) =>
      new RegExp(
        `ERROR .*Connection to node 0 \\(127\\.0\\.0\\.1:${port}\\) failed authentication due to: Authentication failed: Invalid username or password`,
      ),
  );
});

test("a broker that does not trust its peers' certificates does not replicate and logs why as an ERROR", async () => {
  openssl(
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      f("other.key"),
      "-out",
      f("other-ca.pem"),
    ].concat(["-days", "2", "-subj", "/CN=Another CA"]),
  );
  await refusedFollower(
    "ib-untrusted",
    {
      "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:SSL",
      "inter.broker.listener.name": "INTERNAL",
      ...tls(),
    },
    { "ssl.truststore.location": f("other-ca.pem") },
    (port) =>
      new RegExp(
        `ERROR .*Connection to node 0 \\(127\\.0\\.0\\.1:${port}\\) failed authentication due to: Connection to 127\\.0\\.0\\.1:${port} SSL handshake failed: .*certificate`,
      ),
  );
});

test("an inter-broker SASL listener without sasl.mechanism.inter.broker.protocol stops the broker in one line", async () => {
  const { runCommand, tributaryArgv } = await import("../support/broker-harness.js");
  const args = ["server-start"];
  for (const [k, v] of Object.entries({
    "log.dirs": f("bad-logs"),
    "zookeeper.connect": "127.0.0.1:1/none",
    "broker.id": "0",
    listeners: "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT",
    "inter.broker.listener.name": "INTERNAL",
    "sasl.enabled.mechanisms": "PLAIN",
    "listener.name.internal.plain.sasl.jaas.config": jaas("broker-secret"),
    "metrics.http.listener": "",
  }))
    args.push("--override", `${k}=${v}`);
  const r = await runCommand(process.execPath, tributaryArgv(args), { timeoutMs: 30_000 });
  assert.notEqual(r.code, 0);
  assert.match(
    r.stdout + r.stderr,
    /Invalid value GSSAPI for configuration sasl\.mechanism\.inter\.broker\.protocol: one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 \(GSSAPI is Kafka's default; set sasl\.mechanism\.inter\.broker\.protocol\)/,
  );
  assert.doesNotMatch(r.stdout + r.stderr, /^\s+at /m, "no stack trace");
});
