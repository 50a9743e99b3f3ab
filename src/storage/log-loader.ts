// LogLoader: turns a partition directory into an ordered list of LogSegments with a consistent end, as
// Kafka's LogLoader. It owns the rules for what is on disk at open time:
// - stray `.deleted` files are removed (a deletion was in flight), `.cleaned` files too (a cleaner pass
//   that never reached the swap), and with them any `.swap` file at or after the first `.cleaned` offset;
//   the remaining `.swap` files complete their swap: segments they cover are removed, then `.swap` is
//   dropped from the names; index files without a `.log` are removed;
// - every segment's indexes are checked (sizes, ordering, spot checks against the log) and rebuilt from
//   the `.log` when missing, corrupt or inconsistent: an index is never trusted blindly;
// - after an unclean shutdown every segment from the one holding the recovery point on is recovered:
//   each batch's length, magic and CRC32C is checked, the log is cut at the first invalid byte, the
//   indexes are rebuilt, and every later segment leaves the log, so offsets stay contiguous (Kafka's
//   recoverLog). Unlike Kafka nothing is destroyed: the cut bytes (split into intact batches and damaged
//   ranges) and the later segments are moved to a quarantine folder in the partition directory with a
//   manifest (log-quarantine.ts), one ERROR line names them, and `tributary log-recover` restores them;
// - the leader-epoch cache is re-fed from recovered batches and truncated to the new log end offset;
// - the producer state is rebuilt: the latest readable `.snapshot` at or below the log end, then the log
//   replayed from there (snapshots past the end are deleted; without one the whole log is replayed);
// - a recovered segment (or one whose indexes were rebuilt) gets its `.txnindex` rebuilt from its control
//   batches: the producer state is brought to the segment's base offset, then the segment is replayed
//   batch by batch, each ABORT marker adding its transaction (Kafka's recoverSegment).
// One INFO line per partition (WARN when something was cut) says what happened; a quarantine adds one ERROR.

import { existsSync, readdirSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { Logger } from "../common/logger.js";
import type { Time } from "../common/time.js";
import { parseTopicPartitionDir } from "../common/topic-partition.js";
import type { LeaderEpochFileCache } from "./leader-epoch/leader-epoch-file-cache.js";
import type { LogConfig } from "./log-config.js";
import {
  CLEANED_FILE_SUFFIX,
  DELETED_FILE_SUFFIX,
  isIndexFile,
  LOG_FILE_SUFFIX,
  offsetFromFileName,
  offsetIndexFile,
  SWAP_FILE_SUFFIX,
  stripLastSuffix,
  timeIndexFile,
} from "./log-file-names.js";
import {
  describeRanges,
  listQuarantines,
  QUARANTINE_DIR_PREFIX,
  QuarantineWriter,
} from "./log-quarantine.js";
import { LogSegment } from "./log-segment.js";
import {
  rebuildProducerState,
  replaySegmentRebuildingTxnIndex,
} from "./producer-state/producer-state-loader.js";
import type { ProducerStateManager } from "./producer-state/producer-state-manager.js";

export interface LogLoadParams {
  dir: string;
  config: LogConfig;
  time: Time;
  /** Offset up to which the log was flushed (from recovery-point-offset-checkpoint). */
  recoveryPoint: bigint;
  /** From log-start-offset-checkpoint (default: the first segment's base offset). */
  logStartOffset?: bigint;
  hadCleanShutdown: boolean;
  logger?: Logger;
  leaderEpochCache?: LeaderEpochFileCache;
  /** Rebuilt to the loaded log end offset (from its snapshot, then the log). */
  producerStateManager?: ProducerStateManager;
}

/** What loading did, for the log line and for tests. */
export interface LogLoadReport {
  /** Bytes cut from the segment where recovery found the first invalid byte. */
  bytesTruncated: number;
  /** Base offset of the segment that was cut, when one was. */
  truncatedSegment?: bigint;
  /** Why recovery stopped there. */
  truncationReason?: string;
  /** Segments deleted because they came before the log start offset checkpoint. */
  segmentsDeleted: number;
  /** Bytes of those deleted segments. */
  bytesDeleted: number;
  /** Segments moved to the quarantine because they came after the cut. */
  segmentsQuarantined: number;
  /** Bytes moved or copied to the quarantine by this load (cut tail and later segments). */
  bytesQuarantined: number;
  /** The quarantine folder this load created, if any. */
  quarantineDir?: string;
  /** Bytes in this partition's quarantines not restored yet (this load's and earlier ones). */
  unrestoredQuarantineBytes: number;
  /** Segments whose indexes were rebuilt because they were missing or failed the sanity check. */
  indexesRebuilt: bigint[];
  /** Segments recovered (every batch validated) because of the unclean shutdown. */
  segmentsRecovered: number;
  /** Stray files removed (.deleted, .cleaned, invalid .swap, orphaned indexes). */
  strayFilesRemoved: number;
  /** .swap segments whose swap was completed. */
  swapsCompleted: number;
}

export interface LoadedLog {
  segments: LogSegment[];
  logStartOffset: bigint;
  recoveryPoint: bigint;
  logEndOffset: bigint;
  report: LogLoadReport;
}

/** A load that changed nothing. */
function emptyReport(): LogLoadReport {
  return {
    bytesTruncated: 0,
    segmentsDeleted: 0,
    bytesDeleted: 0,
    segmentsQuarantined: 0,
    bytesQuarantined: 0,
    unrestoredQuarantineBytes: 0,
    indexesRebuilt: [],
    segmentsRecovered: 0,
    strayFilesRemoved: 0,
    swapsCompleted: 0,
  };
}

export class LogLoader {
  private readonly logger: Logger;
  /** Segments whose .txnindex was emptied by a recovery (rebuilt once the producer state is loaded). */
  private readonly txnIndexReset = new Set<LogSegment>();
  private readonly report: LogLoadReport = emptyReport();

  private readonly quarantine: QuarantineWriter;
  private readonly partitionName: string;

  constructor(private readonly p: LogLoadParams) {
    this.logger = p.logger ?? new Logger("kafka.log.LogLoader", `LogLoader dir=${p.dir}`);
    this.partitionName = basename(p.dir);
    const tp = parseTopicPartitionDir(this.partitionName);
    this.quarantine = new QuarantineWriter(
      p.dir,
      tp?.topic ?? this.partitionName,
      tp?.partition ?? -1,
      p.time.milliseconds(),
    );
  }

  static load(params: LogLoadParams): LoadedLog {
    return new LogLoader(params).load();
  }

  /**
   * A partition directory just created (LogManager.getOrCreateLog): there is nothing to scan, recover or
   * replay, so the log is one empty segment at offset 0, as load() would make it, without reading the
   * directory or removing files that cannot be there (a LeaderAndIsr creates thousands of these).
   */
  static loadNew(params: LogLoadParams): LoadedLog {
    const segment = LogSegment.open(params.dir, 0n, params.config, params.time, { newDir: true });
    return {
      segments: [segment],
      logStartOffset: 0n,
      recoveryPoint: 0n,
      logEndOffset: 0n,
      report: emptyReport(),
    };
  }

  load(): LoadedLog {
    const { dir, config, time } = this.p;
    const swapFiles = this.removeTempFilesAndCollectSwapFiles();
    this.completeSwaps(swapFiles);

    const segments = this.loadSegmentFiles();
    let recoveryPoint = this.p.recoveryPoint;
    if (!this.p.hadCleanShutdown) this.recoverFrom(segments, recoveryPoint);

    // A log start offset checkpoint past the end means everything below it is gone (Kafka: the log is
    // truncated fully and restarts at the checkpoint).
    let logEndOffset = segments.length > 0 ? segments[segments.length - 1].readNextOffset() : 0n;
    const checkpointStart = this.p.logStartOffset;
    if (checkpointStart !== undefined && segments.length > 0 && logEndOffset < checkpointStart) {
      for (const s of segments.splice(0)) this.deleteSegment(s);
    }
    if (segments.length === 0) {
      const base = checkpointStart !== undefined && checkpointStart > 0n ? checkpointStart : 0n;
      segments.push(LogSegment.open(dir, base, config, time));
      logEndOffset = base;
    }
    // The active segment gets its full index capacity back.
    segments[segments.length - 1].resizeIndexes(config.segmentIndexBytes);

    const firstBase = segments[0].baseOffset;
    let logStartOffset =
      checkpointStart !== undefined && checkpointStart > firstBase ? checkpointStart : firstBase;
    if (logStartOffset > logEndOffset) logStartOffset = logEndOffset;
    const changed =
      this.report.bytesTruncated > 0 ||
      this.report.segmentsDeleted > 0 ||
      this.report.segmentsQuarantined > 0;
    if (this.p.hadCleanShutdown && !changed) recoveryPoint = logEndOffset;
    else if (recoveryPoint > logEndOffset) recoveryPoint = logEndOffset;
    if (recoveryPoint < logStartOffset) recoveryPoint = logStartOffset;

    const cache = this.p.leaderEpochCache;
    if (cache) {
      cache.truncateFromEnd(logEndOffset, "background");
      cache.truncateFromStart(logStartOffset);
    }
    if (this.p.producerStateManager) {
      // Recovered segments' .txnindex, in offset order, each from the producer state at its base offset.
      for (const seg of segments) {
        if (!this.txnIndexReset.has(seg)) continue;
        const psm = this.p.producerStateManager;
        rebuildProducerState(psm, segments, logStartOffset, seg.baseOffset, time.milliseconds(), false);
        replaySegmentRebuildingTxnIndex(psm, seg);
      }
      rebuildProducerState(
        this.p.producerStateManager,
        segments,
        logStartOffset,
        logEndOffset,
        time.milliseconds(),
      );
    }
    this.finishQuarantine(logEndOffset);
    this.logSummary(segments.length, logStartOffset, logEndOffset, recoveryPoint);
    return { segments, logStartOffset, recoveryPoint, logEndOffset, report: this.report };
  }

  /** Kafka's removeTempFilesAndCollectSwapFiles. */
  private removeTempFilesAndCollectSwapFiles(): string[] {
    const dir = this.p.dir;
    const names = readdirSync(dir);
    let minCleanedFileOffset: bigint | undefined;
    const swaps: string[] = [];
    for (const name of names) {
      if (name.endsWith(DELETED_FILE_SUFFIX)) {
        this.removeStray(name, "a deletion in flight");
      } else if (name.endsWith(CLEANED_FILE_SUFFIX)) {
        const off = offsetFromFileName(name);
        if (off !== undefined && (minCleanedFileOffset === undefined || off < minCleanedFileOffset)) {
          minCleanedFileOffset = off;
        }
        this.removeStray(name, "an unfinished cleaning");
      } else if (name.endsWith(SWAP_FILE_SUFFIX)) {
        swaps.push(name);
      }
    }
    const validSwaps: string[] = [];
    for (const name of swaps) {
      const off = offsetFromFileName(name);
      if (off === undefined || (minCleanedFileOffset !== undefined && off >= minCleanedFileOffset)) {
        this.removeStray(name, "a swap from an unfinished cleaning");
      } else {
        validSwaps.push(name);
      }
    }
    // Index files whose .log is missing.
    for (const name of readdirSync(dir)) {
      if (!isIndexFile(name)) continue;
      const off = offsetFromFileName(name);
      if (off === undefined) continue;
      const logName = `${name.slice(0, 20)}${LOG_FILE_SUFFIX}`;
      if (!existsSync(join(dir, logName)) && !existsSync(join(dir, logName + SWAP_FILE_SUFFIX))) {
        this.removeStray(name, "an orphaned index file");
      }
    }
    return validSwaps;
  }

  private removeStray(name: string, why: string): void {
    rmSync(join(this.p.dir, name), { force: true });
    this.report.strayFilesRemoved++;
    this.logger.debug(`Deleted stray file ${name} (${why})`);
  }

  /** Kafka's swap completion: delete the segments the .swap files replace, then drop the suffix. */
  private completeSwaps(swapFiles: string[]): void {
    const dir = this.p.dir;
    const logSwaps = swapFiles.filter((n) => stripLastSuffix(n).endsWith(LOG_FILE_SUFFIX));
    if (logSwaps.length === 0) {
      for (const n of swapFiles) renameSync(join(dir, n), join(dir, stripLastSuffix(n)));
      return;
    }
    let minSwap: bigint | undefined;
    let maxSwap: bigint | undefined;
    for (const n of logSwaps) {
      const base = offsetFromFileName(n)!;
      const seg = LogSegment.open(dir, base, this.p.config, this.p.time, {
        fileAlreadyExists: true,
        fileSuffix: SWAP_FILE_SUFFIX,
      });
      const next = seg.readNextOffset();
      seg.closeHandlers();
      if (minSwap === undefined || base < minSwap) minSwap = base;
      if (maxSwap === undefined || next > maxSwap) maxSwap = next;
    }
    for (const name of readdirSync(dir)) {
      if (name.endsWith(SWAP_FILE_SUFFIX)) continue;
      const off = offsetFromFileName(name);
      if (
        off !== undefined &&
        minSwap !== undefined &&
        maxSwap !== undefined &&
        off >= minSwap &&
        off < maxSwap
      ) {
        rmSync(join(dir, name), { force: true });
      }
    }
    for (const name of readdirSync(dir)) {
      if (name.endsWith(SWAP_FILE_SUFFIX)) renameSync(join(dir, name), join(dir, stripLastSuffix(name)));
    }
    this.report.swapsCompleted += logSwaps.length;
  }

  /** Opens every .log in offset order; indexes that are missing or fail the sanity check are rebuilt. */
  private loadSegmentFiles(): LogSegment[] {
    const { dir, config, time } = this.p;
    const bases = readdirSync(dir)
      .filter((n) => /^\d{20}\.log$/.test(n))
      .map((n) => BigInt(n.slice(0, 20)))
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const segments: LogSegment[] = [];
    for (const base of bases) {
      const indexMissing = !existsSync(offsetIndexFile(dir, base)) || !existsSync(timeIndexFile(dir, base));
      const seg = LogSegment.open(dir, base, config, time, { fileAlreadyExists: true });
      let problem: string | undefined = indexMissing ? "missing index files" : undefined;
      if (!problem) {
        try {
          seg.sanityCheck();
          const next = seg.readNextOffset();
          const lastIdx = seg.offsetIndex.entries > 0 ? seg.offsetIndex.lastOffset : undefined;
          const lastTime = seg.timeIndex.entries > 0 ? seg.timeIndex.lastEntry().offset : undefined;
          if ((lastIdx !== undefined && lastIdx >= next) || (lastTime !== undefined && lastTime >= next)) {
            problem = `index entries past the segment's next offset ${next}`;
          } else if (seg.size - seg.offsetIndex.lastEntry().position > this.maxIndexGap()) {
            // Lookups would stay correct but scan far: an index cut short (or never written) is rebuilt.
            problem = `the offset index ends ${seg.size - seg.offsetIndex.lastEntry().position} bytes before the end of the log`;
          } else if (
            seg.timeIndex.entries === 0 &&
            seg.size > 0 &&
            (seg.readBatchHeader(0)?.maxTimestamp ?? -1n) >= 0n
          ) {
            // A closed or rolled segment always has the time index entry of its max timestamp.
            problem = "the time index is empty for a segment with timestamps";
          }
        } catch (e) {
          problem = (e as Error).message;
        }
      }
      if (problem) {
        // Per-segment detail at DEBUG; the one summary line at the end says which indexes were rebuilt.
        this.logger.debug(`Found a corrupt or missing index for segment ${base} (${problem}); rebuilding it`);
        const r = this.recoverSegment(seg, false, base === bases[bases.length - 1]);
        this.report.indexesRebuilt.push(base);
        if (r.bytesTruncated > 0) this.noteTruncation(seg, r.bytesTruncated, r.reason);
      }
      // Checked: its entries go back to disk until a lookup needs them (bounded heap with many segments).
      seg.releaseIndexes();
      segments.push(seg);
    }
    // A segment cut by a rebuild ends the log: later segments would leave a gap in the offsets.
    const cut = segments.findIndex((s) => s.baseOffset === this.report.truncatedSegment);
    if (cut >= 0) this.quarantineAfter(segments, cut);
    return segments;
  }

  /**
   * Rebuilds a segment from its .log; with feedCache (recovery in offset order) the leader-epoch cache is
   * cut at the segment and re-fed from its batches (Kafka's recoverSegment).
   */
  /**
   * The most bytes an intact offset index normally leaves unindexed at the end of a segment: the index
   * interval plus the last append(s). A bigger gap (an index cut short, or one huge multi-batch append)
   * costs one rebuild, after which recovery's per-batch entries close the gap.
   */
  private maxIndexGap(): number {
    const c = this.p.config;
    return c.indexIntervalBytes + 2 * c.maxMessageBytes;
  }

  private recoverSegment(
    seg: LogSegment,
    feedCache: boolean,
    lastSegment: boolean,
    moveLaterSegments?: () => void,
  ): { bytesTruncated: number; reason?: string } {
    // The cache's writes during recovery go in the background: every entry they hold is re-derived from
    // batches above the recovery point, and the log's flush writes them before it moves past (see assign).
    const cache = feedCache ? this.p.leaderEpochCache : undefined;
    if (cache) cache.truncateFromEnd(seg.baseOffset, "background");
    // Before the cut: later segments moved, the tail copied, the manifest written — so a crash at any
    // point leaves the damaged segment uncut and the next recovery continues the same quarantine.
    const beforeCut = (validBytes: number, lastValid: bigint, reason: string): void => {
      const q = this.quarantine;
      if (q.isTornWrite(seg.logFile, seg.baseOffset, validBytes, lastValid, reason, lastSegment)) return;
      q.begin(basename(seg.logFile), validBytes, reason);
      moveLaterSegments?.();
      q.saveTail(seg.logFile, seg.baseOffset, validBytes, lastValid);
      q.finish(lastValid + 1n);
    };
    const r = seg.recover(
      Math.max(this.p.config.maxMessageBytes, this.p.config.segmentBytes) + 1024,
      beforeCut,
    );
    this.txnIndexReset.add(seg);
    if (cache) {
      for (const { epoch, startOffset } of r.epochs) {
        const latest = cache.latestEpoch();
        if (epoch >= 0 && (latest === undefined || epoch > latest))
          cache.assign(epoch, startOffset, "background");
      }
    }
    return r;
  }

  private noteTruncation(seg: LogSegment, bytes: number, reason?: string): void {
    if (this.report.truncatedSegment === undefined || seg.baseOffset < this.report.truncatedSegment) {
      this.report.truncatedSegment = seg.baseOffset;
      this.report.truncationReason = reason;
    }
    this.report.bytesTruncated += bytes;
  }

  /** Kafka's recoverLog: recover every segment from the one holding the recovery point. */
  private recoverFrom(segments: LogSegment[], recoveryPoint: bigint): void {
    let start = 0;
    for (let i = 0; i < segments.length; i++) if (segments[i].baseOffset <= recoveryPoint) start = i;
    for (let i = start; i < segments.length; i++) {
      const seg = segments[i];
      const r = this.recoverSegment(seg, true, i === segments.length - 1, () =>
        this.quarantineAfter(segments, i),
      );
      this.report.segmentsRecovered++;
      if (r.bytesTruncated > 0) {
        this.noteTruncation(seg, r.bytesTruncated, r.reason);
        this.quarantineAfter(segments, i);
        return;
      }
    }
  }

  /** The segments after a cut leave the log for the quarantine, files and all (Kafka deletes them). */
  private quarantineAfter(segments: LogSegment[], index: number): void {
    for (const s of segments.splice(index + 1)) {
      this.report.segmentsQuarantined++;
      s.closeHandlers();
      this.quarantine.moveSegment(s.logFile, s.baseOffset, [
        s.offsetIndex.file,
        s.timeIndex.file,
        s.txnIndex.file,
      ]);
    }
  }

  /** The manifest, the ERROR line, and the partition's unrestored quarantine bytes for the metric. */
  private finishQuarantine(logEndOffset: bigint): void {
    const manifest = this.quarantine.finish(logEndOffset);
    const q = this.quarantine;
    if (manifest !== undefined && q.quarantineDir !== undefined) {
      this.report.bytesQuarantined = q.bytes;
      this.report.quarantineDir = q.quarantineDir;
      this.logger.error(
        `Quarantined ${q.bytes} bytes of partition ${this.partitionName} that recovery would have dropped (${manifest.reason} in ${manifest.cutSegment}) instead of deleting them: moved to ${q.quarantineDir}: ${describeRanges(q.quarantinedFiles)}. The log now ends at offset ${logEndOffset}. Inspect with: tributary log-recover --log-dir ${dirname(this.p.dir)} --list`,
      );
    }
    if (manifest === undefined && !readdirSync(this.p.dir).some((n) => n.startsWith(QUARANTINE_DIR_PREFIX))) {
      this.report.unrestoredQuarantineBytes = 0;
      return;
    }
    const all = listQuarantines(this.p.dir);
    this.report.unrestoredQuarantineBytes = all
      .filter((x) => x.manifest?.restored === undefined && x.manifest?.reproduced === undefined)
      .reduce((sum, x) => sum + x.bytes, 0);
    // A crash during an earlier quarantine: its files are safe but it has no manifest; say so each start.
    for (const x of all.filter((y) => y.manifest === undefined))
      this.logger.warn(
        `Partition ${this.partitionName} has a quarantine ${x.dir} that cannot be restored automatically: ${x.problem}; its ${x.bytes} bytes of files are kept`,
      );
  }

  private deleteSegment(s: LogSegment): void {
    this.report.segmentsDeleted++;
    this.report.bytesDeleted += s.size;
    s.deleteIfExists();
  }

  private logSummary(
    count: number,
    logStartOffset: bigint,
    logEndOffset: bigint,
    recoveryPoint: bigint,
  ): void {
    const r = this.report;
    const where = `${count} segments, log start offset ${logStartOffset}, log end offset ${logEndOffset}, recovery point ${recoveryPoint}`;
    const parts: string[] = [];
    if (r.bytesTruncated > 0) {
      parts.push(
        `truncated ${r.bytesTruncated} bytes at segment ${r.truncatedSegment} (${r.truncationReason ?? "invalid data"})`,
      );
    }
    if (r.segmentsDeleted > 0)
      parts.push(
        `deleted ${r.segmentsDeleted} segments below the log start offset (${r.bytesDeleted} bytes)`,
      );
    if (r.quarantineDir !== undefined)
      parts.push(
        `quarantined the cut bytes and ${r.segmentsQuarantined} later segments (${r.bytesQuarantined} bytes) in ${basename(r.quarantineDir)}`,
      );
    if (r.indexesRebuilt.length > 0)
      parts.push(`rebuilt the indexes of segments ${r.indexesRebuilt.join(", ")}`);
    if (r.swapsCompleted > 0) parts.push(`completed ${r.swapsCompleted} segment swaps`);
    if (parts.length > 0 && (r.bytesTruncated > 0 || r.segmentsDeleted > 0 || r.segmentsQuarantined > 0)) {
      this.logger.warn(`Recovered log with data dropped: ${parts.join("; ")}; ${where}`);
    } else if (parts.length > 0) {
      this.logger.warn(`Loaded log after repairs: ${parts.join("; ")}; nothing dropped; ${where}`);
    } else {
      const how = this.p.hadCleanShutdown
        ? "after a clean shutdown"
        : `after recovering ${r.segmentsRecovered} segments`;
      this.logger.info(`Loaded log ${how}, nothing dropped; ${where}`);
    }
  }
}
