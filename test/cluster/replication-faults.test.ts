// Issue 17: Kafka's replication system test on a real 3-broker cluster (see test/soak/replication-soak.ts
// for what one schedule does and checks): RF 3, min.insync.replicas=2, 3 partitions, an idempotent
// acks=all confluent-kafka producer running while a seeded random schedule SIGTERMs a leader, SIGKILLs a
// leader and SIGKILLs the controller (each kind at least once), each broker restarted and every ISR full
// again before the next fault. Then: every acknowledged record consumed exactly once, at its acknowledged
// offset, in the producer's order per partition, and every replica's log identical to the leader's.
// The seed is printed at the start and in any failure; FAULT_SEED=<n> (and FAULT_COUNT=<faults>, default
// 4) repeat a schedule. `npm run soak` runs many schedules.

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { after, before, test } from "node:test";

import { KCAT, PYTHON, runFaultSchedule, seedFromEnv } from "../soak/replication-soak.js";
import { ClusterHarness, withLogTails } from "../support/cluster-harness.js";

const missing = [KCAT, PYTHON].filter((p) => !existsSync(p));
const FAULTS = Number(process.env.FAULT_COUNT ?? 4);
let cluster: ClusterHarness | undefined;

before(async () => {
  if (missing.length === 0) cluster = await ClusterHarness.start({ brokers: 3, name: "replication-faults" });
});

after(async () => {
  await cluster?.close();
});

test("replication under a seeded fault schedule: no acknowledged record lost or duplicated, order kept, replicas identical", {
  skip: missing.length > 0 && `not installed: ${missing.join(", ")}`,
  timeout: 300_000,
}, async () => {
  const seed = seedFromEnv();
  await withLogTails(
    () => cluster,
    async () => {
      const r = await runFaultSchedule(cluster!, { seed, faults: FAULTS });
      assert.equal(r.faults.length, FAULTS);
      assert.ok(r.acknowledged > 0 && r.consumed >= r.acknowledged, `seed ${seed}`);
      process.stderr.write(
        `[replication-faults] seed ${seed}: ${r.faults.map((f) => `${f.kind}@${f.victim} (moved ${f.movedMs} ms, full ISR ${f.recoveredMs} ms after restart)`).join(", ")}; produced ${r.produced}, acknowledged ${r.acknowledged}, consumed ${r.consumed}, delivery errors ${r.deliveryErrors}; ${(r.ms / 1000).toFixed(1)} s\n`,
      );
    },
  );
});
