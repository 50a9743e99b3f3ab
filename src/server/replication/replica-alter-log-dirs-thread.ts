// ReplicaAlterLogDirsThread: the copier of replicas moving between the log dirs of this broker (Kafka's
// ReplicaAlterLogDirsThread with its manager, one for the broker). For each partition with a future log
// (LogManager.getOrCreateFutureLog, from AlterReplicaLogDirs or found at startup) it reads the partition's
// current log as bytes from the future log's end (whole batches, isolation log-end, at most chunkBytes a
// read) and appends them to the future log as a follower would (UnifiedLog.appendAsFollower: offsets,
// leader epochs and producer state as they are). It follows the current log as a follower follows its
// leader:
// - the future log's high watermark and log start offset follow the current log's; a current log that
//   starts after the future log's end (retention, DeleteRecords) restarts the future log there;
// - a truncation of the current log (this broker's follower truncating, a new leader) is found with the
//   leader epochs, as a follower's OffsetForLeaderEpoch (KIP-101/279) against the current log's epoch
//   cache, and the future log is truncated to where they agree;
// - once the future log ends where the current log ends, the partition swaps them
//   (Partition.maybeReplaceCurrentWithFutureReplica → LogManager.replaceCurrentWithFutureLog), in the same
//   synchronous step, so no append comes in between, and the partition leaves this copier.
// It never holds the event loop for long: it runs in slices of sliceMs (a few chunk copies each), then
// yields (setImmediate while there is work, backoffMs when every partition waits). Every
// flushIntervalBytes copied, the future log's new segment bytes are written to disk off the event loop
// (fdatasync on the thread pool), so the flush of the swap finds little left to write.
// Throttling (replica.alter.log.dirs.io.max.bytes.per.second) is not decided here: an optional quota
// (Kafka's ReplicaQuota for AlterLogDirsReplication) is asked before each read and told the bytes copied.

import { open } from "node:fs/promises";
import { Logger } from "../../common/logger.js";
import { type TopicPartition, topicPartitionKey } from "../../common/topic-partition.js";
import { KafkaError } from "../../protocol/errors.js";
import { isStorageError } from "../../storage/log-dir-failure-channel.js";
import { isNoSpaceError } from "../../storage/log-dir-space.js";
import type { UnifiedLog } from "../../storage/unified-log.js";
import type { Partition } from "./partition.js";

/** Kafka's ReplicaQuota as the copier uses it (the ReplicationQuotaManager of AlterLogDirsReplication). */
export interface AlterLogDirsQuota {
  isQuotaExceeded(): boolean;
  record(bytes: number): void;
}

export interface ReplicaAlterLogDirsOptions {
  /** Bytes read from the current log at a time (Kafka's replica.fetch.max.bytes, 1 MiB). */
  readonly chunkBytes?: number;
  /** How long one slice of copying may hold the event loop. */
  readonly sliceMs?: number;
  /** The wait when nothing can be copied (throttled, or waiting for the current log). */
  readonly backoffMs?: number;
  /** Bytes copied between two write-backs (fdatasync off the event loop) of a future log. */
  readonly flushIntervalBytes?: number;
}

/** What one step of a partition did. */
type StepResult = "copied" | "swapped" | "waiting" | "gone";

function min(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

export class ReplicaAlterLogDirsThread {
  private readonly partitions = new Map<string, TopicPartition>();
  private readonly unflushedBytes = new Map<string, number>();
  /** Partitions whose future log is being written back (fdatasync off the event loop). */
  private readonly writingBack = new Set<string>();
  /** Per partition, the write-backs started once caught up (before the swap). */
  private readonly finalWriteBacks = new Map<string, number>();
  /** Per partition, the base offset of the segment the last write-back started from. */
  private readonly writtenBackFrom = new Map<string, bigint>();
  /** Partitions whose future log's dir is full (warned once until a copy succeeds again). */
  private readonly full = new Set<string>();
  private readonly logger: Logger;
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private stopped = false;
  private readonly chunkBytes: number;
  private readonly sliceMs: number;
  private readonly backoffMs: number;
  private readonly flushIntervalBytes: number;
  /** replica.alter.log.dirs.io.max.bytes.per.second, when a quota manager is connected. */
  quota: AlterLogDirsQuota | undefined;
  /** Bytes copied in all (for tests and metrics). */
  bytesCopied = 0;

  constructor(
    brokerId: number,
    private readonly getPartition: (tp: TopicPartition) => Partition | undefined,
    options: ReplicaAlterLogDirsOptions = {},
  ) {
    this.logger = new Logger(
      "kafka.server.ReplicaAlterLogDirsThread",
      `ReplicaAlterLogDirsThread-0, brokerId=${brokerId}`,
    );
    this.chunkBytes = options.chunkBytes ?? 1024 * 1024;
    this.sliceMs = options.sliceMs ?? 10;
    this.backoffMs = options.backoffMs ?? 50;
    this.flushIntervalBytes = options.flushIntervalBytes ?? 8 * 1024 * 1024;
  }

  /** Starts (or keeps) copying the partition's current log into its future log. */
  addPartition(tp: TopicPartition): void {
    if (this.stopped) return;
    const key = topicPartitionKey(tp);
    if (!this.partitions.has(key)) {
      this.partitions.set(key, { topic: tp.topic, partition: tp.partition });
      this.logger.info(`Added fetcher for the future replica of ${key}`);
    }
    this.schedule(0);
  }

  /** Stops copying the partition (its future log stays as it is). */
  removePartition(tp: TopicPartition): void {
    const key = topicPartitionKey(tp);
    if (this.partitions.delete(key)) this.logger.info(`Removed fetcher for the future replica of ${key}`);
    this.unflushedBytes.delete(key);
    this.writtenBackFrom.delete(key);
    this.finalWriteBacks.delete(key);
    this.full.delete(key);
  }

  has(tp: TopicPartition): boolean {
    return this.partitions.has(topicPartitionKey(tp));
  }

  get size(): number {
    return this.partitions.size;
  }

  shutdown(): void {
    this.stopped = true;
    this.partitions.clear();
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
  }

  private schedule(delayMs: number): void {
    if (this.stopped || this.partitions.size === 0) return;
    if (this.immediate !== undefined) return;
    if (delayMs <= 0) {
      if (this.timer !== undefined) {
        clearTimeout(this.timer);
        this.timer = undefined;
      }
      this.immediate = setImmediate(() => {
        this.immediate = undefined;
        this.runSlice();
      });
      return;
    }
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.runSlice();
    }, delayMs);
    this.timer.unref();
  }

  /** Copies round-robin over the partitions for at most sliceMs, then schedules the next slice. */
  runSlice(): void {
    const start = performance.now();
    let progressed = false;
    do {
      progressed = false;
      for (const [key, tp] of [...this.partitions]) {
        if (this.stopped) return;
        const r = this.stepSafely(key, tp);
        if (r === "copied") progressed = true;
        if (r === "swapped" || r === "gone") this.removePartition(tp);
      }
    } while (progressed && performance.now() - start < this.sliceMs);
    this.schedule(progressed ? 0 : this.backoffMs);
  }

  private stepSafely(key: string, tp: TopicPartition): StepResult {
    try {
      const r = this.step(key, tp);
      if (r === "copied") this.full.delete(key);
      return r;
    } catch (e) {
      if (e instanceof KafkaError || isStorageError(e)) {
        if (isNoSpaceError(e)) {
          // The target dir is full: the LogManager marked it; the copy goes on once it has space again.
          if (!this.full.has(key))
            this.logger.warn(
              `The future replica of ${key} cannot be written, the copy waits for space: ${(e as Error).message}`,
            );
          this.full.add(key);
          return "waiting";
        }
        this.logger.error(
          `Error copying ${key} into its future replica; the move is abandoned: ${(e as Error).message}`,
        );
        try {
          this.getPartition(tp)?.removeFutureReplica();
        } catch (e2) {
          this.logger.warn(`Could not remove the future replica of ${key}: ${(e2 as Error).message}`);
        }
        return "gone";
      }
      // A bug, not the disk: this partition's copy stops (the future log stays), the broker goes on.
      this.logger.error(`Unexpected error copying ${key}; its copy stops: ${(e as Error).stack ?? e}`);
      return "gone";
    }
  }

  /** One step of a partition: follow truncations and the log start, copy one chunk, or swap. */
  private step(key: string, tp: TopicPartition): StepResult {
    const partition = this.getPartition(tp);
    const current = partition?.log;
    const future = partition?.futureLog;
    if (partition === undefined || current === undefined || future === undefined || partition.isOffline)
      return "gone";
    this.truncateIfDiverged(key, current, future);
    if (future.logEndOffset < current.logStartOffset) {
      this.logger.info(
        `The current log of ${key} starts at ${current.logStartOffset}, after the future log's end ${future.logEndOffset}: the future log restarts there`,
      );
      future.truncateFullyAndStartAt(current.logStartOffset);
    }
    let copied = false;
    if (future.logEndOffset < current.logEndOffset) {
      if (this.quota?.isQuotaExceeded() || partition.isFutureLogDirFull) return "waiting";
      const read = current.read(future.logEndOffset, this.chunkBytes, "log-end", true);
      if (read.records.length > 0) {
        const info = future.appendAsFollower(read.records);
        this.bytesCopied += info.validBytes;
        this.quota?.record(info.validBytes);
        const unflushed = (this.unflushedBytes.get(key) ?? 0) + info.validBytes;
        if (unflushed >= this.flushIntervalBytes && this.writeBack(key, future))
          this.unflushedBytes.set(key, 0);
        else this.unflushedBytes.set(key, unflushed);
        copied = info.validBytes > 0;
      }
    }
    future.updateHighWatermark(current.highWatermark);
    if (current.logStartOffset > future.logStartOffset && current.logStartOffset <= future.highWatermark)
      future.maybeIncrementLogStartOffset(current.logStartOffset, "the current replica's log start offset");
    if (future.logEndOffset === current.logEndOffset && future.logStartOffset >= current.logStartOffset) {
      // Caught up: what is not on disk yet is written back off the event loop first (at most a few
      // rounds while producers keep writing), so the swap's own flush is short.
      if (this.writingBack.has(key)) return "waiting";
      const rounds = this.finalWriteBacks.get(key) ?? 0;
      if ((this.unflushedBytes.get(key) ?? 0) > this.chunkBytes && rounds < 3) {
        this.finalWriteBacks.set(key, rounds + 1);
        if (this.writeBack(key, future)) this.unflushedBytes.set(key, 0);
        return "waiting";
      }
      if (partition.maybeReplaceCurrentWithFutureReplica()) return "swapped";
    }
    return copied ? "copied" : "waiting";
  }

  /**
   * Writes the future log's new bytes to disk off the event loop (fdatasync on the libuv thread pool, of
   * the segments written since the last time), so the swap's flush finds little left to write. Returns
   * false while the previous write-back of the partition is still running.
   */
  private writeBack(key: string, future: UnifiedLog): boolean {
    if (this.writingBack.has(key)) return false;
    const from = this.writtenBackFrom.get(key) ?? -1n;
    const segments = future.segments().filter((s) => s.baseOffset >= from);
    if (segments.length === 0) return true;
    this.writtenBackFrom.set(key, segments[segments.length - 1].baseOffset);
    this.writingBack.add(key);
    (async () => {
      for (const s of segments) {
        const fh = await open(s.logFile, "r").catch(() => undefined);
        if (fh === undefined) continue; // (truncated away or swapped meanwhile)
        try {
          await fh.datasync();
        } finally {
          await fh.close();
        }
      }
    })()
      .catch((e: Error) => this.logger.warn(`Could not write back the future log of ${key}: ${e.message}`))
      .finally(() => this.writingBack.delete(key));
    return true;
  }

  /**
   * Kafka's truncation of a follower by leader epochs, against the current log: the future log keeps what
   * the current log still has at the same offsets and epochs (KIP-101, iterating as KIP-279).
   */
  private truncateIfDiverged(key: string, current: UnifiedLog, future: UnifiedLog): void {
    let target = min(future.logEndOffset, current.logEndOffset);
    const mine = future.leaderEpochCache;
    const theirs = current.leaderEpochCache;
    let fully = false;
    if (mine !== undefined && theirs !== undefined) {
      let epoch = mine.latestEpoch();
      for (let i = 0; epoch !== undefined && i < 64; i++) {
        const t = theirs.endOffsetFor(epoch, current.logEndOffset);
        if (t.epoch < 0 || t.endOffset < 0n) {
          // The current log knows no epoch this old: nothing of the future log is known to match.
          fully = true;
          break;
        }
        if (t.epoch === epoch) {
          target = min(target, t.endOffset);
          break;
        }
        const m = mine.endOffsetFor(t.epoch, future.logEndOffset);
        if (m.epoch === t.epoch) {
          target = min(target, min(t.endOffset, m.endOffset));
          break;
        }
        if (m.epoch < 0) {
          fully = true;
          break;
        }
        epoch = m.epoch;
      }
    }
    if (fully && future.logEndOffset > current.logStartOffset) {
      this.logger.info(`The future log of ${key} shares no leader epoch with the current log: restarting it`);
      future.truncateFullyAndStartAt(current.logStartOffset);
      return;
    }
    if (target < future.logEndOffset) {
      this.logger.info(
        `Truncating the future log of ${key} to offset ${target} (log end offset was ${future.logEndOffset}; the current log ends at ${current.logEndOffset})`,
      );
      future.truncateTo(target);
    }
  }
}
