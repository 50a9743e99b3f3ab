// `tributary dump-log` end to end: segment files are built by hand in a temp dir (record batches from
// buildRecordBatch, index and time index bytes written field by field), the real CLI is run
// (`node bin/tributary.js dump-log …`, needs `npm run build`), and its output is compared line for line with
// what Kafka's DumpLogSegments prints for the same files. Corrupt files must give Kafka's message or one
// clear line, never a stack trace.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { crc32c } from "@node-rs/crc32";
import { writeGroupMetadataKey } from "../../src/protocol/generated/coordinator-records/GroupMetadataKey.js";
import {
  defaultGroupMetadataValue,
  writeGroupMetadataValue,
} from "../../src/protocol/generated/coordinator-records/GroupMetadataValue.js";
import { writeOffsetCommitKey } from "../../src/protocol/generated/coordinator-records/OffsetCommitKey.js";
import {
  defaultOffsetCommitValue,
  writeOffsetCommitValue,
} from "../../src/protocol/generated/coordinator-records/OffsetCommitValue.js";
import { writeTransactionLogKey } from "../../src/protocol/generated/coordinator-records/TransactionLogKey.js";
import {
  defaultTransactionLogValue,
  writeTransactionLogValue,
} from "../../src/protocol/generated/coordinator-records/TransactionLogValue.js";
import { writeConsumerProtocolAssignment } from "../../src/protocol/generated/messages/ConsumerProtocolAssignment.js";
import { Writer } from "../../src/protocol/primitives/writer.js";
import {
  buildEndTxnMarkerBatch,
  buildRecordBatch,
  CompressionType,
  ControlRecordType,
  TimestampType,
} from "../../src/protocol/records/index.js";

const BIN = fileURLToPath(new URL("../../../bin/tributary.js", import.meta.url));
const root = mkdtempSync(join(tmpdir(), "tributary-dumplog-"));
after(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;

function partitionDir(): string {
  const d = join(root, `topic-${dirs++}`);
  mkdirSync(d);
  return d;
}

interface Run {
  status: number | null;
  stdout: string[];
  stderr: string[];
}

function dumpLog(...args: string[]): Run {
  const r = spawnSync(process.execPath, [BIN, "dump-log", ...args], { encoding: "utf8", timeout: 20_000 });
  const lines = (s: string): string[] => (s === "" ? [] : s.replace(/\n$/, "").split("\n"));
  const run = { status: r.status, stdout: lines(r.stdout), stderr: lines(r.stderr) };
  assert.ok(!/\n\s+at /.test(r.stderr), `no stack trace expected:\n${r.stderr}`);
  return run;
}

const crcOf = (batch: Buffer): number => crc32c(batch.subarray(21)) >>> 0;
const SEG = "00000000000000000000";
const T0 = 1_700_000_000_000n;

/** A segment of three batches: plain, gzip with a producer, and a transaction COMMIT marker. */
function segment(): { dir: string; log: string; batches: Buffer[] } {
  const dir = partitionDir();
  const b0 = buildRecordBatch({
    baseOffset: 0n,
    partitionLeaderEpoch: 0,
    timestamp: T0,
    records: [
      { key: Buffer.from("k0"), value: Buffer.from("v0") },
      {
        key: Buffer.from("k1"),
        value: Buffer.from("v1"),
        headers: [
          { key: "h1", value: null },
          { key: "h2", value: Buffer.from("x") },
        ],
      },
      { key: null, value: Buffer.from("v2"), timestamp: T0 + 5n },
    ],
  });
  const b1 = buildRecordBatch({
    baseOffset: 3n,
    partitionLeaderEpoch: 1,
    timestamp: T0 + 100n,
    compression: CompressionType.Gzip,
    producerId: 7n,
    producerEpoch: 2,
    baseSequence: 5,
    isTransactional: true,
    records: [{ value: Buffer.from("hello") }, { key: Buffer.from("x"), value: null }],
  });
  const b2 = buildEndTxnMarkerBatch({
    type: ControlRecordType.Commit,
    producerId: 7n,
    producerEpoch: 2,
    coordinatorEpoch: 4,
    timestamp: T0 + 200n,
    baseOffset: 5n,
    partitionLeaderEpoch: 1,
  });
  const log = join(dir, `${SEG}.log`);
  writeFileSync(log, Buffer.concat([b0, b1, b2]));
  return { dir, log, batches: [b0, b1, b2] };
}

function indexBytes(entries: Array<[number, number]>, preallocatedEntries = 0): Buffer {
  const b = Buffer.alloc((entries.length + preallocatedEntries) * 8);
  entries.forEach(([rel, pos], i) => {
    b.writeInt32BE(rel, i * 8);
    b.writeInt32BE(pos, i * 8 + 4);
  });
  return b;
}

function timeIndexBytes(entries: Array<[bigint, number]>, preallocatedEntries = 0): Buffer {
  const b = Buffer.alloc((entries.length + preallocatedEntries) * 12);
  entries.forEach(([ts, rel], i) => {
    b.writeBigInt64BE(ts, i * 12);
    b.writeInt32BE(rel, i * 12 + 8);
  });
  return b;
}

describe("dump-log .log", () => {
  test("batch lines are Kafka's, field for field", () => {
    const { log, batches } = segment();
    const [b0, b1, b2] = batches;
    const r = dumpLog("--files", log);
    assert.equal(r.status, 0, r.stderr.join("\n"));
    assert.deepEqual(r.stdout, [
      `Dumping ${log}`,
      "Log starting offset: 0",
      `baseOffset: 0 lastOffset: 2 count: 3 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: ${T0 + 5n} size: ${b0.length} magic: 2 compresscodec: none crc: ${crcOf(b0)} isvalid: true`,
      `baseOffset: 3 lastOffset: 4 count: 2 baseSequence: 5 lastSequence: 6 producerId: 7 producerEpoch: 2 partitionLeaderEpoch: 1 isTransactional: true isControl: false deleteHorizonMs: OptionalLong.empty position: ${b0.length} CreateTime: ${T0 + 100n} size: ${b1.length} magic: 2 compresscodec: gzip crc: ${crcOf(b1)} isvalid: true`,
      `baseOffset: 5 lastOffset: 5 count: 1 baseSequence: -1 lastSequence: -1 producerId: 7 producerEpoch: 2 partitionLeaderEpoch: 1 isTransactional: true isControl: true deleteHorizonMs: OptionalLong.empty position: ${b0.length + b1.length} CreateTime: ${T0 + 200n} size: ${b2.length} magic: 2 compresscodec: none crc: ${crcOf(b2)} isvalid: true`,
    ]);
    assert.deepEqual(r.stderr, []);
  });

  test("--print-data-log adds Kafka's record lines; control records show the marker", () => {
    const { log } = segment();
    const r = dumpLog("--files", log, "--print-data-log");
    assert.equal(r.status, 0);
    const records = r.stdout.filter((l) => l.startsWith("|"));
    assert.deepEqual(records, [
      `| offset: 0 CreateTime: ${T0} keySize: 2 valueSize: 2 sequence: -1 headerKeys: [] key: k0 payload: v0`,
      `| offset: 1 CreateTime: ${T0} keySize: 2 valueSize: 2 sequence: -1 headerKeys: [h1,h2] key: k1 payload: v1`,
      `| offset: 2 CreateTime: ${T0 + 5n} keySize: -1 valueSize: 2 sequence: -1 headerKeys: [] payload: v2`,
      `| offset: 3 CreateTime: ${T0 + 100n} keySize: -1 valueSize: 5 sequence: 5 headerKeys: [] payload: hello`,
      `| offset: 4 CreateTime: ${T0 + 100n} keySize: 1 valueSize: -1 sequence: 6 headerKeys: [] key: x`,
      `| offset: 5 CreateTime: ${T0 + 200n} keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: COMMIT coordinatorEpoch: 4`,
    ]);
    // Records follow their batch line.
    assert.ok(r.stdout[3].startsWith("| offset: 0 "));
  });

  test("--deep-iteration without data; --skip-record-metadata with data", () => {
    const { log } = segment();
    const deep = dumpLog("--files", log, "--deep-iteration");
    assert.equal(
      deep.stdout.find((l) => l.startsWith("| offset: 0 ")),
      `| offset: 0 CreateTime: ${T0} keySize: 2 valueSize: 2 sequence: -1 headerKeys: []`,
    );
    const skip = dumpLog("--files", log, "--print-data-log", "--skip-record-metadata");
    assert.deepEqual(
      skip.stdout.filter(
        (l) => !l.startsWith("baseOffset") && !l.startsWith("Dumping") && !l.startsWith("Log "),
      ),
      ["| key: k0 payload: v0", "| key: k1 payload: v1", " payload: v2", " payload: hello", "| key: x", ""],
    );
  });

  test("LogAppendTime, delete horizon and LogAppendTime record timestamps", () => {
    const dir = partitionDir();
    const b = buildRecordBatch({
      baseOffset: 10n,
      timestampType: TimestampType.LogAppendTime,
      timestamp: T0 + 7n,
      deleteHorizonMs: T0 + 86_400_000n,
      records: [{ value: Buffer.from("a") }],
    });
    const log = join(dir, "00000000000000000010.log");
    writeFileSync(log, b);
    const r = dumpLog("--files", log, "--deep-iteration");
    assert.equal(r.stdout[1], "Log starting offset: 10");
    assert.match(
      r.stdout[2],
      new RegExp(
        `deleteHorizonMs: OptionalLong\\[${T0 + 86_400_000n}\\] position: 0 LogAppendTime: ${T0 + 7n} `,
      ),
    );
    assert.equal(
      r.stdout[3],
      `| offset: 10 LogAppendTime: ${T0 + 7n} keySize: -1 valueSize: 1 sequence: -1 headerKeys: []`,
    );
  });

  test("non-consecutive offsets are reported on stderr as Kafka does", () => {
    const dir = partitionDir();
    const log = join(dir, `${SEG}.log`);
    writeFileSync(
      log,
      Buffer.concat([
        buildRecordBatch({ baseOffset: 0n, records: [{ value: Buffer.from("a") }] }),
        buildRecordBatch({ baseOffset: 5n, records: [{ value: Buffer.from("b") }] }),
        buildRecordBatch({ baseOffset: 9n, records: [{ value: Buffer.from("c") }] }),
      ]),
    );
    const r = dumpLog("--files", log, "--deep-iteration");
    assert.equal(r.status, 0);
    assert.deepEqual(r.stderr, [
      `Non-consecutive offsets in ${resolve(log)}`,
      "  5 is followed by 9",
      "  0 is followed by 5",
    ]);
  });

  test("a partial batch at the end: Found N invalid bytes; --max-bytes stops quietly", () => {
    const { log, batches } = segment();
    const whole = Buffer.concat(batches);
    writeFileSync(log, whole.subarray(0, whole.length - 10));
    const r = dumpLog("--files", log);
    assert.equal(r.status, 0);
    assert.equal(r.stdout.length, 5);
    assert.equal(r.stdout[4], `Found ${batches[2].length - 10} invalid bytes at the end of ${SEG}.log`);
    const limited = dumpLog("--files", log, "--max-bytes", String(batches[0].length + 5));
    assert.equal(limited.stdout.length, 3);
  });

  test("a corrupted byte gives isvalid: false", () => {
    const { log, batches } = segment();
    const whole = Buffer.concat(batches);
    whole[batches[0].length - 1] ^= 0xff;
    writeFileSync(log, whole);
    const r = dumpLog("--files", log);
    assert.match(r.stdout[2], /crc: \d+ isvalid: false$/);
    assert.match(r.stdout[3], /isvalid: true$/);
  });

  test("a zeroed size field: Kafka's CorruptRecordException message, exit 1, no stack trace", () => {
    const { log, batches } = segment();
    const whole = Buffer.concat(batches);
    whole.fill(0, batches[0].length, batches[0].length + 12);
    writeFileSync(log, whole);
    const r = dumpLog("--files", log);
    assert.equal(r.status, 1);
    assert.equal(r.stdout.length, 3);
    assert.deepEqual(r.stderr, [
      `Found record size 0 smaller than minimum record overhead (14) in file ${log}.`,
    ]);
  });

  test("garbage records with a valid frame: one line, the dump goes on", () => {
    const dir = partitionDir();
    const b = buildRecordBatch({ baseOffset: 0n, records: [{ value: Buffer.from("abc") }] });
    b.writeInt32BE(1000, 57); // record count far beyond the bytes
    const log = join(dir, `${SEG}.log`);
    writeFileSync(
      log,
      Buffer.concat([b, buildRecordBatch({ baseOffset: 1n, records: [{ value: Buffer.from("d") }] })]),
    );
    const r = dumpLog("--files", log, "--print-data-log");
    assert.equal(r.status, 1);
    assert.equal(r.stderr.length, 1);
    assert.match(r.stderr[0], /^Error reading the records of the batch at position 0 of .*: /);
    assert.ok(
      r.stdout.includes(
        `| offset: 1 CreateTime: 0 keySize: -1 valueSize: 1 sequence: -1 headerKeys: [] payload: d`,
      ),
    );
  });
});

describe("dump-log .index and .timeindex", () => {
  function indexed(): { dir: string; index: string; timeindex: string; sizes: number[] } {
    const { dir, batches } = segment();
    const sizes = batches.map((b) => b.length);
    const index = join(dir, `${SEG}.index`);
    const timeindex = join(dir, `${SEG}.timeindex`);
    writeFileSync(
      index,
      indexBytes(
        [
          [2, 0],
          [4, sizes[0]],
        ],
        4,
      ),
    );
    writeFileSync(
      timeindex,
      timeIndexBytes(
        [
          [T0 + 5n, 2],
          [T0 + 100n, 4],
        ],
        3,
      ),
    );
    return { dir, index, timeindex, sizes };
  }

  test("offset index entries, stopping at the preallocated zero tail", () => {
    const { index, sizes } = indexed();
    const r = dumpLog("--files", index);
    assert.equal(r.status, 0, r.stderr.join("\n"));
    assert.deepEqual(r.stdout, [
      `Dumping ${index}`,
      "offset: 2 position: 0",
      `offset: 4 position: ${sizes[0]}`,
    ]);
    assert.deepEqual(r.stderr, []);
  });

  test("an active index with no entry yet (all preallocated zeros) is empty, not a mismatch", () => {
    const { index } = indexed();
    writeFileSync(index, indexBytes([], 1024));
    const r = dumpLog("--files", index);
    assert.equal(r.status, 0, r.stderr.join("\n"));
    assert.deepEqual(r.stdout, [`Dumping ${index}`]);
    assert.deepEqual(r.stderr, []);
  });

  test("time index entries", () => {
    const { timeindex } = indexed();
    const r = dumpLog("--files", timeindex);
    assert.equal(r.status, 0, r.stderr.join("\n"));
    assert.deepEqual(r.stdout, [
      `Dumping ${timeindex}`,
      `timestamp: ${T0 + 5n} offset: 2`,
      `timestamp: ${T0 + 100n} offset: 4`,
    ]);
    assert.deepEqual(r.stderr, []);
  });

  test("index entries that disagree with the log: Kafka's mismatch report; --verify-index-only prints only that", () => {
    const { index, sizes } = indexed();
    writeFileSync(
      index,
      indexBytes([
        [1, 0],
        [4, sizes[0]],
        [6, sizes[0] + sizes[1]],
      ]),
    );
    const r = dumpLog("--files", index, "--verify-index-only");
    assert.deepEqual(r.stdout, [`Dumping ${index}`]);
    assert.deepEqual(r.stderr, [
      `Mismatches in :${resolve(index)}`,
      "  Index offset: 6, log offset: 5",
      "  Index offset: 1, log offset: 2",
    ]);
  });

  test("time index entries that disagree with the log", () => {
    const { timeindex } = indexed();
    writeFileSync(
      timeindex,
      timeIndexBytes([
        [T0 + 1n, 2],
        [T0, 4],
        [T0 + 300n, 3],
      ]),
    );
    const r = dumpLog("--files", timeindex);
    assert.deepEqual(r.stdout.slice(1), [
      `timestamp: ${T0 + 1n} offset: 2`,
      `timestamp: ${T0} offset: 4`,
      `timestamp: ${T0 + 300n} offset: 3`,
    ]);
    const abs = resolve(timeindex);
    assert.deepEqual(r.stderr, [
      `Found timestamp mismatch in :${abs}`,
      `  Index timestamp: ${T0 + 1n}, log timestamp: ${T0 + 5n}`,
      `  Index timestamp: ${T0}, log timestamp: ${T0 + 100n}`,
      `Found out of order timestamp in :${abs}`,
      `  Index timestamp: ${T0}, Previously indexed timestamp: ${T0 + 1n}`,
      "The following indexed offsets are not found in the log.",
      "Indexed offset: 3, found log offset: 4",
    ]);
  });

  test("--index-sanity-check passes, or prints Kafka's CorruptIndexException message", () => {
    const { index, timeindex } = indexed();
    // Like Kafka's, the check reads the whole file: a time index still preallocated (zero tail) fails it.
    writeFileSync(
      timeindex,
      timeIndexBytes([
        [T0 + 5n, 2],
        [T0 + 100n, 4],
      ]),
    );
    assert.deepEqual(dumpLog("--files", `${index},${timeindex}`, "--index-sanity-check").stdout, [
      `Dumping ${index}`,
      `${index} passed sanity check.`,
      `Dumping ${timeindex}`,
      `${timeindex} passed sanity check.`,
    ]);
    writeFileSync(index, Buffer.concat([indexBytes([[2, 0]]), Buffer.alloc(3)]));
    const bad = dumpLog("--files", index, "--index-sanity-check");
    assert.equal(bad.status, 1);
    assert.deepEqual(bad.stderr, [
      `Index file ${resolve(index)} is corrupt, found 11 bytes which is neither positive nor a multiple of 8`,
    ]);
    writeFileSync(
      timeindex,
      timeIndexBytes([
        [T0 + 100n, 2],
        [T0, 4],
      ]),
    );
    const badTime = dumpLog("--files", timeindex, "--index-sanity-check");
    assert.deepEqual(badTime.stderr, [
      `Corrupt time index found, time index file (${resolve(timeindex)}) has non-zero size but the last timestamp is ${T0} which is less than the first timestamp ${T0 + 100n}`,
    ]);
  });

  test("an empty index", () => {
    const { index } = indexed();
    writeFileSync(index, Buffer.alloc(0));
    assert.deepEqual(dumpLog("--files", index).stdout, [`Dumping ${index}`, `${index} is empty.`]);
  });

  test("random garbage in an index or a time index never crashes", () => {
    const { index, timeindex } = indexed();
    for (let seed = 1; seed <= 3; seed++) {
      const g = Buffer.alloc(8 * 7 + seed);
      for (let i = 0; i < g.length; i++) g[i] = (i * 131 + seed * 17) & 0xff;
      writeFileSync(index, g);
      writeFileSync(timeindex, g);
      const r = dumpLog("--files", `${index},${timeindex}`);
      assert.ok(r.status === 0 || r.status === 1);
      assert.equal(r.stdout[0], `Dumping ${index}`);
    }
  });
});

describe("dump-log .snapshot, .txnindex, leader-epoch-checkpoint", () => {
  function snapshotBytes(
    entries: Array<[bigint, number, number, bigint, number, bigint, number, bigint]>,
  ): Buffer {
    const b = Buffer.alloc(10 + entries.length * 46);
    b.writeInt16BE(1, 0);
    b.writeInt32BE(entries.length, 6);
    entries.forEach((e, i) => {
      const p = 10 + i * 46;
      b.writeBigInt64BE(e[0], p);
      b.writeInt16BE(e[1], p + 8);
      b.writeInt32BE(e[2], p + 10);
      b.writeBigInt64BE(e[3], p + 14);
      b.writeInt32BE(e[4], p + 22);
      b.writeBigInt64BE(e[5], p + 26);
      b.writeInt32BE(e[6], p + 34);
      b.writeBigInt64BE(e[7], p + 38);
    });
    b.writeUInt32BE(crc32c(b.subarray(6)) >>> 0, 2);
    return b;
  }

  test("producer snapshot entries as Kafka prints them", () => {
    const dir = partitionDir();
    const path = join(dir, "00000000000000000006.snapshot");
    writeFileSync(
      path,
      snapshotBytes([
        [7n, 2, 6, 4n, 1, T0 + 100n, 4, -1n],
        [9n, 0, -1, -1n, 0, T0, -1, 12n],
      ]),
    );
    const r = dumpLog("--files", path);
    assert.equal(r.status, 0, r.stderr.join("\n"));
    assert.deepEqual(r.stdout, [
      `Dumping ${path}`,
      `producerId: 7 producerEpoch: 2 coordinatorEpoch: 4 currentTxnFirstOffset: OptionalLong.empty lastTimestamp: ${T0 + 100n} firstSequence: 5 lastSequence: 6 lastOffset: 4 offsetDelta: 1 timestamp: ${T0 + 100n}`,
      `producerId: 9 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong[12] lastTimestamp: ${T0} `,
    ]);
  });

  test("corrupt snapshots: Kafka's CorruptSnapshotException messages", () => {
    const dir = partitionDir();
    const path = join(dir, "00000000000000000006.snapshot");
    const good = snapshotBytes([[7n, 2, 6, 4n, 1, T0, 4, -1n]]);
    const flipped = Buffer.from(good);
    flipped[20] ^= 1;
    writeFileSync(path, flipped);
    const r = dumpLog("--files", path);
    assert.equal(r.status, 1);
    assert.match(
      r.stderr[0],
      /^Snapshot is corrupt \(CRC is no longer valid\)\. Stored crc: \d+\. Computed crc: \d+$/,
    );
    writeFileSync(path, good.subarray(0, 30));
    assert.deepEqual(dumpLog("--files", path).stderr, [
      "Snapshot failed schema validation: Error reading field 'producer_entries': Error reading field 'last_offset': java.nio.BufferUnderflowException",
    ]);
    const huge = Buffer.from(good);
    huge.writeInt32BE(1000, 6);
    writeFileSync(path, huge);
    assert.deepEqual(dumpLog("--files", path).stderr, [
      "Snapshot failed schema validation: Error reading field 'producer_entries': Error reading array of size 1000, only 46 bytes available",
    ]);
    writeFileSync(path, good.subarray(0, 3));
    assert.deepEqual(dumpLog("--files", path).stderr, [
      "Snapshot failed schema validation: Error reading field 'crc': java.nio.BufferUnderflowException",
    ]);
  });

  test("transaction index entries", () => {
    const dir = partitionDir();
    const path = join(dir, `${SEG}.txnindex`);
    const b = Buffer.alloc(34);
    b.writeInt16BE(0, 0);
    b.writeBigInt64BE(7n, 2);
    b.writeBigInt64BE(3n, 10);
    b.writeBigInt64BE(5n, 18);
    b.writeBigInt64BE(3n, 26);
    writeFileSync(path, b);
    assert.deepEqual(dumpLog("--files", path).stdout, [
      `Dumping ${path}`,
      "version: 0 producerId: 7 firstOffset: 3 lastOffset: 5 lastStableOffset: 3",
    ]);
  });

  test("leader-epoch-checkpoint, and a malformed one", () => {
    const dir = partitionDir();
    const path = join(dir, "leader-epoch-checkpoint");
    writeFileSync(path, "0\n2\n0 0\n3 120\n");
    assert.deepEqual(dumpLog("--files", path).stdout, [
      `Dumping ${path}`,
      "epoch: 0 startOffset: 0",
      "epoch: 3 startOffset: 120",
    ]);
    writeFileSync(path, "0\n2\n0 0\n");
    const bad = dumpLog("--files", path);
    assert.equal(bad.status, 1);
    assert.equal(bad.stderr.length, 1);
    assert.match(bad.stderr[0], /leader-epoch-checkpoint: expected 2 entries/);
  });
});

/** A version prefix followed by a generated record body. */
function versioned(version: number, write: (w: Writer) => void): Buffer {
  const w = new Writer();
  w.int16(version);
  write(w);
  return w.toBuffer();
}

describe("dump-log --offsets-decoder and --transaction-log-decoder", () => {
  test("__consumer_offsets records print as JSON, as Kafka 4.0's DumpLogSegments prints them", () => {
    const dir = partitionDir();
    const log = join(dir, `${SEG}.log`);
    const offsetKey = (partition: number) =>
      versioned(1, (w) => writeOffsetCommitKey(w, { group: "my-group", topic: "orders", partition }, 1));
    const assignment = versioned(0, (w) =>
      writeConsumerProtocolAssignment(
        w,
        {
          assignedPartitions: [{ topic: "orders", partitions: [0, 1] }],
          userData: Buffer.from([0x00, 0x0a, 0xff]),
        },
        0,
      ),
    );
    const groupValue = versioned(3, (w) =>
      writeGroupMetadataValue(
        w,
        {
          ...defaultGroupMetadataValue(),
          protocolType: "consumer",
          generation: 4,
          protocol: "range",
          leader: "m-1",
          currentStateTimestamp: T0,
          members: [
            {
              memberId: "m-1",
              groupInstanceId: null,
              clientId: "c",
              clientHost: "/127.0.0.1",
              rebalanceTimeout: 300000,
              sessionTimeout: 45000,
              subscription: Buffer.alloc(0),
              assignment,
            },
          ],
        },
        3,
      ),
    );
    writeFileSync(
      log,
      buildRecordBatch({
        baseOffset: 0n,
        timestamp: T0,
        records: [
          {
            key: offsetKey(0),
            value: versioned(3, (w) =>
              writeOffsetCommitValue(
                w,
                { ...defaultOffsetCommitValue(), offset: 42n, commitTimestamp: T0 },
                3,
              ),
            ),
          },
          {
            key: offsetKey(1),
            value: versioned(1, (w) =>
              writeOffsetCommitValue(
                w,
                { ...defaultOffsetCommitValue(), offset: 7n, metadata: "meta", expireTimestamp: T0 },
                1,
              ),
            ),
          },
          { key: offsetKey(2), value: null },
          { key: versioned(2, (w) => writeGroupMetadataKey(w, { group: "my-group" }, 2)), value: groupValue },
          { key: versioned(3, () => {}), value: Buffer.from([0]) },
          { key: versioned(20, () => {}), value: Buffer.from([0]) },
          {
            key: offsetKey(3),
            value: versioned(9, (w) => writeOffsetCommitValue(w, defaultOffsetCommitValue(), 3)),
          },
        ],
      }),
    );
    const r = dumpLog("--files", log, "--offsets-decoder");
    assert.equal(r.status, 0, r.stderr.join("\n"));
    const payloads = r.stdout
      .filter((l) => l.startsWith("|"))
      .map((l) => l.replace(/^.*headerKeys: \[\]/, ""));
    const key = (p: number) => `{"type":"1","data":{"group":"my-group","topic":"orders","partition":${p}}}`;
    assert.deepEqual(payloads.slice(0, 4), [
      ` key: ${key(0)} payload: {"version":"3","data":{"offset":42,"leaderEpoch":-1,"metadata":"","commitTimestamp":${T0}}}`,
      ` key: ${key(1)} payload: {"version":"1","data":{"offset":7,"metadata":"meta","commitTimestamp":0,"expireTimestamp":${T0}}}`,
      ` key: ${key(2)} payload: <DELETE>`,
      // The consumer protocol's subscription (empty here, so it stays as bytes) and assignment are decoded.
      ` key: {"type":"2","data":{"group":"my-group"}} payload: {"version":"3","data":{"protocolType":"consumer","generation":4,"protocol":"range","leader":"m-1","currentStateTimestamp":${T0},"members":[{"memberId":"m-1","groupInstanceId":null,"clientId":"c","clientHost":"/127.0.0.1","rebalanceTimeout":300000,"sessionTimeout":45000,"subscription":"","assignment":{"assignedPartitions":[{"topic":"orders","partitions":[0,1]}],"userData":"AAr/"}}]}}`,
    ]);
    assert.match(
      payloads[4],
      /^ key: Error at offset 4, skipping\. Could not read record with version 3 from key's buffer due to: .+\.$/,
    );
    assert.deepEqual(payloads.slice(5), [
      " key: Unknown record type 20 at offset 5, skipping.",
      " key: Error at offset 6, skipping. Could not read record with version 9 from value's buffer due to: Can't read version 9 of OffsetCommitValue.",
    ]);
  });

  test("__transaction_state records print as Kafka 3.x's TransactionLog formats them", () => {
    const dir = partitionDir();
    const log = join(dir, `${SEG}.log`);
    const key = versioned(0, (w) => writeTransactionLogKey(w, { transactionalId: "txn-1" }, 0));
    const value = (status: number, partitions: Array<{ topic: string; partitionIds: number[] }>) =>
      versioned(0, (w) =>
        writeTransactionLogValue(
          w,
          {
            ...defaultTransactionLogValue(),
            producerId: 11n,
            producerEpoch: 2,
            transactionTimeoutMs: 60000,
            transactionStatus: status,
            transactionPartitions: partitions,
            transactionLastUpdateTimestampMs: T0 + 1n,
            transactionStartTimestampMs: T0,
          },
          0,
        ),
      );
    writeFileSync(
      log,
      buildRecordBatch({
        baseOffset: 0n,
        timestamp: T0,
        records: [
          { key, value: value(0, []) },
          { key, value: value(1, [{ topic: "out", partitionIds: [0, 3] }]) },
          { key, value: null },
        ],
      }),
    );
    const r = dumpLog("--files", log, "--transaction-log-decoder");
    assert.equal(r.status, 0, r.stderr.join("\n"));
    const payloads = r.stdout
      .filter((l) => l.startsWith("|"))
      .map((l) => l.replace(/^.*headerKeys: \[\]/, ""));
    assert.deepEqual(payloads, [
      ` key: transaction_metadata::transactionalId=txn-1 payload: producerId:11,producerEpoch:2,state=Empty,partitions=[],txnLastUpdateTimestamp=${T0 + 1n},txnTimeoutMs=60000`,
      ` key: transaction_metadata::transactionalId=txn-1 payload: producerId:11,producerEpoch:2,state=Ongoing,partitions=[out-0,out-3],txnLastUpdateTimestamp=${T0 + 1n},txnTimeoutMs=60000`,
      " key: transaction_metadata::transactionalId=txn-1 payload: <DELETE>",
    ]);
  });

  test("a record the decoder cannot read: one line on stderr, the dump goes on", () => {
    const dir = partitionDir();
    const log = join(dir, `${SEG}.log`);
    writeFileSync(
      log,
      buildRecordBatch({
        baseOffset: 0n,
        records: [
          { key: Buffer.from([0, 1, 0xff]), value: Buffer.from("x") },
          { key: null, value: Buffer.from("y") },
        ],
      }),
    );
    const r = dumpLog("--files", log, "--offsets-decoder");
    assert.equal(r.status, 1);
    // A key that does not decode is reported in place, as Kafka's parser does; a missing key is an error.
    assert.ok(
      r.stdout.some((l) =>
        / key: Error at offset 0, skipping\. Could not read record with version 1 from key's buffer due to: /.test(
          l,
        ),
      ),
      r.stdout.join("\n"),
    );
    assert.equal(r.stderr.length, 1);
    assert.match(r.stderr[0], /^Error printing the record at offset 1 of .*message had a missing key/);
  });
});

describe("dump-log on damaged files (in process)", () => {
  test("random byte changes and cuts in every kind of file: never a throw, never a stack trace", async () => {
    const { runDumpLog } = await import("../../src/cli/tools/dump-log.js");
    const { Writable } = await import("node:stream");
    const { log, dir, batches } = segment();
    const good = Buffer.concat(batches);
    const files = [".log", ".index", ".timeindex", ".snapshot", ".txnindex"].map((s) =>
      join(dir, `${SEG}${s}`),
    );
    let seed = 42;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const sink = (): { stream: NodeJS.WritableStream; text: () => string } => {
      let text = "";
      const stream = new Writable({
        write(chunk, _enc, cb) {
          text += String(chunk);
          cb();
        },
      });
      return { stream, text: () => text };
    };
    for (let i = 0; i < 300; i++) {
      const b = Buffer.from(good);
      for (let k = 0; k <= rnd(6); k++) b[rnd(b.length)] = rnd(256);
      writeFileSync(log, b.subarray(0, rnd(4) === 0 ? rnd(b.length) : b.length));
      const junk = Buffer.alloc(rnd(80));
      for (let k = 0; k < junk.length; k++) junk[k] = rnd(256);
      for (const f of files.slice(1)) writeFileSync(f, junk);
      const out = sink();
      const err = sink();
      const status = await runDumpLog(
        ["--files", files.join(","), "--print-data-log"],
        out.stream,
        err.stream,
      );
      assert.ok(status === 0 || status === 1);
      assert.ok(!/\n\s+at /.test(err.text()), err.text());
      assert.ok(out.text().startsWith(`Dumping ${log}\n`));
    }
  });
});

describe("dump-log command line", () => {
  test("--help", () => {
    const r = dumpLog("--help");
    assert.equal(r.status, 0);
    assert.match(r.stdout[0], /^This tool helps to parse a log file and dump its contents to the console/);
    assert.ok(r.stdout.some((l) => l.startsWith("--files <file1, file2, ...>")));
  });

  for (const [args, message] of [
    [["--files"], "tributary dump-log: option --files requires a value"],
    [[], "tributary dump-log: missing required option --files (see --help)"],
    [["--files", "x.log", "--bogus"], "tributary dump-log: unknown option '--bogus' (see --help)"],
    [
      ["--files", "x.log", "--max-bytes", "ten"],
      "tributary dump-log: --max-bytes expects an integer between 0 and 2147483647, got 'ten'",
    ],
    [
      ["--files", "/nonexistent/00000000000000000000.log"],
      "tributary dump-log: no such file: /nonexistent/00000000000000000000.log",
    ],
    [
      ["--files", "x.log", "--cluster-metadata-decoder"],
      "tributary dump-log: --cluster-metadata-decoder is not supported yet by tributary dump-log",
    ],
  ] as const) {
    test(`bad input ${JSON.stringify(args)} gives one line and status 1`, () => {
      const r = dumpLog(...args);
      assert.equal(r.status, 1);
      assert.deepEqual(r.stderr, [message]);
      assert.deepEqual(r.stdout, []);
    });
  }

  test("unique prefixes of options work as in joptsimple; unknown suffixes are ignored with Kafka's line", () => {
    const { log, dir } = segment();
    const r = dumpLog("--fil", log, "--print");
    assert.ok(r.stdout.some((l) => l.startsWith("| offset: 0")));
    const other = join(dir, "notes.txt");
    writeFileSync(other, "x");
    const u = dumpLog("--files", other);
    assert.deepEqual(u.stdout, [`Dumping ${other}`]);
    assert.deepEqual(u.stderr, [`Ignoring unknown file ${other}`]);
  });
});
