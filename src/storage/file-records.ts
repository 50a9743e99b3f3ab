// FileRecords: the `.log` file of one segment, as Kafka's FileRecords: record batches (magic 2) back to
// back from position 0, each stored exactly as appended (`baseOffset int64 | batchLength int32 | ...`, see
// protocol/records/record-batch.ts). It owns the file descriptor, the size (the bytes that hold batches),
// the reads, writes, truncations and renames of the file, and the searches that find a batch by offset or
// by timestamp reading batch headers only (61 bytes each).
//
// Invariants:
// - size <= the file's length. Bytes past size are no batches — a preallocated tail, or the bytes of an
//   append being taken back — and trim() cuts them when the segment stops taking appends or closes.
// - A header is only a batch when it is a whole v2 header (magic 2, a length of at least a header) of a
//   batch that ends at or before the bound read to (size by default): a declared length is never trusted
//   past it.
// - I/O is synchronous (openSync / writeSync / readSync / ftruncateSync / fdatasyncSync), as LogSegment
//   explains; the file is opened once and read and written by position.

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
  statSync,
  utimesSync,
  writeSync,
} from "node:fs";
import {
  BATCH_LENGTH_OFFSET,
  decodeBatchRecords,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  MAX_TIMESTAMP_OFFSET,
  MIN_BATCH_LENGTH,
  PARTITION_LEADER_EPOCH_OFFSET,
  RECORD_BATCH_MAGIC,
  RECORD_BATCH_OVERHEAD,
  type RecordBatchHeader,
  readRecordBatchHeader,
} from "../protocol/records/index.js";

/** A batch located in a segment: its last offset, position and size (Kafka's LogOffsetPosition). */
export interface LogOffsetPosition {
  /** The batch's last offset. */
  readonly offset: bigint;
  readonly baseOffset: bigint;
  readonly position: number;
  readonly size: number;
}

/** Header fields the storage layer needs, read from the 61-byte batch header. */
export interface BatchHeaderInfo {
  readonly position: number;
  readonly size: number;
  readonly baseOffset: bigint;
  readonly lastOffset: bigint;
  readonly maxTimestamp: bigint;
  readonly partitionLeaderEpoch: number;
}

export class FileRecords {
  private fd: number | null;
  private _size: number;
  private readonly header = Buffer.alloc(RECORD_BATCH_OVERHEAD);
  /** Positional reads done (tests check the read path does O(1) I/O). */
  reads = 0;

  /** Opens `file`; a missing one is created, and preallocated to `preallocateTo` bytes when given. */
  constructor(
    private _file: string,
    preallocateTo?: number,
  ) {
    const exists = existsSync(_file);
    this.fd = openSync(_file, exists ? "r+" : "w+");
    this._size = exists ? fstatSync(this.fd).size : 0;
    if (!exists && preallocateTo !== undefined && preallocateTo > 0) ftruncateSync(this.fd, preallocateTo);
  }

  get file(): string {
    return this._file;
  }

  /** Renames the file (if it exists) and goes by the new name from now on. */
  renameTo(file: string): void {
    if (existsSync(this._file)) renameSync(this._file, file);
    this._file = file;
  }

  get lastModified(): number {
    return statSync(this._file).mtimeMs;
  }

  setLastModified(ms: number): void {
    const t = ms / 1000;
    utimesSync(this._file, t, t);
  }

  /** Bytes holding batches. */
  get size(): number {
    return this._size;
  }

  get isOpen(): boolean {
    return this.fd !== null;
  }

  private get openFd(): number {
    if (this.fd === null) throw new Error(`segment ${this._file} is closed`);
    return this.fd;
  }

  /** The file's length on disk (at least size). */
  fileSize(): number {
    return fstatSync(this.openFd).size;
  }

  /** Writes whole batches at the end; size moves past them only once every byte is written. */
  append(records: Buffer): void {
    const position = this._size;
    let done = 0;
    while (done < records.length) {
      done += writeSync(this.openFd, records, done, records.length - done, position + done);
    }
    this._size += records.length;
  }

  /** Reads up to `length` bytes at `position` into `buf`; returns how many (fewer at the end of the file). */
  read(buf: Buffer, position: number, length = buf.length): number {
    this.reads++;
    let done = 0;
    while (done < length) {
      const n = readSync(this.openFd, buf, done, length - done, position + done);
      if (n === 0) break;
      done += n;
    }
    return done;
  }

  /** Cuts the file at `size` (Kafka's truncateTo). */
  truncateTo(size: number): void {
    ftruncateSync(this.openFd, size);
    this._size = size;
  }

  /** The batches end at `size`: the file is cut there if it is longer (an append taken back, recovery). */
  shrinkTo(size: number): void {
    if (this.fileSize() > size) ftruncateSync(this.openFd, size);
    this._size = size;
  }

  /** Cuts a file longer than size (a preallocated one) back to size (Kafka's trim); nothing once closed. */
  trim(): void {
    if (this.fd !== null && fstatSync(this.fd).size !== this._size) ftruncateSync(this.fd, this._size);
  }

  /** fdatasync; nothing once closed. */
  flush(): void {
    if (this.fd !== null) fdatasyncSync(this.fd);
  }

  /** Trims the file, then closes it. */
  close(): void {
    this.trim();
    this.closeHandlers();
  }

  /** Closes the file without writing anything. */
  closeHandlers(): void {
    if (this.fd !== null) {
      closeSync(this.fd);
      this.fd = null;
    }
  }

  /** Closes and removes the file. */
  deleteIfExists(): void {
    this.closeHandlers();
    rmSync(this._file, { force: true });
  }

  /**
   * Reads the header of the batch at `position`, or undefined when no well-formed v2 header is there
   * (end of file, partial header, bad magic or length, or a batch running past `end`).
   */
  readBatchHeader(position: number, end = this._size): BatchHeaderInfo | undefined {
    if (position + LOG_OVERHEAD > end) return undefined;
    const want = Math.min(RECORD_BATCH_OVERHEAD, end - position);
    const got = this.read(this.header, position, want);
    if (got < RECORD_BATCH_OVERHEAD) return undefined;
    const h = this.header;
    const batchLength = h.readInt32BE(BATCH_LENGTH_OFFSET);
    if (h.readInt8(MAGIC_OFFSET) !== RECORD_BATCH_MAGIC || batchLength < MIN_BATCH_LENGTH) return undefined;
    const size = LOG_OVERHEAD + batchLength;
    if (position + size > end) return undefined;
    const baseOffset = h.readBigInt64BE(0);
    return {
      position,
      size,
      baseOffset,
      lastOffset: baseOffset + BigInt(h.readInt32BE(LAST_OFFSET_DELTA_OFFSET)),
      maxTimestamp: h.readBigInt64BE(MAX_TIMESTAMP_OFFSET),
      partitionLeaderEpoch: h.readInt32BE(PARTITION_LEADER_EPOCH_OFFSET),
    };
  }

  /** The whole v2 header (producer id, epoch, sequence, attributes) of the batch at `position`. */
  readFullBatchHeader(position: number, end = this._size): RecordBatchHeader | undefined {
    if (this.readBatchHeader(position, end) === undefined) return undefined;
    return readRecordBatchHeader(this.header, 0);
  }

  /**
   * The first batch at or after `startingPosition` whose last offset is >= offset, by a scan of batch
   * headers (Kafka's searchForOffsetWithSize). Undefined past the last batch.
   */
  searchForOffsetWithSize(offset: bigint, startingPosition: number): LogOffsetPosition | undefined {
    let position = startingPosition;
    for (;;) {
      const h = this.readBatchHeader(position);
      if (h === undefined) return undefined;
      if (h.lastOffset >= offset) {
        return { offset: h.lastOffset, baseOffset: h.baseOffset, position: h.position, size: h.size };
      }
      position += h.size;
    }
  }

  /**
   * The first record with a timestamp >= `timestamp` at an offset >= startingOffset, in the batches from
   * `startingPosition` on (Kafka's searchForTimestamp): batch headers first; only the one batch that holds
   * the answer is decoded.
   */
  searchForTimestamp(
    timestamp: bigint,
    startingPosition: number,
    startingOffset: bigint,
  ): { timestamp: bigint; offset: bigint } | undefined {
    let position = startingPosition;
    for (;;) {
      const h = this.readBatchHeader(position);
      if (h === undefined) return undefined;
      if (h.maxTimestamp >= timestamp && h.lastOffset >= startingOffset) {
        const bytes = Buffer.allocUnsafe(h.size);
        this.read(bytes, position);
        for (const r of decodeBatchRecords(bytes)) {
          if (r.timestamp >= timestamp && r.offset >= startingOffset) {
            return { timestamp: r.timestamp, offset: r.offset };
          }
        }
      }
      position += h.size;
    }
  }
}
