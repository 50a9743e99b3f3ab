// Compaction end to end through LogManager on real directories, driven by MockTime + MockScheduler: the
// cleaner task keeps the last value per key with offsets preserved and checkpoints in
// cleaner-offset-checkpoint; tombstones survive the first pass and go after delete.retention.ms;
// min.compaction.lag.ms keeps recent segments dirty; min.cleanable.dirty.ratio decides whether a log is
// cleaned; compact,delete also applies retention.ms; the active segment is never cleaned; a crash at each
// step of the .cleaned/.swap protocol recovers to the old or the new segments with nothing lost. Every
// cleaned log is read back with UnifiedLog.read + decodeRecordBatches, and every segment file is checked
// with the independent parser.

import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { MockScheduler } from "../../src/common/scheduler.js";
import { MockTime } from "../../src/common/time.js";
import type { TopicPartition } from "../../src/common/topic-partition.js";
import {
  buildEndTxnMarkerBatch,
  buildRecordBatch,
  ControlRecordType,
  decodeRecordBatches,
} from "../../src/protocol/records/index.js";
import type { CleanerConfig } from "../../src/storage/cleaner/cleaner-config.js";
import { CLEANER_OFFSET_CHECKPOINT } from "../../src/storage/cleaner/log-cleaner-manager.js";
import { DEFAULT_LOG_CONFIG, type LogConfig } from "../../src/storage/log-config.js";
import { LogDirLocks } from "../../src/storage/log-dir-lock.js";
import { LogManager, type LogManagerConfig } from "../../src/storage/log-manager.js";
import type { LogSegment } from "../../src/storage/log-segment.js";
import type { UnifiedLog } from "../../src/storage/unified-log.js";
import { verifySegment } from "./independent-segment-parser.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const BACKOFF = 15_000;
const TOPIC = "compacted";
const TP: TopicPartition = { topic: TOPIC, partition: 0 };

const SMALL_CLEANER: Partial<CleanerConfig> = {
  dedupeBufferSize: 1024 * 1024,
  // Small chunks: the map build and the clean read each segment in several pieces.
  ioBufferSize: 2048,
  backoffMs: BACKOFF,
};

function topicConfig(overrides: Partial<LogConfig> = {}): LogConfig {
  return {
    ...DEFAULT_LOG_CONFIG,
    cleanupPolicy: ["compact"],
    segmentBytes: 1024 * 1024,
    indexIntervalBytes: 256,
    fileDeleteDelayMs: 0,
    deleteRetentionMs: HOUR,
    minCleanableDirtyRatio: 0.5,
    ...overrides,
  };
}

interface Env {
  root: string;
  dirs: string[];
  time: MockTime;
  lm: LogManager;
  scheduler: MockScheduler;
  log: UnifiedLog;
  cleanup: () => void;
}

function open(
  root: string,
  time: MockTime,
  cfg: LogConfig,
  overrides: Partial<LogManagerConfig> = {},
): Omit<Env, "cleanup" | "root"> {
  const dirs = [join(root, "kafka-logs-0")];
  const scheduler = new MockScheduler(time);
  const lm = new LogManager(
    {
      logDirs: dirs,
      brokerId: 0,
      clusterId: "q1Sh-9_ISia_zwGINzRvyQ",
      defaultLogConfig: DEFAULT_LOG_CONFIG,
      // Retention by LogManager's own task stays out of the way: the cleaner's retention is under test.
      retentionCheckIntervalMs: 24 * HOUR,
      recoveryPointCheckpointIntervalMs: 24 * HOUR,
      logStartOffsetCheckpointIntervalMs: 24 * HOUR,
      flushCheckIntervalMs: Number.MAX_SAFE_INTEGER,
      cleanerConfig: SMALL_CLEANER,
      ...overrides,
    },
    time,
    scheduler,
  );
  lm.setTopicConfig(TOPIC, cfg);
  lm.startup();
  lm.startTasks();
  const log = lm.getOrCreateLog(TP);
  return { dirs, time, lm, scheduler, log };
}

function setup(
  cfg: LogConfig,
  overrides: Partial<LogManagerConfig> = {},
  root = mkdtempSync(join(tmpdir(), "tributary-compaction-")),
): Env {
  const time = new MockTime();
  return {
    root,
    ...open(root, time, cfg, overrides),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** Appends one batch of (key, value) records; the value null is a tombstone. Advances the high watermark. */
function produce(
  log: UnifiedLog,
  records: Array<[string, string | null]>,
  timestamp: bigint,
): { first: bigint; last: bigint } {
  const b = buildRecordBatch({
    records: records.map(([k, v]) => ({ key: Buffer.from(k), value: v === null ? null : Buffer.from(v) })),
    timestamp,
  });
  const info = log.appendAsLeader(b, 0);
  log.updateHighWatermark(log.logEndOffset);
  return { first: info.firstOffset, last: info.lastOffset };
}

/**
 * Writes `segments` segments of `batchesPerSegment` batches of 4 records over `keys` keys (values name
 * their offset), rolling after each; returns the last offset of each key and every (offset -> key, value).
 */
function fill(
  log: UnifiedLog,
  segments: number,
  batchesPerSegment: number,
  keys: number,
  timestamp: bigint,
  prefix = "k",
): Map<bigint, { key: string; value: string | null }> {
  const written = new Map<bigint, { key: string; value: string | null }>();
  for (let s = 0; s < segments; s++) {
    for (let b = 0; b < batchesPerSegment; b++) {
      const next = log.logEndOffset;
      const recs: Array<[string, string]> = [];
      for (let r = 0; r < 4; r++) {
        const offset = next + BigInt(r);
        recs.push([`${prefix}${Number(offset) % keys}`, `value@${offset}`]);
      }
      produce(log, recs, timestamp);
      for (let r = 0; r < 4; r++) written.set(next + BigInt(r), { key: recs[r][0], value: recs[r][1] });
    }
    log.roll();
  }
  return written;
}

interface ReadRecord {
  offset: bigint;
  key: string;
  value: string | null;
}

/** Every record from the log start to the log end, through UnifiedLog.read and decodeRecordBatches. */
function readAll(log: UnifiedLog): ReadRecord[] {
  const out: ReadRecord[] = [];
  let offset = log.logStartOffset;
  while (offset < log.logEndOffset) {
    const r = log.read(offset, 4096, "log-end", true);
    if (r.records.length === 0) break;
    for (const b of decodeRecordBatches(r.records)) {
      for (const rec of b.records) {
        if (rec.offset >= offset)
          out.push({
            offset: rec.offset,
            key: rec.key?.toString() ?? "",
            value: rec.value === null ? null : rec.value.toString(),
          });
      }
      offset = b.header.baseOffset + BigInt(b.header.lastOffsetDelta) + 1n;
    }
  }
  for (let i = 1; i < out.length; i++) assert.ok(out[i].offset > out[i - 1].offset, "offsets increase");
  return out;
}

/** The last record per key among `records`. */
function lastPerKey(records: Iterable<ReadRecord>): Map<string, ReadRecord> {
  const m = new Map<string, ReadRecord>();
  for (const r of records) m.set(r.key, r);
  return m;
}

function asRecords(written: Map<bigint, { key: string; value: string | null }>): ReadRecord[] {
  return [...written].map(([offset, v]) => ({ offset, ...v }));
}

/** The independent parser finds nothing wrong in any non-active segment's .log/.index/.timeindex. */
function verifySegmentFiles(log: UnifiedLog): void {
  const segs = log.segments();
  for (const s of segs.slice(0, -1)) {
    const prefix = s.logFile.slice(0, -".log".length);
    const { parsed, problems } = verifySegment(
      s.baseOffset,
      readFileSync(s.logFile),
      readFileSync(`${prefix}.index`),
      readFileSync(`${prefix}.timeindex`),
    );
    assert.deepEqual(problems, [], `segment ${s.baseOffset}`);
    if (parsed.batches.length > 0) assert.ok(parsed.batches[0].baseOffset >= s.baseOffset);
  }
  for (const n of readdirSync(log.dir)) assert.doesNotMatch(n, /\.(cleaned|swap)$/, `leftover ${n}`);
}

function cleanerCheckpoint(dir: string): string | undefined {
  const f = join(dir, CLEANER_OFFSET_CHECKPOINT);
  return existsSync(f) ? readFileSync(f, "utf8") : undefined;
}

/** The record set compaction must produce from `written` below `upTo` (plus everything from upTo on). */
function expectedCompacted(all: ReadRecord[], upTo: bigint): ReadRecord[] {
  const last = lastPerKey(all.filter((r) => r.offset < upTo));
  return all.filter((r) => r.offset >= upTo || last.get(r.key)?.offset === r.offset);
}

test("the cleaner task keeps the last value per key, preserves offsets, never touches the active segment, and checkpoints", async () => {
  // segment.bytes caps the groups: several old segments go into each cleaned one.
  const env = setup(topicConfig({ segmentBytes: 6000 }));
  try {
    const { log, scheduler, time } = env;
    const ts = BigInt(time.milliseconds());
    const written = fill(log, 9, 8, 24, ts);
    const segsBefore = log.segments();
    assert.equal(segsBefore.length, 10);
    assert.equal(segsBefore[segsBefore.length - 1].size, 0, "an empty active segment");
    const all = asRecords(written);
    assert.deepEqual(readAll(log), all);

    await scheduler.tick(BACKOFF - 1);
    assert.equal(cleanerCheckpoint(env.dirs[0]), undefined, "nothing before log.cleaner.backoff.ms");
    await scheduler.tick(1);

    // Everything below the active segment was cleaned; the empty active segment is the last one.
    const firstUncleanable = segsBefore[segsBefore.length - 1].baseOffset;
    const after = readAll(log);
    assert.deepEqual(after, expectedCompacted(all, firstUncleanable));
    for (const r of after) assert.equal(r.value, `value@${r.offset}`, "offsets preserved");
    assert.equal(cleanerCheckpoint(env.dirs[0]), `0\n1\n${TOPIC} 0 ${firstUncleanable}\n`);
    assert.ok(log.numberOfSegments < segsBefore.length, "segments were grouped");
    verifySegmentFiles(log);
    assert.equal(log.logEndOffset, firstUncleanable);
    const s = env.lm.cleaner?.lastClean?.summary;
    assert.ok(
      s !== undefined && s.cleanedSegmentsWritten >= 2 && s.segmentsCleaned === segsBefore.length - 1,
    );

    // Now with a real active segment holding duplicates: new data, a clean, and the active one untouched.
    const more = fill(log, 2, 8, 24, ts);
    for (let i = 0; i < 4; i++) produce(log, [[`k${i}`, `value@${log.logEndOffset}`]], ts);
    produce(log, [["k0", `value@${log.logEndOffset}`]], ts);
    const active2 = log.activeSegment;
    const activeSize = active2.size;
    const active2Bytes = readFileSync(active2.logFile);
    await scheduler.tick(BACKOFF);
    assert.equal(log.activeSegment, active2);
    assert.equal(active2.size, activeSize);
    assert.deepEqual(readFileSync(active2.logFile), active2Bytes, "the active segment is never cleaned");
    assert.equal(cleanerCheckpoint(env.dirs[0]), `0\n1\n${TOPIC} 0 ${active2.baseOffset}\n`);
    const all2 = [...all, ...asRecords(more)];
    const result = readAll(log);
    const expectedOld = expectedCompacted(all2, active2.baseOffset);
    assert.deepEqual(
      result.filter((r) => r.offset < active2.baseOffset),
      expectedOld,
    );
    // Duplicates of k0 remain in the active segment.
    assert.equal(result.filter((r) => r.offset >= active2.baseOffset && r.key === "k0").length, 2);
    verifySegmentFiles(log);

    // A clean shutdown writes the checkpoint; the next start reads it and the log reads back the same.
    env.lm.shutdown();
    const reopened = open(env.root, time, topicConfig({ segmentBytes: 6000 }));
    try {
      assert.equal(reopened.lm.cleanerManager?.checkpointOf(TP), active2.baseOffset);
      assert.deepEqual(readAll(reopened.log), result);
    } finally {
      reopened.lm.shutdown();
    }
  } finally {
    env.cleanup();
  }
});

test("tombstones survive the first clean and go on a later one after delete.retention.ms", async () => {
  const env = setup(topicConfig({ deleteRetentionMs: HOUR, minCleanableDirtyRatio: 0.01 }));
  try {
    const { log, scheduler, time } = env;
    const ts = BigInt(time.milliseconds());
    fill(log, 3, 4, 8, ts);
    // Delete k1 and k2.
    produce(
      log,
      [
        ["k1", null],
        ["k2", null],
      ],
      ts,
    );
    log.roll();
    produce(log, [["other", "x"]], ts);
    await scheduler.tick(BACKOFF);
    let records = readAll(log);
    const tombstones = records.filter((r) => r.value === null).map((r) => r.key);
    assert.deepEqual(tombstones, ["k1", "k2"], "the tombstones are kept by the first clean");
    assert.equal(records.filter((r) => r.key === "k1").length, 1, "older values of a deleted key go");
    verifySegmentFiles(log);

    // Before the delete horizon: another clean (new dirty data) still keeps them.
    produce(log, [["other", "y"]], ts);
    log.roll();
    produce(log, [["other2", "z"]], ts);
    await scheduler.tick(BACKOFF);
    records = readAll(log);
    assert.deepEqual(
      records.filter((r) => r.value === null).map((r) => r.key),
      ["k1", "k2"],
    );

    // After delete.retention.ms, the next clean drops them.
    await scheduler.tick(HOUR);
    produce(log, [["other", "w"]], BigInt(time.milliseconds()));
    log.roll();
    produce(log, [["other3", "v"]], BigInt(time.milliseconds()));
    await scheduler.tick(BACKOFF);
    records = readAll(log);
    assert.deepEqual(
      records.filter((r) => r.value === null),
      [],
      "tombstones are gone after delete.retention.ms",
    );
    assert.equal(records.filter((r) => r.key === "k1" || r.key === "k2").length, 0);
    assert.equal(records.filter((r) => r.key === "k3").length, 1);
    verifySegmentFiles(log);
  } finally {
    env.lm.shutdown();
    env.cleanup();
  }
});

test("min.compaction.lag.ms keeps recent segments dirty", async () => {
  const env = setup(topicConfig({ minCompactionLagMs: HOUR, minCleanableDirtyRatio: 0.01 }));
  try {
    const { log, scheduler, time } = env;
    const old = fill(log, 3, 4, 8, BigInt(time.milliseconds() - 2 * HOUR));
    const recentBase = log.activeSegment.baseOffset;
    const recent = fill(log, 2, 4, 8, BigInt(time.milliseconds()));
    produce(log, [["k0", "active"]], BigInt(time.milliseconds()));
    const all = [...asRecords(old), ...asRecords(recent)];
    await scheduler.tick(BACKOFF);
    assert.equal(cleanerCheckpoint(env.dirs[0]), `0\n1\n${TOPIC} 0 ${recentBase}\n`);
    const records = readAll(log).filter((r) => r.value !== "active");
    assert.deepEqual(records, expectedCompacted(all, recentBase), "segments within the lag stay dirty");
    verifySegmentFiles(log);

    // Once the lag has passed, they are cleaned too.
    await scheduler.tick(HOUR);
    const end = log.activeSegment.baseOffset;
    assert.equal(cleanerCheckpoint(env.dirs[0]), `0\n1\n${TOPIC} 0 ${end}\n`);
    assert.deepEqual(
      readAll(log).filter((r) => r.value !== "active"),
      expectedCompacted(all, end),
    );
  } finally {
    env.lm.shutdown();
    env.cleanup();
  }
});

test("min.cleanable.dirty.ratio decides whether a log is cleaned at all", async () => {
  const env = setup(topicConfig({ minCleanableDirtyRatio: 0.5 }));
  try {
    const { log, scheduler, time } = env;
    const ts = BigInt(time.milliseconds());
    // All dirty: ratio 1 > 0.5, cleaned.
    fill(log, 4, 8, 200, ts);
    await scheduler.tick(BACKOFF);
    const first = log.activeSegment.baseOffset;
    assert.equal(env.lm.cleanerManager?.checkpointOf(TP), first);
    const cleanBytes = log.size;

    // A small dirty segment next to the large clean part: ratio < 0.5, not cleaned.
    fill(log, 1, 1, 200, ts, "n");
    const small = log.segments();
    const dirtyBytes = small[small.length - 2].size;
    assert.ok(dirtyBytes / (cleanBytes + dirtyBytes) < 0.5);
    await scheduler.tick(4 * BACKOFF);
    assert.equal(env.lm.cleanerManager?.checkpointOf(TP), first, "below the ratio: not cleaned");
    assert.equal(log.segments().length, small.length);

    // Enough dirty bytes to pass the ratio: cleaned.
    fill(log, 4, 12, 400, ts, "m");
    await scheduler.tick(BACKOFF);
    assert.equal(env.lm.cleanerManager?.checkpointOf(TP), log.activeSegment.baseOffset);
    assert.equal(env.lm.cleanerManager?.dirtiestLogCleanableRatio, 0);
    verifySegmentFiles(log);
  } finally {
    env.lm.shutdown();
    env.cleanup();
  }
});

test("compact,delete also applies retention.ms through the cleaner", async () => {
  const env = setup(
    topicConfig({ cleanupPolicy: ["compact", "delete"], retentionMs: HOUR, minCleanableDirtyRatio: 0.01 }),
  );
  try {
    const { log, scheduler, time } = env;
    fill(log, 3, 4, 8, BigInt(time.milliseconds() - 3 * HOUR));
    const keepFrom = log.activeSegment.baseOffset;
    await scheduler.tick(BACKOFF);
    // Compacted, then deleted by retention.ms from the cleaner (LogManager's own retention task has not run).
    assert.equal(log.logStartOffset, keepFrom);
    assert.equal(log.segments()[0].baseOffset, keepFrom);
    assert.deepEqual(readAll(log), []);
    // Recent segments are compacted and kept.
    const recent = fill(log, 2, 4, 8, BigInt(time.milliseconds()));
    produce(log, [["k0", "active"]], BigInt(time.milliseconds()));
    await scheduler.tick(BACKOFF);
    assert.equal(log.logStartOffset, keepFrom);
    const records = readAll(log).filter((r) => r.value !== "active");
    assert.deepEqual(records, expectedCompacted(asRecords(recent), log.activeSegment.baseOffset));
    verifySegmentFiles(log);
    // The cleaner checkpoint follows the log start offset.
    assert.ok((env.lm.cleanerManager?.checkpointOf(TP) ?? -1n) >= keepFrom);
  } finally {
    env.lm.shutdown();
    env.cleanup();
  }
});

test("log.cleaner.enable=false: no cleaning; deleting a log drops its cleaner checkpoint entry", async () => {
  const off = setup(topicConfig({ minCleanableDirtyRatio: 0.01 }), {
    cleanerConfig: { ...SMALL_CLEANER, enableCleaner: false },
  });
  try {
    fill(off.log, 3, 4, 4, BigInt(off.time.milliseconds()));
    const size = off.log.size;
    await off.scheduler.tick(10 * BACKOFF);
    assert.equal(off.log.size, size);
    assert.equal(off.lm.cleanerManager, undefined);
    assert.equal(cleanerCheckpoint(off.dirs[0]), undefined);
  } finally {
    off.lm.shutdown();
    off.cleanup();
  }

  const env = setup(topicConfig({ minCleanableDirtyRatio: 0.01 }));
  try {
    const other = env.lm.getOrCreateLog({ topic: TOPIC, partition: 1 });
    fill(env.log, 3, 4, 4, BigInt(env.time.milliseconds()));
    fill(other, 3, 4, 4, BigInt(env.time.milliseconds()));
    await env.scheduler.tick(BACKOFF);
    const both = cleanerCheckpoint(env.dirs[0]) ?? "";
    assert.match(both, new RegExp(`^${TOPIC} 0 `, "m"));
    assert.match(both, new RegExp(`^${TOPIC} 1 `, "m"));
    env.lm.deleteLog({ topic: TOPIC, partition: 1 });
    const after = cleanerCheckpoint(env.dirs[0]) ?? "";
    assert.doesNotMatch(after, new RegExp(`^${TOPIC} 1 `, "m"));
    assert.match(after, new RegExp(`^${TOPIC} 0 `, "m"));
    // A paused log is skipped until resumed.
    const m = env.lm.cleanerManager;
    assert.ok(m !== undefined);
    fill(env.log, 2, 4, 4, BigInt(env.time.milliseconds()));
    const before = m.checkpointOf(TP);
    m.abortAndPauseCleaning(TP);
    await env.scheduler.tick(BACKOFF);
    assert.equal(m.checkpointOf(TP), before);
    m.resumeCleaning(TP);
    await env.scheduler.tick(BACKOFF);
    assert.equal(m.checkpointOf(TP), env.log.activeSegment.baseOffset);
  } finally {
    env.lm.shutdown();
    env.cleanup();
  }
});

test("truncation below the cleaner checkpoint moves it back (LogManager.truncateTo)", async () => {
  const env = setup(topicConfig({ minCleanableDirtyRatio: 0.01 }));
  try {
    const { log, lm, scheduler, time } = env;
    fill(log, 4, 4, 8, BigInt(time.milliseconds()));
    await scheduler.tick(BACKOFF);
    assert.equal(lm.cleanerManager?.checkpointOf(TP), log.activeSegment.baseOffset);
    const segs = log.segments();
    assert.ok(segs.length >= 2);
    // Truncate into the cleaned part: the checkpoint follows the new active segment.
    const target = segs[0].baseOffset + 3n;
    assert.equal(lm.truncateTo(TP, target), true);
    assert.equal(lm.cleanerManager?.checkpointOf(TP), log.activeSegment.baseOffset);
    assert.equal(lm.cleanerManager?.cleaningState(TP), undefined, "cleaning resumed");
    assert.ok(
      readAll(log).every((r) => r.offset < log.logEndOffset),
      "nothing at or past the truncation point",
    );
    lm.truncateFullyAndStartAt(TP, 500n);
    assert.equal(lm.cleanerManager?.checkpointOf(TP), 500n);
    assert.equal(cleanerCheckpoint(env.dirs[0]), `0\n1\n${TOPIC} 0 500\n`);
  } finally {
    env.lm.shutdown();
    env.cleanup();
  }
});

test("aborted transactions are dropped, markers kept, and the cleaned .txnindex keeps the aborted transaction", async () => {
  const env = setup(topicConfig({ minCleanableDirtyRatio: 0.01 }));
  try {
    const { log, scheduler, time } = env;
    const ts = BigInt(time.milliseconds());
    fill(log, 1, 2, 4, ts);
    const txn = (producerId: bigint, recs: Array<[string, string]>): bigint => {
      const info = log.appendAsLeader(
        buildRecordBatch({
          records: recs.map(([k, v]) => ({ key: Buffer.from(k), value: Buffer.from(v) })),
          timestamp: ts,
          producerId,
          producerEpoch: 0,
          baseSequence: 0,
          isTransactional: true,
        }),
        0,
      );
      return info.firstOffset;
    };
    const endTxn = (
      producerId: bigint,
      type: typeof ControlRecordType.Abort | typeof ControlRecordType.Commit,
    ) =>
      log.appendAsLeader(
        buildEndTxnMarkerBatch({ type, producerId, producerEpoch: 0, coordinatorEpoch: 1, timestamp: ts }),
        0,
        "coordinator",
      ).firstOffset;
    const abortedFirst = txn(7n, [
      ["k0", "aborted"],
      ["t1", "aborted"],
    ]);
    txn(8n, [["k1", "committed"]]);
    endTxn(8n, ControlRecordType.Commit);
    const abortMarker = endTxn(7n, ControlRecordType.Abort);
    // What the producer state manager wrote to the .txnindex when the abort marker completed the transaction.
    const aborted = {
      producerId: 7n,
      firstOffset: abortedFirst,
      lastOffset: abortMarker,
      lastStableOffset: abortMarker + 1n,
    };
    assert.deepEqual(log.activeSegment.txnIndex.allAbortedTxns(), [aborted]);
    log.roll();
    produce(log, [["other", "x"]], ts);
    log.updateHighWatermark(log.logEndOffset);
    await scheduler.tick(BACKOFF);

    assert.equal(env.lm.cleanerManager?.checkpointOf(TP), log.activeSegment.baseOffset);
    const bytes = log.read(0n, 1 << 20, "log-end", true).records;
    const batches = decodeRecordBatches(bytes);
    const data = batches.filter((b) => !b.header.isControl).flatMap((b) => b.records);
    assert.equal(data.filter((r) => r.value?.toString() === "aborted").length, 0, "aborted data is gone");
    assert.equal(
      data.find((r) => r.key?.toString() === "k0")?.value?.toString(),
      "value@4",
      "aborted values are not mapped",
    );
    assert.equal(data.find((r) => r.key?.toString() === "k1")?.value?.toString(), "committed");
    const markers = batches.filter((b) => b.header.isControl).map((b) => b.header.producerId);
    assert.deepEqual(markers, [8n, 7n], "both markers survive the first clean");
    const cleaned = log.segments()[0];
    assert.deepEqual(cleaned.txnIndex.allAbortedTxns(), [aborted]);
    assert.equal(readFileSync(cleaned.txnIndex.file).length, 34);
    verifySegmentFiles(log);
  } finally {
    env.lm.shutdown();
    env.cleanup();
  }
});

test("a full offset map cleans in several passes, each advancing the checkpoint", async () => {
  // 64 slots: at most 57 keys per pass (load factor 0.9), for 150 distinct keys.
  const env = setup(topicConfig({ minCleanableDirtyRatio: 0.01 }), {
    cleanerConfig: { ...SMALL_CLEANER, dedupeBufferSize: 64 * 24 },
  });
  try {
    const { log, lm, scheduler, time } = env;
    const written = fill(log, 6, 10, 150, BigInt(time.milliseconds()));
    const all = asRecords(written);
    const checkpoints: bigint[] = [];
    const m = lm.cleanerManager;
    assert.ok(m !== undefined);
    const update = m.updateCheckpoints.bind(m);
    m.updateCheckpoints = (dir, u, r) => {
      if (u !== undefined) checkpoints.push(u.offset);
      update(dir, u, r);
    };
    await scheduler.tick(BACKOFF);
    assert.ok(checkpoints.length >= 3, `passes: ${checkpoints.join(",")}`);
    for (let i = 1; i < checkpoints.length; i++) assert.ok(checkpoints[i] > checkpoints[i - 1]);
    const end = log.activeSegment.baseOffset;
    assert.equal(m.checkpointOf(TP), end);
    assert.deepEqual(readAll(log), expectedCompacted(all, end));
    verifySegmentFiles(log);
  } finally {
    env.lm.shutdown();
    env.cleanup();
  }
});

type CrashPoint = "cleaned" | "half-renamed-to-swap" | "swap" | "half-deleted" | "deleted";

/**
 * Runs the cleaner, stops the swap at `point` as a crash would (the process dies: nothing after it runs,
 * and the LogManager is abandoned without a shutdown), reopens, and returns what was before and after.
 */
async function crashDuringSwap(point: CrashPoint): Promise<void> {
  const cfg = topicConfig({ minCleanableDirtyRatio: 0.01 });
  // The log dir's lock, held as the process that crashes holds it (the OS drops it when the process dies).
  const root = mkdtempSync(join(tmpdir(), "tributary-compaction-"));
  const locks = LogDirLocks.acquire([join(root, "kafka-logs-0")]);
  const env = setup(cfg, { logDirLocks: locks }, root);
  try {
    const { log, scheduler, time } = env;
    const written = fill(log, 4, 6, 10, BigInt(time.milliseconds()));
    produce(log, [["k0", "active"]], BigInt(time.milliseconds()));
    const all = asRecords(written);
    const before = readAll(log);
    const oldBases = log.segments().map((s) => s.baseOffset);
    const activeBase = log.activeSegment.baseOffset;
    let crashed = false;
    log.replaceSegments = (newSegments: readonly LogSegment[], oldSegments: readonly LogSegment[]) => {
      const cleaned = newSegments[0];
      // The process dies here: the cleaner's cleanup of the .cleaned files never runs.
      cleaned.deleteIfExists = () => {};
      crashed = true;
      if (point === "half-renamed-to-swap") {
        renameSync(cleaned.logFile, `${cleaned.logFile.slice(0, -".cleaned".length)}.swap`);
      } else if (point !== "cleaned") {
        cleaned.changeFileSuffixes(".cleaned", ".swap");
        const doomed =
          point === "half-deleted" ? oldSegments.slice(0, 1) : point === "deleted" ? oldSegments : [];
        for (const s of doomed) {
          s.closeHandlers();
          s.changeFileSuffixes("", ".deleted");
        }
      }
      throw new Error(`simulated crash (${point})`);
    };
    await scheduler.tick(BACKOFF);
    assert.ok(crashed, "the cleaner reached the swap");

    // Restart after the crash (no clean-shutdown marker: recovery runs).
    locks.release();
    const re = open(env.root, time, cfg);
    // The replica layer restores the high watermark from replication-offset-checkpoint; here, by hand.
    re.log.updateHighWatermark(re.log.logEndOffset);
    try {
      const leftovers = readdirSync(re.log.dir).filter((n) => /\.(cleaned|swap|deleted)$/.test(n));
      assert.deepEqual(leftovers, []);
      const records = readAll(re.log);
      const undone = point === "cleaned" || point === "half-renamed-to-swap";
      if (undone) {
        assert.deepEqual(records, before, `${point}: the old segments are back`);
        assert.deepEqual(
          re.log.segments().map((s) => s.baseOffset),
          oldBases,
        );
      } else {
        const expected = expectedCompacted(all, activeBase);
        assert.deepEqual(
          records.filter((r) => r.value !== "active"),
          expected,
          `${point}: the swap completed`,
        );
        assert.deepEqual(
          re.log.segments().map((s) => s.baseOffset),
          [0n, activeBase],
        );
      }
      assert.equal(records[records.length - 1].value, "active");
      verifySegmentFiles(re.log);
      // The restarted cleaner finishes the job.
      await re.scheduler.tick(BACKOFF);
      assert.deepEqual(
        readAll(re.log).filter((r) => r.value !== "active"),
        expectedCompacted(all, activeBase),
      );
      assert.equal(re.lm.cleanerManager?.checkpointOf(TP), activeBase);
      verifySegmentFiles(re.log);
    } finally {
      re.lm.shutdown();
    }
  } finally {
    env.cleanup();
  }
}

for (const point of ["cleaned", "half-renamed-to-swap", "swap", "half-deleted", "deleted"] as const) {
  test(`a crash during the swap (${point}) recovers to the old or the new segments with nothing lost`, async () => {
    await crashDuringSwap(point);
  });
}
