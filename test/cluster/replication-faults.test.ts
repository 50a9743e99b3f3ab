// Issue 17 and issue 31: Kafka's replication system test on a real 3-broker cluster (see
// test/soak/replication-soak.ts for what one schedule does and checks): RF 3, min.insync.replicas=2, 3
// partitions, an idempotent acks=all confluent-kafka producer running while a seeded random schedule SIGTERMs
// a leader, SIGKILLs a leader, SIGKILLs the controller, cuts a leader, and the controller, off from the other
// brokers and ZooKeeper past the session timeout, cuts a leader off for 1-3 s, drops the answer to a
// leader's AlterPartition while a follower is cut off (the leader must retry), and sends a captured
// LeaderAndIsr to its broker again (it must change nothing) — each of these 8 kinds once per schedule; the
// cluster's inter-broker and ZooKeeper links run through test/support/link-proxy.ts. After each fault the
// broker is restarted or healed and every ISR is full again within ISR_FULL_BOUND_MS before the next fault.
// Then: every ISR full in ZooKeeper and every broker, every acknowledged record consumed exactly once, at
// its acknowledged offset, in the producer's order per partition, and every replica's log identical to the
// leader's, batch for batch.
// FAULT_SCHEDULES schedules (default 2) of FAULT_COUNT faults (default 8, one of each kind) run one after
// the other on one cluster, with seeds FAULT_SEED + k*7919 (FAULT_SEED random unless given); each seed is
// printed at its start and in any failure. FAULT_SEED=<seed> FAULT_SCHEDULES=1 repeats one schedule;
// FAULT_KINDS=a,b,… draws from other kinds (all 13 are in the soak's FAULT_KINDS). `npm run soak` runs many
// schedules of every kind.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import {
  FAULT_CLUSTER_OVERRIDES,
  type FaultKind,
  parseFaultKinds,
  runFaultSchedule,
  seedFromEnv,
} from "../soak/replication-soak.js";
import { ClusterHarness, withLogTails } from "../support/cluster-harness.js";
import { skipUnlessInstalled } from "../support/required-tools.js";

const missing = skipUnlessInstalled("kcat", "python3", "confluent-kafka");
/** The signal and partition kinds, and the two control-plane kinds of issue 31's items 3 and 4. */
const KINDS: readonly FaultKind[] = process.env.FAULT_KINDS
  ? parseFaultKinds(process.env.FAULT_KINDS)
  : [
      "sigterm-leader",
      "sigkill-leader",
      "sigkill-controller",
      "partition-leader",
      "partition-controller",
      "blip-leader",
      "drop-alter-partition",
      "replay-leader-and-isr",
    ];
const FAULTS = Number(process.env.FAULT_COUNT ?? KINDS.length);
const SCHEDULES = Number(process.env.FAULT_SCHEDULES ?? 2);
let cluster: ClusterHarness | undefined;

before(async () => {
  if (!missing)
    cluster = await ClusterHarness.start({
      brokers: 3,
      name: "replication-faults",
      linkProxy: true,
      overrides: FAULT_CLUSTER_OVERRIDES,
    });
});

after(async () => {
  await cluster?.close();
});

test("replication under seeded fault schedules: no acknowledged record lost or duplicated, order kept, replicas identical", {
  skip: missing,
  timeout: 120_000 + SCHEDULES * FAULTS * 60_000,
}, async () => {
  const base = seedFromEnv();
  for (let k = 0; k < SCHEDULES; k++) {
    const seed = (base + k * 7919) >>> 0;
    await withLogTails(
      () => cluster,
      async () => {
        const r = await runFaultSchedule(cluster!, { seed, faults: FAULTS, kinds: KINDS });
        assert.equal(r.faults.length, FAULTS);
        if (FAULTS >= KINDS.length)
          assert.deepEqual(new Set(r.faults.map((f) => f.kind)), new Set(KINDS), `seed ${seed}`);
        const dropped = r.faults.reduce((a, f) => a + (f.effects?.alterPartitionAnswersDropped ?? 0), 0);
        assert.ok(r.acknowledged > 0 && r.consumed >= r.acknowledged, `seed ${seed}`);
        process.stderr.write(
          `[replication-faults] schedule ${k + 1}/${SCHEDULES} seed ${seed}: ${r.faults.map((f) => `${f.kind}@${f.victim} (moved ${f.movedMs} ms, full ISR ${f.recoveredMs} ms after the restart, heal or replay)`).join(", ")}; AlterPartition answers dropped ${dropped}; produced ${r.produced}, acknowledged ${r.acknowledged}, consumed ${r.consumed}, delivery errors ${r.deliveryErrors}; ${(r.ms / 1000).toFixed(1)} s\n`,
        );
      },
    );
  }
});
