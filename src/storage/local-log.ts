// LocalLog: the segments of one partition replica's log in `<log.dir>/<topic>-<partition>/`, as Kafka's
// LocalLog: the LogSegments, the log end offset and the recovery point. It owns appending to the active
// segment, roll, flush (at once, or off the event loop for the segments before a roll), truncation,
// segment deletion (renamed `.deleted`, removed after file.delete.delay.ms) and replacement (the cleaner's
// .cleaned/.swap protocol), and reads of whole batches from the segments with the aborted transactions a
// read_committed read returns. The log start offset, high watermark, producer state and leader-epoch cache
// are UnifiedLog's, which drives this class.
//
// Invariants:
// - recoveryPoint <= logEndOffset; everything below the recovery point has been fdatasync'ed. A background
//   flush that a truncation (or close) overtook moves no recovery point: the next flush covers it.
// - A deleted segment's files are renamed `.deleted` at once (a restart removes leftovers) and unlinked
//   after file.delete.delay.ms off the event loop, at once when the dir is full or there is no scheduler.
// - replaceSegments renames newest first and syncs the directory before it returns: a crash part-way is
//   completed or undone as a whole by the LogLoader.
// - Once closed, nothing but a read of its state succeeds (KAFKA_STORAGE_ERROR).

import { rmSync } from "node:fs";
import { basename } from "node:path";
import { fsyncDirectory } from "../common/atomic-file.js";
import type { Logger } from "../common/logger.js";
import type { Scheduler } from "../common/scheduler.js";
import type { Time } from "../common/time.js";
import { KafkaError } from "../protocol/errors.js";
import {
  BATCH_LENGTH_OFFSET,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  RECORD_BATCH_OVERHEAD,
} from "../protocol/records/index.js";
import type { LogConfig } from "./log-config.js";
import { CLEANED_FILE_SUFFIX, DELETED_FILE_SUFFIX, SWAP_FILE_SUFFIX } from "./log-file-names.js";
import { LogSegment } from "./log-segment.js";
import { LogSegments } from "./log-segments.js";
import type { AbortedTxn } from "./transaction-index.js";

/** What LocalLog.read found: whole batches from the segment holding the start offset on. */
export interface LocalLogReadResult {
  records: Buffer;
  firstEntryIncomplete: boolean;
  /** With includeAbortedTxns: the aborted transactions overlapping the batches returned. */
  abortedTransactions?: AbortedTxn[];
}

export interface LocalLogParams {
  dir: string;
  config: LogConfig;
  time: Time;
  /** Runs delayed file deletions and background flushes; without one deletions happen at once. */
  scheduler: Scheduler | undefined;
  logger: Logger;
  /** Whether the log dir is full: appends then fail at once, deletions do not wait. */
  dirFull: () => boolean;
  /** The loaded segments, oldest first, and the offsets the LogLoader found. */
  segments: readonly LogSegment[];
  logEndOffset: bigint;
  recoveryPoint: bigint;
}

export class LocalLog {
  readonly dir: string;
  readonly name: string;
  readonly segments: LogSegments;
  private _config: LogConfig;
  private _logEndOffset: bigint;
  private _recoveryPoint: bigint;
  private lastFlushedTime: number;
  private closed = false;
  /** Truncations so far: a background flush that saw another count moves no recovery point. */
  private truncations = 0;
  private pendingFlushes = 0;
  private readonly time: Time;
  private readonly scheduler: Scheduler | undefined;
  private readonly logger: Logger;
  private readonly dirFull: () => boolean;

  constructor(p: LocalLogParams) {
    this.dir = p.dir;
    this.name = basename(p.dir);
    this._config = p.config;
    this.time = p.time;
    this.scheduler = p.scheduler;
    this.logger = p.logger;
    this.dirFull = p.dirFull;
    this.segments = new LogSegments(p.segments);
    this._logEndOffset = p.logEndOffset;
    this._recoveryPoint = p.recoveryPoint;
    this.lastFlushedTime = p.time.milliseconds();
  }

  get config(): LogConfig {
    return this._config;
  }

  updateConfig(config: LogConfig): void {
    this._config = config;
  }

  get logEndOffset(): bigint {
    return this._logEndOffset;
  }

  get recoveryPoint(): bigint {
    return this._recoveryPoint;
  }

  /** Moves the recovery point (the log start offset passed it: nothing below is recovered again). */
  updateRecoveryPoint(offset: bigint): void {
    this._recoveryPoint = offset;
  }

  /** Messages appended since the last flush. */
  get unflushedMessages(): bigint {
    return this._logEndOffset - this._recoveryPoint;
  }

  /** Background flushes (after a roll) not yet finished. */
  get flushesInProgress(): number {
    return this.pendingFlushes;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  checkOpen(): void {
    if (this.closed) throw new KafkaError("KAFKA_STORAGE_ERROR", `the log for ${this.name} is closed`);
  }

  /** An append to a full log dir fails at once (ENOSPC, as the write would), nothing written. */
  checkWritable(): void {
    if (!this.dirFull()) return;
    const e = new Error(
      `the log dir of ${this.name} is full (no space left on device)`,
    ) as NodeJS.ErrnoException;
    e.code = "ENOSPC";
    throw e;
  }

  /** Appends whole batches (offsets assigned) to the active segment and moves the log end offset past them. */
  append(
    records: Buffer,
    lastOffset: bigint,
    maxTimestamp: bigint,
    shallowOffsetOfMaxTimestamp: bigint,
  ): void {
    this.segments.activeSegment.append(lastOffset, maxTimestamp, shallowOffsetOfMaxTimestamp, records);
    this._logEndOffset = lastOffset + 1n;
  }

  /**
   * Starts a new active segment at max(expectedNextOffset, logEndOffset): the old one gets its final time
   * index entry and its indexes trimmed (Kafka's roll). An empty active segment at that offset is kept and
   * returned as it is.
   */
  roll(expectedNextOffset?: bigint): LogSegment {
    this.checkOpen();
    const newOffset =
      expectedNextOffset !== undefined && expectedNextOffset > this._logEndOffset
        ? expectedNextOffset
        : this._logEndOffset;
    const active = this.segments.activeSegment;
    if (active.baseOffset === newOffset && active.size === 0) return active;
    if (active.baseOffset > newOffset) {
      throw new KafkaError(
        "KAFKA_STORAGE_ERROR",
        `trying to roll a new segment at ${newOffset} below the active segment ${active.baseOffset} of ${this.name}`,
      );
    }
    active.onBecomeInactiveSegment();
    const jitter = this._config.segmentJitterMs;
    const rollJitterMs =
      jitter > 0 ? Math.floor(Math.random() * Math.min(jitter, this._config.segmentMs)) : 0;
    const seg = LogSegment.open(this.dir, newOffset, this._config, this.time, {
      preallocate: this._config.preallocate,
      initFileSize: this._config.segmentBytes,
      rollJitterMs,
    });
    this.segments.add(seg);
    if (newOffset > this._logEndOffset) this._logEndOffset = newOffset;
    return seg;
  }

  /** The segments from the one holding the recovery point up to the one holding `target` (exclusive). */
  private unflushedSegments(target: bigint): LogSegment[] {
    let i = this.segments.floorIndex(this._recoveryPoint);
    if (i < 0) i = 0;
    const out: LogSegment[] = [];
    for (; i < this.segments.numberOfSegments && this.segments.at(i).baseOffset < target; i++)
      out.push(this.segments.at(i));
    return out;
  }

  /**
   * Flushes the segments holding [recoveryPoint, upTo) off the event loop, then moves the recovery point
   * to upTo unless the log was closed or truncated meanwhile (the next flush covers it then). A failed sync
   * leaves the recovery point where it was: a crash recovers those segments.
   */
  async flushInBackground(upTo: bigint): Promise<void> {
    if (this.closed) return;
    const target = upTo > this._logEndOffset ? this._logEndOffset : upTo;
    if (target <= this._recoveryPoint) return;
    const segments = this.unflushedSegments(target);
    const truncations = this.truncations;
    this.pendingFlushes++;
    try {
      await Promise.all(segments.map((seg) => seg.flushInBackground()));
    } catch (e) {
      this.logger.error(
        `Error flushing the segments of ${this.name} up to offset ${target}: ${(e as Error).message}`,
      );
      return;
    } finally {
      this.pendingFlushes--;
    }
    if (this.closed || this.truncations !== truncations || target <= this._recoveryPoint) return;
    this._recoveryPoint = target;
    this.lastFlushedTime = this.time.milliseconds();
  }

  /**
   * Flushes (fdatasync) the segments holding [recoveryPoint, upTo) and moves the recovery point to upTo
   * (default: the log end offset).
   */
  flush(upTo: bigint = this._logEndOffset): void {
    this.checkOpen();
    const target = upTo > this._logEndOffset ? this._logEndOffset : upTo;
    if (target <= this._recoveryPoint) return;
    for (const seg of this.unflushedSegments(target)) seg.flush();
    this._recoveryPoint = target;
    this.lastFlushedTime = this.time.milliseconds();
  }

  /** Flush policy: flush.messages and flush.ms (Kafka's log flusher); returns whether it flushed. */
  maybeFlush(): boolean {
    const due = this.flushDue;
    if (due) this.flush();
    return due;
  }

  /** Whether the flush policy (flush.messages, flush.ms) asks for a flush now. */
  get flushDue(): boolean {
    if (this.closed) return false;
    return (
      this.unflushedMessages >= this._config.flushMessages ||
      (this.unflushedMessages > 0n && this.time.milliseconds() - this.lastFlushedTime >= this._config.flushMs)
    );
  }

  /**
   * Removes everything at and after targetOffset, which must be below the log end offset and at or after
   * the first segment's base offset; the log end offset and recovery point follow.
   */
  truncateTo(targetOffset: bigint): void {
    this.truncations++;
    const drop = this.segments.retain((s) => s.baseOffset <= targetOffset);
    this.deleteSegmentFiles(drop, "truncation");
    const active = this.segments.activeSegment;
    active.truncateTo(targetOffset);
    const end = active.readNextOffset();
    this._logEndOffset = end < targetOffset ? end : targetOffset;
    if (this._logEndOffset < active.baseOffset) this._logEndOffset = active.baseOffset;
    if (this._recoveryPoint > this._logEndOffset) this._recoveryPoint = this._logEndOffset;
  }

  /** Deletes every segment and starts again with one empty segment at newOffset. */
  truncateFullyAndStartAt(newOffset: bigint): void {
    this.truncations++;
    this.deleteSegmentFiles(this.segments.clear(), "truncate fully");
    this.segments.add(
      LogSegment.open(this.dir, newOffset, this._config, this.time, {
        preallocate: this._config.preallocate,
        initFileSize: this._config.segmentBytes,
      }),
    );
    this._logEndOffset = newOffset;
    this._recoveryPoint = newOffset;
  }

  /** Takes `segments` (not the active one) out of the list and deletes their files (deleteSegmentFiles). */
  removeAndDeleteSegments(segments: readonly LogSegment[], reason: string): void {
    const doomed = new Set(segments);
    this.segments.retain((s) => !doomed.has(s));
    this.deleteSegmentFiles(segments, reason);
  }

  /** Renames to .deleted now; removes later (scheduler) or now. The segments are no longer in the list. */
  private deleteSegmentFiles(segments: readonly LogSegment[], reason: string): void {
    if (segments.length === 0) return;
    for (const s of segments) {
      s.closeHandlers();
      s.changeFileSuffixes("", DELETED_FILE_SUFFIX);
    }
    const names = segments.map((s) => s.baseOffset).join(",");
    this.logger.info(`Deleting segments due to ${reason}: [${names}]`);
    if (this.scheduler && this._config.fileDeleteDelayMs > 0 && !this.dirFull()) {
      // Later and off the event loop (Kafka's delete-file task on its scheduler thread).
      const remove = async (): Promise<void> => {
        try {
          await Promise.all(segments.map((s) => s.deleteInBackground()));
        } catch (e) {
          this.logger.warn(
            `Could not remove deleted segments [${names}] (removed at the next start): ${(e as Error).message}`,
          );
        }
      };
      this.scheduler.schedule("delete-file", remove, this._config.fileDeleteDelayMs);
    } else {
      for (const s of segments) s.deleteIfExists();
    }
  }

  /**
   * Swaps cleaner output in for old segments (Kafka's replaceSegments): newSegments (named `.cleaned`, or
   * already `.swap`) are renamed `.swap`, the old segments leave the list and are renamed `.deleted`, then
   * the new ones drop `.swap`. A crash at any point is completed or undone by the LogLoader.
   */
  replaceSegments(newSegments: readonly LogSegment[], oldSegments: readonly LogSegment[]): void {
    this.checkOpen();
    const byOffset = (a: LogSegment, b: LogSegment): number =>
      a.baseOffset < b.baseOffset ? -1 : a.baseOffset > b.baseOffset ? 1 : 0;
    const sortedNew = [...newSegments].sort(byOffset);
    const sortedOld = [...oldSegments].sort(byOffset).filter((s) => this.segments.contains(s));
    // Newest first, as Kafka: a crash part-way leaves the older ones `.cleaned`, and the loader drops every
    // `.swap` at or after the oldest `.cleaned`, so the swap is undone as a whole.
    for (const s of [...sortedNew].reverse()) {
      if (s.hasSuffix(CLEANED_FILE_SUFFIX)) s.changeFileSuffixes(CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX);
      else if (!s.hasSuffix(SWAP_FILE_SUFFIX))
        throw new Error(`replacement segment ${s.logFile} is neither .cleaned nor .swap`);
    }
    this.deleteSegmentFiles(sortedOld, "the cleaner replacing them");
    for (const s of sortedNew) s.changeFileSuffixes(SWAP_FILE_SUFFIX, "");
    // The renames are durable before the cleaner checkpoint moves past them (Kafka's flushDir).
    fsyncDirectory(this.dir);
    const oldSet = new Set(sortedOld);
    this.segments.retain((s) => !oldSet.has(s));
    for (const s of sortedNew) this.segments.add(s);
  }

  /**
   * Whole batches from startOffset (which the caller checked is in the log), at most maxBytes (at least one
   * batch with minOneMessage), of offsets below maxOffset; `allocate` provides the memory. Undefined when
   * no segment holds anything at or after startOffset.
   */
  read(
    startOffset: bigint,
    maxBytes: number,
    maxOffset: bigint,
    minOneMessage: boolean,
    includeAbortedTxns: boolean,
    allocate?: (size: number) => Buffer,
  ): LocalLogReadResult | undefined {
    let i = this.segments.floorIndex(startOffset);
    if (i < 0) i = 0;
    for (; i < this.segments.numberOfSegments; i++) {
      const seg = this.segments.at(i);
      const r = seg.read(
        startOffset,
        maxBytes,
        seg.size,
        minOneMessage,
        maxOffset === this._logEndOffset ? undefined : maxOffset,
        allocate,
      );
      if (r !== undefined) {
        const out: LocalLogReadResult = {
          records: r.records,
          firstEntryIncomplete: r.firstEntryIncomplete,
        };
        if (includeAbortedTxns) {
          out.abortedTransactions =
            r.records.length === 0 ? [] : this.abortedTxnsOfRead(startOffset, i, r.records);
        }
        return out;
      }
      // Nothing at or after startOffset in this segment (a compacted gap): try the next one.
    }
    return undefined;
  }

  /** The aborted transactions overlapping the batches read from segment i on (Kafka's addAbortedTransactions). */
  private abortedTxnsOfRead(startOffset: bigint, i: number, records: Buffer): AbortedTxn[] {
    // The offset after the last whole batch returned: the upper bound of the read.
    let pos = 0;
    let upperBoundOffset = startOffset;
    while (pos + RECORD_BATCH_OVERHEAD <= records.length) {
      const size = LOG_OVERHEAD + records.readInt32BE(pos + BATCH_LENGTH_OFFSET);
      if (pos + size > records.length) break;
      upperBoundOffset =
        records.readBigInt64BE(pos) + BigInt(records.readInt32BE(pos + LAST_OFFSET_DELTA_OFFSET)) + 1n;
      pos += size;
    }
    return this.collectAbortedTransactions(startOffset, upperBoundOffset, i);
  }

  /**
   * The aborted transactions overlapping [startOffset, upperBoundOffset): the .txnindex of the segment
   * holding startOffset and of later ones, until an entry's last stable offset reaches the upper bound
   * (Kafka's collectAbortedTransactions).
   */
  collectAbortedTransactions(
    startOffset: bigint,
    upperBoundOffset: bigint,
    fromSegment = this.segments.floorIndex(startOffset),
  ): AbortedTxn[] {
    const out: AbortedTxn[] = [];
    for (let i = Math.max(0, fromSegment); i < this.segments.numberOfSegments; i++) {
      const r = this.segments.at(i).txnIndex.collectAbortedTxns(startOffset, upperBoundOffset);
      out.push(...r.abortedTransactions);
      if (r.isComplete) break;
    }
    return out;
  }

  /** The segment with the largest max timestamp (the oldest of equals); undefined when none has one. */
  segmentWithMaxTimestamp(): LogSegment | undefined {
    let best: LogSegment | undefined;
    for (const s of this.segments) if (best === undefined || s.maxTimestamp > best.maxTimestamp) best = s;
    return best !== undefined && best.maxTimestamp >= 0n ? best : undefined;
  }

  /**
   * The first message with a timestamp >= ts at an offset >= startingOffset, in the first segment whose max
   * timestamp reaches ts (Kafka: segment max timestamps are in memory), then by its indexes.
   */
  findOffsetByTimestamp(
    ts: bigint,
    startingOffset: bigint,
  ): { timestamp: bigint; offset: bigint } | undefined {
    for (const s of this.segments) {
      if (s.size === 0 || s.maxTimestamp < ts) continue;
      const found = s.findOffsetByTimestamp(ts, startingOffset);
      if (found) return found;
    }
    return undefined;
  }

  /** Closes every segment (the active one gets its final time index entry and trimmed indexes). */
  close(): void {
    for (const s of this.segments) s.close();
    this.closed = true;
  }

  /** Closes every file without writing anything (a log that could not be closed cleanly). */
  closeHandlers(): void {
    for (const s of this.segments) s.closeHandlers();
    this.closed = true;
  }

  /** Closes the files (if still open) and removes the log's directory. */
  delete(): void {
    if (!this.closed) this.closeHandlers();
    this.segments.clear();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
