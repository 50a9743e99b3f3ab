// OffsetMetadataManager: the offset APIs of both group types (Kafka's OffsetMetadataManager request side;
// GroupCoordinator.handleCommitOffsets / handleTxnCommitOffsets / handleFetchOffsets / handleDeleteOffsets
// before Kafka 3.7): OffsetCommit, TxnOffsetCommit, OffsetFetch and OffsetDelete. A classic group checks the
// committing member and generation (a commit from a member also renews its session), a KIP-848 consumer
// group the member epoch (STALE_MEMBER_EPOCH); a group without members takes commits from anyone (a
// standalone consumer, an admin client). Offsets whose metadata exceeds offset.metadata.max.bytes are
// OFFSET_METADATA_TOO_LARGE, the rest are written in one batch. Transactional offsets (classic groups only:
// into a consumer group they are UNSUPPORTED_VERSION, not implemented yet) stay pending until their
// transaction's marker. OffsetDelete refuses the topics the group still subscribes to. The records are
// written, loaded and expired by GroupMetadataManager (group-metadata-manager.ts); the GroupCoordinator has
// checked that this broker coordinates the group before calling in here.

import { ErrorCode } from "../../../protocol/errors.js";
import type { ConsumerGroup } from "./consumer-group.js";
import type { ConsumerGroupCoordinator } from "./consumer-group-coordinator.js";
import { groupSubscribedTopics } from "./consumer-protocol.js";
import { type CommittedOffset, GroupMetadata, offsetKey, parseOffsetKey } from "./group-metadata.js";
import type { GroupMetadataManager } from "./group-metadata-manager.js";
import { offsetCommitKey, offsetCommitValue } from "./group-metadata-records.js";
import type { HeartbeatPurgatory } from "./heartbeat-purgatory.js";

export interface OffsetFetchPartition {
  readonly topic: string;
  readonly partition: number;
  readonly offset: bigint;
  readonly leaderEpoch: number;
  readonly metadata: string;
  readonly errorCode: number;
}

type TopicPartitions = ReadonlyArray<{ topic: string; partition: number }>;

/** Who commits: a classic member and generation, a consumer group member and epoch, or nobody (-1, ""). */
export interface OffsetCommitter {
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  /** The generation of a classic group, the member epoch of a consumer group (OffsetCommit v9). */
  readonly generationId: number;
}

/** OffsetDelete's answer: per-partition codes, or a group-level error. */
export interface OffsetDeleteResult {
  readonly errorCode: number;
  readonly partitions: Map<string, number>;
}

export class OffsetMetadataManager {
  constructor(
    /** offset.metadata.max.bytes */
    private readonly offsetMetadataMaxBytes: number,
    private readonly groupManager: GroupMetadataManager,
    private readonly consumerGroups: ConsumerGroupCoordinator,
    private readonly heartbeats: HeartbeatPurgatory,
  ) {}

  // ---- OffsetCommit / TxnOffsetCommit ----

  /** OffsetCommit: one error code per offsetKey(topic, partition) given. */
  async commitOffsets(
    groupId: string,
    { memberId, groupInstanceId, generationId }: OffsetCommitter,
    offsets: ReadonlyMap<string, CommittedOffset>,
  ): Promise<Map<string, number>> {
    const all = (code: number): Map<string, number> => new Map([...offsets.keys()].map((k) => [k, code]));
    const consumerGroup = this.consumerGroups.group(groupId);
    if (consumerGroup !== undefined) {
      const invalid = consumerGroup.validateOffsetCommit(memberId, generationId);
      if (invalid !== null) return all(invalid);
      return this.storeConsumerGroupOffsets(consumerGroup, offsets);
    }
    let group = this.groupManager.getGroup(groupId);
    if (group === undefined) {
      if (generationId >= 0) return all(ErrorCode.ILLEGAL_GENERATION);
      // A standalone consumer (assign) keeps its offsets in a group without members.
      group = this.groupManager.getOrCreateGroup(groupId);
    }
    if (group.is("Dead")) return all(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    if (generationId >= 0 || memberId !== "" || groupInstanceId !== null) {
      const invalid = group.validateMember(memberId, groupInstanceId);
      if (invalid !== null) return all(invalid);
      if (generationId !== group.generationId) return all(ErrorCode.ILLEGAL_GENERATION);
      if (group.is("CompletingRebalance")) return all(ErrorCode.REBALANCE_IN_PROGRESS);
      const member = group.get(memberId)!;
      this.heartbeats.schedule(group, member, member.sessionTimeoutMs);
    } else if (!group.is("Empty")) {
      // The group has members: only they may commit.
      return all(ErrorCode.UNKNOWN_MEMBER_ID);
    }
    return this.storeOffsets(group, offsets);
  }

  /**
   * TxnOffsetCommit (Kafka's handleTxnCommitOffsets): offsets written in the producer's transaction,
   * pending until its marker. A member id or generation given (v3+) is checked as for OffsetCommit; without
   * them any producer may commit, even into a group with members (older clients send neither).
   */
  async commitTransactionalOffsets(
    groupId: string,
    transaction: { readonly producerId: bigint; readonly producerEpoch: number },
    { memberId, groupInstanceId, generationId }: OffsetCommitter,
    offsets: ReadonlyMap<string, CommittedOffset>,
  ): Promise<Map<string, number>> {
    const all = (code: number): Map<string, number> => new Map([...offsets.keys()].map((k) => [k, code]));
    if (this.consumerGroups.group(groupId) !== undefined) {
      // Transactional commits into KIP-848 consumer groups are not supported yet.
      return all(ErrorCode.UNSUPPORTED_VERSION);
    }
    const group = this.groupManager.getOrCreateGroup(groupId);
    if (group.is("Dead")) return all(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    if (generationId >= 0 || memberId !== "" || groupInstanceId !== null) {
      const invalid = group.validateMember(memberId, groupInstanceId);
      if (invalid !== null) return all(invalid);
      if (generationId !== group.generationId) return all(ErrorCode.ILLEGAL_GENERATION);
    }
    return this.storeOffsets(group, offsets, transaction);
  }

  /** Splits off the offsets whose metadata exceeds offset.metadata.max.bytes (OFFSET_METADATA_TOO_LARGE). */
  private validateMetadataSize(offsets: ReadonlyMap<string, CommittedOffset>): {
    out: Map<string, number>;
    valid: Map<string, CommittedOffset>;
  } {
    const out = new Map<string, number>();
    const valid = new Map<string, CommittedOffset>();
    for (const [k, o] of offsets) {
      if (Buffer.byteLength(o.metadata) > this.offsetMetadataMaxBytes)
        out.set(k, ErrorCode.OFFSET_METADATA_TOO_LARGE);
      else valid.set(k, o);
    }
    return { out, valid };
  }

  /** A classic group's offsets that fit, in one batch (transactional with `transaction`). */
  private async storeOffsets(
    group: GroupMetadata,
    offsets: ReadonlyMap<string, CommittedOffset>,
    transaction?: { readonly producerId: bigint; readonly producerEpoch: number },
  ): Promise<Map<string, number>> {
    const { out, valid } = this.validateMetadataSize(offsets);
    const code = await this.groupManager.storeOffsets(group, valid, transaction);
    for (const k of valid.keys()) out.set(k, code);
    return out;
  }

  /** A consumer group's offsets that fit, in one batch; they are the group's once written. */
  private async storeConsumerGroupOffsets(
    group: ConsumerGroup,
    offsets: ReadonlyMap<string, CommittedOffset>,
  ): Promise<Map<string, number>> {
    const { out, valid } = this.validateMetadataSize(offsets);
    if (valid.size > 0) {
      const code = await this.groupManager.append(
        group.groupId,
        [...valid].map(([k, o]) => {
          const { topic, partition } = parseOffsetKey(k);
          return { key: offsetCommitKey(group.groupId, topic, partition), value: offsetCommitValue(o) };
        }),
      );
      if (code === ErrorCode.NONE) for (const [k, o] of valid) group.offsets.set(k, o);
      for (const k of valid.keys()) out.set(k, code);
    }
    return out;
  }

  // ---- OffsetFetch ----

  /**
   * OffsetFetch for one group: partitions null means every committed offset of the group. `member` (v9) is
   * checked against a consumer group's member epochs.
   */
  fetchOffsets(
    groupId: string,
    partitions: TopicPartitions | null,
    member: { memberId: string | null; memberEpoch: number },
    requireStable: boolean,
  ): { errorCode: number; partitions: OffsetFetchPartition[] } {
    const consumerGroup = this.consumerGroups.group(groupId);
    if (consumerGroup !== undefined) {
      const invalid = consumerGroup.validateOffsetFetch(member.memberId, member.memberEpoch);
      if (invalid !== null) return { errorCode: invalid, partitions: [] };
    }
    const group = consumerGroup ?? this.groupManager.getGroup(groupId);
    const none = (topic: string, partition: number): OffsetFetchPartition => ({
      topic,
      partition,
      offset: -1n,
      leaderEpoch: -1,
      metadata: "",
      errorCode: ErrorCode.NONE,
    });
    const found = (topic: string, partition: number, o: CommittedOffset): OffsetFetchPartition => ({
      topic,
      partition,
      offset: o.offset,
      leaderEpoch: o.leaderEpoch,
      metadata: o.metadata,
      errorCode: ErrorCode.NONE,
    });
    if (partitions === null) {
      if (group === undefined) return { errorCode: ErrorCode.NONE, partitions: [] };
      return {
        errorCode: ErrorCode.NONE,
        partitions: [...group.offsets].map(([k, o]) => {
          const { topic, partition } = parseOffsetKey(k);
          return found(topic, partition, o);
        }),
      };
    }
    return {
      errorCode: ErrorCode.NONE,
      partitions: partitions.map(({ topic, partition }) => {
        const k = offsetKey(topic, partition);
        // require_stable (KIP-447): an open transaction's offset for the partition is not answered yet.
        if (requireStable && group instanceof GroupMetadata && group.hasPendingTransactionalOffset(k)) {
          return { ...none(topic, partition), errorCode: ErrorCode.UNSTABLE_OFFSET_COMMIT };
        }
        const o = group?.offsets.get(k);
        return o === undefined ? none(topic, partition) : found(topic, partition, o);
      }),
    };
  }

  // ---- OffsetDelete ----

  /** OffsetDelete: per-partition codes, or a group-level error. */
  async deleteOffsets(groupId: string, partitions: TopicPartitions): Promise<OffsetDeleteResult> {
    const consumerGroup = this.consumerGroups.group(groupId);
    if (consumerGroup !== undefined) return this.deleteConsumerGroupOffsets(consumerGroup, partitions);
    const group = this.groupManager.getGroup(groupId);
    if (group === undefined || group.is("Dead"))
      return { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, partitions: new Map() };
    let subscribed: Set<string> | undefined;
    if (!group.is("Empty")) {
      subscribed = groupSubscribedTopics(group);
      if (subscribed === undefined) return { errorCode: ErrorCode.NON_EMPTY_GROUP, partitions: new Map() };
    }
    const { out, keys } = deletableOffsets(group.offsets, partitions, subscribed);
    const code = await this.groupManager.deleteOffsets(group, keys, false);
    if (code !== ErrorCode.NONE) return { errorCode: code, partitions: new Map() };
    return { errorCode: ErrorCode.NONE, partitions: out };
  }

  /** A consumer group's OffsetDelete: tombstones for the partitions of topics no member subscribes to. */
  private async deleteConsumerGroupOffsets(
    group: ConsumerGroup,
    partitions: TopicPartitions,
  ): Promise<OffsetDeleteResult> {
    const { out, keys } = deletableOffsets(group.offsets, partitions, group.subscribedTopicNames());
    if (keys.length > 0) {
      const code = await this.groupManager.append(
        group.groupId,
        keys.map((k) => {
          const { topic, partition } = parseOffsetKey(k);
          return { key: offsetCommitKey(group.groupId, topic, partition), value: null };
        }),
      );
      if (code !== ErrorCode.NONE) return { errorCode: code, partitions: new Map() };
      for (const k of keys) group.offsets.delete(k);
    }
    return { errorCode: ErrorCode.NONE, partitions: out };
  }
}

/**
 * OffsetDelete's per-partition codes: GROUP_SUBSCRIBED_TO_TOPIC for a subscribed topic, else NONE; `keys`
 * are the committed offsets to tombstone.
 */
function deletableOffsets(
  offsets: ReadonlyMap<string, CommittedOffset>,
  partitions: TopicPartitions,
  subscribed: ReadonlySet<string> | undefined,
): { out: Map<string, number>; keys: string[] } {
  const out = new Map<string, number>();
  const keys: string[] = [];
  for (const { topic, partition } of partitions) {
    const k = offsetKey(topic, partition);
    if (subscribed?.has(topic)) out.set(k, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC);
    else {
      out.set(k, ErrorCode.NONE);
      if (offsets.has(k)) keys.push(k);
    }
  }
  return { out, keys };
}
