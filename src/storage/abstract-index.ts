// AbstractIndex: what the offset index and the time index share (Kafka's AbstractIndex), without mmap.
// On disk an index is a flat array of fixed-size big-endian entries and nothing else: no header, no
// checksum. Entry keys are stored relative to the segment's base offset (int32). The entries live in
// memory in one Buffer; appended entries are written behind with one positional write per 4 KiB of them
// (Kafka's mmap'd index likewise reaches the file only through the page cache, and recovery rebuilds the
// index of an unflushed segment), and always before a flush, a resize or trim, a truncation and before
// the entries are released from memory. While a segment is active its index file is preallocated (a sparse file
// via ftruncate) to segment.index.bytes rounded down to a multiple of the entry size; on roll and on close
// it is trimmed to entries * entrySize. On open the entry count comes from the file size; an untrimmed
// file (a crash while active) shows trailing zero entries, which are dropped, and any other inconsistency
// is reported by sanityCheck() as a CorruptIndexError so the loader rebuilds the index from the log.
// Invariants: entries * entrySize <= file length; keys strictly increasing; 0 <= entries <= maxEntries;
// entries [writtenEntries, entries) exist only in memory, at most WRITE_BEHIND_BYTES of them.

import {
  closeSync,
  existsSync,
  fdatasyncSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";

/** A damaged index file (Kafka's CorruptIndexException): the log is intact, the index must be rebuilt. */
export class CorruptIndexError extends Error {
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(`Corrupt index found, index file (${file}) ${message}`);
    this.name = "CorruptIndexError";
  }
}

/** An append that would break the index's ordering (Kafka's InvalidOffsetException). */
export class InvalidIndexAppendError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InvalidIndexAppendError";
  }
}

const INT32_MAX = 2147483647n;
/** Appended entries kept in memory before they are written to the file in one write. */
const WRITE_BEHIND_BYTES = 4096;
/** Largest index file read into memory when segment.index.bytes is smaller (64 MiB). */
export const MAX_INDEX_READ_BYTES = 64 * 1024 * 1024;

export abstract class AbstractIndex {
  /** Entries in memory (see `buf`); only the first entries * entrySize bytes are meaningful. */
  private _buf: Buffer;
  /** False after release(): the entries are read back from the file on next use. */
  private loaded = true;
  protected _entries = 0;
  /** Entries before this one are in the file; the rest are written behind (see writeEntry). */
  private writtenEntries = 0;
  protected _maxEntries: number;
  private fd: number | null = null;
  /** Length of the file on disk as we left it (preallocated or trimmed). */
  private fileLength = 0;
  /** False when the file length was not a multiple of the entry size (a sanity-check failure). */
  private lengthIsMultiple = true;
  /** The file was larger than any index of this segment can be, and was not read. */
  private oversized = false;

  /** segment.index.bytes rounded down to the entry size: the capacity while the segment is active. */
  readonly maxIndexSize: number;

  /**
   * Opens `file`: an existing file keeps its length (entries = length / entrySize, minus trailing zero
   * entries); a missing one is created preallocated to maxIndexSize (Kafka's newly created index).
   */
  protected constructor(
    private _file: string,
    readonly baseOffset: bigint,
    readonly entrySize: number,
    maxIndexSize: number,
  ) {
    this.maxIndexSize = roundDown(Math.max(maxIndexSize, entrySize), entrySize);
    if (existsSync(_file)) {
      const fd = openSync(_file, "r");
      try {
        const fileSize = fstatSync(fd).size;
        // Never read more than an index can legitimately hold: a bigger file is damaged (rebuilt by the
        // loader after sanityCheck fails), and reading it could be an unbounded allocation.
        this.oversized = fileSize > Math.max(this.maxIndexSize, MAX_INDEX_READ_BYTES);
        const size = this.oversized ? 0 : fileSize;
        // A preallocated file left by a crash is mostly zeros: read only up to its written entries.
        const toRead = size > PREALLOCATED_PROBE_BYTES ? writtenPrefixBytes(fd, size, entrySize) : size;
        const bytes = Buffer.alloc(toRead);
        let done = 0;
        while (done < toRead) {
          const n = readSync(fd, bytes, done, toRead - done, done);
          if (n === 0) break;
          done += n;
        }
        this._buf = bytes;
        this.fileLength = fileSize;
        let entries = Math.floor(done / entrySize);
        // An untrimmed file from a crash: drop trailing all-zero entries (never written). The zero tail
        // of a preallocated 10 MiB index is skipped a chunk at a time, not an entry at a time.
        entries = Math.min(entries, Math.ceil(endOfNonZero(bytes, done) / entrySize));
        this._entries = entries;
        this.writtenEntries = entries;
        this.lengthIsMultiple = size % entrySize === 0;
        // Entries past `done` (the zero tail) are known zero: lookups never reach them.
        this._maxEntries = Math.floor(size / entrySize);
        if (this.oversized) this._maxEntries = this.maxIndexSize / entrySize;
      } finally {
        closeSync(fd);
      }
    } else {
      this._buf = Buffer.alloc(0);
      this._maxEntries = 0;
      this.resize(this.maxIndexSize);
    }
  }

  /** The entries, read back from the file first if they were released. */
  protected get buf(): Buffer {
    if (!this.loaded) {
      const size = this._entries * this.entrySize;
      const bytes = Buffer.alloc(size);
      const fd = openSync(this._file, "r");
      try {
        let done = 0;
        while (done < size) {
          const n = readSync(fd, bytes, done, size - done, done);
          if (n === 0) break;
          done += n;
        }
      } finally {
        closeSync(fd);
      }
      this._buf = bytes;
      this.loaded = true;
    }
    return this._buf;
  }

  /**
   * Drops the in-memory entries of an index that is not being written (an inactive segment's); the next
   * lookup reads them back. Keeps the heap bounded for logs with many segments (Kafka maps indexes lazily).
   */
  release(): void {
    this.writeBehind();
    this.closeHandler();
    if (!this.loaded) return;
    this._buf = Buffer.alloc(0);
    this.loaded = false;
  }

  /** Whether the entries are in memory. */
  get isLoaded(): boolean {
    return this.loaded;
  }

  get file(): string {
    return this._file;
  }

  get entries(): number {
    return this._entries;
  }

  get maxEntries(): number {
    return this._maxEntries;
  }

  /** Bytes of real entries (what the file is trimmed to). */
  get sizeInBytes(): number {
    return this._entries * this.entrySize;
  }

  isFull(): boolean {
    return this._entries >= this._maxEntries;
  }

  /** The relative offset for `offset`, or throws when it does not fit an int32 above the base. */
  relativeOffset(offset: bigint): number {
    const rel = offset - this.baseOffset;
    if (rel < 0n || rel > INT32_MAX) {
      throw new InvalidIndexAppendError(
        `offset ${offset} does not fit in the index of the segment with base offset ${this.baseOffset}`,
      );
    }
    return Number(rel);
  }

  /** Whether `offset - baseOffset` fits an int32 (Kafka's canAppendOffset). */
  canAppendOffset(offset: bigint): boolean {
    const rel = offset - this.baseOffset;
    return rel >= 0n && rel <= INT32_MAX;
  }

  /**
   * Entry `n` (already in this.buf, the last one) was appended: it reaches the file with the next
   * WRITE_BEHIND_BYTES of entries, or earlier when writeBehind() is called.
   */
  protected writeEntry(n: number): void {
    if (n < this.writtenEntries) this.writtenEntries = n;
    if ((n + 1 - this.writtenEntries) * this.entrySize >= WRITE_BEHIND_BYTES) this.writeBehind();
  }

  /** Writes the entries still only in memory to the file, in one positional write. */
  writeBehind(): void {
    if (this.writtenEntries >= this._entries) return;
    const from = this.writtenEntries * this.entrySize;
    const to = this._entries * this.entrySize;
    const fd = this.openFd();
    for (let done = from; done < to; ) done += writeSync(fd, this.buf, done, to - done, done);
    if (to > this.fileLength) this.fileLength = to;
    this.writtenEntries = this._entries;
  }

  /** Makes room in memory for one more entry; returns its byte position. */
  protected reserveEntry(): number {
    const pos = this._entries * this.entrySize;
    if (pos + this.entrySize > this.buf.length) {
      const cap = Math.min(
        Math.max(this.entrySize * 64, this.buf.length * 2),
        Math.max(this._maxEntries, this._entries + 1) * this.entrySize,
      );
      const next = Buffer.alloc(Math.max(cap, pos + this.entrySize));
      this.buf.copy(next, 0, 0, pos);
      this._buf = next;
    }
    return pos;
  }

  private openFd(): number {
    if (this.fd === null) {
      if (openIndexFiles.size >= maxOpenIndexFiles) openIndexFiles.values().next().value?.closeHandler();
      this.fd = openSync(this._file, existsSync(this._file) ? "r+" : "w+");
    } else {
      openIndexFiles.delete(this); // re-inserted below as the most recently used
    }
    openIndexFiles.add(this);
    return this.fd;
  }

  /**
   * Sets the file length to `newSize` rounded down to the entry size (preallocation or trim) and
   * maxEntries accordingly; never below the real entries. Kafka's resize.
   */
  resize(newSize: number): boolean {
    this.writeBehind();
    const rounded = Math.max(roundDown(newSize, this.entrySize), this.sizeInBytes);
    const changed = rounded !== this.fileLength;
    if (changed) ftruncateSync(this.openFd(), rounded);
    this.fileLength = rounded;
    this._maxEntries = rounded / this.entrySize;
    return changed;
  }

  /** Trims the file to its real entries (on roll and on close). */
  trimToValidSize(): void {
    this.resize(this.sizeInBytes);
  }

  /** Removes every entry and restores the full capacity (Kafka's reset()). */
  reset(): void {
    this.oversized = false;
    this.lengthIsMultiple = true;
    this.truncateToEntries(0);
    this.resize(this.maxIndexSize);
  }

  protected truncateToEntries(n: number): void {
    const keep = Math.min(Math.max(n, 0), this._entries);
    this.buf.fill(0, keep * this.entrySize, this._entries * this.entrySize);
    // Zero the dropped entries that reached the file, so a crash before the next trim reads them as never
    // written; the ones still in memory only are just forgotten.
    const written = Math.min(this.writtenEntries, this._entries);
    if (keep < written) {
      const zeros = Buffer.alloc((written - keep) * this.entrySize);
      writeSync(this.openFd(), zeros, 0, zeros.length, keep * this.entrySize);
    }
    this._entries = keep;
    this.writtenEntries = Math.min(this.writtenEntries, keep);
    this.entriesTruncated();
  }

  /** Called after entries were removed (subclasses refresh what they cache about the last entry). */
  protected entriesTruncated(): void {}

  /** Keeps the entries whose offset is < `offset` (Kafka's truncateTo keeps entries < offset). */
  abstract truncateTo(offset: bigint): void;

  /** Throws CorruptIndexError when the entries are not a well-formed index for this segment. */
  sanityCheck(): void {
    if (this.oversized) {
      throw new CorruptIndexError(
        this._file,
        `is larger than ${Math.max(this.maxIndexSize, MAX_INDEX_READ_BYTES)} bytes`,
      );
    }
    if (!this.lengthIsMultiple) {
      throw new CorruptIndexError(this._file, `has a length that is not a multiple of ${this.entrySize}`);
    }
    this.checkEntries();
  }

  protected abstract checkEntries(): void;

  /**
   * Binary search for the last entry whose key (read by keyAt) is <= target; -1 when none (Kafka's
   * largestLowerBoundSlotFor).
   */
  protected largestLowerBound(target: bigint, keyAt: (n: number) => bigint): number {
    let lo = 0;
    let hi = this._entries - 1;
    if (hi < 0 || keyAt(0) > target) return -1;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (keyAt(mid) <= target) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  flush(): void {
    // Positional writes already reached the page cache; fsync makes them durable. A descriptor closed by
    // the open-file cap is reopened: fdatasync flushes the file's dirty pages whichever descriptor asks.
    if (this.fd === null && !existsSync(this._file)) return;
    this.writeBehind();
    fdatasyncSync(this.openFd());
  }

  /** Closes the file descriptor (the file stays as it is; callers trim first). */
  closeHandler(): void {
    if (this.fd !== null) {
      closeSync(this.fd);
      this.fd = null;
      openIndexFiles.delete(this);
    }
  }

  close(): void {
    this.trimToValidSize();
    this.closeHandler();
  }

  renameTo(f: string): void {
    if (existsSync(this._file)) renameSync(this._file, f);
    this._file = f;
  }

  deleteIfExists(): boolean {
    this.closeHandler();
    const existed = existsSync(this._file);
    rmSync(this._file, { force: true });
    return existed;
  }
}

export function roundDown(n: number, factor: number): number {
  return n - (n % factor);
}

/**
 * Index files held open at once across all partitions, least recently written closed first. Kafka
 * memory-maps its indexes and holds no descriptor for them; without mmap, this cap keeps a broker with
 * many partitions at about one descriptor per segment `.log` instead of three.
 */
let maxOpenIndexFiles = 1024;
const openIndexFiles = new Set<AbstractIndex>();

/** Changes the cap on open index files (tests). */
export function setMaxOpenIndexFiles(n: number): void {
  maxOpenIndexFiles = Math.max(1, n);
  while (openIndexFiles.size > maxOpenIndexFiles) openIndexFiles.values().next().value?.closeHandler();
}

/** How many index files are open now. */
export function openIndexFileCount(): number {
  return openIndexFiles.size;
}

const ZERO_CHUNK = Buffer.alloc(64 * 1024);

/** Index files larger than this are probed for their written prefix before being read. */
const PREALLOCATED_PROBE_BYTES = 64 * 1024;

/**
 * The length of the written prefix of an index file of `size` bytes (whole entries), found by binary
 * search for the first all-zero entry: in a well-formed index only entry 0 can be all zeros (relative
 * offsets, and time-index timestamps, strictly increase), so entries [1, n) are non-zero and the
 * preallocated tail is zero. A damaged file may mislead the search; the loader's sanity check against
 * the log then rebuilds the index, as for any other damage.
 */
function writtenPrefixBytes(fd: number, size: number, entrySize: number): number {
  const total = Math.floor(size / entrySize);
  const entry = Buffer.alloc(entrySize);
  const isZeroAt = (i: number): boolean => {
    const n = readSync(fd, entry, 0, entrySize, i * entrySize);
    return n === entrySize && entry.equals(ZERO_CHUNK.subarray(0, entrySize));
  };
  if (total <= 1 || !isZeroAt(total - 1)) return size; // not preallocated (or full): read it all
  let lo = 1; // entries [1, lo) are known to be written
  let hi = total - 1; // entry hi is known to be zero
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (isZeroAt(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo * entrySize;
}

/** The position just after the last non-zero byte of buf[0, end), or 0 when all are zero. */
function endOfNonZero(buf: Buffer, end: number): number {
  let hi = end;
  while (hi > 0) {
    const lo = Math.max(0, hi - ZERO_CHUNK.length);
    if (buf.subarray(lo, hi).equals(ZERO_CHUNK.subarray(0, hi - lo))) {
      hi = lo;
      continue;
    }
    for (let i = hi - 1; i >= lo; i--) if (buf[i] !== 0) return i + 1;
  }
  return 0;
}
