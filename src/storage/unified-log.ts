// UnifiedLog: one partition replica's log, as Kafka's UnifiedLog (local part): the partition's log API over
// its LocalLog (the segments in `<log.dir>/<topic>-<partition>/`, roll, flush, truncation, segment deletion
// and replacement: local-log.ts), with the offsets that replication and transactions use (log start
// offset, high watermark, last stable offset), the producer state and the leader-epoch cache. It owns
// offset assignment (appendAsLeader), follower appends, reads by offset and by timestamp, and keeps the
// producer state and the epoch cache in step with every append, roll, truncation and segment deletion;
// retention decides which segments go (retention/retention-policy.ts), this class applies it.
//
// Invariants:
// - logStartOffset <= highWatermark <= logEndOffset, lastStableOffset <= highWatermark,
//   recoveryPoint <= logEndOffset (LocalLog).
// - Offsets assigned by the leader are contiguous: each batch's baseOffset is the previous lastOffset + 1.
// - The produce and fetch paths touch batch headers only (61 bytes each); no record is decoded. The cost of
//   a read is a binary search over segment base offsets, one index lookup and a short header scan.
// - Producer state (producer-state/): batches with a producer id are validated against it before they are
//   written (epoch, sequence; a retried batch is answered with its original offsets and not written again),
//   and it follows every append, roll (snapshot), truncation, segment deletion and close (snapshot).
// - Transactions: a transactional batch opens its producer's transaction, which holds the last stable
//   offset at its first offset; only the coordinator origin may append control batches (COMMIT/ABORT
//   markers), which end it; an ABORT is appended to the .txnindex of the segment holding the marker. A
//   read_committed read stops at the LSO and collects the aborted transactions overlapping what it returns.
// - A failed append (ENOSPC, EIO) changes nothing: the segment takes its bytes and index entries back
//   (LogSegment.append) and offsets, producer state and epochs move only after the write succeeded. A
//   producer snapshot that cannot be written at a roll is skipped (the state is rebuilt from the log).

import { mkdirSync } from "node:fs";
import { basename } from "node:path";
import { Logger } from "../common/logger.js";
import type { ScheduledTask, Scheduler } from "../common/scheduler.js";
import type { Time } from "../common/time.js";
import type { TopicPartition } from "../common/topic-partition.js";
import { KafkaError } from "../protocol/errors.js";
import {
  ATTRIBUTES_OFFSET,
  CONTROL_FLAG_MASK,
  CorruptRecordError,
  decodeBatchRecords,
  LAST_OFFSET_DELTA_OFFSET,
  MAX_TIMESTAMP_OFFSET,
  PARTITION_LEADER_EPOCH_OFFSET,
  PRODUCER_ID_OFFSET,
  readRecordBatchHeader,
  setBaseOffset,
  setMaxTimestamp,
  setPartitionLeaderEpoch,
  TimestampType,
} from "../protocol/records/index.js";
import type { LeaderEpochFileCache } from "./leader-epoch/leader-epoch-file-cache.js";
import { LocalLog } from "./local-log.js";
import {
  analyzeAndValidateRecords,
  duplicateAppendInfo,
  emptyAppendInfo,
  type LogAppendInfo,
} from "./log-append-info.js";
import type { LogConfig } from "./log-config.js";
import { parseLogDirName } from "./log-file-names.js";
import { type LoadedLog, LogLoader, type LogLoadReport } from "./log-loader.js";
import type { LogSegment } from "./log-segment.js";
import type { AppendOrigin } from "./producer-state/producer-append-info.js";
import {
  lastSequenceOf,
  ProducerStateUpdates,
  rebuildProducerState,
} from "./producer-state/producer-state-loader.js";
import {
  DEFAULT_PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS,
  DEFAULT_PRODUCER_ID_EXPIRATION_MS,
  ProducerStateManager,
} from "./producer-state/producer-state-manager.js";
import { segmentsToDelete } from "./retention/retention-policy.js";
import type { AbortedTxn } from "./transaction-index.js";

/** ListOffsets special timestamps (Kafka's ListOffsetsRequest). */
export const LATEST_TIMESTAMP = -1n;
export const EARLIEST_TIMESTAMP = -2n;
export const MAX_TIMESTAMP = -3n;
export const EARLIEST_LOCAL_TIMESTAMP = -4n;

export type FetchIsolation = "log-end" | "high-watermark" | "committed";

export interface LogReadResult {
  /** Whole batches, starting with the one containing the requested offset. */
  records: Buffer;
  /**
   * Read committed ("committed" isolation) only: the aborted transactions overlapping the returned
   * batches, from the .txnindex of the segments read on (Kafka's collectAbortedTransactions).
   */
  abortedTransactions?: AbortedTxn[];
  /** The first batch is larger than maxBytes and minOneMessage was false: records is empty. */
  firstEntryIncomplete?: boolean;
  highWatermark: bigint;
  logStartOffset: bigint;
  lastStableOffset: bigint;
  logEndOffset: bigint;
}

export interface TimestampAndOffset {
  timestamp: bigint;
  offset: bigint;
  leaderEpoch?: number;
}

export interface UnifiedLogOpenOptions {
  time: Time;
  recoveryPoint: bigint;
  logStartOffset?: bigint;
  hadCleanShutdown: boolean;
  /** `dir` was just created for this log (LogManager): it starts empty without a load (LogLoader.loadNew). */
  newDir?: boolean;
  logger?: Logger;
  leaderEpochCache?: LeaderEpochFileCache;
  /** Runs delayed file deletions and post-roll flushes; without one they happen at once / not at all. */
  scheduler?: Scheduler;
  /** producer.id.expiration.ms (default 86400000). */
  producerIdExpirationMs?: number;
  /** producer.id.expiration.check.interval.ms (default 600000). */
  producerIdExpirationCheckIntervalMs?: number;
  /**
   * Whether the log dir is full (LogManager): appends then fail at once with an ENOSPC error, and deleted
   * segments are removed at once, not after file.delete.delay.ms.
   */
  dirFull?: () => boolean;
  /** Told of an append that failed for want of space (ENOSPC / EDQUOT), after the append was undone. */
  onNoSpace?: (e: Error) => void;
}

export class UnifiedLog {
  private _logStartOffset: bigint;
  private _highWatermark: bigint;
  readonly dir: string;
  readonly topicPartition: TopicPartition;
  readonly loadReport: LogLoadReport;
  private readonly producerExpireCheck: ScheduledTask | undefined;

  private constructor(
    /** The segments, log end offset and recovery point (Kafka's LocalLog). */
    private readonly localLog: LocalLog,
    loaded: LoadedLog,
    private readonly time: Time,
    private readonly scheduler: Scheduler | undefined,
    readonly leaderEpochCache: LeaderEpochFileCache | undefined,
    private readonly logger: Logger,
    /** The idempotent/transactional producers of this partition (Kafka's ProducerStateManager). */
    readonly producerStateManager: ProducerStateManager,
    producerIdExpirationCheckIntervalMs: number,
    /** See UnifiedLogOpenOptions.onNoSpace. */
    private readonly onNoSpace: (e: Error) => void,
  ) {
    this.dir = localLog.dir;
    this._logStartOffset = loaded.logStartOffset;
    this._highWatermark = loaded.logStartOffset;
    this.loadReport = loaded.report;
    const name = localLog.name;
    // (`<tp>` or a future log `<tp>.<uuid>-future`: log-file-names.ts)
    this.topicPartition = parseLogDirName(name)?.tp ?? { topic: name, partition: 0 };
    const interval = producerIdExpirationCheckIntervalMs;
    this.producerExpireCheck = scheduler?.schedule(
      "PeriodicProducerExpirationCheck",
      () => {
        this.removeExpiredProducers();
      },
      interval,
      interval,
    );
  }

  /** Drops producers idle for producer.id.expiration.ms; returns how many. */
  removeExpiredProducers(): number {
    if (this.localLog.isClosed) return 0;
    return this.producerStateManager.removeExpiredProducers(this.time.milliseconds());
  }

  /** Loads (and if needed recovers) the log in `dir`, which must exist. */
  static open(dir: string, config: LogConfig, opts: UnifiedLogOpenOptions): UnifiedLog {
    if (!opts.newDir) mkdirSync(dir, { recursive: true });
    const producerStateManager = new ProducerStateManager(
      basename(dir),
      dir,
      { producerIdExpirationMs: opts.producerIdExpirationMs ?? DEFAULT_PRODUCER_ID_EXPIRATION_MS },
      opts.logger,
    );
    const loaded = (opts.newDir ? LogLoader.loadNew : LogLoader.load)({
      dir,
      config,
      time: opts.time,
      recoveryPoint: opts.recoveryPoint,
      logStartOffset: opts.logStartOffset,
      hadCleanShutdown: opts.hadCleanShutdown,
      logger: opts.logger,
      leaderEpochCache: opts.leaderEpochCache,
      producerStateManager,
    });
    const name = basename(dir);
    const logger =
      opts.logger ?? new Logger("kafka.log.UnifiedLog", `UnifiedLog partition=${name}, dir=${dir}`);
    const localLog = new LocalLog({
      dir,
      config,
      time: opts.time,
      scheduler: opts.scheduler,
      logger,
      dirFull: opts.dirFull ?? (() => false),
      segments: loaded.segments,
      logEndOffset: loaded.logEndOffset,
      recoveryPoint: loaded.recoveryPoint,
    });
    return new UnifiedLog(
      localLog,
      loaded,
      opts.time,
      opts.scheduler,
      opts.leaderEpochCache,
      logger,
      producerStateManager,
      opts.producerIdExpirationCheckIntervalMs ?? DEFAULT_PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS,
      opts.onNoSpace ?? (() => {}),
    );
  }

  get name(): string {
    return this.localLog.name;
  }

  get config(): LogConfig {
    return this.localLog.config;
  }

  /** Applies a new config (segment sizes and retention take effect from the next roll/check). */
  updateConfig(config: LogConfig): void {
    this.localLog.updateConfig(config);
  }

  get logStartOffset(): bigint {
    return this._logStartOffset;
  }

  get logEndOffset(): bigint {
    return this.localLog.logEndOffset;
  }

  get highWatermark(): bigint {
    return this._highWatermark;
  }

  /** = high watermark until transactions exist (then: the first unstable offset, if lower). */
  get lastStableOffset(): bigint {
    const firstUnstable = this.firstUnstableOffset();
    return firstUnstable !== undefined && firstUnstable < this._highWatermark
      ? firstUnstable
      : this._highWatermark;
  }

  /** The first offset of the oldest open transaction (from the producer state). */
  protected firstUnstableOffset(): bigint | undefined {
    return this.producerStateManager.firstUnstableOffset();
  }

  get recoveryPoint(): bigint {
    return this.localLog.recoveryPoint;
  }

  /** Messages appended since the last flush. */
  get unflushedMessages(): bigint {
    return this.localLog.unflushedMessages;
  }

  /** The segments, oldest first (a copy; the last one is the active segment). */
  segments(): LogSegment[] {
    return this.localLog.segments.values();
  }

  get numberOfSegments(): number {
    return this.localLog.segments.numberOfSegments;
  }

  get activeSegment(): LogSegment {
    return this.localLog.segments.activeSegment;
  }

  /** Bytes of all segments. */
  get size(): number {
    return this.localLog.segments.sizeInBytes;
  }

  /** The segment that would hold `offset` (the floor by base offset). */
  segmentFor(offset: bigint): LogSegment | undefined {
    return this.localLog.segments.floorSegment(offset);
  }

  /** Sets the high watermark, clamped to [logStartOffset, logEndOffset]; returns the value set. */
  updateHighWatermark(offset: bigint): bigint {
    let hw = offset;
    if (hw < this._logStartOffset) hw = this._logStartOffset;
    if (hw > this.logEndOffset) hw = this.logEndOffset;
    this._highWatermark = hw;
    return hw;
  }

  /** Raises the high watermark (never lowers it); returns the new value when it moved. */
  maybeIncrementHighWatermark(offset: bigint): bigint | undefined {
    if (offset > this.logEndOffset)
      throw new RangeError(`high watermark ${offset} is past the log end ${this.logEndOffset}`);
    if (offset <= this._highWatermark) return undefined;
    this._highWatermark = offset;
    return offset;
  }

  /**
   * Appends batches from a producer: validates them, assigns offsets in place from the log end offset,
   * stamps leaderEpoch, applies LogAppendTime, and writes the bytes as they are. `origin` is Kafka's
   * AppendOrigin: only the coordinator may write control batches (transaction markers); a client's is
   * INVALID_RECORD. A marker ends its producer's transaction: an ABORT is recorded in the active
   * segment's .txnindex and the last stable offset moves.
   */
  appendAsLeader(records: Buffer, leaderEpoch: number, origin: AppendOrigin = "client"): LogAppendInfo {
    this.localLog.checkOpen();
    const batches = analyzeAndValidateRecords(records, this.config);
    if (batches.length === 0) return emptyAppendInfo(this._logStartOffset);
    if (origin === "client") {
      for (const b of batches) {
        if ((records.readInt16BE(b.position + ATTRIBUTES_OFFSET) & CONTROL_FLAG_MASK) !== 0) {
          throw new KafkaError(
            "INVALID_RECORD",
            `Clients are not allowed to write control records in topic partition ${this.name}.`,
          );
        }
      }
    }
    const logAppendTime =
      this.config.messageTimestampType === "LogAppendTime" ? BigInt(this.time.milliseconds()) : -1n;
    const firstOffset = this.logEndOffset;
    let next = firstOffset;
    let maxTimestamp = -1n;
    let shallowOffsetOfMaxTimestamp = firstOffset;
    const producers = new ProducerStateUpdates(this.producerStateManager, origin);
    for (const b of batches) {
      // Idempotent/transactional batches only (producer id >= 0: the high word is >= 0, no bigint read).
      if (records.readInt32BE(b.position + PRODUCER_ID_OFFSET) >= 0) {
        const h = readRecordBatchHeader(records, b.position);
        const duplicate = h.isControl
          ? undefined
          : this.producerStateManager
              .lastEntry(h.producerId)
              ?.findDuplicateBatch(h.producerEpoch, h.baseSequence, lastSequenceOf(h));
        // A retry of a batch already in the log: answered with the original offsets, not written again.
        if (duplicate !== undefined)
          return duplicateAppendInfo(duplicate, logAppendTime, this._logStartOffset, leaderEpoch);
        h.baseOffset = next;
        const at = b;
        producers.add(h, () => records.subarray(at.position, at.position + at.size));
      }
      setBaseOffset(records, b.position, next);
      setPartitionLeaderEpoch(records, b.position, leaderEpoch);
      if (logAppendTime >= 0n)
        setMaxTimestamp(records, b.position, TimestampType.LogAppendTime, logAppendTime);
      const last = next + BigInt(records.readInt32BE(b.position + LAST_OFFSET_DELTA_OFFSET));
      const ts = records.readBigInt64BE(b.position + MAX_TIMESTAMP_OFFSET);
      if (ts > maxTimestamp) {
        maxTimestamp = ts;
        shallowOffsetOfMaxTimestamp = last;
      }
      next = last + 1n;
    }
    const lastOffset = next - 1n;
    this.appendToSegment(records, lastOffset, maxTimestamp, shallowOffsetOfMaxTimestamp, firstOffset);
    producers.apply(this.activeSegment.txnIndex, this.logEndOffset);
    if (leaderEpoch >= 0) this.maybeAssignEpoch(leaderEpoch, firstOffset);
    return {
      firstOffset,
      lastOffset,
      maxTimestamp,
      shallowOffsetOfMaxTimestamp,
      logAppendTime,
      logStartOffset: this._logStartOffset,
      numBatches: batches.length,
      validBytes: records.length,
      lastLeaderEpoch: leaderEpoch,
    };
  }

  /**
   * Appends batches fetched from the leader with their offsets as they are; offsets must increase and
   * start at or after the log end offset. A partial trailing batch is dropped (validBytes says how much
   * was appended).
   */
  appendAsFollower(fetched: Buffer): LogAppendInfo {
    this.localLog.checkOpen();
    // A fetch response may end with a partial batch (the leader cuts at the fetch size): Kafka drops it.
    const batches = analyzeAndValidateRecords(fetched, this.config, true);
    if (batches.length === 0) return emptyAppendInfo(this._logStartOffset);
    const lastBatch = batches[batches.length - 1];
    const records = fetched.subarray(0, lastBatch.position + lastBatch.size);
    let prevLast = this.logEndOffset - 1n;
    let maxTimestamp = -1n;
    let shallowOffsetOfMaxTimestamp = -1n;
    let firstOffset = -1n;
    let lastEpoch = -1;
    const epochs: Array<{ epoch: number; offset: bigint }> = [];
    const producers = new ProducerStateUpdates(this.producerStateManager, "replication");
    for (const b of batches) {
      if (records.readInt32BE(b.position + PRODUCER_ID_OFFSET) >= 0) {
        const at = b;
        const h = readRecordBatchHeader(records, b.position);
        producers.add(h, () => records.subarray(at.position, at.position + at.size));
      }
      const base = records.readBigInt64BE(b.position);
      const last = base + BigInt(records.readInt32BE(b.position + LAST_OFFSET_DELTA_OFFSET));
      if (base <= prevLast) {
        throw new KafkaError(
          "UNKNOWN_SERVER_ERROR",
          `out of order offsets in the follower append to ${this.name}: batch ${base}..${last} after offset ${prevLast} (log end offset ${this.logEndOffset})`,
        );
      }
      if (firstOffset < 0n) firstOffset = base;
      const ts = records.readBigInt64BE(b.position + MAX_TIMESTAMP_OFFSET);
      if (ts > maxTimestamp) {
        maxTimestamp = ts;
        shallowOffsetOfMaxTimestamp = last;
      }
      lastEpoch = records.readInt32BE(b.position + PARTITION_LEADER_EPOCH_OFFSET);
      epochs.push({ epoch: lastEpoch, offset: base });
      prevLast = last;
    }
    this.appendToSegment(records, prevLast, maxTimestamp, shallowOffsetOfMaxTimestamp, firstOffset);
    producers.apply(this.activeSegment.txnIndex, this.logEndOffset);
    for (const e of epochs) if (e.epoch >= 0) this.maybeAssignEpoch(e.epoch, e.offset);
    return {
      firstOffset,
      lastOffset: prevLast,
      maxTimestamp,
      shallowOffsetOfMaxTimestamp,
      logAppendTime: -1n,
      logStartOffset: this._logStartOffset,
      numBatches: batches.length,
      validBytes: records.length,
      lastLeaderEpoch: lastEpoch,
    };
  }

  private maybeAssignEpoch(epoch: number, startOffset: bigint): void {
    const cache = this.leaderEpochCache;
    if (!cache) return;
    const latest = cache.latestEpoch();
    // Off the event loop (a follower's first batch of a new epoch): see LeaderEpochFileCache.assign.
    if (latest === undefined || epoch > latest) cache.assign(epoch, startOffset, "background");
  }

  /**
   * Writes batches whose offsets are assigned to the active segment, rolled first when due (Kafka's
   * maybeRoll); the log flushes when flush.messages is reached. A write that fails for want of space is
   * reported to onNoSpace (after LogSegment.append took it back) and thrown.
   */
  private appendToSegment(
    records: Buffer,
    lastOffset: bigint,
    maxTimestamp: bigint,
    shallowOffsetOfMaxTimestamp: bigint,
    rollOffset: bigint,
  ): void {
    try {
      this.localLog.checkWritable();
      const rollParams = {
        maxSegmentMs: this.config.segmentMs,
        maxSegmentBytes: this.config.segmentBytes,
        maxTimestampInMessages: maxTimestamp,
        maxOffsetInMessages: lastOffset,
        messagesSize: records.length,
        now: this.time.milliseconds(),
      };
      if (this.activeSegment.shouldRoll(rollParams)) this.roll(rollOffset);
      this.localLog.append(records, lastOffset, maxTimestamp, shallowOffsetOfMaxTimestamp);
      if (this.unflushedMessages >= this.config.flushMessages) this.flush();
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOSPC" || code === "EDQUOT") this.onNoSpace(e as Error);
      throw e;
    }
  }

  /**
   * Reads whole batches from startOffset, at most maxBytes (at least one batch with minOneMessage), up to
   * the bound of the isolation level. Throws OFFSET_OUT_OF_RANGE outside [logStartOffset, logEndOffset].
   * `allocate` provides the memory the bytes are read into (a MemoryPool's, for a fetch whose response
   * gives it back once written); a fresh buffer by default. A read_committed ("committed") read returns
   * the aborted transactions overlapping its batches.
   */
  read(
    startOffset: bigint,
    maxBytes: number,
    isolation: FetchIsolation,
    minOneMessage: boolean,
    allocate?: (size: number) => Buffer,
  ): LogReadResult {
    this.localLog.checkOpen();
    const result = (records: Buffer, firstEntryIncomplete = false): LogReadResult => ({
      records,
      firstEntryIncomplete: firstEntryIncomplete || undefined,
      highWatermark: this._highWatermark,
      logStartOffset: this._logStartOffset,
      lastStableOffset: this.lastStableOffset,
      logEndOffset: this.logEndOffset,
    });
    const logEndOffset = this.logEndOffset;
    if (startOffset < this._logStartOffset || startOffset > logEndOffset) {
      throw new KafkaError(
        "OFFSET_OUT_OF_RANGE",
        `Received request for offset ${startOffset} for partition ${this.name}, but we only have log segments in the range ${this._logStartOffset} to ${logEndOffset}.`,
      );
    }
    const maxOffset =
      isolation === "log-end"
        ? logEndOffset
        : isolation === "high-watermark"
          ? this._highWatermark
          : this.lastStableOffset;
    if (startOffset >= maxOffset) return result(Buffer.alloc(0));
    const committed = isolation === "committed";
    const r = this.localLog.read(startOffset, maxBytes, maxOffset, minOneMessage, committed, allocate);
    if (r === undefined) return result(Buffer.alloc(0));
    const out = result(r.records, r.firstEntryIncomplete);
    if (committed) out.abortedTransactions = r.abortedTransactions;
    return out;
  }

  /**
   * The aborted transactions overlapping [startOffset, upperBoundOffset) (Kafka's
   * UnifiedLog.collectAbortedTransactions; LocalLog reads the .txnindex files).
   */
  collectAbortedTransactions(startOffset: bigint, upperBoundOffset: bigint): AbortedTxn[] {
    return this.localLog.collectAbortedTransactions(startOffset, upperBoundOffset);
  }

  /**
   * Starts a new active segment at max(expectedNextOffset, logEndOffset) (LocalLog.roll; an empty active
   * segment at that offset is kept), snapshots the producer state under the new segment's base offset and
   * flushes the segments before it in the background (Kafka's roll).
   */
  roll(expectedNextOffset?: bigint): LogSegment {
    const previous = this.localLog.isClosed ? undefined : this.activeSegment;
    const seg = this.localLog.roll(expectedNextOffset);
    if (seg === previous) return seg;
    const newOffset = seg.baseOffset;
    // Kafka snapshots the producer state at every roll, named after the new segment's base offset.
    this.producerStateManager.updateMapEndOffset(newOffset);
    try {
      this.producerStateManager.takeSnapshot(false);
    } catch (e) {
      // An optimisation only (a load rebuilds the state from the log); a full dir must still roll.
      if (typeof (e as NodeJS.ErrnoException).code !== "string") throw e;
      this.logger.warn(`Could not write the producer snapshot at ${newOffset}: ${(e as Error).message}`);
    }
    this.logger.info(`Rolled new log segment at offset ${newOffset}`);
    // Kafka flushes the segments before the new one in the background once rolled (its scheduler thread;
    // here libuv's thread pool: a synchronous fdatasync of a GiB segment held the event loop for seconds).
    // The leader epoch entries of the flushed range are on disk before the recovery point passes them.
    this.scheduler?.schedule(
      "flush-log",
      () => {
        const cache = this.leaderEpochCache;
        if (cache === undefined || !cache.hasPendingWrite) return this.localLog.flushInBackground(newOffset);
        return cache.flushed().then(() => {
          cache.writePendingNow();
          return this.localLog.flushInBackground(newOffset);
        });
      },
      0,
    );
    return seg;
  }

  /** Background flushes (after a roll) not yet finished. */
  get flushesInProgress(): number {
    return this.localLog.flushesInProgress;
  }

  /**
   * Flushes (fdatasync) the segments holding [recoveryPoint, upTo) and moves the recovery point to upTo
   * (default: the log end offset).
   */
  flush(upTo?: bigint): void {
    // Epoch entries written in the background are durable before the recovery point moves past them.
    this.leaderEpochCache?.writePendingNow();
    this.localLog.flush(upTo);
  }

  /** Flush policy: flush.messages and flush.ms (Kafka's log flusher); returns whether it flushed. */
  maybeFlush(): boolean {
    if (this.localLog.flushDue) this.leaderEpochCache?.writePendingNow();
    return this.localLog.maybeFlush();
  }

  /**
   * Removes everything at and after targetOffset (follower truncation); returns whether anything changed.
   * The leader-epoch cache, log start offset, high watermark and producer state follow.
   */
  truncateTo(targetOffset: bigint): boolean {
    this.localLog.checkOpen();
    if (targetOffset < 0n)
      throw new RangeError(`cannot truncate ${this.name} to a negative offset (${targetOffset})`);
    if (targetOffset >= this.logEndOffset) {
      // Nothing to cut from the log, but an epoch entry at its end goes (Kafka does the same).
      this.dropEpochEntriesAtLogEnd();
      return false;
    }
    if (this.localLog.segments.firstSegment.baseOffset > targetOffset) {
      this.truncateFullyAndStartAt(targetOffset);
      return true;
    }
    this.localLog.truncateTo(targetOffset);
    const logEndOffset = this.logEndOffset;
    this.dropEpochEntriesAtLogEnd();
    if (this._logStartOffset > logEndOffset) this._logStartOffset = logEndOffset;
    if (this._highWatermark > logEndOffset) this._highWatermark = logEndOffset;
    rebuildProducerState(
      this.producerStateManager,
      this.localLog.segments.values(),
      this._logStartOffset,
      logEndOffset,
      this.time.milliseconds(),
    );
    this.logger.info(`Truncated log to offset ${targetOffset}, log end offset ${logEndOffset}`);
    return true;
  }

  /**
   * Drops the leader-epoch entries starting at or after the log end offset: a broker that led an epoch
   * without appending to it keeps an entry starting at its log end, which it would otherwise offer as its
   * last fetched epoch forever, diverging from every new leader.
   */
  dropEpochEntriesAtLogEnd(): void {
    this.leaderEpochCache?.truncateFromEnd(this.logEndOffset);
  }

  /** Deletes every segment and restarts the log empty at newOffset (Kafka's truncateFullyAndStartAt). */
  truncateFullyAndStartAt(newOffset: bigint): void {
    this.localLog.checkOpen();
    if (newOffset < 0n)
      throw new RangeError(`cannot restart ${this.name} at a negative offset (${newOffset})`);
    this.localLog.truncateFullyAndStartAt(newOffset);
    this._logStartOffset = newOffset;
    this._highWatermark = newOffset;
    this.leaderEpochCache?.clearAndFlush();
    this.producerStateManager.truncateFullyAndStartAt(newOffset);
    this.logger.info(`Truncated the whole log and restarted at offset ${newOffset}`);
  }

  /**
   * Raises the log start offset (DeleteRecords, retention); deletes nothing itself. Refuses to pass the
   * high watermark (OFFSET_OUT_OF_RANGE, as Kafka). Returns whether it moved.
   */
  maybeIncrementLogStartOffset(newLogStartOffset: bigint, reason = "client delete records request"): boolean {
    this.localLog.checkOpen();
    if (newLogStartOffset > this._highWatermark) {
      throw new KafkaError(
        "OFFSET_OUT_OF_RANGE",
        `Cannot increment the log start offset to ${newLogStartOffset} of partition ${this.name} since it is larger than the high watermark ${this._highWatermark}`,
      );
    }
    if (newLogStartOffset <= this._logStartOffset) return false;
    this._logStartOffset = newLogStartOffset;
    this.leaderEpochCache?.truncateFromStart(newLogStartOffset);
    if (this.recoveryPoint < newLogStartOffset) this.localLog.updateRecoveryPoint(newLogStartOffset);
    this.producerStateManager.onLogStartOffsetIncremented(newLogStartOffset);
    this.logger.info(`Incremented log start offset to ${newLogStartOffset} due to ${reason}`);
    return true;
  }

  /**
   * ListOffsets by time: -1 latest (log end offset), -2 earliest (log start offset), -3 the max timestamp,
   * -4 earliest local; otherwise the first message with a timestamp >= ts. Undefined when none.
   */
  fetchOffsetByTimestamp(ts: bigint): TimestampAndOffset | undefined {
    this.localLog.checkOpen();
    const epochOf = (offset: bigint): number | undefined => this.leaderEpochCache?.epochForOffset(offset);
    if (ts === EARLIEST_TIMESTAMP || ts === EARLIEST_LOCAL_TIMESTAMP) {
      return { timestamp: -1n, offset: this._logStartOffset, leaderEpoch: epochOf(this._logStartOffset) };
    }
    if (ts === LATEST_TIMESTAMP) {
      return {
        timestamp: -1n,
        offset: this.logEndOffset,
        leaderEpoch: this.leaderEpochCache?.latestEpoch(),
      };
    }
    if (ts === MAX_TIMESTAMP) {
      const best = this.localLog.segmentWithMaxTimestamp();
      if (best === undefined) return undefined;
      const offset = this.offsetOfMaxTimestamp(best.offsetOfMaxTimestamp, best.maxTimestamp);
      return { timestamp: best.maxTimestamp, offset, leaderEpoch: epochOf(offset) };
    }
    const found = this.localLog.findOffsetByTimestamp(ts, this._logStartOffset);
    return found && { ...found, leaderEpoch: epochOf(found.offset) };
  }

  /**
   * The offset of the first record carrying `maxTimestamp` in the batch that contains `batchOffset` (Kafka
   * 3.8+'s RecordBatch.offsetOfMaxTimestamp, so ListOffsets MAX_TIMESTAMP names the record, not its batch's
   * last offset). Falls back to `batchOffset` when the batch cannot be read.
   */
  private offsetOfMaxTimestamp(batchOffset: bigint, maxTimestamp: bigint): bigint {
    try {
      const { records } = this.read(batchOffset, 1, "log-end", true);
      if (records.length === 0) return batchOffset;
      for (const r of decodeBatchRecords(records)) if (r.timestamp === maxTimestamp) return r.offset;
    } catch (e) {
      if (!(e instanceof KafkaError) && !(e instanceof CorruptRecordError)) throw e;
    }
    return batchOffset;
  }

  /**
   * Removes `segments` from the log: renamed `.deleted` at once, removed after file.delete.delay.ms through
   * the scheduler (at once without one). Deleting every segment rolls a new one first. The log start
   * offset moves up to the first remaining segment. Returns how many were deleted.
   */
  deleteSegments(segments: readonly LogSegment[], reason: string): number {
    this.localLog.checkOpen();
    const list = this.localLog.segments;
    const doomed = new Set(segments.filter((s) => list.contains(s)));
    if (doomed.size === 0) return 0;
    if (doomed.size === list.numberOfSegments) this.roll();
    // The active segment stays (after the roll above it is only in `doomed` when it is empty at the end).
    const active = this.activeSegment;
    const removed = [...doomed].filter((s) => s !== active);
    if (removed.length === 0) return 0;
    this.localLog.removeAndDeleteSegments(removed, reason);
    // Kafka's deleteProducerSnapshots: the snapshots named after the deleted segments go with them.
    for (const s of removed) this.producerStateManager.removeAndDeleteSnapshot(s.baseOffset);
    const firstBase = list.firstSegment.baseOffset;
    if (firstBase > this._logStartOffset) {
      this._logStartOffset = firstBase;
      this.leaderEpochCache?.truncateFromStart(firstBase);
      if (this._highWatermark < firstBase) this._highWatermark = firstBase;
      if (this.recoveryPoint < firstBase) this.localLog.updateRecoveryPoint(firstBase);
    }
    return removed.length;
  }

  /** Retention (retention.ms, retention.bytes, log start offset): deletes whole segments; returns how many. */
  deleteOldSegments(): number {
    if (this.localLog.isClosed) return 0;
    // Everything deleted by DeleteRecords (log start offset = log end offset): the active segment holds
    // nothing readable, so it is rolled and its space comes back now rather than at the next roll.
    if (this._logStartOffset >= this.logEndOffset && this.activeSegment.size > 0) this.roll();
    const list = this.segments();
    const summaries = list.map((s, i) => ({
      baseOffset: s.baseOffset,
      nextOffset: i + 1 < list.length ? list[i + 1].baseOffset : this.logEndOffset,
      sizeInBytes: s.size,
      largestTimestamp: s.maxTimestamp,
      lastModifiedMs: s.lastModified,
      segment: s,
    }));
    const decision = segmentsToDelete(summaries, {
      retentionMs: this.config.retentionMs,
      retentionBytes: this.config.retentionBytes,
      logStartOffset: this._logStartOffset,
      highWatermark: this._highWatermark,
      nowMs: this.time.milliseconds(),
      cleanupPolicy: this.config.cleanupPolicy,
    });
    if (decision.segments.length === 0) return 0;
    const bySummary = new Map(summaries.map((x) => [x.baseOffset, x.segment]));
    const doomed = decision.segments.map((x) => bySummary.get(x.baseOffset)!).filter((s) => s !== undefined);
    const reason = decision.deletions.map((d) => d.reason).join(", ");
    const n = this.deleteSegments(doomed, reason);
    if (
      decision.newLogStartOffset > this._logStartOffset &&
      decision.newLogStartOffset <= this._highWatermark
    ) {
      this.maybeIncrementLogStartOffset(decision.newLogStartOffset, reason);
    }
    return n;
  }

  /** Swaps cleaner output in for old segments (LocalLog.replaceSegments: the .cleaned/.swap protocol). */
  replaceSegments(newSegments: readonly LogSegment[], oldSegments: readonly LogSegment[]): void {
    this.localLog.replaceSegments(newSegments, oldSegments);
  }

  /** Closes every segment (the active one gets its final time index entry and trimmed indexes). */
  close(): void {
    if (this.localLog.isClosed) return;
    this.producerExpireCheck?.cancel();
    try {
      this.producerStateManager.takeSnapshot(true);
    } catch (e) {
      // The next load rebuilds the state from the log (or an older snapshot): the log still closes.
      this.logger.warn(`Could not write the producer snapshot at close: ${(e as Error).message}`);
    }
    this.leaderEpochCache?.close();
    this.localLog.close();
  }

  /** Closes every file without writing anything (a log that could not be closed cleanly). */
  closeWithoutWriting(): void {
    this.producerExpireCheck?.cancel();
    this.leaderEpochCache?.close(false);
    this.localLog.closeHandlers();
  }

  /** Closes the log and removes its directory. */
  delete(): void {
    this.producerExpireCheck?.cancel();
    this.localLog.delete();
  }

  toString(): string {
    return `UnifiedLog(dir=${this.dir}, topicPartition=${this.topicPartition.topic}-${this.topicPartition.partition}, logStartOffset=${this._logStartOffset}, logEndOffset=${this.logEndOffset}, highWatermark=${this._highWatermark})`;
  }
}
