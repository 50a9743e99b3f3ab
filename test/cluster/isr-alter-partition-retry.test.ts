// Issue 31, item 3: a lost AlterPartition answer. 3 brokers behind a LinkProxy; one partition on leader L,
// follower F and the controller C (pinned, so L's AlterPartition crosses the proxy), min.insync.replicas=2,
// replica.lag.time.max.ms=3000, controller.socket.timeout.ms=4000. The link L–F is cut (F stays registered:
// its ZooKeeper and controller links are up) and an acks=1 record leaves F behind, so L proposes shrinking
// the ISR to [L, C]; the controller
// writes it to ZooKeeper (a new partition epoch) and the proxy drops that one answer. Kafka's leader retries
// an unanswered AlterPartition and the controller answers success to a change it already applied, so:
//   - acks=all writes succeed while F is still cut off (L learnt the ISR [L, C]; its HW moves without F);
//   - after the heal F catches up and L expands the ISR back to full (a later change, accepted) and acks=all
//     goes on.
// A leader that drops a timed-out AlterPartition keeps the ISR [L, F, C] with a stale partition epoch: its
// HW waits for F (acks=all times out) and every later proposal is refused with INVALID_UPDATE_VERSION.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { ApiKey } from "../../src/protocol/generated/api-table.js";
import { ClusterHarness, withLogTails } from "../support/cluster-harness.js";
import {
  createPinnedTopic,
  logLines,
  missingTools,
  produceAll,
  values,
  waitForZkIsr,
  zkView,
} from "../support/isr-faults.js";

const TOPIC = "alter-retry";
let cluster: ClusterHarness | undefined;

before(async () => {
  if (missingTools) return;
  cluster = await ClusterHarness.start({
    brokers: 3,
    name: "isr-alter-retry",
    linkProxy: true,
    overrides: { "replica.lag.time.max.ms": "3000", "controller.socket.timeout.ms": "4000" },
  });
});

after(async () => {
  await cluster?.close();
});

test("an AlterPartition whose answer was lost is retried and accepted; the ISR changes again later", {
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
      await createPinnedTopic(c, TOPIC, [leader, follower, controller], { "min.insync.replicas": "2" });
      const start = await waitForZkIsr(c, TOPIC, [0, 1, 2], 30_000, "the new topic");
      assert.equal(start.leader, leader);
      const warm = await produceAll(c.bootstrap(), TOPIC, values("before", 5), 15_000);
      assert.equal(warm.acked.length, 5, warm.output);

      const drop = proxy.dropResponses({ apiKey: ApiKey.AlterPartition, src: leader, dst: controller }, 1);
      proxy.cut(leader, follower);
      // A record the follower cannot fetch: it falls behind (a caught-up follower stays in the ISR).
      const behind = await produceAll(c.bootstrap(), TOPIC, values("behind", 1), 15_000, "1");
      assert.equal(behind.acked.length, 1, behind.output);
      const shrunk = await waitForZkIsr(
        c,
        TOPIC,
        [leader, controller],
        20_000,
        `leader ${leader} shrinking the ISR after its link to ${follower} was cut`,
      );
      await c.waitFor("the proxy to drop the controller's answer", 10_000, async () =>
        drop.hits === 1 ? true : undefined,
      );
      assert.equal(shrunk.leaderEpoch, start.leaderEpoch, "an ISR change keeps the leader epoch");
      assert.ok(shrunk.partitionEpoch > start.partitionEpoch, JSON.stringify({ start, shrunk }));

      // The leader must learn the ISR it asked for (its retry answered with success): acks=all needs [L, C].
      const during = await produceAll(c.bootstrap(), TOPIC, values("cut", 5), 20_000);
      assert.equal(
        during.acked.length,
        5,
        `acks=all with the follower cut off and ZooKeeper's ISR [${shrunk.isr}] (partition epoch ${shrunk.partitionEpoch}): ${during.failed.length} failed\n${during.output}\nleader ${leader}'s AlterPartition lines:\n${logLines(
          c,
          leader,
          /ISR|AlterPartition/,
        )
          .slice(-10)
          .join("\n")}`,
      );

      // A later change is accepted too: the follower returns and the ISR is full again.
      proxy.heal(leader, follower);
      const full = await waitForZkIsr(c, TOPIC, [0, 1, 2], 30_000, `follower ${follower} back`);
      assert.ok(full.partitionEpoch > shrunk.partitionEpoch);
      const afterHeal = await produceAll(c.bootstrap(), TOPIC, values("after", 5), 15_000);
      assert.equal(afterHeal.acked.length, 5, afterHeal.output);
      assert.equal(drop.hits, 1, "exactly one answer dropped");
      assert.equal(proxy.counts.responsesDropped, 1);
      const refused = logLines(c, leader, /error code 95\b|INVALID_UPDATE_VERSION/);
      assert.deepEqual(refused, [], "the leader's proposals were refused as stale");
      const final = await zkView(c, TOPIC);
      process.stderr.write(
        `[isr-alter-retry] one AlterPartition answer dropped (leader ${leader} → controller ${controller}); ZooKeeper ${JSON.stringify(final)}\n`,
      );
    },
  );
});
