// UnifiedLog: one partition replica's log, as Kafka's UnifiedLog (local part): an ordered list of
// LogSegments in `<log.dir>/<topic>-<partition>/`, the offsets that replication and transactions use
// (log start offset, high watermark, last stable offset, log end offset, recovery point) and the
// leader-epoch cache. It owns offset assignment (appendAsLeader), follower appends, reads by offset and by
// timestamp, roll, truncation, segment deletion and replacement (the cleaner's .cleaned/.swap protocol).
//
// Invariants:
// - Segments are ordered by base offset; the last one is the active segment, the only one appended to.
// - logStartOffset <= highWatermark <= logEndOffset, lastStableOffset <= highWatermark,
//   recoveryPoint <= logEndOffset; everything below the recovery point has been fdatasync'ed.
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

import { mkdirSync, rmSync } from "node:fs";
import { basename } from "node:path";
import { fsyncDirectory } from "../common/atomic-file.js";
import { Logger } from "../common/logger.js";
import type { ScheduledTask, Scheduler } from "../common/scheduler.js";
import type { Time } from "../common/time.js";
import type { TopicPartition } from "../common/topic-partition.js";
import { KafkaError } from "../protocol/errors.js";
import {
  ATTRIBUTES_OFFSET,
  BATCH_LENGTH_OFFSET,
  CONTROL_FLAG_MASK,
  CorruptRecordError,
  decodeBatchRecords,
  isRecordBatchCrcValid,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  MAX_TIMESTAMP_OFFSET,
  MIN_BATCH_LENGTH,
  PARTITION_LEADER_EPOCH_OFFSET,
  PRODUCER_ID_OFFSET,
  RECORD_BATCH_MAGIC,
  RECORD_BATCH_OVERHEAD,
  readRecordBatchHeader,
  setBaseOffset,
  setMaxTimestamp,
  setPartitionLeaderEpoch,
  TimestampType,
} from "../protocol/records/index.js";
import type { LeaderEpochFileCache } from "./leader-epoch/leader-epoch-file-cache.js";
import type { LogConfig } from "./log-config.js";
import {
  CLEANED_FILE_SUFFIX,
  DELETED_FILE_SUFFIX,
  parseLogDirName,
  SWAP_FILE_SUFFIX,
} from "./log-file-names.js";
import { LogLoader, type LogLoadReport } from "./log-loader.js";
import { LogSegment } from "./log-segment.js";
import type {
  AppendOrigin,
  CompletedTxn,
  ProducerAppendInfo,
} from "./producer-state/producer-append-info.js";
import {
  applyProducerUpdates,
  lastSequenceOf,
  rebuildProducerState,
  updateProducers,
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

/** What an append did (Kafka's LogAppendInfo, the fields the broker uses). */
export interface LogAppendInfo {
  /** First offset of the appended batches (-1 when nothing was appended). */
  firstOffset: bigint;
  lastOffset: bigint;
  /** Max timestamp of the appended batches (the append time with LogAppendTime; -1 when none). */
  maxTimestamp: bigint;
  /** Offset recorded for maxTimestamp (the last offset of the batch carrying it). */
  shallowOffsetOfMaxTimestamp: bigint;
  /** The log append time when message.timestamp.type=LogAppendTime, else -1. */
  logAppendTime: bigint;
  logStartOffset: bigint;
  numBatches: number;
  validBytes: number;
  /** partitionLeaderEpoch of the last batch. */
  lastLeaderEpoch: number;
}

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

interface ValidatedBatch {
  position: number;
  size: number;
}

export class UnifiedLog {
  private segmentList: LogSegment[];
  private _logStartOffset: bigint;
  private _logEndOffset: bigint;
  private _highWatermark: bigint;
  private _recoveryPoint: bigint;
  private lastFlushedTime: number;
  private closed = false;
  /** Truncations so far: a background flush that saw another count moves no recovery point. */
  private truncations = 0;
  private pendingFlushes = 0;
  readonly topicPartition: TopicPartition;
  readonly loadReport: LogLoadReport;
  private readonly logger: Logger;
  private readonly producerExpireCheck: ScheduledTask | undefined;
  /** See UnifiedLogOpenOptions.dirFull and onNoSpace. */
  private dirFull: () => boolean = () => false;
  private onNoSpace: (e: Error) => void = () => {};

  private constructor(
    readonly dir: string,
    private _config: LogConfig,
    private readonly time: Time,
    private readonly scheduler: Scheduler | undefined,
    readonly leaderEpochCache: LeaderEpochFileCache | undefined,
    logger: Logger | undefined,
    loaded: ReturnType<typeof LogLoader.load>,
    /** The idempotent/transactional producers of this partition (Kafka's ProducerStateManager). */
    readonly producerStateManager: ProducerStateManager,
    producerIdExpirationCheckIntervalMs: number,
  ) {
    this.segmentList = loaded.segments;
    this._logStartOffset = loaded.logStartOffset;
    this._logEndOffset = loaded.logEndOffset;
    this._recoveryPoint = loaded.recoveryPoint;
    this._highWatermark = loaded.logStartOffset;
    this.loadReport = loaded.report;
    this.lastFlushedTime = time.milliseconds();
    const name = basename(dir);
    // (`<tp>` or a future log `<tp>.<uuid>-future`: log-file-names.ts)
    this.topicPartition = parseLogDirName(name)?.tp ?? { topic: name, partition: 0 };
    this.logger = logger ?? new Logger("kafka.log.UnifiedLog", `UnifiedLog partition=${name}, dir=${dir}`);
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
    if (this.closed) return 0;
    return this.producerStateManager.removeExpiredProducers(this.time.milliseconds());
  }

  /** Loads (and if needed recovers) the log in `dir`, which must exist. */
  static open(dir: string, config: LogConfig, opts: UnifiedLogOpenOptions): UnifiedLog {
    mkdirSync(dir, { recursive: true });
    const producerStateManager = new ProducerStateManager(
      basename(dir),
      dir,
      { producerIdExpirationMs: opts.producerIdExpirationMs ?? DEFAULT_PRODUCER_ID_EXPIRATION_MS },
      opts.logger,
    );
    const loaded = LogLoader.load({
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
    const log = new UnifiedLog(
      dir,
      config,
      opts.time,
      opts.scheduler,
      opts.leaderEpochCache,
      opts.logger,
      loaded,
      producerStateManager,
      opts.producerIdExpirationCheckIntervalMs ?? DEFAULT_PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS,
    );
    if (opts.dirFull !== undefined) log.dirFull = opts.dirFull;
    if (opts.onNoSpace !== undefined) log.onNoSpace = opts.onNoSpace;
    return log;
  }

  get name(): string {
    return basename(this.dir);
  }

  get config(): LogConfig {
    return this._config;
  }

  /** Applies a new config (segment sizes and retention take effect from the next roll/check). */
  updateConfig(config: LogConfig): void {
    this._config = config;
  }

  get logStartOffset(): bigint {
    return this._logStartOffset;
  }

  get logEndOffset(): bigint {
    return this._logEndOffset;
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
    return this._recoveryPoint;
  }

  /** Messages appended since the last flush. */
  get unflushedMessages(): bigint {
    return this._logEndOffset - this._recoveryPoint;
  }

  /** The segments, oldest first (a copy; the last one is the active segment). */
  segments(): LogSegment[] {
    return this.segmentList.slice();
  }

  get numberOfSegments(): number {
    return this.segmentList.length;
  }

  get activeSegment(): LogSegment {
    return this.segmentList[this.segmentList.length - 1];
  }

  /** Bytes of all segments. */
  get size(): number {
    let n = 0;
    for (const s of this.segmentList) n += s.size;
    return n;
  }

  /** Sets the high watermark, clamped to [logStartOffset, logEndOffset]; returns the value set. */
  updateHighWatermark(offset: bigint): bigint {
    let hw = offset;
    if (hw < this._logStartOffset) hw = this._logStartOffset;
    if (hw > this._logEndOffset) hw = this._logEndOffset;
    this._highWatermark = hw;
    return hw;
  }

  /** Raises the high watermark (never lowers it); returns the new value when it moved. */
  maybeIncrementHighWatermark(offset: bigint): bigint | undefined {
    if (offset > this._logEndOffset)
      throw new RangeError(`high watermark ${offset} is past the log end ${this._logEndOffset}`);
    if (offset <= this._highWatermark) return undefined;
    this._highWatermark = offset;
    return offset;
  }

  private checkOpen(): void {
    if (this.closed) throw new KafkaError("KAFKA_STORAGE_ERROR", `the log for ${this.name} is closed`);
  }

  /**
   * Shallow validation of every batch (Kafka's analyzeAndValidateRecords without per-record work):
   * sizes, magic 2, CRC32C, max.message.bytes, segment.bytes. Throws KafkaError.
   */
  private validateBatches(records: Buffer, allowIncompleteTail = false): ValidatedBatch[] {
    const out: ValidatedBatch[] = [];
    let pos = 0;
    const len = records.length;
    while (pos < len) {
      const remaining = len - pos;
      if (remaining < LOG_OVERHEAD) {
        if (allowIncompleteTail) break;
        throw new KafkaError("CORRUPT_MESSAGE", `a partial record batch of ${remaining} bytes at ${pos}`);
      }
      const batchLength = records.readInt32BE(pos + BATCH_LENGTH_OFFSET);
      const size = LOG_OVERHEAD + batchLength;
      if (allowIncompleteTail && batchLength >= MIN_BATCH_LENGTH && size > remaining) break;
      if (batchLength < MIN_BATCH_LENGTH || size > remaining) {
        throw new KafkaError(
          "CORRUPT_MESSAGE",
          `record batch at ${pos} declares ${size} bytes, ${remaining} present (minimum ${RECORD_BATCH_OVERHEAD})`,
        );
      }
      if (size > this._config.maxMessageBytes) {
        throw new KafkaError(
          "MESSAGE_TOO_LARGE",
          `the record batch of ${size} bytes is larger than max.message.bytes (${this._config.maxMessageBytes})`,
        );
      }
      const magic = records.readInt8(pos + MAGIC_OFFSET);
      if (magic !== RECORD_BATCH_MAGIC) {
        throw new KafkaError(
          // Kafka: magic 0/1 in a v3+ produce is an InvalidRecordException; an unknown magic is corrupt.
          magic === 0 || magic === 1 ? "INVALID_RECORD" : "CORRUPT_MESSAGE",
          `record batch at ${pos} has magic ${magic}; only magic 2 record batches are stored`,
        );
      }
      let valid: boolean;
      try {
        valid = isRecordBatchCrcValid(records, pos);
      } catch (e) {
        if (e instanceof CorruptRecordError) throw new KafkaError("CORRUPT_MESSAGE", e.message);
        throw e;
      }
      if (!valid) throw new KafkaError("CORRUPT_MESSAGE", `record batch at ${pos} fails its CRC32C check`);
      if (records.readInt32BE(pos + LAST_OFFSET_DELTA_OFFSET) < 0) {
        throw new KafkaError("CORRUPT_MESSAGE", `record batch at ${pos} has a negative lastOffsetDelta`);
      }
      out.push({ position: pos, size });
      pos += size;
    }
    if (len > this._config.segmentBytes) {
      throw new KafkaError(
        "RECORD_LIST_TOO_LARGE",
        `the record batches of ${len} bytes exceed segment.bytes (${this._config.segmentBytes})`,
      );
    }
    return out;
  }

  /**
   * Appends batches from a producer: validates them, assigns offsets in place from the log end offset,
   * stamps leaderEpoch, applies LogAppendTime, and writes the bytes as they are. `origin` is Kafka's
   * AppendOrigin: only the coordinator may write control batches (transaction markers); a client's is
   * INVALID_RECORD. A marker ends its producer's transaction: an ABORT is recorded in the active
   * segment's .txnindex and the last stable offset moves.
   */
  appendAsLeader(records: Buffer, leaderEpoch: number, origin: AppendOrigin = "client"): LogAppendInfo {
    this.checkOpen();
    const batches = this.validateBatches(records);
    if (batches.length === 0) return this.emptyAppendInfo();
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
      this._config.messageTimestampType === "LogAppendTime" ? BigInt(this.time.milliseconds()) : -1n;
    const firstOffset = this._logEndOffset;
    let next = firstOffset;
    let maxTimestamp = -1n;
    let shallowOffsetOfMaxTimestamp = firstOffset;
    let updated: Map<bigint, ProducerAppendInfo> | undefined;
    let completed: CompletedTxn[] | undefined;
    for (const b of batches) {
      // Idempotent/transactional batches only (producer id >= 0: the high word is >= 0, no bigint read).
      if (records.readInt32BE(b.position + PRODUCER_ID_OFFSET) >= 0) {
        const h = readRecordBatchHeader(records, b.position);
        const duplicate = h.isControl
          ? undefined
          : this.producerStateManager
              .lastEntry(h.producerId)
              ?.findDuplicateBatch(h.producerEpoch, h.baseSequence, lastSequenceOf(h));
        if (duplicate !== undefined) {
          // A retry of a batch already in the log: answered with the original offsets, not written again.
          return {
            firstOffset: duplicate.firstOffset,
            lastOffset: duplicate.lastOffset,
            maxTimestamp: duplicate.timestamp,
            shallowOffsetOfMaxTimestamp: duplicate.lastOffset,
            logAppendTime,
            logStartOffset: this._logStartOffset,
            numBatches: 0,
            validBytes: 0,
            lastLeaderEpoch: leaderEpoch,
          };
        }
        h.baseOffset = next;
        updated ??= new Map();
        completed ??= [];
        const at = b;
        updateProducers(
          this.producerStateManager,
          h,
          updated,
          origin,
          () => records.subarray(at.position, at.position + at.size),
          completed,
        );
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
    if (updated !== undefined)
      applyProducerUpdates(this.producerStateManager, updated, completed, this.activeSegment.txnIndex);
    this.producerStateManager.updateMapEndOffset(this._logEndOffset);
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
    this.checkOpen();
    // A fetch response may end with a partial batch (the leader cuts at the fetch size): Kafka drops it.
    const batches = this.validateBatches(fetched, true);
    if (batches.length === 0) return this.emptyAppendInfo();
    const lastBatch = batches[batches.length - 1];
    const records = fetched.subarray(0, lastBatch.position + lastBatch.size);
    let prevLast = this._logEndOffset - 1n;
    let maxTimestamp = -1n;
    let shallowOffsetOfMaxTimestamp = -1n;
    let firstOffset = -1n;
    let lastEpoch = -1;
    const epochs: Array<{ epoch: number; offset: bigint }> = [];
    let updated: Map<bigint, ProducerAppendInfo> | undefined;
    let completed: CompletedTxn[] | undefined;
    for (const b of batches) {
      if (records.readInt32BE(b.position + PRODUCER_ID_OFFSET) >= 0) {
        updated ??= new Map();
        completed ??= [];
        const at = b;
        updateProducers(
          this.producerStateManager,
          readRecordBatchHeader(records, b.position),
          updated,
          "replication",
          () => records.subarray(at.position, at.position + at.size),
          completed,
        );
      }
      const base = records.readBigInt64BE(b.position);
      const last = base + BigInt(records.readInt32BE(b.position + LAST_OFFSET_DELTA_OFFSET));
      if (base <= prevLast) {
        throw new KafkaError(
          "UNKNOWN_SERVER_ERROR",
          `out of order offsets in the follower append to ${this.name}: batch ${base}..${last} after offset ${prevLast} (log end offset ${this._logEndOffset})`,
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
    if (updated !== undefined)
      applyProducerUpdates(this.producerStateManager, updated, completed, this.activeSegment.txnIndex);
    this.producerStateManager.updateMapEndOffset(this._logEndOffset);
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

  private emptyAppendInfo(): LogAppendInfo {
    return {
      firstOffset: -1n,
      lastOffset: -1n,
      maxTimestamp: -1n,
      shallowOffsetOfMaxTimestamp: -1n,
      logAppendTime: -1n,
      logStartOffset: this._logStartOffset,
      numBatches: 0,
      validBytes: 0,
      lastLeaderEpoch: -1,
    };
  }

  private maybeAssignEpoch(epoch: number, startOffset: bigint): void {
    const cache = this.leaderEpochCache;
    if (!cache) return;
    const latest = cache.latestEpoch();
    if (latest === undefined || epoch > latest) cache.assign(epoch, startOffset);
  }

  /** An append to a full log dir fails at once (ENOSPC, as the write would), nothing written. */
  private checkWritable(): void {
    if (!this.dirFull()) return;
    const e = new Error(
      `the log dir of ${this.name} is full (no space left on device)`,
    ) as NodeJS.ErrnoException;
    e.code = "ENOSPC";
    throw e;
  }

  private appendToSegment(
    records: Buffer,
    lastOffset: bigint,
    maxTimestamp: bigint,
    shallowOffsetOfMaxTimestamp: bigint,
    rollOffset: bigint,
  ): void {
    try {
      this.appendToActiveSegment(records, lastOffset, maxTimestamp, shallowOffsetOfMaxTimestamp, rollOffset);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOSPC" || code === "EDQUOT") this.onNoSpace(e as Error);
      throw e;
    }
  }

  private appendToActiveSegment(
    records: Buffer,
    lastOffset: bigint,
    maxTimestamp: bigint,
    shallowOffsetOfMaxTimestamp: bigint,
    rollOffset: bigint,
  ): void {
    this.checkWritable();
    let segment = this.activeSegment;
    if (
      segment.shouldRoll({
        maxSegmentMs: this._config.segmentMs,
        maxSegmentBytes: this._config.segmentBytes,
        maxTimestampInMessages: maxTimestamp,
        maxOffsetInMessages: lastOffset,
        messagesSize: records.length,
        now: this.time.milliseconds(),
      })
    ) {
      segment = this.roll(rollOffset);
    }
    segment.append(lastOffset, maxTimestamp, shallowOffsetOfMaxTimestamp, records);
    this._logEndOffset = lastOffset + 1n;
    if (this.unflushedMessages >= this._config.flushMessages) this.flush();
  }

  /**
   * Reads whole batches from startOffset, at most maxBytes (at least one batch with minOneMessage), up to
   * the bound of the isolation level. Throws OFFSET_OUT_OF_RANGE outside [logStartOffset, logEndOffset].
   * `allocate` provides the memory the bytes are read into (a MemoryPool's, for a fetch whose response
   * gives it back once written); a fresh buffer by default.
   */
  read(
    startOffset: bigint,
    maxBytes: number,
    isolation: FetchIsolation,
    minOneMessage: boolean,
    allocate?: (size: number) => Buffer,
  ): LogReadResult {
    this.checkOpen();
    const result = (records: Buffer, firstEntryIncomplete = false): LogReadResult => ({
      records,
      firstEntryIncomplete: firstEntryIncomplete || undefined,
      highWatermark: this._highWatermark,
      logStartOffset: this._logStartOffset,
      lastStableOffset: this.lastStableOffset,
      logEndOffset: this._logEndOffset,
    });
    if (startOffset < this._logStartOffset || startOffset > this._logEndOffset) {
      throw new KafkaError(
        "OFFSET_OUT_OF_RANGE",
        `Received request for offset ${startOffset} for partition ${this.name}, but we only have log segments in the range ${this._logStartOffset} to ${this._logEndOffset}.`,
      );
    }
    const maxOffset =
      isolation === "log-end"
        ? this._logEndOffset
        : isolation === "high-watermark"
          ? this._highWatermark
          : this.lastStableOffset;
    if (startOffset >= maxOffset) return result(Buffer.alloc(0));
    let i = this.floorSegmentIndex(startOffset);
    if (i < 0) i = 0;
    for (; i < this.segmentList.length; i++) {
      const seg = this.segmentList[i];
      const r = seg.read(
        startOffset,
        maxBytes,
        seg.size,
        minOneMessage,
        maxOffset === this._logEndOffset ? undefined : maxOffset,
        allocate,
      );
      if (r !== undefined) {
        const out = result(r.records, r.firstEntryIncomplete);
        if (isolation === "committed") {
          out.abortedTransactions =
            r.records.length === 0 ? [] : this.abortedTxnsOfRead(startOffset, i, r.records);
        }
        return out;
      }
      // Nothing at or after startOffset in this segment (a compacted gap): try the next one.
    }
    return result(Buffer.alloc(0));
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
   * (Kafka's UnifiedLog.collectAbortedTransactions).
   */
  collectAbortedTransactions(
    startOffset: bigint,
    upperBoundOffset: bigint,
    fromSegment = this.floorSegmentIndex(startOffset),
  ): AbortedTxn[] {
    const out: AbortedTxn[] = [];
    for (let i = Math.max(0, fromSegment); i < this.segmentList.length; i++) {
      const r = this.segmentList[i].txnIndex.collectAbortedTxns(startOffset, upperBoundOffset);
      out.push(...r.abortedTransactions);
      if (r.isComplete) break;
    }
    return out;
  }

  /** Index of the last segment whose base offset is <= offset (binary search), or -1. */
  private floorSegmentIndex(offset: bigint): number {
    let lo = 0;
    let hi = this.segmentList.length - 1;
    if (hi < 0 || this.segmentList[0].baseOffset > offset) return -1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.segmentList[mid].baseOffset <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** The segment that would hold `offset` (the floor by base offset). */
  segmentFor(offset: bigint): LogSegment | undefined {
    const i = this.floorSegmentIndex(offset);
    return i < 0 ? undefined : this.segmentList[i];
  }

  /**
   * Starts a new active segment at max(expectedNextOffset, logEndOffset): the old one gets its final time
   * index entry and its indexes trimmed (Kafka's roll). An empty active segment at that offset is kept.
   */
  roll(expectedNextOffset?: bigint): LogSegment {
    this.checkOpen();
    const newOffset =
      expectedNextOffset !== undefined && expectedNextOffset > this._logEndOffset
        ? expectedNextOffset
        : this._logEndOffset;
    const active = this.activeSegment;
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
    this.segmentList.push(seg);
    if (newOffset > this._logEndOffset) this._logEndOffset = newOffset;
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
    this.scheduler?.schedule("flush-log", () => this.flushInBackground(newOffset), 0);
    return seg;
  }

  /**
   * Flushes the segments holding [recoveryPoint, upTo) off the event loop, then moves the recovery point
   * to upTo unless the log was closed or truncated meanwhile (the next flush covers it then). A failed sync
   * leaves the recovery point where it was: a crash recovers those segments.
   */
  private async flushInBackground(upTo: bigint): Promise<void> {
    if (this.closed) return;
    const target = upTo > this._logEndOffset ? this._logEndOffset : upTo;
    if (target <= this._recoveryPoint) return;
    let i = this.floorSegmentIndex(this._recoveryPoint);
    if (i < 0) i = 0;
    const segments: LogSegment[] = [];
    for (; i < this.segmentList.length && this.segmentList[i].baseOffset < target; i++)
      segments.push(this.segmentList[i]);
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

  /** Background flushes (after a roll) not yet finished. */
  get flushesInProgress(): number {
    return this.pendingFlushes;
  }

  /**
   * Flushes (fdatasync) the segments holding [recoveryPoint, upTo) and moves the recovery point to upTo
   * (default: the log end offset).
   */
  flush(upTo: bigint = this._logEndOffset): void {
    this.checkOpen();
    const target = upTo > this._logEndOffset ? this._logEndOffset : upTo;
    if (target <= this._recoveryPoint) return;
    let i = this.floorSegmentIndex(this._recoveryPoint);
    if (i < 0) i = 0;
    for (; i < this.segmentList.length && this.segmentList[i].baseOffset < target; i++)
      this.segmentList[i].flush();
    this._recoveryPoint = target;
    this.lastFlushedTime = this.time.milliseconds();
  }

  /** Flush policy: flush.messages and flush.ms (Kafka's log flusher); returns whether it flushed. */
  maybeFlush(): boolean {
    if (this.closed) return false;
    const due =
      this.unflushedMessages >= this._config.flushMessages ||
      (this.unflushedMessages > 0n &&
        this.time.milliseconds() - this.lastFlushedTime >= this._config.flushMs);
    if (due) this.flush();
    return due;
  }

  /**
   * Removes everything at and after targetOffset (follower truncation); returns whether anything changed.
   * The leader-epoch cache, recovery point and high watermark follow.
   */
  truncateTo(targetOffset: bigint): boolean {
    this.checkOpen();
    if (targetOffset < 0n)
      throw new RangeError(`cannot truncate ${this.name} to a negative offset (${targetOffset})`);
    if (targetOffset >= this._logEndOffset) {
      // Nothing to cut from the log, but an epoch entry at its end goes (Kafka does the same).
      this.dropEpochEntriesAtLogEnd();
      return false;
    }
    if (this.segmentList[0].baseOffset > targetOffset) {
      this.truncateFullyAndStartAt(targetOffset);
      return true;
    }
    this.truncations++;
    const keep = this.segmentList.filter((s) => s.baseOffset <= targetOffset);
    const drop = this.segmentList.filter((s) => s.baseOffset > targetOffset);
    this.segmentList = keep;
    this.removeSegmentFiles(drop, "truncation");
    const active = this.activeSegment;
    active.truncateTo(targetOffset);
    const end = active.readNextOffset();
    this._logEndOffset = end < targetOffset ? end : targetOffset;
    if (this._logEndOffset < active.baseOffset) this._logEndOffset = active.baseOffset;
    this.dropEpochEntriesAtLogEnd();
    if (this._logStartOffset > this._logEndOffset) this._logStartOffset = this._logEndOffset;
    if (this._recoveryPoint > this._logEndOffset) this._recoveryPoint = this._logEndOffset;
    if (this._highWatermark > this._logEndOffset) this._highWatermark = this._logEndOffset;
    rebuildProducerState(
      this.producerStateManager,
      this.segmentList,
      this._logStartOffset,
      this._logEndOffset,
      this.time.milliseconds(),
    );
    this.logger.info(`Truncated log to offset ${targetOffset}, log end offset ${this._logEndOffset}`);
    return true;
  }

  /**
   * Drops the leader-epoch entries starting at or after the log end offset: a broker that led an epoch
   * without appending to it keeps an entry starting at its log end, which it would otherwise offer as its
   * last fetched epoch forever, diverging from every new leader.
   */
  dropEpochEntriesAtLogEnd(): void {
    this.leaderEpochCache?.truncateFromEnd(this._logEndOffset);
  }

  /** Deletes every segment and restarts the log empty at newOffset (Kafka's truncateFullyAndStartAt). */
  truncateFullyAndStartAt(newOffset: bigint): void {
    this.checkOpen();
    if (newOffset < 0n)
      throw new RangeError(`cannot restart ${this.name} at a negative offset (${newOffset})`);
    this.truncations++;
    const old = this.segmentList;
    this.segmentList = [];
    this.removeSegmentFiles(old, "truncate fully");
    this.segmentList.push(
      LogSegment.open(this.dir, newOffset, this._config, this.time, {
        preallocate: this._config.preallocate,
        initFileSize: this._config.segmentBytes,
      }),
    );
    this._logEndOffset = newOffset;
    this._logStartOffset = newOffset;
    this._recoveryPoint = newOffset;
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
    this.checkOpen();
    if (newLogStartOffset > this._highWatermark) {
      throw new KafkaError(
        "OFFSET_OUT_OF_RANGE",
        `Cannot increment the log start offset to ${newLogStartOffset} of partition ${this.name} since it is larger than the high watermark ${this._highWatermark}`,
      );
    }
    if (newLogStartOffset <= this._logStartOffset) return false;
    this._logStartOffset = newLogStartOffset;
    this.leaderEpochCache?.truncateFromStart(newLogStartOffset);
    if (this._recoveryPoint < newLogStartOffset) this._recoveryPoint = newLogStartOffset;
    this.producerStateManager.onLogStartOffsetIncremented(newLogStartOffset);
    this.logger.info(`Incremented log start offset to ${newLogStartOffset} due to ${reason}`);
    return true;
  }

  /**
   * ListOffsets by time: -1 latest (log end offset), -2 earliest (log start offset), -3 the max timestamp,
   * -4 earliest local; otherwise the first message with a timestamp >= ts. Undefined when none.
   */
  fetchOffsetByTimestamp(ts: bigint): TimestampAndOffset | undefined {
    this.checkOpen();
    const epochOf = (offset: bigint): number | undefined => this.leaderEpochCache?.epochForOffset(offset);
    if (ts === EARLIEST_TIMESTAMP || ts === EARLIEST_LOCAL_TIMESTAMP) {
      return { timestamp: -1n, offset: this._logStartOffset, leaderEpoch: epochOf(this._logStartOffset) };
    }
    if (ts === LATEST_TIMESTAMP) {
      return {
        timestamp: -1n,
        offset: this._logEndOffset,
        leaderEpoch: this.leaderEpochCache?.latestEpoch(),
      };
    }
    if (ts === MAX_TIMESTAMP) {
      let best: LogSegment | undefined;
      for (const s of this.segmentList)
        if (best === undefined || s.maxTimestamp > best.maxTimestamp) best = s;
      if (!best || best.maxTimestamp < 0n) return undefined;
      const offset = this.offsetOfMaxTimestamp(best.offsetOfMaxTimestamp, best.maxTimestamp);
      return { timestamp: best.maxTimestamp, offset, leaderEpoch: epochOf(offset) };
    }
    // Kafka: the first segment whose largest timestamp reaches ts (segment max timestamps are in memory).
    for (const s of this.segmentList) {
      if (s.size === 0 || s.maxTimestamp < ts) continue;
      const found = s.findOffsetByTimestamp(ts, this._logStartOffset);
      if (found) return { ...found, leaderEpoch: epochOf(found.offset) };
    }
    return undefined;
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
    this.checkOpen();
    const doomed = new Set(segments.filter((s) => this.segmentList.includes(s)));
    if (doomed.size === 0) return 0;
    if (doomed.size === this.segmentList.length) this.roll();
    // The active segment stays (after the roll above it is only in `doomed` when it is empty at the end).
    const active = this.activeSegment;
    const removed = [...doomed].filter((s) => s !== active);
    if (removed.length === 0) return 0;
    this.segmentList = this.segmentList.filter((s) => !doomed.has(s) || s === active);
    this.removeSegmentFiles(removed, reason);
    // Kafka's deleteProducerSnapshots: the snapshots named after the deleted segments go with them.
    for (const s of removed) this.producerStateManager.removeAndDeleteSnapshot(s.baseOffset);
    const firstBase = this.segmentList[0].baseOffset;
    if (firstBase > this._logStartOffset) {
      this._logStartOffset = firstBase;
      this.leaderEpochCache?.truncateFromStart(firstBase);
      if (this._highWatermark < firstBase) this._highWatermark = firstBase;
      if (this._recoveryPoint < firstBase) this._recoveryPoint = firstBase;
    }
    return removed.length;
  }

  /** Retention (retention.ms, retention.bytes, log start offset): deletes whole segments; returns how many. */
  deleteOldSegments(): number {
    if (this.closed) return 0;
    // Everything deleted by DeleteRecords (log start offset = log end offset): the active segment holds
    // nothing readable, so it is rolled and its space comes back now rather than at the next roll.
    if (this._logStartOffset >= this._logEndOffset && this.activeSegment.size > 0) this.roll();
    const list = this.segmentList;
    const summaries = list.map((s, i) => ({
      baseOffset: s.baseOffset,
      nextOffset: i + 1 < list.length ? list[i + 1].baseOffset : this._logEndOffset,
      sizeInBytes: s.size,
      largestTimestamp: s.maxTimestamp,
      lastModifiedMs: s.lastModified,
      segment: s,
    }));
    const decision = segmentsToDelete(summaries, {
      retentionMs: this._config.retentionMs,
      retentionBytes: this._config.retentionBytes,
      logStartOffset: this._logStartOffset,
      highWatermark: this._highWatermark,
      nowMs: this.time.milliseconds(),
      cleanupPolicy: this._config.cleanupPolicy,
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

  /** Renames to .deleted now; removes later (scheduler) or now. The segments are no longer in the list. */
  private removeSegmentFiles(segments: readonly LogSegment[], reason: string): void {
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
    const sortedOld = [...oldSegments].sort(byOffset).filter((s) => this.segmentList.includes(s));
    // Newest first, as Kafka: a crash part-way leaves the older ones `.cleaned`, and the loader drops every
    // `.swap` at or after the oldest `.cleaned`, so the swap is undone as a whole.
    for (const s of [...sortedNew].reverse()) {
      if (s.hasSuffix(CLEANED_FILE_SUFFIX)) s.changeFileSuffixes(CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX);
      else if (!s.hasSuffix(SWAP_FILE_SUFFIX))
        throw new Error(`replacement segment ${s.logFile} is neither .cleaned nor .swap`);
    }
    const oldSet = new Set(sortedOld);
    const kept = this.segmentList.filter((s) => !oldSet.has(s));
    this.removeSegmentFiles(sortedOld, "the cleaner replacing them");
    for (const s of sortedNew) s.changeFileSuffixes(SWAP_FILE_SUFFIX, "");
    // The renames are durable before the cleaner checkpoint moves past them (Kafka's flushDir).
    fsyncDirectory(this.dir);
    this.segmentList = [...kept, ...sortedNew].sort(byOffset);
  }

  /** Closes every segment (the active one gets its final time index entry and trimmed indexes). */
  close(): void {
    if (this.closed) return;
    this.producerExpireCheck?.cancel();
    try {
      this.producerStateManager.takeSnapshot(true);
    } catch (e) {
      // The next load rebuilds the state from the log (or an older snapshot): the log still closes.
      this.logger.warn(`Could not write the producer snapshot at close: ${(e as Error).message}`);
    }
    this.leaderEpochCache?.close();
    for (const s of this.segmentList) s.close();
    this.closed = true;
  }

  /** Closes every file without writing anything (a log that could not be closed cleanly). */
  closeWithoutWriting(): void {
    this.producerExpireCheck?.cancel();
    this.leaderEpochCache?.close(false);
    for (const s of this.segmentList) s.closeHandlers();
    this.closed = true;
  }

  /** Closes the log and removes its directory. */
  delete(): void {
    this.producerExpireCheck?.cancel();
    if (!this.closed) {
      for (const s of this.segmentList) s.closeHandlers();
      this.closed = true;
    }
    this.segmentList = [];
    rmSync(this.dir, { recursive: true, force: true });
  }

  toString(): string {
    return `UnifiedLog(dir=${this.dir}, topicPartition=${this.topicPartition.topic}-${this.topicPartition.partition}, logStartOffset=${this._logStartOffset}, logEndOffset=${this._logEndOffset}, highWatermark=${this._highWatermark})`;
  }
}
