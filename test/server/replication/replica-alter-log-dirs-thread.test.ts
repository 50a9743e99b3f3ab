// The ReplicaAlterLogDirsThread over a real LogManager (two log dirs) and ReplicaManager: it copies the
// current log into the future log a chunk per step and swaps them once caught up; it follows a truncation
// of the current log found by leader epochs (the current log cut below what was copied, then written at a
// new epoch beyond it), the current log's start (DeleteRecords past what was copied), and asks the quota
// before each read and tells it the bytes copied. The ReplicaManager's alterReplicaLogDirs answers
// Kafka's errors.

import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrorCode } from "../../../src/protocol/errors.js";
import { ReplicaAlterLogDirsThread } from "../../../src/server/replication/replica-alter-log-dirs-thread.js";
import type { UnifiedLog } from "../../../src/storage/unified-log.js";
import { leaderState, records, startBroker } from "./replication-test-utils.js";

const TP = { topic: "t", partition: 0 };

function tick(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}

/** (baseOffset, partitionLeaderEpoch) of every batch of the log (a read returns one segment's at most). */
function batches(log: UnifiedLog): string[] {
  const out: string[] = [];
  let offset = log.logStartOffset;
  while (offset < log.logEndOffset) {
    const bytes = log.read(offset, 1 << 30, "log-end", true).records;
    if (bytes.length === 0) break;
    for (let pos = 0; pos + 61 <= bytes.length; pos += 12 + bytes.readInt32BE(pos + 8)) {
      out.push(`${bytes.readBigInt64BE(pos)}@${bytes.readInt32BE(pos + 12)}`);
      offset = bytes.readBigInt64BE(pos) + BigInt(bytes.readInt32BE(pos + 23)) + 1n;
    }
  }
  return out;
}

function setUp(epoch: number) {
  const b = startBroker({ logDirCount: 2, logConfig: { segmentBytes: 2048 } });
  b.replicaManager.becomeLeaderOrFollower([leaderState("t", 0, { leaderEpoch: epoch })]);
  const partition = b.replicaManager.getPartition(TP)!;
  const append = (n: number) => {
    for (let i = 0; i < n; i++) partition.appendRecordsToLeader(records(5, { valueSize: 50 }), 1);
  };
  const source = b.logManager.logDirOf(TP)!;
  const target = b.logDirs.find((d) => d !== source)!;
  // The broker's own copier stays out of it; this one copies a batch a step, a step a slice.
  b.replicaManager.alterLogDirsThread.shutdown();
  const thread = new ReplicaAlterLogDirsThread(0, (tp) => b.replicaManager.getPartition(tp), {
    chunkBytes: 100,
    sliceMs: 0,
    backoffMs: 5,
  });
  const startMove = () => {
    b.logManager.maybeUpdatePreferredLogDir(TP, target);
    assert.equal(partition.maybeCreateFutureReplica(target), true);
    thread.addPartition(TP);
  };
  return { b, partition, append, source, target, thread, startMove };
}

async function untilSwapped(s: ReturnType<typeof setUp>): Promise<void> {
  // (The last steps write the future log back to disk off the event loop: real time, not ticks.)
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && s.partition.futureLog !== undefined)
    await new Promise((r) => setTimeout(r, 2));
  assert.equal(s.partition.futureLog, undefined, "the future log replaced the current one");
  assert.equal(s.thread.has(TP), false);
}

test("the copy follows a truncation of the current log found by leader epochs", async () => {
  const s = setUp(1);
  try {
    s.append(20); // offsets 0..99 at epoch 1
    s.startMove();
    for (let i = 0; i < 1000 && s.partition.futureLog!.logEndOffset < 40n; i++) await tick();
    const copied = s.partition.futureLog!.logEndOffset;
    assert.ok(copied >= 40n && copied < 100n, `copied to ${copied}`);
    // The current log loses what it had from 30 on and is written again at epoch 2, past the copy.
    s.b.logManager.truncateTo(TP, 30n);
    s.b.replicaManager.becomeLeaderOrFollower([leaderState("t", 0, { leaderEpoch: 2 })]);
    s.append(30);
    const expected = batches(s.partition.log!);
    assert.ok(expected.includes("30@2") && expected.includes("25@1"), expected.join(" "));
    await untilSwapped(s);
    assert.equal(s.b.logManager.logDirOf(TP), s.target);
    assert.deepEqual(batches(s.partition.log!), expected, "the same batches, at the same offsets and epochs");
    assert.deepEqual(
      s.partition.log!.leaderEpochCache!.epochEntries().map((e) => `${e.epoch}:${e.startOffset}`),
      ["1:0", "2:30"],
    );
    // The partition takes appends on its new log.
    s.append(1);
    assert.equal(s.partition.log!.logEndOffset, 185n);
  } finally {
    s.thread.shutdown();
    s.b.cleanup();
  }
});

test("the copy follows the current log's start and asks the quota", async () => {
  const s = setUp(0);
  try {
    s.append(20);
    s.partition.log!.updateHighWatermark(100n);
    // The quota lets nothing through, then about 1000 bytes, then everything.
    let budget = 0;
    let recorded = 0;
    s.thread.quota = { isQuotaExceeded: () => recorded >= budget, record: (n) => (recorded += n) };
    s.startMove();
    for (let i = 0; i < 5; i++) await tick();
    assert.equal(s.partition.futureLog!.logEndOffset, 0n, "nothing copied while the quota is exceeded");
    budget = 1000;
    const deadline = Date.now() + 10_000;
    while (recorded < 1000 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
    assert.ok(recorded >= 1000, `the quota is told what was copied (${recorded} bytes)`);
    await new Promise((r) => setTimeout(r, 30));
    const copied = s.partition.futureLog!.logEndOffset;
    assert.ok(copied > 0n && copied < 60n, `copied to ${copied}: the copy stops when the quota is exceeded`);
    assert.equal(recorded, s.thread.bytesCopied);
    budget = Number.POSITIVE_INFINITY;
    // DeleteRecords past the copy: the future log restarts at the new log start.
    s.partition.deleteRecordsOnLeader(60n);
    const expected = batches(s.partition.log!);
    await untilSwapped(s);
    assert.equal(s.partition.log!.logStartOffset, 60n);
    assert.deepEqual(batches(s.partition.log!), expected);
  } finally {
    s.thread.shutdown();
    s.b.cleanup();
  }
});

test("alterReplicaLogDirs answers Kafka's errors and remembers the dir of a replica not there yet", () => {
  const b = startBroker({ logDirCount: 2 });
  try {
    const [d0, d1] = b.logDirs;
    const exists = (tp: { topic: string }) => tp.topic !== "nowhere";
    const alter = (topic: string, dir: string) =>
      b.replicaManager.alterReplicaLogDirs([{ topicPartition: { topic, partition: 0 }, dir }], exists)[0]
        .errorCode;
    assert.equal(alter("t", `${d0}-not-configured`), ErrorCode.LOG_DIR_NOT_FOUND);
    assert.equal(alter("nowhere", d0), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal(alter("y".repeat(230), d0), ErrorCode.INVALID_TOPIC_EXCEPTION);
    assert.equal(alter("later", d1), ErrorCode.REPLICA_NOT_AVAILABLE);
    b.replicaManager.becomeLeaderOrFollower([leaderState("later", 0)]);
    assert.equal(b.logManager.logDirOf({ topic: "later", partition: 0 }), d1, "created in the dir asked for");
    assert.equal(alter("later", d1), ErrorCode.NONE, "already there: nothing to do");
    assert.equal(b.logManager.getFutureLog({ topic: "later", partition: 0 }), undefined);
    // A move, then a move elsewhere: the first future log goes.
    b.replicaManager.becomeLeaderOrFollower([leaderState("t", 0)]);
    const from = b.logManager.logDirOf(TP)!;
    const to = from === d0 ? d1 : d0;
    b.replicaManager.alterLogDirsThread.shutdown(); // (no copy: the future log stays empty)
    assert.equal(alter("t", to), ErrorCode.NONE);
    assert.equal(b.logManager.futureLogDirOf(TP), to);
    assert.equal(alter("t", from), ErrorCode.NONE, "back to where it is: the move is cancelled");
    assert.equal(b.logManager.futureLogDirOf(TP), undefined);
  } finally {
    b.cleanup();
  }
});
