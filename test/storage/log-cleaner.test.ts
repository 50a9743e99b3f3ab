// Log cleaner core: last value per key across segments, byte-for-byte copies, tombstones and their delete
// horizon over several passes, min.compaction.lag.ms and the cleanable ratio, aborted transactions and
// markers, an active producer's last batch kept empty, null keys, every codec re-compressed with its own
// codec, chunked input, a full offset map, the filthiest-log choice, and a property test against a naive
// model of compaction. Every output is checked with decodeRecordBatches (CRC, structure).

import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { MockTime } from "../../src/common/time.js";
import {
  buildEndTxnMarkerBatch,
  buildLegacyMessageSet,
  buildRecordBatch,
  CompressionType,
  ControlRecordType,
  type DecodedRecordBatch,
  decodeRecordBatches,
  readControlRecordKey,
  TimestampType,
} from "../../src/protocol/records/index.js";
import {
  type CleanableLog,
  cleanableOffsets,
  grabFilthiestCompactedLog,
  logToClean,
  maxCompactionDelay,
} from "../../src/storage/cleaner/cleanable-ratio.js";
import {
  type AbortedTransaction,
  buildOffsetMap,
  CleanedTransactionState,
  cleanBatches,
  cleanLog,
  groupSegmentsBySize,
  type InMemorySegment,
  type LastRecordOfProducer,
  OffsetMapBuilder,
} from "../../src/storage/cleaner/log-cleaner.js";
import { SkimpyOffsetMap } from "../../src/storage/cleaner/offset-map.js";

const DELETE_RETENTION_MS = 86_400_000;

type Rec = [key: string | null, value: string | null];

interface BatchOpts {
  compression?: CompressionType;
  producerId?: bigint;
  producerEpoch?: number;
  baseSequence?: number;
  isTransactional?: boolean;
  timestamp?: bigint;
  timestampType?: TimestampType;
}

function batch(baseOffset: number, recs: Rec[], opts: BatchOpts = {}): Buffer {
  const ts = opts.timestamp ?? 1_000n;
  return buildRecordBatch({
    records: recs.map(([key, value], i) => ({
      key: key === null ? null : Buffer.from(key),
      value: value === null ? null : Buffer.from(value),
      timestamp: ts + BigInt(i),
      headers: [{ key: "h", value: Buffer.from(`${baseOffset + i}`) }],
    })),
    baseOffset: BigInt(baseOffset),
    compression: opts.compression,
    producerId: opts.producerId,
    producerEpoch: opts.producerEpoch,
    baseSequence: opts.baseSequence,
    isTransactional: opts.isTransactional,
    timestampType: opts.timestampType,
    timestamp: ts,
    partitionLeaderEpoch: 3,
  });
}

function marker(
  offset: number,
  type: typeof ControlRecordType.Commit | typeof ControlRecordType.Abort,
  producerId: bigint,
): Buffer {
  return buildEndTxnMarkerBatch({
    type,
    producerId,
    producerEpoch: 0,
    coordinatorEpoch: 1,
    timestamp: 2_000n,
    baseOffset: BigInt(offset),
    partitionLeaderEpoch: 3,
  });
}

function segment(baseOffset: number, ...batches: Buffer[]): InMemorySegment {
  return { baseOffset: BigInt(baseOffset), records: Buffer.concat(batches), lastModifiedMs: 5_000 };
}

/** offset:key=value triples of a segment's records (CRC-checked decode). */
function contents(buf: Buffer): string[] {
  const out: string[] = [];
  for (const b of decodeRecordBatches(buf)) {
    for (const r of b.records) {
      const key = r.key === null ? "∅" : b.header.isControl ? "ctl" : r.key.toString();
      out.push(
        `${r.offset}:${key}=${r.value === null ? "†" : b.header.isControl ? "m" : r.value.toString()}`,
      );
    }
  }
  return out;
}

const newMap = (): SkimpyOffsetMap => new SkimpyOffsetMap(24 * 10_000);

function clean(
  segments: InMemorySegment[],
  nowMs: number,
  options: {
    firstDirtyOffset?: bigint;
    firstUncleanableOffset?: bigint;
    abortedTransactions?: AbortedTransaction[];
    activeProducers?: ReadonlyMap<bigint, LastRecordOfProducer>;
    map?: SkimpyOffsetMap;
  } = {},
) {
  return cleanLog(segments, {
    map: options.map ?? newMap(),
    firstDirtyOffset: options.firstDirtyOffset ?? 0n,
    firstUncleanableOffset: options.firstUncleanableOffset ?? segments[segments.length - 1].baseOffset,
    nowMs,
    deleteRetentionMs: DELETE_RETENTION_MS,
    abortedTransactions: options.abortedTransactions,
    activeProducers: options.activeProducers,
  });
}

test("the last record per key is kept across several segments; the active segment is untouched", () => {
  const time = new MockTime();
  const segs = [
    segment(
      0,
      batch(0, [
        ["k1", "a"],
        ["k2", "b"],
      ]),
    ),
    segment(
      2,
      batch(2, [
        ["k1", "c"],
        ["k3", "d"],
      ]),
    ),
    segment(4, batch(4, [["k2", "e"]]), batch(5, [["k3", "f"]])),
    segment(6, batch(6, [["k1", "g"]])),
  ];
  const r = clean(segs, time.milliseconds());
  assert.equal(r.endOffset, 6n);
  assert.deepEqual(
    r.segments.map((s) => contents(s.records)),
    [[], ["2:k1=c"], ["4:k2=e", "5:k3=f"], ["6:k1=g"]],
  );
  assert.equal(r.segments[3].records, segs[3].records);
  assert.equal(r.segments[3].cleaned, false);
  // Batches whose records are all kept are copied byte for byte.
  assert.deepEqual(r.segments[2].records, segs[2].records);
  // The rebuilt batch keeps base offset, original last offset, leader epoch, timestamps and headers.
  const [b] = decodeRecordBatches(r.segments[1].records);
  assert.equal(b.header.baseOffset, 2n);
  assert.equal(b.header.lastOffsetDelta, 1);
  assert.equal(b.header.partitionLeaderEpoch, 3);
  assert.equal(b.records[0].timestamp, 1_000n);
  assert.equal(b.records[0].headers[0].value?.toString(), "2");
  assert.equal(b.header.hasDeleteHorizonMs, false);
  assert.equal(r.stats.messagesRead, 6); // the active segment is not read
  assert.equal(r.stats.messagesRetained, 3);
});

test("tombstones are kept with a delete horizon, then removed on a later pass after delete.retention.ms", () => {
  const time = new MockTime();
  const t0 = time.milliseconds();
  let segs = [
    segment(
      0,
      batch(0, [
        ["k1", "a"],
        ["k2", "x"],
      ]),
    ),
    segment(
      2,
      batch(2, [
        ["k1", null],
        ["k3", "y"],
      ]),
    ),
    segment(4, batch(4, [["k4", "z"]])),
  ];
  const r1 = clean(segs, t0);
  assert.deepEqual(
    r1.segments.map((s) => contents(s.records)),
    [["1:k2=x"], ["2:k1=†", "3:k3=y"], ["4:k4=z"]],
  );
  const [stamped] = decodeRecordBatches(r1.segments[1].records);
  assert.equal(stamped.header.hasDeleteHorizonMs, true);
  assert.equal(stamped.header.baseTimestamp, BigInt(t0 + DELETE_RETENTION_MS));
  assert.deepEqual(
    stamped.records.map((r) => r.timestamp),
    [1_000n, 1_001n],
  );

  // Before the horizon: kept, and copied as is (already stamped).
  segs = r1.segments;
  time.sleep(DELETE_RETENTION_MS - 1);
  const r2 = clean(segs, time.milliseconds());
  assert.deepEqual(contents(r2.segments[1].records), ["2:k1=†", "3:k3=y"]);
  assert.deepEqual(r2.segments[1].records, segs[1].records);

  // At the horizon: gone; the batch keeps its horizon and base offset.
  time.sleep(1);
  const r3 = clean(r2.segments, time.milliseconds());
  assert.deepEqual(contents(r3.segments[1].records), ["3:k3=y"]);
  const [after] = decodeRecordBatches(r3.segments[1].records);
  assert.equal(after.header.baseOffset, 2n);
  assert.equal(after.header.lastOffsetDelta, 1);
  assert.equal(after.records[0].timestamp, 1_001n);
  assert.equal(r3.stats.tombstonesRemoved, 1);
});

test("a tombstone that is the only record of a batch goes with its batch once expired", () => {
  const time = new MockTime();
  const segs = [
    segment(0, batch(0, [["k1", "a"]]), batch(1, [["k1", null]]), batch(2, [["k2", "b"]])),
    segment(3, batch(3, [["k3", "c"]])),
  ];
  const r1 = clean(segs, time.milliseconds());
  assert.deepEqual(contents(r1.segments[0].records), ["1:k1=†", "2:k2=b"]);
  time.sleep(DELETE_RETENTION_MS);
  const r2 = clean(r1.segments, time.milliseconds());
  assert.deepEqual(contents(r2.segments[0].records), ["2:k2=b"]);
  assert.equal(decodeRecordBatches(r2.segments[0].records).length, 1);
});

test("min.compaction.lag.ms: segments with records newer than now - lag are not cleaned", () => {
  const time = new MockTime();
  const now = time.milliseconds();
  const segs = [
    segment(
      0,
      batch(
        0,
        [
          ["k1", "old"],
          ["k2", "old"],
        ],
        { timestamp: BigInt(now - 60_000) },
      ),
    ),
    segment(2, batch(2, [["k2", "mid"]], { timestamp: BigInt(now - 30_000) })),
    segment(3, batch(3, [["k1", "new"]], { timestamp: BigInt(now - 1_000) })),
    segment(4, batch(4, [["k3", "active"]], { timestamp: BigInt(now) })),
  ];
  const summaries = segs.map((s, i) => ({
    baseOffset: s.baseOffset,
    nextOffset: i + 1 < segs.length ? segs[i + 1].baseOffset : 5n,
    sizeInBytes: s.records.length,
    largestTimestamp: BigInt(now - [60_000, 30_000, 1_000, 0][i] + (i === 0 ? 1 : 0)),
    lastModifiedMs: now,
  }));
  const log: CleanableLog = {
    segments: summaries,
    logStartOffset: 0n,
    lastStableOffset: 5n,
    compact: true,
    delete: false,
    minCleanableDirtyRatio: 0.5,
    minCompactionLagMs: 10_000,
    maxCompactionLagMs: Number.MAX_SAFE_INTEGER,
  };
  const offsets = cleanableOffsets(log, now);
  assert.deepEqual(offsets, {
    firstDirtyOffset: 0n,
    firstUncleanableDirtyOffset: 3n,
    forceUpdateCheckpoint: false,
  });
  // Without the lag, the active segment bounds it; the last stable offset bounds it too.
  assert.equal(cleanableOffsets({ ...log, minCompactionLagMs: 0 }, now).firstUncleanableDirtyOffset, 4n);
  assert.equal(
    cleanableOffsets({ ...log, minCompactionLagMs: 0, lastStableOffset: 1n }, now)
      .firstUncleanableDirtyOffset,
    1n,
  );
  assert.equal(
    cleanableOffsets({ ...log, minCompactionLagMs: 100_000 }, now).firstUncleanableDirtyOffset,
    0n,
  );

  const r = clean(segs, now, { firstUncleanableOffset: offsets.firstUncleanableDirtyOffset });
  assert.equal(r.endOffset, 3n);
  // k1's newer value at 3 is inside the lag: the old k1 stays; k2's old value is superseded at 2.
  assert.deepEqual(
    r.segments.map((s) => contents(s.records)),
    [["0:k1=old"], ["2:k2=mid"], ["3:k1=new"], ["4:k3=active"]],
  );
  assert.equal(r.segments[2].cleaned, false);
});

test("aborted transactions are removed; markers stay while their data does, then expire via the horizon", () => {
  const time = new MockTime();
  const t0 = time.milliseconds();
  const segs = [
    segment(
      0,
      batch(
        0,
        [
          ["k1", "aborted"],
          ["k2", "aborted"],
        ],
        { producerId: 7n, producerEpoch: 0, baseSequence: 0, isTransactional: true },
      ),
      marker(2, ControlRecordType.Abort, 7n),
      batch(3, [["k3", "plain"]]),
      batch(4, [["k4", "committed"]], {
        producerId: 8n,
        producerEpoch: 0,
        baseSequence: 0,
        isTransactional: true,
      }),
      marker(5, ControlRecordType.Commit, 8n),
    ),
    segment(6, batch(6, [["k4", "newer"]]), batch(7, [["k5", "x"]])),
    segment(8, batch(8, [["k9", "active"]])),
  ];
  const aborted: AbortedTransaction[] = [
    { producerId: 7n, firstOffset: 0n, lastOffset: 2n, lastStableOffset: 0n },
  ];
  const r1 = clean(segs, t0, { abortedTransactions: aborted });
  // Aborted data gone, never mapped; the abort marker stays (its data was still there this pass) and is
  // reported for the cleaned .txnindex; the commit marker stays (k4's batch was seen this pass).
  assert.deepEqual(contents(r1.segments[0].records), ["2:ctl=m", "3:k3=plain", "5:ctl=m"]);
  assert.deepEqual(r1.segments[0].abortedTransactions, aborted);
  assert.equal(r1.stats.abortedBatchesRemoved, 1);
  for (const b of decodeRecordBatches(r1.segments[0].records)) {
    if (b.header.isControl) assert.equal(b.header.hasDeleteHorizonMs, false);
  }

  // Second pass: no data of either transaction left, so both markers get a delete horizon.
  time.sleep(1000);
  const r2 = clean(r1.segments, time.milliseconds(), {
    abortedTransactions: r1.segments[0].abortedTransactions,
  });
  const markers = decodeRecordBatches(r2.segments[0].records).filter((b) => b.header.isControl);
  assert.equal(markers.length, 2);
  for (const m of markers) {
    assert.equal(m.header.hasDeleteHorizonMs, true);
    assert.equal(m.header.baseTimestamp, BigInt(t0 + 1000 + DELETE_RETENTION_MS));
    assert.equal(m.header.producerId === 7n || m.header.producerId === 8n, true);
    assert.equal(m.header.isTransactional, true);
  }
  assert.deepEqual(
    markers.map((m) => readControlRecordKey(m.records[0].key).type),
    [ControlRecordType.Abort, ControlRecordType.Commit],
  );
  assert.deepEqual(r2.segments[0].abortedTransactions, []);

  // Third pass, after the horizon: the markers are removed.
  time.sleep(DELETE_RETENTION_MS);
  const r3 = clean(r2.segments, time.milliseconds());
  assert.deepEqual(contents(r3.segments[0].records), ["3:k3=plain"]);
  assert.equal(r3.stats.markersRemoved, 2);
});

test("an active producer's last batch is kept as an empty batch with its sequence and epoch", () => {
  const time = new MockTime();
  const segs = [
    segment(
      0,
      batch(
        0,
        [
          ["k1", "a"],
          ["k2", "b"],
          ["k3", "c"],
        ],
        { producerId: 9n, producerEpoch: 4, baseSequence: 10 },
      ),
      batch(3, [
        ["k1", "z"],
        ["k2", "z"],
        ["k3", "z"],
      ]),
    ),
    segment(6, batch(6, [["k4", "active"]])),
  ];
  const producers = new Map<bigint, LastRecordOfProducer>([[9n, { lastDataOffset: 2n, producerEpoch: 4 }]]);
  const r = clean(segs, time.milliseconds(), { activeProducers: producers });
  const batches = decodeRecordBatches(r.segments[0].records);
  assert.equal(batches.length, 2);
  const empty = batches[0].header;
  assert.equal(batches[0].records.length, 0);
  assert.equal(empty.baseOffset, 0n);
  assert.equal(empty.lastOffsetDelta, 2);
  assert.equal(empty.producerId, 9n);
  assert.equal(empty.producerEpoch, 4);
  assert.equal(empty.baseSequence, 10);
  assert.equal(empty.partitionLeaderEpoch, 3);
  assert.equal(empty.maxTimestamp, 1_002n);
  assert.equal(empty.recordsCount, 0);
  assert.equal(r.stats.emptyBatchesRetained, 1);

  // Without the producer being active, the emptied batch goes.
  const r2 = clean(segs, time.milliseconds());
  assert.equal(decodeRecordBatches(r2.segments[0].records).length, 1);

  // A partially kept idempotent batch keeps its base sequence and original last offset delta.
  const segs3 = [
    segment(
      0,
      batch(
        0,
        [
          ["k1", "a"],
          ["k2", "b"],
          ["k3", "c"],
        ],
        { producerId: 9n, producerEpoch: 4, baseSequence: 10 },
      ),
      batch(3, [["k3", "z"]]),
    ),
    segment(4, batch(4, [["k4", "active"]])),
  ];
  const r3 = clean(segs3, time.milliseconds());
  const [partial] = decodeRecordBatches(r3.segments[0].records);
  assert.deepEqual(contents(r3.segments[0].records), ["0:k1=a", "1:k2=b", "3:k3=z"]);
  assert.equal(partial.header.lastOffsetDelta, 2);
  assert.equal(partial.header.baseSequence, 10);
  assert.equal(partial.header.producerEpoch, 4);
  assert.equal(partial.records.length, 2);
});

test("records with a null key are dropped from the cleaned range, kept beyond it", () => {
  const time = new MockTime();
  const segs = [
    segment(
      0,
      batch(0, [
        [null, "n1"],
        ["k1", "a"],
      ]),
    ),
    segment(2, batch(2, [[null, "n2"]])),
  ];
  const r = clean(segs, time.milliseconds());
  assert.deepEqual(contents(r.segments[0].records), ["1:k1=a"]);
  assert.deepEqual(contents(r.segments[1].records), ["2:∅=n2"]);
  assert.equal(r.stats.invalidMessages, 1);
});

for (const codec of [
  CompressionType.Gzip,
  CompressionType.Zstd,
  CompressionType.Snappy,
  CompressionType.Lz4,
]) {
  test(`compressed batches (codec ${codec}) are cleaned and re-compressed with the same codec`, () => {
    const time = new MockTime();
    const segs = [
      segment(
        0,
        batch(
          0,
          [
            ["a", "1"],
            ["b", "2"],
            ["c", "3"],
            ["a", "4"],
          ],
          { compression: codec },
        ),
      ),
      segment(4, batch(4, [["b", "5"]], { compression: codec })),
      segment(5, batch(5, [["z", "active"]])),
    ];
    const r = clean(segs, time.milliseconds());
    assert.deepEqual(contents(r.segments[0].records), ["2:c=3", "3:a=4"]);
    const [b] = decodeRecordBatches(r.segments[0].records);
    assert.equal(b.header.compression, codec);
    assert.equal(b.header.lastOffsetDelta, 3);
    assert.deepEqual(r.segments[1].records, segs[1].records);
  });
}

test("LogAppendTime batches keep their type and max timestamp when rebuilt", () => {
  const time = new MockTime();
  const segs = [
    segment(
      0,
      batch(
        0,
        [
          ["a", "1"],
          ["b", "2"],
        ],
        { timestampType: TimestampType.LogAppendTime, timestamp: 7_777n },
      ),
    ),
    segment(2, batch(2, [["a", "3"]])),
    segment(3, batch(3, [["z", "active"]])),
  ];
  const r = clean(segs, time.milliseconds());
  const [b] = decodeRecordBatches(r.segments[0].records);
  assert.equal(b.header.timestampType, TimestampType.LogAppendTime);
  assert.equal(b.header.maxTimestamp, 7_777n);
  assert.deepEqual(contents(r.segments[0].records), ["1:b=2"]);
  assert.equal(b.records[0].timestamp, 7_777n);
});

test("cleanBatches consumes whole batches of a chunk and leaves a partial tail", () => {
  const time = new MockTime();
  const b0 = batch(0, [["a", "1"]]);
  const b1 = batch(1, [["a", "2"]]);
  const map = newMap();
  buildOffsetMap(map, [{ records: Buffer.concat([b0, b1]), nextSegmentBaseOffset: 2n }], { startOffset: 0n });
  const input = Buffer.concat([b0, b1]);
  const ctx = {
    map,
    nowMs: time.milliseconds(),
    deleteRetentionMs: DELETE_RETENTION_MS,
    transactions: new CleanedTransactionState(),
  };
  const first = cleanBatches(input.subarray(0, b0.length + 10), ctx);
  assert.equal(first.bytesRead, b0.length);
  assert.equal(first.output.length, 0);
  const second = cleanBatches(input.subarray(first.bytesRead), ctx);
  assert.equal(second.bytesRead, b1.length);
  assert.deepEqual(second.output, b1);
  assert.equal(second.maxOffset, 1n);
  assert.equal(second.maxTimestamp, 1_000n);
  assert.equal(second.shallowOffsetOfMaxTimestamp, 1n);
});

test("a full offset map limits the round; later records are kept and the checkpoint stops there", () => {
  const time = new MockTime();
  const segs = [
    segment(
      0,
      batch(0, [
        ["a", "1"],
        ["b", "1"],
      ]),
      batch(2, [
        ["c", "1"],
        ["d", "1"],
      ]),
    ),
    segment(
      4,
      batch(4, [
        ["a", "2"],
        ["e", "1"],
      ]),
      batch(6, [
        ["f", "1"],
        ["g", "1"],
      ]),
    ),
    segment(8, batch(8, [["z", "active"]])),
  ];
  // 11 slots at load factor 0.5: 5 entries. a b c d, then a again and e fill it; f does not fit.
  const map = new SkimpyOffsetMap(24 * 11);
  assert.equal(map.slots, 11);
  const r = cleanLog(segs, {
    map,
    firstDirtyOffset: 0n,
    firstUncleanableOffset: 8n,
    nowMs: time.milliseconds(),
    deleteRetentionMs: DELETE_RETENTION_MS,
    loadFactor: 0.5,
  });
  assert.equal(r.mapFull, true);
  assert.equal(r.endOffset, 6n);
  assert.deepEqual(
    r.segments.map((s) => contents(s.records)),
    [["1:b=1", "2:c=1", "3:d=1"], ["4:a=2", "5:e=1", "6:f=1", "7:g=1"], ["8:z=active"]],
  );
});

test("cleanable ratio, max.compaction.lag.ms and the filthiest log", () => {
  const now = new MockTime().milliseconds();
  const seg = (base: number, next: number, size: number, firstBatchTimestamp?: number) => ({
    baseOffset: BigInt(base),
    nextOffset: BigInt(next),
    sizeInBytes: size,
    largestTimestamp: BigInt(now - 100_000),
    lastModifiedMs: now,
    firstBatchTimestamp: firstBatchTimestamp === undefined ? undefined : BigInt(firstBatchTimestamp),
  });
  const base: CleanableLog = {
    segments: [seg(0, 100, 1000), seg(100, 200, 1000), seg(200, 300, 1000), seg(300, 310, 100)],
    logStartOffset: 0n,
    lastStableOffset: 310n,
    checkpointOffset: 100n,
    compact: true,
    delete: false,
    minCleanableDirtyRatio: 0.5,
    minCompactionLagMs: 0,
    maxCompactionLagMs: Number.MAX_SAFE_INTEGER,
  };
  const ltc = logToClean("a", base, now);
  assert.equal(ltc.firstDirtyOffset, 100n);
  assert.equal(ltc.firstUncleanableOffset, 300n);
  assert.equal(ltc.cleanBytes, 1000);
  assert.equal(ltc.cleanableBytes, 2000);
  assert.ok(Math.abs(ltc.cleanableRatio - 2 / 3) < 1e-12);
  assert.equal(ltc.needCompactionNow, false);

  // An invalid checkpoint resets to the log start offset.
  const reset = cleanableOffsets({ ...base, checkpointOffset: 1000n }, now);
  assert.deepEqual(reset, {
    firstDirtyOffset: 0n,
    firstUncleanableDirtyOffset: 300n,
    forceUpdateCheckpoint: true,
  });
  assert.equal(
    cleanableOffsets({ ...base, checkpointOffset: undefined, logStartOffset: 100n }, now).firstDirtyOffset,
    100n,
  );

  // max.compaction.lag.ms: the earliest first-batch timestamp of the dirty non-active segments.
  const lagged = {
    ...base,
    checkpointOffset: 200n,
    maxCompactionLagMs: 60_000,
    segments: [
      seg(0, 100, 1000),
      seg(100, 200, 1000),
      seg(200, 300, 10, now - 70_000),
      seg(300, 310, 100, now - 500_000),
    ],
  };
  assert.equal(maxCompactionDelay(lagged.segments, 200n, now, 60_000), 10_000);
  assert.equal(maxCompactionDelay(lagged.segments, 300n, now, 60_000), 0); // the active segment does not count

  const choice = grabFilthiestCompactedLog(
    [
      { key: "a", log: base }, // 0.67
      { key: "lagged", log: lagged }, // tiny ratio but overdue
      { key: "deleteOnly", log: { ...base, compact: false, checkpointOffset: 0n } },
      { key: "busy", log: { ...base, checkpointOffset: 0n } }, // 1.0 but in progress
      { key: "bad", log: { ...base, checkpointOffset: 5000n } },
    ],
    { nowMs: now, isInProgress: (k) => k === "busy" },
  );
  assert.equal(choice.selected?.key, "bad"); // reset to 0: ratio 1.0
  assert.deepEqual(choice.checkpointResets, [{ key: "bad", offset: 0n }]);
  assert.equal(choice.dirtiestRatio, 1);
  assert.equal(choice.maxCompactionDelayMs, 10_000);

  const onlyLagged = grabFilthiestCompactedLog([{ key: "lagged", log: lagged }], { nowMs: now });
  assert.equal(onlyLagged.selected?.key, "lagged");
  const notDirty = grabFilthiestCompactedLog([{ key: "a", log: { ...base, minCleanableDirtyRatio: 0.9 } }], {
    nowMs: now,
  });
  assert.equal(notDirty.selected, null);
  assert.equal(
    grabFilthiestCompactedLog([{ key: "a", log: base }], { nowMs: now, isUncleanable: () => true }).selected,
    null,
  );
});

test("the batch ending at the round's upper bound is kept empty so the last offset survives", () => {
  const time = new MockTime();
  const segs = [
    segment(
      0,
      batch(0, [["k1", "a"]]),
      batch(1, [
        [null, "x"],
        [null, "y"],
      ]),
    ),
    segment(3, batch(3, [["k2", "b"]])),
  ];
  const r = clean(segs, time.milliseconds());
  const batches = decodeRecordBatches(r.segments[0].records);
  assert.equal(batches.length, 2);
  assert.equal(batches[1].records.length, 0);
  assert.equal(batches[1].header.baseOffset, 1n);
  assert.equal(batches[1].header.lastOffsetDelta, 1);
  assert.equal(r.stats.invalidMessages, 2);
});

test("an active producer whose last entry is a marker keeps that marker (same epoch) as an empty batch", () => {
  const time = new MockTime();
  const segs = [
    segment(
      0,
      batch(0, [["k1", "a"]], { producerId: 5n, producerEpoch: 0, baseSequence: 0, isTransactional: true }),
      marker(1, ControlRecordType.Commit, 5n),
      batch(2, [["k1", "b"]]),
      batch(3, [["k2", "c"]]),
    ),
    segment(4, batch(4, [["k3", "active"]])),
  ];
  const producers = new Map<bigint, LastRecordOfProducer>([[5n, { lastDataOffset: null, producerEpoch: 0 }]]);
  // Pass 1 drops k1@0 (superseded): the commit marker still saw its batch, so it stays with its record.
  const r1 = clean(segs, time.milliseconds(), { activeProducers: producers });
  assert.deepEqual(contents(r1.segments[0].records), ["1:ctl=m", "2:k1=b", "3:k2=c"]);
  // Pass 2 stamps it; pass 3, past the horizon, empties it but keeps the header for the producer.
  const r2 = clean(r1.segments, time.milliseconds(), { activeProducers: producers });
  time.sleep(DELETE_RETENTION_MS);
  const r3 = clean(r2.segments, time.milliseconds(), { activeProducers: producers });
  const [m] = decodeRecordBatches(r3.segments[0].records);
  assert.equal(m.header.isControl, true);
  assert.equal(m.header.producerId, 5n);
  assert.equal(m.records.length, 0);
  assert.deepEqual(contents(r3.segments[0].records), ["2:k1=b", "3:k2=c"]);
  // Without the producer, the marker goes.
  const r4 = clean(r2.segments, time.milliseconds());
  assert.deepEqual(
    decodeRecordBatches(r4.segments[0].records).map((b) => b.header.isControl),
    [false, false],
  );
});

test("groupSegmentsBySize: log bytes, index bytes and the int32 offset range bound a group", () => {
  const s = (base: bigint, size: number, idx = 0) => ({
    baseOffset: base,
    sizeInBytes: size,
    offsetIndexSizeInBytes: idx,
    timeIndexSizeInBytes: idx,
  });
  const groups = (segs: ReturnType<typeof s>[], maxSize: number, maxIndex: number, uncleanable: bigint) =>
    groupSegmentsBySize(segs, maxSize, maxIndex, uncleanable).map((g) => g.map((x) => Number(x.baseOffset)));
  const segs = [s(0n, 400), s(10n, 400), s(20n, 300), s(30n, 500), s(40n, 100)];
  assert.deepEqual(groups(segs, 1000, 1000, 50n), [
    [0, 10],
    [20, 30, 40],
  ]);
  assert.deepEqual(groups(segs, 1100, 1000, 50n), [
    [0, 10, 20],
    [30, 40],
  ]);
  assert.deepEqual(groups([s(0n, 1, 600), s(10n, 1, 600)], 1000, 1000, 20n), [[0], [10]]);
  // Offsets beyond int32 of the group's base start a new group (unless the segment is empty).
  const far = [s(0n, 1), s(1n, 1), s(0x80000001n, 1)];
  // Segment 1 may hold offsets up to 0x80000000: too far from 0, so it starts a new group; the last one
  // may hold offsets up to firstUncleanableOffset - 1, too far from 1.
  assert.deepEqual(groups(far, 1000, 1000, 0x80000010n), [[0], [1], [0x80000001]]);
  assert.deepEqual(groups(far, 1000, 1000, 0x80000001n), [[0], [1, 0x80000001]]);
  assert.deepEqual(groups([s(0n, 1), s(1n, 0), s(0x80000001n, 1)], 1000, 1000, 0x80000010n), [
    [0, 1],
    [0x80000001],
  ]);
});

test("legacy magic 0/1 entries are indexed into the map and copied through unchanged", () => {
  const time = new MockTime();
  const legacy = buildLegacyMessageSet(
    [
      { key: Buffer.from("k2"), value: Buffer.from("legacy"), timestamp: 1_000n },
      { key: Buffer.from("k1"), value: Buffer.from("legacy"), timestamp: 1_000n },
    ],
    { magic: 1, baseOffset: 1n },
  );
  const segs = [
    segment(0, batch(0, [["k2", "v2"]]), legacy, batch(3, [["k1", "v2"]])),
    segment(4, batch(4, [["k9", "x"]])),
  ];
  const r = clean(segs, time.milliseconds());
  // k2@0 is superseded by the legacy k2@1; the legacy k1@2 is kept as is although k1@3 supersedes it.
  assert.deepEqual(contents(r.segments[0].records), ["1:k2=legacy", "2:k1=legacy", "3:k1=v2"]);
  assert.ok(r.segments[0].records.includes(legacy));
});

// ---- Property test: compaction equals a naive model ----

interface GenRecord {
  key: string | null;
  value: string | null;
}

const genRecord = fc.record({
  key: fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom("a", "b", "c", "d", "e", "f") },
    { weight: 1, arbitrary: fc.constant(null) },
  ),
  value: fc.oneof(
    { weight: 4, arbitrary: fc.string({ maxLength: 4 }) },
    { weight: 1, arbitrary: fc.constant(null) },
  ),
});
const genBatch = fc.record({
  records: fc.array(genRecord, { minLength: 1, maxLength: 5 }),
  codec: fc.constantFrom(
    CompressionType.None,
    CompressionType.Gzip,
    CompressionType.Zstd,
    CompressionType.Lz4,
  ),
});
// The second pass runs before, exactly at, or after the tombstones' delete horizon.
const genDelay = fc.oneof(
  fc.constantFrom(0, DELETE_RETENTION_MS - 1, DELETE_RETENTION_MS, DELETE_RETENTION_MS + 1),
  fc.integer({ min: 0, max: 2 * DELETE_RETENTION_MS }),
);
const genLog = fc.array(fc.array(genBatch, { minLength: 1, maxLength: 3 }), { minLength: 2, maxLength: 5 });

interface ModelRecord {
  offset: number;
  key: string | null;
  value: string | null;
  segment: number;
}

/** Kafka's compaction, record by record, over the whole log (dirty from 0 to the active segment). */
function modelClean(
  records: ModelRecord[],
  activeBase: number,
  stamped: Set<number>,
  expired: boolean,
): ModelRecord[] {
  const last = new Map<string, number>();
  for (const r of records) if (r.offset < activeBase && r.key !== null) last.set(r.key, r.offset);
  const out: ModelRecord[] = [];
  for (const r of records) {
    if (r.offset >= activeBase) {
      out.push(r);
      continue;
    }
    if (r.key === null || r.offset < (last.get(r.key) ?? -1)) continue;
    if (r.value === null) {
      if (stamped.has(r.offset) && expired) continue;
      stamped.add(r.offset);
    }
    out.push(r);
  }
  return out;
}

const fmt = (r: ModelRecord): string => `${r.offset}:${r.key ?? "∅"}=${r.value ?? "†"}`;

test("property: compaction output equals the naive model (last value per key, tombstones per horizon)", () => {
  fc.assert(
    fc.property(genLog, genDelay, (segmentsGen, secondDelay) => {
      const time = new MockTime();
      let offset = 0;
      const segs: InMemorySegment[] = [];
      const model: ModelRecord[] = [];
      segmentsGen.forEach((batches, si) => {
        const base = offset;
        const bufs: Buffer[] = [];
        for (const b of batches) {
          bufs.push(
            batch(
              offset,
              b.records.map((r: GenRecord) => [r.key, r.value] as Rec),
              { compression: b.codec },
            ),
          );
          for (const r of b.records)
            model.push({ offset: offset++, key: r.key, value: r.value, segment: si });
        }
        segs.push(segment(base, ...bufs));
      });
      const activeBase = Number(segs[segs.length - 1].baseOffset);
      const stamped = new Set<number>();

      const r1 = clean(segs, time.milliseconds());
      const m1 = modelClean(model, activeBase, stamped, false);
      const out1 = r1.segments.flatMap((s) => contents(s.records));
      assert.deepEqual(out1, m1.map(fmt));
      assert.equal(r1.endOffset, BigInt(activeBase));

      time.sleep(secondDelay);
      const r2 = clean(r1.segments, time.milliseconds());
      const m2 = modelClean(m1, activeBase, stamped, secondDelay >= DELETE_RETENTION_MS);
      assert.deepEqual(
        r2.segments.flatMap((s) => contents(s.records)),
        m2.map(fmt),
      );

      // Structure: base offsets come from the input batches, offsets increase, codecs are kept.
      const inputBatches = new Map<bigint, DecodedRecordBatch>();
      for (const s of segs)
        for (const b of decodeRecordBatches(s.records)) inputBatches.set(b.header.baseOffset, b);
      let prev = -1n;
      for (const s of r2.segments) {
        for (const b of decodeRecordBatches(s.records)) {
          const orig = inputBatches.get(b.header.baseOffset);
          assert.ok(orig, `batch at ${b.header.baseOffset} comes from the input`);
          assert.equal(
            b.header.compression,
            b.records.length > 0 ? orig.header.compression : CompressionType.None,
          );
          assert.equal(b.header.lastOffsetDelta, orig.header.lastOffsetDelta);
          for (const r of b.records) {
            assert.ok(r.offset > prev);
            prev = r.offset;
          }
        }
      }
    }),
    { numRuns: 150 },
  );
});

test("property: feeding the map builder and the cleaner in chunks gives the same result as whole segments", () => {
  fc.assert(
    fc.property(
      genLog,
      fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 8 }),
      (segmentsGen, sizes) => {
        const time = new MockTime();
        let offset = 0;
        const segs: InMemorySegment[] = [];
        for (const batches of segmentsGen) {
          const base = offset;
          const bufs = batches.map((b) => {
            const buf = batch(
              offset,
              b.records.map((r: GenRecord) => [r.key, r.value] as Rec),
              { compression: b.codec },
            );
            offset += b.records.length;
            return buf;
          });
          segs.push(segment(base, ...bufs));
        }
        const activeBase = segs[segs.length - 1].baseOffset;
        const whole = clean(segs, time.milliseconds());

        // Chunked: the reader grows its chunk when no whole batch fits, as a cleaner thread would.
        const map = newMap();
        const builder = new OffsetMapBuilder(map, { startOffset: 0n });
        let k = 0;
        const chunked = <T>(buf: Buffer, step: (chunk: Buffer) => { bytesRead: number; value: T }): T[] => {
          const values: T[] = [];
          let pos = 0;
          let size = sizes[k++ % sizes.length];
          while (pos < buf.length) {
            const r = step(buf.subarray(pos, Math.min(buf.length, pos + size)));
            if (r.bytesRead === 0) size *= 2;
            else values.push(r.value);
            pos += r.bytesRead;
          }
          return values;
        };
        for (let i = 0; i < segs.length - 1; i++) {
          chunked(segs[i].records, (c) => ({ bytesRead: builder.addBatches(c), value: null }));
          builder.endSegment(segs[i + 1].baseOffset);
        }
        assert.equal(builder.endOffset, whole.endOffset);
        const state = new CleanedTransactionState();
        for (let i = 0; i < segs.length - 1; i++) {
          const outputs = chunked(segs[i].records, (c) => {
            const r = cleanBatches(c, {
              map,
              nowMs: time.milliseconds(),
              deleteRetentionMs: DELETE_RETENTION_MS,
              transactions: state,
              upperBoundOffsetOfCleaningRound: activeBase,
            });
            return { bytesRead: r.bytesRead, value: r.output };
          });
          assert.deepEqual(Buffer.concat(outputs), whole.segments[i].records);
        }
      },
    ),
    { numRuns: 60 },
  );
});
