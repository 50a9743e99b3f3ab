// FutureLogs: the LogManager's side of moving a partition's log to another log dir (AlterReplicaLogDirs;
// Kafka's LogManager.futureLogs, preferredLogDirs and replaceCurrentWithFutureLog). The replica layer's
// ReplicaAlterLogDirsThread copies the current log into the future log; this module creates, removes and
// swaps them. On disk it owns
//   <topic>-<partition>.<id>-future/   a future log: the partition's log being copied into this dir; it
//                                      replaces the current log once caught up
// Invariants: a partition has at most one future log, never in the dir of its current log, and its
// cleaning is paused while the future log exists. The future log's recovery point and log start offset are
// in its dir's checkpoints, its high watermark is not (it has none of its own).
// The swap of a future log for the current one (replaceCurrentWithFutureLog, one synchronous step: no
// append can come in between) keeps exactly one whole copy on disk at every moment a crash can cut it:
//   1. the future log is flushed, the current log's leader epochs are written to its leader-epoch-checkpoint,
//      the current log's quarantines (quarantine-*, log-quarantine.ts) are moved into it, and it is closed;
//   2. the current log is closed and renamed `<tp>.<id>-delete` (durably);
//   3. the future dir is renamed `<tp>` (durably) and opened as the partition's log;
//   4. the checkpoints of both dirs are asked for (written off the event loop: until they land, a crash
//      finds the old dir's entries, which name no log there any more, and the new dir's entries of the
//      future log, which are the same partition's) and the `-delete` dir is removed in the background.
// At startup a future log with its current log resumes (the replica layer copies on); a future log whose
// current log is gone (a crash between 2 and 3) completes the swap: it is renamed `<tp>` and loaded as the
// log. Neither happens while a log dir that may hold the current log is offline.

import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fsyncDirectory } from "../common/atomic-file.js";
import type { Logger } from "../common/logger.js";
import { type TopicPartition, topicPartitionKey } from "../common/topic-partition.js";
import { KafkaError } from "../protocol/errors.js";
import { PartitionMetadataFile } from "./checkpoint/partition-metadata-file.js";
import type { LogCleanerManager } from "./cleaner/log-cleaner-manager.js";
import { LeaderEpochCheckpointFile } from "./leader-epoch/leader-epoch-checkpoint-file.js";
import { isStorageError, type LogDirFailureChannel } from "./log-dir-failure-channel.js";
import { isNoSpaceError } from "./log-dir-space.js";
import type { LogAndDir, OpenLog } from "./log-dirs-loader.js";
import { FUTURE_DIR_SUFFIX, logDirNameWithSuffix } from "./log-file-names.js";
import { QUARANTINE_DIR_PREFIX } from "./log-quarantine.js";
import type { LogsToBeDeleted } from "./logs-to-be-deleted.js";
import type { LogDirCheckpoints } from "./offset-checkpoints.js";
import type { UnifiedLog } from "./unified-log.js";

/** What the future logs need of the LogManager that holds the partitions' current logs. */
export interface FutureLogsContext {
  /** The current logs by "<topic>-<partition>": the swap puts a future log in the place of one. */
  readonly logs: Map<string, LogAndDir>;
  readonly failures: LogDirFailureChannel;
  readonly logsToBeDeleted: LogsToBeDeleted;
  /** Asked for when a future log comes or goes (written off the event loop). */
  readonly checkpoints: LogDirCheckpoints;
  readonly openLog: OpenLog;
  /** The cleaner's bookkeeping, when log.cleaner.enable. */
  cleanerManager(): LogCleanerManager | undefined;
}

/**
 * Moves the quarantines of a partition dir (`quarantine-*`, log-quarantine.ts: what recovery set aside)
 * into the dir of the log that replaces it: renamed, or copied when the log dirs are on different file
 * systems; one already there (a swap that was cut short) is kept.
 */
function carryQuarantines(from: string, to: string): void {
  for (const e of readdirSync(from, { withFileTypes: true })) {
    if (!e.isDirectory() || !e.name.startsWith(QUARANTINE_DIR_PREFIX)) continue;
    const target = join(to, e.name);
    if (existsSync(target)) continue;
    try {
      renameSync(join(from, e.name), target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EXDEV") throw err;
      cpSync(join(from, e.name), `${target}.tmp`, { recursive: true });
      renameSync(`${target}.tmp`, target);
    }
  }
  fsyncDirectory(to);
}

/** The topic id in a partition dir's partition.metadata, if it has a readable one. */
function readTopicId(partitionDir: string): string | undefined {
  try {
    return new PartitionMetadataFile(partitionDir).read()?.topicId;
  } catch {
    return undefined;
  }
}

export class FutureLogs {
  /** Future logs (`<tp>.<id>-future`) by "<topic>-<partition>": Kafka's futureLogs (filled at startup). */
  readonly byPartition = new Map<string, LogAndDir>();
  /** Where a partition's next log goes (AlterReplicaLogDirs before the replica exists): Kafka's preferredLogDirs. */
  private readonly preferredLogDirs = new Map<string, string>();

  constructor(
    private readonly ctx: FutureLogsContext,
    private readonly logger: Logger,
  ) {}

  /** The partition's future log (being copied into another dir), if any. */
  get(tp: TopicPartition): LogAndDir | undefined {
    return this.byPartition.get(topicPartitionKey(tp));
  }

  all(): LogAndDir[] {
    return [...this.byPartition.values()];
  }

  /** The dir the partition's next log (current or future) should be created in, if one was asked for. */
  preferredLogDir(tp: TopicPartition): string | undefined {
    return this.preferredLogDirs.get(topicPartitionKey(tp));
  }

  /** The preferred dir is satisfied (the log was created) or moot (the partition is deleted). */
  forgetPreferredLogDir(tp: TopicPartition): void {
    this.preferredLogDirs.delete(topicPartitionKey(tp));
  }

  /**
   * Remembers the dir a partition's log should be created in (Kafka's maybeUpdatePreferredLogDir): the
   * next getOrCreateLog / getOrCreate uses it. Not when the current or future log is already there.
   */
  maybeUpdatePreferredLogDir(tp: TopicPartition, dir: string): void {
    const key = topicPartitionKey(tp);
    if (this.ctx.logs.get(key)?.dir === dir || this.byPartition.get(key)?.dir === dir) return;
    this.preferredLogDirs.set(key, dir);
  }

  /**
   * Kafka's getOrCreateLog(isFuture = true): the partition's future log, created empty as
   * `<tp>.<id>-future` in its preferred dir (which must not be the current log's dir). Its cleaning is paused
   * until the move ends. KAFKA_STORAGE_ERROR while a log dir is offline (the partition could be there) or
   * when the dir is full or the log cannot be created there; the current log is not affected.
   */
  getOrCreate(tp: TopicPartition, topicId?: string): UnifiedLog {
    const key = topicPartitionKey(tp);
    const existing = this.byPartition.get(key);
    if (existing) return existing.log;
    const dir = this.preferredLogDirs.get(key);
    if (dir === undefined)
      throw new Error(`Can not create the future log for ${key} without having a preferred log directory`);
    const current = this.ctx.logs.get(key);
    if (current === undefined)
      throw new KafkaError("KAFKA_STORAGE_ERROR", `The current replica for ${key} is offline`);
    if (current.dir === dir)
      throw new Error(
        `Can not create the future log for ${key} in the current log directory of this partition`,
      );
    const { failures } = this.ctx;
    if (failures.offlineLogDirs().size > 0)
      throw new KafkaError(
        "KAFKA_STORAGE_ERROR",
        `Can not create log for ${key} because log directories ${[...failures.offlineLogDirs().keys()].join(",")} are offline`,
      );
    if (failures.isLogDirFull(dir))
      throw new KafkaError(
        "KAFKA_STORAGE_ERROR",
        `Can not create the future log for ${key}: log dir ${dir} is full`,
      );
    const name = logDirNameWithSuffix(tp, FUTURE_DIR_SUFFIX);
    const logDir = join(dir, name);
    let log: UnifiedLog;
    try {
      mkdirSync(logDir, { recursive: true });
      // The topic id comes along (from the current log's partition.metadata when not given).
      const id = topicId ?? readTopicId(current.log.dir);
      if (id !== undefined) new PartitionMetadataFile(logDir).write(id);
      log = this.ctx.openLog(dir, tp, { hadCleanShutdown: true, recoveryPoint: 0n }, name);
    } catch (e) {
      if (!isStorageError(e)) throw e;
      if (isNoSpaceError(e)) failures.markLogDirFull(dir, e as Error);
      try {
        rmSync(logDir, { recursive: true, force: true });
      } catch {
        // an empty future dir at worst, loaded (and resumed or removed) at the next start
      }
      throw new KafkaError(
        "KAFKA_STORAGE_ERROR",
        `Error while creating the future log for ${key} in dir ${dir}: ${(e as Error).message}`,
      );
    }
    this.byPartition.set(key, { log, dir });
    this.preferredLogDirs.delete(key);
    this.ctx.cleanerManager()?.abortAndPauseCleaning(tp);
    this.logger.info(`Created log for partition ${key} in ${logDir}`);
    return log;
  }

  /** Removes the partition's future log (a move cancelled or redirected, or the partition deleted). */
  remove(tp: TopicPartition): void {
    const key = topicPartitionKey(tp);
    const fut = this.byPartition.get(key);
    if (fut === undefined) return;
    this.byPartition.delete(key);
    try {
      fut.log.close();
    } catch (e) {
      if (!isStorageError(e)) throw e;
      fut.log.closeWithoutWriting();
    }
    try {
      // Renamed to `-delete` at once (a start removes what is left), removed off the event loop: this runs
      // on the request path (AlterReplicaLogDirs, a reassignment, a LeaderAndIsr).
      this.ctx.logsToBeDeleted.removeInBackground(this.ctx.logsToBeDeleted.rename(fut.dir, tp, fut.log.dir));
    } catch (e) {
      if (!isStorageError(e)) throw e;
      this.logger.warn(`Could not remove the future log ${fut.log.dir}: ${(e as Error).message}`);
    }
    this.resumeCleaningAfterMove(tp);
    this.ctx.checkpoints.recoveryPoints.checkpoint();
    this.ctx.checkpoints.logStartOffsets.checkpoint();
    this.logger.info(`Removed the future log of ${key} in ${fut.dir}`);
  }

  /** A partition being moved is not cleaned until the move ends (Kafka pauses it); a new cleaner hears so. */
  pauseCleaning(cleaner: LogCleanerManager): void {
    for (const { log } of this.byPartition.values()) cleaner.abortAndPauseCleaning(log.topicPartition);
  }

  private resumeCleaningAfterMove(tp: TopicPartition): void {
    const cm = this.ctx.cleanerManager();
    if (cm?.cleaningState(tp)?.kind === "paused") cm.resumeCleaning(tp);
  }

  /**
   * Future logs found at startup whose current log is gone: the broker stopped between the rename of the
   * current log to `-delete` and the rename of the future log (the future log was complete and flushed by
   * then). The swap is completed: the future dir becomes `<tp>` and its log the partition's log.
   */
  completeInterruptedSwaps(): void {
    const { logs, failures } = this.ctx;
    for (const [key, fut] of [...this.byPartition]) {
      if (logs.has(key)) continue;
      const tp = fut.log.topicPartition;
      if (failures.offlineLog(tp) !== undefined || failures.offlineLogDirsWithLogs().length > 0) {
        this.logger.warn(
          `Future log ${fut.log.dir} has no current log, but the current log may be in an offline log dir: left as it is`,
        );
        continue;
      }
      try {
        const { recoveryPoint, logStartOffset } = fut.log;
        fut.log.close();
        const to = join(fut.dir, key);
        renameSync(fut.log.dir, to);
        fsyncDirectory(fut.dir);
        this.byPartition.delete(key);
        const log = this.ctx.openLog(fut.dir, tp, { hadCleanShutdown: true, recoveryPoint, logStartOffset });
        logs.set(key, { log, dir: fut.dir });
        this.logger.info(
          `Completed the interrupted replacement of the current log of ${key} with its future log in ${fut.dir}`,
        );
      } catch (e) {
        if (!isStorageError(e)) throw e;
        this.byPartition.delete(key);
        failures.markLogOffline(tp, fut.dir, e as Error);
      }
    }
  }

  /**
   * Kafka's replaceCurrentWithFutureLog: the future log, caught up to the current log's end, becomes the
   * partition's log (the steps and their crash safety are at the top of this file). Synchronous: the
   * caller holds the partition (no append in between). Returns the new log, with the old high watermark.
   */
  replaceCurrentWithFutureLog(tp: TopicPartition): UnifiedLog {
    const { logs, failures } = this.ctx;
    const key = topicPartitionKey(tp);
    const cur = logs.get(key);
    const fut = this.byPartition.get(key);
    if (cur === undefined)
      throw new KafkaError("KAFKA_STORAGE_ERROR", `The current replica for ${key} is offline`);
    if (fut === undefined)
      throw new KafkaError("KAFKA_STORAGE_ERROR", `The future replica for ${key} is offline`);
    if (fut.log.logEndOffset !== cur.log.logEndOffset)
      throw new Error(
        `The future log of ${key} ends at ${fut.log.logEndOffset}, the current log at ${cur.log.logEndOffset}`,
      );
    this.logger.info(`Attempting to replace current log ${cur.log} with ${fut.log} for ${key}`);
    const t0 = performance.now();
    const ms = (): string => (performance.now() - t0).toFixed(0);
    const steps: string[] = [];
    const highWatermark = cur.log.highWatermark;
    const logStartOffset = fut.log.logStartOffset;
    const endOffset = fut.log.logEndOffset;
    // 1. The future log is durable, with the current log's leader epochs (also those no batch carries yet).
    const epochs = [...(cur.log.leaderEpochCache?.epochEntries() ?? [])];
    try {
      fut.log.flush();
      fut.log.close();
      new LeaderEpochCheckpointFile(join(fut.log.dir, "leader-epoch-checkpoint")).write(epochs);
      carryQuarantines(cur.log.dir, fut.log.dir);
      steps.push(`future flushed and closed at ${ms()} ms`);
    } catch (e) {
      if (!isStorageError(e)) throw e;
      this.byPartition.delete(key);
      fut.log.closeWithoutWriting();
      this.resumeCleaningAfterMove(tp);
      throw new KafkaError(
        "KAFKA_STORAGE_ERROR",
        `The future replica for ${key} in ${fut.dir} failed: ${(e as Error).message}`,
      );
    }
    // 2. The current log goes aside; 3. the future log takes its name and place.
    let deleted: string;
    let log: UnifiedLog;
    try {
      // (Not flushed: it is deleted. Until the rename below it is the partition's log, recovered as any.)
      cur.log.close();
      deleted = this.ctx.logsToBeDeleted.rename(cur.dir, tp, cur.log.dir);
      fsyncDirectory(cur.dir);
      logs.delete(key);
      renameSync(fut.log.dir, join(fut.dir, key));
      fsyncDirectory(fut.dir);
      this.byPartition.delete(key);
      steps.push(`renamed at ${ms()} ms`);
      log = this.ctx.openLog(fut.dir, tp, {
        hadCleanShutdown: true,
        recoveryPoint: endOffset,
        logStartOffset,
      });
    } catch (e) {
      if (!isStorageError(e)) throw e;
      logs.delete(key);
      this.byPartition.delete(key);
      failures.markLogOffline(tp, fut.dir, e as Error);
      throw new KafkaError(
        "KAFKA_STORAGE_ERROR",
        `Error while replacing the log of ${key}: ${(e as Error).message}`,
      );
    }
    log.updateHighWatermark(highWatermark);
    // Loading drops epochs that start at the log end (no batch carries them yet); the leader keeps them.
    const cache = log.leaderEpochCache;
    for (const e of epochs)
      if (cache !== undefined && e.epoch > (cache.latestEpoch() ?? -1)) cache.assign(e.epoch, e.startOffset);
    logs.set(key, { log, dir: fut.dir });
    // 4. Checkpoints of both dirs, the cleaner's entry moved with the log, the old copy removed.
    const cm = this.ctx.cleanerManager();
    if (cm !== undefined) {
      const offset = cm.checkpointOf(tp);
      cm.updateCheckpoints(fut.dir, offset === undefined ? undefined : { tp, offset });
      cm.updateCheckpoints(cur.dir);
    }
    this.resumeCleaningAfterMove(tp);
    steps.push(`opened at ${ms()} ms`);
    const { recoveryPoints, logStartOffsets, highWatermarks } = this.ctx.checkpoints;
    recoveryPoints.checkpoint();
    logStartOffsets.checkpoint();
    highWatermarks.checkpoint();
    steps.push(`checkpointed at ${ms()} ms`);
    // The old copy goes in the background (a large file's unlink can take a while); a start finds what is left.
    this.ctx.logsToBeDeleted.removeInBackground(deleted);
    this.logger.info(
      `The current replica is successfully replaced with the future replica for ${key} (${steps.join(", ")})`,
    );
    return log;
  }
}
