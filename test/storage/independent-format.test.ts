// Files produced by Tributary are read correctly by an independent parser of Kafka's format
// (test/storage/independent-segment-parser.ts, written from Kafka's documentation, importing nothing from
// src/). For now the segment bytes come from buildRecordBatch and the index entries are laid out by hand as
// Kafka's LogSegment.append would write them; the same checks can be pointed at segments written by the log.
// The dump-log tool's batch lines are also compared with values taken from the independent parser.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import {
  type BuildRecordBatchOptions,
  buildEndTxnMarkerBatch,
  buildRecordBatch,
  CompressionType,
  ControlRecordType,
  TimestampType,
} from "../../src/protocol/records/index.js";
import { parseLogSegment, verifySegment } from "./independent-segment-parser.js";

const root = mkdtempSync(join(tmpdir(), "tributary-indep-"));
after(() => rmSync(root, { recursive: true, force: true }));
const T0 = 1_700_000_000_000n;

/** Batches of every kind the broker stores, with the inputs kept for comparison. */
function batchInputs(): BuildRecordBatchOptions[] {
  const text = (s: string): Buffer => Buffer.from(s, "utf8");
  const many = Array.from({ length: 200 }, (_, i) => ({
    key: i % 3 === 0 ? null : text(`key-${i}`),
    value: i % 7 === 0 ? null : text(`value-${i}-${"x".repeat(i % 50)}`),
    timestamp: T0 + BigInt(i * 3),
    headers:
      i % 5 === 0
        ? [
            { key: "trace", value: text(`t${i}`) },
            { key: "ünïcode", value: null },
          ]
        : [],
  }));
  return [
    { baseOffset: 0n, partitionLeaderEpoch: 0, timestamp: T0, records: [{ value: text("first") }] },
    { baseOffset: 1n, partitionLeaderEpoch: 0, records: many },
    {
      baseOffset: 201n,
      partitionLeaderEpoch: 1,
      compression: CompressionType.Gzip,
      records: many.slice(0, 50),
    },
    {
      baseOffset: 251n,
      partitionLeaderEpoch: 1,
      compression: CompressionType.Snappy,
      records: many.slice(0, 10),
    },
    {
      baseOffset: 261n,
      partitionLeaderEpoch: 1,
      compression: CompressionType.Lz4,
      records: many.slice(0, 10),
    },
    {
      baseOffset: 271n,
      partitionLeaderEpoch: 2,
      compression: CompressionType.Zstd,
      records: many.slice(0, 10),
    },
    {
      baseOffset: 281n,
      partitionLeaderEpoch: 2,
      producerId: 1234n,
      producerEpoch: 3,
      baseSequence: 2147483646,
      isTransactional: true,
      records: [
        { value: text("a"), timestamp: T0 + 10_000n },
        { value: text("b"), timestamp: T0 + 10_001n },
        { value: text("c") },
      ],
    },
    {
      baseOffset: 284n,
      partitionLeaderEpoch: 2,
      timestampType: TimestampType.LogAppendTime,
      timestamp: T0 + 20_000n,
      records: [
        { key: text("k"), value: text("v") },
        { key: text("k2"), value: text("v2") },
      ],
    },
    {
      baseOffset: 286n,
      partitionLeaderEpoch: 2,
      deleteHorizonMs: T0 + 99n,
      timestamp: T0 + 30_000n,
      records: [{ key: text("t"), value: null }],
    },
  ];
}

function buildSegment(): { log: Buffer; inputs: BuildRecordBatchOptions[]; batches: Buffer[] } {
  const inputs = batchInputs();
  const batches = inputs.map((o) => buildRecordBatch(o));
  batches.push(
    buildEndTxnMarkerBatch({
      type: ControlRecordType.Commit,
      producerId: 1234n,
      producerEpoch: 3,
      coordinatorEpoch: 9,
      timestamp: T0 + 40_000n,
      baseOffset: 287n,
      partitionLeaderEpoch: 2,
    }),
  );
  return { log: Buffer.concat(batches), inputs, batches };
}

/** Index entries as Kafka's LogSegment.append writes them: (batch last offset, batch position), sparse. */
function kafkaIndexes(batches: Buffer[], intervalBytes: number): { index: Buffer; timeIndex: Buffer } {
  const idx: Buffer[] = [];
  const tidx: Buffer[] = [];
  let position = 0;
  let sinceLast = 0;
  let maxTs = -1n;
  let offsetOfMaxTs = -1n;
  let lastIndexedTs = -1n;
  for (const b of batches) {
    const last = b.readBigInt64BE(0) + BigInt(b.readInt32BE(23));
    const ts = b.readBigInt64BE(35);
    if (ts > maxTs) {
      maxTs = ts;
      offsetOfMaxTs = last;
    }
    if (sinceLast > intervalBytes) {
      const e = Buffer.alloc(8);
      e.writeInt32BE(Number(last), 0);
      e.writeInt32BE(position, 4);
      idx.push(e);
      if (maxTs > lastIndexedTs) {
        const t = Buffer.alloc(12);
        t.writeBigInt64BE(maxTs, 0);
        t.writeInt32BE(Number(offsetOfMaxTs), 8);
        tidx.push(t);
        lastIndexedTs = maxTs;
      }
      sinceLast = 0;
    }
    sinceLast += b.length;
    position += b.length;
  }
  // Preallocated tail, as on an active segment.
  return {
    index: Buffer.concat([...idx, Buffer.alloc(64)]),
    timeIndex: Buffer.concat([...tidx, Buffer.alloc(72)]),
  };
}

describe("independent parser reads Tributary's segment bytes", () => {
  test("every header field matches what was asked for, every CRC-32C is valid", () => {
    const { log, inputs } = buildSegment();
    const parsed = parseLogSegment(log);
    assert.equal(parsed.error, undefined);
    assert.equal(parsed.trailingBytes, 0);
    assert.equal(parsed.batches.length, inputs.length + 1);
    inputs.forEach((o, i) => {
      const b = parsed.batches[i];
      const n = o.records.length;
      assert.equal(b.magic, 2);
      assert.equal(b.crc, b.computedCrc, `batch ${i} crc`);
      assert.equal(b.baseOffset, o.baseOffset);
      assert.equal(b.lastOffset, o.baseOffset! + BigInt(n - 1));
      assert.equal(b.recordCount, n);
      assert.equal(b.partitionLeaderEpoch, o.partitionLeaderEpoch);
      assert.equal(b.compression, o.compression ?? 0);
      assert.equal(b.producerId, o.producerId ?? -1n);
      assert.equal(b.producerEpoch, o.producerEpoch ?? -1);
      assert.equal(b.baseSequence, o.baseSequence ?? -1);
      assert.equal(b.isTransactional, o.isTransactional ?? false);
      assert.equal(b.isControl, false);
      assert.equal(b.hasDeleteHorizonMs, o.deleteHorizonMs !== undefined);
      assert.equal(
        b.timestampType,
        o.timestampType === TimestampType.LogAppendTime ? "LogAppendTime" : "CreateTime",
      );
      const timestamps = o.records.map((r) =>
        o.timestampType === TimestampType.LogAppendTime ? o.timestamp! : (r.timestamp ?? o.timestamp ?? 0n),
      );
      let max = timestamps[0];
      for (const t of timestamps) if (t > max) max = t; // bigint: no Math.max
      assert.equal(b.maxTimestamp, max, `batch ${i} max timestamp`);
      if (o.deleteHorizonMs !== undefined) assert.equal(b.baseTimestamp, o.deleteHorizonMs);
    });
    const marker = parsed.batches[inputs.length];
    assert.equal(marker.isControl, true);
    assert.equal(marker.isTransactional, true);
    assert.deepEqual(marker.records?.[0].key, Buffer.from([0, 0, 0, 1]));
    assert.deepEqual(marker.records?.[0].value, Buffer.from([0, 0, 0, 0, 0, 9]));
  });

  test("records (uncompressed and gzip) decode to exactly the inputs", () => {
    const { log, inputs } = buildSegment();
    const parsed = parseLogSegment(log);
    let checked = 0;
    inputs.forEach((o, i) => {
      const records = parsed.batches[i].records;
      if (
        o.compression !== undefined &&
        o.compression !== CompressionType.None &&
        o.compression !== CompressionType.Gzip
      ) {
        assert.equal(records, undefined);
        return;
      }
      assert.ok(records);
      assert.equal(records.length, o.records.length);
      o.records.forEach((r, j) => {
        const got = records[j];
        assert.equal(got.offset, o.baseOffset! + BigInt(j));
        assert.equal(got.offsetDelta, j);
        assert.deepEqual(got.key, r.key ?? null);
        assert.deepEqual(got.value, r.value ?? null);
        assert.deepEqual(
          got.headers,
          (r.headers ?? []).map((h) => ({ key: h.key, value: h.value })),
        );
        const ts =
          o.timestampType === TimestampType.LogAppendTime ? o.timestamp! : (r.timestamp ?? o.timestamp ?? 0n);
        if (o.deleteHorizonMs === undefined) assert.equal(got.timestamp, ts);
        checked++;
      });
    });
    assert.ok(checked > 250);
  });

  test("segment, index and time index laid out as Kafka's LogSegment.append agree", () => {
    const { log, batches } = buildSegment();
    const { index, timeIndex } = kafkaIndexes(batches, 64);
    const { problems, parsed } = verifySegment(0n, log, index, timeIndex);
    assert.deepEqual(problems, []);
    assert.ok(parsed.batches.length > 5);
  });

  test("the verifier catches a flipped byte, a cut tail, and index entries that point elsewhere", () => {
    const { log, batches } = buildSegment();
    const flipped = Buffer.from(log);
    flipped[batches[0].length + 100] ^= 0x20;
    assert.match(
      verifySegment(0n, flipped).problems.join("\n"),
      /has crc \d+, computed \d+|records of batch/,
    );
    assert.match(
      verifySegment(0n, log.subarray(0, log.length - 3)).problems.join("\n"),
      /bytes after the last complete batch/,
    );
    const badIndex = Buffer.alloc(8);
    badIndex.writeInt32BE(0, 0);
    badIndex.writeInt32BE(5, 4);
    assert.match(verifySegment(0n, log, badIndex).problems.join("\n"), /is not the position of a batch/);
    const badTime = Buffer.alloc(12);
    badTime.writeBigInt64BE(T0 + 1n, 0);
    badTime.writeInt32BE(0, 8);
    assert.match(verifySegment(0n, log, undefined, badTime).problems.join("\n"), /max timestamp is/);
  });

  test("dump-log's batch lines carry the values the independent parser reads", () => {
    const { log } = buildSegment();
    const dir = mkdtempSync(join(root, "t-0-"));
    const path = join(dir, "00000000000000000000.log");
    writeFileSync(path, log);
    const bin = fileURLToPath(new URL("../../../bin/tributary.js", import.meta.url));
    const r = spawnSync(process.execPath, [bin, "dump-log", "--files", path], {
      encoding: "utf8",
      timeout: 20_000,
    });
    assert.equal(r.status, 0, r.stderr);
    const codecs = ["none", "gzip", "snappy", "lz4", "zstd"];
    const incr = (seq: number, d: number): number =>
      seq > 2147483647 - d ? d - (2147483647 - seq) - 1 : seq + d;
    const expected = parseLogSegment(log).batches.map(
      (b) =>
        `baseOffset: ${b.baseOffset} lastOffset: ${b.lastOffset} count: ${b.recordCount} baseSequence: ${b.baseSequence} lastSequence: ${b.baseSequence === -1 ? -1 : incr(b.baseSequence, b.lastOffsetDelta)} producerId: ${b.producerId} producerEpoch: ${b.producerEpoch} partitionLeaderEpoch: ${b.partitionLeaderEpoch} isTransactional: ${b.isTransactional} isControl: ${b.isControl} deleteHorizonMs: ${b.hasDeleteHorizonMs ? `OptionalLong[${b.baseTimestamp}]` : "OptionalLong.empty"} position: ${b.position} ${b.timestampType}: ${b.maxTimestamp} size: ${b.sizeInBytes} magic: 2 compresscodec: ${codecs[b.compression]} crc: ${b.crc} isvalid: ${b.crc === b.computedCrc}`,
    );
    assert.deepEqual(r.stdout.trimEnd().split("\n"), [
      `Dumping ${path}`,
      "Log starting offset: 0",
      ...expected,
    ]);
    // The sequence wraps past Int32.MAX like Kafka's DefaultRecordBatch.incrementSequence.
    assert.ok(expected.some((l) => l.includes("baseSequence: 2147483646 lastSequence: 0 ")));
  });
});
