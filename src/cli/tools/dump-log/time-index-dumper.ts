// `dump-log` of a .timeindex file (Kafka's DumpLogSegments.dumpTimeIndex over TimeIndex): "timestamp: T
// offset: O" per entry of (timestamp int64, relativeOffset int32), each checked against the segment's .log:
// the batch ending at the offset must exist and carry that max timestamp, and timestamps must increase
// (collected in DumpState.shallowNotFound, timeMismatches, outOfOrder); --index-sanity-check runs the
// broker's load-time check instead.

import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { DumpError, DumpState } from "./dump-errors.js";
import type { DumpContext } from "./dump-log-options.js";
import { batchLastOffset, batchRecords, type FileBatch, nextBatch } from "./file-log-input-stream.js";
import { offsetIndexLookup } from "./offset-index-dumper.js";
import { baseOffsetOfName, companionFile, FileReader, segmentLogOf } from "./segment-file-reader.js";

const TIME_INDEX_ENTRY = 12;

export async function dumpTimeIndex(path: string, { opts, state, out }: DumpContext): Promise<void> {
  const baseOffset = baseOffsetOfName(path);
  const logPath = segmentLogOf(path);
  const indexPath = companionFile(path, ".index");
  const log = FileReader.open(logPath);
  const index = existsSync(indexPath) ? FileReader.open(indexPath) : undefined;
  const timeIndex = FileReader.open(path);
  try {
    const entries = Math.floor(timeIndex.size / TIME_INDEX_ENTRY);
    const entryAt = (i: number): { timestamp: bigint; offset: bigint } => {
      const e = timeIndex.read(i * TIME_INDEX_ENTRY, TIME_INDEX_ENTRY);
      return { timestamp: e.readBigInt64BE(0), offset: baseOffset + BigInt(e.readInt32BE(8)) };
    };
    if (opts.indexSanityOnly) {
      const last = entries === 0 ? { timestamp: -1n, offset: baseOffset } : entryAt(entries - 1);
      const abs = resolve(path);
      if (entries !== 0 && last.timestamp < entryAt(0).timestamp) {
        throw new DumpError(
          `Corrupt time index found, time index file (${abs}) has non-zero size but the last timestamp is ${last.timestamp} which is less than the first timestamp ${entryAt(0).timestamp}`,
        );
      }
      if (entries !== 0 && last.offset < baseOffset) {
        throw new DumpError(
          `Corrupt time index found, time index file (${abs}) has non-zero size but the last offset is ${last.offset} which is less than the first offset ${baseOffset}`,
        );
      }
      if (timeIndex.size % TIME_INDEX_ENTRY !== 0) {
        throw new DumpError(
          `Time index file ${abs} is corrupt, found ${timeIndex.size} bytes which is neither positive nor a multiple of ${TIME_INDEX_ENTRY}`,
        );
      }
      out.println(`${path} passed sanity check.`);
      return;
    }
    const abs = resolve(path);
    let prevTimestamp = -1n;
    for (let i = 0; i < entries; i++) {
      const entry = entryAt(i);
      if (entry.offset === baseOffset && i > 0) return;
      const position = offsetIndexLookup(index, baseOffset, entry.offset);
      let found: FileBatch | undefined;
      let foundLast = -1n;
      if (position >= 0 && position <= log.size) {
        for (
          let b = nextBatch(log, position, log.size);
          b !== undefined;
          b = nextBatch(log, b.position + b.size, log.size)
        ) {
          const last = batchLastOffset(log, b);
          if (last >= entry.offset) {
            found = b;
            foundLast = last;
            break;
          }
        }
      }
      if (found === undefined) {
        DumpState.add(state.shallowNotFound, abs, [entry.offset, -1n]);
      } else if (foundLast !== entry.offset) {
        DumpState.add(state.shallowNotFound, abs, [entry.offset, foundLast]);
      } else {
        let maxTimestamp = -1n;
        for (const r of batchRecords(log, found)) if (r.timestamp > maxTimestamp) maxTimestamp = r.timestamp;
        if (maxTimestamp !== entry.timestamp)
          DumpState.add(state.timeMismatches, abs, [entry.timestamp, maxTimestamp]);
        if (prevTimestamp >= entry.timestamp)
          DumpState.add(state.outOfOrder, abs, [entry.timestamp, prevTimestamp]);
      }
      if (!opts.verifyOnly) out.println(`timestamp: ${entry.timestamp} offset: ${entry.offset}`);
      prevTimestamp = entry.timestamp;
      if (i % 4096 === 4095) await out.maybeFlush();
    }
  } finally {
    log.close();
    index?.close();
    timeIndex.close();
  }
}
