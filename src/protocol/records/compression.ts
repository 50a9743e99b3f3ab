// Compression codecs of Kafka record batches (the low 3 attribute bits): none=0, gzip=1, snappy=2, lz4=3,
// zstd=4, with the exact stream framings Kafka uses, compressing and decompressing synchronously.
//
//   gzip    RFC 1952 gzip stream (Java's GZIPOutputStream); concatenated members are accepted.
//   snappy  snappy-java's "xerial" stream: 8-byte magic 0x82 "SNAPPY" 0x00, int32 version 1, int32
//           compatible version 1, then blocks of (int32 BE compressed length, raw snappy block) of at most
//           32 KiB of input each. This is what Kafka's Java producer writes and what we write. On decode a
//           raw (unframed) snappy block is also accepted, as snappy-java's SnappyInputStream does, since
//           some clients (KafkaJS's snappy codec, older librdkafka) send raw snappy.
//   lz4     LZ4 frame format (magic 0x184D2204) with independent 64 KiB blocks and no checksums, as Kafka
//           writes it; on decode every frame option but preset dictionaries is accepted (linked blocks,
//           block/content checksums, content size, several frames, skippable frames). The header
//           checksum is xxh32(descriptor) >> 8 (fixed by KIP-57); legacy magic 0 messages were written
//           with the checksum taken over the magic too, and are accepted when the caller says so.
//   zstd    standard zstd frames (KIP-110), level 3 by default like Kafka.
//
// Decompression is bounded: the caller gives the most bytes it will accept and every codec stops (with a
// CorruptRecordError) before producing more, without trusting any size field of the stream for an
// allocation. Garbage gives a CorruptRecordError (Kafka error CORRUPT_MESSAGE), never another error.

import { gunzipSync, gzipSync, constants as zlibConstants } from "node:zlib";
import { compressFrameSync, uncompressSync as lz4UncompressBlock } from "lz4-napi";
import { compressSync as snappyCompressSync, uncompressSync as snappyUncompressSync } from "snappy";
import zstd from "zstd-napi/binding.js";
import { CorruptRecordError } from "./corrupt-record-error.js";
import { xxhash32 } from "./xxhash32.js";

export const CompressionType = {
  None: 0,
  Gzip: 1,
  Snappy: 2,
  Lz4: 3,
  Zstd: 4,
} as const;
export type CompressionType = (typeof CompressionType)[keyof typeof CompressionType];

const NAMES = ["none", "gzip", "snappy", "lz4", "zstd"] as const;
export type CompressionTypeName = (typeof NAMES)[number];

/** Kafka's name of a codec ("none", "gzip", "snappy", "lz4", "zstd"), as in compression.type. */
export function compressionTypeName(type: number): string {
  return NAMES[type] ?? `unknown(${type})`;
}

/** The codec for a compression.type name, or undefined. */
export function compressionTypeForName(name: string): CompressionType | undefined {
  const i = (NAMES as readonly string[]).indexOf(name.toLowerCase());
  return i < 0 ? undefined : (i as CompressionType);
}

export function isCompressionType(id: number): id is CompressionType {
  return Number.isInteger(id) && id >= 0 && id <= 4;
}

/** Default bound on the bytes a compressed batch may decompress to. */
export const DEFAULT_MAX_DECOMPRESSED_BYTES = 64 * 1024 * 1024;

export interface CompressOptions {
  /** gzip 1-9 (default 6, zlib's default like Java's Deflater), zstd 1-22 (default 3). Ignored otherwise. */
  level?: number;
}

export interface DecompressOptions {
  /** Accept the pre-KIP-57 LZ4 header checksum (legacy magic 0 messages only). */
  lz4LegacyHeaderChecksum?: boolean;
}

/** Compresses `data` with the codec's Kafka framing. */
export function compress(type: CompressionType, data: Buffer, options: CompressOptions = {}): Buffer {
  switch (type) {
    case CompressionType.None:
      return data;
    case CompressionType.Gzip:
      return gzipSync(data, { level: options.level ?? zlibConstants.Z_DEFAULT_COMPRESSION });
    case CompressionType.Snappy:
      return xerialSnappyCompress(data);
    case CompressionType.Lz4:
      return compressFrameSync(data);
    case CompressionType.Zstd:
      return zstdCompress(data, options.level ?? 3);
    default:
      throw new CorruptRecordError(`unknown compression type ${type as number}`);
  }
}

/**
 * Decompresses `data` and returns at most `maxOutputBytes` bytes; a stream that would produce more, or
 * that is not a valid stream of the codec, gives a CorruptRecordError.
 */
export function decompress(
  type: CompressionType,
  data: Buffer,
  maxOutputBytes: number = DEFAULT_MAX_DECOMPRESSED_BYTES,
  options: DecompressOptions = {},
): Buffer {
  if (!(maxOutputBytes >= 0)) throw new RangeError(`maxOutputBytes must be >= 0, got ${maxOutputBytes}`);
  const limit = Math.min(Math.floor(maxOutputBytes), 0x7fffffff);
  switch (type) {
    case CompressionType.None:
      if (data.length > limit) throw tooLarge("uncompressed", limit);
      return data;
    case CompressionType.Gzip:
      return gzipDecompress(data, limit);
    case CompressionType.Snappy:
      return snappyDecompress(data, limit);
    case CompressionType.Lz4:
      return lz4FrameDecompress(data, limit, options.lz4LegacyHeaderChecksum === true);
    case CompressionType.Zstd:
      return zstdDecompress(data, limit);
    default:
      throw new CorruptRecordError(`unknown compression type ${type as number}`);
  }
}

function tooLarge(codec: string, limit: number): CorruptRecordError {
  return new CorruptRecordError(`${codec} data decompresses to more than the ${limit}-byte limit`);
}

function corrupt(codec: string, e: unknown): CorruptRecordError {
  if (e instanceof CorruptRecordError) return e;
  return new CorruptRecordError(`invalid ${codec} data: ${e instanceof Error ? e.message : String(e)}`);
}

function concat(chunks: Buffer[], total: number): Buffer {
  if (chunks.length === 0) return Buffer.alloc(0);
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total);
}

// gzip ----------------------------------------------------------------------------------------------------

function gzipDecompress(data: Buffer, limit: number): Buffer {
  let out: Buffer;
  try {
    // zlib stops and throws once the output would pass maxOutputLength.
    out = gunzipSync(data, { maxOutputLength: Math.max(1, limit) });
  } catch (e) {
    if ((e as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") throw tooLarge("gzip", limit);
    throw corrupt("gzip", e);
  }
  if (out.length > limit) throw tooLarge("gzip", limit);
  return out;
}

// snappy (xerial framing) ---------------------------------------------------------------------------------

const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const XERIAL_HEADER_SIZE = 16;
const XERIAL_VERSION = 1;
const XERIAL_COMPATIBLE_VERSION = 1;
/** snappy-java's default block size, used by Kafka's SnappyOutputStream. */
const XERIAL_BLOCK_SIZE = 32 * 1024;

function xerialSnappyCompress(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  const header = Buffer.alloc(XERIAL_HEADER_SIZE);
  XERIAL_MAGIC.copy(header, 0);
  header.writeInt32BE(XERIAL_VERSION, 8);
  header.writeInt32BE(XERIAL_COMPATIBLE_VERSION, 12);
  parts.push(header);
  let total = XERIAL_HEADER_SIZE;
  for (let p = 0; p < data.length; p += XERIAL_BLOCK_SIZE) {
    const block = snappyCompressSync(data.subarray(p, Math.min(data.length, p + XERIAL_BLOCK_SIZE)), {
      copyOutputData: true,
    });
    const len = Buffer.allocUnsafe(4);
    len.writeInt32BE(block.length, 0);
    parts.push(len, block);
    total += 4 + block.length;
  }
  return Buffer.concat(parts, total);
}

function isXerial(data: Buffer): boolean {
  return data.length >= XERIAL_MAGIC.length && data.compare(XERIAL_MAGIC, 0, 8, 0, 8) === 0;
}

/** The uncompressed length in a raw snappy block's preamble (a uvarint of at most 32 bits). */
function snappyPreamble(block: Buffer): number {
  let value = 0;
  for (let i = 0; i < 5; i++) {
    if (i >= block.length) throw new CorruptRecordError("invalid snappy data: truncated length preamble");
    const b = block[i];
    value += (b & 0x7f) * 2 ** (7 * i);
    if ((b & 0x80) === 0) {
      if (value > 0xffffffff) break;
      return value;
    }
  }
  throw new CorruptRecordError("invalid snappy data: bad length preamble");
}

/** Decompresses one raw snappy block, refusing (before allocating) one that would exceed `room` bytes. */
function snappyRawBlock(block: Buffer, room: number, limit: number): Buffer {
  const expected = snappyPreamble(block);
  if (expected > room) throw tooLarge("snappy", limit);
  let out: Buffer;
  try {
    // copyOutputData: a plain Buffer is several times faster to create and free than an external one.
    out = snappyUncompressSync(block, { asBuffer: true, copyOutputData: true }) as Buffer;
  } catch (e) {
    throw corrupt("snappy", e);
  }
  if (out.length !== expected) {
    throw new CorruptRecordError(
      `invalid snappy data: block gave ${out.length} bytes, preamble says ${expected}`,
    );
  }
  return out;
}

function snappyDecompress(data: Buffer, limit: number): Buffer {
  if (!isXerial(data)) return snappyRawBlock(data, limit, limit);
  if (data.length < XERIAL_HEADER_SIZE)
    throw new CorruptRecordError("invalid snappy data: truncated xerial header");
  const chunks: Buffer[] = [];
  let total = 0;
  let p = XERIAL_HEADER_SIZE;
  while (p < data.length) {
    if (p + 4 > data.length)
      throw new CorruptRecordError("invalid snappy data: truncated xerial block length");
    const size = data.readInt32BE(p);
    p += 4;
    if (size < 0 || size > data.length - p) {
      throw new CorruptRecordError(
        `invalid snappy data: xerial block of ${size} bytes, ${data.length - p} present`,
      );
    }
    if (size > 0) {
      const out = snappyRawBlock(data.subarray(p, p + size), limit - total, limit);
      chunks.push(out);
      total += out.length;
    }
    p += size;
  }
  return concat(chunks, total);
}

// lz4 frame -----------------------------------------------------------------------------------------------

const LZ4_MAGIC = 0x184d2204;
const LZ4_SKIPPABLE_MASK = 0xfffffff0;
const LZ4_SKIPPABLE_MAGIC = 0x184d2a50;
const LZ4_BLOCK_MAX_SIZES: Readonly<Record<number, number>> = {
  4: 64 << 10,
  5: 256 << 10,
  6: 1 << 20,
  7: 4 << 20,
};
const LZ4_UNCOMPRESSED_BIT = 0x80000000;
const LZ4_WINDOW = 64 * 1024;

function lz4Error(message: string): CorruptRecordError {
  return new CorruptRecordError(`invalid lz4 data: ${message}`);
}

/** The last 64 KiB of the frame's output so far: the dictionary of a linked (dependent) block. */
function lz4Window(chunks: Buffer[], from: number): Buffer {
  const tail: Buffer[] = [];
  let n = 0;
  for (let i = chunks.length - 1; i >= from && n < LZ4_WINDOW; i--) {
    tail.unshift(chunks[i]);
    n += chunks[i].length;
  }
  const joined = Buffer.concat(tail, n);
  return joined.length > LZ4_WINDOW ? joined.subarray(joined.length - LZ4_WINDOW) : joined;
}

function lz4FrameDecompress(data: Buffer, limit: number, legacyHeaderChecksum: boolean): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  let p = 0;
  let frames = 0;
  while (p < data.length) {
    if (p + 4 > data.length) throw lz4Error("truncated frame magic");
    const magic = data.readUInt32LE(p);
    if ((magic & LZ4_SKIPPABLE_MASK) >>> 0 === LZ4_SKIPPABLE_MAGIC) {
      if (p + 8 > data.length) throw lz4Error("truncated skippable frame");
      const size = data.readUInt32LE(p + 4);
      if (size > data.length - p - 8) throw lz4Error("truncated skippable frame");
      p += 8 + size;
      continue;
    }
    if (magic !== LZ4_MAGIC) throw lz4Error(`bad frame magic 0x${magic.toString(16)}`);
    if (p + 7 > data.length) throw lz4Error("truncated frame descriptor");
    const flg = data[p + 4];
    const bd = data[p + 5];
    if (flg >> 6 !== 1) throw lz4Error(`unsupported frame version ${flg >> 6}`);
    if ((flg & 0x02) !== 0 || (bd & 0x8f) !== 0) throw lz4Error("reserved descriptor bits are set");
    const independent = (flg & 0x20) !== 0;
    const blockChecksum = (flg & 0x10) !== 0;
    const hasContentSize = (flg & 0x08) !== 0;
    const contentChecksum = (flg & 0x04) !== 0;
    if ((flg & 0x01) !== 0) throw lz4Error("preset dictionaries are not supported");
    const blockMaxSize = LZ4_BLOCK_MAX_SIZES[(bd >> 4) & 0x07];
    if (blockMaxSize === undefined) throw lz4Error(`unsupported block maximum size id ${(bd >> 4) & 0x07}`);
    const descriptorEnd = p + 6 + (hasContentSize ? 8 : 0);
    if (descriptorEnd + 1 > data.length) throw lz4Error("truncated frame descriptor");
    const hc = data[descriptorEnd];
    if (hc !== (xxhash32(data, 0, p + 4, descriptorEnd) >>> 8) % 256) {
      // Before KIP-57 Kafka hashed the magic number too; only legacy magic 0 messages may carry that.
      if (!legacyHeaderChecksum || hc !== (xxhash32(data, 0, p, descriptorEnd) >>> 8) % 256) {
        throw lz4Error("frame descriptor checksum mismatch");
      }
    }
    let declaredSize = -1;
    if (hasContentSize) {
      const declared = data.readBigUInt64LE(p + 6);
      if (declared > BigInt(limit - total)) throw tooLarge("lz4", limit);
      declaredSize = Number(declared);
    }
    p = descriptorEnd + 1;
    const frameFirstChunk = chunks.length;
    const frameStartTotal = total;
    for (;;) {
      if (p + 4 > data.length) throw lz4Error("truncated block size");
      const word = data.readUInt32LE(p);
      p += 4;
      if (word === 0) break; // EndMark
      const size = word & 0x7fffffff;
      if (size > blockMaxSize)
        throw lz4Error(`block of ${size} bytes is larger than the ${blockMaxSize}-byte maximum`);
      if (size + (blockChecksum ? 4 : 0) > data.length - p) throw lz4Error("truncated block");
      const block = data.subarray(p, p + size);
      p += size;
      if (blockChecksum) {
        if (xxhash32(block) !== data.readUInt32LE(p)) throw lz4Error("block checksum mismatch");
        p += 4;
      }
      let out: Buffer;
      if ((word & LZ4_UNCOMPRESSED_BIT) !== 0) {
        if (size > limit - total) throw tooLarge("lz4", limit);
        out = block;
      } else {
        // A compressed LZ4 block expands at most ~255x; never give the decoder more room than that, the
        // block maximum, or one byte beyond the caller's limit.
        const room = Math.min(blockMaxSize, size * 256 + 64, limit - total + 1);
        const prefixed = Buffer.allocUnsafe(4 + size);
        prefixed.writeUInt32LE(room, 0);
        block.copy(prefixed, 4);
        try {
          out =
            !independent && chunks.length > frameFirstChunk
              ? lz4UncompressBlock(prefixed, lz4Window(chunks, frameFirstChunk))
              : lz4UncompressBlock(prefixed);
        } catch (e) {
          if (room === limit - total + 1) throw tooLarge("lz4", limit);
          throw corrupt("lz4", e);
        }
        if (out.length > limit - total) throw tooLarge("lz4", limit);
      }
      chunks.push(out);
      total += out.length;
    }
    if (contentChecksum) {
      if (p + 4 > data.length) throw lz4Error("truncated content checksum");
      const content = concat(chunks.slice(frameFirstChunk), total - frameStartTotal);
      if (xxhash32(content) !== data.readUInt32LE(p)) throw lz4Error("content checksum mismatch");
      p += 4;
    }
    if (declaredSize >= 0 && total - frameStartTotal !== declaredSize) {
      throw lz4Error(`frame declares ${declaredSize} bytes of content but holds ${total - frameStartTotal}`);
    }
    frames++;
  }
  if (frames === 0) throw lz4Error("no lz4 frame");
  return concat(chunks, total);
}

// zstd ----------------------------------------------------------------------------------------------------

let zstdCCtx: InstanceType<typeof zstd.CCtx> | undefined;
let zstdDCtx: InstanceType<typeof zstd.DCtx> | undefined;
const ZSTD_OUT_CHUNK = zstd.dStreamOutSize();

function zstdCompress(data: Buffer, level: number): Buffer {
  zstdCCtx ??= new zstd.CCtx();
  const dst = Buffer.allocUnsafe(zstd.compressBound(data.length));
  const n = zstdCCtx.compress(dst, data, level);
  return Buffer.from(dst.subarray(0, n));
}

function zstdDecompress(data: Buffer, limit: number): Buffer {
  zstdDCtx ??= new zstd.DCtx();
  const dctx = zstdDCtx;
  dctx.reset(zstd.ResetDirective.sessionOnly);
  // The window is the decoder's one allocation not driven by output: cap it (8 MiB covers every level a
  // producer streams with; a larger limit allows up to libzstd's default 128 MiB).
  const windowLog = Math.max(23, Math.min(27, Math.ceil(Math.log2(Math.max(2, limit)))));
  dctx.setParameter(zstd.DParameter.windowLogMax, windowLog);
  const chunks: Buffer[] = [];
  let total = 0;
  let inPos = 0;
  try {
    for (;;) {
      const room = limit + 1 - total; // one byte more than allowed, to notice overflow
      const size = Math.min(room, Math.max(ZSTD_OUT_CHUNK, (data.length - inPos) * 4));
      const out = Buffer.allocUnsafe(size);
      const [ret, produced, consumed] = dctx.decompressStream(out, data.subarray(inPos));
      inPos += consumed;
      if (produced > 0) {
        chunks.push(produced < size / 2 ? Buffer.from(out.subarray(0, produced)) : out.subarray(0, produced));
        total += produced;
      }
      if (total > limit) throw tooLarge("zstd", limit);
      if (ret === 0 && inPos >= data.length) break; // last frame complete and flushed
      if (inPos >= data.length && produced < size)
        throw new CorruptRecordError("invalid zstd data: truncated frame");
      if (produced === 0 && consumed === 0) throw new CorruptRecordError("invalid zstd data: no progress");
    }
  } catch (e) {
    dctx.reset(zstd.ResetDirective.sessionOnly);
    throw corrupt("zstd", e);
  }
  return concat(chunks, total);
}
