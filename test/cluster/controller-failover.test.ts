// Issue 16: the controller killed with SIGKILL → another broker is controller within the ZooKeeper
// session timeout plus a few seconds, /controller_epoch went up, and no partition is left without a
// leader while one of its ISR members is alive. A partition whose only replica was the dead controller
// has no leader (no unclean election by default).

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import {
  ClusterHarness,
  electionViolations,
  formatDescribe,
  type PartitionDescription,
  SESSION_TIMEOUT_MS,
  withLogTails,
} from "../support/cluster-harness.js";

let cluster: ClusterHarness | undefined;

before(async () => {
  cluster = await ClusterHarness.start({ brokers: 3, name: "controller-failover" });
});

after(async () => {
  await cluster?.close();
});

test("SIGKILL of the controller: a new controller within the session timeout, every partition with a live ISR member led", async () => {
  await withLogTails(
    () => cluster,
    async () => {
      const c = cluster!;
      await c.createTopic("replicated", 6, 3);
      await c.createTopic("single", 3, 1);
      const led = (ps: PartitionDescription[]) => ps.every((p) => p.leader >= 0);
      const replicated = await c.waitForDescribe("replicated", "every partition led", 20_000, led);
      const single = await c.waitForDescribe("single", "every partition led", 20_000, led);

      const old = await c.waitForController();
      const epochBefore = await c.controllerEpoch();
      assert.ok(epochBefore !== undefined && epochBefore >= 1, `controller_epoch ${epochBefore}`);
      const controllerZnode = await c.znodeJson<Record<string, unknown>>("/controller");
      assert.equal(controllerZnode?.version, 2, JSON.stringify(controllerZnode));
      assert.equal(controllerZnode?.brokerid, old, JSON.stringify(controllerZnode));
      const statesBefore = new Map<number, number>();
      for (const p of replicated)
        statesBefore.set(p.partition, (await c.partitionState("replicated", p.partition))!.leader_epoch);
      const atKill = await c.describe("replicated");

      const killedAt = Date.now();
      await c.stopBroker(old, "SIGKILL");
      const survivors = c.liveIds();
      const bound = SESSION_TIMEOUT_MS + 5000;
      const next = await c.waitForController(bound, [old]);
      const took = Date.now() - killedAt;
      assert.ok(survivors.includes(next), `controller ${next} is not a live broker (${survivors})`);
      assert.ok(took <= bound + 1000, `new controller after ${took} ms (bound ${bound} ms)`);
      const epochAfter = await c.controllerEpoch();
      assert.ok(epochAfter! > epochBefore!, `/controller_epoch ${epochBefore} → ${epochAfter}`);
      assert.match(
        c.broker(next).stdout,
        new RegExp(`${next} successfully elected as the controller. Epoch incremented to ${epochAfter}`),
      );

      // Every surviving broker's Metadata names the new controller and lists only the live brokers.
      await c.waitFor(`Metadata of brokers ${survivors} naming controller ${next}`, 10_000, async () => {
        for (const i of survivors) {
          const md = await c.metadata(i);
          if (md.controllerId !== next || md.brokers.join(",") !== survivors.join(",")) return undefined;
        }
        return true;
      });

      // No partition whose ISR still has a live member is without a live leader, and the new controller
      // took the dead broker out of every ISR (Kafka's ReplicaStateMachine moves the replicas of dead
      // brokers to OfflineReplica at failover) except where it was the last member.
      const via = c.bootstrap();
      const deadOutOfIsr = (p: PartitionDescription) =>
        !p.isr.includes(old) || (p.isr.length === 1 && p.leader === -1);
      const after = await c.waitForDescribe(
        "replicated",
        `led by live ISR members where possible, ${old} out of the ISRs`,
        10_000,
        (ps) => ps.length === 6 && electionViolations(ps, survivors).length === 0 && ps.every(deadOutOfIsr),
        via,
      );
      const show = `before:\n${formatDescribe(atKill)}\nafter:\n${formatDescribe(after)}`;
      for (const p of after) {
        const st = await c.partitionState("replicated", p.partition);
        assert.equal(st?.leader, p.leader, `${JSON.stringify(st)}\n${show}`);
        assert.deepEqual(st?.isr, p.isr, `${JSON.stringify(st)}\n${show}`);
        if (atKill[p.partition].leader === old && p.leader >= 0) {
          assert.ok(st!.leader_epoch > statesBefore.get(p.partition)!, `${JSON.stringify(st)}`);
          assert.equal(
            st!.controller_epoch,
            epochAfter,
            `partition state written by the new controller: ${JSON.stringify(st)}`,
          );
        }
      }
      // With every ISR full at the kill (replicas in sync), every partition has a live leader.
      if (atKill.every((p) => p.isr.length === 3)) {
        assert.deepEqual(
          after.filter((p) => p.leader < 0),
          [],
          `a partition is offline although two of its replicas live\n${show}`,
        );
      }
      const singleAfter = await c.describe("single", via);
      for (const p of singleAfter) {
        const was = single.find((q) => q.partition === p.partition)!;
        if (was.leader === old) {
          // Its only replica is dead: no leader (unclean election is off), and the ISR keeps its last member.
          assert.equal(p.leader, -1, `partition single-${p.partition}\n${formatDescribe(singleAfter)}`);
          assert.deepEqual(p.isr, [old], `partition single-${p.partition}\n${formatDescribe(singleAfter)}`);
        } else {
          assert.equal(p.leader, was.leader, formatDescribe(singleAfter));
        }
      }

      // The killed broker comes back as an ordinary broker: registered, and the controller stays.
      await c.startBroker(old);
      await c.waitForRegistered([0, 1, 2], 20_000, true);
      await c.waitForMetadataBrokers([0, 1, 2], 20_000);
      assert.equal(await c.controllerId(), next);
      assert.equal(await c.controllerEpoch(), epochAfter);
      const md = await c.metadata(old);
      assert.equal(
        md.controllerId,
        next,
        `the restarted broker's Metadata names controller ${md.controllerId}`,
      );
      // Its single-replica partition has its only replica back and is led again.
      await c.waitForDescribe("single", "every partition led again", 15_000, (ps) =>
        ps.every((p) => p.leader >= 0),
      );
    },
  );
});
