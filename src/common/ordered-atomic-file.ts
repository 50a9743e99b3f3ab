// OrderedAtomicFile: one small file replaced atomically (atomic-file.ts) both synchronously and in the
// background, with the guarantee that the file never goes back to older contents. The counterpart of
// Kafka's checkpoint files being written under one lock from the request path (synchronously) and from
// its scheduler threads (the leader epoch checkpoint after a truncation, KAFKA-15046).
//
// - write(): now, on the caller's thread (the event loop), into `<file>.tmp`.
// - writeInBackground(contents): the temporary file `<file>.bg.tmp` is written and fsynced on libuv's
//   thread pool; only the rename happens on the event loop, after a check that no later write has landed
//   meanwhile (a write overtaken so is dropped). `contents` is called when the write starts, so it sees
//   the latest state; requests while one is under way are merged into one more write after it.
// - writeNowIfPending(): what a background write has not made durable yet is written now, synchronously.
// - close(): a background request not yet written is written now (`write` true) or dropped; nothing is
//   written afterwards. Errors of background writes go to `onError`; a missing directory (the log dir or
//   partition removed meanwhile) is not one (Kafka's writeIfDirExists).
// A crash can leave `<file>.bg.tmp` behind: removeLeftovers() deletes it (the leader epoch checkpoint's
// load does), or the next background write replaces it.

import { renameSync, rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { dirname } from "node:path";
import { fsyncDirectoryAsync, writeFileAtomically, writeFileDurablyAsync } from "./atomic-file.js";

const BACKGROUND_TMP_SUFFIX = ".bg.tmp";

/**
 * Background writes under way at once, across every file of the process. A failover gives thousands of
 * partitions a new leader epoch at once; unbounded, their writes finish in bursts, and each finish renames
 * on the event loop (a journal update that waits behind the disk's fsyncs), so a burst held the loop for
 * hundreds of milliseconds. Bounded, they finish a few at a time, each write starting with the latest
 * contents of its file (later requests merge into it).
 */
const BACKGROUND_WRITES_IN_FLIGHT = 8;
let backgroundWrites = 0;
const waitingForSlot: Array<() => void> = [];

async function backgroundSlot(): Promise<void> {
  if (backgroundWrites < BACKGROUND_WRITES_IN_FLIGHT) {
    backgroundWrites++;
    return;
  }
  // The slot is handed over by releaseBackgroundSlot (the count stays).
  await new Promise<void>((resolve) => waitingForSlot.push(resolve));
}

function releaseBackgroundSlot(): void {
  const next = waitingForSlot.shift();
  if (next !== undefined) next();
  else backgroundWrites--;
}

export class OrderedAtomicFile {
  /** Counts the writes asked for; `writtenVersion` is the one the file holds. */
  private version = 0;
  private writtenVersion = 0;
  /** The version whose write is durable (fsynced, renamed, its directory fsynced). */
  private durableVersion = 0;
  private latest: (() => string) | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private closed = false;

  constructor(
    readonly path: string,
    private readonly onError: (e: Error) => void,
  ) {}

  /** Deletes what a background write cut short by a crash left (the file itself is only ever renamed). */
  removeLeftovers(): void {
    rmSync(this.path + BACKGROUND_TMP_SUFFIX, { force: true });
  }

  /** Replaces the file now (fsynced with its directory when `sync`); throws what the write throws. */
  write(text: string, sync = true): void {
    const version = ++this.version;
    writeFileAtomically(this.path, text, sync);
    this.writtenVersion = version;
    if (sync) this.durableVersion = version;
    else this.latest = () => text;
  }

  /**
   * Makes the latest contents durable now, on the event loop, when a background write of them has not
   * finished (its fsyncs not done yet, or not started); throws what the write throws. A caller about to
   * rely on the file being on disk (the log's recovery point moving past its entries) calls this first.
   */
  writeNowIfPending(): void {
    if (!this.pending || this.latest === undefined) return;
    this.write(this.latest());
  }

  /** Whether a change asked for is not durable yet (a background write not finished, or failed). */
  get pending(): boolean {
    return !this.closed && this.durableVersion < this.version;
  }

  /** Replaces the file off the event loop with what `contents` returns when the write starts. */
  writeInBackground(contents: () => string): void {
    this.version++;
    this.latest = contents;
    if (this.closed) return;
    if (this.running !== undefined) {
      this.again = true;
      return;
    }
    this.running = this.runBackgroundWrites().finally(() => {
      this.running = undefined;
    });
  }

  /** Resolves once no background write is under way. */
  async flushed(): Promise<void> {
    while (this.running !== undefined) await this.running;
  }

  /** See the top of the file. A failed final write goes to onError. */
  close(write = true): void {
    if (this.closed) return;
    if (write && this.writtenVersion < this.version && this.latest !== undefined) {
      try {
        this.write(this.latest());
      } catch (e) {
        this.onError(e as Error);
      }
    }
    this.closed = true;
  }

  private async runBackgroundWrites(): Promise<void> {
    const tmp = this.path + BACKGROUND_TMP_SUFFIX;
    do {
      await backgroundSlot();
      this.again = false;
      const version = this.version;
      const contents = this.latest;
      if (contents === undefined || this.closed) {
        releaseBackgroundSlot();
        return;
      }
      try {
        await writeFileDurablyAsync(tmp, contents());
        if (this.closed || this.writtenVersion >= version) {
          await rm(tmp, { force: true });
          continue;
        }
        // On the event loop: no synchronous write comes between this check and the rename.
        renameSync(tmp, this.path);
        this.writtenVersion = version;
        await fsyncDirectoryAsync(dirname(this.path));
        if (this.durableVersion < version) this.durableVersion = version;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "ENOENT" && !this.closed) this.onError(e as Error);
        await rm(tmp, { force: true }).catch(() => undefined);
      } finally {
        releaseBackgroundSlot();
      }
    } while (this.again && !this.closed);
  }
}
