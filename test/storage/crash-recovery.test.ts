// Crash test: a child process appends to a log as fast as it can and is SIGKILLed at random moments, over
// 20+ rounds. After each kill the log is reopened as after an unclean shutdown (hadCleanShutdown=false,
// the last recovery point the child reported): every acknowledged batch is intact, the tail is whole or
// cleanly cut, offsets are contiguous, and the indexes agree with the log (checked by an independent
// parser). A kill cannot tear a write, so every third round also cuts the unflushed tail at a random byte
// (a power cut): then only batches below the recovery point must survive. Between rounds old segments are
// deleted so the log stays small and rounds stay fast.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, truncateSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { MockTime } from "../../src/common/time.js";
import { decodeRecordBatches } from "../../src/protocol/records/index.js";
import { LeaderEpochFileCache } from "../../src/storage/leader-epoch/leader-epoch-file-cache.js";
import { UnifiedLog } from "../../src/storage/unified-log.js";
import { Random } from "../support/random.js";
import { CRASH_TEST_CONFIG } from "../support/storage-crash-writer.js";
import { captureLogs, parseLogFile, tempPartitionDir, verifyLogDir } from "./storage-test-utils.js";

const WRITER = join(dirname(fileURLToPath(import.meta.url)), "../support/storage-crash-writer.js");
const ROUNDS = 22;

interface RoundOutput {
  acks: Array<{ first: bigint; last: bigint }>;
  flushed: bigint | undefined;
  readyAt: bigint | undefined;
}

function runWriter(
  dir: string,
  rp: bigint,
  start: bigint,
  seed: number,
  killAfterMs: number,
): Promise<RoundOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WRITER, dir, String(rp), String(start), String(seed)], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    let timer: NodeJS.Timeout | undefined;
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (timer === undefined && out.includes("ready")) {
        timer = setTimeout(() => child.kill("SIGKILL"), killAfterMs);
      }
    });
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    const guard = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.on("exit", (_code, signal) => {
      clearTimeout(guard);
      if (timer) clearTimeout(timer);
      if (signal !== "SIGKILL") {
        reject(new Error(`writer exited on its own (${signal ?? _code}): ${err.slice(0, 2000)}`));
        return;
      }
      const res: RoundOutput = { acks: [], flushed: undefined, readyAt: undefined };
      // Only complete lines count: the last one may have been cut by the kill.
      const lines = out.split("\n");
      lines.pop();
      for (const line of lines) {
        const [kind, a, b] = line.split(" ");
        if (kind === "ack") res.acks.push({ first: BigInt(a), last: BigInt(b) });
        else if (kind === "flushed") res.flushed = BigInt(a);
        else if (kind === "ready") res.readyAt = BigInt(a);
      }
      resolve(res);
    });
  });
}

/** Cuts the last segment's .log at a random byte after the recovery point; false when there is nothing to cut. */
function cutUnflushedTail(dir: string, rp: bigint, rnd: Random): boolean {
  const logs = readdirSync(dir)
    .filter((n) => /^\d{20}\.log$/.test(n))
    .sort();
  const last = logs[logs.length - 1];
  if (!last) return false;
  const path = join(dir, last);
  const bytes = readFileSync(path);
  const base = BigInt(last.slice(0, 20));
  let lower = 0;
  if (rp > base) {
    const first = parseLogFile(bytes).batches.find((b) => b.baseOffset >= rp);
    lower = first ? first.position : bytes.length;
  }
  if (lower + 1 >= bytes.length) return false;
  truncateSync(path, rnd.int(lower + 1, bytes.length - 1));
  return true;
}

test(`crash recovery: ${ROUNDS} rounds of SIGKILL while appending`, { timeout: 90_000 }, async () => {
  const t = tempPartitionDir("crash");
  mkdirSync(t.dir, { recursive: true });
  const rnd = new Random(0xc0ffee);
  let recoveryPoint = 0n;
  let logStartOffset = 0n;
  let totalAcked = 0;
  let truncatedRounds = 0;
  let cutRounds = 0;
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const out = await runWriter(t.dir, recoveryPoint, logStartOffset, round + 1, rnd.int(5, 150));
      assert.ok(out.readyAt !== undefined, `round ${round}: the writer never got ready`);
      const rp = out.flushed ?? recoveryPoint;
      // A SIGKILL cannot tear a write (the page cache keeps it); every third round also simulates losing
      // unflushed data, as a power cut would: the last segment is cut at a random byte past the recovery point.
      const powerCut = round % 3 === 2 && cutUnflushedTail(t.dir, rp, rnd);

      const { result: log, lines } = await captureLogs(() =>
        UnifiedLog.open(t.dir, CRASH_TEST_CONFIG, {
          time: new MockTime(),
          recoveryPoint: rp,
          logStartOffset,
          hadCleanShutdown: false,
          leaderEpochCache: LeaderEpochFileCache.load(t.dir),
        }),
      );
      assert.equal(
        lines.filter((l) => /LogLoader|Loaded log|Recovered log/.test(l)).length,
        1,
        lines.join("\n"),
      );
      if (log.loadReport.bytesTruncated > 0) truncatedRounds++;
      // The files, checked independently, before we touch anything.
      const check = verifyLogDir(t.dir);
      assert.equal(check.endOffset, log.logEndOffset, `round ${round}`);
      assert.ok(log.logEndOffset >= rp, `round ${round}: lost data below the recovery point ${rp}`);
      const byBase = new Map(check.batches.map((b) => [b.baseOffset, b]));
      for (const a of out.acks) {
        if (a.last < log.logStartOffset) continue;
        if (powerCut && a.last >= rp) continue; // unflushed: may be gone after a power cut
        const b = byBase.get(a.first);
        assert.ok(
          b && b.lastOffset === a.last,
          `round ${round}: acknowledged batch ${a.first}..${a.last} is missing`,
        );
      }
      totalAcked += out.acks.length;
      if (powerCut) cutRounds++;
      if (log.loadReport.bytesTruncated > 0 && !powerCut) {
        console.log(`round ${round}: truncated without a power cut: ${log.loadReport.truncationReason}`);
      }
      // Keys are the offsets the writer expected: contents match their offsets (sampled tail segment).
      const lastSeg = log.segments()[log.numberOfSegments - 1];
      const prevSeg = log.segments()[Math.max(0, log.numberOfSegments - 2)];
      for (const seg of [prevSeg, lastSeg]) {
        const r = seg.read(seg.baseOffset, 1 << 24, seg.size, true);
        if (!r) continue;
        for (const batch of decodeRecordBatches(r.records)) {
          for (const rec of batch.records) assert.equal(rec.key?.toString(), String(rec.offset));
        }
      }
      // Offsets stay contiguous through a read too.
      if (log.logEndOffset > log.logStartOffset) {
        const r = log.read(log.logEndOffset - 1n, 1 << 20, "log-end", true);
        const batches = decodeRecordBatches(r.records);
        assert.equal(batches[batches.length - 1].records.at(-1)?.offset, log.logEndOffset - 1n);
      }
      // Keep the log small: flush, drop all but the last 3 segments, close cleanly.
      log.flush();
      log.updateHighWatermark(log.logEndOffset);
      const segs = log.segments();
      if (segs.length > 3) log.deleteSegments(segs.slice(0, segs.length - 3), "test cleanup");
      recoveryPoint = log.recoveryPoint;
      logStartOffset = log.logStartOffset;
      log.close();
    }
    assert.ok(totalAcked > ROUNDS, `only ${totalAcked} appends acknowledged`);
    // Not guaranteed, but with 20+ random kills some land in the middle of a write.
    assert.ok(truncatedRounds > 0, "no round had a tail to truncate");
    console.log(
      `crash test: ${totalAcked} acknowledged appends, ${cutRounds} simulated power cuts, ${truncatedRounds} rounds truncated a tail`,
    );
  } finally {
    t.cleanup();
  }
});
