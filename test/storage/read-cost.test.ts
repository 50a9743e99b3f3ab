// Read cost: reading at offset 0 and at the tail of a log with many segments touches one segment, does
// O(1) index lookups and O(1) positional reads (counted, not timed), and translateOffset in a big segment
// scans only the batch headers after one index entry.

import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { test } from "node:test";
import { MockTime } from "../../src/common/time.js";
import { UnifiedLog } from "../../src/storage/unified-log.js";
import { batch, config, tempPartitionDir } from "./storage-test-utils.js";

test("a read touches one segment and a bounded number of index lookups and file reads", () => {
  const t = tempPartitionDir("read-cost");
  mkdirSync(t.dir, { recursive: true });
  const log = UnifiedLog.open(t.dir, config({ segmentBytes: 15_000, indexIntervalBytes: 1024 }), {
    time: new MockTime(),
    recoveryPoint: 0n,
    hadCleanShutdown: true,
  });
  try {
    for (let i = 0; i < 3000; i++) log.appendAsLeader(batch(2, { valueSize: 50 }), 0);
    const segs = log.segments();
    assert.ok(segs.length >= 30, `${segs.length} segments`);
    const reset = (): void => {
      for (const s of segs) {
        s.offsetIndex.lookups = 0;
        s.reads = 0;
      }
    };
    const cost = (): { segments: number; lookups: number; reads: number } => ({
      segments: segs.filter((s) => s.offsetIndex.lookups > 0 || s.reads > 0).length,
      lookups: segs.reduce((n, s) => n + s.offsetIndex.lookups, 0),
      reads: segs.reduce((n, s) => n + s.reads, 0),
    });
    const results: Array<{ segments: number; lookups: number; reads: number }> = [];
    for (const offset of [0n, log.logEndOffset / 2n, log.logEndOffset - 1n]) {
      reset();
      const r = log.read(offset, 4096, "log-end", true);
      assert.ok(r.records.length > 0);
      results.push(cost());
    }
    for (const c of results) {
      assert.equal(c.segments, 1);
      assert.equal(c.lookups, 1);
      // Header reads between an index entry and the target (<= 1024 bytes of ~130-byte batches) + the data read.
      assert.ok(c.reads <= 12, `reads ${c.reads}`);
    }
    assert.deepEqual(results[0], {
      ...results[0],
      segments: results[2].segments,
      lookups: results[2].lookups,
    });
  } finally {
    log.close();
    t.cleanup();
  }
});

test("after loading, inactive segments keep no index entries in memory until a read needs them", () => {
  const t = tempPartitionDir("read-cost-lazy");
  mkdirSync(t.dir, { recursive: true });
  const cfg = config({ segmentBytes: 15_000, indexIntervalBytes: 1024 });
  let log = UnifiedLog.open(t.dir, cfg, { time: new MockTime(), recoveryPoint: 0n, hadCleanShutdown: true });
  try {
    for (let i = 0; i < 2000; i++) log.appendAsLeader(batch(2, { valueSize: 50 }), 0);
    const end = log.logEndOffset;
    log.close();
    log = UnifiedLog.open(t.dir, cfg, { time: new MockTime(), recoveryPoint: end, hadCleanShutdown: true });
    const segs = log.segments();
    const loaded = (): number => segs.slice(0, -1).filter((s) => s.offsetIndex.isLoaded).length;
    const timeLoaded = (): number => segs.slice(0, -1).filter((s) => s.timeIndex.isLoaded).length;
    assert.equal(loaded(), 0);
    // Retention uses the cached last entries, not the index contents.
    log.updateHighWatermark(end);
    assert.equal(log.deleteOldSegments(), 0);
    assert.equal(loaded() + timeLoaded(), 0);
    // A max-timestamp lookup reads the one batch holding it (Kafka 3.8+): one offset index, no time index.
    assert.ok(log.fetchOffsetByTimestamp(-3n));
    assert.ok(loaded() <= 1, `${loaded()} offset indexes loaded`);
    assert.equal(timeLoaded(), 0);
    const r = log.read(0n, 4096, "log-end", true);
    assert.ok(r.records.length > 0);
    assert.ok(loaded() >= 1 && loaded() <= 2, `${loaded()} offset indexes loaded`);
    assert.equal(log.logEndOffset, end);
  } finally {
    log.close();
    t.cleanup();
  }
});
