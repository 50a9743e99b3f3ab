// Reader: bounds-checked reads of Kafka's primitive types from a Buffer.
// Invariant: no read allocates more than the bytes actually remaining; every length prefix is checked
// against the remaining bytes before anything is sliced or allocated. Byte fields are zero-copy
// subarrays of the input buffer.

import { ProtocolDecodeError } from "./errors.js";

const ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA";

export class Reader {
  pos: number;
  readonly end: number;

  constructor(
    readonly buf: Buffer,
    start = 0,
    end = buf.length,
  ) {
    this.pos = start;
    this.end = end;
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  private need(n: number, what: string): void {
    if (this.pos + n > this.end) {
      throw new ProtocolDecodeError(
        `truncated ${what}: need ${n} bytes at offset ${this.pos}, ${this.remaining} left`,
      );
    }
  }

  bool(): boolean {
    this.need(1, "bool");
    return this.buf[this.pos++] !== 0;
  }

  int8(): number {
    this.need(1, "int8");
    return this.buf.readInt8(this.pos++);
  }

  int16(): number {
    this.need(2, "int16");
    const v = this.buf.readInt16BE(this.pos);
    this.pos += 2;
    return v;
  }

  uint16(): number {
    this.need(2, "uint16");
    const v = this.buf.readUInt16BE(this.pos);
    this.pos += 2;
    return v;
  }

  int32(): number {
    this.need(4, "int32");
    const v = this.buf.readInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  uint32(): number {
    this.need(4, "uint32");
    const v = this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  int64(): bigint {
    this.need(8, "int64");
    const v = this.buf.readBigInt64BE(this.pos);
    this.pos += 8;
    return v;
  }

  float64(): number {
    this.need(8, "float64");
    const v = this.buf.readDoubleBE(this.pos);
    this.pos += 8;
    return v;
  }

  uuid(): string {
    this.need(16, "uuid");
    const v = this.buf.toString("base64url", this.pos, this.pos + 16);
    this.pos += 16;
    return v;
  }

  /** Unsigned LEB128 varint of at most 5 bytes (32 bits). */
  uvarint(): number {
    let value = 0;
    let shift = 0;
    for (let i = 0; i < 5; i++) {
      if (this.pos >= this.end) throw new ProtocolDecodeError(`truncated varint at offset ${this.pos}`);
      const b = this.buf[this.pos++];
      value |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) return value >>> 0;
      shift += 7;
    }
    throw new ProtocolDecodeError(`varint longer than 5 bytes at offset ${this.pos - 5}`);
  }

  /** Zigzag-encoded signed varint (32 bits). */
  varint(): number {
    const u = this.uvarint();
    return (u >>> 1) ^ -(u & 1);
  }

  /** Zigzag-encoded signed varlong (64 bits), at most 10 bytes. */
  varlong(): bigint {
    // Most varlongs (timestamp deltas) take a byte or two: up to 7 bytes (49 bits) the value is exact in
    // a number, so only the result is made a bigint.
    const start = this.pos;
    let n = 0;
    let scale = 1;
    for (let i = 0; i < 7 && this.pos < this.end; i++) {
      const b = this.buf[this.pos++];
      n += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) return BigInt(n % 2 === 0 ? n / 2 : -(n + 1) / 2);
      scale *= 128;
    }
    this.pos = start;
    let value = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new ProtocolDecodeError(`truncated varlong at offset ${this.pos}`);
      const b = this.buf[this.pos++];
      value |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return (value >> 1n) ^ -(value & 1n);
      shift += 7n;
    }
    throw new ProtocolDecodeError(`varlong longer than 10 bytes at offset ${this.pos - 10}`);
  }

  private checkedLength(len: number, what: string): number {
    if (len < 0) throw new ProtocolDecodeError(`negative ${what} length ${len} at offset ${this.pos}`);
    if (len > this.remaining) {
      throw new ProtocolDecodeError(`${what} length ${len} exceeds the ${this.remaining} bytes remaining`);
    }
    return len;
  }

  private utf8(len: number): string {
    const s = this.buf.toString("utf8", this.pos, this.pos + len);
    this.pos += len;
    return s;
  }

  private slice(len: number): Buffer {
    const b = this.buf.subarray(this.pos, this.pos + len);
    this.pos += len;
    return b;
  }

  string(): string {
    const len = this.int16();
    if (len === -1) throw new ProtocolDecodeError(`null string where a non-null string is required`);
    return this.utf8(this.checkedLength(len, "string"));
  }

  nullableString(): string | null {
    const len = this.int16();
    if (len === -1) return null;
    return this.utf8(this.checkedLength(len, "string"));
  }

  compactString(): string {
    const len = this.uvarint() - 1;
    if (len === -1) throw new ProtocolDecodeError(`null string where a non-null string is required`);
    return this.utf8(this.checkedLength(len, "string"));
  }

  compactNullableString(): string | null {
    const len = this.uvarint() - 1;
    if (len === -1) return null;
    return this.utf8(this.checkedLength(len, "string"));
  }

  bytes(): Buffer {
    const len = this.int32();
    if (len === -1) throw new ProtocolDecodeError(`null bytes where non-null bytes are required`);
    return this.slice(this.checkedLength(len, "bytes"));
  }

  nullableBytes(): Buffer | null {
    const len = this.int32();
    if (len === -1) return null;
    return this.slice(this.checkedLength(len, "bytes"));
  }

  compactBytes(): Buffer {
    const len = this.uvarint() - 1;
    if (len === -1) throw new ProtocolDecodeError(`null bytes where non-null bytes are required`);
    return this.slice(this.checkedLength(len, "bytes"));
  }

  compactNullableBytes(): Buffer | null {
    const len = this.uvarint() - 1;
    if (len === -1) return null;
    return this.slice(this.checkedLength(len, "bytes"));
  }

  /** Raw bytes of a known length (e.g. a tagged field's payload). */
  raw(len: number): Buffer {
    return this.slice(this.checkedLength(len, "raw"));
  }

  /**
   * Array length (int32, -1 = null). Like Kafka, a count larger than the bytes remaining is rejected
   * before any array is allocated.
   */
  arrayLength(): number {
    const len = this.int32();
    if (len < -1) throw new ProtocolDecodeError(`negative array length ${len}`);
    if (len > this.remaining) {
      throw new ProtocolDecodeError(`array of ${len} elements but only ${this.remaining} bytes remain`);
    }
    return len;
  }

  /** Compact array length (unsigned varint N+1, 0 = null). Returns -1 for null. */
  compactArrayLength(): number {
    const len = this.uvarint() - 1;
    if (len > this.remaining) {
      throw new ProtocolDecodeError(`array of ${len} elements but only ${this.remaining} bytes remain`);
    }
    return len;
  }

  skip(n: number): void {
    this.need(n, "skip");
    this.pos += n;
  }
}

export { ZERO_UUID };
