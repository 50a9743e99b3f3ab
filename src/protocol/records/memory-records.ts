// MemoryRecords: whole record batches built from and decoded to records, for clients, tools, tests and
// the broker paths that do need records (compaction, coordinators). Kafka's MemoryRecordsBuilder and the
// record iterators of DefaultRecordBatch / AbstractLegacyRecordBatch. The produce and fetch hot paths do
// not come here: they use record-batch.ts and record-batch-iterator.ts and treat batches as bytes.

import { ProtocolEncodeError } from "../primitives/errors.js";
import { Reader } from "../primitives/reader.js";
import { Writer } from "../primitives/writer.js";
import {
  CompressionType,
  compress,
  DEFAULT_MAX_DECOMPRESSED_BYTES,
  decompress,
  isCompressionType,
} from "./compression.js";
import { CorruptRecordError } from "./corrupt-record-error.js";
import { decodeLegacyEntry } from "./legacy-message-set.js";
import {
  type DecodedRecord,
  MIN_RECORD_SIZE,
  type RecordFields,
  type RecordHeader,
  readRecord,
  sizeOfRecord,
  writeRecord,
} from "./record.js";
import {
  batchAttributes,
  LOG_OVERHEAD,
  NO_PARTITION_LEADER_EPOCH,
  NO_PRODUCER_EPOCH,
  NO_PRODUCER_ID,
  NO_SEQUENCE,
  NO_TIMESTAMP,
  RECORD_BATCH_OVERHEAD,
  RECORDS_OFFSET,
  type RecordBatchHeader,
  TimestampType,
  writeRecordBatchHeader,
} from "./record-batch.js";
import { RecordBatchIterator } from "./record-batch-iterator.js";

/** A record to put in a batch. Missing key/value are null; offsetDelta defaults to the record's index. */
export interface RecordInput {
  key?: Buffer | null;
  value?: Buffer | null;
  headers?: readonly RecordHeader[];
  /** Absolute timestamp; defaults to BuildRecordBatchOptions.timestamp. */
  timestamp?: bigint;
  offsetDelta?: number;
}

export interface BuildRecordBatchOptions {
  records: readonly RecordInput[];
  compression?: CompressionType;
  /** gzip/zstd level (see compression.ts). */
  compressionLevel?: number;
  baseOffset?: bigint;
  /** Default -1 (RecordBatch.NO_PARTITION_LEADER_EPOCH), what producers send; the leader stamps its epoch. */
  partitionLeaderEpoch?: number;
  producerId?: bigint;
  producerEpoch?: number;
  baseSequence?: number;
  isTransactional?: boolean;
  isControl?: boolean;
  timestampType?: TimestampType;
  /** Timestamp of records that have none (default 0). With LogAppendTime: the log append time. */
  timestamp?: bigint;
  /** Marks the batch as cleaned with this delete horizon (baseTimestamp holds it; KIP-534). */
  deleteHorizonMs?: bigint;
  /** lastOffsetDelta of a batch with no records (default 0); otherwise the last record's offsetDelta. */
  emptyLastOffsetDelta?: number;
}

/** A batch with its decoded records. */
export interface DecodedRecordBatch {
  header: RecordBatchHeader;
  records: DecodedRecord[];
}

const HEADER_PLACEHOLDER = Buffer.alloc(RECORD_BATCH_OVERHEAD);

/** Builds one magic v2 record batch (Kafka's MemoryRecordsBuilder + DefaultRecordBatch.writeHeader). */
export function buildRecordBatch(options: BuildRecordBatchOptions): Buffer {
  const compression = options.compression ?? CompressionType.None;
  if (!isCompressionType(compression))
    throw new ProtocolEncodeError(`unknown compression type ${compression}`);
  const timestampType = options.timestampType ?? TimestampType.CreateTime;
  if (timestampType !== TimestampType.CreateTime && timestampType !== TimestampType.LogAppendTime) {
    throw new ProtocolEncodeError(`a v2 batch needs CreateTime or LogAppendTime, not ${timestampType}`);
  }
  const records = options.records;
  const defaultTs = options.timestamp ?? 0n;
  const tsOf = (r: RecordInput): bigint =>
    timestampType === TimestampType.LogAppendTime ? defaultTs : (r.timestamp ?? defaultTs);

  let baseTimestamp = records.length > 0 ? tsOf(records[0]) : (options.timestamp ?? NO_TIMESTAMP);
  let maxTimestamp = baseTimestamp;
  for (const r of records) {
    const ts = tsOf(r);
    if (ts > maxTimestamp) maxTimestamp = ts;
  }
  if (options.deleteHorizonMs !== undefined) baseTimestamp = options.deleteHorizonMs;

  // Size the records exactly first, so they are written into one allocation (for an uncompressed batch,
  // the batch itself: fresh large buffers cost page faults, which dominate building a big batch).
  const fields: RecordFields[] = new Array(records.length);
  let recordsSize = 0;
  let lastOffsetDelta = records.length === 0 ? (options.emptyLastOffsetDelta ?? 0) : -1;
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    const offsetDelta = r.offsetDelta ?? i;
    if (offsetDelta <= lastOffsetDelta) {
      throw new ProtocolEncodeError(`record offsetDelta ${offsetDelta} does not follow ${lastOffsetDelta}`);
    }
    lastOffsetDelta = offsetDelta;
    const f: RecordFields = {
      offsetDelta,
      timestampDelta: tsOf(r) - baseTimestamp,
      key: r.key ?? null,
      value: r.value ?? null,
      headers: r.headers ?? [],
    };
    fields[i] = f;
    recordsSize += sizeOfRecord(f);
  }
  const uncompressed = compression === CompressionType.None;
  // +16: Writer reserves room for a whole varint/varlong before writing one; without the slack the last
  // record's varints would make it double its buffer.
  const w = new Writer((uncompressed ? RECORDS_OFFSET : 0) + recordsSize + 16);
  if (uncompressed) w.raw(HEADER_PLACEHOLDER);
  for (const f of fields) writeRecord(w, f);
  let out: Buffer;
  if (uncompressed) {
    out = w.toBuffer();
  } else {
    const payload = compress(compression, w.toBuffer(), { level: options.compressionLevel });
    out = Buffer.allocUnsafe(RECORDS_OFFSET + payload.length);
    payload.copy(out, RECORDS_OFFSET);
  }
  const batchLength = out.length - LOG_OVERHEAD;
  if (out.length > 0x7fffffff)
    throw new ProtocolEncodeError(`record batch of ${out.length} bytes is too large`);
  writeRecordBatchHeader(out, 0, {
    baseOffset: options.baseOffset ?? 0n,
    batchLength,
    partitionLeaderEpoch: options.partitionLeaderEpoch ?? NO_PARTITION_LEADER_EPOCH,
    attributes: batchAttributes({
      compression,
      timestampType,
      isTransactional: options.isTransactional,
      isControl: options.isControl,
      hasDeleteHorizonMs: options.deleteHorizonMs !== undefined,
    }),
    lastOffsetDelta,
    baseTimestamp,
    maxTimestamp,
    producerId: options.producerId ?? NO_PRODUCER_ID,
    producerEpoch: options.producerEpoch ?? NO_PRODUCER_EPOCH,
    baseSequence: options.baseSequence ?? NO_SEQUENCE,
    recordsCount: records.length,
  });
  return out;
}

/** Decodes the records of the complete, CRC-checked v2 batch at `position`. */
function decodeV2Records(
  buf: Buffer,
  position: number,
  header: RecordBatchHeader,
  maxDecompressedBytes: number,
): DecodedRecord[] {
  const count = header.recordsCount;
  if (count < 0)
    throw new CorruptRecordError(`record batch at ${position} has record count ${count}`, "INVALID_RECORD");
  const end = position + LOG_OVERHEAD + header.batchLength;
  let reader: Reader;
  if (header.compression === CompressionType.None) {
    reader = new Reader(buf, position + RECORDS_OFFSET, end);
  } else {
    if (!isCompressionType(header.compression)) {
      throw new CorruptRecordError(
        `record batch at ${position} has unknown compression type ${header.compression}`,
      );
    }
    const data = decompress(
      header.compression,
      buf.subarray(position + RECORDS_OFFSET, end),
      maxDecompressedBytes,
    );
    reader = new Reader(data);
  }
  // Every record takes at least MIN_RECORD_SIZE bytes: refuse a count the bytes cannot hold up front.
  if (count > reader.remaining / MIN_RECORD_SIZE) {
    throw new CorruptRecordError(
      `record batch at ${position} declares ${count} records but holds only ${reader.remaining} bytes of records`,
      "INVALID_RECORD",
    );
  }
  const logAppendTime = header.timestampType === TimestampType.LogAppendTime ? header.maxTimestamp : null;
  const records: DecodedRecord[] = [];
  for (let i = 0; i < count; i++) {
    records.push(readRecord(reader, header.baseOffset, header.baseTimestamp, logAppendTime));
  }
  if (reader.remaining !== 0) {
    throw new CorruptRecordError(
      `record batch at ${position}: ${reader.remaining} bytes remain after its ${count} records`,
      "INVALID_RECORD",
    );
  }
  return records;
}

/**
 * The records of one batch (magic 2, or a legacy magic 0/1 entry): `batchBytes` starts at the batch's
 * baseOffset and holds at least the whole batch. Checks the CRC, decompresses (at most
 * maxDecompressedBytes), and throws CorruptRecordError on anything malformed.
 */
export function decodeBatchRecords(
  batchBytes: Buffer,
  maxDecompressedBytes: number = DEFAULT_MAX_DECOMPRESSED_BYTES,
): DecodedRecord[] {
  const it = new RecordBatchIterator(batchBytes, { allowLegacy: true });
  const entry = it.next();
  if (entry.done) throw new CorruptRecordError("no record batch in an empty buffer");
  const { position, header } = entry.value;
  if (header === null) return decodeLegacyEntry(batchBytes, position, { maxDecompressedBytes }).records;
  return decodeV2Records(batchBytes, position, header, maxDecompressedBytes);
}

export interface DecodeRecordBatchesOptions {
  /** Bound on each batch's decompressed bytes (default DEFAULT_MAX_DECOMPRESSED_BYTES). */
  maxDecompressedBytes?: number;
  /** Ignore a partial trailing batch, as a consumer does with a Fetch response (default false: error). */
  allowIncompleteTail?: boolean;
  /** Check CRCs (default true). */
  verifyCrc?: boolean;
  /** A batch larger than this is corrupt (see RecordBatchIteratorOptions.maxBatchSize). */
  maxBatchSize?: number;
}

/**
 * Decodes every batch of `buf` (a Produce or Fetch `records` field, or segment bytes) with its records:
 * offsets are absolute (baseOffset + offsetDelta), timestamps too (baseTimestamp + timestampDelta, or
 * maxTimestamp for LogAppendTime). Legacy magic 0/1 entries come out in the same shape. Throws only
 * CorruptRecordError (a ProtocolDecodeError) on bad input.
 */
export function decodeRecordBatches(
  buf: Buffer,
  options: DecodeRecordBatchesOptions = {},
): DecodedRecordBatch[] {
  const maxDecompressedBytes = options.maxDecompressedBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES;
  const verifyCrc = options.verifyCrc ?? true;
  const it = new RecordBatchIterator(buf, {
    allowLegacy: true,
    allowIncompleteTail: options.allowIncompleteTail ?? false,
    verifyCrc,
    maxBatchSize: options.maxBatchSize,
  });
  const out: DecodedRecordBatch[] = [];
  for (const { position, header } of it) {
    if (header === null) {
      out.push(decodeLegacyEntry(buf, position, { maxDecompressedBytes, verifyCrc }));
    } else {
      out.push({ header, records: decodeV2Records(buf, position, header, maxDecompressedBytes) });
    }
  }
  return out;
}
