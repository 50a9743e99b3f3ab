// GroupMetadataManager: the groups of the `__consumer_offsets` partitions this broker leads, and their
// persistence (Kafka's GroupMetadataManager). Owns:
//   - partitionFor(groupId): Kafka's Utils.abs(groupId.hashCode) % offsets.topic.num.partitions;
//   - loading a partition when this broker becomes its leader (every batch from the log start, replaying
//     offset commits and group metadata, tombstones removing them; the KIP-848 records (key versions 3–8)
//     go to the ConsumerGroupLoader the consumer group coordinator registers) — until it finishes, the partition's
//     groups answer COORDINATOR_LOAD_IN_PROGRESS; unloading when leadership goes;
//   - storeGroup / storeOffsets / tombstones: one record batch appended with acks=-1 (as
//     offsets.commit.required.acks) to the group's partition, the cache updated only once it is written;
//   - offset expiration every offsets.retention.check.interval.ms (KIP-211 rules), then removal of empty
//     groups without offsets (Dead, with a group tombstone).

import { Logger } from "../../../common/logger.js";
import type { ScheduledTask, Scheduler } from "../../../common/scheduler.js";
import type { Time } from "../../../common/time.js";
import { ErrorCode } from "../../../protocol/errors.js";
import { ControlRecordType, readControlRecordKey } from "../../../protocol/records/control-record.js";
import {
  buildRecordBatch,
  decodeRecordBatches,
  type RecordInput,
} from "../../../protocol/records/memory-records.js";
import { GROUP_METADATA_TOPIC_NAME } from "../../metadata/internal-topics.js";
import type { ReplicaManager } from "../../replication/replica-manager.js";
import { type CommittedOffset, GroupMetadata, offsetKey, parseOffsetKey } from "./group-metadata.js";
import {
  groupMetadataKey,
  groupMetadataValue,
  offsetCommitKey,
  offsetCommitValue,
  readCoordinatorRecordKey,
  readGroupMetadataValueRecord,
  readOffsetCommitValueRecord,
} from "./group-metadata-records.js";
import { MemberMetadata } from "./member-metadata.js";

export { GROUP_METADATA_TOPIC_NAME };

export interface GroupMetadataManagerConfig {
  readonly offsetsTopicNumPartitions: number;
  readonly offsetsRetentionMs: number;
  readonly offsetsRetentionCheckIntervalMs: number;
  readonly offsetCommitTimeoutMs: number;
  readonly offsetsLoadBufferSize: number;
}

/** Java's String.hashCode (UTF-16 code units, 32-bit wrap-around). */
export function javaStringHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

/** Kafka's partitionFor: Utils.abs(groupId.hashCode) % groupMetadataTopicPartitionCount. */
export function partitionForGroup(groupId: string, numPartitions: number): number {
  const h = javaStringHashCode(groupId);
  const abs = h === -2147483648 ? 0 : Math.abs(h);
  return abs % numPartitions;
}

/** Kafka maps append errors of the offsets topic to these (GroupMetadataManager.storeOffsets/storeGroup). */
export function coordinatorAppendError(error: string): number {
  switch (error) {
    case "NONE":
      return ErrorCode.NONE;
    case "UNKNOWN_TOPIC_OR_PARTITION":
    case "NOT_ENOUGH_REPLICAS":
    case "NOT_ENOUGH_REPLICAS_AFTER_APPEND":
    case "REQUEST_TIMED_OUT":
      return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    case "NOT_LEADER_OR_FOLLOWER":
    case "KAFKA_STORAGE_ERROR":
      return ErrorCode.NOT_COORDINATOR;
    case "MESSAGE_TOO_LARGE":
    case "RECORD_LIST_TOO_LARGE":
    case "INVALID_FETCH_SIZE":
      return ErrorCode.INVALID_COMMIT_OFFSET_SIZE;
    default:
      return ErrorCode.UNKNOWN_SERVER_ERROR;
  }
}

/** How the KIP-848 consumer groups (consumer-group-coordinator.ts) load with a partition. */
export interface ConsumerGroupLoader {
  /** A record whose key version is 3–8, in log order. */
  replay(key: Buffer, value: Buffer | null): void;
  /** The partition finished loading: the consumer groups take their offsets out of `offsets`. */
  loaded(partition: number, offsets: Map<string, Map<string, CommittedOffset>>): void;
  /** The partition (null: every partition) is no longer coordinated here. */
  unloaded(partition: number | null): void;
}

export class GroupMetadataManager {
  private readonly groups = new Map<string, GroupMetadata>();
  /** Partitions this broker leads whose groups are loaded. */
  private readonly ownedPartitions = new Set<number>();
  private readonly loadingPartitions = new Set<number>();
  private readonly logger: Logger;
  private expirationTask: ScheduledTask | undefined;
  /** Called for each group with members after a load, so the coordinator can start their heartbeats. */
  onGroupLoaded: (group: GroupMetadata) => void = () => {};
  /** Called for each group dropped when a partition is unloaded. */
  onGroupUnloaded: (group: GroupMetadata) => void = () => {};
  /** Registered by the consumer group coordinator (KIP-848 records). */
  consumerGroupLoader: ConsumerGroupLoader | undefined;

  constructor(
    brokerId: number,
    readonly config: GroupMetadataManagerConfig,
    private readonly replicaManager: ReplicaManager,
    private readonly time: Time,
    private readonly scheduler: Scheduler,
  ) {
    this.logger = new Logger(
      "kafka.coordinator.group.GroupMetadataManager",
      `GroupMetadataManager brokerId=${brokerId}`,
    );
  }

  startup(): void {
    this.expirationTask = this.scheduler.schedule(
      "delete-expired-group-metadata",
      async () => {
        await this.cleanupGroupMetadata();
      },
      this.config.offsetsRetentionCheckIntervalMs,
      this.config.offsetsRetentionCheckIntervalMs,
    );
  }

  shutdown(): void {
    this.expirationTask?.cancel();
    for (const g of this.groups.values()) this.onGroupUnloaded(g);
    this.consumerGroupLoader?.unloaded(null);
    this.groups.clear();
    this.ownedPartitions.clear();
    this.loadingPartitions.clear();
  }

  partitionFor(groupId: string): number {
    return partitionForGroup(groupId, this.config.offsetsTopicNumPartitions);
  }

  isPartitionOwned(partition: number): boolean {
    return this.ownedPartitions.has(partition);
  }

  isPartitionLoading(partition: number): boolean {
    return this.loadingPartitions.has(partition);
  }

  isGroupLocal(groupId: string): boolean {
    return this.isPartitionOwned(this.partitionFor(groupId));
  }

  isGroupLoading(groupId: string): boolean {
    return this.isPartitionLoading(this.partitionFor(groupId));
  }

  getGroup(groupId: string): GroupMetadata | undefined {
    return this.groups.get(groupId);
  }

  getOrCreateGroup(groupId: string): GroupMetadata {
    let g = this.groups.get(groupId);
    if (g === undefined) {
      g = new GroupMetadata(groupId, "Empty", BigInt(this.time.milliseconds()));
      this.groups.set(groupId, g);
    }
    return g;
  }

  removeGroup(groupId: string): void {
    this.groups.delete(groupId);
  }

  currentGroups(): GroupMetadata[] {
    return [...this.groups.values()];
  }

  // ---- leadership ----

  /** This broker became leader of __consumer_offsets-<partition>: load its groups (Kafka's scheduleLoadGroupAndOffsets). */
  scheduleLoad(partition: number): void {
    if (this.ownedPartitions.has(partition) || this.loadingPartitions.has(partition)) return;
    this.loadingPartitions.add(partition);
    this.scheduler.schedule(`load-groups-${partition}`, () => this.load(partition), 0);
  }

  /** Leadership moved away: drop the partition's groups (Kafka's removeGroupsForPartition). */
  unload(partition: number): void {
    this.loadingPartitions.delete(partition);
    this.ownedPartitions.delete(partition);
    for (const g of [...this.groups.values()]) {
      if (this.partitionFor(g.groupId) === partition) {
        this.groups.delete(g.groupId);
        this.onGroupUnloaded(g);
      }
    }
    this.consumerGroupLoader?.unloaded(partition);
  }

  private load(partition: number): void {
    if (!this.loadingPartitions.has(partition)) return;
    const startMs = this.time.milliseconds();
    const p = this.replicaManager.getPartition({ topic: GROUP_METADATA_TOPIC_NAME, partition });
    const log = p?.log;
    if (p === undefined || log === undefined || !p.isLeader) {
      this.loadingPartitions.delete(partition);
      return;
    }
    const offsets = new Map<string, Map<string, CommittedOffset>>();
    // Transactional offset commits (TxnOffsetCommit) per producer, until their marker.
    const pendingTxn = new Map<bigint, Map<string, Map<string, CommittedOffset>>>();
    const groupValues = new Map<string, ReturnType<typeof readGroupMetadataValueRecord>>();
    let offset = log.logStartOffset;
    let records = 0;
    try {
      while (offset < log.logEndOffset) {
        const read = log.read(offset, this.config.offsetsLoadBufferSize, "log-end", true);
        if (read.records.length === 0) break;
        const batches = decodeRecordBatches(read.records, { allowIncompleteTail: true });
        if (batches.length === 0) break;
        for (const b of batches) {
          offset = b.header.baseOffset + BigInt(b.header.lastOffsetDelta) + 1n;
          if (b.header.isControl) {
            // A transaction marker: COMMIT makes the producer's pending offsets committed, ABORT drops them.
            const pending = pendingTxn.get(b.header.producerId);
            pendingTxn.delete(b.header.producerId);
            const marker = readControlRecordKey(b.records[0]?.key ?? null);
            if (pending !== undefined && marker.type === ControlRecordType.Commit) {
              for (const [group, m] of pending) {
                let committed = offsets.get(group);
                if (committed === undefined) {
                  committed = new Map();
                  offsets.set(group, committed);
                }
                for (const [k, o] of m) committed.set(k, o);
              }
            }
            continue;
          }
          let txn: Map<string, Map<string, CommittedOffset>> | undefined;
          if (b.header.isTransactional) {
            txn = pendingTxn.get(b.header.producerId);
            if (txn === undefined) {
              txn = new Map();
              pendingTxn.set(b.header.producerId, txn);
            }
          }
          for (const r of b.records) {
            if (r.key === null) continue;
            records++;
            const key = readCoordinatorRecordKey(r.key);
            if (key.kind === "offset") {
              const { group, topic, partition: tpPartition } = key.key;
              const value = readOffsetCommitValueRecord(r.value);
              const target = txn ?? offsets;
              let m = target.get(group);
              if (value === null) {
                m?.delete(offsetKey(topic, tpPartition));
              } else {
                if (m === undefined) {
                  m = new Map();
                  target.set(group, m);
                }
                m.set(offsetKey(topic, tpPartition), value);
              }
            } else if (key.kind === "group") {
              const value = readGroupMetadataValueRecord(r.value);
              if (value === null) {
                groupValues.set(key.key.group, null);
                offsets.delete(key.key.group);
              } else {
                groupValues.set(key.key.group, value);
              }
            } else if (key.kind === "consumer-group") {
              this.consumerGroupLoader?.replay(r.key, r.value);
            }
          }
        }
      }
    } catch (e) {
      this.logger.error(
        `Error loading offsets from ${GROUP_METADATA_TOPIC_NAME}-${partition} at offset ${offset}: ${(e as Error).message}`,
      );
    }
    if (!this.loadingPartitions.has(partition)) return;
    const now = BigInt(this.time.milliseconds());
    let loaded = 0;
    this.consumerGroupLoader?.loaded(partition, offsets);
    const pendingGroups = [...pendingTxn.values()].flatMap((m) => [...m.keys()]);
    const names = new Set([
      ...offsets.keys(),
      ...pendingGroups,
      ...[...groupValues].filter(([, v]) => v !== null).map(([k]) => k),
    ]);
    for (const groupId of names) {
      const v = groupValues.get(groupId) ?? null;
      const g = new GroupMetadata(groupId, "Empty", now);
      if (v !== null) {
        g.protocolType = v.protocolType === "" ? null : v.protocolType;
        g.generationId = v.generation;
        g.protocolName = v.protocol;
        g.leaderId = v.leader;
        g.currentStateTimestamp = v.currentStateTimestamp >= 0n ? v.currentStateTimestamp : null;
        for (const m of v.members) {
          const member = new MemberMetadata(
            m.memberId,
            m.groupInstanceId,
            m.clientId,
            m.clientHost,
            m.rebalanceTimeout >= 0 ? m.rebalanceTimeout : m.sessionTimeout,
            m.sessionTimeout,
            v.protocolType,
            [{ name: v.protocol ?? "", metadata: m.subscription }],
          );
          member.assignment = m.assignment;
          g.members.set(member.memberId, member);
          if (member.groupInstanceId !== null) g.staticMembers.set(member.groupInstanceId, member.memberId);
        }
        if (g.members.size > 0) g.state = "Stable";
      }
      for (const [k, o] of offsets.get(groupId) ?? []) g.offsets.set(k, o);
      for (const [producerId, m] of pendingTxn) {
        const mine = m.get(groupId);
        if (mine !== undefined) g.pendingTransactionalOffsets.set(producerId, new Map(mine));
      }
      this.groups.set(groupId, g);
      loaded++;
    }
    this.loadingPartitions.delete(partition);
    this.ownedPartitions.add(partition);
    for (const g of this.groups.values()) {
      if (this.partitionFor(g.groupId) === partition && g.members.size > 0) this.onGroupLoaded(g);
    }
    this.logger.info(
      `Finished loading offsets and group metadata from ${GROUP_METADATA_TOPIC_NAME}-${partition} in ${this.time.milliseconds() - startMs} milliseconds (${records} records, ${loaded} groups)`,
    );
  }

  // ---- persistence ----

  /** Appends records to the group's partition; resolves with the coordinator error code. */
  async append(
    groupId: string,
    records: RecordInput[],
    transaction?: { readonly producerId: bigint; readonly producerEpoch: number },
  ): Promise<number> {
    const partition = this.partitionFor(groupId);
    if (!this.ownedPartitions.has(partition)) return ErrorCode.NOT_COORDINATOR;
    const now = BigInt(this.time.milliseconds());
    const batch = buildRecordBatch({
      records,
      timestamp: now,
      ...(transaction && { ...transaction, isTransactional: true }),
    });
    const [result] = await this.replicaManager.appendRecords(
      this.config.offsetCommitTimeoutMs,
      -1,
      [{ topicPartition: { topic: GROUP_METADATA_TOPIC_NAME, partition }, records: batch }],
      { internalTopicsAllowed: true, origin: "coordinator" },
    );
    if (result.error !== "NONE") {
      this.logger.warn(
        `Failed to append ${records.length} record(s) for group ${groupId} to ${GROUP_METADATA_TOPIC_NAME}-${partition}: ${result.error} ${result.errorMessage ?? ""}`,
      );
    }
    return coordinatorAppendError(result.error);
  }

  /** Writes the group's metadata (and the members' assignments); resolves with an error code. */
  storeGroup(group: GroupMetadata, assignments?: ReadonlyMap<string, Buffer>): Promise<number> {
    return this.append(group.groupId, [
      { key: groupMetadataKey(group.groupId), value: groupMetadataValue(group, assignments) },
    ]);
  }

  /**
   * Writes the offsets in one batch. Plain commits become the group's committed offsets once written; with
   * `transaction` (TxnOffsetCommit: a transactional batch of that producer, Kafka's storeOffsets with a
   * producer id) they stay pending until the transaction's marker reaches the partition.
   */
  async storeOffsets(
    group: GroupMetadata,
    offsets: ReadonlyMap<string, CommittedOffset>,
    transaction?: { readonly producerId: bigint; readonly producerEpoch: number },
  ): Promise<number> {
    if (offsets.size === 0) return ErrorCode.NONE;
    const records: RecordInput[] = [];
    for (const [k, o] of offsets) {
      const { topic, partition } = parseOffsetKey(k);
      records.push({ key: offsetCommitKey(group.groupId, topic, partition), value: offsetCommitValue(o) });
    }
    const code = await this.append(group.groupId, records, transaction);
    if (code !== ErrorCode.NONE || this.groups.get(group.groupId) !== group) return code;
    let target = group.offsets;
    if (transaction !== undefined) {
      const pending = group.pendingTransactionalOffsets.get(transaction.producerId);
      target = pending ?? new Map();
      if (pending === undefined) group.pendingTransactionalOffsets.set(transaction.producerId, target);
    }
    for (const [k, o] of offsets) target.set(k, o);
    return code;
  }

  /** A transaction marker was written to __consumer_offsets-<partition> (Kafka's handleTxnCompletion). */
  completeTransaction(partition: number, producerId: bigint, committed: boolean): void {
    for (const g of this.groups.values()) {
      if (this.partitionFor(g.groupId) !== partition) continue;
      const pending = g.pendingTransactionalOffsets.get(producerId);
      if (pending === undefined) continue;
      g.pendingTransactionalOffsets.delete(producerId);
      if (committed) for (const [k, o] of pending) g.offsets.set(k, o);
    }
  }

  /** Tombstones for the offsets (and the group itself when `deleteGroup`). */
  async deleteOffsets(group: GroupMetadata, keys: readonly string[], deleteGroup: boolean): Promise<number> {
    const records: RecordInput[] = keys.map((k) => {
      const { topic, partition } = parseOffsetKey(k);
      return { key: offsetCommitKey(group.groupId, topic, partition), value: null };
    });
    if (deleteGroup) records.push({ key: groupMetadataKey(group.groupId), value: null });
    if (records.length === 0) return ErrorCode.NONE;
    const code = await this.append(group.groupId, records);
    if (code === ErrorCode.NONE) for (const k of keys) group.offsets.delete(k);
    return code;
  }

  // ---- expiration ----

  /** Offsets due to expire now (Kafka's GroupMetadata.removeExpiredOffsets rules, KIP-211). */
  expiredOffsets(group: GroupMetadata, nowMs: bigint, subscribedTopics: Set<string> | undefined): string[] {
    const retention = BigInt(this.config.offsetsRetentionMs);
    const out: string[] = [];
    const expired = (o: CommittedOffset, base: bigint): boolean =>
      o.expireTimestamp !== null ? nowMs >= o.expireTimestamp : nowMs - base >= retention;
    if (group.protocolType !== null && group.is("Empty")) {
      for (const [k, o] of group.offsets)
        if (expired(o, group.currentStateTimestamp ?? o.commitTimestamp)) out.push(k);
    } else if (group.protocolType === "consumer" && group.is("Stable") && subscribedTopics !== undefined) {
      for (const [k, o] of group.offsets) {
        if (!subscribedTopics.has(parseOffsetKey(k).topic) && expired(o, o.commitTimestamp)) out.push(k);
      }
    } else if (group.protocolType === null) {
      for (const [k, o] of group.offsets) if (expired(o, o.commitTimestamp)) out.push(k);
    }
    return out;
  }

  /** Subscribed topics of a group, when known (set by the coordinator). */
  subscribedTopicsOf: (group: GroupMetadata) => Set<string> | undefined = () => undefined;

  /** Kafka's cleanupGroupMetadata: expire offsets, then drop empty groups without offsets. */
  async cleanupGroupMetadata(): Promise<number> {
    const now = BigInt(this.time.milliseconds());
    let removed = 0;
    for (const group of [...this.groups.values()]) {
      if (!this.isPartitionOwned(this.partitionFor(group.groupId))) continue;
      const keys = this.expiredOffsets(group, now, this.subscribedTopicsOf(group));
      const becomesDead = group.is("Empty") && group.offsets.size === keys.length;
      if (keys.length === 0 && !becomesDead) continue;
      const code = await this.deleteOffsets(group, keys, becomesDead);
      if (code !== ErrorCode.NONE) continue;
      removed += keys.length;
      if (becomesDead && group.is("Empty") && group.offsets.size === 0) {
        group.transitionTo("Dead", now);
        this.groups.delete(group.groupId);
      }
    }
    if (removed > 0)
      this.logger.info(
        `Removed ${removed} expired offsets in ${this.time.milliseconds() - Number(now)} milliseconds.`,
      );
    return removed;
  }
}
