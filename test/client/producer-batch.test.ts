// ProducerBatch writes the same bytes as protocol/records' buildRecordBatch (Kafka's
// MemoryRecordsBuilder) for the same records: keys, null values, headers, negative and large timestamp
// deltas, every codec (compressed payloads decode to the same records); batch.size is respected, a first
// record larger than batch.size still gets a batch, and pooled buffers are reused. A completed or failed
// batch no longer holds its records' callbacks (checked through the garbage collector itself).

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { BufferPool } from "../../src/client/producer/buffer-pool.js";
import { ProducerBatch } from "../../src/client/producer/producer-batch.js";
import {
  buildRecordBatch,
  CompressionType,
  decodeRecordBatches,
  type RecordInput,
} from "../../src/protocol/records/index.js";

const noop = (): void => {};

function records(): Array<RecordInput & { timestamp: bigint }> {
  const base = 1_700_000_000_000n;
  return [
    { key: Buffer.from("k0"), value: Buffer.from("v0"), timestamp: base },
    { key: null, value: Buffer.from("no key"), timestamp: base + 5n },
    { key: Buffer.from("k2"), value: null, timestamp: base - 3n },
    { key: Buffer.alloc(300, 7), value: Buffer.alloc(70_000, 9), timestamp: base + 10_000_000_000n },
    {
      key: Buffer.from("h"),
      value: Buffer.from("with headers"),
      headers: [
        { key: "trace-id", value: Buffer.from("abc") },
        { key: "ünïcode", value: null },
      ],
      timestamp: base + 1n,
    },
  ];
}

function fill(batch: ProducerBatch, rs: ReturnType<typeof records>): void {
  for (const r of rs) {
    const n = batch.tryAppend(Number(r.timestamp), r.key ?? null, r.value ?? null, r.headers ?? [], noop);
    assert.ok(n > 0);
  }
}

describe("ProducerBatch", () => {
  test("uncompressed bytes equal buildRecordBatch's", () => {
    const pool = new BufferPool(1 << 20, 4);
    const batch = new ProducerBatch("t", 0, 1 << 20, 0, CompressionType.None, undefined, pool, 0);
    fill(batch, records());
    const want = buildRecordBatch({ records: records() });
    assert.deepEqual(batch.records(), want);
  });

  for (const codec of [
    CompressionType.Gzip,
    CompressionType.Snappy,
    CompressionType.Lz4,
    CompressionType.Zstd,
  ]) {
    test(`compression ${codec}: decodes to the same records as buildRecordBatch's`, () => {
      const pool = new BufferPool(1 << 20, 4);
      const batch = new ProducerBatch("t", 0, 1 << 20, 0, codec, undefined, pool, 0);
      fill(batch, records());
      const ours = decodeRecordBatches(batch.records());
      const theirs = decodeRecordBatches(buildRecordBatch({ records: records(), compression: codec }));
      assert.deepEqual(
        ours,
        theirs.map((b) => ({
          ...b,
          header: { ...b.header, crc: ours[0].header.crc, batchLength: ours[0].header.batchLength },
        })),
      );
      assert.equal(ours[0].header.compression, codec);
    });
  }

  test("batch.size bounds a batch; an oversized first record gets its own batch; buffers are pooled", () => {
    const pool = new BufferPool(1000, 4);
    const batch = new ProducerBatch("t", 0, 1000, 0, CompressionType.None, undefined, pool, 100);
    let n = 0;
    while (batch.tryAppend(0, null, Buffer.alloc(100), [], noop) > 0) n++;
    assert.equal(n, 8, "61-byte header + 8 records of 106 bytes fit in 1000");
    assert.equal(decodeRecordBatches(batch.records())[0].records.length, 8);
    batch.release();
    assert.equal(pool.pooledCount, 1);
    const big = new ProducerBatch("t", 0, 1000, 0, CompressionType.None, undefined, pool, 5000);
    assert.equal(pool.pooledCount, 1, "a larger buffer is not taken from the pool");
    assert.ok(big.tryAppend(0, null, Buffer.alloc(5000), [], noop) > 0);
    assert.equal(big.tryAppend(0, null, Buffer.alloc(1), [], noop), -1, "full after the oversized record");
    const reused = new ProducerBatch("t", 1, 1000, 0, CompressionType.None, undefined, pool, 10);
    assert.equal(pool.pooledCount, 0, "the pooled buffer was reused");
    reused.tryAppend(5, Buffer.from("k"), Buffer.from("v"), [], noop);
    assert.deepEqual(
      reused.records(),
      buildRecordBatch({ records: [{ key: Buffer.from("k"), value: Buffer.from("v"), timestamp: 5n }] }),
    );
  });

  test("a completed or failed batch lets go of its records' callbacks", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const pool = new BufferPool(1 << 16, 4);
    for (const end of ["complete", "fail"] as const) {
      const batch = new ProducerBatch("t", 0, 1 << 16, 0, CompressionType.None, undefined, pool, 10);
      const refs: Array<WeakRef<object>> = [];
      let called = 0;
      // Each callback is its own closure (as a send()'s usually is), referenced only by the batch.
      const append = (i: number): void => {
        const cb = (): void => {
          called += i >= 0 ? 1 : 0;
        };
        refs.push(new WeakRef(cb));
        assert.ok(batch.tryAppend(i, null, Buffer.from(`v${i}`), [], cb) > 0);
      };
      for (let i = 0; i < 3; i++) append(i);
      if (end === "complete") batch.complete(0n, -1n);
      else batch.fail(new Error("boom"));
      assert.equal(called, 3, `${end}: every callback ran`);
      // Two turns of the event loop and full GCs: WeakRef targets are kept until the current job ends.
      for (let i = 0; i < 2; i++) {
        await new Promise((r) => setImmediate(r));
        gc();
      }
      assert.equal(refs.filter((r) => r.deref() !== undefined).length, 0, `${end}: callbacks collected`);
      assert.ok(batch.isDone, "the batch itself is still referenced here");
    }
  });
});
