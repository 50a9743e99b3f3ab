// Issue 21: SCRAM credentials in a 2-broker cluster (real ZooKeeper). A credential created with
// `tributary configs --alter --add-config 'SCRAM-SHA-512=[…]'` (AlterUserScramCredentials, served by the
// controller: /config/users/<u> plus a /config/changes notification) authenticates kcat on the other
// broker's SASL_PLAINTEXT listener within seconds; its deletion is seen there within seconds too. The user's znode keeps keys that are not SCRAM credentials (a quota written beside
// it), as Kafka's read-modify-write of the entity does.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import {
  BrokerHarness,
  type CommandResult,
  runCommand,
  sleep,
  tributaryArgv,
} from "../support/broker-harness.js";
import { CLUSTER_DEFAULTS } from "../support/cluster-harness.js";
import { skipUnlessInstalled } from "../support/required-tools.js";
import { ZooKeeperHarness } from "../support/zookeeper-harness.js";

const KCAT = "/usr/bin/kcat";
let zk: ZooKeeperHarness | undefined;
const brokers: BrokerHarness[] = [];

// The cluster harness gives each broker one PLAINTEXT port; these brokers also have a SASL listener.
before(async () => {
  zk = await ZooKeeperHarness.start({ servers: 1 });
  const started = await Promise.allSettled(
    [0, 1].map((id) =>
      BrokerHarness.start({
        name: `scram-cluster-b${id}`,
        startTimeoutMs: 45_000,
        overrides: {
          ...CLUSTER_DEFAULTS,
          "zookeeper.connect": `${zk!.connectString}/kafka`,
          "broker.id": String(id),
          listeners: "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
          "sasl.enabled.mechanisms": "SCRAM-SHA-512",
          "offsets.topic.replication.factor": "1",
        },
      }),
    ),
  );
  for (const s of started) if (s.status === "fulfilled") brokers.push(s.value);
  const failed = started.find((s) => s.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
});

after(async () => {
  await Promise.all(brokers.map((b) => b.close()));
  await zk?.close();
});

function saslPort(i: number): number {
  const ports = brokers[i].listenerPorts();
  assert.equal(ports.length, 2, brokers[i].output);
  return ports[1];
}

function tributary(args: readonly string[]): Promise<CommandResult> {
  return runCommand(process.execPath, tributaryArgv(args), { timeoutMs: 30_000 });
}

function zkShell(args: readonly string[]): Promise<CommandResult> {
  return tributary(["zookeeper-shell", `${zk!.connectString}/kafka`, ...args]);
}

/** The data of a znode (under the chroot), as `zookeeper-shell get` prints it (a JSON line). */
async function znodeText(path: string): Promise<string | undefined> {
  const r = await zkShell(["get", path]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  return r.stdout.split("\n").find((l) => l.startsWith("{"));
}

function logTails(): string {
  return brokers
    .map((b, i) => `--- broker ${i} ---\n${b.output.split("\n").slice(-40).join("\n")}`)
    .join("\n");
}

async function kcatAuthenticates(i: number, user: string, password: string): Promise<boolean> {
  const r = await runCommand(
    KCAT,
    [
      ...["-b", `127.0.0.1:${saslPort(i)}`, "-X", "security.protocol=sasl_plaintext"],
      ...[
        "-X",
        "sasl.mechanisms=SCRAM-SHA-512",
        "-X",
        `sasl.username=${user}`,
        "-X",
        `sasl.password=${password}`,
      ],
      ...["-L", "-m", "3"],
    ],
    { timeoutMs: 15_000 },
  );
  if (r.code !== 0) assert.match(r.stderr + r.stdout, /Authentication failed during authentication/);
  return r.code === 0;
}

/** Seconds until `check` holds (polled), failing after `limitS`. */
async function secondsUntil(what: string, limitS: number, check: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await check()) return (Date.now() - start) / 1000;
    if (Date.now() - start > limitS * 1000) assert.fail(`${what}: not within ${limitS} s`);
    await sleep(250);
  }
}

test("a credential written through the controller authenticates on the other broker within seconds, and its deletion too", {
  skip: skipUnlessInstalled("kcat"),
}, async () => {
  try {
    // AlterUserScramCredentials is served by the controller: the other broker learns of the credential
    // only from the /config/changes notification.
    const controller = (JSON.parse((await znodeText("/controller")) ?? "{}") as { brokerid: number })
      .brokerid;
    const other = 1 - controller;
    assert.equal(await kcatAuthenticates(other, "carol", "carol-secret"), false);
    const added = await tributary([
      ...["configs", "--bootstrap-server", brokers[other].bootstrap, "--alter", "--entity-type", "users"],
      ...["--entity-name", "carol", "--add-config", "SCRAM-SHA-512=[iterations=4096,password=carol-secret]"],
    ]);
    assert.equal(added.code, 0, added.stdout + added.stderr);
    const seen = await secondsUntil(`carol authenticates on broker ${other}`, 10, () =>
      kcatAuthenticates(other, "carol", "carol-secret"),
    );
    process.stdout.write(
      `# credential written by broker ${controller} authenticated on broker ${other} after ${seen.toFixed(2)} s\n`,
    );
    assert.equal(await kcatAuthenticates(controller, "carol", "carol-secret"), true);
    assert.equal(await kcatAuthenticates(other, "carol", "wrong"), false);

    // A quota key beside the credential (as the client quotas tool writes it): kept by a SCRAM change.
    const entity = JSON.parse((await znodeText("/config/users/carol")) ?? "{}") as {
      config: Record<string, string>;
    };
    assert.match(
      entity.config["SCRAM-SHA-512"],
      /^salt=[^,]+,stored_key=[^,]+,server_key=[^,]+,iterations=4096$/,
    );
    entity.config.producer_byte_rate = "1048576";
    const set = await zkShell(["set", "/config/users/carol", JSON.stringify(entity)]);
    assert.equal(set.code, 0, set.stdout + set.stderr);
    const change = JSON.stringify({ version: 2, entity_path: "users/carol" });
    const notified = await zkShell(["create", "-s", "/config/changes/config_change_", change]);
    assert.equal(notified.code, 0, notified.stdout + notified.stderr);
    await sleep(1500);

    const deleted = await tributary([
      ...["configs", "--bootstrap-server", brokers[other].bootstrap, "--alter", "--entity-type", "users"],
      ...["--entity-name", "carol", "--delete-config", "SCRAM-SHA-512"],
    ]);
    assert.equal(deleted.code, 0, deleted.stdout + deleted.stderr);
    const gone = await secondsUntil(
      `carol refused on broker ${other}`,
      10,
      async () => !(await kcatAuthenticates(other, "carol", "carol-secret")),
    );
    process.stdout.write(
      `# credential deleted by broker ${controller} refused on broker ${other} after ${gone.toFixed(2)} s\n`,
    );
    const left = JSON.parse((await znodeText("/config/users/carol")) ?? "{}") as {
      config: Record<string, string>;
    };
    assert.deepEqual(left.config, { producer_byte_rate: "1048576" });
  } catch (e) {
    process.stderr.write(`${logTails()}\n`);
    throw e;
  }
});
