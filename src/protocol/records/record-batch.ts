// RecordBatch (magic v2) header: its 61-byte layout, the attribute bits, reading a header from bytes
// without touching the records, the CRC32C check, and the in-place updates a broker makes on the produce
// path (base offset, partition leader epoch, LogAppendTime). Kafka's DefaultRecordBatch, as bytes.
//
//   baseOffset int64 | batchLength int32 | partitionLeaderEpoch int32 | magic int8 | crc uint32 |
//   attributes int16 | lastOffsetDelta int32 | baseTimestamp int64 | maxTimestamp int64 |
//   producerId int64 | producerEpoch int16 | baseSequence int32 | recordsCount int32 | records...
//
// The CRC32C covers the bytes from attributes to the end of the batch, so baseOffset, batchLength and
// partitionLeaderEpoch can be rewritten without recomputing it. Every function here is O(1) in the number
// of records except the CRC, which is one pass of native crc32c over the batch bytes.

import { CompressionType } from "./compression.js";
import { CorruptRecordError } from "./corrupt-record-error.js";
import { crc32c } from "./crc32c.js";

export const RECORD_BATCH_MAGIC = 2;

// Field positions relative to the start of the batch (Kafka's DefaultRecordBatch constants).
export const BASE_OFFSET_OFFSET = 0;
export const BATCH_LENGTH_OFFSET = 8;
export const PARTITION_LEADER_EPOCH_OFFSET = 12;
export const MAGIC_OFFSET = 16;
export const CRC_OFFSET = 17;
export const ATTRIBUTES_OFFSET = 21;
export const LAST_OFFSET_DELTA_OFFSET = 23;
export const BASE_TIMESTAMP_OFFSET = 27;
export const MAX_TIMESTAMP_OFFSET = 35;
export const PRODUCER_ID_OFFSET = 43;
export const PRODUCER_EPOCH_OFFSET = 51;
export const BASE_SEQUENCE_OFFSET = 53;
export const RECORDS_COUNT_OFFSET = 57;
export const RECORDS_OFFSET = 61;

/** baseOffset + batchLength: the bytes in front of what batchLength counts (Kafka's LOG_OVERHEAD). */
export const LOG_OVERHEAD = 12;
/** Size of a v2 batch header, i.e. of a batch with no records (Kafka's RECORD_BATCH_OVERHEAD). */
export const RECORD_BATCH_OVERHEAD = 61;
/** Smallest legal batchLength for magic v2. */
export const MIN_BATCH_LENGTH = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD;

// Attribute bits.
export const COMPRESSION_CODEC_MASK = 0x07;
export const TIMESTAMP_TYPE_MASK = 0x08;
export const TRANSACTIONAL_FLAG_MASK = 0x10;
export const CONTROL_FLAG_MASK = 0x20;
export const DELETE_HORIZON_FLAG_MASK = 0x40;

export const TimestampType = {
  /** Legacy magic v0 messages carry no timestamp. */
  NoTimestampType: -1,
  CreateTime: 0,
  LogAppendTime: 1,
} as const;
export type TimestampType = (typeof TimestampType)[keyof typeof TimestampType];

/** Kafka's names, as printed by DumpLogSegments. */
export function timestampTypeName(t: TimestampType): string {
  return t === TimestampType.LogAppendTime
    ? "LogAppendTime"
    : t === TimestampType.CreateTime
      ? "CreateTime"
      : "NoTimestampType";
}

export const NO_PRODUCER_ID = -1n;
export const NO_PRODUCER_EPOCH = -1;
export const NO_SEQUENCE = -1;
export const NO_PARTITION_LEADER_EPOCH = -1;
export const NO_TIMESTAMP = -1n;

/**
 * A parsed batch header. For magic v2 every field is read from the 61 header bytes; for a legacy
 * (magic 0/1) entry decodeRecordBatches fills the same shape the way Kafka's AbstractLegacyRecordBatch
 * does (no producer id, epoch or sequence; partitionLeaderEpoch -1).
 */
export interface RecordBatchHeader {
  baseOffset: bigint;
  /** Bytes after the batchLength field; the whole batch is LOG_OVERHEAD + batchLength bytes. */
  batchLength: number;
  partitionLeaderEpoch: number;
  magic: number;
  crc: number;
  attributes: number;
  lastOffsetDelta: number;
  baseTimestamp: bigint;
  maxTimestamp: bigint;
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  recordsCount: number;
  // Derived from attributes, for readability at call sites.
  compression: CompressionType;
  timestampType: TimestampType;
  isTransactional: boolean;
  isControl: boolean;
  hasDeleteHorizonMs: boolean;
}

export function compressionOf(attributes: number): CompressionType {
  return (attributes & COMPRESSION_CODEC_MASK) as CompressionType;
}

export function timestampTypeOf(attributes: number): TimestampType {
  return attributes & TIMESTAMP_TYPE_MASK ? TimestampType.LogAppendTime : TimestampType.CreateTime;
}

/** Attributes int16 for a v2 batch. */
export function batchAttributes(options: {
  compression?: CompressionType;
  timestampType?: TimestampType;
  isTransactional?: boolean;
  isControl?: boolean;
  hasDeleteHorizonMs?: boolean;
}): number {
  let a = (options.compression ?? CompressionType.None) & COMPRESSION_CODEC_MASK;
  if (options.timestampType === TimestampType.LogAppendTime) a |= TIMESTAMP_TYPE_MASK;
  if (options.isTransactional) a |= TRANSACTIONAL_FLAG_MASK;
  if (options.isControl) a |= CONTROL_FLAG_MASK;
  if (options.hasDeleteHorizonMs) a |= DELETE_HORIZON_FLAG_MASK;
  return a;
}

/** Total bytes of the batch that starts at `offset` (LOG_OVERHEAD + batchLength); needs 12 bytes present. */
export function batchSizeAt(buf: Buffer, offset = 0): number {
  return LOG_OVERHEAD + buf.readInt32BE(offset + BATCH_LENGTH_OFFSET);
}

/**
 * Reads the v2 header of the batch at `offset` without decoding its records. Checks that the 61 header
 * bytes are present, the magic is 2 and batchLength is at least the header; it does not check the CRC
 * or that the whole batch is present (see RecordBatchIterator for that).
 */
export function readRecordBatchHeader(buf: Buffer, offset = 0): RecordBatchHeader {
  if (offset < 0 || offset + RECORD_BATCH_OVERHEAD > buf.length) {
    throw new CorruptRecordError(
      `record batch header at ${offset} needs ${RECORD_BATCH_OVERHEAD} bytes, ${Math.max(0, buf.length - offset)} present`,
    );
  }
  const magic = buf.readInt8(offset + MAGIC_OFFSET);
  if (magic !== RECORD_BATCH_MAGIC) {
    throw new CorruptRecordError(
      `record batch at ${offset} has magic ${magic}, expected ${RECORD_BATCH_MAGIC}`,
    );
  }
  const batchLength = buf.readInt32BE(offset + BATCH_LENGTH_OFFSET);
  if (batchLength < MIN_BATCH_LENGTH) {
    throw new CorruptRecordError(
      `record batch at ${offset} has batchLength ${batchLength}, smaller than the ${MIN_BATCH_LENGTH}-byte minimum`,
    );
  }
  return parseRecordBatchHeader(buf, offset);
}

/**
 * The v2 header fields at `offset`, with no checks beyond the 61 bytes being there (the caller ensures
 * it): for tools that must show a damaged header as it is (dump-log). Use readRecordBatchHeader elsewhere.
 */
export function parseRecordBatchHeader(buf: Buffer, offset = 0): RecordBatchHeader {
  const attributes = buf.readInt16BE(offset + ATTRIBUTES_OFFSET);
  return {
    baseOffset: buf.readBigInt64BE(offset + BASE_OFFSET_OFFSET),
    batchLength: buf.readInt32BE(offset + BATCH_LENGTH_OFFSET),
    partitionLeaderEpoch: buf.readInt32BE(offset + PARTITION_LEADER_EPOCH_OFFSET),
    magic: buf.readInt8(offset + MAGIC_OFFSET),
    crc: buf.readUInt32BE(offset + CRC_OFFSET),
    attributes,
    lastOffsetDelta: buf.readInt32BE(offset + LAST_OFFSET_DELTA_OFFSET),
    baseTimestamp: buf.readBigInt64BE(offset + BASE_TIMESTAMP_OFFSET),
    maxTimestamp: buf.readBigInt64BE(offset + MAX_TIMESTAMP_OFFSET),
    producerId: buf.readBigInt64BE(offset + PRODUCER_ID_OFFSET),
    producerEpoch: buf.readInt16BE(offset + PRODUCER_EPOCH_OFFSET),
    baseSequence: buf.readInt32BE(offset + BASE_SEQUENCE_OFFSET),
    recordsCount: buf.readInt32BE(offset + RECORDS_COUNT_OFFSET),
    compression: compressionOf(attributes),
    timestampType: timestampTypeOf(attributes),
    isTransactional: (attributes & TRANSACTIONAL_FLAG_MASK) !== 0,
    isControl: (attributes & CONTROL_FLAG_MASK) !== 0,
    hasDeleteHorizonMs: (attributes & DELETE_HORIZON_FLAG_MASK) !== 0,
  };
}

/** Fields written into a v2 header by writeRecordBatchHeader. */
export type RecordBatchHeaderFields = Omit<
  RecordBatchHeader,
  "magic" | "crc" | "compression" | "timestampType" | "isTransactional" | "isControl" | "hasDeleteHorizonMs"
>;

/**
 * Writes the 61 header bytes at `offset` (magic 2) and the CRC32C over attributes..end, so the records
 * must already be in place: buf must hold LOG_OVERHEAD + batchLength bytes from `offset`.
 */
export function writeRecordBatchHeader(buf: Buffer, offset: number, h: RecordBatchHeaderFields): void {
  buf.writeBigInt64BE(h.baseOffset, offset + BASE_OFFSET_OFFSET);
  buf.writeInt32BE(h.batchLength, offset + BATCH_LENGTH_OFFSET);
  buf.writeInt32BE(h.partitionLeaderEpoch, offset + PARTITION_LEADER_EPOCH_OFFSET);
  buf.writeInt8(RECORD_BATCH_MAGIC, offset + MAGIC_OFFSET);
  buf.writeInt16BE(h.attributes, offset + ATTRIBUTES_OFFSET);
  buf.writeInt32BE(h.lastOffsetDelta, offset + LAST_OFFSET_DELTA_OFFSET);
  buf.writeBigInt64BE(h.baseTimestamp, offset + BASE_TIMESTAMP_OFFSET);
  buf.writeBigInt64BE(h.maxTimestamp, offset + MAX_TIMESTAMP_OFFSET);
  buf.writeBigInt64BE(h.producerId, offset + PRODUCER_ID_OFFSET);
  buf.writeInt16BE(h.producerEpoch, offset + PRODUCER_EPOCH_OFFSET);
  buf.writeInt32BE(h.baseSequence, offset + BASE_SEQUENCE_OFFSET);
  buf.writeInt32BE(h.recordsCount, offset + RECORDS_COUNT_OFFSET);
  writeRecordBatchCrc(buf, offset);
}

function checkedEnd(buf: Buffer, offset: number): number {
  if (offset < 0 || offset + RECORD_BATCH_OVERHEAD > buf.length) {
    throw new CorruptRecordError(`no complete record batch header at ${offset}`);
  }
  const end = offset + batchSizeAt(buf, offset);
  if (end < offset + RECORD_BATCH_OVERHEAD || end > buf.length) {
    throw new CorruptRecordError(
      `record batch at ${offset} of ${end - offset} bytes does not fit the ${buf.length - offset} bytes present`,
    );
  }
  return end;
}

/** CRC32C of the batch at `offset`, over attributes..end of batch. The batch must be complete. */
export function computeRecordBatchCrc(buf: Buffer, offset = 0): number {
  const end = checkedEnd(buf, offset);
  return crc32c(buf.subarray(offset + ATTRIBUTES_OFFSET, end)) >>> 0;
}

/** True when the stored CRC matches the batch bytes (Kafka's DefaultRecordBatch.isValid). */
export function isRecordBatchCrcValid(buf: Buffer, offset = 0): boolean {
  return computeRecordBatchCrc(buf, offset) === buf.readUInt32BE(offset + CRC_OFFSET);
}

/** Recomputes and stores the CRC of the batch at `offset`. */
export function writeRecordBatchCrc(buf: Buffer, offset = 0): void {
  buf.writeUInt32BE(computeRecordBatchCrc(buf, offset), offset + CRC_OFFSET);
}

// In-place updates used by the broker when it appends a batch to the log. None of them looks at records.

/** Sets baseOffset (offset assignment). Outside the CRC: no recompute. */
export function setBaseOffset(buf: Buffer, offset: number, baseOffset: bigint): void {
  buf.writeBigInt64BE(baseOffset, offset + BASE_OFFSET_OFFSET);
}

/** Sets partitionLeaderEpoch (stamped by the leader). Outside the CRC: no recompute. */
export function setPartitionLeaderEpoch(buf: Buffer, offset: number, epoch: number): void {
  buf.writeInt32BE(epoch, offset + PARTITION_LEADER_EPOCH_OFFSET);
}

/**
 * Sets the timestamp type bit and maxTimestamp, and recomputes the CRC when anything changed (Kafka's
 * DefaultRecordBatch.setMaxTimestamp). With LogAppendTime, readers give every record maxTimestamp.
 */
export function setMaxTimestamp(
  buf: Buffer,
  offset: number,
  timestampType: TimestampType,
  maxTimestamp: bigint,
): void {
  checkedEnd(buf, offset);
  const attrs = buf.readInt16BE(offset + ATTRIBUTES_OFFSET);
  const next =
    timestampType === TimestampType.LogAppendTime
      ? attrs | TIMESTAMP_TYPE_MASK
      : attrs & ~TIMESTAMP_TYPE_MASK;
  if (next === attrs && buf.readBigInt64BE(offset + MAX_TIMESTAMP_OFFSET) === maxTimestamp) return;
  buf.writeInt16BE(next, offset + ATTRIBUTES_OFFSET);
  buf.writeBigInt64BE(maxTimestamp, offset + MAX_TIMESTAMP_OFFSET);
  writeRecordBatchCrc(buf, offset);
}

/** Offset of the last record: baseOffset + lastOffsetDelta. */
export function lastOffsetOf(header: RecordBatchHeader): bigint {
  return header.baseOffset + BigInt(header.lastOffsetDelta);
}

/** Total bytes of the batch (LOG_OVERHEAD + batchLength). */
export function sizeInBytesOf(header: RecordBatchHeader): number {
  return LOG_OVERHEAD + header.batchLength;
}
