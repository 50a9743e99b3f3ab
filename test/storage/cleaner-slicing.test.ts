// The log cleaner takes turns with the event loop (issue 16): LogManager runs a clean in slices of
// CLEANER_SLICE_MS (CleanerThread.runSlice over Cleaner.cleanSteps), each a scheduler task of its own.
// Driven by MockScheduler and a clock that moves 1 ms whenever the cleaner reads it, so a clean spans many
// tasks. Checked: a sliced clean ends exactly as a clean in one piece does, with appends and a roll in
// between; truncation, deletion, shutdown and retention in the middle of a clean leave the log whole, no
// `.cleaned`/`.swap` file behind, the cleaner's state as it should be, and the next clean working.

import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { MockScheduler } from "../../src/common/scheduler.js";
import { MockTime } from "../../src/common/time.js";
import type { TopicPartition } from "../../src/common/topic-partition.js";
import { buildRecordBatch, decodeRecordBatches } from "../../src/protocol/records/index.js";
import type { CleanerConfig } from "../../src/storage/cleaner/cleaner-config.js";
import { DEFAULT_LOG_CONFIG, type LogConfig } from "../../src/storage/log-config.js";
import { LogManager } from "../../src/storage/log-manager.js";
import type { UnifiedLog } from "../../src/storage/unified-log.js";

const HOUR = 3_600_000;
const BACKOFF = 15_000;
const TOPIC = "compacted";
const TP: TopicPartition = { topic: TOPIC, partition: 0 };

const CLEANER: Partial<CleanerConfig> = {
  dedupeBufferSize: 1024 * 1024,
  // Small chunks: many steps per segment.
  ioBufferSize: 512,
  backoffMs: BACKOFF,
};

const TOPIC_CONFIG: LogConfig = {
  ...DEFAULT_LOG_CONFIG,
  cleanupPolicy: ["compact"],
  segmentBytes: 6000,
  indexIntervalBytes: 256,
  fileDeleteDelayMs: 0,
  deleteRetentionMs: HOUR,
  minCleanableDirtyRatio: 0.01,
};

/** A MockTime whose monotonic clock (the one runSlice measures a slice by) moves 1 ms per reading. */
class SteppingTime extends MockTime {
  override nanoseconds(): bigint {
    this.sleep(1);
    return super.nanoseconds();
  }
}

interface Env {
  root: string;
  dir: string;
  time: MockTime;
  scheduler: MockScheduler;
  lm: LogManager;
  log: UnifiedLog;
}

function open(root: string, time: MockTime): Env {
  const dir = join(root, "kafka-logs-0");
  const scheduler = new MockScheduler(time);
  const lm = new LogManager(
    {
      logDirs: [dir],
      brokerId: 0,
      clusterId: "q1Sh-9_ISia_zwGINzRvyQ",
      defaultLogConfig: DEFAULT_LOG_CONFIG,
      retentionCheckIntervalMs: 24 * HOUR,
      recoveryPointCheckpointIntervalMs: 24 * HOUR,
      logStartOffsetCheckpointIntervalMs: 24 * HOUR,
      flushCheckIntervalMs: Number.MAX_SAFE_INTEGER,
      cleanerConfig: CLEANER,
    },
    time,
    scheduler,
  );
  lm.setTopicConfig(TOPIC, TOPIC_CONFIG);
  lm.startup();
  lm.startTasks();
  return { root, dir, time, scheduler, lm, log: lm.getOrCreateLog(TP) };
}

async function withEnv(time: MockTime, body: (env: Env) => Promise<void>): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "tributary-cleaner-slicing-"));
  const env = open(root, time);
  try {
    await body(env);
  } finally {
    env.lm.shutdown();
    rmSync(root, { recursive: true, force: true });
  }
}

interface Rec {
  offset: bigint;
  key: string;
  value: string;
}

/** `segments` segments of 8 batches of 4 records over `keys` keys (values name their offset), rolling after each. */
function fill(log: UnifiedLog, segments: number, keys: number, timestamp: bigint): Rec[] {
  const out: Rec[] = [];
  for (let s = 0; s < segments; s++) {
    for (let b = 0; b < 8; b++) append(log, 4, keys, timestamp, out);
    log.roll();
  }
  return out;
}

function append(log: UnifiedLog, n: number, keys: number, timestamp: bigint, out: Rec[]): void {
  const next = log.logEndOffset;
  const recs: Rec[] = [];
  for (let r = 0; r < n; r++) {
    const offset = next + BigInt(r);
    recs.push({ offset, key: `k${Number(offset) % keys}`, value: `value@${offset}` });
  }
  log.appendAsLeader(
    buildRecordBatch({
      records: recs.map((r) => ({ key: Buffer.from(r.key), value: Buffer.from(r.value) })),
      timestamp,
    }),
    0,
  );
  log.updateHighWatermark(log.logEndOffset);
  out.push(...recs);
}

function readAll(log: UnifiedLog): Rec[] {
  const out: Rec[] = [];
  let offset = log.logStartOffset;
  while (offset < log.logEndOffset) {
    const r = log.read(offset, 4096, "log-end", true);
    if (r.records.length === 0) break;
    for (const b of decodeRecordBatches(r.records)) {
      for (const rec of b.records)
        if (rec.offset >= offset)
          out.push({
            offset: rec.offset,
            key: rec.key?.toString() ?? "",
            value: rec.value?.toString() ?? "",
          });
      offset = b.header.baseOffset + BigInt(b.header.lastOffsetDelta) + 1n;
    }
  }
  return out;
}

/** What compaction of everything below `upTo` leaves of `all`. */
function compacted(all: readonly Rec[], upTo: bigint): Rec[] {
  const last = new Map<string, bigint>();
  for (const r of all) if (r.offset < upTo) last.set(r.key, r.offset);
  return all.filter((r) => r.offset >= upTo || last.get(r.key) === r.offset);
}

function leftovers(log: UnifiedLog): string[] {
  return readdirSync(log.dir).filter((n) => /\.(cleaned|swap)$/.test(n));
}

/** Runs the scheduler until the first slice of a clean ran and the clean is still in progress. */
async function startSlicedClean(env: Env): Promise<void> {
  await env.scheduler.tick(BACKOFF);
  assert.equal(env.lm.cleaner?.inProgress, true, "the clean goes on after its first slice");
  assert.deepEqual(env.lm.cleanerManager?.cleaningState(TP), { kind: "in-progress" });
}

/** One slice at a time until no clean is in progress; returns how many slices that took. */
async function finishClean(env: Env): Promise<number> {
  let slices = 0;
  while (env.lm.cleaner?.inProgress) {
    await env.scheduler.tick(1);
    slices++;
    assert.ok(slices < 10_000, "the clean ends");
  }
  return slices;
}

test("a clean runs over many slices and ends as a clean in one piece does, appends and a roll in between", async () => {
  let oneShot: Rec[] = [];
  await withEnv(new MockTime(), async (env) => {
    fill(env.log, 12, 24, BigInt(env.time.milliseconds()));
    await env.scheduler.tick(BACKOFF);
    assert.equal(env.lm.cleaner?.inProgress, false, "with a still clock the clean ends in one task");
    oneShot = readAll(env.log);
  });
  await withEnv(new SteppingTime(), async (env) => {
    const { log, lm } = env;
    const ts = BigInt(env.time.milliseconds());
    const all = fill(log, 12, 24, ts);
    const firstUncleanable = log.activeSegment.baseOffset;
    await startSlicedClean(env);
    // The broker goes on appending while the clean takes turns; a roll makes the old active segment
    // inactive, but it is past this clean's end.
    append(log, 4, 24, ts, all);
    await env.scheduler.tick(1);
    log.roll();
    append(log, 4, 24, ts, all);
    const slices = 1 + (await finishClean(env));
    assert.ok(slices >= 5, `the clean took ${slices} slices`);
    assert.equal(lm.cleanerManager?.checkpointOf(TP), firstUncleanable);
    assert.equal(lm.cleanerManager?.cleaningState(TP), undefined);
    const after = readAll(log);
    assert.deepEqual(after, compacted(all, firstUncleanable));
    assert.deepEqual(
      after.filter((r) => r.offset < firstUncleanable),
      oneShot.filter((r) => r.offset < firstUncleanable),
      "the same records as a clean in one piece",
    );
    assert.deepEqual(leftovers(log), []);
  });
});

test("truncation in the middle of a clean ends it at once; the log is whole and the next clean works", async () => {
  await withEnv(new SteppingTime(), async (env) => {
    const { log, lm } = env;
    const all = fill(log, 12, 24, BigInt(env.time.milliseconds()));
    await startSlicedClean(env);
    const target = log.segments()[3].baseOffset + 4n; // a batch boundary
    assert.equal(lm.truncateTo(TP, target), true);
    assert.equal(lm.cleaner?.inProgress, false, "the clean ended with the truncation");
    assert.equal(lm.cleanerManager?.cleaningState(TP), undefined, "paused, then resumed");
    assert.deepEqual(leftovers(log), []);
    const now = readAll(log);
    assert.equal(log.logEndOffset, target);
    // Nothing but records that were written, and every key's last record below the truncation point.
    for (const r of now) assert.deepEqual(r, all[Number(r.offset)]);
    const offsets = new Set(now.map((r) => r.offset));
    for (const r of compacted(
      all.filter((x) => x.offset < target),
      target,
    ))
      assert.ok(offsets.has(r.offset), `${r.key}@${r.offset} kept`);
    // The cleaner cleans the truncated log again.
    fill(log, 2, 24, BigInt(env.time.milliseconds()));
    await env.scheduler.tick(BACKOFF);
    await finishClean(env);
    assert.equal(lm.cleanerManager?.checkpointOf(TP), log.activeSegment.baseOffset);
    assert.deepEqual(leftovers(log), []);
  });
});

test("deleting the log in the middle of a clean ends it; the cleaner goes on without it", async () => {
  await withEnv(new SteppingTime(), async (env) => {
    const { log, lm } = env;
    fill(log, 12, 24, BigInt(env.time.milliseconds()));
    const other = lm.getOrCreateLog({ topic: TOPIC, partition: 1 });
    await startSlicedClean(env);
    const dir = log.dir;
    lm.deleteLog(TP);
    assert.equal(lm.cleaner?.inProgress, false);
    assert.equal(lm.cleanerManager?.cleaningState(TP), undefined);
    assert.equal(lm.cleanerManager?.checkpointOf(TP), undefined);
    assert.ok(!readdirSync(env.dir).includes(dir.slice(env.dir.length + 1)), "its directory is gone");
    fill(other, 3, 8, BigInt(env.time.milliseconds()));
    await env.scheduler.tick(BACKOFF);
    await finishClean(env);
    assert.equal(
      lm.cleanerManager?.checkpointOf({ topic: TOPIC, partition: 1 }),
      other.activeSegment.baseOffset,
    );
  });
});

test("a shutdown in the middle of a clean removes its .cleaned segment; the log reopens whole", async () => {
  const root = mkdtempSync(join(tmpdir(), "tributary-cleaner-slicing-"));
  try {
    const env = open(root, new SteppingTime());
    const all = fill(env.log, 12, 24, BigInt(env.time.milliseconds()));
    const end = env.log.activeSegment.baseOffset;
    // Into the cleaning phase: slices until the first group was swapped in, then one more.
    await env.scheduler.tick(BACKOFF);
    const segments = env.log.numberOfSegments;
    while (env.log.numberOfSegments === segments && env.lm.cleaner?.inProgress) await env.scheduler.tick(1);
    await env.scheduler.tick(1);
    assert.equal(env.lm.cleaner?.inProgress, true, "still cleaning");
    assert.equal(
      leftovers(env.log).filter((n) => n.endsWith(".log.cleaned")).length,
      1,
      "a group in progress",
    );
    const before = readAll(env.log);
    env.lm.shutdown();
    assert.deepEqual(leftovers(env.log), []);
    const re = open(root, new MockTime());
    try {
      assert.deepEqual(readAll(re.log), before);
      for (const r of before) assert.deepEqual(r, all[Number(r.offset)]);
      assert.equal(re.lm.cleanerManager?.checkpointOf(TP) ?? 0n, 0n, "the checkpoint did not move");
      re.log.updateHighWatermark(re.log.logEndOffset); // as the replica layer does from its checkpoint
      await re.scheduler.tick(BACKOFF);
      assert.equal(re.lm.cleanerManager?.checkpointOf(TP), end);
      assert.deepEqual(readAll(re.log), compacted(all, end));
    } finally {
      re.lm.shutdown();
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("retention removing a segment in the middle of a clean stops it without marking the log uncleanable", async () => {
  await withEnv(new SteppingTime(), async (env) => {
    const { log, lm } = env;
    const all = fill(log, 12, 24, BigInt(env.time.milliseconds()));
    const end = log.activeSegment.baseOffset;
    // Slices until the first group of segments was swapped in: the clean is on the next group.
    await startSlicedClean(env);
    const segments = log.numberOfSegments;
    while (log.numberOfSegments === segments) await env.scheduler.tick(1);
    assert.equal(lm.cleaner?.inProgress, true);
    // DeleteRecords past the next group's first segment, then retention: that segment leaves the log
    // while the clean still has to replace it.
    const start = log.segments()[2].baseOffset;
    assert.equal(log.maybeIncrementLogStartOffset(start), true);
    assert.equal(log.deleteOldSegments(), 2);
    await finishClean(env);
    assert.notEqual(lm.cleanerManager?.checkpointOf(TP), end, "the clean stopped");
    assert.equal(lm.cleanerManager?.isUncleanable(TP, env.dir), false);
    assert.equal(lm.cleanerManager?.cleaningState(TP), undefined);
    assert.deepEqual(leftovers(log), []);
    for (const r of readAll(log)) assert.deepEqual(r, all[Number(r.offset)]);
    // The next clean (from the new log start offset) goes through.
    await env.scheduler.tick(BACKOFF);
    await finishClean(env);
    assert.equal(lm.cleanerManager?.checkpointOf(TP), end);
    assert.deepEqual(
      readAll(log),
      compacted(all, end).filter((r) => r.offset >= start),
    );
  });
});
