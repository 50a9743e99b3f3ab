// Checkpoint and metadata files of the storage layer, against the exact text Kafka writes: the generic
// CheckpointFile (version, count, entries; atomic write; typed errors naming file and line), the offset
// checkpoints, leader-epoch-checkpoint, partition.metadata, meta.properties and .kafka_cleanshutdown.

import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import {
  BrokerMetadataError,
  deleteCleanShutdownMarker,
  formatProperties,
  hasCleanShutdownMarker,
  javaDateString,
  parseBrokerMetadata,
  parseProperties,
  readBrokerMetadata,
  readCleanShutdownBrokerEpoch,
  writeBrokerMetadata,
  writeCleanShutdownMarker,
} from "../../src/storage/checkpoint/broker-metadata.js";
import { CheckpointFileError } from "../../src/storage/checkpoint/checkpoint-file.js";
import { OffsetCheckpointFile } from "../../src/storage/checkpoint/offset-checkpoint-file.js";
import {
  canonicalTopicId,
  PartitionMetadataFile,
  PartitionMetadataFileError,
} from "../../src/storage/checkpoint/partition-metadata-file.js";
import { LeaderEpochCheckpointFile } from "../../src/storage/leader-epoch/leader-epoch-checkpoint-file.js";

const root = mkdtempSync(join(tmpdir(), "tributary-ckpt-"));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const newDir = (): string => mkdtempSync(join(root, `d${n++}-`));

/** The error thrown by fn, checked to be of the given class. */
function thrown<E extends Error>(fn: () => unknown, cls: new (...a: never[]) => E): E {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof cls, `expected ${cls.name}, got ${(e as Error)?.name}: ${(e as Error)?.message}`);
    return e as E;
  }
  assert.fail(`expected ${cls.name}, nothing thrown`);
}

describe("OffsetCheckpointFile", () => {
  test("writes Kafka's exact text and reads it back keyed by topic-partition", () => {
    const path = join(newDir(), "recovery-point-offset-checkpoint");
    const f = new OffsetCheckpointFile(path);
    f.write([
      { tp: { topic: "orders", partition: 0 }, offset: 42n },
      { tp: { topic: "my-topic", partition: 12 }, offset: 9007199254740993n },
    ]);
    assert.equal(readFileSync(path, "utf8"), "0\n2\norders 0 42\nmy-topic 12 9007199254740993\n");
    const read = f.read();
    assert.deepEqual([...read.keys()], ["orders-0", "my-topic-12"]);
    assert.deepEqual(read.get("my-topic-12"), {
      tp: { topic: "my-topic", partition: 12 },
      offset: 9007199254740993n,
    });
    // A Map as returned by read() can be written back.
    f.write(read);
    assert.deepEqual(f.read(), read);
  });

  test("missing, empty and version-only files hold no entries", () => {
    const dir = newDir();
    assert.equal(new OffsetCheckpointFile(join(dir, "none")).read().size, 0);
    writeFileSync(join(dir, "empty"), "");
    assert.equal(new OffsetCheckpointFile(join(dir, "empty")).read().size, 0);
    writeFileSync(join(dir, "v"), "0\n");
    assert.equal(new OffsetCheckpointFile(join(dir, "v")).read().size, 0);
    writeFileSync(join(dir, "zero"), "0\n0\n");
    assert.equal(new OffsetCheckpointFile(join(dir, "zero")).read().size, 0);
  });

  test("reads files Kafka wrote, including CRLF line ends", () => {
    const path = join(newDir(), "replication-offset-checkpoint");
    writeFileSync(path, "0\r\n2\r\n__consumer_offsets 7 1234\r\nt 0 0\r\n");
    assert.deepEqual(
      [...new OffsetCheckpointFile(path).read().values()].map(
        (e) => `${e.tp.topic}/${e.tp.partition}=${e.offset}`,
      ),
      ["__consumer_offsets/7=1234", "t/0=0"],
    );
  });

  for (const [name, text, line, expectedPart] of [
    ["bad version", "x\n1\nt 0 1\n", 1, "version number 0"],
    ["unknown version", "1\n1\nt 0 1\n", 1, "version 0"],
    ["bad count", "0\n-1\n", 2, "number of entries"],
    ["two fields", "0\n1\nt 0\n", 3, "<topic> <partition> <offset>"],
    ["non-numeric offset", "0\n1\nt 0 x\n", 3, "<topic> <partition> <offset>"],
    ["partition overflow", "0\n1\nt 99999999999 1\n", 3, "<topic> <partition> <offset>"],
    ["offset overflow", "0\n1\nt 0 99999999999999999999\n", 3, "<topic> <partition> <offset>"],
    ["empty line", "0\n2\nt 0 1\n\n", 4, "<topic> <partition> <offset>"],
    ["fewer entries than counted", "0\n3\nt 0 1\nt 1 2\n", undefined, "3 entries"],
    ["more entries than counted", "0\n1\nt 0 1\nt 1 2\n", undefined, "1 entries"],
  ] as const) {
    test(`malformed (${name}): CheckpointFileError naming file, line and expectation`, () => {
      const path = join(newDir(), "log-start-offset-checkpoint");
      writeFileSync(path, text);
      const err = thrown(() => new OffsetCheckpointFile(path).read(), CheckpointFileError);
      assert.equal(err.file, path);
      assert.equal(err.line, line);
      assert.ok(err.expected.includes(expectedPart), err.message);
      assert.ok(err.message.includes(path));
      assert.ok(!err.message.includes("\n"), "one line");
    });
  }

  test("a file too large to be a checkpoint is refused before it is read", () => {
    const path = join(newDir(), "cleaner-offset-checkpoint");
    writeFileSync(path, Buffer.alloc(65 * 1024 * 1024, 0x41));
    const err = thrown(() => new OffsetCheckpointFile(path).read(), CheckpointFileError);
    assert.match(err.message, /at most 67108864 bytes/);
  });

  test("write is atomic: no temp file is left and the old file is replaced whole", () => {
    const dir = newDir();
    const path = join(dir, "recovery-point-offset-checkpoint");
    const f = new OffsetCheckpointFile(path);
    f.write([{ tp: { topic: "a", partition: 0 }, offset: 1n }]);
    f.write([]);
    assert.equal(readFileSync(path, "utf8"), "0\n0\n");
    assert.deepEqual(readdirSync(dir), ["recovery-point-offset-checkpoint"]);
  });

  test("topic names that cannot be written are refused", () => {
    const f = new OffsetCheckpointFile(join(newDir(), "x"));
    assert.throws(() => f.write([{ tp: { topic: "a b", partition: 0 }, offset: 1n }]), RangeError);
  });
});

describe("LeaderEpochCheckpointFile", () => {
  test("format and round trip", () => {
    const dir = newDir();
    const f = LeaderEpochCheckpointFile.forPartitionDir(dir);
    f.write([
      { epoch: 0, startOffset: 0n },
      { epoch: 3, startOffset: 1500n },
    ]);
    assert.equal(readFileSync(join(dir, "leader-epoch-checkpoint"), "utf8"), "0\n2\n0 0\n3 1500\n");
    assert.deepEqual(f.read(), [
      { epoch: 0, startOffset: 0n },
      { epoch: 3, startOffset: 1500n },
    ]);
  });

  test("malformed line is a CheckpointFileError", () => {
    const dir = newDir();
    writeFileSync(join(dir, "leader-epoch-checkpoint"), "0\n1\n0 0 0\n");
    const err = thrown(() => LeaderEpochCheckpointFile.forPartitionDir(dir).read(), CheckpointFileError);
    assert.equal(err.line, 3);
    assert.match(err.message, /<epoch> <startOffset>/);
  });
});

describe("PartitionMetadataFile", () => {
  const topicId = "ZXhhbXBsZS10b3BpYy1pZA"; // base64url of 16 bytes

  test("writes Kafka's exact bytes and reads them back", () => {
    const dir = newDir();
    const f = new PartitionMetadataFile(dir);
    assert.equal(f.exists(), false);
    assert.equal(f.read(), undefined);
    f.write(topicId);
    assert.equal(readFileSync(join(dir, "partition.metadata"), "utf8"), `version: 0\ntopic_id: ${topicId}`);
    assert.deepEqual(f.read(), { version: 0, topicId });
    assert.deepEqual(readdirSync(dir), ["partition.metadata"]);
  });

  test("reads variants Kafka accepts: trailing newline, padding, extra spaces, newer versions", () => {
    const dir = newDir();
    const f = new PartitionMetadataFile(dir);
    for (const text of [
      `version: 0\ntopic_id: ${topicId}\n`,
      `version:   0\ntopic_id:\t${topicId}==\n`,
      `version: 1\ntopic_id: ${topicId}\nfuture: field\n`,
    ]) {
      writeFileSync(f.path, text);
      assert.equal(f.read()?.topicId, topicId, text);
    }
  });

  test("topic ids: canonical form, the zero UUID and bad lengths are refused", () => {
    assert.equal(canonicalTopicId(topicId), topicId);
    assert.equal(canonicalTopicId("AAAAAAAAAAAAAAAAAAAAAA"), undefined);
    assert.equal(canonicalTopicId("abc"), undefined);
    assert.equal(canonicalTopicId(`${topicId}A`), undefined);
    assert.throws(() => new PartitionMetadataFile(newDir()).write("not-an-id"), RangeError);
  });

  for (const [name, text, line] of [
    ["empty file", "", 1],
    ["missing topic_id", "version: 0\n", 2],
    ["wrong first key", "versio: 0\ntopic_id: ZXhhbXBsZS10b3BpYy1pZA", 1],
    ["no space after colon", "version:0\ntopic_id: ZXhhbXBsZS10b3BpYy1pZA", 1],
    ["negative version", "version: -1\ntopic_id: ZXhhbXBsZS10b3BpYy1pZA", 1],
    ["zero topic id", "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", 2],
    ["garbage topic id", "version: 0\ntopic_id: !!!!", 2],
  ] as const) {
    test(`malformed (${name}): PartitionMetadataFileError`, () => {
      const f = new PartitionMetadataFile(newDir());
      writeFileSync(f.path, text);
      const err = thrown(() => f.read(), PartitionMetadataFileError);
      assert.equal(err.file, f.path);
      assert.equal(err.line, line);
      assert.ok(err.message.includes(f.path));
    });
  }
});

describe("meta.properties", () => {
  test("writes version 0 in Java's Properties.store layout and reads it back", () => {
    const dir = newDir();
    writeBrokerMetadata(
      dir,
      { brokerId: 3, clusterId: "q1Sh-9_ISia_zwGINzRvyQ" },
      Date.UTC(2026, 10, 29, 13, 4, 1),
    );
    const text = readFileSync(join(dir, "meta.properties"), "utf8");
    assert.equal(
      text,
      "#\n#Sun Nov 29 13:04:01 UTC 2026\ncluster.id=q1Sh-9_ISia_zwGINzRvyQ\nversion=0\nbroker.id=3\n",
    );
    const meta = readBrokerMetadata(dir)!;
    assert.equal(meta.version, 0);
    assert.equal(meta.brokerId, 3);
    assert.equal(meta.clusterId, "q1Sh-9_ISia_zwGINzRvyQ");
    assert.deepEqual(readdirSync(dir), ["meta.properties"]);
  });

  test("missing file is undefined; v0 without cluster.id; v1 (KRaft) uses node.id", () => {
    const dir = newDir();
    assert.equal(readBrokerMetadata(dir), undefined);
    assert.deepEqual(
      { ...parseBrokerMetadata("#\nversion=0\nbroker.id=1\n"), properties: undefined },
      { version: 0, brokerId: 1, clusterId: null, properties: undefined },
    );
    const v1 = parseBrokerMetadata(
      "#\n#Mon Jan 01 00:00:00 UTC 2024\nnode.id=5\nversion=1\ncluster.id=abc\n",
    );
    assert.equal(v1.brokerId, 5);
    assert.equal(v1.clusterId, "abc");
    // A file without a version line is version 0, as Kafka reads it.
    assert.equal(parseBrokerMetadata("broker.id = 7").brokerId, 7);
  });

  for (const [name, text, expected] of [
    ["no broker.id", "version=0\n", "broker.id"],
    ["non-integer broker.id", "version=0\nbroker.id=one\n", "integer broker.id"],
    ["v1 without node.id", "version=1\ncluster.id=x\n", "node.id"],
    ["v1 without cluster.id", "version=1\nnode.id=1\n", "cluster.id"],
    ["unknown version", "version=7\nbroker.id=1\n", "version 0 or 1"],
    ["bad unicode escape", "version=0\nbroker.id=1\ncluster.id=\\uZZZZ\n", "\\uXXXX"],
  ] as const) {
    test(`malformed (${name}): BrokerMetadataError`, () => {
      const dir = newDir();
      writeFileSync(join(dir, "meta.properties"), text);
      const err = thrown(() => readBrokerMetadata(dir), BrokerMetadataError);
      assert.ok(err.expected.includes(expected), err.message);
      assert.ok(err.message.includes(join(dir, "meta.properties")));
    });
  }

  test("Java properties syntax: separators, comments, escapes, continuations", () => {
    const p = parseProperties("# c\n! c\n  a=1\nb : 2\nc 3\nd\\ e=4\\n5\nlong=x\\\n   y\nu=\\u00e9\n");
    assert.deepEqual(Object.fromEntries(p), { a: "1", b: "2", c: "3", "d e": "4\n5", long: "xy", u: "é" });
    const text = formatProperties(
      [
        ["k=1", " v:#"],
        ["é", "\\"],
      ],
      0,
    );
    assert.equal(text, "#\n#Thu Jan 01 00:00:00 UTC 1970\nk\\=1=\\ v\\:\\#\n\\u00E9=\\\\\n");
    assert.deepEqual(Object.fromEntries(parseProperties(text)), { "k=1": " v:#", é: "\\" });
    assert.equal(javaDateString(Date.UTC(2024, 1, 5, 7, 8, 9)), "Mon Feb 05 07:08:09 UTC 2024");
  });
});

describe(".kafka_cleanshutdown", () => {
  test("write, exists, delete; empty as ZooKeeper-mode Kafka writes it", () => {
    const dir = newDir();
    assert.equal(hasCleanShutdownMarker(dir), false);
    writeCleanShutdownMarker(dir);
    assert.equal(hasCleanShutdownMarker(dir), true);
    assert.equal(readFileSync(join(dir, ".kafka_cleanshutdown"), "utf8"), "");
    assert.equal(readCleanShutdownBrokerEpoch(dir), undefined);
    deleteCleanShutdownMarker(dir);
    assert.equal(existsSync(join(dir, ".kafka_cleanshutdown")), false);
    deleteCleanShutdownMarker(dir); // deleting a missing marker is fine
  });

  test("with a broker epoch (Kafka 3.7+ JSON)", () => {
    const dir = newDir();
    writeCleanShutdownMarker(dir, 42n);
    assert.equal(readFileSync(join(dir, ".kafka_cleanshutdown"), "utf8"), '{"version":0,"brokerEpoch":42}');
    assert.equal(readCleanShutdownBrokerEpoch(dir), 42n);
  });
});
