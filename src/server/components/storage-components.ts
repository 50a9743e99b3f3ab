// The broker's storage components (Kafka's KafkaServer.startup: the log dirs locked, then the LogManager):
//   LogDirLocksComponent — the `.lock` of every log dir, taken first thing at startup, before anything in
//     the dirs is read or written (the embedded metadata store lives in the first), released last at
//     shutdown, once the logs are closed;
//   LogManagerComponent — the LogManager: logs loaded and recovered (in slices, so that the sockets and the
//     ZooKeeper session stay served), its periodic tasks, and at shutdown the checkpoints and
//     `.kafka_cleanshutdown`.

import { LogDirLocks } from "../../storage/log-dir-lock.js";
import { LogManager } from "../../storage/log-manager.js";
import { ComponentOf, type ServerContext } from "./server-component.js";

export class LogDirLocksComponent extends ComponentOf<LogDirLocks> {
  constructor(ctx: ServerContext) {
    super(ctx, "log dir locking", "releasing the log dir locks");
  }

  /**
   * Locks every log dir. A dir another broker holds (LogDirLockedError, naming the dir and the pid) fails it
   * with nothing in any dir touched; so does, with the embedded metadata store, a first dir that cannot be
   * locked. A failure releases what was taken.
   */
  startup(): void {
    const config = this.ctx.config;
    try {
      const locks = this.hold(LogDirLocks.acquire(config.logDirs));
      const storeDir = config.logDirs[0];
      const storeDirFailure = locks.failure(storeDir);
      if (config.zookeeperConnect === null && storeDirFailure !== undefined)
        throw new Error(
          `Cannot lock ${storeDir}, the log dir of the embedded metadata store: ${storeDirFailure.message}`,
        );
    } catch (e) {
      this.shutdown();
      throw e;
    }
  }

  /** Whether this broker holds the lock of `dir` now. */
  holds(dir: string): boolean {
    return this.current?.holds(dir) === true;
  }

  shutdown(): void {
    this.release()?.release();
  }
}

export class LogManagerComponent extends ComponentOf<LogManager> {
  constructor(
    ctx: ServerContext,
    private readonly locks: LogDirLocksComponent,
    /** The cluster id meta.properties must carry (null: none yet). */
    private readonly clusterId: () => string | null,
  ) {
    super(ctx, "log manager", "shutting down the log manager");
  }

  async startup(): Promise<void> {
    const { config, time, scheduler } = this.ctx;
    const logManager = this.hold(
      new LogManager(
        { ...config.logManagerConfig(this.clusterId()), logDirLocks: this.locks.get() },
        time,
        scheduler,
      ),
    );
    // Sliced: the ZooKeeper session (already open) and the sockets stay served while logs load.
    await logManager.startupSliced();
    logManager.startTasks();
  }

  shutdown(): void {
    this.current?.shutdown();
  }
}
