// Cleanable ratio and log selection: which part of a compacted log may be cleaned now, how dirty it is,
// and which log the cleaner takes next. Owns Kafka's LogCleanerManager.cleanableOffsets,
// calculateCleanableBytes, maxCompactionDelay, LogToClean and grabFilthiestCompactedLog, as pure
// functions over segment summaries; the cleaner manager owns the in-progress set and the checkpoint file.
//
// Rules (Kafka 3.x):
// - First dirty offset: the cleaner checkpoint, or the log start offset without one; reset to the log
//   start offset (and the checkpoint rewritten) when it is below the log start offset or above the log
//   end offset.
// - First uncleanable offset: the smallest of the last stable offset, the active segment's base offset,
//   and, with min.compaction.lag.ms > 0, the base offset of the first non-active segment from the first
//   dirty offset whose largest timestamp > now - min.compaction.lag.ms; never below the first dirty offset.
//   It is then rounded down to a segment base (the segment holding it, as calculateCleanableBytes does).
// - Cleanable bytes: the sizes of the segments from the one holding the first dirty offset up to the
//   first uncleanable segment; clean bytes: the segments starting below the first dirty offset (Kafka's
//   logSegments(-1, firstDirtyOffset): a segment holding the first dirty offset past its base counts in
//   both, as in Kafka).
//   cleanableRatio = cleanable / (clean + cleanable).
// - max.compaction.lag.ms: a log must be compacted now when the earliest first-batch timestamp among its
//   dirty non-active segments is older than now - max.compaction.lag.ms (timestamps <= 0 ignored).
// - grabFilthiestCompactedLog: among compacted logs not in progress and not marked uncleanable, with some
//   bytes, those with (needCompactionNow and cleanable bytes > 0) or ratio > min.cleanable.dirty.ratio;
//   the one with the highest ratio wins.

import type { SegmentSummary } from "../retention/retention-policy.js";

/** A segment summary with what max.compaction.lag.ms needs. */
export interface CleanerSegmentSummary extends SegmentSummary {
  /**
   * Max timestamp of the segment's first batch (Kafka's LogSegment.getFirstBatchTimestamp), or undefined
   * when unknown/empty (treated as Long.MAX: never overdue).
   */
  firstBatchTimestamp?: bigint;
}

/** What the cleaner manager knows of one log. */
export interface CleanableLog {
  /** Segments in offset order; the last is the active segment. */
  segments: readonly CleanerSegmentSummary[];
  logStartOffset: bigint;
  lastStableOffset: bigint;
  /** The cleaner-offset-checkpoint entry, if any. */
  checkpointOffset?: bigint;
  /** cleanup.policy contains compact / delete. */
  compact: boolean;
  delete: boolean;
  /** min.cleanable.dirty.ratio */
  minCleanableDirtyRatio: number;
  /** min.compaction.lag.ms */
  minCompactionLagMs: number;
  /** max.compaction.lag.ms */
  maxCompactionLagMs: number;
}

export interface OffsetsToClean {
  /** Lower (inclusive) offset to clean from. */
  firstDirtyOffset: bigint;
  /** Upper (exclusive) offset to clean to. */
  firstUncleanableDirtyOffset: bigint;
  /** The checkpoint was invalid: rewrite it with firstDirtyOffset. */
  forceUpdateCheckpoint: boolean;
}

function logEndOffsetOf(segments: readonly SegmentSummary[]): bigint {
  return segments.length === 0 ? 0n : segments[segments.length - 1].nextOffset;
}

/** Index of the segment holding `offset` (the last with baseOffset <= offset), or -1. */
function floorIndex(segments: readonly SegmentSummary[], offset: bigint): number {
  let lo = 0;
  let hi = segments.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (segments[mid].baseOffset <= offset) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}

/**
 * Segments overlapping [from, to): from the one holding `from` (or the first after it) to the last
 * starting below `to` (Kafka's LogSegments.values(from, to)).
 */
export function segmentsInRange<S extends SegmentSummary>(
  segments: readonly S[],
  from: bigint,
  to: bigint,
): S[] {
  if (from >= to) return [];
  const f = floorIndex(segments, from);
  const start = Math.max(f, 0);
  const out: S[] = [];
  for (let i = start; i < segments.length && segments[i].baseOffset < to; i++) out.push(segments[i]);
  return out;
}

/** Non-active segments from the one holding `from` (Kafka's nonActiveLogSegmentsFrom). */
export function nonActiveSegmentsFrom<S extends SegmentSummary>(segments: readonly S[], from: bigint): S[] {
  if (segments.length === 0) return [];
  const active = segments[segments.length - 1];
  if (from > active.baseOffset) return [];
  return segmentsInRange(segments, from, active.baseOffset);
}

/** Kafka's LogSegment.largestTimestamp: max record timestamp, else the file's last modified time. */
function largestTimestampOf(s: SegmentSummary): number {
  return s.largestTimestamp >= 0n ? Number(s.largestTimestamp) : s.lastModifiedMs;
}

/**
 * The base offset of the first dirty non-active segment whose largest timestamp is within
 * min.compaction.lag.ms of now, or undefined (Kafka's findFirstUncleanableSegment).
 */
export function firstSegmentWithinCompactionLag(
  segments: readonly SegmentSummary[],
  firstDirtyOffset: bigint,
  nowMs: number,
  minCompactionLagMs: number,
): bigint | undefined {
  for (const s of nonActiveSegmentsFrom(segments, firstDirtyOffset)) {
    if (largestTimestampOf(s) > nowMs - minCompactionLagMs) return s.baseOffset;
  }
  return undefined;
}

/** Kafka's LogCleanerManager.cleanableOffsets. */
export function cleanableOffsets(log: CleanableLog, nowMs: number): OffsetsToClean {
  const logStartOffset = log.logStartOffset;
  const checkpointDirtyOffset = log.checkpointOffset ?? logStartOffset;
  let firstDirtyOffset: bigint;
  let forceUpdateCheckpoint: boolean;
  if (checkpointDirtyOffset < logStartOffset || checkpointDirtyOffset > logEndOffsetOf(log.segments)) {
    firstDirtyOffset = logStartOffset;
    forceUpdateCheckpoint = true;
  } else {
    firstDirtyOffset = checkpointDirtyOffset;
    forceUpdateCheckpoint = false;
  }
  const candidates: bigint[] = [log.lastStableOffset];
  if (log.segments.length > 0) candidates.push(log.segments[log.segments.length - 1].baseOffset);
  const minCompactionLagMs = Math.max(log.minCompactionLagMs, 0);
  if (minCompactionLagMs > 0) {
    const lagged = firstSegmentWithinCompactionLag(log.segments, firstDirtyOffset, nowMs, minCompactionLagMs);
    if (lagged !== undefined) candidates.push(lagged);
  }
  let firstUncleanable = candidates[0];
  for (const c of candidates) if (c < firstUncleanable) firstUncleanable = c;
  return {
    firstDirtyOffset,
    firstUncleanableDirtyOffset: firstUncleanable > firstDirtyOffset ? firstUncleanable : firstDirtyOffset,
    forceUpdateCheckpoint,
  };
}

/**
 * Kafka's calculateCleanableBytes: the first uncleanable segment's base offset (the segment holding
 * `uncleanableOffset`, the active one at most) and the bytes of the segments from the first dirty one
 * up to it.
 */
export function calculateCleanableBytes(
  segments: readonly SegmentSummary[],
  firstDirtyOffset: bigint,
  uncleanableOffset: bigint,
): { firstUncleanableOffset: bigint; cleanableBytes: number } {
  if (segments.length === 0) return { firstUncleanableOffset: uncleanableOffset, cleanableBytes: 0 };
  const nonActive = nonActiveSegmentsFrom(segments, uncleanableOffset);
  const firstUncleanableSegment = nonActive.length === 0 ? segments[segments.length - 1] : nonActive[0];
  const firstUncleanableOffset = firstUncleanableSegment.baseOffset;
  const from = firstDirtyOffset < firstUncleanableOffset ? firstDirtyOffset : firstUncleanableOffset;
  let cleanableBytes = 0;
  for (const s of segmentsInRange(segments, from, firstUncleanableOffset)) cleanableBytes += s.sizeInBytes;
  return { firstUncleanableOffset, cleanableBytes };
}

/**
 * How overdue the log's compaction is under max.compaction.lag.ms, in ms (0 = not overdue): Kafka's
 * LogCleanerManager.maxCompactionDelay.
 */
export function maxCompactionDelay(
  segments: readonly CleanerSegmentSummary[],
  firstDirtyOffset: bigint,
  nowMs: number,
  maxCompactionLagMs: number,
): number {
  let earliest = Number.POSITIVE_INFINITY;
  for (const s of nonActiveSegmentsFrom(segments, firstDirtyOffset)) {
    const ts = s.firstBatchTimestamp;
    if (ts !== undefined && ts > 0n && Number(ts) < earliest) earliest = Number(ts);
  }
  const cleanUntilTime = nowMs - Math.max(maxCompactionLagMs, 0);
  return earliest < cleanUntilTime ? cleanUntilTime - earliest : 0;
}

/** A log the cleaner could take, with its dirtiness (Kafka's LogToClean). */
export interface LogToClean<K> {
  key: K;
  firstDirtyOffset: bigint;
  /** Segment-aligned first uncleanable offset. */
  firstUncleanableOffset: bigint;
  cleanBytes: number;
  cleanableBytes: number;
  totalBytes: number;
  cleanableRatio: number;
  /** max.compaction.lag.ms is exceeded. */
  needCompactionNow: boolean;
  /** How far past max.compaction.lag.ms, in ms. */
  maxCompactionDelayMs: number;
  /** The checkpoint was invalid and must be rewritten with firstDirtyOffset. */
  forceUpdateCheckpoint: boolean;
}

/** The dirtiness of one log now (cleanableOffsets + LogToClean). */
export function logToClean<K>(key: K, log: CleanableLog, nowMs: number): LogToClean<K> {
  const offsets = cleanableOffsets(log, nowMs);
  const delay = maxCompactionDelay(log.segments, offsets.firstDirtyOffset, nowMs, log.maxCompactionLagMs);
  let cleanBytes = 0;
  for (const s of segmentsInRange(log.segments, -1n, offsets.firstDirtyOffset)) cleanBytes += s.sizeInBytes;
  const { firstUncleanableOffset, cleanableBytes } = calculateCleanableBytes(
    log.segments,
    offsets.firstDirtyOffset,
    offsets.firstUncleanableDirtyOffset,
  );
  const totalBytes = cleanBytes + cleanableBytes;
  return {
    key,
    firstDirtyOffset: offsets.firstDirtyOffset,
    firstUncleanableOffset,
    cleanBytes,
    cleanableBytes,
    totalBytes,
    cleanableRatio: totalBytes === 0 ? 0 : cleanableBytes / totalBytes,
    needCompactionNow: delay > 0,
    maxCompactionDelayMs: delay,
    forceUpdateCheckpoint: offsets.forceUpdateCheckpoint,
  };
}

export interface FilthiestLogChoice<K> {
  /** The log to clean now, or null. The caller marks it in progress. */
  selected: LogToClean<K> | null;
  /** Every compacted candidate with bytes (for the checkpoint rewrites and metrics). */
  candidates: LogToClean<K>[];
  /** Logs whose checkpoint must be rewritten with their firstDirtyOffset. */
  checkpointResets: Array<{ key: K; offset: bigint }>;
  /** Highest cleanable ratio among the candidates (Kafka's max-dirty-percent gauge), 0 with none. */
  dirtiestRatio: number;
  /** Largest max-compaction delay among the candidates (Kafka's max-compaction-delay-secs, in ms). */
  maxCompactionDelayMs: number;
}

/**
 * Chooses the log to clean next (Kafka's grabFilthiestCompactedLog): compacted logs not in progress and
 * not uncleanable, with bytes, that are overdue (with cleanable bytes) or dirtier than their
 * min.cleanable.dirty.ratio; the highest ratio wins (the first one on a tie).
 */
export function grabFilthiestCompactedLog<K>(
  logs: Iterable<{ key: K; log: CleanableLog }>,
  options: { nowMs: number; isInProgress?: (key: K) => boolean; isUncleanable?: (key: K) => boolean },
): FilthiestLogChoice<K> {
  const candidates: LogToClean<K>[] = [];
  const minRatios: number[] = [];
  const checkpointResets: Array<{ key: K; offset: bigint }> = [];
  let maxDelay = 0;
  for (const { key, log } of logs) {
    if (!log.compact) continue;
    if (options.isInProgress?.(key) || options.isUncleanable?.(key)) continue;
    const ltc = logToClean(key, log, options.nowMs);
    if (ltc.forceUpdateCheckpoint) checkpointResets.push({ key, offset: ltc.firstDirtyOffset });
    if (ltc.maxCompactionDelayMs > maxDelay) maxDelay = ltc.maxCompactionDelayMs;
    if (ltc.totalBytes > 0) {
      candidates.push(ltc);
      minRatios.push(log.minCleanableDirtyRatio);
    }
  }
  let dirtiestRatio = 0;
  for (const c of candidates) if (c.cleanableRatio > dirtiestRatio) dirtiestRatio = c.cleanableRatio;
  let selected: LogToClean<K> | null = null;
  for (let i = 0; i < candidates.length; i++) {
    const c = candidates[i];
    const cleanable = (c.needCompactionNow && c.cleanableBytes > 0) || c.cleanableRatio > minRatios[i];
    if (cleanable && (selected === null || c.cleanableRatio > selected.cleanableRatio)) selected = c;
  }
  return { selected, candidates, checkpointResets, dirtiestRatio, maxCompactionDelayMs: maxDelay };
}
