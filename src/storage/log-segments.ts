// LogSegments: the segments of one partition's log ordered by base offset, as Kafka's LogSegments (there a
// map from base offset to segment). It owns the order and the lookups by offset; it does no I/O: the
// segments' files are opened, rolled, renamed and deleted by LocalLog.
//
// Invariants:
// - Oldest first, by base offset; the last segment is the active one, the only one appended to.
// - An offset's segment is the floor by base offset (the last segment whose base offset is <= the offset),
//   found by a binary search: a read's cost does not grow with the number of segments.
// - Removing segments keeps the order of the rest; a segment added lands after every segment whose base
//   offset is <= its own (a roll adds at the end).

import type { LogSegment } from "./log-segment.js";

export class LogSegments implements Iterable<LogSegment> {
  private list: LogSegment[];

  /** `segments` oldest first (the LogLoader's order). */
  constructor(segments: readonly LogSegment[] = []) {
    this.list = segments.slice();
  }

  get numberOfSegments(): number {
    return this.list.length;
  }

  /** The segments, oldest first (a copy; the last one is the active segment). */
  values(): LogSegment[] {
    return this.list.slice();
  }

  [Symbol.iterator](): Iterator<LogSegment> {
    return this.list[Symbol.iterator]();
  }

  /** The i-th segment, oldest first. */
  at(i: number): LogSegment {
    return this.list[i];
  }

  get firstSegment(): LogSegment {
    return this.list[0];
  }

  get activeSegment(): LogSegment {
    return this.list[this.list.length - 1];
  }

  contains(segment: LogSegment): boolean {
    return this.list.includes(segment);
  }

  /** Bytes of all segments. */
  get sizeInBytes(): number {
    let n = 0;
    for (const s of this.list) n += s.size;
    return n;
  }

  /** Index of the last segment whose base offset is <= offset (binary search), or -1. */
  floorIndex(offset: bigint): number {
    let lo = 0;
    let hi = this.list.length - 1;
    if (hi < 0 || this.list[0].baseOffset > offset) return -1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.list[mid].baseOffset <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** The segment that would hold `offset` (the floor by base offset). */
  floorSegment(offset: bigint): LogSegment | undefined {
    const i = this.floorIndex(offset);
    return i < 0 ? undefined : this.list[i];
  }

  /** Adds `segment` after every segment whose base offset is <= its own. */
  add(segment: LogSegment): void {
    let i = this.list.length;
    while (i > 0 && this.list[i - 1].baseOffset > segment.baseOffset) i--;
    this.list.splice(i, 0, segment);
  }

  /** Keeps the segments `keep` accepts; returns the others, oldest first. */
  retain(keep: (segment: LogSegment) => boolean): LogSegment[] {
    const kept: LogSegment[] = [];
    const removed: LogSegment[] = [];
    for (const s of this.list) (keep(s) ? kept : removed).push(s);
    this.list = kept;
    return removed;
  }

  /** Removes every segment; returns them, oldest first. */
  clear(): LogSegment[] {
    const removed = this.list;
    this.list = [];
    return removed;
  }
}
