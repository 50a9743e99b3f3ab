// LogSegment: one segment of a partition's log, as Kafka's LogSegment: the `.log` file (record batches,
// magic 2, stored exactly as appended: `baseOffset int64 | batchLength int32 | ...`, see
// protocol/records/record-batch.ts) plus its `.index`, `.timeindex` and `.txnindex`. The segment is named
// after its base offset; every batch in it has offsets in [baseOffset, baseOffset + Int32.MAX].
//
// The `.log` file is a FileRecords (file-records.ts); recover() and sanityCheck() apply the rules of
// log-segment-recovery.ts.
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

import { close as fsClose, fdatasync as fsFdatasync, open as fsOpen, rmSync } from "node:fs";
import { unlink } from "node:fs/promises";
import { Logger } from "../common/logger.js";
import type { Time } from "../common/time.js";
import { KafkaError } from "../protocol/errors.js";
import {
  BATCH_LENGTH_OFFSET,
  isRecordBatchCrcValid,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  MAX_TIMESTAMP_OFFSET,
  RECORD_BATCH_OVERHEAD,
  type RecordBatchHeader,
} from "../protocol/records/index.js";
import { type BatchHeaderInfo, FileRecords, type LogOffsetPosition } from "./file-records.js";
import type { LogConfig } from "./log-config.js";
import { logFile, offsetIndexFile, timeIndexFile, transactionIndexFile } from "./log-file-names.js";
import { sanityCheckSegment, scanForRecovery } from "./log-segment-recovery.js";
import { OffsetIndex } from "./offset-index.js";
import { TimeIndex, type TimestampOffset } from "./time-index.js";
import { TransactionIndex } from "./transaction-index.js";

const INT32_MAX = 2147483647;
const segmentLogger = new Logger("kafka.log.LogSegment");

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
  /** The partition directory was just created: nothing under the segment's names to remove first. */
  newDir?: boolean;
}

export class LogSegment {
  /** The `.log` file (Kafka's LogSegment.log). */
  readonly log: FileRecords;
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

  constructor(
    logPath: string,
    readonly offsetIndex: OffsetIndex,
    readonly timeIndex: TimeIndex,
    readonly txnIndex: TransactionIndex,
    readonly baseOffset: bigint,
    readonly indexIntervalBytes: number,
    readonly rollJitterMs: number,
    private readonly time: Time,
    options: { preallocateTo?: number } = {},
  ) {
    this.log = new FileRecords(logPath, options.preallocateTo);
    this.appendStart = this.log.size;
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
    if (!options.fileAlreadyExists && !options.newDir) {
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
    return this.log.file;
  }

  /** Bytes of the .log file holding batches. */
  get size(): number {
    return this.log.size;
  }

  /** Positional reads of the .log file done (tests check the read path does O(1) I/O). */
  get reads(): number {
    return this.log.reads;
  }

  set reads(n: number) {
    this.log.reads = n;
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
    const physicalPosition = this.log.size;
    if (!this.canConvertToRelativeOffset(largestOffset)) {
      throw new RangeError(
        `largest offset ${largestOffset} is out of range for the segment with base offset ${this.baseOffset}`,
      );
    }
    if (records.length > INT32_MAX - physicalPosition) {
      throw new RangeError(`appending ${records.length} bytes would overflow segment ${this.logFile}`);
    }
    const before = {
      bytesSinceLastIndexEntry: this.bytesSinceLastIndexEntry,
      maxTimestampAndOffset: this.maxTimestampAndOffset,
      rollingBasedTimestamp: this.rollingBasedTimestamp,
    };
    if (physicalPosition === 0) this.rollingBasedTimestamp = largestTimestamp;
    try {
      this.log.append(records);
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
      this.log.shrinkTo(size);
      this.offsetIndex.truncateTo(firstOffset);
      this.timeIndex.truncateTo(firstOffset);
    } catch (e) {
      const err = new Error(
        `could not undo a failed append to ${this.logFile} (${cause.message}): ${(e as Error).message}`,
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

  /**
   * Reads the header of the batch at `position`, or undefined when no well-formed v2 header is there
   * (FileRecords.readBatchHeader).
   */
  readBatchHeader(position: number, end = this.log.size): BatchHeaderInfo | undefined {
    return this.log.readBatchHeader(position, end);
  }

  /** The whole v2 header (producer id, epoch, sequence, attributes) of the batch at `position`. */
  readFullBatchHeader(position: number, end = this.log.size): RecordBatchHeader | undefined {
    return this.log.readFullBatchHeader(position, end);
  }

  /**
   * The first batch at or after `startingFilePosition` whose last offset is >= offset, found from the
   * offset index then a scan of batch headers (Kafka's translateOffset). Undefined past the segment end.
   */
  translateOffset(offset: bigint, startingFilePosition = 0): LogOffsetPosition | undefined {
    const mapping = this.offsetIndex.lookup(offset);
    return this.log.searchForOffsetWithSize(offset, Math.max(mapping.position, startingFilePosition));
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
    maxPosition: number = this.log.size,
    minOneMessage = false,
    maxOffset?: bigint,
    allocate?: (size: number) => Buffer,
  ): SegmentReadResult | undefined {
    if (maxSize < 0)
      throw new RangeError(`invalid max size ${maxSize} for log read from segment ${this.logFile}`);
    const start = this.translateOffset(startOffset);
    if (start === undefined) return undefined;
    const meta = { fetchOffset: startOffset, segmentBaseOffset: this.baseOffset, position: start.position };
    const limit = Math.min(maxPosition, this.log.size);
    if (maxOffset !== undefined && start.offset >= maxOffset) {
      return { records: Buffer.alloc(0), firstEntryIncomplete: false, ...meta };
    }
    const adjustedMaxSize = minOneMessage ? Math.max(maxSize, start.size) : maxSize;
    if (start.position + start.size > limit || adjustedMaxSize < start.size) {
      return { records: Buffer.alloc(0), firstEntryIncomplete: adjustedMaxSize < start.size, ...meta };
    }
    const fetchSize = Math.min(limit - start.position, adjustedMaxSize);
    const buf = allocate ? allocate(fetchSize) : Buffer.allocUnsafe(fetchSize);
    const got = this.log.read(buf, start.position, fetchSize);
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
    const message = `Record batch ${base}..${last} at position ${position} of ${this.logFile} is corrupt (CRC mismatch); it is not served`;
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
   * Re-reads every batch (length, magic, CRC32C, offsets increasing and in range: scanForRecovery),
   * rebuilds the three indexes, and truncates the .log file at the first invalid byte (Kafka's
   * LogSegment.recover). `beforeTruncate` runs before the cut with its position, the last valid offset and
   * the reason.
   */
  recover(
    maxBatchSize = INT32_MAX,
    beforeTruncate?: (validBytes: number, lastValidOffset: bigint, reason: string) => void,
  ): RecoveryResult {
    this.offsetIndex.reset();
    this.timeIndex.reset();
    this.txnIndex.reset();
    this.rollingBasedTimestamp = undefined;
    const scan = scanForRecovery(this, maxBatchSize);
    const { validBytes, reason } = scan;
    this.rollingBasedTimestamp = scan.firstBatchTimestamp;
    const bytesTruncated = scan.fileSize - validBytes;
    // The caller may keep the bytes about to be cut (the LogLoader's quarantine) before they go.
    if (bytesTruncated > 0) beforeTruncate?.(validBytes, scan.lastValidOffset, reason ?? "invalid data");
    this.log.shrinkTo(validBytes);
    // Every batch kept was checked.
    this.verifiedEnd = validBytes;
    this.appendStart = validBytes;
    const maxTs = scan.maxTimestampSoFar;
    this.maxTimestampAndOffset = maxTs;
    this.offsetIndex.trimToValidSize();
    this.timeIndex.maybeAppend(maxTs.timestamp, maxTs.offset, true);
    this.timeIndex.trimToValidSize();
    this.bytesSinceLastIndexEntry = validBytes - scan.lastIndexEntry;
    // The .txnindex is rebuilt by the LogLoader, which has the producer state (replaySegmentRebuildingTxnIndex).
    return { bytesTruncated, reason: bytesTruncated > 0 ? reason : undefined, epochs: scan.epochs };
  }

  /**
   * Structural checks of the indexes against this segment (Kafka's sanityCheck: sanityCheckSegment).
   * Throws CorruptIndexError or Error.
   */
  sanityCheck(): void {
    sanityCheckSegment(this);
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
      bytesTruncated = this.log.size - mapping.position;
      this.log.truncateTo(mapping.position);
      this.verifiedEnd = Math.min(this.verifiedEnd, this.log.size);
      this.appendStart = Math.min(this.appendStart, this.log.size);
    }
    if (this.log.size === 0) {
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
    return this.log.lastModified;
  }

  setLastModified(ms: number): void {
    this.log.setLastModified(ms);
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
    const position = this.offsetIndex.lookup(start).position;
    return this.log.searchForTimestamp(timestamp, position, startingOffset);
  }

  /** Loads the first batch's max timestamp (segment.ms rolls are based on it). */
  private loadFirstBatchTimestamp(): void {
    if (this.rollingBasedTimestamp === undefined && this.log.size > 0) {
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
      this.log.size > p.maxSegmentBytes - p.messagesSize ||
      (this.log.size > 0 && reachedRollMs) ||
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
    this.log.trim();
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
    this.log.flush();
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
      [this.logFile, this.offsetIndex.file, this.timeIndex.file, this.txnIndex.file].map(datasyncFile),
    );
  }

  /** Closes the files after the final time index entry and trimming (Kafka's LogSegment.close). */
  close(): void {
    if (!this.log.isOpen) return;
    // The max timestamp's entry (Kafka appends it on close too); untouched segments already have it.
    const m = this.maxTimestampAndOffset;
    if (m !== undefined && m.timestamp >= 0n) this.timeIndex.maybeAppend(m.timestamp, m.offset, true);
    this.offsetIndex.close();
    this.timeIndex.close();
    this.txnIndex.close();
    this.log.close();
  }

  /** Closes file handles without writing anything (the files are about to be deleted or renamed). */
  closeHandlers(): void {
    this.offsetIndex.closeHandler();
    this.timeIndex.closeHandler();
    this.txnIndex.close();
    this.log.closeHandlers();
  }

  /** Renames every file of the segment from `oldSuffix` to `newSuffix` (e.g. "" → ".deleted"). */
  changeFileSuffixes(oldSuffix: string, newSuffix: string): void {
    const swap = (f: string): string => {
      if (!f.endsWith(oldSuffix)) throw new Error(`file ${f} does not end with ${oldSuffix}`);
      return f.slice(0, f.length - oldSuffix.length) + newSuffix;
    };
    this.log.renameTo(swap(this.logFile));
    this.offsetIndex.renameTo(swap(this.offsetIndex.file));
    this.timeIndex.renameTo(swap(this.timeIndex.file));
    this.txnIndex.renameTo(swap(this.txnIndex.file));
  }

  /** Whether the segment's files currently carry `suffix` (".cleaned", ".swap", ".deleted"). */
  hasSuffix(suffix: string): boolean {
    return this.logFile.endsWith(suffix);
  }

  /** Closes and removes every file of the segment. */
  deleteIfExists(): void {
    this.closeHandlers();
    this.log.deleteIfExists();
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
      [this.logFile, this.offsetIndex.file, this.timeIndex.file, this.txnIndex.file].map(unlinkIfExists),
    );
  }

  toString(): string {
    return `LogSegment(baseOffset=${this.baseOffset}, size=${this.log.size}, lastModifiedTime=${this.lastModified}, largestRecordTimestamp=${this.maxTimestampSoFar.timestamp})`;
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
