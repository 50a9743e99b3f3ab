// The seed scenario of issue 16: 4 brokers on a real ZooKeeper, a topic with 4 partitions × RF 4; a
// controlled shutdown (SIGTERM) of one broker moves the leadership of every partition it led to the
// next replica in assignment order that is in the ISR and takes it out of every ISR — as
// `topics --describe` prints it and as the partition-state znodes say (zookeeper-shell). Restarted, the
// broker registers again, catches up as a follower and is back in every ISR.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import {
  ClusterHarness,
  formatDescribe,
  type PartitionDescription,
  type PartitionState,
  withLogTails,
} from "../support/cluster-harness.js";

const TOPIC = "seed";
let cluster: ClusterHarness | undefined;

before(async () => {
  // Without the automatic preferred-leader rebalance (tested in leader-election.test.ts): this test checks
  // that a restarted broker gets no leadership back by itself, which the rebalance would give it once its
  // first check runs (5 s after the controller starts) — a race with the assertions below.
  cluster = await ClusterHarness.start({
    brokers: 4,
    name: "cluster-failover",
    overrides: { "auto.leader.rebalance.enable": "false" },
  });
});

after(async () => {
  await cluster?.close();
});

/** The leader expected after `gone` left: the first replica in assignment order still in the ISR. */
function expectedLeader(replicas: readonly number[], isr: readonly number[], gone: number): number {
  return replicas.find((r) => r !== gone && isr.includes(r)) ?? -1;
}

test("SIGTERM of a broker moves leadership to the next in-sync replica; it is back in every ISR after a restart", async () => {
  await withLogTails(
    () => cluster,
    async () => {
      const c = cluster!;
      await c.createTopic(TOPIC, 4, 4);

      // Every partition has a leader, 4 replicas, and all 4 in the ISR.
      const before = await c.waitForDescribe(
        TOPIC,
        "4 partitions, each led and fully in sync",
        20_000,
        (ps) => ps.length === 4 && ps.every((p) => p.leader >= 0 && p.isr.length === 4),
      );
      for (const p of before) {
        assert.equal(p.replicas.length, 4, formatDescribe(before));
        assert.deepEqual([...p.replicas].sort(), [0, 1, 2, 3], formatDescribe(before));
        assert.deepEqual([...p.isr].sort(), [0, 1, 2, 3], formatDescribe(before));
        assert.ok(p.replicas.includes(p.leader), formatDescribe(before));
      }
      const statesBefore = new Map<number, PartitionState>();
      for (const p of before) {
        const st = await c.partitionState(TOPIC, p.partition);
        assert.ok(st, `no state znode for ${TOPIC}-${p.partition}`);
        assert.equal(st.leader, p.leader, `znode and describe disagree on ${TOPIC}-${p.partition}`);
        statesBefore.set(p.partition, st);
      }

      // Stop a broker that leads at least one partition (placement starts at a random index, so every
      // broker leads one here; pick the leader of partition 0). Not the controller, so this is a controlled
      // shutdown handled by a controller that stays.
      const controller = await c.controllerId();
      const victim = before.map((p) => p.leader).find((l) => l !== controller) ?? before[0].leader;
      const led = before.filter((p) => p.leader === victim).map((p) => p.partition);
      assert.ok(led.length > 0);
      const code = await c.stopBroker(victim, "SIGTERM");
      assert.equal(code, 0, `broker ${victim} exit code after SIGTERM\n${c.broker(victim).output}`);
      assert.match(c.broker(victim).stdout, /controlled shutdown|Controlled shutdown/i);

      const survivor = c.bootstrap();
      const after = await c.waitForDescribe(
        TOPIC,
        `broker ${victim} out of every ISR and leading nothing`,
        20_000,
        (ps) => ps.length === 4 && ps.every((p) => p.leader !== victim && !p.isr.includes(victim)),
        survivor,
      );
      const show = `before:\n${formatDescribe(before)}\nafter:\n${formatDescribe(after)}`;
      const byPartition = new Map<number, PartitionDescription>(before.map((p) => [p.partition, p]));
      for (const p of after) {
        const was = byPartition.get(p.partition)!;
        assert.deepEqual(p.replicas, was.replicas, `assignment changed\n${show}`);
        assert.ok(!p.isr.includes(victim), show);
        assert.notEqual(p.leader, victim, show);
        if (led.includes(p.partition)) {
          assert.equal(
            p.leader,
            expectedLeader(was.replicas, was.isr, victim),
            `partition ${p.partition}\n${show}`,
          );
        } else {
          assert.equal(p.leader, was.leader, `leader of partition ${p.partition} moved needlessly\n${show}`);
        }
        assert.deepEqual(
          [...p.isr].sort(),
          was.isr.filter((r) => r !== victim).sort(),
          `partition ${p.partition} ISR\n${show}`,
        );
      }

      // The same straight from ZooKeeper.
      for (const p of after) {
        const st = await c.partitionState(TOPIC, p.partition);
        const was = statesBefore.get(p.partition)!;
        assert.ok(st, `no state znode for ${TOPIC}-${p.partition}`);
        assert.equal(st.leader, p.leader, `znode leader of ${p.partition}: ${JSON.stringify(st)}\n${show}`);
        assert.deepEqual(
          [...st.isr].sort(),
          [...p.isr].sort(),
          `znode isr of ${p.partition}: ${JSON.stringify(st)}`,
        );
        assert.ok(!st.isr.includes(victim), JSON.stringify(st));
        if (led.includes(p.partition)) {
          assert.ok(
            st.leader_epoch > was.leader_epoch,
            `leader_epoch of ${p.partition} not bumped: ${JSON.stringify(was)} → ${JSON.stringify(st)}`,
          );
        }
      }
      assert.equal(await c.stat(`/brokers/ids/${victim}`), undefined, `/brokers/ids/${victim} still exists`);

      // Restart it: registered again (/brokers/ids/<id>), known to every broker's metadata, listed among
      // the replicas, and — once its fetchers caught up and the leaders expanded the ISR through
      // AlterPartition — back in every ISR, in the describe output and in the znodes. Leadership does not
      // move back (that is preferred-leader election, issue 18).
      await c.startBroker(victim);
      await c.waitForRegistered([0, 1, 2, 3], 20_000, true);
      await c.waitForMetadataBrokers([0, 1, 2, 3], 20_000);
      const restarted = await c.waitForDescribe(
        TOPIC,
        `broker ${victim} back in every ISR`,
        20_000,
        (parts) => parts.length === 4 && parts.every((p) => p.isr.includes(victim) && p.leader >= 0),
        c.broker(victim).bootstrap,
      );
      for (const p of restarted) {
        assert.ok(p.replicas.includes(victim), formatDescribe(restarted));
        assert.notEqual(p.leader, victim, formatDescribe(restarted));
        const st = await c.partitionState(TOPIC, p.partition);
        assert.ok(st?.isr.includes(victim), `znode isr of ${p.partition}: ${JSON.stringify(st)}`);
      }
    },
  );
});
