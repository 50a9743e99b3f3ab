// Partition: one partition as this broker hosts it, Kafka's Partition. It owns the partition's leadership
// as this broker knows it (leader, leader epoch, ISR state, assignment), the local replica's log, and, when it
// is the leader, the state of the other replicas (their log end offsets, Kafka's remote replica state) from
// which it moves the high watermark. Leader-side appends check leadership and, with acks=-1, that effective
// min.insync.replicas; reads check leadership and the caller's leader epoch and bound what is visible by the
// fetch isolation. Producer batches go through the LogValidator (storage/log-validator.ts) before the log's
// append. A replica whose log cannot be opened or written is offline: an I/O error on it is reported once
// by the LogManager and every later append or read answers KAFKA_STORAGE_ERROR. A replica whose log dir is
// full (ENOSPC) stays online: its appends answer KAFKA_STORAGE_ERROR at once (the log refuses them before
// writing), reads go on, and DeleteRecords deletes the segments below the new log start offset at once.
//
// The ISR rules are Kafka's (cluster/Partition and cluster/Replica, ZooKeeper mode):
//   - the ISR is one PartitionIsrState (partition-isr-state.ts): committed, pending expand or pending
//     shrink; acks and min.insync.replicas count the committed ISR, the high watermark is the minimum log
//     end offset over the maximal ISR (committed plus a member being added), held while the committed ISR
//     is below the effective min.insync.replicas (the setting capped at the replica count, KAFKA-15583);
//   - at most one change in flight: maybeExpandIsr / maybeShrinkIsr propose nothing while one is pending;
//     the AlterPartitionManager sends the proposal and hands the answer back (handleAlterPartitionUpdate /
//     handleAlterPartitionError), which commits it, resets to the last committed state, or asks to retry;
//   - a follower is caught up when its fetch reaches the leader's log end now, or the log end the leader had
//     when it answered the follower's previous fetch (Replica.updateFetchState's lastFetchLeaderLogEndOffset);
//     it is out of sync after replica.lag.time.max.ms without catching up;
//   - a LeaderAndIsr whose leader epoch is not above the current one changes nothing (ReplicaManager checks).

import type { Time } from "../../common/time.js";
import { type TopicPartition, topicPartitionKey } from "../../common/topic-partition.js";
import { type ErrorName, KafkaError } from "../../protocol/errors.js";
import { ATTRIBUTES_OFFSET, CONTROL_FLAG_MASK } from "../../protocol/records/index.js";
import {
  UNDEFINED_EPOCH,
  UNDEFINED_EPOCH_OFFSET,
} from "../../storage/leader-epoch/leader-epoch-file-cache.js";
import type { LogAppendInfo } from "../../storage/log-append-info.js";
import { isStorageError } from "../../storage/log-dir-failure-channel.js";
import { isNoSpaceError } from "../../storage/log-dir-space.js";
import type { LogManager } from "../../storage/log-manager.js";
import { validateRecords } from "../../storage/log-validator.js";
import type { AppendOrigin } from "../../storage/producer-state/producer-append-info.js";
import {
  EARLIEST_LOCAL_TIMESTAMP,
  EARLIEST_TIMESTAMP,
  type FetchIsolation,
  LATEST_TIMESTAMP,
  type LogReadResult,
  type TimestampAndOffset,
  type UnifiedLog,
} from "../../storage/unified-log.js";
import type { PartitionState } from "../metadata/partition-state.js";
import {
  type AlterPartitionProposal,
  CommittedPartitionState,
  type PartitionIsrState,
  PendingExpandIsr,
  type PendingPartitionChange,
  PendingShrinkIsr,
} from "./partition-isr-state.js";

export { RecordValidationError } from "../../storage/log-validator.js";

/** The leader epoch a request carries when it has none (RecordBatch.NO_PARTITION_LEADER_EPOCH). */
export const NO_LEADER_EPOCH = -1;

/** What the leader knows of another replica (Kafka's ReplicaState). */
export interface ReplicaState {
  readonly brokerId: number;
  logEndOffset: bigint;
  logStartOffset: bigint;
  lastCaughtUpTimeMs: number;
  lastFetchTimeMs: number;
  /** The leader's log end offset when it answered this replica's previous fetch (-1: none yet). */
  lastFetchLeaderLogEndOffset: bigint;
}

/** A read from the partition with the offsets as they were at that moment. */
export interface PartitionReadResult extends LogReadResult {
  leaderEpoch: number;
}

export class Partition {
  readonly topicPartition: TopicPartition;
  readonly key: string;
  private _log: UnifiedLog | undefined;
  private _leaderReplicaId = -1;
  private _leaderEpoch = NO_LEADER_EPOCH;
  private _controllerEpoch = -1;
  private _zkVersion = -1;
  private _isrState: PartitionIsrState = new CommittedPartitionState([]);
  /** The log end offset when this broker became leader at the current epoch (Kafka's leaderEpochStartOffsetOpt). */
  private leaderEpochStartOffset: bigint | undefined;
  private _assignment: readonly number[] = [];
  /** Replicas other than this broker, tracked while this broker leads. */
  private readonly remoteReplicas = new Map<number, ReplicaState>();

  constructor(
    topicPartition: TopicPartition,
    private _topicId: string,
    readonly localBrokerId: number,
    private readonly logManager: LogManager,
    private readonly time: Time,
    /** min.insync.replicas of the partition's topic. */
    private readonly minInsyncReplicas: () => number,
  ) {
    this.topicPartition = { topic: topicPartition.topic, partition: topicPartition.partition };
    this.key = topicPartitionKey(topicPartition);
  }

  get topic(): string {
    return this.topicPartition.topic;
  }

  get partitionId(): number {
    return this.topicPartition.partition;
  }

  get topicId(): string {
    return this._topicId;
  }

  get leaderReplicaId(): number {
    return this._leaderReplicaId;
  }

  get leaderEpoch(): number {
    return this._leaderEpoch;
  }

  get controllerEpoch(): number {
    return this._controllerEpoch;
  }

  get zkVersion(): number {
    return this._zkVersion;
  }

  /** The committed ISR (what acks and min.insync.replicas count). */
  get isr(): readonly number[] {
    return this._isrState.isr;
  }

  /** The ISR state: committed, or a change sent to the controller and not answered yet. */
  get isrState(): PartitionIsrState {
    return this._isrState;
  }

  /** The committed ISR plus a member being added (what the high watermark waits for). */
  get maximalIsr(): readonly number[] {
    return this._isrState.maximalIsr;
  }

  get assignment(): readonly number[] {
    return this._assignment;
  }

  /**
   * The min.insync.replicas in force (Kafka's effectiveMinIsr, since KAFKA-15583): the topic's setting
   * (its override, else the broker's), but never more than the partition's replicas — a partition with
   * fewer replicas than the setting is held to all of them.
   */
  minIsr(): number {
    return Math.min(this.minInsyncReplicas(), this._assignment.length);
  }

  get isLeader(): boolean {
    return this._leaderReplicaId === this.localBrokerId;
  }

  /** The local replica's log (undefined until the partition was made leader or follower). */
  get log(): UnifiedLog | undefined {
    return this._log;
  }

  /** The local replica's future log: its copy being built in another log dir (AlterReplicaLogDirs). */
  get futureLog(): UnifiedLog | undefined {
    return this.logManager.getFutureLog(this.topicPartition);
  }

  /** Whether a future log exists in a dir other than `dir` (Kafka's futureReplicaDirChanged). */
  futureReplicaDirChanged(dir: string): boolean {
    const futureDir = this.logManager.futureLogDirOf(this.topicPartition);
    return futureDir !== undefined && futureDir !== (this.logManager.configuredLogDir(dir) ?? dir);
  }

  /**
   * Kafka's maybeCreateFutureReplica: creates the future log in `dir` unless the current log is already
   * there or the future log exists there; returns whether it was created (the copy then starts).
   */
  maybeCreateFutureReplica(dir: string): boolean {
    const target = this.logManager.configuredLogDir(dir) ?? dir;
    if (this.logManager.logDirOf(this.topicPartition) === target) return false;
    const futureDir = this.logManager.futureLogDirOf(this.topicPartition);
    if (futureDir !== undefined) {
      if (futureDir !== target)
        throw new Error(
          `The future log dir ${futureDir} of ${this.key} is different from the requested log dir ${target}`,
        );
      return false;
    }
    this.logManager.getOrCreateFutureLog(this.topicPartition, this._topicId || undefined);
    return true;
  }

  /** Whether the future log's dir is full (its appends would be refused). */
  get isFutureLogDirFull(): boolean {
    const dir = this.logManager.futureLogDirOf(this.topicPartition);
    return dir !== undefined && this.logManager.isLogDirFull(dir);
  }

  /** Removes the future log (Kafka's removeFutureLocalReplica): a move cancelled, redirected or failed. */
  removeFutureReplica(): void {
    this.logManager.removeFutureLog(this.topicPartition);
  }

  /**
   * Kafka's maybeReplaceCurrentWithFutureReplica: when the future log ends where the current log ends, it
   * becomes the replica's log (synchronously: no append in between). Returns whether it did.
   */
  maybeReplaceCurrentWithFutureReplica(): boolean {
    const current = this._log;
    const future = this.futureLog;
    if (current === undefined || future === undefined || future.logEndOffset !== current.logEndOffset)
      return false;
    try {
      this._log = this.logManager.replaceCurrentWithFutureLog(this.topicPartition);
    } finally {
      // After a failure the LogManager has the partition offline (or still the current log).
      if (this._log === current) this._log = this.logManager.getLog(this.topicPartition);
    }
    return true;
  }

  /**
   * Why the local replica is offline (its log could not be opened or written: Kafka's offline replica,
   * KAFKA_STORAGE_ERROR), or undefined.
   */
  get offlineCause(): string | undefined {
    return this.logManager.offlineLog(this.topicPartition)?.cause;
  }

  get isOffline(): boolean {
    return this.offlineCause !== undefined;
  }

  /**
   * Offline, or its log cannot be written (its log dir is full) or could not be created: what the
   * replica answers to LeaderAndIsr as KAFKA_STORAGE_ERROR (reads of a full dir's log still work).
   */
  get isStorageUnavailable(): boolean {
    if (this.isOffline || this._log === undefined) return true;
    const dir = this.logManager.logDirOf(this.topicPartition);
    return dir !== undefined && this.logManager.isLogDirFull(dir);
  }

  /** KAFKA_STORAGE_ERROR for this partition (Kafka's message for an offline replica). */
  private storageError(): KafkaError {
    return new KafkaError(
      "KAFKA_STORAGE_ERROR",
      `Partition ${this.key} is offline on broker ${this.localBrokerId}: ${this.offlineCause ?? "its log dir failed"}`,
    );
  }

  /** Runs an operation on the log; an I/O error takes the partition offline and becomes KAFKA_STORAGE_ERROR. */
  private onLog<T>(log: UnifiedLog, op: (log: UnifiedLog) => T): T {
    try {
      return op(log);
    } catch (e) {
      if (!isStorageError(e)) throw e;
      const dir = this.logManager.logDirOf(this.topicPartition) ?? log.dir;
      if (isNoSpaceError(e)) {
        // The log undid the append (a checkpoint that failed after it keeps it) and the dir is full:
        // nothing goes offline.
        this.logManager.markLogDirFull(dir, e as Error);
        throw new KafkaError(
          "KAFKA_STORAGE_ERROR",
          `Partition ${this.key} on broker ${this.localBrokerId} cannot be written: log dir ${dir} is full (${(e as Error).message})`,
        );
      }
      this.logManager.markLogOffline(this.topicPartition, dir, e as Error);
      throw this.storageError();
    }
  }

  /** Creates (or opens) the local log; a high watermark from the replication-offset-checkpoint is applied. */
  createLogIfNotExists(checkpointedHighWatermark: bigint | undefined): UnifiedLog {
    if (this._log !== undefined) return this._log;
    const log = this.logManager.getOrCreateLog(this.topicPartition, this._topicId || undefined);
    if (checkpointedHighWatermark !== undefined) log.updateHighWatermark(checkpointedHighWatermark);
    this._log = log;
    return log;
  }

  /**
   * The local log, or undefined when it is offline (KAFKA_STORAGE_ERROR from the LogManager, which has
   * logged the cause): the partition then takes the state without a log and answers KAFKA_STORAGE_ERROR.
   */
  private createLogOrGoOffline(state: PartitionState, hw: bigint | undefined): UnifiedLog | undefined {
    try {
      return this.createLogIfNotExists(hw);
    } catch (e) {
      if (!(e instanceof KafkaError) || e.errorName !== "KAFKA_STORAGE_ERROR") throw e;
      this.applyState(state);
      this.remoteReplicas.clear();
      this.leaderEpochStartOffset = undefined;
      return undefined;
    }
  }

  private applyState(state: PartitionState): void {
    if (state.topicId) this._topicId = state.topicId;
    this._controllerEpoch = state.controllerEpoch;
    this._zkVersion = state.zkVersion;
    this._assignment = [...state.replicas];
    this._isrState = new CommittedPartitionState([...state.isr]);
    this._leaderReplicaId = state.leader;
    this._leaderEpoch = state.leaderEpoch;
  }

  /**
   * Makes this broker the leader with the state's epoch and ISR (Kafka's makeLeader). Returns whether this
   * broker was not already the leader at this epoch. The leader's HW may move at once (ISR of one).
   */
  makeLeader(state: PartitionState, checkpointedHighWatermark?: bigint): boolean {
    const wasLeader = this.isLeader && this._leaderEpoch === state.leaderEpoch;
    const log = this.createLogOrGoOffline(state, checkpointedHighWatermark);
    if (log === undefined) return !wasLeader;
    const isNewLeaderEpoch = state.leaderEpoch > this._leaderEpoch || !this.isLeader;
    this.applyState(state);
    if (isNewLeaderEpoch) this.leaderEpochStartOffset = log.logEndOffset;
    const now = this.time.milliseconds();
    // Remote replica state starts unknown (Kafka resets it on a new leader epoch).
    if (isNewLeaderEpoch) this.remoteReplicas.clear();
    for (const id of state.replicas) {
      if (id === this.localBrokerId || this.remoteReplicas.has(id)) continue;
      this.remoteReplicas.set(id, {
        brokerId: id,
        logEndOffset: -1n,
        logStartOffset: -1n,
        lastCaughtUpTimeMs: state.isr.includes(id) ? now : 0,
        lastFetchTimeMs: 0,
        lastFetchLeaderLogEndOffset: -1n,
      });
    }
    for (const id of [...this.remoteReplicas.keys()])
      if (!state.replicas.includes(id)) this.remoteReplicas.delete(id);
    // New leader epoch: later appends are stamped with it; the cache entry is added by the first append.
    // Kafka writes the epoch at the leader's LEO at once, so OffsetForLeaderEpoch sees it before any append.
    const cache = log.leaderEpochCache;
    if (cache !== undefined && state.leaderEpoch >= 0) {
      const latest = cache.latestEpoch();
      // Written off the event loop, durable before the recovery point passes it (LeaderEpochFileCache.assign).
      if (latest === undefined || state.leaderEpoch > latest)
        cache.assign(state.leaderEpoch, log.logEndOffset, "background");
    }
    this.maybeIncrementLeaderHW();
    return !wasLeader;
  }

  /** Records another broker as leader (Kafka's makeFollower); fetching from it comes with replication. */
  makeFollower(state: PartitionState, checkpointedHighWatermark?: bigint): boolean {
    const changed = this._leaderReplicaId !== state.leader || this._leaderEpoch !== state.leaderEpoch;
    if (this.createLogOrGoOffline(state, checkpointedHighWatermark) === undefined) return changed;
    this.applyState(state);
    this.leaderEpochStartOffset = undefined;
    this.remoteReplicas.clear();
    return changed;
  }

  /** Error for a request's current_leader_epoch (Kafka's checkCurrentLeaderEpoch), or undefined. */
  checkCurrentLeaderEpoch(requestEpoch: number): ErrorName | undefined {
    if (requestEpoch === NO_LEADER_EPOCH) return undefined;
    if (requestEpoch < this._leaderEpoch) return "FENCED_LEADER_EPOCH";
    if (requestEpoch > this._leaderEpoch) return "UNKNOWN_LEADER_EPOCH";
    return undefined;
  }

  /** The log if this broker may serve the request: leader (or any replica when !fetchOnlyFromLeader). */
  localLogWithEpochOrThrow(currentLeaderEpoch: number, fetchOnlyFromLeader: boolean): UnifiedLog {
    if (this.isOffline) throw this.storageError();
    const epochError = this.checkCurrentLeaderEpoch(currentLeaderEpoch);
    if (epochError !== undefined) {
      throw new KafkaError(
        epochError,
        `the leader epoch ${currentLeaderEpoch} of the request for ${this.key} is ${epochError === "FENCED_LEADER_EPOCH" ? "older" : "newer"} than the current leader epoch ${this._leaderEpoch}`,
      );
    }
    if (fetchOnlyFromLeader && !this.isLeader) {
      throw new KafkaError(
        "NOT_LEADER_OR_FOLLOWER",
        `broker ${this.localBrokerId} is not the leader of ${this.key}`,
      );
    }
    if (this._log === undefined) {
      throw new KafkaError(
        "NOT_LEADER_OR_FOLLOWER",
        `broker ${this.localBrokerId} has no replica of ${this.key}`,
      );
    }
    return this._log;
  }

  /**
   * Appends a producer's batches (Kafka's appendRecordsToLeader): NOT_LEADER_OR_FOLLOWER when not the
   * leader; with acks=-1 NOT_ENOUGH_REPLICAS when the ISR is smaller than min.insync.replicas; then the
   * LogValidator (record errors: RecordValidationError) and the log's append. The HW
   * moves when the ISR allows (at once with RF 1). `origin` is Kafka's AppendOrigin: "coordinator" for
   * the transaction markers the broker builds itself (the only control batches a log accepts; they skip
   * the LogValidator). Throws KafkaError.
   */
  appendRecordsToLeader(
    records: Buffer,
    requiredAcks: number,
    origin: AppendOrigin = "client",
  ): { info: LogAppendInfo; hwIncremented: boolean } {
    if (this.isOffline) throw this.storageError();
    // A leader whose log could not be created while its dir was full creates it now (or answers
    // KAFKA_STORAGE_ERROR while the dir is still full).
    if (this.isLeader && this._log === undefined) this.createLogIfNotExists(undefined);
    if (!this.isLeader || this._log === undefined) {
      throw new KafkaError(
        "NOT_LEADER_OR_FOLLOWER",
        `Leader not local for partition ${this.key} on broker ${this.localBrokerId}`,
      );
    }
    const minIsr = this.minIsr();
    const inSyncSize = this._isrState.isr.length;
    if (requiredAcks === -1 && inSyncSize < minIsr) {
      throw new KafkaError(
        "NOT_ENOUGH_REPLICAS",
        `The size of the current ISR ${inSyncSize} is insufficient to satisfy the min.isr requirement of ${minIsr} for partition ${this.key}`,
      );
    }
    // Kafka's LogValidator: record-level checks and recompression (the hot path leaves the bytes as they are).
    const isMarker =
      origin === "coordinator" &&
      records.length > ATTRIBUTES_OFFSET + 2 &&
      (records.readInt16BE(ATTRIBUTES_OFFSET) & CONTROL_FLAG_MASK) !== 0;
    const validated = isMarker
      ? { records }
      : validateRecords(records, {
          config: this._log.config,
          nowMs: BigInt(this.time.milliseconds()),
          topicPartition: this.key,
        });
    const epoch = this._leaderEpoch;
    const info = this.onLog(this._log, (log) => log.appendAsLeader(validated.records, epoch, origin));
    const hwIncremented = this.maybeIncrementLeaderHW();
    return { info, hwIncremented };
  }

  /**
   * HW = min LEO over the maximal ISR (the leader's own LEO included; a member being added counts: Kafka's
   * maximalIsr); returns whether it moved. Not while the committed ISR is below the effective
   * min.insync.replicas (Kafka since KAFKA-15583): records written then with acks=0/1 stay invisible to
   * consumers until enough replicas have them.
   */
  maybeIncrementLeaderHW(): boolean {
    const log = this._log;
    if (!this.isLeader || log === undefined) return false;
    const isr = this._isrState.isr;
    // (An ISR as large as the replica set is never below the effective minimum: no config lookup then.)
    if (isr.length < this._assignment.length && isr.length < this.minIsr()) return false;
    let newHw = log.logEndOffset;
    for (const id of this._isrState.maximalIsr) {
      if (id === this.localBrokerId) continue;
      const r = this.remoteReplicas.get(id);
      // A replica in the ISR that has not fetched yet holds the HW where it is.
      const leo = r === undefined || r.logEndOffset < 0n ? log.highWatermark : r.logEndOffset;
      if (leo < newHw) newHw = leo;
    }
    if (newHw > log.highWatermark) {
      log.maybeIncrementHighWatermark(newHw);
      return true;
    }
    return false;
  }

  /**
   * Kafka's isFollowerInSync for an expansion: `replicaId` (not in the ISR) has caught up to the high
   * watermark and to the start of this leader epoch.
   */
  private isFollowerInSync(r: ReplicaState, log: UnifiedLog): boolean {
    if (r.logEndOffset < log.highWatermark) return false;
    return this.leaderEpochStartOffset === undefined || r.logEndOffset >= this.leaderEpochStartOffset;
  }

  /**
   * Kafka's maybeExpandIsr: when `replicaId` (an assigned replica outside the ISR) has caught up and no ISR
   * change is in flight, the state becomes PendingExpandIsr and the proposal to send is returned (the HW
   * waits for the new member from now on). Undefined when there is nothing to propose.
   */
  maybeExpandIsr(replicaId: number): AlterPartitionProposal | undefined {
    const log = this._log;
    const r = this.remoteReplicas.get(replicaId);
    const state = this._isrState;
    if (!this.isLeader || log === undefined || r === undefined) return undefined;
    if (state.isInflight || state.isr.includes(replicaId) || !this.isFollowerInSync(r, log)) return undefined;
    const committed = state as CommittedPartitionState;
    const sent: AlterPartitionProposal = {
      leaderEpoch: this._leaderEpoch,
      newIsr: [...committed.isr, replicaId],
      partitionEpoch: this._zkVersion,
    };
    this._isrState = new PendingExpandIsr(replicaId, sent, committed);
    return sent;
  }

  /**
   * Kafka's getOutOfSyncReplicas: the committed ISR's followers whose log end is not the leader's and that
   * have not caught up for more than `lagTimeMaxMs` (replica.lag.time.max.ms).
   */
  outOfSyncReplicas(lagTimeMaxMs: number): number[] {
    const log = this._log;
    if (!this.isLeader || log === undefined) return [];
    const now = this.time.milliseconds();
    const leo = log.logEndOffset;
    return this._isrState.isr.filter((id) => {
      if (id === this.localBrokerId) return false;
      const r = this.remoteReplicas.get(id);
      if (r === undefined) return true;
      return r.logEndOffset !== leo && now - r.lastCaughtUpTimeMs > lagTimeMaxMs;
    });
  }

  /**
   * Kafka's maybeShrinkIsr: with no ISR change in flight and followers out of sync, the state becomes
   * PendingShrinkIsr and the proposal (the ISR without them) is returned; undefined otherwise.
   */
  maybeShrinkIsr(lagTimeMaxMs: number): AlterPartitionProposal | undefined {
    const state = this._isrState;
    if (state.isInflight) return undefined;
    const outOfSync = this.outOfSyncReplicas(lagTimeMaxMs);
    if (outOfSync.length === 0) return undefined;
    const committed = state as CommittedPartitionState;
    const sent: AlterPartitionProposal = {
      leaderEpoch: this._leaderEpoch,
      newIsr: committed.isr.filter((id) => !outOfSync.includes(id)),
      partitionEpoch: this._zkVersion,
    };
    this._isrState = new PendingShrinkIsr(outOfSync, sent, committed);
    return sent;
  }

  /**
   * The controller answered a pending change with a partition state (Kafka's handleAlterPartitionUpdate).
   * Ignored when the state has moved on since (a LeaderAndIsr came in between), the leader epoch differs or
   * the partition epoch is older than the one held. Otherwise the answer is committed — a newer partition
   * epoch (the change was written) or the same one (the controller already had it) — and the HW may move.
   * Returns whether it was committed.
   */
  handleAlterPartitionUpdate(
    proposed: PendingPartitionChange,
    leaderEpoch: number,
    isr: readonly number[],
    partitionEpoch: number,
  ): boolean {
    if (this._isrState !== proposed || !this.isLeader) return false;
    if (leaderEpoch !== this._leaderEpoch || partitionEpoch < this._zkVersion) return false;
    this._isrState = new CommittedPartitionState([...isr]);
    this._zkVersion = partitionEpoch;
    this.maybeIncrementLeaderHW();
    return true;
  }

  /**
   * The controller refused a pending change (Kafka's handleAlterPartitionError); returns whether to send it
   * again. OPERATION_NOT_ATTEMPTED and INELIGIBLE_REPLICA say the change was not applied and the partition
   * epoch is right: back to the last committed state (a later fetch or check proposes again). Errors that
   * say this leader's view is stale (FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION, UNKNOWN_TOPIC_OR_PARTITION,
   * INVALID_REQUEST, NEW_LEADER_ELECTED) leave the change pending until a LeaderAndIsr brings the new
   * state. Anything else (NOT_CONTROLLER, a timeout, STALE_BROKER_EPOCH …) is retried while the change is
   * still the pending one.
   */
  handleAlterPartitionError(proposed: PendingPartitionChange, error: ErrorName): boolean {
    if (this._isrState !== proposed) return false;
    switch (error) {
      case "OPERATION_NOT_ATTEMPTED":
      case "INELIGIBLE_REPLICA":
        this._isrState = proposed.lastCommittedState;
        return false;
      case "UNKNOWN_TOPIC_OR_PARTITION":
      case "UNKNOWN_TOPIC_ID":
      case "FENCED_LEADER_EPOCH":
      case "INVALID_UPDATE_VERSION":
      case "INVALID_REQUEST":
      case "NEW_LEADER_ELECTED":
        return false;
      default:
        return true;
    }
  }

  /**
   * A follower fetched from fetchOffset: its LEO is that offset (Kafka's updateFollowerFetchState and
   * Replica.updateFetchState). It is caught up now when it reached the leader's log end, or as of its
   * previous fetch when it reached the log end the leader had then (under steady appends a follower one
   * round trip behind is in sync). Returns whether the HW moved.
   */
  updateFollowerFetchState(replicaId: number, fetchOffset: bigint, followerLogStartOffset: bigint): boolean {
    const r = this.remoteReplicas.get(replicaId);
    const log = this._log;
    if (r === undefined || log === undefined) return false;
    const now = this.time.milliseconds();
    // The read that answers this fetch runs in the same turn: this is the log end it sees.
    const leaderEndOffset = log.logEndOffset;
    if (fetchOffset >= leaderEndOffset) r.lastCaughtUpTimeMs = Math.max(r.lastCaughtUpTimeMs, now);
    else if (r.lastFetchLeaderLogEndOffset >= 0n && fetchOffset >= r.lastFetchLeaderLogEndOffset)
      r.lastCaughtUpTimeMs = Math.max(r.lastCaughtUpTimeMs, r.lastFetchTimeMs);
    r.logEndOffset = fetchOffset;
    r.logStartOffset = followerLogStartOffset;
    r.lastFetchLeaderLogEndOffset = leaderEndOffset;
    r.lastFetchTimeMs = now;
    return this.maybeIncrementLeaderHW();
  }

  remoteReplicaState(replicaId: number): ReplicaState | undefined {
    return this.remoteReplicas.get(replicaId);
  }

  /**
   * Whether an acks=-1 append up to requiredOffset is done (Kafka's checkEnoughReplicasReachOffset):
   * undefined while waiting; "NONE" when the HW reached it with enough ISR members;
   * NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrank below min.insync.replicas meanwhile.
   */
  checkEnoughReplicasReachOffset(requiredOffset: bigint): ErrorName | "NONE" | undefined {
    const log = this._log;
    if (!this.isLeader || log === undefined) return "NOT_LEADER_OR_FOLLOWER";
    if (log.highWatermark < requiredOffset) return undefined;
    return this._isrState.isr.length >= this.minIsr() ? "NONE" : "NOT_ENOUGH_REPLICAS_AFTER_APPEND";
  }

  /**
   * Reads from fetchOffset (Kafka's fetchRecords/readRecords): leadership and epoch checks, then whole
   * batches up to maxBytes, bounded by the isolation. Throws KafkaError (OFFSET_OUT_OF_RANGE, …).
   */
  readRecords(
    fetchOffset: bigint,
    currentLeaderEpoch: number,
    maxBytes: number,
    isolation: FetchIsolation,
    fetchOnlyFromLeader: boolean,
    minOneMessage: boolean,
    allocate?: (size: number) => Buffer,
  ): PartitionReadResult {
    const log = this.localLogWithEpochOrThrow(currentLeaderEpoch, fetchOnlyFromLeader);
    const r = this.onLog(log, (l) => l.read(fetchOffset, maxBytes, isolation, minOneMessage, allocate));
    return { ...r, leaderEpoch: this._leaderEpoch };
  }

  /** The end of what the isolation lets a reader see. */
  visibleEndOffset(isolation: FetchIsolation): bigint {
    const log = this._log;
    if (log === undefined) return -1n;
    return isolation === "log-end"
      ? log.logEndOffset
      : isolation === "high-watermark"
        ? log.highWatermark
        : log.lastStableOffset;
  }

  /**
   * ListOffsets on the leader (Kafka's fetchOffsetForTimestamp): latest is the last fetchable offset (HW, or
   * LSO under read_committed; LEO for a replica), earliest the log start offset, otherwise by timestamp,
   * only offsets below the last fetchable offset. Undefined when no offset matches.
   */
  fetchOffsetForTimestamp(
    timestamp: bigint,
    isolation: FetchIsolation,
    currentLeaderEpoch: number,
    fetchOnlyFromLeader: boolean,
  ): TimestampAndOffset | undefined {
    const log = this.localLogWithEpochOrThrow(currentLeaderEpoch, fetchOnlyFromLeader);
    const lastFetchableOffset = this.visibleEndOffset(isolation);
    // A new leader whose HW has not yet reached the start of its epoch cannot answer clients for "latest"
    // or for a time beyond what is fetchable (Kafka's OFFSET_NOT_AVAILABLE).
    const offsetsError =
      isolation !== "log-end" &&
      this.leaderEpochStartOffset !== undefined &&
      this.leaderEpochStartOffset > log.highWatermark
        ? new KafkaError(
            "OFFSET_NOT_AVAILABLE",
            `Failed to fetch offsets for partition ${this.key} with leader epoch ${this._leaderEpoch} as this partition's high watermark (${log.highWatermark}) is lagging behind the start offset from the beginning of this epoch (${this.leaderEpochStartOffset}).`,
          )
        : undefined;
    if (timestamp === LATEST_TIMESTAMP) {
      if (offsetsError) throw offsetsError;
      return { timestamp: -1n, offset: lastFetchableOffset, leaderEpoch: this._leaderEpoch };
    }
    const found = log.fetchOffsetByTimestamp(timestamp);
    if (timestamp === EARLIEST_TIMESTAMP || timestamp === EARLIEST_LOCAL_TIMESTAMP) return found;
    if (found !== undefined && found.offset < lastFetchableOffset) return found;
    if (offsetsError) throw offsetsError;
    return undefined;
  }

  /**
   * ListOffsets v0 (Kafka's legacyFetchOffsetsBefore): segment base offsets (and the LEO) of segments
   * last modified at or before the timestamp, newest first, at most maxNumOffsets; a consumer never sees
   * an offset above the high watermark.
   */
  legacyFetchOffsetsBefore(timestamp: bigint, maxNumOffsets: number, fetchOnlyFromLeader: boolean): bigint[] {
    const log = this.localLogWithEpochOrThrow(NO_LEADER_EPOCH, fetchOnlyFromLeader);
    const segments = log.segments();
    const offsetTime: Array<[bigint, number]> = segments.map((s) => [
      maxOffset(s.baseOffset, log.logStartOffset),
      s.lastModified,
    ]);
    if (segments[segments.length - 1].size > 0) offsetTime.push([log.logEndOffset, this.time.milliseconds()]);
    let start: number;
    if (timestamp === LATEST_TIMESTAMP) start = offsetTime.length - 1;
    else if (timestamp === EARLIEST_TIMESTAMP) start = 0;
    else {
      start = offsetTime.length - 1;
      while (start >= 0 && BigInt(offsetTime[start][1]) > timestamp) start--;
    }
    const out: bigint[] = [];
    for (let n = Math.min(maxNumOffsets, start + 1); n > 0; n--) out.push(offsetTime[start--][0]);
    out.sort((a, b) => (a > b ? -1 : a < b ? 1 : 0));
    if (!fetchOnlyFromLeader) return out;
    const hw = log.highWatermark;
    if (out.some((o) => o > hw)) return [hw, ...out.filter((o) => o <= hw)];
    return out;
  }

  /**
   * DeleteRecords on the leader: -1 means the high watermark; the log start offset moves up (never past the
   * HW: OFFSET_OUT_OF_RANGE). Returns the low watermark (the smallest log start offset of the replicas).
   */
  deleteRecordsOnLeader(offset: bigint): bigint {
    const log = this.localLogWithEpochOrThrow(NO_LEADER_EPOCH, true);
    if (log.config.cleanupPolicy.includes("compact") && !log.config.cleanupPolicy.includes("delete")) {
      throw new KafkaError(
        "POLICY_VIOLATION",
        `Records of partition ${this.key} can not be deleted due to the configured policy`,
      );
    }
    const converted = offset === -1n ? log.highWatermark : offset;
    if (converted < 0n) {
      throw new KafkaError(
        "OFFSET_OUT_OF_RANGE",
        `The offset ${offset} for partition ${this.key} is not valid`,
      );
    }
    log.maybeIncrementLogStartOffset(converted);
    // A full dir gets the space back now rather than at the next retention check.
    const dir = this.logManager.logDirOf(this.topicPartition);
    if (dir !== undefined && this.logManager.isLogDirFull(dir)) this.onLog(log, (l) => l.deleteOldSegments());
    return this.lowWatermark();
  }

  /** The smallest log start offset over the replicas (Kafka's lowWatermarkIfLeader). */
  lowWatermark(): bigint {
    const log = this._log;
    if (log === undefined) return -1n;
    let low = log.logStartOffset;
    for (const r of this.remoteReplicas.values())
      if (r.logStartOffset >= 0n && r.logStartOffset < low) low = r.logStartOffset;
    return low;
  }

  /**
   * OffsetForLeaderEpoch (Kafka's lastOffsetForLeaderEpoch): the end offset of the requested epoch from the
   * leader-epoch cache, the current epoch ending at the LEO.
   */
  lastOffsetForLeaderEpoch(
    currentLeaderEpoch: number,
    leaderEpoch: number,
    fetchOnlyFromLeader: boolean,
  ): { leaderEpoch: number; endOffset: bigint } {
    const log = this.localLogWithEpochOrThrow(currentLeaderEpoch, fetchOnlyFromLeader);
    const cache = log.leaderEpochCache;
    if (cache === undefined) return { leaderEpoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET };
    const r = cache.endOffsetFor(leaderEpoch, log.logEndOffset);
    return { leaderEpoch: r.epoch, endOffset: r.endOffset };
  }

  toString(): string {
    return `Partition(topicPartition=${this.key}, leader=${this._leaderReplicaId}, leaderEpoch=${this._leaderEpoch}, isr=${this._isrState.isr.join(",")}, isrState=${this._isrState})`;
  }
}

function maxOffset(a: bigint, b: bigint): bigint {
  return a >= b ? a : b;
}
