// TransactionMetadata: one transactional id's state at its coordinator (Kafka's TransactionMetadata): the
// producer id and epoch handed out (and the previous ones, for KIP-360 retries), the transaction timeout,
// the state, the partitions of the ongoing transaction, when it started and was last updated. A change is
// prepared first (the pending state, which makes concurrent requests answer CONCURRENT_TRANSACTIONS),
// written to __transaction_state, and only applied (completeTransitionTo) once the write succeeded.

import { type TopicPartition, topicPartitionKey } from "../../../common/topic-partition.js";
import { ErrorCode } from "../../../protocol/errors.js";
import { isValidTransition, type TransactionState } from "./transaction-state.js";

export const NO_PRODUCER_ID = -1n;
export const NO_PRODUCER_EPOCH = -1;
const SHORT_MAX = 32767;

/** Kafka's TransactionMetadata.isEpochExhausted: the epoch cannot be bumped again. */
export function isEpochExhausted(epoch: number): boolean {
  return epoch >= SHORT_MAX - 1;
}

/** The state a prepared change will write (Kafka's TxnTransitMetadata). */
export interface TxnTransitMetadata {
  readonly producerId: bigint;
  readonly lastProducerId: bigint;
  readonly producerEpoch: number;
  readonly lastProducerEpoch: number;
  readonly txnTimeoutMs: number;
  readonly txnState: TransactionState;
  readonly topicPartitions: readonly TopicPartition[];
  readonly txnStartTimestamp: number;
  readonly txnLastUpdateTimestamp: number;
}

export class InvalidTransitionError extends Error {}

export class TransactionMetadata {
  /** Partitions of the ongoing transaction, by topicPartitionKey. */
  readonly topicPartitions = new Map<string, TopicPartition>();
  pendingState: TransactionState | undefined;
  /** A fence that failed to be written: the next fence reuses the already bumped epoch. */
  hasFailedEpochFence = false;

  constructor(
    readonly transactionalId: string,
    public producerId: bigint,
    public lastProducerId: bigint,
    public producerEpoch: number,
    public lastProducerEpoch: number,
    public txnTimeoutMs: number,
    public state: TransactionState,
    partitions: readonly TopicPartition[],
    public txnStartTimestamp: number,
    public txnLastUpdateTimestamp: number,
  ) {
    for (const tp of partitions) this.topicPartitions.set(topicPartitionKey(tp), tp);
  }

  get pendingTransitionInProgress(): boolean {
    return this.pendingState !== undefined;
  }

  partitions(): TopicPartition[] {
    return [...this.topicPartitions.values()];
  }

  isProducerEpochExhausted(): boolean {
    return isEpochExhausted(this.producerEpoch);
  }

  /** The current state as a transit (what a rewrite of it would store). */
  currentTransit(): TxnTransitMetadata {
    return {
      producerId: this.producerId,
      lastProducerId: this.lastProducerId,
      producerEpoch: this.producerEpoch,
      lastProducerEpoch: this.lastProducerEpoch,
      txnTimeoutMs: this.txnTimeoutMs,
      txnState: this.state,
      topicPartitions: this.partitions(),
      txnStartTimestamp: this.txnStartTimestamp,
      txnLastUpdateTimestamp: this.txnLastUpdateTimestamp,
    };
  }

  private prepareTransitionTo(t: TxnTransitMetadata): TxnTransitMetadata {
    if (this.pendingState !== undefined)
      throw new InvalidTransitionError(
        `TransactionalId ${this.transactionalId} is already transitioning to ${this.pendingState}`,
      );
    if (t.producerEpoch < 0 || t.producerEpoch > SHORT_MAX)
      throw new InvalidTransitionError(`Illegal new producer epoch ${t.producerEpoch}`);
    if (!isValidTransition(this.state, t.txnState))
      throw new InvalidTransitionError(
        `TransactionalId ${this.transactionalId} cannot transition from ${this.state} to ${t.txnState}`,
      );
    this.pendingState = t.txnState;
    return t;
  }

  /** Kafka's prepareFenceProducerEpoch: an ongoing transaction is aborted under a bumped epoch. */
  prepareFenceProducerEpoch(): TxnTransitMetadata {
    if (this.producerEpoch === SHORT_MAX)
      throw new InvalidTransitionError(`Cannot fence producer with epoch equal to Short.MaxValue`);
    const bumped = this.hasFailedEpochFence ? this.producerEpoch : this.producerEpoch + 1;
    return this.prepareTransitionTo({
      ...this.currentTransit(),
      producerEpoch: bumped,
      lastProducerEpoch: NO_PRODUCER_EPOCH,
      txnState: "PrepareEpochFence",
    });
  }

  /**
   * Kafka's prepareIncrementProducerEpoch: a new producer session (InitProducerId) bumps the epoch; with
   * an expected epoch (KIP-360) the previous epoch is a retry answered with the current one, anything else
   * is PRODUCER_FENCED.
   */
  prepareIncrementProducerEpoch(
    newTxnTimeoutMs: number,
    expectedProducerEpoch: number | undefined,
    now: number,
  ): TxnTransitMetadata | number {
    if (this.isProducerEpochExhausted())
      throw new InvalidTransitionError(`Cannot allocate any more producer epochs for ${this.producerId}`);
    const bumped = this.producerEpoch + 1;
    let next: number;
    let last: number;
    if (expectedProducerEpoch === undefined) {
      next = bumped;
      last = NO_PRODUCER_EPOCH;
    } else if (this.producerEpoch === NO_PRODUCER_EPOCH || expectedProducerEpoch === this.producerEpoch) {
      next = bumped;
      last = this.producerEpoch;
    } else if (expectedProducerEpoch === this.lastProducerEpoch) {
      next = this.producerEpoch;
      last = this.lastProducerEpoch;
    } else {
      return ErrorCode.PRODUCER_FENCED;
    }
    return this.prepareTransitionTo({
      ...this.currentTransit(),
      producerEpoch: next,
      lastProducerEpoch: last,
      txnTimeoutMs: newTxnTimeoutMs,
      txnState: "Empty",
      topicPartitions: [],
      txnStartTimestamp: -1,
      txnLastUpdateTimestamp: now,
    });
  }

  /** Kafka's prepareProducerIdRotation: the epoch is exhausted, a new producer id starts at epoch 0. */
  prepareProducerIdRotation(
    newProducerId: bigint,
    newTxnTimeoutMs: number,
    now: number,
    recordLastEpoch: boolean,
  ): TxnTransitMetadata {
    if (this.pendingState !== undefined)
      throw new InvalidTransitionError("Cannot rotate the producer id while a transition is pending");
    return this.prepareTransitionTo({
      producerId: newProducerId,
      lastProducerId: this.producerId,
      producerEpoch: 0,
      lastProducerEpoch: recordLastEpoch ? this.producerEpoch : NO_PRODUCER_EPOCH,
      txnTimeoutMs: newTxnTimeoutMs,
      txnState: "Empty",
      topicPartitions: [],
      txnStartTimestamp: -1,
      txnLastUpdateTimestamp: now,
    });
  }

  /** Kafka's prepareAddPartitions: the transaction becomes (or stays) Ongoing with more partitions. */
  prepareAddPartitions(added: readonly TopicPartition[], now: number): TxnTransitMetadata {
    const start =
      this.state === "Empty" || this.state === "CompleteCommit" || this.state === "CompleteAbort"
        ? now
        : this.txnStartTimestamp;
    const all = new Map(this.topicPartitions);
    for (const tp of added) all.set(topicPartitionKey(tp), tp);
    return this.prepareTransitionTo({
      ...this.currentTransit(),
      txnState: "Ongoing",
      topicPartitions: [...all.values()],
      txnStartTimestamp: start,
      txnLastUpdateTimestamp: now,
    });
  }

  /** Kafka's prepareAbortOrCommit: PrepareCommit or PrepareAbort. */
  prepareAbortOrCommit(newState: "PrepareCommit" | "PrepareAbort", now: number): TxnTransitMetadata {
    return this.prepareTransitionTo({
      ...this.currentTransit(),
      txnState: newState,
      txnLastUpdateTimestamp: now,
    });
  }

  /** Kafka's prepareComplete: the markers are written; the transaction is over. */
  prepareComplete(now: number): TxnTransitMetadata {
    const state = this.state === "PrepareCommit" ? "CompleteCommit" : "CompleteAbort";
    return this.prepareTransitionTo({
      ...this.currentTransit(),
      txnState: state,
      topicPartitions: [],
      txnLastUpdateTimestamp: now,
    });
  }

  /** Kafka's prepareDead: the transactional id expired (a tombstone is written). */
  prepareDead(): TxnTransitMetadata {
    return this.prepareTransitionTo({ ...this.currentTransit(), txnState: "Dead", topicPartitions: [] });
  }

  /** Applies a prepared change once it is written (Kafka's completeTransitionTo). */
  completeTransitionTo(t: TxnTransitMetadata): void {
    if (this.pendingState !== t.txnState)
      throw new InvalidTransitionError(
        `TransactionalId ${this.transactionalId} completes ${t.txnState} while ${this.pendingState ?? "nothing"} is pending`,
      );
    this.producerId = t.producerId;
    this.lastProducerId = t.lastProducerId;
    this.producerEpoch = t.producerEpoch;
    this.lastProducerEpoch = t.lastProducerEpoch;
    this.txnTimeoutMs = t.txnTimeoutMs;
    this.state = t.txnState;
    this.topicPartitions.clear();
    for (const tp of t.topicPartitions) this.topicPartitions.set(topicPartitionKey(tp), tp);
    this.txnStartTimestamp = t.txnStartTimestamp;
    this.txnLastUpdateTimestamp = t.txnLastUpdateTimestamp;
    this.pendingState = undefined;
    this.hasFailedEpochFence = false;
  }
}
