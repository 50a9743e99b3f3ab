// ProducerAppendInfo: the changes one append makes to one producer's state, validated before anything is
// written (Kafka's ProducerAppendInfo). It owns the idempotence rules for data batches:
// - an epoch older than the producer's is fenced: INVALID_PRODUCER_EPOCH for a client append (since Kafka
//   2.7 this replaces PRODUCER_FENCED on produce), only a warning when replicating or loading the log;
// - a client batch must continue the sequence: the next sequence after the last one (wrapping at
//   Int32.MAX_VALUE), 0 on a new epoch, otherwise OUT_OF_ORDER_SEQUENCE_NUMBER. A producer the partition
//   does not know (never seen, expired, or its records deleted) may start at any sequence: Kafka 2.5+
//   (KIP-360) no longer answers UNKNOWN_PRODUCER_ID on produce;
// - transactional bookkeeping: the first transactional batch opens a transaction (currentTxnFirstOffset),
//   a non-transactional batch inside an open transaction is INVALID_TXN_STATE, an end-transaction marker
//   closes it (appendEndTxnMarker, used once transactions write control batches).
// Duplicate detection (a retry of one of the last 5 batches) happens before this, in UnifiedLog.

import { KafkaError } from "../../protocol/errors.js";
import { NO_PRODUCER_EPOCH } from "../../protocol/records/record-batch.js";
import { INT32_MAX } from "./batch-metadata.js";
import { ProducerStateEntry } from "./producer-state-entry.js";

/** Who is appending (Kafka's AppendOrigin): only CLIENT appends have their sequences checked. */
export type AppendOrigin = "client" | "replication" | "coordinator";

/** An ongoing transaction seen in this append (Kafka's TxnMetadata). */
export interface TxnMetadata {
  producerId: bigint;
  firstOffset: bigint;
  lastOffset?: bigint;
}

/** A transaction ended by a marker (Kafka's CompletedTxn). */
export interface CompletedTxn {
  producerId: bigint;
  firstOffset: bigint;
  lastOffset: bigint;
  isAborted: boolean;
}

export class ProducerAppendInfo {
  readonly updatedEntry: ProducerStateEntry;
  readonly transactions: TxnMetadata[] = [];

  constructor(
    readonly topicPartition: string,
    readonly producerId: bigint,
    readonly currentEntry: ProducerStateEntry,
    readonly origin: AppendOrigin,
    private readonly warn: (message: string) => void = () => {},
  ) {
    this.updatedEntry = new ProducerStateEntry(
      producerId,
      currentEntry.producerEpoch,
      currentEntry.coordinatorEpoch,
      currentEntry.lastTimestamp,
      currentEntry.currentTxnFirstOffset,
    );
  }

  private checkProducerEpoch(producerEpoch: number, offset: bigint): void {
    const current = this.updatedEntry.producerEpoch;
    if (producerEpoch < current) {
      const message = `Epoch of producer ${this.producerId} at offset ${offset} in ${this.topicPartition} is ${producerEpoch}, which is smaller than the last seen epoch ${current}`;
      if (this.origin === "replication") this.warn(message);
      else throw new KafkaError("INVALID_PRODUCER_EPOCH", message);
    }
  }

  private checkSequence(producerEpoch: number, appendFirstSeq: number, offset: bigint): void {
    if (producerEpoch !== this.updatedEntry.producerEpoch) {
      if (appendFirstSeq !== 0 && this.updatedEntry.producerEpoch !== NO_PRODUCER_EPOCH) {
        throw new KafkaError(
          "OUT_OF_ORDER_SEQUENCE_NUMBER",
          `Invalid sequence number for new epoch of producer ${this.producerId} at offset ${offset} in partition ${this.topicPartition}: ${producerEpoch} (request epoch), ${appendFirstSeq} (seq. number), ${this.updatedEntry.producerEpoch} (current producer epoch)`,
        );
      }
      return;
    }
    let currentLastSeq: number;
    if (!this.updatedEntry.isEmpty()) currentLastSeq = this.updatedEntry.lastSeq();
    else if (producerEpoch === this.currentEntry.producerEpoch) currentLastSeq = this.currentEntry.lastSeq();
    else currentLastSeq = -1;
    // No known epoch (the producer's records were deleted or it expired): any sequence is accepted.
    if (this.currentEntry.producerEpoch === NO_PRODUCER_EPOCH || inSequence(currentLastSeq, appendFirstSeq))
      return;
    throw new KafkaError(
      "OUT_OF_ORDER_SEQUENCE_NUMBER",
      `Out of order sequence number for producer ${this.producerId} at offset ${offset} in partition ${this.topicPartition}: ${appendFirstSeq} (incoming seq. number), ${currentLastSeq} (current end sequence number)`,
    );
  }

  /** Validates and records one data batch (offsets already assigned). Throws KafkaError. */
  appendDataBatch(
    epoch: number,
    firstSeq: number,
    lastSeq: number,
    lastTimestamp: bigint,
    firstOffset: bigint,
    lastOffset: bigint,
    isTransactional: boolean,
  ): void {
    this.checkProducerEpoch(epoch, firstOffset);
    if (this.origin === "client") this.checkSequence(epoch, firstSeq, firstOffset);
    this.updatedEntry.addBatch(epoch, lastSeq, lastOffset, Number(lastOffset - firstOffset), lastTimestamp);
    const txnFirst = this.updatedEntry.currentTxnFirstOffset;
    if (txnFirst >= 0n && !isTransactional) {
      throw new KafkaError(
        "INVALID_TXN_STATE",
        `Expected transactional write from producer ${this.producerId} at offset ${firstOffset} in partition ${this.topicPartition}`,
      );
    }
    if (txnFirst < 0n && isTransactional) {
      this.updatedEntry.currentTxnFirstOffset = firstOffset;
      this.transactions.push({ producerId: this.producerId, firstOffset });
    }
  }

  /**
   * Records a COMMIT/ABORT marker written at `offset` by the transaction coordinator with
   * `coordinatorEpoch`; returns the completed transaction, if one was open. A marker from an older
   * coordinator is TRANSACTION_COORDINATOR_FENCED (Kafka's appendEndTxnMarker).
   */
  appendEndTxnMarker(
    isAbort: boolean,
    coordinatorEpoch: number,
    producerEpoch: number,
    offset: bigint,
    timestamp: bigint,
  ): CompletedTxn | undefined {
    this.checkProducerEpoch(producerEpoch, offset);
    if (this.updatedEntry.coordinatorEpoch > coordinatorEpoch) {
      throw new KafkaError(
        "TRANSACTION_COORDINATOR_FENCED",
        `Invalid coordinator epoch for producer ${this.producerId} at offset ${offset} in partition ${this.topicPartition}: ${coordinatorEpoch} (zombie), ${this.updatedEntry.coordinatorEpoch} (current)`,
      );
    }
    this.updatedEntry.maybeUpdateProducerEpoch(producerEpoch);
    const first = this.updatedEntry.currentTxnFirstOffset;
    const completed =
      first >= 0n
        ? { producerId: this.producerId, firstOffset: first, lastOffset: offset, isAborted: isAbort }
        : undefined;
    this.updatedEntry.currentTxnFirstOffset = -1n;
    this.updatedEntry.coordinatorEpoch = coordinatorEpoch;
    this.updatedEntry.lastTimestamp = timestamp;
    return completed;
  }
}

/** Kafka's ProducerAppendInfo.inSequence: the next sequence, or 0 after Int32.MAX_VALUE. */
export function inSequence(lastSeq: number, nextSeq: number): boolean {
  return nextSeq === lastSeq + 1 || (nextSeq === 0 && lastSeq === INT32_MAX);
}
