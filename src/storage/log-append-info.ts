// LogAppendInfo: what an append to a partition's log did (Kafka's LogAppendInfo, the fields the broker
// uses), and the shallow analysis every append starts with (Kafka's UnifiedLog.analyzeAndValidateRecords):
// the batches of a produce request or a fetch response located and checked one 61-byte header at a time,
// no record decoded, before anything is written.
//
// Rules (each failure a KafkaError; nothing is appended):
// - every batch is whole and at least a v2 header long (a fetch response may end with a partial batch:
//   dropped, not an error), of magic 2 (magic 0/1: INVALID_RECORD, any other: CORRUPT_MESSAGE), with a
//   valid CRC32C and a lastOffsetDelta >= 0 (else CORRUPT_MESSAGE);
// - a batch larger than max.message.bytes is MESSAGE_TOO_LARGE; batches larger together than
//   segment.bytes are RECORD_LIST_TOO_LARGE.

import { KafkaError } from "../protocol/errors.js";
import {
  BATCH_LENGTH_OFFSET,
  CorruptRecordError,
  isRecordBatchCrcValid,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  MIN_BATCH_LENGTH,
  RECORD_BATCH_MAGIC,
  RECORD_BATCH_OVERHEAD,
} from "../protocol/records/index.js";
import type { LogConfig } from "./log-config.js";
import type { BatchMetadata } from "./producer-state/batch-metadata.js";

/** What an append did (Kafka's LogAppendInfo, the fields the broker uses). */
export interface LogAppendInfo {
  /** First offset of the appended batches (-1 when nothing was appended). */
  firstOffset: bigint;
  lastOffset: bigint;
  /** Max timestamp of the appended batches (the append time with LogAppendTime; -1 when none). */
  maxTimestamp: bigint;
  /** Offset recorded for maxTimestamp (the last offset of the batch carrying it). */
  shallowOffsetOfMaxTimestamp: bigint;
  /** The log append time when message.timestamp.type=LogAppendTime, else -1. */
  logAppendTime: bigint;
  logStartOffset: bigint;
  numBatches: number;
  validBytes: number;
  /** partitionLeaderEpoch of the last batch. */
  lastLeaderEpoch: number;
}

/** The answer to an append that wrote nothing (Kafka's LogAppendInfo.UNKNOWN_LOG_APPEND_INFO). */
export function emptyAppendInfo(logStartOffset: bigint): LogAppendInfo {
  return {
    firstOffset: -1n,
    lastOffset: -1n,
    maxTimestamp: -1n,
    shallowOffsetOfMaxTimestamp: -1n,
    logAppendTime: -1n,
    logStartOffset,
    numBatches: 0,
    validBytes: 0,
    lastLeaderEpoch: -1,
  };
}

/**
 * The answer to a producer's retry of a batch already in the log (`duplicate`, from the producer state):
 * the offsets and timestamp it was written with; nothing is appended again.
 */
export function duplicateAppendInfo(
  duplicate: BatchMetadata,
  logAppendTime: bigint,
  logStartOffset: bigint,
  leaderEpoch: number,
): LogAppendInfo {
  return {
    firstOffset: duplicate.firstOffset,
    lastOffset: duplicate.lastOffset,
    maxTimestamp: duplicate.timestamp,
    shallowOffsetOfMaxTimestamp: duplicate.lastOffset,
    logAppendTime,
    logStartOffset,
    numBatches: 0,
    validBytes: 0,
    lastLeaderEpoch: leaderEpoch,
  };
}

/** A batch located in the records to append: its position and size in bytes. */
export interface ValidatedBatch {
  position: number;
  size: number;
}

/**
 * Shallow validation of every batch (Kafka's analyzeAndValidateRecords without per-record work):
 * sizes, magic 2, CRC32C, max.message.bytes, segment.bytes. Throws KafkaError.
 */
export function analyzeAndValidateRecords(
  records: Buffer,
  config: Pick<LogConfig, "maxMessageBytes" | "segmentBytes">,
  allowIncompleteTail = false,
): ValidatedBatch[] {
  const out: ValidatedBatch[] = [];
  let pos = 0;
  const len = records.length;
  while (pos < len) {
    const remaining = len - pos;
    if (remaining < LOG_OVERHEAD) {
      if (allowIncompleteTail) break;
      throw new KafkaError("CORRUPT_MESSAGE", `a partial record batch of ${remaining} bytes at ${pos}`);
    }
    const batchLength = records.readInt32BE(pos + BATCH_LENGTH_OFFSET);
    const size = LOG_OVERHEAD + batchLength;
    if (allowIncompleteTail && batchLength >= MIN_BATCH_LENGTH && size > remaining) break;
    if (batchLength < MIN_BATCH_LENGTH || size > remaining) {
      throw new KafkaError(
        "CORRUPT_MESSAGE",
        `record batch at ${pos} declares ${size} bytes, ${remaining} present (minimum ${RECORD_BATCH_OVERHEAD})`,
      );
    }
    if (size > config.maxMessageBytes) {
      throw new KafkaError(
        "MESSAGE_TOO_LARGE",
        `the record batch of ${size} bytes is larger than max.message.bytes (${config.maxMessageBytes})`,
      );
    }
    const magic = records.readInt8(pos + MAGIC_OFFSET);
    if (magic !== RECORD_BATCH_MAGIC) {
      throw new KafkaError(
        // Kafka: magic 0/1 in a v3+ produce is an InvalidRecordException; an unknown magic is corrupt.
        magic === 0 || magic === 1 ? "INVALID_RECORD" : "CORRUPT_MESSAGE",
        `record batch at ${pos} has magic ${magic}; only magic 2 record batches are stored`,
      );
    }
    let valid: boolean;
    try {
      valid = isRecordBatchCrcValid(records, pos);
    } catch (e) {
      if (e instanceof CorruptRecordError) throw new KafkaError("CORRUPT_MESSAGE", e.message);
      throw e;
    }
    if (!valid) throw new KafkaError("CORRUPT_MESSAGE", `record batch at ${pos} fails its CRC32C check`);
    if (records.readInt32BE(pos + LAST_OFFSET_DELTA_OFFSET) < 0) {
      throw new KafkaError("CORRUPT_MESSAGE", `record batch at ${pos} has a negative lastOffsetDelta`);
    }
    out.push({ position: pos, size });
    pos += size;
  }
  if (len > config.segmentBytes) {
    throw new KafkaError(
      "RECORD_LIST_TOO_LARGE",
      `the record batches of ${len} bytes exceed segment.bytes (${config.segmentBytes})`,
    );
  }
  return out;
}
