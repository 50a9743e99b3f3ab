// TimeIndex (`.timeindex`): a sparse map from timestamps to offsets, as Kafka's TimeIndex. Each entry is
// 12 bytes, big-endian: timestamp int64 (the largest timestamp seen so far in the segment), relativeOffset
// int32 (offset - baseOffset of the batch holding that timestamp). An entry (t, o) means: t was the largest
// timestamp in the segment when it was written, carried by offset o, so the first message with a
// timestamp > t is after o. Entries are only added when the timestamp exceeds the last entry's. The last slot is
// reserved for the entry written when the segment rolls (isFull reports full one entry early).
// Invariants: timestamps strictly increase; relative offsets never decrease and fit an int32.

import { AbstractIndex, CorruptIndexError, InvalidIndexAppendError } from "./abstract-index.js";

export const TIME_INDEX_ENTRY_SIZE = 12;

export interface TimestampOffset {
  readonly timestamp: bigint;
  readonly offset: bigint;
}

export class TimeIndex extends AbstractIndex {
  /** The last entry, kept so callers never need the entries in memory for it (see release()). */
  private last: TimestampOffset;

  constructor(file: string, baseOffset: bigint, maxIndexSize: number) {
    super(file, baseOffset, TIME_INDEX_ENTRY_SIZE, maxIndexSize);
    this.last = this.readLastEntry();
  }

  private readLastEntry(): TimestampOffset {
    return this._entries === 0 ? { timestamp: -1n, offset: this.baseOffset } : this.entry(this._entries - 1);
  }

  protected override entriesTruncated(): void {
    this.last = this.readLastEntry();
  }

  private timestampAt(n: number): bigint {
    return this.buf.readBigInt64BE(n * TIME_INDEX_ENTRY_SIZE);
  }

  private relativeAt(n: number): number {
    return this.buf.readInt32BE(n * TIME_INDEX_ENTRY_SIZE + 8);
  }

  entry(n: number): TimestampOffset {
    if (n < 0 || n >= this._entries) throw new RangeError(`time index entry ${n} of ${this._entries}`);
    return { timestamp: this.timestampAt(n), offset: this.baseOffset + BigInt(this.relativeAt(n)) };
  }

  /** The last entry, or (-1, baseOffset) when empty (Kafka's lastEntry). */
  lastEntry(): TimestampOffset {
    return this.last;
  }

  /** Full one entry early: the last slot is kept for the entry added on roll. */
  override isFull(): boolean {
    return this._entries >= this._maxEntries - 1;
  }

  /**
   * Adds (timestamp, offset) when timestamp exceeds the last entry's. With skipFullCheck (on roll) the
   * reserved last slot may be used. Kafka's maybeAppend.
   */
  maybeAppend(timestamp: bigint, offset: bigint, skipFullCheck = false): void {
    if (!skipFullCheck && this.isFull()) {
      throw new InvalidIndexAppendError(`attempt to append to a full time index (${this.file})`);
    }
    const last = this.lastEntry();
    if (this._entries > 0 && offset < last.offset) {
      throw new InvalidIndexAppendError(
        `attempt to append an offset (${offset}) smaller than the last offset (${last.offset}) to ${this.file}`,
      );
    }
    if (this._entries > 0 && timestamp < last.timestamp) {
      throw new InvalidIndexAppendError(
        `attempt to append a timestamp (${timestamp}) smaller than the last timestamp (${last.timestamp}) to ${this.file}`,
      );
    }
    if (timestamp <= last.timestamp) return;
    if (this._entries >= this._maxEntries) return; // no room at all (skipFullCheck on a trimmed index)
    const rel = this.relativeOffset(offset);
    const pos = this.reserveEntry();
    this.buf.writeBigInt64BE(timestamp, pos);
    this.buf.writeInt32BE(rel, pos + 8);
    this._entries++;
    this.writeEntry(this._entries - 1);
    this.last = { timestamp, offset };
  }

  /**
   * The entry with the largest timestamp <= target, or (-1, baseOffset) when none: the offset to start
   * searching from for the first message with timestamp >= target.
   */
  lookup(targetTimestamp: bigint): TimestampOffset {
    const slot = this.largestLowerBound(targetTimestamp, (n) => this.timestampAt(n));
    return slot < 0 ? { timestamp: -1n, offset: this.baseOffset } : this.entry(slot);
  }

  /** Removes every entry whose offset is >= `offset`. */
  truncateTo(offset: bigint): void {
    let keep = this._entries;
    while (keep > 0 && this.baseOffset + BigInt(this.relativeAt(keep - 1)) >= offset) keep--;
    this.truncateToEntries(keep);
  }

  protected checkEntries(): void {
    let lastTs = -1n;
    let lastRel = -1;
    for (let i = 0; i < this._entries; i++) {
      const ts = this.timestampAt(i);
      const rel = this.relativeAt(i);
      if (rel < 0 || rel < lastRel || (i > 0 && ts <= lastTs)) {
        throw new CorruptIndexError(
          this.file,
          `has entry ${i} (timestamp ${ts}, relative offset ${rel}) not after the previous one (${lastTs}, ${lastRel})`,
        );
      }
      lastTs = ts;
      lastRel = rel;
    }
  }

  allEntries(): TimestampOffset[] {
    const out: TimestampOffset[] = [];
    for (let i = 0; i < this._entries; i++) out.push(this.entry(i));
    return out;
  }
}
