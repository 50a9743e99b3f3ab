// CheckpointFile: Kafka's text checkpoint format (org.apache.kafka.server.common.CheckpointFile), shared by
// the offset checkpoints at the root of a log dir and the per-partition leader-epoch-checkpoint:
//
//   <version>\n            line 1: format version (0 for every checkpoint Kafka writes today)
//   <entry count>\n        line 2: number of entry lines that follow
//   <entry>\n ...          one entry per line, formatted by an EntryFormatter
//
// Reading follows Kafka: a missing or empty file, or a file with only the version line, holds no entries;
// anything else that does not follow the format is a CheckpointFileError naming the file, the line and
// what was expected (never another exception). Files are read with a size bound, so a garbage file of any
// size costs at most MAX_CHECKPOINT_FILE_BYTES.
//
// Writing is atomic (common/atomic-file): the entries go to `<file>.tmp`, which is fsynced, renamed over
// `<file>`, and the directory is fsynced so the rename survives a crash. A reader sees the old file or the
// new one, never a mix.

import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { writeFileAtomically } from "../../common/atomic-file.js";

/** Largest checkpoint file read (about a million partitions of offset checkpoint lines). */
export const MAX_CHECKPOINT_FILE_BYTES = 64 * 1024 * 1024;

/** A small metadata file (checkpoint, meta.properties, partition.metadata) that does not follow its format. */
export class MetadataFileError extends Error {
  constructor(
    /** What kind of file, for the message: "checkpoint file", "partition metadata file", or "". */
    kind: string,
    /** Path of the file. */
    readonly file: string,
    /** 1-based line number, or undefined when the problem is not one line (size, entry count, a key). */
    readonly line: number | undefined,
    /** What the format expected there. */
    readonly expected: string,
    /** What was found (already shortened for display). */
    readonly found: string,
  ) {
    const what = kind === "" ? file : `${kind} ${file}`;
    super(
      line === undefined
        ? `Malformed ${what}: expected ${expected}, found ${found}`
        : `Malformed line ${line} in ${what}: expected ${expected}, found ${found}`,
    );
  }
}

/** A checkpoint file that does not follow Kafka's CheckpointFile format. */
export class CheckpointFileError extends MetadataFileError {
  constructor(file: string, line: number | undefined, expected: string, found: string) {
    super("checkpoint file", file, line, expected, found);
    this.name = "CheckpointFileError";
  }
}

/** Converts one entry to its line and back (Kafka's CheckpointFile.EntryFormatter). */
export interface EntryFormatter<T> {
  /** The line for an entry, without the newline. */
  toLine(entry: T): string;
  /** The entry a line holds, or undefined when the line is not one. */
  fromLine(line: string): T | undefined;
  /** What an entry line looks like, for error messages: `"<epoch> <startOffset>"`. */
  readonly lineFormat: string;
}

/** Shows a line from a damaged file safely: bounded length, control characters escaped. */
export function showLine(line: string): string {
  const cut = line.length > 80 ? `${line.slice(0, 80)}…` : line;
  return JSON.stringify(cut); // escapes quotes and control characters
}

/**
 * Reads a whole file of at most `maxBytes`, or undefined when it does not exist. Throws CheckpointFileError
 * when it is larger: the size is checked before anything is allocated.
 */
export function readSmallFile(path: string, maxBytes = MAX_CHECKPOINT_FILE_BYTES): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
  try {
    const size = fstatSync(fd).size;
    if (size > maxBytes) {
      throw new CheckpointFileError(path, undefined, `at most ${maxBytes} bytes`, `${size} bytes`);
    }
    const buf = Buffer.allocUnsafe(size);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, buf, read, size - read, read);
      if (n === 0) break;
      read += n;
    }
    return buf.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

/** Splits text into lines as Java's BufferedReader.readLine does (\n, \r\n or \r; no empty last line). */
export function splitLines(text: string): string[] {
  if (text.length === 0) return [];
  const lines = text.split(/\r\n|\n|\r/);
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

const INT_PATTERN = /^[+-]?\d{1,10}$/;

/** Java's Integer.parseInt: an int32 in decimal, else undefined. */
export function parseJavaInt(s: string): number | undefined {
  if (!INT_PATTERN.test(s)) return undefined;
  const n = Number(s);
  return n >= -0x80000000 && n <= 0x7fffffff ? n : undefined;
}

const LONG_PATTERN = /^[+-]?\d{1,19}$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Java's Long.parseLong: an int64 in decimal, else undefined. */
export function parseJavaLong(s: string): bigint | undefined {
  if (!LONG_PATTERN.test(s)) return undefined;
  const n = BigInt(s);
  return n >= INT64_MIN && n <= INT64_MAX ? n : undefined;
}

/** A versioned checkpoint file of one entry per line (see the top of this file). */
export class CheckpointFile<T> {
  constructor(
    readonly path: string,
    readonly version: number,
    private readonly formatter: EntryFormatter<T>,
  ) {}

  /** The entries; [] when the file is missing or empty. Throws CheckpointFileError on a malformed file. */
  read(): T[] {
    const bytes = readSmallFile(this.path);
    if (bytes === undefined) return [];
    return this.parse(bytes.toString("utf8"));
  }

  /** Parses checkpoint text (exposed for tools that already hold the bytes). */
  parse(text: string): T[] {
    const lines = splitLines(text);
    if (lines.length === 0) return [];
    const version = parseJavaInt(lines[0]);
    if (version === undefined) {
      throw new CheckpointFileError(this.path, 1, `the version number ${this.version}`, showLine(lines[0]));
    }
    if (version !== this.version) {
      throw new CheckpointFileError(this.path, 1, `version ${this.version}`, `version ${version}`);
    }
    if (lines.length === 1) return [];
    const count = parseJavaInt(lines[1]);
    if (count === undefined || count < 0) {
      throw new CheckpointFileError(this.path, 2, "the number of entries", showLine(lines[1]));
    }
    const entries: T[] = [];
    for (let i = 2; i < lines.length; i++) {
      const entry = this.formatter.fromLine(lines[i]);
      if (entry === undefined) {
        throw new CheckpointFileError(this.path, i + 1, this.formatter.lineFormat, showLine(lines[i]));
      }
      entries.push(entry);
    }
    if (entries.length !== count) {
      throw new CheckpointFileError(
        this.path,
        undefined,
        `${count} entries (line 2)`,
        `${entries.length} entr${entries.length === 1 ? "y" : "ies"}`,
      );
    }
    return entries;
  }

  /** The file's text for these entries. */
  format(entries: Iterable<T>): string {
    const lines: string[] = [];
    for (const e of entries) lines.push(this.formatter.toLine(e));
    return `${this.version}\n${lines.length}\n${lines.map((l) => `${l}\n`).join("")}`;
  }

  /** Replaces the file's entries atomically (see writeFileAtomically). */
  write(entries: Iterable<T>, sync = true): void {
    writeFileAtomically(this.path, this.format(entries), sync);
  }
}
