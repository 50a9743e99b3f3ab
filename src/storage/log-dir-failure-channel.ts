// LogDirFailureChannel: the health of the log dirs and of the partition logs in them, as Kafka's
// LogDirFailureChannel (offline log dirs) with what Tributary adds: partitions offline on their own, and
// full dirs (log-dir-space.ts). It owns no file of its own; on disk it touches only a full dir's space
// reserve (`.kafka_space_reserve`: released when the dir is found full, written back when a probe finds
// space again).
// - A log dir that cannot be created, locked or read is offline as a whole (KAFKA_STORAGE_ERROR); one whose
//   path is a directory we could not read may still hold partition logs, so no log is created elsewhere
//   while it is offline.
// - A partition whose log cannot be opened or written is offline on its own, reported once as an ERROR
//   naming the partition and the cause; the other partitions keep working.
// - ENOSPC/EDQUOT takes nothing offline: the dir is full (appends and new logs there refused), once per
//   episode, until probeFullLogDirs finds space again.
// Invariants: an offline dir is not marked full, and a full dir that goes offline is probed no more; every
// state change is logged once and told to every listener (the replica layer tells the controller, Kafka's
// /log_dir_event_notification). Log lines come out under the LogManager's logger.

import type { Logger } from "../common/logger.js";
import { type TopicPartition, topicPartitionKey } from "../common/topic-partition.js";
import { KafkaError } from "../protocol/errors.js";
import { releaseSpaceReserve, tryRestoreSpace } from "./log-dir-space.js";

/** What happened to a log dir: offline (failed), full (no space), or writable again after being full. */
export type LogDirEvent = "offline" | "full" | "writable";
export type LogDirListener = (dir: string, event: LogDirEvent, cause: string) => void;

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

export class LogDirFailureChannel {
  /** Log dirs that failed as a whole (Kafka's offline log dirs), with the cause. */
  private readonly failedDirs = new Map<string, string>();
  /** Failed dirs that may still hold partition logs (the path is a directory we could not read). */
  private readonly failedDirsWithLogs = new Set<string>();
  /** Partitions whose log could not be opened or written, by "<topic>-<partition>". */
  private readonly failedLogs = new Map<string, StorageFailure>();
  /** Log dirs out of space (writes refused, reads and deletions served), with the cause. */
  private readonly fullDirs = new Map<string, string>();
  private readonly listeners: LogDirListener[] = [];

  constructor(
    private readonly logDirs: readonly string[],
    /** log.dir.space.reserve.bytes: what a dir holds back while writable. */
    private readonly reserveBytes: number,
    private readonly logger: Logger,
  ) {}

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

  /** An offline partition that is deleted (or whose log is gone): forgotten. */
  forgetOfflineLog(tp: TopicPartition): void {
    this.failedLogs.delete(topicPartitionKey(tp));
  }

  /** A log dir that failed as a whole (Kafka's LogDirFailureChannel.maybeAddOfflineLogDir). */
  markLogDirOffline(dir: string, cause: Error): void {
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

  /** Offline log dirs that may hold partition logs: a partition missing elsewhere may be in one of them. */
  offlineLogDirsWithLogs(): readonly string[] {
    return [...this.failedDirsWithLogs];
  }

  isLogDirOffline(dir: string): boolean {
    return this.failedDirs.has(dir);
  }

  /** The log dirs that have not failed. */
  onlineLogDirs(): string[] {
    return this.logDirs.filter((d) => !this.failedDirs.has(d));
  }
}
