// Issue 16/17: what replication promises, on a real cluster. min.insync.replicas: with the ISR below it, an
// acks=all produce is refused with NOT_ENOUGH_REPLICAS (confluent-kafka sees error 19) while acks=1 is
// still taken. unclean.leader.election.enable: when every ISR member is gone and only an out-of-sync
// replica comes back, a topic without it stays offline (leader none) and a topic with it (topic config)
// elects that replica, with itself as the whole ISR.

import assert from "node:assert/strict";
import { after, afterEach, before, test } from "node:test";

import { runCommand } from "../support/broker-harness.js";
import { ClusterHarness, formatDescribe, withLogTails } from "../support/cluster-harness.js";

const PYTHON = "/usr/bin/python3";
let cluster: ClusterHarness | undefined;

before(async () => {
  cluster = await ClusterHarness.start({ brokers: 3, name: "replication-guarantees" });
});

afterEach(async () => {
  // Every broker running again for the next test.
  const c = cluster;
  if (c === undefined) return;
  for (let i = 0; i < c.brokers.length; i++) if (!c.broker(i).isRunning) await c.startBroker(i);
});

after(async () => {
  await cluster?.close();
});

/** One confluent-kafka produce with `acks`; prints the error code (0 when delivered). */
const PRODUCE_ONE = `
import sys
from confluent_kafka import Producer
bootstrap, topic, acks = sys.argv[1], sys.argv[2], sys.argv[3]
p = Producer({"bootstrap.servers": bootstrap, "acks": acks, "message.timeout.ms": 8000, "retries": 0})
result = []
p.produce(topic, b"v", on_delivery=lambda err, msg: result.append(err.code() if err else 0))
p.flush(15)
print(result[0] if result else "none")
`;

async function produceOne(bootstrap: string, topic: string, acks: string): Promise<string> {
  const r = await runCommand(PYTHON, ["-c", PRODUCE_ONE, bootstrap, topic, acks], { timeoutMs: 30_000 });
  return r.stdout.trim();
}

test("min.insync.replicas=2 with an ISR of 1: acks=all gets NOT_ENOUGH_REPLICAS, acks=1 is accepted", async () => {
  await withLogTails(
    () => cluster,
    async () => {
      const c = cluster!;
      const controller = await c.waitForController();
      const leader = controller;
      const others = [0, 1, 2].filter((i) => i !== leader);
      await c.topics([
        "--create",
        "--topic",
        "strict",
        "--replica-assignment",
        [leader, ...others].join(":"),
        "--config",
        "min.insync.replicas=2",
      ]);
      await c.waitForDescribe(
        "strict",
        "full ISR",
        20_000,
        (ps) => ps.length === 1 && ps[0].isr.length === 3,
      );
      const bootstrap = c.broker(leader).bootstrap;
      assert.equal(await produceOne(bootstrap, "strict", "all"), "0", "acks=all with the full ISR");
      for (const i of others) assert.equal(await c.stopBroker(i, "SIGTERM"), 0);
      await c.waitForDescribe(
        "strict",
        `ISR [${leader}]`,
        20_000,
        (ps) => ps[0]?.isr.join() === String(leader),
      );
      assert.equal(
        await produceOne(bootstrap, "strict", "all"),
        "19",
        "NOT_ENOUGH_REPLICAS (19) for acks=all",
      );
      assert.equal(await produceOne(bootstrap, "strict", "1"), "0", "acks=1 is still accepted");
    },
  );
});

test("an offline partition stays offline without unclean election and elects an out-of-sync replica with it", async () => {
  await withLogTails(
    () => cluster,
    async () => {
      const c = cluster!;
      const controller = await c.waitForController();
      const [leader, follower] = [0, 1, 2].filter((i) => i !== controller);
      for (const [topic, unclean] of [
        ["clean", "false"],
        ["unclean", "true"],
      ]) {
        await c.topics([
          "--create",
          "--topic",
          topic,
          "--replica-assignment",
          `${leader}:${follower}`,
          "--config",
          `unclean.leader.election.enable=${unclean}`,
        ]);
        await c.waitForDescribe(topic, "full ISR", 20_000, (ps) => ps.length === 1 && ps[0].isr.length === 2);
      }
      // The follower dies first and leaves the ISR; then the leader dies: nobody in the ISR is alive.
      await c.stopBroker(follower, "SIGKILL");
      for (const t of ["clean", "unclean"])
        await c.waitForDescribe(t, `ISR [${leader}]`, 30_000, (ps) => ps[0]?.isr.join() === String(leader));
      await c.stopBroker(leader, "SIGKILL");
      for (const t of ["clean", "unclean"])
        await c.waitForDescribe(t, "offline", 30_000, (ps) => ps[0]?.leader === -1);
      // Only the out-of-sync replica comes back.
      await c.startBroker(follower);
      const unclean = await c.waitForDescribe(
        "unclean",
        `led by ${follower} with ISR [${follower}]`,
        30_000,
        (ps) => ps[0]?.leader === follower && ps[0].isr.join() === String(follower),
      );
      assert.equal(unclean[0].leader, follower, formatDescribe(unclean));
      const clean = await c.describe("clean");
      assert.equal(clean[0].leader, -1, `clean election only: still offline\n${formatDescribe(clean)}`);
      assert.deepEqual(clean[0].isr, [leader], formatDescribe(clean));
    },
  );
});
