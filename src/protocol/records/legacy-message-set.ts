// Legacy message sets (magic 0 and 1, Kafka before 0.11): decoding, plus a builder for tests. Each entry
// is one message (Kafka's LegacyRecord):
//
//   offset int64 | size int32 | crc uint32 | magic int8 | attributes int8 | [timestamp int64, magic 1] |
//   key bytes (int32 length, -1 = null) | value bytes (int32 length, -1 = null)
//
// The crc is IEEE CRC32 over magic..end. Attributes bits 0-2 are the codec, bit 3 (magic 1) the timestamp
// type. A compressed entry is a wrapper whose value is a compressed inner message set; with magic 1 the
// inner offsets are relative (KIP-31): absolute = wrapperOffset - lastInnerOffset + innerOffset, and a
// LogAppendTime wrapper gives every inner message its timestamp. A decoded entry is presented like a v2
// batch (Kafka's AbstractLegacyRecordBatch): no producer id, epoch or sequence; partitionLeaderEpoch -1.

import { crc32 } from "@node-rs/crc32";
import { CompressionType, compress, DEFAULT_MAX_DECOMPRESSED_BYTES, decompress } from "./compression.js";
import { CorruptRecordError } from "./corrupt-record-error.js";
import type { DecodedRecord } from "./record.js";
import {
  COMPRESSION_CODEC_MASK,
  compressionOf,
  LOG_OVERHEAD,
  NO_PARTITION_LEADER_EPOCH,
  NO_PRODUCER_EPOCH,
  NO_PRODUCER_ID,
  NO_SEQUENCE,
  NO_TIMESTAMP,
  type RecordBatchHeader,
  TIMESTAMP_TYPE_MASK,
  TimestampType,
} from "./record-batch.js";
import { LEGACY_RECORD_OVERHEAD_V0, LEGACY_RECORD_OVERHEAD_V1 } from "./record-batch-iterator.js";
import { xxhash32 } from "./xxhash32.js";

export const LEGACY_MAGIC_V0 = 0;
export const LEGACY_MAGIC_V1 = 1;

/** One legacy message as stored (offset as written: relative inside a magic 1 wrapper). */
export interface LegacyMessage {
  offset: bigint;
  crc: number;
  magic: number;
  attributes: number;
  /** NO_TIMESTAMP (-1) for magic 0. */
  timestamp: bigint;
  key: Buffer | null;
  value: Buffer | null;
}

function invalid(message: string): CorruptRecordError {
  return new CorruptRecordError(message, "INVALID_RECORD");
}

/**
 * Reads the complete entry at `position` (its size field must fit inside `end`); checks the CRC when
 * asked and that key and value fill the message exactly. Returns the message and the entry's size.
 */
export function readLegacyMessage(
  buf: Buffer,
  position: number,
  verifyCrc = true,
  end = buf.length,
): { message: LegacyMessage; size: number } {
  if (end - position < LOG_OVERHEAD) throw new CorruptRecordError(`truncated message at ${position}`);
  const length = buf.readInt32BE(position + 8);
  const size = LOG_OVERHEAD + length;
  if (length < LEGACY_RECORD_OVERHEAD_V0 || size > end - position) {
    throw new CorruptRecordError(
      `message at ${position} has size ${length}, ${end - position - LOG_OVERHEAD} bytes present`,
    );
  }
  const msgEnd = position + size;
  const crc = buf.readUInt32BE(position + 12);
  const magic = buf.readInt8(position + 16);
  if (magic !== LEGACY_MAGIC_V0 && magic !== LEGACY_MAGIC_V1) {
    throw new CorruptRecordError(`message at ${position} has magic ${magic}, expected 0 or 1`);
  }
  if (magic === LEGACY_MAGIC_V1 && length < LEGACY_RECORD_OVERHEAD_V1) {
    throw new CorruptRecordError(
      `magic 1 message at ${position} has size ${length} < ${LEGACY_RECORD_OVERHEAD_V1}`,
    );
  }
  if (verifyCrc) {
    const actual = crc32(buf.subarray(position + 16, msgEnd)) >>> 0;
    if (actual !== crc) {
      throw new CorruptRecordError(
        `message at ${position} is corrupt (stored crc = ${crc}, computed crc = ${actual})`,
      );
    }
  }
  const attributes = buf.readInt8(position + 17);
  let p = position + 18;
  let timestamp = NO_TIMESTAMP;
  if (magic === LEGACY_MAGIC_V1) {
    timestamp = buf.readBigInt64BE(p);
    p += 8;
  }
  const readBytes = (what: string): Buffer | null => {
    if (msgEnd - p < 4) throw invalid(`message at ${position}: truncated ${what} length`);
    const len = buf.readInt32BE(p);
    p += 4;
    if (len < 0) return null;
    if (len > msgEnd - p)
      throw invalid(`message at ${position}: ${what} of ${len} bytes exceeds the message`);
    const b = buf.subarray(p, p + len);
    p += len;
    return b;
  };
  const key = readBytes("key");
  const value = readBytes("value");
  if (p !== msgEnd) throw invalid(`message at ${position}: ${msgEnd - p} bytes after the value`);
  return {
    message: { offset: buf.readBigInt64BE(position), crc, magic, attributes, timestamp, key, value },
    size,
  };
}

export interface LegacyDecodeOptions {
  maxDecompressedBytes?: number;
  verifyCrc?: boolean;
}

/** Decodes the legacy entry at `position` (shallow message, or wrapper plus inner messages). */
export function decodeLegacyEntry(
  buf: Buffer,
  position: number,
  options: LegacyDecodeOptions = {},
): { header: RecordBatchHeader; records: DecodedRecord[] } {
  const verifyCrc = options.verifyCrc ?? true;
  const { message: wrapper, size } = readLegacyMessage(buf, position, verifyCrc);
  const codec = wrapper.attributes & COMPRESSION_CODEC_MASK;
  const logAppendTime = wrapper.magic === LEGACY_MAGIC_V1 && (wrapper.attributes & TIMESTAMP_TYPE_MASK) !== 0;
  const records: DecodedRecord[] = [];
  if (codec === CompressionType.None) {
    records.push({
      offset: wrapper.offset,
      timestamp: wrapper.timestamp,
      key: wrapper.key,
      value: wrapper.value,
      headers: [],
    });
  } else {
    if (codec !== CompressionType.Gzip && codec !== CompressionType.Snappy && codec !== CompressionType.Lz4) {
      throw invalid(
        `message at ${position} uses compression codec ${codec}, not allowed with magic ${wrapper.magic}`,
      );
    }
    if (wrapper.value === null) throw invalid(`compressed message at ${position} has a null value`);
    const inner = decompress(
      codec,
      wrapper.value,
      options.maxDecompressedBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES,
      {
        lz4LegacyHeaderChecksum: wrapper.magic === LEGACY_MAGIC_V0,
      },
    );
    const messages: LegacyMessage[] = [];
    for (let p = 0; p < inner.length; ) {
      const { message, size: innerSize } = readLegacyMessage(inner, p, verifyCrc);
      if (message.magic !== wrapper.magic) {
        throw invalid(
          `inner message has magic ${message.magic} but its wrapper at ${position} has magic ${wrapper.magic}`,
        );
      }
      if ((message.attributes & COMPRESSION_CODEC_MASK) !== CompressionType.None) {
        throw invalid(`compressed message at ${position} contains a compressed inner message`);
      }
      messages.push(message);
      p += innerSize;
    }
    if (messages.length === 0) throw invalid(`compressed message at ${position} holds no messages`);
    const shift =
      wrapper.magic === LEGACY_MAGIC_V1 ? wrapper.offset - messages[messages.length - 1].offset : 0n;
    for (const m of messages) {
      records.push({
        offset: m.offset + shift,
        timestamp: logAppendTime ? wrapper.timestamp : m.timestamp,
        key: m.key,
        value: m.value,
        headers: [],
      });
    }
  }
  const baseOffset = records[0].offset;
  const header: RecordBatchHeader = {
    baseOffset,
    batchLength: size - LOG_OVERHEAD,
    partitionLeaderEpoch: NO_PARTITION_LEADER_EPOCH,
    magic: wrapper.magic,
    crc: wrapper.crc,
    attributes: wrapper.attributes,
    lastOffsetDelta: Number(wrapper.offset - baseOffset),
    baseTimestamp: records[0].timestamp,
    maxTimestamp: wrapper.timestamp,
    producerId: NO_PRODUCER_ID,
    producerEpoch: NO_PRODUCER_EPOCH,
    baseSequence: NO_SEQUENCE,
    recordsCount: records.length,
    compression: compressionOf(wrapper.attributes),
    timestampType:
      wrapper.magic === LEGACY_MAGIC_V0
        ? TimestampType.NoTimestampType
        : logAppendTime
          ? TimestampType.LogAppendTime
          : TimestampType.CreateTime,
    isTransactional: false,
    isControl: false,
    hasDeleteHorizonMs: false,
  };
  return { header, records };
}

// Building (for tests and tools) -------------------------------------------------------------------------

export interface LegacyMessageInput {
  key: Buffer | null;
  value: Buffer | null;
  /** Magic 1 only; default 0. */
  timestamp?: bigint;
}

function encodeMessage(
  offset: bigint,
  magic: number,
  attributes: number,
  timestamp: bigint,
  key: Buffer | null,
  value: Buffer | null,
): Buffer {
  const length =
    (magic === LEGACY_MAGIC_V1 ? LEGACY_RECORD_OVERHEAD_V1 : LEGACY_RECORD_OVERHEAD_V0) +
    (key?.length ?? 0) +
    (value?.length ?? 0);
  const out = Buffer.allocUnsafe(LOG_OVERHEAD + length);
  out.writeBigInt64BE(offset, 0);
  out.writeInt32BE(length, 8);
  out.writeInt8(magic, 16);
  out.writeInt8(attributes, 17);
  let p = 18;
  if (magic === LEGACY_MAGIC_V1) {
    out.writeBigInt64BE(timestamp, p);
    p += 8;
  }
  for (const b of [key, value]) {
    out.writeInt32BE(b === null ? -1 : b.length, p);
    p += 4;
    if (b !== null) p += b.copy(out, p);
  }
  out.writeUInt32BE(crc32(out.subarray(16)) >>> 0, 12);
  return out;
}

/**
 * Builds a legacy message set: one entry per message, or with a codec one wrapper message holding them
 * (inner offsets relative for magic 1, absolute for magic 0; wrapper offset = last absolute offset).
 */
export function buildLegacyMessageSet(
  messages: readonly LegacyMessageInput[],
  options: { magic: 0 | 1; baseOffset?: bigint; compression?: CompressionType; logAppendTime?: bigint },
): Buffer {
  const magic = options.magic;
  const baseOffset = options.baseOffset ?? 0n;
  const compression = options.compression ?? CompressionType.None;
  const tsAttr = magic === LEGACY_MAGIC_V1 && options.logAppendTime !== undefined ? TIMESTAMP_TYPE_MASK : 0;
  const ts = (m: LegacyMessageInput): bigint => options.logAppendTime ?? m.timestamp ?? 0n;
  if (compression === CompressionType.None) {
    return Buffer.concat(
      messages.map((m, i) => encodeMessage(baseOffset + BigInt(i), magic, tsAttr, ts(m), m.key, m.value)),
    );
  }
  const inner = Buffer.concat(
    messages.map((m, i) =>
      encodeMessage(
        magic === LEGACY_MAGIC_V1 ? BigInt(i) : baseOffset + BigInt(i),
        magic,
        0,
        ts(m),
        m.key,
        m.value,
      ),
    ),
  );
  let compressed = compress(compression, inner);
  if (compression === CompressionType.Lz4 && magic === LEGACY_MAGIC_V0)
    compressed = withLegacyLz4Checksum(compressed);
  let maxTs = -1n;
  for (const m of messages) if (ts(m) > maxTs) maxTs = ts(m);
  const lastOffset = baseOffset + BigInt(Math.max(0, messages.length - 1));
  return encodeMessage(lastOffset, magic, compression | tsAttr, maxTs, null, compressed);
}

/** Rewrites an LZ4 frame's header checksum the pre-KIP-57 way (hashing the magic too), as Kafka 0.8-0.9 did. */
function withLegacyLz4Checksum(frame: Buffer): Buffer {
  const out = Buffer.from(frame);
  const descriptorEnd = 6 + ((out[4] & 0x08) !== 0 ? 8 : 0) + ((out[4] & 0x01) !== 0 ? 4 : 0);
  out[descriptorEnd] = (xxhash32(out, 0, 0, descriptorEnd) >>> 8) % 256;
  return out;
}
