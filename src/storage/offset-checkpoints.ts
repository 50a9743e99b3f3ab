// OffsetCheckpoints: one offset checkpoint file at the root of every log dir, with its writers and their
// I/O mode; Kafka's LogManager.recoveryPointCheckpoints / logStartOffsetCheckpoints and
// ReplicaManager.highWatermarkCheckpoints (the OffsetCheckpoints maps by log dir). On disk:
//   recovery-point-offset-checkpoint   per partition: offset up to which the log is flushed and valid
//   log-start-offset-checkpoint        per partition: log start offset (moved by retention/DeleteRecords)
//   replication-offset-checkpoint      per partition: high watermark (read and asked for by the replica layer)
// each in OffsetCheckpointFile's format (version 0, a count, `<topic> <partition> <offset>` lines), one
// entry per partition whose log is in that dir, in the order the LogManager holds its logs.
// The I/O mode is this owner's, not the caller's:
// - checkpoint(): off the event loop, as Kafka's scheduler threads write them (OrderedAtomicFile: the file
//   written and fsynced on libuv's thread pool, renamed on the event loop, then the dir fsynced). The
//   offsets are read when the write starts, so a write asked for while one is under way is merged into one
//   more after it, and the file never goes back to older contents.
// - writeOnShutdown(): now, on the event loop, durably (`.tmp` fsynced, renamed, dir fsynced), for the
//   way down, when the offsets must be on disk before it goes on; close() then ends the writers.
// Invariants: an offline dir's file is not written (Kafka leaves a failed dir's checkpoints alone); the
// offsets of partitions whose log could not be opened at startup are kept in every later write of their
// dir while the partition is offline, so a repaired log keeps them; a full dir keeps its previous file
// (older offsets: a recovery re-reads a little more) and a background write's ENOSPC marks it full; a
// damaged file is reported (WARN) and read as empty (the logs then recover from offset 0).

import { join } from "node:path";
import type { Logger } from "../common/logger.js";
import { OrderedAtomicFile } from "../common/ordered-atomic-file.js";
import { type TopicPartition, topicPartitionKey } from "../common/topic-partition.js";
import { type OffsetCheckpointEntry, OffsetCheckpointFile } from "./checkpoint/offset-checkpoint-file.js";
import type { LogDirFailureChannel } from "./log-dir-failure-channel.js";
import { isNoSpaceError } from "./log-dir-space.js";
import type { LogAndDir } from "./log-dirs-loader.js";
import type { UnifiedLog } from "./unified-log.js";

export const RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint";
export const LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint";
export const REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint";

export class OffsetCheckpoints {
  /** The writer of each dir's file, by dir. */
  private readonly files = new Map<string, OrderedAtomicFile>();
  /** Offsets of offline partitions read at startup, by dir, then by "<topic>-<partition>". */
  private readonly retained = new Map<string, Map<string, OffsetCheckpointEntry>>();

  constructor(
    /** The file's name in each log dir. */
    readonly name: string,
    private readonly failures: LogDirFailureChannel,
    /** The offsets of the partitions whose log is in `dir` now. */
    private readonly offsetsIn: (dir: string) => Iterable<OffsetCheckpointEntry>,
    private readonly logger: Logger,
  ) {}

  /** Reads `dir`'s file; a damaged one is reported and ignored (logs then recover from offset 0). */
  read(dir: string): Map<string, bigint> {
    const out = new Map<string, bigint>();
    const path = join(dir, this.name);
    try {
      for (const [key, { offset }] of new OffsetCheckpointFile(path).read()) out.set(key, offset);
    } catch (e) {
      this.logger.warn(`Ignoring damaged checkpoint ${path}: ${(e as Error).message}`);
    }
    return out;
  }

  /** Keeps the offset `offsets` (read from `dir`) hold for an offline partition in later writes of `dir`. */
  retain(dir: string, tp: TopicPartition, offsets: ReadonlyMap<string, bigint>): void {
    const key = topicPartitionKey(tp);
    const offset = offsets.get(key);
    if (offset === undefined) return;
    let kept = this.retained.get(dir);
    if (kept === undefined) {
      kept = new Map();
      this.retained.set(dir, kept);
    }
    kept.set(key, { tp, offset });
  }

  /** Writes every online dir's file off the event loop (see the top of the file). */
  checkpoint(): void {
    for (const dir of this.failures.onlineLogDirs()) this.writer(dir).writeInBackground(() => this.text(dir));
  }

  /** Writes every online dir's file now and durably: only on the way down. */
  writeOnShutdown(): void {
    for (const dir of this.failures.onlineLogDirs()) {
      try {
        this.writer(dir).write(this.text(dir));
      } catch (e) {
        if (!isNoSpaceError(e)) throw e;
        this.failures.markLogDirFull(dir, e as Error);
      }
    }
  }

  /** Resolves once no write is under way off the event loop. */
  async written(): Promise<void> {
    for (const file of this.files.values()) await file.flushed();
  }

  /** Ends the writers: a background write not yet done is dropped, nothing is written afterwards. */
  close(): void {
    for (const file of this.files.values()) file.close(false);
  }

  /** The file's text for `dir` now: its logs' offsets, and those kept for offline partitions. */
  private text(dir: string): string {
    const entries = new Map<string, OffsetCheckpointEntry>();
    for (const [key, e] of this.retained.get(dir) ?? []) {
      if (this.failures.offlineLog(e.tp) !== undefined) entries.set(key, e);
    }
    for (const e of this.offsetsIn(dir)) entries.set(topicPartitionKey(e.tp), e);
    return new OffsetCheckpointFile(join(dir, this.name)).format(entries);
  }

  /** The writer of `dir`'s file; a background write's failure is handled as a write's. */
  private writer(dir: string): OrderedAtomicFile {
    let file = this.files.get(dir);
    if (file === undefined) {
      const path = join(dir, this.name);
      file = new OrderedAtomicFile(path, (e) => {
        if (isNoSpaceError(e)) this.failures.markLogDirFull(dir, e);
        else this.logger.error(`Error while writing ${path}: ${e.message}`);
      });
      this.files.set(dir, file);
    }
    return file;
  }
}

/** The three offset checkpoints of the log dirs, each fed from the logs the LogManager holds. */
export class LogDirCheckpoints {
  /** recovery-point-offset-checkpoint: the logs' and future logs' recovery points. */
  readonly recoveryPoints: OffsetCheckpoints;
  /** log-start-offset-checkpoint: the logs' and future logs' log start offsets. */
  readonly logStartOffsets: OffsetCheckpoints;
  /** replication-offset-checkpoint: the current logs' high watermarks (for the replica layer). */
  readonly highWatermarks: OffsetCheckpoints;

  constructor(
    failures: LogDirFailureChannel,
    /** The current logs, then (withFutureLogs) the future logs, in the LogManager's order. */
    logs: (withFutureLogs: boolean) => Iterable<LogAndDir>,
    logger: Logger,
  ) {
    const offsets = (value: (log: UnifiedLog) => bigint, withFutureLogs: boolean) =>
      function* (dir: string): Generator<OffsetCheckpointEntry> {
        // (A partition's current and future logs are never in the same dir: one entry per partition.)
        for (const { log, dir: d } of logs(withFutureLogs))
          if (d === dir) yield { tp: log.topicPartition, offset: value(log) };
      };
    const file = (name: string, value: (log: UnifiedLog) => bigint, withFutureLogs: boolean) =>
      new OffsetCheckpoints(name, failures, offsets(value, withFutureLogs), logger);
    this.recoveryPoints = file(RECOVERY_POINT_CHECKPOINT, (log) => log.recoveryPoint, true);
    this.logStartOffsets = file(LOG_START_OFFSET_CHECKPOINT, (log) => log.logStartOffset, true);
    this.highWatermarks = file(REPLICATION_OFFSET_CHECKPOINT, (log) => log.highWatermark, false);
  }

  private all(): OffsetCheckpoints[] {
    return [this.recoveryPoints, this.logStartOffsets, this.highWatermarks];
  }

  /** Resolves once none of them is being written off the event loop. */
  async written(): Promise<void> {
    for (const c of this.all()) await c.written();
  }

  /** The way down: each written now and durably, then its writers closed. */
  writeOnShutdownAndClose(): void {
    const all = this.all();
    for (const c of all) c.writeOnShutdown();
    for (const c of all) c.close();
  }
}
