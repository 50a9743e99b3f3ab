// TransactionIndex (`.txnindex`): the aborted transactions whose data lies in the segment, as Kafka's
// TransactionIndex. Each entry is 34 bytes, big-endian: version int16 (0), producerId int64,
// firstOffset int64, lastOffset int64 (the offset of the abort marker), lastStableOffset int64 (the LSO
// when the transaction was aborted). A read_committed fetch collects the aborted transactions that
// overlap its range to filter them out. The file is append-only (not preallocated); entries are kept in
// memory. Invariants: lastOffset strictly increases from entry to entry; every lastOffset >= baseOffset;
// the file length is a multiple of 34.

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
import { CorruptIndexError, InvalidIndexAppendError } from "./abstract-index.js";

export const TXN_INDEX_ENTRY_SIZE = 34;
export const ABORTED_TXN_VERSION = 0;
/** Largest .txnindex read into memory (64 MiB, ~2M aborted transactions in one segment). */
export const MAX_TXN_INDEX_READ_BYTES = 64 * 1024 * 1024;

export interface AbortedTxn {
  readonly producerId: bigint;
  readonly firstOffset: bigint;
  readonly lastOffset: bigint;
  readonly lastStableOffset: bigint;
}

export interface TxnIndexSearchResult {
  readonly abortedTransactions: AbortedTxn[];
  /** True when an entry's lastStableOffset reached the upper bound: later segments cannot add more. */
  readonly isComplete: boolean;
}

export class TransactionIndex {
  private entries: AbortedTxn[] = [];
  private fd: number | null = null;
  private lengthIsMultiple = true;
  private badVersion = false;
  private oversized = false;

  constructor(
    readonly startOffset: bigint,
    private _file: string,
  ) {
    if (existsSync(_file)) {
      const fd = openSync(_file, "r");
      try {
        const fileSize = fstatSync(fd).size;
        // Bounded read: a larger file is treated as damaged (sanityCheck fails, the loader rebuilds).
        this.oversized = fileSize > MAX_TXN_INDEX_READ_BYTES;
        const size = this.oversized ? 0 : fileSize;
        const bytes = Buffer.alloc(size);
        let done = 0;
        while (done < size) {
          const n = readSync(fd, bytes, done, size - done, done);
          if (n === 0) break;
          done += n;
        }
        this.lengthIsMultiple = done % TXN_INDEX_ENTRY_SIZE === 0;
        for (let pos = 0; pos + TXN_INDEX_ENTRY_SIZE <= done; pos += TXN_INDEX_ENTRY_SIZE) {
          if (bytes.readInt16BE(pos) !== ABORTED_TXN_VERSION) this.badVersion = true;
          this.entries.push({
            producerId: bytes.readBigInt64BE(pos + 2),
            firstOffset: bytes.readBigInt64BE(pos + 10),
            lastOffset: bytes.readBigInt64BE(pos + 18),
            lastStableOffset: bytes.readBigInt64BE(pos + 26),
          });
        }
      } finally {
        closeSync(fd);
      }
    }
  }

  get file(): string {
    return this._file;
  }

  get size(): number {
    return this.entries.length;
  }

  allAbortedTxns(): readonly AbortedTxn[] {
    return this.entries;
  }

  append(txn: AbortedTxn): void {
    const last = this.entries[this.entries.length - 1];
    if (last && txn.lastOffset <= last.lastOffset) {
      throw new InvalidIndexAppendError(
        `the last offset of appended log entry must increase sequentially, but ${txn.lastOffset} is not greater than ${last.lastOffset} in ${this._file}`,
      );
    }
    const b = Buffer.alloc(TXN_INDEX_ENTRY_SIZE);
    b.writeInt16BE(ABORTED_TXN_VERSION, 0);
    b.writeBigInt64BE(txn.producerId, 2);
    b.writeBigInt64BE(txn.firstOffset, 10);
    b.writeBigInt64BE(txn.lastOffset, 18);
    b.writeBigInt64BE(txn.lastStableOffset, 26);
    writeSync(this.openFd(), b, 0, b.length, this.entries.length * TXN_INDEX_ENTRY_SIZE);
    this.entries.push({ ...txn });
  }

  /** Aborted transactions overlapping [fetchOffset, upperBoundOffset) (Kafka's collectAbortedTxns). */
  collectAbortedTxns(fetchOffset: bigint, upperBoundOffset: bigint): TxnIndexSearchResult {
    const out: AbortedTxn[] = [];
    for (const t of this.entries) {
      if (t.lastOffset >= fetchOffset && t.firstOffset < upperBoundOffset) out.push(t);
      if (t.lastStableOffset >= upperBoundOffset) return { abortedTransactions: out, isComplete: true };
    }
    return { abortedTransactions: out, isComplete: false };
  }

  /** Removes entries whose lastOffset >= offset. */
  truncateTo(offset: bigint): void {
    let keep = this.entries.length;
    while (keep > 0 && this.entries[keep - 1].lastOffset >= offset) keep--;
    if (keep === this.entries.length && this.lengthIsMultiple && !this.oversized) return;
    this.oversized = false;
    this.entries.length = keep;
    if (existsSync(this._file)) ftruncateSync(this.openFd(), keep * TXN_INDEX_ENTRY_SIZE);
    this.lengthIsMultiple = true;
  }

  reset(): void {
    this.truncateTo(-1n);
  }

  sanityCheck(): void {
    if (this.oversized)
      throw new CorruptIndexError(this._file, `is larger than ${MAX_TXN_INDEX_READ_BYTES} bytes`);
    if (!this.lengthIsMultiple) {
      throw new CorruptIndexError(
        this._file,
        `has a length that is not a multiple of ${TXN_INDEX_ENTRY_SIZE}`,
      );
    }
    if (this.badVersion) throw new CorruptIndexError(this._file, `has an entry whose version is not 0`);
    let last = -1n;
    for (const t of this.entries) {
      if (t.lastOffset < this.startOffset) {
        throw new CorruptIndexError(
          this._file,
          `last offset of the aborted transaction ${t.lastOffset} is less than the start offset ${this.startOffset}`,
        );
      }
      if (t.lastOffset <= last || t.firstOffset > t.lastOffset) {
        throw new CorruptIndexError(this._file, `has aborted transactions out of order at ${t.lastOffset}`);
      }
      last = t.lastOffset;
    }
  }

  private openFd(): number {
    if (this.fd === null) this.fd = openSync(this._file, existsSync(this._file) ? "r+" : "w+");
    return this.fd;
  }

  flush(): void {
    if (this.fd !== null) fdatasyncSync(this.fd);
  }

  close(): void {
    if (this.fd !== null) {
      closeSync(this.fd);
      this.fd = null;
    }
  }

  renameTo(f: string): void {
    if (existsSync(this._file)) renameSync(this._file, f);
    this._file = f;
  }

  deleteIfExists(): boolean {
    this.close();
    const existed = existsSync(this._file);
    rmSync(this._file, { force: true });
    return existed;
  }
}
