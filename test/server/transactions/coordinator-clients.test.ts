// The transaction coordinator with real clients against a real broker (issue 7, "Must show"):
// confluent-kafka (librdkafka) transactional producer — init, begin, produce to several partitions,
// commit, abort — read back with confluent-kafka read_uncommitted (every record, no control record as data)
// and read_committed (only the committed ones, in order); fencing: a second producer with the same
// transactional.id fences the first, whose next operation fails with the fencing error; KafkaJS
// transactions (send + commit, send + abort); and the wire-level errors: wrong epoch, unknown transactional
// id, EndTxn with nothing added, a timeout above transaction.max.timeout.ms; AddPartitionsToTxn v4
// verify_only, Describe/ListTransactions, DescribeProducers; and a SIGKILL with a transaction open (reloaded
// from __transaction_state, then fenced and aborted by the next InitProducerId).

import assert from "node:assert/strict";
import { resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import kafkajs from "kafkajs";
import { ErrorCode } from "../../../src/protocol/errors.js";
import { Apis } from "../../../src/protocol/generated/api-table.js";
import { defaultAddPartitionsToTxnRequest } from "../../../src/protocol/generated/messages/AddPartitionsToTxnRequest.js";
import type { AddPartitionsToTxnResponse } from "../../../src/protocol/generated/messages/AddPartitionsToTxnResponse.js";
import { defaultDescribeProducersRequest } from "../../../src/protocol/generated/messages/DescribeProducersRequest.js";
import type { DescribeProducersResponse } from "../../../src/protocol/generated/messages/DescribeProducersResponse.js";
import type { DescribeTransactionsResponse } from "../../../src/protocol/generated/messages/DescribeTransactionsResponse.js";
import { defaultEndTxnRequest } from "../../../src/protocol/generated/messages/EndTxnRequest.js";
import type { EndTxnResponse } from "../../../src/protocol/generated/messages/EndTxnResponse.js";
import { defaultFindCoordinatorRequest } from "../../../src/protocol/generated/messages/FindCoordinatorRequest.js";
import type { FindCoordinatorResponse } from "../../../src/protocol/generated/messages/FindCoordinatorResponse.js";
import { defaultInitProducerIdRequest } from "../../../src/protocol/generated/messages/InitProducerIdRequest.js";
import type { InitProducerIdResponse } from "../../../src/protocol/generated/messages/InitProducerIdResponse.js";
import { defaultListTransactionsRequest } from "../../../src/protocol/generated/messages/ListTransactionsRequest.js";
import type { ListTransactionsResponse } from "../../../src/protocol/generated/messages/ListTransactionsResponse.js";
import { buildRecordBatch } from "../../../src/protocol/records/memory-records.js";
import { BrokerHarness, describeResult, runCommand, sleep, waitFor } from "../../support/broker-harness.js";
import { WireClient } from "../wire-client.js";

const { Kafka, logLevel } = kafkajs;
const PYTHON = "/usr/bin/python3";
const PRODUCER = resolve(process.cwd(), "test/server/transactions/coordinator-producer.py");
const CONSUMER = resolve(process.cwd(), "test/server/transactions/log-side-consumer.py");

interface Consumed {
  p: number;
  o: number;
  v: string;
}

describe("transaction coordinator with real clients", { timeout: 300_000 }, () => {
  let broker: BrokerHarness;
  let kafka: kafkajs.Kafka;

  before(async () => {
    broker = await BrokerHarness.start({ name: "txn-coordinator-clients" });
    kafka = new Kafka({
      clientId: "txn-coordinator-test",
      brokers: [broker.bootstrap],
      logLevel: logLevel.NOTHING,
      retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 },
    });
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.createTopics({
        topics: ["txn-cf", "txn-fence", "txn-kjs", "txn-wire"].map((topic) => ({
          topic,
          numPartitions: 3,
          replicationFactor: 1,
        })),
      });
    } finally {
      await admin.disconnect();
    }
  });

  after(async () => {
    // The coordinator logged no error while the clients ran (markers, appends, loads).
    const errors = broker?.errorLines.filter((l) => /transaction/i.test(l)) ?? [];
    await broker?.close();
    assert.deepEqual(errors, []);
  });

  async function consume(
    topic: string,
    isolation: "read_committed" | "read_uncommitted",
  ): Promise<Consumed[]> {
    const r = await runCommand(PYTHON, [CONSUMER, broker.bootstrap, topic, "3", isolation, "4", "30"], {
      timeoutMs: 60_000,
    });
    assert.equal(r.code, 0, describeResult(`consume ${topic} ${isolation}`, r));
    return r.stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Consumed);
  }

  function valuesByPartition(records: readonly Consumed[]): Map<number, string[]> {
    const m = new Map<number, string[]>();
    for (const r of [...records].sort((a, b) => a.o - b.o)) {
      const l = m.get(r.p) ?? [];
      l.push(r.v);
      m.set(r.p, l);
    }
    return m;
  }

  function expected(prefixes: readonly string[]): Map<number, string[]> {
    const m = new Map<number, string[]>();
    for (const prefix of prefixes)
      for (let i = 0; i < 6; i++) {
        const l = m.get(i % 3) ?? [];
        l.push(`${prefix}-${i}`);
        m.set(i % 3, l);
      }
    return m;
  }

  async function producer(topic: string, txnId: string, mode: string): Promise<Record<string, unknown>> {
    const r = await runCommand(PYTHON, [PRODUCER, broker.bootstrap, topic, txnId, mode], {
      timeoutMs: 120_000,
    });
    assert.equal(r.code, 0, describeResult(`coordinator-producer ${mode}`, r));
    return JSON.parse(r.stdout.trim().split("\n").at(-1) ?? "{}");
  }

  test("confluent-kafka: commit, abort, commit; read_uncommitted sees all, read_committed the committed", async () => {
    await producer("txn-cf", "cf-txn", "commit-abort");
    const all = await consume("txn-cf", "read_uncommitted");
    assert.deepEqual(valuesByPartition(all), expected(["c1", "a1", "c2"]));
    // Each transaction leaves one control batch per partition: offsets skip over them.
    for (const [p, recs] of valuesByPartition(all)) assert.equal(recs.length, 6, `partition ${p}`);
    const offsets = all
      .filter((r) => r.p === 0)
      .map((r) => r.o)
      .sort((a, b) => a - b);
    assert.deepEqual(offsets, [0, 1, 3, 4, 6, 7]);
    const committed = await consume("txn-cf", "read_committed");
    assert.deepEqual(valuesByPartition(committed), expected(["c1", "c2"]));
  });

  test("fencing: a second producer with the same transactional.id fences the first", async () => {
    const result = await producer("txn-fence", "fence-txn", "fence");
    const error = result.fencedError as { name: string; fatal: boolean } | null;
    assert.ok(error !== null, "producer 1 was not fenced");
    assert.ok(
      ["_FENCED", "PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH"].includes(error.name),
      JSON.stringify(error),
    );
    const committed = await consume("txn-fence", "read_committed");
    assert.deepEqual(valuesByPartition(committed), expected(["f2"]));
    const all = await consume("txn-fence", "read_uncommitted");
    assert.ok(!all.some((r) => r.v === "f1-late"), "the fenced producer's late record was written");
  });

  test("KafkaJS transactions: send + commit, send + abort", async () => {
    const p = kafka.producer({ transactionalId: "kjs-txn", idempotent: true, maxInFlightRequests: 1 });
    await p.connect();
    try {
      const t1 = await p.transaction();
      await t1.send({
        topic: "txn-kjs",
        messages: [0, 1, 2].map((i) => ({ value: `k1-${i}`, partition: i })),
      });
      await t1.commit();
      const t2 = await p.transaction();
      await t2.send({
        topic: "txn-kjs",
        messages: [0, 1, 2].map((i) => ({ value: `ka-${i}`, partition: i })),
      });
      await t2.abort();
      const t3 = await p.transaction();
      await t3.send({ topic: "txn-kjs", messages: [{ value: "k2-0", partition: 0 }] });
      await t3.commit();
    } finally {
      await p.disconnect();
    }
    const committed = valuesByPartition(await consume("txn-kjs", "read_committed"));
    assert.deepEqual(committed.get(0), ["k1-0", "k2-0"]);
    assert.deepEqual(committed.get(1), ["k1-1"]);
    assert.deepEqual(committed.get(2), ["k1-2"]);
    const all = valuesByPartition(await consume("txn-kjs", "read_uncommitted"));
    assert.deepEqual(all.get(0), ["k1-0", "ka-0", "k2-0"]);
  });

  test("wire errors: timeout above max, unknown id, wrong epoch, nothing added; PRODUCER_FENCED by version", async () => {
    const c = await WireClient.connect(broker.port);
    try {
      const txnId = "wire-txn";
      const find = await waitFor("a transaction coordinator", 20_000, async () => {
        const r: FindCoordinatorResponse = await c.request(Apis.FindCoordinator, 4, {
          ...defaultFindCoordinatorRequest(),
          keyType: 1,
          coordinatorKeys: [txnId],
        });
        const co = r.coordinators[0];
        if (co.errorCode === ErrorCode.NONE) return co;
        await sleep(200);
        return undefined;
      });
      assert.equal(find.nodeId, 0);
      assert.equal(find.port, broker.port);
      const init = async (timeoutMs: number, version = 4): Promise<InitProducerIdResponse> =>
        waitFor("InitProducerId", 20_000, async () => {
          const r: InitProducerIdResponse = await c.request(Apis.InitProducerId, version, {
            ...defaultInitProducerIdRequest(),
            transactionalId: txnId,
            transactionTimeoutMs: timeoutMs,
          });
          if (
            r.errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS ||
            r.errorCode === ErrorCode.CONCURRENT_TRANSACTIONS
          ) {
            await sleep(100);
            return undefined;
          }
          return r;
        });
      assert.equal((await init(900_001)).errorCode, ErrorCode.INVALID_TRANSACTION_TIMEOUT);
      const ok = await init(60_000);
      assert.equal(ok.errorCode, ErrorCode.NONE);
      const { producerId, producerEpoch } = ok;

      const endTxn = (id: string, pid: bigint, epoch: number, version = 3): Promise<EndTxnResponse> =>
        c.request(Apis.EndTxn, version, {
          ...defaultEndTxnRequest(),
          transactionalId: id,
          producerId: pid,
          producerEpoch: epoch,
          committed: true,
        });
      const addPartitions = (
        id: string,
        pid: bigint,
        epoch: number,
        version = 3,
      ): Promise<AddPartitionsToTxnResponse> =>
        c.request(Apis.AddPartitionsToTxn, version, {
          ...defaultAddPartitionsToTxnRequest(),
          v3AndBelowTransactionalId: id,
          v3AndBelowProducerId: pid,
          v3AndBelowProducerEpoch: epoch,
          v3AndBelowTopics: [{ name: "txn-wire", partitions: [0, 1] }],
        });
      const codes = (r: AddPartitionsToTxnResponse): number[] =>
        r.resultsByTopicV3AndBelow.flatMap((t) => t.resultsByPartition.map((p) => p.partitionErrorCode));

      // EndTxn with nothing added (Empty): INVALID_TXN_STATE.
      assert.equal((await endTxn(txnId, producerId, producerEpoch)).errorCode, ErrorCode.INVALID_TXN_STATE);
      // An unknown transactional id: no producer id mapping (every __transaction_state partition is loaded
      // by now: they were all created and led at once).
      assert.equal(
        (await endTxn("wire-unknown", producerId, 0)).errorCode,
        ErrorCode.INVALID_PRODUCER_ID_MAPPING,
      );
      assert.deepEqual(codes(await addPartitions("wire-unknown", producerId, 0)), [
        ErrorCode.INVALID_PRODUCER_ID_MAPPING,
        ErrorCode.INVALID_PRODUCER_ID_MAPPING,
      ]);
      // A wrong epoch: PRODUCER_FENCED from v2, INVALID_PRODUCER_EPOCH before.
      assert.deepEqual(codes(await addPartitions(txnId, producerId, producerEpoch + 1)), [
        ErrorCode.PRODUCER_FENCED,
        ErrorCode.PRODUCER_FENCED,
      ]);
      assert.deepEqual(codes(await addPartitions(txnId, producerId, producerEpoch + 1, 1)), [
        ErrorCode.INVALID_PRODUCER_EPOCH,
        ErrorCode.INVALID_PRODUCER_EPOCH,
      ]);
      assert.equal((await endTxn(txnId, producerId, producerEpoch + 1)).errorCode, ErrorCode.PRODUCER_FENCED);
      assert.equal(
        (await endTxn(txnId, producerId, producerEpoch + 1, 1)).errorCode,
        ErrorCode.INVALID_PRODUCER_EPOCH,
      );
      assert.deepEqual(codes(await addPartitions(txnId, producerId + 1n, producerEpoch)), [
        ErrorCode.INVALID_PRODUCER_ID_MAPPING,
        ErrorCode.INVALID_PRODUCER_ID_MAPPING,
      ]);
      // An unknown topic: UNKNOWN_TOPIC_OR_PARTITION, the others OPERATION_NOT_ATTEMPTED.
      const mixed: AddPartitionsToTxnResponse = await c.request(Apis.AddPartitionsToTxn, 3, {
        ...defaultAddPartitionsToTxnRequest(),
        v3AndBelowTransactionalId: txnId,
        v3AndBelowProducerId: producerId,
        v3AndBelowProducerEpoch: producerEpoch,
        v3AndBelowTopics: [
          { name: "txn-wire", partitions: [0] },
          { name: "no-such-topic", partitions: [0] },
        ],
      });
      assert.deepEqual(codes(mixed), [
        ErrorCode.OPERATION_NOT_ATTEMPTED,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      ]);
      assert.deepEqual(codes(await addPartitions(txnId, producerId, producerEpoch)), [
        ErrorCode.NONE,
        ErrorCode.NONE,
      ]);
      // KIP-890 part 1 (v4, the brokers' form): verify_only checks membership without adding.
      const verified: AddPartitionsToTxnResponse = await c.request(Apis.AddPartitionsToTxn, 4, {
        ...defaultAddPartitionsToTxnRequest(),
        transactions: [
          {
            transactionalId: txnId,
            producerId,
            producerEpoch,
            verifyOnly: true,
            topics: [{ name: "txn-wire", partitions: [0, 2] }],
          },
        ],
      });
      assert.equal(verified.errorCode, ErrorCode.NONE);
      assert.deepEqual(
        verified.resultsByTransaction[0].topicResults[0].resultsByPartition.map((p) => p.partitionErrorCode),
        [ErrorCode.NONE, ErrorCode.INVALID_TXN_STATE],
      );
      // KIP-890 part 1 on the produce path: a transactional batch for a partition outside the producer's
      // ongoing transaction (2) is INVALID_TXN_STATE and not written; one for an added partition (0) lands.
      const produceTxn = async (partition: number, epoch = producerEpoch): Promise<number> => {
        const records = buildRecordBatch({
          records: [{ value: Buffer.from(`verify-${partition}`) }],
          producerId,
          producerEpoch: epoch,
          baseSequence: 0,
          isTransactional: true,
        });
        const r = await c.request(Apis.Produce, 9, {
          transactionalId: txnId,
          acks: -1,
          timeoutMs: 5000,
          topicData: [{ name: "txn-wire", partitionData: [{ index: partition, records }] }],
        });
        return r.responses[0].partitionResponses[0].errorCode;
      };
      assert.equal(await produceTxn(2), ErrorCode.INVALID_TXN_STATE);
      // A producer whose epoch the coordinator does not have is fenced: on produce Kafka answers
      // INVALID_PRODUCER_EPOCH (47), not the coordinator's PRODUCER_FENCED (90).
      assert.equal(await produceTxn(2, producerEpoch + 1), ErrorCode.INVALID_PRODUCER_EPOCH);
      assert.equal(await produceTxn(0), ErrorCode.NONE);
      const describe = async (): Promise<DescribeTransactionsResponse> =>
        c.request(Apis.DescribeTransactions, 0, { transactionalIds: [txnId, "wire-unknown"] });
      const ongoing = await describe();
      assert.equal(ongoing.transactionStates[0].transactionState, "Ongoing");
      assert.equal(ongoing.transactionStates[0].producerId, producerId);
      assert.equal(ongoing.transactionStates[0].transactionTimeoutMs, 60_000);
      assert.deepEqual(
        ongoing.transactionStates[0].topics.map((t) => [t.topic, t.partitions]),
        [["txn-wire", [0, 1]]],
      );
      assert.equal(ongoing.transactionStates[1].errorCode, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND);
      assert.equal((await endTxn(txnId, producerId, producerEpoch)).errorCode, ErrorCode.NONE);
      await waitFor("CompleteCommit", 10_000, async () =>
        (await describe()).transactionStates[0].transactionState === "CompleteCommit" ? true : undefined,
      );
      const listed: ListTransactionsResponse = await c.request(Apis.ListTransactions, 1, {
        ...defaultListTransactionsRequest(),
        stateFilters: ["CompleteCommit", "Bogus"],
      });
      assert.equal(listed.errorCode, ErrorCode.NONE);
      assert.deepEqual(listed.unknownStateFilters, ["Bogus"]);
      assert.ok(
        listed.transactionStates.some((t) => t.transactionalId === txnId && t.producerId === producerId),
      );
      assert.ok(listed.transactionStates.every((t) => t.transactionState === "CompleteCommit"));
      // DescribeProducers: the confluent-kafka transactional producer of txn-cf, no transaction open.
      const producers: DescribeProducersResponse = await c.request(Apis.DescribeProducers, 0, {
        ...defaultDescribeProducersRequest(),
        topics: [
          { name: "txn-cf", partitionIndexes: [0] },
          { name: "no-such-topic", partitionIndexes: [0] },
        ],
      });
      const p0 = producers.topics[0].partitions[0];
      assert.equal(p0.errorCode, ErrorCode.NONE);
      assert.ok(p0.activeProducers.length >= 1, "no active producer on txn-cf-0");
      assert.ok(p0.activeProducers.every((p) => p.currentTxnStartOffset === -1n && p.lastSequence >= 0));
      assert.equal(producers.topics[1].partitions[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      // A new session bumps the epoch; the old epoch is fenced (v3 of InitProducerId: INVALID_PRODUCER_EPOCH).
      const next = await init(60_000);
      assert.deepEqual(
        [next.errorCode, next.producerId, next.producerEpoch],
        [ErrorCode.NONE, producerId, producerEpoch + 1],
      );
      const stale: InitProducerIdResponse = await c.request(Apis.InitProducerId, 3, {
        ...defaultInitProducerIdRequest(),
        transactionalId: txnId,
        transactionTimeoutMs: 60_000,
        producerId: producerId + 7n,
        producerEpoch: 0,
      });
      assert.equal(stale.errorCode, ErrorCode.INVALID_PRODUCER_EPOCH);
    } finally {
      c.close();
    }
  });
  test("SIGKILL with a transaction open: reloaded from __transaction_state, fenced and aborted on the next init", async () => {
    const txnId = "restart-txn";
    const initOnce = async (c: WireClient): Promise<InitProducerIdResponse> =>
      c.request(Apis.InitProducerId, 4, {
        ...defaultInitProducerIdRequest(),
        transactionalId: txnId,
        transactionTimeoutMs: 120_000,
      });
    const initRetrying = (c: WireClient): Promise<InitProducerIdResponse> =>
      waitFor("InitProducerId", 30_000, async () => {
        const r = await initOnce(c);
        if (
          r.errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS ||
          r.errorCode === ErrorCode.NOT_COORDINATOR
        ) {
          await sleep(100);
          return undefined;
        }
        return r;
      });
    let c = await WireClient.connect(broker.port);
    let producerId: bigint;
    try {
      const init = await initRetrying(c);
      assert.equal(init.errorCode, ErrorCode.NONE);
      producerId = init.producerId;
      const added: AddPartitionsToTxnResponse = await c.request(Apis.AddPartitionsToTxn, 3, {
        ...defaultAddPartitionsToTxnRequest(),
        v3AndBelowTransactionalId: txnId,
        v3AndBelowProducerId: producerId,
        v3AndBelowProducerEpoch: init.producerEpoch,
        v3AndBelowTopics: [{ name: "txn-wire", partitions: [2] }],
      });
      assert.equal(
        added.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode,
        ErrorCode.NONE,
      );
    } finally {
      c.close();
    }
    await broker.stop("SIGKILL");
    await broker.restart();
    c = await WireClient.connect(broker.port);
    try {
      const describe = async (): Promise<DescribeTransactionsResponse> =>
        c.request(Apis.DescribeTransactions, 0, { transactionalIds: [txnId] });
      const reloaded = await waitFor("the transaction reloaded", 30_000, async () => {
        const r = (await describe()).transactionStates[0];
        if (r.errorCode !== ErrorCode.NONE) {
          await sleep(100);
          return undefined;
        }
        return r;
      });
      assert.equal(reloaded.transactionState, "Ongoing");
      assert.equal(reloaded.producerId, producerId);
      assert.deepEqual(
        reloaded.topics.map((t) => [t.topic, t.partitions]),
        [["txn-wire", [2]]],
      );
      // The new session fences the open transaction: aborted, then the client's retry gets epoch 2.
      assert.equal((await initRetrying(c)).errorCode, ErrorCode.CONCURRENT_TRANSACTIONS);
      const next = await waitFor("InitProducerId after the abort", 30_000, async () => {
        const r = await initOnce(c);
        if (r.errorCode === ErrorCode.CONCURRENT_TRANSACTIONS) {
          await sleep(100);
          return undefined;
        }
        return r;
      });
      assert.deepEqual(
        [next.errorCode, next.producerId, next.producerEpoch],
        [ErrorCode.NONE, producerId, 2],
      );
      assert.equal((await describe()).transactionStates[0].transactionState, "Empty");
    } finally {
      c.close();
    }
  });
});
