// ReplicationQuotaManager: one replication throttle of a broker (Kafka's ReplicationQuotaManager), for one
// QuotaType: LeaderReplication (bytes a leader sends to followers), FollowerReplication (bytes a follower
// fetches) or AlterLogDirsReplication (bytes copied into a `-future` log dir). Owns:
// - the bound in bytes/s (leader.replication.throttled.rate, follower.replication.throttled.rate,
//   replica.alter.log.dirs.io.max.bytes.per.second; Long.MAX_VALUE = unthrottled) and the measured rate
//   (SimpleRate over replication.quota.window.num samples of replication.quota.window.size.seconds);
// - which partitions are throttled: per topic, the partitions whose `partition:brokerId` entry in the
//   topic's leader/follower.replication.throttled.replicas names this broker, or all of them for `*`.
// Callers ask isThrottled(tp) and isQuotaExceeded() before moving a throttled partition's bytes, and
// record() the bytes they moved. Only throttled partitions' bytes are recorded (Kafka's callers do so).

import type { TopicPartition } from "../../common/topic-partition.js";
import { type RateConfig, SimpleRate } from "./simple-rate.js";

/** Kafka's QuotaType names of the replication quotas (the `type` of their byte-rate metric). */
export type ReplicationQuotaType = "LeaderReplication" | "FollowerReplication" | "AlterLogDirsReplication";

/** Kafka's ReplicationConfigs.DEFAULT_REPLICATION_THROTTLED_RATE (Long.MAX_VALUE): no throttle. */
export const DEFAULT_REPLICATION_THROTTLED_RATE = 9223372036854775807n;

/** What a replication path needs of its quota (Kafka's ReplicaQuota). */
export interface ReplicaQuota {
  isThrottled(tp: TopicPartition): boolean;
  isQuotaExceeded(): boolean;
  record(bytes: number): void;
  throttleTimeMs(): number;
}

/** Kafka's AllReplicas marker: the topic's throttled replicas are `*`. */
const ALL_PARTITIONS = "*";

export class ReplicationQuotaManager implements ReplicaQuota {
  private readonly rate: SimpleRate;
  /** Bytes/s; Infinity when unthrottled (Long.MAX_VALUE). */
  private bound = Number.POSITIVE_INFINITY;
  private boundValue = DEFAULT_REPLICATION_THROTTLED_RATE;
  private readonly throttled = new Map<string, ReadonlySet<number> | typeof ALL_PARTITIONS>();

  constructor(
    readonly type: ReplicationQuotaType,
    config: RateConfig,
    private readonly nowMs: () => number,
  ) {
    this.rate = new SimpleRate(config);
  }

  /** Sets the bound in bytes/s (Kafka's updateQuota(Quota.upperBound(rate))). */
  updateQuota(bytesPerSecond: bigint): void {
    this.boundValue = bytesPerSecond;
    this.bound =
      bytesPerSecond >= DEFAULT_REPLICATION_THROTTLED_RATE
        ? Number.POSITIVE_INFINITY
        : Number(bytesPerSecond);
  }

  /** The bound in bytes/s (Long.MAX_VALUE when unthrottled), Kafka's upperBound. */
  get upperBound(): bigint {
    return this.boundValue;
  }

  /** The measured rate in bytes/s (the byte-rate metric). */
  byteRate(): number {
    return this.rate.measure(this.nowMs());
  }

  /** Whether the measured rate is above the bound (Kafka's sensor.checkQuotas: value > bound). */
  isQuotaExceeded(): boolean {
    if (this.bound === Number.POSITIVE_INFINITY) return false;
    return this.rate.measure(this.nowMs()) > this.bound;
  }

  /**
   * How long until the measured rate is back at the bound if nothing more is recorded (Kafka's
   * QuotaUtils.throttleTime: (rate - bound) / bound × window); 0 when not exceeded.
   */
  throttleTimeMs(): number {
    if (this.bound === Number.POSITIVE_INFINITY) return 0;
    const now = this.nowMs();
    const rate = this.rate.measure(now);
    if (rate <= this.bound) return 0;
    return Math.ceil(((rate - this.bound) / this.bound) * this.rate.windowSizeMs(now));
  }

  isThrottled(tp: TopicPartition): boolean {
    const t = this.throttled.get(tp.topic);
    if (t === undefined) return false;
    return t === ALL_PARTITIONS || t.has(tp.partition);
  }

  record(bytes: number): void {
    if (bytes > 0) this.rate.record(bytes, this.nowMs());
  }

  /** Throttles these partitions of the topic on this broker (replacing what was set for it). */
  markThrottled(topic: string, partitions: readonly number[] | typeof ALL_PARTITIONS): void {
    this.throttled.set(topic, partitions === ALL_PARTITIONS ? ALL_PARTITIONS : new Set(partitions));
  }

  removeThrottle(topic: string): void {
    this.throttled.delete(topic);
  }

  /** The topics with throttled partitions here (tests, logs). */
  throttledTopics(): string[] {
    return [...this.throttled.keys()].sort();
  }
}

/**
 * The partitions of this broker named by a throttled-replicas value (Kafka's
 * TopicConfigHandler.parseThrottledPartitions): "" → none, "*" → all, else the partition of each
 * `partition:brokerId` entry whose broker is this one. The value was validated when it was set.
 */
export function parseThrottledPartitions(value: string, brokerId: number): number[] | typeof ALL_PARTITIONS {
  const v = value.trim();
  if (v === "") return [];
  if (v === ALL_PARTITIONS) return ALL_PARTITIONS;
  const out: number[] = [];
  for (const entry of v.split(",")) {
    const [p, b] = entry.split(":").map((s) => s.trim());
    if (p === undefined || b === undefined || p === "" || b === "") continue;
    if (Number(b) === brokerId) out.push(Number(p));
  }
  return out;
}
