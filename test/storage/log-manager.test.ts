// LogManager on real directories: meta.properties, partition placement across log.dirs, the
// checkpoint files and clean-shutdown marker written as Kafka writes them, recovery from the
// checkpointed recovery point after an unclean stop, retention driven by the scheduler's clock, and
// deletion of a partition's log (its checkpoints written off the event loop). The log dirs' locks: a
// second LogManager (same process) on a dir in use fails its startup without touching the dir, and the
// dirs are free again after a shutdown.

import assert from "node:assert/strict";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { MockScheduler } from "../../src/common/scheduler.js";
import { MockTime } from "../../src/common/time.js";
import { decodeRecordBatches } from "../../src/protocol/records/index.js";
import { DEFAULT_LOG_CONFIG, type LogConfig } from "../../src/storage/log-config.js";
import { LogDirLockedError, LogDirLocks } from "../../src/storage/log-dir-lock.js";
import { LogManager, type LogManagerConfig } from "../../src/storage/log-manager.js";
import { batch, captureLogs } from "./storage-test-utils.js";

const CLUSTER_ID = "q1Sh-9_ISia_zwGINzRvyQ";
const MINUTE = 60_000;

function managerConfig(dirs: string[], overrides: Partial<LogManagerConfig> = {}): LogManagerConfig {
  return {
    logDirs: dirs,
    brokerId: 0,
    clusterId: CLUSTER_ID,
    defaultLogConfig: DEFAULT_LOG_CONFIG,
    retentionCheckIntervalMs: 5 * MINUTE,
    recoveryPointCheckpointIntervalMs: MINUTE,
    logStartOffsetCheckpointIntervalMs: MINUTE,
    flushCheckIntervalMs: Number.MAX_SAFE_INTEGER,
    ...overrides,
  };
}

function tempDirs(n: number): { dirs: string[]; cleanup: () => void } {
  const root = mkdtempSync(join(tmpdir(), "tributary-logmanager-"));
  const dirs = Array.from({ length: n }, (_, i) => join(root, `kafka-logs-${i}`));
  return { dirs, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

function start(dirs: string[], time: MockTime, overrides: Partial<LogManagerConfig> = {}) {
  const scheduler = new MockScheduler(time);
  const lm = new LogManager(managerConfig(dirs, overrides), time, scheduler);
  lm.startup();
  return { lm, scheduler };
}

test("meta.properties, placement across log dirs, checkpoints and the clean-shutdown marker", () => {
  const { dirs, cleanup } = tempDirs(2);
  try {
    const time = new MockTime();
    const { lm } = start(dirs, time);
    for (const d of dirs) {
      const meta = readFileSync(join(d, "meta.properties"), "utf8");
      assert.match(meta, /^#\n#.+\n/);
      assert.match(meta, new RegExp(`^cluster.id=${CLUSTER_ID}$`, "m"));
      assert.match(meta, /^version=0$/m);
      assert.match(meta, /^broker.id=0$/m);
    }
    const topicId = "AAAAAAAAAAAAAAAAAAAAAQ";
    for (let p = 0; p < 4; p++) {
      const log = lm.getOrCreateLog({ topic: "orders", partition: p }, topicId);
      log.appendAsLeader(batch(5), 0);
      log.updateHighWatermark(log.logEndOffset);
    }
    // Kafka places each new log in the dir with the fewest partitions: two per dir.
    for (const d of dirs) {
      const parts = readdirSync(d).filter((n) => n.startsWith("orders-"));
      assert.equal(parts.length, 2, `${d} holds ${parts.join(",")}`);
      for (const p of parts) {
        assert.equal(
          readFileSync(join(d, p, "partition.metadata"), "utf8"),
          `version: 0\ntopic_id: ${topicId}`,
        );
        assert.ok(existsSync(join(d, p, "00000000000000000000.log")));
      }
    }
    lm.shutdown();
    for (const d of dirs) {
      assert.ok(existsSync(join(d, ".kafka_cleanshutdown")));
      const parts = readdirSync(d)
        .filter((n) => n.startsWith("orders-"))
        .map((n) => n.replace(/-(\d+)$/, " $1"))
        .sort();
      const expected = (value: number) => `0\n2\n${parts.map((p) => `${p} ${value}`).join("\n")}\n`;
      assert.equal(
        readFileSync(join(d, "recovery-point-offset-checkpoint"), "utf8").split("\n").slice(0, 2).join(),
        "0,2",
      );
      assert.equal(sortedCheckpoint(join(d, "replication-offset-checkpoint")), expected(5));
      assert.equal(sortedCheckpoint(join(d, "log-start-offset-checkpoint")), expected(0));
      assert.equal(sortedCheckpoint(join(d, "recovery-point-offset-checkpoint")), expected(5));
    }

    // Restart: the marker is consumed, every log comes back with its data.
    const again = start(dirs, time).lm;
    for (const d of dirs) {
      assert.ok(!existsSync(join(d, ".kafka_cleanshutdown")));
      assert.equal(again.hadCleanShutdown(d), true);
    }
    assert.equal(again.allLogs().length, 4);
    for (let p = 0; p < 4; p++) {
      const log = again.getLog({ topic: "orders", partition: p })!;
      assert.equal(log.logEndOffset, 5n);
      const got = decodeRecordBatches(log.read(0n, 1 << 20, "log-end", true).records);
      assert.equal(got[0].records.length, 5);
    }
    again.shutdown();
  } finally {
    cleanup();
  }
});

/** Every file under `dir` with its size and modification time. */
function fileStates(dir: string): Map<string, string> {
  const states = new Map<string, string>();
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const st = statSync(join(dir, name));
    if (st.isFile()) states.set(name, `${st.size} ${st.mtimeMs}`);
  }
  return states;
}

test("a log dir in use by another LogManager fails the startup and is left untouched; shutdown frees it", () => {
  const { dirs, cleanup } = tempDirs(3);
  try {
    const time = new MockTime();
    const first = start([dirs[0], dirs[1]], time).lm;
    first.getOrCreateLog({ topic: "t", partition: 0 }).appendAsLeader(batch(3), 0);
    first.getOrCreateLog({ topic: "t", partition: 1 }).appendAsLeader(batch(3), 0);
    const before = fileStates(dirs[1]);
    const second = new LogManager(managerConfig([dirs[2], dirs[1]]), time, new MockScheduler(time));
    assert.throws(
      () => second.startup(),
      (e: unknown) =>
        e instanceof LogDirLockedError &&
        e.dir === dirs[1] &&
        e.holderPid === process.pid &&
        e.message ===
          `Failed to acquire lock on file .lock in ${dirs[1]}. A Kafka instance in another process or thread is using this directory (the lock is held by pid ${process.pid} (this process)).`,
    );
    assert.deepEqual(fileStates(dirs[1]), before, "nothing in the dir in use was read or written");
    // The failed startup released what it had taken (dirs[2]) and wrote nothing but the lock file there.
    assert.deepEqual(readdirSync(dirs[2]), [".lock"]);
    const third = start([dirs[2]], time).lm;
    third.shutdown();

    first.shutdown();
    const again = start([dirs[0], dirs[1]], time).lm;
    assert.equal(again.allLogs().length, 2);
    again.shutdown();
    // Locks handed in by an owner stay the owner's: the LogManager's shutdown leaves them held.
    const locks = LogDirLocks.acquire([dirs[0]]);
    start([dirs[0]], time, { logDirLocks: locks }).lm.shutdown();
    assert.throws(() => LogDirLocks.acquire([dirs[0]]), LogDirLockedError);
    locks.release();
    LogDirLocks.acquire([dirs[0]]).release();
  } finally {
    cleanup();
  }
});

function sortedCheckpoint(path: string): string {
  const [version, count, ...rest] = readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l !== "");
  return `${version}\n${count}\n${rest.sort().join("\n")}\n`;
}

test("a broker.id that disagrees with meta.properties stops startup with one clear line", () => {
  const { dirs, cleanup } = tempDirs(1);
  try {
    const time = new MockTime();
    start(dirs, time).lm.shutdown();
    assert.throws(
      () => new LogManager(managerConfig(dirs, { brokerId: 7 }), time, new MockScheduler(time)).startup(),
      /meta.properties in .*: broker.id 0 doesn't match the configured broker.id 7/,
    );
  } finally {
    cleanup();
  }
});

test("after an unclean stop, logs recover from the checkpointed recovery point and report what was dropped", async () => {
  const { dirs, cleanup } = tempDirs(1);
  try {
    const time = new MockTime();
    // The dir's lock, held as the process that crashes holds it (the OS drops it when the process dies).
    const locks = LogDirLocks.acquire(dirs);
    const { lm } = start(dirs, time, { logDirLocks: locks });
    const log = lm.getOrCreateLog({ topic: "t", partition: 0 });
    for (let i = 0; i < 10; i++) log.appendAsLeader(batch(3), 0);
    log.flush();
    lm.checkpoints.recoveryPoints.checkpoint();
    await lm.checkpointsWritten(); // off the event loop
    // Crash: no shutdown, no marker; a torn write leaves garbage after the last batch.
    locks.release();
    appendFileSync(join(dirs[0], "t-0", "00000000000000000000.log"), Buffer.from("torn write at the tail"));
    const { result: relm, lines } = await captureLogs(() => start(dirs, time).lm);
    assert.equal(relm.hadCleanShutdown(dirs[0]), false);
    const reopened = relm.getLog({ topic: "t", partition: 0 })!;
    assert.equal(reopened.logEndOffset, 30n);
    assert.ok(
      lines.some((l) => /WARN/.test(l) && /t-0/.test(l) && /22 bytes|truncat/i.test(l)),
      `a WARN line reports the truncation: ${lines.join("\n")}`,
    );
    relm.shutdown();
  } finally {
    cleanup();
  }
});

test("retention runs on log.retention.check.interval.ms and moves the log start offset", async () => {
  const { dirs, cleanup } = tempDirs(1);
  try {
    const time = new MockTime(1_700_000_000_000);
    const cfg: LogConfig = {
      ...DEFAULT_LOG_CONFIG,
      segmentBytes: 2048,
      retentionMs: 60 * MINUTE,
      fileDeleteDelayMs: MINUTE,
    };
    const { lm, scheduler } = start(dirs, time, { defaultLogConfig: cfg });
    lm.startTasks();
    const log = lm.getOrCreateLog({ topic: "events", partition: 0 });
    // Old data (2 h ago) in several segments, then fresh data.
    for (let i = 0; i < 20; i++)
      log.appendAsLeader(
        batch(4, { valueSize: 200, timestamp: BigInt(time.milliseconds() - 120 * MINUTE) }),
        0,
      );
    const oldEnd = log.logEndOffset;
    for (let i = 0; i < 3; i++)
      log.appendAsLeader(batch(4, { valueSize: 200, timestamp: BigInt(time.milliseconds()) }), 0);
    log.updateHighWatermark(log.logEndOffset);
    const segmentsBefore = log.numberOfSegments;
    assert.ok(segmentsBefore > 3);

    await scheduler.tick(4 * MINUTE); // not yet due
    assert.equal(log.logStartOffset, 0n);
    await scheduler.tick(MINUTE); // the retention task runs at 5 minutes
    assert.ok(log.logStartOffset > 0n && log.logStartOffset <= oldEnd, `log start ${log.logStartOffset}`);
    assert.ok(log.numberOfSegments < segmentsBefore);
    const partDir = join(dirs[0], "events-0");
    assert.ok(
      readdirSync(partDir).some((n) => n.endsWith(".deleted")),
      "segments are renamed .deleted first",
    );
    await scheduler.tick(MINUTE); // file.delete.delay.ms later they are gone
    assert.ok(!readdirSync(partDir).some((n) => n.endsWith(".deleted")));
    await scheduler.tick(MINUTE); // the log start offset checkpoint task has run
    await lm.checkpointsWritten(); // off the event loop
    const lso = readFileSync(join(dirs[0], "log-start-offset-checkpoint"), "utf8");
    assert.match(lso, new RegExp(`^events 0 ${log.logStartOffset}$`, "m"));
    // Fresh data is untouched.
    assert.equal(log.logEndOffset, oldEnd + 12n);
    lm.shutdown();
  } finally {
    cleanup();
  }
});

test("deleting a log removes its directory and its checkpoint entries; leftover -delete dirs are removed at startup", async () => {
  const { dirs, cleanup } = tempDirs(1);
  try {
    const time = new MockTime();
    const { lm } = start(dirs, time);
    lm.getOrCreateLog({ topic: "keep", partition: 0 }).appendAsLeader(batch(1), 0);
    lm.getOrCreateLog({ topic: "gone", partition: 0 }).appendAsLeader(batch(1), 0);
    lm.deleteLog({ topic: "gone", partition: 0 });
    // Renamed at once, removed in the background; its checkpoints are written off the event loop too.
    assert.ok(!readdirSync(dirs[0]).includes("gone-0"));
    assert.ok(
      !existsSync(join(dirs[0], "recovery-point-offset-checkpoint")),
      "not written on the event loop",
    );
    await lm.deletionsDone();
    assert.ok(!readdirSync(dirs[0]).some((n) => n.startsWith("gone-0")));
    assert.doesNotMatch(readFileSync(join(dirs[0], "recovery-point-offset-checkpoint"), "utf8"), /gone/);
    lm.shutdown();
    mkdirSync(join(dirs[0], "old-0.0123456789abcdef0123456789abcdef-delete"));
    const again = start(dirs, time).lm;
    assert.ok(!readdirSync(dirs[0]).some((n) => n.endsWith("-delete")));
    assert.deepEqual(
      again.allLogs().map((l) => l.tp.topic),
      ["keep"],
    );
    again.shutdown();
  } finally {
    cleanup();
  }
});

test("damaged checkpoint files at the root of a log dir are reported, not trusted, and never stop startup", async () => {
  const { dirs, cleanup } = tempDirs(1);
  try {
    const time = new MockTime();
    const { lm } = start(dirs, time);
    const log = lm.getOrCreateLog({ topic: "t", partition: 0 });
    for (let i = 0; i < 5; i++) log.appendAsLeader(batch(2), 0);
    log.updateHighWatermark(log.logEndOffset);
    lm.shutdown();
    const damage: Array<[string, string]> = [
      ["recovery-point-offset-checkpoint", "0\n1\nt 0 not-a-number\n"],
      ["log-start-offset-checkpoint", "7\n"],
      ["replication-offset-checkpoint", "0\n99\nt 0 5\n"],
    ];
    for (const [name, text] of damage) writeFileSync(join(dirs[0], name), text);
    rmSync(join(dirs[0], ".kafka_cleanshutdown"));
    const { result: again, lines } = await captureLogs(() => start(dirs, time).lm);
    const warned = lines.filter((l) => /WARN/.test(l) && /Ignoring damaged checkpoint/.test(l));
    assert.equal(warned.length, 2, lines.join("\n")); // the HW checkpoint is read later by the replica layer
    assert.equal(again.checkpoints.highWatermarks.read(dirs[0]).size, 0);
    const reopened = again.getLog({ topic: "t", partition: 0 })!;
    assert.equal(reopened.logEndOffset, 10n, "recovered from offset 0 with nothing lost");
    assert.equal(reopened.logStartOffset, 0n);
    again.shutdown();
  } finally {
    cleanup();
  }
});

test("a topic config change reaches the topic's open logs (retention.ms altered at runtime)", async () => {
  const { dirs, cleanup } = tempDirs(1);
  try {
    const time = new MockTime(1_700_000_000_000);
    const cfg: LogConfig = { ...DEFAULT_LOG_CONFIG, segmentBytes: 2048 };
    const { lm, scheduler } = start(dirs, time, { defaultLogConfig: cfg });
    lm.startTasks();
    const log = lm.getOrCreateLog({ topic: "altered", partition: 0 });
    const other = lm.getOrCreateLog({ topic: "untouched", partition: 0 });
    const old = BigInt(time.milliseconds() - 120 * MINUTE);
    for (const l of [log, other]) {
      for (let i = 0; i < 12; i++) l.appendAsLeader(batch(4, { valueSize: 200, timestamp: old }), 0);
      l.updateHighWatermark(l.logEndOffset);
    }
    await scheduler.tick(5 * MINUTE);
    assert.equal(log.logStartOffset, 0n, "7-day default retention keeps 2-hour-old data");
    lm.setTopicConfig("altered", { ...cfg, retentionMs: 60 * MINUTE });
    assert.equal(log.config.retentionMs, 60 * MINUTE);
    assert.equal(other.config.retentionMs, DEFAULT_LOG_CONFIG.retentionMs);
    await scheduler.tick(5 * MINUTE);
    assert.ok(log.logStartOffset > 0n, "the altered topic's old segments are deleted");
    assert.equal(other.logStartOffset, 0n, "other topics keep their config");
    lm.shutdown();
  } finally {
    cleanup();
  }
});

test("logs created in a batch are made durable together by syncNewLogs; one that cannot be forced goes offline", async () => {
  const { dirs, cleanup } = tempDirs(1);
  try {
    const time = new MockTime();
    const { lm } = start(dirs, time);
    const topicId = "AAAAAAAAAAAAAAAAAAAAAQ";
    lm.deferNewLogSync();
    for (let p = 0; p < 50; p++) lm.getOrCreateLog({ topic: "bulk", partition: p }, topicId);
    // Written at once (not yet forced): the partition.metadata Kafka writes, readable by anyone.
    assert.equal(
      readFileSync(join(dirs[0], "bulk-49", "partition.metadata"), "utf8"),
      `version: 0\ntopic_id: ${topicId}`,
    );
    assert.deepEqual(await lm.syncNewLogs(), []);
    // A batch whose partition.metadata vanished before the durability point: that log goes offline.
    lm.deferNewLogSync();
    lm.getOrCreateLog({ topic: "bulk", partition: 50 }, topicId);
    lm.getOrCreateLog({ topic: "bulk", partition: 51 }, topicId);
    rmSync(join(dirs[0], "bulk-50", "partition.metadata"));
    const { result: failed, lines } = await captureLogs(() => lm.syncNewLogs());
    assert.deepEqual(failed, [{ topic: "bulk", partition: 50 }]);
    assert.ok(lm.offlineLog({ topic: "bulk", partition: 50 }) !== undefined);
    assert.equal(lm.offlineLog({ topic: "bulk", partition: 51 }), undefined);
    assert.ok(
      lines.some((l) => l.includes("Error while making the new log of bulk-50")),
      lines.join("\n"),
    );
    lm.shutdown();
  } finally {
    cleanup();
  }
});
