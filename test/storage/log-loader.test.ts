// LogLoader: stray .deleted/.cleaned files, .swap completion, orphaned indexes, missing indexes rebuilt,
// unclean shutdown recovery from the recovery point (cut at the first invalid byte, later segments
// quarantined, leader-epoch cache truncated), and the one log line per partition.

import assert from "node:assert/strict";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { MockTime } from "../../src/common/time.js";
import { LeaderEpochFileCache } from "../../src/storage/leader-epoch/leader-epoch-file-cache.js";
import { logFile, offsetIndexFile, timeIndexFile } from "../../src/storage/log-file-names.js";
import { UnifiedLog } from "../../src/storage/unified-log.js";
import { batch, captureLogs, config, tempPartitionDir, verifyLogDir } from "./storage-test-utils.js";

const CFG = config({ segmentBytes: 1500, indexIntervalBytes: 200, segmentIndexBytes: 800 });

function build(dir: string, batches = 40): { ends: bigint; bases: bigint[] } {
  mkdirSync(dir, { recursive: true });
  const log = UnifiedLog.open(dir, CFG, {
    time: new MockTime(),
    recoveryPoint: 0n,
    hadCleanShutdown: true,
    leaderEpochCache: LeaderEpochFileCache.load(dir),
  });
  for (let i = 0; i < batches; i++) log.appendAsLeader(batch(2, { valueSize: 40 }), i < batches / 2 ? 1 : 2);
  const bases = log.segments().map((s) => s.baseOffset);
  const ends = log.logEndOffset;
  log.flush();
  log.close();
  return { ends, bases };
}

function openLog(dir: string, clean: boolean, recoveryPoint: bigint, logStartOffset?: bigint) {
  const cache = LeaderEpochFileCache.load(dir);
  return captureLogs(() =>
    UnifiedLog.open(dir, CFG, {
      time: new MockTime(),
      recoveryPoint,
      logStartOffset,
      hadCleanShutdown: clean,
      leaderEpochCache: cache,
    }),
  ).then(({ result, lines }) => ({ log: result, lines, cache }));
}

test("stray .deleted and .cleaned files and orphaned indexes are removed", async () => {
  const t = tempPartitionDir("loader-stray");
  try {
    const { ends, bases } = build(t.dir);
    writeFileSync(`${logFile(t.dir, 9999n)}.deleted`, "x");
    writeFileSync(`${offsetIndexFile(t.dir, 9999n)}.deleted`, "x");
    writeFileSync(`${logFile(t.dir, 8888n)}.cleaned`, "x");
    writeFileSync(offsetIndexFile(t.dir, 7777n), Buffer.alloc(8));
    const { log, lines } = await openLog(t.dir, true, ends);
    assert.equal(log.logEndOffset, ends);
    assert.equal(log.loadReport.strayFilesRemoved, 4);
    assert.deepEqual(
      log.segments().map((s) => s.baseOffset),
      bases,
    );
    assert.ok(
      !readdirSync(t.dir).some((n) => n.includes("9999") || n.includes("8888") || n.includes("7777")),
    );
    assert.equal(lines.length, 1);
    assert.match(lines[0], /INFO .*Loaded log after a clean shutdown, nothing dropped/);
    log.close();
  } finally {
    t.cleanup();
  }
});

test(".swap files complete their swap: the segments they cover go, the suffix is dropped", async () => {
  const t = tempPartitionDir("loader-swap");
  try {
    const { ends, bases } = build(t.dir);
    // Pretend the cleaner merged segments 0 and 1 into a .swap of segment 0 (here: a copy of segment 0).
    for (const ext of [".log", ".index", ".timeindex"]) {
      const from = join(t.dir, `${bases[0].toString().padStart(20, "0")}${ext}`);
      const bytes = readFileSync(from);
      writeFileSync(`${from}.swap`, bytes);
    }
    const { log } = await openLog(t.dir, true, ends);
    assert.equal(log.loadReport.swapsCompleted, 1);
    assert.ok(!readdirSync(t.dir).some((n) => n.endsWith(".swap")));
    assert.equal(log.segments()[0].baseOffset, bases[0]);
    assert.equal(log.logEndOffset, ends);
    log.close();
  } finally {
    t.cleanup();
  }
});

test("missing or corrupt indexes are rebuilt after a clean shutdown", async () => {
  const t = tempPartitionDir("loader-index");
  try {
    const { ends, bases } = build(t.dir);
    rmSync(offsetIndexFile(t.dir, bases[1]));
    writeFileSync(timeIndexFile(t.dir, bases[2]), Buffer.alloc(36, 0x7f));
    // Larger than any index can be: not read into memory, rebuilt.
    truncateSync(offsetIndexFile(t.dir, bases[3]), 65 * 1024 * 1024);
    const { log, lines } = await openLog(t.dir, true, ends);
    assert.deepEqual(log.loadReport.indexesRebuilt, [bases[1], bases[2], bases[3]]);
    assert.ok(statSync(offsetIndexFile(t.dir, bases[3])).size < 1000);
    assert.equal(log.logEndOffset, ends);
    assert.ok(existsSync(offsetIndexFile(t.dir, bases[1])));
    assert.equal(lines.length, 1, lines.join("\n"));
    assert.match(lines[0], /WARN .*rebuilt the indexes of segments .*nothing dropped/);
    log.close();
    verifyLogDir(t.dir);
  } finally {
    t.cleanup();
  }
});

test("unclean shutdown: recovery from the recovery point cuts at the first bad byte and quarantines later segments", async () => {
  const t = tempPartitionDir("loader-recover");
  try {
    const { bases } = build(t.dir);
    assert.ok(bases.length >= 4);
    // Damage the middle of segment 2 and leave an untrimmed preallocated index on the last one.
    const victim = logFile(t.dir, bases[2]);
    const size = statSync(victim).size;
    const bytes = readFileSync(victim);
    bytes[Math.floor(size / 2)] ^= 0x55;
    writeFileSync(victim, bytes);
    truncateSync(offsetIndexFile(t.dir, bases[bases.length - 1]), 800);
    const { log, lines, cache } = await openLog(t.dir, false, bases[1]);
    const r = log.loadReport;
    assert.equal(r.truncatedSegment, bases[2]);
    assert.ok(r.bytesTruncated > 0);
    assert.equal(r.segmentsDeleted, 0);
    assert.equal(r.segmentsQuarantined, bases.length - 3);
    assert.ok(r.quarantineDir !== undefined && existsSync(join(r.quarantineDir, "quarantine.json")));
    for (const b of bases.slice(3)) assert.ok(existsSync(logFile(r.quarantineDir, b)), `segment ${b} kept`);
    assert.ok(log.logEndOffset > bases[2] && log.logEndOffset < bases[3]);
    assert.equal(log.recoveryPoint, bases[1]);
    const warn = lines.filter((l) => / WARN /.test(l) && /Recovered log/.test(l));
    const errors = lines.filter((l) => / ERROR /.test(l));
    assert.equal(errors.length, 1, lines.join("\n"));
    assert.match(
      errors[0],
      /Quarantined \d+ bytes of partition topic-0 .*segment 0+\d+\.log = bytes \[0, \d+\)/,
    );
    assert.equal(warn.length, 1, lines.join("\n"));
    assert.match(
      warn[0],
      /truncated \d+ bytes at segment \d+ \(a CRC mismatch.*quarantined the cut bytes and \d+ later segments \(\d+ bytes\) in quarantine-\d+/,
    );
    for (const e of cache.epochEntries()) assert.ok(e.startOffset < log.logEndOffset);
    // Appends continue from the cut.
    const leo = log.logEndOffset;
    assert.equal(log.appendAsLeader(batch(1), 3).firstOffset, leo);
    log.close();
    verifyLogDir(t.dir);
  } finally {
    t.cleanup();
  }
});

test("a partial batch at the tail after a crash is cut cleanly", async () => {
  const t = tempPartitionDir("loader-tail");
  try {
    const { ends, bases } = build(t.dir);
    const last = logFile(t.dir, bases[bases.length - 1]);
    appendFileSync(last, batch(5).subarray(0, 70));
    const { log, lines } = await openLog(t.dir, false, ends);
    assert.equal(log.loadReport.bytesTruncated, 70);
    assert.equal(log.logEndOffset, ends);
    assert.match(lines.join("\n"), /truncated 70 bytes .*partial batch/);
    log.close();
    verifyLogDir(t.dir);
  } finally {
    t.cleanup();
  }
});

test("a log start offset checkpoint past the end restarts the log there", async () => {
  const t = tempPartitionDir("loader-start");
  try {
    const { ends } = build(t.dir, 4);
    const { log } = await openLog(t.dir, true, ends, ends + 100n);
    assert.equal(log.logStartOffset, ends + 100n);
    assert.equal(log.logEndOffset, ends + 100n);
    assert.equal(log.numberOfSegments, 1);
    log.close();
  } finally {
    t.cleanup();
  }
});

test("an index cut short or an empty time index is rebuilt instead of making lookups scan the segment", async () => {
  const t = tempPartitionDir("loader-sparse");
  try {
    const { ends, bases } = build(t.dir);
    truncateSync(offsetIndexFile(t.dir, bases[0]), 0);
    truncateSync(timeIndexFile(t.dir, bases[1]), 0);
    const cfg = config({ ...CFG, maxMessageBytes: 300 });
    const log = UnifiedLog.open(t.dir, cfg, {
      time: new MockTime(),
      recoveryPoint: ends,
      hadCleanShutdown: true,
    });
    assert.deepEqual(log.loadReport.indexesRebuilt, [bases[0], bases[1]]);
    assert.ok(log.segments()[0].offsetIndex.entries > 0);
    assert.ok(log.segments()[1].timeIndex.entries > 0);
    log.close();
    verifyLogDir(t.dir);
  } finally {
    t.cleanup();
  }
});
