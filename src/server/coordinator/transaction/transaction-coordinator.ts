// TransactionCoordinator: Kafka's transaction coordinator for transactional ids (KIP-98, KIP-360), the
// client protocol of transaction versions 0/1. Owns the request logic, over the TransactionStateManager
// (state in __transaction_state) and the TransactionMarkerChannelManager (COMMIT/ABORT markers):
//   - handleInitProducerId: a new producer id at epoch 0 for a new id; otherwise the epoch bumped (a new
//     producer id once the epoch is exhausted), fencing the previous session; an Ongoing transaction is
//     first aborted under a bumped epoch and the client told CONCURRENT_TRANSACTIONS (it retries);
//     KIP-360 retries with the expected producer id/epoch (PRODUCER_FENCED when they do not match);
//   - handleAddPartitionsToTransaction (AddPartitionsToTxn, AddOffsetsToTxn): Ongoing with the partitions;
//   - handleEndTransaction: PrepareCommit/PrepareAbort written, the client answered, then the markers
//     written and CompleteCommit/CompleteAbort (a retried EndTxn of a completed transaction succeeds);
//   - abortTimedOutTransactions every transaction.abort.timed.out.transaction.cleanup.interval.ms: Ongoing
//     transactions older than their timeout are aborted under a bumped epoch (the producer is fenced);
//   - onElection/onResignation of __transaction_state partitions; Describe/ListTransactions.
// Errors are Kafka's codes; handlers map PRODUCER_FENCED to INVALID_PRODUCER_EPOCH for old versions.

import { Logger } from "../../../common/logger.js";
import type { ScheduledTask, Scheduler } from "../../../common/scheduler.js";
import type { Time } from "../../../common/time.js";
import type { TopicPartition } from "../../../common/topic-partition.js";
import { ErrorCode, errorNameOf } from "../../../protocol/errors.js";
import {
  type AppendTxnMarkers,
  TransactionMarkerChannelManager,
} from "./transaction-marker-channel-manager.js";
import {
  InvalidTransitionError,
  isEpochExhausted,
  NO_PRODUCER_EPOCH,
  NO_PRODUCER_ID,
  TransactionMetadata,
  type TxnTransitMetadata,
} from "./transaction-metadata.js";
import { TRANSACTION_STATE_TOPIC_NAME, type TransactionStateManager } from "./transaction-state-manager.js";

export { TRANSACTION_STATE_TOPIC_NAME };

export interface TransactionCoordinatorConfig {
  readonly transactionMaxTimeoutMs: number;
  readonly abortTimedOutTransactionsIntervalMs: number;
}

export interface InitProducerIdResult {
  readonly error: number;
  readonly producerId: bigint;
  readonly producerEpoch: number;
}

export interface ProducerIdAndEpoch {
  readonly producerId: bigint;
  readonly producerEpoch: number;
}

export type TransactionResult = "COMMIT" | "ABORT";

function initError(error: number): InitProducerIdResult {
  return { error, producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH };
}

/** A fence whose abort could not even be prepared must not block the transactional id. */
function clearPendingFence(metadata: TransactionMetadata): void {
  if (metadata.pendingState === "PrepareEpochFence") metadata.pendingState = undefined;
}

export class TransactionCoordinator {
  private readonly logger: Logger;
  private abortTask: ScheduledTask | undefined;
  readonly markerChannelManager: TransactionMarkerChannelManager;

  constructor(
    brokerId: number,
    readonly config: TransactionCoordinatorConfig,
    readonly stateManager: TransactionStateManager,
    private readonly generateProducerId: () => Promise<bigint>,
    appendTxnMarkers: AppendTxnMarkers,
    topicExists: (topic: string) => boolean,
    private readonly time: Time,
    private readonly scheduler: Scheduler,
  ) {
    this.logger = new Logger(
      "kafka.coordinator.transaction.TransactionCoordinator",
      `Transaction Coordinator id=${brokerId}`,
    );
    this.markerChannelManager = new TransactionMarkerChannelManager(
      brokerId,
      appendTxnMarkers,
      stateManager,
      scheduler,
      topicExists,
    );
    stateManager.onTransactionsLoaded = (coordinatorEpoch, completing) => {
      for (const m of completing) this.resumeCompletion(coordinatorEpoch, m);
    };
  }

  startup(): void {
    this.logger.info("Starting up.");
    this.stateManager.startup();
    const interval = this.config.abortTimedOutTransactionsIntervalMs;
    this.abortTask = this.scheduler.schedule(
      "transaction-abort",
      () => this.abortTimedOutTransactions(),
      interval,
      interval,
    );
    this.logger.info("Startup complete.");
  }

  shutdown(): void {
    this.logger.info("Shutting down.");
    this.abortTask?.cancel();
    this.stateManager.shutdown();
    this.logger.info("Shutdown complete.");
  }

  partitionFor(transactionalId: string): number {
    return this.stateManager.partitionFor(transactionalId);
  }

  /** This broker became leader of __transaction_state-<partition> (Kafka's onElection). */
  onElection(partition: number, coordinatorEpoch: number): void {
    this.logger.info(
      `Elected as the txn coordinator for partition ${partition} at epoch ${coordinatorEpoch}`,
    );
    this.stateManager.loadTransactionsForTxnTopicPartition(partition, coordinatorEpoch);
  }

  /** Leadership of __transaction_state-<partition> moved away (Kafka's onResignation). */
  onResignation(partition: number): void {
    this.stateManager.removeTransactionsForTxnTopicPartition(partition);
  }

  /** Resolves when the marker writes started so far are done (tests). */
  idle(): Promise<void> {
    return this.markerChannelManager.idle();
  }

  private validateTransactionTimeoutMs(timeoutMs: number): boolean {
    return timeoutMs > 0 && timeoutMs <= this.config.transactionMaxTimeoutMs;
  }

  // ---- InitProducerId ----

  async handleInitProducerId(
    transactionalId: string,
    transactionTimeoutMs: number,
    expected: ProducerIdAndEpoch | undefined,
  ): Promise<InitProducerIdResult> {
    if (transactionalId === "") return initError(ErrorCode.INVALID_REQUEST);
    if (!this.validateTransactionTimeoutMs(transactionTimeoutMs))
      return initError(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
    let state = this.stateManager.getTransactionState(transactionalId);
    if (state.error !== undefined) return initError(state.error);
    if (state.metadata === undefined) {
      let producerId: bigint;
      try {
        producerId = await this.generateProducerId();
      } catch (e) {
        this.logger.error(`Failed to generate a producer id: ${(e as Error).message}`);
        return initError(ErrorCode.COORDINATOR_NOT_AVAILABLE);
      }
      const now = this.time.milliseconds();
      state = this.stateManager.putTransactionStateIfNotExists(
        new TransactionMetadata(
          transactionalId,
          producerId,
          NO_PRODUCER_ID,
          NO_PRODUCER_EPOCH,
          NO_PRODUCER_EPOCH,
          transactionTimeoutMs,
          "Empty",
          [],
          -1,
          now,
        ),
      );
      if (state.error !== undefined) return initError(state.error);
    }
    const { coordinatorEpoch } = state;
    const metadata = state.metadata as TransactionMetadata;
    // An exhausted epoch needs a new producer id, claimed before the transition is prepared.
    let rotatedProducerId: bigint | undefined;
    if (
      isEpochExhausted(metadata.producerEpoch) &&
      (expected === undefined || expected.producerEpoch === metadata.producerEpoch)
    ) {
      try {
        rotatedProducerId = await this.generateProducerId();
      } catch (e) {
        this.logger.error(`Failed to generate a producer id: ${(e as Error).message}`);
        return initError(ErrorCode.COORDINATOR_NOT_AVAILABLE);
      }
    }
    const prepared = this.prepareInitProducerIdTransit(
      metadata,
      transactionTimeoutMs,
      expected,
      rotatedProducerId,
    );
    if (typeof prepared === "number") return initError(prepared);
    if (prepared.txnState === "PrepareEpochFence") {
      // Abort the ongoing transaction under the fenced epoch first; the client retries and bumps again.
      const error = await this.endTransaction(
        transactionalId,
        prepared.producerId,
        prepared.producerEpoch,
        "ABORT",
        false,
      );
      if (error !== ErrorCode.NONE) clearPendingFence(metadata);
      return initError(error !== ErrorCode.NONE ? error : ErrorCode.CONCURRENT_TRANSACTIONS);
    }
    const error = await this.stateManager.appendTransactionToLog(
      transactionalId,
      coordinatorEpoch,
      metadata,
      prepared,
    );
    if (error !== ErrorCode.NONE) return initError(error);
    this.logger.info(
      `Initialized transactionalId ${transactionalId} with producerId ${prepared.producerId} and producer epoch ${prepared.producerEpoch} on partition ${TRANSACTION_STATE_TOPIC_NAME}-${this.partitionFor(transactionalId)}`,
    );
    return { error: ErrorCode.NONE, producerId: prepared.producerId, producerEpoch: prepared.producerEpoch };
  }

  /** Kafka's isValidProducerId for a KIP-360 InitProducerId carrying the producer's id and epoch. */
  private isValidProducerId(metadata: TransactionMetadata, expected: ProducerIdAndEpoch): boolean {
    return (
      metadata.producerEpoch === NO_PRODUCER_EPOCH ||
      expected.producerId === metadata.producerId ||
      (expected.producerId === metadata.lastProducerId && isEpochExhausted(expected.producerEpoch))
    );
  }

  private prepareInitProducerIdTransit(
    metadata: TransactionMetadata,
    timeoutMs: number,
    expected: ProducerIdAndEpoch | undefined,
    rotatedProducerId: bigint | undefined,
  ): TxnTransitMetadata | number {
    if (metadata.pendingTransitionInProgress) return ErrorCode.CONCURRENT_TRANSACTIONS;
    if (expected !== undefined && !this.isValidProducerId(metadata, expected))
      return ErrorCode.PRODUCER_FENCED;
    try {
      switch (metadata.state) {
        case "PrepareAbort":
        case "PrepareCommit":
          return ErrorCode.CONCURRENT_TRANSACTIONS;
        case "CompleteAbort":
        case "CompleteCommit":
        case "Empty":
          if (
            metadata.isProducerEpochExhausted() &&
            (expected === undefined || expected.producerEpoch === metadata.producerEpoch)
          ) {
            if (rotatedProducerId === undefined) return ErrorCode.CONCURRENT_TRANSACTIONS;
            return metadata.prepareProducerIdRotation(
              rotatedProducerId,
              timeoutMs,
              this.time.milliseconds(),
              expected !== undefined,
            );
          }
          return metadata.prepareIncrementProducerEpoch(
            timeoutMs,
            expected?.producerEpoch,
            this.time.milliseconds(),
          );
        case "Ongoing":
          return metadata.prepareFenceProducerEpoch();
        default:
          return ErrorCode.CONCURRENT_TRANSACTIONS;
      }
    } catch (e) {
      if (!(e instanceof InvalidTransitionError)) throw e;
      this.logger.error((e as Error).message);
      return ErrorCode.INVALID_TXN_STATE;
    }
  }

  // ---- AddPartitionsToTxn / AddOffsetsToTxn ----

  async handleAddPartitionsToTransaction(
    transactionalId: string,
    producerId: bigint,
    producerEpoch: number,
    partitions: readonly TopicPartition[],
  ): Promise<number> {
    if (transactionalId === "") return ErrorCode.INVALID_REQUEST;
    const state = this.stateManager.getTransactionState(transactionalId);
    if (state.error !== undefined) return state.error;
    const metadata = state.metadata;
    if (metadata === undefined) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    if (metadata.producerId !== producerId) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    if (metadata.producerEpoch !== producerEpoch) return ErrorCode.PRODUCER_FENCED;
    if (metadata.pendingTransitionInProgress) return ErrorCode.CONCURRENT_TRANSACTIONS;
    if (metadata.state === "PrepareCommit" || metadata.state === "PrepareAbort")
      return ErrorCode.CONCURRENT_TRANSACTIONS;
    if (metadata.state === "Ongoing" && this.inTransaction(metadata, partitions)) return ErrorCode.NONE;
    let transit: TxnTransitMetadata;
    try {
      transit = metadata.prepareAddPartitions(partitions, this.time.milliseconds());
    } catch (e) {
      if (!(e instanceof InvalidTransitionError)) throw e;
      this.logger.error((e as Error).message);
      return ErrorCode.INVALID_TXN_STATE;
    }
    return this.stateManager.appendTransactionToLog(
      transactionalId,
      state.coordinatorEpoch,
      metadata,
      transit,
    );
  }

  private inTransaction(metadata: TransactionMetadata, partitions: readonly TopicPartition[]): boolean {
    return partitions.every((tp) => metadata.topicPartitions.has(`${tp.topic}-${tp.partition}`));
  }

  /**
   * KIP-890 part 1 verification (AddPartitionsToTxn v4+ verify_only): each partition NONE when it is in the
   * producer's ongoing transaction, otherwise INVALID_TXN_STATE (or the transaction's error).
   */
  verifyTransaction(
    transactionalId: string,
    producerId: bigint,
    producerEpoch: number,
    partitions: readonly TopicPartition[],
  ): { error: number; partitionErrors: Map<string, number> } {
    const out = new Map<string, number>();
    const state = this.stateManager.getTransactionState(transactionalId);
    let error: number = ErrorCode.NONE;
    if (state.error !== undefined) error = state.error;
    else if (state.metadata === undefined || state.metadata.producerId !== producerId)
      error = ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    else if (state.metadata.producerEpoch !== producerEpoch) error = ErrorCode.PRODUCER_FENCED;
    else if (state.metadata.pendingTransitionInProgress || state.metadata.state !== "Ongoing") {
      for (const tp of partitions) out.set(`${tp.topic}-${tp.partition}`, ErrorCode.INVALID_TXN_STATE);
      return { error, partitionErrors: out };
    }
    for (const tp of partitions) {
      const k = `${tp.topic}-${tp.partition}`;
      out.set(
        k,
        error !== ErrorCode.NONE
          ? error
          : state.error === undefined && state.metadata?.topicPartitions.has(k)
            ? ErrorCode.NONE
            : ErrorCode.INVALID_TXN_STATE,
      );
    }
    return { error, partitionErrors: out };
  }

  // ---- EndTxn ----

  handleEndTransaction(
    transactionalId: string,
    producerId: bigint,
    producerEpoch: number,
    result: TransactionResult,
  ): Promise<number> {
    if (transactionalId === "") return Promise.resolve(ErrorCode.INVALID_REQUEST);
    return this.endTransaction(transactionalId, producerId, producerEpoch, result, true);
  }

  private async endTransaction(
    transactionalId: string,
    producerId: bigint,
    producerEpoch: number,
    result: TransactionResult,
    isFromClient: boolean,
  ): Promise<number> {
    const state = this.stateManager.getTransactionState(transactionalId);
    if (state.error !== undefined) return state.error;
    const metadata = state.metadata;
    if (metadata === undefined) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    const coordinatorEpoch = state.coordinatorEpoch;
    const commit = result === "COMMIT";
    let isEpochFence = false;
    let transit: TxnTransitMetadata;
    if (metadata.producerId !== producerId) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    // Clients must match the epoch exactly; the coordinator's own aborts carry the bumped (fencing) epoch.
    if ((isFromClient && producerEpoch !== metadata.producerEpoch) || producerEpoch < metadata.producerEpoch)
      return ErrorCode.PRODUCER_FENCED;
    if (metadata.pendingTransitionInProgress && metadata.pendingState !== "PrepareEpochFence")
      return ErrorCode.CONCURRENT_TRANSACTIONS;
    switch (metadata.state) {
      case "Ongoing": {
        const nextState = commit ? "PrepareCommit" : "PrepareAbort";
        if (nextState === "PrepareAbort" && metadata.pendingState === "PrepareEpochFence") {
          isEpochFence = true;
          metadata.pendingState = undefined;
          metadata.producerEpoch = producerEpoch;
          metadata.lastProducerEpoch = NO_PRODUCER_EPOCH;
        }
        try {
          transit = metadata.prepareAbortOrCommit(nextState, this.time.milliseconds());
        } catch (e) {
          if (!(e instanceof InvalidTransitionError)) throw e;
          this.logger.error((e as Error).message);
          return ErrorCode.INVALID_TXN_STATE;
        }
        break;
      }
      case "CompleteCommit":
        return commit ? ErrorCode.NONE : this.invalidState(transactionalId, metadata, result);
      case "CompleteAbort":
        return !commit ? ErrorCode.NONE : this.invalidState(transactionalId, metadata, result);
      case "PrepareCommit":
        return commit
          ? ErrorCode.CONCURRENT_TRANSACTIONS
          : this.invalidState(transactionalId, metadata, result);
      case "PrepareAbort":
        return !commit
          ? ErrorCode.CONCURRENT_TRANSACTIONS
          : this.invalidState(transactionalId, metadata, result);
      default:
        return this.invalidState(transactionalId, metadata, result);
    }
    const error = await this.stateManager.appendTransactionToLog(
      transactionalId,
      coordinatorEpoch,
      metadata,
      transit,
    );
    if (error !== ErrorCode.NONE) {
      if (isEpochFence) metadata.hasFailedEpochFence = true;
      this.logger.info(
        `Aborting append of ${transit.txnState} to transaction log with coordinator and returning ${errorNameOf(error)} error to client for ${transactionalId}'s EndTransaction request`,
      );
      return error;
    }
    // PrepareCommit/PrepareAbort is written: the client is answered; markers and completion follow.
    const now = this.state(transactionalId);
    if (now.error !== undefined) return now.error;
    if (now.coordinatorEpoch !== coordinatorEpoch || now.metadata !== metadata)
      return ErrorCode.NOT_COORDINATOR;
    if (metadata.producerId !== producerId) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    if (metadata.producerEpoch !== producerEpoch) return ErrorCode.PRODUCER_FENCED;
    if (metadata.pendingTransitionInProgress) return ErrorCode.CONCURRENT_TRANSACTIONS;
    // (read again: the append above awaited, so the state may have moved)
    if ((metadata.state as string) !== (commit ? "PrepareCommit" : "PrepareAbort"))
      return this.invalidState(transactionalId, metadata, result);
    const complete = metadata.prepareComplete(this.time.milliseconds());
    this.markerChannelManager.addTxnMarkersToSend(coordinatorEpoch, metadata, complete);
    return ErrorCode.NONE;
  }

  private state(transactionalId: string) {
    return this.stateManager.getTransactionState(transactionalId);
  }

  private invalidState(
    transactionalId: string,
    metadata: TransactionMetadata,
    result: TransactionResult,
  ): number {
    this.logger.debug(
      `TransactionalId: ${transactionalId}'s state is ${metadata.state}, but received transaction marker result to send: ${result}`,
    );
    return ErrorCode.INVALID_TXN_STATE;
  }

  /** A transaction loaded in PrepareCommit/PrepareAbort: its markers are written again, then it completes. */
  private resumeCompletion(coordinatorEpoch: number, metadata: TransactionMetadata): void {
    if (metadata.pendingTransitionInProgress) return;
    const complete = metadata.prepareComplete(this.time.milliseconds());
    this.markerChannelManager.addTxnMarkersToSend(coordinatorEpoch, metadata, complete);
  }

  // ---- timeouts ----

  /** Kafka's abortTimedOutTransactions: Ongoing transactions past their timeout are aborted, fencing the producer. */
  async abortTimedOutTransactions(): Promise<void> {
    const now = this.time.milliseconds();
    for (const { metadata } of this.stateManager.allTransactions()) {
      if (
        metadata.state !== "Ongoing" ||
        metadata.pendingTransitionInProgress ||
        metadata.txnStartTimestamp + metadata.txnTimeoutMs >= now
      )
        continue;
      let transit: TxnTransitMetadata;
      try {
        transit = metadata.prepareFenceProducerEpoch();
      } catch (e) {
        this.logger.error((e as Error).message);
        continue;
      }
      this.logger.info(
        `Aborting transaction ${metadata.transactionalId} with producer id ${metadata.producerId} and epoch ${metadata.producerEpoch}: it timed out after ${metadata.txnTimeoutMs} ms`,
      );
      const error = await this.endTransaction(
        metadata.transactionalId,
        transit.producerId,
        transit.producerEpoch,
        "ABORT",
        false,
      );
      if (error !== ErrorCode.NONE) {
        clearPendingFence(metadata);
        this.logger.info(
          `Rolling back the timed-out transaction of ${metadata.transactionalId} failed with error ${errorNameOf(error)}; it will be retried`,
        );
      }
    }
  }

  // ---- admin ----

  describeTransaction(transactionalId: string): { error: number; metadata?: TransactionMetadata } {
    const s = this.stateManager.getTransactionState(transactionalId);
    if (s.error !== undefined) return { error: s.error };
    if (s.metadata === undefined || s.metadata.state === "Dead")
      return { error: ErrorCode.TRANSACTIONAL_ID_NOT_FOUND };
    return { error: ErrorCode.NONE, metadata: s.metadata };
  }

  /** Kafka's listTransactions: the transactions of the loaded partitions matching every given filter. */
  listTransactions(
    stateFilters: readonly string[],
    producerIdFilters: readonly bigint[],
    durationFilterMs: bigint,
  ): { error: number; transactions: TransactionMetadata[] } {
    if (this.stateManager.ownedPartitions().some((p) => this.stateManager.isLoading(p)))
      return { error: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, transactions: [] };
    const now = this.time.milliseconds();
    const states = new Set(stateFilters);
    const pids = new Set(producerIdFilters);
    const out: TransactionMetadata[] = [];
    for (const { metadata } of this.stateManager.allTransactions()) {
      if (metadata.state === "Dead") continue;
      if (states.size > 0 && !states.has(metadata.state)) continue;
      if (pids.size > 0 && !pids.has(metadata.producerId)) continue;
      if (durationFilterMs >= 0n && BigInt(now - metadata.txnStartTimestamp) <= durationFilterMs) continue;
      out.push(metadata);
    }
    return { error: ErrorCode.NONE, transactions: out };
  }
}

/**
 * PRODUCER_FENCED exists on the wire from InitProducerId v4, AddPartitionsToTxn/AddOffsetsToTxn/EndTxn v2;
 * older versions get INVALID_PRODUCER_EPOCH, as Kafka's KafkaApis answers them.
 */
export function producerFencedCompat(errorCode: number, apiVersion: number, sinceVersion: number): number {
  return errorCode === ErrorCode.PRODUCER_FENCED && apiVersion < sinceVersion
    ? ErrorCode.INVALID_PRODUCER_EPOCH
    : errorCode;
}
