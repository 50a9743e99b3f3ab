// Cleaner and CleanerThread: one clean of one log over its real segment files (Kafka's LogCleaner.Cleaner
// doClean / buildOffsetMap / cleanSegments), and one iteration of Kafka's CleanerThread (pick the filthiest
// log, clean it, checkpoint, then retention for `compact,delete` logs). The record filter itself is
// log-cleaner.ts; this module owns the files:
//
//   <topic>-<partition>/<base>.log.cleaned  .index.cleaned  .timeindex.cleaned  .txnindex.cleaned
//     one per group of old segments (groupSegmentsBySize: <= segment.bytes, <= segment.index.bytes, offsets
//     within int32 of the base); base = the group's first base offset; batches appended one by one with
//     LogSegment.append (so the offset and time indexes are rebuilt exactly as for appends); its .txnindex
//     holds the aborted transactions whose ABORT marker it kept; last-modified = the newest of the group.
//     It is flushed, then swapped in by UnifiedLog.replaceSegments (.cleaned -> .swap, old -> .deleted,
//     .swap -> live); LogLoader completes or undoes a swap a crash interrupted.
//
// Invariants:
// - Only offsets below the map's end (< firstUncleanableOffset, itself <= the active segment's base and the
//   last stable offset) are cleaned: the active segment is never touched.
// - Every offset kept keeps its value: batches keep their base and last offsets, so offsets are preserved
//   and only gaps appear.
// - Memory: the offset map (log.cleaner.dedupe.buffer.size / threads) plus one read chunk
//   (log.cleaner.io.buffer.size but at most STEP_BYTES, or one batch when larger, up to
//   max.message.bytes) and its output.
// - A failure leaves the log as it was (the .cleaned files are removed); the cleaner thread then marks
//   the partition uncleanable.
// Taking turns: a clean is a generator (Cleaner.cleanSteps, CleanerThread.iteration) that yields after
// each chunk it reads (at most STEP_BYTES) and each 8 MiB of the offset map it clears, so the log manager
// runs it in slices of a few milliseconds and the event loop serves requests, timers and the ZooKeeper
// session in between (Kafka runs its cleaner on threads of its own). The log may change between two
// steps, so after each one the clean checks that it was not aborted and that the segments it works on are
// still the log's; if not it stops (LogCleaningAbortedError): the `.cleaned` segment being written is
// removed, groups already swapped in stay (each is a complete clean of its segments), the checkpoint does
// not move. Truncation and deletion abort a clean through LogCleanerManager.abortAndPauseCleaning, which
// ends it before returning (CleanerThread.abortClean returns the generator), as Kafka's waits for its
// cleaner thread to stop. Appends go to the active segment, which a clean never touches.
// Cleaner.clean and CleanerThread.tryCleanFilthiestLog run the same steps to the end at once.

import { Logger } from "../../common/logger.js";
import type { Time } from "../../common/time.js";
import { type TopicPartition, topicPartitionKey } from "../../common/topic-partition.js";
import {
  BATCH_LENGTH_OFFSET,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  MAX_TIMESTAMP_OFFSET,
} from "../../protocol/records/index.js";
import { CLEANED_FILE_SUFFIX } from "../log-file-names.js";
import { LogSegment } from "../log-segment.js";
import type { UnifiedLog } from "../unified-log.js";
import { type CleanerConfig, offsetMapMemoryPerThread } from "./cleaner-config.js";
import {
  type AbortedTransaction,
  CleanedTransactionState,
  type CleanStats,
  cleanBatches,
  emptyCleanStats,
  groupSegmentsBySize,
  type LastRecordOfProducer,
  OffsetMapBuilder,
} from "./log-cleaner.js";
import type { LogCleanerManager } from "./log-cleaner-manager.js";
import { SkimpyOffsetMap } from "./offset-map.js";

/** The clean of a partition was aborted (it is paused, truncated or deleted): Kafka's LogCleaningAbortedException. */
export class LogCleaningAbortedError extends Error {
  constructor(message = "the cleaning was aborted") {
    super(message);
    this.name = "LogCleaningAbortedError";
  }
}

/** What a clean did. */
export interface CleanSummary {
  /** The new cleaner checkpoint: offsets below it are clean. */
  endOffset: bigint;
  /** The offset map filled up before the end of the dirty section. */
  mapFull: boolean;
  /** Old segments read and cleaned segments written. */
  segmentsCleaned: number;
  cleanedSegmentsWritten: number;
  stats: CleanStats;
}

function addStats(into: CleanStats, s: CleanStats): void {
  for (const k of Object.keys(into) as (keyof CleanStats)[]) into[k] += s[k];
}

/** Last offset of the last whole batch in `records` (batches back to back), or undefined when none. */
function lastOffsetOfBatches(records: Buffer): bigint | undefined {
  let pos = 0;
  let last: bigint | undefined;
  while (pos + LOG_OVERHEAD <= records.length) {
    const size = LOG_OVERHEAD + records.readInt32BE(pos + BATCH_LENGTH_OFFSET);
    if (pos + size > records.length) break;
    last = records.readBigInt64BE(pos) + BigInt(records.readInt32BE(pos + LAST_OFFSET_DELTA_OFFSET));
    pos += size;
  }
  return last;
}

/**
 * Reads a segment from the batch holding `from` to its end, in chunks of whole batches of about
 * `chunkBytes` (a larger batch comes alone), calling `consume` with each; `consume` returns the bytes it
 * used (whole batches), or a value < the chunk to stop. Yields after each chunk but the last, and calls
 * `check` when resumed (it throws to stop).
 */
function* readSegmentChunks(
  seg: LogSegment,
  from: bigint,
  chunkBytes: number,
  consume: (chunk: Buffer) => number,
  check: () => void,
): Generator<void, void, void> {
  let offset = from;
  for (;;) {
    const r = seg.read(offset, chunkBytes, seg.size, true);
    if (r === undefined || r.records.length === 0) return;
    const used = consume(r.records);
    if (used < r.records.length) return;
    const last = lastOffsetOfBatches(r.records);
    if (last === undefined) return;
    offset = last + 1n;
    yield;
    check();
  }
}

/**
 * The most a clean reads (and so maps or filters) in one step, below log.cleaner.io.buffer.size (512 KiB):
 * 128 KiB of small records take a few milliseconds to map or clean, which bounds how long the event loop
 * waits past a slice's end (a batch larger than this still comes whole).
 */
const STEP_BYTES = 128 * 1024;

/** Runs a generator to its end and returns its value. */
function runToEnd<T>(steps: Generator<void, T, void>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

export interface CleanerOptions {
  config: CleanerConfig;
  time: Time;
  logger?: Logger;
  /** Checked between segment groups; true stops the clean (LogCleaningAbortedError). */
  isAborted?: () => boolean;
}

/** One clean of one log at a time (Kafka's Cleaner); owns the offset map, allocated on first use. */
export class Cleaner {
  private map: SkimpyOffsetMap | undefined;
  private readonly logger: Logger;

  constructor(
    readonly config: CleanerConfig,
    private readonly time: Time,
    logger?: Logger,
  ) {
    this.logger = logger ?? new Logger("kafka.log.LogCleaner");
  }

  private offsetMap(): SkimpyOffsetMap {
    if (this.map === undefined) this.map = new SkimpyOffsetMap(offsetMapMemoryPerThread(this.config));
    return this.map;
  }

  /**
   * Cleans [firstDirtyOffset, firstUncleanableOffset) of `log` into cleaned segments (Kafka's doClean).
   * firstUncleanableOffset must be segment aligned (LogToClean's). `activeProducers`: the producers' last
   * batches, from the producer state manager (none exists yet: an empty map).
   */
  clean(
    log: UnifiedLog,
    cleanable: { firstDirtyOffset: bigint; firstUncleanableOffset: bigint },
    options: {
      activeProducers?: ReadonlyMap<bigint, LastRecordOfProducer>;
      isAborted?: () => boolean;
    } = {},
  ): CleanSummary {
    return runToEnd(this.cleanSteps(log, cleanable, options));
  }

  /**
   * clean() as steps: yields after each chunk read (at most STEP_BYTES) and each piece of the offset map
   * cleared, so the caller can hand the event loop back between them. When resumed it stops with LogCleaningAbortedError if `isAborted`
   * says so or a segment it works on has left the log (retention, truncation, deletion); returning the
   * generator early removes the `.cleaned` segment being written. Groups swapped in stay (each is a
   * complete clean of its segments); the checkpoint only moves when the whole clean ends.
   */
  *cleanSteps(
    log: UnifiedLog,
    cleanable: { firstDirtyOffset: bigint; firstUncleanableOffset: bigint },
    options: {
      activeProducers?: ReadonlyMap<bigint, LastRecordOfProducer>;
      isAborted?: () => boolean;
    } = {},
  ): Generator<void, CleanSummary, void> {
    const { firstDirtyOffset } = cleanable;
    const segmentsNow = log.segments();
    const active = segmentsNow[segmentsNow.length - 1];
    // Never the active segment, never past the last stable offset.
    let upper = cleanable.firstUncleanableOffset;
    if (upper > active.baseOffset) upper = active.baseOffset;
    const nowMs = this.time.milliseconds();
    const map = this.offsetMap();

    // 1. The offset map over the dirty section.
    yield* map.clearSteps();
    const dirty = segmentsNow.filter(
      (s, i) =>
        s !== active && s.baseOffset < upper && (segmentsNow[i + 1]?.baseOffset ?? 0n) > firstDirtyOffset,
    );
    const abortedInDirty: AbortedTransaction[] = [];
    for (const s of dirty)
      abortedInDirty.push(...s.txnIndex.collectAbortedTxns(firstDirtyOffset, upper).abortedTransactions);
    const builder = new OffsetMapBuilder(map, {
      startOffset: firstDirtyOffset,
      abortedTransactions: abortedInDirty,
      loadFactor: this.config.dedupeBufferLoadFactor,
    });
    const check = (segments: readonly LogSegment[]) => () =>
      checkStillCleaning(log, segments, options.isAborted);
    for (let i = 0; i < dirty.length && !builder.full; i++) {
      const s = dirty[i];
      const next = i + 1 < dirty.length ? dirty[i + 1].baseOffset : upper;
      let from = firstDirtyOffset;
      if (s.baseOffset > from) from = s.baseOffset;
      yield* readSegmentChunks(
        s,
        from,
        Math.min(this.config.ioBufferSize, STEP_BYTES),
        (chunk) => builder.addBatches(chunk),
        check([s]),
      );
      if (!builder.full) builder.endSegment(next);
      yield;
      check(dirty.slice(i + 1, i + 2))();
    }
    let endOffset = builder.endOffset;
    if (endOffset > upper) endOffset = upper;
    const stats = emptyCleanStats();
    if (endOffset <= firstDirtyOffset) {
      return {
        endOffset: firstDirtyOffset,
        mapFull: builder.full,
        segmentsCleaned: 0,
        cleanedSegmentsWritten: 0,
        stats,
      };
    }
    this.logger.info(
      `Cleaning log ${log.name} (cleaning prior to ${endOffset}, first dirty offset ${firstDirtyOffset}, first uncleanable offset ${upper}, ${builder.stats.messagesRead} messages mapped${builder.full ? ", offset map full" : ""})`,
    );

    // 2. Clean every segment below endOffset, group by group, into .cleaned segments swapped in one by one.
    const toClean = log.segments().filter((s) => s !== log.activeSegment && s.baseOffset < endOffset);
    const groups = groupSegmentsBySize(
      toClean.map((s) => ({
        baseOffset: s.baseOffset,
        sizeInBytes: s.size,
        offsetIndexSizeInBytes: s.offsetIndex.sizeInBytes,
        timeIndexSizeInBytes: s.timeIndex.sizeInBytes,
        segment: s,
      })),
      log.config.segmentBytes,
      log.config.segmentIndexBytes,
      upper,
    );
    const state = new CleanedTransactionState();
    let segmentsCleaned = 0;
    for (const group of groups) {
      const segs = group.map((g) => g.segment);
      checkStillCleaning(log, segs, options.isAborted);
      yield* this.cleanSegments(
        log,
        segs,
        state,
        nowMs,
        upper,
        options.activeProducers ?? new Map(),
        stats,
        check(segs),
      );
      segmentsCleaned += segs.length;
      yield;
    }
    this.logger.info(
      `Cleaned log ${log.name}: ${segmentsCleaned} segments into ${groups.length}, ${stats.bytesRead} bytes read, ${stats.bytesRetained} retained, ${stats.messagesRead} messages read, ${stats.messagesRetained} retained, ${stats.tombstonesRemoved} tombstones removed; new checkpoint ${endOffset}`,
    );
    return {
      endOffset,
      mapFull: builder.full,
      segmentsCleaned,
      cleanedSegmentsWritten: groups.length,
      stats,
    };
  }

  /**
   * Cleans one group of segments into one `.cleaned` segment and swaps it in (Kafka's cleanSegments);
   * yields after each chunk, then `check`s. Unless swapped in, the `.cleaned` segment is removed, also
   * when the generator is returned early.
   */
  private *cleanSegments(
    log: UnifiedLog,
    segments: readonly LogSegment[],
    state: CleanedTransactionState,
    nowMs: number,
    upperBoundOffsetOfCleaningRound: bigint,
    activeProducers: ReadonlyMap<bigint, LastRecordOfProducer>,
    stats: CleanStats,
    check: () => void,
  ): Generator<void, void, void> {
    const config = log.config;
    const cleaned = LogSegment.open(log.dir, segments[0].baseOffset, config, this.time, {
      fileSuffix: CLEANED_FILE_SUFFIX,
      preallocate: config.preallocate,
      initFileSize: config.segmentBytes,
    });
    let swapped = false;
    try {
      let newestModified = 0;
      for (let i = 0; i < segments.length; i++) {
        const s = segments[i];
        const upper = i + 1 < segments.length ? segments[i + 1].baseOffset : s.readNextOffset();
        // The whole segment's aborted transactions: the cleaned .txnindex is rebuilt from them.
        state.addAbortedTransactions(s.txnIndex.collectAbortedTxns(s.baseOffset, upper).abortedTransactions);
        const modified = s.lastModified;
        if (modified > newestModified) newestModified = modified;
        yield* readSegmentChunks(
          s,
          s.baseOffset,
          Math.min(this.config.ioBufferSize, STEP_BYTES),
          (chunk) => {
            const r = cleanBatches(chunk, {
              map: this.offsetMap(),
              nowMs,
              deleteRetentionMs: config.deleteRetentionMs,
              transactions: state,
              activeProducers,
              upperBoundOffsetOfCleaningRound,
            });
            addStats(stats, r.stats);
            appendBatches(cleaned, r.output);
            return r.bytesRead;
          },
          check,
        );
        for (const t of state.takeRetainedAbortedTransactions()) {
          cleaned.txnIndex.append({
            producerId: t.producerId,
            firstOffset: t.firstOffset,
            lastOffset: t.lastOffset,
            lastStableOffset: t.lastStableOffset ?? t.lastOffset,
          });
        }
      }
      // Durable before the swap; then the final time index entry and trimmed indexes.
      cleaned.flush();
      cleaned.onBecomeInactiveSegment();
      cleaned.flush();
      cleaned.setLastModified(newestModified);
      this.logger.debug(
        `Swapping in cleaned segment ${cleaned.baseOffset} for segments [${segments.map((s) => s.baseOffset).join(",")}] in log ${log.name}`,
      );
      log.replaceSegments([cleaned], segments);
      swapped = true;
    } finally {
      if (!swapped) {
        try {
          cleaned.deleteIfExists();
        } catch (e) {
          // The loader removes a leftover .cleaned segment at the next start.
          this.logger.warn(`Could not remove ${cleaned.logFile}: ${(e as Error).message}`);
        }
      }
    }
  }
}

/**
 * Between two steps of a clean: throws LogCleaningAbortedError when the clean was aborted or one of
 * `segments` (those the clean is about to read or replace) is no longer in the log.
 */
function checkStillCleaning(
  log: UnifiedLog,
  segments: readonly LogSegment[],
  isAborted: (() => boolean) | undefined,
): void {
  if (isAborted?.()) throw new LogCleaningAbortedError(`the cleaning of ${log.name} was aborted`);
  if (segments.length === 0) return;
  const live = log.segments();
  for (const s of segments) {
    if (!live.includes(s))
      throw new LogCleaningAbortedError(
        `segment ${s.baseOffset} of ${log.name} left the log during the clean (retention, truncation or deletion)`,
      );
  }
}

/** Appends batches one by one, so each gets its own index decision as Kafka's per-batch append does. */
function appendBatches(seg: LogSegment, records: Buffer): void {
  let pos = 0;
  while (pos + LOG_OVERHEAD <= records.length) {
    const size = LOG_OVERHEAD + records.readInt32BE(pos + BATCH_LENGTH_OFFSET);
    const batch = records.subarray(pos, pos + size);
    const last = batch.readBigInt64BE(0) + BigInt(batch.readInt32BE(LAST_OFFSET_DELTA_OFFSET));
    seg.append(last, batch.readBigInt64BE(MAX_TIMESTAMP_OFFSET), last, batch);
    pos += size;
  }
}

/**
 * Kafka's CleanerThread, one iteration at a time: clean the filthiest log, checkpoint it, then run
 * retention on the `compact,delete` logs. The caller runs an iteration in slices (runSlice) so the event
 * loop gets turns during a long clean, or at once (tryCleanFilthiestLog); either says whether a log was
 * cleaned (the caller backs off when not).
 */
export class CleanerThread {
  private readonly cleaner: Cleaner;
  private readonly logger: Logger;
  /** Summary of the last clean (tests, metrics). */
  lastClean: { tp: string; summary: CleanSummary } | undefined;
  /** The iteration in progress between two slices. */
  private work: Generator<void, boolean, void> | undefined;
  /** topicPartitionKey of the log the iteration in progress is cleaning. */
  private cleaningKey: string | undefined;
  /** True while a step runs (an abort from inside a step is seen at the next check instead). */
  private stepping = false;

  constructor(
    readonly manager: LogCleanerManager,
    config: CleanerConfig,
    private readonly time: Time,
    logger?: Logger,
  ) {
    this.logger = logger ?? new Logger("kafka.log.LogCleaner", "kafka-log-cleaner-thread-0");
    this.cleaner = new Cleaner(config, time, this.logger);
    manager.setAbortListener((tp) => this.abortClean(tp));
  }

  /** Whether an iteration is in progress (started by runSlice and not finished). */
  get inProgress(): boolean {
    return this.work !== undefined;
  }

  /** Runs one iteration (or the rest of the one in progress) to its end; whether a log was cleaned. */
  tryCleanFilthiestLog(): boolean {
    for (;;) {
      const r = this.runSlice(Number.POSITIVE_INFINITY);
      if (r !== undefined) return r;
    }
  }

  /**
   * Runs the iteration in progress (or a new one) until it ends or for about `sliceMs` (by the injected
   * Time), whichever comes first. Returns whether a log was cleaned once the iteration ended, undefined
   * while it is unfinished (call again after the event loop had its turn).
   */
  runSlice(sliceMs: number): boolean | undefined {
    if (this.work === undefined) this.work = this.iteration();
    const work = this.work;
    const start = this.time.nanoseconds();
    for (;;) {
      let r: IteratorResult<void, boolean>;
      this.stepping = true;
      try {
        r = work.next();
      } catch (e) {
        this.work = undefined;
        throw e;
      } finally {
        this.stepping = false;
      }
      if (r.done) {
        if (this.work === work) this.work = undefined;
        return r.value;
      }
      if (Number(this.time.nanoseconds() - start) / 1e6 >= sliceMs) return undefined;
    }
  }

  /**
   * Ends the iteration in progress now, if it is cleaning `tp` (or whatever it does, without `tp`): its
   * `.cleaned` segment is removed and the manager told the clean is done (LogCleanerManager calls this
   * from abortAndPauseCleaning; the log manager at shutdown).
   */
  abortClean(tp?: TopicPartition): void {
    const work = this.work;
    if (work === undefined || this.stepping) return;
    if (tp !== undefined && this.cleaningKey !== topicPartitionKey(tp)) return;
    this.work = undefined;
    work.return(false);
  }

  /** One iteration as steps (see runSlice). */
  private *iteration(): Generator<void, boolean, void> {
    const m = this.manager;
    const ltc = m.grabFilthiestCompactedLog();
    let cleaned = false;
    if (ltc !== null) {
      cleaned = true;
      const { tp, log, dir } = ltc.key;
      let endOffset = ltc.firstDirtyOffset;
      this.cleaningKey = topicPartitionKey(tp);
      try {
        const summary = yield* this.cleaner.cleanSteps(
          log,
          { firstDirtyOffset: ltc.firstDirtyOffset, firstUncleanableOffset: ltc.firstUncleanableOffset },
          // Each active producer's last batch is kept, so its state survives a rebuild from the log.
          {
            activeProducers: log.producerStateManager.lastRecordsOfActiveProducers(),
            isAborted: () => m.isAborted(tp),
          },
        );
        endOffset = summary.endOffset;
        this.lastClean = { tp: topicPartitionKey(tp), summary };
      } catch (e) {
        if (!(e instanceof LogCleaningAbortedError)) {
          this.logger.warn(
            `Unexpected exception thrown when cleaning log ${log.name}. Marking its partition (${topicPartitionKey(tp)}) as uncleanable: ${(e as Error).stack ?? e}`,
          );
          m.markPartitionUncleanable(dir, tp);
        }
      } finally {
        this.cleaningKey = undefined;
        m.doneCleaning(tp, dir, endOffset);
      }
    }
    const deletable = m.deletableLogs();
    try {
      for (const { log } of deletable) log.deleteOldSegments();
    } finally {
      m.doneDeleting(deletable.map((d) => d.tp));
    }
    return cleaned;
  }
}
