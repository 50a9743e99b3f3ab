// Producer state (idempotence) in the storage layer: Kafka's epoch/sequence rules on appendAsLeader,
// duplicates answered with their original offsets, the `.snapshot` file format (checked byte by byte
// against Kafka's layout), snapshots at roll and close and deleted with their segments, a corrupt
// snapshot rebuilt from the log, recovery after a crash, truncation, expiry with MockTime, and
// `tributary dump-log` reading the files the broker writes.

import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { crc32c } from "@node-rs/crc32";
import { MockScheduler } from "../../src/common/scheduler.js";
import { MockTime } from "../../src/common/time.js";
import { KafkaError } from "../../src/protocol/errors.js";
import {
  buildEndTxnMarkerBatch,
  buildRecordBatch,
  ControlRecordType,
} from "../../src/protocol/records/index.js";
import type { LogConfig } from "../../src/storage/log-config.js";
import { INT32_MAX, incrementSequence } from "../../src/storage/producer-state/batch-metadata.js";
import {
  decodeProducerSnapshot,
  encodeProducerSnapshot,
} from "../../src/storage/producer-state/producer-snapshot-file.js";
import { ProducerStateEntry } from "../../src/storage/producer-state/producer-state-entry.js";
import { runTributarySync } from "../support/tributary-cli.js";
import { config, type LogFixture, openLogFixture } from "./storage-test-utils.js";

const T0 = 1_700_000_000_000n;

function pbatch(
  pid: bigint,
  epoch: number,
  seq: number,
  count = 2,
  opts: { timestamp?: bigint; transactional?: boolean } = {},
): Buffer {
  return buildRecordBatch({
    records: Array.from({ length: count }, (_, i) => ({
      key: Buffer.from(`k${seq}-${i}`),
      value: Buffer.from("v"),
    })),
    timestamp: opts.timestamp ?? T0,
    producerId: pid,
    producerEpoch: epoch,
    baseSequence: seq,
    isTransactional: opts.transactional ?? false,
  });
}

function plain(count = 2): Buffer {
  return buildRecordBatch({
    records: Array.from({ length: count }, () => ({ key: null, value: Buffer.from("x") })),
    timestamp: T0,
  });
}

function openLog(
  overrides: Partial<LogConfig> = {},
  opts: { time?: MockTime; scheduler?: MockScheduler; expirationMs?: number } = {},
): LogFixture {
  return openLogFixture(
    "producer-state",
    config({ indexIntervalBytes: 256, segmentIndexBytes: 4096, ...overrides }),
    {
      time: opts.time ?? new MockTime(Number(T0)),
      scheduler: opts.scheduler,
      producerIdExpirationMs: opts.expirationMs,
      producerIdExpirationCheckIntervalMs: 600_000,
    },
  );
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

test("sequence rules: in order, gaps, old epochs, new epochs, unknown producers, wrap-around", () => {
  const fx = openLog();
  try {
    const log = fx.log;
    assert.equal(log.appendAsLeader(pbatch(1n, 0, 0), 0).firstOffset, 0n);
    assert.equal(log.appendAsLeader(pbatch(1n, 0, 2), 0).firstOffset, 2n);
    // A gap (4 expected).
    assert.equal(
      errorName(() => log.appendAsLeader(pbatch(1n, 0, 5), 0)),
      "OUT_OF_ORDER_SEQUENCE_NUMBER",
    );
    // A new epoch must start at sequence 0.
    assert.equal(
      errorName(() => log.appendAsLeader(pbatch(1n, 1, 4), 0)),
      "OUT_OF_ORDER_SEQUENCE_NUMBER",
    );
    assert.equal(log.appendAsLeader(pbatch(1n, 1, 0), 0).firstOffset, 4n);
    // The old epoch is fenced now.
    assert.equal(
      errorName(() => log.appendAsLeader(pbatch(1n, 0, 4), 0)),
      "INVALID_PRODUCER_EPOCH",
    );
    // Nothing failed was written.
    assert.equal(log.logEndOffset, 6n);
    // A producer the partition does not know may start anywhere (Kafka 2.5+: no UNKNOWN_PRODUCER_ID).
    assert.equal(log.appendAsLeader(pbatch(2n, 3, 42), 0).firstOffset, 6n);
    assert.equal(
      errorName(() => log.appendAsLeader(pbatch(2n, 3, 42 + 3), 0)),
      "OUT_OF_ORDER_SEQUENCE_NUMBER",
    );
    assert.equal(log.appendAsLeader(pbatch(2n, 3, 44), 0).firstOffset, 8n);
    // Sequences wrap at Int32.MAX_VALUE.
    assert.equal(incrementSequence(INT32_MAX - 1, 3), 1);
    log.appendAsLeader(pbatch(3n, 0, INT32_MAX - 1, 2), 0);
    assert.equal(log.producerStateManager.lastEntry(3n)?.lastSeq(), INT32_MAX);
    assert.equal(log.appendAsLeader(pbatch(3n, 0, 0, 1), 0).firstOffset, 12n);
    // Batches without a producer id are not tracked.
    log.appendAsLeader(plain(), 0);
    assert.equal(log.producerStateManager.producerCount, 3);
    assert.deepEqual(log.producerStateManager.lastRecordsOfActiveProducers().get(1n), {
      lastDataOffset: 5n,
      producerEpoch: 1,
    });
    assert.equal(log.producerStateManager.mapEndOffset, log.logEndOffset);
  } finally {
    fx.cleanup();
  }
});

test("a retry of any of the last 5 batches is answered with its original offsets and not written", () => {
  const fx = openLog();
  try {
    const log = fx.log;
    const sent: Buffer[] = [];
    for (let i = 0; i < 7; i++) {
      const b = pbatch(9n, 2, i * 2);
      sent.push(Buffer.from(b));
      log.appendAsLeader(b, 0);
      log.appendAsLeader(plain(1), 0); // other writers interleave
    }
    const end = log.logEndOffset;
    // Batches 2..6 are cached (5 of them); batch i was written at offset 3 * i.
    for (let i = 2; i < 7; i++) {
      const info = log.appendAsLeader(Buffer.from(sent[i]), 0);
      assert.equal(info.firstOffset, BigInt(3 * i));
      assert.equal(info.lastOffset, BigInt(3 * i + 1));
      assert.equal(log.logEndOffset, end);
    }
    // An older one is out of the cache: it is out of order, as in Kafka.
    assert.equal(
      errorName(() => log.appendAsLeader(Buffer.from(sent[1]), 0)),
      "OUT_OF_ORDER_SEQUENCE_NUMBER",
    );
    // Same sequence range but another epoch is no duplicate (and is fenced here).
    assert.equal(
      errorName(() => log.appendAsLeader(pbatch(9n, 1, 12), 0)),
      "INVALID_PRODUCER_EPOCH",
    );
    assert.equal(log.logEndOffset, end);
  } finally {
    fx.cleanup();
  }
});

test("follower appends track producers without checking sequences; an older epoch only warns", () => {
  const leader = openLog();
  const follower = openLog();
  try {
    leader.log.appendAsLeader(pbatch(4n, 1, 0), 0);
    leader.log.appendAsLeader(pbatch(4n, 1, 2), 0);
    const { records } = leader.log.read(0n, 1 << 20, "log-end", true);
    follower.log.appendAsFollower(records);
    const e = follower.log.producerStateManager.lastEntry(4n);
    assert.equal(e?.producerEpoch, 1);
    assert.equal(e?.lastSeq(), 3);
    assert.equal(e?.lastDataOffset(), 3n);
    const old = pbatch(4n, 0, 9);
    old.writeBigInt64BE(4n, 0);
    follower.log.appendAsFollower(Buffer.from(old));
    assert.equal(follower.log.logEndOffset, 6n);
  } finally {
    leader.cleanup();
    follower.cleanup();
  }
});

test("transactions: a transactional batch opens a transaction (LSO), a marker closes it", () => {
  const fx = openLog();
  try {
    const log = fx.log;
    log.appendAsLeader(plain(1), 0);
    log.appendAsLeader(pbatch(5n, 0, 0, 2, { transactional: true }), 0);
    log.updateHighWatermark(log.logEndOffset);
    assert.equal(log.producerStateManager.lastEntry(5n)?.currentTxnFirstOffset, 1n);
    assert.equal(log.lastStableOffset, 1n);
    assert.equal(
      errorName(() => log.appendAsLeader(pbatch(5n, 0, 2, 1), 0)),
      "INVALID_TXN_STATE",
    );
    const marker = buildEndTxnMarkerBatch({
      type: ControlRecordType.Commit,
      producerId: 5n,
      producerEpoch: 0,
      coordinatorEpoch: 3,
      timestamp: T0,
      baseOffset: 3n,
    });
    log.appendAsFollower(marker);
    log.updateHighWatermark(log.logEndOffset);
    const e = log.producerStateManager.lastEntry(5n);
    assert.equal(e?.currentTxnFirstOffset, -1n);
    assert.equal(e?.coordinatorEpoch, 3);
    assert.equal(log.lastStableOffset, log.logEndOffset);
  } finally {
    fx.cleanup();
  }
});

/** Kafka's snapshot layout, written here field by field (independent of the generated codec). */
function kafkaSnapshot(
  entries: Array<[bigint, number, number, bigint, number, bigint, number, bigint]>,
): Buffer {
  const body = Buffer.alloc(4 + entries.length * 46);
  body.writeInt32BE(entries.length, 0);
  let p = 4;
  for (const [pid, epoch, lastSeq, lastOffset, delta, ts, coordEpoch, txnFirst] of entries) {
    body.writeBigInt64BE(pid, p);
    body.writeInt16BE(epoch, p + 8);
    body.writeInt32BE(lastSeq, p + 10);
    body.writeBigInt64BE(lastOffset, p + 14);
    body.writeInt32BE(delta, p + 22);
    body.writeBigInt64BE(ts, p + 26);
    body.writeInt32BE(coordEpoch, p + 34);
    body.writeBigInt64BE(txnFirst, p + 38);
    p += 46;
  }
  const head = Buffer.alloc(6);
  head.writeInt16BE(1, 0);
  head.writeUInt32BE(crc32c(body) >>> 0, 2);
  return Buffer.concat([head, body]);
}

test("snapshot encoding is Kafka's byte layout and round-trips", () => {
  const a = new ProducerStateEntry(7n, 2, 4, T0);
  a.addBatch(2, 0, 10n, 1, T0);
  a.addBatch(2, 5, 20n, 3, T0 + 5n);
  const b = new ProducerStateEntry(8n, 0, -1, T0 + 9n, 30n);
  const bytes = encodeProducerSnapshot([a, b]);
  assert.deepEqual(
    bytes,
    kafkaSnapshot([
      [7n, 2, 5, 20n, 3, T0 + 5n, 4, -1n],
      [8n, 0, -1, -1n, 0, T0 + 9n, -1, 30n],
    ]),
  );
  const [ra, rb] = decodeProducerSnapshot(bytes);
  assert.equal(ra.producerId, 7n);
  assert.equal(ra.firstSeq(), 2);
  assert.equal(ra.lastSeq(), 5);
  assert.equal(ra.firstDataOffset(), 17n);
  assert.equal(ra.coordinatorEpoch, 4);
  assert.equal(rb.isEmpty(), true);
  assert.equal(rb.currentTxnFirstOffset, 30n);
  const bad = Buffer.from(bytes);
  bad[bad.length - 1] ^= 1;
  assert.throws(() => decodeProducerSnapshot(bad), /Snapshot is corrupt \(CRC is no longer valid\)/);
  const v2 = Buffer.from(bytes);
  v2.writeInt16BE(2, 0);
  assert.throws(() => decodeProducerSnapshot(v2), /unknown file version 2/);
});

function snapshotsIn(dir: string): string[] {
  return readdirSync(dir)
    .filter((n) => n.endsWith(".snapshot"))
    .sort();
}

test("snapshots are written at roll and close, read at load, deleted with their segments; dump-log reads them", () => {
  const fx = openLog({ segmentBytes: 200 });
  try {
    for (let i = 0; i < 6; i++) fx.log.appendAsLeader(pbatch(11n, 0, i * 2), 0);
    assert.ok(fx.log.numberOfSegments > 2);
    const rolled = fx.log
      .segments()
      .slice(1)
      .map((s) => `${s.baseOffset.toString().padStart(20, "0")}.snapshot`);
    assert.deepEqual(snapshotsIn(fx.dir), rolled);
    fx.reopen();
    const end = fx.log.logEndOffset;
    assert.ok(snapshotsIn(fx.dir).includes(`${end.toString().padStart(20, "0")}.snapshot`));
    // The snapshot at the log end is Kafka's format, with the producer's last batch.
    const last = readFileSync(join(fx.dir, `${end.toString().padStart(20, "0")}.snapshot`));
    assert.deepEqual(last, kafkaSnapshot([[11n, 0, 11, end - 1n, 1, T0, -1, -1n]]));
    // Loaded from the snapshot: the last batch is still a duplicate.
    const info = fx.log.appendAsLeader(pbatch(11n, 0, 10), 0);
    assert.equal(info.firstOffset, end - 2n);
    assert.equal(fx.log.logEndOffset, end);
    // dump-log prints it as Kafka's DumpLogSegments does.
    const r = runTributarySync([
      "dump-log",
      "--files",
      join(fx.dir, `${end.toString().padStart(20, "0")}.snapshot`),
    ]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stdout,
      new RegExp(
        `producerId: 11 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong.empty lastTimestamp: ${T0} firstSequence: 10 lastSequence: 11 lastOffset: ${end - 1n} offsetDelta: 1 timestamp: ${T0}`,
      ),
    );
    // Deleting the first segments deletes the snapshots named after them.
    fx.log.updateHighWatermark(fx.log.logEndOffset);
    const segs = fx.log.segments();
    fx.log.deleteSegments(segs.slice(0, 2), "test retention");
    assert.ok(!existsSync(join(fx.dir, `${segs[1].baseOffset.toString().padStart(20, "0")}.snapshot`)));
    assert.ok(existsSync(join(fx.dir, `${segs[2].baseOffset.toString().padStart(20, "0")}.snapshot`)));
  } finally {
    fx.cleanup();
  }
});

test("a corrupt snapshot is deleted and the state rebuilt from the log", () => {
  const fx = openLog();
  try {
    for (let i = 0; i < 3; i++) fx.log.appendAsLeader(pbatch(12n, 1, i * 2), 0);
    fx.log.close();
    const name = snapshotsIn(fx.dir).at(-1)!;
    const path = join(fx.dir, name);
    const bytes = readFileSync(path);
    bytes[bytes.length - 3] ^= 0xff;
    writeFileSync(path, bytes);
    fx.reopen();
    // Rebuilt from offset 0: the retry is a duplicate, and a new snapshot replaced the corrupt one.
    assert.equal(fx.log.appendAsLeader(pbatch(12n, 1, 4), 0).firstOffset, 4n);
    assert.equal(fx.log.logEndOffset, 6n);
    assert.deepEqual(readFileSync(path), kafkaSnapshot([[12n, 1, 5, 5n, 1, T0, -1, -1n]]));
    // Garbage in place of a snapshot is not trusted either.
    fx.log.appendAsLeader(pbatch(12n, 1, 6), 0);
    fx.log.close();
    const newest = join(fx.dir, snapshotsIn(fx.dir).at(-1)!);
    writeFileSync(newest, Buffer.from("not a snapshot"));
    fx.reopen();
    assert.equal(fx.log.appendAsLeader(pbatch(12n, 1, 6), 0).firstOffset, 6n);
    assert.equal(
      errorName(() => fx.log.appendAsLeader(pbatch(12n, 1, 10), 0)),
      "OUT_OF_ORDER_SEQUENCE_NUMBER",
    );
  } finally {
    fx.cleanup();
  }
});

test("after a crash (no shutdown snapshot) recovery rebuilds the state: a retried batch is still a duplicate", () => {
  const fx = openLog({ segmentBytes: 500 });
  try {
    for (let i = 0; i < 8; i++) {
      fx.log.appendAsLeader(pbatch(13n, 0, i * 2), 0);
      fx.log.appendAsLeader(plain(1), 0);
    }
    const end = fx.log.logEndOffset;
    fx.log.flush();
    const log = fx.crash();
    assert.equal(log.logEndOffset, end);
    const info = log.appendAsLeader(pbatch(13n, 0, 14), 0);
    assert.equal(info.firstOffset, end - 3n);
    assert.equal(log.logEndOffset, end);
    assert.equal(log.appendAsLeader(pbatch(13n, 0, 16), 0).firstOffset, end);
  } finally {
    fx.cleanup();
  }
});

test("truncation rebuilds the state to the new end; truncating fully forgets every producer", () => {
  const fx = openLog({ segmentBytes: 200 });
  try {
    for (let i = 0; i < 6; i++) fx.log.appendAsLeader(pbatch(14n, 0, i * 2), 0);
    const snaps = snapshotsIn(fx.dir).length;
    assert.ok(snaps > 0);
    fx.log.truncateTo(6n);
    // Batches 0..2 remain: the next sequence is 6 again, and snapshots past offset 6 are gone.
    assert.equal(fx.log.producerStateManager.lastEntry(14n)?.lastSeq(), 5);
    for (const n of snapshotsIn(fx.dir)) assert.ok(BigInt(n.slice(0, 20)) <= 6n, n);
    assert.equal(fx.log.appendAsLeader(pbatch(14n, 0, 6), 0).firstOffset, 6n);
    fx.log.truncateFullyAndStartAt(100n);
    assert.equal(fx.log.producerStateManager.producerCount, 0);
    assert.deepEqual(snapshotsIn(fx.dir), []);
  } finally {
    fx.cleanup();
  }
});

test("producers idle for producer.id.expiration.ms are removed by the periodic check", async () => {
  const time = new MockTime(Number(T0));
  const scheduler = new MockScheduler(time);
  const fx = openLog({}, { time, scheduler, expirationMs: 3_600_000 });
  try {
    fx.log.appendAsLeader(pbatch(15n, 0, 0), 0);
    await scheduler.tick(600_000);
    fx.log.appendAsLeader(pbatch(16n, 0, 0, 1, { timestamp: T0 + 600_000n }), 0);
    await scheduler.tick(3_000_000);
    assert.equal(fx.log.producerStateManager.lastEntry(15n), undefined);
    assert.ok(fx.log.producerStateManager.lastEntry(16n));
    // An expired producer is unknown: its next batch is accepted at any sequence.
    assert.equal(
      fx.log.appendAsLeader(pbatch(15n, 0, 7, 1, { timestamp: T0 + 3_600_000n }), 0).firstOffset,
      3n,
    );
    await scheduler.tick(600_000);
    assert.equal(fx.log.producerStateManager.lastEntry(16n), undefined);
    // The shutdown snapshot holds the live producers only.
    fx.reopen();
    assert.ok(fx.log.producerStateManager.lastEntry(15n));
    assert.equal(fx.log.producerStateManager.lastEntry(16n), undefined);
  } finally {
    fx.cleanup();
  }
});
