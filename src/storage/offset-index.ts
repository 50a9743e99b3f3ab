// OffsetIndex (`.index`): a sparse map from offsets to byte positions in the segment's `.log` file, as
// Kafka's OffsetIndex. Each entry is 8 bytes, big-endian: relativeOffset int32 (offset - baseOffset),
// position int32 (byte position of a batch in the .log file). An entry (o, p) means: the batch at p
// starts at or before offset o, so a reader wanting offset >= o may start scanning at p. Entries are
// added every index.interval.bytes of appended data. Invariants: relative offsets and positions strictly
// increase; every position is a batch boundary inside the .log file; relative offsets fit an int32.

import { AbstractIndex, CorruptIndexError, InvalidIndexAppendError } from "./abstract-index.js";

export const OFFSET_INDEX_ENTRY_SIZE = 8;

export interface OffsetPosition {
  readonly offset: bigint;
  readonly position: number;
}

export class OffsetIndex extends AbstractIndex {
  /** Lookups done (for tests that check the read path does O(1) work). */
  lookups = 0;

  /** The last entry, kept so callers never need the entries in memory for it (see release()). */
  private last: OffsetPosition;

  constructor(file: string, baseOffset: bigint, maxIndexSize: number) {
    super(file, baseOffset, OFFSET_INDEX_ENTRY_SIZE, maxIndexSize);
    this.last = this.readLastEntry();
  }

  private readLastEntry(): OffsetPosition {
    return this._entries === 0 ? { offset: this.baseOffset, position: 0 } : this.entry(this._entries - 1);
  }

  protected override entriesTruncated(): void {
    this.last = this.readLastEntry();
  }

  private relativeAt(n: number): number {
    return this.buf.readInt32BE(n * OFFSET_INDEX_ENTRY_SIZE);
  }

  private positionAt(n: number): number {
    return this.buf.readInt32BE(n * OFFSET_INDEX_ENTRY_SIZE + 4);
  }

  entry(n: number): OffsetPosition {
    if (n < 0 || n >= this._entries) throw new RangeError(`index entry ${n} of ${this._entries}`);
    return { offset: this.baseOffset + BigInt(this.relativeAt(n)), position: this.positionAt(n) };
  }

  /** The last entry, or (baseOffset, 0) when empty. */
  lastEntry(): OffsetPosition {
    return this.last;
  }

  get lastOffset(): bigint {
    return this.lastEntry().offset;
  }

  /**
   * The entry with the largest offset <= targetOffset, or (baseOffset, 0) when there is none. Binary
   * search over the in-memory entries.
   */
  lookup(targetOffset: bigint): OffsetPosition {
    this.lookups++;
    if (targetOffset < this.baseOffset) return { offset: this.baseOffset, position: 0 };
    const rel = targetOffset - this.baseOffset;
    const slot = this.largestLowerBound(rel, (n) => BigInt(this.relativeAt(n)));
    return slot < 0 ? { offset: this.baseOffset, position: 0 } : this.entry(slot);
  }

  /** Adds (offset, position); the offset must exceed the last entry's (Kafka's OffsetIndex.append). */
  append(offset: bigint, position: number): void {
    if (this.isFull()) throw new InvalidIndexAppendError(`attempt to append to a full index (${this.file})`);
    if (this._entries > 0 && offset <= this.lastOffset) {
      throw new InvalidIndexAppendError(
        `attempt to append an offset (${offset}) no larger than the last offset appended (${this.lastOffset}) to ${this.file}`,
      );
    }
    const rel = this.relativeOffset(offset);
    const pos = this.reserveEntry();
    this.buf.writeInt32BE(rel, pos);
    this.buf.writeInt32BE(position, pos + 4);
    this._entries++;
    this.writeEntry(this._entries - 1);
    this.last = { offset, position };
  }

  /** Removes every entry whose offset is >= `offset`. */
  truncateTo(offset: bigint): void {
    if (offset <= this.baseOffset) {
      this.truncateToEntries(0);
      return;
    }
    const slot = this.largestLowerBound(offset - this.baseOffset, (n) => BigInt(this.relativeAt(n)));
    if (slot < 0) this.truncateToEntries(0);
    else if (this.baseOffset + BigInt(this.relativeAt(slot)) === offset) this.truncateToEntries(slot);
    else this.truncateToEntries(slot + 1);
  }

  protected checkEntries(): void {
    let lastRel = -1;
    let lastPos = -1;
    for (let i = 0; i < this._entries; i++) {
      const rel = this.relativeAt(i);
      const pos = this.positionAt(i);
      if (rel < 0 || pos < 0 || rel <= lastRel || pos <= lastPos) {
        // A first entry (0, 0) is legal; anything else out of order is corruption.
        if (!(i === 0 && rel === 0 && pos === 0)) {
          throw new CorruptIndexError(
            this.file,
            `has entry ${i} (relative offset ${rel}, position ${pos}) not after the previous one (${lastRel}, ${lastPos})`,
          );
        }
      }
      lastRel = rel;
      lastPos = pos;
    }
  }

  /** Every entry, for tools (dump-log) and tests. */
  allEntries(): OffsetPosition[] {
    const out: OffsetPosition[] = [];
    for (let i = 0; i < this._entries; i++) out.push(this.entry(i));
    return out;
  }
}
