// The quarantine (issue 20) at the storage level: recovery after an unclean shutdown that finds a damaged
// batch in a middle segment moves the bytes it cuts and the later segments aside instead of deleting them;
// the quarantine's pieces cover the cut bytes exactly; intact batches after the damaged one are found
// again even when its length field is damaged; a restore brings every intact batch back (an offset gap
// over the damaged batch only) and the next recovery accepts the log; a restore after new appends is
// refused and changes nothing; a recovery that finds nothing wrong creates no quarantine.

import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { MockTime } from "../../src/common/time.js";
import { OffsetCheckpointFile } from "../../src/storage/checkpoint/offset-checkpoint-file.js";
import { LeaderEpochFileCache } from "../../src/storage/leader-epoch/leader-epoch-file-cache.js";
import { logFile } from "../../src/storage/log-file-names.js";
import { listQuarantines } from "../../src/storage/log-quarantine.js";
import { QuarantineRestoreError, restoreQuarantine } from "../../src/storage/log-quarantine-restore.js";
import { RECOVERY_POINT_CHECKPOINT } from "../../src/storage/offset-checkpoints.js";
import { UnifiedLog } from "../../src/storage/unified-log.js";
import {
  batch,
  captureLogs,
  config,
  parseLogFile,
  type RawBatch,
  tempPartitionDir,
} from "./storage-test-utils.js";

const CFG = config({ segmentBytes: 1500, indexIntervalBytes: 200, segmentIndexBytes: 800 });

function open(dir: string, clean: boolean, recoveryPoint: bigint) {
  return captureLogs(() =>
    UnifiedLog.open(dir, CFG, {
      time: new MockTime(),
      recoveryPoint,
      hadCleanShutdown: clean,
      leaderEpochCache: LeaderEpochFileCache.load(dir),
    }),
  );
}

async function build(dir: string, batches = 64): Promise<bigint[]> {
  mkdirSync(dir, { recursive: true });
  const { result: log } = await open(dir, true, 0n);
  for (let i = 0; i < batches; i++) log.appendAsLeader(batch(2, { valueSize: 40 }), 1);
  const bases = log.segments().map((s) => s.baseOffset);
  log.flush();
  log.close();
  return bases;
}

/** Every batch of the partition's segment files, in offset order. */
function batchesOnDisk(dir: string): RawBatch[] {
  return readdirSync(dir)
    .filter((n) => /^\d{20}\.log$/.test(n))
    .sort()
    .flatMap((n) => parseLogFile(readFileSync(join(dir, n))).batches);
}

/** Every batch read through the log (the read path and its indexes), from offset 0. */
function batchesThroughLog(log: UnifiedLog): bigint[] {
  const out: bigint[] = [];
  let next = 0n;
  while (next < log.logEndOffset) {
    const r = log.read(next, 1 << 20, "log-end", true);
    const parsed = parseLogFile(r.records).batches;
    if (parsed.length === 0) break;
    for (const b of parsed) out.push(b.baseOffset);
    next = parsed[parsed.length - 1].lastOffset + 1n;
  }
  return out;
}

/** Damages the second batch of segment `bases[k]`: its CRC (a record byte) or its length field. */
function damage(dir: string, base: bigint, how: "crc" | "length"): RawBatch {
  const path = logFile(dir, base);
  const bytes = readFileSync(path);
  const victim = parseLogFile(bytes).batches[1];
  if (how === "crc") bytes[victim.position + 61 + 5] ^= 0x5a;
  else bytes.writeInt32BE(0x7ff00000, victim.position + 8);
  writeFileSync(path, bytes);
  return victim;
}

for (const how of ["crc", "length"] as const) {
  test(`a damaged batch (${how}) in a middle segment: everything after it is quarantined, then restored`, async () => {
    const t = tempPartitionDir(`quarantine-${how}`);
    try {
      const bases = await build(t.dir);
      assert.ok(bases.length >= 6);
      const before = batchesOnDisk(t.dir);
      const cutSeg = bases[3];
      const cutSize = statSync(logFile(t.dir, cutSeg)).size;
      const victim = damage(t.dir, cutSeg, how);

      const { result: log, lines } = await open(t.dir, false, bases[2]);
      assert.equal(log.logEndOffset, victim.baseOffset, "the log ends at the damaged batch");
      const r = log.loadReport;
      assert.equal(r.segmentsQuarantined, bases.length - 4);
      assert.equal(r.segmentsDeleted, 0);
      const errors = lines.filter((l) => / ERROR /.test(l));
      assert.equal(errors.length, 1, lines.join("\n"));
      assert.match(errors[0], /Quarantined \d+ bytes of partition topic-0 .*damaged .*intact .*segment /);
      log.close();

      const [q] = listQuarantines(t.dir);
      assert.ok(q?.manifest, "a quarantine with its manifest");
      const m = q.manifest;
      assert.equal(m.topic, "topic");
      assert.equal(m.partition, 0);
      assert.equal(m.logEndOffsetAfterCut, String(victim.baseOffset));
      assert.equal(m.cutPosition, victim.position);
      // The pieces of the cut segment cover [cut, old size) exactly, in order.
      const pieces = m.files.filter((f) => f.kind !== "segment");
      let at = victim.position;
      for (const f of pieces) {
        assert.equal(f.start, at);
        assert.equal(statSync(join(q.dir, f.file)).size, f.end - f.start);
        at = f.end;
      }
      assert.equal(at, cutSize);
      const damaged = pieces.filter((f) => f.kind === "damaged");
      assert.equal(damaged.length, 1);
      assert.equal(damaged[0].end - damaged[0].start, victim.size, "only the damaged batch is damaged");
      assert.deepEqual(
        m.files.filter((f) => f.kind === "segment").map((f) => BigInt(f.file.slice(0, 20))),
        bases.slice(4),
      );
      const quarantinedRecords = m.files.reduce((s, f) => s + (f.records ?? 0), 0);
      const afterVictim = before.filter((b) => b.baseOffset > victim.baseOffset);
      assert.equal(quarantinedRecords, afterVictim.length * 2);

      const out = restoreQuarantine(t.root, t.dir, q, CFG, new MockTime());
      assert.equal(out.records, afterVictim.length * 2);
      const rp = new OffsetCheckpointFile(join(t.root, RECOVERY_POINT_CHECKPOINT)).read().get("topic-0");
      assert.equal(rp?.offset, victim.baseOffset);
      assert.ok(listQuarantines(t.dir)[0].manifest?.restored, "the manifest records the restore");

      const { result: again, lines: againLines } = await open(t.dir, false, rp.offset);
      assert.equal(again.loadReport.bytesTruncated, 0, againLines.join("\n"));
      assert.equal(again.loadReport.unrestoredQuarantineBytes, 0);
      const expected = before.filter((b) => b.baseOffset !== victim.baseOffset).map((b) => b.baseOffset);
      assert.deepEqual(
        batchesOnDisk(t.dir).map((b) => b.baseOffset),
        expected,
      );
      assert.deepEqual(batchesThroughLog(again), expected);
      assert.equal(again.logEndOffset, before[before.length - 1].lastOffset + 1n);
      // Appends go on after the restored end.
      assert.equal(again.appendAsLeader(batch(1), 1).firstOffset, again.logEndOffset - 1n);
      again.close();
    } finally {
      t.cleanup();
    }
  });
}

test("a restore after new appends took the quarantined offsets is refused and changes nothing", async () => {
  const t = tempPartitionDir("quarantine-refuse");
  try {
    const bases = await build(t.dir);
    damage(t.dir, bases[2], "crc");
    const { result: log } = await open(t.dir, false, bases[1]);
    log.appendAsLeader(batch(1), 2);
    const leo = log.logEndOffset;
    log.close();
    const [q] = listQuarantines(t.dir);
    const filesBefore = readdirSync(q.dir).sort();
    assert.throws(
      () => restoreQuarantine(t.root, t.dir, q, CFG, new MockTime()),
      (e: Error) =>
        e instanceof QuarantineRestoreError &&
        !e.message.includes("\n") &&
        /records were appended after the quarantine \(the log end offset is \d+, it was \d+ after the cut\)/.test(
          e.message,
        ),
    );
    assert.deepEqual(readdirSync(q.dir).sort(), filesBefore);
    const { result: again } = await open(t.dir, true, leo);
    assert.equal(again.logEndOffset, leo);
    again.close();
  } finally {
    t.cleanup();
  }
});

test("recovery that finds nothing wrong creates no quarantine", async () => {
  const t = tempPartitionDir("quarantine-none");
  try {
    await build(t.dir);
    const { result: log, lines } = await open(t.dir, false, 0n);
    assert.equal(log.loadReport.quarantineDir, undefined);
    assert.ok(!lines.some((l) => / ERROR /.test(l)), lines.join("\n"));
    log.close();
    assert.ok(!readdirSync(t.dir).some((n) => n.startsWith("quarantine-")));
    assert.ok(!existsSync(join(t.dir, "quarantine.json")));
  } finally {
    t.cleanup();
  }
});

test("a quarantine interrupted by a crash is continued by the next recovery, and restores whole", async () => {
  const t = tempPartitionDir("quarantine-resume");
  try {
    const bases = await build(t.dir);
    const before = batchesOnDisk(t.dir);
    const victim = damage(t.dir, bases[3], "crc");
    const damagedBytes = readFileSync(logFile(t.dir, bases[3]));
    // A crash while the later segments were being moved: two of them are in a folder without a manifest,
    // the damaged segment is not cut yet.
    const early = join(t.dir, "quarantine-5");
    mkdirSync(early);
    for (const b of bases.slice(4, 6)) {
      for (const ext of [".log", ".index", ".timeindex"]) {
        const name = `${b.toString().padStart(20, "0")}${ext}`;
        if (existsSync(join(t.dir, name))) renameSync(join(t.dir, name), join(early, name));
      }
    }
    const first = await open(t.dir, false, bases[2]);
    assert.equal(first.result.logEndOffset, victim.baseOffset);
    first.result.close();
    let qs = listQuarantines(t.dir);
    assert.deepEqual(
      qs.map((q) => q.name),
      ["quarantine-5"],
      "the interrupted folder is continued",
    );
    const segs = (q: (typeof qs)[0]) =>
      q.manifest?.files.filter((f) => f.kind === "segment").map((f) => BigInt(f.file.slice(0, 20)));
    assert.deepEqual(segs(qs[0]), bases.slice(4));

    // A crash after the manifest, before the cut: the damaged segment is whole again at the next start.
    writeFileSync(logFile(t.dir, bases[3]), damagedBytes);
    const second = await open(t.dir, false, bases[2]);
    assert.ok(!second.lines.some((l) => /cannot be restored automatically/.test(l)), second.lines.join("\n"));
    second.result.close();
    qs = listQuarantines(t.dir);
    assert.equal(qs.length, 1, "still one quarantine");
    assert.deepEqual(segs(qs[0]), bases.slice(4));

    restoreQuarantine(t.root, t.dir, qs[0], CFG, new MockTime());
    const rp = new OffsetCheckpointFile(join(t.root, RECOVERY_POINT_CHECKPOINT)).read().get("topic-0");
    const { result: again } = await open(t.dir, false, rp?.offset ?? 0n);
    const expected = before.filter((b) => b.baseOffset !== victim.baseOffset).map((b) => b.baseOffset);
    assert.deepEqual(batchesThroughLog(again), expected);
    again.close();
  } finally {
    t.cleanup();
  }
});
