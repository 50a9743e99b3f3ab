// ProducerStateEntry: one producer id's state in one partition (Kafka's ProducerStateEntry): its epoch, the
// metadata of its last 5 appended batches (for duplicate detection of retried batches), the coordinator
// epoch of the last transaction marker, the first offset of its ongoing transaction, and the timestamp of
// its last write (for producer.id.expiration.ms).

import { NO_PRODUCER_EPOCH, NO_SEQUENCE } from "../../protocol/records/record-batch.js";
import { BatchMetadata } from "./batch-metadata.js";

/** Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN: the producer's max.in.flight.requests limit. */
export const NUM_BATCHES_TO_RETAIN = 5;

export class ProducerStateEntry {
  readonly batchMetadata: BatchMetadata[] = [];

  constructor(
    readonly producerId: bigint,
    public producerEpoch: number = NO_PRODUCER_EPOCH,
    public coordinatorEpoch = -1,
    public lastTimestamp = -1n,
    /** First offset of the producer's ongoing transaction; -1 when none. */
    public currentTxnFirstOffset = -1n,
    batch?: BatchMetadata,
  ) {
    if (batch !== undefined) this.batchMetadata.push(batch);
  }

  static empty(producerId: bigint): ProducerStateEntry {
    return new ProducerStateEntry(producerId);
  }

  isEmpty(): boolean {
    return this.batchMetadata.length === 0;
  }

  firstSeq(): number {
    return this.isEmpty() ? NO_SEQUENCE : this.batchMetadata[0].firstSeq;
  }

  firstDataOffset(): bigint {
    return this.isEmpty() ? -1n : this.batchMetadata[0].firstOffset;
  }

  lastSeq(): number {
    return this.isEmpty() ? NO_SEQUENCE : this.batchMetadata[this.batchMetadata.length - 1].lastSeq;
  }

  lastDataOffset(): bigint {
    return this.isEmpty() ? -1n : this.batchMetadata[this.batchMetadata.length - 1].lastOffset;
  }

  lastOffsetDelta(): number {
    return this.isEmpty() ? 0 : this.batchMetadata[this.batchMetadata.length - 1].offsetDelta;
  }

  addBatch(
    producerEpoch: number,
    lastSeq: number,
    lastOffset: bigint,
    offsetDelta: number,
    timestamp: bigint,
  ): void {
    this.maybeUpdateProducerEpoch(producerEpoch);
    if (this.batchMetadata.length === NUM_BATCHES_TO_RETAIN) this.batchMetadata.shift();
    this.batchMetadata.push(new BatchMetadata(lastSeq, lastOffset, offsetDelta, timestamp));
    this.lastTimestamp = timestamp;
  }

  /** A new epoch forgets the batches of the old one; returns whether the epoch changed. */
  maybeUpdateProducerEpoch(producerEpoch: number): boolean {
    if (this.producerEpoch === producerEpoch) return false;
    this.batchMetadata.length = 0;
    this.producerEpoch = producerEpoch;
    return true;
  }

  /** The cached batch with exactly this epoch and sequence range: the batch is a retry of it. */
  findDuplicateBatch(producerEpoch: number, firstSeq: number, lastSeq: number): BatchMetadata | undefined {
    if (producerEpoch !== this.producerEpoch) return undefined;
    return this.batchWithSequenceRange(firstSeq, lastSeq);
  }

  batchWithSequenceRange(firstSeq: number, lastSeq: number): BatchMetadata | undefined {
    for (const b of this.batchMetadata) if (b.firstSeq === firstSeq && b.lastSeq === lastSeq) return b;
    return undefined;
  }

  /** Replaces this entry's state with `next` (Kafka's ProducerStateEntry.update). */
  update(next: ProducerStateEntry): void {
    this.maybeUpdateProducerEpoch(next.producerEpoch);
    while (next.batchMetadata.length > 0) {
      if (this.batchMetadata.length === NUM_BATCHES_TO_RETAIN) this.batchMetadata.shift();
      this.batchMetadata.push(next.batchMetadata.shift()!);
    }
    this.coordinatorEpoch = next.coordinatorEpoch;
    this.currentTxnFirstOffset = next.currentTxnFirstOffset;
    this.lastTimestamp = next.lastTimestamp;
  }

  toString(): string {
    return `ProducerStateEntry(producerId=${this.producerId}, producerEpoch=${this.producerEpoch}, currentTxnFirstOffset=${this.currentTxnFirstOffset}, coordinatorEpoch=${this.coordinatorEpoch}, lastTimestamp=${this.lastTimestamp}, batchMetadata=[${this.batchMetadata.join(", ")}])`;
  }
}
