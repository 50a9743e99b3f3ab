// KafkaConsumer: Tributary's consumer client (Kafka's KafkaConsumer): assign() or, with a group.id,
// subscribe() (partitions from the group's rebalances, through the ConsumerCoordinator), seek(),
// seekToBeginning()/seekToEnd(), position(), beginningOffsets()/endOffsets()/offsetsForTimes(),
// pause()/resume()/paused(), poll(timeoutMs) → records, wakeup(), commitSync()/commitAsync()/committed(),
// groupMetadata(), unsubscribe(), close() (commits with enable.auto.commit, then leaves the group). A
// partition without a position starts at its committed offset (with a group.id), else per
// auto.offset.reset (ListOffsets earliest/latest; "none" makes poll() fail); the Fetcher does the
// fetching in incremental fetch sessions.
//
//   const consumer = new KafkaConsumer({ "bootstrap.servers": "127.0.0.1:9092", "group.id": "g" });
//   consumer.subscribe(["orders"]);                      // or consumer.assign([{ topic: "orders", partition: 0 }])
//   const records = await consumer.poll(1000);
//   await consumer.commitSync();
//   await consumer.close();

import type { TopicPartition } from "../../common/topic-partition.js";
import { Apis } from "../../protocol/generated/api-table.js";
import { ErrorCode } from "../../protocol/generated/errors.js";
import { KafkaClientError } from "../errors.js";
import { ClusterClient } from "../network/cluster-client.js";
import { type ConsumerConfig, consumerConfigFromProperties } from "./consumer-config.js";
import {
  ConsumerCoordinator,
  type ConsumerGroupMetadata,
  type ConsumerRebalanceListener,
  type OffsetAndMetadata,
  type TopicPartitionOffset,
} from "./consumer-coordinator.js";
import { type ConsumerRecord, Fetcher } from "./fetcher.js";
import {
  IllegalStateException,
  type OffsetResetStrategy,
  SUBSCRIPTION_EXCEPTION_MESSAGE,
  SubscriptionState,
} from "./subscription-state.js";

export {
  CommitFailedException,
  type ConsumerGroupMetadata,
  type ConsumerRebalanceListener,
  type OffsetAndMetadata,
  type TopicPartitionOffset,
} from "./consumer-coordinator.js";
export type { ConsumerRecord } from "./fetcher.js";
export { IllegalStateException } from "./subscription-state.js";

/** Kafka's IllegalArgumentException (a bad argument, e.g. an empty topic name). */
export class IllegalArgumentException extends Error {
  override readonly name = "IllegalArgumentException";
}

/** Kafka's WakeupException: poll() was interrupted by wakeup(). */
export class WakeupException extends Error {
  override readonly name = "WakeupException";
}

const WOKEN: unique symbol = Symbol("woken");

/** Kafka's InvalidGroupIdException message for group APIs used without a group.id. */
const NO_GROUP_ID =
  "To use the group management or offset commit APIs, you must provide a valid group.id in the consumer configuration.";

/** ListOffsets' special timestamps. */
export const LATEST_TIMESTAMP = -1n;
export const EARLIEST_TIMESTAMP = -2n;

/** What offsetsForTimes finds for a partition (Kafka's OffsetAndTimestamp). */
export interface OffsetAndTimestamp {
  offset: bigint;
  timestamp: bigint;
  /** The leader epoch of the record at that offset, -1 when the broker did not say. */
  leaderEpoch: number;
}

export class KafkaConsumer {
  private wakeupRequested = false;
  private wakeupWaiters: Array<() => void> = [];
  readonly config: ConsumerConfig;
  private readonly cluster: ClusterClient;
  private readonly subscriptions: SubscriptionState;
  private readonly fetcher: Fetcher;
  private readonly coordinator: ConsumerCoordinator | null;
  private closed = false;

  constructor(config: ConsumerConfig | Readonly<Record<string, string>>) {
    this.config =
      "bootstrapServers" in config && Array.isArray(config.bootstrapServers)
        ? (config as ConsumerConfig)
        : consumerConfigFromProperties(config as Record<string, string>);
    this.cluster = new ClusterClient({
      bootstrapServers: this.config.bootstrapServers,
      clientId: this.config.clientId || "consumer-1",
      requestTimeoutMs: this.config.requestTimeoutMs,
      ssl: this.config.ssl,
      sasl: this.config.sasl,
      retryBackoffMs: this.config.retryBackoffMs,
      defaultApiTimeoutMs: this.config.defaultApiTimeoutMs,
    });
    this.subscriptions = new SubscriptionState(this.config.autoOffsetReset);
    this.fetcher = new Fetcher(this.config, this.cluster, this.subscriptions);
    this.coordinator =
      this.config.groupId === null
        ? null
        : new ConsumerCoordinator(this.config, this.cluster, this.subscriptions, (removed) => {
            for (const tp of removed) this.fetcher.clearBufferedFor(tp.topic, tp.partition);
          });
  }

  /**
   * Subscribes to topics: the group assigns their partitions on the next poll() (replaces an earlier
   * subscription; an empty list unsubscribes). Or to a pattern (Kafka's subscribe(Pattern)): every topic
   * whose whole name it matches, internal topics aside with exclude.internal.topics, looked up again every
   * metadata.max.age.ms so new matching topics join the subscription. Needs group.id; exclusive with
   * assign() and with the other kind of subscription.
   */
  async subscribe(topics: readonly string[] | RegExp, listener?: ConsumerRebalanceListener): Promise<void> {
    this.checkOpen();
    if (topics instanceof RegExp) {
      const coordinator = this.subscribingCoordinator("AUTO_TOPICS");
      coordinator.setListener(listener);
      this.subscriptions.subscribePattern(topics);
      coordinator.requestPatternUpdate();
      return;
    }
    if (topics.length === 0) {
      await this.unsubscribe();
      return;
    }
    for (const t of topics) {
      if (typeof t !== "string" || t.trim() === "")
        throw new IllegalArgumentException(
          "Topic collection to subscribe to cannot contain null or empty topic",
        );
    }
    const coordinator = this.subscribingCoordinator("AUTO_PATTERN");
    coordinator.setListener(listener);
    const wanted = new Set(topics);
    for (const tp of this.subscriptions.assignment()) {
      if (!wanted.has(tp.topic)) this.fetcher.clearBufferedFor(tp.topic, tp.partition);
    }
    if (this.subscriptions.subscribe(topics)) coordinator.requestRejoin();
  }

  /**
   * The group coordinator for a subscribe(); Kafka's IllegalStateException when partitions were assigned
   * by hand or the other kind of subscription (`other`) is in place.
   */
  private subscribingCoordinator(other: "AUTO_TOPICS" | "AUTO_PATTERN"): ConsumerCoordinator {
    const coordinator = this.requireGroup();
    const type = this.subscriptions.subscriptionType;
    if (type === "USER_ASSIGNED" || type === other)
      throw new IllegalStateException(SUBSCRIPTION_EXCEPTION_MESSAGE);
    return coordinator;
  }

  /** The subscribed topics (Kafka's subscription()). */
  subscription(): string[] {
    return [...this.subscriptions.subscription()];
  }

  /** Drops the subscription (leaving the group) or the assignment. */
  async unsubscribe(): Promise<void> {
    this.checkOpen();
    for (const tp of this.subscriptions.assignment()) this.fetcher.clearBufferedFor(tp.topic, tp.partition);
    if (this.coordinator && this.subscriptions.hasAutoAssignedPartitions())
      await this.coordinator.unsubscribe();
    this.subscriptions.unsubscribe();
  }

  /**
   * Commits offsets (default: the positions of every assigned partition, i.e. what poll() returned),
   * retrying until default.api.timeout.ms. Throws CommitFailedException when the group rebalanced.
   */
  async commitSync(offsets?: readonly TopicPartitionOffset[], timeoutMs?: number): Promise<void> {
    this.checkOpen();
    const coordinator = this.requireGroup();
    await coordinator.commitOffsetsSync(
      offsets ?? this.subscriptions.allConsumed(),
      timeoutMs ?? this.config.defaultApiTimeoutMs,
    );
  }

  /** Commits without waiting (no retry); `callback` gets the error, if any, as Kafka's OffsetCommitCallback. */
  commitAsync(
    offsets?: readonly TopicPartitionOffset[],
    callback?: (offsets: readonly TopicPartitionOffset[], error: Error | undefined) => void,
  ): void {
    this.checkOpen();
    const coordinator = this.requireGroup();
    const list = offsets ?? this.subscriptions.allConsumed();
    coordinator.commitOffsetsAsync(list, (e) => callback?.(list, e));
  }

  /** The group's committed offsets for these partitions (null where none), keyed `topic-partition`. */
  async committed(
    partitions: readonly TopicPartition[],
    timeoutMs = this.config.defaultApiTimeoutMs,
  ): Promise<Map<string, OffsetAndMetadata | null>> {
    this.checkOpen();
    const found = await this.requireGroup().fetchCommittedOffsets(partitions, timeoutMs);
    return new Map(
      partitions.map((tp) => [
        `${tp.topic}-${tp.partition}`,
        found.get(`${tp.topic}-${tp.partition}`) ?? null,
      ]),
    );
  }

  /** Kafka's groupMetadata(): group id, generation, member id, group.instance.id. */
  groupMetadata(): ConsumerGroupMetadata {
    this.checkOpen();
    return this.requireGroup().groupMetadata();
  }

  private requireGroup(): ConsumerCoordinator {
    if (this.coordinator === null) throw KafkaClientError.of("INVALID_GROUP_ID", NO_GROUP_ID);
    return this.coordinator;
  }

  /** Number of partitions of a topic (Kafka's partitionsFor). Throws UNKNOWN_TOPIC_OR_PARTITION. */
  async partitionsFor(topic: string): Promise<number[]> {
    const t = await this.cluster.topicMetadata(topic, true);
    return t.partitions.map((p) => p.partition);
  }

  /** Reads exactly these partitions (replaces any earlier assignment). */
  assign(partitions: readonly TopicPartition[]): void {
    this.checkOpen();
    if (this.subscriptions.hasAutoAssignedPartitions())
      throw new IllegalStateException(SUBSCRIPTION_EXCEPTION_MESSAGE);
    const before = this.subscriptions.assignment();
    if (partitions.length === 0) {
      this.subscriptions.unsubscribe();
    } else {
      this.subscriptions.assignFromUser(partitions);
    }
    for (const tp of before) {
      if (!this.subscriptions.get(tp.topic, tp.partition))
        this.fetcher.clearBufferedFor(tp.topic, tp.partition);
    }
  }

  assignment(): TopicPartition[] {
    return this.subscriptions.assignment();
  }

  /**
   * Stops fetching from these partitions: poll() returns none of their records until resume(); records
   * already fetched for them wait in the buffer. Causes no rebalance, and a rebalance unpauses what it
   * assigns again (Kafka's pause). Throws IllegalStateException "No current assignment for partition …"
   * for a partition not assigned (those before it in the list are paused, as in Kafka).
   */
  pause(partitions: readonly TopicPartition[]): void {
    this.checkOpen();
    for (const tp of partitions) this.subscriptions.setPaused(tp.topic, tp.partition, true);
  }

  /** Fetches these paused partitions again (Kafka's resume); IllegalStateException as pause() throws. */
  resume(partitions: readonly TopicPartition[]): void {
    this.checkOpen();
    for (const tp of partitions) this.subscriptions.setPaused(tp.topic, tp.partition, false);
    // A poll() waiting meanwhile (another async caller) gets their buffered records at once.
    this.fetcher.wakeup();
  }

  /** The partitions paused with pause() and still assigned (Kafka's paused()). */
  paused(): TopicPartition[] {
    return this.subscriptions.pausedPartitions();
  }

  /** The next poll() returns records from `offset` of this partition. */
  seek(tp: TopicPartition, offset: bigint | number): void {
    this.checkOpen();
    this.subscriptions.seek(tp.topic, tp.partition, BigInt(offset));
    this.fetcher.clearBufferedFor(tp.topic, tp.partition);
  }

  /** Positions at the log start offset (all assigned partitions when none given). */
  seekToBeginning(partitions: readonly TopicPartition[] = this.assignment()): void {
    this.resetTo(partitions, "earliest");
  }

  /** Positions at the log end (the last stable offset with read_committed). */
  seekToEnd(partitions: readonly TopicPartition[] = this.assignment()): void {
    this.resetTo(partitions, "latest");
  }

  private resetTo(partitions: readonly TopicPartition[], strategy: OffsetResetStrategy): void {
    this.checkOpen();
    for (const tp of partitions) {
      this.subscriptions.requestReset(tp.topic, tp.partition, strategy);
      this.fetcher.clearBufferedFor(tp.topic, tp.partition);
    }
  }

  /** The offset of the next record poll() returns for this partition (looking it up when needed). */
  async position(tp: TopicPartition): Promise<bigint> {
    this.checkOpen();
    const s = this.subscriptions.require(tp.topic, tp.partition);
    if (s.position === null) await this.updateFetchPositions();
    if (s.position === null) {
      throw KafkaClientError.of(
        "OFFSET_OUT_OF_RANGE",
        `Undefined offset with no reset policy for partitions: [${tp.topic}-${tp.partition}]`,
      );
    }
    return s.position;
  }

  /** Log start offsets (ListOffsets earliest). */
  beginningOffsets(partitions: readonly TopicPartition[]): Promise<Map<string, bigint>> {
    return this.listOffsets(partitions, EARLIEST_TIMESTAMP);
  }

  /** Log end offsets (ListOffsets latest; the last stable offset with read_committed). */
  endOffsets(partitions: readonly TopicPartition[]): Promise<Map<string, bigint>> {
    return this.listOffsets(partitions, LATEST_TIMESTAMP);
  }

  /**
   * Per partition, the earliest offset whose record timestamp is at or after the given one, with that
   * record's timestamp (Kafka's offsetsForTimes); null for a partition with no such record (all older, or
   * none visible yet). Keyed `topic-partition`. Kafka's IllegalArgumentException for a negative time.
   */
  async offsetsForTimes(
    targets: ReadonlyArray<TopicPartition & { readonly timestamp: bigint | number }>,
  ): Promise<Map<string, OffsetAndTimestamp | null>> {
    this.checkOpen();
    for (const t of targets) {
      if (typeof t.timestamp === "number" && !Number.isSafeInteger(t.timestamp)) {
        throw new IllegalArgumentException(
          `The target time for partition ${t.topic}-${t.partition} is ${t.timestamp}: expected milliseconds since the epoch, an integer.`,
        );
      }
      if (BigInt(t.timestamp) < 0n) {
        throw new IllegalArgumentException(
          `The target time for partition ${t.topic}-${t.partition} is ${t.timestamp}. The target time cannot be negative.`,
        );
      }
    }
    const found = await this.listOffsetsAt(targets.map((t) => ({ ...t, timestamp: BigInt(t.timestamp) })));
    const out = new Map<string, OffsetAndTimestamp | null>();
    for (const t of targets) {
      const f = found.get(`${t.topic}-${t.partition}`);
      out.set(`${t.topic}-${t.partition}`, f === undefined || f.offset < 0n ? null : f);
    }
    return out;
  }

  /** The high watermark of the last fetch of a partition (-1 before one). */
  highWatermark(tp: TopicPartition): bigint {
    return this.subscriptions.require(tp.topic, tp.partition).highWatermark;
  }

  /**
   * Kafka's wakeup(): a poll() waiting for records or for its group join throws WakeupException at once;
   * with none waiting, the next poll() does. Safe to call from anywhere (a signal handler, a timer) to end
   * a poll loop; the consumer stays usable.
   */
  wakeup(): void {
    this.wakeupRequested = true;
    this.fetcher.wakeup();
    for (const w of this.wakeupWaiters.splice(0)) w();
  }

  private maybeTriggerWakeup(): void {
    if (!this.wakeupRequested) return;
    this.wakeupRequested = false;
    throw new WakeupException();
  }

  /** `p`, or WOKEN when wakeup() comes first (`p` then goes on; its error surfaces on a later poll). */
  private async untilWakeup<T>(p: Promise<T>): Promise<T | typeof WOKEN> {
    if (this.wakeupRequested) {
      p.catch(() => undefined);
      return WOKEN;
    }
    let wake: (() => void) | undefined;
    const woken = new Promise<typeof WOKEN>((resolve) => {
      wake = () => resolve(WOKEN);
      this.wakeupWaiters.push(wake);
    });
    try {
      const r = await Promise.race([p, woken]);
      if (r === WOKEN) p.catch(() => undefined);
      return r;
    } finally {
      const at = wake === undefined ? -1 : this.wakeupWaiters.indexOf(wake);
      if (at >= 0) this.wakeupWaiters.splice(at, 1);
    }
  }

  /**
   * Records fetched since the last poll, at most max.poll.records, waiting up to `timeoutMs` for some.
   * Throws the errors Kafka's poll throws (OFFSET_OUT_OF_RANGE with auto.offset.reset=none, …), and
   * WakeupException after wakeup().
   */
  async poll(timeoutMs: number): Promise<ConsumerRecord[]> {
    this.checkOpen();
    const deadline = Date.now() + Math.max(0, timeoutMs);
    if (this.subscriptions.subscriptionType === "NONE")
      throw new IllegalStateException("Consumer is not subscribed to any topics or assigned any partitions");
    // Let the network run first: while records are buffered, every await below resolves at once, so a
    // poll loop would otherwise never let the socket's data events in, and the next fetch response would
    // sit in the kernel's buffers until the buffered records ran out (Kafka's poll also does its network
    // I/O on each call).
    await new Promise((resolve) => setImmediate(resolve));
    for (;;) {
      this.maybeTriggerWakeup();
      const error = this.fetcher.takeError();
      if (error) throw error;
      if (this.coordinator) {
        // Joins (or rejoins) the group when needed; a join longer than the poll timeout goes on.
        const ready = await this.untilWakeup(this.coordinator.poll(deadline));
        this.maybeTriggerWakeup();
        if (!ready) return [];
      }
      await this.updateFetchPositions();
      const records = this.fetcher.collect(this.config.maxPollRecords);
      // Keep the next fetch going while the caller works on these records.
      await this.refreshStaleMetadata();
      this.fetcher.sendFetches();
      if (records.length > 0) return records;
      const remaining = deadline - Date.now();
      if (remaining <= 0 || this.closed) return [];
      await this.fetcher.waitForData(Math.min(remaining, this.config.retryBackoffMs * 5));
    }
  }

  async close(timeoutMs = 30_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.coordinator?.close(timeoutMs).catch(() => undefined);
    this.fetcher.close();
    await this.cluster.close();
  }

  private checkOpen(): void {
    if (this.closed) throw new KafkaClientError(-1, "This consumer has already been closed.");
  }

  private async refreshStaleMetadata(): Promise<void> {
    const stale = this.fetcher.staleTopics;
    const topics = new Set(this.assignment().map((tp) => tp.topic));
    let missing = false;
    for (const t of topics) if (this.cluster.topic(t) === undefined) missing = true;
    if (stale.size === 0 && !missing) return;
    const wanted = [...new Set([...stale, ...topics])];
    stale.clear();
    try {
      await this.cluster.refreshMetadata(wanted);
    } catch {
      // retried on the next poll
    }
  }

  /** Runs the pending offset resets (ListOffsets) and reports partitions with no position and no policy. */
  private async updateFetchPositions(): Promise<void> {
    if (this.coordinator) {
      await this.coordinator.refreshCommittedOffsetsIfNeeded(this.config.defaultApiTimeoutMs);
    } else {
      for (const s of this.subscriptions.initializing()) s.initializing = false;
    }
    const none = this.subscriptions.withoutPosition();
    if (none.length > 0) {
      throw KafkaClientError.of(
        "OFFSET_OUT_OF_RANGE",
        `Undefined offset with no reset policy for partitions: [${none.map((s) => `${s.topic}-${s.partition}`).join(", ")}]`,
      );
    }
    const needing = this.subscriptions.needingReset();
    if (needing.length === 0) return;
    const groups = new Map<OffsetResetStrategy, typeof needing>();
    for (const s of needing) {
      const l = groups.get(s.reset!);
      if (l) l.push(s);
      else groups.set(s.reset!, [s]);
    }
    for (const [strategy, states] of groups) {
      const epochs = states.map((s) => s.seekEpoch);
      const offsets = await this.listOffsets(
        states.map((s) => ({ topic: s.topic, partition: s.partition })),
        strategy === "earliest" ? EARLIEST_TIMESTAMP : LATEST_TIMESTAMP,
      );
      states.forEach((s, i) => {
        const off = offsets.get(`${s.topic}-${s.partition}`);
        if (off === undefined || s.seekEpoch !== epochs[i] || s.reset !== strategy) return;
        this.subscriptions.seek(s.topic, s.partition, off);
      });
    }
  }

  /** ListOffsets of one timestamp for partitions. Keyed `topic-partition`. */
  private async listOffsets(
    partitions: readonly TopicPartition[],
    timestamp: bigint,
  ): Promise<Map<string, bigint>> {
    const found = await this.listOffsetsAt(partitions.map((tp) => ({ ...tp, timestamp })));
    const out = new Map<string, bigint>();
    for (const [k, v] of found) out.set(k, v.offset);
    return out;
  }

  /** ListOffsets, to the partitions' leaders, retried on retriable errors. Keyed `topic-partition`. */
  private async listOffsetsAt(
    targets: ReadonlyArray<TopicPartition & { readonly timestamp: bigint }>,
  ): Promise<Map<string, OffsetAndTimestamp>> {
    const out = new Map<string, OffsetAndTimestamp>();
    const timestamps = new Map(targets.map((t) => [`${t.topic}-${t.partition}`, t.timestamp]));
    let todo: TopicPartition[] = targets.map((t) => ({ topic: t.topic, partition: t.partition }));
    await this.cluster.withRetries("ListOffsets", async () => {
      const missingLeader = todo.some((tp) => this.cluster.leaderFor(tp.topic, tp.partition) === undefined);
      if (missingLeader) await this.cluster.refreshMetadata([...new Set(todo.map((tp) => tp.topic))]);
      const byNode = new Map<number, TopicPartition[]>();
      for (const tp of todo) {
        const t = this.cluster.topic(tp.topic);
        if (t && t.errorCode !== ErrorCode.NONE && t.errorCode !== ErrorCode.LEADER_NOT_AVAILABLE) {
          throw new KafkaClientError(
            t.errorCode,
            `Topic ${tp.topic}: ${t.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION ? "does not exist" : "metadata error"}`,
          );
        }
        const leader = this.cluster.leaderFor(tp.topic, tp.partition);
        if (leader === undefined)
          throw KafkaClientError.of("LEADER_NOT_AVAILABLE", `No leader for ${tp.topic}-${tp.partition}`);
        const l = byNode.get(leader);
        if (l) l.push(tp);
        else byNode.set(leader, [tp]);
      }
      let retry: KafkaClientError | undefined;
      const failed: TopicPartition[] = [];
      for (const [node, tps] of byNode) {
        const conn = await this.cluster.connectionTo(node);
        const version = conn.versionFor(Apis.ListOffsets, { min: 1 });
        const topics = new Map<string, number[]>();
        for (const tp of tps) {
          const l = topics.get(tp.topic);
          if (l) l.push(tp.partition);
          else topics.set(tp.topic, [tp.partition]);
        }
        const res = await conn.send(Apis.ListOffsets, version, {
          replicaId: -1,
          isolationLevel: this.config.isolationLevel,
          topics: [...topics].map(([name, ps]) => ({
            name,
            partitions: ps.map((partitionIndex) => ({
              partitionIndex,
              currentLeaderEpoch: -1,
              timestamp: timestamps.get(`${name}-${partitionIndex}`)!,
              maxNumOffsets: 1,
            })),
          })),
          timeoutMs: this.config.requestTimeoutMs,
        });
        for (const t of res.topics) {
          for (const p of t.partitions) {
            if (p.errorCode === ErrorCode.NONE) {
              out.set(`${t.name}-${p.partitionIndex}`, {
                offset: p.offset,
                timestamp: p.timestamp,
                leaderEpoch: p.leaderEpoch,
              });
              continue;
            }
            const e = new KafkaClientError(p.errorCode, `ListOffsets for ${t.name}-${p.partitionIndex}`);
            if (!e.retriable) throw e;
            retry = e;
            failed.push({ topic: t.name, partition: p.partitionIndex });
          }
        }
      }
      todo = failed;
      if (retry) {
        await this.cluster.refreshMetadata([...new Set(failed.map((tp) => tp.topic))]).catch(() => undefined);
        throw retry;
      }
    });
    return out;
  }
}
