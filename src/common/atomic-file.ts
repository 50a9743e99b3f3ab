// Replacing a small file atomically, as Kafka does for its checkpoints and metadata files (write a
// temporary file, force it, then Utils.atomicMoveWithFallback, which also flushes the directory): the data
// goes to `<file>.tmp`, which is fsynced, renamed over `<file>`, and the directory is fsynced so the rename
// survives a crash. A reader sees the old file or the new one, never a mix; a crash can leave `<file>.tmp`
// behind, which the next write replaces. One copy for every layer: the storage checkpoints,
// meta.properties and partition.metadata (synchronous), the server's metadata snapshot (asynchronous,
// off the event loop), and the pieces of an asynchronous write whose rename the caller orders itself
// (OrderedAtomicFile: writeFileDurablyAsync, then its rename, then fsyncDirectoryAsync).

import { closeSync, fsyncSync, openSync, renameSync, writeSync } from "node:fs";
import { open, rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";

/** fsyncs a directory so a rename or a new file in it is durable (a no-op where directories can't be opened). */
export function fsyncDirectory(dir: string): void {
  let fd: number;
  try {
    fd = openSync(dir, "r");
  } catch {
    return;
  }
  try {
    fsyncSync(fd);
  } catch {
    // Some platforms refuse fsync on a directory; the rename is still atomic there.
  } finally {
    closeSync(fd);
  }
}

/** fsyncDirectory off the event loop. */
export async function fsyncDirectoryAsync(dir: string): Promise<void> {
  let fh: Awaited<ReturnType<typeof open>>;
  try {
    fh = await open(dir, "r");
  } catch {
    return;
  }
  try {
    await fh.sync();
  } catch {
    // As fsyncDirectory.
  } finally {
    await fh.close();
  }
}

/** Writes `data` to `path` (created or truncated) and fsyncs it, off the event loop; no rename. */
export async function writeFileDurablyAsync(path: string, data: string | Buffer): Promise<void> {
  const fh = await open(path, "w");
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Replaces `path` with `data` atomically: writes `<path>.tmp`, fsyncs it (when `sync`), renames it over
 * `path` and fsyncs the directory (when `sync`).
 */
export function writeFileAtomically(path: string, data: string | Buffer, sync = true): void {
  const tmp = `${path}.tmp`;
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  const fd = openSync(tmp, "w");
  try {
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
    if (sync) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  if (sync) fsyncDirectory(dirname(path));
}

/** writeFileAtomically with the file writes and its fsync off the event loop. */
export async function writeFileAtomicallyAsync(
  path: string,
  data: string | Buffer,
  sync = true,
): Promise<void> {
  const tmp = `${path}.tmp`;
  if (sync) await writeFileDurablyAsync(tmp, data);
  else await writeFile(tmp, data);
  await rename(tmp, path);
  if (sync) await fsyncDirectoryAsync(dirname(path));
}
