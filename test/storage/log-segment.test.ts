// LogSegment: appends as-is with Kafka's index-interval rule, translateOffset from the index plus a header
// scan, reads of whole batches starting with the batch that contains the offset, recovery (CRC, partial
// tail), truncation, timestamps, roll conditions and the files an independent parser sees.

import assert from "node:assert/strict";
import { appendFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { test } from "node:test";
import { MockTime } from "../../src/common/time.js";
import { setBaseOffset } from "../../src/protocol/records/index.js";
import { logFile, offsetIndexFile, timeIndexFile } from "../../src/storage/log-file-names.js";
import { LogSegment } from "../../src/storage/log-segment.js";
import { verifySegment } from "./independent-segment-parser.js";
import {
  batch,
  config,
  parseLogFile,
  parseOffsetIndexFile,
  parseTimeIndexFile,
  tempPartitionDir,
} from "./storage-test-utils.js";

interface Fixture {
  dir: string;
  seg: LogSegment;
  time: MockTime;
  cleanup: () => void;
  /** Appends a batch of `count` records at `offset`; returns its bytes. */
  add: (offset: bigint, count: number, ts?: bigint, valueSize?: number) => Buffer;
}

function fixture(base = 0n, overrides = {}): Fixture {
  const t = tempPartitionDir("log-segment");
  mkdirSync(t.dir, { recursive: true });
  const time = new MockTime();
  const cfg = config({ indexIntervalBytes: 200, segmentIndexBytes: 4096, ...overrides });
  const seg = LogSegment.open(t.dir, base, cfg, time);
  const add = (offset: bigint, count: number, ts = 1000n + offset, valueSize = 20): Buffer => {
    const b = batch(count, { timestamp: ts, valueSize });
    setBaseOffset(b, 0, offset);
    seg.append(offset + BigInt(count - 1), ts, offset + BigInt(count - 1), b);
    return b;
  };
  return { dir: t.dir, seg, time, cleanup: t.cleanup, add };
}

test("appended bytes are stored as-is; index entries follow the index.interval.bytes rule", () => {
  const f = fixture(100n);
  try {
    const sizes: number[] = [];
    let off = 100n;
    for (let i = 0; i < 30; i++) {
      sizes.push(f.add(off, 3).length);
      off += 3n;
    }
    f.seg.onBecomeInactiveSegment();
    const parsed = parseLogFile(readFileSync(logFile(f.dir, 100n)));
    assert.equal(parsed.batches.length, 30);
    assert.equal(parsed.trailingBytes, 0);
    parsed.batches.forEach((b, i) => {
      assert.equal(b.baseOffset, 100n + BigInt(i * 3));
      assert.ok(b.crcValid);
    });
    // Kafka's rule: an entry for an append once more than 200 bytes were written since the last one.
    const expected: Array<{ relativeOffset: number; position: number }> = [];
    let since = 0;
    let pos = 0;
    for (let i = 0; i < 30; i++) {
      if (since > 200) {
        expected.push({ relativeOffset: i * 3 + 2, position: pos });
        since = 0;
      }
      since += sizes[i];
      pos += sizes[i];
    }
    assert.ok(expected.length > 3);
    assert.deepEqual(parseOffsetIndexFile(offsetIndexFile(f.dir, 100n)), expected);
    const timeEntries = parseTimeIndexFile(timeIndexFile(f.dir, 100n));
    // One per offset index entry (timestamps grow) plus the roll entry for the max timestamp.
    assert.equal(timeEntries.length, expected.length + 1);
    assert.deepEqual(timeEntries[timeEntries.length - 1], { timestamp: 1000n + 187n, relativeOffset: 89 });
    assert.equal(statSync(offsetIndexFile(f.dir, 100n)).size, expected.length * 8);
  } finally {
    f.seg.close();
    f.cleanup();
  }
});

test("translateOffset and read start with the batch containing the offset and return whole batches", () => {
  const f = fixture();
  try {
    const bufs: Buffer[] = [];
    for (let i = 0; i < 20; i++) bufs.push(f.add(BigInt(i * 5), 5));
    const size = bufs[0].length;
    const t = f.seg.translateOffset(37n)!;
    assert.equal(t.baseOffset, 35n);
    assert.equal(t.offset, 39n);
    assert.equal(t.position, 7 * size);
    assert.equal(f.seg.translateOffset(100n), undefined);

    const r = f.seg.read(37n, size * 2 + 10)!;
    assert.equal(r.records.length, size * 2);
    assert.deepEqual(r.records, Buffer.concat([bufs[7], bufs[8]]));
    assert.equal(r.position, 7 * size);

    const tooSmall = f.seg.read(37n, 10)!;
    assert.equal(tooSmall.records.length, 0);
    assert.equal(tooSmall.firstEntryIncomplete, true);
    const minOne = f.seg.read(37n, 10, f.seg.size, true)!;
    assert.deepEqual(minOne.records, bufs[7]);
    // maxOffset: batches ending at or after it are left out.
    const bounded = f.seg.read(0n, 1 << 20, f.seg.size, false, 12n)!;
    assert.equal(bounded.records.length, size * 2);
    assert.equal(f.seg.readNextOffset(), 100n);
  } finally {
    f.seg.close();
    f.cleanup();
  }
});

test("recover rebuilds the indexes and truncates at a partial batch or a bad CRC", () => {
  const f = fixture();
  try {
    for (let i = 0; i < 20; i++) f.add(BigInt(i * 5), 5);
    const before = f.seg.offsetIndex.entries;
    assert.ok(before > 3);
    f.seg.offsetIndex.truncateTo(0n);
    let r = f.seg.recover();
    assert.equal(r.bytesTruncated, 0);
    assert.equal(f.seg.offsetIndex.entries, before);
    assert.equal(f.seg.readNextOffset(), 100n);
    const fullSize = f.seg.size;
    f.seg.closeHandlers();

    // A partial batch at the end.
    appendFileSync(logFile(f.dir, 0n), batch(3).subarray(0, 40));
    let seg = LogSegment.open(f.dir, 0n, config({ indexIntervalBytes: 200 }), f.time, {
      fileAlreadyExists: true,
    });
    r = seg.recover();
    assert.equal(r.bytesTruncated, 40);
    assert.equal(seg.size, fullSize);
    seg.closeHandlers();

    // A flipped byte inside batch 10.
    const bytes = readFileSync(logFile(f.dir, 0n));
    const pos = parseLogFile(bytes).batches[10].position;
    bytes[pos + 70] ^= 0xff;
    writeFileSync(logFile(f.dir, 0n), bytes);
    seg = LogSegment.open(f.dir, 0n, config({ indexIntervalBytes: 200 }), f.time, {
      fileAlreadyExists: true,
    });
    r = seg.recover();
    assert.equal(r.bytesTruncated, fullSize - pos);
    assert.match(r.reason ?? "", /CRC/);
    assert.equal(seg.readNextOffset(), 50n);
    for (const e of seg.offsetIndex.allEntries()) assert.ok(e.position < seg.size);
    seg.close();
  } finally {
    f.cleanup();
  }
});

test("truncateTo removes the batch holding the offset and everything after", () => {
  const f = fixture();
  try {
    const bufs: Buffer[] = [];
    for (let i = 0; i < 20; i++) bufs.push(f.add(BigInt(i * 5), 5));
    const removed = f.seg.truncateTo(52n);
    assert.equal(removed, bufs[0].length * 10);
    assert.equal(f.seg.readNextOffset(), 50n);
    for (const e of f.seg.offsetIndex.allEntries()) assert.ok(e.offset < 52n);
    f.add(50n, 5);
    assert.equal(f.seg.readNextOffset(), 55n);
  } finally {
    f.seg.close();
    f.cleanup();
  }
});

test("findOffsetByTimestamp returns the first record with timestamp >= target", () => {
  const f = fixture();
  try {
    for (let i = 0; i < 20; i++) f.add(BigInt(i * 5), 5, 10_000n + BigInt(i * 100));
    assert.deepEqual(f.seg.findOffsetByTimestamp(10_250n), { timestamp: 10_300n, offset: 15n });
    assert.deepEqual(f.seg.findOffsetByTimestamp(0n), { timestamp: 10_000n, offset: 0n });
    assert.equal(f.seg.findOffsetByTimestamp(99_999n), undefined);
    assert.equal(f.seg.maxTimestamp, 11_900n);
    assert.equal(f.seg.largestTimestamp, 11_900);
  } finally {
    f.seg.close();
    f.cleanup();
  }
});

test("shouldRoll: segment.bytes, segment.ms from the first batch's timestamp, full index, offset overflow", () => {
  const f = fixture(0n, { segmentIndexBytes: 48 });
  try {
    const p = {
      maxSegmentMs: 1000,
      maxSegmentBytes: 10_000,
      maxTimestampInMessages: 5000n,
      maxOffsetInMessages: 10n,
      messagesSize: 100,
      now: f.time.milliseconds(),
    };
    assert.equal(f.seg.shouldRoll(p), false);
    f.add(0n, 1, 5000n);
    assert.equal(f.seg.shouldRoll(p), false);
    assert.equal(f.seg.shouldRoll({ ...p, maxTimestampInMessages: 6001n }), true);
    assert.equal(f.seg.shouldRoll({ ...p, maxSegmentBytes: f.seg.size + 99 }), true);
    assert.equal(f.seg.shouldRoll({ ...p, maxOffsetInMessages: 2147483648n }), true);
    for (let i = 0; !f.seg.offsetIndex.isFull(); i++) f.seg.offsetIndex.append(BigInt(i), i);
    assert.equal(f.seg.shouldRoll(p), true);
  } finally {
    f.seg.close();
    f.cleanup();
  }
});

test("changeFileSuffixes and deleteIfExists move and remove all four files", () => {
  const f = fixture(7n);
  try {
    f.add(7n, 2);
    f.seg.changeFileSuffixes("", ".deleted");
    assert.ok(existsSync(`${logFile(f.dir, 7n)}.deleted`));
    assert.ok(existsSync(`${offsetIndexFile(f.dir, 7n)}.deleted`));
    f.seg.deleteIfExists();
    assert.ok(!existsSync(`${logFile(f.dir, 7n)}.deleted`));
    assert.ok(!existsSync(`${timeIndexFile(f.dir, 7n)}.deleted`));
  } finally {
    f.cleanup();
  }
});

test("one append of many batches is indexed per batch (Kafka 3.6+), as the independent parser checks", () => {
  const f = fixture(0n);
  try {
    const batches: Buffer[] = [];
    for (let i = 0; i < 40; i++) {
      const b = batch(2, { timestamp: 5000n + BigInt(i), valueSize: 30 });
      setBaseOffset(b, 0, BigInt(i * 2));
      batches.push(b);
    }
    const all = Buffer.concat(batches);
    f.seg.append(79n, 5039n, 79n, all);
    f.seg.onBecomeInactiveSegment();
    const { problems } = verifySegment(
      0n,
      readFileSync(logFile(f.dir, 0n)),
      readFileSync(offsetIndexFile(f.dir, 0n)),
      readFileSync(timeIndexFile(f.dir, 0n)),
    );
    assert.deepEqual(problems, []);
    const entries = parseOffsetIndexFile(offsetIndexFile(f.dir, 0n));
    assert.ok(entries.length > 5, `${entries.length} index entries for one append`);
    for (const e of entries)
      assert.equal((e.relativeOffset + 1) % 2, 0, "each entry is a batch's last offset");
    assert.equal(
      f.seg.translateOffset(41n)?.position,
      batches.slice(0, 20).reduce((n, b) => n + b.length, 0),
    );
  } finally {
    f.cleanup();
  }
});
