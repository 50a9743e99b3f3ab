// Log file names: the on-disk naming of a partition directory's files, exactly as Kafka's LogFileUtils.
// A segment's files are named after its base offset as 20 decimal digits, zero-padded
// ("00000000000000000123.log"), followed by a suffix: .log (record batches), .index (offset index),
// .timeindex (time index), .txnindex (aborted transactions), .snapshot (producer state). Files in the
// middle of an operation carry a second suffix: .deleted (scheduled for removal), .cleaned (cleaner output
// not yet swapped in), .swap (cleaner output being swapped in). Invariant: the name alone gives the base
// offset, and base offsets of a partition's segments are unique and sort in name order.

import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type { TopicPartition } from "../common/topic-partition.js";

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

// Partition directory names (Kafka's UnifiedLog.logDirName / logFutureDirName / logDeleteDirName):
// `<topic>-<partition>` is the replica's log; `<topic>-<partition>.<32 hex>-future` the log being built in
// another log dir of the same broker (AlterReplicaLogDirs) that replaces it once caught up;
// `<topic>-<partition>.<32 hex>-delete` a log being deleted.
export const FUTURE_DIR_SUFFIX = "-future";
export const DELETE_DIR_SUFFIX = "-delete";

/** `<topic>-<partition>.<uuid without dashes><suffix>` (Kafka's logDirNameWithSuffix). */
export function logDirNameWithSuffix(tp: TopicPartition, suffix: string): string {
  return `${tp.topic}-${tp.partition}.${randomUUID().replaceAll("-", "")}${suffix}`;
}

/** What a directory in a log dir is: a partition's log, its future log, or a log being deleted. */
export interface ParsedLogDirName {
  readonly tp: TopicPartition;
  readonly kind: "current" | "future" | "delete";
}

/** Parses a partition directory name (Kafka's parseTopicPartitionName); undefined for anything else. */
export function parseLogDirName(name: string): ParsedLogDirName | undefined {
  const m = /^(.+)-(\d+)(?:\.([0-9a-f]{32})(-future|-delete))?$/.exec(name);
  if (!m) return undefined;
  const partition = Number(m[2]);
  if (!Number.isSafeInteger(partition) || partition > 0x7fffffff) return undefined;
  const kind = m[4] === FUTURE_DIR_SUFFIX ? "future" : m[4] === DELETE_DIR_SUFFIX ? "delete" : "current";
  return { tp: { topic: m[1], partition }, kind };
}
