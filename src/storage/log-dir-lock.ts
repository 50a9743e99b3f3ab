// LogDirLocks: the `.lock` of every log dir (Kafka's LogManager.lockLogDirs), taken before anything in the
// dirs is read or written and held until the logs are closed. The broker takes them first thing at startup
// (the embedded metadata store lives in the first log dir) and hands them to the LogManager; a LogManager
// used on its own takes its own at startup and releases them at shutdown.
//
// On disk / in the OS (common/dir-lock.ts): `<log.dir>/.lock`, an empty file created when missing and never
// deleted or replaced, with an exclusive flock held on it by this process; the kernel drops the lock when the
// process dies, so a crash never leaves a dir locked.
// Invariants:
//   - a log dir is held by at most one owner at a time, in any process (two brokers in one process too);
//   - a dir locked elsewhere fails the whole acquire: the locks taken so far are released and
//     LogDirLockedError says, in one line, which dir and which pid holds it (Kafka throws KafkaException
//     "Failed to acquire lock on file .lock in <dir>. A Kafka instance in another process or thread is
//     using this directory." and the broker does not start); nothing in any dir has been read or written;
//   - a dir whose `.lock` cannot be created or locked for an I/O reason (Kafka's IOException) is not held
//     and is recorded in `failures`: the LogManager takes it offline and never reads it;
//   - without the native file-lock addon the acquire refuses (DirLockUnavailableError), unless
//     TRIBUTARY_ALLOW_UNLOCKED_DIRS=true: then the dirs are used unlocked, with a WARN per dir.

import { mkdirSync } from "node:fs";
import { DirLock, DirLockHeldError, describeHolder, LOCK_FILE_NAME } from "../common/dir-lock.js";
import { Logger } from "../common/logger.js";

/** Another owner (process, or another broker in this one) holds a log dir's lock. */
export class LogDirLockedError extends Error {
  constructor(
    readonly dir: string,
    readonly holderPid: number | undefined,
  ) {
    super(
      `Failed to acquire lock on file ${LOCK_FILE_NAME} in ${dir}. A Kafka instance in another process or thread is using this directory (the lock is held by ${describeHolder(holderPid)}).`,
    );
    this.name = "LogDirLockedError";
  }
}

/** An error of the file system (errno code), as opposed to a lock held elsewhere or a missing addon. */
function isIoError(e: unknown): e is NodeJS.ErrnoException {
  return e instanceof Error && typeof (e as NodeJS.ErrnoException).code === "string";
}

export class LogDirLocks {
  private readonly locks = new Map<string, DirLock>();
  /** Dirs that could not be locked for an I/O reason, with the error: offline dirs. */
  readonly failures = new Map<string, Error>();

  private constructor() {}

  /**
   * Creates each dir when missing and locks it. Throws LogDirLockedError for a dir held elsewhere and
   * DirLockUnavailableError without the addon (both after releasing what was taken).
   */
  static acquire(dirs: readonly string[]): LogDirLocks {
    const locks = new LogDirLocks();
    const logger = new Logger("kafka.log.LogManager");
    try {
      for (const dir of dirs) {
        if (locks.locks.has(dir) || locks.failures.has(dir)) continue;
        let lock: DirLock;
        try {
          mkdirSync(dir, { recursive: true });
          lock = DirLock.tryAcquire(dir);
        } catch (e) {
          if (e instanceof DirLockHeldError) throw new LogDirLockedError(dir, e.holderPid);
          if (!isIoError(e)) throw e;
          // Kept as it is (its errno code tells the LogManager whether the path can hold logs).
          locks.failures.set(dir, e);
          continue;
        }
        if (!lock.locked)
          logger.warn(
            `Log dir ${dir} is not locked (${lock.unlockedReason}): nothing stops another broker from using it at the same time`,
          );
        locks.locks.set(dir, lock);
      }
    } catch (e) {
      locks.release();
      throw e;
    }
    return locks;
  }

  /** Whether this owner holds `dir`'s OS lock (false for a dir used unlocked or not locked at all). */
  holds(dir: string): boolean {
    return this.locks.get(dir)?.locked === true;
  }

  /** Why `dir` could not be locked (it is then offline), or undefined. */
  failure(dir: string): Error | undefined {
    return this.failures.get(dir);
  }

  /** Releases every lock (the logs are closed). Safe to call more than once. */
  release(): void {
    for (const lock of this.locks.values()) lock.release();
    this.locks.clear();
  }
}
