// The shapes of one collector sample as the console keeps it in memory (the latest per cluster): every
// consumer group with its members and per-partition offsets and lag, every topic partition's start and
// end offsets, the brokers (and their metric counters, when the console knows their /metrics). The JSON API, /metrics and the history rows are all made from these.

export interface MemberSnapshot {
  readonly memberId: string;
  readonly clientId: string;
  readonly host: string;
  readonly assignment: ReadonlyArray<{ topic: string; partition: number }>;
}

export interface GroupPartitionSnapshot {
  readonly topic: string;
  readonly partition: number;
  /** null: a member is assigned the partition but the group has committed no offset for it. */
  readonly committedOffset: number | null;
  readonly logEndOffset: number;
  /** Log end offset − committed offset; without a committed offset, − the log start offset. */
  readonly lag: number;
  /** Age of the record at the committed offset in ms (0 without lag); null when it could not be read. */
  readonly lagMs: number | null;
  /** "clientId (host)" of the member that owns the partition, or null. */
  readonly owner: string | null;
}

export interface GroupSnapshot {
  readonly groupId: string;
  readonly state: string;
  readonly protocolType: string;
  readonly assignor: string;
  readonly coordinator: number;
  readonly members: readonly MemberSnapshot[];
  readonly partitions: readonly GroupPartitionSnapshot[];
  readonly totalLag: number;
  /**
   * Age in ms of the oldest unconsumed record over every lagging partition (0 without lag); with
   * `lagMsUnknown` > 0 the oldest of those that could be read (so at least this old); null when none could.
   */
  readonly maxLagMs: number | null;
  /** Lagging partitions whose oldest unconsumed record could not be read. */
  readonly lagMsUnknown: number;
  readonly error?: string;
}

export interface PartitionOffsets {
  readonly topic: string;
  readonly partition: number;
  readonly startOffset: number;
  readonly endOffset: number;
}

export type { BrokerCounters } from "./broker-metrics.js";

import type { BrokerCounters } from "./broker-metrics.js";

export interface ClusterSnapshot {
  readonly alias: string;
  readonly ts: number;
  /** How long the sample took, ms. */
  readonly tookMs: number;
  readonly brokers: number;
  /** Ids of the brokers the cluster describes. */
  readonly brokerIds: readonly number[];
  /** Partitions of every topic (internal ones too) with fewer in-sync replicas than replicas, and without a leader. */
  readonly underReplicated: number;
  readonly offline: number;
  /** Counters read from each broker's /metrics; empty when no metrics endpoint is configured. */
  readonly brokerCounters: readonly BrokerCounters[];
  /** Fetch requests made for lag in seconds: one per leader, plus `retries` single-partition reads. */
  readonly timestampReads: { readonly requests: number; readonly retries: number };
  readonly groups: readonly GroupSnapshot[];
  readonly offsets: readonly PartitionOffsets[];
}
