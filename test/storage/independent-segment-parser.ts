// A second, independent parser of Kafka's on-disk segment format, written from Kafka's documentation
// (https://kafka.apache.org/documentation/#recordbatch, #record, #log) and NOT from Tributary's code: it
// imports nothing from src/. Tests use it to check that files Tributary writes are what Kafka would read.
//
// .log       a sequence of record batches (magic 2):
//              baseOffset int64, batchLength int32, partitionLeaderEpoch int32, magic int8, crc uint32
//              (CRC-32C of everything from attributes to the end of the batch), attributes int16
//              (bits 0-2 compression, 3 timestampType, 4 isTransactional, 5 isControl, 6 hasDeleteHorizonMs),
//              lastOffsetDelta int32, baseTimestamp int64, maxTimestamp int64, producerId int64,
//              producerEpoch int16, baseSequence int32, records: int32 count + records (compressed as a
//              whole when the codec is not none).
//            a record: length varint, attributes int8, timestampDelta varlong, offsetDelta varint,
//              keyLength varint (-1 = null), key, valueLength varint, value, headers count varint,
//              header: headerKeyLength varint, headerKey (UTF-8), headerValueLength varint, value.
//            varint/varlong are zigzag-encoded base-128 (protobuf's encoding).
// .index     8-byte entries: relative offset int32 (offset - base offset), position int32 in the .log.
// .timeindex 12-byte entries: timestamp int64, relative offset int32.
// A preallocated index ends in zero bytes; a zero entry after the first one marks the end.

import { gunzipSync } from "node:zlib";
import { crc32c } from "@node-rs/crc32";

export interface IndependentRecord {
  attributes: number;
  timestampDelta: bigint;
  offsetDelta: number;
  /** baseOffset + offsetDelta. */
  offset: bigint;
  /** baseTimestamp + timestampDelta, or maxTimestamp for a LogAppendTime batch. */
  timestamp: bigint;
  key: Buffer | null;
  value: Buffer | null;
  headers: Array<{ key: string; value: Buffer | null }>;
}

export interface IndependentBatch {
  position: number;
  /** Whole batch: 12 + batchLength. */
  sizeInBytes: number;
  baseOffset: bigint;
  batchLength: number;
  partitionLeaderEpoch: number;
  magic: number;
  crc: number;
  /** CRC-32C computed over attributes..end. */
  computedCrc: number;
  attributes: number;
  compression: number;
  timestampType: "CreateTime" | "LogAppendTime";
  isTransactional: boolean;
  isControl: boolean;
  hasDeleteHorizonMs: boolean;
  lastOffsetDelta: number;
  lastOffset: bigint;
  baseTimestamp: bigint;
  maxTimestamp: bigint;
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  recordCount: number;
  /** Decoded for codecs none and gzip; undefined for the others (this parser carries no snappy/lz4/zstd). */
  records?: IndependentRecord[];
}

export interface IndependentLog {
  batches: IndependentBatch[];
  /** Bytes after the last complete batch. */
  trailingBytes: number;
  /** Why parsing stopped early (a malformed batch), if it did. */
  error?: string;
}

class Cursor {
  constructor(
    readonly buf: Buffer,
    public pos: number,
    readonly end: number,
  ) {}

  need(n: number): void {
    if (this.pos + n > this.end)
      throw new Error(`need ${n} bytes at ${this.pos}, ${this.end - this.pos} left`);
  }

  i8(): number {
    this.need(1);
    return this.buf.readInt8(this.pos++);
  }

  /** Unsigned base-128 varint of up to `maxBytes` bytes, as a bigint. */
  private uvar(maxBytes: number): bigint {
    let result = 0n;
    for (let i = 0; i < maxBytes; i++) {
      this.need(1);
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << BigInt(7 * i);
      if ((b & 0x80) === 0) return result;
    }
    throw new Error(`varint longer than ${maxBytes} bytes at ${this.pos}`);
  }

  varlong(): bigint {
    const u = this.uvar(10);
    return (u >> 1n) ^ -(u & 1n);
  }

  varint(): number {
    const u = this.uvar(5);
    return Number((u >> 1n) ^ -(u & 1n));
  }

  bytes(n: number): Buffer {
    this.need(n);
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
}

function parseRecords(data: Buffer, count: number, b: IndependentBatch): IndependentRecord[] {
  const c = new Cursor(data, 0, data.length);
  const out: IndependentRecord[] = [];
  for (let i = 0; i < count; i++) {
    const length = c.varint();
    if (length < 0) throw new Error(`negative record length ${length}`);
    const end = c.pos + length;
    const r = new Cursor(data, c.pos, end);
    r.need(length);
    const attributes = r.i8();
    const timestampDelta = r.varlong();
    const offsetDelta = r.varint();
    const keyLength = r.varint();
    const key = keyLength < 0 ? null : Buffer.from(r.bytes(keyLength));
    const valueLength = r.varint();
    const value = valueLength < 0 ? null : Buffer.from(r.bytes(valueLength));
    const headerCount = r.varint();
    const headers: IndependentRecord["headers"] = [];
    for (let h = 0; h < headerCount; h++) {
      const hk = r.bytes(r.varint()).toString("utf8");
      const hvLength = r.varint();
      headers.push({ key: hk, value: hvLength < 0 ? null : Buffer.from(r.bytes(hvLength)) });
    }
    if (r.pos !== end) throw new Error(`record ${i} uses ${r.pos - c.pos} of its ${length} bytes`);
    c.pos = end;
    out.push({
      attributes,
      timestampDelta,
      offsetDelta,
      offset: b.baseOffset + BigInt(offsetDelta),
      timestamp: b.timestampType === "LogAppendTime" ? b.maxTimestamp : b.baseTimestamp + timestampDelta,
      key,
      value,
      headers,
    });
  }
  if (c.pos !== data.length) throw new Error(`${data.length - c.pos} bytes after the last record`);
  return out;
}

/** Parses a .log file's bytes. Stops at the first batch that is incomplete or malformed. */
export function parseLogSegment(buf: Buffer): IndependentLog {
  const batches: IndependentBatch[] = [];
  let pos = 0;
  while (pos < buf.length) {
    if (buf.length - pos < 12) break;
    const batchLength = buf.readInt32BE(pos + 8);
    const size = 12 + batchLength;
    if (batchLength < 49)
      return { batches, trailingBytes: buf.length - pos, error: `batchLength ${batchLength} at ${pos}` };
    if (pos + size > buf.length) break;
    const magic = buf.readInt8(pos + 16);
    if (magic !== 2) return { batches, trailingBytes: buf.length - pos, error: `magic ${magic} at ${pos}` };
    const attributes = buf.readInt16BE(pos + 21);
    const baseOffset = buf.readBigInt64BE(pos);
    const lastOffsetDelta = buf.readInt32BE(pos + 23);
    const b: IndependentBatch = {
      position: pos,
      sizeInBytes: size,
      baseOffset,
      batchLength,
      partitionLeaderEpoch: buf.readInt32BE(pos + 12),
      magic,
      crc: buf.readUInt32BE(pos + 17),
      computedCrc: crc32c(buf.subarray(pos + 21, pos + size)) >>> 0,
      attributes,
      compression: attributes & 7,
      timestampType: attributes & 8 ? "LogAppendTime" : "CreateTime",
      isTransactional: (attributes & 16) !== 0,
      isControl: (attributes & 32) !== 0,
      hasDeleteHorizonMs: (attributes & 64) !== 0,
      lastOffsetDelta,
      lastOffset: baseOffset + BigInt(lastOffsetDelta),
      baseTimestamp: buf.readBigInt64BE(pos + 27),
      maxTimestamp: buf.readBigInt64BE(pos + 35),
      producerId: buf.readBigInt64BE(pos + 43),
      producerEpoch: buf.readInt16BE(pos + 51),
      baseSequence: buf.readInt32BE(pos + 53),
      recordCount: buf.readInt32BE(pos + 57),
    };
    const payload = buf.subarray(pos + 61, pos + size);
    try {
      if (b.compression === 0) b.records = parseRecords(payload, b.recordCount, b);
      else if (b.compression === 1) b.records = parseRecords(gunzipSync(payload), b.recordCount, b);
    } catch (e) {
      return {
        batches,
        trailingBytes: buf.length - pos,
        error: `records of batch at ${pos}: ${(e as Error).message}`,
      };
    }
    batches.push(b);
    pos += size;
  }
  return { batches, trailingBytes: buf.length - pos };
}

export interface IndexEntry {
  offset: bigint;
  position: number;
}

export interface TimeIndexEntry {
  timestamp: bigint;
  offset: bigint;
}

/** Entries of a .index file, up to the zero tail of a preallocated file. */
export function parseOffsetIndex(buf: Buffer, baseOffset: bigint): IndexEntry[] {
  const out: IndexEntry[] = [];
  for (let p = 0; p + 8 <= buf.length; p += 8) {
    const rel = buf.readInt32BE(p);
    if (rel === 0 && p > 0) break;
    out.push({ offset: baseOffset + BigInt(rel), position: buf.readInt32BE(p + 4) });
  }
  return out;
}

/** Entries of a .timeindex file, up to the zero tail of a preallocated file. */
export function parseTimeIndex(buf: Buffer, baseOffset: bigint): TimeIndexEntry[] {
  const out: TimeIndexEntry[] = [];
  for (let p = 0; p + 12 <= buf.length; p += 12) {
    const rel = buf.readInt32BE(p + 8);
    if (rel === 0 && p > 0) break;
    out.push({ timestamp: buf.readBigInt64BE(p), offset: baseOffset + BigInt(rel) });
  }
  return out;
}

/**
 * Checks a segment's files against each other as Kafka defines them; returns the problems found (none for
 * a good segment): every batch's CRC, offsets increasing across batches and not below the base offset,
 * each index entry pointing at the start of a batch whose last offset is the entry's offset (Kafka indexes
 * a batch by its last offset), index offsets and positions increasing, time index timestamps
 * strictly increasing (Kafka's TimeIndex.maybeAppend) and each entry naming the last offset of a batch with that max timestamp.
 */
export function verifySegment(
  baseOffset: bigint,
  log: Buffer,
  index?: Buffer,
  timeIndex?: Buffer,
): { parsed: IndependentLog; problems: string[] } {
  const problems: string[] = [];
  const parsed = parseLogSegment(log);
  if (parsed.error) problems.push(`log: ${parsed.error}`);
  if (parsed.trailingBytes > 0)
    problems.push(`log: ${parsed.trailingBytes} bytes after the last complete batch`);
  let prevLast = baseOffset - 1n;
  const byPosition = new Map<number, IndependentBatch>();
  const byLastOffset = new Map<bigint, IndependentBatch>();
  for (const b of parsed.batches) {
    if (b.crc !== b.computedCrc)
      problems.push(`log: batch at ${b.position} has crc ${b.crc}, computed ${b.computedCrc}`);
    if (b.baseOffset <= prevLast)
      problems.push(`log: batch at ${b.position} starts at ${b.baseOffset} after ${prevLast}`);
    if (b.records) {
      for (const r of b.records) {
        if (r.offset > b.lastOffset)
          problems.push(`log: record offset ${r.offset} beyond batch last offset ${b.lastOffset}`);
      }
    }
    prevLast = b.lastOffset;
    byPosition.set(b.position, b);
    byLastOffset.set(b.lastOffset, b);
  }
  if (index) {
    let prev: IndexEntry | undefined;
    for (const e of parseOffsetIndex(index, baseOffset)) {
      const b = byPosition.get(e.position);
      if (!b) problems.push(`index: entry ${e.offset} -> ${e.position} is not the position of a batch`);
      else if (b.lastOffset !== e.offset) {
        problems.push(`index: entry ${e.offset} -> ${e.position} but that batch ends at ${b.lastOffset}`);
      }
      if (prev && (e.offset <= prev.offset || e.position <= prev.position)) {
        problems.push(
          `index: entry ${e.offset} -> ${e.position} does not follow ${prev.offset} -> ${prev.position}`,
        );
      }
      prev = e;
    }
  }
  if (timeIndex) {
    let prev: TimeIndexEntry | undefined;
    for (const e of parseTimeIndex(timeIndex, baseOffset)) {
      const b = byLastOffset.get(e.offset);
      if (!b) problems.push(`timeindex: entry ${e.timestamp} -> ${e.offset} names no batch's last offset`);
      else if (b.maxTimestamp !== e.timestamp) {
        problems.push(
          `timeindex: entry ${e.timestamp} -> ${e.offset} but that batch's max timestamp is ${b.maxTimestamp}`,
        );
      }
      if (prev && (e.timestamp <= prev.timestamp || e.offset <= prev.offset)) {
        problems.push(
          `timeindex: entry ${e.timestamp} -> ${e.offset} does not follow ${prev.timestamp} -> ${prev.offset}`,
        );
      }
      prev = e;
    }
  }
  return { parsed, problems };
}
