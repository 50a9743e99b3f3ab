// Whole batches: random records round-trip through buildRecordBatch / decodeRecordBatches for every
// codec (null keys, empty values, headers, large varints, negative timestamp deltas), KafkaJS decodes what
// we build, and malformed batches (bad varints, wrong record counts, mutated bytes) only ever give
// CorruptRecordError.

import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import {
  buildRecordBatch,
  CompressionType,
  CorruptRecordError,
  compress,
  compressionTypeName,
  type DecodedRecord,
  decodeBatchRecords,
  decodeRecordBatches,
  RECORD_BATCH_OVERHEAD,
  RECORDS_COUNT_OFFSET,
  RECORDS_OFFSET,
  type RecordInput,
  TimestampType,
  writeRecordBatchCrc,
} from "../../../src/protocol/records/index.js";
import { kafkaJsDecodeBatch } from "./kafkajs-interop.js";

const CODECS = [
  CompressionType.None,
  CompressionType.Gzip,
  CompressionType.Snappy,
  CompressionType.Lz4,
  CompressionType.Zstd,
] as const;

const bytes = (max: number) => fc.uint8Array({ maxLength: max }).map((a) => Buffer.from(a));
const nullableBytes = fc.oneof(fc.constant(null), fc.constant(Buffer.alloc(0)), bytes(300), bytes(20_000));
const timestamp = fc.oneof(
  fc.bigInt({ min: 0n, max: 4_000_000_000_000n }),
  fc.bigInt({ min: -(2n ** 40n), max: 2n ** 40n }),
  fc.constantFrom(-1n, 0n, 2n ** 55n),
);
const recordArb: fc.Arbitrary<RecordInput> = fc.record({
  key: nullableBytes,
  value: nullableBytes,
  timestamp,
  headers: fc.array(
    fc.record({
      key: fc.string({ unit: "binary", maxLength: 30 }),
      value: fc.oneof(fc.constant(null), bytes(50)),
    }),
    { maxLength: 4 },
  ),
});
const batchArb = fc.record({
  records: fc.array(recordArb, { minLength: 1, maxLength: 12 }),
  baseOffset: fc.bigInt({ min: 0n, max: 2n ** 62n }),
  // Offset deltas with gaps (as after compaction), including ones needing 4- and 5-byte varints.
  gaps: fc.array(fc.integer({ min: 1, max: 50_000_000 }), { minLength: 12, maxLength: 12 }),
  producerId: fc.bigInt({ min: -1n, max: 2n ** 63n - 1n }),
  producerEpoch: fc.integer({ min: -1, max: 32767 }),
  baseSequence: fc.integer({ min: -1, max: 2 ** 31 - 1 }),
  isTransactional: fc.boolean(),
});

function maxOf(values: bigint[]): bigint {
  let max = values[0];
  for (const v of values) if (v > max) max = v;
  return max;
}

function expected(records: readonly RecordInput[], baseOffset: bigint, deltas: number[]): DecodedRecord[] {
  return records.map((r, i) => ({
    offset: baseOffset + BigInt(deltas[i]),
    timestamp: r.timestamp ?? 0n,
    key: r.key ?? null,
    value: r.value ?? null,
    headers: (r.headers ?? []).map((h) => ({ key: h.key, value: h.value })),
  }));
}

for (const compression of CODECS) {
  test(`random records round-trip through a ${compressionTypeName(compression)} batch`, () => {
    fc.assert(
      fc.property(batchArb, (b) => {
        const deltas: number[] = [];
        let d = 0;
        for (let i = 0; i < b.records.length; i++) {
          deltas.push(d);
          d += i % 3 === 0 ? 1 : b.gaps[i];
        }
        const records = b.records.map((r, i) => ({ ...r, offsetDelta: deltas[i] }));
        const buf = buildRecordBatch({ ...b, records, compression });
        const [decoded, ...rest] = decodeRecordBatches(buf);
        assert.equal(rest.length, 0);
        const h = decoded.header;
        assert.equal(h.baseOffset, b.baseOffset);
        assert.equal(h.recordsCount, records.length);
        assert.equal(h.lastOffsetDelta, deltas[deltas.length - 1]);
        assert.equal(h.compression, compression);
        assert.equal(h.producerId, b.producerId);
        assert.equal(h.producerEpoch, b.producerEpoch);
        assert.equal(h.baseSequence, b.baseSequence);
        assert.equal(h.isTransactional, b.isTransactional);
        assert.equal(h.baseTimestamp, records[0].timestamp);
        assert.equal(h.maxTimestamp, maxOf(records.map((r) => r.timestamp as bigint)));
        assert.deepEqual(decoded.records, expected(records, b.baseOffset, deltas));
        assert.deepEqual(decodeBatchRecords(buf), decoded.records);
      }),
      { numRuns: 40 },
    );
  });
}

test("KafkaJS decodes our batches (uncompressed and gzip) to the same records", async () => {
  const records = [
    {
      key: Buffer.from("a"),
      value: Buffer.from("1"),
      timestamp: 1_600_000_000_000n,
      headers: [{ key: "h", value: Buffer.from("v") }],
    },
    { key: null, value: Buffer.alloc(0), timestamp: 1_599_999_999_000n },
    { key: Buffer.from("c"), value: null, timestamp: 1_600_000_000_500n },
  ];
  for (const compression of [CompressionType.None, CompressionType.Gzip]) {
    const buf = buildRecordBatch({
      records,
      compression,
      baseOffset: 1000n,
      producerId: 77n,
      isTransactional: true,
    });
    const theirs = await kafkaJsDecodeBatch(buf);
    assert.equal(theirs.firstOffset, "1000");
    assert.equal(theirs.producerId, "77");
    assert.equal(theirs.inTransaction, true);
    assert.deepEqual(
      theirs.records.map((r) => [r.offset, r.timestamp, r.key, r.value]),
      records.map((r, i) => [`${1000 + i}`, `${r.timestamp}`, r.key, r.value]),
    );
    assert.deepEqual(theirs.records[0].headers, { h: Buffer.from("v") });
  }
});

test("LogAppendTime batches give every record the batch's maxTimestamp", () => {
  const buf = buildRecordBatch({
    timestampType: TimestampType.LogAppendTime,
    timestamp: 1234n,
    records: [{ value: Buffer.from("a"), timestamp: 1n }, { value: Buffer.from("b") }],
  });
  const [d] = decodeRecordBatches(buf);
  assert.equal(d.header.timestampType, TimestampType.LogAppendTime);
  assert.deepEqual(
    d.records.map((r) => r.timestamp),
    [1234n, 1234n],
  );
});

test("an empty batch (as compaction leaves) has a header and no records", () => {
  const buf = buildRecordBatch({ records: [], baseOffset: 10n, emptyLastOffsetDelta: 4, producerId: 3n });
  assert.equal(buf.length, RECORD_BATCH_OVERHEAD);
  const [d] = decodeRecordBatches(buf);
  assert.equal(d.header.lastOffsetDelta, 4);
  assert.deepEqual(d.records, []);
});

/** An uncompressed batch whose record bytes are replaced by `recordBytes` (CRC fixed up). */
function withRecords(
  recordBytes: Buffer,
  count: number,
  compression: CompressionType = CompressionType.None,
): Buffer {
  const header = buildRecordBatch({ records: [], compression: CompressionType.None }).subarray(
    0,
    RECORD_BATCH_OVERHEAD,
  );
  const payload = compress(compression, recordBytes);
  const b = Buffer.concat([header, payload]);
  b.writeInt32BE(b.length - 12, 8);
  b.writeInt16BE(compression, 21);
  b.writeInt32BE(count, RECORDS_COUNT_OFFSET);
  writeRecordBatchCrc(b);
  return b;
}

function expectInvalid(buf: Buffer, pattern: RegExp): void {
  assert.throws(
    () => decodeRecordBatches(buf),
    (e: unknown) => e instanceof CorruptRecordError && pattern.test(e.message),
  );
}

test("records that do not follow the format are INVALID_RECORD errors", () => {
  const one = buildRecordBatch({ records: [{ key: Buffer.from("k"), value: Buffer.from("v") }] });
  const recordBytes = one.subarray(RECORDS_OFFSET);
  for (const compression of [CompressionType.None, CompressionType.Zstd]) {
    // A record count larger than the bytes could hold, refused before reading.
    expectInvalid(withRecords(recordBytes, 1_000_000_000, compression), /declares 1000000000 records/);
    expectInvalid(withRecords(recordBytes, 2, compression), /declares 2 records/);
    expectInvalid(withRecords(recordBytes, -1, compression), /record count -1/);
    // Fewer records declared than present.
    expectInvalid(withRecords(Buffer.concat([recordBytes, recordBytes]), 1, compression), /remain after/);
    // A varint longer than 5 bytes as the record length.
    expectInvalid(
      withRecords(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 0, 0, 0, 0, 0]), 1, compression),
      /record length/,
    );
    // Record length larger than the bytes.
    expectInvalid(withRecords(Buffer.from([0x7e, 0, 0, 0, 0, 0, 0]), 1, compression), /invalid record size/);
    // A record whose fields use fewer bytes than its length.
    const padded = Buffer.from(recordBytes);
    padded[0] += 2;
    expectInvalid(withRecords(Buffer.concat([padded, Buffer.from([0, 0])]), 1, compression), /declares/);
    // Key length beyond the record; negative header count; negative header key size.
    expectInvalid(withRecords(Buffer.from([0x0c, 0, 0, 0, 0x7e, 0, 0, 0]), 1, compression), /key length/);
    expectInvalid(withRecords(Buffer.from([0x0c, 0, 0, 0, 1, 1, 0x01]), 1, compression), /header count/);
    expectInvalid(
      withRecords(Buffer.from([0x10, 0, 0, 0, 1, 1, 0x02, 0x01, 0x01]), 1, compression),
      /header key size/,
    );
  }
  // Unknown codec ids 5-7.
  const bad = Buffer.from(one);
  bad.writeInt16BE(5, 21);
  writeRecordBatchCrc(bad);
  expectInvalid(bad, /unknown compression type 5/);
});

test("a compressed batch that decompresses beyond the limit is refused", () => {
  const big = buildRecordBatch({
    compression: CompressionType.Gzip,
    records: Array.from({ length: 64 }, () => ({ value: Buffer.alloc(64 * 1024) })),
  });
  assert.ok(big.length < 64 * 1024);
  assert.throws(() => decodeBatchRecords(big, 1024 * 1024), /limit/);
  assert.throws(() => decodeRecordBatches(big, { maxDecompressedBytes: 1024 * 1024 }), /limit/);
  assert.equal(decodeBatchRecords(big, 8 * 1024 * 1024).length, 64);
});

test("mutated batches (CRC recomputed) decode or give CorruptRecordError, nothing else", () => {
  const bases = CODECS.map((compression) =>
    buildRecordBatch({
      compression,
      records: [
        {
          key: Buffer.from("key"),
          value: Buffer.from("value ".repeat(20)),
          headers: [{ key: "h", value: null }],
        },
        { key: null, value: Buffer.alloc(0), timestamp: -5n },
        { key: Buffer.alloc(200, 3), value: null },
      ],
    }),
  );
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: bases.length - 1 }),
      fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
      fc.boolean(),
      (which, edits, fixCrc) => {
        const b = Buffer.from(bases[which]);
        // Mostly inside the records (where the CRC fix-up lets the record parser see them), some anywhere.
        for (const [at, v] of edits) {
          b[at % 4 !== 0 ? RECORDS_OFFSET + (at % (b.length - RECORDS_OFFSET)) : at % b.length] = v;
        }
        try {
          if (fixCrc) writeRecordBatchCrc(b);
          decodeRecordBatches(b, { maxDecompressedBytes: 1 << 20 });
        } catch (e) {
          assert.ok(e instanceof CorruptRecordError, String(e));
        }
      },
    ),
    { numRuns: 1500 },
  );
});

test("random bytes never escape as anything but CorruptRecordError", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), fc.boolean(), (a, tail) => {
      try {
        decodeRecordBatches(Buffer.from(a), { allowIncompleteTail: tail });
      } catch (e) {
        assert.ok(e instanceof CorruptRecordError, String(e));
      }
    }),
    { numRuns: 2000 },
  );
});
