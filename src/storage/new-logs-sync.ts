// NewLogsSync: one durability point for a batch of new partition logs. A LeaderAndIsr that creates
// thousands of partitions (a CreateTopics, a reassignment) would otherwise fsync each new
// `partition.metadata` and its directory on the event loop, one after another (Kafka forces each one as
// it creates the log, on a request handler thread; here the event loop is the only thread, and each fsync
// held it ~2.5 ms: docs/benchmarks/cluster.md).
// While a batch is open (LogManager.deferNewLogSync) a new log's directory and partition.metadata are
// written without fsync and recorded here; sync() then makes the whole batch durable off the event loop:
// every recorded partition.metadata file is fsynced, then every new partition directory (the file's entry),
// then each log dir once (the partition directories' entries). The caller answers only after sync(), so
// what it acknowledged is on disk as before. A crash before sync() ends can leave a new partition
// directory without partition.metadata or with an empty one: the log loads as the empty log it was, and
// nothing at log load reads the file (only a log-dir move copies the topic id from it).

import { open } from "node:fs/promises";
import { join } from "node:path";
import { mapConcurrent } from "../common/map-concurrent.js";
import type { TopicPartition } from "../common/topic-partition.js";
import { PARTITION_METADATA_FILENAME } from "./checkpoint/partition-metadata-file.js";

/** fsyncs in flight (libuv's thread pool runs 4 at a time by default). */
const FSYNCS_IN_FLIGHT = 8;

export interface NewLog {
  readonly tp: TopicPartition;
  /** The log dir (`log.dirs` entry) holding it. */
  readonly dir: string;
  /** Its partition directory. */
  readonly logDir: string;
  /** Whether a partition.metadata was written (a log created without a topic id has none). */
  readonly hasMetadata: boolean;
}

export interface NewLogSyncFailure {
  readonly log: NewLog;
  readonly error: Error;
}

/** fsyncs a file or directory off the event loop (a directory that cannot be fsynced is left alone). */
async function fsyncPath(path: string, isDir: boolean): Promise<void> {
  const fh = await open(path, "r");
  try {
    await fh.sync();
  } catch (e) {
    // Some platforms refuse fsync on a directory; the entries are still written.
    if (!isDir) throw e;
  } finally {
    await fh.close();
  }
}

/** Runs `fn` over `items`, FSYNCS_IN_FLIGHT at a time; collects each item's error. */
async function eachBounded<T>(items: readonly T[], fn: (item: T) => Promise<void>): Promise<Map<T, Error>> {
  const errors = new Map<T, Error>();
  await mapConcurrent(items, FSYNCS_IN_FLIGHT, (item) =>
    fn(item).catch((e: Error) => {
      errors.set(item, e);
    }),
  );
  return errors;
}

export class NewLogsSync {
  private depth = 0;
  private pending: NewLog[] = [];

  /** Whether new logs are recorded for a later sync() instead of being forced one by one. */
  get deferring(): boolean {
    return this.depth > 0;
  }

  /** Opens a batch (batches nest: logs are deferred until the last one is synced). */
  open(): void {
    this.depth++;
  }

  add(log: NewLog): void {
    this.pending.push(log);
  }

  /**
   * Closes a batch and makes every new log recorded so far durable (see the top of the file). Returns the
   * logs whose partition.metadata or directory could not be fsynced (an I/O error: the caller takes them
   * offline); a log dir that could not be fsynced fails every new log in it.
   */
  async sync(): Promise<NewLogSyncFailure[]> {
    if (this.depth > 0) this.depth--;
    const logs = this.pending;
    this.pending = [];
    if (logs.length === 0) return [];
    const failed = await eachBounded(logs, async (l) => {
      if (l.hasMetadata) await fsyncPath(join(l.logDir, PARTITION_METADATA_FILENAME), false);
      await fsyncPath(l.logDir, true);
    });
    const dirs = [...new Set(logs.filter((l) => !failed.has(l)).map((l) => l.dir))];
    const failedDirs = await eachBounded(dirs, (d) => fsyncPath(d, true));
    const out: NewLogSyncFailure[] = [];
    for (const l of logs) {
      const error = failed.get(l) ?? failedDirs.get(l.dir);
      if (error !== undefined) out.push({ log: l, error });
    }
    return out;
  }
}
