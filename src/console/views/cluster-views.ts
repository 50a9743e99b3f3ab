// What the overview and topic pages show, asked of the cluster when the page asks (Metadata,
// DescribeCluster, DescribeLogDirs, ListOffsets): brokers with controller, rack, leaders, replicas and
// disk use per log dir, topic and partition counts, under-replicated and offline partitions; per topic
// its partitions with leader, replicas, ISR and offsets.

import type { AdminClient } from "../../client/admin/admin-client.js";
import type { TopicDescription } from "../../client/admin/admin-types.js";
import { isOffline, isUnderReplicated, partitionHealth } from "../collector/partition-health.js";
import { HttpError } from "../http/router.js";

export interface PartitionView {
  readonly partition: number;
  readonly leader: number;
  readonly replicas: readonly number[];
  readonly isr: readonly number[];
  readonly offline: readonly number[];
  readonly underReplicated: boolean;
  readonly startOffset: number;
  readonly endOffset: number;
}

/** Per broker: its log dirs with used (replica bytes), total and usable bytes; replicas it holds. */
async function logDirs(admin: AdminClient) {
  const dirs = await admin.describeLogDirs().catch(() => []);
  const out = new Map<
    number,
    {
      replicas: number;
      dirs: Array<{
        path: string;
        usedBytes: number;
        totalBytes: number;
        usableBytes: number;
        error: string | null;
      }>;
    }
  >();
  for (const b of dirs)
    out.set(b.brokerId, {
      replicas: b.logDirs.reduce((n, d) => n + d.replicas.filter((r) => !r.isFuture).length, 0),
      dirs: b.logDirs.map((d) => ({
        path: d.path,
        usedBytes: d.replicas.reduce((n, r) => n + Number(r.size), 0),
        totalBytes: Number(d.totalBytes),
        usableBytes: Number(d.usableBytes),
        error: d.error ? d.error.message : null,
      })),
    });
  return out;
}

export async function overview(admin: AdminClient) {
  const [cluster, topics, disks] = await Promise.all([
    admin.describeCluster(),
    admin.listTopics({ listInternal: true }),
    logDirs(admin),
  ]);
  const described = await admin.describeTopics(topics.map((t) => t.name));
  const partitions = described.flatMap((t) => t.partitions);
  const leaders = new Map<number, number>();
  for (const p of partitions) if (p.leader >= 0) leaders.set(p.leader, (leaders.get(p.leader) ?? 0) + 1);
  return {
    clusterId: cluster.clusterId,
    controllerId: cluster.controllerId,
    brokers: cluster.brokers.map((b) => ({
      ...b,
      controller: b.id === cluster.controllerId,
      leaders: leaders.get(b.id) ?? 0,
      replicas: disks.get(b.id)?.replicas ?? null,
      logDirs: disks.get(b.id)?.dirs ?? [],
    })),
    topics: topics.filter((t) => !t.isInternal).length,
    internalTopics: topics.filter((t) => t.isInternal).length,
    // Counted as the collector counts them for the alert rules (partition-health.ts).
    ...partitionHealth(described),
  };
}

async function partitionViews(admin: AdminClient, t: TopicDescription): Promise<PartitionView[]> {
  const refs = t.partitions.map((p) => ({ topic: t.name, partition: p.partition }));
  const [earliest, latest] = await Promise.all([
    admin.listOffsets(refs.map((r) => ({ ...r, spec: "earliest" as const }))),
    admin.listOffsets(refs.map((r) => ({ ...r, spec: "latest" as const }))),
  ]);
  return t.partitions
    .map((p, i) => ({
      partition: p.partition,
      leader: p.leader,
      replicas: p.replicas,
      isr: p.isr,
      offline: p.offlineReplicas,
      underReplicated: isUnderReplicated(p),
      startOffset: earliest[i].error ? -1 : Number(earliest[i].offset),
      endOffset: latest[i].error ? -1 : Number(latest[i].offset),
    }))
    .sort((a, b) => a.partition - b.partition);
}

/** Bytes on disk of each partition's leader replica, by "topic-partition" (DescribeLogDirs). */
async function leaderSizes(admin: AdminClient): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const leaders = new Map<string, number>();
  for (const t of admin.cluster.metadata.topics.values())
    for (const p of t.partitions) leaders.set(`${t.name}-${p.partition}`, p.leader);
  for (const b of await admin.describeLogDirs().catch(() => []))
    for (const d of b.logDirs)
      for (const r of d.replicas) {
        const k = `${r.topic}-${r.partition}`;
        if (!r.isFuture && leaders.get(k) === b.brokerId) out.set(k, Number(r.size));
      }
  return out;
}

/**
 * Skew as EFAK shows it: the share (%) of the brokers holding a replica of the topic that hold more of
 * its replicas than an even spread over those brokers would give them. Brokers that hold none of it —
 * one that was decommissioned, or that has left — do not count, so a topic spread evenly over the
 * brokers that hold it has no skew.
 */
export function replicaSkew(replicaBrokers: readonly number[]): number {
  if (replicaBrokers.length === 0) return 0;
  const per = new Map<number, number>();
  for (const b of replicaBrokers) per.set(b, (per.get(b) ?? 0) + 1);
  const even = Math.ceil(replicaBrokers.length / per.size);
  const over = [...per.values()].filter((n) => n > even).length;
  return Math.round((over * 100) / per.size);
}

export async function topicList(admin: AdminClient) {
  const topics = await admin.listTopics({ listInternal: true });
  const described = (await admin.describeTopics(topics.map((t) => t.name))).filter((t) => !t.error);
  const [views, sizes] = await Promise.all([
    Promise.all(described.map((t) => partitionViews(admin, t))),
    leaderSizes(admin),
  ]);
  return described.map((t, i) => {
    const bytes = t.partitions.map((p) => sizes.get(`${t.name}-${p.partition}`));
    return {
      name: t.name,
      internal: t.isInternal,
      partitions: t.partitions.length,
      replicationFactor: Math.max(0, ...t.partitions.map((p) => p.replicas.length)),
      underReplicated: t.partitions.filter(isUnderReplicated).length,
      offline: t.partitions.filter(isOffline).length,
      messages: views[i].reduce((s, p) => s + Math.max(0, p.endOffset - Math.max(0, p.startOffset)), 0),
      /** Bytes of the leader replicas; null when a broker did not say. */
      sizeBytes: bytes.some((b) => b === undefined) ? null : bytes.reduce((s: number, b) => s + (b ?? 0), 0),
      skewPercent: replicaSkew(t.partitions.flatMap((p) => p.replicas)),
    };
  });
}

export async function topicDetail(admin: AdminClient, name: string) {
  const [t] = await admin.describeTopics([name]);
  if (t.error) throw new HttpError(404, `topic '${name}': ${t.error.message}`);
  return {
    name: t.name,
    topicId: t.topicId,
    internal: t.isInternal,
    partitions: await partitionViews(admin, t),
  };
}
