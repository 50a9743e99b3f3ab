// Compression codecs: round trips of random data for every codec, the Kafka framings (xerial snappy,
// LZ4 frame with its header checksum), the decode-side variants Kafka accepts, bounded decompression
// (zip bombs stop at the caller's limit) and garbage giving CorruptRecordError.

import assert from "node:assert/strict";
import { test } from "node:test";
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { compressFrameSync, compressSync as lz4BlockCompress } from "lz4-napi";
import { compressSync as snappyRaw } from "snappy";
import {
  CompressionType,
  CorruptRecordError,
  compress,
  compressionTypeForName,
  compressionTypeName,
  decompress,
  xxhash32,
} from "../../../src/protocol/records/index.js";

const CODECS = [
  CompressionType.None,
  CompressionType.Gzip,
  CompressionType.Snappy,
  CompressionType.Lz4,
  CompressionType.Zstd,
] as const;
const COMPRESSED = CODECS.filter((c) => c !== CompressionType.None);

test("codec ids and Kafka names", () => {
  assert.deepEqual(
    CODECS.map((c) => compressionTypeName(c)),
    ["none", "gzip", "snappy", "lz4", "zstd"],
  );
  assert.equal(compressionTypeForName("ZSTD"), CompressionType.Zstd);
  assert.equal(compressionTypeForName("producer"), undefined);
});

test("xxhash32 matches the reference vectors", () => {
  assert.equal(xxhash32(Buffer.alloc(0)), 0x02cc5d05);
  assert.equal(xxhash32(Buffer.from("a")), 0x550d7456);
  assert.equal(xxhash32(Buffer.from("abc")), 0x32d153ff);
  assert.equal(xxhash32(Buffer.from("Nobody inspects the spammish repetition")), 0xe2293b2f);
  // The header checksum byte of a standard frame (FLG 0x60, BD 0x40) is 0x82.
  assert.equal((xxhash32(Buffer.from([0x60, 0x40])) >>> 8) & 0xff, 0x82);
});

const payload = fc.oneof(
  fc.uint8Array({ maxLength: 3000 }).map((a) => Buffer.from(a)),
  // Compressible: repeated short patterns, sometimes longer than one 32/64 KiB block.
  fc
    .tuple(fc.uint8Array({ minLength: 1, maxLength: 20 }), fc.integer({ min: 1, max: 9000 }))
    .map(([p, n]) => Buffer.concat(Array.from({ length: n }, () => Buffer.from(p)))),
);

for (const codec of CODECS) {
  test(`${compressionTypeName(codec)}: random data round-trips`, () => {
    fc.assert(
      fc.property(payload, (data) => {
        const c = compress(codec, data);
        assert.deepEqual(decompress(codec, c, data.length), data);
      }),
      { numRuns: 60 },
    );
    assert.deepEqual(decompress(codec, compress(codec, Buffer.alloc(0)), 0), Buffer.alloc(0));
  });
}

test("snappy writes xerial framing: header, version 1, compatible 1, 32 KiB blocks of raw snappy", () => {
  const data = Buffer.alloc(100_000);
  for (let i = 0; i < data.length; i++) data[i] = (i * 7) % 251;
  const c = compress(CompressionType.Snappy, data);
  assert.deepEqual(c.subarray(0, 8), Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]));
  assert.equal(c.readInt32BE(8), 1);
  assert.equal(c.readInt32BE(12), 1);
  let p = 16;
  const blocks: Buffer[] = [];
  while (p < c.length) {
    const n = c.readInt32BE(p);
    blocks.push(c.subarray(p + 4, p + 4 + n));
    p += 4 + n;
  }
  assert.equal(blocks.length, 4);
  const sizes = blocks.map((b) => decompress(CompressionType.Snappy, b, 1 << 20).length);
  assert.deepEqual(sizes, [32768, 32768, 32768, 100_000 - 3 * 32768]);
});

test("snappy decode accepts raw unframed snappy (as snappy-java's SnappyInputStream does)", () => {
  const data = Buffer.from("raw snappy without xerial framing ".repeat(50));
  assert.deepEqual(decompress(CompressionType.Snappy, snappyRaw(data), data.length), data);
});

test("lz4 writes the frame Kafka writes: magic, FLG 0x60 (v01, independent blocks), BD 0x40 (64 KiB)", () => {
  const c = compress(CompressionType.Lz4, Buffer.from("hello lz4"));
  assert.equal(c.readUInt32LE(0), 0x184d2204);
  assert.equal(c[4], 0x60);
  assert.equal(c[5], 0x40);
  assert.equal(c[6], (xxhash32(c, 0, 4, 6) >>> 8) & 0xff);
});

/** Builds an LZ4 frame with chosen options from raw blocks compressed by lz4-napi. */
function lz4Frame(
  data: Buffer,
  opts: {
    blockSize?: number;
    linked?: boolean;
    blockChecksum?: boolean;
    contentChecksum?: boolean;
    contentSize?: bigint;
    storeUncompressed?: boolean;
    legacyHeaderChecksum?: boolean;
  },
): Buffer {
  const blockSize = opts.blockSize ?? 65536;
  let flg = 0x40 | (opts.linked ? 0 : 0x20);
  if (opts.blockChecksum) flg |= 0x10;
  if (opts.contentSize !== undefined) flg |= 0x08;
  if (opts.contentChecksum) flg |= 0x04;
  const head = [Buffer.from([0x04, 0x22, 0x4d, 0x18, flg, 0x40])];
  if (opts.contentSize !== undefined) {
    const cs = Buffer.alloc(8);
    cs.writeBigUInt64LE(opts.contentSize);
    head.push(cs);
  }
  const h = Buffer.concat(head);
  const hc = opts.legacyHeaderChecksum ? xxhash32(h, 0, 0, h.length) : xxhash32(h, 0, 4, h.length);
  const parts: Buffer[] = [h, Buffer.from([(hc >>> 8) & 0xff])];
  for (let p = 0; p < data.length; p += blockSize) {
    const raw = data.subarray(p, Math.min(data.length, p + blockSize));
    const dict = opts.linked && p > 0 ? data.subarray(Math.max(0, p - 65536), p) : undefined;
    const block = opts.storeUncompressed
      ? raw
      : (dict ? lz4BlockCompress(raw, dict) : lz4BlockCompress(raw)).subarray(4);
    const len = Buffer.alloc(4);
    len.writeUInt32LE((block.length | (opts.storeUncompressed ? 0x80000000 : 0)) >>> 0);
    parts.push(len, block);
    if (opts.blockChecksum) {
      const bc = Buffer.alloc(4);
      bc.writeUInt32LE(xxhash32(block));
      parts.push(bc);
    }
  }
  parts.push(Buffer.alloc(4));
  if (opts.contentChecksum) {
    const cc = Buffer.alloc(4);
    cc.writeUInt32LE(xxhash32(data));
    parts.push(cc);
  }
  return Buffer.concat(parts);
}

test("lz4 decode accepts every frame option Kafka's and librdkafka's readers do", () => {
  const data = Buffer.alloc(200_000);
  for (let i = 0; i < data.length; i++) data[i] = (i % 97) ^ (i >> 9);
  const variants = [
    {},
    { linked: true },
    { blockChecksum: true, contentChecksum: true },
    { contentSize: BigInt(data.length) },
    { storeUncompressed: true },
    { linked: true, blockChecksum: true, contentChecksum: true, contentSize: BigInt(data.length) },
  ];
  for (const v of variants) {
    assert.deepEqual(
      decompress(CompressionType.Lz4, lz4Frame(data, v), data.length),
      data,
      JSON.stringify(v, (_, x) => (typeof x === "bigint" ? `${x}` : x)),
    );
  }
  // Two concatenated frames and a skippable frame in between.
  const skippable = Buffer.from([0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 9, 9, 9]);
  const two = Buffer.concat([
    compressFrameSync(data.subarray(0, 1000)),
    skippable,
    compressFrameSync(data.subarray(1000, 3000)),
  ]);
  assert.deepEqual(decompress(CompressionType.Lz4, two, 3000), data.subarray(0, 3000));
});

test("lz4 header checksum: the pre-KIP-57 form is accepted only for legacy magic 0", () => {
  const data = Buffer.from("legacy lz4 ".repeat(100));
  const legacy = lz4Frame(data, { legacyHeaderChecksum: true });
  assert.throws(() => decompress(CompressionType.Lz4, legacy, 1 << 20), /checksum/);
  assert.deepEqual(decompress(CompressionType.Lz4, legacy, 1 << 20, { lz4LegacyHeaderChecksum: true }), data);
});

test("lz4 bad checksums, bad flags and truncation are CorruptRecordError", () => {
  const data = Buffer.from("checksummed ".repeat(1000));
  const good = lz4Frame(data, {
    blockChecksum: true,
    contentChecksum: true,
    contentSize: BigInt(data.length),
  });
  const cases: Array<[string, Buffer]> = [];
  for (const at of [4, 5, 6, 15, 20, good.length - 6, good.length - 1]) {
    const b = Buffer.from(good);
    b[at] ^= 0x10;
    cases.push([`flip ${at}`, b]);
  }
  const wrongSize = lz4Frame(data, { contentSize: BigInt(data.length + 1) });
  cases.push(["content size mismatch", wrongSize]);
  for (let cut = 0; cut < good.length; cut += 97) cases.push([`cut ${cut}`, good.subarray(0, cut)]);
  for (const [name, b] of cases) {
    assert.throws(() => decompress(CompressionType.Lz4, b, 1 << 20), CorruptRecordError, name);
  }
});

test("zstd decode accepts several concatenated frames", () => {
  const a = Buffer.from("first frame ".repeat(100));
  const b = Buffer.from("second frame ".repeat(100));
  const two = Buffer.concat([compress(CompressionType.Zstd, a), compress(CompressionType.Zstd, b)]);
  assert.deepEqual(decompress(CompressionType.Zstd, two, 10_000), Buffer.concat([a, b]));
});

test("gzip output is the standard stream node's zlib (and so KafkaJS) produces", () => {
  const data = Buffer.from("gzip ".repeat(100));
  assert.deepEqual(compress(CompressionType.Gzip, data), gzipSync(data));
  const twoMembers = Buffer.concat([gzipSync(Buffer.from("a")), gzipSync(Buffer.from("b"))]);
  assert.deepEqual(decompress(CompressionType.Gzip, twoMembers, 10), Buffer.from("ab"));
});

test("decompression stops at the limit: zip bombs give CorruptRecordError, not a big allocation", () => {
  const bomb = Buffer.alloc(32 * 1024 * 1024); // 32 MiB of zeros: KiBs compressed (snappy: ~1.5 MiB)
  const limit = 1024 * 1024;
  for (const codec of COMPRESSED) {
    const c = compress(codec, bomb);
    assert.ok(c.length < 4 * 1024 * 1024, `${compressionTypeName(codec)} compressed to ${c.length}`);
    const before = process.memoryUsage().rss;
    assert.throws(
      () => decompress(codec, c, limit),
      (e: unknown) => e instanceof CorruptRecordError && /limit/.test(e.message),
      compressionTypeName(codec),
    );
    const grown = process.memoryUsage().rss - before;
    assert.ok(grown < 48 * 1024 * 1024, `${compressionTypeName(codec)} grew rss by ${grown}`);
    // Exactly at the limit is fine.
    const atLimit = Buffer.alloc(limit, 1);
    assert.equal(decompress(codec, compress(codec, atLimit), limit).length, limit);
    assert.throws(() => decompress(codec, compress(codec, atLimit), limit - 1), /limit/);
  }
  assert.throws(() => decompress(CompressionType.None, Buffer.alloc(10), 9), /limit/);
});

test("size fields in streams are not trusted for allocation", () => {
  // Raw snappy whose preamble claims 4 GiB.
  const snappyLie = Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x00]);
  assert.throws(() => decompress(CompressionType.Snappy, snappyLie, 1 << 20), /limit/);
  // Xerial block length beyond the stream.
  const xerial = Buffer.concat([
    compress(CompressionType.Snappy, Buffer.alloc(0)),
    Buffer.from([0x7f, 0xff, 0xff, 0xff, 1]),
  ]);
  assert.throws(() => decompress(CompressionType.Snappy, xerial, 1 << 20), CorruptRecordError);
  // LZ4 frame declaring an 2^60-byte content size.
  assert.throws(
    () => decompress(CompressionType.Lz4, lz4Frame(Buffer.from("x"), { contentSize: 1n << 60n }), 1 << 20),
    /limit/,
  );
  // zstd frame header declaring a huge content size (single-segment flag, 8-byte size) and no blocks.
  const zstdLie = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f]);
  assert.throws(() => decompress(CompressionType.Zstd, zstdLie, 1 << 20), CorruptRecordError);
});

test("garbage and truncated streams give CorruptRecordError for every codec", () => {
  const data = Buffer.from("some record bytes that compress ".repeat(200));
  fc.assert(
    fc.property(
      fc.constantFrom(...COMPRESSED),
      fc.uint8Array({ maxLength: 200 }),
      fc.integer({ min: 0, max: 10_000 }),
      fc.nat(),
      (codec, garbage, cut, flip) => {
        const good = compress(codec, data);
        const inputs = [
          Buffer.from(garbage),
          good.subarray(0, cut % good.length),
          (() => {
            const b = Buffer.from(good);
            b[flip % b.length] ^= 0xff;
            return b;
          })(),
        ];
        for (const input of inputs) {
          try {
            const out = decompress(codec, input, 1 << 20);
            assert.ok(out.length <= 1 << 20);
          } catch (e) {
            assert.ok(e instanceof CorruptRecordError, `${compressionTypeName(codec)}: ${String(e)}`);
          }
        }
      },
    ),
    { numRuns: 300 },
  );
  for (const codec of COMPRESSED) {
    assert.throws(
      () => decompress(codec, Buffer.alloc(0), 100),
      CorruptRecordError,
      compressionTypeName(codec),
    );
  }
});
