// Record batch v2 header: byte layout and CRC32C against batches encoded by KafkaJS, attribute bits,
// the in-place updates of the produce path, and the batch iterator's validation (sizes, magic, CRC,
// incomplete trailing batch).

import assert from "node:assert/strict";
import { test } from "node:test";
import { crc32c } from "@node-rs/crc32";
import {
  ATTRIBUTES_OFFSET,
  BATCH_LENGTH_OFFSET,
  buildRecordBatch,
  CompressionType,
  CorruptRecordError,
  CRC_OFFSET,
  computeRecordBatchCrc,
  decodeRecordBatches,
  isRecordBatchCrcValid,
  MAGIC_OFFSET,
  RECORD_BATCH_OVERHEAD,
  RECORDS_COUNT_OFFSET,
  RecordBatchIterator,
  readRecordBatchHeader,
  setBaseOffset,
  setMaxTimestamp,
  setPartitionLeaderEpoch,
  TimestampType,
  validateRecordBatches,
  writeRecordBatchCrc,
} from "../../../src/protocol/records/index.js";
import { kafkaJsRecordBatch } from "./kafkajs-interop.js";

const ErrorCode = { CORRUPT_MESSAGE: 2, INVALID_RECORD: 87 };

function sample(baseOffset = 0n, n = 3, compression: CompressionType = CompressionType.None): Buffer {
  return buildRecordBatch({
    baseOffset,
    compression,
    records: Array.from({ length: n }, (_, i) => ({
      key: Buffer.from(`key-${i}`),
      value: Buffer.from(`value-${i}`.repeat(5)),
      timestamp: 1_700_000_000_000n + BigInt(i),
    })),
  });
}

for (const compression of [CompressionType.None, CompressionType.Gzip]) {
  test(`batch bytes equal KafkaJS's for the same records (compression ${compression})`, async () => {
    const t0 = 1_700_000_000_123;
    const records = [
      { key: Buffer.from("k1"), value: Buffer.from("hello"), ts: t0 },
      { key: null, value: Buffer.from(""), ts: t0 - 5000 },
      { key: Buffer.from("k3"), value: null, ts: t0 + 77 },
      { key: Buffer.alloc(300, 1), value: Buffer.alloc(5000, 2), ts: t0 + 1 },
    ];
    const expected = await kafkaJsRecordBatch({
      compression,
      firstOffset: 42n,
      firstTimestamp: t0,
      maxTimestamp: t0 + 77,
      partitionLeaderEpoch: 7,
      lastOffsetDelta: records.length - 1,
      transactional: true,
      producerId: 1234567n,
      producerEpoch: 3,
      firstSequence: 99,
      records: records.map((r, i) => ({
        offsetDelta: i,
        timestampDelta: r.ts - t0,
        key: r.key,
        value: r.value,
        headers:
          i === 0
            ? ({ "trace-id": Buffer.from("abc"), empty: Buffer.alloc(0) } as Record<string, Buffer>)
            : {},
      })),
    });
    const ours = buildRecordBatch({
      compression,
      baseOffset: 42n,
      partitionLeaderEpoch: 7,
      isTransactional: true,
      producerId: 1234567n,
      producerEpoch: 3,
      baseSequence: 99,
      records: records.map((r, i) => ({
        key: r.key,
        value: r.value,
        timestamp: BigInt(r.ts),
        headers:
          i === 0
            ? [
                { key: "trace-id", value: Buffer.from("abc") },
                { key: "empty", value: Buffer.alloc(0) },
              ]
            : [],
      })),
    });
    assert.equal(ours.toString("hex"), expected.toString("hex"));

    const h = readRecordBatchHeader(expected);
    assert.equal(h.baseOffset, 42n);
    assert.equal(h.batchLength, expected.length - 12);
    assert.equal(h.partitionLeaderEpoch, 7);
    assert.equal(h.magic, 2);
    assert.equal(h.crc, expected.readUInt32BE(CRC_OFFSET));
    assert.equal(h.crc, crc32c(expected.subarray(ATTRIBUTES_OFFSET)) >>> 0);
    assert.equal(h.compression, compression);
    assert.equal(h.isTransactional, true);
    assert.equal(h.isControl, false);
    assert.equal(h.timestampType, TimestampType.CreateTime);
    assert.equal(h.lastOffsetDelta, 3);
    assert.equal(h.baseTimestamp, BigInt(t0));
    assert.equal(h.maxTimestamp, BigInt(t0 + 77));
    assert.equal(h.producerId, 1234567n);
    assert.equal(h.producerEpoch, 3);
    assert.equal(h.baseSequence, 99);
    assert.equal(h.recordsCount, 4);
    assert.ok(isRecordBatchCrcValid(expected));

    const [decoded] = decodeRecordBatches(expected);
    assert.deepEqual(
      decoded.records.map((r) => [r.offset, r.timestamp, r.key, r.value]),
      records.map((r, i) => [42n + BigInt(i), BigInt(r.ts), r.key, r.value]),
    );
    assert.deepEqual(decoded.records[0].headers, [
      { key: "trace-id", value: Buffer.from("abc") },
      { key: "empty", value: Buffer.alloc(0) },
    ]);
  });
}

test("attribute bits: compression 0-2, timestamp type 3, transactional 4, control 5, delete horizon 6", () => {
  const b = buildRecordBatch({
    compression: CompressionType.Zstd,
    timestampType: TimestampType.LogAppendTime,
    timestamp: 5n,
    isTransactional: true,
    isControl: true,
    deleteHorizonMs: 1000n,
    records: [{ value: Buffer.from("x") }],
  });
  assert.equal(b.readInt16BE(ATTRIBUTES_OFFSET), 4 | 0x08 | 0x10 | 0x20 | 0x40);
  const h = readRecordBatchHeader(b);
  assert.deepEqual(
    [h.compression, h.timestampType, h.isTransactional, h.isControl, h.hasDeleteHorizonMs, h.baseTimestamp],
    [CompressionType.Zstd, TimestampType.LogAppendTime, true, true, true, 1000n],
  );
  const plain = readRecordBatchHeader(sample());
  assert.deepEqual(
    [
      plain.compression,
      plain.timestampType,
      plain.isTransactional,
      plain.isControl,
      plain.hasDeleteHorizonMs,
    ],
    [CompressionType.None, TimestampType.CreateTime, false, false, false],
  );
});

test("baseOffset and partitionLeaderEpoch are set in place outside the CRC", () => {
  const b = sample(0n, 5);
  const crc = b.readUInt32BE(CRC_OFFSET);
  setBaseOffset(b, 0, 1_000_000_000_000n);
  setPartitionLeaderEpoch(b, 0, 17);
  assert.equal(b.readUInt32BE(CRC_OFFSET), crc);
  assert.ok(isRecordBatchCrcValid(b));
  const [d] = decodeRecordBatches(b);
  assert.equal(d.header.baseOffset, 1_000_000_000_000n);
  assert.equal(d.header.partitionLeaderEpoch, 17);
  assert.deepEqual(
    d.records.map((r) => r.offset),
    [0n, 1n, 2n, 3n, 4n].map((o) => o + 1_000_000_000_000n),
  );
});

test("setMaxTimestamp with LogAppendTime rewrites attributes and CRC; readers then use it for every record", () => {
  const b = sample(0n, 3, CompressionType.Gzip);
  setMaxTimestamp(b, 0, TimestampType.LogAppendTime, 1_800_000_000_000n);
  assert.ok(isRecordBatchCrcValid(b));
  const [d] = decodeRecordBatches(b);
  assert.equal(d.header.timestampType, TimestampType.LogAppendTime);
  assert.deepEqual(
    d.records.map((r) => r.timestamp),
    [1_800_000_000_000n, 1_800_000_000_000n, 1_800_000_000_000n],
  );
  // A batch at an offset inside a larger buffer, and back to CreateTime.
  const two = Buffer.concat([sample(0n, 2), b]);
  const second = two.length - b.length;
  setMaxTimestamp(two, second, TimestampType.CreateTime, 1_700_000_000_002n);
  assert.ok(isRecordBatchCrcValid(two, second));
  assert.deepEqual(
    decodeRecordBatches(two)[1].records.map((r) => r.timestamp),
    [1_700_000_000_000n, 1_700_000_000_001n, 1_700_000_000_002n],
  );
});

test("CRC covers attributes..end: flipping any covered byte is detected, uncovered bytes are not", () => {
  const b = sample(0n, 2);
  for (let i = 0; i < b.length; i++) {
    const copy = Buffer.from(b);
    copy[i] ^= 0x01;
    const covered = i >= ATTRIBUTES_OFFSET;
    if (i >= BATCH_LENGTH_OFFSET && i < BATCH_LENGTH_OFFSET + 4) continue; // size field: checked separately
    if (i === MAGIC_OFFSET || (i >= CRC_OFFSET && i < ATTRIBUTES_OFFSET)) continue;
    assert.equal(isRecordBatchCrcValid(copy), !covered, `byte ${i}`);
  }
  const copy = Buffer.from(b);
  copy[RECORDS_COUNT_OFFSET + 3] ^= 1;
  writeRecordBatchCrc(copy);
  assert.equal(copy.readUInt32BE(CRC_OFFSET), computeRecordBatchCrc(copy));
});

test("iterator walks concatenated batches and reports their ranges", () => {
  const batches = [sample(0n, 1), sample(1n, 4, CompressionType.Snappy), sample(5n, 2, CompressionType.Lz4)];
  const buf = Buffer.concat(batches);
  const seen = [...new RecordBatchIterator(buf)].map((e) => [e.position, e.size, e.header?.baseOffset]);
  let pos = 0;
  const expected = batches.map((b, i) => {
    const r = [pos, b.length, [0n, 1n, 5n][i]];
    pos += b.length;
    return r;
  });
  assert.deepEqual(seen, expected);
  assert.deepEqual(validateRecordBatches(buf), { batches: 3, validBytes: buf.length, incompleteBytes: 0 });
  assert.deepEqual(validateRecordBatches(Buffer.alloc(0)), { batches: 0, validBytes: 0, incompleteBytes: 0 });
});

test("a partial trailing batch is 'incomplete' with allowIncompleteTail and an error without", () => {
  const whole = Buffer.concat([sample(0n, 2), sample(2n, 3)]);
  const firstSize = sample(0n, 2).length;
  for (let cut = firstSize + 1; cut < whole.length; cut++) {
    const buf = whole.subarray(0, cut);
    const it = new RecordBatchIterator(buf, { allowIncompleteTail: true });
    const got = [...it];
    assert.equal(got.length, 1, `cut ${cut}`);
    assert.equal(it.incomplete, true);
    assert.equal(it.remaining, cut - firstSize);
    assert.deepEqual(validateRecordBatches(buf, { allowIncompleteTail: true }), {
      batches: 1,
      validBytes: firstSize,
      incompleteBytes: cut - firstSize,
    });
    assert.equal(decodeRecordBatches(buf, { allowIncompleteTail: true }).length, 1);
    assert.throws(() => validateRecordBatches(buf), CorruptRecordError);
    assert.throws(() => decodeRecordBatches(buf), CorruptRecordError);
  }
});

function expectCorrupt(buf: Buffer, code: number, pattern: RegExp, options = {}): void {
  assert.throws(
    () => validateRecordBatches(buf, options),
    (e: unknown) => e instanceof CorruptRecordError && e.errorCode === code && pattern.test(e.message),
  );
  assert.throws(() => decodeRecordBatches(buf, options), CorruptRecordError);
}

test("bad sizes, magic and CRC are typed errors, even with allowIncompleteTail", () => {
  const good = sample(0n, 3);
  for (const length of [-1, -2147483648, 0, 13, 48]) {
    const b = Buffer.from(good);
    b.writeInt32BE(length, BATCH_LENGTH_OFFSET);
    expectCorrupt(b, ErrorCode.CORRUPT_MESSAGE, /less than/, { allowIncompleteTail: true });
  }
  // Huge batchLength: incomplete for a Fetch reader, an error for a Produce reader, too large with a cap.
  const huge = Buffer.from(good);
  huge.writeInt32BE(0x7fffffff, BATCH_LENGTH_OFFSET);
  expectCorrupt(huge, ErrorCode.CORRUPT_MESSAGE, /truncated/);
  assert.deepEqual(validateRecordBatches(huge, { allowIncompleteTail: true }).batches, 0);
  expectCorrupt(huge, ErrorCode.CORRUPT_MESSAGE, /exceeds the largest/, {
    allowIncompleteTail: true,
    maxBatchSize: 1 << 20,
  });

  for (const magic of [3, 127, -1]) {
    const b = Buffer.from(good);
    b.writeInt8(magic, MAGIC_OFFSET);
    expectCorrupt(b, ErrorCode.CORRUPT_MESSAGE, /invalid magic/);
  }
  const legacy = Buffer.from(good);
  legacy.writeInt8(1, MAGIC_OFFSET);
  expectCorrupt(legacy, ErrorCode.INVALID_RECORD, /only magic 2/);

  const badCrc = Buffer.from(good);
  badCrc.writeUInt32BE((badCrc.readUInt32BE(CRC_OFFSET) + 1) >>> 0, CRC_OFFSET);
  expectCorrupt(badCrc, ErrorCode.CORRUPT_MESSAGE, /corrupt/);
  assert.equal(validateRecordBatches(badCrc, { verifyCrc: false }).batches, 1);

  assert.throws(() => readRecordBatchHeader(good.subarray(0, RECORD_BATCH_OVERHEAD - 1)), CorruptRecordError);
  assert.throws(() => readRecordBatchHeader(good, good.length), CorruptRecordError);
  assert.throws(() => computeRecordBatchCrc(good.subarray(0, good.length - 1)), CorruptRecordError);
});
