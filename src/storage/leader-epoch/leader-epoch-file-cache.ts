// LeaderEpochFileCache: the (leader epoch → first offset of that epoch) history of one partition replica,
// backed by its leader-epoch-checkpoint file. Kafka's LeaderEpochFileCache (KIP-101, KIP-279): followers
// use it to answer OffsetsForLeaderEpoch and truncate to the divergence point instead of the high watermark.
//
// Invariants (kept by assign, as Kafka does): epochs strictly increase, and so do start offsets. Every
// change is written to the checkpoint atomically (temporary file, fsync, rename, directory fsync). assign
// (by default), truncateFromEnd and clearAndFlush write it before they return; assign's background write
// (a new leader's epoch, a follower's first batch of a new epoch) is made durable off the event loop, and
// before the log's recovery point passes the entry (writePendingNow, see assign). truncateFromStart — retention and
// DeleteRecords moving the log start offset, several times a second per partition on a busy broker with
// small segments — writes it in the background, as Kafka 3.7's truncateFromStartAsyncFlush does
// (KAFKA-15046): off the event loop, never overtaking a later synchronous write (OrderedAtomicFile). A
// crash before it lands leaves entries below the log start offset in the file, which is harmless: the log
// loader truncates the cache from the log start offset again. close() writes what is still pending.
//
// A malformed or truncated checkpoint is not trusted: load logs one WARN line and starts with an empty
// cache, leaving the file as it is until the next change rewrites it. Starting empty is safe because the
// log loader re-assigns the epoch of every batch it reads during recovery, and a leader-epoch history that
// is too short only makes a follower truncate further (to the high watermark), never serve wrong data;
// guessing at a damaged file's contents could make it keep divergent data.

import { existsSync, writeFileSync } from "node:fs";
import { Logger } from "../../common/logger.js";
import { OrderedAtomicFile } from "../../common/ordered-atomic-file.js";
import { CheckpointFileError } from "../checkpoint/checkpoint-file.js";
import { type EpochEntry, LeaderEpochCheckpointFile } from "./leader-epoch-checkpoint-file.js";

export type { EpochEntry } from "./leader-epoch-checkpoint-file.js";

/** OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH. */
export const UNDEFINED_EPOCH = -1;
/** OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH_OFFSET. */
export const UNDEFINED_EPOCH_OFFSET = -1n;

export interface EpochEndOffset {
  epoch: number;
  endOffset: bigint;
}

export class LeaderEpochFileCache {
  /** Sorted by epoch (and so by start offset). */
  private epochs: EpochEntry[] = [];
  private readonly file: OrderedAtomicFile;

  private constructor(
    private readonly checkpoint: LeaderEpochCheckpointFile,
    private readonly logger: Logger,
  ) {
    this.file = new OrderedAtomicFile(checkpoint.path, (e) =>
      logger.warn(`Could not write the leader epoch checkpoint ${checkpoint.path}: ${e.message}`),
    );
  }

  /**
   * Loads `<partitionDir>/leader-epoch-checkpoint`, creating it empty when missing (as Kafka's
   * CheckpointFile does). A malformed file gives one WARN line and an empty cache (see the top of file).
   */
  static load(partitionDir: string, logger?: Logger): LeaderEpochFileCache {
    const checkpoint = LeaderEpochCheckpointFile.forPartitionDir(partitionDir);
    const log =
      logger ?? new Logger("kafka.server.epoch.LeaderEpochFileCache", `LeaderEpochCache ${partitionDir}`);
    const cache = new LeaderEpochFileCache(checkpoint, log);
    cache.file.removeLeftovers();
    if (!existsSync(checkpoint.path)) {
      writeFileSync(checkpoint.path, "");
      return cache;
    }
    let entries: EpochEntry[];
    try {
      entries = checkpoint.read();
    } catch (e) {
      if (!(e instanceof CheckpointFileError)) throw e;
      log.warn(
        `Ignoring malformed leader epoch checkpoint, starting with an empty epoch cache: ${e.message}`,
      );
      return cache;
    }
    for (const entry of entries) {
      if (entry.epoch < 0 || entry.startOffset < 0n) {
        log.warn(
          `Ignoring leader epoch checkpoint ${checkpoint.path} with invalid entry ${entryString(entry)}, starting with an empty epoch cache`,
        );
        cache.epochs = [];
        return cache;
      }
      cache.assignEntry(entry);
    }
    return cache;
  }

  /**
   * The cache of a partition directory just created: an empty checkpoint file, as load() leaves one, without
   * looking for what cannot be there.
   */
  static createNew(partitionDir: string, logger: Logger): LeaderEpochFileCache {
    const checkpoint = LeaderEpochCheckpointFile.forPartitionDir(partitionDir);
    writeFileSync(checkpoint.path, "");
    return new LeaderEpochFileCache(checkpoint, logger);
  }

  /** Path of the backing checkpoint file. */
  get path(): string {
    return this.checkpoint.path;
  }

  /**
   * Records that `epoch` starts at `startOffset` (Kafka's assign): nothing changes when the latest entry
   * has the same epoch and a start offset <= startOffset; otherwise every entry with an epoch >= epoch or a
   * start offset >= startOffset is removed first, then the entry is added and the checkpoint rewritten:
   * now, durably (`write` "now"), or off the event loop, durably too ("background"). A new leader's epoch
   * (Partition.makeLeader) and a follower's first batch of a new epoch (UnifiedLog's appends) take the
   * background write: thousands of them arrive in one LeaderAndIsr or fetch round after a failover, and
   * each fsync held the event loop ~2.5–6 ms (docs/benchmarks/cluster.md). The file is durable before the
   * log relies on it: UnifiedLog's flushes call writePendingNow() (or wait for flushed()) before the
   * recovery point moves past the entry, so a crash finds either the entry in the file or the batch that
   * carries it above the recovery point, where recovery assigns its epoch again (LogLoader).
   */
  assign(epoch: number, startOffset: bigint, write: "now" | "background" = "now"): void {
    const entry: EpochEntry = { epoch, startOffset };
    if (this.assignEntry(entry)) {
      this.logger.debug(
        `Appended new epoch entry ${entryString(entry)}. Cache now contains ${this.epochs.length} entries.`,
      );
      if (write === "now") this.flush();
      else this.flushInBackground();
    }
  }

  /** Whether a change is not durable yet (its background write not finished). */
  get hasPendingWrite(): boolean {
    return this.file.pending;
  }

  /** Writes now, durably, what a background write has not made durable yet (see assign). */
  writePendingNow(): void {
    this.file.writeNowIfPending();
  }

  /**
   * The guard Kafka's callers put around assign when they append or recover batches (UnifiedLog.append,
   * LogSegment.recover): assigns only when the batch carries an epoch (>= 0) newer than the latest one, so
   * older or equal epochs are ignored instead of truncating the history. Returns whether it assigned.
   */
  assignIfNewer(epoch: number, startOffset: bigint): boolean {
    if (epoch < 0) return false;
    const latest = this.latestEpoch();
    if (latest !== undefined && epoch <= latest) return false;
    this.assign(epoch, startOffset);
    return true;
  }

  private assignEntry(entry: EpochEntry): boolean {
    if (
      !Number.isInteger(entry.epoch) ||
      entry.epoch < 0 ||
      entry.epoch > 0x7fffffff ||
      entry.startOffset < 0n
    ) {
      throw new RangeError(`Received invalid partition leader epoch entry ${entryString(entry)}`);
    }
    const latest = this.latestEntry();
    if (latest !== undefined && entry.epoch === latest.epoch && entry.startOffset >= latest.startOffset) {
      return false;
    }
    // Remove the entries that would break monotonicity, newest first (maybeTruncateNonMonotonicEntries).
    const removed: EpochEntry[] = [];
    while (this.epochs.length > 0) {
      const last = this.epochs[this.epochs.length - 1];
      if (last.epoch >= entry.epoch || last.startOffset >= entry.startOffset) {
        removed.push(last);
        this.epochs.pop();
      } else {
        break;
      }
    }
    if (removed.length > 1 || (removed.length === 1 && removed[0].startOffset !== entry.startOffset)) {
      this.logger.warn(
        `New epoch entry ${entryString(entry)} caused truncation of conflicting entries [${removed.map(entryString).join(", ")}]. Cache now contains ${this.epochs.length} entries.`,
      );
    }
    this.epochs.push(entry);
    return true;
  }

  nonEmpty(): boolean {
    return this.epochs.length > 0;
  }

  latestEntry(): EpochEntry | undefined {
    return this.epochs[this.epochs.length - 1];
  }

  earliestEntry(): EpochEntry | undefined {
    return this.epochs[0];
  }

  /** The latest epoch with an entry (the current leader epoch once written to). */
  latestEpoch(): number | undefined {
    return this.latestEntry()?.epoch;
  }

  /** The epoch before the latest one. */
  previousEpoch(): number | undefined {
    return this.epochs.length >= 2 ? this.epochs[this.epochs.length - 2].epoch : undefined;
  }

  /** The entry of exactly `epoch`. */
  epochEntry(epoch: number): EpochEntry | undefined {
    const i = this.floorIndex(epoch);
    return i >= 0 && this.epochs[i].epoch === epoch ? this.epochs[i] : undefined;
  }

  /** Index of the entry with the largest epoch <= `epoch`, or -1. */
  private floorIndex(epoch: number): number {
    let lo = 0;
    let hi = this.epochs.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.epochs[mid].epoch <= epoch) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  /**
   * The epoch and end offset for a requested epoch (Kafka's endOffsetFor): UNDEFINED_EPOCH /
   * UNDEFINED_EPOCH_OFFSET for UNDEFINED_EPOCH or an epoch above every known one; logEndOffset for the
   * latest epoch; otherwise the largest known epoch <= requested (or the requested epoch itself when it is
   * below every known epoch) with the start offset of the first epoch above the requested one.
   */
  endOffsetFor(requestedEpoch: number, logEndOffset: bigint): EpochEndOffset {
    let result: EpochEndOffset;
    if (requestedEpoch === UNDEFINED_EPOCH) {
      result = { epoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET };
    } else if (this.latestEpoch() === requestedEpoch) {
      result = { epoch: requestedEpoch, endOffset: logEndOffset };
    } else {
      const floor = this.floorIndex(requestedEpoch);
      const higher = this.epochs[floor + 1];
      if (higher === undefined) {
        result = { epoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET };
      } else if (floor < 0) {
        result = { epoch: requestedEpoch, endOffset: higher.startOffset };
      } else {
        result = { epoch: this.epochs[floor].epoch, endOffset: higher.startOffset };
      }
    }
    return result;
  }

  /** The epoch of the entry covering `offset` (Kafka's epochForOffset). */
  epochForOffset(offset: bigint): number | undefined {
    let previous: number | undefined;
    for (const e of this.epochs) {
      if (e.startOffset === offset) return e.epoch;
      if (e.startOffset > offset) return previous;
      previous = e.epoch;
    }
    return previous;
  }

  /**
   * Removes every entry whose start offset is >= endOffset (log truncation); a negative offset is ignored.
   * Written now by default; the log loader's truncations are written in the background (a crash that loses
   * one leaves entries past the log end, which the next load truncates again, as Kafka 3.7's
   * truncateFromEndAsyncFlush relies on).
   */
  truncateFromEnd(endOffset: bigint, write: "now" | "background" = "now"): void {
    const latest = this.latestEntry();
    if (endOffset < 0n || latest === undefined || latest.startOffset < endOffset) return;
    const removed: EpochEntry[] = [];
    while (this.epochs.length > 0 && this.epochs[this.epochs.length - 1].startOffset >= endOffset) {
      removed.push(this.epochs.pop()!);
    }
    if (write === "now") this.flush();
    else this.flushInBackground();
    this.logger.debug(
      `Cleared entries [${removed.map(entryString).join(", ")}] from epoch cache after truncating to end offset ${endOffset}, leaving ${this.epochs.length} entries in the cache.`,
    );
  }

  /**
   * Removes the entries wholly before startOffset (log start offset moved up): every entry with a start
   * offset <= startOffset goes, and the last of them is put back starting at startOffset. Exclusive:
   * truncateFromStart(6) keeps an entry at 6.
   */
  truncateFromStart(startOffset: bigint): void {
    let n = 0;
    while (n < this.epochs.length && this.epochs[n].startOffset <= startOffset) n++;
    if (n === 0) return;
    const firstBefore = this.epochs[n - 1];
    // Already starting there: nothing to write (a load on a full disk must not need to write).
    if (n === 1 && firstBefore.startOffset === startOffset) return;
    const updated: EpochEntry = { epoch: firstBefore.epoch, startOffset };
    const removed = this.epochs.slice(0, n);
    this.epochs = [updated, ...this.epochs.slice(n)];
    this.flushInBackground();
    this.logger.debug(
      `Cleared entries [${removed.map(entryString).join(", ")}] and rewrote first entry ${entryString(updated)} after truncating to start offset ${startOffset}, leaving ${this.epochs.length} in the cache.`,
    );
  }

  /** The entries, oldest first (a copy). */
  epochEntries(): ReadonlyArray<EpochEntry> {
    return this.epochs.slice();
  }

  /** Removes every entry and rewrites the checkpoint. */
  clearAndFlush(): void {
    this.epochs = [];
    this.flush();
  }

  /** Resolves once no background write is under way (its fsyncs done). */
  flushed(): Promise<void> {
    return this.file.flushed();
  }

  /**
   * The log closes: a truncation still only in memory is written now (a failure is logged: the loader
   * truncates from the log start offset again); `write` false (a log closed without writing) drops it.
   * Nothing is written after this.
   */
  close(write = true): void {
    this.file.close(write);
  }

  private flush(): void {
    this.file.write(this.checkpoint.format(this.epochs));
  }

  /** Writes the entries off the event loop, as they are when the write starts (see the top of the file). */
  private flushInBackground(): void {
    this.file.writeInBackground(() => this.checkpoint.format(this.epochs));
  }
}

/** Kafka's EpochEntry.toString. */
function entryString(e: EpochEntry): string {
  return `EpochEntry(epoch=${e.epoch}, startOffset=${e.startOffset})`;
}
