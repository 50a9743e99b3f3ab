// LogManager: owns every partition log under `log.dirs`, the coordinator of the storage layer (Kafka's
// LogManager). It holds the map of the partitions' current logs, the topics' log configs and the periodic
// tasks (retention, checkpoints, flush, full-dir probe, cleaner), and hands each concern to its owner:
//   log-dirs-loader.ts         what a start finds in the log dirs (meta.properties, .kafka_cleanshutdown)
//   log-dir-failure-channel.ts offline log dirs and partitions, full dirs, and their listeners
//   offset-checkpoints.ts      recovery-point-offset-checkpoint, log-start-offset-checkpoint and
//                              replication-offset-checkpoint of every dir, and when they are written
//   future-logs.ts             future logs (`<tp>.<id>-future`, AlterReplicaLogDirs) and their swap
//   new-logs-sync.ts           the one durability point of a batch of new logs (a large LeaderAndIsr)
//   logs-to-be-deleted.ts      deleted logs (`<tp>.<id>-delete`), removed off the event loop
//   cleaner/                   cleaner-offset-checkpoint (LogCleanerManager) and the cleaner's work
// On-disk state it owns itself, per log dir: `<topic>-<partition>/`, one UnifiedLog each, created in the
// online dir with the fewest partitions (or the partition's preferred dir); `.kafka_cleanshutdown`, written
// at shutdown in every online dir whose logs all closed cleanly (the next start recovers the others).
// Invariants: a log is loaded from exactly one dir; its checkpoint entries follow it (recovery point and
// log start offset for future logs too, high watermarks for current logs only); after an unclean shutdown
// every log is recovered from its checkpointed recovery point. A deleted or moved log's checkpoints are
// written off the event loop like the periodic ones; only shutdown writes them on the event loop, durably,
// before the clean-shutdown marker. An offline partition is refused by getOrCreateLog (KAFKA_STORAGE_ERROR),
// and so is a missing one while a dir that may hold it is offline.
// Every log dir is locked (`.lock`, log-dir-lock.ts) before anything in it is read or written: with the
// locks its owner took (the broker, before it opens the embedded metadata store), else its own, taken at
// startup and released at shutdown. A dir locked elsewhere fails startup; one that cannot be locked for an
// I/O reason is offline.

import { existsSync, mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { Logger } from "../common/logger.js";
import type { ScheduledTask, Scheduler } from "../common/scheduler.js";
import type { Time } from "../common/time.js";
import { type TopicPartition, topicPartitionKey } from "../common/topic-partition.js";
import { KafkaError } from "../protocol/errors.js";
import { writeCleanShutdownMarker } from "./checkpoint/broker-metadata.js";
import { PartitionMetadataFile } from "./checkpoint/partition-metadata-file.js";
import type { CleanerThread } from "./cleaner/cleaner.js";
import { type CleanerConfig, DEFAULT_CLEANER_CONFIG } from "./cleaner/cleaner-config.js";
import type { LogCleanerManager } from "./cleaner/log-cleaner-manager.js";
import { LogCleaner } from "./cleaner/log-cleaner-threads.js";
import { FutureLogs } from "./future-logs.js";
import { LeaderEpochFileCache } from "./leader-epoch/leader-epoch-file-cache.js";
import type { LogConfig } from "./log-config.js";
import {
  isStorageError,
  LogDirFailureChannel,
  type LogDirListener,
  type StorageFailure,
} from "./log-dir-failure-channel.js";
import { LogDirLocks } from "./log-dir-lock.js";
import { DEFAULT_FULL_PROBE_INTERVAL_MS, isNoSpaceError } from "./log-dir-space.js";
import { type LogAndDir, LogDirsLoader, type OpenLogOptions } from "./log-dirs-loader.js";
import { LogsToBeDeleted } from "./logs-to-be-deleted.js";
import { NewLogsSync } from "./new-logs-sync.js";
import { LogDirCheckpoints } from "./offset-checkpoints.js";
import { UnifiedLog } from "./unified-log.js";

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

export class LogManager {
  /** The partitions' current logs by "<topic>-<partition>", in the order they were loaded or created. */
  private readonly logs = new Map<string, LogAndDir>();
  private readonly topicConfigs = new Map<string, LogConfig>();
  private readonly tasks: ScheduledTask[] = [];
  private readonly logger = new Logger("kafka.log.LogManager");
  /** log.cleaner.* with defaults filled in. */
  readonly cleanerConfig: CleanerConfig;
  /** The cleaner, once the logs are loaded, when log.cleaner.enable. */
  private logCleaner: LogCleaner | undefined;
  /** The broker's default topic config: the static log.* keys, then dynamic broker configs over them. */
  private _defaultLogConfig: LogConfig;
  /** Offline log dirs and partitions, full log dirs. */
  private readonly failures: LogDirFailureChannel;
  /** The recovery point, log start offset and high watermark checkpoints of every dir. */
  readonly checkpoints: LogDirCheckpoints;
  private readonly futureLogs: FutureLogs;
  /** New logs whose durability point is a batch's (deferNewLogSync … syncNewLogs). */
  private readonly newLogs = new NewLogsSync();
  private readonly logsToBeDeleted: LogsToBeDeleted;
  private readonly loader: LogDirsLoader;
  /** Dirs where a log could not be closed cleanly at shutdown: no clean-shutdown marker for them. */
  private readonly uncleanDirs = new Set<string>();
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
    const logger = this.logger;
    this.failures = new LogDirFailureChannel(config.logDirs, config.logDirSpaceReserveBytes ?? 0, logger);
    this.checkpoints = new LogDirCheckpoints(
      this.failures,
      (withFutureLogs) =>
        withFutureLogs ? [...this.logs.values(), ...this.futureLogs.all()] : this.logs.values(),
      logger,
    );
    this.logsToBeDeleted = new LogsToBeDeleted(logger);
    const openLog = this.openLog.bind(this);
    this.futureLogs = new FutureLogs(
      {
        logs: this.logs,
        failures: this.failures,
        logsToBeDeleted: this.logsToBeDeleted,
        checkpoints: this.checkpoints,
        openLog,
        cleanerManager: () => this.cleanerManager,
      },
      logger,
    );
    this.loader = new LogDirsLoader(
      { ...config, reserveBytes: config.logDirSpaceReserveBytes ?? 0 },
      this.failures,
      this.checkpoints,
      this.logsToBeDeleted,
      openLog,
      logger,
    );
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

  /** Loads the log dirs, one step per log opened; they are locked before anything in them is read. */
  private *loadAll(): Generator<void> {
    // (LogDirLockedError when another broker has one.)
    this.logDirLocks ??= LogDirLocks.acquire(this.config.logDirs);
    yield* this.loader.load(this.logDirLocks, this.logs, this.futureLogs.byPartition);
  }

  private afterLoad(): void {
    if (this.failures.offlineLogDirs().size === this.config.logDirs.length) {
      throw new Error(
        `Shutdown broker because all log dirs in ${this.config.logDirs.join(", ")} have failed`,
      );
    }
    this.futureLogs.completeInterruptedSwaps();
    if (this.cleanerConfig.enableCleaner && this.logCleaner === undefined) {
      const c = [this.cleanerConfig, this.scheduler, this.time, this.logger] as const;
      this.logCleaner = new LogCleaner(this.onlineLogDirs(), () => this.allLogs(), ...c);
      // A partition being moved between dirs is not cleaned until the move ends (Kafka pauses it).
      this.futureLogs.pauseCleaning(this.logCleaner.cleanerManager);
    }
  }

  /** The cleaner's bookkeeping (checkpoints, pauses), when log.cleaner.enable. */
  get cleanerManager(): LogCleanerManager | undefined {
    return this.logCleaner?.cleanerManager;
  }

  /** The cleaner (one thread's work), when log.cleaner.enable. */
  get cleaner(): CleanerThread | undefined {
    return this.logCleaner?.cleaner;
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
        () => this.checkpoints.recoveryPoints.checkpoint(),
        c.recoveryPointCheckpointIntervalMs,
        c.recoveryPointCheckpointIntervalMs,
      ),
      this.scheduler.schedule(
        "kafka-log-start-offset-checkpoint",
        () => this.checkpoints.logStartOffsets.checkpoint(),
        c.logStartOffsetCheckpointIntervalMs,
        c.logStartOffsetCheckpointIntervalMs,
      ),
    );
    const probeMs = c.logDirFullProbeIntervalMs ?? DEFAULT_FULL_PROBE_INTERVAL_MS;
    this.tasks.push(
      this.scheduler.schedule(
        "kafka-log-dir-full-probe",
        () => this.failures.probeFullLogDirs(),
        probeMs,
        probeMs,
      ),
    );
    this.logCleaner?.startup();
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

  /** Opens the log of `tp` in `<dir>/<dirName>` with its topic's config (log-dirs-loader.ts's OpenLog). */
  private openLog(
    dir: string,
    tp: TopicPartition,
    opts: OpenLogOptions,
    dirName = topicPartitionKey(tp),
  ): UnifiedLog {
    const logDir = join(dir, dirName);
    const logger = new Logger(
      "kafka.log.UnifiedLog",
      `UnifiedLog partition=${topicPartitionKey(tp)}, dir=${dir}`,
    );
    return UnifiedLog.open(logDir, this.configFor(tp.topic), {
      time: this.time,
      recoveryPoint: opts.recoveryPoint,
      logStartOffset: opts.logStartOffset,
      hadCleanShutdown: opts.hadCleanShutdown,
      newDir: opts.newDir,
      logger,
      // A full dir refuses appends at once and gets the space of deleted segments back at once.
      dirFull: () => this.failures.isLogDirFull(dir),
      onNoSpace: (e) => this.failures.markLogDirFull(dir, e),
      leaderEpochCache: opts.newDir
        ? LeaderEpochFileCache.createNew(logDir, logger)
        : LeaderEpochFileCache.load(logDir, logger),
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
    for (const { log } of [...this.logs.values(), ...this.futureLogs.all()])
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
    const failed = this.failures.offlineLog(tp);
    if (failed !== undefined) {
      throw new KafkaError(
        "KAFKA_STORAGE_ERROR",
        `The log of partition ${key} in ${failed.dir} is offline: ${failed.cause}`,
      );
    }
    const offlineDirsWithLogs = this.failures.offlineLogDirsWithLogs();
    if (offlineDirsWithLogs.length > 0) {
      // The log may be in a dir that cannot be read: creating it elsewhere would lose its data.
      const cause = new Error(
        `Can not create log for ${key} because log directories ${offlineDirsWithLogs.join(",")} are offline`,
      );
      this.markLogOffline(tp, offlineDirsWithLogs[0], cause);
      throw new KafkaError("KAFKA_STORAGE_ERROR", cause.message);
    }
    const preferred = this.futureLogs.preferredLogDir(tp);
    const dir =
      preferred !== undefined && this.onlineLogDirs().includes(preferred) ? preferred : this.nextLogDir();
    if (this.failures.isLogDirFull(dir)) {
      throw new KafkaError(
        "KAFKA_STORAGE_ERROR",
        `Can not create log for ${key}: every online log dir is full (${[...this.failures.fullLogDirs().keys()].join(",")})`,
      );
    }
    const logDir = join(dir, key);
    let log: UnifiedLog;
    try {
      // undefined when the directory was there already (e.g. a log whose creation failed half-way).
      const newDir = mkdirSync(logDir, { recursive: true }) !== undefined;
      const deferSync = this.newLogs.deferring;
      if (topicId !== undefined) new PartitionMetadataFile(logDir).write(topicId, !deferSync);
      log = this.openLog(dir, tp, { hadCleanShutdown: true, recoveryPoint: 0n, newDir });
      if (deferSync) this.newLogs.add({ tp, dir, logDir, hasMetadata: topicId !== undefined });
    } catch (e) {
      if (!isStorageError(e)) throw e;
      if (isNoSpaceError(e)) {
        // Nothing is lost: what was created of it goes, the dir is full, the log can be created later.
        this.failures.markLogDirFull(dir, e as Error);
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
    this.futureLogs.forgetPreferredLogDir(tp);
    this.logger.info(`Created log for partition ${topicPartitionKey(tp)} in ${logDir}`);
    return log;
  }

  /**
   * Logs created from now until the matching syncNewLogs() are made durable together by it, not one by one
   * (new-logs-sync.ts): a LeaderAndIsr of thousands of new partitions.
   */
  deferNewLogSync(): void {
    this.newLogs.open();
  }

  /**
   * The durability point of the logs created since deferNewLogSync(), off the event loop. A log whose files
   * could not be forced goes offline (KAFKA_STORAGE_ERROR from then on, as a log that failed at creation);
   * those are returned.
   */
  async syncNewLogs(): Promise<TopicPartition[]> {
    const failures = await this.newLogs.sync();
    for (const { log, error } of failures) {
      this.logger.error(
        `Error while making the new log of ${topicPartitionKey(log.tp)} in ${log.dir} durable: ${error.message}`,
      );
      this.markLogOffline(log.tp, log.dir, error);
    }
    return failures.map((f) => f.log.tp);
  }

  /** The dir of a loaded partition log. */
  logDirOf(tp: TopicPartition): string | undefined {
    return this.logs.get(topicPartitionKey(tp))?.dir;
  }

  /** Kafka's choice for a new log: the online dir with the fewest partitions. */
  private nextLogDir(): string {
    const online = this.onlineLogDirs();
    // One dir: no counting (a LeaderAndIsr of thousands of new logs would count them all for each).
    if (online.length === 1) return online[0];
    const counts = new Map<string, number>(online.map((d) => [d, 0]));
    for (const { dir } of [...this.logs.values(), ...this.futureLogs.all()])
      if (counts.has(dir)) counts.set(dir, (counts.get(dir) ?? 0) + 1);
    // A full dir only when every online dir is full (the caller refuses it then).
    const full = (d: string): number => (this.failures.isLogDirFull(d) ? 1 : 0);
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
    return !this.failures.isLogDirOffline(dir);
  }

  /** Takes a partition's log offline after an I/O error on it (one ERROR line; see LogDirFailureChannel). */
  markLogOffline(tp: TopicPartition, dir: string, cause: Error): void {
    this.failures.markLogOffline(tp, dir, cause);
  }

  /** The dir ran out of space: appends and new logs there refused until a probe finds space again. */
  markLogDirFull(dir: string, cause: Error): void {
    this.failures.markLogDirFull(dir, cause);
  }

  /** Hears every log dir that goes offline, becomes full, or becomes writable again. */
  addLogDirListener(listener: LogDirListener): void {
    this.failures.addLogDirListener(listener);
  }

  /** Whether the dir is full (appends to it refused). */
  isLogDirFull(dir: string): boolean {
    return this.failures.isLogDirFull(dir);
  }

  /** Why the partition's log is offline, or undefined when it is not. */
  offlineLog(tp: TopicPartition): StorageFailure | undefined {
    return this.failures.offlineLog(tp);
  }

  /** Offline log dirs with their cause. */
  offlineLogDirs(): ReadonlyMap<string, string> {
    return this.failures.offlineLogDirs();
  }

  /** The log dirs that have not failed. */
  onlineLogDirs(): string[] {
    return this.failures.onlineLogDirs();
  }

  /** Where the partition's next log (current or future) goes: a configured log dir (AlterReplicaLogDirs). */
  maybeUpdatePreferredLogDir(tp: TopicPartition, path: string): void {
    this.futureLogs.maybeUpdatePreferredLogDir(tp, this.configuredLogDir(path) ?? path);
  }

  /** The partition's future log (being copied into another dir), if any. */
  getFutureLog(tp: TopicPartition): UnifiedLog | undefined {
    return this.futureLogs.get(tp)?.log;
  }

  /** The log dir of the partition's future log. */
  futureLogDirOf(tp: TopicPartition): string | undefined {
    return this.futureLogs.get(tp)?.dir;
  }

  allFutureLogs(): Array<{ tp: TopicPartition; log: UnifiedLog; dir: string }> {
    return this.futureLogs.all().map(({ log, dir }) => ({ tp: log.topicPartition, log, dir }));
  }

  /** The partition's future log, created in its preferred dir if needed (FutureLogs.getOrCreate). */
  getOrCreateFutureLog(tp: TopicPartition, topicId?: string): UnifiedLog {
    return this.futureLogs.getOrCreate(tp, topicId);
  }

  /** Removes the partition's future log (a move cancelled or redirected). */
  removeFutureLog(tp: TopicPartition): void {
    this.futureLogs.remove(tp);
  }

  /** The caught-up future log becomes the partition's log (FutureLogs.replaceCurrentWithFutureLog). */
  replaceCurrentWithFutureLog(tp: TopicPartition): UnifiedLog {
    return this.futureLogs.replaceCurrentWithFutureLog(tp);
  }

  /** Removes a partition's log: renamed to `<tp>.<id>-delete` at once, then removed. */
  deleteLog(tp: TopicPartition): void {
    const key = topicPartitionKey(tp);
    if (this.futureLogs.get(tp) !== undefined) this.futureLogs.remove(tp);
    this.futureLogs.forgetPreferredLogDir(tp);
    const loaded = this.logs.get(key);
    const failed = this.failures.offlineLog(tp);
    if (!loaded && failed !== undefined) {
      // An offline partition that is deleted: forget it, and remove what of it can be removed.
      this.failures.forgetOfflineLog(tp);
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
    this.failures.forgetOfflineLog(tp);
    this.logs.delete(key);
    // No clean of it from now on, and its cleaner checkpoint entry goes.
    this.cleanerManager?.abortCleaning(tp, loaded.dir);
    try {
      loaded.log.close();
    } catch (e) {
      // (A full dir may refuse the final index entries:) the log goes anyway, its files closed first.
      if (!isStorageError(e)) throw e;
      this.logger.warn(`Could not close the log of ${key} before deleting it: ${(e as Error).message}`);
      loaded.log.closeWithoutWriting();
    }
    const to = this.logsToBeDeleted.rename(loaded.dir, tp, join(loaded.dir, key));
    // Its checkpoint entries go off the event loop (a crash before they land leaves entries naming no log).
    this.checkpoints.recoveryPoints.checkpoint();
    this.checkpoints.logStartOffsets.checkpoint();
    this.logsToBeDeleted.removeInBackground(to);
    this.logger.info(`Deleted log for partition ${key}`);
  }

  /** Resolves once every deleted log's directory removed so far is gone and its checkpoints are written. */
  async deletionsDone(): Promise<void> {
    await this.logsToBeDeleted.removed();
    await this.checkpointsWritten();
  }

  /** Resolves once no offset checkpoint is being written off the event loop. */
  async checkpointsWritten(): Promise<void> {
    await this.checkpoints.written();
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
    const cleaner = this.cleanerManager;
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
    const cleaner = this.cleanerManager;
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
      if (this.failures.offlineLog(log.topicPartition) !== undefined) continue;
      try {
        log.maybeFlush();
      } catch (e) {
        if (!isStorageError(e)) throw e;
        this.markLogOffline(log.topicPartition, dir, e as Error);
      }
    }
    // A future log that cannot be flushed is only a copy: the move is abandoned, the partition stays online.
    for (const { log } of this.futureLogs.all()) {
      try {
        log.maybeFlush();
      } catch (e) {
        if (!isStorageError(e)) throw e;
        this.logger.error(
          `Could not flush the future log ${log.dir}; the move is abandoned: ${(e as Error).message}`,
        );
        this.futureLogs.remove(log.topicPartition);
      }
    }
  }

  /** Flushes and closes every log, writes the checkpoints and the clean-shutdown marker. */
  shutdown(): void {
    for (const t of this.tasks) t.cancel();
    this.tasks.length = 0;
    // A clean part-way ends here (its .cleaned segment removed) before the logs close.
    this.logCleaner?.shutdown();
    for (const { log, dir } of [...this.logs.values(), ...this.futureLogs.all()]) {
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
    // On the way down the checkpoints are written now and durably, before the clean-shutdown marker.
    this.checkpoints.writeOnShutdownAndClose();
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
    this.futureLogs.byPartition.clear();
    this.releaseOwnLocks();
    this.logger.info("Shutdown complete.");
  }

  hadCleanShutdown(dir: string): boolean {
    return this.loader.hadCleanShutdown(dir);
  }
}
