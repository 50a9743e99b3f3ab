// SubscriptionState: the partitions a consumer reads and, for each, its position (the offset of the next
// record poll() returns), its fetch position (the next offset to fetch, ahead of the position while
// fetched records wait in the buffer), a pending offset reset (auto.offset.reset, seekToBeginning/End)
// and the high watermark / last stable offset of the last fetch (Kafka's SubscriptionState). The
// partitions come from assign() (USER_ASSIGNED) or, for subscribe() to topics (AUTO_TOPICS) or to a
// pattern (AUTO_PATTERN: the topics whose whole name it matches, as metadata shows them), from the group
// coordinator on each rebalance; the kinds are exclusive, with Kafka's IllegalStateException. A newly
// assigned partition is "initializing" until the committed offsets were looked up for it (with a
// group.id), so they win over auto.offset.reset. A partition may be paused (pause()/resume()): it stays
// assigned, with its position, but is not fetched and poll() returns none of its records. A group
// rebalance (eager: every partition is revoked first) brings partitions back unpaused; Kafka's javadoc
// warns of the same ("Rebalance will not preserve the pause/resume state").

import type { TopicPartition } from "../../common/topic-partition.js";

export type OffsetResetStrategy = "earliest" | "latest" | "none";

/** Kafka's SubscriptionType. */
export type SubscriptionType = "NONE" | "AUTO_TOPICS" | "AUTO_PATTERN" | "USER_ASSIGNED";

/** Kafka's IllegalStateException. */
export class IllegalStateException extends Error {
  override readonly name = "IllegalStateException";
}

/** Kafka's SubscriptionState.SUBSCRIPTION_EXCEPTION_MESSAGE. */
export const SUBSCRIPTION_EXCEPTION_MESSAGE =
  "Subscription to topics, partitions and pattern are mutually exclusive";

export interface PartitionState {
  readonly topic: string;
  readonly partition: number;
  /** Next offset poll() returns; null until known (then `reset` says how to find it). */
  position: bigint | null;
  /** Next offset to fetch. */
  fetchPosition: bigint | null;
  /** A reset to perform before fetching (null when none is pending). */
  reset: OffsetResetStrategy | null;
  /** Bumped by every seek, so a fetch sent before it is ignored when it returns. */
  seekEpoch: number;
  highWatermark: bigint;
  lastStableOffset: bigint;
  logStartOffset: bigint;
  paused: boolean;
  /** Newly assigned: its committed offset (if any) is still to be looked up before the reset policy. */
  initializing: boolean;
}

export function tpKey(topic: string, partition: number): string {
  return `${topic}-${partition}`;
}

export class SubscriptionState {
  private readonly states = new Map<string, PartitionState>();
  private type: SubscriptionType = "NONE";
  private topics: ReadonlySet<string> = new Set();
  /** subscribe(pattern): matched against whole topic names. */
  private subscribedPattern: RegExp | undefined;

  constructor(private readonly defaultReset: OffsetResetStrategy) {}

  get subscriptionType(): SubscriptionType {
    return this.type;
  }

  /** True when partitions come from the group (subscribe() to topics or to a pattern). */
  hasAutoAssignedPartitions(): boolean {
    return this.type === "AUTO_TOPICS" || this.type === "AUTO_PATTERN";
  }

  /** The pattern of subscribe(pattern), undefined otherwise. */
  get pattern(): RegExp | undefined {
    return this.subscribedPattern;
  }

  /**
   * subscribe(pattern) (Kafka's AUTO_PATTERN): the subscribed topics are then the cluster's topics whose
   * whole name the pattern matches (Matcher.matches), set by changeSubscription as metadata is looked at.
   */
  subscribePattern(pattern: RegExp): void {
    this.setType("AUTO_PATTERN");
    this.subscribedPattern = new RegExp(`^(?:${pattern.source})$`, pattern.flags.replace(/[gy]/g, ""));
  }

  /** Whether `topic` is one the subscribed pattern matches. */
  matchesSubscribedPattern(topic: string): boolean {
    return this.subscribedPattern?.test(topic) ?? false;
  }

  /** The topics a pattern matched now (Kafka's changeSubscription): true when they changed. */
  changeSubscription(topics: readonly string[]): boolean {
    const next = new Set(topics);
    const changed = next.size !== this.topics.size || [...next].some((t) => !this.topics.has(t));
    this.topics = next;
    return changed;
  }

  /** The subscribed topics (empty unless subscribe() was used). */
  subscription(): ReadonlySet<string> {
    return this.topics;
  }

  private setType(type: SubscriptionType): void {
    if (this.type === "NONE") this.type = type;
    else if (this.type !== type) throw new IllegalStateException(SUBSCRIPTION_EXCEPTION_MESSAGE);
  }

  /** subscribe(topics): true when the subscription changed. */
  subscribe(topics: readonly string[]): boolean {
    this.setType("AUTO_TOPICS");
    return this.changeSubscription(topics);
  }

  /** assign(partitions) by the user. */
  assignFromUser(partitions: readonly TopicPartition[]): void {
    this.setType("USER_ASSIGNED");
    this.assignFrom(partitions);
  }

  /** unsubscribe(): no topics, no partitions, no type. */
  unsubscribe(): void {
    this.topics = new Set();
    this.subscribedPattern = undefined;
    this.states.clear();
    this.type = "NONE";
  }

  /** Replaces the assignment; kept partitions keep their positions. */
  assignFrom(partitions: readonly TopicPartition[]): void {
    const next = new Map<string, PartitionState>();
    for (const tp of partitions) {
      const k = tpKey(tp.topic, tp.partition);
      next.set(
        k,
        this.states.get(k) ?? {
          topic: tp.topic,
          partition: tp.partition,
          position: null,
          fetchPosition: null,
          reset: this.defaultReset,
          seekEpoch: 0,
          highWatermark: -1n,
          lastStableOffset: -1n,
          logStartOffset: -1n,
          paused: false,
          initializing: true,
        },
      );
    }
    this.states.clear();
    for (const [k, v] of next) this.states.set(k, v);
  }

  assignment(): TopicPartition[] {
    return [...this.states.values()].map((s) => ({ topic: s.topic, partition: s.partition }));
  }

  get(topic: string, partition: number): PartitionState | undefined {
    return this.states.get(tpKey(topic, partition));
  }

  /** The state of an assigned partition; Kafka's IllegalStateException for one that is not. */
  require(topic: string, partition: number): PartitionState {
    const s = this.get(topic, partition);
    if (s === undefined) {
      throw new IllegalStateException(`No current assignment for partition ${topic}-${partition}`);
    }
    return s;
  }

  /** pause() / resume() of one assigned partition (Kafka's SubscriptionState.pause / resume). */
  setPaused(topic: string, partition: number, paused: boolean): void {
    this.require(topic, partition).paused = paused;
  }

  /** The paused partitions among those assigned. */
  pausedPartitions(): TopicPartition[] {
    const out: TopicPartition[] = [];
    for (const s of this.states.values()) {
      if (s.paused) out.push({ topic: s.topic, partition: s.partition });
    }
    return out;
  }

  all(): IterableIterator<PartitionState> {
    return this.states.values();
  }

  seek(topic: string, partition: number, offset: bigint): void {
    const s = this.require(topic, partition);
    s.position = offset;
    s.fetchPosition = offset;
    s.reset = null;
    s.initializing = false;
    s.seekEpoch++;
  }

  requestReset(topic: string, partition: number, strategy: OffsetResetStrategy): void {
    const s = this.require(topic, partition);
    s.reset = strategy;
    s.position = null;
    s.fetchPosition = null;
    s.initializing = false;
    s.seekEpoch++;
  }

  /** Partitions whose committed offsets are still to be looked up. */
  initializing(): PartitionState[] {
    return [...this.states.values()].filter((s) => s.initializing && s.position === null);
  }

  /** The positions to commit (Kafka's allConsumed): every assigned partition with a known position. */
  allConsumed(): Array<TopicPartition & { offset: bigint }> {
    const out: Array<TopicPartition & { offset: bigint }> = [];
    for (const s of this.states.values()) {
      if (s.position !== null) out.push({ topic: s.topic, partition: s.partition, offset: s.position });
    }
    return out;
  }

  /** Partitions waiting for an offset lookup. */
  needingReset(): PartitionState[] {
    return [...this.states.values()].filter((s) => s.reset !== null && s.reset !== "none");
  }

  /** Partitions with no position and reset "none": poll() must fail (NoOffsetForPartitionException). */
  withoutPosition(): PartitionState[] {
    return [...this.states.values()].filter((s) => s.position === null && s.reset === "none");
  }
}
