// OffsetIndex: entry format on disk, binary-search lookups, truncation, preallocation and trim, reopening
// an untrimmed (crashed) file, and the sanity check.

import assert from "node:assert/strict";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { CorruptIndexError, InvalidIndexAppendError } from "../../src/storage/abstract-index.js";
import { OffsetIndex } from "../../src/storage/offset-index.js";
import { parseOffsetIndexFile, tempPartitionDir } from "./storage-test-utils.js";

function setup(): { file: string; cleanup: () => void } {
  const t = tempPartitionDir("offset-index");
  mkdirSync(t.dir, { recursive: true });
  return { file: join(t.dir, "00000000000000000100.index"), cleanup: t.cleanup };
}

test("entries are (relativeOffset int32, position int32); the new file is preallocated and trimmed on close", () => {
  const { file, cleanup } = setup();
  try {
    const idx = new OffsetIndex(file, 100n, 1000);
    assert.equal(statSync(file).size, 1000); // 1000 rounded down to a multiple of 8
    assert.equal(idx.maxEntries, 125);
    idx.append(105n, 4200);
    idx.append(110n, 9000);
    idx.close();
    assert.equal(statSync(file).size, 16);
    assert.deepEqual(parseOffsetIndexFile(file), [
      { relativeOffset: 5, position: 4200 },
      { relativeOffset: 10, position: 9000 },
    ]);
    const reopened = new OffsetIndex(file, 100n, 1000);
    assert.equal(reopened.entries, 2);
    assert.ok(reopened.isFull(), "a trimmed index is full until resized");
    reopened.resize(1000);
    assert.ok(!reopened.isFull());
    reopened.close();
  } finally {
    cleanup();
  }
});

test("lookup finds the largest entry <= target, or (baseOffset, 0)", () => {
  const { file, cleanup } = setup();
  try {
    const idx = new OffsetIndex(file, 100n, 8 * 1000);
    for (let i = 1; i <= 500; i++) idx.append(100n + BigInt(i * 3), i * 100);
    assert.deepEqual(idx.lookup(50n), { offset: 100n, position: 0 });
    assert.deepEqual(idx.lookup(102n), { offset: 100n, position: 0 });
    assert.deepEqual(idx.lookup(103n), { offset: 103n, position: 100 });
    assert.deepEqual(idx.lookup(104n), { offset: 103n, position: 100 });
    assert.deepEqual(idx.lookup(400n), { offset: 400n, position: 10000 });
    assert.deepEqual(idx.lookup(10_000n), { offset: 1600n, position: 50000 });
    idx.close();
  } finally {
    cleanup();
  }
});

test("appends must increase, fit an int32 above the base, and not overflow capacity", () => {
  const { file, cleanup } = setup();
  try {
    const idx = new OffsetIndex(file, 100n, 24);
    idx.append(101n, 10);
    assert.throws(() => idx.append(101n, 20), InvalidIndexAppendError);
    assert.throws(() => idx.append(100n + 2147483648n, 20), InvalidIndexAppendError);
    idx.append(102n, 20);
    idx.append(103n, 30);
    assert.ok(idx.isFull());
    assert.throws(() => idx.append(104n, 40), InvalidIndexAppendError);
    idx.close();
  } finally {
    cleanup();
  }
});

test("truncateTo drops entries >= offset, on disk too", () => {
  const { file, cleanup } = setup();
  try {
    const idx = new OffsetIndex(file, 100n, 800);
    for (let i = 1; i <= 10; i++) idx.append(100n + BigInt(i * 10), i * 1000);
    idx.truncateTo(150n);
    assert.equal(idx.entries, 4);
    assert.deepEqual(idx.lastEntry(), { offset: 140n, position: 4000 });
    idx.truncateTo(155n);
    assert.equal(idx.entries, 4);
    idx.truncateTo(0n);
    assert.equal(idx.entries, 0);
    idx.append(101n, 5);
    idx.close();
    assert.deepEqual(parseOffsetIndexFile(file), [{ relativeOffset: 1, position: 5 }]);
  } finally {
    cleanup();
  }
});

test("an untrimmed file from a crash opens with its real entries", () => {
  const { file, cleanup } = setup();
  try {
    const idx = new OffsetIndex(file, 100n, 800);
    idx.append(110n, 100);
    idx.append(120n, 200);
    idx.writeBehind(); // the entries reached the file, then a crash: no trim
    idx.closeHandler();
    assert.equal(statSync(file).size, 800);
    const reopened = new OffsetIndex(file, 100n, 800);
    assert.equal(reopened.entries, 2);
    reopened.sanityCheck();
    reopened.close();
  } finally {
    cleanup();
  }
});

test("appended entries are written behind: 4 KiB at a time, and before a flush, a trim or a release", () => {
  const { file, cleanup } = setup();
  try {
    const onDisk = (): number => {
      const b = readFileSync(file);
      let n = 0;
      while (n * 8 + 8 <= b.length && b.readBigInt64BE(n * 8) !== 0n) n++;
      return n;
    };
    const idx = new OffsetIndex(file, 0n, 64 * 1024);
    for (let i = 1; i <= 511; i++) idx.append(BigInt(i), i * 100);
    assert.equal(onDisk(), 0, "under 4 KiB of entries: still in memory only");
    assert.equal(idx.lookup(300n).position, 30_000, "lookups see them");
    idx.append(512n, 51_200);
    assert.equal(onDisk(), 512, "4 KiB of entries: written in one write");
    idx.append(513n, 51_300);
    assert.equal(onDisk(), 512);
    idx.flush();
    assert.equal(onDisk(), 513, "flush writes the rest first");
    idx.append(514n, 51_400);
    idx.release();
    assert.equal(onDisk(), 514, "release writes them before dropping the entries from memory");
    assert.equal(idx.lookup(514n).position, 51_400, "read back from the file");
    idx.append(515n, 51_500);
    idx.truncateTo(515n);
    idx.append(516n, 51_600);
    idx.close();
    assert.equal(statSync(file).size, 515 * 8, "trimmed to its entries");
    const reopened = new OffsetIndex(file, 0n, 64 * 1024);
    assert.equal(reopened.entries, 515);
    assert.equal(reopened.lookup(600n).offset, 516n);
    reopened.sanityCheck();
    reopened.close();
  } finally {
    cleanup();
  }
});

test("sanityCheck rejects out-of-order entries and a length that is not a multiple of 8", () => {
  const { file, cleanup } = setup();
  try {
    const b = Buffer.alloc(24);
    b.writeInt32BE(10, 0);
    b.writeInt32BE(100, 4);
    b.writeInt32BE(5, 8); // goes backwards
    b.writeInt32BE(200, 12);
    b.writeInt32BE(20, 16);
    b.writeInt32BE(300, 20);
    writeFileSync(file, b);
    assert.throws(() => new OffsetIndex(file, 100n, 800).sanityCheck(), CorruptIndexError);
    writeFileSync(file, Buffer.alloc(13, 1));
    assert.throws(() => new OffsetIndex(file, 100n, 800).sanityCheck(), /not a multiple of 8/);
  } finally {
    cleanup();
  }
});

test("release drops the entries from memory; the next lookup reads them back", () => {
  const { file, cleanup } = setup();
  try {
    const idx = new OffsetIndex(file, 100n, 800);
    for (let i = 1; i <= 20; i++) idx.append(100n + BigInt(i * 10), i * 1000);
    idx.trimToValidSize();
    idx.release();
    assert.equal(idx.isLoaded, false);
    assert.equal(idx.entries, 20);
    assert.deepEqual(idx.lookup(155n), { offset: 150n, position: 5000 });
    assert.equal(idx.isLoaded, true);
    idx.close();
  } finally {
    cleanup();
  }
});
