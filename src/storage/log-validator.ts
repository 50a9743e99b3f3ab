// LogValidator: the record-level checks and rewrites a leader applies to a producer's batches before they
// are appended, Kafka's LogValidator (validateMessagesAndAssignOffsets). It owns:
// - per-record timestamp bounds for CreateTime topics (message.timestamp.before.max.ms / after.max.ms, or
//   the deprecated message.timestamp.difference.max.ms while those are unset: KIP-937) → INVALID_TIMESTAMP,
//   and a producer-set LogAppendTime flag → INVALID_TIMESTAMP;
// - keys on compacted topics → INVALID_RECORD "Compacted topic cannot accept message without key";
// - recompression when the topic's compression.type is a codec (or `uncompressed`) other than the batch's,
//   and the rebuild Kafka does when a compressed batch's inner offsets are not 0, 1, 2, … (both through
//   Kafka's buildRecordsAndAssignOffsets: one new batch keeping the producer id, epoch, sequence and
//   transactional flag);
// - for CreateTime batches whose records were walked, the batch maxTimestamp set to the records' maximum.
// Errors are record-level (batch_index + message, ProduceResponse v8+) as Kafka's RecordValidationException.
//
// Hot path: with the default timestamp bounds, a non-compacted topic and no recompression, nothing is
// decoded: the batch is returned as the same bytes (offsets, leader epoch and LogAppendTime are stamped by
// UnifiedLog.appendAsLeader, all outside the records). Otherwise uncompressed records are walked reading
// only their length, timestamp delta, offset delta and key length; compressed ones are decompressed first.

import { KafkaError } from "../protocol/errors.js";
import { Reader } from "../protocol/primitives/reader.js";
import {
  ATTRIBUTES_OFFSET,
  batchSizeAt,
  buildRecordBatch,
  CompressionType,
  CorruptRecordError,
  compressionOf,
  compressionTypeForName,
  DEFAULT_MAX_DECOMPRESSED_BYTES,
  decodeBatchRecords,
  decompress,
  isRecordBatchCrcValid,
  LOG_OVERHEAD,
  NO_TIMESTAMP,
  RECORD_BATCH_OVERHEAD,
  RECORDS_OFFSET,
  type RecordBatchHeader,
  readRecordBatchHeader,
  setMaxTimestamp,
  TIMESTAMP_TYPE_MASK,
  TimestampType,
} from "../protocol/records/index.js";
import {
  isCompacted,
  LONG_MAX,
  type LogConfig,
  messageTimestampAfterMaxMsOf,
  messageTimestampBeforeMaxMsOf,
} from "./log-config.js";

/** One rejected record (Kafka's ProduceResponse.RecordError). */
export interface RecordError {
  readonly batchIndex: number;
  readonly message: string | null;
}

/**
 * A produce rejected because of individual records (Kafka's RecordValidationException): INVALID_TIMESTAMP
 * when any record has a bad timestamp, else INVALID_RECORD.
 */
export class RecordValidationError extends KafkaError {
  constructor(
    errorName: "INVALID_TIMESTAMP" | "INVALID_RECORD",
    message: string,
    readonly recordErrors: readonly RecordError[],
  ) {
    super(errorName, message);
  }
}

/** What the leader validates against. */
export interface LogValidationContext {
  readonly config: LogConfig;
  /** The broker's clock now (ms), the reference of the timestamp bounds. */
  readonly nowMs: bigint;
  /** "<topic>-<partition>", for messages. */
  readonly topicPartition: string;
}

export interface LogValidationResult {
  /** The batches to append: the input itself, or rebuilt batches (base offset 0, to be assigned). */
  readonly records: Buffer;
  /** True when the batches were rebuilt (recompressed or renumbered); sizes may have changed. */
  readonly rebuilt: boolean;
}

/** The codec a batch of `source` compression is stored with (Kafka's BrokerCompressionType.targetCompression). */
export function targetCompression(config: LogConfig, source: CompressionType): CompressionType {
  const t = config.compressionType;
  if (t === "producer") return source;
  if (t === "uncompressed") return CompressionType.None;
  return compressionTypeForName(t) ?? source;
}

/** Whether appends to a topic with this config must look at records (the hot path does not). */
export function needsRecordWalk(config: LogConfig): boolean {
  return (
    isCompacted(config) ||
    (config.messageTimestampType === "CreateTime" &&
      (messageTimestampBeforeMaxMsOf(config) !== LONG_MAX ||
        messageTimestampAfterMaxMsOf(config) !== LONG_MAX))
  );
}

interface WalkedRecord {
  /** Relative offset (offsetDelta). */
  offsetDelta: number;
  timestamp: bigint;
  hasKey: boolean;
}

function invalidRecord(message: string): KafkaError {
  return new KafkaError("INVALID_RECORD", message);
}

/** Reads each record's offset delta, timestamp and whether it has a key, skipping keys, values and headers. */
function walkRecords(batch: Buffer, header: RecordBatchHeader): WalkedRecord[] {
  const payload = batch.subarray(RECORDS_OFFSET, LOG_OVERHEAD + header.batchLength);
  let data: Buffer;
  try {
    data = decompress(header.compression, payload, DEFAULT_MAX_DECOMPRESSED_BYTES);
  } catch (e) {
    if (e instanceof CorruptRecordError) throw new KafkaError("CORRUPT_MESSAGE", e.message);
    throw e;
  }
  const out: WalkedRecord[] = [];
  const r = new Reader(data, 0, data.length);
  const logAppend = header.timestampType === TimestampType.LogAppendTime;
  try {
    for (let i = 0; i < header.recordsCount; i++) {
      const size = r.varint();
      if (size < 6 || size > r.remaining)
        throw invalidRecord(`Invalid record size ${size} of record ${i}: ${r.remaining} bytes remain`);
      const end = r.pos + size;
      const body = new Reader(data, r.pos, end);
      body.int8();
      const timestampDelta = body.varlong();
      const offsetDelta = body.varint();
      const keyLength = body.varint();
      r.pos = end;
      out.push({
        offsetDelta,
        timestamp: logAppend ? header.maxTimestamp : header.baseTimestamp + timestampDelta,
        hasKey: keyLength >= 0,
      });
    }
  } catch (e) {
    if (e instanceof KafkaError) throw e;
    throw invalidRecord(`Found invalid record in a batch: ${(e as Error).message}`);
  }
  if (r.remaining !== 0)
    throw invalidRecord(`Found ${r.remaining} bytes after the ${header.recordsCount} records of the batch`);
  return out;
}

/** Kafka's validateTimestamp for one record; undefined when it is fine. */
function timestampError(
  record: WalkedRecord,
  header: RecordBatchHeader,
  ctx: LogValidationContext,
  before: bigint,
  after: bigint,
  offset: bigint,
): string | undefined {
  const createTime = ctx.config.messageTimestampType === "CreateTime";
  if (createTime && record.timestamp !== NO_TIMESTAMP) {
    const diff = ctx.nowMs - record.timestamp;
    if (diff > before || -diff > after) {
      return `Timestamp ${record.timestamp} of message with offset ${offset} is out of range. The timestamp should be within [${ctx.nowMs - before}, ${ctx.nowMs + after}]`;
    }
  } else if (header.timestampType === TimestampType.LogAppendTime) {
    return `Invalid timestamp type in message with offset ${offset}. Producer should not set timestamp type to LogAppendTime.`;
  }
  return undefined;
}

/** Kafka's processRecordErrors: the partition error and its message. */
function recordValidationError(errors: RecordError[], anyTimestamp: boolean): RecordValidationError {
  if (anyTimestamp) {
    return new RecordValidationError(
      "INVALID_TIMESTAMP",
      "One or more records have been rejected due to invalid timestamp",
      errors,
    );
  }
  const shown = errors
    .slice(0, 3)
    .map((e) => `RecordError(batchIndex=${e.batchIndex}, message='${e.message}')`)
    .join(", ");
  return new RecordValidationError(
    "INVALID_RECORD",
    `One or more records have been rejected due to ${errors.length} record errors in total, and only showing the first three errors at most: [${shown}]`,
    errors,
  );
}

/**
 * Validates a producer's batches for the leader (Kafka's LogValidator.validateMessagesAndAssignOffsets,
 * offset assignment left to UnifiedLog.appendAsLeader). `records` holds whole magic-2 batches (the Produce
 * handler has checked their headers). Throws RecordValidationError for record errors and KafkaError
 * (CORRUPT_MESSAGE, INVALID_RECORD, MESSAGE_TOO_LARGE) for a bad batch.
 */
export function validateRecords(records: Buffer, ctx: LogValidationContext): LogValidationResult {
  const config = ctx.config;
  // Header pass, reading only the attributes: is there anything to do beyond the hot path?
  let work = needsRecordWalk(config);
  const batches: Array<{ pos: number; size: number }> = [];
  for (let pos = 0; pos + RECORD_BATCH_OVERHEAD <= records.length; ) {
    const size = batchSizeAt(records, pos);
    // A malformed batch is reported by the log's shallow validation (UnifiedLog.appendAsLeader).
    if (size < RECORD_BATCH_OVERHEAD || size > records.length - pos) return { records, rebuilt: false };
    const attributes = records.readInt16BE(pos + ATTRIBUTES_OFFSET);
    const source = compressionOf(attributes);
    if (targetCompression(config, source) !== source || (attributes & TIMESTAMP_TYPE_MASK) !== 0) work = true;
    batches.push({ pos, size });
    pos += size;
  }
  if (!work) return { records, rebuilt: false };

  const before = messageTimestampBeforeMaxMsOf(config);
  const after = messageTimestampAfterMaxMsOf(config);
  const compacted = isCompacted(config);
  const createTime = config.messageTimestampType === "CreateTime";
  const checkTimestamps = createTime && (before !== LONG_MAX || after !== LONG_MAX);
  const out: Buffer[] = [];
  let rebuilt = false;
  for (const { pos, size } of batches) {
    if (size > config.maxMessageBytes) {
      throw new KafkaError(
        "MESSAGE_TOO_LARGE",
        `The record batch of ${size} bytes is larger than max.message.bytes (${config.maxMessageBytes}) in topic partition ${ctx.topicPartition}`,
      );
    }
    const batch = records.subarray(pos, pos + size);
    let header: RecordBatchHeader;
    let crcValid: boolean;
    try {
      header = readRecordBatchHeader(batch, 0);
      crcValid = isRecordBatchCrcValid(batch, 0);
    } catch (e) {
      if (e instanceof CorruptRecordError) throw new KafkaError("CORRUPT_MESSAGE", e.message);
      throw e;
    }
    if (!crcValid) {
      throw new KafkaError(
        "CORRUPT_MESSAGE",
        `Record batch is corrupt (the CRC32C does not match) in topic partition ${ctx.topicPartition}`,
      );
    }
    const target = targetCompression(config, header.compression);
    const walked = walkRecords(batch, header);
    const errors: RecordError[] = [];
    let anyTimestamp = false;
    let maxTimestamp = NO_TIMESTAMP;
    let rebuild = target !== header.compression;
    for (let i = 0; i < walked.length; i++) {
      const rec = walked[i];
      // Kafka rebuilds (rather than rejects) a compressed batch whose inner offsets are not 0, 1, 2, ….
      if (header.compression !== CompressionType.None && rec.offsetDelta !== i) rebuild = true;
      let message: string | undefined;
      if (compacted && !rec.hasKey) {
        message = `Compacted topic cannot accept message without key in topic partition ${ctx.topicPartition}.`;
      } else if (checkTimestamps || header.timestampType === TimestampType.LogAppendTime) {
        const offset = header.baseOffset + BigInt(rec.offsetDelta);
        message = timestampError(rec, header, ctx, before, after, offset);
        if (message !== undefined) anyTimestamp = true;
      }
      if (message !== undefined) errors.push({ batchIndex: i, message });
      if (rec.timestamp > maxTimestamp) maxTimestamp = rec.timestamp;
    }
    if (errors.length > 0) throw recordValidationError(errors, anyTimestamp);
    if (rebuild) {
      out.push(rebuildBatch(batch, header, target));
      rebuilt = true;
      continue;
    }
    // Kafka sets a CreateTime batch's maxTimestamp from its records (LogAppendTime is stamped at append).
    if (
      createTime &&
      header.timestampType === TimestampType.CreateTime &&
      header.maxTimestamp !== maxTimestamp
    )
      setMaxTimestamp(batch, 0, TimestampType.CreateTime, maxTimestamp);
    out.push(batch);
  }
  if (!rebuilt) return { records, rebuilt: false };
  return { records: out.length === 1 ? out[0] : Buffer.concat(out), rebuilt: true };
}

/**
 * Kafka's buildRecordsAndAssignOffsets for one batch: the records, renumbered 0..n-1, in one new batch of
 * the target codec with the producer id, epoch, base sequence and transactional flag kept.
 */
function rebuildBatch(batch: Buffer, header: RecordBatchHeader, target: CompressionType): Buffer {
  let decoded: ReturnType<typeof decodeBatchRecords>;
  try {
    decoded = decodeBatchRecords(batch);
  } catch (e) {
    if (e instanceof CorruptRecordError) throw new KafkaError("CORRUPT_MESSAGE", e.message);
    throw e;
  }
  return buildRecordBatch({
    records: decoded.map((r, i) => ({
      key: r.key,
      value: r.value,
      headers: r.headers,
      timestamp: r.timestamp,
      offsetDelta: i,
    })),
    compression: target,
    baseOffset: 0n,
    partitionLeaderEpoch: header.partitionLeaderEpoch,
    producerId: header.producerId,
    producerEpoch: header.producerEpoch,
    baseSequence: header.baseSequence,
    isTransactional: header.isTransactional,
    timestampType: TimestampType.CreateTime,
  });
}
