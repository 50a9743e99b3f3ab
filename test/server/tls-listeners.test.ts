// Issue 21 (first part): SSL listeners with Kafka's ssl.* settings, on a real broker process, with real
// clients. Certificates are made with openssl for the run: a CA, the broker's (SAN localhost and
// 127.0.0.1), a client's. The broker has three listeners: PLAINTEXT, SSL (a PEM keystore, KIP-651) and
// MTLS (SSL with a PKCS12 keystore and ssl.client.auth=required, set with listener.name.mtls.* prefixes).
//   - kcat, confluent-kafka, kafka-python and KafkaJS produce and consume over SSL; mutual TLS works with
//     a client certificate and the handshake fails without one.
//   - The project's own tools over SSL with --command-config (security.protocol=SSL, PEM truststore).
//   - @platformatic/kafka over SSL and mutual TLS: admin, produce, consume in a group.
//   - A client that does not trust the CA is refused; a JKS keystore stops the broker with one line.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { BrokerHarness, runCommand, tributaryArgv } from "../support/broker-harness.js";
import { kafkajsRoundTrip, platformaticRoundTrip } from "../support/raw-requests.js";
import { skipUnlessInstalled } from "../support/required-tools.js";
import { runTributary } from "../support/tributary-cli.js";

const tributary = (...args: string[]) => runTributary(args);

const KCAT = "/usr/bin/kcat";
const PYTHON = "/usr/bin/python3";
const dir = mkdtempSync(join(tmpdir(), "tributary-tls-"));
const f = (name: string): string => join(dir, name);
let broker: BrokerHarness;
let sslPort = 0;
let mtlsPort = 0;

function openssl(args: string[]): void {
  execFileSync("openssl", args, { stdio: "pipe" });
}

/** A CA, a broker certificate for localhost/127.0.0.1, and a client certificate (CN=client). */
function makeCertificates(): void {
  openssl([
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    f("ca.key"),
    "-out",
    f("ca.pem"),
    "-days",
    "2",
    "-subj",
    "/CN=Tributary Test CA",
  ]);
  writeFileSync(f("san.ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\n");
  for (const [name, subject, ext] of [
    ["server", "/CN=localhost/O=Tributary", true],
    ["client", "/CN=client/OU=dev/O=Tributary", false],
  ] as const) {
    openssl([
      "req",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      f(`${name}.key`),
      "-out",
      f(`${name}.csr`),
      "-subj",
      subject,
    ]);
    openssl([
      "x509",
      "-req",
      "-in",
      f(`${name}.csr`),
      "-CA",
      f("ca.pem"),
      "-CAkey",
      f("ca.key"),
      "-CAcreateserial",
      "-out",
      f(`${name}.pem`),
      "-days",
      "2",
      ...(ext ? ["-extfile", f("san.ext")] : []),
    ]);
  }
  // KIP-651 PEM keystore: the private key and the certificate chain in one file.
  writeFileSync(
    f("server-keystore.pem"),
    readFileSync(f("server.key"), "utf8") + readFileSync(f("server.pem"), "utf8"),
  );
  openssl([
    "pkcs12",
    "-export",
    "-inkey",
    f("server.key"),
    "-in",
    f("server.pem"),
    "-out",
    f("server.p12"),
    "-passout",
    "pass:secret",
  ]);
  // A CA nobody trusts.
  openssl([
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    f("other.key"),
    "-out",
    f("other-ca.pem"),
    "-days",
    "2",
    "-subj",
    "/CN=Other CA",
  ]);
}

before(async () => {
  makeCertificates();
  broker = await BrokerHarness.start({
    name: "tls",
    overrides: {
      listeners: "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,MTLS://127.0.0.1:0",
      "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL",
      "ssl.keystore.type": "PEM",
      "ssl.keystore.location": f("server-keystore.pem"),
      "listener.name.mtls.ssl.keystore.type": "PKCS12",
      "listener.name.mtls.ssl.keystore.location": f("server.p12"),
      "listener.name.mtls.ssl.keystore.password": "secret",
      "listener.name.mtls.ssl.client.auth": "required",
      "listener.name.mtls.ssl.truststore.type": "PEM",
      "listener.name.mtls.ssl.truststore.location": f("ca.pem"),
    },
  });
  const ports = broker.listenerPorts();
  assert.equal(ports.length, 3, broker.output);
  [, sslPort, mtlsPort] = ports;
  assert.equal(ports[0], broker.port);
});

after(async () => {
  await broker?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("SSL listeners", {
  skip: skipUnlessInstalled("kcat", "python3", "confluent-kafka", "openssl"),
}, () => {
  test("kcat over SSL: metadata, produce, consume; refused when the CA is not trusted", async () => {
    const ssl = ["-X", "security.protocol=ssl", "-X", `ssl.ca.location=${f("ca.pem")}`];
    const md = await runCommand(KCAT, ["-b", `127.0.0.1:${sslPort}`, ...ssl, "-L", "-m", "10"], {
      timeoutMs: 20_000,
    });
    assert.equal(md.code, 0, md.stderr);
    assert.match(
      md.stdout,
      new RegExp(`broker 0 at 127\\.0\\.0\\.1:${sslPort}`),
      "advertised on the SSL listener",
    );
    const produced = await runCommand(KCAT, ["-b", `127.0.0.1:${sslPort}`, ...ssl, "-P", "-t", "tls-kcat"], {
      input: "one\ntwo\nthree\n",
      timeoutMs: 20_000,
    });
    assert.equal(produced.code, 0, produced.stderr);
    const consumed = await runCommand(
      KCAT,
      ["-b", `127.0.0.1:${sslPort}`, ...ssl, "-C", "-t", "tls-kcat", "-o", "beginning", "-e", "-q"],
      { timeoutMs: 20_000 },
    );
    assert.deepEqual(consumed.stdout.trim().split("\n"), ["one", "two", "three"]);
    const untrusted = await runCommand(
      KCAT,
      [
        "-b",
        `127.0.0.1:${sslPort}`,
        "-X",
        "security.protocol=ssl",
        "-X",
        `ssl.ca.location=${f("other-ca.pem")}`,
        "-L",
        "-m",
        "5",
      ],
      { timeoutMs: 20_000 },
    );
    assert.notEqual(untrusted.code, 0);
    assert.match(untrusted.stderr + untrusted.stdout, /certificate verify failed|SSL handshake failed/i);
  });

  test("mutual TLS: confluent-kafka with a client certificate produces and consumes; without one the handshake fails", async () => {
    const script = `
import sys, time
from confluent_kafka import Producer, Consumer, KafkaException
port, ca, cert, key = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
base = {"bootstrap.servers": "127.0.0.1:" + port, "security.protocol": "SSL", "ssl.ca.location": ca}
if cert != "-": base.update({"ssl.certificate.location": cert, "ssl.key.location": key})
p = Producer(dict(base, **{"message.timeout.ms": 8000}))
errs = []
for i in range(5): p.produce("tls-mtls", ("m%d" % i).encode(), on_delivery=lambda e, m: errs.append(e) if e else None)
left = p.flush(12)
if left or errs:
    print("produce failed", left, errs); sys.exit(3)
c = Consumer(dict(base, **{"group.id": "tls-group", "auto.offset.reset": "earliest"}))
c.subscribe(["tls-mtls"])
got = []
deadline = time.time() + 20
while len(got) < 5 and time.time() < deadline:
    m = c.poll(0.5)
    if m is not None and not m.error(): got.append(m.value().decode())
c.close()
print(",".join(got))
`;
    const ok = await runCommand(
      PYTHON,
      ["-c", script, String(mtlsPort), f("ca.pem"), f("client.pem"), f("client.key")],
      {
        timeoutMs: 60_000,
      },
    );
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.equal(ok.stdout.trim(), "m0,m1,m2,m3,m4");
    const noCert = await runCommand(PYTHON, ["-c", script, String(mtlsPort), f("ca.pem"), "-", "-"], {
      timeoutMs: 60_000,
    });
    assert.equal(noCert.code, 3, noCert.stdout + noCert.stderr);
  });

  test("kafka-python over SSL", async () => {
    const script = `
import sys
from kafka import KafkaProducer, KafkaConsumer
port, ca = sys.argv[1], sys.argv[2]
kw = dict(bootstrap_servers="127.0.0.1:" + port, security_protocol="SSL", ssl_cafile=ca)
p = KafkaProducer(**kw)
for i in range(3): p.send("tls-kp", ("k%d" % i).encode()).get(timeout=15)
p.close()
c = KafkaConsumer("tls-kp", auto_offset_reset="earliest", consumer_timeout_ms=8000, **kw)
print(",".join(m.value.decode() for m in c))
c.close()
`;
    const r = await runCommand(PYTHON, ["-c", script, String(sslPort), f("ca.pem")], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(r.stdout.trim(), "k0,k1,k2");
  });

  test("KafkaJS over SSL", async () => {
    await kafkajsRoundTrip(
      { brokers: [`127.0.0.1:${sslPort}`], ssl: { ca: [readFileSync(f("ca.pem"), "utf8")] } },
      "tls-kafkajs",
    );
  });

  test("the project's tools over SSL (--command-config security.protocol=SSL); a bad truststore is one line", async () => {
    const props = f("client-ssl.properties");
    writeFileSync(
      props,
      `security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location=${f("ca.pem")}\n`,
    );
    const created = await tributary(
      "topics",
      "--bootstrap-server",
      `127.0.0.1:${sslPort}`,
      "--command-config",
      props,
      "--create",
      "--topic",
      "tls-tools",
      "--partitions",
      "2",
    );
    assert.equal(created.code, 0, created.stderr);
    const listed = await tributary(
      "topics",
      "--bootstrap-server",
      `localhost:${sslPort}`,
      "--command-config",
      props,
      "--list",
    );
    assert.equal(listed.code, 0, listed.stderr);
    assert.ok(listed.stdout.split("\n").includes("tls-tools"), listed.stdout);
    const badProps = f("bad-ssl.properties");
    writeFileSync(
      badProps,
      `security.protocol=SSL\nssl.truststore.type=JKS\nssl.truststore.location=${f("ca.pem")}\n`,
    );
    const bad = await tributary(
      "topics",
      "--bootstrap-server",
      `127.0.0.1:${sslPort}`,
      "--command-config",
      badProps,
      "--list",
    );
    assert.equal(bad.code, 1);
    assert.match(
      bad.stderr,
      /^Error while executing topic command : Invalid value JKS for configuration ssl\.truststore\.type: PEM \(KIP-651\)/,
    );
    assert.equal(bad.stderr.trim().split("\n").length, 1);
  });
});

test("@platformatic/kafka over SSL and mutual TLS: admin, produce, consume in a group", async () => {
  const ca = readFileSync(f("ca.pem"));
  await platformaticRoundTrip(`127.0.0.1:${sslPort}`, { tls: { ca } }, "tls-platformatic");
  await platformaticRoundTrip(
    `127.0.0.1:${mtlsPort}`,
    { tls: { ca, cert: readFileSync(f("client.pem")), key: readFileSync(f("client.key")) } },
    "mtls-platformatic",
  );
});

test("a JKS keystore stops the broker at startup with one line saying how to convert it", async () => {
  const r = await runCommand(
    process.execPath,
    [
      ...tributaryArgv([
        "server-start",
        "--override",
        `log.dirs=${f("jks-logs")}`,
        "--override",
        "listeners=SSL://127.0.0.1:0",
        "--override",
        "inter.broker.listener.name=SSL",
        "--override",
        "ssl.keystore.location=/nonexistent/server.jks",
        "--override",
        "metrics.http.listener=",
      ]),
    ],
    { timeoutMs: 30_000 },
  );
  assert.notEqual(r.code, 0);
  assert.match(
    r.stdout + r.stderr,
    /Invalid value JKS for configuration ssl\.keystore\.type: Node's TLS cannot read JKS keystores: convert it \(keytool -importkeystore/,
  );
  assert.doesNotMatch(r.stdout + r.stderr, /^\s+at /m, "no stack trace");
});
