// LogManager: owns every partition log under `log.dirs`.
// On-disk state it owns, per log dir (Kafka's layout):
//   meta.properties                      broker.id / cluster.id; must agree across dirs and with the config
//   .kafka_cleanshutdown                 present only after a clean shutdown; deleted at startup
//   recovery-point-offset-checkpoint     per partition: offset up to which the log is flushed and valid
//   log-start-offset-checkpoint          per partition: log start offset (moved by retention/DeleteRecords)
//   replication-offset-checkpoint        per partition: high watermark (written for the replica layer)
//   cleaner-offset-checkpoint            per compacted partition: first dirty offset (LogCleanerManager)
//   <topic>-<partition>/                 one UnifiedLog each; `<tp>.<id>-delete` dirs are deletions in flight
// Invariants: a log is loaded from exactly one dir; checkpoints are written atomically; after an
// unclean shutdown every log is recovered from its checkpointed recovery point.
// Storage failures (Kafka's LogDirFailureChannel, KAFKA_STORAGE_ERROR): a log dir that cannot be created or
// read is offline as a whole (its checkpoints are not written; with every dir offline startup fails); a
// partition whose log cannot be opened or written is offline on its own, reported once as an ERROR naming
// the partition and the cause, and refused by getOrCreateLog; the other partitions keep working.
// Full log dirs (log-dir-space.ts): ENOSPC/EDQUOT does not take anything offline. The dir is marked full
// (its space reserve released), appends and new logs there answer KAFKA_STORAGE_ERROR at once, while reads,
// deletions (removed at once, without file.delete.delay.ms), retention and checkpoints go on; every
// log.dir.full.probe.interval.ms a full dir is probed and becomes writable again once space is freed.
// Listeners (addLogDirListener) hear every dir that goes offline, becomes full or becomes writable again
// (the replica layer tells the controller, Kafka's /log_dir_event_notification).
// A dir where a log could not be closed cleanly gets no .kafka_cleanshutdown: the next start recovers it.

import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Logger } from "../common/logger.js";
import type { ScheduledTask, Scheduler } from "../common/scheduler.js";
import type { Time } from "../common/time.js";
import { parseTopicPartitionDir, type TopicPartition, topicPartitionKey } from "../common/topic-partition.js";
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
import { LeaderEpochFileCache } from "./leader-epoch/leader-epoch-file-cache.js";
import type { LogConfig } from "./log-config.js";
import {
  checkLogDirSpaceAtStartup,
  DEFAULT_FULL_PROBE_INTERVAL_MS,
  isNoSpaceError,
  releaseSpaceReserve,
  tryRestoreSpace,
} from "./log-dir-space.js";
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

/** An error from the file system (as opposed to a bug or a Kafka-level error). */
export function isStorageError(e: unknown): boolean {
  return (
    e instanceof Error && !(e instanceof KafkaError) && typeof (e as NodeJS.ErrnoException).code === "string"
  );
}

export class LogManager {
  private readonly logs = new Map<string, LoadedLog>();
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
  /** Log dirs out of space (writes refused, reads and deletions served), with the cause. */
  private readonly fullDirs = new Map<string, string>();
  /** Dirs where a log could not be closed cleanly at shutdown: no clean-shutdown marker for them. */
  private readonly uncleanDirs = new Set<string>();
  private readonly listeners: LogDirListener[] = [];

  constructor(
    readonly config: LogManagerConfig,
    private readonly time: Time,
    private readonly scheduler: Scheduler,
  ) {
    if (config.logDirs.length === 0) throw new Error("log.dirs: expected at least one directory");
    this.cleanerConfig = { ...DEFAULT_CLEANER_CONFIG, ...config.cleanerConfig };
    this._defaultLogConfig = config.defaultLogConfig;
  }

  /** Loads every partition log found in the log dirs and checks meta.properties (in one go). */
  startup(): void {
    for (const _ of this.loadAll()) {
      // each step is one log
    }
    this.afterLoad();
  }

  /**
   * The same as startup(), but hands the event loop back every `sliceMs` of loading, so a broker's
   * ZooKeeper session, sockets and timers keep running while thousands of logs load and recover (Kafka
   * loads them on a thread pool; one JavaScript thread takes turns instead).
   */
  async startupSliced(sliceMs = 20): Promise<void> {
    let sliceStart = this.time.milliseconds();
    for (const _ of this.loadAll()) {
      if (this.time.milliseconds() - sliceStart >= sliceMs) {
        await new Promise<void>((r) => setImmediate(r));
        sliceStart = this.time.milliseconds();
      }
    }
    this.afterLoad();
  }

  /** Loads the log dirs, one step per log opened. */
  private *loadAll(): Generator<void> {
    for (const dir of this.config.logDirs) {
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
    if (this.cleanerConfig.enableCleaner && this._cleanerManager === undefined) {
      // Reads every online dir's cleaner-offset-checkpoint.
      this._cleanerManager = new LogCleanerManager(this.onlineLogDirs(), () => this.allLogs(), this.time);
      this._cleaner = new CleanerThread(this._cleanerManager, this.cleanerConfig, this.time);
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
        () => this.checkpointRecoveryPoints(),
        c.recoveryPointCheckpointIntervalMs,
        c.recoveryPointCheckpointIntervalMs,
      ),
      this.scheduler.schedule(
        "kafka-log-start-offset-checkpoint",
        () => this.checkpointLogStartOffsets(),
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
      if (entry.name.endsWith("-delete")) {
        // A deletion interrupted by a crash: finish it.
        rmSync(join(dir, entry.name), { recursive: true, force: true });
        continue;
      }
      const tp = parseTopicPartitionDir(entry.name);
      if (!tp) continue;
      const key = topicPartitionKey(tp);
      const existing = this.logs.get(key);
      if (existing) {
        throw new Error(`duplicate log directories for ${key}: ${existing.dir} and ${join(dir, entry.name)}`);
      }
      let log: UnifiedLog;
      try {
        log = this.openLog(dir, tp, this.configFor(tp.topic), {
          hadCleanShutdown,
          recoveryPoint: recoveryPoints.get(key) ?? 0n,
          logStartOffset: logStartOffsets.get(key),
        });
      } catch (e) {
        if (!isStorageError(e)) throw e;
        this.markLogOffline(tp, dir, e as Error);
        this.retainCheckpointedOffsets(dir, tp, recoveryPoints, logStartOffsets);
        continue;
      }
      this.logs.set(key, { log, dir });
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
  ): UnifiedLog {
    const logDir = join(dir, topicPartitionKey(tp));
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
    for (const { log } of this.logs.values())
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
    const dir = this.nextLogDir();
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
    for (const { dir } of this.logs.values())
      if (counts.has(dir)) counts.set(dir, (counts.get(dir) ?? 0) + 1);
    // A full dir only when every online dir is full (the caller refuses it then).
    const full = (d: string): number => (this.fullDirs.has(d) ? 1 : 0);
    return [...counts.entries()].sort((a, b) => full(a[0]) - full(b[0]) || a[1] - b[1])[0][0];
  }

  /** Removes a partition's log: renamed to `<tp>.<id>-delete` at once, then removed. */
  deleteLog(tp: TopicPartition): void {
    const key = topicPartitionKey(tp);
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
    rmSync(to, { recursive: true, force: true });
    this.checkpointRecoveryPoints();
    this.checkpointLogStartOffsets();
    this.logger.info(`Deleted log for partition ${key}`);
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
  }

  checkpointRecoveryPoints(): void {
    this.writeCheckpoints(RECOVERY_POINT_CHECKPOINT, (log) => log.recoveryPoint);
  }

  checkpointLogStartOffsets(): void {
    this.writeCheckpoints(LOG_START_OFFSET_CHECKPOINT, (log) => log.logStartOffset);
  }

  checkpointHighWatermarks(): void {
    this.writeCheckpoints(REPLICATION_OFFSET_CHECKPOINT, (log) => log.highWatermark);
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

  private writeCheckpoints(name: string, value: (log: UnifiedLog) => bigint): void {
    for (const dir of this.onlineLogDirs()) {
      const entries = new Map<string, { tp: TopicPartition; offset: bigint }>();
      for (const [key, e] of this.retainedOffsets.get(join(dir, name)) ?? []) {
        if (this.failedLogs.has(key)) entries.set(key, e);
      }
      for (const { log, dir: d } of this.logs.values()) {
        if (d === dir)
          entries.set(topicPartitionKey(log.topicPartition), { tp: log.topicPartition, offset: value(log) });
      }
      try {
        new OffsetCheckpointFile(join(dir, name)).write(entries);
      } catch (e) {
        // A full dir keeps its previous checkpoint (older offsets: a recovery re-reads a little more).
        if (!isNoSpaceError(e)) throw e;
        this.markLogDirFull(dir, e as Error);
      }
    }
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
    for (const { log, dir } of this.logs.values()) {
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
    this.logger.info("Shutdown complete.");
  }

  hadCleanShutdown(dir: string): boolean {
    return this.cleanShutdown.get(dir) ?? false;
  }
}
