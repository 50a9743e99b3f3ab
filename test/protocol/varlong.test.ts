// Reader.varlong against Writer.varlong: every int64 survives the round trip, whether it takes the
// number fast path (up to 7 bytes) or the bigint path (8–10 bytes); non-minimal encodings read as their
// value; truncated and over-long varlongs are typed errors.

import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { ProtocolDecodeError } from "../../src/protocol/primitives/errors.js";
import { Reader } from "../../src/protocol/primitives/reader.js";
import { Writer } from "../../src/protocol/primitives/writer.js";

function roundTrip(v: bigint): { value: bigint; bytes: number } {
  const w = new Writer(16);
  w.varlong(v);
  const buf = w.toBuffer();
  const r = new Reader(buf);
  const value = r.varlong();
  assert.equal(r.pos, buf.length, `all of ${v}'s ${buf.length} bytes read`);
  return { value, bytes: buf.length };
}

test("every int64 round-trips, on both sides of the 7-byte fast path", () => {
  const edges: bigint[] = [0n, 1n, -1n, 63n, -64n, 64n, -65n, 2n ** 31n, -(2n ** 31n)];
  for (const k of [41n, 48n, 49n, 55n, 56n, 62n])
    edges.push(2n ** k - 1n, 2n ** k, -(2n ** k), -(2n ** k) - 1n);
  edges.push(2n ** 63n - 1n, -(2n ** 63n));
  const sizes = new Set<number>();
  for (const v of edges) {
    const { value, bytes } = roundTrip(v);
    assert.equal(value, v);
    sizes.add(bytes);
  }
  assert.deepEqual(
    [...sizes].sort((a, b) => a - b),
    [1, 2, 5, 6, 7, 8, 9, 10],
  );
  fc.assert(
    fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (v) => roundTrip(v).value === v),
  );
  fc.assert(fc.property(fc.integer(), (v) => roundTrip(BigInt(v)).value === BigInt(v)));
});

test("non-minimal, truncated and over-long varlongs", () => {
  assert.equal(new Reader(Buffer.from([0x82, 0x80, 0x00])).varlong(), 1n, "zero continuation bytes");
  assert.equal(new Reader(Buffer.from([0x83, 0x00])).varlong(), -2n);
  for (const len of [1, 3, 6, 7, 9]) {
    const r = new Reader(Buffer.alloc(len, 0x80));
    assert.throws(
      () => r.varlong(),
      (e) => e instanceof ProtocolDecodeError && /truncated varlong/.test(e.message),
    );
  }
  assert.throws(() => new Reader(Buffer.alloc(11, 0xff)).varlong(), /varlong longer than 10 bytes/);
});
