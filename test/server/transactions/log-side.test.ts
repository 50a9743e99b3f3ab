// Transactions on the log side over the wire, against a real broker: transactional batches built here
// (producer ids from InitProducerId), ended with WriteTxnMarkers requests sent by the test (as the
// transaction coordinator would), then read by real clients: confluent-kafka read_committed sees exactly
// the committed records in order and never an aborted one, read_uncommitted (confluent-kafka and kcat)
// sees both and no control record as data; an open transaction holds read_committed readers at its first
// offset (ListOffsets latest = LSO, a long-polling Fetch wakes when the marker arrives); WriteTxnMarkers
// errors are Kafka's; a clean restart and a SIGKILL keep it all (.txnindex, open transactions, the LSO).

import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import kafkajs from "kafkajs";
import { ErrorCode } from "../../../src/protocol/errors.js";
import { Apis } from "../../../src/protocol/generated/api-table.js";
import {
  defaultCreatableTopic,
  defaultCreateTopicsRequest,
} from "../../../src/protocol/generated/messages/CreateTopicsRequest.js";
import {
  defaultFetchPartition,
  defaultFetchRequest,
  defaultFetchTopic,
} from "../../../src/protocol/generated/messages/FetchRequest.js";
import type { PartitionData } from "../../../src/protocol/generated/messages/FetchResponse.js";
import { defaultInitProducerIdRequest } from "../../../src/protocol/generated/messages/InitProducerIdRequest.js";
import {
  defaultListOffsetsPartition,
  defaultListOffsetsRequest,
  defaultListOffsetsTopic,
} from "../../../src/protocol/generated/messages/ListOffsetsRequest.js";
import {
  defaultPartitionProduceData,
  defaultProduceRequest,
  defaultTopicProduceData,
} from "../../../src/protocol/generated/messages/ProduceRequest.js";
import {
  buildEndTxnMarkerBatch,
  buildRecordBatch,
  ControlRecordType,
  decodeRecordBatches,
} from "../../../src/protocol/records/index.js";
import {
  BrokerHarness,
  describeResult,
  KCAT_FORMAT,
  parseKcat,
  runCommand,
  startCommand,
  waitFor,
  withDeadline,
} from "../../support/broker-harness.js";
import { WireClient } from "../wire-client.js";

const { Kafka, logLevel } = kafkajs;

const TOPIC = "txn-log-side";
const PARTITIONS = 3;
const CONSUMER_PY = join(process.cwd(), "test/server/transactions/log-side-consumer.py");

interface Rec {
  p: number;
  o: number;
  v: string;
  t: number;
}

describe("transactions, log side, over the wire", { timeout: 240_000 }, () => {
  let broker: BrokerHarness;
  let client: WireClient;
  const seqs = new Map<string, number>();

  async function connect(): Promise<void> {
    client?.close();
    client = await WireClient.connect(broker.port);
  }

  async function newProducerId(): Promise<bigint> {
    const r = await client.request(Apis.InitProducerId, 4, {
      ...defaultInitProducerIdRequest(),
      transactionalId: null,
      transactionTimeoutMs: 60_000,
    });
    assert.equal(r.errorCode, 0);
    return r.producerId;
  }

  /** A transactional batch continuing the producer's sequence in the partition. */
  function txnBatch(pid: bigint, partition: number, values: string[], epoch = 0): Buffer {
    const key = `${pid}/${epoch}/${partition}`;
    const seq = seqs.get(key) ?? 0;
    seqs.set(key, seq + values.length);
    return buildRecordBatch({
      records: values.map((v) => ({ key: null, value: Buffer.from(v) })),
      timestamp: BigInt(Date.now()),
      producerId: pid,
      producerEpoch: epoch,
      baseSequence: seq,
      isTransactional: true,
    });
  }

  function plain(values: string[]): Buffer {
    return buildRecordBatch({
      records: values.map((v) => ({ key: null, value: Buffer.from(v) })),
      timestamp: BigInt(Date.now()),
    });
  }

  async function produce(partition: number, records: Buffer, topic = TOPIC) {
    const res = await client.request(Apis.Produce, 9, {
      ...defaultProduceRequest(),
      acks: -1,
      timeoutMs: 10_000,
      topicData: [
        {
          ...defaultTopicProduceData(),
          name: topic,
          partitionData: [{ ...defaultPartitionProduceData(), index: partition, records }],
        },
      ],
    });
    const p = res.responses[0].partitionResponses[0];
    return { errorCode: p.errorCode, baseOffset: p.baseOffset, errorMessage: p.errorMessage };
  }

  async function produceOk(partition: number, records: Buffer): Promise<bigint> {
    const r = await produce(partition, records);
    assert.equal(r.errorCode, 0, r.errorMessage ?? "");
    return r.baseOffset;
  }

  /** WriteTxnMarkers (v1) for one producer; returns "topic-partition" → error code. */
  async function writeMarker(
    pid: bigint,
    commit: boolean,
    partitions: Array<[string, number]>,
    opts: { epoch?: number; coordinatorEpoch?: number; version?: number } = {},
  ): Promise<Map<string, number>> {
    const byTopic = new Map<string, number[]>();
    for (const [t, p] of partitions) byTopic.set(t, [...(byTopic.get(t) ?? []), p]);
    const res = await client.request(Apis.WriteTxnMarkers, opts.version ?? 1, {
      markers: [
        {
          producerId: pid,
          producerEpoch: opts.epoch ?? 0,
          transactionResult: commit,
          coordinatorEpoch: opts.coordinatorEpoch ?? 0,
          topics: [...byTopic].map(([name, partitionIndexes]) => ({ name, partitionIndexes })),
        },
      ],
    });
    assert.equal(res.markers.length, 1);
    assert.equal(res.markers[0].producerId, pid);
    const out = new Map<string, number>();
    for (const t of res.markers[0].topics)
      for (const p of t.partitions) out.set(`${t.name}-${p.partitionIndex}`, p.errorCode);
    return out;
  }

  async function latestOffset(partition: number, isolationLevel: 0 | 1): Promise<bigint> {
    const res = await client.request(Apis.ListOffsets, 7, {
      ...defaultListOffsetsRequest(),
      replicaId: -1,
      isolationLevel,
      topics: [
        {
          ...defaultListOffsetsTopic(),
          name: TOPIC,
          partitions: [{ ...defaultListOffsetsPartition(), partitionIndex: partition, timestamp: -1n }],
        },
      ],
    });
    const p = res.topics[0].partitions[0];
    assert.equal(p.errorCode, 0);
    return p.offset;
  }

  async function fetch(
    c: WireClient,
    partition: number,
    fetchOffset: bigint,
    isolationLevel: 0 | 1,
    maxWaitMs = 0,
  ): Promise<PartitionData> {
    const res = await c.request(Apis.Fetch, 12, {
      ...defaultFetchRequest(),
      maxWaitMs,
      minBytes: 1,
      isolationLevel,
      topics: [
        {
          ...defaultFetchTopic(),
          topic: TOPIC,
          partitions: [{ ...defaultFetchPartition(), partition, fetchOffset, partitionMaxBytes: 1 << 20 }],
        },
      ],
    });
    const p = res.responses[0].partitions[0];
    assert.equal(p.errorCode, 0);
    return p;
  }

  async function confluentRead(isolation: string, idleS = 4): Promise<Rec[]> {
    const r = await runCommand(
      "/usr/bin/python3",
      [CONSUMER_PY, broker.bootstrap, TOPIC, String(PARTITIONS), isolation, String(idleS), "60"],
      { timeoutMs: 90_000 },
    );
    assert.equal(r.code, 0, describeResult("confluent consumer", r));
    return parseRecs(r.stdout);
  }

  function parseRecs(stdout: string): Rec[] {
    return stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Rec);
  }

  async function kcatRead(isolation: string) {
    const r = await runCommand(
      "/usr/bin/kcat",
      [
        "-b",
        broker.bootstrap,
        "-C",
        "-t",
        TOPIC,
        "-o",
        "beginning",
        "-e",
        "-q",
        "-X",
        `isolation.level=${isolation}`,
        "-f",
        KCAT_FORMAT,
      ],
      { timeoutMs: 30_000 },
    );
    assert.equal(r.code, 0, describeResult("kcat", r));
    return parseKcat(r.stdout);
  }

  /** Values per partition, in offset order. */
  function byPartition(recs: ReadonlyArray<{ p: number; o: number; v: string }>): string[][] {
    const out: string[][] = Array.from({ length: PARTITIONS }, () => []);
    const sorted = [...recs].sort((a, b) => a.p - b.p || a.o - b.o);
    for (const r of sorted) out[r.p].push(r.v);
    return out;
  }

  // What each partition holds, in log order, as data records: committed, aborted or plain.
  const committedView: string[][] = Array.from({ length: PARTITIONS }, () => []);
  const uncommittedView: string[][] = Array.from({ length: PARTITIONS }, () => []);
  const abortedFirst: Array<{ producerId: bigint; firstOffset: bigint }[]> = Array.from(
    { length: PARTITIONS },
    () => [],
  );

  before(async () => {
    broker = await BrokerHarness.start({ name: "txn-log-side" });
    await connect();
    const res = await client.request(Apis.CreateTopics, 5, {
      ...defaultCreateTopicsRequest(),
      timeoutMs: 10_000,
      topics: [{ ...defaultCreatableTopic(), name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 1 }],
    });
    assert.equal(res.topics[0].errorCode, 0);
  });
  after(async () => {
    client?.close();
    await broker?.close();
  });

  test("one transaction committed, one aborted over 3 partitions: read_committed sees exactly the committed records", async () => {
    const a = await newProducerId();
    const b = await newProducerId();
    for (let p = 0; p < PARTITIONS; p++) {
      const pre = [`pre-${p}`];
      await produceOk(p, plain(pre));
      const a1 = [`A-${p}-0`, `A-${p}-1`];
      const b1 = [`B-${p}-0`];
      const a2 = [`A-${p}-2`];
      const b2 = [`B-${p}-1`, `B-${p}-2`];
      await produceOk(p, txnBatch(a, p, a1));
      const bFirst = await produceOk(p, txnBatch(b, p, b1));
      await produceOk(p, txnBatch(a, p, a2));
      await produceOk(p, txnBatch(b, p, b2));
      committedView[p].push(...pre, ...a1, ...a2);
      uncommittedView[p].push(...pre, ...a1, ...b1, ...a2, ...b2);
      abortedFirst[p].push({ producerId: b, firstOffset: bFirst });
    }
    // Both open: ListOffsets read_committed answers the first offset of the oldest open transaction.
    assert.equal(await latestOffset(0, 1), 1n);
    assert.equal(await latestOffset(0, 0), 7n);
    const tps: Array<[string, number]> = [0, 1, 2].map((p) => [TOPIC, p]);
    const commit = await writeMarker(a, true, tps);
    assert.deepEqual([...commit.values()], [0, 0, 0]);
    // B still open from offset 3 (pre 0, A 1–2, B 3).
    assert.equal(await latestOffset(1, 1), abortedFirst[1][0].firstOffset);
    assert.equal(abortedFirst[1][0].firstOffset, 3n);
    const abort = await writeMarker(b, false, tps, { version: 0 });
    assert.deepEqual([...abort.values()], [0, 0, 0]);
    for (let p = 0; p < PARTITIONS; p++) {
      const post = [`post-${p}`];
      await produceOk(p, plain(post));
      committedView[p].push(...post);
      uncommittedView[p].push(...post);
      // Nothing open: the LSO is the log end (7 data records + 2 markers + 1).
      assert.equal(await latestOffset(p, 1), 10n);
    }

    // The Fetch response itself: read_committed lists B's aborted transaction; read_uncommitted none.
    const rc = await fetch(client, 1, 0n, 1);
    assert.equal(rc.lastStableOffset, 10n);
    assert.deepEqual(rc.abortedTransactions, abortedFirst[1]);
    const batches = decodeRecordBatches(rc.records ?? Buffer.alloc(0));
    assert.deepEqual(
      batches.filter((x) => x.header.isControl).map((x) => [x.header.producerId, x.header.baseOffset]),
      [
        [a, 7n],
        [b, 8n],
      ],
      "control batches go to clients, which skip them",
    );
    const ru = await fetch(client, 1, 0n, 0);
    assert.equal(ru.abortedTransactions, null);

    const committed = await confluentRead("read_committed");
    assert.deepEqual(byPartition(committed), committedView);
    assert.ok(!committed.some((r) => r.v.startsWith("B-")), "never an aborted record");
    const uncommitted = await confluentRead("read_uncommitted");
    assert.deepEqual(byPartition(uncommitted), uncommittedView);
    const kcatU = await kcatRead("read_uncommitted");
    assert.deepEqual(
      byPartition(kcatU.map((m) => ({ p: m.partition, o: m.offset, v: m.value }))),
      uncommittedView,
    );
    const kcatC = await kcatRead("read_committed");
    assert.deepEqual(
      byPartition(kcatC.map((m) => ({ p: m.partition, o: m.offset, v: m.value }))),
      committedView,
    );
  });

  test("WriteTxnMarkers errors: old producer epoch, fenced coordinator epoch, unknown partitions", async () => {
    const c = await newProducerId();
    // Epoch 1 (a bumped producer): a marker at epoch 0 is INVALID_PRODUCER_EPOCH.
    await produceOk(2, txnBatch(c, 2, ["C-0"], 1));
    const stale = await writeMarker(c, false, [[TOPIC, 2]], { epoch: 0, coordinatorEpoch: 5 });
    assert.deepEqual([...stale], [[`${TOPIC}-2`, ErrorCode.INVALID_PRODUCER_EPOCH]]);
    const ok = await writeMarker(c, false, [[TOPIC, 2]], { epoch: 1, coordinatorEpoch: 5 });
    assert.deepEqual([...ok], [[`${TOPIC}-2`, 0]]);
    uncommittedView[2].push("C-0");
    // The next transaction's marker from an older coordinator epoch is fenced.
    await produceOk(2, txnBatch(c, 2, ["C-1"], 1));
    uncommittedView[2].push("C-1");
    committedView[2].push("C-1");
    const fenced = await writeMarker(c, true, [[TOPIC, 2]], { epoch: 1, coordinatorEpoch: 4 });
    assert.deepEqual([...fenced], [[`${TOPIC}-2`, ErrorCode.TRANSACTION_COORDINATOR_FENCED]]);
    const unknown = await writeMarker(
      c,
      true,
      [
        ["no-such-topic", 0],
        [TOPIC, 7],
        [TOPIC, 2],
      ],
      { epoch: 1, coordinatorEpoch: 5 },
    );
    assert.deepEqual(
      [...unknown],
      [
        ["no-such-topic-0", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
        [`${TOPIC}-7`, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
        [`${TOPIC}-2`, 0],
      ],
    );
    // A client cannot write a marker itself.
    const forged = await produce(
      2,
      buildEndTxnMarkerBatch({
        type: ControlRecordType.Commit,
        producerId: c,
        producerEpoch: 1,
        coordinatorEpoch: 9,
        timestamp: BigInt(Date.now()),
      }),
    );
    assert.equal(forged.errorCode, ErrorCode.INVALID_RECORD);
    assert.equal(await latestOffset(2, 1), await latestOffset(2, 0));
  });

  test("an open transaction holds read_committed readers at its first offset until the marker arrives", async () => {
    const d = await newProducerId();
    const dFirst = await produceOk(0, txnBatch(d, 0, ["D-0", "D-1"]));
    await produceOk(0, plain(["late-0"]));
    assert.equal(await latestOffset(0, 1), dFirst);
    assert.equal(await latestOffset(0, 0), dFirst + 3n);

    // A confluent-kafka read_committed consumer reads up to the LSO and waits there.
    const consumer = startCommand("/usr/bin/python3", [
      CONSUMER_PY,
      broker.bootstrap,
      TOPIC,
      String(PARTITIONS),
      "read_committed",
      "10",
      "60",
    ]);
    const expectedBefore = committedView.reduce((n, l) => n + l.length, 0);
    await waitFor("the consumer to reach the LSO", 30_000, async () =>
      parseRecs(consumer.stdout()).length >= expectedBefore ? true : undefined,
    );
    // A long-polling read_committed Fetch at the LSO (partition 0) on its own connection.
    const poller = await WireClient.connect(broker.port);
    const polled = fetch(poller, 0, dFirst, 1, 20_000);
    await new Promise((r) => setTimeout(r, 1500));
    assert.ok(
      !parseRecs(consumer.stdout()).some((r) => r.v.startsWith("D-") || r.v === "late-0"),
      "nothing past the LSO before the marker",
    );
    const markerAt = Date.now() / 1000;
    assert.deepEqual([...(await writeMarker(d, true, [[TOPIC, 0]]))], [[`${TOPIC}-0`, 0]]);
    const woke = await polled;
    const wokeAt = Date.now() / 1000;
    poller.close();
    assert.ok(wokeAt - markerAt < 5, `the long poll woke with the marker (${wokeAt - markerAt}s)`);
    assert.deepEqual(
      decodeRecordBatches(woke.records ?? Buffer.alloc(0))
        .filter((x) => !x.header.isControl)
        .flatMap((x) => x.records.map((r) => r.value?.toString())),
      ["D-0", "D-1", "late-0"],
    );
    committedView[0].push("D-0", "D-1", "late-0");
    uncommittedView[0].push("D-0", "D-1", "late-0");
    const done = await consumer.exited;
    assert.equal(done.code, 0, describeResult("consumer", done));
    const recs = parseRecs(done.stdout);
    assert.deepEqual(byPartition(recs), committedView);
    for (const r of recs.filter((x) => x.v.startsWith("D-") || x.v === "late-0"))
      assert.ok(r.t >= markerAt, `${r.v} was delivered only after the marker`);
  });

  test("a clean restart and a SIGKILL keep committed/aborted views, the .txnindex and open transactions", async () => {
    const e = await newProducerId();
    const eFirst = await produceOk(1, txnBatch(e, 1, ["E-0"]));
    uncommittedView[1].push("E-0");
    await broker.restart();
    await connect();
    assert.equal(await latestOffset(1, 1), eFirst, "the open transaction survives a restart");
    assert.deepEqual(byPartition(await confluentRead("read_committed")), committedView);
    await broker.stop("SIGKILL");
    await broker.restart();
    await connect();
    assert.equal(await latestOffset(1, 1), eFirst, "the open transaction survives a SIGKILL");
    const rc = await fetch(client, 1, 0n, 1);
    assert.deepEqual(rc.abortedTransactions, abortedFirst[1], "the .txnindex is back after the crash");
    assert.deepEqual([...(await writeMarker(e, false, [[TOPIC, 1]]))], [[`${TOPIC}-1`, 0]]);
    assert.equal(await latestOffset(1, 1), await latestOffset(1, 0));
    const after = await fetch(client, 1, 0n, 1);
    assert.deepEqual(after.abortedTransactions, [...abortedFirst[1], { producerId: e, firstOffset: eFirst }]);
    assert.deepEqual(byPartition(await confluentRead("read_committed")), committedView);
    assert.deepEqual(byPartition(await confluentRead("read_uncommitted")), uncommittedView);

    // KafkaJS with readUncommitted: false (its default) in a group: the committed records, in order.
    const kafka = new Kafka({
      clientId: "txn-log-side",
      brokers: [broker.bootstrap],
      logLevel: logLevel.NOTHING,
      retry: { retries: 3, initialRetryTime: 100 },
    });
    const consumer = kafka.consumer({
      groupId: "txn-log-side-kjs",
      maxWaitTimeInMs: 200,
      readUncommitted: false,
    });
    const got: Array<{ p: number; o: number; v: string }> = [];
    const total = committedView.reduce((n, l) => n + l.length, 0);
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [TOPIC], fromBeginning: true });
      await withDeadline(
        "KafkaJS read_committed",
        30_000,
        new Promise<void>((resolve) => {
          void consumer.run({
            eachMessage: async ({ partition, message }) => {
              got.push({ p: partition, o: Number(message.offset), v: message.value?.toString() ?? "" });
              if (got.length >= total) resolve();
            },
          });
        }),
      );
      await new Promise((r) => setTimeout(r, 1000));
    } finally {
      await consumer.disconnect();
    }
    assert.deepEqual(byPartition(got), committedView);
  });
});
