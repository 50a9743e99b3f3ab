// The replication quotas' metrics as Kafka registers them (ReplicationQuotaManager's sensor, a Kafka
// metric named byte-rate in the group of its QuotaType, MBean kafka.server:type=LeaderReplication etc.),
// spelled as the JMX exporter spells that MBean's attribute: kafka_server_leaderreplication_byte_rate,
// kafka_server_followerreplication_byte_rate, kafka_server_alterlogdirsreplication_byte_rate (bytes/s of
// throttled partitions, over the quota's sample windows). Tributary adds the bound each enforces
// (tributary_replication_quota_bound_bytes{type}, absent while unbounded).

import type { MetricFamily } from "../../common/metrics/exposition.js";
import type { ReplicationQuotas } from "../quota/replication-quotas.js";

export function replicationQuotaGauges(quotas: ReplicationQuotas | undefined): MetricFamily[] {
  if (quotas === undefined) return [];
  const all = [quotas.leader, quotas.follower, quotas.alterLogDirs];
  const out: MetricFamily[] = all.map((q) => ({
    name: `kafka_server_${q.type.toLowerCase()}_byte_rate`,
    help: `Bytes/s of throttled partitions' replication traffic (${q.type} byte-rate)`,
    type: "gauge",
    samples: [{ value: q.byteRate() }],
  }));
  const bounded = all.filter((q) => q.upperBound < 9223372036854775807n);
  if (bounded.length > 0)
    out.push({
      name: "tributary_replication_quota_bound_bytes",
      help: "The bytes/s a replication quota allows (its throttled rate config), while one is set",
      type: "gauge",
      samples: bounded.map((q) => ({ labels: { type: q.type }, value: Number(q.upperBound) })),
    });
  return out;
}
