// Issue 21 (authorization, one broker on its embedded metadata store): who a connection is, and
// allow.everyone.if.no.acl.found.
//   - A TLS client certificate's subject DN becomes the principal through ssl.principal.mapping.rules
//     (CN=Carol,OU=Clients,O=Tributary → RULE …/$1/L → User:carol), checked by the ACLs with kcat.
//   - SASL/PLAIN users are User:<name>; PLAINTEXT connections are User:ANONYMOUS (here a super user, so the
//     tools can manage ACLs over it).
//   - allow.everyone.if.no.acl.found=true: a topic without ACLs is open to everyone, one with ACLs only to
//     the principals they allow.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Apis } from "../../src/protocol/generated/api-table.js";
import { ErrorCode } from "../../src/protocol/generated/errors.js";
import { BrokerHarness, runCommand, tributaryArgv, waitFor } from "../support/broker-harness.js";
import { skipUnlessInstalled } from "../support/required-tools.js";
import { WireClient } from "./wire-client.js";

const KCAT = "/usr/bin/kcat";
const JAAS =
  'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" user_bob="bob-secret";';
const dir = mkdtempSync(join(tmpdir(), "tributary-acl-principals-"));
const f = (name: string): string => join(dir, name);
let broker: BrokerHarness | undefined;
let sslPort = 0;
let saslPort = 0;

function openssl(args: string[]): void {
  execFileSync("openssl", args, { stdio: "pipe" });
}

function makeCertificates(): void {
  openssl(
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f("ca.key"), "-out", f("ca.pem")].concat([
      "-days",
      "2",
      "-subj",
      "/CN=ACL Test CA",
    ]),
  );
  writeFileSync(f("san.ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\n");
  for (const [name, subject] of [
    ["server", "/O=Tributary/CN=localhost"],
    ["carol", "/O=Tributary/OU=Clients/CN=Carol"],
    ["dave", "/O=Tributary/OU=Clients/CN=Dave"],
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
    openssl(
      ["x509", "-req", "-in", f(`${name}.csr`), "-CA", f("ca.pem"), "-CAkey", f("ca.key"), "-CAcreateserial"]
        .concat(["-out", f(`${name}.pem`), "-days", "2"])
        .concat(name === "server" ? ["-extfile", f("san.ext")] : []),
    );
  }
  writeFileSync(
    f("keystore.pem"),
    readFileSync(f("server.key"), "utf8") + readFileSync(f("server.pem"), "utf8"),
  );
}

before(async () => {
  makeCertificates();
  broker = await BrokerHarness.start({
    name: "acl-principals",
    overrides: {
      listeners: "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
      "ssl.keystore.type": "PEM",
      "ssl.keystore.location": f("keystore.pem"),
      "listener.name.ssl.ssl.client.auth": "required",
      "listener.name.ssl.ssl.truststore.type": "PEM",
      "listener.name.ssl.ssl.truststore.location": f("ca.pem"),
      "ssl.principal.mapping.rules": "RULE:^CN=(.*?),OU=Clients,.*$/$1/L,DEFAULT",
      "sasl.enabled.mechanisms": "PLAIN",
      "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
      "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
      "super.users": "User:ANONYMOUS",
      "allow.everyone.if.no.acl.found": "true",
      "offsets.topic.replication.factor": "1",
    },
  });
  const ports = broker.listenerPorts();
  assert.equal(ports.length, 3, broker.output);
  [, sslPort, saslPort] = ports;
});

after(async () => {
  await broker?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function acls(args: readonly string[]): Promise<void> {
  const r = await runCommand(
    process.execPath,
    tributaryArgv(["acls", "--bootstrap-server", broker!.bootstrap, ...args]),
  );
  assert.equal(r.code, 0, r.stdout + r.stderr);
}

function kcatSasl(user: string): string[] {
  return [
    "-b",
    `127.0.0.1:${saslPort}`,
    "-X",
    "security.protocol=sasl_plaintext",
    "-X",
    "sasl.mechanisms=PLAIN",
  ].concat(["-X", `sasl.username=${user}`, "-X", `sasl.password=${user}-secret`]);
}

function kcatCert(name: string): string[] {
  return [
    "-b",
    `127.0.0.1:${sslPort}`,
    "-X",
    "security.protocol=ssl",
    "-X",
    `ssl.ca.location=${f("ca.pem")}`,
  ].concat([
    "-X",
    `ssl.certificate.location=${f(`${name}.pem`)}`,
    "-X",
    `ssl.key.location=${f(`${name}.key`)}`,
  ]);
}

const produce = (who: string[], topic: string, value: string) =>
  runCommand(KCAT, [...who, "-P", "-t", topic], { input: `${value}\n`, timeoutMs: 30_000 });

describe("principals and allow.everyone.if.no.acl.found", {
  skip: skipUnlessInstalled("kcat", "openssl"),
}, () => {
  test("without ACLs everyone may; once a topic has ACLs only the principals they allow", async () => {
    const b = broker!;
    const open = await produce(kcatSasl("bob"), "everyone", "b1");
    assert.equal(open.code, 0, open.stderr);
    await acls(["--add", "--allow-principal", "User:alice", "--operation", "Write", "--topic", "everyone"]);
    await waitFor("bob refused once the topic has an ACL", 10_000, async () => {
      const r = await produce(kcatSasl("bob"), "everyone", "b2");
      return r.code !== 0 && /Topic authorization failed/.test(r.stderr) ? true : undefined;
    });
    const alice = await produce(kcatSasl("alice"), "everyone", "a1");
    assert.equal(alice.code, 0, alice.stderr);
    assert.match(
      b.stdout,
      /Principal = User:bob is Denied Operation = (Describe|Write) from host = 127\.0\.0\.1 on resource = Topic:LITERAL:everyone/,
    );
  });

  test("CreateAcls / DescribeAcls / DeleteAcls with unknown or unusable elements: INVALID_REQUEST", async () => {
    const w = await WireClient.connect(broker!.port);
    try {
      const creation = {
        resourceType: 2,
        resourceName: "x",
        resourcePatternType: 3,
        principal: "User:a",
        host: "*",
        operation: 3,
        permissionType: 3,
      };
      const created = await w.request(Apis.CreateAcls, 3, {
        creations: [
          { ...creation, resourceType: 99 },
          { ...creation, operation: 1 },
          { ...creation, resourcePatternType: 2 },
          { ...creation, resourceType: 4, resourceName: "not-the-cluster" },
          { ...creation, resourceName: "a/b" },
          { ...creation, principal: "nocolon" },
          creation,
        ],
      });
      assert.deepEqual(
        created.results.map((r) => r.errorCode),
        [...Array(6).fill(ErrorCode.INVALID_REQUEST), ErrorCode.NONE],
        JSON.stringify(created.results),
      );
      const filter = {
        resourceTypeFilter: 1,
        resourceNameFilter: null,
        patternTypeFilter: 1,
        principalFilter: null,
        hostFilter: null,
        operation: 1,
        permissionType: 1,
      };
      const described = await w.request(Apis.DescribeAcls, 3, { ...filter, patternTypeFilter: 0 });
      assert.equal(described.errorCode, ErrorCode.INVALID_REQUEST);
      const all = await w.request(Apis.DescribeAcls, 3, {
        ...filter,
        resourceTypeFilter: 2,
        resourceNameFilter: "x",
      });
      assert.equal(all.errorCode, 0);
      assert.deepEqual(
        all.resources.map((r) => [r.resourceName, r.acls.map((a) => a.principal)]),
        [["x", ["User:a"]]],
      );
      const deleted = await w.request(Apis.DeleteAcls, 3, {
        filters: [
          { ...filter, operation: 0 },
          { ...filter, resourceTypeFilter: 2, resourceNameFilter: "x" },
        ],
      });
      assert.equal(deleted.filterResults[0].errorCode, ErrorCode.INVALID_REQUEST);
      assert.equal(deleted.filterResults[1].errorCode, 0);
      assert.deepEqual(
        deleted.filterResults[1].matchingAcls.map((m) => m.principal),
        ["User:a"],
      );
    } finally {
      w.close();
    }
  });

  test("a client certificate's subject is the principal, through ssl.principal.mapping.rules", async () => {
    const b = broker!;
    await acls([
      "--add",
      "--allow-principal",
      "User:carol",
      "--operation",
      "Write",
      "--operation",
      "Read",
      "--topic",
      "certs",
    ]);
    await waitFor("carol, from her certificate, may write", 10_000, async () => {
      const r = await produce(kcatCert("carol"), "certs", "c1");
      return r.code === 0 ? true : undefined;
    });
    const dave = await produce(kcatCert("dave"), "certs", "d1");
    assert.notEqual(dave.code, 0);
    assert.match(dave.stderr, /Topic authorization failed/);
    assert.match(
      b.stdout,
      /Principal = User:dave is Denied Operation = (Describe|Write) from host = 127\.0\.0\.1 on resource = Topic:LITERAL:certs/,
    );
    const read = await runCommand(KCAT, [
      ...kcatCert("carol"),
      "-C",
      "-t",
      "certs",
      "-o",
      "beginning",
      "-c",
      "1",
      "-e",
      "-q",
    ]);
    assert.equal(read.code, 0, read.stderr);
    assert.equal(read.stdout.trim(), "c1");
  });

  test("tributary acls over mutual TLS: the certificate's principal needs DESCRIBE / ALTER on the cluster", async () => {
    writeFileSync(
      f("carol-keystore.pem"),
      readFileSync(f("carol.key"), "utf8") + readFileSync(f("carol.pem"), "utf8"),
    );
    writeFileSync(
      f("carol.properties"),
      [
        "security.protocol=SSL",
        "ssl.truststore.type=PEM",
        `ssl.truststore.location=${f("ca.pem")}`,
        "ssl.keystore.type=PEM",
        `ssl.keystore.location=${f("carol-keystore.pem")}`,
        "",
      ].join("\n"),
    );
    const asCarol = (...args: string[]) =>
      runCommand(
        process.execPath,
        tributaryArgv([
          "acls",
          "--bootstrap-server",
          `127.0.0.1:${sslPort}`,
          "--command-config",
          f("carol.properties"),
          ...args,
        ]),
      );
    // (allow.everyone.if.no.acl.found is on here: the cluster resource needs an ACL of its own first.)
    await acls(["--add", "--allow-principal", "User:ops", "--operation", "Describe", "--cluster"]);
    const refused = await asCarol("--list");
    assert.equal(refused.code, 1, refused.stdout + refused.stderr);
    assert.equal(
      refused.stderr.trim(),
      "Error while executing ACL command: org.apache.kafka.common.errors.ClusterAuthorizationException: Request DescribeAcls is not authorized.",
    );
    await acls([
      "--add",
      "--allow-principal",
      "User:carol",
      "--operation",
      "Describe",
      "--operation",
      "Alter",
      "--cluster",
    ]);
    await waitFor("carol may list ACLs", 10_000, async () =>
      (await asCarol("--list")).code === 0 ? true : undefined,
    );
    const added = await asCarol(
      "--add",
      "--allow-principal",
      "User:erin",
      "--consumer",
      "--topic",
      "certs",
      "--group",
      "g",
    );
    assert.equal(added.code, 0, added.stderr);
    const listed = await asCarol("--list", "--principal", "User:erin");
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /^ACLs for principal `User:erin`$/m);
    assert.match(listed.stdout, /\t\(principal=User:erin, host=\*, operation=READ, permissionType=ALLOW\)/);
    const removed = await asCarol(
      "--remove",
      "--force",
      "--topic",
      "certs",
      "--group",
      "g",
      "--allow-principal",
      "User:erin",
      "--consumer",
    );
    assert.equal(removed.code, 0, removed.stderr);
    const after = await asCarol("--list", "--principal", "User:erin");
    assert.doesNotMatch(after.stdout, /User:erin, host/);
  });
});
