// The leader's check of a fetch's last fetched epoch (KIP-595's DivergingEpoch in Fetch v12+, as Kafka's
// brokers use it since 2.7: Partition.readFromLocalLog / validateFetchOffsetAndMaybeGetDivergingEpoch).
// A fetcher sends the epoch of the last batch it holds (LastFetchedEpoch) with its fetch offset; the
// leader looks that epoch up in its own leader-epoch cache. When the leader's log ends that epoch earlier
// than the fetch offset, or knows it only under an older epoch, the fetcher's log has diverged: the answer
// is DivergingEpoch {epoch, endOffset} with no records, and the fetcher truncates to that point (iterating
// as KIP-279 when its own log ends that epoch elsewhere) without an OffsetForLeaderEpoch round trip.
// An epoch the leader cannot place, or a fetch offset below its log start, is OFFSET_OUT_OF_RANGE.

import type { TopicPartition } from "../../common/topic-partition.js";
import { ErrorCode } from "../../protocol/errors.js";
import type { UnifiedLog } from "../../storage/unified-log.js";
import type { FetchPartitionData } from "./delayed-fetch.js";
import type { Partition } from "./partition.js";

/** What the check decided for one partition of a fetch. */
export type EpochValidation =
  | { readonly kind: "ok" }
  | { readonly kind: "diverging"; readonly epoch: number; readonly endOffset: bigint }
  | { readonly kind: "out-of-range"; readonly message: string };

const OK: EpochValidation = { kind: "ok" };

/** The subset of the log the check reads. */
export type EpochLog = Pick<UnifiedLog, "logStartOffset" | "logEndOffset" | "leaderEpochCache">;

/**
 * The leader-side decision for a fetch at `fetchOffset` whose last fetched batch had `lastFetchedEpoch`
 * (negative: not sent, nothing to check).
 */
export function validateFetchOffsetAgainstEpoch(
  log: EpochLog,
  fetchOffset: bigint,
  lastFetchedEpoch: number,
): EpochValidation {
  if (lastFetchedEpoch < 0) return OK;
  const cache = log.leaderEpochCache;
  const found = cache?.endOffsetFor(lastFetchedEpoch, log.logEndOffset);
  if (found === undefined || found.epoch < 0 || found.endOffset < 0n) {
    return {
      kind: "out-of-range",
      message: `Could not determine the end offset of the last fetched epoch ${lastFetchedEpoch} from the request`,
    };
  }
  // Below the log start is out of range whether or not the epochs diverge (as Kafka).
  if (fetchOffset < log.logStartOffset) {
    return {
      kind: "out-of-range",
      message: `Received request for offset ${fetchOffset}, but the log start offset is ${log.logStartOffset}`,
    };
  }
  if (found.epoch < lastFetchedEpoch || found.endOffset < fetchOffset)
    return { kind: "diverging", epoch: found.epoch, endOffset: found.endOffset };
  return OK;
}

/**
 * The answer for one partition of a fetch when its last fetched epoch settles it before any read: the
 * DivergingEpoch (no records) or OFFSET_OUT_OF_RANGE; undefined when the partition is read as usual
 * (nothing to check, the epochs agree, or an error the read reports: not leader, fenced epoch, offline).
 * The leader's high watermark and log start go with it, and the follower's fetch state is not updated
 * from a diverging fetch offset (its log is not a prefix of the leader's there).
 */
export function answerFromLastFetchedEpoch(
  partition: Partition | undefined,
  info: {
    readonly topicPartition: TopicPartition;
    readonly fetchOffset: bigint;
    readonly currentLeaderEpoch: number;
    readonly lastFetchedEpoch: number;
  },
  fetchOnlyFromLeader: boolean,
): FetchPartitionData | undefined {
  if (info.lastFetchedEpoch < 0 || partition === undefined) return undefined;
  let log: UnifiedLog;
  try {
    log = partition.localLogWithEpochOrThrow(info.currentLeaderEpoch, fetchOnlyFromLeader);
  } catch {
    return undefined;
  }
  const v = validateFetchOffsetAgainstEpoch(log, info.fetchOffset, info.lastFetchedEpoch);
  if (v.kind === "ok") return undefined;
  const base = {
    topicPartition: info.topicPartition,
    highWatermark: log.highWatermark,
    lastStableOffset: log.lastStableOffset,
    logStartOffset: log.logStartOffset,
    records: EMPTY,
    preferredReadReplica: -1,
  };
  return v.kind === "diverging"
    ? { ...base, errorCode: ErrorCode.NONE, divergingEpoch: { epoch: v.epoch, endOffset: v.endOffset } }
    : { ...base, errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, errorMessage: v.message };
}

const EMPTY = Buffer.alloc(0);
