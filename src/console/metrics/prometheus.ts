// The console's /metrics in Prometheus text format under kafka_exporter's names, from the collector's
// latest samples, so kafka_exporter's Grafana dashboards work against it. Each series also carries a
// `cluster` label (the alias). Lag in seconds is kafka_consumergroup_lag_seconds (the age of the oldest
// unconsumed record), absent for a partition whose record could not be read. A partition assigned
// without a committed offset has no current_offset and its lag counts from the log start offset. kafka_exporter's
// `_sum` gauges are left out: `promtool check metrics` rejects a `_sum` suffix on a gauge, and
// `sum by (consumergroup, topic) (kafka_consumergroup_lag)` gives the same.

import type { ClusterState } from "../collector/collector.js";

interface Family {
  readonly name: string;
  readonly help: string;
  readonly lines: string[];
}

const esc = (v: string): string => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
const labels = (l: Record<string, string | number>): string =>
  `{${Object.entries(l)
    .map(([k, v]) => `${k}="${esc(String(v))}"`)
    .join(",")}}`;

export function renderMetrics(clusters: Iterable<ClusterState>): string {
  const fam = (name: string, help: string): Family => ({ name, help, lines: [] });
  const brokers = fam("kafka_brokers", "Number of Brokers in the Kafka Cluster.");
  const partitions = fam("kafka_topic_partitions", "Number of partitions for this Topic");
  const current = fam(
    "kafka_topic_partition_current_offset",
    "Current Offset of a Broker at Topic/Partition",
  );
  const oldest = fam("kafka_topic_partition_oldest_offset", "Oldest Offset of a Broker at Topic/Partition");
  const groupOffset = fam(
    "kafka_consumergroup_current_offset",
    "Current Offset of a ConsumerGroup at Topic/Partition",
  );
  const lag = fam("kafka_consumergroup_lag", "Current Approximate Lag of a ConsumerGroup at Topic/Partition");
  const lagSeconds = fam(
    "kafka_consumergroup_lag_seconds",
    "Age in seconds of the oldest unconsumed record of a ConsumerGroup at Topic/Partition",
  );
  const members = fam("kafka_consumergroup_members", "Amount of members in a consumer group");
  const up = fam("tributary_console_cluster_up", "1 when the last sample of the cluster succeeded");
  const age = fam(
    "tributary_console_sample_age_seconds",
    "Seconds since the last successful sample of the cluster",
  );

  const now = Date.now();
  for (const c of clusters) {
    const cluster = c.config.alias;
    up.lines.push(`${up.name}${labels({ cluster })} ${c.lastError === undefined && c.latest ? 1 : 0}`);
    const s = c.latest;
    if (!s) continue;
    age.lines.push(`${age.name}${labels({ cluster })} ${((now - s.ts) / 1000).toFixed(3)}`);
    brokers.lines.push(`${brokers.name}${labels({ cluster })} ${s.brokers}`);
    const perTopic = new Map<string, number>();
    for (const o of s.offsets) {
      perTopic.set(o.topic, (perTopic.get(o.topic) ?? 0) + 1);
      const l = labels({ cluster, topic: o.topic, partition: o.partition });
      if (o.endOffset >= 0) current.lines.push(`${current.name}${l} ${o.endOffset}`);
      if (o.startOffset >= 0) oldest.lines.push(`${oldest.name}${l} ${o.startOffset}`);
    }
    for (const [topic, n] of perTopic)
      partitions.lines.push(`${partitions.name}${labels({ cluster, topic })} ${n}`);
    for (const g of s.groups) {
      members.lines.push(
        `${members.name}${labels({ cluster, consumergroup: g.groupId })} ${g.members.length}`,
      );
      for (const p of g.partitions) {
        const l = labels({ cluster, consumergroup: g.groupId, topic: p.topic, partition: p.partition });
        if (p.committedOffset !== null)
          groupOffset.lines.push(`${groupOffset.name}${l} ${p.committedOffset}`);
        lag.lines.push(`${lag.name}${l} ${p.lag}`);
        if (p.lagMs !== null) lagSeconds.lines.push(`${lagSeconds.name}${l} ${(p.lagMs / 1000).toFixed(3)}`);
      }
    }
  }
  const all = [brokers, partitions, current, oldest, groupOffset, lag, lagSeconds, members, up, age];
  return `${all.map((f) => [`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} gauge`, ...f.lines].join("\n")).join("\n")}\n`;
}
