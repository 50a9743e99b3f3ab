// ReplicaManager: the partitions this broker hosts and everything that reads or writes them, Kafka's
// ReplicaManager. It applies leadership (becomeLeaderOrFollower, stopReplicas), appends producers'
// batches (acks 0/1/-1; acks=-1 through the DelayedProduce purgatory), serves fetches for consumers and
// followers (long polling through the DelayedFetch purgatory, woken by appends), owns the incremental
// fetch session cache (KIP-227) and checkpoints high watermarks to replication-offset-checkpoint every
// replica.high.watermark.checkpoint.interval.ms (restoring them when a partition is first loaded).
// It also writes the transaction coordinator's COMMIT/ABORT markers (appendTxnMarkers, acks=-1, origin
// "coordinator") and tells onTxnMarkerAppended listeners (the group coordinator) about each one.
//
// Batches are handled as bytes: an append validates headers only (UnifiedLog.appendAsLeader) unless the
// topic needs records looked at (the LogValidator, via Partition) and a fetch returns views of the segment
// bytes read. A partition whose log failed answers KAFKA_STORAGE_ERROR (Partition.isOffline).
// Appends and fetches mark Kafka's BrokerTopicMetrics (brokerTopicStats): per partition, never per record.
// Moves of replicas between this broker's log dirs (AlterReplicaLogDirs: alterReplicaLogDirs) create the
// future log and hand the partition to the ReplicaAlterLogDirsThread, which copies and swaps; a future log
// found at startup is resumed when its partition becomes leader or follower.

import { Logger } from "../../common/logger.js";
import { MetricsRegistry } from "../../common/metrics/metrics-registry.js";
import type { ScheduledTask, Scheduler } from "../../common/scheduler.js";
import type { Time } from "../../common/time.js";
import { type TopicPartition, topicPartitionKey } from "../../common/topic-partition.js";
import { ErrorCode, KafkaError } from "../../protocol/errors.js";
import { buildEndTxnMarkerBatch, ControlRecordType } from "../../protocol/records/index.js";
import type { LogManager } from "../../storage/log-manager.js";
import type { AppendOrigin } from "../../storage/producer-state/producer-append-info.js";
import { isInternalTopic } from "../metadata/internal-topics.js";
import type { PartitionState } from "../metadata/partition-state.js";
import { BrokerTopicStats } from "../metrics/broker-topic-stats.js";
import type { ReplicaQuota } from "../quota/replication-quota-manager.js";
import {
  DelayedFetch,
  type FetchParams,
  type FetchPartitionData,
  type FetchPartitionInfo,
} from "./delayed-fetch.js";
import { DelayedOperationPurgatory } from "./delayed-operation-purgatory.js";
import {
  DelayedProduce,
  type ProducePartitionResult,
  type ProducePartitionStatus,
} from "./delayed-produce.js";
import { FetchSessionCache } from "./fetch-session.js";
import { Partition, RecordValidationError } from "./partition.js";
import { type AlterLogDirsQuota, ReplicaAlterLogDirsThread } from "./replica-alter-log-dirs-thread.js";

export type { FetchParams, FetchPartitionData, FetchPartitionInfo } from "./delayed-fetch.js";
export type { ProducePartitionResult } from "./delayed-produce.js";

/** Kafka's fetch.max.bytes default (55 MiB): the broker's cap on a fetch response. */
export const DEFAULT_FETCH_MAX_BYTES = 57_671_680;

export interface ReplicaManagerConfig {
  /** replica.high.watermark.checkpoint.interval.ms (Kafka default 5000). */
  readonly replicaHighWatermarkCheckpointIntervalMs: number;
  /** min.insync.replicas: a number (broker default) or a per-topic lookup. Default 1. */
  readonly minInsyncReplicas?: number | ((topic: string) => number);
  /** fetch.max.bytes (default 55 MiB). */
  readonly fetchMaxBytes?: number;
  /** max.incremental.fetch.session.cache.slots (default 1000). */
  readonly maxIncrementalFetchSessionCacheSlots?: number;
  /** How long an unused fetch session is kept before it may be evicted (Kafka: 120 s). */
  readonly fetchSessionEvictionMs?: number;
  /**
   * Whether this broker's metadata cache has the partition (Kafka's metadataCache.contains(tp)): a partition
   * not hosted here is NOT_LEADER_OR_FOLLOWER when it does, UNKNOWN_TOPIC_OR_PARTITION when it does not.
   * Default: never (every partition not hosted is unknown).
   */
  readonly metadataCacheContains?: (tp: TopicPartition) => boolean;
}

/** A producer's batches for one partition. */
export interface ProduceEntry {
  readonly topicPartition: TopicPartition;
  readonly records: Buffer;
}

/** The transaction markers of one producer (a WriteTxnMarkers request's WritableTxnMarker). */
export interface TxnMarkerEntry {
  readonly producerId: bigint;
  readonly producerEpoch: number;
  readonly coordinatorEpoch: number;
  /** true: COMMIT, false: ABORT (WriteTxnMarkers transaction_result). */
  readonly committed: boolean;
  readonly partitions: readonly TopicPartition[];
}

/** Per producer, the error code of each partition's marker append. */
export interface TxnMarkerResult {
  producerId: bigint;
  results: Array<{ topicPartition: TopicPartition; errorCode: number }>;
}

/** Called once per partition whose marker was appended (and replicated, acks=-1). */
export type TxnMarkerListener = (
  topicPartition: TopicPartition,
  producerId: bigint,
  producerEpoch: number,
  committed: boolean,
) => void;

/** How long a marker append waits for the ISR (Kafka uses request.timeout.ms, default 30000). */
export const TXN_MARKER_APPEND_TIMEOUT_MS = 30_000;

/** One partition's outcome of a leadership change or stop. */
/**
 * An error code per partition; `ignored` marks a LeaderAndIsr partition state that changed nothing (its
 * leader epoch was not above the current one): no fetcher or coordinator change follows it.
 */
export type PartitionErrors = Map<
  string,
  { topicPartition: TopicPartition; errorCode: number; ignored?: boolean }
>;

export class ReplicaManager {
  private readonly partitions = new Map<string, Partition>();
  /** Partitions whose last LeaderAndIsr answered KAFKA_STORAGE_ERROR (an offline or full log dir). */
  private readonly awaitingStorage = new Set<string>();
  private readonly topicIds = new Map<string, string>();
  private readonly topicNames = new Map<string, string>();
  readonly delayedProducePurgatory: DelayedOperationPurgatory<DelayedProduce>;
  readonly delayedFetchPurgatory: DelayedOperationPurgatory<DelayedFetch>;
  readonly fetchSessionCache: FetchSessionCache;
  private readonly logger: Logger;
  /** replication-offset-checkpoint contents per log dir, read once before the first checkpoint is written. */
  private hwCheckpoints: Map<string, bigint> | undefined;
  private hwCheckpointTask: ScheduledTask | undefined;
  private stopped = false;
  private readonly txnMarkerListeners: TxnMarkerListener[] = [];
  /** Copies replicas moving between this broker's log dirs into their future logs (Kafka's ReplicaAlterLogDirsManager). */
  readonly alterLogDirsThread: ReplicaAlterLogDirsThread;
  /** Told of every follower fetch of a partition this broker leads (the AlterPartitionManager's ISR expansion). */
  followerFetchListener: ((partition: Partition, replicaId: number) => void) | undefined;
  /**
   * The leader replication quota (Kafka's quotas.leader): a follower outside the ISR fetching a throttled
   * partition gets no records while it is exceeded, and its bytes do not count toward min.bytes.
   */
  leaderReplicationQuota: ReplicaQuota | undefined;

  constructor(
    readonly brokerId: number,
    readonly logManager: LogManager,
    private readonly time: Time,
    private readonly scheduler: Scheduler,
    readonly config: ReplicaManagerConfig,
    /** Kafka's BrokerTopicMetrics, marked by appends and fetches (the broker's are exported on /metrics). */
    readonly brokerTopicStats: BrokerTopicStats = new BrokerTopicStats(new MetricsRegistry(time)),
  ) {
    this.logger = new Logger("kafka.server.ReplicaManager", `ReplicaManager broker=${brokerId}`);
    this.delayedProducePurgatory = new DelayedOperationPurgatory("Produce", scheduler);
    this.delayedFetchPurgatory = new DelayedOperationPurgatory("Fetch", scheduler);
    this.alterLogDirsThread = new ReplicaAlterLogDirsThread(brokerId, (tp) => this.getPartition(tp));
    this.fetchSessionCache = new FetchSessionCache(
      config.maxIncrementalFetchSessionCacheSlots ?? 1000,
      config.fetchSessionEvictionMs ?? 120_000,
      time,
    );
  }

  /** Starts background work (the HW checkpoint starts with the first becomeLeaderOrFollower, as Kafka). */
  startup(): void {
    this.loadHighWatermarkCheckpoints();
  }

  /** Completes waiting requests, writes the high watermarks, stops the checkpoint task. */
  shutdown(checkpointHW = true): void {
    if (this.stopped) return;
    this.stopped = true;
    this.alterLogDirsThread.shutdown();
    this.hwCheckpointTask?.cancel();
    this.hwCheckpointTask = undefined;
    this.delayedFetchPurgatory.shutdown();
    this.delayedProducePurgatory.shutdown();
    if (checkpointHW) {
      // On the way down: written now and durably.
      try {
        this.logManager.checkpoints.highWatermarks.writeOnShutdown();
      } catch (e) {
        this.logger.error(`Error while writing the high watermark checkpoint: ${(e as Error).message}`);
      }
    }
    this.logger.info("Shut down completely");
  }

  private minIsrFor(topic: string): number {
    const m = this.config.minInsyncReplicas;
    if (m === undefined) return 1;
    return typeof m === "number" ? m : m(topic);
  }

  private loadHighWatermarkCheckpoints(): Map<string, bigint> {
    if (this.hwCheckpoints === undefined) {
      const all = new Map<string, bigint>();
      for (const dir of this.logManager.config.logDirs) {
        for (const [k, v] of this.logManager.checkpoints.highWatermarks.read(dir)) all.set(k, v);
      }
      this.hwCheckpoints = all;
    }
    return this.hwCheckpoints;
  }

  private startHighWatermarkCheckPointThread(): void {
    if (this.hwCheckpointTask !== undefined || this.stopped) return;
    const interval = this.config.replicaHighWatermarkCheckpointIntervalMs;
    this.hwCheckpointTask = this.scheduler.schedule(
      "highwatermark-checkpoint",
      () => this.checkpointHighWatermarks(),
      interval,
      interval,
    );
  }

  /**
   * Writes every hosted log's high watermark to replication-offset-checkpoint in its log dir, off the event
   * loop (the periodic task; a failed write is logged by the writer, offset-checkpoints.ts).
   */
  checkpointHighWatermarks(): void {
    this.logManager.checkpoints.highWatermarks.checkpoint();
  }

  getPartition(tp: TopicPartition): Partition | undefined {
    return this.partitions.get(topicPartitionKey(tp));
  }

  allPartitions(): Partition[] {
    return [...this.partitions.values()];
  }

  /** The topic id of a hosted topic (base64url). */
  topicIdFor(topic: string): string | undefined {
    return this.topicIds.get(topic);
  }

  /** The name of a hosted topic by its id. */
  topicNameFor(topicId: string): string | undefined {
    return this.topicNames.get(topicId);
  }

  /**
   * The partition if this broker hosts it. Otherwise, as Kafka's getPartitionOrError: NOT_LEADER_OR_FOLLOWER
   * when the metadata cache has the partition (it lives on other brokers: the client refreshes its metadata
   * and goes there), UNKNOWN_TOPIC_OR_PARTITION when it does not.
   */
  getPartitionOrException(tp: TopicPartition): Partition {
    const p = this.getPartition(tp);
    if (p === undefined) {
      if (this.config.metadataCacheContains?.(tp)) {
        throw new KafkaError(
          "NOT_LEADER_OR_FOLLOWER",
          `Error while fetching partition state for ${topicPartitionKey(tp)}`,
        );
      }
      throw new KafkaError(
        "UNKNOWN_TOPIC_OR_PARTITION",
        `This server does not host this topic-partition: ${topicPartitionKey(tp)}`,
      );
    }
    return p;
  }

  /**
   * Applies the controller's partition states (Kafka's becomeLeaderOrFollower, ZooKeeper mode): partitions
   * whose leader is this broker become leaders, the others followers; logs are created as needed and the
   * checkpointed HW is restored on first load. A state whose leader epoch is not above the current one
   * changes nothing (the controller resends LeaderAndIsr at the same epoch on every failover and after
   * timeouts, and an ISR the leader has since changed through AlterPartition must not be reverted): it is
   * answered STALE_CONTROLLER_EPOCH, or KAFKA_STORAGE_ERROR when the local replica is offline or its log
   * dir full, and marked `ignored`. Returns an error code per partition.
   */
  becomeLeaderOrFollower(states: readonly PartitionState[]): PartitionErrors {
    const result: PartitionErrors = new Map();
    const checkpoints = this.loadHighWatermarkCheckpoints();
    for (const state of states) {
      const tp = { topic: state.topic, partition: state.partition };
      const key = topicPartitionKey(tp);
      let partition = this.partitions.get(key);
      // Tributary's full log dirs: a replica whose log could not be created (its dir was full) tries again
      // at any epoch, and a follower that answered KAFKA_STORAGE_ERROR (it stopped fetching) and whose dir
      // has room again is made a follower again at the same epoch (the controller's LeaderAndIsr after
      // the dir's "space again" event): Kafka has no such way back, its failed dirs stay offline.
      const recovers =
        partition !== undefined &&
        ((partition.log === undefined && !partition.isOffline) ||
          (this.awaitingStorage.has(key) &&
            state.leader !== this.brokerId &&
            !partition.isStorageUnavailable));
      if (partition !== undefined && state.leaderEpoch <= partition.leaderEpoch && !recovers) {
        const storageUnavailable = partition.isStorageUnavailable;
        if (state.leaderEpoch < partition.leaderEpoch)
          this.logger.warn(
            `Ignoring LeaderAndIsr for partition ${key} since its associated leader epoch ${state.leaderEpoch} is smaller than the current leader epoch ${partition.leaderEpoch}`,
          );
        else
          this.logger.info(
            `Ignoring LeaderAndIsr for partition ${key} since its associated leader epoch ${state.leaderEpoch} matches the current leader epoch`,
          );
        if (storageUnavailable) this.awaitingStorage.add(key);
        result.set(key, {
          topicPartition: tp,
          errorCode: storageUnavailable ? ErrorCode.KAFKA_STORAGE_ERROR : ErrorCode.STALE_CONTROLLER_EPOCH,
          ignored: true,
        });
        continue;
      }
      if (partition === undefined) {
        partition = new Partition(tp, state.topicId, this.brokerId, this.logManager, this.time, () =>
          this.minIsrFor(tp.topic),
        );
        this.partitions.set(key, partition);
      }
      if (state.topicId) {
        this.topicIds.set(state.topic, state.topicId);
        this.topicNames.set(state.topicId, state.topic);
      }
      try {
        const hw = partition.log === undefined ? checkpoints.get(key) : undefined;
        if (state.leader === this.brokerId) partition.makeLeader(state, hw);
        else partition.makeFollower(state, hw);
        // A future log found at startup (a move between log dirs in progress) is copied on.
        if (partition.futureLog !== undefined && partition.log !== undefined)
          this.alterLogDirsThread.addPartition(tp);
        // A smaller ISR can move the HW at once; a lost leadership fails what waited on it.
        this.tryCompleteDelayedRequests(key);
        // A replica on an offline or full log dir (its log failed, cannot be written or created; the
        // LogManager logged why) answers KAFKA_STORAGE_ERROR: the controller takes it as offline.
        const errorCode = partition.isStorageUnavailable ? ErrorCode.KAFKA_STORAGE_ERROR : ErrorCode.NONE;
        if (errorCode === ErrorCode.NONE) this.awaitingStorage.delete(key);
        else this.awaitingStorage.add(key);
        result.set(key, { topicPartition: tp, errorCode });
      } catch (e) {
        this.logger.error(
          `Error while making ${key} a ${state.leader === this.brokerId ? "leader" : "follower"}: ${(e as Error).message}`,
        );
        result.set(key, {
          topicPartition: tp,
          errorCode: e instanceof KafkaError ? e.code : ErrorCode.KAFKA_STORAGE_ERROR,
        });
      }
      // Waiting fetches and produces see the change (a leader lost completes them).
      this.tryCompleteDelayedRequests(key);
    }
    this.startHighWatermarkCheckPointThread();
    return result;
  }

  /**
   * Stops hosting partitions (Kafka's stopReplicas): they leave the broker's set, waiting requests on them
   * complete, and with deletePartitions their logs are deleted.
   */
  stopReplicas(
    partitions: ReadonlyArray<{ topic: string; partition: number }>,
    deletePartitions: boolean,
  ): PartitionErrors {
    const result: PartitionErrors = new Map();
    for (const p of partitions) {
      const tp = { topic: p.topic, partition: p.partition };
      const key = topicPartitionKey(tp);
      this.partitions.delete(key);
      this.awaitingStorage.delete(key);
      this.alterLogDirsThread.removePartition(tp);
      this.tryCompleteDelayedRequests(key);
      let errorCode: number = ErrorCode.NONE;
      if (deletePartitions) {
        try {
          this.logManager.deleteLog(tp);
        } catch (e) {
          this.logger.error(`Error while deleting the log of ${key}: ${(e as Error).message}`);
          errorCode = ErrorCode.KAFKA_STORAGE_ERROR;
        }
      }
      result.set(key, { topicPartition: tp, errorCode });
    }
    // Forget topic ids of topics with no partition left.
    const hosted = new Set([...this.partitions.values()].map((x) => x.topic));
    // A deleted topic's BrokerTopicMetrics go with it (Kafka's removeMetrics).
    if (deletePartitions)
      for (const p of partitions) if (!hosted.has(p.topic)) this.brokerTopicStats.removeMetrics(p.topic);
    for (const [topic, id] of [...this.topicIds]) {
      if (!hosted.has(topic)) {
        this.topicIds.delete(topic);
        this.topicNames.delete(id);
      }
    }
    return result;
  }

  /**
   * Re-checks the fetches and acks=all produces waiting on a partition (Kafka's tryCompleteDelayedRequests):
   * after anything that can move its high watermark or leadership besides an append or a follower fetch —
   * a leadership change, an ISR change accepted by the controller.
   */
  tryCompleteDelayedRequests(key: string): void {
    this.delayedFetchPurgatory.checkAndComplete(key);
    this.delayedProducePurgatory.checkAndComplete(key);
  }

  /**
   * Appends producers' batches to the leaders (Kafka's appendRecords). requiredAcks must be -1, 0 or 1
   * (else every partition gets INVALID_REQUIRED_ACKS). Resolves with one result per entry, in order: at
   * once for acks 0/1, when the ISR has the data (or timeoutMs passed) for acks -1.
   */
  appendRecords(
    timeoutMs: number,
    requiredAcks: number,
    entries: readonly ProduceEntry[],
    options: { internalTopicsAllowed?: boolean; origin?: AppendOrigin } = {},
  ): Promise<ProducePartitionResult[]> {
    if (requiredAcks !== -1 && requiredAcks !== 0 && requiredAcks !== 1) {
      return Promise.resolve(
        entries.map((e) => ({
          ...emptyResult(e.topicPartition),
          error: "INVALID_REQUIRED_ACKS" as const,
          errorMessage: `required acks ${requiredAcks} is not one of -1, 0, 1`,
        })),
      );
    }
    const statuses: ProducePartitionStatus[] = [];
    for (const e of entries) {
      const key = topicPartitionKey(e.topicPartition);
      const result = this.appendToLocalLog(
        e,
        requiredAcks,
        options.internalTopicsAllowed ?? false,
        options.origin ?? "client",
      );
      const r = result.result;
      this.brokerTopicStats.recordProduce(
        e.topicPartition.topic,
        r.error,
        e.records.length,
        r.error === "NONE" ? Number(result.lastOffset - r.baseOffset) + 1 : 0,
      );
      statuses.push({
        key,
        requiredOffset: result.lastOffset + 1n,
        acksPending: requiredAcks === -1 && result.result.error === "NONE",
        result: result.result,
      });
    }
    // Fetches waiting on these partitions see the new bytes (followers at once; consumers once the HW
    // moved) after the whole request is appended, so one response carries all of it (Kafka completes them
    // after the appends, through its action queue).
    for (const s of statuses)
      if (s.result.error === "NONE") this.delayedFetchPurgatory.checkAndComplete(s.key);
    if (requiredAcks !== -1 || !statuses.some((s) => s.acksPending)) {
      return Promise.resolve(statuses.map((s) => s.result));
    }
    return new Promise((resolve) => {
      const op = new DelayedProduce(timeoutMs, statuses, (tp) => this.getPartition(tp), resolve);
      this.delayedProducePurgatory.tryCompleteElseWatch(
        op,
        statuses.map((s) => s.key),
      );
    });
  }

  private appendToLocalLog(
    entry: ProduceEntry,
    requiredAcks: number,
    internalTopicsAllowed: boolean,
    origin: AppendOrigin,
  ): { result: ProducePartitionResult; lastOffset: bigint } {
    const tp = entry.topicPartition;
    const result = emptyResult(tp);
    if (!internalTopicsAllowed && isInternalTopic(tp.topic)) {
      result.error = "INVALID_TOPIC_EXCEPTION";
      result.errorMessage = `Cannot append to internal topic ${tp.topic}`;
      return { result, lastOffset: -1n };
    }
    try {
      const partition = this.getPartitionOrException(tp);
      const { info, hwIncremented } = partition.appendRecordsToLeader(entry.records, requiredAcks, origin);
      result.baseOffset = info.firstOffset;
      result.logAppendTimeMs = info.logAppendTime;
      result.logStartOffset = info.logStartOffset;
      if (hwIncremented) this.delayedProducePurgatory.checkAndComplete(partition.key);
      return { result, lastOffset: info.lastOffset };
    } catch (e) {
      if (!(e instanceof KafkaError)) throw e;
      result.error = e.errorName as ProducePartitionResult["error"];
      result.errorMessage = e.message;
      if (e instanceof RecordValidationError) result.recordErrors = [...e.recordErrors];
      const p = this.getPartition(tp);
      if (p?.log !== undefined) result.logStartOffset = p.log.logStartOffset;
      return { result, lastOffset: -1n };
    }
  }

  /**
   * Fetch (Kafka's fetchMessages): reads the partitions; answers at once when maxWaitMs <= 0, nothing was
   * asked, min.bytes are there or an error occurred, otherwise waits in the fetch purgatory until an append
   * brings min.bytes or maxWaitMs passes. Results are in the order of `partitions`.
   */
  fetchMessages(
    params: FetchParams,
    partitions: readonly FetchPartitionInfo[],
  ): Promise<FetchPartitionData[]> {
    const results = this.readFromLocalLog(params, partitions);
    for (let i = 0; i < results.length; i++)
      this.brokerTopicStats.recordFetchRead(partitions[i].topicPartition.topic, results[i].errorCode);
    let bytes = 0;
    let error = false;
    for (const r of results) {
      bytes += r.records.length;
      if (r.errorCode !== ErrorCode.NONE) error = true;
    }
    if (params.maxWaitMs <= 0 || partitions.length === 0 || bytes >= params.minBytes || error) {
      return Promise.resolve(results);
    }
    const initial = partitions.map((info, i) => {
      const p = this.getPartition(info.topicPartition);
      return { end: p?.visibleEndOffset(params.isolation) ?? -1n, bytes: results[i].records.length };
    });
    return new Promise((resolve) => {
      const op = new DelayedFetch(
        params.maxWaitMs,
        params,
        partitions,
        (tp) => this.getPartition(tp),
        (p, infos) => this.readFromLocalLog(p, infos),
        resolve,
        initial,
        (p) => this.shouldLeaderThrottle(p, params.replicaId),
      );
      this.delayedFetchPurgatory.tryCompleteElseWatch(
        op,
        partitions.map((p) => topicPartitionKey(p.topicPartition)),
      );
    });
  }

  /**
   * Kafka's shouldLeaderThrottle: a fetch by `replicaId` (a follower, >= 0) of a partition the leader quota
   * throttles, from a replica not in the ISR, while the quota is exceeded.
   */
  shouldLeaderThrottle(partition: Partition, replicaId: number): boolean {
    const quota = this.leaderReplicationQuota;
    if (quota === undefined || replicaId < 0) return false;
    return (
      !partition.isr.includes(replicaId) &&
      quota.isThrottled(partition.topicPartition) &&
      quota.isQuotaExceeded()
    );
  }

  /**
   * Reads every partition once (Kafka's readFromLocalLog): partition_max_bytes each within the response's
   * max_bytes; the first partition that returns data may exceed the limits by one whole batch
   * (minOneMessage), later ones get only whole batches within what is left. Followers' fetch offsets move
   * the HW.
   */
  readFromLocalLog(params: FetchParams, partitions: readonly FetchPartitionInfo[]): FetchPartitionData[] {
    let limitBytes = params.maxBytes;
    let minOneMessage = true;
    const out: FetchPartitionData[] = [];
    for (const info of partitions) {
      const tp = info.topicPartition;
      try {
        const partition = this.getPartitionOrException(tp);
        const adjustedMaxBytes = Math.max(0, Math.min(info.partitionMaxBytes, limitBytes));
        const r = partition.readRecords(
          info.fetchOffset,
          info.currentLeaderEpoch,
          adjustedMaxBytes,
          params.isolation,
          params.fetchOnlyFromLeader,
          minOneMessage,
          params.allocate,
        );
        // A throttled follower gets the offsets but no records (Kafka: an empty FetchDataInfo).
        const throttled = r.records.length > 0 && this.shouldLeaderThrottle(partition, params.replicaId);
        const records = throttled ? EMPTY : r.records;
        if (records.length > 0) minOneMessage = false;
        limitBytes = Math.max(0, limitBytes - records.length);
        if (params.replicaId >= 0 && partition.isLeader) {
          if (partition.updateFollowerFetchState(params.replicaId, info.fetchOffset, info.logStartOffset))
            this.delayedProducePurgatory.checkAndComplete(partition.key);
          this.followerFetchListener?.(partition, params.replicaId);
        }
        out.push({
          topicPartition: tp,
          errorCode: ErrorCode.NONE,
          highWatermark: r.highWatermark,
          lastStableOffset: r.lastStableOffset,
          logStartOffset: r.logStartOffset,
          records,
          preferredReadReplica: -1,
          abortedTransactions: r.abortedTransactions,
        });
      } catch (e) {
        if (!(e instanceof KafkaError)) throw e;
        // Kafka answers an error with unknown offsets (UnifiedLog.UnknownOffset).
        out.push({
          topicPartition: tp,
          errorCode: e.code,
          errorMessage: e.message,
          highWatermark: -1n,
          lastStableOffset: -1n,
          logStartOffset: -1n,
          records: EMPTY,
          preferredReadReplica: -1,
        });
      }
    }
    return out;
  }

  /**
   * Writes transaction markers (Kafka's handleWriteTxnMarkersRequest over appendRecords with
   * AppendOrigin.COORDINATOR): for each producer, one COMMIT or ABORT control batch per partition,
   * appended as the leader with acks=-1 (internal topics allowed). The marker ends the producer's
   * transaction in the partition's producer state, an ABORT is added to the segment's .txnindex, and the
   * last stable offset moves (waiting read_committed fetches wake). Resolves, per producer in order, with
   * each partition's error code once the ISR has the marker: NONE; UNKNOWN_TOPIC_OR_PARTITION (not
   * hosted); NOT_LEADER_OR_FOLLOWER; INVALID_PRODUCER_EPOCH (an epoch older than the producer's);
   * TRANSACTION_COORDINATOR_FENCED (a coordinator epoch older than the last marker's for that producer);
   * KAFKA_STORAGE_ERROR; REQUEST_TIMED_OUT / NOT_ENOUGH_REPLICAS(_AFTER_APPEND) from acks=-1. Listeners of
   * onTxnMarkerAppended hear of every successful partition before the promise resolves.
   */
  async appendTxnMarkers(
    markers: ReadonlyArray<{
      producerId: bigint;
      producerEpoch: number;
      coordinatorEpoch: number;
      committed: boolean;
      partitions: readonly TopicPartition[];
    }>,
  ): Promise<
    Array<{ producerId: bigint; results: Array<{ topicPartition: TopicPartition; errorCode: number }> }>
  > {
    const pending = markers.map((m) => {
      const timestamp = BigInt(this.time.milliseconds());
      const entries: ProduceEntry[] = m.partitions.map((tp) => ({
        topicPartition: { topic: tp.topic, partition: tp.partition },
        records: buildEndTxnMarkerBatch({
          type: m.committed ? ControlRecordType.Commit : ControlRecordType.Abort,
          producerId: m.producerId,
          producerEpoch: m.producerEpoch,
          coordinatorEpoch: m.coordinatorEpoch,
          timestamp,
        }),
      }));
      // Appended now (synchronously, in request order); only the acks=-1 wait is asynchronous.
      return this.appendRecords(TXN_MARKER_APPEND_TIMEOUT_MS, -1, entries, {
        internalTopicsAllowed: true,
        origin: "coordinator",
      });
    });
    const out: TxnMarkerResult[] = [];
    for (let i = 0; i < markers.length; i++) {
      const m = markers[i];
      const appended = await pending[i];
      const results = appended.map((r) => ({
        topicPartition: r.topicPartition,
        errorCode: ErrorCode[r.error] ?? ErrorCode.UNKNOWN_SERVER_ERROR,
      }));
      for (const r of results) {
        if (r.errorCode !== ErrorCode.NONE) continue;
        for (const listener of this.txnMarkerListeners) {
          try {
            listener(r.topicPartition, m.producerId, m.producerEpoch, m.committed);
          } catch (e) {
            this.logger.error(
              `A transaction marker listener failed for ${topicPartitionKey(r.topicPartition)}: ${(e as Error).message}`,
            );
          }
        }
      }
      out.push({ producerId: m.producerId, results });
    }
    return out;
  }

  /**
   * Registers a listener told of every transaction marker appended by appendTxnMarkers (the group
   * coordinator completes transactional offset commits in __consumer_offsets with it, as Kafka's
   * GroupCoordinator.onTransactionCompleted).
   */
  onTxnMarkerAppended(listener: TxnMarkerListener): void {
    this.txnMarkerListeners.push(listener);
  }

  /** Connects the throttle of log-dir moves (replica.alter.log.dirs.io.max.bytes.per.second). */
  setAlterLogDirsQuota(quota: AlterLogDirsQuota | undefined): void {
    this.alterLogDirsThread.quota = quota;
  }

  /**
   * AlterReplicaLogDirs (Kafka's ReplicaManager.alterReplicaLogDirs): moves each replica to the given log
   * dir of this broker. A move to another dir than the one in progress cancels that one; a replica not yet
   * on this broker gets the dir remembered for when it is created (REPLICA_NOT_AVAILABLE); otherwise the
   * future log is created there and the copy starts. Errors per partition: LOG_DIR_NOT_FOUND (not one of
   * log.dirs), KAFKA_STORAGE_ERROR (the dir or the replica offline, or the future log cannot be created),
   * INVALID_TOPIC_EXCEPTION (a future dir name over 255 characters), REPLICA_NOT_AVAILABLE,
   * UNKNOWN_TOPIC_OR_PARTITION (a partition the cluster does not have).
   */
  alterReplicaLogDirs(
    entries: ReadonlyArray<{ topicPartition: TopicPartition; dir: string }>,
    partitionExists: (tp: TopicPartition) => boolean,
  ): Array<{ topicPartition: TopicPartition; errorCode: number }> {
    return entries.map(({ topicPartition: tp, dir }) => {
      const key = topicPartitionKey(tp);
      try {
        // `<tp>.<32 hex>-future` must be a valid file name (Kafka's KAFKA-4893 check).
        if (`${key}.${"0".repeat(32)}-future`.length > 255)
          throw new KafkaError("INVALID_TOPIC_EXCEPTION", "The topic name is too long.");
        if (!this.logManager.isLogDirOnline(dir))
          throw new KafkaError("KAFKA_STORAGE_ERROR", `Log directory ${dir} is offline`);
        const hosted = this.getPartition(tp);
        if (hosted !== undefined) {
          if (hosted.isOffline) throw new KafkaError("KAFKA_STORAGE_ERROR", `Partition ${key} is offline`);
          if (hosted.futureReplicaDirChanged(dir)) {
            this.alterLogDirsThread.removePartition(tp);
            hosted.removeFutureReplica();
          }
        }
        this.logManager.maybeUpdatePreferredLogDir(tp, dir);
        if (hosted === undefined) {
          if (!partitionExists(tp))
            throw new KafkaError(
              "UNKNOWN_TOPIC_OR_PARTITION",
              `This server does not host this topic-partition: ${key}`,
            );
          throw new KafkaError(
            "REPLICA_NOT_AVAILABLE",
            `Replica ${this.brokerId} of ${key} is not available yet`,
          );
        }
        if (hosted.log === undefined)
          throw new KafkaError("REPLICA_NOT_AVAILABLE", `Replica ${this.brokerId} of ${key} has no log yet`);
        if (hosted.maybeCreateFutureReplica(dir)) this.alterLogDirsThread.addPartition(tp);
        return { topicPartition: tp, errorCode: ErrorCode.NONE };
      } catch (e) {
        if (!(e instanceof KafkaError)) {
          this.logger.error(`Error while changing replica dir for partition ${key}: ${(e as Error).message}`);
          return { topicPartition: tp, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR };
        }
        this.logger.warn(`Unable to alter log dirs for ${key}: ${e.message}`);
        return { topicPartition: tp, errorCode: e.code };
      }
    });
  }

  /**
   * DescribeLogDirs' offset_lag (Kafka's getLogEndOffsetLag): for a future log, how far its end is behind
   * the current log's; for a current log, how far it is behind its high watermark.
   */
  logEndOffsetLag(tp: TopicPartition, logEndOffset: bigint, isFuture: boolean): bigint {
    const log = this.logManager.getLog(tp);
    if (log === undefined) return -1n;
    if (isFuture) return log.logEndOffset - logEndOffset;
    const lag = log.highWatermark - logEndOffset;
    return lag > 0n ? lag : 0n;
  }

  /** DeleteRecords on the leaders: the low watermark per partition, or a KafkaError. */
  deleteRecords(entries: ReadonlyArray<{ topicPartition: TopicPartition; offset: bigint }>): Array<{
    topicPartition: TopicPartition;
    errorCode: number;
    lowWatermark: bigint;
  }> {
    return entries.map(({ topicPartition, offset }) => {
      try {
        const partition = this.getPartitionOrException(topicPartition);
        const lowWatermark = partition.deleteRecordsOnLeader(offset);
        return { topicPartition, errorCode: ErrorCode.NONE, lowWatermark };
      } catch (e) {
        if (!(e instanceof KafkaError)) throw e;
        return { topicPartition, errorCode: e.code, lowWatermark: -1n };
      }
    });
  }
}

const EMPTY = Buffer.alloc(0);

function emptyResult(tp: TopicPartition): ProducePartitionResult {
  return {
    topicPartition: tp,
    error: "NONE",
    errorMessage: null,
    baseOffset: -1n,
    logAppendTimeMs: -1n,
    logStartOffset: -1n,
    recordErrors: [],
  };
}
