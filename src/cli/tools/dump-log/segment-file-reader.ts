// Bounded reads of a segment's files for `dump-log`: a positional reader through a 1 MiB window (sizes are
// checked against the file before anything is allocated, so a corrupt file of any size costs bounded
// memory), Kafka's Utils.readFullyOrFail message for a short read, and the segment file names
// (<20-digit base offset>.<suffix>: the base offset a name gives, a segment's companion file).

import { closeSync, existsSync, fstatSync, openSync, readSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { DumpError } from "./dump-errors.js";

export const WINDOW_BYTES = 1024 * 1024;

/** Positional reads through a 1 MiB window; never allocates more than the bytes asked for and present. */
export class FileReader {
  readonly size: number;
  private window = Buffer.alloc(0);
  private windowStart = 0;

  private constructor(
    private readonly fd: number,
    readonly path: string,
  ) {
    this.size = fstatSync(fd).size;
  }

  static open(path: string): FileReader {
    return new FileReader(openSync(path, "r"), path);
  }

  close(): void {
    closeSync(this.fd);
  }

  /** Up to `length` bytes at `position` (fewer at the end of the file). */
  read(position: number, length: number): Buffer {
    if (position < 0 || position >= this.size || length <= 0) return Buffer.alloc(0);
    const len = Math.min(length, this.size - position);
    if (position >= this.windowStart && position + len <= this.windowStart + this.window.length) {
      return this.window.subarray(position - this.windowStart, position - this.windowStart + len);
    }
    if (len > WINDOW_BYTES) {
      const buf = Buffer.allocUnsafe(len);
      return buf.subarray(0, this.readInto(buf, position));
    }
    const buf = Buffer.allocUnsafe(Math.min(WINDOW_BYTES, this.size - position));
    this.window = buf.subarray(0, this.readInto(buf, position));
    this.windowStart = position;
    return this.window.subarray(0, Math.min(len, this.window.length));
  }

  private readInto(buf: Buffer, position: number): number {
    let done = 0;
    while (done < buf.length) {
      const n = readSync(this.fd, buf, done, buf.length - done, position + done);
      if (n === 0) break;
      done += n;
    }
    return done;
  }
}

/** Kafka's Utils.readFullyOrFail message for a short read. */
export function readFullyOrFail(f: FileReader, position: number, length: number, what: string): Buffer {
  const b = f.read(position, length);
  if (b.length < length) {
    throw new DumpError(
      `Failed to read \`${what}\` from file channel \`${f.path}\`. Expected to read ${length} bytes, but reached end of file after reading ${b.length} bytes. Started read from position ${position}.`,
    );
  }
  return b;
}

/** The base offset a segment file's name starts with (DumpError where it does not). */
export function baseOffsetOfName(path: string): bigint {
  const prefix = basename(path).split(".")[0];
  if (!/^\d{1,20}$/.test(prefix) || BigInt(prefix) > 2n ** 63n - 1n) {
    throw new DumpError(`Cannot dump ${path}: the file name does not start with a segment base offset`);
  }
  return BigInt(prefix);
}

/** The file of the same segment with another suffix (`00…0.log` for `00…0.index`). */
export function companionFile(path: string, suffix: string): string {
  return join(dirname(resolve(path)), basename(path).split(".")[0] + suffix);
}

/** The .log of the segment an index belongs to; Java's FileNotFoundException message where it is missing. */
export function segmentLogOf(path: string): string {
  const logPath = companionFile(path, ".log");
  if (!existsSync(logPath)) throw new DumpError(`${logPath} (No such file or directory)`);
  return logPath;
}
