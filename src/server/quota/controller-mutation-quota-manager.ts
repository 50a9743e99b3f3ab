// ControllerMutationQuotaManager: Kafka's controller_mutation_rate (KIP-599) — the partitions a user /
// client id may create or delete per second through CreateTopics, CreatePartitions and DeleteTopics.
// The quota resolution is ClientQuotaManager's; the measure is Kafka's TokenBucket: a bucket of
// quota × quota.window.num × quota.window.size.seconds tokens (full at first), refilled at the quota
// per second, each partition mutated taking one token (the bucket may go negative).
//
// Per request (ControllerMutationQuota):
// - strict (CreateTopics v6+, CreatePartitions v3+, DeleteTopics v5+): a topic asked for while the bucket
//   is negative is refused with THROTTLING_QUOTA_EXCEEDED and the time until it is back at 0; once one is
//   refused, so are the request's later topics; mutations while it is positive all pass.
// - permissive (older versions): every topic passes; the request is throttled when the bucket went
//   negative.
// The request's throttle time is −tokens / quota × 1000, less the time since it was computed.

import type { MetricFamily } from "../../common/metrics/exposition.js";
import type { Time } from "../../common/time.js";
import { KafkaError } from "../../protocol/errors.js";
import { ClientQuotaManager, type QuotaMetricTags } from "./client-quota-manager.js";
import type { SampleConfig } from "./sampled-rate.js";

/** A request's view of its client's controller mutation quota. */
export interface ControllerMutationQuota {
  /** Whether a topic of this request was refused already (strict quotas only). */
  readonly isExceeded: boolean;
  /** Before mutating a topic: throws THROTTLING_QUOTA_EXCEEDED when the strict quota is exhausted. */
  checkBeforeMutation(): void;
  /** `permits` partitions were created or deleted. */
  record(permits: number): void;
  /** The throttle time (ms) this request earned, as of now. */
  throttleTime(): number;
}

interface Bucket {
  readonly tags: QuotaMetricTags;
  tokens: number;
  lastUpdateMs: number;
}

export class ControllerMutationQuotaManager extends ClientQuotaManager {
  private readonly buckets = new Map<string, Bucket>();

  constructor(config: SampleConfig, time: Time) {
    super("ControllerMutation", config, time);
  }

  /** The quota of a request (undefined when no controller mutation quota applies to its client). */
  newQuotaFor(sanitizedUser: string, clientId: string, strict: boolean): ControllerMutationQuota | undefined {
    if (!this.quotasEnabled) return undefined;
    const tags = this.quotaMetricTags(sanitizedUser, clientId);
    if (this.quotaLimit(tags) === undefined) return undefined;
    const key = `${tags.user}\u0000${tags.clientId}`;
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      bucket = { tags, tokens: Number.POSITIVE_INFINITY, lastUpdateMs: 0 };
      this.buckets.set(key, bucket);
    }
    const b = bucket;
    const time = this.time;
    const manager = this;
    let lastThrottleMs = 0;
    let lastRecordedMs = 0;
    const violated = (now: number): void => {
      const quota = manager.quotaLimit(b.tags) ?? Number.POSITIVE_INFINITY;
      lastThrottleMs = Math.round((-b.tokens / quota) * 1000);
      lastRecordedMs = now;
      manager.recordThrottle(sanitizedUser, clientId, lastThrottleMs, now);
    };
    return {
      get isExceeded() {
        return strict && lastThrottleMs > 0;
      },
      checkBeforeMutation(): void {
        if (!strict) return;
        const now = time.milliseconds();
        if (lastThrottleMs === 0 && manager.refill(b, now) >= 0) return;
        if (lastThrottleMs === 0) violated(now);
        throw new KafkaError("THROTTLING_QUOTA_EXCEEDED", "The throttling quota has been exceeded.");
      },
      record(permits: number): void {
        const now = time.milliseconds();
        b.tokens = manager.refill(b, now) - permits;
        if (!strict && b.tokens < 0) violated(now);
      },
      throttleTime(): number {
        return Math.max(0, lastThrottleMs - (time.milliseconds() - lastRecordedMs));
      },
    };
  }

  /** TokenBucket.refill: the tokens now (at most the burst). */
  private refill(b: Bucket, nowMs: number): number {
    const quota = this.quotaLimit(b.tags) ?? Number.POSITIVE_INFINITY;
    const burst = this.config.samples * (this.config.windowMs / 1000) * quota;
    b.tokens = Math.min(burst, b.tokens + (quota * (nowMs - b.lastUpdateMs)) / 1000);
    b.lastUpdateMs = nowMs;
    return b.tokens;
  }

  /** kafka.server:type=ControllerMutation tokens and throttle-time, as kafka_server_quota_* gauges. */
  override collect(): MetricFamily[] {
    const now = this.time.milliseconds();
    const families = super.collect().filter((f) => f.name === "kafka_server_quota_throttle_time");
    families.push({
      name: "kafka_server_quota_tokens",
      help: "Tracking remaining tokens in the token bucket per user/client-id",
      type: "gauge",
      samples: [...this.buckets.values()].map((b) => ({
        labels: { resource: this.quotaType, user: b.tags.user, clientId: b.tags.clientId },
        value: this.refill(b, now),
      })),
    });
    return families;
  }
}

/**
 * Kafka's per-topic use of a controller mutation quota (ZkAdminManager createTopics / deleteTopics /
 * createPartitions): each item in turn is refused with THROTTLING_QUOTA_EXCEEDED when the quota is
 * exhausted, else mutated alone and its partitions counted once it succeeded (not for validate_only).
 */
export async function mutateWithQuota<T, R extends { readonly error: KafkaError | null }>(
  quota: ControllerMutationQuota,
  items: readonly T[],
  mutate: (item: T) => Promise<R>,
  permits: (item: T, result: R) => number,
  refused: (item: T, error: KafkaError) => R,
  validateOnly: boolean,
): Promise<R[]> {
  const out: R[] = [];
  for (const item of items) {
    try {
      quota.checkBeforeMutation();
    } catch (e) {
      if (!(e instanceof KafkaError)) throw e;
      out.push(refused(item, e));
      continue;
    }
    const r = await mutate(item);
    if (r.error === null && !validateOnly) quota.record(permits(item, r));
    out.push(r);
  }
  return out;
}
