// LogsToBeDeleted: the deletion of partition logs, as Kafka's LogManager.asyncDelete and its
// logsToBeDeleted. On disk it owns the `<topic>-<partition>.<uuid>-delete` directories of a log dir
// (log-file-names.ts): a log that goes is renamed to one at once (it is no partition's log from then on,
// and a start never loads it), then removed off the event loop (unlinking a GB of segments takes the
// kernel a while: done synchronously it stalled every client and fetcher of the broker).
// Invariants: a `-delete` dir is never read again; one a stop or crash left behind is removed by the next
// start before the dir's logs are loaded (removeLeftover); a removal that fails is logged and left to the
// next start. The caller closes the log before it is renamed and fsyncs the parent dir where the rename
// must be durable (the swap of a future log).

import { renameSync, rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../common/logger.js";
import type { TopicPartition } from "../common/topic-partition.js";
import { DELETE_DIR_SUFFIX, logDirNameWithSuffix } from "./log-file-names.js";

export class LogsToBeDeleted {
  /** Removals of `-delete` dirs under way. */
  private readonly pendingRemovals = new Set<Promise<void>>();

  constructor(private readonly logger: Logger) {}

  /** Renames the log dir `logDir` of `tp` in log dir `dir` to `<tp>.<uuid>-delete`; returns the new path. */
  rename(dir: string, tp: TopicPartition, logDir: string): string {
    const to = join(dir, logDirNameWithSuffix(tp, DELETE_DIR_SUFFIX));
    renameSync(logDir, to);
    return to;
  }

  /** Removes a `-delete` dir now, on the event loop (a start's leftovers; an empty future log). */
  removeNow(deleteDir: string): void {
    rmSync(deleteDir, { recursive: true, force: true });
  }

  /** Removes a `-delete` dir off the event loop; a start removes what a stop left behind. */
  removeInBackground(deleteDir: string): void {
    // Retried: a closed log's background leader-epoch write may still create and drop its temporary file.
    const removal = rm(deleteDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 20 })
      .catch((e: Error) =>
        this.logger.warn(`Could not remove ${deleteDir} (removed at the next start): ${e.message}`),
      )
      .finally(() => this.pendingRemovals.delete(removal));
    this.pendingRemovals.add(removal);
  }

  /** Resolves once every `-delete` dir removed in the background so far is gone from disk. */
  async removed(): Promise<void> {
    while (this.pendingRemovals.size > 0) await Promise.all([...this.pendingRemovals]);
  }
}
