// The LogManager on a file system that really fills up (a 4 MiB tmpfs; skipped when it cannot be mounted):
// the append that hits ENOSPC is undone (no trailing bytes, no index entry past the log, no offset taken,
// checked with the independent segment parser), the dir is full (its space reserve released), later
// appends fail at once without writing, reads and checkpoints go on, DeleteRecords frees the space at
// once, the probe makes the dir writable again (reserve written back) and offsets continue where the last
// successful append ended, also after a reopen.

import assert from "node:assert/strict";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { MockScheduler } from "../../src/common/scheduler.js";
import { MockTime } from "../../src/common/time.js";
import { DEFAULT_LOG_CONFIG } from "../../src/storage/log-config.js";
import { isNoSpaceError, SPACE_RESERVE_FILE } from "../../src/storage/log-dir-space.js";
import { LogManager, type LogManagerConfig } from "../../src/storage/log-manager.js";
import { freeBytes, mountTmpfs, unmount } from "../support/tmpfs-mount.js";
import { batch, verifyLogDir } from "./storage-test-utils.js";

const KIB = 1024;
const mount = mountTmpfs("tributary-full-storage-", 4);
const skip = "skip" in mount ? mount.skip : false;
after(() => {
  if ("dir" in mount) unmount(mount.dir);
});

function managerConfig(dir: string): LogManagerConfig {
  return {
    logDirs: [dir],
    brokerId: 0,
    clusterId: "full-dir-test-cluster",
    defaultLogConfig: { ...DEFAULT_LOG_CONFIG, segmentBytes: 1024 * KIB, indexIntervalBytes: 4096 },
    retentionCheckIntervalMs: 300_000,
    recoveryPointCheckpointIntervalMs: 60_000,
    logStartOffsetCheckpointIntervalMs: 60_000,
    flushCheckIntervalMs: Number.MAX_SAFE_INTEGER,
    logDirSpaceReserveBytes: 256 * KIB,
    logDirFullProbeIntervalMs: 1000,
  };
}

test("a full log dir: failed appends undone, appends refused at once, space freed, writable again", {
  skip,
}, async () => {
  const dir = join("dir" in mount ? mount.dir : "", "logs");
  mkdirSync(dir);
  const time = new MockTime();
  const scheduler = new MockScheduler(time);
  const lm = new LogManager(managerConfig(dir), time, scheduler);
  lm.startup();
  lm.startTasks();
  assert.ok(existsSync(join(dir, SPACE_RESERVE_FILE)), "the reserve is held while writable");
  const tp = { topic: "t", partition: 0 };
  const log = lm.getOrCreateLog(tp);
  const partitionDir = join(dir, "t-0");

  // Batches of ~40 KiB (sizes vary so the failing write is partial) until the disk is full.
  let failure: unknown;
  for (let i = 0; i < 500 && failure === undefined; i++) {
    try {
      log.appendAsLeader(batch(3, { valueSize: 13_000 + i * 7 }), 0);
      log.updateHighWatermark(log.logEndOffset);
    } catch (e) {
      failure = e;
    }
  }
  assert.ok(isNoSpaceError(failure), `ENOSPC, got ${failure}`);
  assert.ok(lm.isLogDirFull(dir));
  assert.equal(lm.offlineLog(tp), undefined, "a full dir takes nothing offline");
  assert.ok(!existsSync(join(dir, SPACE_RESERVE_FILE)), "the reserve was released");
  const leo = log.logEndOffset;
  assert.ok(leo > 30n, `appended before the disk filled: ${leo}`);
  // The failed append left nothing behind: whole batches only, offsets up to the LEO, valid indexes.
  const check = verifyLogDir(partitionDir);
  assert.equal(check.endOffset, leo);
  const size = log.size;

  // Later appends fail at once, writing nothing.
  assert.throws(
    () => log.appendAsLeader(batch(1, { valueSize: 10 }), 0),
    (e) => isNoSpaceError(e),
  );
  assert.equal(log.size, size);
  assert.equal(log.logEndOffset, leo);
  // Reads go on.
  let bytesRead = 0;
  for (const base of check.segments) {
    if (base < leo) bytesRead += log.read(base, 64 * 1024 * 1024, "log-end", true).records.length;
  }
  assert.equal(bytesRead, size);
  // Checkpoints still work (the reserve's space), and the probe does not find space yet.
  lm.checkpoints.recoveryPoints.checkpoint();
  await lm.checkpointsWritten();
  await scheduler.tick(1500);
  assert.ok(lm.isLogDirFull(dir), "still full");

  // DeleteRecords to the end: the segments go at once (no file.delete.delay.ms), the active one rolled.
  const before = freeBytes(dir);
  log.maybeIncrementLogStartOffset(leo);
  assert.ok(log.deleteOldSegments() > 0);
  assert.ok(freeBytes(dir) - before > 2048 * KIB, `freed ${freeBytes(dir) - before} bytes`);
  await scheduler.tick(1000);
  assert.ok(!lm.isLogDirFull(dir), "writable again after the probe");
  assert.ok(existsSync(join(dir, SPACE_RESERVE_FILE)), "the reserve is back");

  // Offsets continue right after the last successful append, also after a reopen.
  assert.equal(log.appendAsLeader(batch(2), 0).firstOffset, leo);
  lm.shutdown();
  const again = new LogManager(managerConfig(dir), time, new MockScheduler(time));
  again.startup();
  const reopened = again.getLog(tp);
  assert.equal(reopened?.logStartOffset, leo);
  assert.equal(reopened?.logEndOffset, leo + 2n);
  assert.equal(verifyLogDir(partitionDir).endOffset, leo + 2n);
  again.shutdown();
});
