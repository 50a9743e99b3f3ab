// Produce (00) and Fetch (01) handlers driven with typed requests built from the generated builders:
// round trips at several versions (responses encoded at those versions), every produce error the broker
// answers, acks 0/1/-1, fetch limits (partition_max_bytes, max_bytes, at least one batch), isolation,
// OFFSET_OUT_OF_RANGE, topic ids, long polling, and KIP-227 fetch sessions.

import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrorCode } from "../../../src/protocol/errors.js";
import {
  defaultFetchPartition,
  defaultFetchRequest,
  defaultFetchTopic,
  defaultForgottenTopic,
  type FetchRequest,
} from "../../../src/protocol/generated/messages/FetchRequest.js";
import {
  type FetchResponse,
  readFetchResponse,
  writeFetchResponse,
} from "../../../src/protocol/generated/messages/FetchResponse.js";
import {
  defaultPartitionProduceData,
  defaultProduceRequest,
  defaultTopicProduceData,
  type ProduceRequest,
} from "../../../src/protocol/generated/messages/ProduceRequest.js";
import {
  type ProduceResponse,
  readProduceResponse,
  writeProduceResponse,
} from "../../../src/protocol/generated/messages/ProduceResponse.js";
import {
  buildRecordBatch,
  CompressionType,
  RECORDS_COUNT_OFFSET,
  writeRecordBatchCrc,
} from "../../../src/protocol/records/index.js";
import { NO_RESPONSE } from "../../../src/server/handler.js";
import { produceHandler } from "../../../src/server/handlers/00-produce.js";
import { fetchHandler } from "../../../src/server/handlers/01-fetch.js";
import { ZERO_UUID } from "../../../src/server/replication/fetch-session.js";
import {
  type Broker,
  call,
  createTopics,
  flushMicrotasks,
  records,
  roundTrip,
  startBroker,
  topicIdOf,
} from "./replication-test-utils.js";

function produceRequest(
  acks: number,
  data: Array<{ topic: string; partition: number; records: Buffer | null }>,
  timeoutMs = 30_000,
): ProduceRequest {
  const req = { ...defaultProduceRequest(), acks, timeoutMs };
  for (const d of data) {
    let t = req.topicData.find((x) => x.name === d.topic);
    if (!t) {
      t = { ...defaultTopicProduceData(), name: d.topic, partitionData: [] };
      req.topicData.push(t);
    }
    t.partitionData.push({ ...defaultPartitionProduceData(), index: d.partition, records: d.records });
  }
  return req;
}

async function produce(
  b: Broker,
  version: number,
  topic: string,
  partition: number,
  recs: Buffer | null,
  acks = 1,
): Promise<ProduceResponse["responses"][number]["partitionResponses"][number]> {
  const res = await call<ProduceRequest, ProduceResponse>(
    produceHandler(b.services),
    version,
    produceRequest(acks, [{ topic, partition, records: recs }]),
  );
  const decoded = roundTrip(writeProduceResponse, readProduceResponse, res, version);
  return decoded.responses[0].partitionResponses[0];
}

function fetchRequest(
  version: number,
  parts: Array<{ topic: string; partition: number; offset: bigint; maxBytes?: number; epoch?: number }>,
  over: Partial<FetchRequest> = {},
): FetchRequest {
  const req: FetchRequest = {
    ...defaultFetchRequest(),
    maxWaitMs: 0,
    minBytes: 1,
    maxBytes: 1 << 20,
    ...over,
  };
  for (const p of parts) {
    const key = version >= 13 ? topicIdOf(p.topic) : p.topic;
    let t = req.topics.find((x) => (version >= 13 ? x.topicId : x.topic) === key);
    if (!t) {
      t = {
        ...defaultFetchTopic(),
        topic: version >= 13 ? "" : p.topic,
        topicId: version >= 13 ? topicIdOf(p.topic) : ZERO_UUID,
        partitions: [],
      };
      req.topics.push(t);
    }
    t.partitions.push({
      ...defaultFetchPartition(),
      partition: p.partition,
      fetchOffset: p.offset,
      partitionMaxBytes: p.maxBytes ?? 1 << 20,
      currentLeaderEpoch: p.epoch ?? -1,
    });
  }
  return req;
}

async function fetch(b: Broker, version: number, req: FetchRequest): Promise<FetchResponse> {
  const res = await call<FetchRequest, FetchResponse>(fetchHandler(b.services), version, req);
  return roundTrip(writeFetchResponse, readFetchResponse, res, version);
}

test("registrations: Produce from v3, Fetch from v4", () => {
  const b = startBroker();
  try {
    assert.deepEqual([produceHandler(b.services).apiKey, produceHandler(b.services).minVersion], [0, 3]);
    assert.deepEqual([fetchHandler(b.services).apiKey, fetchHandler(b.services).minVersion], [1, 4]);
  } finally {
    b.cleanup();
  }
});

test("produce then fetch round trip at every produce version 3–11 and fetch versions 4–17", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  createTopics(b, { t: 1 });
  const stored: Buffer[] = [];
  for (let v = 3; v <= 11; v++) {
    const batch = records(2, { prefix: `v${v}-` });
    const r = await produce(b, v, "t", 0, batch);
    assert.equal(r.errorCode, 0, `v${v}`);
    assert.equal(r.baseOffset, BigInt((v - 3) * 2));
    assert.equal(r.logAppendTimeMs, -1n);
    if (v >= 5) assert.equal(r.logStartOffset, 0n);
    stored.push(batch);
  }
  const all = Buffer.concat(stored);
  for (let v = 4; v <= 17; v++) {
    const res = await fetch(b, v, fetchRequest(v, [{ topic: "t", partition: 0, offset: 0n }]));
    assert.equal(res.errorCode, 0);
    const p = res.responses[0].partitions[0];
    assert.equal(p.errorCode, 0, `fetch v${v}`);
    assert.equal(p.highWatermark, 18n);
    assert.equal(p.lastStableOffset, 18n);
    if (v >= 5) assert.equal(p.logStartOffset, 0n);
    if (v >= 13) assert.equal(res.responses[0].topicId, topicIdOf("t"));
    else assert.equal(res.responses[0].topic, "t");
    if (v >= 11) assert.equal(p.preferredReadReplica, -1);
    assert.equal(p.abortedTransactions, null);
    // The stored bytes are the produced batches with offsets and the leader epoch stamped in place.
    assert.deepEqual(p.records, all);
    assert.equal(p.records?.readBigInt64BE(0), 0n);
  }
});

test("produce with acks=0 gets no response; acks=-1 answers once the ISR has it", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  createTopics(b, { t: 1 });
  const h = produceHandler(b.services);
  const none = await call(h, 9, produceRequest(0, [{ topic: "t", partition: 0, records: records(1) }]));
  assert.equal(none, NO_RESPONSE);
  const all = await produce(b, 9, "t", 0, records(1), -1);
  assert.equal(all.errorCode, 0);
  assert.equal(all.baseOffset, 1n, "the acks=0 append happened");
  const bad = await produce(b, 9, "t", 0, records(1), 5);
  assert.equal(bad.errorCode, ErrorCode.INVALID_REQUIRED_ACKS);
});

test("produce errors: CORRUPT_MESSAGE, INVALID_RECORD, MESSAGE_TOO_LARGE, topic errors, zstd below v7", async (t) => {
  const b = startBroker({ logConfig: { maxMessageBytes: 2000 } });
  t.after(() => b.cleanup());
  createTopics(b, { t: 1 });
  // A flipped byte in the records fails the CRC.
  const corrupt = records(3);
  corrupt[corrupt.length - 1] ^= 0xff;
  assert.equal((await produce(b, 9, "t", 0, corrupt)).errorCode, ErrorCode.CORRUPT_MESSAGE);
  // A truncated batch.
  assert.equal(
    (await produce(b, 9, "t", 0, records(3).subarray(0, 70))).errorCode,
    ErrorCode.CORRUPT_MESSAGE,
  );
  // Magic 1 (a legacy message set) in Produce v3+.
  const legacy = records(1);
  legacy.writeInt8(1, 16);
  const rl = await produce(b, 9, "t", 0, legacy);
  assert.equal(rl.errorCode, ErrorCode.INVALID_RECORD);
  assert.equal(
    rl.errorMessage,
    "Produce requests with version 3+ are only allowed to contain record batches with magic version 2",
  );
  // lastOffsetDelta + 1 != record count (CRC made valid again).
  const inconsistent = records(3);
  inconsistent.writeInt32BE(5, RECORDS_COUNT_OFFSET);
  writeRecordBatchCrc(inconsistent, 0);
  const ri = await produce(b, 9, "t", 0, inconsistent);
  assert.equal(ri.errorCode, ErrorCode.INVALID_RECORD);
  assert.match(ri.errorMessage ?? "", /Inconsistent batch offset range/);
  // The same with a bad CRC is CORRUPT_MESSAGE, as Kafka checks the CRC first.
  inconsistent[inconsistent.length - 1] ^= 1;
  assert.equal((await produce(b, 9, "t", 0, inconsistent)).errorCode, ErrorCode.CORRUPT_MESSAGE);
  // A control batch from a client.
  const control = buildRecordBatch({
    records: [{ key: Buffer.from([0, 0, 0, 1]), value: Buffer.from([0, 0, 0, 0, 0, 0]) }],
    isControl: true,
    isTransactional: true,
    producerId: 5n,
    producerEpoch: 0,
  });
  const rc = await produce(b, 9, "t", 0, control);
  assert.equal(rc.errorCode, ErrorCode.INVALID_RECORD);
  assert.equal(rc.errorMessage, "Clients are not allowed to write control records");
  // Two batches in one partition's records; no records at all.
  assert.equal(
    (await produce(b, 9, "t", 0, Buffer.concat([records(1), records(1)]))).errorCode,
    ErrorCode.INVALID_RECORD,
  );
  assert.equal((await produce(b, 9, "t", 0, null)).errorCode, ErrorCode.INVALID_RECORD);
  // Larger than max.message.bytes.
  const big = await produce(b, 9, "t", 0, records(1, { valueSize: 3000 }));
  assert.equal(big.errorCode, ErrorCode.MESSAGE_TOO_LARGE);
  // Topic errors.
  assert.equal(
    (await produce(b, 9, "bad topic!", 0, records(1))).errorCode,
    ErrorCode.INVALID_TOPIC_EXCEPTION,
  );
  assert.equal(
    (await produce(b, 9, "missing", 0, records(1))).errorCode,
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  );
  assert.equal((await produce(b, 9, "t", 3, records(1))).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  // zstd needs Produce v7.
  const zstd = records(2, { compression: CompressionType.Zstd });
  assert.equal((await produce(b, 6, "t", 0, zstd)).errorCode, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE);
  const ok = await produce(b, 7, "t", 0, records(2, { compression: CompressionType.Zstd }));
  assert.equal(ok.errorCode, 0);
  assert.equal(ok.baseOffset, 0n, "nothing was appended by the failed requests");
  // ...and a Fetch below v10 cannot carry it.
  const old = await fetch(b, 9, fetchRequest(9, [{ topic: "t", partition: 0, offset: 0n }]));
  assert.equal(old.responses[0].partitions[0].errorCode, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE);
  const v10 = await fetch(b, 10, fetchRequest(10, [{ topic: "t", partition: 0, offset: 0n }]));
  assert.equal(v10.responses[0].partitions[0].errorCode, 0);
});

test("produce: RECORD_LIST_TOO_LARGE beyond segment.bytes", async (t) => {
  const b = startBroker({ logConfig: { segmentBytes: 1024, maxMessageBytes: 1 << 20 } });
  t.after(() => b.cleanup());
  createTopics(b, { t: 1 });
  const r = await produce(b, 9, "t", 0, records(1, { valueSize: 2000 }));
  assert.equal(r.errorCode, ErrorCode.RECORD_LIST_TOO_LARGE);
});

test("produce to a LogAppendTime topic answers the log append time and stamps the batch", async (t) => {
  const b = startBroker({ logConfig: { messageTimestampType: "LogAppendTime" } });
  t.after(() => b.cleanup());
  createTopics(b, { t: 1 });
  const r = await produce(b, 9, "t", 0, records(2, { timestamp: 5n }));
  assert.equal(r.errorCode, 0);
  assert.equal(r.logAppendTimeMs, BigInt(b.time.milliseconds()));
  const res = await fetch(b, 12, fetchRequest(12, [{ topic: "t", partition: 0, offset: 0n }]));
  const recs = res.responses[0].partitions[0].records as Buffer;
  assert.equal(recs.readBigInt64BE(35), BigInt(b.time.milliseconds()), "maxTimestamp is the append time");
  assert.equal(recs.readInt16BE(21) & 0x08, 0x08, "timestamp type LogAppendTime");
});

test("fetch limits: whole batches, partition_max_bytes, response max_bytes, at least one batch first", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  createTopics(b, { t: 2 });
  const batch = records(10, { valueSize: 100 }); // ~1.2 KB
  const size = batch.length;
  for (let i = 0; i < 3; i++) {
    await produce(b, 9, "t", 0, records(10, { valueSize: 100 }));
    await produce(b, 9, "t", 1, records(10, { valueSize: 100 }));
  }
  // partition_max_bytes cuts at whole batches.
  let res = await fetch(
    b,
    12,
    fetchRequest(12, [{ topic: "t", partition: 0, offset: 0n, maxBytes: size * 2 + 10 }]),
  );
  assert.equal(res.responses[0].partitions[0].records?.length, size * 2);
  // A first batch larger than every limit still comes back whole (KIP-74).
  res = await fetch(
    b,
    12,
    fetchRequest(
      12,
      [
        { topic: "t", partition: 0, offset: 0n, maxBytes: 10 },
        { topic: "t", partition: 1, offset: 0n, maxBytes: 10 },
      ],
      { maxBytes: 10 },
    ),
  );
  assert.equal(res.responses[0].partitions[0].records?.length, size);
  assert.equal(
    res.responses[0].partitions[1].records?.length,
    0,
    "only the first partition gets the oversize batch",
  );
  // The response limit spans partitions.
  res = await fetch(
    b,
    12,
    fetchRequest(
      12,
      [
        { topic: "t", partition: 0, offset: 0n },
        { topic: "t", partition: 1, offset: 0n },
      ],
      { maxBytes: size * 4 },
    ),
  );
  assert.equal(res.responses[0].partitions[0].records?.length, size * 3);
  assert.equal(res.responses[0].partitions[1].records?.length, size);
  // Fetching from the middle of a batch returns that whole batch.
  res = await fetch(b, 12, fetchRequest(12, [{ topic: "t", partition: 0, offset: 15n, maxBytes: 1 }]));
  assert.equal(res.responses[0].partitions[0].records?.readBigInt64BE(0), 10n);
});

test("fetch errors: OFFSET_OUT_OF_RANGE, unknown partitions, UNKNOWN_TOPIC_ID, leader epochs; read_committed", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  createTopics(b, { t: 1 }, 4);
  await produce(b, 9, "t", 0, records(3));
  let res = await fetch(b, 12, fetchRequest(12, [{ topic: "t", partition: 0, offset: 4n }]));
  const oor = res.responses[0].partitions[0];
  assert.equal(oor.errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
  assert.equal(oor.highWatermark, -1n);
  // At the log end offset: no error, no records.
  res = await fetch(b, 12, fetchRequest(12, [{ topic: "t", partition: 0, offset: 3n }]));
  assert.equal(res.responses[0].partitions[0].errorCode, 0);
  assert.equal(res.responses[0].partitions[0].records?.length, 0);
  res = await fetch(b, 12, fetchRequest(12, [{ topic: "nope", partition: 0, offset: 0n }]));
  assert.equal(res.responses[0].partitions[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  res = await fetch(b, 13, fetchRequest(13, [{ topic: "nope", partition: 0, offset: 0n }]));
  assert.equal(res.responses[0].topicId, topicIdOf("nope"));
  assert.equal(res.responses[0].partitions[0].errorCode, ErrorCode.UNKNOWN_TOPIC_ID);
  res = await fetch(b, 12, fetchRequest(12, [{ topic: "t", partition: 0, offset: 0n, epoch: 3 }]));
  assert.equal(res.responses[0].partitions[0].errorCode, ErrorCode.FENCED_LEADER_EPOCH);
  res = await fetch(b, 12, fetchRequest(12, [{ topic: "t", partition: 0, offset: 0n, epoch: 5 }]));
  assert.equal(res.responses[0].partitions[0].errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH);
  res = await fetch(b, 12, fetchRequest(12, [{ topic: "t", partition: 0, offset: 0n, epoch: 4 }]));
  assert.equal(res.responses[0].partitions[0].errorCode, 0);
  assert.equal(
    res.responses[0].partitions[0].records?.readInt32BE(12),
    4,
    "batch stamped with the leader epoch",
  );
  res = await fetch(
    b,
    12,
    fetchRequest(12, [{ topic: "t", partition: 0, offset: 0n }], { isolationLevel: 1 }),
  );
  assert.equal(res.responses[0].partitions[0].lastStableOffset, 3n);
  assert.deepEqual(res.responses[0].partitions[0].abortedTransactions, []);
});

test("fetch long polling through the handler: woken by a produce, or empty after max_wait_ms", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  createTopics(b, { t: 1 });
  const box: { res?: FetchResponse } = {};
  void fetch(
    b,
    12,
    fetchRequest(12, [{ topic: "t", partition: 0, offset: 0n }], { maxWaitMs: 5000, minBytes: 1 }),
  ).then((r) => {
    box.res = r;
  });
  await flushMicrotasks();
  assert.equal(box.res, undefined);
  await produce(b, 9, "t", 0, records(4));
  await flushMicrotasks();
  const woken = box.res as FetchResponse | undefined;
  assert.equal(woken?.responses[0].partitions[0].highWatermark, 4n);
  assert.ok((woken?.responses[0].partitions[0].records?.length ?? 0) > 0);
  const box2: { res?: FetchResponse } = {};
  void fetch(b, 12, fetchRequest(12, [{ topic: "t", partition: 0, offset: 4n }], { maxWaitMs: 300 })).then(
    (r) => {
      box2.res = r;
    },
  );
  await b.scheduler.tick(299);
  await flushMicrotasks();
  assert.equal(box2.res, undefined);
  await b.scheduler.tick(1);
  await flushMicrotasks();
  assert.equal((box2.res as FetchResponse | undefined)?.responses[0].partitions[0].records?.length, 0);
});

test("fetch sessions: full creates a session, incremental returns only changed partitions, forgotten topics", async (t) => {
  const b = startBroker();
  t.after(() => b.cleanup());
  createTopics(b, { a: 2, c: 1 });
  for (const [topic, p] of [
    ["a", 0],
    ["a", 1],
    ["c", 0],
  ] as const)
    await produce(b, 9, topic, p, records(2));
  const v = 12;
  const parts = [
    { topic: "a", partition: 0, offset: 0n },
    { topic: "a", partition: 1, offset: 0n },
    { topic: "c", partition: 0, offset: 0n },
  ];
  const full = await fetch(b, v, fetchRequest(v, parts, { sessionId: 0, sessionEpoch: 0 }));
  assert.notEqual(full.sessionId, 0);
  assert.equal(full.responses.flatMap((x) => x.partitions).length, 3);
  const sessionId = full.sessionId;
  // Incremental, offsets moved past the data: nothing changed, nothing returned.
  const inc1 = await fetch(
    b,
    v,
    fetchRequest(
      v,
      parts.map((p) => ({ ...p, offset: 2n })),
      { sessionId, sessionEpoch: 1 },
    ),
  );
  assert.equal(inc1.errorCode, 0);
  assert.equal(inc1.sessionId, sessionId);
  assert.equal(inc1.responses.length, 0);
  // A produce to a/1: only a/1 comes back, and the request need not list any partition.
  await produce(b, 9, "a", 1, records(3));
  const inc2 = await fetch(b, v, fetchRequest(v, [], { sessionId, sessionEpoch: 2 }));
  assert.deepEqual(
    inc2.responses.map((x) => [x.topic, x.partitions.map((p) => [p.partitionIndex, p.highWatermark])]),
    [["a", [[1, 5n]]]],
  );
  // Forget topic c; a produce to c is no longer reported.
  await produce(b, 9, "c", 0, records(1));
  const forget = { ...defaultForgottenTopic(), topic: "c", partitions: [0] };
  const inc3 = await fetch(
    b,
    v,
    fetchRequest(v, [{ topic: "a", partition: 1, offset: 5n }], {
      sessionId,
      sessionEpoch: 3,
      forgottenTopicsData: [forget],
    }),
  );
  assert.equal(inc3.responses.length, 0);
  assert.equal(b.replicaManager.fetchSessionCache.get(sessionId)?.size, 2);
  // Wrong epoch, unknown session.
  const stale = await fetch(b, v, fetchRequest(v, [], { sessionId, sessionEpoch: 2 }));
  assert.equal(stale.errorCode, ErrorCode.INVALID_FETCH_SESSION_EPOCH);
  assert.equal(stale.sessionId, 0);
  const unknown = await fetch(b, v, fetchRequest(v, [], { sessionId: sessionId + 1, sessionEpoch: 1 }));
  assert.equal(unknown.errorCode, ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
  // A sessionless full request ignores forgotten topics, as Kafka does.
  const other = await fetch(
    b,
    v,
    fetchRequest(v, parts, { sessionId: 0, sessionEpoch: -1, forgottenTopicsData: [forget] }),
  );
  assert.equal(other.errorCode, 0);
  assert.equal(other.responses.flatMap((x) => x.partitions).length, 3);
  // The session still works at epoch 4; then epoch -1 closes it (sessionless full response).
  const inc4 = await fetch(b, v, fetchRequest(v, [], { sessionId, sessionEpoch: 4 }));
  assert.equal(inc4.errorCode, 0);
  const closed = await fetch(b, v, fetchRequest(v, parts, { sessionId, sessionEpoch: -1 }));
  assert.equal(closed.sessionId, 0);
  assert.equal(closed.responses.flatMap((x) => x.partitions).length, 3);
  assert.equal(b.replicaManager.fetchSessionCache.get(sessionId), undefined);
});

test("fetch sessions by topic id (v13+) and the session cache limit", async (t) => {
  const b = startBroker({
    rmConfig: { maxIncrementalFetchSessionCacheSlots: 1, fetchSessionEvictionMs: 1000 },
  });
  t.after(() => b.cleanup());
  createTopics(b, { a: 1 });
  await produce(b, 9, "a", 0, records(2));
  const v = 16;
  const full = await fetch(
    b,
    v,
    fetchRequest(v, [{ topic: "a", partition: 0, offset: 0n }], { sessionEpoch: 0 }),
  );
  assert.notEqual(full.sessionId, 0);
  assert.equal(full.responses[0].topicId, topicIdOf("a"));
  await produce(b, 9, "a", 0, records(1));
  const inc = await fetch(
    b,
    v,
    fetchRequest(v, [{ topic: "a", partition: 0, offset: 2n }], {
      sessionId: full.sessionId,
      sessionEpoch: 1,
    }),
  );
  assert.equal(inc.responses[0].topicId, topicIdOf("a"));
  assert.equal(inc.responses[0].partitions[0].highWatermark, 3n);
  // The only slot is taken and not stale: a second client fetches without a session.
  const second = await fetch(
    b,
    v,
    fetchRequest(v, [{ topic: "a", partition: 0, offset: 0n }], { sessionEpoch: 0 }),
  );
  assert.equal(second.sessionId, 0);
  assert.equal(second.responses[0].partitions[0].errorCode, 0);
  // Once the first session is idle past the eviction time, it is evicted for a new one.
  b.time.sleep(1001);
  const third = await fetch(
    b,
    v,
    fetchRequest(v, [{ topic: "a", partition: 0, offset: 0n }], { sessionEpoch: 0 }),
  );
  assert.notEqual(third.sessionId, 0);
  assert.equal(b.replicaManager.fetchSessionCache.get(full.sessionId), undefined);
  assert.equal(b.replicaManager.fetchSessionCache.evictions, 1);
  // A session by topic ids cannot be continued by a pre-v13 request.
  const mixed = await fetch(b, 12, fetchRequest(12, [], { sessionId: third.sessionId, sessionEpoch: 1 }));
  assert.equal(mixed.errorCode, ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR);
});

test("produce to a compacted topic: records without a key are rejected with record errors (v8+)", async (t) => {
  const b = startBroker({ logConfig: { cleanupPolicy: ["compact"] } });
  t.after(() => b.cleanup());
  createTopics(b, { c: 1 });
  const keyless = buildRecordBatch({
    records: [
      { key: Buffer.from("a"), value: Buffer.from("1") },
      { value: Buffer.from("2") },
      { key: null, value: null },
    ],
    compression: CompressionType.Gzip,
  });
  const r = await produce(b, 9, "c", 0, keyless);
  assert.equal(r.errorCode, ErrorCode.INVALID_RECORD);
  assert.deepEqual(
    r.recordErrors.map((e) => e.batchIndex),
    [1, 2],
  );
  assert.equal(
    r.recordErrors[0].batchIndexErrorMessage,
    "Compacted topic cannot accept message without key in topic partition c-0.",
  );
  assert.match(r.errorMessage ?? "", /One or more records have been rejected due to 2 record errors/);
  // v7 has no record errors on the wire, only the error code.
  const v7 = await produce(b, 7, "c", 0, buildRecordBatch({ records: [{ value: Buffer.from("x") }] }));
  assert.equal(v7.errorCode, ErrorCode.INVALID_RECORD);
  assert.deepEqual(v7.recordErrors, []);
  const ok = await produce(b, 9, "c", 0, records(3));
  assert.deepEqual([ok.errorCode, ok.baseOffset], [0, 0n]);
});
