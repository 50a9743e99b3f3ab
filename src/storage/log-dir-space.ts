// LogDirSpace: the free-space side of a log dir's health. Kafka knows only failed (offline) log dirs and
// takes a dir that runs out of space offline until a restart; Tributary tells a *full* dir apart: it keeps
// serving reads, deletions (DeleteRecords, topic deletion, retention) and checkpoints, refuses appends and
// new logs with KAFKA_STORAGE_ERROR, and becomes writable again by itself once space is freed.
//
// On disk it owns `<log.dir>/.kafka_space_reserve`: a file of `log.dir.space.reserve.bytes` zeros, held
// while the dir is writable and removed the moment the dir is found full (an append answered ENOSPC, or
// too little free space at startup). The space it gave back is what a full dir needs to keep working: the
// checkpoints, the clean-shutdown marker, the metadata journal of a single-node broker, the index rebuild
// of a recovery after an unclean shutdown. A dir is writable again when the file system has at least
// twice the reserve free: the reserve is written back and half of it stays free for appends.
// Invariants: the reserve file is written under `.kafka_space_reserve.tmp` and renamed, so a present
// reserve is always whole; it is never read. The checks use statfs (free blocks for unprivileged users).

import { closeSync, fsyncSync, openSync, renameSync, rmSync, statfsSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";

export const SPACE_RESERVE_FILE = ".kafka_space_reserve";
/** log.dir.space.reserve.bytes default: 8 MiB. */
export const DEFAULT_SPACE_RESERVE_BYTES = 8 * 1024 * 1024;
/** log.dir.full.probe.interval.ms default. */
export const DEFAULT_FULL_PROBE_INTERVAL_MS = 5000;
/** The least free space a writable dir needs, also without a reserve (so a full dir does not flap). */
const MIN_WRITABLE_FREE_BYTES = 1024 * 1024;
const WRITE_CHUNK = 1024 * 1024;

/** The file system said there is no space (or quota) left: the dir is full, not broken. */
export function isNoSpaceError(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return code === "ENOSPC" || code === "EDQUOT";
}

/** Bytes an unprivileged writer may still use on the dir's file system. */
export function freeBytes(dir: string): number {
  const s = statfsSync(dir);
  return Number(s.bavail) * Number(s.bsize);
}

/** Whether the dir holds its space reserve. */
export function hasSpaceReserve(dir: string): boolean {
  try {
    return statSync(join(dir, SPACE_RESERVE_FILE)).isFile();
  } catch {
    return false;
  }
}

/** Removes the reserve (its space goes back to the file system); returns whether there was one. */
export function releaseSpaceReserve(dir: string): boolean {
  const had = hasSpaceReserve(dir);
  rmSync(join(dir, SPACE_RESERVE_FILE), { force: true });
  rmSync(join(dir, `${SPACE_RESERVE_FILE}.tmp`), { force: true });
  return had;
}

/** Writes the reserve (zeros, fsynced, renamed in place). Throws ENOSPC and leaves nothing behind. */
export function createSpaceReserve(dir: string, bytes: number): void {
  if (bytes <= 0) return;
  const tmp = join(dir, `${SPACE_RESERVE_FILE}.tmp`);
  const zeros = Buffer.alloc(Math.min(bytes, WRITE_CHUNK));
  try {
    const fd = openSync(tmp, "w");
    try {
      for (let done = 0; done < bytes; )
        done += writeSync(fd, zeros, 0, Math.min(zeros.length, bytes - done));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, join(dir, SPACE_RESERVE_FILE));
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/** The free space at which a full dir is writable again: twice the reserve (at least 1 MiB). */
export function writableFreeBytes(reserveBytes: number): number {
  return Math.max(2 * reserveBytes, MIN_WRITABLE_FREE_BYTES);
}

/**
 * The startup check of one dir (before anything is written to it): a dir with less free space than the
 * reserve gives the reserve back and is full; a dir without a reserve is full unless it has the space to
 * write one and keep as much free; otherwise the reserve is (re)written. Returns whether the dir is full.
 */
export function checkLogDirSpaceAtStartup(dir: string, reserveBytes: number): boolean {
  if (hasSpaceReserve(dir)) {
    if (freeBytes(dir) >= Math.min(reserveBytes, MIN_WRITABLE_FREE_BYTES)) return false;
    releaseSpaceReserve(dir);
    return true;
  }
  return !tryRestoreSpace(dir, reserveBytes);
}

/**
 * The recovery probe of a full dir: with at least writableFreeBytes free, writes the reserve back and
 * answers true (the dir is writable again); else false.
 */
export function tryRestoreSpace(dir: string, reserveBytes: number): boolean {
  if (freeBytes(dir) < writableFreeBytes(reserveBytes)) return false;
  try {
    createSpaceReserve(dir, reserveBytes);
    return true;
  } catch (e) {
    if (isNoSpaceError(e)) return false;
    throw e;
  }
}

/**
 * Before a broker writes anything to its log dirs: each existing dir found full gives its reserve back (the
 * LogManager's startup check then finds it full). Dirs that do not exist yet, or cannot be read, are left
 * to the LogManager. Returns the dirs found full.
 */
export function releaseSpaceReservesOfFullDirs(dirs: readonly string[], reserveBytes: number): string[] {
  const full: string[] = [];
  for (const dir of dirs) {
    try {
      if (hasSpaceReserve(dir) && checkLogDirSpaceAtStartup(dir, reserveBytes)) full.push(dir);
    } catch {
      // the LogManager reports it
    }
  }
  return full;
}
