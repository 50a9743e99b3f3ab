// Log file names: the on-disk naming of a partition directory's files, exactly as Kafka's LogFileUtils.
// A segment's files are named after its base offset as 20 decimal digits, zero-padded
// ("00000000000000000123.log"), followed by a suffix: .log (record batches), .index (offset index),
// .timeindex (time index), .txnindex (aborted transactions), .snapshot (producer state). Files in the
// middle of an operation carry a second suffix: .deleted (scheduled for removal), .cleaned (cleaner output
// not yet swapped in), .swap (cleaner output being swapped in). Invariant: the name alone gives the base
// offset, and base offsets of a partition's segments are unique and sort in name order.

import { join } from "node:path";

export const LOG_FILE_SUFFIX = ".log";
export const INDEX_FILE_SUFFIX = ".index";
export const TIME_INDEX_FILE_SUFFIX = ".timeindex";
export const TXN_INDEX_FILE_SUFFIX = ".txnindex";
export const PRODUCER_SNAPSHOT_FILE_SUFFIX = ".snapshot";
export const DELETED_FILE_SUFFIX = ".deleted";
export const CLEANED_FILE_SUFFIX = ".cleaned";
export const SWAP_FILE_SUFFIX = ".swap";

/** Kafka's filenamePrefixFromOffset: the offset as 20 digits, zero-padded. */
export function filenamePrefixFromOffset(offset: bigint): string {
  if (offset < 0n) throw new RangeError(`a file name offset must be >= 0, got ${offset}`);
  return offset.toString().padStart(20, "0");
}

export function logFile(dir: string, offset: bigint, suffix = ""): string {
  return join(dir, filenamePrefixFromOffset(offset) + LOG_FILE_SUFFIX + suffix);
}

export function offsetIndexFile(dir: string, offset: bigint, suffix = ""): string {
  return join(dir, filenamePrefixFromOffset(offset) + INDEX_FILE_SUFFIX + suffix);
}

export function timeIndexFile(dir: string, offset: bigint, suffix = ""): string {
  return join(dir, filenamePrefixFromOffset(offset) + TIME_INDEX_FILE_SUFFIX + suffix);
}

export function transactionIndexFile(dir: string, offset: bigint, suffix = ""): string {
  return join(dir, filenamePrefixFromOffset(offset) + TXN_INDEX_FILE_SUFFIX + suffix);
}

export function producerSnapshotFile(dir: string, offset: bigint): string {
  return join(dir, filenamePrefixFromOffset(offset) + PRODUCER_SNAPSHOT_FILE_SUFFIX);
}

/**
 * The base offset of a file named `<20 digits><suffix>[.deleted|.cleaned|.swap]`, or undefined when the
 * name is not a segment file name (Kafka's offsetFromFileName, without throwing).
 */
export function offsetFromFileName(name: string): bigint | undefined {
  const m = /^(\d{20})\.[a-z]+(\.(deleted|cleaned|swap))?$/.exec(name);
  return m ? BigInt(m[1]) : undefined;
}

/** The file name with its last suffix removed (`x.log.swap` → `x.log`). */
export function stripLastSuffix(name: string): string {
  const i = name.lastIndexOf(".");
  return i < 0 ? name : name.slice(0, i);
}

export function isLogFile(name: string): boolean {
  return /^\d{20}\.log$/.test(name);
}

export function isIndexFile(name: string): boolean {
  return /^\d{20}\.(index|timeindex|txnindex)$/.test(name);
}
