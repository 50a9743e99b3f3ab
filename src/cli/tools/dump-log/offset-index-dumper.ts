// `dump-log` of an .index file (Kafka's DumpLogSegments.dumpIndex over OffsetIndex): "offset: N position: M"
// per entry of (relativeOffset int32, position int32), each checked against the batch at that position in
// the segment's .log (mismatches collected in DumpState.indexMismatches); --index-sanity-check runs the
// check the broker runs at load instead. The zero entries of a preallocated index end the dump. Also
// Kafka's OffsetIndex.lookup, which the .timeindex check uses to find a batch.

import { resolve } from "node:path";
import { DumpError, DumpState } from "./dump-errors.js";
import type { DumpContext } from "./dump-log-options.js";
import { batchLastOffset, nextBatch } from "./file-log-input-stream.js";
import { baseOffsetOfName, FileReader, segmentLogOf } from "./segment-file-reader.js";

const OFFSET_INDEX_ENTRY = 8;

export async function dumpIndex(path: string, { opts, state, out }: DumpContext): Promise<void> {
  const baseOffset = baseOffsetOfName(path);
  const logPath = segmentLogOf(path);
  const index = FileReader.open(path);
  const log = FileReader.open(logPath);
  try {
    const entries = Math.floor(index.size / OFFSET_INDEX_ENTRY);
    if (entries === 0) {
      out.println(`${path} is empty.`);
      return;
    }
    if (opts.indexSanityOnly) {
      const last = baseOffset + BigInt(index.read((entries - 1) * OFFSET_INDEX_ENTRY, 4).readInt32BE(0));
      if (last < baseOffset) {
        throw new DumpError(
          `Corrupt index found, index file (${resolve(path)}) has non-zero size but the last offset is ${last} which is less than the base offset ${baseOffset}`,
        );
      }
      if (index.size % OFFSET_INDEX_ENTRY !== 0) {
        throw new DumpError(
          `Index file ${resolve(path)} is corrupt, found ${index.size} bytes which is neither positive nor a multiple of ${OFFSET_INDEX_ENTRY}`,
        );
      }
      out.println(`${path} passed sanity check.`);
      return;
    }
    for (let i = 0; i < entries; i++) {
      const e = index.read(i * OFFSET_INDEX_ENTRY, OFFSET_INDEX_ENTRY);
      const offset = baseOffset + BigInt(e.readInt32BE(0));
      const position = e.readInt32BE(4);
      // A preallocated index ends in zero entries: stop at the first one, as Kafka does.
      if (offset === baseOffset && i > 0) return;
      let firstBatchLastOffset = -1n;
      if (position >= 0 && position <= log.size) {
        const b = nextBatch(log, position, Math.min(log.size, position + opts.maxMessageSize));
        if (b !== undefined) firstBatchLastOffset = batchLastOffset(log, b);
      }
      // The first slot of an active (preallocated) index that has no entry yet is zeros too: an entry
      // (base offset, position 0) exists only when the first batch ends at the base offset. Kafka reports
      // the zeros as a mismatch, which reads like corruption; it is unused space.
      if (i === 0 && offset === baseOffset && position === 0 && firstBatchLastOffset !== offset) return;
      if (firstBatchLastOffset !== offset) {
        DumpState.add(state.indexMismatches, resolve(path), [offset, firstBatchLastOffset]);
      }
      if (!opts.verifyOnly) out.println(`offset: ${offset} position: ${position}`);
      if (i % 4096 === 4095) await out.maybeFlush();
    }
  } finally {
    index.close();
    log.close();
  }
}

/** Kafka's OffsetIndex.lookup: the entry with the largest offset <= target, or (baseOffset, 0). */
export function offsetIndexLookup(index: FileReader | undefined, baseOffset: bigint, target: bigint): number {
  if (index === undefined) return 0;
  const entries = Math.floor(index.size / OFFSET_INDEX_ENTRY);
  if (entries === 0) return 0;
  const offsetAt = (slot: number): bigint =>
    baseOffset + BigInt(index.read(slot * OFFSET_INDEX_ENTRY, 4).readInt32BE(0));
  const search = (begin: number, end: number): number => {
    let lo = begin;
    let hi = end;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      const found = offsetAt(mid);
      if (found > target) hi = mid - 1;
      else if (found < target) lo = mid;
      else return mid;
    }
    return lo;
  };
  const warmEntries = Math.floor(8192 / OFFSET_INDEX_ENTRY);
  const firstHot = Math.max(0, entries - 1 - warmEntries);
  let slot: number;
  if (offsetAt(firstHot) < target) slot = search(firstHot, entries - 1);
  else if (offsetAt(0) > target) slot = -1;
  else slot = search(0, firstHot);
  if (slot === -1) return 0;
  return index.read(slot * OFFSET_INDEX_ENTRY + 4, 4).readInt32BE(0);
}
