// The LogManager's side of moving a replica between log dirs (AlterReplicaLogDirs), on real directories:
// the preferred dir of a new log, the future log `<tp>.<id>-future` in the target dir, the swap (the
// current log renamed `-delete` and removed, the future dir renamed `<tp>`, reopened with the current
// log's high watermark and leader epochs, the checkpoints of both dirs rewritten), and what a restart
// finds: a future log with its current log is loaded as a future log again; a future log whose current log
// is gone (a crash between the two renames) becomes the partition's log.

import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { MockScheduler } from "../../src/common/scheduler.js";
import { MockTime } from "../../src/common/time.js";
import { DEFAULT_LOG_CONFIG } from "../../src/storage/log-config.js";
import { LogManager } from "../../src/storage/log-manager.js";
import type { UnifiedLog } from "../../src/storage/unified-log.js";
import { batch } from "./storage-test-utils.js";

const TP = { topic: "moving", partition: 3 };

function start(dirs: string[], time: MockTime): LogManager {
  const lm = new LogManager(
    {
      logDirs: dirs,
      brokerId: 0,
      clusterId: "q1Sh-9_ISia_zwGINzRvyQ",
      defaultLogConfig: { ...DEFAULT_LOG_CONFIG, segmentBytes: 4096 },
      retentionCheckIntervalMs: 300_000,
      recoveryPointCheckpointIntervalMs: 60_000,
      logStartOffsetCheckpointIntervalMs: 60_000,
      flushCheckIntervalMs: Number.MAX_SAFE_INTEGER,
    },
    time,
    new MockScheduler(time),
  );
  lm.startup();
  return lm;
}

function entries(dir: string): string[] {
  return readdirSync(dir).filter((n) => n.startsWith("moving-3"));
}

/** Every batch of the log, as bytes, from its start. */
function allBytes(log: UnifiedLog): Buffer {
  return log.read(log.logStartOffset, 1 << 30, "log-end", true).records;
}

/** A current log in dirs[0] with batches of epochs 0 and 2, epoch 5 assigned at its end, and HW 30. */
function currentLog(lm: LogManager, dirs: string[]): UnifiedLog {
  lm.maybeUpdatePreferredLogDir(TP, dirs[0]);
  const log = lm.getOrCreateLog(TP, "AAAAAAAAAAAAAAAAAAAAAQ");
  for (let i = 0; i < 40; i++) log.appendAsLeader(batch(5, { valueSize: 200 }), i < 20 ? 0 : 2);
  log.leaderEpochCache!.assign(5, log.logEndOffset);
  log.updateHighWatermark(30n);
  return log;
}

function copyAll(current: UnifiedLog, future: UnifiedLog): void {
  while (future.logEndOffset < current.logEndOffset)
    future.appendAsFollower(current.read(future.logEndOffset, 1000, "log-end", true).records);
}

test("the future log is created in the target dir and replaces the current log", async () => {
  const root = mkdtempSync(join(tmpdir(), "tributary-log-dir-move-"));
  const dirs = [join(root, "a"), join(root, "b")];
  try {
    const lm = start(dirs, new MockTime());
    const current = currentLog(lm, dirs);
    assert.deepEqual(entries(dirs[0]), ["moving-3"], "the preferred dir");
    const bytes = allBytes(current);
    assert.throws(() => lm.isLogDirOnline(join(root, "c")), /LOG_DIR_NOT_FOUND|not found in the config/);
    assert.equal(lm.isLogDirOnline(`${dirs[1]}/`), true);
    lm.maybeUpdatePreferredLogDir(TP, dirs[1]);
    const future = lm.getOrCreateFutureLog(TP);
    assert.match(entries(dirs[1])[0], /^moving-3\.[0-9a-f]{32}-future$/);
    assert.deepEqual(future.topicPartition, TP);
    assert.equal(lm.futureLogDirOf(TP), dirs[1]);
    assert.equal(lm.getOrCreateFutureLog(TP), future, "one future log per partition");
    copyAll(current, future);
    // What recovery once set aside (log-quarantine.ts) comes along.
    mkdirSync(join(dirs[0], "moving-3", "quarantine-1700000000000"));
    writeFileSync(join(dirs[0], "moving-3", "quarantine-1700000000000", "quarantine.json"), "{}");
    // The future log's offsets are checkpointed in its own dir.
    lm.checkpoints.recoveryPoints.checkpoint();
    await lm.checkpointsWritten(); // off the event loop
    assert.match(readFileSync(join(dirs[1], "recovery-point-offset-checkpoint"), "utf8"), /^moving 3 /m);

    const swapped = lm.replaceCurrentWithFutureLog(TP);
    assert.equal(lm.getLog(TP), swapped);
    assert.equal(lm.getFutureLog(TP), undefined);
    assert.equal(lm.logDirOf(TP), dirs[1]);
    // The old copy, renamed `-delete`, is removed in the background.
    assert.match(entries(dirs[0]).join(), /^(moving-3\.[0-9a-f]{32}-delete)?$/);
    for (let i = 0; i < 200 && entries(dirs[0]).length > 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(entries(dirs[0]), [], "the old copy is gone");
    assert.deepEqual(entries(dirs[1]), ["moving-3"]);
    assert.ok(allBytes(swapped).equals(bytes), "the same batches, byte for byte");
    assert.equal(swapped.logEndOffset, 200n);
    assert.equal(
      readFileSync(join(dirs[1], "moving-3", "quarantine-1700000000000", "quarantine.json"), "utf8"),
      "{}",
      "the quarantine came along",
    );
    assert.equal(swapped.highWatermark, 30n);
    assert.deepEqual(
      swapped.leaderEpochCache!.epochEntries().map((e) => [e.epoch, e.startOffset]),
      [
        [0, 0n],
        [2, 100n],
        [5, 200n],
      ],
      "the epochs, also one no batch carries yet",
    );
    assert.equal(
      readFileSync(join(dirs[1], "moving-3", "partition.metadata"), "utf8").includes("topic_id"),
      true,
    );
    await lm.checkpointsWritten(); // the swap's checkpoints are written off the event loop
    for (const name of ["recovery-point-offset-checkpoint", "replication-offset-checkpoint"]) {
      assert.doesNotMatch(readFileSync(join(dirs[0], name), "utf8"), /^moving 3 /m, `${name} of the old dir`);
    }
    assert.match(readFileSync(join(dirs[1], "replication-offset-checkpoint"), "utf8"), /^moving 3 30$/m);
    // It takes appends and survives a restart.
    swapped.appendAsLeader(batch(5), 5);
    lm.shutdown();
    const again = start(dirs, new MockTime());
    assert.equal(again.getLog(TP)?.logEndOffset, 205n);
    assert.equal(again.logDirOf(TP), dirs[1]);
    again.shutdown();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("a restart resumes a move in progress and completes a swap interrupted between its renames", () => {
  const root = mkdtempSync(join(tmpdir(), "tributary-log-dir-move-"));
  const dirs = [join(root, "a"), join(root, "b")];
  try {
    const lm = start(dirs, new MockTime());
    const current = currentLog(lm, dirs);
    const bytes = allBytes(current);
    lm.maybeUpdatePreferredLogDir(TP, dirs[1]);
    const future = lm.getOrCreateFutureLog(TP);
    future.appendAsFollower(current.read(0n, 3000, "log-end", true).records);
    const copied = future.logEndOffset;
    assert.ok(copied > 0n && copied < current.logEndOffset);
    lm.shutdown();

    // Stopped in the middle of the copy: the future log is a future log again, where it was.
    const resumed = start(dirs, new MockTime());
    assert.equal(resumed.logDirOf(TP), dirs[0]);
    assert.equal(resumed.futureLogDirOf(TP), dirs[1]);
    assert.equal(resumed.getFutureLog(TP)?.logEndOffset, copied);
    copyAll(resumed.getLog(TP)!, resumed.getFutureLog(TP)!);
    resumed.shutdown();

    // Stopped after the current log went to `-delete`, before the future dir was renamed.
    const deleted = join(dirs[0], "moving-3.0123456789abcdef0123456789abcdef-delete");
    renameSync(join(dirs[0], "moving-3"), deleted);
    const completed = start(dirs, new MockTime());
    assert.equal(existsSync(deleted), false, "the deletion is finished");
    assert.equal(completed.getFutureLog(TP), undefined);
    assert.equal(completed.logDirOf(TP), dirs[1]);
    assert.deepEqual(entries(dirs[1]), ["moving-3"]);
    assert.ok(allBytes(completed.getLog(TP)!).equals(bytes), "every batch, from the future log");
    completed.shutdown();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("a move redirected or a partition deleted removes its future log", async () => {
  const root = mkdtempSync(join(tmpdir(), "tributary-log-dir-move-"));
  const dirs = [join(root, "a"), join(root, "b"), join(root, "c")];
  try {
    const lm = start(dirs, new MockTime());
    currentLog(lm, dirs);
    lm.maybeUpdatePreferredLogDir(TP, dirs[1]);
    lm.getOrCreateFutureLog(TP);
    lm.removeFutureLog(TP);
    // Renamed to -delete at once, removed off the event loop.
    assert.ok(
      entries(dirs[1]).every((e) => e.endsWith("-delete")),
      entries(dirs[1]).join(","),
    );
    await lm.deletionsDone();
    assert.deepEqual(entries(dirs[1]), []);
    assert.equal(lm.getFutureLog(TP), undefined);
    lm.maybeUpdatePreferredLogDir(TP, dirs[2]);
    lm.getOrCreateFutureLog(TP);
    assert.equal(entries(dirs[2]).length, 1);
    // The current log's own dir is no target.
    lm.maybeUpdatePreferredLogDir(TP, dirs[0]);
    lm.deleteLog(TP);
    await lm.deletionsDone();
    for (const d of dirs) assert.deepEqual(entries(d), [], d);
    lm.shutdown();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
