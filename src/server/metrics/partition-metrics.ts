// PartitionMetrics: Kafka's kafka.cluster:type=Partition gauges, one set per partition hosted by this
// broker, tagged topic and partition (Kafka's Partition registers them at creation), as the JMX exporter
// names them: kafka_cluster_partition_{underreplicated,insyncreplicascount,underminisr,atminisr,
// replicascount,laststableoffsetlag}{topic,partition}. As in Kafka, all but LastStableOffsetLag are 0 on
// a follower: UnderReplicated is 1 when this broker leads and the ISR is smaller than the replica set;
// UnderMinIsr / AtMinIsr are 1 when it leads and the ISR is below / exactly the effective
// min.insync.replicas (capped at the replica count, Partition.minIsr);
// InSyncReplicasCount and ReplicasCount are the ISR and replica set sizes on the leader;
// LastStableOffsetLag is the high watermark minus the last stable offset (open transactions), 0 without
// a log. Dashboards use ReplicasCount to list topics and UnderMinIsr for alerts.

import type { MetricFamily, Sample } from "../../common/metrics/exposition.js";
import type { Partition } from "../replication/partition.js";
import type { ReplicaManager } from "../replication/replica-manager.js";

const GAUGES = [
  [
    "underreplicated",
    "1 when this broker leads and the ISR is smaller than the replica set (UnderReplicated)",
  ],
  ["insyncreplicascount", "ISR size, on the leader; 0 on a follower (InSyncReplicasCount)"],
  ["underminisr", "1 when this broker leads and the ISR is below min.insync.replicas (UnderMinIsr)"],
  ["atminisr", "1 when this broker leads and the ISR is exactly min.insync.replicas (AtMinIsr)"],
  ["replicascount", "Replica set size, on the leader; 0 on a follower (ReplicasCount)"],
  ["laststableoffsetlag", "High watermark minus last stable offset (LastStableOffsetLag)"],
] as const;

/** The six gauges' values for one partition, in GAUGES order. */
function values(p: Partition): number[] {
  const log = p.log;
  const lsoLag = log === undefined ? 0 : Number(log.highWatermark - log.lastStableOffset);
  if (!p.isLeader) return [0, 0, 0, 0, 0, lsoLag];
  const isr = p.isr.length;
  const replicas = p.assignment.length;
  const leadsWithLog = log !== undefined;
  const minIsr = p.minIsr();
  return [
    replicas - isr > 0 ? 1 : 0,
    isr,
    leadsWithLog && isr < minIsr ? 1 : 0,
    leadsWithLog && isr === minIsr ? 1 : 0,
    replicas,
    lsoLag,
  ];
}

export function partitionGauges(rm: ReplicaManager | undefined): MetricFamily[] {
  const samples: Sample[][] = GAUGES.map(() => []);
  if (rm !== undefined) {
    const partitions = rm
      .allPartitions()
      .sort((a, b) => (a.topic === b.topic ? a.partitionId - b.partitionId : a.topic < b.topic ? -1 : 1));
    for (const p of partitions) {
      const labels = { topic: p.topic, partition: String(p.partitionId) };
      values(p).forEach((value, i) => {
        samples[i].push({ labels, value });
      });
    }
  }
  return GAUGES.map(([name, help], i) => ({
    name: `kafka_cluster_partition_${name}`,
    help,
    type: "gauge",
    samples: samples[i],
  }));
}
