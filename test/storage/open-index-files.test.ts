// The cap on open index files: many active segments written in turn hold at most the cap of index
// descriptors (least recently written closed first), and evicted indexes are reopened on their next
// write and on flush, with nothing lost.

import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { MockTime } from "../../src/common/time.js";
import { setBaseOffset } from "../../src/protocol/records/index.js";
import { openIndexFileCount, setMaxOpenIndexFiles } from "../../src/storage/abstract-index.js";
import { LogSegment } from "../../src/storage/log-segment.js";
import { verifySegment } from "./independent-segment-parser.js";
import { batch, config, tempPartitionDir } from "./storage-test-utils.js";

function openFds(): number {
  return readdirSync("/proc/self/fd").length;
}

test("index descriptors stay under the cap and evicted indexes keep working", () => {
  const t = tempPartitionDir("index-cap");
  setMaxOpenIndexFiles(8);
  const segments: LogSegment[] = [];
  try {
    const cfg = config({ indexIntervalBytes: 1, segmentIndexBytes: 4096 });
    const before = openFds();
    for (let i = 0; i < 30; i++) {
      const dir = join(t.root, `topic-${i}`);
      mkdirSync(dir, { recursive: true });
      segments.push(LogSegment.open(dir, 0n, cfg, new MockTime()));
    }
    // Write every segment in turn, three rounds: each write needs its index files open.
    for (let round = 0; round < 3; round++) {
      for (const seg of segments) {
        const b = batch(2, { timestamp: 1000n + BigInt(round) });
        const base = BigInt(round * 2);
        setBaseOffset(b, 0, base);
        seg.append(base + 1n, 1000n + BigInt(round), base + 1n, b);
      }
      assert.ok(openIndexFileCount() <= 8, `${openIndexFileCount()} index files open`);
    }
    // 30 .log descriptors plus at most 8 index descriptors (not 90).
    assert.ok(openFds() - before <= 30 + 8, `${openFds() - before} descriptors for 30 segments`);
    for (const seg of segments) seg.flush();
    for (let i = 0; i < 30; i++) {
      const seg = segments[i];
      seg.onBecomeInactiveSegment();
      const dir = join(t.root, `topic-${i}`);
      const { problems } = verifySegment(
        0n,
        readFileSync(join(dir, "00000000000000000000.log")),
        readFileSync(join(dir, "00000000000000000000.index")),
        readFileSync(join(dir, "00000000000000000000.timeindex")),
      );
      assert.deepEqual(problems, [], `segment ${i}`);
      assert.equal(seg.translateOffset(5n)?.position !== undefined, true);
    }
  } finally {
    for (const s of segments) s.close();
    setMaxOpenIndexFiles(1024);
    t.cleanup();
  }
});
