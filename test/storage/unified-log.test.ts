// UnifiedLog: offset assignment in place, leader epochs, LogAppendTime, produce errors, roll and file
// names, reads across segments and isolation levels, truncation, log start offset, timestamps, segment
// deletion and replacement, follower appends, flush and reopen.

import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { MockScheduler } from "../../src/common/scheduler.js";
import { MockTime } from "../../src/common/time.js";
import { KafkaError } from "../../src/protocol/errors.js";
import {
  CRC_OFFSET,
  decodeRecordBatches,
  isRecordBatchCrcValid,
  readRecordBatchHeader,
  TimestampType,
} from "../../src/protocol/records/index.js";
import { LeaderEpochFileCache } from "../../src/storage/leader-epoch/leader-epoch-file-cache.js";
import type { LogConfig } from "../../src/storage/log-config.js";
import { LogSegment } from "../../src/storage/log-segment.js";
import { UnifiedLog } from "../../src/storage/unified-log.js";
import { batch, config, parseLogFile, tempPartitionDir } from "./storage-test-utils.js";

interface Fx {
  dir: string;
  time: MockTime;
  log: UnifiedLog;
  cache: LeaderEpochFileCache;
  cleanup: () => void;
  reopen: (clean?: boolean) => UnifiedLog;
}

function open(overrides: Partial<LogConfig> = {}, scheduler?: MockScheduler, time = new MockTime()): Fx {
  const t = tempPartitionDir("unified-log");
  mkdirSync(t.dir, { recursive: true });
  const cfg = config({ indexIntervalBytes: 256, segmentIndexBytes: 4096, ...overrides });
  const cache = LeaderEpochFileCache.load(t.dir);
  const log = UnifiedLog.open(t.dir, cfg, {
    time,
    recoveryPoint: 0n,
    hadCleanShutdown: true,
    leaderEpochCache: cache,
    scheduler,
  });
  const fx: Fx = {
    dir: t.dir,
    time,
    log,
    cache,
    cleanup: () => {
      try {
        fx.log.close();
      } catch {}
      t.cleanup();
    },
    reopen: (clean = true) => {
      const rp = fx.log.recoveryPoint;
      const start = fx.log.logStartOffset;
      fx.log.close();
      fx.cache = LeaderEpochFileCache.load(t.dir);
      fx.log = UnifiedLog.open(t.dir, cfg, {
        time,
        recoveryPoint: rp,
        logStartOffset: start,
        hadCleanShutdown: clean,
        leaderEpochCache: fx.cache,
        scheduler,
      });
      return fx.log;
    },
  };
  return fx;
}

function offsetsOf(records: Buffer): bigint[] {
  return decodeRecordBatches(records).flatMap((b) => b.records.map((r) => r.offset));
}

test("appendAsLeader assigns offsets in place, stamps the leader epoch, keeps the CRC valid", () => {
  const fx = open();
  try {
    const b1 = batch(3, { baseOffset: 999n });
    const crcBefore = b1.readUInt32BE(CRC_OFFSET);
    const info = fx.log.appendAsLeader(b1, 5);
    assert.equal(info.firstOffset, 0n);
    assert.equal(info.lastOffset, 2n);
    assert.equal(readRecordBatchHeader(b1).baseOffset, 0n);
    assert.equal(readRecordBatchHeader(b1).partitionLeaderEpoch, 5);
    assert.equal(b1.readUInt32BE(CRC_OFFSET), crcBefore, "offset and epoch are outside the CRC");
    const two = Buffer.concat([batch(2), batch(4)]);
    const info2 = fx.log.appendAsLeader(two, 6);
    assert.equal(info2.firstOffset, 3n);
    assert.equal(info2.lastOffset, 8n);
    assert.equal(info2.numBatches, 2);
    assert.equal(fx.log.logEndOffset, 9n);
    assert.deepEqual(fx.cache.epochEntries(), [
      { epoch: 5, startOffset: 0n },
      { epoch: 6, startOffset: 3n },
    ]);
    const r = fx.log.read(0n, 1 << 20, "log-end", false);
    assert.deepEqual(offsetsOf(r.records), [0n, 1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n]);
  } finally {
    fx.cleanup();
  }
});

test("message.timestamp.type=LogAppendTime sets maxTimestamp and the type bit, recomputing the CRC", () => {
  const fx = open({ messageTimestampType: "LogAppendTime" });
  try {
    const b = batch(2, { timestamp: 5n });
    const info = fx.log.appendAsLeader(b, 0);
    const h = readRecordBatchHeader(b);
    assert.equal(h.timestampType, TimestampType.LogAppendTime);
    assert.equal(h.maxTimestamp, BigInt(fx.time.milliseconds()));
    assert.equal(info.logAppendTime, BigInt(fx.time.milliseconds()));
    assert.ok(isRecordBatchCrcValid(b));
  } finally {
    fx.cleanup();
  }
});

test("bad produce input: CORRUPT_MESSAGE, MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE; nothing appended", () => {
  const fx = open({ maxMessageBytes: 500, segmentBytes: 1000 });
  try {
    const errorName = (fn: () => unknown): string => {
      try {
        fn();
      } catch (e) {
        assert.ok(e instanceof KafkaError);
        return e.errorName;
      }
      return "none";
    };
    const bad = batch(2);
    bad[bad.length - 1] ^= 1;
    assert.equal(
      errorName(() => fx.log.appendAsLeader(bad, 0)),
      "CORRUPT_MESSAGE",
    );
    assert.equal(
      errorName(() => fx.log.appendAsLeader(batch(2).subarray(0, 50), 0)),
      "CORRUPT_MESSAGE",
    );
    assert.equal(
      errorName(() => fx.log.appendAsLeader(batch(1, { valueSize: 600 }), 0)),
      "MESSAGE_TOO_LARGE",
    );
    const many = Buffer.concat(Array.from({ length: 6 }, () => batch(1, { valueSize: 150 })));
    assert.equal(
      errorName(() => fx.log.appendAsLeader(many, 0)),
      "RECORD_LIST_TOO_LARGE",
    );
    assert.equal(fx.log.logEndOffset, 0n);
    assert.equal(fx.log.activeSegment.size, 0);
  } finally {
    fx.cleanup();
  }
});

test("rolls at segment.bytes; new segment files are named after the next offset; reads span segments", () => {
  const fx = open({ segmentBytes: 1000 });
  try {
    for (let i = 0; i < 40; i++) fx.log.appendAsLeader(batch(2, { valueSize: 50 }), 1);
    assert.ok(fx.log.numberOfSegments > 3);
    const segs = fx.log.segments();
    for (let i = 1; i < segs.length; i++) {
      assert.ok(segs[i - 1].size <= 1000);
      assert.equal(segs[i].baseOffset, segs[i - 1].readNextOffset());
    }
    const logs = readdirSync(fx.dir)
      .filter((n) => n.endsWith(".log"))
      .sort();
    assert.deepEqual(
      logs,
      segs.map((s) => `${s.baseOffset.toString().padStart(20, "0")}.log`),
    );
    let next = 0n;
    const seen: bigint[] = [];
    while (next < fx.log.logEndOffset) {
      const r = fx.log.read(next, 700, "log-end", true);
      const o = offsetsOf(r.records);
      assert.ok(o.length > 0);
      assert.ok(o[0] <= next);
      for (const x of o) if (x >= next) seen.push(x);
      next = o[o.length - 1] + 1n;
    }
    assert.equal(seen.length, 80);
    assert.deepEqual(
      seen,
      Array.from({ length: 80 }, (_, i) => BigInt(i)),
    );
  } finally {
    fx.cleanup();
  }
});

test("read bounds: OFFSET_OUT_OF_RANGE outside [logStart, LEO]; high-watermark isolation", () => {
  const fx = open();
  try {
    for (let i = 0; i < 10; i++) fx.log.appendAsLeader(batch(2), 0);
    assert.throws(
      () => fx.log.read(21n, 1000, "log-end", false),
      (e: unknown) => e instanceof KafkaError && e.errorName === "OFFSET_OUT_OF_RANGE",
    );
    assert.equal(fx.log.read(20n, 1000, "log-end", false).records.length, 0);
    assert.equal(fx.log.read(0n, 1000, "high-watermark", false).records.length, 0);
    assert.equal(fx.log.updateHighWatermark(99n), 20n);
    fx.log.updateHighWatermark(7n);
    const r = fx.log.read(0n, 1 << 20, "high-watermark", false);
    assert.deepEqual(offsetsOf(r.records), [0n, 1n, 2n, 3n, 4n, 5n]);
    assert.equal(r.highWatermark, 7n);
    assert.equal(r.lastStableOffset, 7n);
    assert.equal(offsetsOf(fx.log.read(0n, 1 << 20, "committed", false).records).length, 6);
    fx.log.maybeIncrementLogStartOffset(4n);
    assert.throws(() => fx.log.read(3n, 1000, "log-end", false), KafkaError);
    assert.throws(() => fx.log.maybeIncrementLogStartOffset(8n), KafkaError);
    assert.equal(fx.log.logStartOffset, 4n);
  } finally {
    fx.cleanup();
  }
});

test("truncateTo drops later segments, the epoch cache follows; truncateFullyAndStartAt restarts", () => {
  const fx = open({ segmentBytes: 600 });
  try {
    for (let i = 0; i < 30; i++) fx.log.appendAsLeader(batch(2, { valueSize: 30 }), i < 15 ? 1 : 2);
    assert.equal(fx.log.logEndOffset, 60n);
    fx.log.updateHighWatermark(60n);
    assert.ok(fx.log.truncateTo(20n));
    assert.equal(fx.log.logEndOffset, 20n);
    assert.equal(fx.log.highWatermark, 20n);
    assert.deepEqual(fx.cache.epochEntries(), [{ epoch: 1, startOffset: 0n }]);
    for (const s of fx.log.segments()) assert.ok(s.baseOffset <= 20n);
    const info = fx.log.appendAsLeader(batch(1), 3);
    assert.equal(info.firstOffset, 20n);
    assert.ok(!fx.log.truncateTo(100n));
    fx.log.truncateFullyAndStartAt(500n);
    assert.equal(fx.log.logStartOffset, 500n);
    assert.equal(fx.log.logEndOffset, 500n);
    assert.equal(fx.log.numberOfSegments, 1);
    assert.deepEqual(fx.cache.epochEntries(), []);
    assert.equal(fx.log.appendAsLeader(batch(1), 4).firstOffset, 500n);
    assert.ok(existsSync(`${fx.dir}/00000000000000000500.log`));
  } finally {
    fx.cleanup();
  }
});

test("fetchOffsetByTimestamp: by time, -1 latest, -2 earliest, -3 max timestamp", () => {
  const fx = open({ segmentBytes: 500 });
  try {
    for (let i = 0; i < 20; i++) fx.log.appendAsLeader(batch(2, { timestamp: 1000n + BigInt(i * 10) }), 0);
    assert.deepEqual(fx.log.fetchOffsetByTimestamp(1055n), { timestamp: 1060n, offset: 12n, leaderEpoch: 0 });
    assert.equal(fx.log.fetchOffsetByTimestamp(5000n), undefined);
    assert.equal(fx.log.fetchOffsetByTimestamp(-1n)?.offset, 40n);
    assert.equal(fx.log.fetchOffsetByTimestamp(-2n)?.offset, 0n);
    const max = fx.log.fetchOffsetByTimestamp(-3n)!;
    assert.equal(max.timestamp, 1190n);
    // Both records of the last batch carry 1190: the first of them (Kafka 3.8+'s offsetOfMaxTimestamp).
    assert.equal(max.offset, 38n);
  } finally {
    fx.cleanup();
  }
});

test("deleteSegments renames to .deleted then removes after file.delete.delay.ms; log start moves", async () => {
  const time = new MockTime();
  const scheduler = new MockScheduler(time);
  const fx = open({ segmentBytes: 500, fileDeleteDelayMs: 1000 }, scheduler, time);
  try {
    for (let i = 0; i < 20; i++) fx.log.appendAsLeader(batch(2), 0);
    fx.log.updateHighWatermark(fx.log.logEndOffset);
    const segs = fx.log.segments();
    assert.equal(fx.log.deleteSegments(segs.slice(0, 2), "test"), 2);
    assert.equal(fx.log.logStartOffset, segs[2].baseOffset);
    // .log, .index, .timeindex (a .txnindex only exists once an aborted transaction was indexed).
    const deleted = readdirSync(fx.dir).filter((n) => n.endsWith(".deleted"));
    assert.equal(deleted.length, 6);
    await scheduler.tick(999);
    assert.equal(readdirSync(fx.dir).filter((n) => n.endsWith(".deleted")).length, 6);
    await scheduler.tick(1);
    assert.equal(readdirSync(fx.dir).filter((n) => n.endsWith(".deleted")).length, 0);
    // Deleting everything rolls a fresh segment at the log end first.
    fx.log.deleteSegments(fx.log.segments(), "all");
    assert.equal(fx.log.numberOfSegments, 1);
    assert.equal(fx.log.logStartOffset, 40n);
    assert.equal(fx.log.activeSegment.baseOffset, 40n);
  } finally {
    fx.cleanup();
  }
});

test("deleteOldSegments applies retention.bytes through the retention policy", () => {
  const fx = open({ segmentBytes: 500, retentionBytes: 1000 });
  try {
    for (let i = 0; i < 30; i++) fx.log.appendAsLeader(batch(2), 0);
    fx.log.updateHighWatermark(fx.log.logEndOffset);
    const n = fx.log.deleteOldSegments();
    assert.ok(n > 0);
    assert.ok(fx.log.size - fx.log.activeSegment.size <= 1000);
    assert.equal(fx.log.logStartOffset, fx.log.segments()[0].baseOffset);
  } finally {
    fx.cleanup();
  }
});

test("replaceSegments swaps .cleaned segments in through .swap", () => {
  const fx = open({ segmentBytes: 500 });
  try {
    for (let i = 0; i < 20; i++) fx.log.appendAsLeader(batch(2), 0);
    const all = fx.log.segments();
    const old = all.slice(0, 2);
    // A "cleaned" copy of the first segment's data (here simply its first batch).
    const cleaned = LogSegment.open(fx.dir, old[0].baseOffset, fx.log.config, fx.time, {
      fileSuffix: ".cleaned",
    });
    const first = old[0].read(0n, 1, old[0].size, true)!.records;
    cleaned.append(1n, 0n, 1n, Buffer.from(first));
    fx.log.replaceSegments([cleaned], old);
    const names = readdirSync(fx.dir);
    assert.ok(!names.some((n) => n.endsWith(".cleaned") || n.endsWith(".swap")));
    assert.equal(fx.log.segments()[0], cleaned);
    assert.equal(fx.log.segments()[1], all[2]);
    assert.deepEqual(offsetsOf(fx.log.read(0n, 1 << 20, "log-end", false).records), [0n, 1n]);
    assert.equal(offsetsOf(fx.log.read(2n, 1 << 20, "log-end", false).records)[0], all[2].baseOffset);
  } finally {
    fx.cleanup();
  }
});

test("appendAsFollower keeps offsets and epochs, rejects offsets that go backwards", () => {
  const fx = open();
  try {
    const a = batch(3, { baseOffset: 0n, epoch: 2 });
    const b = batch(2, { baseOffset: 10n, epoch: 3 });
    fx.log.appendAsFollower(Buffer.concat([a, b]));
    assert.equal(fx.log.logEndOffset, 12n);
    assert.deepEqual(fx.cache.epochEntries(), [
      { epoch: 2, startOffset: 0n },
      { epoch: 3, startOffset: 10n },
    ]);
    assert.throws(() => fx.log.appendAsFollower(batch(1, { baseOffset: 11n })), KafkaError);
    // A fetch response cut in the middle of its last batch: the whole batches are appended.
    const cut = Buffer.concat([batch(1, { baseOffset: 12n }), batch(3, { baseOffset: 13n }).subarray(0, 30)]);
    const info = fx.log.appendAsFollower(cut);
    assert.equal(info.validBytes, cut.length - 30);
    assert.equal(fx.log.logEndOffset, 13n);
    assert.equal(fx.log.appendAsFollower(batch(2).subarray(0, 70)).numBatches, 0);
    assert.deepEqual(offsetsOf(fx.log.read(3n, 1 << 20, "log-end", false).records), [10n, 11n, 12n]);
  } finally {
    fx.cleanup();
  }
});

test("a roll flushes the segments before it off the event loop; a truncation meanwhile moves no recovery point", async () => {
  const time = new MockTime();
  const scheduler = new MockScheduler(time);
  const fx = open({ segmentBytes: 800, flushMessages: 1000n }, scheduler, time);
  try {
    for (let i = 0; i < 25; i++) fx.log.appendAsLeader(batch(2), 1);
    const rolledAt = fx.log.activeSegment.baseOffset;
    assert.ok(fx.log.segments().length > 2 && rolledAt > 0n);
    // Nothing is synced during the append itself: the flushes wait for the scheduler.
    assert.equal(fx.log.recoveryPoint, 0n);
    await scheduler.tick(0);
    assert.equal(fx.log.recoveryPoint, rolledAt);
    assert.equal(fx.log.flushesInProgress, 0);
    fx.log.roll();
    const flushing = scheduler.tick(0); // the flush up to 50 starts and waits for the thread pool
    assert.equal(fx.log.flushesInProgress, 1);
    fx.log.truncateTo(30n);
    await flushing;
    assert.equal(fx.log.flushesInProgress, 0);
    assert.equal(fx.log.recoveryPoint, rolledAt < 30n ? rolledAt : 30n, "not moved past the truncation");
    assert.equal(fx.log.logEndOffset, 30n);
  } finally {
    fx.cleanup();
  }
});

test("flush moves the recovery point; a clean reopen keeps everything and the files stay Kafka's", () => {
  const fx = open({ segmentBytes: 800, flushMessages: 1000n });
  try {
    for (let i = 0; i < 25; i++) fx.log.appendAsLeader(batch(2), 1);
    assert.equal(fx.log.recoveryPoint, 0n);
    fx.log.flush(10n);
    assert.equal(fx.log.recoveryPoint, 10n);
    fx.log.flush();
    assert.equal(fx.log.recoveryPoint, 50n);
    const log = fx.reopen(true);
    assert.equal(log.logEndOffset, 50n);
    assert.equal(log.recoveryPoint, 50n);
    assert.deepEqual(
      readAll(log),
      Array.from({ length: 50 }, (_, i) => BigInt(i)),
    );
    for (const s of log.segments()) {
      const parsed = parseLogFile(readFileSync(s.logFile));
      assert.ok(parsed.batches.every((b) => b.crcValid));
    }
    assert.equal(log.appendAsLeader(batch(1), 1).firstOffset, 50n);
  } finally {
    fx.cleanup();
  }
});

/** Every offset in the log, reading segment by segment as a consumer would. */
function readAll(log: UnifiedLog): bigint[] {
  const out: bigint[] = [];
  let next = log.logStartOffset;
  while (next < log.logEndOffset) {
    const o = offsetsOf(log.read(next, 1 << 20, "log-end", true).records).filter((x) => x >= next);
    if (o.length === 0) break;
    out.push(...o);
    next = o[o.length - 1] + 1n;
  }
  return out;
}

test("rolls when the offset index is full and when offsets would overflow the segment's int32 range", () => {
  const fx = open({ segmentIndexBytes: 32, indexIntervalBytes: 1 });
  try {
    for (let i = 0; i < 12; i++) fx.log.appendAsLeader(batch(1), 0);
    assert.ok(fx.log.numberOfSegments >= 2, `${fx.log.numberOfSegments} segments`);
    for (const s of fx.log.segments().slice(0, -1)) assert.ok(s.offsetIndex.entries <= 4);
    // A follower append far past the active segment's base rolls a segment at the batch's offset.
    const far = fx.log.logEndOffset + 3_000_000_000n;
    fx.log.appendAsFollower(batch(2, { baseOffset: far }));
    assert.equal(fx.log.activeSegment.baseOffset, far);
    assert.equal(fx.log.logEndOffset, far + 2n);
    assert.equal(offsetsOf(fx.log.read(far, 1000, "log-end", false).records)[0], far);
  } finally {
    fx.cleanup();
  }
});

test("a follower's first batch of a new epoch is checkpointed off the event loop, and on disk before the recovery point passes it", async () => {
  const fx = open();
  try {
    const epochFile = (): string => readFileSync(join(fx.dir, "leader-epoch-checkpoint"), "utf8");
    fx.log.appendAsFollower(batch(3, { baseOffset: 0n, epoch: 4 }));
    assert.deepEqual(fx.cache.epochEntries(), [{ epoch: 4, startOffset: 0n }]);
    assert.equal(epochFile(), "", "not written on the append's turn of the event loop");
    await fx.cache.flushed();
    assert.equal(epochFile(), "0\n1\n4 0\n");
    // A flush that moves the recovery point past a new entry writes it first, synchronously.
    fx.log.appendAsFollower(batch(2, { baseOffset: 3n, epoch: 5 }));
    fx.log.flush();
    assert.equal(fx.log.recoveryPoint, 5n);
    assert.equal(epochFile(), "0\n2\n4 0\n5 3\n");
  } finally {
    fx.cleanup();
  }
});
