// Retention policy: exact segment choices for time, size and log start offset retention, the high
// watermark bound, the active segment (deleted only when non-empty and wholly below the high watermark,
// with a roll first), the order of the passes, and cleanup.policy=compact.

import assert from "node:assert/strict";
import { test } from "node:test";
import { MockTime } from "../../src/common/time.js";
import {
  type RetentionParams,
  type SegmentSummary,
  segmentsToDelete,
} from "../../src/storage/retention/retention-policy.js";

const time = new MockTime();
const NOW = time.milliseconds();

function seg(
  baseOffset: number,
  nextOffset: number,
  sizeInBytes: number,
  largestTimestamp: number,
): SegmentSummary {
  return {
    baseOffset: BigInt(baseOffset),
    nextOffset: BigInt(nextOffset),
    sizeInBytes,
    largestTimestamp: BigInt(largestTimestamp),
    lastModifiedMs: NOW - 1,
  };
}

function params(over: Partial<RetentionParams>): RetentionParams {
  return {
    retentionMs: -1,
    retentionBytes: -1,
    logStartOffset: 0n,
    highWatermark: 350n,
    nowMs: NOW,
    cleanupPolicy: ["delete"],
    ...over,
  };
}

const bases = (segments: readonly SegmentSummary[]): number[] => segments.map((s) => Number(s.baseOffset));

// Four segments, the last one active: [0,100) [100,200) [200,300) [300,350).
function log(
  timestamps = [NOW - 5000, NOW - 2000, NOW - 500, NOW - 100],
  sizes = [100, 100, 100, 50],
): SegmentSummary[] {
  return [
    seg(0, 100, sizes[0], timestamps[0]),
    seg(100, 200, sizes[1], timestamps[1]),
    seg(200, 300, sizes[2], timestamps[2]),
    seg(300, 350, sizes[3], timestamps[3]),
  ];
}

test("retention.ms deletes the oldest breached segments and stops at the first that is not", () => {
  const d = segmentsToDelete(log(), params({ retentionMs: 1000 }));
  assert.deepEqual(bases(d.segments), [0, 100]);
  assert.equal(d.deletions.length, 1);
  assert.equal(d.deletions[0].reason, "retention time 1000ms breach");
  assert.equal(d.deletions[0].breach, "retention-time");
  assert.equal(d.newLogStartOffset, 200n);
  assert.equal(d.rollFirst, false);

  // A young segment in front protects the old ones behind it.
  const d2 = segmentsToDelete(
    log([NOW - 5000, NOW - 10, NOW - 5000, NOW - 100]),
    params({ retentionMs: 1000 }),
  );
  assert.deepEqual(bases(d2.segments), [0]);

  // Strictly greater: a segment exactly retention.ms old stays.
  const d3 = segmentsToDelete(log([NOW - 1000, NOW - 5000, NOW, NOW]), params({ retentionMs: 1000 }));
  assert.deepEqual(bases(d3.segments), []);

  // Kafka's default and -1 (infinite).
  assert.equal(segmentsToDelete(log(), params({ retentionMs: 604800000 })).segments.length, 0);
  assert.deepEqual(
    bases(
      segmentsToDelete(log([NOW - 604800001, NOW, NOW, NOW]), params({ retentionMs: 604800000 })).segments,
    ),
    [0],
  );
  assert.equal(
    segmentsToDelete(log([0, 0, 0, 0]), params({ retentionMs: 604800000 })).deletions[0].reason,
    "retention time 604800000ms breach",
  );
  assert.equal(segmentsToDelete(log([0, 0, 0, 0]), params({ retentionMs: -1 })).segments.length, 0);
});

test("retention.ms uses the file's last modified time when a segment has no timestamp", () => {
  const segments = log([-1, -1, NOW - 100, NOW - 100]);
  segments[0].lastModifiedMs = NOW - 5000;
  segments[1].lastModifiedMs = NOW - 10;
  const d = segmentsToDelete(segments, params({ retentionMs: 1000 }));
  assert.deepEqual(bases(d.segments), [0]);
});

test("the high watermark bounds deletion: a segment goes only when the next segment's base <= HW", () => {
  const old = [0, 0, 0, 0];
  assert.deepEqual(
    bases(segmentsToDelete(log(old), params({ retentionMs: 10, highWatermark: 150n })).segments),
    [0],
  );
  assert.deepEqual(
    bases(segmentsToDelete(log(old), params({ retentionMs: 10, highWatermark: 200n })).segments),
    [0, 100],
  );
  assert.deepEqual(
    bases(segmentsToDelete(log(old), params({ retentionMs: 10, highWatermark: 99n })).segments),
    [],
  );
  // The active segment's upper bound is the log end offset.
  assert.deepEqual(
    bases(segmentsToDelete(log(old), params({ retentionMs: 10, highWatermark: 349n })).segments),
    [0, 100, 200],
  );
});

test("a breached non-empty active segment is deleted when HW = LEO, after a roll; an empty one never", () => {
  const d = segmentsToDelete(log([0, 0, 0, 0]), params({ retentionMs: 10, highWatermark: 350n }));
  assert.deepEqual(bases(d.segments), [0, 100, 200, 300]);
  assert.equal(d.rollFirst, true);
  assert.equal(d.newLogStartOffset, 350n);

  const withEmptyActive = [...log([0, 0, 0, 0]).slice(0, 3), seg(300, 300, 0, -1)];
  const d2 = segmentsToDelete(withEmptyActive, params({ retentionMs: 10, highWatermark: 300n }));
  assert.deepEqual(bases(d2.segments), [0, 100, 200]);
  assert.equal(d2.rollFirst, false);
  assert.equal(d2.newLogStartOffset, 300n);
});

test("retention.bytes removes the oldest segments while size - deleted - segment >= retention.bytes", () => {
  // size 350: diff 150 -> delete [0] (diff 50), [100] would make it negative.
  const d = segmentsToDelete(log(), params({ retentionBytes: 200 }));
  assert.deepEqual(bases(d.segments), [0]);
  assert.equal(d.deletions[0].reason, "retention size in bytes 200 breach");
  assert.equal(d.newLogStartOffset, 100n);
  assert.deepEqual(bases(segmentsToDelete(log(), params({ retentionBytes: 150 })).segments), [0, 100]);
  assert.deepEqual(bases(segmentsToDelete(log(), params({ retentionBytes: 350 })).segments), []);
  assert.deepEqual(bases(segmentsToDelete(log(), params({ retentionBytes: 351 })).segments), []);
  assert.deepEqual(bases(segmentsToDelete(log(), params({ retentionBytes: -1 })).segments), []);
  // retention.bytes 0 with HW = LEO: everything, rolling first.
  const all = segmentsToDelete(log(), params({ retentionBytes: 0 }));
  assert.deepEqual(bases(all.segments), [0, 100, 200, 300]);
  assert.equal(all.rollFirst, true);
  // HW still bounds it.
  assert.deepEqual(
    bases(segmentsToDelete(log(), params({ retentionBytes: 0, highWatermark: 100n })).segments),
    [0],
  );
});

test("log start offset retention deletes segments wholly below the log start offset", () => {
  const d = segmentsToDelete(log(), params({ logStartOffset: 250n }));
  assert.deepEqual(bases(d.segments), [0, 100]);
  assert.equal(d.deletions[0].reason, "log start offset 250 breach");
  assert.equal(d.deletions[0].breach, "log-start-offset");
  assert.equal(d.newLogStartOffset, 250n);
  assert.deepEqual(bases(segmentsToDelete(log(), params({ logStartOffset: 200n })).segments), [0, 100]);
  assert.deepEqual(bases(segmentsToDelete(log(), params({ logStartOffset: 199n })).segments), [0]);
  // Never the active segment (it has no next segment), and not past the high watermark.
  assert.deepEqual(bases(segmentsToDelete(log(), params({ logStartOffset: 350n })).segments), [0, 100, 200]);
  assert.deepEqual(
    bases(segmentsToDelete(log(), params({ logStartOffset: 350n, highWatermark: 200n })).segments),
    [0, 100],
  );
});

test("cleanup.policy=compact: only the log start offset applies", () => {
  const p = { retentionMs: 10, retentionBytes: 0, cleanupPolicy: ["compact"] as const };
  assert.deepEqual(bases(segmentsToDelete(log([0, 0, 0, 0]), params(p)).segments), []);
  const d = segmentsToDelete(log([0, 0, 0, 0]), params({ ...p, logStartOffset: 100n }));
  assert.deepEqual(bases(d.segments), [0]);
  assert.equal(d.deletions.length, 1);
  // compact,delete behaves like delete.
  const both = segmentsToDelete(log(), params({ retentionMs: 1000, cleanupPolicy: ["compact", "delete"] }));
  assert.deepEqual(bases(both.segments), [0, 100]);
});

test("passes run in Kafka's order, each over what the previous left: start offset, size, time", () => {
  // LSO 100 deletes [0]; size is then 250 with retention 150: diff 100 deletes [100] only (over the full
  // 350 it would have deleted [100] and [200]); time then deletes nothing more (300's segment is young).
  const d = segmentsToDelete(
    log([NOW - 5000, NOW - 5000, NOW - 10, NOW - 10]),
    params({ logStartOffset: 100n, retentionBytes: 150, retentionMs: 1000 }),
  );
  assert.deepEqual(
    d.deletions.map((x) => [x.breach, bases(x.segments)]),
    [
      ["log-start-offset", [0]],
      ["retention-size", [100]],
    ],
  );
  assert.equal(d.newLogStartOffset, 200n);

  // Time after size.
  const d2 = segmentsToDelete(
    log([NOW - 5000, NOW - 5000, NOW - 5000, NOW - 10]),
    params({ retentionBytes: 200, retentionMs: 1000 }),
  );
  assert.deepEqual(
    d2.deletions.map((x) => [x.reason, bases(x.segments)]),
    [
      ["retention size in bytes 200 breach", [0]],
      ["retention time 1000ms breach", [100, 200]],
    ],
  );
  assert.deepEqual(bases(d2.segments), [0, 100, 200]);
  assert.equal(d2.newLogStartOffset, 300n);
});

test("no segments, nothing to do", () => {
  const d = segmentsToDelete([], params({ retentionMs: 0, retentionBytes: 0 }));
  assert.deepEqual(d.segments, []);
  assert.equal(d.newLogStartOffset, 0n);
});
