// The controller's ControllerStats as the PartitionStateMachine reports them, and their exposition: one
// LeaderElectionRateAndTimeMs update per round of elections that wrote a leader (with the round's time),
// one UncleanLeaderElectionsPerSec mark per partition led from outside its ISR, nothing for a partition
// left without a leader. The state znodes are a fake that takes every write and lets time pass.

import assert from "node:assert/strict";
import { test } from "node:test";
import { Logger } from "../../../src/common/logger.js";
import { MetricsRegistry } from "../../../src/common/metrics/metrics-registry.js";
import { MockTime } from "../../../src/common/time.js";
import { ControllerContext, tpKey } from "../../../src/server/controller/controller-context.js";
import type { ControllerBrokerRequestBatch } from "../../../src/server/controller/controller-request-batch.js";
import { PartitionStateMachine } from "../../../src/server/controller/partition-state-machine.js";
import type { KafkaZkClient } from "../../../src/server/metadata/kafka-zk-client.js";
import { ReplicationMetrics } from "../../../src/server/metrics/replication-metrics.js";
import { parseExposition, sampleValue } from "./exposition-parser.js";

test("leader elections timed per round, unclean ones counted per partition; ISR changes and MaxLag exported", async () => {
  const time = new MockTime();
  const registry = new MetricsRegistry(time);
  const metrics = new ReplicationMetrics(registry);
  registry.register(() => metrics.collect(42));

  const ctx = new ControllerContext();
  ctx.epoch = 1;
  ctx.liveBrokers.set(2, { epoch: 1n } as never);
  // Broker 1 is dead. p0: ISR [1] only (unclean → 2); p1: 2 in the ISR (clean); p2: only on 1 (no leader).
  ctx.assignments.set(
    "t",
    new Map([
      [0, [1, 2]],
      [1, [1, 2]],
      [2, [1]],
    ]),
  );
  for (const [p, isr] of [
    [0, [1]],
    [1, [1, 2]],
    [2, [1]],
  ] as const) {
    const k = tpKey("t", p);
    ctx.leadership.set(k, {
      leaderAndIsr: { leader: 1, leaderEpoch: 3, isr: [...isr], controllerEpoch: 1 },
      zkVersion: 5,
    });
    ctx.partitionStates.set(k, "OfflinePartition");
  }
  const zk = {
    updateLeaderAndIsr: async (
      updates: ReadonlyArray<{ topic: string; partition: number; zkVersion: number }>,
    ) => {
      time.sleep(7); // the writes take 7 ms
      return {
        written: new Map(updates.map((u) => [tpKey(u.topic, u.partition), u.zkVersion + 1])),
        failed: new Map<string, string>(),
      };
    },
  } as unknown as KafkaZkClient;
  const batch = { addLeaderAndIsrRequestForBrokers: () => {} } as unknown as ControllerBrokerRequestBatch;
  const psm = new PartitionStateMachine(
    ctx,
    zk,
    batch,
    { uncleanLeaderElectionEnable: async () => true, stats: metrics, time },
    new Logger("test"),
  );

  const failed = await psm.toOnline(ctx.allPartitions(), "offline");
  assert.deepEqual(failed, [{ topic: "t", partition: 2 }]);
  assert.deepEqual(
    [0, 1].map((p) => ctx.leadership.get(tpKey("t", p))?.leaderAndIsr.leader),
    [2, 2],
  );
  // A round where nothing can be elected records nothing.
  await psm.toOnline([{ topic: "t", partition: 2 }], "offline");
  metrics.isrShrink();
  metrics.isrShrink();
  metrics.isrExpand();

  const s = parseExposition(registry.scrape());
  const v = (name: string, labels: Record<string, string> = {}) => sampleValue(s, name, labels);
  assert.equal(v("kafka_controller_controllerstats_leaderelectionrateandtimems_count"), 1);
  assert.equal(v("kafka_controller_controllerstats_leaderelectionrateandtimems_sum"), 7);
  const p50 = v("kafka_controller_controllerstats_leaderelectionrateandtimems", { quantile: "0.50" })!;
  assert.ok(Math.abs(p50 - 7) <= 0.07, `p50 ${p50}`);
  assert.equal(s.get("kafka_controller_controllerstats_leaderelectionrateandtimems")?.type, "gauge");
  assert.equal(s.get("kafka_controller_controllerstats_leaderelectionrateandtimems_count")?.type, "counter");
  assert.equal(v("kafka_controller_controllerstats_uncleanleaderelections_total"), 1);
  assert.equal(s.get("kafka_controller_controllerstats_uncleanleaderelections_total")?.type, "counter");
  assert.equal(v("kafka_server_replicamanager_isrshrinks_total"), 2);
  assert.equal(v("kafka_server_replicamanager_isrexpands_total"), 1);
  assert.equal(v("kafka_server_replicafetchermanager_maxlag", { clientId: "Replica" }), 42);
  assert.equal(s.get("kafka_server_replicafetchermanager_maxlag")?.type, "gauge");
});
