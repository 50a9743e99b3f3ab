// Kafka's FileLogInputStream for `dump-log`: the entries of a .log file one after another, read through the
// bounded window of segment-file-reader.ts and shown as stored, damaged or not. A v2 batch gives its
// header (DefaultRecordBatch's accessors) and its CRC32C; a legacy magic 0/1 message its header and CRC32; deep iteration decodes the records without a
// CRC check. A size field below the minimum is Kafka's CorruptRecordException message (DumpError).

import { crc32c } from "../../../protocol/records/crc32c.js";
import {
  type DecodedRecord,
  decodeRecordBatches,
  LOG_OVERHEAD,
  parseRecordBatchHeader,
  RECORD_BATCH_OVERHEAD,
  type RecordBatchHeader,
} from "../../../protocol/records/index.js";
import { DumpError } from "./dump-errors.js";
import { type FileReader, readFullyOrFail, WINDOW_BYTES } from "./segment-file-reader.js";

/** Bytes needed to read an entry's offset, size and magic (Kafka's HEADER_SIZE_UP_TO_MAGIC). */
const HEADER_SIZE_UP_TO_MAGIC = 17;
/** Kafka's LegacyRecord.RECORD_OVERHEAD_V0: the smallest size field of any entry. */
const MIN_ENTRY_SIZE = 14;
/** Largest batch loaded whole for --deep-iteration (larger ones are reported, not decoded). */
const MAX_DEEP_BATCH_BYTES = 256 * 1024 * 1024;

export interface FileBatch {
  position: number;
  /** LOG_OVERHEAD + size field. */
  size: number;
  magic: number;
  /** The entry's first 17 bytes (offset, size, epoch/crc, magic). */
  offsetField: bigint;
}

/**
 * The batch at `position`, or undefined at the end (fewer than 17 bytes left, or a batch that does not
 * fit before `end`). Throws DumpError for a size field below the minimum, as Kafka's CorruptRecordException.
 */
export function nextBatch(f: FileReader, position: number, end: number): FileBatch | undefined {
  if (position >= end - HEADER_SIZE_UP_TO_MAGIC) return undefined;
  const h = readFullyOrFail(f, position, HEADER_SIZE_UP_TO_MAGIC, "log header");
  const sizeField = h.readInt32BE(8);
  if (sizeField < MIN_ENTRY_SIZE) {
    throw new DumpError(
      `Found record size ${sizeField} smaller than minimum record overhead (${MIN_ENTRY_SIZE}) in file ${f.path}.`,
    );
  }
  if (position > end - LOG_OVERHEAD - sizeField) return undefined;
  return {
    position,
    size: LOG_OVERHEAD + sizeField,
    magic: h.readInt8(16),
    offsetField: h.readBigInt64BE(0),
  };
}

/** The parsed v2 header of a batch, with its last offset (Kafka's DefaultRecordBatch accessors). */
export type V2Header = RecordBatchHeader & { lastOffset: bigint };

/** The header as stored, damaged or not: dump-log shows what is there (no validation). */
export function readV2Header(f: FileReader, b: FileBatch): V2Header {
  const h = parseRecordBatchHeader(
    readFullyOrFail(f, b.position, RECORD_BATCH_OVERHEAD, "record batch header"),
  );
  return { ...h, lastOffset: h.baseOffset + BigInt(h.lastOffsetDelta) };
}

/** CRC32C over attributes..end of the batch, streamed through the window. */
export function v2BatchCrc(f: FileReader, b: FileBatch): number {
  let crc = 0;
  for (let p = b.position + 21; p < b.position + b.size; ) {
    const chunk = f.read(p, Math.min(WINDOW_BYTES, b.position + b.size - p));
    if (chunk.length === 0) break;
    crc = crc32c(chunk, crc);
    p += chunk.length;
  }
  return crc >>> 0;
}

/** The batch's last offset, as the index checks use it (loads only the header). */
export function batchLastOffset(f: FileReader, b: FileBatch): bigint {
  if (b.magic < 2) return b.offsetField;
  return readV2Header(f, b).lastOffset;
}

/** Decodes the records of a batch (no CRC check: like Kafka, deep iteration reads what is there). */
export function batchRecords(f: FileReader, b: FileBatch): DecodedRecord[] {
  if (b.size > MAX_DEEP_BATCH_BYTES) {
    throw new DumpError(
      `batch at position ${b.position} of ${f.path} has ${b.size} bytes, more than the ${MAX_DEEP_BATCH_BYTES} read for deep iteration`,
    );
  }
  const bytes = readFullyOrFail(f, b.position, b.size, "record batch");
  const decoded = decodeRecordBatches(bytes, { verifyCrc: false });
  return decoded.length === 0 ? [] : decoded[0].records;
}

/** A legacy (magic 0/1) message's header fields and CRC32 check (Kafka's LegacyRecord). */
export function legacyEntry(
  f: FileReader,
  b: FileBatch,
): { magic: number; attributes: number; timestamp: bigint; crc: number; valid: boolean } {
  const bytes = readFullyOrFail(f, b.position, Math.min(b.size, MAX_DEEP_BATCH_BYTES), "legacy record");
  const magic = bytes.readInt8(16);
  const attributes = bytes.length > 17 ? bytes.readInt8(17) : 0;
  const timestamp = magic === 1 && bytes.length >= 26 ? bytes.readBigInt64BE(18) : -1n;
  const crc = bytes.readUInt32BE(12);
  let valid = false;
  if (bytes.length === b.size) {
    valid = crc32Ieee(bytes.subarray(16)) >>> 0 === crc;
  }
  return { magic, attributes, timestamp, crc, valid };
}

let crcTable: Uint32Array | undefined;
/** IEEE CRC32 (legacy messages); small and only used for magic 0/1 entries. */
function crc32Ieee(data: Buffer): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (let i = 0; i < data.length; i++) crc = crcTable[(crc ^ data[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
