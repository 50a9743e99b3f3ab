// Issue 31, item 4: a LeaderAndIsr with the leader epoch the broker already has changes nothing. 3 brokers
// behind a LinkProxy; one partition on leader L, follower F and the controller C (pinned, so the
// controller's LeaderAndIsr to L and L's AlterPartition cross the proxy), replica.lag.time.max.ms=3000. The
// proxy captures the LeaderAndIsr that made L the leader (leader epoch E, ISR [L, F, C], partition epoch P).
// Then the ISR changes through AlterPartition: the link L–F is cut, an acks=1 record leaves F behind, L
// shrinks the ISR to [L, C] (ZooKeeper: leader epoch E, partition epoch P+1) and acks=all works without F.
// The captured LeaderAndIsr is replayed to L — as the controller resends one after a timeout or a failover.
// Kafka (ZooKeeper mode) ignores a LeaderAndIsr whose leader epoch is not above the current one
// (ReplicaManager.becomeLeaderOrFollower: "… matches the current leader epoch", STALE_CONTROLLER_EPOCH), so
// when the link heals F catches up and L expands the ISR back to full. A leader that applies it reverts to
// the old ISR and partition epoch: F looks like a member to it, its proposals carry a stale partition epoch
// (INVALID_UPDATE_VERSION), and ZooKeeper's ISR never becomes full again.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { ApiKey } from "../../src/protocol/generated/api-table.js";
import { ClusterHarness, withLogTails } from "../support/cluster-harness.js";
import {
  createPinnedTopic,
  describeLeaderAndIsrAnswer,
  leaderAndIsrStates,
  logLines,
  missingTools,
  produceAll,
  values,
  waitForZkIsr,
} from "../support/isr-faults.js";

const TOPIC = "same-epoch";
let cluster: ClusterHarness | undefined;

before(async () => {
  if (missingTools) return;
  cluster = await ClusterHarness.start({
    brokers: 3,
    name: "isr-same-epoch",
    linkProxy: true,
    overrides: { "replica.lag.time.max.ms": "3000" },
  });
});

after(async () => {
  await cluster?.close();
});

test("a replayed LeaderAndIsr at the current leader epoch does not revert an ISR changed since", {
  skip: missingTools,
  timeout: 120_000,
}, async () => {
  const c = cluster!;
  await withLogTails(
    () => c,
    async () => {
      const proxy = c.proxy!;
      const controller = await c.waitForController();
      const [leader, follower] = [0, 1, 2].filter((i) => i !== controller);
      const capture = proxy.captureRequests({ apiKey: ApiKey.LeaderAndIsr, src: controller, dst: leader });
      await createPinnedTopic(c, TOPIC, [leader, follower, controller], { "min.insync.replicas": "2" });
      const start = await waitForZkIsr(c, TOPIC, [0, 1, 2], 30_000, "the new topic");
      capture.disarm();
      const made = capture.frames
        .map((req) => ({ req, state: leaderAndIsrStates(req).find((s) => s.topicName === TOPIC) }))
        .find((x) => x.state?.leader === leader);
      assert.ok(
        made,
        `no LeaderAndIsr making ${leader} the leader of ${TOPIC}-0 among ${capture.frames.length}`,
      );
      const old = made.state!;
      assert.equal(old.leaderEpoch, start.leaderEpoch);
      assert.deepEqual([...old.isr].sort(), [0, 1, 2]);

      proxy.cut(leader, follower);
      const behind = await produceAll(c.bootstrap(), TOPIC, values("behind", 1), 15_000, "1");
      assert.equal(behind.acked.length, 1, behind.output);
      const shrunk = await waitForZkIsr(
        c,
        TOPIC,
        [leader, controller],
        20_000,
        `leader ${leader} shrinking the ISR after its link to ${follower} was cut`,
      );
      assert.equal(shrunk.leaderEpoch, old.leaderEpoch, "an ISR change keeps the leader epoch");
      assert.ok(shrunk.partitionEpoch > old.partitionEpoch, JSON.stringify({ old, shrunk }));
      // The leader took the change: acks=all is acknowledged without the follower.
      const during = await produceAll(c.bootstrap(), TOPIC, values("shrunk", 3), 20_000);
      assert.equal(during.acked.length, 3, during.output);

      const answer = await proxy.replay(made.req);
      const said = describeLeaderAndIsrAnswer(answer);
      proxy.heal(leader, follower);
      const why = `follower ${follower} back, after the leader was sent the old LeaderAndIsr (leader epoch ${old.leaderEpoch}, ISR [${old.isr}], partition epoch ${old.partitionEpoch}) again and answered ${said}`;
      await waitForZkIsr(c, TOPIC, [0, 1, 2], 30_000, why).catch((e) => {
        const lines = logLines(c, leader, /ISR/).slice(-6);
        throw new Error(`${(e as Error).message}
leader ${leader}'s last ISR lines:
${lines.join("\n")}`);
      });
      const afterHeal = await produceAll(c.bootstrap(), TOPIC, values("after", 3), 15_000);
      assert.equal(afterHeal.acked.length, 3, afterHeal.output);
      assert.equal(proxy.counts.replayAnswered, 1);
      process.stderr.write(`[isr-same-epoch] the replayed LeaderAndIsr was answered: ${said}\n`);
    },
  );
});
