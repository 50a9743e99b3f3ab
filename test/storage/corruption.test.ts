// Corruption test: random bytes overwritten and files cut at random positions in `.log`, `.index`,
// `.timeindex` and `leader-epoch-checkpoint` of a closed log. Loading never crashes, never serves a batch
// whose CRC is wrong, keeps offsets increasing (contiguous unless the damage hit a batch's baseOffset
// field, which the format does not checksum), rebuilds damaged indexes, and reports what it dropped in
// one log line.

import assert from "node:assert/strict";
import {
  cpSync,
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
import { UnifiedLog } from "../../src/storage/unified-log.js";
import { Random } from "../support/random.js";
import {
  batch,
  captureLogs,
  config,
  parseLogFile,
  tempPartitionDir,
  verifyLogDir,
} from "./storage-test-utils.js";

const CFG = config({ segmentBytes: 4000, indexIntervalBytes: 300, segmentIndexBytes: 1200 });

function buildReference(dir: string): bigint {
  mkdirSync(dir, { recursive: true });
  const cache = LeaderEpochFileCache.load(dir);
  const log = UnifiedLog.open(dir, CFG, {
    time: new MockTime(),
    recoveryPoint: 0n,
    hadCleanShutdown: true,
    leaderEpochCache: cache,
  });
  for (let i = 0; i < 120; i++) {
    log.appendAsLeader(
      batch(1 + (i % 4), { valueSize: 20 + (i % 7) * 10, timestamp: 1000n + BigInt(i) }),
      Math.floor(i / 30),
    );
  }
  log.flush();
  const end = log.logEndOffset;
  log.close();
  return end;
}

interface Damage {
  file: string;
  kind: "overwrite" | "cut";
  position: number;
  length: number;
}

function damage(dir: string, rnd: Random, kinds: RegExp): Damage {
  const files = readdirSync(dir)
    .filter((n) => kinds.test(n))
    .filter((n) => statSync(join(dir, n)).size > 0)
    .sort();
  const file = files[rnd.int(0, files.length - 1)];
  const path = join(dir, file);
  const size = statSync(path).size;
  if (rnd.chance(0.5)) {
    const position = rnd.int(0, size - 1);
    truncateSync(path, position);
    return { file, kind: "cut", position, length: size - position };
  }
  const bytes = readFileSync(path);
  const length = rnd.int(1, 16);
  const position = rnd.int(0, Math.max(0, size - length));
  rnd.bytes(length).copy(bytes, position);
  writeFileSync(path, bytes);
  return { file, kind: "overwrite", position, length };
}

/** Whether an overwrite touched the baseOffset field (first 8 bytes) of some batch of the original file. */
function hitsBaseOffset(refDir: string, d: Damage): boolean {
  if (d.kind !== "overwrite" || !d.file.endsWith(".log")) return false;
  const parsed = parseLogFile(readFileSync(join(refDir, d.file)));
  return parsed.batches.some((b) => d.position < b.position + 8 && d.position + d.length > b.position);
}

function readEverything(log: UnifiedLog): Array<{ base: bigint; last: bigint }> {
  const out: Array<{ base: bigint; last: bigint }> = [];
  let next = log.logStartOffset;
  while (next < log.logEndOffset) {
    const r = log.read(next, 1 << 20, "log-end", true);
    const parsed = parseLogFile(r.records);
    assert.equal(parsed.trailingBytes, 0, "a read returned a partial batch");
    if (parsed.batches.length === 0) break;
    for (const b of parsed.batches) {
      assert.ok(b.crcValid, `served a batch with a bad CRC at offset ${b.baseOffset}`);
      out.push({ base: b.baseOffset, last: b.lastOffset });
    }
    next = parsed.batches[parsed.batches.length - 1].lastOffset + 1n;
  }
  return out;
}

test("random damage to .log/.index/.timeindex/leader-epoch-checkpoint: load never crashes or serves bad data", async () => {
  const t = tempPartitionDir("corruption");
  const ref = join(t.root, "ref-0");
  const fullEnd = buildReference(ref);
  const rnd = new Random(20261129);
  let dropped = 0;
  let rebuilt = 0;
  try {
    for (let iter = 0; iter < 60; iter++) {
      const work = join(t.root, `work-${iter}`, "topic-0");
      cpSync(ref, work, { recursive: true });
      const indexOnly = iter % 3 === 0;
      const d = damage(
        work,
        rnd,
        indexOnly
          ? /\.(index|timeindex)$|^leader-epoch-checkpoint$/
          : /\.(log|index|timeindex)$|^leader-epoch-checkpoint$/,
      );
      // Index damage must be caught even after a clean shutdown; log damage is found by recovery.
      const clean = indexOnly;
      const cache = LeaderEpochFileCache.load(work);
      const { result: log, lines } = await captureLogs(() =>
        UnifiedLog.open(work, CFG, {
          time: new MockTime(),
          recoveryPoint: clean ? fullEnd : 0n,
          hadCleanShutdown: clean,
          leaderEpochCache: cache,
        }),
      );
      const what = `iteration ${iter}: ${d.kind} ${d.file} at ${d.position} (+${d.length})`;
      const loadLines = lines.filter((l) => /Loaded log|Recovered log/.test(l));
      assert.equal(loadLines.length, 1, `${what}\n${lines.join("\n")}`);
      const batches = readEverything(log);
      for (let i = 1; i < batches.length; i++) {
        assert.ok(batches[i].base > batches[i - 1].last, `${what}: offsets go backwards`);
        if (!hitsBaseOffset(ref, d))
          assert.equal(batches[i].base, batches[i - 1].last + 1n, `${what}: offset gap`);
      }
      const r = log.loadReport;
      if (log.logEndOffset < fullEnd) {
        dropped++;
        assert.ok(r.bytesTruncated > 0 || r.segmentsDeleted > 0, `${what}: data lost without a report`);
        assert.match(loadLines[0], /WARN.*(truncated|deleted)/, what);
      }
      if (indexOnly) {
        assert.equal(log.logEndOffset, fullEnd, `${what}: index damage lost data`);
        if (r.indexesRebuilt.length > 0) rebuilt++;
      }
      // Lookups through the (possibly rebuilt) indexes agree with the data.
      for (const b of batches.filter((_, i) => i % 7 === 0)) {
        const got = parseLogFile(log.read(b.last, 1, "log-end", true).records).batches[0];
        assert.equal(got.baseOffset, b.base, `${what}: lookup of ${b.last}`);
      }
      log.close();
      // A recovery's epoch-cache writes run in the background: the directory is checked once they ended.
      await cache.flushed();
      if (!hitsBaseOffset(ref, d)) verifyLogDir(work);
      rmSync(join(t.root, `work-${iter}`), { recursive: true, force: true });
    }
    assert.ok(dropped > 0 && rebuilt > 0, `dropped ${dropped}, rebuilt ${rebuilt}`);
  } finally {
    t.cleanup();
  }
});
