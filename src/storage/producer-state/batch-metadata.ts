// BatchMetadata: what a partition remembers of one appended idempotent batch (Kafka's BatchMetadata): its
// last sequence, last offset, offset delta and max timestamp. The first sequence and first offset are
// derived, with sequences wrapping at Int32.MAX_VALUE as Kafka's DefaultRecordBatch does.

export const INT32_MAX = 2147483647;

/** seq + increment, wrapping past Int32.MAX_VALUE to 0 (Kafka's DefaultRecordBatch.incrementSequence). */
export function incrementSequence(sequence: number, increment: number): number {
  if (sequence > INT32_MAX - increment) return increment - (INT32_MAX - sequence) - 1;
  return sequence + increment;
}

/** seq - decrement, wrapping below 0 to Int32.MAX_VALUE (Kafka's DefaultRecordBatch.decrementSequence). */
export function decrementSequence(sequence: number, decrement: number): number {
  if (sequence < decrement) return INT32_MAX - (decrement - sequence) + 1;
  return sequence - decrement;
}

export class BatchMetadata {
  constructor(
    readonly lastSeq: number,
    readonly lastOffset: bigint,
    readonly offsetDelta: number,
    readonly timestamp: bigint,
  ) {}

  get firstSeq(): number {
    return decrementSequence(this.lastSeq, this.offsetDelta);
  }

  get firstOffset(): bigint {
    return this.lastOffset - BigInt(this.offsetDelta);
  }

  toString(): string {
    return `BatchMetadata(firstSeq=${this.firstSeq}, lastSeq=${this.lastSeq}, firstOffset=${this.firstOffset}, lastOffset=${this.lastOffset}, timestamp=${this.timestamp})`;
  }
}
