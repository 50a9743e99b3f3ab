// Issue 17 (KIP-101's second failure story, "replica divergence"), on a real cluster: a partition's two
// replicas both fail and come back in the reverse order, with logs that diverge at the same offset. The
// replica that returns first is elected (unclean election, a topic config) and takes a new record at the
// offset where the other holds one it alone had; when the other returns as a follower it must not keep its
// record (truncating to its high watermark would: that record was below it), but truncate by leader epoch
// — OffsetForLeaderEpoch says where its epoch ends on the new leader — and take the new leader's record.
// Afterwards both replicas hold the same records at the same offsets, in the same batches (offsets, leader
// epochs, CRCs).

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { runCommand } from "../support/broker-harness.js";
import { ClusterHarness, formatDescribe, withLogTails } from "../support/cluster-harness.js";
import { createAssignedTopic, twoNonControllers } from "../support/failover-steps.js";

const KCAT = "/usr/bin/kcat";
const TOPIC = "diverge";
let cluster: ClusterHarness | undefined;

before(async () => {
  cluster = await ClusterHarness.start({ brokers: 3, name: "leader-epoch-truncation" });
});

after(async () => {
  await cluster?.close();
});

async function produce(bootstrap: string, value: string, acks: string): Promise<void> {
  const r = await runCommand(KCAT, ["-b", bootstrap, "-P", "-t", TOPIC, "-p", "0", "-X", `acks=${acks}`], {
    input: `${value}\n`,
    timeoutMs: 30_000,
  });
  assert.equal(r.code, 0, r.stderr);
}

test("diverging replicas converge by leader epoch, not by high watermark", async () => {
  await withLogTails(
    () => cluster,
    async () => {
      const c = cluster!;
      const [a, b] = await twoNonControllers(c);
      await createAssignedTopic(c, TOPIC, [a, b], { "unclean.leader.election.enable": "true" });
      await produce(c.bootstrap(), "m1", "all"); // on both replicas

      // b fails; a alone takes m2 (its high watermark covers it: a is the whole ISR).
      await c.stopBroker(b, "SIGKILL");
      await c.waitForDescribe(TOPIC, `ISR [${a}]`, 30_000, (ps) => ps[0]?.isr.join() === String(a));
      await produce(c.bootstrap([b]), "m2", "1");
      assert.equal((await c.partitionLog(a, TOPIC, 0)).get(1), "m2");

      // a fails too; b returns first and is elected from outside the ISR, then takes m3 at offset 1.
      await c.stopBroker(a, "SIGKILL");
      await c.waitForDescribe(TOPIC, "offline", 30_000, (ps) => ps[0]?.leader === -1);
      await c.startBroker(b);
      await c.waitForDescribe(TOPIC, `led by ${b}`, 30_000, (ps) => ps[0]?.leader === b);
      await produce(c.bootstrap([a]), "m3", "1");

      // a returns as a follower: it must drop m2 and take m3, then rejoin the ISR.
      await c.startBroker(a);
      const parts = await c.waitForDescribe(TOPIC, `${a} back in the ISR`, 30_000, (ps) =>
        (ps[0]?.isr ?? []).includes(a),
      );
      assert.equal(parts[0].leader, b, formatDescribe(parts));
      const onB = await c.partitionLog(b, TOPIC, 0);
      const onA = await c.partitionLog(a, TOPIC, 0);
      assert.deepEqual(
        [...onB],
        [
          [0, "m1"],
          [1, "m3"],
        ],
      );
      assert.deepEqual([...onA], [...onB], "the follower's log equals the leader's");
      // Batch for batch: the same offsets, leader epochs and CRCs in both replicas' segment files.
      const batchesB = await c.partitionBatches(b, TOPIC, 0);
      assert.equal(batchesB.length, 2, batchesB.join("\n"));
      assert.deepEqual(await c.partitionBatches(a, TOPIC, 0), batchesB);
      const truncated = c.broker(a).stdout.match(/Truncating partition diverge-0 to offset 1\b.*/)?.[0];
      assert.ok(truncated, "the follower logged its truncation to offset 1");
    },
  );
});
