// Issue 16: control.plane.listener.name (KIP-291). Two brokers with a PLAINTEXT listener for clients and
// brokers and a CONTROLLER listener for the controller's requests: the controller connects to the other
// broker on its CONTROLLER port (its log names the address), and the cluster works as usual through the
// PLAINTEXT listeners (a topic created, led and described).

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { BrokerHarness, freePort, runCommand, tributaryArgv, waitFor } from "../support/broker-harness.js";
import { ZooKeeperHarness } from "../support/zookeeper-harness.js";

let zk: ZooKeeperHarness | undefined;
const brokers: BrokerHarness[] = [];
const controlPorts: number[] = [];

before(async () => {
  zk = await ZooKeeperHarness.start({ servers: 1 });
  for (const id of [0, 1]) {
    const port = await freePort();
    const controlPort = await freePort();
    controlPorts.push(controlPort);
    brokers.push(
      await BrokerHarness.start({
        name: `control-plane-${id}`,
        port,
        overrides: {
          "broker.id": String(id),
          "zookeeper.connect": `${zk.connectString}/control-plane`,
          "zookeeper.session.timeout.ms": "6000",
          listeners: `PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controlPort}`,
          "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
          "control.plane.listener.name": "CONTROLLER",
          "offsets.topic.replication.factor": "2",
        },
      }),
    );
  }
});

after(async () => {
  for (const b of brokers) await b.close();
  await zk?.close();
});

test("the controller's requests go to the control-plane listener", async () => {
  const bootstrap = brokers.map((b) => b.bootstrap).join(",");
  // Broker 0 started first, so it is the controller; it connects to broker 1 on its CONTROLLER port.
  const line = await waitFor(
    "the controller's connection to broker 1",
    20_000,
    async () => brokers[0].stdout.match(/Controller 0 connected to broker 1 at (\S+)/)?.[1],
  );
  assert.equal(line, `127.0.0.1:${controlPorts[1]}`, brokers[0].stdout.slice(-3000));
  const run = (args: string[]) => runCommand("node", tributaryArgv(args), { timeoutMs: 30_000 });
  const created = await run([
    "topics",
    "--bootstrap-server",
    bootstrap,
    "--create",
    "--topic",
    "cp",
    "--partitions",
    "2",
    "--replication-factor",
    "2",
  ]);
  assert.equal(created.code, 0, created.stdout + created.stderr);
  const described = await waitFor("both partitions led with a full ISR", 20_000, async () => {
    const r = await run(["topics", "--bootstrap-server", bootstrap, "--describe", "--topic", "cp"]);
    const rows = r.stdout.split("\n").filter((l) => /Partition: \d/.test(l));
    return rows.length === 2 && rows.every((l) => /Isr: \d,\d/.test(l)) ? rows : undefined;
  });
  assert.equal(described.length, 2);
});
