// ProducerBatch: the records waiting for one partition, written into record-batch bytes as they are
// appended (Kafka's ProducerBatch over MemoryRecordsBuilder): each record is encoded at send() time into
// the batch's buffer (from the BufferPool), so the caller may reuse its buffers and closing the batch
// only adds the 61-byte v2 header (writeRecordBatchHeader) and, with a codec, compresses the records
// part. The record encoding is Kafka's DefaultRecord (as protocol/records/record.ts writes it; a test
// checks the bytes equal buildRecordBatch's), done here with number arithmetic instead of bigint
// because it runs once per record on the producer's hot path. Producer id/epoch/sequence stay -1:
// idempotence is issue 7.

import { CompressionType, compress } from "../../protocol/records/compression.js";
import type { RecordHeader } from "../../protocol/records/record.js";
import {
  batchAttributes,
  LOG_OVERHEAD,
  NO_PARTITION_LEADER_EPOCH,
  NO_PRODUCER_EPOCH,
  NO_PRODUCER_ID,
  NO_SEQUENCE,
  RECORDS_OFFSET,
  TimestampType,
  writeRecordBatchHeader,
} from "../../protocol/records/record-batch.js";
import type { BufferPool } from "./buffer-pool.js";

/** What a successful send resolves to (Kafka's RecordMetadata). */
export interface RecordMetadata {
  topic: string;
  partition: number;
  /** -1 with acks=0, as Kafka reports it. */
  offset: bigint;
  /** CreateTime of the record, or the broker's LogAppendTime. */
  timestamp: bigint;
}

export type SendCallback = (error: Error | null, metadata: RecordMetadata | null) => void;

/** Bytes of a zigzag varint/varlong for an integer-valued number (exact up to 2^53). */
function sizeOfZigzag(v: number): number {
  let u = v >= 0 ? v * 2 : -v * 2 - 1;
  let n = 1;
  while (u >= 128) {
    u = Math.floor(u / 128);
    n++;
  }
  return n;
}

function writeZigzag(buf: Buffer, pos: number, v: number): number {
  let u = v >= 0 ? v * 2 : -v * 2 - 1;
  while (u >= 128) {
    buf[pos++] = (u % 128) | 0x80;
    u = Math.floor(u / 128);
  }
  buf[pos++] = u;
  return pos;
}

export class ProducerBatch {
  readonly createdMs: number;
  recordCount = 0;
  attempts = 0;
  /** When the batch may be retried (monotonic ms). */
  retryAtMs = 0;
  lastAttemptMs = 0;
  /** Set once the batch no longer takes records (full, or drained). */
  closed = false;
  inFlight = false;
  private buffer: Buffer;
  private pos = RECORDS_OFFSET;
  private baseTimestamp = 0;
  private maxTimestamp = -1;
  private readonly callbacks: SendCallback[] = [];
  private readonly timestamps: number[] = [];
  private built: Buffer | undefined;
  private done = false;

  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly capacity: number,
    nowMs: number,
    private readonly compression: CompressionType,
    private readonly compressionLevel: number | undefined,
    private readonly pool: BufferPool,
    firstRecordSize: number,
  ) {
    this.createdMs = nowMs;
    // A first record larger than batch.size gets a batch of its own size, as in Kafka.
    this.buffer = pool.allocate(Math.max(capacity, RECORDS_OFFSET + firstRecordSize));
  }

  /** Bytes written so far (header included): what batch.size is compared with. */
  get sizeInBytes(): number {
    return this.pos;
  }

  /**
   * Appends a record when it fits (an empty batch takes any record, as in Kafka). Returns the encoded
   * record size, or -1 when it does not fit.
   */
  tryAppend(
    timestamp: number,
    key: Buffer | null,
    value: Buffer | null,
    headers: readonly RecordHeader[],
    callback: SendCallback,
  ): number {
    if (this.closed) return -1;
    if (this.recordCount === 0) this.baseTimestamp = timestamp;
    const timestampDelta = timestamp - this.baseTimestamp;
    const offsetDelta = this.recordCount;
    let headerKeys: Buffer[] | undefined;
    let body = 1 + sizeOfZigzag(timestampDelta) + sizeOfZigzag(offsetDelta);
    body += key === null ? 1 : sizeOfZigzag(key.length) + key.length;
    body += value === null ? 1 : sizeOfZigzag(value.length) + value.length;
    body += sizeOfZigzag(headers.length);
    if (headers.length > 0) {
      headerKeys = headers.map((h) => Buffer.from(h.key, "utf8"));
      for (let i = 0; i < headers.length; i++) {
        const hv = headers[i].value;
        body += sizeOfZigzag(headerKeys[i].length) + headerKeys[i].length;
        body += hv === null ? 1 : sizeOfZigzag(hv.length) + hv.length;
      }
    }
    const size = sizeOfZigzag(body) + body;
    if (this.pos + size > this.buffer.length) {
      if (this.recordCount > 0) return -1;
      this.buffer = Buffer.allocUnsafe(RECORDS_OFFSET + size);
    }
    const buf = this.buffer;
    let p = writeZigzag(buf, this.pos, body);
    buf[p++] = 0; // attributes
    p = writeZigzag(buf, p, timestampDelta);
    p = writeZigzag(buf, p, offsetDelta);
    if (key === null)
      buf[p++] = 1; // zigzag(-1)
    else {
      p = writeZigzag(buf, p, key.length);
      p += key.copy(buf, p);
    }
    if (value === null) buf[p++] = 1;
    else {
      p = writeZigzag(buf, p, value.length);
      p += value.copy(buf, p);
    }
    p = writeZigzag(buf, p, headers.length);
    if (headerKeys !== undefined) {
      for (let i = 0; i < headers.length; i++) {
        p = writeZigzag(buf, p, headerKeys[i].length);
        p += headerKeys[i].copy(buf, p);
        const hv = headers[i].value;
        if (hv === null) buf[p++] = 1;
        else {
          p = writeZigzag(buf, p, hv.length);
          p += hv.copy(buf, p);
        }
      }
    }
    this.pos = p;
    if (timestamp > this.maxTimestamp) this.maxTimestamp = timestamp;
    this.recordCount++;
    this.callbacks.push(callback);
    this.timestamps.push(timestamp);
    return size;
  }

  /** The v2 record batch bytes (built once, on first call; the batch takes no records afterwards). */
  records(): Buffer {
    if (this.built !== undefined) return this.built;
    this.closed = true;
    let out: Buffer;
    if (this.compression === CompressionType.None) {
      out = this.buffer.subarray(0, this.pos);
    } else {
      const payload = compress(this.compression, this.buffer.subarray(RECORDS_OFFSET, this.pos), {
        level: this.compressionLevel,
      });
      out = Buffer.allocUnsafe(RECORDS_OFFSET + payload.length);
      payload.copy(out, RECORDS_OFFSET);
      this.pool.deallocate(this.buffer);
      this.buffer = out;
    }
    writeRecordBatchHeader(out, 0, {
      baseOffset: 0n,
      batchLength: out.length - LOG_OVERHEAD,
      partitionLeaderEpoch: NO_PARTITION_LEADER_EPOCH,
      attributes: batchAttributes({ compression: this.compression, timestampType: TimestampType.CreateTime }),
      lastOffsetDelta: this.recordCount - 1,
      baseTimestamp: BigInt(this.baseTimestamp),
      maxTimestamp: BigInt(this.maxTimestamp),
      producerId: NO_PRODUCER_ID,
      producerEpoch: NO_PRODUCER_EPOCH,
      baseSequence: NO_SEQUENCE,
      recordsCount: this.recordCount,
    });
    this.built = out;
    return out;
  }

  get isDone(): boolean {
    return this.done;
  }

  /** Gives the batch's buffer back to the pool: only once no request references it any more. */
  release(): void {
    this.pool.deallocate(this.buffer);
  }

  /**
   * Completes every record: offsets are baseOffset + index (baseOffset -1 with acks=0), timestamps the
   * record's CreateTime or, when the broker returns one (LogAppendTime), that.
   */
  complete(baseOffset: bigint, logAppendTime: bigint): void {
    if (this.done) return;
    this.done = true;
    const cbs = this.callbacks;
    let offset = baseOffset;
    // CreateTime: consecutive records mostly share a millisecond, so its bigint is made once per change.
    let lastMs = Number.NaN;
    let lastTimestamp = logAppendTime;
    for (let i = 0; i < cbs.length; i++) {
      if (i > 0 && baseOffset >= 0n) offset += 1n;
      let timestamp = logAppendTime;
      if (logAppendTime < 0n) {
        const ms = this.timestamps[i];
        if (ms !== lastMs) {
          lastMs = ms;
          lastTimestamp = BigInt(ms);
        }
        timestamp = lastTimestamp;
      }
      try {
        cbs[i](null, { topic: this.topic, partition: this.partition, offset, timestamp });
      } catch {
        // a throwing user callback must not stop the others (Kafka logs it)
      }
    }
    this.dropCallbacks();
  }

  /** Fails every record with `error`. */
  fail(error: Error): void {
    if (this.done) return;
    this.done = true;
    for (const cb of this.callbacks) {
      try {
        cb(error, null);
      } catch {
        // as above
      }
    }
    this.dropCallbacks();
  }

  /**
   * Lets go of the records' callbacks once they have run. A batch that lived through a young-generation
   * GC (in flight during one) sits in the old generation until the next full GC; while it does, whatever
   * it still references stays alive through every scavenge and is promoted in turn. Keeping the
   * callbacks (and what they close over) made each scavenge copy megabytes at a steady send rate.
   */
  private dropCallbacks(): void {
    this.callbacks.length = 0;
    this.timestamps.length = 0;
  }
}
