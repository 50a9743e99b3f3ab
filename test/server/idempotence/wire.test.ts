// Idempotent producers at the wire level against a real broker: InitProducerId (ids from blocks of 1000
// claimed in /latest_producer_id_block with Kafka's JSON, a new block after a restart, the transactional
// and malformed cases), and Produce with producer ids: a retried batch answered with its original base
// offset and written once, a sequence gap → OUT_OF_ORDER_SEQUENCE_NUMBER, an older epoch →
// INVALID_PRODUCER_EPOCH, a new epoch starting at 0; duplicate detection surviving a clean restart (from the
// snapshot) and a SIGKILL (rebuilt from the log).

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { SYSTEM_TIME } from "../../../src/common/time.js";
import { ErrorCode } from "../../../src/protocol/errors.js";
import { Apis } from "../../../src/protocol/generated/api-table.js";
import {
  defaultCreatableTopic,
  defaultCreateTopicsRequest,
} from "../../../src/protocol/generated/messages/CreateTopicsRequest.js";
import { defaultInitProducerIdRequest } from "../../../src/protocol/generated/messages/InitProducerIdRequest.js";
import type { InitProducerIdResponse } from "../../../src/protocol/generated/messages/InitProducerIdResponse.js";
import {
  defaultPartitionProduceData,
  defaultProduceRequest,
  defaultTopicProduceData,
} from "../../../src/protocol/generated/messages/ProduceRequest.js";
import { buildRecordBatch } from "../../../src/protocol/records/index.js";
import { EmbeddedMetadataStore } from "../../../src/server/metadata/embedded-metadata-store.js";
import { BrokerHarness, readWithKcat } from "../../support/broker-harness.js";
import { WireClient } from "../wire-client.js";

const TOPIC = "idem-wire";

function batch(pid: bigint, epoch: number, seq: number, count: number, tag: string): Buffer {
  return buildRecordBatch({
    records: Array.from({ length: count }, (_, i) => ({
      key: Buffer.from(`${tag}-${seq + i}`),
      value: Buffer.from(`v${seq + i}`),
    })),
    timestamp: BigInt(Date.now()),
    producerId: pid,
    producerEpoch: epoch,
    baseSequence: seq,
  });
}

describe("idempotent produce on the wire", { timeout: 120_000 }, () => {
  let broker: BrokerHarness;

  async function withClient<T>(fn: (c: WireClient) => Promise<T>): Promise<T> {
    const c = await WireClient.connect(broker.port);
    try {
      return await fn(c);
    } finally {
      c.close();
    }
  }

  function initProducerId(body: Partial<ReturnType<typeof defaultInitProducerIdRequest>> = {}, version = 4) {
    return withClient(
      (c): Promise<InitProducerIdResponse> =>
        c.request(Apis.InitProducerId, version, {
          ...defaultInitProducerIdRequest(),
          transactionTimeoutMs: 60_000,
          ...body,
        }),
    );
  }

  async function produce(records: Buffer): Promise<{ errorCode: number; baseOffset: bigint }> {
    return withClient(async (c) => {
      const res = await c.request(Apis.Produce, 9, {
        ...defaultProduceRequest(),
        acks: -1,
        timeoutMs: 10_000,
        topicData: [
          {
            ...defaultTopicProduceData(),
            name: TOPIC,
            partitionData: [{ ...defaultPartitionProduceData(), index: 0, records }],
          },
        ],
      });
      const p = res.responses[0].partitionResponses[0];
      return { errorCode: p.errorCode, baseOffset: p.baseOffset };
    });
  }

  before(async () => {
    broker = await BrokerHarness.start({ name: "idempotence-wire" });
    await withClient(async (c) => {
      const res = await c.request(Apis.CreateTopics, 5, {
        ...defaultCreateTopicsRequest(),
        timeoutMs: 10_000,
        topics: [{ ...defaultCreatableTopic(), name: TOPIC, numPartitions: 1, replicationFactor: 1 }],
      });
      assert.equal(res.topics[0].errorCode, 0);
    });
  });
  after(async () => {
    await broker?.close();
  });

  test("InitProducerId: consecutive ids with epoch 0 for idempotent producers; Kafka's errors otherwise", async () => {
    const a = await initProducerId({ transactionalId: null });
    const b = await initProducerId({ transactionalId: null }, 0);
    assert.equal(a.errorCode, 0);
    assert.equal(a.producerEpoch, 0);
    assert.equal(b.errorCode, 0);
    assert.equal(b.producerId, a.producerId + 1n);
    // Without a transaction coordinator the transactional id has no coordinator here.
    const txn = await initProducerId({ transactionalId: "txn-1" });
    assert.deepEqual(
      [txn.errorCode, txn.producerId, txn.producerEpoch],
      [ErrorCode.NOT_COORDINATOR, -1n, -1],
    );
    const tooLong = await initProducerId({ transactionalId: "txn-1", transactionTimeoutMs: 900_001 });
    assert.equal(tooLong.errorCode, ErrorCode.INVALID_TRANSACTION_TIMEOUT);
    // The timeout is not checked without a transactional id.
    assert.equal(
      (await initProducerId({ transactionalId: null, transactionTimeoutMs: 900_001 })).errorCode,
      0,
    );
    assert.equal((await initProducerId({ transactionalId: "" })).errorCode, ErrorCode.INVALID_REQUEST);
    const half = await initProducerId({ transactionalId: null, producerId: 5n, producerEpoch: -1 });
    assert.equal(half.errorCode, ErrorCode.INVALID_REQUEST);
  });

  test("Produce: retries answered with the original offset, gaps and old epochs refused; state survives restarts", async () => {
    const { producerId: pid } = await initProducerId({ transactionalId: null });
    const first = batch(pid, 0, 0, 3, "a");
    const r0 = await produce(Buffer.from(first));
    assert.deepEqual(r0, { errorCode: 0, baseOffset: 0n });
    const r1 = await produce(batch(pid, 0, 3, 2, "a"));
    assert.deepEqual(r1, { errorCode: 0, baseOffset: 3n });
    // The retry of the first batch: NONE with its original base offset, nothing written.
    assert.deepEqual(await produce(Buffer.from(first)), { errorCode: 0, baseOffset: 0n });
    // A gap: 5 expected.
    const gap = await produce(batch(pid, 0, 7, 1, "a"));
    assert.equal(gap.errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    // A new epoch must start at 0; then the old epoch is fenced.
    assert.equal((await produce(batch(pid, 1, 5, 1, "b"))).errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    assert.deepEqual(await produce(batch(pid, 1, 0, 2, "b")), { errorCode: 0, baseOffset: 5n });
    assert.equal((await produce(batch(pid, 0, 5, 1, "a"))).errorCode, ErrorCode.INVALID_PRODUCER_EPOCH);

    // A clean restart: the shutdown snapshot keeps the state.
    const last = batch(pid, 1, 2, 2, "b");
    assert.deepEqual(await produce(Buffer.from(last)), { errorCode: 0, baseOffset: 7n });
    await broker.restart();
    assert.deepEqual(await produce(Buffer.from(last)), { errorCode: 0, baseOffset: 7n });
    assert.equal((await produce(batch(pid, 1, 9, 1, "b"))).errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    // A crash: no shutdown snapshot; the state is rebuilt from the log.
    const next = batch(pid, 1, 4, 1, "b");
    assert.deepEqual(await produce(Buffer.from(next)), { errorCode: 0, baseOffset: 9n });
    await broker.stop("SIGKILL");
    await broker.restart();
    assert.deepEqual(await produce(Buffer.from(next)), { errorCode: 0, baseOffset: 9n });
    assert.equal((await produce(batch(pid, 0, 0, 1, "a"))).errorCode, ErrorCode.INVALID_PRODUCER_EPOCH);

    const keys = (await readWithKcat(broker.bootstrap, TOPIC)).map((m) => m.key);
    assert.deepEqual(keys, ["a-0", "a-1", "a-2", "a-3", "a-4", "b-0", "b-1", "b-2", "b-3", "b-4"]);
  });

  test("producer id blocks: /latest_producer_id_block holds Kafka's JSON; a restarted broker claims the next block", async () => {
    const before = await initProducerId({ transactionalId: null });
    assert.ok(before.producerId >= 1000n, `a new block after the restarts, got ${before.producerId}`);
    await broker.stop("SIGTERM");
    const store = await EmbeddedMetadataStore.open(broker.logDir, SYSTEM_TIME);
    try {
      const node = await store.get("/latest_producer_id_block");
      assert.ok(node);
      const start = before.producerId - (before.producerId % 1000n);
      assert.deepEqual(JSON.parse(node.data.toString("utf8")), {
        version: 1,
        broker: 0,
        block_start: String(start),
        block_end: String(start + 999n),
      });
    } finally {
      await store.close();
    }
    await broker.restart();
    const after = await initProducerId({ transactionalId: null });
    assert.equal(after.producerId, before.producerId - (before.producerId % 1000n) + 1000n);
  });
});
