// What counts as an under-replicated or offline partition, in one place for every page and alert: the
// Overview, the Topics page and the collector's sample (which the under-replicated and offline alert
// rules read) all count over every topic the cluster describes, internal ones (__consumer_offsets,
// __transaction_state) included — as Kafka's UnderReplicatedPartitions metric and
// `topics --describe --under-replicated-partitions` do.

import type { TopicDescription } from "../../client/admin/admin-types.js";

/** Fewer in-sync replicas than replicas. */
export const isUnderReplicated = (p: { isr: readonly number[]; replicas: readonly number[] }): boolean =>
  p.isr.length < p.replicas.length;

/** No leader. */
export const isOffline = (p: { leader: number }): boolean => p.leader < 0;

export interface PartitionHealth {
  readonly partitions: number;
  readonly underReplicated: number;
  readonly offline: number;
  /** Of the under-replicated ones, how many belong to internal topics. */
  readonly internalUnderReplicated: number;
}

/** Counts over `topics`, which must be every topic of the cluster, internal ones included. */
export function partitionHealth(topics: readonly TopicDescription[]): PartitionHealth {
  let partitions = 0;
  let underReplicated = 0;
  let offline = 0;
  let internalUnderReplicated = 0;
  for (const t of topics)
    for (const p of t.partitions) {
      partitions++;
      if (isOffline(p)) offline++;
      if (isUnderReplicated(p)) {
        underReplicated++;
        if (t.isInternal) internalUnderReplicated++;
      }
    }
  return { partitions, underReplicated, offline, internalUnderReplicated };
}
