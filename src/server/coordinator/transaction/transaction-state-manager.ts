// TransactionStateManager: the transactional ids of the `__transaction_state` partitions this broker leads,
// and their persistence (Kafka's TransactionStateManager). Owns:
//   - partitionFor(transactionalId): Utils.abs(transactionalId.hashCode) % transaction.state.log.num.partitions;
//   - loading a partition when this broker becomes its leader (every batch from the log start, the last
//     value per transactional id winning, tombstones removing it); until it finishes the partition's ids
//     answer COORDINATOR_LOAD_IN_PROGRESS, ids of partitions not led here NOT_COORDINATOR. The coordinator
//     epoch of a partition is its leader epoch when loaded; transactions found in PrepareCommit/PrepareAbort
//     are handed to `onTransactionsLoaded` so their markers are written again;
//   - appendTransactionToLog: one record written with acks=-1, the metadata changed only once it is
//     written (Kafka's error mapping), the pending state cleared when it is not;
//   - the transactional ids to expire (transactional.id.expiration.ms, checked every
//     transaction.remove.expired.transaction.cleanup.interval.ms): a tombstone, then the id is forgotten.

import { Logger } from "../../../common/logger.js";
import type { ScheduledTask, Scheduler } from "../../../common/scheduler.js";
import type { Time } from "../../../common/time.js";
import { ErrorCode } from "../../../protocol/errors.js";
import { buildRecordBatch, decodeRecordBatches } from "../../../protocol/records/memory-records.js";
import { TRANSACTION_STATE_TOPIC_NAME } from "../../metadata/internal-topics.js";
import type { ReplicaManager } from "../../replication/replica-manager.js";
import { coordinatorAppendError, partitionForGroup } from "../group/group-metadata-manager.js";
import {
  readTransactionLogKeyRecord,
  readTransactionLogValueRecord,
  transactionLogKey,
  transactionLogValue,
} from "./transaction-log.js";
import type { TransactionMetadata, TxnTransitMetadata } from "./transaction-metadata.js";
import { isExpirationAllowed } from "./transaction-state.js";

export { TRANSACTION_STATE_TOPIC_NAME };

export interface TransactionStateManagerConfig {
  readonly transactionLogNumPartitions: number;
  readonly transactionalIdExpirationMs: number;
  readonly removeExpiredTransactionalIdsIntervalMs: number;
  readonly transactionLogLoadBufferSize: number;
  /** request.timeout.ms: how long an append waits for acks=-1. */
  readonly requestTimeoutMs: number;
}

/** A partition's transactional ids and the coordinator epoch they are served under. */
interface TxnMetadataCacheEntry {
  readonly coordinatorEpoch: number;
  readonly metadataPerTransactionalId: Map<string, TransactionMetadata>;
}

export type CoordinatorEpochAndTxnMetadata =
  | { readonly error: number }
  | {
      readonly error?: undefined;
      readonly coordinatorEpoch: number;
      readonly metadata: TransactionMetadata | undefined;
    };

/**
 * Kafka's TransactionStateManager.appendTransactionToLog error mapping: the group coordinator's, except that
 * an oversized record is an unexpected UNKNOWN_SERVER_ERROR here (a transaction's record has no commit size).
 */
export function transactionLogAppendError(error: string): number {
  const code = coordinatorAppendError(error);
  return code === ErrorCode.INVALID_COMMIT_OFFSET_SIZE ? ErrorCode.UNKNOWN_SERVER_ERROR : code;
}

export class TransactionStateManager {
  private readonly transactionMetadataCache = new Map<number, TxnMetadataCacheEntry>();
  private readonly loadingPartitions = new Map<number, number>();
  private readonly logger: Logger;
  private expirationTask: ScheduledTask | undefined;
  /** Called after a load with the partition's transactions that were completing (PrepareCommit/PrepareAbort). */
  onTransactionsLoaded: (coordinatorEpoch: number, completing: TransactionMetadata[]) => void = () => {};

  constructor(
    brokerId: number,
    readonly config: TransactionStateManagerConfig,
    private readonly replicaManager: ReplicaManager,
    private readonly time: Time,
    private readonly scheduler: Scheduler,
  ) {
    this.logger = new Logger(
      "kafka.coordinator.transaction.TransactionStateManager",
      `Transaction State Manager ${brokerId}`,
    );
  }

  startup(): void {
    const interval = this.config.removeExpiredTransactionalIdsIntervalMs;
    this.expirationTask = this.scheduler.schedule(
      "transactionalId-expiration",
      async () => {
        await this.removeExpiredTransactionalIds();
      },
      interval,
      interval,
    );
  }

  shutdown(): void {
    this.expirationTask?.cancel();
    this.transactionMetadataCache.clear();
    this.loadingPartitions.clear();
  }

  partitionFor(transactionalId: string): number {
    return partitionForGroup(transactionalId, this.config.transactionLogNumPartitions);
  }

  isLoading(partition: number): boolean {
    return this.loadingPartitions.has(partition);
  }

  ownedPartitions(): number[] {
    return [...this.transactionMetadataCache.keys()];
  }

  /** Kafka's getTransactionState. */
  getTransactionState(transactionalId: string): CoordinatorEpochAndTxnMetadata {
    const partition = this.partitionFor(transactionalId);
    if (this.loadingPartitions.has(partition)) return { error: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS };
    const entry = this.transactionMetadataCache.get(partition);
    if (entry === undefined) return { error: ErrorCode.NOT_COORDINATOR };
    return {
      coordinatorEpoch: entry.coordinatorEpoch,
      metadata: entry.metadataPerTransactionalId.get(transactionalId),
    };
  }

  /** Kafka's putTransactionStateIfNotExists: the cached metadata (an existing one wins). */
  putTransactionStateIfNotExists(metadata: TransactionMetadata): CoordinatorEpochAndTxnMetadata {
    const partition = this.partitionFor(metadata.transactionalId);
    if (this.loadingPartitions.has(partition)) return { error: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS };
    const entry = this.transactionMetadataCache.get(partition);
    if (entry === undefined) return { error: ErrorCode.NOT_COORDINATOR };
    const existing = entry.metadataPerTransactionalId.get(metadata.transactionalId);
    if (existing !== undefined) return { coordinatorEpoch: entry.coordinatorEpoch, metadata: existing };
    entry.metadataPerTransactionalId.set(metadata.transactionalId, metadata);
    return { coordinatorEpoch: entry.coordinatorEpoch, metadata };
  }

  /** Every cached transaction of the partitions led here (for timeouts, ListTransactions). */
  allTransactions(): Array<{ coordinatorEpoch: number; metadata: TransactionMetadata }> {
    const out: Array<{ coordinatorEpoch: number; metadata: TransactionMetadata }> = [];
    for (const e of this.transactionMetadataCache.values())
      for (const m of e.metadataPerTransactionalId.values())
        out.push({ coordinatorEpoch: e.coordinatorEpoch, metadata: m });
    return out;
  }

  // ---- leadership ----

  /** This broker leads __transaction_state-<partition> at `coordinatorEpoch`: load it (Kafka's loadTransactionsForTxnTopicPartition). */
  loadTransactionsForTxnTopicPartition(partition: number, coordinatorEpoch: number): void {
    const current = this.transactionMetadataCache.get(partition);
    if (current !== undefined && current.coordinatorEpoch === coordinatorEpoch) return;
    if (this.loadingPartitions.get(partition) === coordinatorEpoch) return;
    this.transactionMetadataCache.delete(partition);
    this.loadingPartitions.set(partition, coordinatorEpoch);
    this.scheduler.schedule(`load-txns-${partition}`, () => this.load(partition, coordinatorEpoch), 0);
  }

  /** Leadership moved away (Kafka's removeTransactionsForTxnTopicPartition). */
  removeTransactionsForTxnTopicPartition(partition: number): void {
    this.loadingPartitions.delete(partition);
    if (this.transactionMetadataCache.delete(partition))
      this.logger.info(`Unloaded transaction metadata from ${TRANSACTION_STATE_TOPIC_NAME}-${partition}`);
  }

  private load(partition: number, coordinatorEpoch: number): void {
    if (this.loadingPartitions.get(partition) !== coordinatorEpoch) return;
    const startMs = this.time.milliseconds();
    const p = this.replicaManager.getPartition({ topic: TRANSACTION_STATE_TOPIC_NAME, partition });
    const log = p?.log;
    if (p === undefined || log === undefined || !p.isLeader) {
      this.loadingPartitions.delete(partition);
      return;
    }
    const loaded = new Map<string, TransactionMetadata>();
    let offset = log.logStartOffset;
    try {
      while (offset < log.logEndOffset) {
        const read = log.read(offset, this.config.transactionLogLoadBufferSize, "log-end", true);
        if (read.records.length === 0) break;
        const batches = decodeRecordBatches(read.records, { allowIncompleteTail: true });
        if (batches.length === 0) break;
        for (const b of batches) {
          offset = b.header.baseOffset + BigInt(b.header.lastOffsetDelta) + 1n;
          if (b.header.isControl) continue;
          for (const r of b.records) {
            if (r.key === null) continue;
            const txnId = readTransactionLogKeyRecord(r.key);
            if (txnId === undefined) continue;
            const m = readTransactionLogValueRecord(txnId, r.value);
            if (m === null) loaded.delete(txnId);
            else loaded.set(txnId, m);
          }
        }
      }
    } catch (e) {
      this.logger.error(
        `Error loading transactions from ${TRANSACTION_STATE_TOPIC_NAME}-${partition} at offset ${offset}: ${(e as Error).message}`,
      );
    }
    if (this.loadingPartitions.get(partition) !== coordinatorEpoch) return;
    this.loadingPartitions.delete(partition);
    this.transactionMetadataCache.set(partition, { coordinatorEpoch, metadataPerTransactionalId: loaded });
    this.logger.info(
      `Finished loading ${loaded.size} transaction metadata from ${TRANSACTION_STATE_TOPIC_NAME}-${partition} in ${this.time.milliseconds() - startMs} milliseconds, of which 0 milliseconds was spent in the scheduler.`,
    );
    const completing = [...loaded.values()].filter(
      (m) => m.state === "PrepareCommit" || m.state === "PrepareAbort",
    );
    if (completing.length > 0) this.onTransactionsLoaded(coordinatorEpoch, completing);
  }

  // ---- persistence ----

  /**
   * Writes the prepared change (Kafka's appendTransactionToLog). On success the metadata takes it, unless
   * the partition was reloaded or moved meanwhile (NOT_COORDINATOR); on failure the pending state is cleared.
   */
  async appendTransactionToLog(
    transactionalId: string,
    coordinatorEpoch: number,
    metadata: TransactionMetadata,
    transit: TxnTransitMetadata,
  ): Promise<number> {
    const partition = this.partitionFor(transactionalId);
    const value = transit.txnState === "Dead" ? null : transactionLogValue(transit);
    const batch = buildRecordBatch({
      records: [{ key: transactionLogKey(transactionalId), value }],
      timestamp: BigInt(this.time.milliseconds()),
    });
    let code: number;
    try {
      const [result] = await this.replicaManager.appendRecords(
        this.config.requestTimeoutMs,
        -1,
        [{ topicPartition: { topic: TRANSACTION_STATE_TOPIC_NAME, partition }, records: batch }],
        { internalTopicsAllowed: true },
      );
      code = transactionLogAppendError(result.error);
      if (code !== ErrorCode.NONE)
        this.logger.warn(
          `Appending ${transactionalId}'s new metadata ${transit.txnState} failed due to ${result.error}`,
        );
    } catch (e) {
      this.logger.error(`Appending ${transactionalId}'s new metadata failed: ${(e as Error).message}`);
      code = ErrorCode.UNKNOWN_SERVER_ERROR;
    }
    const current = this.getTransactionState(transactionalId);
    if (code === ErrorCode.NONE) {
      if (current.error !== undefined) return current.error;
      if (current.metadata !== metadata || current.coordinatorEpoch !== coordinatorEpoch)
        return ErrorCode.NOT_COORDINATOR;
      metadata.completeTransitionTo(transit);
      return ErrorCode.NONE;
    }
    if (current.error === undefined && current.metadata === metadata) metadata.pendingState = undefined;
    return code;
  }

  // ---- expiration ----

  /** Kafka's removeExpiredTransactionalIds: tombstones for ids idle longer than transactional.id.expiration.ms. */
  async removeExpiredTransactionalIds(): Promise<number> {
    const now = this.time.milliseconds();
    let removed = 0;
    for (const { coordinatorEpoch, metadata } of this.allTransactions()) {
      if (
        metadata.pendingState !== undefined ||
        !isExpirationAllowed(metadata.state) ||
        metadata.txnLastUpdateTimestamp + this.config.transactionalIdExpirationMs > now
      )
        continue;
      const transit = metadata.prepareDead();
      const code = await this.appendTransactionToLog(
        metadata.transactionalId,
        coordinatorEpoch,
        metadata,
        transit,
      );
      if (code !== ErrorCode.NONE) continue;
      const entry = this.transactionMetadataCache.get(this.partitionFor(metadata.transactionalId));
      if (entry?.metadataPerTransactionalId.get(metadata.transactionalId) === metadata)
        entry.metadataPerTransactionalId.delete(metadata.transactionalId);
      removed++;
    }
    if (removed > 0) this.logger.info(`Removed ${removed} expired transactional ids`);
    return removed;
  }
}
