// ConsumerCoordinator: the consumer's side of its group (Kafka's ConsumerCoordinator). On top of
// AbstractCoordinator's membership it speaks the "consumer" embedded protocol: JoinGroup metadata is the
// subscription (one entry per assignor of partition.assignment.strategy); the leader reads every
// member's subscription, looks up the topics' partition counts and runs the chosen assignor; each member
// takes its assignment into SubscriptionState. The eager protocol: before rejoining, the consumed
// positions are committed (enable.auto.commit) and every partition revoked. Committed offsets are read
// (OffsetFetch) for newly assigned partitions before auto.offset.reset applies; commits (OffsetCommit)
// carry the generation and member id (generation -1 for assign()), and enable.auto.commit commits the
// consumed positions every auto.commit.interval.ms from poll(), before a rebalance and on close. Like
// Kafka's assignment snapshot, the leader rejoins when the partition count of a topic of the group's
// subscriptions differs from the one its assignment used, or such a topic appeared (checked every
// metadata.max.age.ms, every second while a topic is missing); the Metadata requests of those looks let
// the broker create a missing topic (allow.auto.create.topics).

import { Logger } from "../../common/logger.js";
import type { TopicPartition } from "../../common/topic-partition.js";
import { Apis } from "../../protocol/generated/api-table.js";
import { ErrorCode } from "../../protocol/generated/errors.js";
import type { JoinGroupResponseMember } from "../../protocol/generated/messages/JoinGroupResponse.js";
import { KafkaClientError } from "../errors.js";
import type { ClusterClient } from "../network/cluster-client.js";
import { AbstractCoordinator, type Generation, type GroupProtocol } from "./abstract-coordinator.js";
import type { ConsumerConfig } from "./consumer-config.js";
import {
  CONSUMER_PROTOCOL_TYPE,
  deserializeAssignment,
  deserializeSubscription,
  serializeAssignment,
  serializeSubscription,
} from "./consumer-protocol.js";
import { assignorFor, type MemberSubscription, type PartitionAssignor } from "./partition-assignors.js";
import type { SubscriptionState } from "./subscription-state.js";

/** An offset to commit (Kafka's OffsetAndMetadata). */
export interface OffsetAndMetadata {
  readonly offset: bigint;
  readonly metadata?: string;
  readonly leaderEpoch?: number;
}

export type TopicPartitionOffset = TopicPartition & OffsetAndMetadata;

/** Kafka's ConsumerRebalanceListener (eager protocol: everything is revoked before each rebalance). */
export interface ConsumerRebalanceListener {
  onPartitionsRevoked?(partitions: TopicPartition[]): void | Promise<void>;
  onPartitionsAssigned?(partitions: TopicPartition[]): void | Promise<void>;
}

/** Kafka's CommitFailedException: the group rebalanced, the commit's generation is gone. */
export class CommitFailedException extends Error {
  override readonly name = "CommitFailedException";
  constructor(detail?: string) {
    super(
      `Commit cannot be completed since the group has already rebalanced and assigned the partitions to another member. This means that the time between subsequent calls to poll() was longer than the configured max.poll.interval.ms, which typically implies that the poll loop is spending too much time message processing. You can address this either by increasing max.poll.interval.ms or by reducing the maximum size of batches returned in poll() with max.poll.records.${detail ? ` (${detail})` : ""}`,
    );
  }
}

/** Kafka's ConsumerGroupMetadata. */
export interface ConsumerGroupMetadata {
  readonly groupId: string;
  readonly generationId: number;
  readonly memberId: string;
  readonly groupInstanceId: string | null;
}

function key(topic: string, partition: number): string {
  return `${topic}-${partition}`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export class ConsumerCoordinator extends AbstractCoordinator {
  private readonly assignors: PartitionAssignor[];
  private readonly autoCommit: boolean;
  private nextAutoCommitDeadline: number;
  private listener: ConsumerRebalanceListener | undefined;
  /** The subscription sent in the last JoinGroup: a different one needs a rejoin. */
  private joinedSubscription: ReadonlySet<string> = new Set();
  private readonly pendingAsyncCommits = new Set<Promise<void>>();
  /**
   * On the group leader, the topics of every member's subscription and their partition counts as the
   * assignment used them (Kafka's assignmentSnapshot): when the counts change — a topic created or
   * grown — the leader rejoins so the group is assigned again. Undefined on the other members, which
   * do not watch metadata (as in Kafka).
   */
  private assignmentSnapshot: { topics: string[]; counts: Map<string, number> } | undefined;
  /** The snapshot of this member's assignment as leader, kept until its join completes. */
  private pendingSnapshot: { topics: string[]; counts: Map<string, number> } | undefined;
  private nextMetadataCheck = Number.POSITIVE_INFINITY;
  /** subscribe(pattern): when to look at the cluster's topics again (metadata.max.age.ms). */
  private nextPatternCheck = 0;
  private closing = false;
  private readonly log: Logger;

  constructor(
    private readonly config: ConsumerConfig,
    cluster: ClusterClient,
    private readonly subscriptions: SubscriptionState,
    /** Drops buffered records of partitions no longer assigned. */
    private readonly onAssignmentChange: (removed: readonly TopicPartition[]) => void,
  ) {
    super(cluster, {
      groupId: config.groupId!,
      groupInstanceId: config.groupInstanceId,
      clientId: config.clientId || "consumer",
      sessionTimeoutMs: config.sessionTimeoutMs,
      rebalanceTimeoutMs: config.maxPollIntervalMs,
      heartbeatIntervalMs: config.heartbeatIntervalMs,
      requestTimeoutMs: config.requestTimeoutMs,
      retryBackoffMs: config.retryBackoffMs,
    });
    this.log = new Logger("ConsumerCoordinator").withContext(
      `Consumer clientId=${config.clientId || "consumer"}, groupId=${config.groupId}`,
    );
    this.assignors = config.partitionAssignmentStrategy.map((n) => assignorFor(n)!);
    this.autoCommit = config.enableAutoCommit ?? true;
    this.nextAutoCommitDeadline = Date.now() + config.autoCommitIntervalMs;
  }

  setListener(listener: ConsumerRebalanceListener | undefined): void {
    this.listener = listener;
  }

  groupMetadata(): ConsumerGroupMetadata {
    const g = this.generation;
    return {
      groupId: this.groupId,
      generationId: g.generationId,
      memberId: g.memberId,
      groupInstanceId: this.config.groupInstanceId,
    };
  }

  protected wantsMembership(): boolean {
    return !this.closing && this.subscriptions.hasAutoAssignedPartitions();
  }

  protected protocolType(): string {
    return CONSUMER_PROTOCOL_TYPE;
  }

  protected metadata(): GroupProtocol[] {
    this.joinedSubscription = new Set(this.subscriptions.subscription());
    const metadata = serializeSubscription({
      topics: [...this.joinedSubscription].sort(),
      userData: null,
      ownedPartitions: this.subscriptions.assignment(),
      generationId: this.generation.generationId,
      rackId: this.config.clientRack === "" ? null : this.config.clientRack,
    });
    return this.assignors.map((a) => ({ name: a.name, metadata }));
  }

  /** The subscription changed since the last join: rejoin (Kafka's rejoinNeededOrPending). */
  override rejoinNeededOrPending(): boolean {
    if (!this.subscriptions.hasAutoAssignedPartitions()) return false;
    const sub = this.subscriptions.subscription();
    if (sub.size !== this.joinedSubscription.size || [...sub].some((t) => !this.joinedSubscription.has(t)))
      this.requestRejoin();
    return super.rejoinNeededOrPending();
  }

  protected async onJoinPrepare(_generation: Generation): Promise<void> {
    if (this.autoCommit) {
      try {
        await this.commitOffsetsSync(this.subscriptions.allConsumed(), this.config.defaultApiTimeoutMs);
      } catch (e) {
        this.log.warn(`Synchronous auto-commit of offsets failed: ${(e as Error).message}`);
      }
    }
    const revoked = this.subscriptions.assignment();
    if (revoked.length > 0) await this.invokeRevoked(revoked);
    this.subscriptions.assignFrom([]);
    this.onAssignmentChange(revoked);
    this.pendingSnapshot = undefined;
  }

  protected async onLeaderElected(
    protocol: string,
    members: readonly JoinGroupResponseMember[],
  ): Promise<Map<string, Buffer>> {
    const assignor = this.assignors.find((a) => a.name === protocol);
    if (!assignor) {
      throw KafkaClientError.of(
        "INCONSISTENT_GROUP_PROTOCOL",
        `Coordinator selected invalid assignment protocol: ${protocol}`,
      );
    }
    const subs: MemberSubscription[] = members.map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      topics: deserializeSubscription(m.metadata).topics,
    }));
    const topics = [...new Set(subs.flatMap((s) => s.topics))];
    const partitionsPerTopic = await this.partitionCountsOf(topics);
    const assignment = assignor.assign(partitionsPerTopic, subs);
    this.pendingSnapshot = { topics, counts: partitionsPerTopic };
    return new Map([...assignment].map(([memberId, tps]) => [memberId, serializeAssignment(tps)]));
  }

  /**
   * Partition counts of existing topics (a fresh Metadata request, which lets the broker create a missing
   * subscribed topic with allow.auto.create.topics).
   */
  private async partitionCountsOf(topics: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (topics.length === 0) return out;
    await this.cluster.refreshMetadata(topics, { allowAutoTopicCreation: this.config.allowAutoCreateTopics });
    for (const t of topics) {
      const md = this.cluster.topic(t);
      if (md && md.errorCode === ErrorCode.NONE && md.partitions.length > 0) out.set(t, md.partitions.length);
    }
    return out;
  }

  /** subscribe(pattern) was called: look at the cluster's topics on the next poll. */
  requestPatternUpdate(): void {
    this.nextPatternCheck = 0;
  }

  /**
   * Kafka's updatePatternSubscription: the topics of the cluster (internal ones aside with
   * exclude.internal.topics) whose whole name the pattern matches become the subscription; a change
   * brings a rejoin (rejoinNeededOrPending compares it with the joined one).
   */
  private async maybeUpdatePatternSubscription(): Promise<void> {
    if (Date.now() < this.nextPatternCheck) return;
    let topics: ReadonlyMap<string, { readonly isInternal: boolean; readonly errorCode: number }>;
    try {
      topics = (await this.cluster.refreshMetadata(null)).topics;
    } catch {
      this.nextPatternCheck = Date.now() + this.config.retryBackoffMs;
      return;
    }
    this.nextPatternCheck = Date.now() + this.config.metadataMaxAgeMs;
    const matched: string[] = [];
    for (const [name, t] of topics) {
      if (t.errorCode !== ErrorCode.NONE) continue;
      if (t.isInternal && this.config.excludeInternalTopics) continue;
      if (this.subscriptions.matchesSubscribedPattern(name)) matched.push(name);
    }
    this.subscriptions.changeSubscription(matched.sort());
  }

  /** The leader looks again after metadata.max.age.ms, or every second while a topic is missing. */
  private scheduleMetadataCheck(): void {
    const s = this.assignmentSnapshot;
    if (s === undefined) {
      this.nextMetadataCheck = Number.POSITIVE_INFINITY;
      return;
    }
    const missing = s.counts.size < s.topics.length;
    this.nextMetadataCheck = Date.now() + (missing ? 1000 : this.config.metadataMaxAgeMs);
  }

  /** On the leader: rejoins when a topic's partition count differs from the one its assignment used. */
  private async maybeRequestRejoinForMetadata(): Promise<void> {
    const s = this.assignmentSnapshot;
    if (s === undefined || Date.now() < this.nextMetadataCheck) return;
    let now: Map<string, number>;
    try {
      now = await this.partitionCountsOf(s.topics);
    } catch {
      this.scheduleMetadataCheck(); // keep the snapshot: a failed look is no change
      return;
    }
    this.scheduleMetadataCheck();
    if (s.topics.some((t) => now.get(t) !== s.counts.get(t))) this.requestRejoin();
  }

  protected async onJoinComplete(_generation: Generation, assignment: Buffer): Promise<void> {
    const subscribed = this.subscriptions.subscription();
    const assigned = deserializeAssignment(assignment).filter((tp) => subscribed.has(tp.topic));
    this.subscriptions.assignFrom(assigned);
    this.nextAutoCommitDeadline = Date.now() + this.config.autoCommitIntervalMs;
    this.assignmentSnapshot = this.pendingSnapshot;
    this.pendingSnapshot = undefined;
    this.scheduleMetadataCheck();
    try {
      await this.listener?.onPartitionsAssigned?.(assigned);
    } catch (e) {
      this.log.warn(
        `User provided listener failed on invocation of onPartitionsAssigned for partitions ${assigned.map((tp) => `${tp.topic}-${tp.partition}`).join(", ")}: ${(e as Error).message}`,
      );
    }
  }

  private async invokeRevoked(revoked: TopicPartition[]): Promise<void> {
    try {
      await this.listener?.onPartitionsRevoked?.(revoked);
    } catch (e) {
      this.log.warn(
        `User provided listener failed on invocation of onPartitionsRevoked for partitions ${revoked.map((tp) => `${tp.topic}-${tp.partition}`).join(", ")}: ${(e as Error).message}`,
      );
    }
  }

  /**
   * Called by poll(): joins when needed (resolving true once Stable, false when `deadline` came first) and
   * auto-commits when due.
   */
  async poll(deadline: number): Promise<boolean> {
    this.throwIfFatal();
    if (this.subscriptions.pattern !== undefined) await this.maybeUpdatePatternSubscription();
    if (this.subscriptions.hasAutoAssignedPartitions() && !this.rejoinNeededOrPending())
      await this.maybeRequestRejoinForMetadata();
    if (this.subscriptions.hasAutoAssignedPartitions() && this.rejoinNeededOrPending()) {
      const join = this.ensureActiveGroup();
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<boolean>((r) => {
        timer = setTimeout(() => r(false), Math.max(0, deadline - Date.now()));
      });
      try {
        const done = await Promise.race([join.then(() => true), timedOut]);
        if (!done) {
          join.catch(() => undefined); // the join goes on; its error is thrown by the next poll
          return false;
        }
      } finally {
        clearTimeout(timer);
      }
    }
    this.maybeAutoCommitOffsetsAsync();
    return true;
  }

  private maybeAutoCommitOffsetsAsync(): void {
    if (!this.autoCommit || Date.now() < this.nextAutoCommitDeadline) return;
    this.nextAutoCommitDeadline = Date.now() + this.config.autoCommitIntervalMs;
    const offsets = this.subscriptions.allConsumed();
    if (offsets.length === 0) return;
    this.commitOffsetsAsync(offsets, (e) => {
      if (e) this.log.warn(`Asynchronous auto-commit of offsets failed: ${e.message}`);
    });
  }

  /** Looks up the committed offsets of initializing partitions and seeks to them. */
  async refreshCommittedOffsetsIfNeeded(timeoutMs: number): Promise<void> {
    const initializing = this.subscriptions.initializing();
    if (initializing.length === 0) return;
    const epochs = initializing.map((s) => s.seekEpoch);
    const committed = await this.fetchCommittedOffsets(
      initializing.map((s) => ({ topic: s.topic, partition: s.partition })),
      timeoutMs,
    );
    initializing.forEach((s, i) => {
      if (this.subscriptions.get(s.topic, s.partition) !== s || s.seekEpoch !== epochs[i]) return;
      s.initializing = false;
      const c = committed.get(key(s.topic, s.partition));
      if (c) this.subscriptions.seek(s.topic, s.partition, c.offset);
    });
  }

  /** OffsetFetch: committed offsets keyed `topic-partition` (absent when none is committed). */
  async fetchCommittedOffsets(
    partitions: readonly TopicPartition[],
    timeoutMs: number,
  ): Promise<Map<string, OffsetAndMetadata>> {
    return this.withCoordinatorRetries("OffsetFetch", timeoutMs, async () => {
      const conn = await this.coordinator();
      const version = conn.versionFor(Apis.OffsetFetch, { min: 1, max: 7 });
      const topics = new Map<string, number[]>();
      for (const tp of partitions) {
        const l = topics.get(tp.topic);
        if (l) l.push(tp.partition);
        else topics.set(tp.topic, [tp.partition]);
      }
      const res = await conn.send(Apis.OffsetFetch, version, {
        groupId: this.groupId,
        topics: [...topics].map(([name, partitionIndexes]) => ({ name, partitionIndexes })),
        groups: [],
        requireStable: version >= 7,
      });
      if (res.errorCode !== ErrorCode.NONE) {
        throw new KafkaClientError(res.errorCode, `OffsetFetch of group ${this.groupId}`);
      }
      const out = new Map<string, OffsetAndMetadata>();
      for (const t of res.topics) {
        for (const p of t.partitions) {
          if (p.errorCode !== ErrorCode.NONE) {
            const e = new KafkaClientError(p.errorCode, `OffsetFetch for ${t.name}-${p.partitionIndex}`);
            if (e.retriable || p.errorCode !== ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) throw e;
            continue;
          }
          if (p.committedOffset < 0n) continue;
          out.set(key(t.name, p.partitionIndex), {
            offset: p.committedOffset,
            metadata: p.metadata ?? "",
            leaderEpoch: p.committedLeaderEpoch,
          });
        }
      }
      return out;
    });
  }

  /** commitSync: OffsetCommit, retried on coordinator errors until `timeoutMs`. */
  async commitOffsetsSync(offsets: readonly TopicPartitionOffset[], timeoutMs: number): Promise<void> {
    if (offsets.length === 0) return;
    await this.withCoordinatorRetries("OffsetCommit", timeoutMs, () => this.sendOffsetCommit(offsets));
  }

  /** commitAsync: one OffsetCommit (no retry, as Kafka); the callback gets the error, if any. */
  commitOffsetsAsync(
    offsets: readonly TopicPartitionOffset[],
    callback?: (e: Error | undefined) => void,
  ): void {
    const p = (async () => {
      try {
        if (offsets.length > 0) await this.sendOffsetCommit(offsets);
        callback?.(undefined);
      } catch (e) {
        this.onCoordinatorError(e);
        callback?.(e as Error);
      }
    })();
    this.pendingAsyncCommits.add(p);
    p.finally(() => this.pendingAsyncCommits.delete(p));
  }

  private async sendOffsetCommit(offsets: readonly TopicPartitionOffset[]): Promise<void> {
    let generationId = -1;
    let memberId = "";
    if (this.subscriptions.hasAutoAssignedPartitions()) {
      // Kafka's generationIfStable(): a commit during a rebalance cannot carry a valid generation.
      if (this.memberState() !== "STABLE" || this.generation.generationId < 0) {
        if (this.rejoinNeededOrPending())
          throw KafkaClientError.of(
            "REBALANCE_IN_PROGRESS",
            "Offset commit cannot be completed since the consumer is undergoing a rebalance for auto partition assignment. You can try completing the rebalance by calling poll() and then retry the operation.",
          );
        throw new CommitFailedException();
      }
      generationId = this.generation.generationId;
      memberId = this.generation.memberId;
    }
    const conn = await this.coordinator();
    const version = conn.versionFor(Apis.OffsetCommit, { max: 8 });
    const topics = new Map<string, TopicPartitionOffset[]>();
    for (const o of offsets) {
      const l = topics.get(o.topic);
      if (l) l.push(o);
      else topics.set(o.topic, [o]);
    }
    const res = await conn.send(Apis.OffsetCommit, version, {
      groupId: this.groupId,
      generationIdOrMemberEpoch: generationId,
      memberId,
      groupInstanceId: this.config.groupInstanceId,
      retentionTimeMs: -1n,
      topics: [...topics].map(([name, ps]) => ({
        name,
        partitions: ps.map((o) => ({
          partitionIndex: o.partition,
          committedOffset: o.offset,
          committedLeaderEpoch: o.leaderEpoch ?? -1,
          commitTimestamp: -1n,
          committedMetadata: o.metadata ?? "",
        })),
      })),
    });
    for (const t of res.topics) {
      for (const p of t.partitions) {
        if (p.errorCode === ErrorCode.NONE) continue;
        const where = `${t.name}-${p.partitionIndex}`;
        switch (p.errorCode) {
          case ErrorCode.UNKNOWN_MEMBER_ID:
          case ErrorCode.ILLEGAL_GENERATION:
            // The generation is gone: rejoin (Kafka resets the generation on these).
            if (p.errorCode === ErrorCode.UNKNOWN_MEMBER_ID)
              this.generation = { ...this.generation, memberId: "" };
            this.generation = { ...this.generation, generationId: -1 };
            this.requestRejoin();
            throw new CommitFailedException(`${where}: ${new KafkaClientError(p.errorCode).errorName}`);
          case ErrorCode.REBALANCE_IN_PROGRESS:
            this.requestRejoin();
            throw KafkaClientError.of(
              "REBALANCE_IN_PROGRESS",
              "Offset commit cannot be completed since the consumer member's generation is already stale, meaning it has already participated another rebalance and got a new generation. You can try completing the rebalance by calling poll() and then retry commit again",
            );
          default:
            throw new KafkaClientError(p.errorCode, `OffsetCommit for ${where}`);
        }
      }
    }
  }

  /** Retries `fn` on retriable errors (rediscovering the coordinator when it moved) until the timeout. */
  private async withCoordinatorRetries<T>(what: string, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        return await fn();
      } catch (e) {
        this.onCoordinatorError(e);
        if (
          !(e instanceof KafkaClientError) ||
          !e.retriable ||
          e.code === ErrorCode.REBALANCE_IN_PROGRESS ||
          this.closed
        )
          throw e;
        if (Date.now() + this.config.retryBackoffMs >= deadline) {
          throw KafkaClientError.of(
            "REQUEST_TIMED_OUT",
            `${what} of group ${this.groupId} timed out after ${timeoutMs} ms (${e.message})`,
          );
        }
        await sleep(this.config.retryBackoffMs);
      }
    }
  }

  /** Leaves the group (unsubscribe): revoke, then LeaveGroup. */
  async unsubscribe(): Promise<void> {
    const revoked = this.subscriptions.assignment();
    if (revoked.length > 0 && this.subscriptions.hasAutoAssignedPartitions())
      await this.invokeRevoked(revoked);
    await this.maybeLeaveGroup("the consumer unsubscribed from all topics");
    this.joinedSubscription = new Set();
  }

  /** close(): auto-commit the consumed positions, wait for async commits, leave the group. */
  async close(timeoutMs: number): Promise<void> {
    this.closing = true;
    try {
      if (this.autoCommit) {
        try {
          await this.commitOffsetsSync(this.subscriptions.allConsumed(), timeoutMs);
        } catch (e) {
          this.log.warn(`Synchronous auto-commit of offsets failed: ${(e as Error).message}`);
        }
      }
      await Promise.all(this.pendingAsyncCommits);
      if (this.subscriptions.hasAutoAssignedPartitions()) {
        // Kafka's onLeavePrepare: the listener hears of the revocation before the member leaves.
        const owned = this.subscriptions.assignment();
        if (owned.length > 0) await this.invokeRevoked(owned);
        await this.maybeLeaveGroup("the consumer is being closed");
      }
    } finally {
      this.closeCoordinator();
    }
  }
}
