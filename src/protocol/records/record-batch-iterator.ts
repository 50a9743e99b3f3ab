// RecordBatchIterator: walks a buffer of concatenated record batches (a Produce request's `records`, a
// Fetch response's `records`, a chunk of a log segment) and yields each batch's position, size and parsed
// header, without decoding records (Kafka's ByteBufferLogInputStream). It validates what a broker must
// check before appending: the size field (at least the header, inside the buffer, at most maxBatchSize),
// the magic, and the CRC (CRC32C for magic 2, IEEE CRC32 for legacy magic 0/1 messages).
//
// A partial batch at the end is legal in a Fetch response (the broker cuts at the fetch size) and in a
// segment being written; with allowIncompleteTail it ends the iteration and is reported by `incomplete`,
// otherwise it is an error. Nothing is ever allocated from a size field: batches are views of the input.

import { crc32 } from "@node-rs/crc32";
import { CorruptRecordError } from "./corrupt-record-error.js";
import {
  BATCH_LENGTH_OFFSET,
  isRecordBatchCrcValid,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  MIN_BATCH_LENGTH,
  RECORD_BATCH_MAGIC,
  type RecordBatchHeader,
  readRecordBatchHeader,
} from "./record-batch.js";

/** Smallest legacy message (magic 0): crc, magic, attributes, key length, value length. */
export const LEGACY_RECORD_OVERHEAD_V0 = 14;
/** Smallest legacy message with magic 1 (adds the timestamp). */
export const LEGACY_RECORD_OVERHEAD_V1 = 22;
/** Bytes needed to read the magic byte of an entry: offset, size, crc (or epoch + its first byte), magic. */
const HEADER_SIZE_UP_TO_MAGIC = MAGIC_OFFSET + 1;

export interface RecordBatchEntry {
  /** Position of the batch (its baseOffset field) in the buffer. */
  readonly position: number;
  /** Total bytes of the batch: LOG_OVERHEAD + its length field. */
  readonly size: number;
  readonly magic: number;
  /** The v2 header; null for a legacy magic 0/1 entry (see legacy-message-set.ts). */
  readonly header: RecordBatchHeader | null;
}

export interface RecordBatchIteratorOptions {
  /** Check each batch's CRC (default true). */
  verifyCrc?: boolean;
  /** A partial trailing batch ends the iteration instead of being an error (Fetch responses; default false). */
  allowIncompleteTail?: boolean;
  /** Yield legacy magic 0/1 entries instead of rejecting them (default false: magic 2 only). */
  allowLegacy?: boolean;
  /** A batch larger than this is corrupt, even when incomplete (Kafka's maxMessageSize; default none). */
  maxBatchSize?: number;
}

export class RecordBatchIterator implements IterableIterator<RecordBatchEntry> {
  /** Where the next batch starts. */
  position: number;
  /** True once the iteration stopped at a partial trailing batch (only with allowIncompleteTail). */
  incomplete = false;
  private readonly end: number;
  private readonly verifyCrc: boolean;
  private readonly allowIncompleteTail: boolean;
  private readonly allowLegacy: boolean;
  private readonly maxBatchSize: number;

  constructor(
    readonly buf: Buffer,
    options: RecordBatchIteratorOptions = {},
    start = 0,
    end = buf.length,
  ) {
    this.position = start;
    this.end = end;
    this.verifyCrc = options.verifyCrc ?? true;
    this.allowIncompleteTail = options.allowIncompleteTail ?? false;
    this.allowLegacy = options.allowLegacy ?? false;
    this.maxBatchSize = options.maxBatchSize ?? Number.POSITIVE_INFINITY;
  }

  [Symbol.iterator](): RecordBatchIterator {
    return this;
  }

  /** Bytes from the current position to the end: after an incomplete stop, the partial batch's size. */
  get remaining(): number {
    return this.end - this.position;
  }

  private truncated(message: string): IteratorResult<RecordBatchEntry> {
    if (this.allowIncompleteTail) {
      this.incomplete = true;
      return { done: true, value: undefined };
    }
    throw new CorruptRecordError(message);
  }

  next(): IteratorResult<RecordBatchEntry> {
    const buf = this.buf;
    const pos = this.position;
    const remaining = this.end - pos;
    if (remaining === 0) return { done: true, value: undefined };
    if (remaining < LOG_OVERHEAD) {
      return this.truncated(`truncated record batch at ${pos}: ${remaining} bytes, less than its size field`);
    }
    const length = buf.readInt32BE(pos + BATCH_LENGTH_OFFSET);
    if (length < LEGACY_RECORD_OVERHEAD_V0) {
      throw new CorruptRecordError(
        `record batch at ${pos} has size ${length}, less than the minimum record overhead (${LEGACY_RECORD_OVERHEAD_V0})`,
      );
    }
    const size = LOG_OVERHEAD + length;
    if (size > this.maxBatchSize) {
      throw new CorruptRecordError(
        `record batch at ${pos} of ${size} bytes exceeds the largest allowed (${this.maxBatchSize})`,
      );
    }
    let magic = -1;
    if (remaining >= HEADER_SIZE_UP_TO_MAGIC) {
      magic = buf.readInt8(pos + MAGIC_OFFSET);
      if (magic < 0 || magic > RECORD_BATCH_MAGIC)
        throw new CorruptRecordError(`invalid magic ${magic} at ${pos}`);
      if (magic === RECORD_BATCH_MAGIC && length < MIN_BATCH_LENGTH) {
        throw new CorruptRecordError(
          `record batch at ${pos} has batchLength ${length}, less than the ${MIN_BATCH_LENGTH}-byte minimum`,
        );
      }
    }
    if (size > remaining) {
      return this.truncated(`truncated record batch at ${pos}: ${size} bytes declared, ${remaining} present`);
    }
    if (magic !== RECORD_BATCH_MAGIC) {
      if (!this.allowLegacy) {
        throw new CorruptRecordError(
          `entry at ${pos} has magic ${magic}; only magic 2 record batches are accepted`,
          "INVALID_RECORD",
        );
      }
      const minimum = magic === 0 ? LEGACY_RECORD_OVERHEAD_V0 : LEGACY_RECORD_OVERHEAD_V1;
      if (length < minimum)
        throw new CorruptRecordError(`magic ${magic} message at ${pos} has size ${length} < ${minimum}`);
      if (this.verifyCrc) {
        const stored = buf.readUInt32BE(pos + LOG_OVERHEAD); // legacy crc follows offset and size
        const actual = crc32(buf.subarray(pos + MAGIC_OFFSET, pos + size)) >>> 0;
        if (stored !== actual) {
          throw new CorruptRecordError(
            `message at ${pos} is corrupt (stored crc = ${stored}, computed crc = ${actual})`,
          );
        }
      }
      this.position = pos + size;
      return { done: false, value: { position: pos, size, magic, header: null } };
    }
    const header = readRecordBatchHeader(buf, pos);
    if (this.verifyCrc && !isRecordBatchCrcValid(buf, pos)) {
      throw new CorruptRecordError(
        `record batch at ${pos} is corrupt (stored crc = ${header.crc}, computed crc mismatch)`,
      );
    }
    this.position = pos + size;
    return { done: false, value: { position: pos, size, magic, header } };
  }
}

/** Iterates the batches of `buf` (see RecordBatchIterator). */
export function recordBatches(buf: Buffer, options?: RecordBatchIteratorOptions): RecordBatchIterator {
  return new RecordBatchIterator(buf, options);
}

export interface RecordBatchesSummary {
  batches: number;
  /** Bytes of complete batches. */
  validBytes: number;
  /** Bytes of a partial trailing batch (0 unless allowIncompleteTail). */
  incompleteBytes: number;
}

/**
 * Checks every batch of `buf` (size, magic, CRC) without decoding records; throws CorruptRecordError on
 * the first bad one. The produce path's validation; costs one CRC32C pass over the bytes.
 */
export function validateRecordBatches(
  buf: Buffer,
  options?: RecordBatchIteratorOptions,
): RecordBatchesSummary {
  const it = new RecordBatchIterator(buf, options);
  let batches = 0;
  for (let r = it.next(); !r.done; r = it.next()) batches++;
  return { batches, validBytes: it.position, incompleteBytes: it.incomplete ? it.remaining : 0 };
}
