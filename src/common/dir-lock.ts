// DirLock: an exclusive OS lock on `<dir>/.lock`, held until released or until this process ends (Kafka's
// FileLock on a log dir's `.lock`, FileChannel.tryLock). Used for every log dir (storage/log-dir-lock.ts)
// and for dev-cluster's --dir.
//
// The lock is flock(fd, LOCK_EX | LOCK_NB) through the project's native/file-lock addon on a descriptor
// Node opened (O_CLOEXEC: child processes do not inherit it). flock, not fcntl: the lock belongs to the
// open file, so a second open in the same process conflicts too (two brokers in one test process), and
// closing another descriptor of the file does not drop it. The kernel releases it when the descriptor is
// closed, which a process's death does: a crash or SIGKILL leaves no stale lock, unlike a pid file.
// `.lock` itself is an empty file, created when missing and never deleted or replaced: a new inode would
// let a second process lock it while the first still holds the old one. Its presence means nothing.
//
// The holder of a lock taken elsewhere is named where the OS says: on Linux, /proc/locks lists each FLOCK
// lock with the pid that took it and the file's device and inode (matched exactly to `.lock`'s).
//
// Without the addon (not built: no C compiler at install time; or a platform without flock) there is no
// lock: tryAcquire throws DirLockUnavailableError, so brokers and dev-cluster refuse to start, unless the
// environment says TRIBUTARY_ALLOW_UNLOCKED_DIRS=true; then it returns an unlocked DirLock and the caller
// warns that nothing stops a second process from using the dir.

import { closeSync, constants as fsConstants, fstatSync, openSync, readFileSync } from "node:fs";
import { constants } from "node:os";
import { join } from "node:path";
import { loadNativeAddon } from "./native-addon.js";

/** The lock file in each locked dir, as Kafka names it. */
export const LOCK_FILE_NAME = ".lock";
/** The environment variable that lets brokers and dev-cluster run without the addon, dirs unlocked. */
export const ALLOW_UNLOCKED_DIRS_ENV = "TRIBUTARY_ALLOW_UNLOCKED_DIRS";

interface FileLockAddon {
  /** 0 when acquired, else the errno (EWOULDBLOCK: held by another open file). */
  tryLockExclusive(fd: number): number;
  unlock(fd: number): number;
}

const addon = loadNativeAddon<FileLockAddon>("file-lock", "file_lock");

/** Whether this process can lock dirs (the native/file-lock addon is built). */
export const DIR_LOCKS_AVAILABLE = addon !== undefined;

/** The lock is held by another open file of `.lock`: another process, or another owner in this one. */
export class DirLockHeldError extends Error {
  constructor(
    readonly dir: string,
    /** The process holding it, when the OS says (Linux); may be this process. */
    readonly holderPid: number | undefined,
  ) {
    super(`${join(dir, LOCK_FILE_NAME)} is locked by ${describeHolder(holderPid)}`);
    this.name = "DirLockHeldError";
  }
}

/** No lock can be taken here (the addon is not built, or the platform has no flock). */
export class DirLockUnavailableError extends Error {
  constructor(
    readonly dir: string,
    readonly reason: string,
  ) {
    super(
      `Cannot lock ${dir}: ${reason}; set ${ALLOW_UNLOCKED_DIRS_ENV}=true to run with it unlocked (nothing then stops a second process from using it)`,
    );
    this.name = "DirLockUnavailableError";
  }
}

/** "pid N", "pid N (this process)", or words saying the OS did not name it. */
export function describeHolder(pid: number | undefined): string {
  if (pid === undefined) return "another process or thread (the OS does not say which)";
  return pid === process.pid ? `pid ${pid} (this process)` : `pid ${pid}`;
}

/** Whether TRIBUTARY_ALLOW_UNLOCKED_DIRS allows running with unlocked dirs when no lock can be taken. */
export function unlockedDirsAllowed(env: NodeJS.ProcessEnv = process.env): boolean {
  return /^(true|1|yes)$/i.test((env[ALLOW_UNLOCKED_DIRS_ENV] ?? "").trim());
}

const NOT_BUILT =
  "the native file-lock addon is not built (run `npm run build:native`; a failed build leaves the compiler's output in native/file-lock/build.log)";

export class DirLock {
  private constructor(
    readonly dir: string,
    private fd: number | undefined,
    /** Why the dir is not locked (the addon is missing and unlocked dirs are allowed); undefined when locked. */
    readonly unlockedReason: string | undefined,
  ) {}

  /** True while this DirLock holds the OS lock. */
  get locked(): boolean {
    return this.fd !== undefined;
  }

  /**
   * Locks `<dir>/.lock` (created when missing; `dir` must exist). Never waits: throws DirLockHeldError
   * when the lock is held elsewhere, DirLockUnavailableError when no lock can be taken here (unless
   * allowed: then an unlocked DirLock), or the file system's error (with its errno code) when `.lock`
   * cannot be opened or locked.
   */
  static tryAcquire(dir: string): DirLock {
    if (addon === undefined) {
      if (unlockedDirsAllowed()) return new DirLock(dir, undefined, NOT_BUILT);
      throw new DirLockUnavailableError(dir, NOT_BUILT);
    }
    const path = join(dir, LOCK_FILE_NAME);
    // Read-only, created when missing, never truncated: nothing is ever written to it.
    const fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_CREAT, 0o644);
    let error: number;
    try {
      error = addon.tryLockExclusive(fd);
    } catch (e) {
      closeSync(fd);
      throw e;
    }
    if (error === 0) return new DirLock(dir, fd, undefined);
    const stat = fstatSync(fd, { bigint: true });
    closeSync(fd);
    if (error === constants.errno.EWOULDBLOCK || error === constants.errno.EAGAIN)
      throw new DirLockHeldError(dir, flockHolderPid(stat.dev, stat.ino));
    if (error === constants.errno.ENOSYS) {
      const reason = "this platform has no flock";
      if (unlockedDirsAllowed()) return new DirLock(dir, undefined, reason);
      throw new DirLockUnavailableError(dir, reason);
    }
    throw errnoError(error, path);
  }

  /** Gives the lock up (unlock, then close). Safe to call more than once. */
  release(): void {
    const fd = this.fd;
    if (fd === undefined) return;
    this.fd = undefined;
    try {
      addon?.unlock(fd);
    } finally {
      // Closing the only descriptor of the open file releases the lock even if the unlock failed.
      closeSync(fd);
    }
  }
}

/** An Error shaped as Node's file-system errors (code, errno, syscall, path) for a flock failure. */
function errnoError(errno: number, path: string): NodeJS.ErrnoException {
  const code = Object.entries(constants.errno).find(([, n]) => n === errno)?.[0] ?? `errno ${String(errno)}`;
  const e: NodeJS.ErrnoException = new Error(`${code}: flock failed on ${path}`);
  e.code = code;
  e.errno = -errno;
  e.syscall = "flock";
  e.path = path;
  return e;
}

/**
 * The pid holding an flock lock on the file with device `dev` and inode `ino`, from /proc/locks (Linux);
 * undefined elsewhere, when the lock is gone meanwhile, or when the kernel shows no pid (a holder in
 * another pid namespace). Lines look like `1: FLOCK  ADVISORY  WRITE 8698 fe:00:2146722 0 EOF`: the device
 * as major:minor in hex, the inode in decimal; `->` marks a waiter, not a holder.
 */
export function flockHolderPid(dev: bigint, ino: bigint): number | undefined {
  let text: string;
  try {
    text = readFileSync("/proc/locks", "utf8");
  } catch {
    return undefined;
  }
  // st_dev as glibc encodes it (gnu_dev_major / gnu_dev_minor), which is how the kernel shows s_dev.
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
  for (const line of text.split("\n")) {
    const f = line.trim().split(/\s+/);
    if (f[1] !== "FLOCK" || f.length < 6) continue;
    const id = /^([0-9a-f]+):([0-9a-f]+):(\d+)$/.exec(f[5]);
    if (id === null) continue;
    if (BigInt(`0x${id[1]}`) !== major || BigInt(`0x${id[2]}`) !== minor || BigInt(id[3]) !== ino) continue;
    const pid = Number(f[4]);
    if (Number.isInteger(pid) && pid > 0) return pid;
  }
  return undefined;
}
