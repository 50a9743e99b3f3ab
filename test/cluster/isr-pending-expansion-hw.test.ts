// Issue 31, item 2: the high watermark while an ISR expansion is pending. 3 brokers behind a LinkProxy; one
// partition on leader L, follower F and the controller C (pinned: L's AlterPartition crosses the proxy),
// min.insync.replicas=2, replica.lag.time.max.ms=3000.
//   1. The link L–F is cut and an acks=1 record leaves F behind: L shrinks the ISR to [L, C].
//   2. The proxy is told to hold L's next AlterPartition answer; the link heals, F catches up, L proposes
//      [L, C, F] and the controller commits it to ZooKeeper — L does not hear it yet.
//   3. The link L–F is cut again (F stops getting records) and acks=all records are produced through L.
//   4. L is killed (SIGKILL); the controller elects the first live ISR member in assignment order: F.
// Every record acknowledged must be on F, the new leader. Kafka's leader computes the HW over the maximal
// ISR (the committed one plus the member being added, KIP-497's PendingExpandIsr), so it acknowledges
// nothing F lacks while the expansion is pending (those produces time out: nothing acknowledged is lost).
// A leader whose HW uses only the ISR it has been told ([L, C]) acknowledges them as soon as C has them, and
// they are gone when F leads.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { ApiKey } from "../../src/protocol/generated/api-table.js";
import { ClusterHarness, SESSION_TIMEOUT_MS, withLogTails } from "../support/cluster-harness.js";
import {
  createPinnedTopic,
  missingTools,
  produceAll,
  values,
  waitForZkIsr,
  zkView,
} from "../support/isr-faults.js";

const TOPIC = "pending-expand";
/** How long the proxy holds the controller's answer to the expansion: past everything below. */
const HOLD_MS = 60_000;
let cluster: ClusterHarness | undefined;

before(async () => {
  if (missingTools) return;
  cluster = await ClusterHarness.start({
    brokers: 3,
    name: "isr-pending-expand",
    linkProxy: true,
    overrides: { "replica.lag.time.max.ms": "3000" },
  });
});

after(async () => {
  await cluster?.close();
});

test("records acknowledged while an ISR expansion is pending are on the new member when it is elected", {
  skip: missingTools,
  timeout: 150_000,
}, async () => {
  const c = cluster!;
  await withLogTails(
    () => c,
    async () => {
      const proxy = c.proxy!;
      const controller = await c.waitForController();
      const [leader, follower] = [0, 1, 2].filter((i) => i !== controller);
      await createPinnedTopic(c, TOPIC, [leader, follower, controller], { "min.insync.replicas": "2" });
      await waitForZkIsr(c, TOPIC, [0, 1, 2], 30_000, "the new topic");
      const warm = await produceAll(c.bootstrap(), TOPIC, values("before", 5), 15_000);
      assert.equal(warm.acked.length, 5, warm.output);

      // 1. F leaves the ISR.
      proxy.cut(leader, follower);
      const behind = await produceAll(c.bootstrap(), TOPIC, values("behind", 1), 15_000, "1");
      assert.equal(behind.acked.length, 1, behind.output);
      await waitForZkIsr(c, TOPIC, [leader, controller], 20_000, `leader ${leader} dropping ${follower}`);

      // 2. F comes back; the controller commits the expansion, its answer to L is held.
      const hold = proxy.delayResponses(
        { apiKey: ApiKey.AlterPartition, src: leader, dst: controller },
        HOLD_MS,
      );
      const heldFrom = Date.now();
      proxy.heal(leader, follower);
      const expanded = await waitForZkIsr(c, TOPIC, [0, 1, 2], 30_000, `follower ${follower} caught up`);
      await c.waitFor("the proxy to hold the answer to the expansion", 10_000, async () =>
        hold.hits === 1 ? true : undefined,
      );

      // 3. F falls behind again; acks=all through L.
      proxy.cut(leader, follower);
      const during = await produceAll(c.bootstrap(), TOPIC, values("pending", 5), 10_000);
      assert.ok(Date.now() - heldFrom < HOLD_MS - 15_000, "the produce ran while the answer was still held");

      // 4. L dies; F is elected.
      await c.stopBroker(leader, "SIGKILL");
      const led = await c.waitFor(`broker ${follower} elected`, SESSION_TIMEOUT_MS + 20_000, async () => {
        const v = await zkView(c, TOPIC);
        return v !== undefined && v.leader === follower ? v : undefined;
      });
      const onLeader = await c.partitionLog(leader, TOPIC, 0);
      const onNew = await c.partitionLog(follower, TOPIC, 0);
      const leaderHad = [...onLeader.values()].filter((v) => v.startsWith("pending-"));
      assert.equal(leaderHad.length, 5, `the old leader appended the records: ${[...onLeader.values()]}`);
      const present = new Set(onNew.values());
      const lost = during.acked.filter((a) => !present.has(a.value));
      assert.deepEqual(
        lost.map((a) => `${a.value}@${a.offset}`),
        [],
        `acknowledged while ZooKeeper's ISR was already [${expanded.isr}] (partition epoch ${expanded.partitionEpoch}) and leader ${leader}'s answer held, then missing on the elected ${follower} (leader epoch ${led.leaderEpoch}); the new leader's log: ${[...onNew.entries()].map(([o, v]) => `${o}:${v}`).join(" ")}`,
      );
      for (const w of warm.acked) assert.ok(present.has(w.value), `${w.value} missing on ${follower}`);
      process.stderr.write(
        `[isr-pending-expand] while the expansion was pending: ${during.acked.length} of 5 acknowledged, ${during.failed.length} timed out; every acknowledged record on the new leader ${follower}\n`,
      );
    },
  );
});
