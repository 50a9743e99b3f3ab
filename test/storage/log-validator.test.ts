// LogValidator: the hot path leaves batches as the same bytes; timestamp bounds (before/after.max.ms and the
// deprecated difference.max.ms) give INVALID_TIMESTAMP with Kafka's record errors; compacted topics refuse
// records without a key; compression.type recompresses (and `uncompressed` decompresses) keeping producer
// fields; a compressed batch with gaps in its inner offsets is renumbered; a producer-set LogAppendTime flag
// is refused on LogAppendTime topics; corrupt batches are CORRUPT_MESSAGE; the result appends to a real log.

import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { test } from "node:test";
import { MockTime } from "../../src/common/time.js";
import { KafkaError } from "../../src/protocol/errors.js";
import {
  buildRecordBatch,
  CompressionType,
  decodeRecordBatches,
  isRecordBatchCrcValid,
  MAX_TIMESTAMP_OFFSET,
  type RecordInput,
  readRecordBatchHeader,
  TimestampType,
  writeRecordBatchCrc,
} from "../../src/protocol/records/index.js";
import { DEFAULT_LOG_CONFIG, type LogConfig, logConfigFrom } from "../../src/storage/log-config.js";
import {
  needsRecordWalk,
  RecordValidationError,
  targetCompression,
  validateRecords,
} from "../../src/storage/log-validator.js";
import { UnifiedLog } from "../../src/storage/unified-log.js";
import { tempPartitionDir } from "./storage-test-utils.js";

const NOW = 1_700_000_000_000n;

function records(n: number, opts: { keyed?: boolean; ts?: (i: number) => bigint } = {}): RecordInput[] {
  return Array.from({ length: n }, (_, i) => ({
    key: opts.keyed === false ? null : Buffer.from(`k${i}`),
    value: Buffer.from(`value-${i}-${"x".repeat(i % 7)}`),
    headers: [{ key: "h", value: Buffer.from(String(i)) }],
    timestamp: opts.ts ? opts.ts(i) : NOW - BigInt(n - i),
  }));
}

function cfg(props: Record<string, string>): LogConfig {
  return logConfigFrom(props, DEFAULT_LOG_CONFIG);
}

function validate(buf: Buffer, config: LogConfig, nowMs = NOW) {
  return validateRecords(buf, { config, nowMs, topicPartition: "t-0" });
}

test("hot path: default config returns the very same bytes, untouched", () => {
  for (const compression of [CompressionType.None, CompressionType.Gzip, CompressionType.Zstd]) {
    const b = buildRecordBatch({ records: records(5, { keyed: false }), compression });
    const copy = Buffer.from(b);
    const r = validate(b, DEFAULT_LOG_CONFIG);
    assert.equal(r.records, b);
    assert.equal(r.rebuilt, false);
    assert.deepEqual(r.records, copy);
  }
  assert.equal(needsRecordWalk(DEFAULT_LOG_CONFIG), false);
  assert.equal(needsRecordWalk(cfg({ "cleanup.policy": "compact" })), true);
  assert.equal(needsRecordWalk(cfg({ "message.timestamp.after.max.ms": "1000" })), true);
  assert.equal(needsRecordWalk(cfg({ "message.timestamp.difference.max.ms": "1000" })), true);
  // LogAppendTime topics never check timestamp bounds.
  assert.equal(
    needsRecordWalk(
      cfg({ "message.timestamp.type": "LogAppendTime", "message.timestamp.before.max.ms": "1" }),
    ),
    false,
  );
});

test("timestamp bounds: before/after.max.ms give INVALID_TIMESTAMP with Kafka's record errors", () => {
  const config = cfg({
    "message.timestamp.before.max.ms": "60000",
    "message.timestamp.after.max.ms": "1000",
  });
  const ts = [NOW - 60_000n, NOW - 60_001n, NOW, NOW + 1000n, NOW + 1001n];
  const b = buildRecordBatch({ records: records(5, { ts: (i) => ts[i] }) });
  assert.throws(
    () => validate(b, config),
    (e: unknown) => {
      assert.ok(e instanceof RecordValidationError);
      assert.equal(e.errorName, "INVALID_TIMESTAMP");
      assert.equal(e.message, "One or more records have been rejected due to invalid timestamp");
      assert.deepEqual(
        e.recordErrors.map((r) => r.batchIndex),
        [1, 4],
      );
      assert.equal(
        e.recordErrors[0].message,
        `Timestamp ${NOW - 60_001n} of message with offset 1 is out of range. The timestamp should be within [${NOW - 60_000n}, ${NOW + 1000n}]`,
      );
      return true;
    },
  );
  // All within bounds: accepted, same bytes.
  const ok = buildRecordBatch({ records: records(3, { ts: (i) => NOW - BigInt(i) }) });
  assert.equal(validate(ok, config).records, ok);
});

test("the deprecated difference.max.ms applies while before/after are left at Long.MAX", () => {
  const old = cfg({ "message.timestamp.difference.max.ms": "5000" });
  const late = buildRecordBatch({ records: records(1, { ts: () => NOW - 5001n }) });
  const early = buildRecordBatch({ records: records(1, { ts: () => NOW + 5001n }) });
  for (const b of [late, early]) {
    assert.throws(
      () => validate(b, old),
      (e: unknown) => (e as KafkaError).errorName === "INVALID_TIMESTAMP",
    );
  }
  // An explicit before.max.ms wins over difference.max.ms for the past; the future still uses difference.
  const mixed = cfg({
    "message.timestamp.difference.max.ms": "5000",
    "message.timestamp.before.max.ms": "100000",
  });
  assert.equal(validate(late, mixed).rebuilt, false);
  assert.throws(() => validate(early, mixed), RecordValidationError);
});

test("a CreateTime batch walked for checks gets maxTimestamp = max of its records, CRC kept valid", () => {
  const b = buildRecordBatch({ records: records(3, { ts: (i) => NOW - BigInt(10 * i) }) });
  assert.equal(readRecordBatchHeader(b).maxTimestamp, NOW);
  // A producer whose header maxTimestamp is wrong, with a valid CRC.
  b.writeBigInt64BE(NOW - 999n, MAX_TIMESTAMP_OFFSET);
  writeRecordBatchCrc(b, 0);
  const r = validate(b, cfg({ "message.timestamp.before.max.ms": "100000" }));
  assert.equal(readRecordBatchHeader(r.records).maxTimestamp, NOW);
  assert.ok(isRecordBatchCrcValid(r.records, 0));
});

test("compacted topics refuse records without a key (INVALID_RECORD, Kafka's message)", () => {
  const config = cfg({ "cleanup.policy": "compact" });
  const recs = records(4);
  recs[2].key = null;
  for (const compression of [CompressionType.None, CompressionType.Lz4]) {
    const b = buildRecordBatch({ records: recs, compression });
    assert.throws(
      () => validate(b, config),
      (e: unknown) => {
        assert.ok(e instanceof RecordValidationError);
        assert.equal(e.errorName, "INVALID_RECORD");
        assert.deepEqual(e.recordErrors, [
          {
            batchIndex: 2,
            message: "Compacted topic cannot accept message without key in topic partition t-0.",
          },
        ]);
        assert.match(e.message, /due to 1 record errors in total.*RecordError\(batchIndex=2/);
        return true;
      },
    );
  }
  const keyed = buildRecordBatch({ records: records(4) });
  assert.equal(validate(keyed, config).records, keyed);
});

test("compression.type recompresses to the topic codec keeping records and producer fields", () => {
  const recs = records(50);
  const src = buildRecordBatch({
    records: recs,
    compression: CompressionType.Gzip,
    producerId: 42n,
    producerEpoch: 3,
    baseSequence: 17,
    isTransactional: true,
  });
  const r = validate(src, cfg({ "compression.type": "zstd" }));
  assert.equal(r.rebuilt, true);
  const h = readRecordBatchHeader(r.records);
  assert.equal(h.compression, CompressionType.Zstd);
  assert.equal(h.producerId, 42n);
  assert.equal(h.producerEpoch, 3);
  assert.equal(h.baseSequence, 17);
  assert.equal(h.isTransactional, true);
  assert.equal(h.recordsCount, 50);
  assert.equal(h.lastOffsetDelta, 49);
  assert.ok(isRecordBatchCrcValid(r.records, 0));
  const back = decodeRecordBatches(r.records)[0].records;
  assert.deepEqual(
    back.map((x) => [x.key?.toString(), x.value?.toString(), x.timestamp, x.headers[0].value?.toString()]),
    recs.map((x) => [x.key?.toString(), x.value?.toString(), x.timestamp, x.headers?.[0].value?.toString()]),
  );
  // uncompressed decompresses; a codec compresses an uncompressed batch; producer keeps it.
  assert.equal(
    readRecordBatchHeader(validate(src, cfg({ "compression.type": "uncompressed" })).records).compression,
    CompressionType.None,
  );
  const plain = buildRecordBatch({ records: recs });
  assert.equal(
    readRecordBatchHeader(validate(plain, cfg({ "compression.type": "lz4" })).records).compression,
    CompressionType.Lz4,
  );
  assert.equal(validate(src, cfg({ "compression.type": "gzip" })).records, src);
  assert.equal(targetCompression(DEFAULT_LOG_CONFIG, CompressionType.Snappy), CompressionType.Snappy);
});

test("a compressed batch whose inner offsets are not consecutive is renumbered (Kafka rebuilds it)", () => {
  const recs = records(3).map((r, i) => ({ ...r, offsetDelta: i * 2 }));
  const b = buildRecordBatch({ records: recs, compression: CompressionType.Gzip });
  const r = validate(b, cfg({ "cleanup.policy": "compact" }));
  assert.equal(r.rebuilt, true);
  const decoded = decodeRecordBatches(r.records)[0];
  assert.deepEqual(
    decoded.records.map((x) => x.offset),
    [0n, 1n, 2n],
  );
  assert.equal(decoded.header.compression, CompressionType.Gzip);
});

test("a producer-set LogAppendTime flag on a LogAppendTime topic is INVALID_TIMESTAMP", () => {
  const b = buildRecordBatch({
    records: records(2),
    timestampType: TimestampType.LogAppendTime,
    timestamp: NOW,
  });
  assert.throws(
    () => validate(b, cfg({ "message.timestamp.type": "LogAppendTime" })),
    (e: unknown) => {
      assert.ok(e instanceof RecordValidationError);
      assert.equal(e.errorName, "INVALID_TIMESTAMP");
      assert.equal(e.recordErrors.length, 2);
      assert.match(
        e.recordErrors[0].message ?? "",
        /Producer should not set timestamp type to LogAppendTime/,
      );
      return true;
    },
  );
});

test("a corrupt batch on the walked path is CORRUPT_MESSAGE; an oversized one MESSAGE_TOO_LARGE", () => {
  const b = buildRecordBatch({ records: records(3) });
  b[b.length - 1] ^= 0xff;
  assert.throws(
    () => validate(b, cfg({ "cleanup.policy": "compact" })),
    (e: unknown) => e instanceof KafkaError && e.errorName === "CORRUPT_MESSAGE",
  );
  const big = buildRecordBatch({ records: records(40) });
  assert.throws(
    () => validate(big, cfg({ "cleanup.policy": "compact", "max.message.bytes": "200" })),
    (e: unknown) => e instanceof KafkaError && e.errorName === "MESSAGE_TOO_LARGE",
  );
});

test("rebuilt batches append to a real log with offsets assigned after the log end", () => {
  const t = tempPartitionDir("log-validator");
  mkdirSync(t.dir, { recursive: true });
  const config = cfg({ "compression.type": "zstd" });
  const log = UnifiedLog.open(t.dir, config, {
    time: new MockTime(),
    recoveryPoint: 0n,
    hadCleanShutdown: true,
  });
  try {
    log.appendAsLeader(validate(buildRecordBatch({ records: records(3) }), config).records, 0);
    const second = validate(
      buildRecordBatch({ records: records(4), compression: CompressionType.Gzip }),
      config,
    );
    const info = log.appendAsLeader(second.records, 0);
    assert.equal(info.firstOffset, 3n);
    assert.equal(info.lastOffset, 6n);
    const read = decodeRecordBatches(log.read(0n, 1 << 20, "log-end", true).records);
    assert.deepEqual(
      read.map((x) => [x.header.compression, x.header.baseOffset]),
      [
        [CompressionType.Zstd, 0n],
        [CompressionType.Zstd, 3n],
      ],
    );
    assert.deepEqual(
      read.flatMap((x) => x.records.map((r) => r.offset)),
      [0n, 1n, 2n, 3n, 4n, 5n, 6n],
    );
  } finally {
    log.close();
    t.cleanup();
  }
});
