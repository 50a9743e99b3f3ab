// Writer: appends Kafka's primitive types to a growable buffer.
// Large byte fields (record batches) are not copied: they are kept by reference as separate chunks,
// so a Fetch response carrying megabytes of records is written to the socket with writev and no copy.

import { ProtocolEncodeError } from "./errors.js";

/** Byte fields at least this large are referenced, not copied. */
const ZERO_COPY_THRESHOLD = 4096;

export class Writer {
  private buf: Buffer;
  private pos = 0;
  private readonly chunks: Buffer[] = [];
  private chunkedBytes = 0;

  constructor(initialSize = 256) {
    this.buf = Buffer.allocUnsafe(initialSize);
  }

  /** Total bytes written so far. */
  get length(): number {
    return this.chunkedBytes + this.pos;
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  bool(v: boolean): void {
    this.ensure(1);
    this.buf[this.pos++] = v ? 1 : 0;
  }

  int8(v: number): void {
    this.ensure(1);
    this.buf.writeInt8(v, this.pos);
    this.pos += 1;
  }

  int16(v: number): void {
    this.ensure(2);
    this.buf.writeInt16BE(v, this.pos);
    this.pos += 2;
  }

  uint16(v: number): void {
    this.ensure(2);
    this.buf.writeUInt16BE(v, this.pos);
    this.pos += 2;
  }

  int32(v: number): void {
    this.ensure(4);
    this.buf.writeInt32BE(v, this.pos);
    this.pos += 4;
  }

  uint32(v: number): void {
    this.ensure(4);
    this.buf.writeUInt32BE(v, this.pos);
    this.pos += 4;
  }

  int64(v: bigint): void {
    this.ensure(8);
    this.buf.writeBigInt64BE(v, this.pos);
    this.pos += 8;
  }

  float64(v: number): void {
    this.ensure(8);
    this.buf.writeDoubleBE(v, this.pos);
    this.pos += 8;
  }

  uuid(v: string): void {
    const b = Buffer.from(v, "base64url");
    if (b.length !== 16)
      throw new ProtocolEncodeError(`uuid ${JSON.stringify(v)} is not 16 bytes in base64url`);
    this.ensure(16);
    b.copy(this.buf, this.pos);
    this.pos += 16;
  }

  uvarint(v: number): void {
    this.ensure(5);
    let u = v >>> 0;
    while (u >= 0x80) {
      this.buf[this.pos++] = (u & 0x7f) | 0x80;
      u >>>= 7;
    }
    this.buf[this.pos++] = u;
  }

  varint(v: number): void {
    this.uvarint((v << 1) ^ (v >> 31));
  }

  varlong(v: bigint): void {
    this.ensure(10);
    let u = BigInt.asUintN(64, (v << 1n) ^ (v >> 63n));
    while (u >= 0x80n) {
      this.buf[this.pos++] = Number(u & 0x7fn) | 0x80;
      u >>= 7n;
    }
    this.buf[this.pos++] = Number(u);
  }

  private utf8(s: string, len: number): void {
    this.ensure(len);
    this.buf.write(s, this.pos, len, "utf8");
    this.pos += len;
  }

  string(s: string): void {
    if (s === null) throw new ProtocolEncodeError("non-nullable string was null");
    const len = Buffer.byteLength(s, "utf8");
    if (len > 0x7fff) throw new ProtocolEncodeError(`string of ${len} bytes is longer than 32767`);
    this.int16(len);
    this.utf8(s, len);
  }

  nullableString(s: string | null): void {
    if (s === null) this.int16(-1);
    else this.string(s);
  }

  compactString(s: string): void {
    if (s === null) throw new ProtocolEncodeError("non-nullable string was null");
    const len = Buffer.byteLength(s, "utf8");
    this.uvarint(len + 1);
    this.utf8(s, len);
  }

  compactNullableString(s: string | null): void {
    if (s === null) this.uvarint(0);
    else this.compactString(s);
  }

  /** Appends raw bytes, by reference when large. */
  raw(b: Buffer): void {
    if (b.length >= ZERO_COPY_THRESHOLD) {
      this.flushChunk();
      this.chunks.push(b);
      this.chunkedBytes += b.length;
      return;
    }
    this.ensure(b.length);
    b.copy(this.buf, this.pos);
    this.pos += b.length;
  }

  bytes(b: Buffer): void {
    if (b === null) throw new ProtocolEncodeError("non-nullable bytes were null");
    this.int32(b.length);
    this.raw(b);
  }

  nullableBytes(b: Buffer | null): void {
    if (b === null) this.int32(-1);
    else this.bytes(b);
  }

  compactBytes(b: Buffer): void {
    if (b === null) throw new ProtocolEncodeError("non-nullable bytes were null");
    this.uvarint(b.length + 1);
    this.raw(b);
  }

  compactNullableBytes(b: Buffer | null): void {
    if (b === null) this.uvarint(0);
    else this.compactBytes(b);
  }

  arrayLength(n: number): void {
    this.int32(n);
  }

  compactArrayLength(n: number): void {
    this.uvarint(n + 1);
  }

  /** Reserves an int32 and returns its absolute position, to be filled by patchInt32. */
  reserveInt32(): number {
    const at = this.length;
    this.int32(0);
    return at;
  }

  /** Overwrites an int32 written earlier at absolute position `at` (must be in the first chunk). */
  patchInt32(at: number, v: number): void {
    const first = this.chunks.length > 0 ? this.chunks[0] : this.buf;
    if (at + 4 > first.length)
      throw new ProtocolEncodeError(`patch position ${at} is not in the first chunk`);
    first.writeInt32BE(v, at);
  }

  private flushChunk(): void {
    if (this.pos === 0) return;
    this.chunks.push(this.buf.subarray(0, this.pos));
    this.chunkedBytes += this.pos;
    this.buf = Buffer.allocUnsafe(Math.max(256, this.buf.length - this.pos));
    this.pos = 0;
  }

  /** The written bytes as a list of buffers (no copy of large byte fields). */
  toChunks(): Buffer[] {
    this.flushChunk();
    return this.chunks.slice();
  }

  /** The written bytes as one buffer (copies when there is more than one chunk). */
  toBuffer(): Buffer {
    const chunks = this.toChunks();
    return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, this.chunkedBytes);
  }
}
