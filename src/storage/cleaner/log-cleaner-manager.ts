// LogCleanerManager: the cleaner's bookkeeping, as Kafka's LogCleanerManager. It owns, per log dir, the
// `cleaner-offset-checkpoint` file (Kafka's OffsetCheckpointFile format: version 0, a count, then
// `<topic> <partition> <offset>` lines), where each entry is the first dirty offset of a compacted log: every
// offset below it has been cleaned at least once. It also owns the in-memory cleaning state of each
// partition (in progress / aborted / paused n times), and the choice of the next log to clean.
//
// Invariants:
// - The checkpoint of a dir only names logs that exist in that dir when it is written (entries of deleted or
//   moved logs are dropped on every write), and it is replaced atomically (CheckpointFile: tmp + rename).
// - The checkpoint moves forward only through doneCleaning (the end offset of a finished clean), and
//   backwards only to repair it: below the log start offset or past the log end offset (cleanableOffsets
//   resets it to the log start offset) and after a truncation below it (maybeTruncateCheckpoint).
// - A log is never selected while it is in progress, paused (abortAndPauseCleaning, e.g. for truncation or
//   deletion) or marked uncleanable (a clean failed on it); a paused log resumes only when every pause has
//   been resumed (Kafka counts them).
// - `compact,delete` logs also get retention (retention.ms / retention.bytes) from the cleaner
//   (deletableLogs / doneDeleting), never while they are being cleaned.
// Everything here is synchronous. A clean takes turns with the rest of the event loop (cleaner.ts), so a
// pause can come while one is part-way: abortAndPauseCleaning then has the cleaner end it before it
// returns (the abort listener, CleanerThread.abortClean), which is what Kafka's achieves by waiting for
// its cleaner thread to notice the abort; the partition is paused when it returns either way.

import { join } from "node:path";
import { Logger } from "../../common/logger.js";
import type { Time } from "../../common/time.js";
import { type TopicPartition, topicPartitionKey } from "../../common/topic-partition.js";
import { type OffsetCheckpointEntry, OffsetCheckpointFile } from "../checkpoint/offset-checkpoint-file.js";
import { isCompacted, isDeleteEnabled } from "../log-config.js";
import type { UnifiedLog } from "../unified-log.js";
import {
  type CleanableLog,
  type CleanerSegmentSummary,
  grabFilthiestCompactedLog,
  type LogToClean,
} from "./cleanable-ratio.js";

export const CLEANER_OFFSET_CHECKPOINT = "cleaner-offset-checkpoint";

/** A log the cleaner may look at: the partition, its log and the log dir holding it. */
export interface CleanerLogEntry {
  readonly tp: TopicPartition;
  readonly log: UnifiedLog;
  readonly dir: string;
}

/** Kafka's LogCleaningState. */
export type LogCleaningState =
  | { kind: "in-progress" }
  | { kind: "aborted" }
  | { kind: "paused"; count: number };

/** The log chosen for cleaning, with its dirtiness (Kafka's LogToClean). */
export type LogToCleanEntry = LogToClean<CleanerLogEntry>;

/** Segment summaries of a log, as cleanable-ratio.ts wants them. */
export function cleanerSegmentSummaries(log: UnifiedLog): CleanerSegmentSummary[] {
  const segments = log.segments();
  const needFirstBatchTimestamp = log.config.maxCompactionLagMs < Number.MAX_SAFE_INTEGER;
  return segments.map((s, i) => ({
    baseOffset: s.baseOffset,
    nextOffset: i + 1 < segments.length ? segments[i + 1].baseOffset : log.logEndOffset,
    sizeInBytes: s.size,
    largestTimestamp: s.maxTimestamp,
    lastModifiedMs: s.lastModified,
    firstBatchTimestamp: needFirstBatchTimestamp ? s.readBatchHeader(0)?.maxTimestamp : undefined,
  }));
}

/** What cleanable-ratio.ts needs to know of a log. */
export function cleanableLogOf(log: UnifiedLog, checkpointOffset: bigint | undefined): CleanableLog {
  const c = log.config;
  return {
    segments: cleanerSegmentSummaries(log),
    logStartOffset: log.logStartOffset,
    lastStableOffset: log.lastStableOffset,
    checkpointOffset,
    compact: isCompacted(c),
    delete: isDeleteEnabled(c),
    minCleanableDirtyRatio: c.minCleanableDirtyRatio,
    minCompactionLagMs: c.minCompactionLagMs,
    maxCompactionLagMs: c.maxCompactionLagMs,
  };
}

export class LogCleanerManager {
  /** Cleaner checkpoints by log dir, then by topicPartitionKey. */
  private readonly checkpoints = new Map<string, Map<string, OffsetCheckpointEntry>>();
  private readonly inProgress = new Map<string, LogCleaningState>();
  /** Partitions a clean failed on, by log dir (Kafka's uncleanablePartitions). */
  private readonly uncleanable = new Map<string, Set<string>>();
  private readonly logger: Logger;
  /** Highest cleanable ratio seen by the last selection (Kafka's max-dirty-percent gauge). */
  dirtiestLogCleanableRatio = 0;
  /** Largest max-compaction delay seen by the last selection, ms. */
  maxCompactionDelayMs = 0;
  /** Told when a clean in progress is aborted; it ends the clean before returning (CleanerThread). */
  private abortListener: ((tp: TopicPartition) => void) | undefined;

  constructor(
    readonly logDirs: readonly string[],
    private readonly logs: () => readonly CleanerLogEntry[],
    private readonly time: Time,
    logger?: Logger,
  ) {
    this.logger = logger ?? new Logger("kafka.log.LogCleanerManager");
    for (const dir of logDirs) this.checkpoints.set(dir, this.readCheckpointFile(dir));
  }

  /** The cleaner thread to stop, synchronously, when the log it is cleaning is aborted. */
  setAbortListener(listener: (tp: TopicPartition) => void): void {
    this.abortListener = listener;
  }

  private checkpointFile(dir: string): OffsetCheckpointFile {
    return new OffsetCheckpointFile(join(dir, CLEANER_OFFSET_CHECKPOINT));
  }

  /** A damaged checkpoint is reported and ignored: every log is then cleaned from its start again. */
  private readCheckpointFile(dir: string): Map<string, OffsetCheckpointEntry> {
    try {
      return this.checkpointFile(dir).read();
    } catch (e) {
      this.logger.warn(
        `Failed to access checkpoint file ${CLEANER_OFFSET_CHECKPOINT} in dir ${dir}: ${(e as Error).message}; ignoring it`,
      );
      return new Map();
    }
  }

  /** The cleaner checkpoints of every log dir, by topicPartitionKey (Kafka's allCleanerCheckpoints). */
  allCleanerCheckpoints(): Map<string, bigint> {
    const out = new Map<string, bigint>();
    for (const m of this.checkpoints.values()) for (const [k, e] of m) out.set(k, e.offset);
    return out;
  }

  /** The checkpointed first dirty offset of a partition, if any. */
  checkpointOf(tp: TopicPartition): bigint | undefined {
    const key = topicPartitionKey(tp);
    for (const m of this.checkpoints.values()) {
      const e = m.get(key);
      if (e !== undefined) return e.offset;
    }
    return undefined;
  }

  /**
   * Rewrites the checkpoint of `dir` (Kafka's updateCheckpoints): entries of logs no longer in that dir are
   * dropped, `update` is set, `remove` is removed.
   */
  updateCheckpoints(
    dir: string,
    update?: { tp: TopicPartition; offset: bigint },
    remove?: TopicPartition,
  ): void {
    const current = this.checkpoints.get(dir) ?? new Map<string, OffsetCheckpointEntry>();
    const present = new Set(
      this.logs()
        .filter((l) => l.dir === dir)
        .map((l) => topicPartitionKey(l.tp)),
    );
    const next = new Map<string, OffsetCheckpointEntry>();
    for (const [k, e] of current) if (present.has(k)) next.set(k, e);
    if (update !== undefined)
      next.set(topicPartitionKey(update.tp), { tp: update.tp, offset: update.offset });
    if (remove !== undefined) next.delete(topicPartitionKey(remove));
    this.checkpoints.set(dir, next);
    try {
      this.checkpointFile(dir).write(next);
    } catch (e) {
      this.logger.error(
        `Failed to write ${CLEANER_OFFSET_CHECKPOINT} in dir ${dir}: ${(e as Error).message}`,
      );
    }
  }

  /** Writes every dir's checkpoint (shutdown). */
  writeAllCheckpoints(): void {
    for (const dir of this.logDirs) this.updateCheckpoints(dir);
  }

  /** After a truncation to `offset`: a checkpoint past it moves back to it (Kafka's maybeTruncateCheckpoint). */
  maybeTruncateCheckpoint(dir: string, tp: TopicPartition, offset: bigint): void {
    const e = this.checkpoints.get(dir)?.get(topicPartitionKey(tp));
    if (e !== undefined && e.offset > offset) this.updateCheckpoints(dir, { tp, offset });
  }

  cleaningState(tp: TopicPartition): LogCleaningState | undefined {
    return this.inProgress.get(topicPartitionKey(tp));
  }

  isCleaningInStatePaused(tp: TopicPartition): boolean {
    return this.inProgress.get(topicPartitionKey(tp))?.kind === "paused";
  }

  isUncleanable(tp: TopicPartition, dir: string): boolean {
    return this.uncleanable.get(dir)?.has(topicPartitionKey(tp)) ?? false;
  }

  /** A clean failed on this partition: it is skipped until the broker restarts or the log is deleted. */
  markPartitionUncleanable(dir: string, tp: TopicPartition): void {
    let s = this.uncleanable.get(dir);
    if (s === undefined) {
      s = new Set();
      this.uncleanable.set(dir, s);
    }
    s.add(topicPartitionKey(tp));
  }

  /**
   * Chooses the dirtiest compacted log that may be cleaned now and marks it in progress (Kafka's
   * grabFilthiestCompactedLog); null when none. Invalid checkpoints found on the way are rewritten.
   */
  grabFilthiestCompactedLog(): LogToCleanEntry | null {
    const nowMs = this.time.milliseconds();
    const checkpoints = this.allCleanerCheckpoints();
    const candidates = this.logs()
      .filter((l) => isCompacted(l.log.config))
      .map((l) => ({ key: l, log: cleanableLogOf(l.log, checkpoints.get(topicPartitionKey(l.tp))) }));
    const choice = grabFilthiestCompactedLog(candidates, {
      nowMs,
      isInProgress: (l) => this.inProgress.has(topicPartitionKey(l.tp)),
      isUncleanable: (l) => this.isUncleanable(l.tp, l.dir),
    });
    for (const { key, offset } of choice.checkpointResets) {
      this.logger.warn(
        `Resetting first dirty offset of ${topicPartitionKey(key.tp)} to log start offset ${offset} since the checkpointed offset is invalid.`,
      );
      this.updateCheckpoints(key.dir, { tp: key.tp, offset });
    }
    this.dirtiestLogCleanableRatio = choice.dirtiestRatio;
    this.maxCompactionDelayMs = choice.maxCompactionDelayMs;
    const selected = choice.selected;
    if (selected === null) return null;
    this.inProgress.set(topicPartitionKey(selected.key.tp), { kind: "in-progress" });
    return selected;
  }

  /**
   * `compact,delete` logs not being cleaned: marked in progress so no clean starts while retention runs
   * (Kafka's deletableLogs); the caller calls doneDeleting after.
   */
  deletableLogs(): CleanerLogEntry[] {
    const out: CleanerLogEntry[] = [];
    for (const l of this.logs()) {
      const c = l.log.config;
      const key = topicPartitionKey(l.tp);
      if (!isCompacted(c) || !isDeleteEnabled(c)) continue;
      if (this.inProgress.has(key) || this.isUncleanable(l.tp, l.dir)) continue;
      this.inProgress.set(key, { kind: "in-progress" });
      out.push(l);
    }
    return out;
  }

  doneDeleting(tps: Iterable<TopicPartition>): void {
    for (const tp of tps) this.finish(tp);
  }

  /** A clean of `tp` ended at `endOffset`: checkpoint it and clear the in-progress state (Kafka's doneCleaning). */
  doneCleaning(tp: TopicPartition, dir: string, endOffset: bigint): void {
    const key = topicPartitionKey(tp);
    const state = this.inProgress.get(key);
    if (state?.kind === "in-progress") {
      this.updateCheckpoints(dir, { tp, offset: endOffset });
      this.inProgress.delete(key);
    } else if (state?.kind === "aborted") {
      this.inProgress.set(key, { kind: "paused", count: 1 });
    } else {
      throw new Error(`In-progress partition ${key} cannot be in ${state?.kind ?? "no"} state.`);
    }
  }

  private finish(tp: TopicPartition): void {
    const key = topicPartitionKey(tp);
    const state = this.inProgress.get(key);
    if (state?.kind === "in-progress") this.inProgress.delete(key);
    else if (state?.kind === "aborted") this.inProgress.set(key, { kind: "paused", count: 1 });
  }

  /**
   * Stops cleaning `tp` until resumeCleaning (Kafka's abortAndPauseCleaning): a clean in progress is marked
   * aborted and ended by the abort listener (its doneCleaning pauses it), otherwise the pause count goes up.
   */
  abortAndPauseCleaning(tp: TopicPartition): void {
    const key = topicPartitionKey(tp);
    const state = this.inProgress.get(key);
    if (state === undefined) this.inProgress.set(key, { kind: "paused", count: 1 });
    else if (state.kind === "in-progress") {
      this.inProgress.set(key, { kind: "aborted" });
      this.abortListener?.(tp);
    } else if (state.kind === "paused") this.inProgress.set(key, { kind: "paused", count: state.count + 1 });
    this.logger.info(`The cleaning for partition ${key} is aborted and paused`);
  }

  /** Undoes one abortAndPauseCleaning; cleaning restarts when every pause is undone. */
  resumeCleaning(tp: TopicPartition): void {
    const key = topicPartitionKey(tp);
    const state = this.inProgress.get(key);
    if (state === undefined) return;
    if (state.kind !== "paused") {
      throw new Error(
        `Compaction for partition ${key} cannot be resumed since it is not paused (state ${state.kind}).`,
      );
    }
    if (state.count <= 1) this.inProgress.delete(key);
    else this.inProgress.set(key, { kind: "paused", count: state.count - 1 });
    this.logger.info(`Cleaning for partition ${key} is resumed`);
  }

  /** Whether a clean in progress was aborted (the cleaner checks between its steps). */
  isAborted(tp: TopicPartition): boolean {
    return this.inProgress.get(topicPartitionKey(tp))?.kind === "aborted";
  }

  /**
   * The log is going away (deletion): abort and forget its state, and drop its checkpoint entry (Kafka's
   * abortCleaning + updateCheckpoints(partitionToRemove)).
   */
  abortCleaning(tp: TopicPartition, dir: string): void {
    this.abortAndPauseCleaning(tp);
    const key = topicPartitionKey(tp);
    this.inProgress.delete(key);
    this.uncleanable.get(dir)?.delete(key);
    this.updateCheckpoints(dir, undefined, tp);
    this.logger.info(`The cleaning for partition ${key} is aborted`);
  }
}
