// LogCleaner: Kafka's LogCleaner, the part the LogManager starts and stops: the cleaner's bookkeeping
// (LogCleanerManager, which owns each dir's cleaner-offset-checkpoint) and its thread, Kafka's
// "kafka-log-cleaner-thread-0" (CleanerThread), run as tasks on the scheduler. (The compaction itself is
// cleaner.ts and log-cleaner.ts.) Created once the logs are loaded, when log.cleaner.enable; it writes no
// file of its own.
// The thread's loop: clean the filthiest log; when one was cleaned look again at once (a new task, so the
// event loop runs in between), else wait log.cleaner.backoff.ms. A clean runs in slices of
// CLEANER_SLICE_MS, each a task of its own, so a clean of hundreds of megabytes does not hold the event loop
// for seconds (measured: 12–18 s for 352 MB in one piece; docs/benchmarks.md, issue 16).
// Invariants: after shutdown() no slice runs again, a clean part-way has ended (its `.cleaned` segment
// removed) and every dir's cleaner checkpoint is written, before the LogManager closes the logs.

import type { Logger } from "../../common/logger.js";
import type { ScheduledTask, Scheduler } from "../../common/scheduler.js";
import type { Time } from "../../common/time.js";
import { CleanerThread } from "./cleaner.js";
import type { CleanerConfig } from "./cleaner-config.js";
import { type CleanerLogEntry, LogCleanerManager } from "./log-cleaner-manager.js";

/**
 * How long the cleaner works before the event loop gets a turn (its steps, reads of at most 128 KiB mapped
 * or filtered, take a few milliseconds each): about what a clean may add to a request's latency.
 */
export const CLEANER_SLICE_MS = 10;

export class LogCleaner {
  /** The cleaner's bookkeeping (checkpoints, pauses). */
  readonly cleanerManager: LogCleanerManager;
  /** The cleaner (one thread's work). */
  readonly cleaner: CleanerThread;
  private task: ScheduledTask | undefined;
  private stopped = false;

  /** Reads every given dir's cleaner-offset-checkpoint. */
  constructor(
    logDirs: readonly string[],
    logs: () => readonly CleanerLogEntry[],
    private readonly config: CleanerConfig,
    private readonly scheduler: Scheduler,
    time: Time,
    private readonly logger: Logger,
  ) {
    this.cleanerManager = new LogCleanerManager(logDirs, logs, time);
    this.cleaner = new CleanerThread(this.cleanerManager, config, time);
  }

  /** Starts the thread: its first look after log.cleaner.backoff.ms. */
  startup(): void {
    this.stopped = false;
    this.schedule(this.config.backoffMs);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.task = this.scheduler.schedule(
      "kafka-log-cleaner-thread-0",
      () => {
        if (this.stopped) return;
        let next = this.config.backoffMs;
        try {
          const cleaned = this.cleaner.runSlice(CLEANER_SLICE_MS);
          if (cleaned !== false) next = 0; // unfinished (undefined), or a log was cleaned
        } catch (e) {
          this.logger.error(`The log cleaner failed: ${(e as Error).stack ?? e}`);
        }
        this.schedule(next);
      },
      delayMs,
    );
  }

  /** Stops the thread, ends a clean part-way (its .cleaned segment removed), writes the checkpoints. */
  shutdown(): void {
    this.stopped = true;
    this.task?.cancel();
    this.task = undefined;
    this.cleaner.abortClean();
    this.cleanerManager.writeAllCheckpoints();
  }
}
