// ListOffsets (02), DeleteRecords (21), OffsetForLeaderEpoch (23) and DescribeLogDirs (35) handlers driven
// with typed requests from the generated builders against a log of several segments; responses are
// encoded and decoded at the version asked.

import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrorCode } from "../../../src/protocol/errors.js";
import {
  type DeleteRecordsRequest,
  defaultDeleteRecordsRequest,
} from "../../../src/protocol/generated/messages/DeleteRecordsRequest.js";
import {
  type DeleteRecordsResponse,
  readDeleteRecordsResponse,
  writeDeleteRecordsResponse,
} from "../../../src/protocol/generated/messages/DeleteRecordsResponse.js";
import {
  type DescribeLogDirsRequest,
  defaultDescribeLogDirsRequest,
} from "../../../src/protocol/generated/messages/DescribeLogDirsRequest.js";
import {
  type DescribeLogDirsResponse,
  readDescribeLogDirsResponse,
  writeDescribeLogDirsResponse,
} from "../../../src/protocol/generated/messages/DescribeLogDirsResponse.js";
import {
  defaultListOffsetsPartition,
  defaultListOffsetsRequest,
  type ListOffsetsRequest,
} from "../../../src/protocol/generated/messages/ListOffsetsRequest.js";
import {
  type ListOffsetsResponse,
  readListOffsetsResponse,
  writeListOffsetsResponse,
} from "../../../src/protocol/generated/messages/ListOffsetsResponse.js";
import {
  defaultOffsetForLeaderEpochRequest,
  type OffsetForLeaderEpochRequest,
} from "../../../src/protocol/generated/messages/OffsetForLeaderEpochRequest.js";
import {
  type OffsetForLeaderEpochResponse,
  readOffsetForLeaderEpochResponse,
  writeOffsetForLeaderEpochResponse,
} from "../../../src/protocol/generated/messages/OffsetForLeaderEpochResponse.js";
import { listOffsetsHandler } from "../../../src/server/handlers/02-list-offsets.js";
import { deleteRecordsHandler } from "../../../src/server/handlers/21-delete-records.js";
import { offsetForLeaderEpochHandler } from "../../../src/server/handlers/23-offset-for-leader-epoch.js";
import { describeLogDirsHandler } from "../../../src/server/handlers/35-describe-log-dirs.js";
import type { FetchParams } from "../../../src/server/replication/replica-manager.js";
import {
  type Broker,
  call,
  createTopics,
  leaderState,
  records,
  roundTrip,
  startBroker,
} from "./replication-test-utils.js";

const BASE_TS = 1_700_000_000_000n;

/** 10 batches of 2 records, batch i stamped BASE_TS + (i + 1) * 1000, over several 1 KiB segments. */
async function fillSegments(b: Broker, topic = "t"): Promise<void> {
  for (let i = 0; i < 10; i++) {
    const [r] = await b.replicaManager.appendRecords(1000, 1, [
      {
        topicPartition: { topic, partition: 0 },
        records: records(2, { valueSize: 200, timestamp: BASE_TS + BigInt((i + 1) * 1000) }),
      },
    ]);
    assert.equal(r.error, "NONE");
  }
}

async function listOffsets(
  b: Broker,
  version: number,
  timestamp: bigint,
  opts: { isolationLevel?: number; topic?: string; currentLeaderEpoch?: number; maxNumOffsets?: number } = {},
): Promise<ListOffsetsResponse["topics"][number]["partitions"][number]> {
  const req: ListOffsetsRequest = {
    ...defaultListOffsetsRequest(),
    replicaId: -1,
    isolationLevel: opts.isolationLevel ?? 0,
    topics: [
      {
        name: opts.topic ?? "t",
        partitions: [
          {
            ...defaultListOffsetsPartition(),
            partitionIndex: 0,
            timestamp,
            currentLeaderEpoch: opts.currentLeaderEpoch ?? -1,
            maxNumOffsets: opts.maxNumOffsets ?? 1,
          },
        ],
      },
    ],
  };
  const res = await call<ListOffsetsRequest, ListOffsetsResponse>(
    listOffsetsHandler(b.services),
    version,
    req,
  );
  return roundTrip(writeListOffsetsResponse, readListOffsetsResponse, res, version).topics[0].partitions[0];
}

test("ListOffsets: latest, earliest, max timestamp and by timestamp against several segments", async (t) => {
  const b = startBroker({ logConfig: { segmentBytes: 1024 } });
  t.after(() => b.cleanup());
  createTopics(b, { t: 1 }, 2);
  await fillSegments(b);
  assert.ok((b.replicaManager.getPartition({ topic: "t", partition: 0 })?.log?.numberOfSegments ?? 0) >= 3);
  for (const v of [1, 4, 7, 10]) {
    const latest = await listOffsets(b, v, -1n);
    assert.deepEqual([latest.errorCode, latest.offset, latest.timestamp], [0, 20n, -1n], `v${v}`);
    if (v >= 4) assert.equal(latest.leaderEpoch, 2);
    const earliest = await listOffsets(b, v, -2n);
    assert.equal(earliest.offset, 0n);
    if (v >= 4) assert.equal(earliest.leaderEpoch, 2);
    // The first batch stamped at or after the asked time; each segment's time index finds it.
    for (const [ts, offset] of [
      [BASE_TS + 4500n, 8n],
      [BASE_TS + 1000n, 0n],
      [BASE_TS, 0n],
      [BASE_TS + 10_000n, 18n],
    ] as const) {
      const r = await listOffsets(b, v, ts);
      assert.equal(r.offset, offset, `v${v} ts ${ts}`);
      assert.equal(
        r.timestamp,
        ts <= BASE_TS + 1000n ? BASE_TS + 1000n : BASE_TS + ((ts - BASE_TS + 999n) / 1000n) * 1000n,
      );
    }
    const none = await listOffsets(b, v, BASE_TS + 10_001n);
    assert.deepEqual([none.errorCode, none.offset, none.timestamp], [0, -1n, -1n]);
  }
  const max = await listOffsets(b, 7, -3n);
  assert.equal(max.timestamp, BASE_TS + 10_000n);
  // The first record carrying the max timestamp (Kafka 3.8+), not its batch's last offset (19).
  assert.equal(max.offset, 18n);
  // read_committed: latest is the last stable offset (= HW without transactions).
  assert.equal((await listOffsets(b, 4, -1n, { isolationLevel: 1 })).offset, 20n);
  // Leader epoch checks (v4+), unknown partitions.
  assert.equal(
    (await listOffsets(b, 4, -1n, { currentLeaderEpoch: 1 })).errorCode,
    ErrorCode.FENCED_LEADER_EPOCH,
  );
  assert.equal(
    (await listOffsets(b, 4, -1n, { currentLeaderEpoch: 3 })).errorCode,
    ErrorCode.UNKNOWN_LEADER_EPOCH,
  );
  assert.equal(
    (await listOffsets(b, 4, -1n, { topic: "nope" })).errorCode,
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  );
  // v0: old-style offsets, newest first.
  const v0 = await listOffsets(b, 0, -1n, { maxNumOffsets: 100 });
  assert.equal(v0.errorCode, 0);
  assert.equal(v0.oldStyleOffsets[0], 20n);
  assert.equal(v0.oldStyleOffsets[v0.oldStyleOffsets.length - 1], 0n);
  assert.deepEqual(
    v0.oldStyleOffsets,
    [...v0.oldStyleOffsets].sort((a, c) => (a > c ? -1 : 1)),
  );
  assert.deepEqual((await listOffsets(b, 0, -2n, { maxNumOffsets: 5 })).oldStyleOffsets, [0n]);
});

test("ListOffsets on a follower replica is NOT_LEADER_OR_FOLLOWER", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  b.replicaManager.becomeLeaderOrFollower([leaderState("t", 0, { leader: 4, replicas: [4, 0] })]);
  assert.equal((await listOffsets(b, 5, -1n)).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
});

async function deleteRecords(b: Broker, version: number, topic: string, offset: bigint) {
  const req: DeleteRecordsRequest = {
    ...defaultDeleteRecordsRequest(),
    timeoutMs: 1000,
    topics: [{ name: topic, partitions: [{ partitionIndex: 0, offset }] }],
  };
  const res = await call<DeleteRecordsRequest, DeleteRecordsResponse>(
    deleteRecordsHandler(b.services),
    version,
    req,
  );
  return roundTrip(writeDeleteRecordsResponse, readDeleteRecordsResponse, res, version).topics[0]
    .partitions[0];
}

const consumer: FetchParams = {
  replicaId: -1,
  maxWaitMs: 0,
  minBytes: 1,
  maxBytes: 1 << 20,
  isolation: "high-watermark",
  fetchOnlyFromLeader: true,
};

test("DeleteRecords moves the low watermark; reads below it are OFFSET_OUT_OF_RANGE; -1 means the HW", async (t) => {
  const b = startBroker({ logConfig: { segmentBytes: 1024 } });
  t.after(() => b.cleanup());
  createTopics(b, { t: 1 });
  await fillSegments(b);
  const r = await deleteRecords(b, 2, "t", 7n);
  assert.deepEqual([r.errorCode, r.lowWatermark], [0, 7n]);
  const fetchAt = async (offset: bigint) =>
    (
      await b.replicaManager.fetchMessages(consumer, [
        {
          topicPartition: { topic: "t", partition: 0 },
          fetchOffset: offset,
          currentLeaderEpoch: -1,
          logStartOffset: -1n,
          partitionMaxBytes: 1 << 20,
        },
      ])
    )[0];
  assert.equal((await fetchAt(5n)).errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
  const at7 = await fetchAt(7n);
  assert.equal(at7.errorCode, 0);
  assert.equal(at7.logStartOffset, 7n);
  assert.equal((await listOffsets(b, 4, -2n)).offset, 7n);
  // Retention then removes the whole segments below it.
  const before = b.replicaManager.getPartition({ topic: "t", partition: 0 })?.log?.numberOfSegments ?? 0;
  b.logManager.cleanupLogs();
  assert.ok(
    (b.replicaManager.getPartition({ topic: "t", partition: 0 })?.log?.numberOfSegments ?? 0) < before,
  );
  assert.equal((await fetchAt(7n)).errorCode, 0);
  // Beyond the HW; then -1 (the HW).
  assert.equal((await deleteRecords(b, 1, "t", 21n)).errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
  const all = await deleteRecords(b, 0, "t", -1n);
  assert.deepEqual([all.errorCode, all.lowWatermark], [0, 20n]);
  assert.equal((await fetchAt(19n)).errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
  assert.equal((await deleteRecords(b, 2, "nope", 1n)).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  assert.equal((await deleteRecords(b, 2, "t", -5n)).errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
});

test("DeleteRecords on a compact-only topic is POLICY_VIOLATION", async (t) => {
  const b = startBroker({ logConfig: { cleanupPolicy: ["compact"] } });
  t.after(() => b.cleanup());
  createTopics(b, { t: 1 });
  assert.equal((await deleteRecords(b, 2, "t", 0n)).errorCode, ErrorCode.POLICY_VIOLATION);
});

async function offsetForLeaderEpoch(
  b: Broker,
  version: number,
  parts: Array<{ partition: number; leaderEpoch: number; currentLeaderEpoch?: number }>,
  topic = "t",
) {
  const req: OffsetForLeaderEpochRequest = {
    ...defaultOffsetForLeaderEpochRequest(),
    replicaId: -1,
    topics: [
      {
        topic,
        partitions: parts.map((p) => ({
          partition: p.partition,
          leaderEpoch: p.leaderEpoch,
          currentLeaderEpoch: p.currentLeaderEpoch ?? -1,
        })),
      },
    ],
  };
  const res = await call<OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse>(
    offsetForLeaderEpochHandler(b.services),
    version,
    req,
  );
  return roundTrip(writeOffsetForLeaderEpochResponse, readOffsetForLeaderEpochResponse, res, version)
    .topics[0].partitions;
}

test("OffsetForLeaderEpoch: end offsets from the leader-epoch cache and current leader epoch checks", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  createTopics(b, { t: 1 }, 0);
  const append = async (n: number) =>
    b.replicaManager.appendRecords(1000, 1, [
      { topicPartition: { topic: "t", partition: 0 }, records: records(n) },
    ]);
  await append(3);
  b.replicaManager.becomeLeaderOrFollower([leaderState("t", 0, { leaderEpoch: 2 })]);
  await append(2);
  for (const v of [2, 3, 4]) {
    const r = await offsetForLeaderEpoch(b, v, [
      { partition: 0, leaderEpoch: 0 },
      { partition: 0, leaderEpoch: 1 },
      { partition: 0, leaderEpoch: 2 },
      { partition: 0, leaderEpoch: 3 },
    ]);
    assert.deepEqual(
      r.map((p) => [p.errorCode, p.leaderEpoch, p.endOffset]),
      [
        [0, 0, 3n],
        [0, 0, 3n],
        [0, 2, 5n],
        [0, -1, -1n],
      ],
      `v${v}`,
    );
    const fenced = await offsetForLeaderEpoch(b, v, [
      { partition: 0, leaderEpoch: 0, currentLeaderEpoch: 1 },
      { partition: 0, leaderEpoch: 0, currentLeaderEpoch: 3 },
      { partition: 0, leaderEpoch: 0, currentLeaderEpoch: 2 },
      { partition: 1, leaderEpoch: 0 },
    ]);
    assert.deepEqual(
      fenced.map((p) => p.errorCode),
      [
        ErrorCode.FENCED_LEADER_EPOCH,
        ErrorCode.UNKNOWN_LEADER_EPOCH,
        0,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      ],
    );
  }
  // A new leader epoch with no append yet is in the cache at the log end offset.
  b.replicaManager.becomeLeaderOrFollower([leaderState("t", 0, { leaderEpoch: 5 })]);
  const r = await offsetForLeaderEpoch(b, 4, [{ partition: 0, leaderEpoch: 2 }]);
  assert.deepEqual([r[0].leaderEpoch, r[0].endOffset], [2, 5n]);
});

test("DescribeLogDirs: partitions per dir with sizes; total and usable bytes from v4", async (t) => {
  const b = startBroker({ logDirCount: 2 });
  t.after(() => b.cleanup());
  createTopics(b, { t: 2, u: 1 });
  await b.replicaManager.appendRecords(1000, 1, [
    { topicPartition: { topic: "t", partition: 1 }, records: records(4) },
  ]);
  const describe = async (version: number, topics: DescribeLogDirsRequest["topics"]) => {
    const res = await call<DescribeLogDirsRequest, DescribeLogDirsResponse>(
      describeLogDirsHandler(b.services),
      version,
      {
        ...defaultDescribeLogDirsRequest(),
        topics,
      },
    );
    return roundTrip(writeDescribeLogDirsResponse, readDescribeLogDirsResponse, res, version);
  };
  const all = await describe(4, null);
  assert.deepEqual(all.results.map((r) => r.logDir).sort(), [...b.logDirs].sort());
  const partitions = all.results.flatMap((r) =>
    r.topics.flatMap((tt) => tt.partitions.map((p) => `${tt.name}-${p.partitionIndex}`)),
  );
  assert.deepEqual(partitions.sort(), ["t-0", "t-1", "u-0"]);
  for (const r of all.results) {
    assert.equal(r.errorCode, 0);
    assert.ok(r.totalBytes > 0n && r.usableBytes > 0n && r.usableBytes <= r.totalBytes);
  }
  const t1 = all.results
    .flatMap((r) => r.topics)
    .filter((x) => x.name === "t")
    .flatMap((x) => x.partitions)
    .find((p) => p.partitionIndex === 1);
  assert.equal(
    t1?.partitionSize,
    BigInt(b.replicaManager.getPartition({ topic: "t", partition: 1 })?.log?.size ?? -1),
  );
  assert.ok((t1?.partitionSize ?? 0n) > 0n);
  assert.equal(t1?.offsetLag, 0n);
  assert.equal(t1?.isFutureKey, false);
  const some = await describe(1, [{ topic: "u", partitions: [0] }]);
  assert.deepEqual(
    some.results.flatMap((r) => r.topics.map((x) => x.name)),
    ["u"],
  );
  assert.equal(some.results[0].totalBytes, -1n, "not in v1");
});

test("ListOffsets latest is OFFSET_NOT_AVAILABLE while a new leader's HW lags the start of its epoch", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  const twoReplicas = { replicas: [0, 1], isr: [0, 1] };
  b.replicaManager.becomeLeaderOrFollower([leaderState("t", 0, { leaderEpoch: 0, ...twoReplicas })]);
  await b.replicaManager.appendRecords(1000, 1, [
    { topicPartition: { topic: "t", partition: 0 }, records: records(3) },
  ]);
  assert.equal((await listOffsets(b, 4, -1n)).offset, 0n, "the HW waits for the follower");
  b.replicaManager.becomeLeaderOrFollower([leaderState("t", 0, { leaderEpoch: 1, ...twoReplicas })]);
  assert.equal((await listOffsets(b, 4, -1n)).errorCode, ErrorCode.OFFSET_NOT_AVAILABLE);
  // The follower catches up: the HW reaches the epoch start and offsets are served again.
  b.replicaManager.readFromLocalLog({ ...consumer, replicaId: 1, isolation: "log-end" }, [
    {
      topicPartition: { topic: "t", partition: 0 },
      fetchOffset: 3n,
      currentLeaderEpoch: 1,
      logStartOffset: 0n,
      partitionMaxBytes: 1000,
    },
  ]);
  const latest = await listOffsets(b, 4, -1n);
  assert.deepEqual([latest.errorCode, latest.offset, latest.leaderEpoch], [0, 3n, 1]);
});
