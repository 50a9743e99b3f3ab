// Transactions on the log side (storage layer): transactional batches open a transaction that holds the
// last stable offset, COMMIT/ABORT markers (origin "coordinator" only) end it, an ABORT is recorded in the
// segment's .txnindex (checked byte by byte against Kafka's 34-byte AbortedTxn layout), a read_committed
// read stops at the LSO and collects the aborted transactions across segments, and recovery after a crash
// (or a damaged .txnindex) rebuilds the index and the LSO from the control batches in the log.

import assert from "node:assert/strict";
import { appendFileSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { MockTime } from "../../src/common/time.js";
import { KafkaError } from "../../src/protocol/errors.js";
import {
  buildEndTxnMarkerBatch,
  buildRecordBatch,
  ControlRecordType,
  decodeRecordBatches,
} from "../../src/protocol/records/index.js";
import type { UnifiedLog } from "../../src/storage/unified-log.js";
import { runTributarySync } from "../support/tributary-cli.js";
import { config, type LogFixture, openLogFixture } from "./storage-test-utils.js";

const T0 = 1_700_000_000_000n;

interface Txn {
  producerId: bigint;
  firstOffset: bigint;
  lastOffset: bigint;
  lastStableOffset: bigint;
}

/** Kafka's .txnindex layout, read independently: version int16, pid, first, last, LSO (int64 BE each). */
function parseTxnIndexFile(path: string): Txn[] {
  const b = readFileSync(path);
  assert.equal(b.length % 34, 0, `${path} length ${b.length}`);
  const out: Txn[] = [];
  for (let p = 0; p < b.length; p += 34) {
    assert.equal(b.readInt16BE(p), 0);
    out.push({
      producerId: b.readBigInt64BE(p + 2),
      firstOffset: b.readBigInt64BE(p + 10),
      lastOffset: b.readBigInt64BE(p + 18),
      lastStableOffset: b.readBigInt64BE(p + 26),
    });
  }
  return out;
}

function txnIndexFiles(dir: string): Map<string, Txn[]> {
  const out = new Map<string, Txn[]>();
  for (const n of readdirSync(dir).sort())
    if (n.endsWith(".txnindex")) out.set(n, parseTxnIndexFile(join(dir, n)));
  return out;
}

function openLog(): LogFixture {
  return openLogFixture("txn-log", config({ indexIntervalBytes: 256, segmentIndexBytes: 4096 }), {
    time: new MockTime(Number(T0)),
  });
}

/** Sequences per producer, so each transactional batch continues its producer's sequence. */
const seqs = new Map<bigint, number>();

function txnBatch(pid: bigint, values: string[], epoch = 0): Buffer {
  const seq = seqs.get(pid) ?? 0;
  seqs.set(pid, seq + values.length);
  return buildRecordBatch({
    records: values.map((v) => ({ key: null, value: Buffer.from(v) })),
    timestamp: T0,
    producerId: pid,
    producerEpoch: epoch,
    baseSequence: seq,
    isTransactional: true,
  });
}

function plain(value: string): Buffer {
  return buildRecordBatch({ records: [{ key: null, value: Buffer.from(value) }], timestamp: T0 });
}

function marker(
  pid: bigint,
  commit: boolean,
  opts: { epoch?: number; coordinatorEpoch?: number } = {},
): Buffer {
  return buildEndTxnMarkerBatch({
    type: commit ? ControlRecordType.Commit : ControlRecordType.Abort,
    producerId: pid,
    producerEpoch: opts.epoch ?? 0,
    coordinatorEpoch: opts.coordinatorEpoch ?? 0,
    timestamp: T0,
  });
}

/** Appends as the leader and moves the HW to the log end (a single-replica partition). */
function append(log: UnifiedLog, records: Buffer, origin: "client" | "coordinator" = "client"): bigint {
  const info = log.appendAsLeader(records, 0, origin);
  log.updateHighWatermark(log.logEndOffset);
  return info.firstOffset;
}

function errorName(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof KafkaError) return e.errorName;
    throw e;
  }
  return "NONE";
}

/** Data values (control batches skipped) of a read. */
function values(records: Buffer): string[] {
  return decodeRecordBatches(records)
    .filter((b) => !b.header.isControl)
    .flatMap((b) => b.records.map((r) => r.value?.toString() ?? "null"));
}

test("markers end transactions: the LSO follows the oldest open transaction, aborts go to the .txnindex", () => {
  const fx = openLog();
  try {
    const { log } = fx;
    append(log, plain("p0"));
    const a = append(log, txnBatch(10n, ["a1", "a2"]));
    assert.equal(log.lastStableOffset, a, "an open transaction holds the LSO at its first offset");
    assert.equal(log.highWatermark, log.logEndOffset);
    const b = append(log, txnBatch(11n, ["b1"]));
    append(log, txnBatch(10n, ["a3"]));
    append(log, plain("p1"));
    assert.equal(log.lastStableOffset, a);
    // read_committed stops at the LSO; read_uncommitted sees everything.
    assert.deepEqual(values(log.read(0n, 1 << 20, "committed", true).records), ["p0"]);
    assert.deepEqual(values(log.read(0n, 1 << 20, "high-watermark", true).records), [
      "p0",
      "a1",
      "a2",
      "b1",
      "a3",
      "p1",
    ]);
    // A client may not write a marker.
    assert.equal(
      errorName(() => append(log, marker(10n, false))),
      "INVALID_RECORD",
    );
    assert.equal(log.lastStableOffset, a);
    // ABORT 10: recorded with the LSO of that moment (11's transaction still open).
    const abortAt = append(log, marker(10n, false, { coordinatorEpoch: 3 }), "coordinator");
    const abortedA = { producerId: 10n, firstOffset: a, lastOffset: abortAt, lastStableOffset: b };
    assert.deepEqual(log.activeSegment.txnIndex.allAbortedTxns(), [abortedA]);
    assert.deepEqual([...txnIndexFiles(fx.dir).values()], [[abortedA]]);
    assert.equal(log.lastStableOffset, b);
    // COMMIT 11: nothing in the index, the LSO reaches the HW.
    append(log, marker(11n, true, { coordinatorEpoch: 3 }), "coordinator");
    assert.equal(log.activeSegment.txnIndex.size, 1);
    assert.equal(log.lastStableOffset, log.highWatermark);
    const all = log.read(0n, 1 << 20, "committed", true);
    assert.deepEqual(all.abortedTransactions, [abortedA]);
    assert.equal(all.lastStableOffset, log.logEndOffset);
    // Markers: an older producer epoch, then an older coordinator epoch.
    append(log, txnBatch(12n, ["c1"], 2));
    assert.equal(
      errorName(() => append(log, marker(12n, true, { epoch: 1, coordinatorEpoch: 3 }), "coordinator")),
      "INVALID_PRODUCER_EPOCH",
    );
    append(log, marker(12n, true, { epoch: 2, coordinatorEpoch: 5 }), "coordinator");
    append(log, txnBatch(12n, ["c2"], 2));
    assert.equal(
      errorName(() => append(log, marker(12n, false, { epoch: 2, coordinatorEpoch: 4 }), "coordinator")),
      "TRANSACTION_COORDINATOR_FENCED",
    );
    const c2 = log.logEndOffset - 1n;
    assert.equal(log.lastStableOffset, c2, "a refused marker leaves the transaction open");
    const abortC = append(log, marker(12n, false, { epoch: 2, coordinatorEpoch: 5 }), "coordinator");
    assert.deepEqual(log.activeSegment.txnIndex.allAbortedTxns(), [
      abortedA,
      { producerId: 12n, firstOffset: c2, lastOffset: abortC, lastStableOffset: abortC + 1n },
    ]);
    // The producer state remembers the marker's coordinator epoch and that no transaction is open.
    const entry = log.producerStateManager.lastEntry(12n);
    assert.equal(entry?.coordinatorEpoch, 5);
    assert.equal(entry?.currentTxnFirstOffset, -1n);
    // A clean restart keeps the index and the LSO.
    const before = txnIndexFiles(fx.dir);
    const reopened = fx.reopen();
    reopened.updateHighWatermark(reopened.logEndOffset);
    assert.deepEqual(txnIndexFiles(fx.dir), before);
    assert.equal(reopened.lastStableOffset, reopened.logEndOffset);
  } finally {
    fx.cleanup();
  }
});

test("aborted transactions are collected across segments for the range a read_committed read returns", () => {
  const fx = openLog();
  try {
    const { log } = fx;
    const a = append(log, txnBatch(20n, ["a1"]));
    log.roll();
    append(log, plain("x1"));
    const b = append(log, txnBatch(21n, ["b1"]));
    log.roll();
    append(log, txnBatch(20n, ["a2"]));
    const abortA = append(log, marker(20n, false), "coordinator");
    log.roll();
    append(log, plain("x2"));
    const abortB = append(log, marker(21n, false), "coordinator");
    const tail = append(log, plain("x3"));
    assert.equal(log.numberOfSegments, 4);
    const txnA = { producerId: 20n, firstOffset: a, lastOffset: abortA, lastStableOffset: b };
    const txnB = { producerId: 21n, firstOffset: b, lastOffset: abortB, lastStableOffset: abortB + 1n };
    // Each abort sits in the .txnindex of the segment holding its marker (the file is created lazily).
    assert.deepEqual(
      log.segments().map((s) => s.txnIndex.allAbortedTxns()),
      [[], [], [txnA], [txnB]],
    );
    assert.deepEqual([...txnIndexFiles(fx.dir).values()], [[txnA], [txnB]]);
    // A read starting in the first segment (one batch) overlaps A only: its marker is two segments later.
    const first = log.read(a, 1, "committed", true);
    assert.deepEqual(values(first.records), ["a1"]);
    assert.deepEqual(first.abortedTransactions, [txnA]);
    // From the second segment: the batches x1, b1 overlap A (still open there) and B.
    const second = log.read(a + 1n, 1 << 20, "committed", true);
    assert.deepEqual(values(second.records), ["x1", "b1"]);
    assert.deepEqual(second.abortedTransactions, [txnA, txnB]);
    // After A's marker only B overlaps; after B's marker nothing.
    assert.deepEqual(log.read(abortA + 1n, 1 << 20, "committed", true).abortedTransactions, [txnB]);
    assert.deepEqual(log.read(tail, 1 << 20, "committed", true).abortedTransactions, []);
    // read_uncommitted reports none.
    assert.equal(log.read(a, 1 << 20, "high-watermark", true).abortedTransactions, undefined);
    assert.deepEqual(log.collectAbortedTransactions(0n, log.logEndOffset), [txnA, txnB]);
  } finally {
    fx.cleanup();
  }
});

test("a crash rebuilds every recovered segment's .txnindex and the LSO from the control batches", () => {
  const fx = openLog();
  try {
    let log = fx.log;
    const a = append(log, txnBatch(30n, ["a1"]));
    const b = append(log, txnBatch(31n, ["b1"]));
    log.roll();
    append(log, txnBatch(30n, ["a2"]));
    append(log, marker(30n, false), "coordinator");
    log.roll();
    append(log, marker(31n, false, { coordinatorEpoch: 1 }), "coordinator");
    const open = append(log, txnBatch(32n, ["c1"]));
    append(log, plain("after"));
    const expected = txnIndexFiles(fx.dir);
    // One file per segment holding an abort marker (created lazily): the second and the third.
    assert.deepEqual(
      log.segments().map((s) => s.txnIndex.size),
      [0, 1, 1],
    );
    assert.deepEqual(
      [...expected.values()].map((l) => [l.length, l[0].firstOffset]),
      [
        [1, a],
        [1, b],
      ],
    );
    const lso = log.lastStableOffset;
    assert.equal(lso, open);

    // Whole-log recovery (recovery point 0): every segment is re-read, each .txnindex rebuilt.
    log = fx.crash();
    assert.ok(log.loadReport.segmentsRecovered >= 3);
    assert.deepEqual(txnIndexFiles(fx.dir), expected);
    log.updateHighWatermark(log.logEndOffset);
    assert.equal(log.lastStableOffset, open, "the open transaction holds the LSO after the crash");
    assert.deepEqual(log.collectAbortedTransactions(0n, log.logEndOffset).length, 2);

    // Recovery from the last segment only: the transaction of 31 opened in the first segment (not
    // recovered), its abort is rebuilt from the producer state loaded up to the recovered segment.
    const lastBase = log.activeSegment.baseOffset;
    log = fx.crash(lastBase);
    assert.deepEqual(txnIndexFiles(fx.dir), expected);
    log.updateHighWatermark(log.logEndOffset);
    assert.equal(log.lastStableOffset, open);

    // A torn .txnindex (a partial entry) fails the sanity check at load and is rebuilt from the log.
    log.close();
    const name = [...expected.keys()][1];
    appendFileSync(join(fx.dir, name), Buffer.alloc(17, 7));
    log = fx.load();
    assert.ok(log.loadReport.indexesRebuilt.includes(lastBase));
    assert.deepEqual(txnIndexFiles(fx.dir), expected);
    log.updateHighWatermark(log.logEndOffset);
    assert.equal(log.lastStableOffset, open);

    // `tributary dump-log` prints the rebuilt index as Kafka's DumpLogSegments does.
    const dumped = runTributarySync(["dump-log", "--files", join(fx.dir, name)]);
    assert.equal(dumped.status, 0, dumped.stderr);
    const t = expected.get(name)?.[0];
    assert.ok(t);
    assert.match(
      dumped.stdout,
      new RegExp(
        `^version: 0 producerId: 31 firstOffset: ${b} lastOffset: ${t.lastOffset} lastStableOffset: ${t.lastStableOffset}$`,
        "m",
      ),
    );

    // The marker closes the open transaction after all that; the LSO reaches the HW.
    append(log, marker(32n, true), "coordinator");
    assert.equal(log.lastStableOffset, log.logEndOffset);
    fx.log = log;
  } finally {
    fx.cleanup();
  }
});
