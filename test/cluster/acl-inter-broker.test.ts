// Issue 21 (authorization between brokers): a 2-broker cluster whose brokers authenticate to each other as
// User:broker (SASL_PLAINTEXT INTERNAL listener, PLAIN) and only User:broker is a super user. Clients on
// the PLAINTEXT listener are User:ANONYMOUS with no ACLs. Shows that replication (fetches, AlterPartition,
// the controller's requests) keeps working under the authorizer because the brokers' principal is a super
// user, while the same requests from ANONYMOUS are refused; the tools manage topics and ACLs over SASL.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runCommand } from "../support/broker-harness.js";
import { ClusterHarness, withLogTails } from "../support/cluster-harness.js";
import { skipUnlessInstalled } from "../support/required-tools.js";

const KCAT = "/usr/bin/kcat";
const PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule";
const dir = mkdtempSync(join(tmpdir(), "tributary-acl-ib-"));
const brokerConfig = join(dir, "broker-sasl.properties");
let cluster: ClusterHarness | undefined;

before(async () => {
  writeFileSync(
    brokerConfig,
    `security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=${PLAIN} required username="broker" password="broker-secret";\n`,
  );
  cluster = await ClusterHarness.start({
    brokers: 2,
    name: "acl-ib",
    overrides: {
      "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT",
      "inter.broker.listener.name": "INTERNAL",
      "listener.name.internal.sasl.enabled.mechanisms": "PLAIN",
      "sasl.mechanism.inter.broker.protocol": "PLAIN",
      "listener.name.internal.plain.sasl.jaas.config": `${PLAIN} required username="broker" password="broker-secret" user_broker="broker-secret" user_alice="alice-secret";`,
      "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
      "super.users": "User:broker",
    },
    brokerOverrides: (_i, port) => ({ listeners: `PLAINTEXT://127.0.0.1:${port},INTERNAL://127.0.0.1:0` }),
  });
});

after(async () => {
  await cluster?.close();
  rmSync(dir, { recursive: true, force: true });
});

function c(): ClusterHarness {
  assert.ok(cluster, "cluster not started");
  return cluster;
}

/** Broker 0's INTERNAL (SASL_PLAINTEXT) address. */
const internal = (): string => `127.0.0.1:${c().broker(0).listenerPorts()[1]}`;

/** A tool as User:broker (a super user) over SASL. */
async function asBroker(tool: string, args: readonly string[]): Promise<string> {
  const r = await c().tributary([
    tool,
    "--bootstrap-server",
    internal(),
    "--command-config",
    brokerConfig,
    ...args,
  ]);
  assert.equal(r.code, 0, `${tool} ${args.join(" ")}: ${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

function kcatAlice(args: readonly string[], input?: string) {
  return runCommand(
    KCAT,
    ["-b", internal(), "-X", "security.protocol=sasl_plaintext", "-X", "sasl.mechanisms=PLAIN"].concat([
      "-X",
      "sasl.username=alice",
      "-X",
      "sasl.password=alice-secret",
      ...args,
    ]),
    { input, timeoutMs: 30_000 },
  );
}

describe("the brokers as super users", { skip: skipUnlessInstalled("kcat") }, () => {
  test("replication works under the authorizer; ANONYMOUS (not a super user here) is refused", async () => {
    await withLogTails(
      () => cluster,
      async () => {
        // ANONYMOUS on PLAINTEXT may not create topics.
        const denied = await c().tributary([
          "topics",
          "--bootstrap-server",
          c().bootstrap(),
          "--create",
          "--topic",
          "ib-acl",
          "--partitions",
          "2",
          "--replication-factor",
          "2",
        ]);
        assert.notEqual(denied.code, 0, denied.stdout);
        assert.match(denied.stderr, /[Aa]uthoriz/);
        // User:broker, a super user, creates it and grants alice a producer's and a consumer's ACLs.
        await asBroker("topics", [
          "--create",
          "--topic",
          "ib-acl",
          "--partitions",
          "2",
          "--replication-factor",
          "2",
        ]);
        await asBroker("acls", [
          "--add",
          "--allow-principal",
          "User:alice",
          "--producer",
          "--topic",
          "ib-acl",
        ]);
        await asBroker("acls", [
          "--add",
          "--allow-principal",
          "User:alice",
          "--consumer",
          "--topic",
          "ib-acl",
          "--group",
          "ib-g",
        ]);
        const listed = await asBroker("acls", ["--list", "--topic", "ib-acl"]);
        assert.match(listed, /\(principal=User:alice, host=\*, operation=WRITE, permissionType=ALLOW\)/);

        // alice writes with acks=all: both replicas must have each record, so the followers fetched.
        for (const p of [0, 1]) {
          const r = await kcatAlice(
            ["-P", "-t", "ib-acl", "-p", String(p), "-X", "acks=all"],
            `p${p}-a\np${p}-b\n`,
          );
          assert.equal(r.code, 0, r.stderr);
        }
        await c().waitFor(
          "both replicas of each partition in sync with the same records",
          30_000,
          async () => {
            const described = await asBroker("topics", ["--describe", "--topic", "ib-acl"]);
            const isrs = [...described.matchAll(/Isr: ([\d,]+)/g)].map((m) => m[1].split(",").length);
            if (isrs.length !== 2 || isrs.some((n) => n !== 2)) return undefined;
            for (const p of [0, 1]) {
              const [a, b] = await Promise.all([0, 1].map((id) => c().partitionLog(id, "ib-acl", p)));
              if (a.size !== 2 || [...a].some(([o, v]) => b.get(o) !== v)) return undefined;
            }
            return true;
          },
        );
        const read = await kcatAlice(["-C", "-t", "ib-acl", "-o", "beginning", "-c", "4", "-e", "-q"]);
        assert.equal(read.code, 0, read.stderr);
        assert.deepEqual(read.stdout.trim().split("\n").sort(), ["p0-a", "p0-b", "p1-a", "p1-b"]);

        // The same data refused to ANONYMOUS; the brokers' own requests were never denied.
        const anon = await runCommand(
          KCAT,
          ["-b", c().bootstrap(), "-C", "-t", "ib-acl", "-o", "beginning", "-c", "1", "-e"],
          {
            timeoutMs: 30_000,
          },
        );
        assert.notEqual(anon.code, 0);
        assert.match(anon.stderr, /Topic authorization failed/);
        for (const b of c().brokers) assert.doesNotMatch(b.stdout, /Principal = User:broker is Denied/);
        assert.ok(
          c().brokers.some((b) =>
            /Principal = User:ANONYMOUS is Denied Operation = (Create|Describe)/.test(b.stdout),
          ),
          "ANONYMOUS's denials logged",
        );
      },
    );
  });
});
