// TimeIndex: 12-byte entries, entries only when the timestamp grows, the reserved last slot, lookups,
// truncation and the sanity check.

import assert from "node:assert/strict";
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { CorruptIndexError, InvalidIndexAppendError } from "../../src/storage/abstract-index.js";
import { TimeIndex } from "../../src/storage/time-index.js";
import { parseTimeIndexFile, tempPartitionDir } from "./storage-test-utils.js";

function setup(): { file: string; cleanup: () => void } {
  const t = tempPartitionDir("time-index");
  mkdirSync(t.dir, { recursive: true });
  return { file: join(t.dir, "00000000000000000050.timeindex"), cleanup: t.cleanup };
}

test("entries are (timestamp int64, relativeOffset int32), only when the timestamp grows", () => {
  const { file, cleanup } = setup();
  try {
    const idx = new TimeIndex(file, 50n, 1200);
    assert.equal(statSync(file).size, 1200);
    idx.maybeAppend(1000n, 55n);
    idx.maybeAppend(1000n, 60n); // same timestamp: no entry
    idx.maybeAppend(2000n, 60n);
    assert.throws(() => idx.maybeAppend(3000n, 59n), InvalidIndexAppendError);
    assert.throws(() => idx.maybeAppend(1500n, 70n), InvalidIndexAppendError);
    idx.close();
    assert.deepEqual(parseTimeIndexFile(file), [
      { timestamp: 1000n, relativeOffset: 5 },
      { timestamp: 2000n, relativeOffset: 10 },
    ]);
  } finally {
    cleanup();
  }
});

test("the last slot is reserved for the roll entry (skipFullCheck)", () => {
  const { file, cleanup } = setup();
  try {
    const idx = new TimeIndex(file, 50n, 36); // 3 slots
    idx.maybeAppend(1n, 51n);
    idx.maybeAppend(2n, 52n);
    assert.ok(idx.isFull());
    assert.throws(() => idx.maybeAppend(3n, 53n), InvalidIndexAppendError);
    idx.maybeAppend(3n, 53n, true);
    assert.equal(idx.entries, 3);
    idx.close();
  } finally {
    cleanup();
  }
});

test("lookup finds the largest timestamp <= target, or (-1, baseOffset)", () => {
  const { file, cleanup } = setup();
  try {
    const idx = new TimeIndex(file, 50n, 12000);
    for (let i = 1; i <= 100; i++) idx.maybeAppend(BigInt(i * 10), 50n + BigInt(i));
    assert.deepEqual(idx.lookup(5n), { timestamp: -1n, offset: 50n });
    assert.deepEqual(idx.lookup(10n), { timestamp: 10n, offset: 51n });
    assert.deepEqual(idx.lookup(555n), { timestamp: 550n, offset: 105n });
    assert.deepEqual(idx.lookup(99999n), { timestamp: 1000n, offset: 150n });
    idx.truncateTo(100n);
    assert.deepEqual(idx.lastEntry(), { timestamp: 490n, offset: 99n });
    idx.close();
  } finally {
    cleanup();
  }
});

test("sanityCheck rejects timestamps that do not increase", () => {
  const { file, cleanup } = setup();
  try {
    const b = Buffer.alloc(24);
    b.writeBigInt64BE(500n, 0);
    b.writeInt32BE(1, 8);
    b.writeBigInt64BE(400n, 12);
    b.writeInt32BE(2, 20);
    writeFileSync(file, b);
    assert.throws(() => new TimeIndex(file, 50n, 1200).sanityCheck(), CorruptIndexError);
  } finally {
    cleanup();
  }
});
