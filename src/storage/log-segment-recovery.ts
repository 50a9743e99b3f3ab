// Segment recovery: what a segment's `.log` bytes must be to be kept when it is recovered (after an
// unclean shutdown, or to rebuild its indexes), and the checks a segment's indexes pass when it is loaded
// without recovery — Kafka's LogSegment.recover and LogSegment.sanityCheck. LogSegment.recover calls
// scanForRecovery, then cuts the file and resets its own state from the result.
//
// The scan re-reads every batch from position 0 and stops at the first that is not valid: a partial
// header, a magic other than 2, a length below a v2 header or above maxBatchSize, a batch running past the
// end of the file, a CRC32C mismatch, offsets not after the previous batch's, or a last offset outside the
// segment's relative range (base offset + Int32.MAX). Everything before it is kept, and the offset and
// time indexes are rebuilt over it on the way (an entry every index.interval.bytes, as appends add them).
// It reads in chunks of at most 1 MiB bounded by the file's length: a declared size is never trusted for
// an allocation.

import {
  BATCH_LENGTH_OFFSET,
  isRecordBatchCrcValid,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  MAX_TIMESTAMP_OFFSET,
  MIN_BATCH_LENGTH,
  PARTITION_LEADER_EPOCH_OFFSET,
  RECORD_BATCH_MAGIC,
  RECORD_BATCH_OVERHEAD,
} from "../protocol/records/index.js";
import type { LogSegment } from "./log-segment.js";
import type { TimestampOffset } from "./time-index.js";

/** What scanForRecovery found in a segment's `.log` file. */
export interface RecoveryScan {
  /** The file's length when the scan began. */
  readonly fileSize: number;
  /** Bytes of the valid batches from position 0: where the file is cut. */
  readonly validBytes: number;
  /** Why the scan stopped before the end of the file, when it did. */
  readonly reason?: string;
  /** The last offset of the last valid batch (base offset - 1 without one). */
  readonly lastValidOffset: bigint;
  /** The max timestamp of the first batch (segment.ms rolls are based on it), when there is one. */
  readonly firstBatchTimestamp?: bigint;
  /** The largest timestamp of the valid batches and the offset carrying it. */
  readonly maxTimestampSoFar: TimestampOffset;
  /** Position of the batch after the last offset index entry written. */
  readonly lastIndexEntry: number;
  /** Every valid batch's (partitionLeaderEpoch, baseOffset), for the leader-epoch cache. */
  readonly epochs: ReadonlyArray<{ epoch: number; startOffset: bigint }>;
}

/**
 * Validates the batches of `segment`'s `.log` file from position 0 and appends offset and time index
 * entries for them to its (emptied) indexes; changes nothing else.
 */
export function scanForRecovery(segment: LogSegment, maxBatchSize: number): RecoveryScan {
  const log = segment.log;
  const fileSize = log.fileSize();
  let validBytes = 0;
  let lastIndexEntry = 0;
  let prevLastOffset = segment.baseOffset - 1n;
  let maxTs: TimestampOffset = { timestamp: -1n, offset: segment.baseOffset };
  let firstBatchTimestamp: bigint | undefined;
  let reason: string | undefined;
  const epochs: Array<{ epoch: number; startOffset: bigint }> = [];
  let chunk = Buffer.alloc(0);
  let chunkStart = 0;
  const CHUNK = 1 << 20;
  while (validBytes < fileSize) {
    const remaining = fileSize - validBytes;
    if (remaining < RECORD_BATCH_OVERHEAD) {
      reason = `a partial batch header of ${remaining} bytes at position ${validBytes}`;
      break;
    }
    // Make sure the header is in the chunk.
    if (validBytes + RECORD_BATCH_OVERHEAD > chunkStart + chunk.length) {
      chunk = Buffer.allocUnsafe(Math.min(CHUNK, remaining));
      chunkStart = validBytes;
      log.read(chunk, chunkStart);
    }
    const at = validBytes - chunkStart;
    const batchLength = chunk.readInt32BE(at + BATCH_LENGTH_OFFSET);
    const magic = chunk.readInt8(at + MAGIC_OFFSET);
    if (magic !== RECORD_BATCH_MAGIC) {
      reason = `magic ${magic} at position ${validBytes}`;
      break;
    }
    if (batchLength < MIN_BATCH_LENGTH || LOG_OVERHEAD + batchLength > maxBatchSize) {
      reason = `batch length ${batchLength} at position ${validBytes}`;
      break;
    }
    const size = LOG_OVERHEAD + batchLength;
    if (size > remaining) {
      reason = `a partial batch at position ${validBytes} (${size} bytes declared, ${remaining} present)`;
      break;
    }
    if (at + size > chunk.length) {
      // Bounded by the file size checked above.
      chunk = Buffer.allocUnsafe(Math.max(size, Math.min(CHUNK, remaining)));
      chunkStart = validBytes;
      log.read(chunk, chunkStart);
    }
    const p = validBytes - chunkStart;
    if (!isRecordBatchCrcValid(chunk.subarray(p, p + size), 0)) {
      reason = `a CRC mismatch in the batch at position ${validBytes}`;
      break;
    }
    const baseOffset = chunk.readBigInt64BE(p);
    const lastOffsetDelta = chunk.readInt32BE(p + LAST_OFFSET_DELTA_OFFSET);
    const lastOffset = baseOffset + BigInt(lastOffsetDelta);
    if (
      baseOffset <= prevLastOffset ||
      lastOffsetDelta < 0 ||
      !segment.canConvertToRelativeOffset(lastOffset)
    ) {
      reason = `offsets ${baseOffset}..${lastOffset} at position ${validBytes} not after ${prevLastOffset}`;
      break;
    }
    const maxTimestamp = chunk.readBigInt64BE(p + MAX_TIMESTAMP_OFFSET);
    if (validBytes === 0) firstBatchTimestamp = maxTimestamp;
    if (maxTimestamp > maxTs.timestamp) maxTs = { timestamp: maxTimestamp, offset: lastOffset };
    // A full index (segment.index.bytes lowered since the segment was written) just stays sparser at
    // the tail: lookups stay correct, the header scan from the last entry gets longer.
    if (validBytes - lastIndexEntry > segment.indexIntervalBytes && !segment.offsetIndex.isFull()) {
      segment.offsetIndex.append(lastOffset, validBytes);
      if (!segment.timeIndex.isFull()) segment.timeIndex.maybeAppend(maxTs.timestamp, maxTs.offset);
      lastIndexEntry = validBytes;
    }
    epochs.push({ epoch: chunk.readInt32BE(p + PARTITION_LEADER_EPOCH_OFFSET), startOffset: baseOffset });
    prevLastOffset = lastOffset;
    validBytes += size;
  }
  return {
    fileSize,
    validBytes,
    reason,
    lastValidOffset: prevLastOffset,
    firstBatchTimestamp,
    maxTimestampSoFar: maxTs,
    lastIndexEntry,
    epochs,
  };
}

/**
 * Structural checks of `segment`'s indexes against its `.log` file (Kafka's sanityCheck, plus spot checks
 * that index entries point at batch boundaries inside the file). Throws CorruptIndexError or Error.
 */
export function sanityCheckSegment(segment: LogSegment): void {
  const { offsetIndex, timeIndex } = segment;
  offsetIndex.sanityCheck();
  timeIndex.sanityCheck();
  segment.txnIndex.sanityCheck();
  const n = offsetIndex.entries;
  // Spot-check up to 16 entries spread over the index (first and last included): each must point at a
  // batch header inside the file whose base offset is <= the entry's offset, after the previous one.
  const samples = new Set<number>();
  for (let k = 0; k < Math.min(n, 16); k++)
    samples.add(Math.floor((k * (n - 1)) / Math.max(1, Math.min(n, 16) - 1)));
  for (const i of samples) {
    const e = offsetIndex.entry(i);
    const h = segment.readBatchHeader(e.position);
    if (h === undefined || h.baseOffset > e.offset || h.baseOffset < segment.baseOffset) {
      throw new Error(
        `offset index entry ${i} (offset ${e.offset}, position ${e.position}) of ${offsetIndex.file} does not point at a batch holding it`,
      );
    }
  }
  if (timeIndex.entries > 0 && segment.size === 0) {
    throw new Error(`time index ${timeIndex.file} has entries for an empty segment`);
  }
  if (n > 0 && offsetIndex.lastEntry().position >= segment.size) {
    throw new Error(`offset index ${offsetIndex.file} points past the end of the log`);
  }
}
