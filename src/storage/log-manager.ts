// LogManager: owns every partition log under `log.dirs`.
// On-disk state it owns, per log dir (Kafka's layout):
//   meta.properties                      broker.id / cluster.id; must agree across dirs and with the config
//   .kafka_cleanshutdown                 present only after a clean shutdown; deleted at startup
//   recovery-point-offset-checkpoint     per partition: offset up to which the log is flushed and valid
//   log-start-offset-checkpoint          per partition: log start offset (moved by retention/DeleteRecords)
//   replication-offset-checkpoint        per partition: high watermark (written for the replica layer)
//   cleaner-offset-checkpoint            per compacted partition: first dirty offset (LogCleanerManager)
//   <topic>-<partition>/                 one UnifiedLog each; `<tp>.<id>-delete` dirs are deletions in flight
//   <topic>-<partition>.<id>-future/     a future log (AlterReplicaLogDirs): the partition's log being copied
//                                        into this dir; it replaces the current log once caught up
// Invariants: a log is loaded from exactly one dir; a partition has at most one future log, never in the
// dir of its current log; checkpoints are written atomically (recovery point and log start offset for
// future logs too, high watermarks for current logs only); after an unclean shutdown every log is recovered
// from its checkpointed recovery point.
// The swap of a future log for the current one (replaceCurrentWithFutureLog, one synchronous step: no
// append can come in between) keeps exactly one whole copy on disk at every moment a crash can cut it:
//   1. the future log is flushed, the current log's leader epochs are written to its leader-epoch-checkpoint,
//      the current log's quarantines (quarantine-*, log-quarantine.ts) are moved into it, and it is closed;
//   2. the current log is closed and renamed `<tp>.<id>-delete` (durably);
//   3. the future dir is renamed `<tp>` (durably) and opened as the partition's log;
//   4. the checkpoints of both dirs are written and the `-delete` dir removed in the background.
// At startup a future log with its current log resumes (the replica layer copies on); a future log whose
// current log is gone (a crash between 2 and 3) completes the swap: it is renamed `<tp>` and loaded as the
// log. Neither happens while a log dir that may hold the current log is offline.
// Storage failures (Kafka's LogDirFailureChannel, KAFKA_STORAGE_ERROR): a log dir that cannot be created or
// read is offline as a whole (its checkpoints are not written; with every dir offline startup fails); a
// partition whose log cannot be opened or written is offline on its own, reported once as an ERROR naming
// the partition and the cause, and refused by getOrCreateLog; the other partitions keep working.
// Full log dirs (log-dir-space.ts): ENOSPC/EDQUOT does not take anything offline. The dir is marked full
// (its space reserve released), appends and new logs there answer KAFKA_STORAGE_ERROR at once, while reads,
// deletions (renamed `-delete` and removed in the background at once), retention and checkpoints go on; every
// log.dir.full.probe.interval.ms a full dir is probed and becomes writable again once space is freed.
// Listeners (addLogDirListener) hear every dir that goes offline, becomes full or becomes writable again
// (the replica layer tells the controller, Kafka's /log_dir_event_notification).
// A dir where a log could not be closed cleanly gets no .kafka_cleanshutdown: the next start recovers it.
// Every log dir is locked (`.lock`, log-dir-lock.ts) before anything in it is read or written: with the
// locks its owner took (the broker, before it opens the embedded metadata store), else its own, taken at
// startup and released at shutdown. A dir locked elsewhere fails startup; one that cannot be locked for an
// I/O reason is offline.

import { randomUUID } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fsyncDirectory } from "../common/atomic-file.js";
import { Logger } from "../common/logger.js";
import { OrderedAtomicFile } from "../common/ordered-atomic-file.js";
import type { ScheduledTask, Scheduler } from "../common/scheduler.js";
import type { Time } from "../common/time.js";
import { type TopicPartition, topicPartitionKey } from "../common/topic-partition.js";
import { KafkaError } from "../protocol/errors.js";
import {
  deleteCleanShutdownMarker,
  hasCleanShutdownMarker,
  readBrokerMetadata,
  writeBrokerMetadata,
  writeCleanShutdownMarker,
} from "./checkpoint/broker-metadata.js";
import { OffsetCheckpointFile } from "./checkpoint/offset-checkpoint-file.js";
import { PartitionMetadataFile } from "./checkpoint/partition-metadata-file.js";
import { CleanerThread } from "./cleaner/cleaner.js";
import { type CleanerConfig, DEFAULT_CLEANER_CONFIG } from "./cleaner/cleaner-config.js";
import { LogCleanerManager } from "./cleaner/log-cleaner-manager.js";
import { LeaderEpochCheckpointFile } from "./leader-epoch/leader-epoch-checkpoint-file.js";
import { LeaderEpochFileCache } from "./leader-epoch/leader-epoch-file-cache.js";
import type { LogConfig } from "./log-config.js";
import { LogDirLocks } from "./log-dir-lock.js";
import {
  checkLogDirSpaceAtStartup,
  DEFAULT_FULL_PROBE_INTERVAL_MS,
  isNoSpaceError,
  releaseSpaceReserve,
  tryRestoreSpace,
} from "./log-dir-space.js";
import {
  DELETE_DIR_SUFFIX,
  FUTURE_DIR_SUFFIX,
  logDirNameWithSuffix,
  parseLogDirName,
} from "./log-file-names.js";
import { QUARANTINE_DIR_PREFIX } from "./log-quarantine.js";
import { UnifiedLog } from "./unified-log.js";

export const RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint";
export const LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint";
export const REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint";
/**
 * How long the cleaner works before the event loop gets a turn (its steps, reads of at most 128 KiB mapped
 * or filtered, take a few milliseconds each): about what a clean may add to a request's latency.
 */
export const CLEANER_SLICE_MS = 10;

export interface LogManagerConfig {
  readonly logDirs: readonly string[];
  readonly brokerId: number;
  /** Null until the metadata layer knows it; then checked against meta.properties. */
  readonly clusterId: string | null;
  readonly defaultLogConfig: LogConfig;
  /** log.retention.check.interval.ms (300000). */
  readonly retentionCheckIntervalMs: number;
  /** log.flush.offset.checkpoint.interval.ms (60000). */
  readonly recoveryPointCheckpointIntervalMs: number;
  /** log.flush.start.offset.checkpoint.interval.ms (60000). */
  readonly logStartOffsetCheckpointIntervalMs: number;
  /** log.flush.scheduler.interval.ms (Long.MAX: flush only by policy). */
  readonly flushCheckIntervalMs: number;
  /** log.cleaner.* (default: Kafka's defaults; log.cleaner.enable=true, log.cleaner.backoff.ms=15000). */
  readonly cleanerConfig?: Partial<CleanerConfig>;
  /** producer.id.expiration.ms (86400000) and producer.id.expiration.check.interval.ms (600000). */
  readonly producerIdExpirationMs?: number;
  readonly producerIdExpirationCheckIntervalMs?: number;
  /**
   * log.dir.space.reserve.bytes: space held back in each dir for a full dir's own needs (the broker's
   * default is 8 MiB; without the setting here, none is held).
   */
  readonly logDirSpaceReserveBytes?: number;
  /** log.dir.full.probe.interval.ms (5000): how often a full dir is checked for freed space. */
  readonly logDirFullProbeIntervalMs?: number;
  /**
   * The log dirs' locks, taken by their owner (the broker) before anything read the dirs; it releases
   * them. Without them the LogManager locks the dirs at startup and releases them at shutdown.
   */
  readonly logDirLocks?: LogDirLocks;
}

/** What happened to a log dir: offline (failed), full (no space), or writable again after being full. */
export type LogDirEvent = "offline" | "full" | "writable";
export type LogDirListener = (dir: string, event: LogDirEvent, cause: string) => void;

interface LoadedLog {
  readonly log: UnifiedLog;
  readonly dir: string;
}

/** Why a partition's log or a log dir is offline. */
export interface StorageFailure {
  readonly dir: string;
  readonly cause: string;
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

/** An error from the file system (as opposed to a bug or a Kafka-level error). */
export function isStorageError(e: unknown): boolean {
  return (
    e instanceof Error && !(e instanceof KafkaError) && typeof (e as NodeJS.ErrnoException).code === "string"
  );
}

export class LogManager {
  private readonly logs = new Map<string, LoadedLog>();
  /** Future logs (`<tp>.<id>-future`) by "<topic>-<partition>": Kafka's futureLogs. */
  private readonly futureLogs = new Map<string, LoadedLog>();
  /** Where a partition's next log goes (AlterReplicaLogDirs before the replica exists): Kafka's preferredLogDirs. */
  private readonly preferredLogDirs = new Map<string, string>();
  private readonly topicConfigs = new Map<string, LogConfig>();
  private readonly tasks: ScheduledTask[] = [];
  private readonly logger = new Logger("kafka.log.LogManager");
  /** Whether the previous run of each log dir ended with a clean shutdown. */
  private readonly cleanShutdown = new Map<string, boolean>();
  /** log.cleaner.* with defaults filled in. */
  readonly cleanerConfig: CleanerConfig;
  private _cleanerManager: LogCleanerManager | undefined;
  private _cleaner: CleanerThread | undefined;
  private cleanerTask: ScheduledTask | undefined;
  private cleanerStopped = false;
  /** Log dirs that failed as a whole (Kafka's offline log dirs), with the cause. */
  private readonly failedDirs = new Map<string, string>();
  /** Failed dirs that may still hold partition logs (the path is a directory we could not read). */
  private readonly failedDirsWithLogs = new Set<string>();
  /** The broker's default topic config: the static log.* keys, then dynamic broker configs over them. */
  private _defaultLogConfig: LogConfig;
  /** Partitions whose log could not be opened or written, by "<topic>-<partition>". */
  private readonly failedLogs = new Map<string, StorageFailure>();
  /**
   * The checkpointed offsets of partitions whose log could not be opened, per checkpoint file, kept in the
   * checkpoints written later (as Kafka leaves a failed dir's checkpoints alone) so a repaired log keeps them.
   */
  private readonly retainedOffsets = new Map<string, Map<string, { tp: TopicPartition; offset: bigint }>>();
  /** The writers of the offset checkpoints, by path. */
  private readonly checkpointFiles = new Map<string, OrderedAtomicFile>();
  /** Log dirs out of space (writes refused, reads and deletions served), with the cause. */
  private readonly fullDirs = new Map<string, string>();
  /** Removals of `-delete` dirs under way (removeInBackground). */
  private readonly pendingRemovals = new Set<Promise<void>>();
  /** Dirs where a log could not be closed cleanly at shutdown: no clean-shutdown marker for them. */
  private readonly uncleanDirs = new Set<string>();
  private readonly listeners: LogDirListener[] = [];
  /** The locks of the log dirs: the owner's (config.logDirLocks), or taken by startup and owned here. */
  private logDirLocks: LogDirLocks | undefined;

  constructor(
    readonly config: LogManagerConfig,
    private readonly time: Time,
    private readonly scheduler: Scheduler,
  ) {
    if (config.logDirs.length === 0) throw new Error("log.dirs: expected at least one directory");
    this.cleanerConfig = { ...DEFAULT_CLEANER_CONFIG, ...config.cleanerConfig };
    this._defaultLogConfig = config.defaultLogConfig;
    this.logDirLocks = config.logDirLocks;
  }

  /** Loads every partition log found in the log dirs and checks meta.properties (in one go). */
  startup(): void {
    try {
      for (const _ of this.loadAll()) {
        // each step is one log
      }
      this.afterLoad();
    } catch (e) {
      this.releaseOwnLocks();
      throw e;
    }
  }

  /**
   * The same as startup(), but hands the event loop back every `sliceMs` of loading, so a broker's
   * ZooKeeper session, sockets and timers keep running while thousands of logs load and recover (Kafka
   * loads them on a thread pool; one JavaScript thread takes turns instead).
   */
  async startupSliced(sliceMs = 20): Promise<void> {
    try {
      let sliceStart = this.time.milliseconds();
      for (const _ of this.loadAll()) {
        if (this.time.milliseconds() - sliceStart >= sliceMs) {
          await new Promise<void>((r) => setImmediate(r));
          sliceStart = this.time.milliseconds();
        }
      }
      this.afterLoad();
    } catch (e) {
      this.releaseOwnLocks();
      throw e;
    }
  }

  /** Releases the locks this LogManager took itself (not those its owner handed it). */
  private releaseOwnLocks(): void {
    if (this.logDirLocks !== this.config.logDirLocks) this.logDirLocks?.release();
    this.logDirLocks = this.config.logDirLocks;
  }

  /** Loads the log dirs, one step per log opened. */
  private *loadAll(): Generator<void> {
    // Locked before anything in them is read (LogDirLockedError when another broker has one).
    this.logDirLocks ??= LogDirLocks.acquire(this.config.logDirs);
    for (const dir of this.config.logDirs) {
      const lockFailure = this.logDirLocks.failure(dir);
      if (lockFailure !== undefined) {
        this.markLogDirOffline(dir, lockFailure);
        continue;
      }
      try {
        mkdirSync(dir, { recursive: true });
        if (checkLogDirSpaceAtStartup(dir, this.reserveBytes))
          this.markLogDirFull(dir, new Error(`less than the space reserve is free in ${dir}`));
        this.checkBrokerMetadata(dir);
        const clean = hasCleanShutdownMarker(dir);
        this.cleanShutdown.set(dir, clean);
        if (clean) deleteCleanShutdownMarker(dir);
        yield* this.loadLogsIn(dir, clean);
      } catch (e) {
        if (!isStorageError(e)) throw e;
        this.markLogDirOffline(dir, e as Error);
      }
    }
  }

  private afterLoad(): void {
    if (this.failedDirs.size === this.config.logDirs.length) {
      throw new Error(
        `Shutdown broker because all log dirs in ${this.config.logDirs.join(", ")} have failed`,
      );
    }
    this.completeInterruptedSwaps();
    if (this.cleanerConfig.enableCleaner && this._cleanerManager === undefined) {
      // Reads every online dir's cleaner-offset-checkpoint.
      this._cleanerManager = new LogCleanerManager(this.onlineLogDirs(), () => this.allLogs(), this.time);
      this._cleaner = new CleanerThread(this._cleanerManager, this.cleanerConfig, this.time);
      // A partition being moved between dirs is not cleaned until the move ends (Kafka pauses it).
      for (const { log } of this.futureLogs.values())
        this._cleanerManager.abortAndPauseCleaning(log.topicPartition);
    }
  }

  /**
   * Future logs found at startup whose current log is gone: the broker stopped between the rename of the
   * current log to `-delete` and the rename of the future log (the future log was complete and flushed by
   * then). The swap is completed: the future dir becomes `<tp>` and its log the partition's log.
   */
  private completeInterruptedSwaps(): void {
    for (const [key, fut] of [...this.futureLogs]) {
      if (this.logs.has(key)) continue;
      const tp = fut.log.topicPartition;
      if (this.failedLogs.has(key) || this.failedDirsWithLogs.size > 0) {
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
        this.futureLogs.delete(key);
        const log = this.openLog(fut.dir, tp, this.configFor(tp.topic), {
          hadCleanShutdown: true,
          recoveryPoint,
          logStartOffset,
        });
        this.logs.set(key, { log, dir: fut.dir });
        this.logger.info(
          `Completed the interrupted replacement of the current log of ${key} with its future log in ${fut.dir}`,
        );
      } catch (e) {
        if (!isStorageError(e)) throw e;
        this.futureLogs.delete(key);
        this.markLogOffline(tp, fut.dir, e as Error);
      }
    }
  }

  /** The cleaner's bookkeeping (checkpoints, pauses), when log.cleaner.enable. */
  get cleanerManager(): LogCleanerManager | undefined {
    return this._cleanerManager;
  }

  /** The cleaner (one thread's work), when log.cleaner.enable. */
  get cleaner(): CleanerThread | undefined {
    return this._cleaner;
  }

  /**
   * Kafka's CleanerThread loop on the scheduler: clean the filthiest log; when one was cleaned look again at
   * once (a new task, so the event loop runs in between), else wait log.cleaner.backoff.ms. A clean runs in
   * slices of CLEANER_SLICE_MS, each a task of its own, so a clean of hundreds of megabytes does not hold
   * the event loop for seconds (measured: 12–18 s for 352 MB in one piece; docs/benchmarks.md, issue 16).
   */
  private scheduleCleaner(delayMs: number): void {
    const thread = this._cleaner;
    if (thread === undefined || this.cleanerStopped) return;
    this.cleanerTask = this.scheduler.schedule(
      "kafka-log-cleaner-thread-0",
      () => {
        if (this.cleanerStopped) return;
        let next = this.cleanerConfig.backoffMs;
        try {
          const cleaned = thread.runSlice(CLEANER_SLICE_MS);
          if (cleaned !== false) next = 0; // unfinished (undefined), or a log was cleaned
        } catch (e) {
          this.logger.error(`The log cleaner failed: ${(e as Error).stack ?? e}`);
        }
        this.scheduleCleaner(next);
      },
      delayMs,
    );
  }

  /** Starts the periodic retention, checkpoint and flush tasks. */
  startTasks(): void {
    const c = this.config;
    this.tasks.push(
      this.scheduler.schedule(
        "kafka-log-retention",
        () => {
          this.cleanupLogs();
        },
        c.retentionCheckIntervalMs,
        c.retentionCheckIntervalMs,
      ),
      this.scheduler.schedule(
        "kafka-recovery-point-checkpoint",
        () => this.checkpointRecoveryPoints(true),
        c.recoveryPointCheckpointIntervalMs,
        c.recoveryPointCheckpointIntervalMs,
      ),
      this.scheduler.schedule(
        "kafka-log-start-offset-checkpoint",
        () => this.checkpointLogStartOffsets(true),
        c.logStartOffsetCheckpointIntervalMs,
        c.logStartOffsetCheckpointIntervalMs,
      ),
    );
    const probeMs = c.logDirFullProbeIntervalMs ?? DEFAULT_FULL_PROBE_INTERVAL_MS;
    this.tasks.push(
      this.scheduler.schedule("kafka-log-dir-full-probe", () => this.probeFullLogDirs(), probeMs, probeMs),
    );
    if (this._cleaner !== undefined) {
      this.cleanerStopped = false;
      this.scheduleCleaner(this.cleanerConfig.backoffMs);
    }
    if (c.flushCheckIntervalMs > 0 && c.flushCheckIntervalMs < Number.MAX_SAFE_INTEGER) {
      this.tasks.push(
        this.scheduler.schedule(
          "kafka-log-flusher",
          () => this.flushDirtyLogs(),
          c.flushCheckIntervalMs,
          c.flushCheckIntervalMs,
        ),
      );
    }
  }

  private checkBrokerMetadata(dir: string): void {
    const meta = readBrokerMetadata(dir);
    if (meta === undefined) {
      if (this.config.clusterId !== null)
        writeBrokerMetadata(dir, { brokerId: this.config.brokerId, clusterId: this.config.clusterId });
      return;
    }
    if (meta.brokerId !== this.config.brokerId) {
      throw new Error(
        `meta.properties in ${dir}: broker.id ${meta.brokerId} doesn't match the configured broker.id ${this.config.brokerId}`,
      );
    }
    if (
      this.config.clusterId !== null &&
      meta.clusterId !== null &&
      meta.clusterId !== this.config.clusterId
    ) {
      throw new Error(
        `meta.properties in ${dir}: cluster.id ${meta.clusterId} doesn't match the cluster's id ${this.config.clusterId}: the broker is trying to join the wrong cluster (is zookeeper.connect right?)`,
      );
    }
  }

  private *loadLogsIn(dir: string, hadCleanShutdown: boolean): Generator<void> {
    const recoveryPoints = this.readCheckpoint(dir, RECOVERY_POINT_CHECKPOINT);
    const logStartOffsets = this.readCheckpoint(dir, LOG_START_OFFSET_CHECKPOINT);
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      if (entry.name.endsWith(DELETE_DIR_SUFFIX)) {
        // A deletion interrupted by a crash: finish it.
        rmSync(join(dir, entry.name), { recursive: true, force: true });
        continue;
      }
      const parsed = parseLogDirName(entry.name);
      if (!parsed || parsed.kind === "delete") continue;
      const { tp } = parsed;
      const isFuture = parsed.kind === "future";
      const key = topicPartitionKey(tp);
      const existing = (isFuture ? this.futureLogs : this.logs).get(key);
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
          this.configFor(tp.topic),
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
        this.markLogOffline(tp, dir, e as Error);
        this.retainCheckpointedOffsets(dir, tp, recoveryPoints, logStartOffsets);
        continue;
      }
      (isFuture ? this.futureLogs : this.logs).set(key, { log, dir });
      yield;
    }
    this.logger.info(`Loaded ${this.logs.size} logs from ${dir} (clean shutdown: ${hadCleanShutdown})`);
  }

  /** Reads a checkpoint; a damaged one is reported and ignored (logs then recover from offset 0). */
  private readCheckpoint(dir: string, name: string): Map<string, bigint> {
    const out = new Map<string, bigint>();
    try {
      for (const [key, { offset }] of new OffsetCheckpointFile(join(dir, name)).read()) out.set(key, offset);
    } catch (e) {
      this.logger.warn(`Ignoring damaged checkpoint ${join(dir, name)}: ${(e as Error).message}`);
    }
    return out;
  }

  private openLog(
    dir: string,
    tp: TopicPartition,
    config: LogConfig,
    opts: { hadCleanShutdown: boolean; recoveryPoint: bigint; logStartOffset?: bigint },
    dirName = topicPartitionKey(tp),
  ): UnifiedLog {
    const logDir = join(dir, dirName);
    const logger = new Logger(
      "kafka.log.UnifiedLog",
      `UnifiedLog partition=${topicPartitionKey(tp)}, dir=${dir}`,
    );
    return UnifiedLog.open(logDir, config, {
      time: this.time,
      recoveryPoint: opts.recoveryPoint,
      logStartOffset: opts.logStartOffset,
      hadCleanShutdown: opts.hadCleanShutdown,
      logger,
      // A full dir refuses appends at once and gets the space of deleted segments back at once.
      dirFull: () => this.fullDirs.has(dir),
      onNoSpace: (e) => this.markLogDirFull(dir, e),
      leaderEpochCache: LeaderEpochFileCache.load(logDir, logger),
      scheduler: this.scheduler,
      producerIdExpirationMs: this.config.producerIdExpirationMs,
      producerIdExpirationCheckIntervalMs: this.config.producerIdExpirationCheckIntervalMs,
    });
  }

  /** The topic's effective log config (defaults overridden by topic configs). */
  configFor(topic: string): LogConfig {
    return this.topicConfigs.get(topic) ?? this._defaultLogConfig;
  }

  /** The broker's current default topic config (static log.* keys with dynamic broker configs applied). */
  get defaultLogConfig(): LogConfig {
    return this._defaultLogConfig;
  }

  /**
   * A new broker default (dynamic broker configs changed, Kafka's DynamicLogConfig.reconfigure): the topics
   * get `topicConfig(topic, newDefault)` (their overrides over the new default), open logs take it at once.
   */
  reconfigureDefaultLogConfig(
    newDefault: LogConfig,
    topicConfig: (topic: string, newDefault: LogConfig) => LogConfig,
  ): void {
    this._defaultLogConfig = newDefault;
    const topics = new Set([...this.topicConfigs.keys()]);
    for (const { log } of this.logs.values()) topics.add(log.topicPartition.topic);
    for (const topic of topics) this.setTopicConfig(topic, topicConfig(topic, newDefault));
  }

  /**
   * Sets a topic's config (from the metadata layer, e.g. after AlterConfigs): new logs get it, and the
   * topic's open logs take it at once (segment sizes from their next roll, retention at the next check).
   */
  setTopicConfig(topic: string, config: LogConfig): void {
    this.topicConfigs.set(topic, config);
    for (const { log } of [...this.logs.values(), ...this.futureLogs.values()])
      if (log.topicPartition.topic === topic) log.updateConfig(config);
  }

  getLog(tp: TopicPartition): UnifiedLog | undefined {
    return this.logs.get(topicPartitionKey(tp))?.log;
  }

  allLogs(): Array<{ tp: TopicPartition; log: UnifiedLog; dir: string }> {
    return [...this.logs.values()].map(({ log, dir }) => ({ tp: log.topicPartition, log, dir }));
  }

  /**
   * Returns the partition's log, creating it in the least loaded online log dir if needed. An offline
   * partition, or a missing one while a log dir is offline (it may be there: Kafka's "Can not create log"),
   * is KAFKA_STORAGE_ERROR; a failure to create it makes it offline.
   */
  getOrCreateLog(tp: TopicPartition, topicId?: string): UnifiedLog {
    const existing = this.getLog(tp);
    if (existing) return existing;
    const key = topicPartitionKey(tp);
    const failed = this.failedLogs.get(key);
    if (failed !== undefined) {
      throw new KafkaError(
        "KAFKA_STORAGE_ERROR",
        `The log of partition ${key} in ${failed.dir} is offline: ${failed.cause}`,
      );
    }
    if (this.failedDirsWithLogs.size > 0) {
      // The log may be in a dir that cannot be read: creating it elsewhere would lose its data.
      const cause = new Error(
        `Can not create log for ${key} because log directories ${[...this.failedDirsWithLogs].join(",")} are offline`,
      );
      this.markLogOffline(tp, [...this.failedDirsWithLogs][0], cause);
      throw new KafkaError("KAFKA_STORAGE_ERROR", cause.message);
    }
    const preferred = this.preferredLogDirs.get(key);
    const dir =
      preferred !== undefined && this.onlineLogDirs().includes(preferred) ? preferred : this.nextLogDir();
    if (this.fullDirs.has(dir)) {
      throw new KafkaError(
        "KAFKA_STORAGE_ERROR",
        `Can not create log for ${key}: every online log dir is full (${[...this.fullDirs.keys()].join(",")})`,
      );
    }
    const logDir = join(dir, key);
    let log: UnifiedLog;
    try {
      mkdirSync(logDir, { recursive: true });
      if (topicId !== undefined) new PartitionMetadataFile(logDir).write(topicId);
      log = this.openLog(dir, tp, this.configFor(tp.topic), {
        hadCleanShutdown: true,
        recoveryPoint: 0n,
      });
    } catch (e) {
      if (!isStorageError(e)) throw e;
      if (isNoSpaceError(e)) {
        // Nothing is lost: what was created of it goes, the dir is full, the log can be created later.
        this.markLogDirFull(dir, e as Error);
        try {
          rmSync(logDir, { recursive: true, force: true });
        } catch {
          // an empty partition dir at worst, loaded as an empty log
        }
        throw new KafkaError(
          "KAFKA_STORAGE_ERROR",
          `Error while creating log for ${key} in dir ${dir}: ${(e as Error).message}`,
        );
      }
      this.markLogOffline(tp, dir, e as Error);
      throw new KafkaError("KAFKA_STORAGE_ERROR", `Error while creating log for ${key} in dir ${dir}`);
    }
    this.logs.set(key, { log, dir });
    // The preferred dir is satisfied.
    this.preferredLogDirs.delete(key);
    this.logger.info(`Created log for partition ${topicPartitionKey(tp)} in ${logDir}`);
    return log;
  }

  /**
   * Takes a partition's log offline after an I/O error on it (opening, appending, flushing): one ERROR line
   * naming the partition and the cause; later appends and reads of it answer KAFKA_STORAGE_ERROR.
   */
  markLogOffline(tp: TopicPartition, dir: string, cause: Error): void {
    const key = topicPartitionKey(tp);
    if (this.failedLogs.has(key)) return;
    const reason = cause.message;
    this.failedLogs.set(key, { dir, cause: reason });
    this.logger.error(`Partition ${key} in dir ${dir} is offline: ${reason}`);
    this.notify(dir, "offline", reason);
  }

  /** A log dir that failed as a whole (Kafka's LogDirFailureChannel.maybeAddOfflineLogDir). */
  private markLogDirOffline(dir: string, cause: Error): void {
    if (this.failedDirs.has(dir)) return;
    this.failedDirs.set(dir, cause.message);
    // A path that is not a directory (or does not exist) holds no partition logs.
    const code = (cause as NodeJS.ErrnoException).code;
    if (code !== "ENOTDIR" && code !== "EEXIST" && code !== "ENOENT") this.failedDirsWithLogs.add(dir);
    this.logger.error(`Error while loading log dir ${dir}; the log dir is offline: ${cause.message}`);
    this.notify(dir, "offline", cause.message);
  }

  /** Hears every log dir that goes offline, becomes full, or becomes writable again. */
  addLogDirListener(listener: LogDirListener): void {
    this.listeners.push(listener);
  }

  private notify(dir: string, event: LogDirEvent, cause: string): void {
    for (const l of this.listeners) {
      try {
        l(dir, event, cause);
      } catch (e) {
        this.logger.error(`A log dir listener failed on ${event} of ${dir}: ${(e as Error).stack ?? e}`);
      }
    }
  }

  private get reserveBytes(): number {
    return this.config.logDirSpaceReserveBytes ?? 0;
  }

  /**
   * The dir ran out of space (ENOSPC / EDQUOT): its appends and new logs are refused until a probe finds
   * space again; its reserve is released so checkpoints, deletions and a clean shutdown still work. Logged
   * once per episode.
   */
  markLogDirFull(dir: string, cause: Error): void {
    if (this.fullDirs.has(dir) || this.failedDirs.has(dir)) return;
    this.fullDirs.set(dir, cause.message);
    try {
      releaseSpaceReserve(dir);
    } catch (e) {
      this.logger.warn(`Could not release the space reserve of ${dir}: ${(e as Error).message}`);
    }
    this.logger.error(
      `Log dir ${dir} is full: ${cause.message}. Appends to its partitions answer KAFKA_STORAGE_ERROR; reads, DeleteRecords and topic deletion still work, and the dir is writable again once space is freed`,
    );
    this.notify(dir, "full", cause.message);
  }

  /** Whether the dir is full (appends to it refused). */
  isLogDirFull(dir: string): boolean {
    return this.fullDirs.has(dir);
  }

  /** Full log dirs with their cause. */
  fullLogDirs(): ReadonlyMap<string, string> {
    return this.fullDirs;
  }

  /** Probes every full dir; a dir with space again is writable (its reserve written back). */
  probeFullLogDirs(): void {
    for (const dir of [...this.fullDirs.keys()]) {
      if (this.failedDirs.has(dir)) continue;
      let ok: boolean;
      try {
        ok = tryRestoreSpace(dir, this.reserveBytes);
      } catch (e) {
        this.logger.warn(`Could not probe the free space of ${dir}: ${(e as Error).message}`);
        continue;
      }
      if (!ok) continue;
      this.fullDirs.delete(dir);
      this.logger.info(`Log dir ${dir} has free space again: appends to its partitions resume`);
      this.notify(dir, "writable", "space was freed");
    }
  }

  /** Why the partition's log is offline, or undefined when it is not. */
  offlineLog(tp: TopicPartition): StorageFailure | undefined {
    return this.failedLogs.get(topicPartitionKey(tp));
  }

  /** Offline log dirs with their cause. */
  offlineLogDirs(): ReadonlyMap<string, string> {
    return this.failedDirs;
  }

  /** The log dirs that have not failed. */
  onlineLogDirs(): string[] {
    return this.config.logDirs.filter((d) => !this.failedDirs.has(d));
  }

  /** The dir of a loaded partition log. */
  logDirOf(tp: TopicPartition): string | undefined {
    return this.logs.get(topicPartitionKey(tp))?.dir;
  }

  /** Kafka's choice for a new log: the online dir with the fewest partitions. */
  private nextLogDir(): string {
    const counts = new Map<string, number>(this.onlineLogDirs().map((d) => [d, 0]));
    for (const { dir } of [...this.logs.values(), ...this.futureLogs.values()])
      if (counts.has(dir)) counts.set(dir, (counts.get(dir) ?? 0) + 1);
    // A full dir only when every online dir is full (the caller refuses it then).
    const full = (d: string): number => (this.fullDirs.has(d) ? 1 : 0);
    return [...counts.entries()].sort((a, b) => full(a[0]) - full(b[0]) || a[1] - b[1])[0][0];
  }

  /** The configured log dir a path names (compared as absolute paths), or undefined. */
  configuredLogDir(path: string): string | undefined {
    const abs = resolve(path);
    return this.config.logDirs.find((d) => resolve(d) === abs);
  }

  /**
   * Kafka's isLogDirOnline: whether the configured log dir is online; LOG_DIR_NOT_FOUND when the path is
   * not one of log.dirs.
   */
  isLogDirOnline(path: string): boolean {
    const dir = this.configuredLogDir(path);
    if (dir === undefined)
      throw new KafkaError("LOG_DIR_NOT_FOUND", `Log dir ${path} is not found in the config.`);
    return !this.failedDirs.has(dir);
  }

  /**
   * Remembers the dir a partition's log should be created in (Kafka's maybeUpdatePreferredLogDir): the
   * next getOrCreateLog / getOrCreateFutureLog uses it. Not when the current or future log is already there.
   */
  maybeUpdatePreferredLogDir(tp: TopicPartition, path: string): void {
    const dir = this.configuredLogDir(path) ?? path;
    const key = topicPartitionKey(tp);
    if (this.logs.get(key)?.dir === dir || this.futureLogs.get(key)?.dir === dir) return;
    this.preferredLogDirs.set(key, dir);
  }

  /** The partition's future log (being copied into another dir), if any. */
  getFutureLog(tp: TopicPartition): UnifiedLog | undefined {
    return this.futureLogs.get(topicPartitionKey(tp))?.log;
  }

  /** The log dir of the partition's future log. */
  futureLogDirOf(tp: TopicPartition): string | undefined {
    return this.futureLogs.get(topicPartitionKey(tp))?.dir;
  }

  allFutureLogs(): Array<{ tp: TopicPartition; log: UnifiedLog; dir: string }> {
    return [...this.futureLogs.values()].map(({ log, dir }) => ({ tp: log.topicPartition, log, dir }));
  }

  /**
   * Kafka's getOrCreateLog(isFuture = true): the partition's future log, created empty as
   * `<tp>.<id>-future` in its preferred dir (which must not be the current log's dir). Its cleaning is paused
   * until the move ends. KAFKA_STORAGE_ERROR while a log dir is offline (the partition could be there) or
   * when the dir is full or the log cannot be created there; the current log is not affected.
   */
  getOrCreateFutureLog(tp: TopicPartition, topicId?: string): UnifiedLog {
    const key = topicPartitionKey(tp);
    const existing = this.futureLogs.get(key);
    if (existing) return existing.log;
    const dir = this.preferredLogDirs.get(key);
    if (dir === undefined)
      throw new Error(`Can not create the future log for ${key} without having a preferred log directory`);
    const current = this.logs.get(key);
    if (current === undefined)
      throw new KafkaError("KAFKA_STORAGE_ERROR", `The current replica for ${key} is offline`);
    if (current.dir === dir)
      throw new Error(
        `Can not create the future log for ${key} in the current log directory of this partition`,
      );
    if (this.failedDirs.size > 0)
      throw new KafkaError(
        "KAFKA_STORAGE_ERROR",
        `Can not create log for ${key} because log directories ${[...this.failedDirs.keys()].join(",")} are offline`,
      );
    if (this.fullDirs.has(dir))
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
      log = this.openLog(
        dir,
        tp,
        this.configFor(tp.topic),
        { hadCleanShutdown: true, recoveryPoint: 0n },
        name,
      );
    } catch (e) {
      if (!isStorageError(e)) throw e;
      if (isNoSpaceError(e)) this.markLogDirFull(dir, e as Error);
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
    this.futureLogs.set(key, { log, dir });
    this.preferredLogDirs.delete(key);
    this._cleanerManager?.abortAndPauseCleaning(tp);
    this.logger.info(`Created log for partition ${key} in ${logDir}`);
    return log;
  }

  /** Removes the partition's future log (a move cancelled or redirected, or the partition deleted). */
  removeFutureLog(tp: TopicPartition): void {
    const key = topicPartitionKey(tp);
    const fut = this.futureLogs.get(key);
    if (fut === undefined) return;
    this.futureLogs.delete(key);
    try {
      fut.log.close();
    } catch (e) {
      if (!isStorageError(e)) throw e;
      fut.log.closeWithoutWriting();
    }
    try {
      const to = join(fut.dir, logDirNameWithSuffix(tp, DELETE_DIR_SUFFIX));
      renameSync(fut.log.dir, to);
      rmSync(to, { recursive: true, force: true });
    } catch (e) {
      if (!isStorageError(e)) throw e;
      this.logger.warn(`Could not remove the future log ${fut.log.dir}: ${(e as Error).message}`);
    }
    this.resumeCleaningAfterMove(tp);
    this.checkpointRecoveryPoints();
    this.checkpointLogStartOffsets();
    this.logger.info(`Removed the future log of ${key} in ${fut.dir}`);
  }

  private resumeCleaningAfterMove(tp: TopicPartition): void {
    const cm = this._cleanerManager;
    if (cm?.cleaningState(tp)?.kind === "paused") cm.resumeCleaning(tp);
  }

  /**
   * Kafka's replaceCurrentWithFutureLog: the future log, caught up to the current log's end, becomes the
   * partition's log (the steps and their crash safety are at the top of this file). Synchronous: the
   * caller holds the partition (no append in between). Returns the new log, with the old high watermark.
   */
  replaceCurrentWithFutureLog(tp: TopicPartition): UnifiedLog {
    const key = topicPartitionKey(tp);
    const cur = this.logs.get(key);
    const fut = this.futureLogs.get(key);
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
      this.futureLogs.delete(key);
      fut.log.closeWithoutWriting();
      this.resumeCleaningAfterMove(tp);
      throw new KafkaError(
        "KAFKA_STORAGE_ERROR",
        `The future replica for ${key} in ${fut.dir} failed: ${(e as Error).message}`,
      );
    }
    // 2. The current log goes aside; 3. the future log takes its name and place.
    const deleted = join(cur.dir, logDirNameWithSuffix(tp, DELETE_DIR_SUFFIX));
    let log: UnifiedLog;
    try {
      // (Not flushed: it is deleted. Until the rename below it is the partition's log, recovered as any.)
      cur.log.close();
      renameSync(cur.log.dir, deleted);
      fsyncDirectory(cur.dir);
      this.logs.delete(key);
      renameSync(fut.log.dir, join(fut.dir, key));
      fsyncDirectory(fut.dir);
      this.futureLogs.delete(key);
      steps.push(`renamed at ${ms()} ms`);
      log = this.openLog(fut.dir, tp, this.configFor(tp.topic), {
        hadCleanShutdown: true,
        recoveryPoint: endOffset,
        logStartOffset,
      });
    } catch (e) {
      if (!isStorageError(e)) throw e;
      this.logs.delete(key);
      this.futureLogs.delete(key);
      this.markLogOffline(tp, fut.dir, e as Error);
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
    this.logs.set(key, { log, dir: fut.dir });
    // 4. Checkpoints of both dirs, the cleaner's entry moved with the log, the old copy removed.
    const cm = this._cleanerManager;
    if (cm !== undefined) {
      const offset = cm.checkpointOf(tp);
      cm.updateCheckpoints(fut.dir, offset === undefined ? undefined : { tp, offset });
      cm.updateCheckpoints(cur.dir);
    }
    this.resumeCleaningAfterMove(tp);
    steps.push(`opened at ${ms()} ms`);
    this.checkpointRecoveryPoints();
    this.checkpointLogStartOffsets();
    this.checkpointHighWatermarks();
    steps.push(`checkpointed at ${ms()} ms`);
    // The old copy goes in the background (a large file's unlink can take a while); a start finds what is left.
    this.removeInBackground(deleted);
    this.logger.info(
      `The current replica is successfully replaced with the future replica for ${key} (${steps.join(", ")})`,
    );
    return log;
  }

  /** Removes a partition's log: renamed to `<tp>.<id>-delete` at once, then removed. */
  deleteLog(tp: TopicPartition): void {
    const key = topicPartitionKey(tp);
    if (this.futureLogs.has(key)) this.removeFutureLog(tp);
    this.preferredLogDirs.delete(key);
    const loaded = this.logs.get(key);
    const failed = this.failedLogs.get(key);
    if (!loaded && failed !== undefined) {
      // An offline partition that is deleted: forget it, and remove what of it can be removed.
      this.failedLogs.delete(key);
      try {
        rmSync(join(failed.dir, key), { recursive: true, force: true });
      } catch (e) {
        this.logger.warn(
          `Could not remove the offline log of ${key} in ${failed.dir}: ${(e as Error).message}`,
        );
      }
      return;
    }
    if (!loaded) return;
    this.failedLogs.delete(key);
    this.logs.delete(key);
    // No clean of it from now on, and its cleaner checkpoint entry goes.
    this._cleanerManager?.abortCleaning(tp, loaded.dir);
    try {
      loaded.log.close();
    } catch (e) {
      // (A full dir may refuse the final index entries:) the log goes anyway, its files closed first.
      if (!isStorageError(e)) throw e;
      this.logger.warn(`Could not close the log of ${key} before deleting it: ${(e as Error).message}`);
      loaded.log.closeWithoutWriting();
    }
    const from = join(loaded.dir, key);
    const to = join(loaded.dir, `${key}.${randomUUID().replaceAll("-", "")}-delete`);
    renameSync(from, to);
    this.checkpointRecoveryPoints();
    this.checkpointLogStartOffsets();
    this.removeInBackground(to);
    this.logger.info(`Deleted log for partition ${key}`);
  }

  /**
   * Removes a renamed `-delete` dir off the event loop (unlinking a GB of segments takes the kernel a
   * while: done synchronously it stalled every client and fetcher of the broker); a start removes what a
   * stop left behind.
   */
  private removeInBackground(dir: string): void {
    const removal = rm(dir, { recursive: true, force: true })
      .catch((e: Error) =>
        this.logger.warn(`Could not remove ${dir} (removed at the next start): ${e.message}`),
      )
      .finally(() => this.pendingRemovals.delete(removal));
    this.pendingRemovals.add(removal);
  }

  /** Resolves once every deleted log's directory removed so far is gone from disk. */
  async deletionsDone(): Promise<void> {
    while (this.pendingRemovals.size > 0) await Promise.all([...this.pendingRemovals]);
  }

  /**
   * Truncates a partition's log to `offset` (follower truncation), as Kafka's LogManager.truncateTo: a
   * truncation below the active segment pauses the cleaner around it and moves the cleaner checkpoint back
   * to the new active segment's base. Returns whether anything was removed.
   */
  truncateTo(tp: TopicPartition, offset: bigint): boolean {
    const loaded = this.logs.get(topicPartitionKey(tp));
    if (!loaded) return false;
    const { log, dir } = loaded;
    const cleaner = this._cleanerManager;
    const needToStopCleaner = cleaner !== undefined && offset < log.activeSegment.baseOffset;
    if (needToStopCleaner) cleaner.abortAndPauseCleaning(tp);
    try {
      const truncated = log.truncateTo(offset);
      if (needToStopCleaner) cleaner.maybeTruncateCheckpoint(dir, tp, log.activeSegment.baseOffset);
      return truncated;
    } finally {
      if (needToStopCleaner) cleaner.resumeCleaning(tp);
    }
  }

  /** Empties a partition's log and restarts it at `offset` (Kafka's truncateFullyAndStartAt), cleaner paused. */
  truncateFullyAndStartAt(tp: TopicPartition, offset: bigint): void {
    const loaded = this.logs.get(topicPartitionKey(tp));
    if (!loaded) return;
    const { log, dir } = loaded;
    const cleaner = this._cleanerManager;
    cleaner?.abortAndPauseCleaning(tp);
    try {
      log.truncateFullyAndStartAt(offset);
      cleaner?.updateCheckpoints(dir, { tp, offset: log.activeSegment.baseOffset });
    } finally {
      cleaner?.resumeCleaning(tp);
    }
  }

  /** One retention pass over every log (time, size and log start offset). */
  cleanupLogs(): number {
    let deleted = 0;
    for (const { log } of this.logs.values()) deleted += log.deleteOldSegments();
    return deleted;
  }

  flushDirtyLogs(): void {
    for (const { log, dir } of this.logs.values()) {
      if (this.failedLogs.has(topicPartitionKey(log.topicPartition))) continue;
      try {
        log.maybeFlush();
      } catch (e) {
        if (!isStorageError(e)) throw e;
        this.markLogOffline(log.topicPartition, dir, e as Error);
      }
    }
    // A future log that cannot be flushed is only a copy: the move is abandoned, the partition stays online.
    for (const { log } of [...this.futureLogs.values()]) {
      try {
        log.maybeFlush();
      } catch (e) {
        if (!isStorageError(e)) throw e;
        this.logger.error(
          `Could not flush the future log ${log.dir}; the move is abandoned: ${(e as Error).message}`,
        );
        this.removeFutureLog(log.topicPartition);
      }
    }
  }

  /**
   * The checkpoints below are written now by the callers that need them on disk before they go on (a
   * deleted or moved log, shutdown), and with `background` by the periodic tasks: off the event loop, as
   * Kafka's scheduler threads write them (OrderedAtomicFile keeps the two kinds in order per file).
   */
  checkpointRecoveryPoints(background = false): void {
    this.writeCheckpoints(RECOVERY_POINT_CHECKPOINT, (log) => log.recoveryPoint, true, background);
  }

  checkpointLogStartOffsets(background = false): void {
    this.writeCheckpoints(LOG_START_OFFSET_CHECKPOINT, (log) => log.logStartOffset, true, background);
  }

  checkpointHighWatermarks(background = false): void {
    this.writeCheckpoints(REPLICATION_OFFSET_CHECKPOINT, (log) => log.highWatermark, false, background);
  }

  /** Reads the high watermarks checkpointed by the previous run (for the replica layer). */
  readHighWatermarks(dir: string): Map<string, bigint> {
    return this.readCheckpoint(dir, REPLICATION_OFFSET_CHECKPOINT);
  }

  /** Keeps an offline partition's checkpointed offsets (recovery point, log start offset, HW). */
  private retainCheckpointedOffsets(
    dir: string,
    tp: TopicPartition,
    recoveryPoints: Map<string, bigint>,
    logStartOffsets: Map<string, bigint>,
  ): void {
    const key = topicPartitionKey(tp);
    const sources: Array<[string, Map<string, bigint>]> = [
      [RECOVERY_POINT_CHECKPOINT, recoveryPoints],
      [LOG_START_OFFSET_CHECKPOINT, logStartOffsets],
      [REPLICATION_OFFSET_CHECKPOINT, this.readCheckpoint(dir, REPLICATION_OFFSET_CHECKPOINT)],
    ];
    for (const [name, values] of sources) {
      const offset = values.get(key);
      if (offset === undefined) continue;
      const fileKey = join(dir, name);
      let retained = this.retainedOffsets.get(fileKey);
      if (retained === undefined) {
        retained = new Map();
        this.retainedOffsets.set(fileKey, retained);
      }
      retained.set(key, { tp, offset });
    }
  }

  private writeCheckpoints(
    name: string,
    value: (log: UnifiedLog) => bigint,
    withFutureLogs: boolean,
    background: boolean,
  ): void {
    for (const dir of this.onlineLogDirs()) {
      const checkpoint = new OffsetCheckpointFile(join(dir, name));
      const text = (): string => checkpoint.format(this.checkpointEntries(dir, name, value, withFutureLogs));
      const file = this.checkpointFile(dir, name);
      if (background) {
        file.writeInBackground(text);
        continue;
      }
      try {
        file.write(text());
      } catch (e) {
        // A full dir keeps its previous checkpoint (older offsets: a recovery re-reads a little more).
        if (!isNoSpaceError(e)) throw e;
        this.markLogDirFull(dir, e as Error);
      }
    }
  }

  /** What checkpoint `name` of `dir` holds now: its logs' offsets, and those kept for offline partitions. */
  private checkpointEntries(
    dir: string,
    name: string,
    value: (log: UnifiedLog) => bigint,
    withFutureLogs: boolean,
  ): Map<string, { tp: TopicPartition; offset: bigint }> {
    const entries = new Map<string, { tp: TopicPartition; offset: bigint }>();
    for (const [key, e] of this.retainedOffsets.get(join(dir, name)) ?? []) {
      if (this.failedLogs.has(key)) entries.set(key, e);
    }
    // (A partition's current and future logs are never in the same dir: one entry per partition.)
    for (const { log, dir: d } of withFutureLogs
      ? [...this.logs.values(), ...this.futureLogs.values()]
      : this.logs.values()) {
      if (d === dir)
        entries.set(topicPartitionKey(log.topicPartition), { tp: log.topicPartition, offset: value(log) });
    }
    return entries;
  }

  /** Resolves once no offset checkpoint is being written in the background. */
  async checkpointsWritten(): Promise<void> {
    for (const file of this.checkpointFiles.values()) await file.flushed();
  }

  /** The writer of checkpoint `name` in `dir`; a background write's failure is handled as a write's. */
  private checkpointFile(dir: string, name: string): OrderedAtomicFile {
    const path = join(dir, name);
    let file = this.checkpointFiles.get(path);
    if (file === undefined) {
      file = new OrderedAtomicFile(path, (e) => {
        if (isNoSpaceError(e)) this.markLogDirFull(dir, e);
        else this.logger.error(`Error while writing ${path}: ${e.message}`);
      });
      this.checkpointFiles.set(path, file);
    }
    return file;
  }

  /** Flushes and closes every log, writes the checkpoints and the clean-shutdown marker. */
  shutdown(): void {
    for (const t of this.tasks) t.cancel();
    this.tasks.length = 0;
    this.cleanerStopped = true;
    this.cleanerTask?.cancel();
    this.cleanerTask = undefined;
    // A clean part-way ends here (its .cleaned segment removed) before the logs close.
    this._cleaner?.abortClean();
    this._cleanerManager?.writeAllCheckpoints();
    for (const { log, dir } of [...this.logs.values(), ...this.futureLogs.values()]) {
      try {
        log.flush();
      } catch (e) {
        if (!isStorageError(e)) throw e;
        this.markLogOffline(log.topicPartition, dir, e as Error);
        this.uncleanDirs.add(dir);
      }
      try {
        log.close();
      } catch (e) {
        // Its indexes may be short: no clean-shutdown marker, so the next start recovers the dir.
        if (!isStorageError(e)) throw e;
        this.logger.warn(`Could not close ${log.name} cleanly: ${(e as Error).message}`);
        this.uncleanDirs.add(dir);
        log.closeWithoutWriting();
      }
    }
    this.checkpointRecoveryPoints();
    this.checkpointLogStartOffsets();
    this.checkpointHighWatermarks();
    for (const file of this.checkpointFiles.values()) file.close(false);
    for (const dir of this.onlineLogDirs()) {
      if (this.uncleanDirs.has(dir) || !existsSync(dir)) continue;
      try {
        writeCleanShutdownMarker(dir);
      } catch (e) {
        if (!isStorageError(e)) throw e;
        this.logger.warn(`Could not write the clean-shutdown marker in ${dir}: ${(e as Error).message}`);
      }
    }
    this.logs.clear();
    this.futureLogs.clear();
    this.releaseOwnLocks();
    this.logger.info("Shutdown complete.");
  }

  hadCleanShutdown(dir: string): boolean {
    return this.cleanShutdown.get(dir) ?? false;
  }
}
