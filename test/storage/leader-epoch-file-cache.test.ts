// LeaderEpochFileCache: the behaviours of Kafka's LeaderEpochFileCacheTest (assign ordering and
// monotonicity, endOffsetFor, truncation from start and end), plus persistence and reload through the
// real leader-epoch-checkpoint file (truncateFromStart's write in the background and its ordering against
// the synchronous ones) and the handling of a damaged file.

import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, beforeEach, describe, test } from "node:test";
import { Logger, type LogLevel, setLogSink } from "../../src/common/logger.js";
import {
  type EpochEntry,
  LeaderEpochFileCache,
  UNDEFINED_EPOCH,
  UNDEFINED_EPOCH_OFFSET,
} from "../../src/storage/leader-epoch/leader-epoch-file-cache.js";

const root = mkdtempSync(join(tmpdir(), "tributary-epoch-"));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
let dir: string;
let cache: LeaderEpochFileCache;

function fresh(): void {
  dir = mkdtempSync(join(root, `p${n++}-`));
  cache = LeaderEpochFileCache.load(dir);
}

const e = (epoch: number, startOffset: number): EpochEntry => ({ epoch, startOffset: BigInt(startOffset) });
const eo = (epoch: number, endOffset: number | bigint) => ({ epoch, endOffset: BigInt(endOffset) });
const UNDEFINED = { epoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET };

/** Captures log lines while `fn` runs. */
function captureLogs(fn: () => void): Array<{ line: string; level: LogLevel }> {
  const lines: Array<{ line: string; level: LogLevel }> = [];
  const prev = setLogSink((line, level) => lines.push({ line, level }));
  try {
    fn();
  } finally {
    setLogSink(prev);
  }
  return lines;
}

describe("LeaderEpochFileCache (Kafka's LeaderEpochFileCacheTest)", () => {
  beforeEach(fresh);

  test("previousEpoch follows assignments and truncation", () => {
    assert.equal(cache.previousEpoch(), undefined);
    cache.assign(2, 10n);
    assert.equal(cache.previousEpoch(), undefined);
    cache.assign(4, 15n);
    assert.equal(cache.previousEpoch(), 2);
    cache.assign(10, 20n);
    assert.equal(cache.previousEpoch(), 4);
    cache.truncateFromEnd(18n);
    assert.equal(cache.previousEpoch(), 2);
  });

  test("adds an epoch and its start offset", () => {
    cache.assign(2, 10n);
    assert.equal(cache.latestEpoch(), 2);
    assert.deepEqual(cache.epochEntries()[0], e(2, 10));
    assert.deepEqual(cache.endOffsetFor(2, 11n), eo(2, 11));
  });

  test("returns the log end offset when the latest epoch is requested", () => {
    cache.assign(2, 11n);
    cache.assign(2, 12n);
    assert.deepEqual(cache.endOffsetFor(2, 14n), eo(2, 14));
  });

  test("undefined epoch requested gives undefined epoch and offset", () => {
    cache.assign(2, 11n);
    cache.assign(3, 12n);
    assert.deepEqual(cache.endOffsetFor(UNDEFINED_EPOCH, 0n), UNDEFINED);
    fresh();
    assert.deepEqual(cache.endOffsetFor(UNDEFINED_EPOCH, 73n), UNDEFINED);
  });

  test("an assigned epoch's start offset is never moved up", () => {
    cache.assign(2, 9n);
    cache.assign(2, 10n);
    assert.deepEqual(cache.epochEntries(), [e(2, 9)]);
    fresh();
    cache.assign(2, 6n);
    cache.assign(2, 10n);
    assert.equal(cache.epochEntries()[0].startOffset, 6n);
    fresh();
    cache.assign(2, 6n);
    cache.assign(2, 7n);
    assert.deepEqual(cache.epochEntries(), [e(2, 6)]);
  });

  test("start offsets increase monotonically: a new epoch at the same offset replaces the old one", () => {
    cache.assign(2, 9n);
    cache.assign(3, 9n);
    assert.deepEqual(cache.epochEntries(), [e(3, 9)]);
  });

  test("empty cache answers UNDEFINED", () => {
    assert.deepEqual(cache.endOffsetFor(0, 0n), UNDEFINED);
    assert.deepEqual(cache.endOffsetFor(7, 0n), UNDEFINED);
    assert.equal(cache.latestEpoch(), undefined);
  });

  test("requested epoch below the first gives the first epoch's start offset", () => {
    cache.assign(5, 11n);
    cache.assign(6, 12n);
    cache.assign(7, 13n);
    assert.deepEqual(cache.endOffsetFor(4, 0n), eo(4, 11));
  });

  test("same epoch with an earlier start offset truncates the later entries", () => {
    cache.assign(5, 11n);
    cache.assign(6, 12n);
    cache.assign(7, 13n);
    cache.assign(7, 12n);
    assert.deepEqual(cache.endOffsetFor(5, 0n), eo(5, 12));
    assert.deepEqual(cache.endOffsetFor(6, 0n), eo(5, 12));
    assert.deepEqual(cache.epochEntries(), [e(5, 11), e(7, 12)]);
  });

  test("end offset of a previous epoch is the next epoch's first offset", () => {
    cache.assign(1, 11n);
    cache.assign(1, 12n);
    cache.assign(2, 13n);
    cache.assign(2, 14n);
    cache.assign(3, 15n);
    cache.assign(3, 16n);
    assert.deepEqual(cache.endOffsetFor(2, 17n), eo(2, 15));
  });

  test("an epoch not in the cache answers with the largest epoch below it", () => {
    cache.assign(0, 10n);
    cache.assign(2, 13n);
    cache.assign(4, 17n);
    assert.deepEqual(cache.endOffsetFor(1, 0n), eo(0, 13));
    assert.deepEqual(cache.endOffsetFor(2, 0n), eo(2, 17));
    assert.deepEqual(cache.endOffsetFor(3, 0n), eo(2, 17));
  });

  test("an epoch above the latest answers UNDEFINED", () => {
    cache.assign(2, 100n);
    assert.deepEqual(cache.endOffsetFor(3, 100n), UNDEFINED);
  });

  test("epochs need not start from zero", () => {
    cache.assign(2, 6n);
    assert.deepEqual(cache.endOffsetFor(2, 7n), eo(2, 7));
    assert.deepEqual(cache.epochEntries(), [e(2, 6)]);
  });

  test("a lower epoch removes the higher ones (monotonically increasing epochs)", () => {
    cache.assign(1, 5n);
    cache.assign(2, 6n);
    const logs = captureLogs(() => cache.assign(1, 7n));
    assert.equal(cache.latestEpoch(), 1);
    assert.deepEqual(cache.endOffsetFor(1, 8n), eo(1, 8));
    assert.deepEqual(cache.endOffsetFor(2, 8n), UNDEFINED);
    assert.deepEqual(cache.epochEntries(), [e(1, 7)]);
    assert.ok(
      logs.some((l) => l.level === "WARN" && l.line.includes("caused truncation of conflicting entries")),
    );
  });

  test("a lower start offset removes the later entries", () => {
    cache.assign(2, 6n);
    cache.assign(3, 5n);
    assert.deepEqual(cache.epochEntries(), [e(3, 5)]);
  });

  test("tracks epochs as leaders change many times", () => {
    cache.assign(0, 0n);
    cache.assign(1, 0n);
    assert.equal(cache.latestEpoch(), 1);
    assert.deepEqual(cache.endOffsetFor(1, 0n), eo(1, 0));
    assert.deepEqual(cache.endOffsetFor(0, 0n), eo(0, 0));
    assert.deepEqual(cache.endOffsetFor(1, 5n), eo(1, 5));
    assert.deepEqual(cache.endOffsetFor(0, 5n), eo(0, 0));
    cache.assign(2, 5n);
    assert.deepEqual(cache.endOffsetFor(2, 10n), eo(2, 10));
    assert.deepEqual(cache.endOffsetFor(1, 10n), eo(1, 5));
    assert.deepEqual(cache.endOffsetFor(0, 10n), eo(0, 0));
  });

  test("tracks epochs as a follower receives many messages", () => {
    for (const o of [0, 1, 2]) cache.assign(0, BigInt(o));
    assert.deepEqual(cache.endOffsetFor(0, 3n), eo(0, 3));
    for (const o of [3, 4, 5]) cache.assign(1, BigInt(o));
    assert.deepEqual(cache.endOffsetFor(1, 6n), eo(1, 6));
    for (const o of [6, 7, 8]) cache.assign(2, BigInt(o));
    assert.equal(cache.latestEpoch(), 2);
    assert.deepEqual(cache.endOffsetFor(2, 9n), eo(2, 9));
    assert.deepEqual(cache.endOffsetFor(0, 9n), eo(0, 3));
    assert.deepEqual(cache.endOffsetFor(1, 9n), eo(1, 6));
  });

  test("truncateFromEnd drops entries on and after the end offset", () => {
    cache.assign(2, 6n);
    cache.assign(3, 8n);
    cache.assign(4, 11n);
    cache.truncateFromEnd(8n);
    assert.deepEqual(cache.epochEntries(), [e(2, 6)]);
    fresh();
    cache.assign(2, 6n);
    cache.assign(3, 8n);
    cache.assign(4, 11n);
    cache.truncateFromEnd(9n);
    assert.equal(cache.latestEpoch(), 3);
    assert.deepEqual(cache.epochEntries(), [e(2, 6), e(3, 8)]);
  });

  for (const [startOffset, expected] of [
    [8, [e(3, 8), e(4, 11)]],
    [1, [e(2, 6), e(3, 8), e(4, 11)]],
    [6, [e(2, 6), e(3, 8), e(4, 11)]],
    [11, [e(4, 11)]],
    [9, [e(3, 9), e(4, 11)]],
    [15, [e(4, 15)]],
    [-1, [e(2, 6), e(3, 8), e(4, 11)]],
  ] as const) {
    test(`truncateFromStart(${startOffset}) keeps ${expected.map((x) => `${x.epoch}@${x.startOffset}`).join(",")}`, () => {
      cache.assign(2, 6n);
      cache.assign(3, 8n);
      cache.assign(4, 11n);
      cache.truncateFromStart(BigInt(startOffset));
      assert.deepEqual(cache.epochEntries(), expected);
    });
  }

  test("truncateFromStart between the first two epochs moves the first one up", () => {
    cache.assign(0, 0n);
    cache.assign(1, 7n);
    cache.assign(2, 10n);
    cache.truncateFromStart(5n);
    assert.deepEqual(cache.epochEntries(), [e(0, 5), e(1, 7), e(2, 10)]);
  });

  test("truncateFromEnd with UNDEFINED_EPOCH_OFFSET changes nothing; truncation of an empty cache is fine", () => {
    cache.assign(2, 6n);
    cache.assign(3, 8n);
    cache.assign(4, 11n);
    cache.truncateFromEnd(UNDEFINED_EPOCH_OFFSET);
    assert.equal(cache.epochEntries().length, 3);
    fresh();
    cache.truncateFromStart(7n);
    cache.truncateFromEnd(7n);
    assert.equal(cache.epochEntries().length, 0);
  });

  test("clearAndFlush removes every entry, on disk too", () => {
    cache.assign(2, 6n);
    cache.assign(3, 8n);
    cache.clearAndFlush();
    assert.equal(cache.epochEntries().length, 0);
    assert.equal(readFileSync(join(dir, "leader-epoch-checkpoint"), "utf8"), "0\n0\n");
  });

  test("invalid entries are rejected", () => {
    assert.throws(() => cache.assign(-1, 0n), RangeError);
    assert.throws(() => cache.assign(0, -1n), RangeError);
  });

  test("assignIfNewer: the append/recovery guard of Kafka's callers ignores old, equal and missing epochs", () => {
    assert.equal(cache.assignIfNewer(-1, 0n), false);
    assert.equal(cache.assignIfNewer(1, 0n), true);
    assert.equal(cache.assignIfNewer(1, 5n), false);
    assert.equal(cache.assignIfNewer(3, 10n), true);
    assert.equal(cache.assignIfNewer(2, 20n), false);
    assert.deepEqual(cache.epochEntries(), [e(1, 0), e(3, 10)]);
  });

  test("epochForOffset", () => {
    cache.assign(0, 0n);
    cache.assign(1, 5n);
    cache.assign(3, 10n);
    assert.equal(cache.epochForOffset(0n), 0);
    assert.equal(cache.epochForOffset(4n), 0);
    assert.equal(cache.epochForOffset(5n), 1);
    assert.equal(cache.epochForOffset(100n), 3);
    fresh();
    assert.equal(cache.epochForOffset(0n), undefined);
  });
});

describe("LeaderEpochFileCache persistence", () => {
  beforeEach(fresh);

  test("load creates an empty checkpoint file as Kafka does", () => {
    assert.equal(readFileSync(join(dir, "leader-epoch-checkpoint"), "utf8"), "");
  });

  const checkpointText = (): string => readFileSync(join(dir, "leader-epoch-checkpoint"), "utf8");

  test("every change is written in Kafka's format and reloads", async () => {
    cache.assign(2, 6n);
    assert.equal(checkpointText(), "0\n1\n2 6\n");
    cache.assign(3, 8n);
    cache.assign(4, 11n);
    cache.truncateFromEnd(11n);
    assert.equal(checkpointText(), "0\n2\n2 6\n3 8\n");
    cache.truncateFromStart(7n);
    await cache.flushed();
    assert.equal(checkpointText(), "0\n2\n2 7\n3 8\n");
    const again = LeaderEpochFileCache.load(dir);
    assert.deepEqual(again.epochEntries(), [e(2, 7), e(3, 8)]);
    assert.deepEqual(again.endOffsetFor(2, 20n), eo(2, 8));
  });

  test("truncateFromStart writes in the background; later changes win, whichever write ends last", async () => {
    cache.assign(2, 6n);
    cache.assign(3, 8n);
    cache.truncateFromStart(7n);
    // The file is rewritten off the event loop: not yet.
    assert.equal(checkpointText(), "0\n2\n2 6\n3 8\n");
    // A synchronous write while the background one is under way: the older background write is dropped.
    cache.assign(4, 11n);
    assert.equal(checkpointText(), "0\n3\n2 7\n3 8\n4 11\n");
    await cache.flushed();
    assert.equal(checkpointText(), "0\n3\n2 7\n3 8\n4 11\n");
    // Several truncations during one background write: the last state is what the file ends with.
    cache.truncateFromStart(9n);
    cache.truncateFromStart(10n);
    cache.truncateFromStart(12n);
    await cache.flushed();
    assert.equal(checkpointText(), "0\n1\n4 12\n");
    assert.deepEqual(readdirSync(dir), ["leader-epoch-checkpoint"]);
  });

  test("close writes a truncation still pending; close(false) and a closed cache write nothing more", async () => {
    cache.assign(2, 6n);
    cache.truncateFromStart(9n);
    cache.close();
    assert.equal(checkpointText(), "0\n1\n2 9\n");
    await cache.flushed();
    assert.equal(checkpointText(), "0\n1\n2 9\n");
    assert.deepEqual(readdirSync(dir), ["leader-epoch-checkpoint"]);
    fresh();
    cache.assign(2, 6n);
    cache.truncateFromStart(9n);
    cache.close(false);
    cache.truncateFromStart(10n);
    await cache.flushed();
    assert.equal(checkpointText(), "0\n1\n2 6\n");
  });

  test("a background write whose log dir went away is dropped quietly; load removes a leftover temp file", async () => {
    cache.assign(2, 6n);
    const logs: string[] = [];
    const prev = setLogSink((line) => logs.push(line));
    try {
      cache.truncateFromStart(9n);
      renameSync(dir, `${dir}-delete`); // as a deleted partition's dir
      await cache.flushed();
    } finally {
      setLogSink(prev);
    }
    assert.deepEqual(logs, []);
    fresh();
    writeFileSync(join(dir, "leader-epoch-checkpoint.bg.tmp"), "0\n1\n5 5\n");
    LeaderEpochFileCache.load(dir);
    assert.deepEqual(readdirSync(dir).sort(), ["leader-epoch-checkpoint"]);
  });

  test("a file written by Kafka loads; non-monotonic entries are cleaned as assign does", () => {
    writeFileSync(join(dir, "leader-epoch-checkpoint"), "0\n3\n0 0\n1 120\n4 350\n");
    assert.deepEqual(LeaderEpochFileCache.load(dir).epochEntries(), [e(0, 0), e(1, 120), e(4, 350)]);
    writeFileSync(join(dir, "leader-epoch-checkpoint"), "0\n3\n0 0\n2 100\n1 50\n");
    assert.deepEqual(LeaderEpochFileCache.load(dir).epochEntries(), [e(0, 0), e(1, 50)]);
  });

  for (const [name, text] of [
    ["truncated entry list", "0\n3\n0 0\n1 120\n"],
    ["a garbage line", "0\n2\n0 0\nhello world\n"],
    ["a wrong version", "1\n1\n0 0\n"],
    ["a non-numeric count", "0\nx\n"],
    ["binary garbage", "\u0000\u0001\u0002\u00ff"],
    ["a cut line", "0\n2\n0 0\n1"],
    ["a negative epoch", "0\n1\n-3 5\n"],
  ] as const) {
    test(`a malformed checkpoint (${name}) gives one WARN line and an empty cache`, () => {
      writeFileSync(join(dir, "leader-epoch-checkpoint"), text);
      let loaded: LeaderEpochFileCache | undefined;
      const logs = captureLogs(() => {
        loaded = LeaderEpochFileCache.load(dir, new Logger("test", "LeaderEpochCache t-0"));
      });
      assert.equal(loaded!.epochEntries().length, 0);
      const warns = logs.filter((l) => l.level === "WARN");
      assert.equal(warns.length, 1, JSON.stringify(logs));
      assert.match(warns[0].line, /leader-epoch-checkpoint/);
      // The next change rewrites a good file.
      loaded!.assign(5, 500n);
      assert.deepEqual(LeaderEpochFileCache.load(dir).epochEntries(), [e(5, 500)]);
    });
  }
});

describe("LeaderEpochFileCache background assign (issue 34)", () => {
  beforeEach(fresh);
  const checkpointText = (): string => readFileSync(join(dir, "leader-epoch-checkpoint"), "utf8");

  test("a background assign is written off the event loop, and made durable now by writePendingNow", async () => {
    cache.assign(1, 0n);
    cache.assign(2, 5n, "background");
    assert.equal(checkpointText(), "0\n1\n1 0\n", "not written synchronously");
    await cache.flushed();
    assert.equal(checkpointText(), "0\n2\n1 0\n2 5\n");
    // Pending again: writePendingNow writes it before returning (what a log flush calls first).
    cache.assign(3, 9n, "background");
    cache.writePendingNow();
    assert.equal(checkpointText(), "0\n3\n1 0\n2 5\n3 9\n");
    await cache.flushed();
    assert.equal(checkpointText(), "0\n3\n1 0\n2 5\n3 9\n");
    assert.deepEqual(readdirSync(dir), ["leader-epoch-checkpoint"]);
    // Nothing pending: no write.
    writeFileSync(join(dir, "leader-epoch-checkpoint"), "0\n3\n1 0\n2 5\n3 9\n");
    cache.writePendingNow();
    assert.deepEqual(LeaderEpochFileCache.load(dir).epochEntries(), [e(1, 0), e(2, 5), e(3, 9)]);
  });
});
