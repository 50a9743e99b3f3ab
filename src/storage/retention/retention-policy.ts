// Retention policy: which whole segments a log deletes, as pure functions over segment summaries. Owns
// Kafka's UnifiedLog.deleteOldSegments rules (deleteLogStartOffsetBreachedSegments,
// deleteRetentionSizeBreachedSegments, deleteRetentionMsBreachedSegments and deletableSegments); it does
// no I/O: the log applies the decision (roll if asked, rename the segments `.deleted`, advance the log
// start offset) under its lock.
//
// Rules, as Kafka applies them (3.x, local log, no tiered storage):
// - The three passes run in this order, each over what the previous one left: log start offset, then
//   size, then time. With cleanup.policy without `delete` (compact only) only the log start offset pass
//   runs.
// - Every pass walks segments from the oldest and stops at the first one it may not delete. A segment is
//   deletable only if the high watermark is at or past its upper bound (the next segment's base offset,
//   or the log end offset for the last segment), so the log start offset never passes the high watermark,
//   and the pass's predicate holds. An empty last (active) segment is never deleted.
// - The active segment may be deleted (when non-empty, wholly below the high watermark and breached).
//   The log must keep a segment, so when every segment is deleted the log first rolls a new empty active
//   segment at the log end offset: the decision says so with `rollFirst`.
// - Log start offset: a segment is deleted when the next segment's base offset <= logStartOffset (so the
//   segment holds nothing at or after it). Reason "log start offset N breach".
// - Size (retention.bytes, -1 = unlimited): nothing when the log size < retention.bytes; otherwise
//   diff = size - retention.bytes and oldest segments go while diff - segment.size >= 0 (diff shrinks by
//   each one deleted). Reason "retention size in bytes N breach".
// - Time (retention.ms, -1 = unlimited): a segment goes when now - largestTimestamp > retention.ms, where
//   largestTimestamp is the segment's max record timestamp, or its file's last modified time when it has
//   no timestamp (Kafka's LogSegment.largestTimestamp). Reason "retention time Nms breach".
// - Deleting segments moves the log start offset to the base offset of the first segment kept (the new
//   rolled segment when all go); it never moves backwards.

export type CleanupPolicy = "delete" | "compact";

/** What retention needs to know about one segment; a log passes them oldest first, the active one last. */
export interface SegmentSummary {
  baseOffset: bigint;
  /** Offset after the segment's last batch (the next segment's base offset or the log end offset). */
  nextOffset: bigint;
  sizeInBytes: number;
  /** Max record timestamp in the segment, or -1 when none is known. */
  largestTimestamp: bigint;
  /** The .log file's last modified time, ms. */
  lastModifiedMs: number;
}

export interface RetentionParams {
  /** retention.ms; negative = unlimited. */
  retentionMs: number;
  /** retention.bytes; negative = unlimited. */
  retentionBytes: number;
  logStartOffset: bigint;
  highWatermark: bigint;
  nowMs: number;
  /** cleanup.policy, e.g. ["delete"], ["compact"], ["compact", "delete"]. */
  cleanupPolicy: readonly CleanupPolicy[];
}

export type RetentionBreach = "log-start-offset" | "retention-size" | "retention-time";

/** One pass that deleted something: its segments (oldest first) and the line Kafka logs for it. */
export interface SegmentDeletion {
  breach: RetentionBreach;
  /** "log start offset 42 breach", "retention size in bytes 1000 breach", "retention time 604800000ms breach". */
  reason: string;
  segments: SegmentSummary[];
}

export interface RetentionDecision {
  /** Passes that delete something, in the order they apply. */
  deletions: SegmentDeletion[];
  /** All segments to delete, oldest first (the concatenation of deletions' segments). */
  segments: SegmentSummary[];
  /**
   * True when every segment goes: roll a new empty active segment at the log end offset before deleting
   * (Kafka's deleteSegments does this so a log always has a segment).
   */
  rollFirst: boolean;
  /** The log start offset after the deletions (>= params.logStartOffset). */
  newLogStartOffset: bigint;
}

/** Kafka's LogSegment.largestTimestamp: the max record timestamp, or the last modified time without one. */
export function effectiveLargestTimestamp(segment: SegmentSummary): number {
  return segment.largestTimestamp >= 0n ? Number(segment.largestTimestamp) : segment.lastModifiedMs;
}

type Predicate = (segment: SegmentSummary, next: SegmentSummary | undefined) => boolean;

/**
 * Kafka's deletableSegments: the oldest segments, in order, until one is not deletable. `logEndOffset` is
 * the upper bound of the last segment.
 */
function deletableSegments(
  segments: readonly SegmentSummary[],
  highWatermark: bigint,
  logEndOffset: bigint,
  predicate: Predicate,
): SegmentSummary[] {
  const deletable: SegmentSummary[] = [];
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i];
    const next = i + 1 < segments.length ? segments[i + 1] : undefined;
    const isLastSegmentAndEmpty = next === undefined && segment.sizeInBytes === 0;
    const upperBoundOffset = next !== undefined ? next.baseOffset : logEndOffset;
    // The predicate is only asked (and may only update its state) when the high watermark allows.
    const predicateResult = highWatermark >= upperBoundOffset && predicate(segment, next);
    if (!predicateResult || isLastSegmentAndEmpty) break;
    deletable.push(segment);
  }
  return deletable;
}

/**
 * The segments retention deletes now, and why (Kafka's UnifiedLog.deleteOldSegments). `segments` are in
 * offset order, the last one being the active segment; the input is not modified.
 */
export function segmentsToDelete(
  segments: readonly SegmentSummary[],
  params: RetentionParams,
): RetentionDecision {
  const decision: RetentionDecision = {
    deletions: [],
    segments: [],
    rollFirst: false,
    newLogStartOffset: params.logStartOffset,
  };
  if (segments.length === 0) return decision;
  const logEndOffset = segments[segments.length - 1].nextOffset;
  let remaining: SegmentSummary[] = segments.slice();
  let logStartOffset = params.logStartOffset;

  const apply = (breach: RetentionBreach, reason: string, deletable: SegmentSummary[]): void => {
    if (deletable.length === 0) return;
    decision.deletions.push({ breach, reason, segments: deletable });
    decision.segments.push(...deletable);
    if (deletable.length === remaining.length) {
      // Everything goes: Kafka rolls a new empty active segment at the log end offset first.
      decision.rollFirst = true;
      remaining = [
        {
          baseOffset: logEndOffset,
          nextOffset: logEndOffset,
          sizeInBytes: 0,
          largestTimestamp: -1n,
          lastModifiedMs: params.nowMs,
        },
      ];
    } else {
      remaining = remaining.slice(deletable.length);
    }
    if (remaining[0].baseOffset > logStartOffset) logStartOffset = remaining[0].baseOffset;
  };

  // 1. Log start offset (always, whatever the cleanup policy).
  {
    const lso = logStartOffset;
    const deletable = deletableSegments(
      remaining,
      params.highWatermark,
      logEndOffset,
      (_segment, next) => next !== undefined && next.baseOffset <= lso,
    );
    apply("log-start-offset", `log start offset ${lso} breach`, deletable);
  }

  if (params.cleanupPolicy.includes("delete")) {
    // 2. Size.
    const retentionBytes = params.retentionBytes;
    const size = remaining.reduce((sum, s) => sum + s.sizeInBytes, 0);
    if (retentionBytes >= 0 && size >= retentionBytes) {
      let diff = size - retentionBytes;
      const deletable = deletableSegments(remaining, params.highWatermark, logEndOffset, (segment) => {
        if (diff - segment.sizeInBytes >= 0) {
          diff -= segment.sizeInBytes;
          return true;
        }
        return false;
      });
      apply("retention-size", `retention size in bytes ${retentionBytes} breach`, deletable);
    }

    // 3. Time.
    const retentionMs = params.retentionMs;
    if (retentionMs >= 0) {
      const deletable = deletableSegments(
        remaining,
        params.highWatermark,
        logEndOffset,
        (segment) => params.nowMs - effectiveLargestTimestamp(segment) > retentionMs,
      );
      apply("retention-time", `retention time ${retentionMs}ms breach`, deletable);
    }
  }

  decision.newLogStartOffset = logStartOffset;
  return decision;
}
