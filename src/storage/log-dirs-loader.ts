// LogDirsLoader: what the log dirs hold when the broker starts, read into partition logs (Kafka's
// LogManager.loadLogs; each log itself is opened and recovered by UnifiedLog.open and LogLoader). Per log
// dir, in the order of log.dirs, once its `.lock` is held (log-dir-lock.ts):
//   the dir is created if missing; too little free space for the reserve marks it full (log-dir-space.ts);
//   meta.properties must agree with broker.id and the cluster id (written when missing and the id known);
//   .kafka_cleanshutdown says whether the previous run ended cleanly, and is deleted;
//   `<tp>.<id>-delete` dirs (deletions a stop cut short) are removed;
//   `<tp>` dirs are opened as the partitions' logs, `<tp>.<id>-future` dirs as future logs, each from the
//   dir's recovery-point-offset-checkpoint and log-start-offset-checkpoint (recovered from there after an
//   unclean shutdown).
// Invariants: a partition has at most one log and one future log across the dirs (a second is a startup
// error naming both); a dir that cannot be created or read is offline as a whole, a log that cannot be
// opened is offline on its own with its checkpointed offsets kept (a future log that cannot be opened is
// only a copy: left alone, the partition stays online); a broker.id or cluster id that disagrees stops the
// start. Loading is a generator with one step per log opened, so the caller can hand the event loop back.

import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../common/logger.js";
import { type TopicPartition, topicPartitionKey } from "../common/topic-partition.js";
import {
  deleteCleanShutdownMarker,
  hasCleanShutdownMarker,
  readBrokerMetadata,
  writeBrokerMetadata,
} from "./checkpoint/broker-metadata.js";
import { isStorageError, type LogDirFailureChannel } from "./log-dir-failure-channel.js";
import type { LogDirLocks } from "./log-dir-lock.js";
import { checkLogDirSpaceAtStartup } from "./log-dir-space.js";
import { DELETE_DIR_SUFFIX, parseLogDirName } from "./log-file-names.js";
import type { LogsToBeDeleted } from "./logs-to-be-deleted.js";
import type { LogDirCheckpoints } from "./offset-checkpoints.js";
import type { UnifiedLog } from "./unified-log.js";

/** A partition's log and the log dir it is in. */
export interface LogAndDir {
  readonly log: UnifiedLog;
  readonly dir: string;
}

export interface OpenLogOptions {
  readonly hadCleanShutdown: boolean;
  /** The partition directory was just created (a new log): no load, see LogLoader.loadNew. */
  readonly newDir?: boolean;
  readonly recoveryPoint: bigint;
  readonly logStartOffset?: bigint;
}

/** Opens the log of `tp` in `<dir>/<dirName>` (default `<topic>-<partition>`) with its topic's config. */
export type OpenLog = (dir: string, tp: TopicPartition, opts: OpenLogOptions, dirName?: string) => UnifiedLog;

export interface LogDirsLoaderConfig {
  readonly logDirs: readonly string[];
  readonly brokerId: number;
  /** Null until the metadata layer knows it; then checked against meta.properties. */
  readonly clusterId: string | null;
  /** log.dir.space.reserve.bytes. */
  readonly reserveBytes: number;
}

export class LogDirsLoader {
  /** Whether the previous run of each log dir ended with a clean shutdown. */
  private readonly cleanShutdown = new Map<string, boolean>();

  constructor(
    private readonly config: LogDirsLoaderConfig,
    private readonly failures: LogDirFailureChannel,
    /** Read at the start (they keep an offline partition's offsets). */
    private readonly checkpoints: LogDirCheckpoints,
    private readonly logsToBeDeleted: LogsToBeDeleted,
    private readonly openLog: OpenLog,
    private readonly logger: Logger,
  ) {}

  hadCleanShutdown(dir: string): boolean {
    return this.cleanShutdown.get(dir) ?? false;
  }

  /** Loads every log dir into `logs` and `futureLogs` (by "<topic>-<partition>"), one step per log opened. */
  *load(
    locks: LogDirLocks,
    logs: Map<string, LogAndDir>,
    futureLogs: Map<string, LogAndDir>,
  ): Generator<void> {
    for (const dir of this.config.logDirs) {
      const lockFailure = locks.failure(dir);
      if (lockFailure !== undefined) {
        this.failures.markLogDirOffline(dir, lockFailure);
        continue;
      }
      try {
        mkdirSync(dir, { recursive: true });
        if (checkLogDirSpaceAtStartup(dir, this.config.reserveBytes))
          this.failures.markLogDirFull(dir, new Error(`less than the space reserve is free in ${dir}`));
        this.checkBrokerMetadata(dir);
        const clean = hasCleanShutdownMarker(dir);
        this.cleanShutdown.set(dir, clean);
        if (clean) deleteCleanShutdownMarker(dir);
        yield* this.loadLogsIn(dir, clean, logs, futureLogs);
      } catch (e) {
        if (!isStorageError(e)) throw e;
        this.failures.markLogDirOffline(dir, e as Error);
      }
    }
  }

  private checkBrokerMetadata(dir: string): void {
    const { brokerId, clusterId } = this.config;
    const meta = readBrokerMetadata(dir);
    if (meta === undefined) {
      if (clusterId !== null) writeBrokerMetadata(dir, { brokerId, clusterId });
      return;
    }
    if (meta.brokerId !== brokerId) {
      throw new Error(
        `meta.properties in ${dir}: broker.id ${meta.brokerId} doesn't match the configured broker.id ${brokerId}`,
      );
    }
    if (clusterId !== null && meta.clusterId !== null && meta.clusterId !== clusterId) {
      throw new Error(
        `meta.properties in ${dir}: cluster.id ${meta.clusterId} doesn't match the cluster's id ${clusterId}: the broker is trying to join the wrong cluster (is zookeeper.connect right?)`,
      );
    }
  }

  private *loadLogsIn(
    dir: string,
    hadCleanShutdown: boolean,
    logs: Map<string, LogAndDir>,
    futureLogs: Map<string, LogAndDir>,
  ): Generator<void> {
    const recoveryPoints = this.checkpoints.recoveryPoints.read(dir);
    const logStartOffsets = this.checkpoints.logStartOffsets.read(dir);
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      if (entry.name.endsWith(DELETE_DIR_SUFFIX)) {
        // A deletion interrupted by a crash: finish it.
        this.logsToBeDeleted.removeNow(join(dir, entry.name));
        continue;
      }
      const parsed = parseLogDirName(entry.name);
      if (!parsed || parsed.kind === "delete") continue;
      const { tp } = parsed;
      const isFuture = parsed.kind === "future";
      const key = topicPartitionKey(tp);
      const existing = (isFuture ? futureLogs : logs).get(key);
      if (existing) {
        throw new Error(
          `duplicate ${isFuture ? "future " : ""}log directories for ${key}: ${existing.dir} and ${join(dir, entry.name)}`,
        );
      }
      let log: UnifiedLog;
      try {
        log = this.openLog(
          dir,
          tp,
          {
            hadCleanShutdown,
            recoveryPoint: recoveryPoints.get(key) ?? 0n,
            logStartOffset: logStartOffsets.get(key),
          },
          entry.name,
        );
      } catch (e) {
        if (!isStorageError(e)) throw e;
        if (isFuture) {
          // Only a copy: the partition's log is elsewhere and stays online.
          this.logger.error(
            `Could not open the future log ${join(dir, entry.name)}: ${(e as Error).message}`,
          );
          continue;
        }
        this.failures.markLogOffline(tp, dir, e as Error);
        // Its offsets stay in the dir's checkpoints (recovery point, log start offset, high watermark).
        const { recoveryPoints: rp, logStartOffsets: lso, highWatermarks: hw } = this.checkpoints;
        rp.retain(dir, tp, recoveryPoints);
        lso.retain(dir, tp, logStartOffsets);
        hw.retain(dir, tp, hw.read(dir));
        continue;
      }
      (isFuture ? futureLogs : logs).set(key, { log, dir });
      yield;
    }
    this.logger.info(`Loaded ${logs.size} logs from ${dir} (clean shutdown: ${hadCleanShutdown})`);
  }
}
