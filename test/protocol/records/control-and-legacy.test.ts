// Control records (transaction markers) and legacy magic 0/1 message sets: KafkaJS-encoded message sets,
// compressed wrappers with relative (magic 1) and absolute (magic 0) inner offsets, mixed with v2 batches
// in one buffer, and their malformed forms.

import assert from "node:assert/strict";
import { test } from "node:test";
import { gzipSync } from "node:zlib";
import { crc32 } from "@node-rs/crc32";
import {
  buildEndTxnMarkerBatch,
  buildLegacyMessageSet,
  buildRecordBatch,
  CompressionType,
  ControlRecordType,
  CorruptRecordError,
  decodeBatchRecords,
  decodeRecordBatches,
  readControlRecordKey,
  readEndTxnMarker,
  TimestampType,
  writeControlRecordKey,
} from "../../../src/protocol/records/index.js";
import { kafkaJsGzipMessageSetV1, kafkaJsMessageSet } from "./kafkajs-interop.js";

test("an end-transaction marker batch: control + transactional, one record, key and value as Kafka writes them", () => {
  for (const type of [ControlRecordType.Commit, ControlRecordType.Abort]) {
    const buf = buildEndTxnMarkerBatch({
      type,
      producerId: 4000n,
      producerEpoch: 7,
      coordinatorEpoch: 12,
      timestamp: 1_700_000_000_000n,
      baseOffset: 55n,
      partitionLeaderEpoch: 3,
    });
    const [d] = decodeRecordBatches(buf);
    assert.equal(d.header.isControl, true);
    assert.equal(d.header.isTransactional, true);
    assert.equal(d.header.baseSequence, -1);
    assert.equal(d.header.producerId, 4000n);
    assert.equal(d.header.producerEpoch, 7);
    assert.equal(d.header.partitionLeaderEpoch, 3);
    assert.equal(d.records.length, 1);
    const [r] = d.records;
    assert.equal(r.offset, 55n);
    assert.deepEqual(r.key, Buffer.from([0, 0, 0, type]));
    assert.deepEqual(r.value, Buffer.from([0, 0, 0, 0, 0, 12]));
    assert.deepEqual(readControlRecordKey(r.key), { version: 0, typeId: type, type });
    assert.deepEqual(readEndTxnMarker(r.value), { version: 0, coordinatorEpoch: 12 });
  }
});

test("control record keys: newer versions parse, unknown types are Unknown, short or negative keys are invalid", () => {
  assert.deepEqual(readControlRecordKey(writeControlRecordKey(ControlRecordType.Commit, 3)), {
    version: 3,
    typeId: 1,
    type: ControlRecordType.Commit,
  });
  assert.equal(readControlRecordKey(Buffer.from([0, 0, 0, 99, 1, 2])).type, ControlRecordType.Unknown);
  assert.equal(readControlRecordKey(Buffer.from([0, 0, 0, 2])).type, ControlRecordType.LeaderChange);
  for (const bad of [null, Buffer.from([0, 0, 0]), Buffer.from([0xff, 0xff, 0, 0])]) {
    assert.throws(() => readControlRecordKey(bad), CorruptRecordError);
  }
  for (const bad of [null, Buffer.from([0, 0, 0, 0, 0]), Buffer.from([0x80, 0, 0, 0, 0, 1])]) {
    assert.throws(() => readEndTxnMarker(bad), CorruptRecordError);
  }
});

test("KafkaJS magic 0 and magic 1 message sets decode to the same record shape", () => {
  const entries = [
    { key: Buffer.from("k0"), value: Buffer.from("v0"), timestamp: 1_500_000_000_000 },
    { key: null, value: Buffer.alloc(0), timestamp: 1_500_000_000_001 },
    { key: Buffer.from("k2"), value: null, timestamp: 1_500_000_000_002 },
  ];
  for (const magic of [0, 1] as const) {
    const batches = decodeRecordBatches(kafkaJsMessageSet(magic, entries));
    assert.equal(batches.length, 3);
    for (const [i, b] of batches.entries()) {
      assert.equal(b.header.magic, magic);
      assert.equal(b.header.producerId, -1n);
      assert.equal(b.header.recordsCount, 1);
      assert.equal(
        b.header.timestampType,
        magic === 0 ? TimestampType.NoTimestampType : TimestampType.CreateTime,
      );
      assert.deepEqual(b.records, [
        {
          offset: -1n, // KafkaJS leaves producer-side offsets at -1
          timestamp: magic === 0 ? -1n : BigInt(entries[i].timestamp),
          key: entries[i].key,
          value: entries[i].value,
          headers: [],
        },
      ]);
    }
  }
});

test("a KafkaJS gzip magic 1 wrapper: relative inner offsets become absolute", () => {
  const entries = [0, 1, 2, 3].map((i) => ({
    key: Buffer.from(`k${i}`),
    value: Buffer.from(`value ${i}`),
    timestamp: 1_500_000_000_000 + i,
  }));
  const buf = kafkaJsGzipMessageSetV1(entries, 103n, 1_500_000_000_003, (b) => gzipSync(b));
  const [b] = decodeRecordBatches(buf);
  assert.equal(b.header.magic, 1);
  assert.equal(b.header.compression, CompressionType.Gzip);
  assert.equal(b.header.baseOffset, 100n);
  assert.equal(b.header.lastOffsetDelta, 3);
  assert.equal(b.header.maxTimestamp, 1_500_000_000_003n);
  assert.deepEqual(
    b.records.map((r) => [r.offset, r.timestamp, r.key?.toString(), r.value?.toString()]),
    entries.map((e, i) => [100n + BigInt(i), BigInt(e.timestamp), `k${i}`, `value ${i}`]),
  );
  assert.deepEqual(decodeBatchRecords(buf), b.records);
});

test("compressed legacy wrappers for every legacy codec and both magics, mixed with v2 batches", () => {
  const msgs = [0, 1, 2].map((i) => ({
    key: i === 1 ? null : Buffer.from(`k${i}`),
    value: Buffer.from(`v${i}`),
    timestamp: 10n + BigInt(i),
  }));
  for (const codec of [CompressionType.Gzip, CompressionType.Snappy, CompressionType.Lz4]) {
    for (const magic of [0, 1] as const) {
      const legacy = buildLegacyMessageSet(msgs, { magic, compression: codec, baseOffset: 20n });
      const v2 = buildRecordBatch({
        baseOffset: 23n,
        records: [{ value: Buffer.from("v2"), timestamp: 99n }],
      });
      const batches = decodeRecordBatches(Buffer.concat([legacy, v2]));
      assert.equal(batches.length, 2);
      assert.deepEqual(
        batches[0].records.map((r) => [r.offset, r.timestamp, r.key, r.value]),
        msgs.map((m, i) => [20n + BigInt(i), magic === 1 ? m.timestamp : -1n, m.key, m.value]),
      );
      assert.deepEqual(batches[1].records[0].offset, 23n);
    }
  }
  // LogAppendTime on a magic 1 wrapper overrides the inner timestamps.
  const lat = buildLegacyMessageSet(msgs, {
    magic: 1,
    compression: CompressionType.Gzip,
    logAppendTime: 777n,
  });
  const [b] = decodeRecordBatches(lat);
  assert.equal(b.header.timestampType, TimestampType.LogAppendTime);
  assert.deepEqual(
    b.records.map((r) => r.timestamp),
    [777n, 777n, 777n],
  );
});

test("malformed legacy messages are CorruptRecordError", () => {
  const one = buildLegacyMessageSet([{ key: Buffer.from("k"), value: Buffer.from("v"), timestamp: 1n }], {
    magic: 1,
  });
  const badCrc = Buffer.from(one);
  badCrc[badCrc.length - 1] ^= 1;
  assert.throws(() => decodeRecordBatches(badCrc), /corrupt/);
  // Key length running past the message (CRC recomputed so the structure check is reached).
  const longKey = Buffer.from(one);
  longKey.writeInt32BE(1000, 12 + 4 + 1 + 1 + 8);
  fixLegacyCrc(longKey);
  assert.throws(
    () => decodeRecordBatches(longKey),
    (e: unknown) => e instanceof CorruptRecordError && /key/.test(e.message),
  );
  // Magic 1 message too short for its timestamp.
  const short = buildLegacyMessageSet([{ key: null, value: null }], { magic: 0 });
  short.writeInt8(1, 16);
  fixLegacyCrc(short);
  assert.throws(() => decodeRecordBatches(short), CorruptRecordError);
  // zstd is not a legacy codec; a wrapper holding garbage; a wrapper with a null value.
  const zstdWrapper = buildLegacyMessageSet([{ key: null, value: Buffer.from("x") }], { magic: 1 });
  zstdWrapper.writeInt8(CompressionType.Zstd, 17);
  fixLegacyCrc(zstdWrapper);
  assert.throws(() => decodeRecordBatches(zstdWrapper), /not allowed/);
  const garbage = buildLegacyMessageSet([{ key: null, value: Buffer.from("not gzip") }], { magic: 1 });
  garbage.writeInt8(CompressionType.Gzip, 17);
  fixLegacyCrc(garbage);
  assert.throws(() => decodeRecordBatches(garbage), CorruptRecordError);
  const nullValue = buildLegacyMessageSet([{ key: null, value: null }], { magic: 1 });
  nullValue.writeInt8(CompressionType.Gzip, 17);
  fixLegacyCrc(nullValue);
  assert.throws(() => decodeRecordBatches(nullValue), /null value/);
  // A wrapper whose inner messages are themselves compressed.
  const inner = buildLegacyMessageSet([{ key: null, value: Buffer.from("x") }], {
    magic: 1,
    compression: CompressionType.Gzip,
  });
  const nested = buildLegacyMessageSet([{ key: null, value: gzipSync(inner) }], { magic: 1 });
  nested.writeInt8(CompressionType.Gzip, 17);
  fixLegacyCrc(nested);
  assert.throws(() => decodeRecordBatches(nested), /compressed inner/);
});

function fixLegacyCrc(b: Buffer): void {
  b.writeUInt32BE(crc32(b.subarray(16)) >>> 0, 12);
}
