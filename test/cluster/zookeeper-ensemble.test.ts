// Issue 16: a ZooKeeper ensemble of 3 under 3 brokers. With one ZooKeeper server killed (SIGKILL; the
// ensemble's leader, so the survivors must elect a new one) the cluster keeps working: topics are
// created and led, kcat produces 100 messages with acks=all and reads them back from the leaders; then
// the controller broker is killed too and another broker becomes controller while ZooKeeper runs on 2
// of its 3 servers, and the cluster still creates topics and serves produce and fetch.
//
// The data topics have one replica per partition, so that this test does not depend on follower
// replication (issue 17): with more, the high watermark and acks=all wait for the followers.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { describeResult, readWithKcat, runCommand } from "../support/broker-harness.js";
import { ClusterHarness, SESSION_TIMEOUT_MS, withLogTails } from "../support/cluster-harness.js";
import { skipUnlessInstalled } from "../support/required-tools.js";

const KCAT = "/usr/bin/kcat";

/** Produces `values` with kcat (acks=all) to `topic`; asserts kcat delivered them all. */
async function produceWithKcat(bootstrap: string, topic: string, values: readonly string[]): Promise<void> {
  const r = await runCommand(
    KCAT,
    [
      "-b",
      bootstrap,
      "-P",
      "-t",
      topic,
      "-X",
      "acks=all",
      "-X",
      "linger.ms=5",
      "-X",
      "message.timeout.ms=30000",
    ],
    { input: `${values.join("\n")}\n`, timeoutMs: 45_000 },
  );
  assert.equal(r.code, 0, describeResult(`kcat -P -t ${topic}`, r));
  assert.doesNotMatch(r.stderr, /ERROR|failed/i, describeResult(`kcat -P -t ${topic}`, r));
}

/** Produces 100 messages to `topic` and reads them back (from each partition's leader). */
async function roundTrip(c: ClusterHarness, topic: string): Promise<void> {
  const values = Array.from({ length: 100 }, (_, i) => `${topic}-${String(i).padStart(3, "0")}`);
  await produceWithKcat(c.bootstrap(), topic, values);
  const got = await readWithKcat(c.bootstrap(), topic);
  assert.deepEqual(
    got.map((m) => m.value).sort(),
    [...values].sort(),
    `read back ${got.length} of ${values.length} messages`,
  );
  // Each partition's messages are at consecutive offsets from 0, in the order kcat sent them.
  const byPartition = new Map<number, number[]>();
  for (const m of got) byPartition.set(m.partition, [...(byPartition.get(m.partition) ?? []), m.offset]);
  for (const [p, offsets] of byPartition)
    assert.deepEqual(
      offsets,
      offsets.map((_, i) => i),
      `offsets of partition ${p}: ${offsets}`,
    );
}

describe("a cluster on a 3-server ZooKeeper ensemble", {
  skip: skipUnlessInstalled("kcat"),
}, () => {
  let cluster: ClusterHarness | undefined;

  before(async () => {
    cluster = await ClusterHarness.start({ brokers: 3, zookeeperServers: 3, name: "zookeeper-ensemble" });
  });

  after(async () => {
    await cluster?.close();
  });

  test("one ZooKeeper server killed, then the controller: the cluster keeps working", async () => {
    await withLogTails(
      () => cluster,
      async () => {
        const c = cluster!;
        const zkLeader = await c.zk.waitForLeader();
        await c.zk.stop(zkLeader, "SIGKILL");
        const newZkLeader = await c.zk.waitForLeader(20_000);
        assert.notEqual(newZkLeader, zkLeader);

        // The brokers stay (or get back) registered and the controller stays elected.
        await c.waitForRegistered([0, 1, 2], 20_000, true);
        const controller = await c.waitForController(20_000);
        await c.waitForMetadataBrokers([0, 1, 2], 20_000);

        await c.createTopic("degraded-rf3", 3, 3);
        await c.waitForDescribe(
          "degraded-rf3",
          "3 partitions, each led, ISR of 3",
          20_000,
          (ps) => ps.length === 3 && ps.every((p) => p.leader >= 0 && p.isr.length === 3),
        );
        await c.createTopic("degraded-data", 3, 1);
        await c.waitForDescribe(
          "degraded-data",
          "3 partitions, each led",
          20_000,
          (ps) => ps.length === 3 && ps.every((p) => p.leader >= 0),
        );
        await roundTrip(c, "degraded-data");

        // Now the controller broker as well.
        const epochBefore = (await c.controllerEpoch())!;
        const killedAt = Date.now();
        await c.stopBroker(controller, "SIGKILL");
        const next = await c.waitForController(SESSION_TIMEOUT_MS + 5000, [controller]);
        assert.ok(c.liveIds().includes(next), `controller ${next} is not a live broker`);
        const took = Date.now() - killedAt;
        assert.ok(took <= SESSION_TIMEOUT_MS + 6000, `new controller after ${took} ms`);
        assert.ok((await c.controllerEpoch())! > epochBefore, "/controller_epoch did not go up");
        const live = c.liveIds();
        await c.waitForMetadataBrokers(live, 15_000);
        // The RF-3 topic is led by live brokers only.
        await c.waitForDescribe("degraded-rf3", "every partition led by a live broker", 15_000, (ps) =>
          ps.every((p) => live.includes(p.leader)),
        );

        // The new controller creates topics and the cluster serves produce and fetch.
        await c.createTopic("after-failover", 2, 1);
        const parts = await c.waitForDescribe(
          "after-failover",
          "2 partitions, each led",
          20_000,
          (ps) => ps.length === 2 && ps.every((p) => live.includes(p.leader)),
        );
        assert.deepEqual(
          parts.map((p) => p.leader).sort(),
          [...live].sort(),
          "one partition on each live broker",
        );
        await roundTrip(c, "after-failover");
      },
    );
  });
});
