// SkimpyOffsetMap: key -> last offset with a fixed memory bound: lookups, overwrites, the load factor,
// clear, latestOffset, and agreement with a plain Map on random keys.

import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { OFFSET_MAP_BYTES_PER_ENTRY, SkimpyOffsetMap } from "../../src/storage/cleaner/offset-map.js";

const k = (s: string): Buffer => Buffer.from(s);

test("put/get, absent keys, overwrite, size and latestOffset", () => {
  const map = new SkimpyOffsetMap(1024);
  assert.equal(map.get(k("a")), -1n);
  assert.equal(map.latestOffset, -1n);
  map.put(k("a"), 5n);
  map.put(k("b"), 7n);
  assert.equal(map.get(k("a")), 5n);
  assert.equal(map.get(k("b")), 7n);
  assert.equal(map.size, 2);
  map.put(k("a"), 9n);
  assert.equal(map.get(k("a")), 9n);
  assert.equal(map.size, 2);
  assert.equal(map.latestOffset, 9n);
  map.put(k(""), 0n); // empty key and offset 0 are fine
  assert.equal(map.get(k("")), 0n);
  map.updateLatestOffset(100n);
  assert.equal(map.latestOffset, 100n);
  map.updateLatestOffset(50n);
  assert.equal(map.latestOffset, 100n);
  map.clear();
  assert.equal(map.size, 0);
  assert.equal(map.get(k("a")), -1n);
  assert.equal(map.latestOffset, -1n);
});

test("memory bound: slots fit the buffer, a prime count, full maps refuse new keys", () => {
  const map = new SkimpyOffsetMap(24 * 100);
  assert.ok(map.slots <= 100);
  assert.equal(map.slots, 97);
  assert.ok(map.memoryBytes <= 24 * 100);
  assert.equal(OFFSET_MAP_BYTES_PER_ENTRY, 24);
  for (let i = 0; i < map.slots - 1; i++) map.put(k(`key-${i}`), BigInt(i));
  assert.equal(map.size, map.slots - 1);
  for (let i = 0; i < map.slots - 1; i++) assert.equal(map.get(k(`key-${i}`)), BigInt(i));
  assert.throws(() => map.put(k("one-too-many"), 1n), RangeError);
  map.put(k("key-3"), 1000n); // existing keys can still be updated
  assert.equal(map.get(k("key-3")), 1000n);
  assert.throws(() => new SkimpyOffsetMap(30), RangeError);
  assert.throws(() => map.put(k("x"), -1n), RangeError);
});

test("large offsets round-trip", () => {
  const map = new SkimpyOffsetMap(4096);
  const big = 2n ** 52n + 12345n;
  map.put(k("big"), big);
  assert.equal(map.get(k("big")), big);
  map.put(k("u32"), 0xffffffffn);
  assert.equal(map.get(k("u32")), 0xffffffffn);
});

test("agrees with a plain Map on random keys up to the 0.9 load factor", () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.uint8Array({ minLength: 0, maxLength: 12 }), fc.nat(1_000_000)), {
        maxLength: 400,
      }),
      (puts) => {
        const map = new SkimpyOffsetMap(24 * 500);
        const model = new Map<string, bigint>();
        for (const [key, off] of puts) {
          const b = Buffer.from(key);
          if (!model.has(b.toString("hex")) && map.size >= Math.floor(map.slots * 0.9)) continue;
          map.put(b, BigInt(off));
          model.set(b.toString("hex"), BigInt(off));
        }
        assert.equal(map.size, model.size);
        for (const [hex, off] of model) assert.equal(map.get(Buffer.from(hex, "hex")), off);
        assert.equal(map.get(Buffer.from("not-a-key-of-the-test-because-too-long")), -1n);
      },
    ),
    { numRuns: 100 },
  );
});

test("utilization and collision rate", () => {
  const map = new SkimpyOffsetMap(24 * 1000);
  for (let i = 0; i < 500; i++) map.put(k(`k${i}`), BigInt(i));
  assert.ok(Math.abs(map.utilization - 500 / map.slots) < 1e-9);
  assert.ok(map.collisionRate >= 0 && map.collisionRate < 2);
});
