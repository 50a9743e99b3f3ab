// The controller's ControllerStats as the PartitionStateMachine reports them, and their exposition: one
// LeaderElectionRateAndTimeMs update per round of elections that wrote a leader (with the round's time),
// one UncleanLeaderElectionsPerSec mark per partition led from outside its ISR, nothing for a partition
// left without a leader. The state znodes are real ones, in an embedded metadata store written through
// KafkaZkClient (fenced by the controller epoch), and the requests go into a real request batch.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { Logger } from "../../../src/common/logger.js";
import { MetricsRegistry } from "../../../src/common/metrics/metrics-registry.js";
import { SYSTEM_TIME } from "../../../src/common/time.js";
import { ControllerChannelManager } from "../../../src/server/controller/controller-channel-manager.js";
import { ControllerContext, tpKey } from "../../../src/server/controller/controller-context.js";
import { ControllerBrokerRequestBatch } from "../../../src/server/controller/controller-request-batch.js";
import { PartitionStateMachine } from "../../../src/server/controller/partition-state-machine.js";
import { EmbeddedMetadataStore } from "../../../src/server/metadata/embedded-metadata-store.js";
import { KafkaZkClient } from "../../../src/server/metadata/kafka-zk-client.js";
import { TopicZNode, ZkPaths } from "../../../src/server/metadata/zk-data.js";
import { ReplicationMetrics } from "../../../src/server/metrics/replication-metrics.js";
import { parseExposition, sampleValue } from "./exposition-parser.js";

test("leader elections timed per round, unclean ones counted per partition; ISR changes and MaxLag exported", async () => {
  const time = SYSTEM_TIME;
  const registry = new MetricsRegistry(time);
  const metrics = new ReplicationMetrics(registry);
  registry.register(() => metrics.collect(42));
  const dir = mkdtempSync(join(tmpdir(), "tributary-controller-stats-"));
  const store = await EmbeddedMetadataStore.open(dir, time);
  try {
    const zk = new KafkaZkClient(store);
    await zk.createTopLevelPaths();
    const won = await zk.registerControllerAndIncrementControllerEpoch(0, time.milliseconds());
    assert.ok(won);
    const ctx = new ControllerContext();
    ctx.epoch = won.epoch;
    ctx.epochZkVersion = won.epochZkVersion;
    ctx.liveBrokers.set(2, {
      reg: { id: 2, endpoints: [], rack: null, jmxPort: -1, timestampMs: 0 },
      epoch: 1n,
    });
    // Broker 1 is dead. p0: ISR [1] only (unclean → 2); p1: 2 in the ISR (clean); p2: only on 1 (no leader).
    const assignment = new Map([
      [0, [1, 2]],
      [1, [1, 2]],
      [2, [1]],
    ]);
    ctx.assignments.set("t", assignment);
    await store.create(
      ZkPaths.topic("t"),
      TopicZNode.encode({
        topicId: "AAAAAAAAAAAAAAAAAAAAAQ",
        partitions: assignment,
        addingReplicas: new Map(),
        removingReplicas: new Map(),
      }),
    );
    const states = (
      [
        [0, [1]],
        [1, [1, 2]],
        [2, [1]],
      ] as const
    ).map(([partition, isr]) => ({
      topic: "t",
      partition,
      leaderAndIsr: { leader: 1, leaderEpoch: 3, isr: [...isr], controllerEpoch: ctx.epoch },
    }));
    const created = await zk.createTopicPartitionStates(states, ctx.epochZkVersion);
    for (const st of states) {
      const k = tpKey("t", st.partition);
      assert.equal(created.get(k), 0);
      ctx.leadership.set(k, { leaderAndIsr: st.leaderAndIsr, zkVersion: 0 });
      ctx.partitionStates.set(k, "OfflinePartition");
    }
    const channel = new ControllerChannelManager({
      controllerId: 0,
      interBrokerListenerName: "PLAINTEXT",
      requestTimeoutMs: 1000,
    });
    const batch = new ControllerBrokerRequestBatch(0, ctx, channel, "PLAINTEXT");
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
    // The elections are in the znodes: t-0 led by 2 from outside its ISR, t-1 by 2 from inside it.
    const written = await zk.getPartitionStates([0, 1].map((partition) => ({ topic: "t", partition })));
    assert.deepEqual(
      [0, 1].map((p) => {
        const l = written.get(tpKey("t", p))!.leaderAndIsr;
        return [l.leader, l.leaderEpoch, [...l.isr]];
      }),
      [
        [2, 4, [2]],
        [2, 4, [2]],
      ],
    );
    // A round where nothing can be elected records nothing.
    await psm.toOnline([{ topic: "t", partition: 2 }], "offline");
    metrics.isrShrink();
    metrics.isrShrink();
    metrics.isrExpand();

    const s = parseExposition(registry.scrape());
    const v = (name: string, labels: Record<string, string> = {}) => sampleValue(s, name, labels);
    assert.equal(v("kafka_controller_controllerstats_leaderelectionrateandtimems_count"), 1);
    const sum = v("kafka_controller_controllerstats_leaderelectionrateandtimems_sum")!;
    assert.ok(sum >= 0, `sum ${sum}`);
    const p50 = v("kafka_controller_controllerstats_leaderelectionrateandtimems", { quantile: "0.50" })!;
    // One round: its time is the only observation (within the histogram's 1 %).
    assert.ok(Math.abs(p50 - sum) <= Math.max(0.01 * sum, 0.01), `p50 ${p50}, sum ${sum}`);
    assert.equal(s.get("kafka_controller_controllerstats_leaderelectionrateandtimems")?.type, "gauge");
    assert.equal(
      s.get("kafka_controller_controllerstats_leaderelectionrateandtimems_count")?.type,
      "counter",
    );
    assert.equal(v("kafka_controller_controllerstats_uncleanleaderelections_total"), 1);
    assert.equal(s.get("kafka_controller_controllerstats_uncleanleaderelections_total")?.type, "counter");
    assert.equal(v("kafka_server_replicamanager_isrshrinks_total"), 2);
    assert.equal(v("kafka_server_replicamanager_isrexpands_total"), 1);
    assert.equal(v("kafka_server_replicafetchermanager_maxlag", { clientId: "Replica" }), 42);
    assert.equal(s.get("kafka_server_replicafetchermanager_maxlag")?.type, "gauge");
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
