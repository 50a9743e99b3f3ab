// MemoryPool: size classes, reuse after release, what release ignores (foreign buffers, double release,
// sizes outside the pooled range), and the bound on the free lists.

import assert from "node:assert/strict";
import { test } from "node:test";
import { MemoryPool } from "../../src/common/memory-pool.js";

const KiB = 1024;

test("a released buffer is handed out again for any size of its class", () => {
  const pool = new MemoryPool();
  const a = pool.allocate(300 * KiB);
  assert.equal(a.length, 300 * KiB);
  assert.equal(a.buffer.byteLength, 512 * KiB, "power-of-two class");
  a.fill(7);
  pool.release(a);
  assert.equal(pool.pooledBytes, 512 * KiB);
  const b = pool.allocate(400 * KiB);
  assert.equal(b.buffer, a.buffer, "same memory");
  assert.equal(b.length, 400 * KiB);
  assert.equal(pool.pooledBytes, 0);
  assert.deepEqual([pool.fresh, pool.reused], [1, 1]);
  // Another class gets its own memory.
  const c = pool.allocate(600 * KiB);
  assert.notEqual(c.buffer, a.buffer);
  assert.equal(c.buffer.byteLength, 1024 * KiB);
});

test("release takes any view of a pooled buffer, once", () => {
  const pool = new MemoryPool();
  const a = pool.allocate(100 * KiB);
  pool.release(a.subarray(10, 20));
  assert.equal(pool.pooledBytes, 128 * KiB);
  pool.release(a);
  pool.release(a.subarray(5));
  assert.equal(pool.pooledBytes, 128 * KiB, "a second release is ignored");
  const b = pool.allocate(128 * KiB);
  const c = pool.allocate(128 * KiB);
  assert.equal(b.buffer, a.buffer);
  assert.notEqual(c.buffer, b.buffer, "never handed out twice");
});

test("buffers the pool did not hand out are ignored", () => {
  const pool = new MemoryPool();
  pool.release(Buffer.alloc(256 * KiB));
  pool.release(Buffer.from("small"));
  pool.release(Buffer.allocUnsafe(100).subarray(1, 5));
  assert.equal(pool.pooledBytes, 0);
  assert.equal(pool.allocate(256 * KiB).length, 256 * KiB);
  assert.equal(pool.fresh, 1);
});

test("sizes outside [minPooledBytes, maxPooledBytes] are plain allocations", () => {
  const pool = new MemoryPool({ minPooledBytes: 64 * KiB, maxPooledBytes: 1024 * KiB });
  for (const size of [0, 1, 64 * KiB - 1, 1024 * KiB + 1, 4096 * KiB]) {
    const b = pool.allocate(size);
    assert.equal(b.length, size);
    pool.release(b);
  }
  assert.equal(pool.pooledBytes, 0);
  assert.deepEqual([pool.fresh, pool.reused], [0, 0]);
  const edge = pool.allocate(1024 * KiB);
  pool.release(edge);
  assert.equal(pool.pooledBytes, 1024 * KiB);
});

test("the free lists keep at most maxFreeBytes", () => {
  const pool = new MemoryPool({ maxFreeBytes: 1024 * KiB });
  const held = Array.from({ length: 5 }, () => pool.allocate(256 * KiB));
  for (const b of held) pool.release(b);
  assert.equal(pool.pooledBytes, 1024 * KiB, "four of five kept");
  for (let i = 0; i < 4; i++) pool.allocate(256 * KiB);
  assert.equal(pool.pooledBytes, 0);
  assert.deepEqual([pool.fresh, pool.reused], [5, 4]);
});
