// TransactionMarkerChannelManager: once PrepareCommit/PrepareAbort is written, the coordinator writes the
// COMMIT/ABORT markers to every partition of the transaction through the partition leaders' WriteTxnMarkers
// path (an injected AppendTxnMarkers: TxnMarkerRouter, which calls this broker's
// ReplicaManager.appendTxnMarkers for the partitions it leads — Kafka's "even when that is itself" — and
// sends WriteTxnMarkers to the other leaders), retries the partitions that answered a retriable error every
// retry.backoff.ms, drops partitions of deleted topics, gives up when the coordinator was fenced, and then
// writes CompleteCommit/CompleteAbort (retried while the log is unavailable), as Kafka's
// TransactionMarkerChannelManager and TransactionMarkerRequestCompletionHandler do.

import { Logger } from "../../../common/logger.js";
import type { Scheduler } from "../../../common/scheduler.js";
import { type TopicPartition, topicPartitionKey } from "../../../common/topic-partition.js";
import { ErrorCode, errorDefinition } from "../../../protocol/errors.js";
import type { TransactionMetadata, TxnTransitMetadata } from "./transaction-metadata.js";
import type { TransactionStateManager } from "./transaction-state-manager.js";

/** One WriteTxnMarkers entry: the markers one producer needs, as ReplicaManager.appendTxnMarkers takes them. */
export interface TxnMarkerEntry {
  readonly producerId: bigint;
  readonly producerEpoch: number;
  readonly coordinatorEpoch: number;
  readonly committed: boolean;
  readonly partitions: readonly TopicPartition[];
}

export type AppendTxnMarkers = (
  markers: ReadonlyArray<TxnMarkerEntry>,
) => Promise<
  Array<{ producerId: bigint; results: Array<{ topicPartition: TopicPartition; errorCode: number }> }>
>;

export const RETRY_BACKOFF_MS = 100;

function errorName(code: number): string {
  return errorDefinition(code)?.name ?? String(code);
}

const RETRIABLE = new Set<number>([
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.NOT_ENOUGH_REPLICAS,
  ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
  ErrorCode.REQUEST_TIMED_OUT,
  ErrorCode.KAFKA_STORAGE_ERROR,
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
  ErrorCode.NOT_COORDINATOR,
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
]);

export class TransactionMarkerChannelManager {
  private readonly logger: Logger;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    brokerId: number,
    private readonly appendTxnMarkers: AppendTxnMarkers,
    private readonly stateManager: TransactionStateManager,
    private readonly scheduler: Scheduler,
    /** Whether a topic still exists (markers for deleted topics are dropped). */
    private readonly topicExists: (topic: string) => boolean,
  ) {
    this.logger = new Logger(
      "kafka.coordinator.transaction.TransactionMarkerChannelManager",
      `Transaction Marker Channel Manager ${brokerId}`,
    );
  }

  /** Resolves once every marker write started so far has finished (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  /** Kafka's addTxnMarkersToSend: `complete` is the prepared CompleteCommit/CompleteAbort of `metadata`. */
  addTxnMarkersToSend(
    coordinatorEpoch: number,
    metadata: TransactionMetadata,
    complete: TxnTransitMetadata,
  ): void {
    const p = this.send(coordinatorEpoch, metadata, complete).finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.scheduler.schedule("txn-marker-retry", resolve, ms));
  }

  /** Whether this coordinator still owns the transaction at the same epoch, with the completion pending. */
  private stillOwned(
    coordinatorEpoch: number,
    metadata: TransactionMetadata,
    complete: TxnTransitMetadata,
  ): boolean {
    const s = this.stateManager.getTransactionState(metadata.transactionalId);
    return (
      s.error === undefined &&
      s.coordinatorEpoch === coordinatorEpoch &&
      s.metadata === metadata &&
      metadata.pendingState === complete.txnState
    );
  }

  private async send(
    coordinatorEpoch: number,
    metadata: TransactionMetadata,
    complete: TxnTransitMetadata,
  ): Promise<void> {
    const txnId = metadata.transactionalId;
    const committed = complete.txnState === "CompleteCommit";
    let pending = new Map<string, TopicPartition>(
      metadata.partitions().map((tp) => [topicPartitionKey(tp), tp] as const),
    );
    while (pending.size > 0) {
      if (!this.stillOwned(coordinatorEpoch, metadata, complete)) {
        this.logger.info(
          `Abandoning the markers of transaction ${txnId}: its coordinator moved or was fenced`,
        );
        return;
      }
      for (const [k, tp] of pending) {
        if (!this.topicExists(tp.topic)) {
          this.logger.info(
            `Dropping the ${committed ? "COMMIT" : "ABORT"} marker for ${k}: the topic was deleted`,
          );
          pending.delete(k);
        }
      }
      if (pending.size === 0) break;
      const retry = new Map<string, TopicPartition>();
      try {
        const [result] = await this.appendTxnMarkers([
          {
            producerId: complete.producerId,
            producerEpoch: complete.producerEpoch,
            coordinatorEpoch,
            committed,
            partitions: [...pending.values()],
          },
        ]);
        for (const r of result?.results ?? []) {
          const k = topicPartitionKey(r.topicPartition);
          if (r.errorCode === ErrorCode.NONE) continue;
          if (
            r.errorCode === ErrorCode.INVALID_PRODUCER_EPOCH ||
            r.errorCode === ErrorCode.TRANSACTION_COORDINATOR_FENCED
          ) {
            this.logger.info(
              `Sending ${txnId}'s transaction marker for ${k} failed with ${errorName(r.errorCode)}: the coordinator is fenced, abandoning the markers`,
            );
            metadata.pendingState = undefined;
            return;
          }
          if (RETRIABLE.has(r.errorCode)) retry.set(k, r.topicPartition);
          else
            this.logger.error(
              `Sending ${txnId}'s transaction marker for ${k} failed with ${errorName(r.errorCode)}; dropped`,
            );
        }
        for (const [k, tp] of pending)
          if (!(result?.results ?? []).some((r) => topicPartitionKey(r.topicPartition) === k))
            retry.set(k, tp);
      } catch (e) {
        this.logger.error(`Writing ${txnId}'s transaction markers failed: ${(e as Error).message}; retrying`);
        retry.clear();
        for (const [k, tp] of pending) retry.set(k, tp);
      }
      pending = retry;
      if (pending.size > 0) await this.sleep(RETRY_BACKOFF_MS);
    }
    // Kafka's tryAppendToLog: the transaction is complete once CompleteCommit/CompleteAbort is written.
    for (;;) {
      if (!this.stillOwned(coordinatorEpoch, metadata, complete)) return;
      const code = await this.stateManager.appendTransactionToLog(
        txnId,
        coordinatorEpoch,
        metadata,
        complete,
      );
      if (code === ErrorCode.NONE) {
        this.logger.debug(`Completed transaction for ${txnId} with coordinator epoch ${coordinatorEpoch}`);
        return;
      }
      if (code === ErrorCode.NOT_COORDINATOR) {
        this.logger.warn(
          `Failed to write the completion of ${txnId}: this broker is no longer its coordinator`,
        );
        return;
      }
      // A failed append cleared the pending state; prepare the completion again and retry.
      this.logger.warn(`Failed to write the completion of ${txnId} (${errorName(code)}); retrying`);
      await this.sleep(RETRY_BACKOFF_MS);
      if (metadata.pendingState !== undefined) return;
      const s = this.stateManager.getTransactionState(txnId);
      if (s.error !== undefined || s.metadata !== metadata || s.coordinatorEpoch !== coordinatorEpoch) return;
      complete = metadata.prepareComplete(complete.txnLastUpdateTimestamp);
    }
  }
}
