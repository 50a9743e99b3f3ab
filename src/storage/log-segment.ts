// LogSegment: one segment of a partition's log, as Kafka's LogSegment: the `.log` file (record batches,
// magic 2, stored exactly as appended: `baseOffset int64 | batchLength int32 | ...`, see
// protocol/records/record-batch.ts) plus its `.index`, `.timeindex` and `.txnindex`. The segment is named
// after its base offset; every batch in it has offsets in [baseOffset, baseOffset + Int32.MAX].
//
// Invariants:
// - The .log file holds whole batches back to back from position 0 (a crash may leave a partial tail,
//   removed by recover()); batch offsets strictly increase.
// - The offset index has an entry (largest offset of an append, position of that append) whenever more
//   than index.interval.bytes were appended since the last entry; the time index gets (max timestamp so
//   far, its offset) at the same moments when that timestamp grew, plus a final entry on roll and close.
// - Lookups read batch headers only (61 bytes), never whole batches, and start from an index entry, so
//   their cost depends on index.interval.bytes, not on the segment size.
//
// I/O is synchronous (openSync / writeSync / readSync / fdatasyncSync): appends land in the page cache and
// return, like Kafka's FileChannel writes; a synchronous path has no per-call promise or thread-pool hop,
// which is both simpler and faster for writes this small, and keeps the log's state changes atomic with
// respect to the event loop. Two exceptions run on libuv's thread pool, as Kafka runs them on its
// scheduler thread: the flush of a rolled segment (flushInBackground: an fdatasync waits for the disk,
// seconds for a GiB segment) and the removal of a segment renamed `.deleted` (deleteInBackground).
// Batches never checked in this process — those of a segment loaded after a clean shutdown, not recovered —
// have their CRC checked when first read; a batch that fails is never served: the read answers
// CORRUPT_MESSAGE (one ERROR line per bad batch naming the file, position and offsets) instead of handing
// clients bytes that stall them (librdkafka waits at such an offset without an error). Bytes appended or
// recovered here were checked already, so the hot path (reads of what was just appended) checks nothing.
// A failed append (ENOSPC, EIO) is undone before its error is thrown: the .log file is cut back to its
// size before the append and the index entries of the append are dropped, so no partial batch or index
// entry is ever visible. When even the undo fails the error says so (code EIO): the log must go offline.

import {
  closeSync,
  existsSync,
  fdatasyncSync,
  close as fsClose,
  fdatasync as fsFdatasync,
  open as fsOpen,
  fstatSync,
  ftruncateSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeSync,
} from "node:fs";
import { unlink } from "node:fs/promises";
import { Logger } from "../common/logger.js";
import type { Time } from "../common/time.js";
import { KafkaError } from "../protocol/errors.js";
import {
  BATCH_LENGTH_OFFSET,
  decodeBatchRecords,
  isRecordBatchCrcValid,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  MAX_TIMESTAMP_OFFSET,
  MIN_BATCH_LENGTH,
  PARTITION_LEADER_EPOCH_OFFSET,
  RECORD_BATCH_MAGIC,
  RECORD_BATCH_OVERHEAD,
  type RecordBatchHeader,
  readRecordBatchHeader,
} from "../protocol/records/index.js";
import type { LogConfig } from "./log-config.js";
import { logFile, offsetIndexFile, timeIndexFile, transactionIndexFile } from "./log-file-names.js";
import { OffsetIndex } from "./offset-index.js";
import { TimeIndex, type TimestampOffset } from "./time-index.js";
import { TransactionIndex } from "./transaction-index.js";

const INT32_MAX = 2147483647;
const segmentLogger = new Logger("kafka.log.LogSegment");

/** A batch located in a segment: its last offset, position and size (Kafka's LogOffsetPosition). */
export interface LogOffsetPosition {
  /** The batch's last offset. */
  readonly offset: bigint;
  readonly baseOffset: bigint;
  readonly position: number;
  readonly size: number;
}

/** Header fields the storage layer needs, read from the 61-byte batch header. */
export interface BatchHeaderInfo {
  readonly position: number;
  readonly size: number;
  readonly baseOffset: bigint;
  readonly lastOffset: bigint;
  readonly maxTimestamp: bigint;
  readonly partitionLeaderEpoch: number;
}

export interface SegmentReadResult {
  /** Whole batches, starting with the one containing the requested offset. */
  readonly records: Buffer;
  /** The first batch did not fit maxSize (and minOneMessage was false): records is empty. */
  readonly firstEntryIncomplete: boolean;
  /** Offset, segment and position of the first batch (Kafka's LogOffsetMetadata). */
  readonly fetchOffset: bigint;
  readonly segmentBaseOffset: bigint;
  readonly position: number;
}

export interface RollParams {
  readonly maxSegmentMs: number;
  readonly maxSegmentBytes: number;
  /** Largest timestamp of the batches about to be appended. */
  readonly maxTimestampInMessages: bigint;
  /** Largest offset of the batches about to be appended. */
  readonly maxOffsetInMessages: bigint;
  readonly messagesSize: number;
  readonly now: number;
}

/** Something wrong found by recover(), with the position of the first invalid byte. */
export interface RecoveryResult {
  /** Bytes cut from the end of the .log file. */
  readonly bytesTruncated: number;
  /** Why the scan stopped early, when it did. */
  readonly reason?: string;
  /** Every batch's (partitionLeaderEpoch, baseOffset), for the leader-epoch cache. */
  readonly epochs: ReadonlyArray<{ epoch: number; startOffset: bigint }>;
}

export interface LogSegmentOpenOptions {
  /** The files exist already (loading): keep them; otherwise create them. */
  fileAlreadyExists?: boolean;
  /** Preallocate the new .log file to this size (with `preallocate`). */
  initFileSize?: number;
  preallocate?: boolean;
  /** A suffix after the usual name (".cleaned", ".swap"). */
  fileSuffix?: string;
  /** segment.jitter.ms drawn for this segment. */
  rollJitterMs?: number;
}

export class LogSegment {
  private fd: number | null;
  private _size: number;
  /**
   * Positions not known to hold valid batches: [verifiedEnd, appendStart) — a clean load's bytes, until a
   * read checks them (verifiedEnd moves when that read starts at it). Appended or recovered bytes are valid.
   */
  private verifiedEnd = 0;
  private appendStart: number;
  /** Bad batches already reported (their positions), so a retrying reader does not repeat the ERROR. */
  private readonly reportedCorrupt = new Set<number>();
  private bytesSinceLastIndexEntry = 0;
  private maxTimestampAndOffset: TimestampOffset | undefined;
  private rollingBasedTimestamp: bigint | undefined;
  private created: number;
  private readonly header = Buffer.alloc(RECORD_BATCH_OVERHEAD);
  /** Positional reads done (tests check the read path does O(1) I/O). */
  reads = 0;

  constructor(
    private _logFile: string,
    readonly offsetIndex: OffsetIndex,
    readonly timeIndex: TimeIndex,
    readonly txnIndex: TransactionIndex,
    readonly baseOffset: bigint,
    readonly indexIntervalBytes: number,
    readonly rollJitterMs: number,
    private readonly time: Time,
    options: { preallocateTo?: number } = {},
  ) {
    const exists = existsSync(_logFile);
    this.fd = openSync(_logFile, exists ? "r+" : "w+");
    this._size = exists ? fstatSync(this.fd).size : 0;
    this.appendStart = this._size;
    if (!exists && options.preallocateTo !== undefined && options.preallocateTo > 0) {
      ftruncateSync(this.fd, options.preallocateTo);
    }
    this.created = time.milliseconds();
  }

  static open(
    dir: string,
    baseOffset: bigint,
    config: LogConfig,
    time: Time,
    options: LogSegmentOpenOptions = {},
  ): LogSegment {
    const suffix = options.fileSuffix ?? "";
    const logPath = logFile(dir, baseOffset, suffix);
    if (!options.fileAlreadyExists) {
      // A new segment starts from nothing, whatever an earlier run left under the same name.
      for (const f of [
        logPath,
        offsetIndexFile(dir, baseOffset, suffix),
        timeIndexFile(dir, baseOffset, suffix),
        transactionIndexFile(dir, baseOffset, suffix),
      ]) {
        rmSync(f, { force: true });
      }
    }
    return new LogSegment(
      logPath,
      new OffsetIndex(offsetIndexFile(dir, baseOffset, suffix), baseOffset, config.segmentIndexBytes),
      new TimeIndex(timeIndexFile(dir, baseOffset, suffix), baseOffset, config.segmentIndexBytes),
      new TransactionIndex(baseOffset, transactionIndexFile(dir, baseOffset, suffix)),
      baseOffset,
      config.indexIntervalBytes,
      options.rollJitterMs ?? 0,
      time,
      { preallocateTo: options.preallocate ? (options.initFileSize ?? config.segmentBytes) : undefined },
    );
  }

  get logFile(): string {
    return this._logFile;
  }

  /** Bytes of the .log file holding batches. */
  get size(): number {
    return this._size;
  }

  private get logFd(): number {
    if (this.fd === null) throw new Error(`segment ${this._logFile} is closed`);
    return this.fd;
  }

  /** Whether `offset` fits this segment's relative offsets (Kafka's canConvertToRelativeOffset). */
  canConvertToRelativeOffset(offset: bigint): boolean {
    const rel = offset - this.baseOffset;
    return rel >= 0n && rel <= BigInt(INT32_MAX);
  }

  /** Max timestamp so far and the offset carrying it (loaded from the time index on first use). */
  private get maxTimestampSoFar(): TimestampOffset {
    if (this.maxTimestampAndOffset === undefined) this.maxTimestampAndOffset = this.timeIndex.lastEntry();
    return this.maxTimestampAndOffset;
  }

  /**
   * Appends `records` (whole batches, offsets already assigned) at the end of the .log file as they are.
   * largestOffset is the last offset in them, largestTimestamp their max timestamp and
   * shallowOffsetOfMaxTimestamp the offset to index that timestamp at (Kafka's LogSegment.append).
   */
  append(
    largestOffset: bigint,
    largestTimestamp: bigint,
    shallowOffsetOfMaxTimestamp: bigint,
    records: Buffer,
  ): void {
    if (records.length === 0) return;
    const physicalPosition = this._size;
    if (!this.canConvertToRelativeOffset(largestOffset)) {
      throw new RangeError(
        `largest offset ${largestOffset} is out of range for the segment with base offset ${this.baseOffset}`,
      );
    }
    if (records.length > INT32_MAX - physicalPosition) {
      throw new RangeError(`appending ${records.length} bytes would overflow segment ${this._logFile}`);
    }
    const before = {
      bytesSinceLastIndexEntry: this.bytesSinceLastIndexEntry,
      maxTimestampAndOffset: this.maxTimestampAndOffset,
      rollingBasedTimestamp: this.rollingBasedTimestamp,
    };
    if (physicalPosition === 0) this.rollingBasedTimestamp = largestTimestamp;
    try {
      this.writeFully(records, physicalPosition);
      this._size += records.length;
      this.indexAppended(records, physicalPosition);
    } catch (e) {
      this.undoAppend(physicalPosition, records.readBigInt64BE(0), before, e as Error);
      throw e;
    }
    if (largestTimestamp > this.maxTimestampSoFar.timestamp) {
      this.maxTimestampAndOffset = { timestamp: largestTimestamp, offset: shallowOffsetOfMaxTimestamp };
    }
  }

  /**
   * Takes back a failed append: the .log file back to `size`, the index entries from `firstOffset` on
   * dropped, the in-memory bookkeeping restored. Throws an EIO error (with the first cause) if it can't.
   */
  private undoAppend(
    size: number,
    firstOffset: bigint,
    before: {
      bytesSinceLastIndexEntry: number;
      maxTimestampAndOffset: TimestampOffset | undefined;
      rollingBasedTimestamp: bigint | undefined;
    },
    cause: Error,
  ): void {
    try {
      if (fstatSync(this.logFd).size > size) ftruncateSync(this.logFd, size);
      this._size = size;
      this.offsetIndex.truncateTo(firstOffset);
      this.timeIndex.truncateTo(firstOffset);
    } catch (e) {
      const err = new Error(
        `could not undo a failed append to ${this._logFile} (${cause.message}): ${(e as Error).message}`,
      ) as NodeJS.ErrnoException;
      err.code = "EIO";
      throw err;
    }
    this.bytesSinceLastIndexEntry = before.bytesSinceLastIndexEntry;
    this.maxTimestampAndOffset = before.maxTimestampAndOffset;
    this.rollingBasedTimestamp = before.rollingBasedTimestamp;
  }

  /** The index entries for batches just written at `physicalPosition` (Kafka's LogSegment.append). */
  private indexAppended(records: Buffer, physicalPosition: number): void {
    // Index per batch, as Kafka's LogSegment.append does (3.6+): an entry names a batch's last offset and
    // that batch's position. Only the headers are read (the caller validated the batches).
    let pos = 0;
    while (pos + RECORD_BATCH_OVERHEAD <= records.length) {
      const size = LOG_OVERHEAD + records.readInt32BE(pos + BATCH_LENGTH_OFFSET);
      const batchLastOffset =
        records.readBigInt64BE(pos) + BigInt(records.readInt32BE(pos + LAST_OFFSET_DELTA_OFFSET));
      const batchMaxTimestamp = records.readBigInt64BE(pos + MAX_TIMESTAMP_OFFSET);
      if (batchMaxTimestamp > this.maxTimestampSoFar.timestamp) {
        this.maxTimestampAndOffset = { timestamp: batchMaxTimestamp, offset: batchLastOffset };
      }
      if (this.bytesSinceLastIndexEntry > this.indexIntervalBytes) {
        this.offsetIndex.append(batchLastOffset, physicalPosition + pos);
        this.timeIndex.maybeAppend(this.maxTimestampSoFar.timestamp, this.maxTimestampSoFar.offset);
        this.bytesSinceLastIndexEntry = 0;
      }
      this.bytesSinceLastIndexEntry += size;
      pos += size;
    }
  }

  private writeFully(buf: Buffer, position: number): void {
    let done = 0;
    while (done < buf.length) {
      done += writeSync(this.logFd, buf, done, buf.length - done, position + done);
    }
  }

  private readFully(buf: Buffer, position: number, length = buf.length): number {
    this.reads++;
    let done = 0;
    while (done < length) {
      const n = readSync(this.logFd, buf, done, length - done, position + done);
      if (n === 0) break;
      done += n;
    }
    return done;
  }

  /**
   * Reads the header of the batch at `position`, or undefined when no well-formed v2 header is there
   * (end of file, partial header, bad magic or length, or a batch running past the end).
   */
  readBatchHeader(position: number, end = this._size): BatchHeaderInfo | undefined {
    if (position + LOG_OVERHEAD > end) return undefined;
    const want = Math.min(RECORD_BATCH_OVERHEAD, end - position);
    const got = this.readFully(this.header, position, want);
    if (got < RECORD_BATCH_OVERHEAD) return undefined;
    const h = this.header;
    const batchLength = h.readInt32BE(BATCH_LENGTH_OFFSET);
    if (h.readInt8(MAGIC_OFFSET) !== RECORD_BATCH_MAGIC || batchLength < MIN_BATCH_LENGTH) return undefined;
    const size = LOG_OVERHEAD + batchLength;
    if (position + size > end) return undefined;
    const baseOffset = h.readBigInt64BE(0);
    return {
      position,
      size,
      baseOffset,
      lastOffset: baseOffset + BigInt(h.readInt32BE(LAST_OFFSET_DELTA_OFFSET)),
      maxTimestamp: h.readBigInt64BE(MAX_TIMESTAMP_OFFSET),
      partitionLeaderEpoch: h.readInt32BE(PARTITION_LEADER_EPOCH_OFFSET),
    };
  }

  /** The whole v2 header (producer id, epoch, sequence, attributes) of the batch at `position`. */
  readFullBatchHeader(position: number, end = this._size): RecordBatchHeader | undefined {
    if (this.readBatchHeader(position, end) === undefined) return undefined;
    return readRecordBatchHeader(this.header, 0);
  }

  /**
   * The first batch at or after `startingFilePosition` whose last offset is >= offset, found from the
   * offset index then a scan of batch headers (Kafka's translateOffset). Undefined past the segment end.
   */
  translateOffset(offset: bigint, startingFilePosition = 0): LogOffsetPosition | undefined {
    const mapping = this.offsetIndex.lookup(offset);
    let position = Math.max(mapping.position, startingFilePosition);
    for (;;) {
      const h = this.readBatchHeader(position);
      if (h === undefined) return undefined;
      if (h.lastOffset >= offset) {
        return { offset: h.lastOffset, baseOffset: h.baseOffset, position: h.position, size: h.size };
      }
      position += h.size;
    }
  }

  /**
   * Whole batches from the one containing startOffset, up to maxSize bytes (at least the first batch with
   * minOneMessage), not past maxPosition, and only batches whose last offset is < maxOffset when given.
   * One positional read, into memory from `allocate` when given. Undefined when startOffset is past the end
   * of the segment.
   */
  read(
    startOffset: bigint,
    maxSize: number,
    maxPosition: number = this._size,
    minOneMessage = false,
    maxOffset?: bigint,
    allocate?: (size: number) => Buffer,
  ): SegmentReadResult | undefined {
    if (maxSize < 0)
      throw new RangeError(`invalid max size ${maxSize} for log read from segment ${this._logFile}`);
    const start = this.translateOffset(startOffset);
    if (start === undefined) return undefined;
    const meta = { fetchOffset: startOffset, segmentBaseOffset: this.baseOffset, position: start.position };
    const limit = Math.min(maxPosition, this._size);
    if (maxOffset !== undefined && start.offset >= maxOffset) {
      return { records: Buffer.alloc(0), firstEntryIncomplete: false, ...meta };
    }
    const adjustedMaxSize = minOneMessage ? Math.max(maxSize, start.size) : maxSize;
    if (start.position + start.size > limit || adjustedMaxSize < start.size) {
      return { records: Buffer.alloc(0), firstEntryIncomplete: adjustedMaxSize < start.size, ...meta };
    }
    const fetchSize = Math.min(limit - start.position, adjustedMaxSize);
    const buf = allocate ? allocate(fetchSize) : Buffer.allocUnsafe(fetchSize);
    const got = this.readFully(buf, start.position, fetchSize);
    // Keep whole batches only (headers read from the buffer in memory: no per-record work).
    let end = 0;
    while (end + LOG_OVERHEAD <= got) {
      const size = LOG_OVERHEAD + buf.readInt32BE(end + BATCH_LENGTH_OFFSET);
      if (size < RECORD_BATCH_OVERHEAD || end + size > got) break;
      if (maxOffset !== undefined) {
        if (end + RECORD_BATCH_OVERHEAD > got) break;
        const last = buf.readBigInt64BE(end) + BigInt(buf.readInt32BE(end + LAST_OFFSET_DELTA_OFFSET));
        if (last >= maxOffset) break;
      }
      const position = start.position + end;
      if (position >= this.verifiedEnd && position < this.appendStart) {
        if (!isRecordBatchCrcValid(buf, end)) {
          // The valid batches before it are served; a read that starts at it fails.
          if (end > 0) break;
          this.corruptBatch(buf, end, position);
        }
        if (position === this.verifiedEnd) this.verifiedEnd = position + size;
      }
      end += size;
    }
    return { records: buf.subarray(0, end), firstEntryIncomplete: false, ...meta };
  }

  /** A batch read for the first time fails its CRC: CORRUPT_MESSAGE for the read, one ERROR line. */
  private corruptBatch(buf: Buffer, at: number, position: number): never {
    const base = buf.readBigInt64BE(at);
    const last = base + BigInt(buf.readInt32BE(at + LAST_OFFSET_DELTA_OFFSET));
    const message = `Record batch ${base}..${last} at position ${position} of ${this._logFile} is corrupt (CRC mismatch); it is not served`;
    if (!this.reportedCorrupt.has(position)) {
      this.reportedCorrupt.add(position);
      segmentLogger.error(message);
    }
    throw new KafkaError("CORRUPT_MESSAGE", message);
  }

  /** The offset after the last batch (Kafka's readNextOffset), by scanning from the last index entry. */
  readNextOffset(): bigint {
    let position = this.offsetIndex.lastEntry().position;
    let next = this.baseOffset;
    for (;;) {
      const h = this.readBatchHeader(position);
      if (h === undefined) return next;
      next = h.lastOffset + 1n;
      position += h.size;
    }
  }

  /**
   * Re-reads every batch (length, magic, CRC32C, offsets increasing and in range), rebuilds the three
   * indexes, and truncates the .log file at the first invalid byte (Kafka's LogSegment.recover). Reads in
   * chunks bounded by the file size; a declared size is never trusted for an allocation. `beforeTruncate`
   * runs before the cut with its position, the last valid offset and the reason.
   */
  recover(
    maxBatchSize = INT32_MAX,
    beforeTruncate?: (validBytes: number, lastValidOffset: bigint, reason: string) => void,
  ): RecoveryResult {
    this.offsetIndex.reset();
    this.timeIndex.reset();
    this.txnIndex.reset();
    const fileSize = fstatSync(this.logFd).size;
    let validBytes = 0;
    let lastIndexEntry = 0;
    let prevLastOffset = this.baseOffset - 1n;
    let maxTs: TimestampOffset = { timestamp: -1n, offset: this.baseOffset };
    let reason: string | undefined;
    const epochs: Array<{ epoch: number; startOffset: bigint }> = [];
    let chunk = Buffer.alloc(0);
    let chunkStart = 0;
    const CHUNK = 1 << 20;
    this.rollingBasedTimestamp = undefined;
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
        this.readFully(chunk, chunkStart);
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
        this.readFully(chunk, chunkStart);
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
        !this.canConvertToRelativeOffset(lastOffset)
      ) {
        reason = `offsets ${baseOffset}..${lastOffset} at position ${validBytes} not after ${prevLastOffset}`;
        break;
      }
      const maxTimestamp = chunk.readBigInt64BE(p + MAX_TIMESTAMP_OFFSET);
      if (validBytes === 0) this.rollingBasedTimestamp = maxTimestamp;
      if (maxTimestamp > maxTs.timestamp) maxTs = { timestamp: maxTimestamp, offset: lastOffset };
      // A full index (segment.index.bytes lowered since the segment was written) just stays sparser at
      // the tail: lookups stay correct, the header scan from the last entry gets longer.
      if (validBytes - lastIndexEntry > this.indexIntervalBytes && !this.offsetIndex.isFull()) {
        this.offsetIndex.append(lastOffset, validBytes);
        if (!this.timeIndex.isFull()) this.timeIndex.maybeAppend(maxTs.timestamp, maxTs.offset);
        lastIndexEntry = validBytes;
      }
      epochs.push({ epoch: chunk.readInt32BE(p + PARTITION_LEADER_EPOCH_OFFSET), startOffset: baseOffset });
      prevLastOffset = lastOffset;
      validBytes += size;
    }
    const bytesTruncated = fileSize - validBytes;
    // The caller may keep the bytes about to be cut (the LogLoader's quarantine) before they go.
    if (bytesTruncated > 0) beforeTruncate?.(validBytes, prevLastOffset, reason ?? "invalid data");
    if (bytesTruncated > 0) ftruncateSync(this.logFd, validBytes);
    this._size = validBytes;
    // Every batch kept was checked.
    this.verifiedEnd = validBytes;
    this.appendStart = validBytes;
    this.maxTimestampAndOffset = maxTs;
    this.offsetIndex.trimToValidSize();
    this.timeIndex.maybeAppend(maxTs.timestamp, maxTs.offset, true);
    this.timeIndex.trimToValidSize();
    this.bytesSinceLastIndexEntry = validBytes - lastIndexEntry;
    // The .txnindex is rebuilt by the LogLoader, which has the producer state (replaySegmentRebuildingTxnIndex).
    return { bytesTruncated, reason: bytesTruncated > 0 ? reason : undefined, epochs };
  }

  /**
   * Structural checks of the indexes against this segment (Kafka's sanityCheck, plus spot checks that
   * index entries point at batch boundaries inside the file). Throws CorruptIndexError or Error.
   */
  sanityCheck(): void {
    this.offsetIndex.sanityCheck();
    this.timeIndex.sanityCheck();
    this.txnIndex.sanityCheck();
    const n = this.offsetIndex.entries;
    // Spot-check up to 16 entries spread over the index (first and last included): each must point at a
    // batch header inside the file whose base offset is <= the entry's offset, after the previous one.
    const samples = new Set<number>();
    for (let k = 0; k < Math.min(n, 16); k++)
      samples.add(Math.floor((k * (n - 1)) / Math.max(1, Math.min(n, 16) - 1)));
    for (const i of samples) {
      const e = this.offsetIndex.entry(i);
      const h = this.readBatchHeader(e.position);
      if (h === undefined || h.baseOffset > e.offset || h.baseOffset < this.baseOffset) {
        throw new Error(
          `offset index entry ${i} (offset ${e.offset}, position ${e.position}) of ${this.offsetIndex.file} does not point at a batch holding it`,
        );
      }
    }
    if (this.timeIndex.entries > 0 && this._size === 0) {
      throw new Error(`time index ${this.timeIndex.file} has entries for an empty segment`);
    }
    if (n > 0 && this.offsetIndex.lastEntry().position >= this._size) {
      throw new Error(`offset index ${this.offsetIndex.file} points past the end of the log`);
    }
  }

  /**
   * Removes everything from the batch holding `offset` on (Kafka's truncateTo); returns bytes removed.
   * The indexes are resized to full capacity (the segment becomes the active one).
   */
  truncateTo(offset: bigint): number {
    const mapping = this.translateOffset(offset);
    this.offsetIndex.truncateTo(offset);
    this.timeIndex.truncateTo(offset);
    this.txnIndex.truncateTo(offset);
    this.offsetIndex.resize(this.offsetIndex.maxIndexSize);
    this.timeIndex.resize(this.timeIndex.maxIndexSize);
    let bytesTruncated = 0;
    if (mapping !== undefined) {
      bytesTruncated = this._size - mapping.position;
      ftruncateSync(this.logFd, mapping.position);
      this._size = mapping.position;
      this.verifiedEnd = Math.min(this.verifiedEnd, this._size);
      this.appendStart = Math.min(this.appendStart, this._size);
    }
    if (this._size === 0) {
      this.created = this.time.milliseconds();
      this.rollingBasedTimestamp = undefined;
    }
    this.bytesSinceLastIndexEntry = 0;
    this.maxTimestampAndOffset = this.timeIndex.lastEntry();
    return bytesTruncated;
  }

  /** Largest record timestamp (max timestamp so far), or the file's last modified time without one. */
  get largestTimestamp(): number {
    const ts = this.maxTimestampSoFar.timestamp;
    return ts >= 0n ? Number(ts) : this.lastModified;
  }

  /** Max timestamp of the segment's batches as known so far (-1 when none). */
  get maxTimestamp(): bigint {
    return this.maxTimestampSoFar.timestamp;
  }

  get offsetOfMaxTimestamp(): bigint {
    return this.maxTimestampSoFar.offset;
  }

  get lastModified(): number {
    return statSync(this._logFile).mtimeMs;
  }

  setLastModified(ms: number): void {
    const t = ms / 1000;
    utimesSync(this._logFile, t, t);
  }

  /**
   * The first message with a timestamp >= `timestamp` at an offset >= startingOffset (Kafka's
   * findOffsetByTimestamp): time index, then offset index, then batch headers; only the one batch that
   * holds the answer is decoded.
   */
  findOffsetByTimestamp(
    timestamp: bigint,
    startingOffset: bigint = this.baseOffset,
  ): { timestamp: bigint; offset: bigint } | undefined {
    const ts = this.timeIndex.lookup(timestamp);
    const start = ts.offset > startingOffset ? ts.offset : startingOffset;
    let position = this.offsetIndex.lookup(start).position;
    for (;;) {
      const h = this.readBatchHeader(position);
      if (h === undefined) return undefined;
      if (h.maxTimestamp >= timestamp && h.lastOffset >= startingOffset) {
        const bytes = Buffer.allocUnsafe(h.size);
        this.readFully(bytes, position);
        for (const r of decodeBatchRecords(bytes)) {
          if (r.timestamp >= timestamp && r.offset >= startingOffset) {
            return { timestamp: r.timestamp, offset: r.offset };
          }
        }
      }
      position += h.size;
    }
  }

  /** Loads the first batch's max timestamp (segment.ms rolls are based on it). */
  private loadFirstBatchTimestamp(): void {
    if (this.rollingBasedTimestamp === undefined && this._size > 0) {
      const h = this.readBatchHeader(0);
      if (h) this.rollingBasedTimestamp = h.maxTimestamp;
    }
  }

  /** How long this segment has been open for roll purposes (Kafka's timeWaitedForRoll). */
  timeWaitedForRoll(now: number, messageTimestamp: bigint): number {
    this.loadFirstBatchTimestamp();
    const ts = this.rollingBasedTimestamp ?? -1n;
    if (ts >= 0n) return Number(messageTimestamp - ts);
    return now - this.created;
  }

  /** Kafka's shouldRoll: size, time (by the first batch's timestamp), full indexes, offset overflow. */
  shouldRoll(p: RollParams): boolean {
    const reachedRollMs =
      this.timeWaitedForRoll(p.now, p.maxTimestampInMessages) > p.maxSegmentMs - this.rollJitterMs;
    return (
      this._size > p.maxSegmentBytes - p.messagesSize ||
      (this._size > 0 && reachedRollMs) ||
      this.offsetIndex.isFull() ||
      this.timeIndex.isFull() ||
      !this.canConvertToRelativeOffset(p.maxOffsetInMessages)
    );
  }

  /** On roll: the final time index entry, then trim the indexes (and a preallocated .log) to size. */
  onBecomeInactiveSegment(): void {
    const m = this.maxTimestampSoFar;
    this.timeIndex.maybeAppend(m.timestamp, m.offset, true);
    this.offsetIndex.trimToValidSize();
    this.timeIndex.trimToValidSize();
    // No more writes: give the index file descriptors back (a truncation would reopen them).
    this.offsetIndex.closeHandler();
    this.timeIndex.closeHandler();
    if (this.fd !== null && fstatSync(this.fd).size !== this._size) ftruncateSync(this.fd, this._size);
  }

  /**
   * Drops the in-memory index entries and closes the index files (an inactive segment after loading);
   * they are read back on the next lookup.
   */
  releaseIndexes(): void {
    this.offsetIndex.release();
    this.timeIndex.release();
  }

  /** Sets the index capacity (the loader calls it for the active segment). */
  resizeIndexes(size: number): void {
    this.offsetIndex.resize(size);
    this.timeIndex.resize(size);
  }

  flush(): void {
    if (this.fd !== null) fdatasyncSync(this.fd);
    this.offsetIndex.flush();
    this.timeIndex.flush();
    this.txnIndex.flush();
  }

  /**
   * flush() off the event loop, for a segment that takes no more appends (rolled): the index entries
   * still only in memory are written now, then the four files are fdatasync'ed on libuv's thread pool
   * through descriptors of their own (a sync flushes a file's dirty pages whichever descriptor asks, and
   * the segment's may be closed meanwhile). A file gone meanwhile (the segment deleted or replaced) has
   * nothing left to make durable.
   */
  async flushInBackground(): Promise<void> {
    this.offsetIndex.writeBehind();
    this.timeIndex.writeBehind();
    await Promise.all(
      [this._logFile, this.offsetIndex.file, this.timeIndex.file, this.txnIndex.file].map(datasyncFile),
    );
  }

  /** Closes the files after the final time index entry and trimming (Kafka's LogSegment.close). */
  close(): void {
    if (this.fd === null) return;
    // The max timestamp's entry (Kafka appends it on close too); untouched segments already have it.
    const m = this.maxTimestampAndOffset;
    if (m !== undefined && m.timestamp >= 0n) this.timeIndex.maybeAppend(m.timestamp, m.offset, true);
    this.offsetIndex.close();
    this.timeIndex.close();
    this.txnIndex.close();
    if (fstatSync(this.fd).size !== this._size) ftruncateSync(this.fd, this._size);
    closeSync(this.fd);
    this.fd = null;
  }

  /** Closes file handles without writing anything (the files are about to be deleted or renamed). */
  closeHandlers(): void {
    this.offsetIndex.closeHandler();
    this.timeIndex.closeHandler();
    this.txnIndex.close();
    if (this.fd !== null) {
      closeSync(this.fd);
      this.fd = null;
    }
  }

  /** Renames every file of the segment from `oldSuffix` to `newSuffix` (e.g. "" → ".deleted"). */
  changeFileSuffixes(oldSuffix: string, newSuffix: string): void {
    const swap = (f: string): string => {
      if (!f.endsWith(oldSuffix)) throw new Error(`file ${f} does not end with ${oldSuffix}`);
      return f.slice(0, f.length - oldSuffix.length) + newSuffix;
    };
    const nextLog = swap(this._logFile);
    if (existsSync(this._logFile)) renameSync(this._logFile, nextLog);
    this._logFile = nextLog;
    this.offsetIndex.renameTo(swap(this.offsetIndex.file));
    this.timeIndex.renameTo(swap(this.timeIndex.file));
    this.txnIndex.renameTo(swap(this.txnIndex.file));
  }

  /** Whether the segment's files currently carry `suffix` (".cleaned", ".swap", ".deleted"). */
  hasSuffix(suffix: string): boolean {
    return this._logFile.endsWith(suffix);
  }

  /** Closes and removes every file of the segment. */
  deleteIfExists(): void {
    this.closeHandlers();
    rmSync(this._logFile, { force: true });
    this.offsetIndex.deleteIfExists();
    this.timeIndex.deleteIfExists();
    this.txnIndex.deleteIfExists();
  }

  /**
   * deleteIfExists() with the unlinks on libuv's thread pool (freeing a large file's pages takes the kernel
   * a while): for segments already renamed `.deleted`, removed after file.delete.delay.ms.
   */
  async deleteInBackground(): Promise<void> {
    this.closeHandlers();
    await Promise.all(
      [this._logFile, this.offsetIndex.file, this.timeIndex.file, this.txnIndex.file].map(unlinkIfExists),
    );
  }

  toString(): string {
    return `LogSegment(baseOffset=${this.baseOffset}, size=${this._size}, lastModifiedTime=${this.lastModified}, largestRecordTimestamp=${this.maxTimestampSoFar.timestamp})`;
  }
}

/** fdatasync of the file at `path` on the thread pool (callback API: no FileHandle); nothing when it is gone. */
function datasyncFile(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    fsOpen(path, "r", (openError, fd) => {
      if (openError) {
        if (openError.code === "ENOENT") resolve();
        else reject(openError);
        return;
      }
      fsFdatasync(fd, (syncError) => {
        fsClose(fd, (closeError) => {
          const e = syncError ?? closeError;
          if (e) reject(e);
          else resolve();
        });
      });
    });
  });
}

/** unlink of the file at `path` on the thread pool; nothing when it is gone already. */
async function unlinkIfExists(path: string): Promise<void> {
  await unlink(path).catch((e: NodeJS.ErrnoException) => {
    if (e.code !== "ENOENT") throw e;
  });
}
