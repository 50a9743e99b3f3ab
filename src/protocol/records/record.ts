// Record: one record inside a v2 record batch (Kafka's DefaultRecord), decoded and encoded.
//
//   length varint | attributes int8 | timestampDelta varlong | offsetDelta varint |
//   keyLength varint (-1 = null) | key | valueLength varint (-1 = null) | value |
//   headerCount varint | [headerKeyLength varint | headerKey utf8 | headerValueLength varint (-1 = null) | value]
//
// Varints are zigzag-encoded. A decoded record's key, value and header values are zero-copy views of the
// batch (or decompressed) bytes. Decoding never allocates from a length field: every length is checked
// against the bytes of the record first, and a record must use exactly the bytes its length declares.

import { ProtocolEncodeError } from "../primitives/errors.js";
import { Reader } from "../primitives/reader.js";
import type { Writer } from "../primitives/writer.js";
import { CorruptRecordError } from "./corrupt-record-error.js";

export interface RecordHeader {
  key: string;
  value: Buffer | null;
}

/** A record with its absolute offset and timestamp, as consumers see it. */
export interface DecodedRecord {
  offset: bigint;
  timestamp: bigint;
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
}

/** A record as written in a batch, relative to the batch's baseOffset and baseTimestamp. */
export interface RecordFields {
  offsetDelta: number;
  timestampDelta: bigint;
  key: Buffer | null;
  value: Buffer | null;
  headers: readonly RecordHeader[];
}

/** The smallest encoded record: seven one-byte fields (length, attributes, deltas, key, value, headers). */
export const MIN_RECORD_SIZE = 7;

function invalid(message: string): CorruptRecordError {
  return new CorruptRecordError(message, "INVALID_RECORD");
}

function readVarBytes(r: Reader, what: string): Buffer | null {
  const len = r.varint();
  if (len < 0) return null; // -1 is written for null; like Kafka, any negative length reads as null
  if (len > r.remaining)
    throw invalid(`${what} length ${len} exceeds the ${r.remaining} bytes left in the record`);
  return r.raw(len);
}

/**
 * Reads one record at r.pos (Kafka's DefaultRecord.readFrom). The offset is baseOffset + offsetDelta;
 * the timestamp is logAppendTime when the batch uses LogAppendTime, else baseTimestamp + timestampDelta.
 * Throws CorruptRecordError (INVALID_RECORD) when the bytes are not a record.
 */
export function readRecord(
  r: Reader,
  baseOffset: bigint,
  baseTimestamp: bigint,
  logAppendTime: bigint | null,
): DecodedRecord {
  const start = r.pos;
  let bodySize: number;
  try {
    bodySize = r.varint();
  } catch (e) {
    throw invalid(`bad record length at ${start}: ${(e as Error).message}`);
  }
  if (bodySize < MIN_RECORD_SIZE - 1 || bodySize > r.remaining) {
    throw invalid(`invalid record size ${bodySize} at ${start}: ${r.remaining} bytes remain`);
  }
  const body = new Reader(r.buf, r.pos, r.pos + bodySize);
  r.pos += bodySize;
  try {
    body.int8(); // attributes: unused by every magic 2 record
    const timestampDelta = body.varlong();
    const offsetDelta = body.varint();
    const key = readVarBytes(body, "key");
    const value = readVarBytes(body, "value");
    const headerCount = body.varint();
    if (headerCount < 0) throw invalid(`invalid negative header count ${headerCount}`);
    if (headerCount > body.remaining / 2) {
      throw invalid(
        `header count ${headerCount} does not fit the ${body.remaining} bytes left in the record`,
      );
    }
    const headers: RecordHeader[] = [];
    for (let i = 0; i < headerCount; i++) {
      const keyLen = body.varint();
      if (keyLen < 0) throw invalid(`invalid negative header key size ${keyLen}`);
      if (keyLen > body.remaining) throw invalid(`header key size ${keyLen} exceeds the record`);
      const hkey = body.buf.toString("utf8", body.pos, body.pos + keyLen);
      body.pos += keyLen;
      headers.push({ key: hkey, value: readVarBytes(body, "header value") });
    }
    if (body.remaining !== 0) {
      throw invalid(
        `record at ${start} declares ${bodySize} bytes but its fields use ${bodySize - body.remaining}`,
      );
    }
    return {
      offset: baseOffset + BigInt(offsetDelta),
      timestamp: logAppendTime ?? baseTimestamp + timestampDelta,
      key,
      value,
      headers,
    };
  } catch (e) {
    if (e instanceof CorruptRecordError) throw e;
    throw invalid(`bad record at ${start}: ${(e as Error).message}`);
  }
}

/** Bytes of a zigzag varint. */
export function sizeOfVarint(v: number): number {
  let u = ((v << 1) ^ (v >> 31)) >>> 0;
  let n = 1;
  while (u >= 0x80) {
    u >>>= 7;
    n++;
  }
  return n;
}

/** Bytes of a zigzag varlong. */
export function sizeOfVarlong(v: bigint): number {
  let u = BigInt.asUintN(64, (v << 1n) ^ (v >> 63n));
  let n = 1;
  while (u >= 0x80n) {
    u >>= 7n;
    n++;
  }
  return n;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function checkFields(rec: RecordFields): void {
  if (!Number.isInteger(rec.offsetDelta) || rec.offsetDelta < -0x80000000 || rec.offsetDelta > 0x7fffffff) {
    throw new ProtocolEncodeError(`record offsetDelta ${rec.offsetDelta} is not an int32`);
  }
  if (rec.timestampDelta < INT64_MIN || rec.timestampDelta > INT64_MAX) {
    throw new ProtocolEncodeError(`record timestampDelta ${rec.timestampDelta} is not an int64`);
  }
}

function sizeOfVarBytes(b: Buffer | null): number {
  return b === null ? 1 : sizeOfVarint(b.length) + b.length;
}

/** Bytes after the length varint. */
function sizeOfBody(rec: RecordFields): number {
  let size = 1 + sizeOfVarlong(rec.timestampDelta) + sizeOfVarint(rec.offsetDelta);
  size += sizeOfVarBytes(rec.key) + sizeOfVarBytes(rec.value) + sizeOfVarint(rec.headers.length);
  for (const h of rec.headers) {
    const keyLen = Buffer.byteLength(h.key, "utf8");
    size += sizeOfVarint(keyLen) + keyLen + sizeOfVarBytes(h.value);
  }
  return size;
}

/** Encoded size of a record, length prefix included (Kafka's DefaultRecord.sizeInBytes). */
export function sizeOfRecord(rec: RecordFields): number {
  checkFields(rec);
  const body = sizeOfBody(rec);
  return sizeOfVarint(body) + body;
}

function writeVarBytes(w: Writer, b: Buffer | null): void {
  if (b === null) {
    w.varint(-1);
  } else {
    w.varint(b.length);
    w.raw(b);
  }
}

/** Writes one record (Kafka's DefaultRecord.writeTo). */
export function writeRecord(w: Writer, rec: RecordFields): void {
  checkFields(rec);
  w.varint(sizeOfBody(rec));
  w.int8(0);
  w.varlong(rec.timestampDelta);
  w.varint(rec.offsetDelta);
  writeVarBytes(w, rec.key);
  writeVarBytes(w, rec.value);
  w.varint(rec.headers.length);
  for (const h of rec.headers) {
    const key = Buffer.from(h.key, "utf8");
    w.varint(key.length);
    w.raw(key);
    writeVarBytes(w, h.value);
  }
}
