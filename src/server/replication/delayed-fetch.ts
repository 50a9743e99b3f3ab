// DelayedFetch: a Fetch that found fewer than min.bytes and waits up to max.wait.ms, Kafka's DelayedFetch.
// It is watched under each fetched partition's key; every append (and HW move) to one of them re-checks
// it, and it completes early as soon as the bytes visible past the fetch offsets reach min.bytes, or when
// something changed that the fetcher must hear about (leadership lost, partition gone, epoch changed, fetch
// offset now out of range). On completion (early or on timeout) the partitions are read again and the
// response goes out. While the bytes still missing fit in one batch header (min.bytes <= 61, as the
// default 1), a visible offset past the fetch offset is enough and nothing is read to count it. A follower's
// partition held back by the leader replication quota does not count (Kafka's DelayedFetch), so a fully
// throttled follower waits out max.wait.ms instead of fetching nothing in a loop.

import type { TopicPartition } from "../../common/topic-partition.js";
import { RECORD_BATCH_OVERHEAD } from "../../protocol/records/index.js";
import type { FetchIsolation } from "../../storage/unified-log.js";
import { DelayedOperation } from "./delayed-operation-purgatory.js";
import type { Partition } from "./partition.js";

/** A fetch request's parameters (Kafka's FetchParams). */
export interface FetchParams {
  /** -1 for consumers; a broker id for followers. */
  readonly replicaId: number;
  readonly maxWaitMs: number;
  readonly minBytes: number;
  /** Response limit (already capped by the broker's fetch.max.bytes). */
  readonly maxBytes: number;
  readonly isolation: FetchIsolation;
  /** Consumers read from the leader only; followers and debugging clients (replica id -2) from any replica. */
  readonly fetchOnlyFromLeader: boolean;
  /** Memory for the records read (the request's, released once its response is written); fresh if absent. */
  readonly allocate?: (size: number) => Buffer;
}

/** One partition of a fetch (Kafka's PartitionData in FetchRequest). */
export interface FetchPartitionInfo {
  readonly topicPartition: TopicPartition;
  readonly fetchOffset: bigint;
  readonly currentLeaderEpoch: number;
  /** The follower's log start offset (-1 for consumers). */
  readonly logStartOffset: bigint;
  readonly partitionMaxBytes: number;
}

/** The result of reading one partition (Kafka's FetchPartitionData). */
export interface FetchPartitionData {
  readonly topicPartition: TopicPartition;
  readonly errorCode: number;
  readonly errorMessage?: string;
  readonly highWatermark: bigint;
  readonly lastStableOffset: bigint;
  readonly logStartOffset: bigint;
  /** Whole batches, a view of the bytes read from the segment (no copy). */
  readonly records: Buffer;
  readonly preferredReadReplica: number;
  /** Read committed: the aborted transactions overlapping `records` (FetchResponse aborted_transactions). */
  readonly abortedTransactions?: ReadonlyArray<{ readonly producerId: bigint; readonly firstOffset: bigint }>;
  /** Fetch v12+: where the leader's log ends the fetcher's last fetched epoch, when the logs diverged. */
  readonly divergingEpoch?: { readonly epoch: number; readonly endOffset: bigint };
}

interface PartitionWatch {
  /** The visible end offset when the bytes were last counted. */
  lastEnd: bigint;
  bytes: number;
}

export class DelayedFetch extends DelayedOperation {
  private readonly watches: PartitionWatch[];

  constructor(
    delayMs: number,
    readonly params: FetchParams,
    readonly partitions: readonly FetchPartitionInfo[],
    private readonly getPartition: (tp: TopicPartition) => Partition | undefined,
    private readonly read: (
      params: FetchParams,
      partitions: readonly FetchPartitionInfo[],
    ) => FetchPartitionData[],
    private readonly respond: (results: FetchPartitionData[]) => void,
    /** What the first read found per partition (same order), so it is not counted again. */
    initial: ReadonlyArray<{ end: bigint; bytes: number }>,
    /** Partitions whose bytes the leader quota holds back from this (follower) fetch: not counted. */
    private readonly throttled: (partition: Partition) => boolean = () => false,
  ) {
    super(delayMs);
    this.watches = initial.map((i) => ({ lastEnd: i.end, bytes: i.bytes }));
  }

  tryComplete(): boolean {
    let accumulated = 0;
    for (let i = 0; i < this.partitions.length; i++) {
      const info = this.partitions[i];
      const partition = this.getPartition(info.topicPartition);
      // Kafka's cases B–F: anything the fetcher must hear about completes the fetch now.
      if (partition === undefined || partition.log === undefined) return this.forceComplete();
      if (this.params.fetchOnlyFromLeader && !partition.isLeader) return this.forceComplete();
      if (partition.checkCurrentLeaderEpoch(info.currentLeaderEpoch) !== undefined)
        return this.forceComplete();
      const log = partition.log;
      if (info.fetchOffset < log.logStartOffset || info.fetchOffset > log.logEndOffset)
        return this.forceComplete();
      const end = partition.visibleEndOffset(this.params.isolation);
      const w = this.watches[i];
      if (end !== w.lastEnd) {
        w.lastEnd = end;
        const needed = this.params.minBytes - accumulated;
        if (end > info.fetchOffset && needed <= RECORD_BATCH_OVERHEAD) {
          // A visible offset past the fetch offset means at least one whole batch to return, and a batch
          // is never smaller than its header: enough without reading it (min.bytes=1, the default for
          // followers and consumers). The completion reads it once; Kafka counts from offset metadata.
          w.bytes = RECORD_BATCH_OVERHEAD;
        } else if (end > info.fetchOffset) {
          try {
            w.bytes = partition.readRecords(
              info.fetchOffset,
              info.currentLeaderEpoch,
              // Only as many bytes as are still missing: a lower bound is enough to decide.
              Math.max(1, Math.min(info.partitionMaxBytes, this.params.minBytes - accumulated)),
              this.params.isolation,
              this.params.fetchOnlyFromLeader,
              true,
            ).records.length;
          } catch {
            return this.forceComplete();
          }
        } else {
          w.bytes = 0;
        }
      }
      if (w.bytes > 0 && this.throttled(partition)) continue;
      accumulated += w.bytes;
    }
    return accumulated >= this.params.minBytes ? this.forceComplete() : false;
  }

  onComplete(): void {
    this.respond(this.read(this.params, this.partitions));
  }

  onExpiration(): void {}
}
