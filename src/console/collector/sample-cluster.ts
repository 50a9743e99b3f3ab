// Takes one sample of a cluster over the Kafka protocol: ListGroups, DescribeGroups, OffsetFetch per
// group (each group's rows: its committed partitions and its members' assigned ones, an assigned one
// without a commit lagging from the log start offset), Metadata of every topic (under-replicated and
// offline partitions counted over all of them, internal ones included: partition-health.ts), ListOffsets (earliest and latest) for every partition, and for each lagging partition
// the timestamp of the oldest unconsumed record — at the committed offset, or at the log start offset
// when that is later (older records were deleted) — for lag in seconds (record-timestamps.ts: one small
// Fetch per leader, then a Fetch of its own for each partition whose first batch did not fit; the
// requests are counted in the snapshot); and each broker's /metrics counters when the cluster's config
// says where they are.

import type { AdminClient } from "../../client/admin/admin-client.js";
import type { TopicDescription } from "../../client/admin/admin-types.js";
import { GroupAdmin, parseTpKey } from "../../client/admin/group-admin.js";
import { readRecordTimestamps, type TimestampReadStats } from "../../client/admin/record-timestamps.js";
import type { ClusterConfig } from "../console-config.js";
import { readBrokerCounters } from "./broker-metrics.js";
import { partitionHealth } from "./partition-health.js";
import type { ClusterSnapshot, GroupPartitionSnapshot, GroupSnapshot, PartitionOffsets } from "./snapshot.js";

const tp = (topic: string, partition: number): string => `${topic}-${partition}`;

async function partitionOffsets(
  admin: AdminClient,
  described: readonly TopicDescription[],
): Promise<PartitionOffsets[]> {
  const refs = described.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partition })));
  if (refs.length === 0) return [];
  const [earliest, latest] = await Promise.all([
    admin.listOffsets(refs.map((r) => ({ ...r, spec: "earliest" as const }))),
    admin.listOffsets(refs.map((r) => ({ ...r, spec: "latest" as const }))),
  ]);
  return refs.map((r, i) => ({
    topic: r.topic,
    partition: r.partition,
    startOffset: earliest[i].error ? -1 : Number(earliest[i].offset),
    endOffset: latest[i].error ? -1 : Number(latest[i].offset),
  }));
}

/**
 * A group's lag over all its partitions: the total in messages, and the age of its oldest unconsumed
 * record over every lagging partition. A lagging partition whose record could not be read is counted in
 * `lagMsUnknown`: `maxLagMs` is then the oldest of the others (a lower bound), null when none is known.
 */
export function summariseLag(
  partitions: readonly Pick<GroupPartitionSnapshot, "lag" | "lagMs">[],
): Pick<GroupSnapshot, "totalLag" | "maxLagMs" | "lagMsUnknown"> {
  const lagging = partitions.filter((p) => p.lag > 0);
  const known = lagging.flatMap((p) => (p.lagMs === null ? [] : [p.lagMs]));
  return {
    totalLag: partitions.reduce((s, p) => s + p.lag, 0),
    maxLagMs: lagging.length === 0 ? 0 : known.length === 0 ? null : Math.max(...known),
    lagMsUnknown: lagging.length - known.length,
  };
}

export async function sampleCluster(
  config: ClusterConfig,
  admin: AdminClient,
  now: () => number,
): Promise<ClusterSnapshot> {
  const alias = config.alias;
  const started = now();
  const groupAdmin = new GroupAdmin(admin.cluster);
  const [cluster, listing, topicList] = await Promise.all([
    admin.describeCluster(),
    groupAdmin.listGroups(),
    admin.listTopics({ listInternal: true }),
  ]);
  const metricsUrl = (b: { id: number; host: string }): string | undefined =>
    config.metricsUrls?.[b.id] ??
    (config.metricsPort ? `http://${b.host}:${config.metricsPort}/metrics` : undefined);
  const countersRead = Promise.all(
    cluster.brokers.flatMap((b) => {
      const url = metricsUrl(b);
      return url ? [readBrokerCounters(b.id, url)] : [];
    }),
  );
  const groupIds = listing.map((g) => g.groupId);
  const descriptions = await groupAdmin.describeGroups(groupIds);
  const committed = await Promise.all(
    groupIds.map((g) => groupAdmin.listConsumerGroupOffsets(g).catch(() => new Map())),
  );
  // Offsets of the user topics and of any topic a group uses; partition health over every topic.
  const topicNames = new Set(topicList.filter((t) => !t.isInternal).map((t) => t.name));
  for (const m of committed) for (const k of m.keys()) topicNames.add(parseTpKey(k).topic);
  for (const d of descriptions)
    for (const m of d.members) for (const a of m.assignment) topicNames.add(a.topic);
  const all = new Set([...topicList.map((t) => t.name), ...topicNames]);
  const described = await admin.describeTopics([...all].sort());
  const { underReplicated, offline } = partitionHealth(described);
  const offsets = await partitionOffsets(
    admin,
    described.filter((t) => topicNames.has(t.name)),
  );
  const endOf = new Map(offsets.map((o) => [tp(o.topic, o.partition), o.endOffset]));
  const startOf = new Map(offsets.map((o) => [tp(o.topic, o.partition), o.startOffset]));

  const lagging: Array<{ topic: string; partition: number; offset: bigint }> = [];
  const drafts = descriptions.map((d, i) => {
    const owners = new Map<string, string>();
    for (const m of d.members)
      for (const a of m.assignment) owners.set(tp(a.topic, a.partition), `${m.clientId} (${m.host})`);
    // Every partition with a committed offset, and every partition a member is assigned (Kafka's
    // consumer-groups tool lists both; an assigned partition without a commit shows "-").
    const refs = new Map<string, { topic: string; partition: number; committed: bigint | null }>();
    for (const [key, c] of committed[i] as Map<string, { offset: bigint }>) {
      const { topic, partition } = parseTpKey(key);
      if (c.offset >= 0n) refs.set(tp(topic, partition), { topic, partition, committed: c.offset });
    }
    for (const m of d.members)
      for (const a of m.assignment)
        if (!refs.has(tp(a.topic, a.partition)))
          refs.set(tp(a.topic, a.partition), { topic: a.topic, partition: a.partition, committed: null });
    const rows = [...refs.values()].map(({ topic, partition, committed: c }) => {
      const logEndOffset = endOf.get(tp(topic, partition)) ?? -1;
      // The oldest unconsumed record still in the log: records before the log start are gone. Without
      // a commit, the lag is counted from the log start (where auto.offset.reset=earliest reads from).
      const start = BigInt(Math.max(0, startOf.get(tp(topic, partition)) ?? 0));
      const readAt = c !== null && c > start ? c : start;
      const from = c === null ? Number(start) : Number(c);
      const lag = logEndOffset < 0 ? 0 : Math.max(0, logEndOffset - from);
      if (lag > 0) lagging.push({ topic, partition, offset: readAt });
      return {
        readAt,
        topic,
        partition,
        committedOffset: c === null ? null : Number(c),
        logEndOffset,
        lag,
        owner: owners.get(tp(topic, partition)) ?? null,
      };
    });
    rows.sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1));
    return { d, rows };
  });

  const unique = new Map(lagging.map((l) => [`${tp(l.topic, l.partition)}@${l.offset}`, l]));
  const timestamps = new Map<string, bigint | null>();
  const timestampReads: TimestampReadStats = { requests: 0, retries: 0 };
  // One Fetch per leader per distinct committed offset set: groups at the same offset share the read.
  const byOffset = [...unique.values()];
  for (let i = 0; i < byOffset.length; ) {
    const batch: typeof byOffset = [];
    const seen = new Set<string>();
    while (i < byOffset.length && !seen.has(tp(byOffset[i].topic, byOffset[i].partition))) {
      seen.add(tp(byOffset[i].topic, byOffset[i].partition));
      batch.push(byOffset[i++]);
    }
    const read = await readRecordTimestamps(admin.cluster, batch, undefined, timestampReads);
    for (const b of batch)
      timestamps.set(`${tp(b.topic, b.partition)}@${b.offset}`, read.get(tp(b.topic, b.partition)) ?? null);
  }
  const brokerCounters = await countersRead;
  const ts = now();

  const groups = drafts.map(({ d, rows }): GroupSnapshot => {
    const partitions = rows.map(({ readAt, ...r }): GroupPartitionSnapshot => {
      if (r.lag === 0) return { ...r, lagMs: 0 };
      const at = timestamps.get(`${tp(r.topic, r.partition)}@${readAt}`);
      return { ...r, lagMs: at == null || at < 0n ? null : Math.max(0, ts - Number(at)) };
    });
    return {
      groupId: d.groupId,
      state: d.state,
      protocolType: d.protocolType,
      assignor: d.partitionAssignor,
      coordinator: d.coordinator.nodeId,
      members: d.members.map((m) => ({
        memberId: m.memberId,
        clientId: m.clientId,
        host: m.host,
        assignment: m.assignment,
      })),
      partitions,
      ...summariseLag(partitions),
      ...(d.error ? { error: d.error.message } : {}),
    };
  });
  return {
    alias,
    ts,
    tookMs: ts - started,
    brokers: cluster.brokers.length,
    brokerIds: cluster.brokers.map((b) => b.id),
    underReplicated,
    offline,
    brokerCounters,
    timestampReads,
    groups,
    offsets,
  };
}
