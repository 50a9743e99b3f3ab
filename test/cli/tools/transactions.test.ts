// `tributary transactions` end to end: the real executable against a real broker, with a KafkaJS
// transactional producer whose transaction is left open on two partitions. `list` shows it Ongoing at its
// coordinator, `describe --transactional-id` shows its producer, timeout and partitions,
// `describe-producers` shows the open transaction's start offset, and `abort` (by --start-offset, and by
// --producer-id/--producer-epoch/--coordinator-epoch) writes the ABORT markers so that the last stable
// offset moves on and a read_committed KafkaJS consumer reads past the aborted records. Bad input is one
// line on stderr and exit status 1. Tables are Kafka's prettyPrintTable: cells padded to the column width,
// each followed by a tab.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import kafkajs from "kafkajs";
import { describeResult } from "../../support/broker-harness.js";
import { cliToolFixture, ok, oneLineError } from "../../support/cli-tool-fixture.js";
import { withDeadline } from "../../support/deadline.js";

const TOPIC = "txn-tool";
const TXN_ID = "txn-tool-producer";
/** Plain records in partition 0 before the transaction, so that it starts at offset 3. */
const BEFORE = 3;

let kafka: kafkajs.Kafka;
let plain: kafkajs.Producer;
let transactional: kafkajs.Producer;
let open: kafkajs.Transaction | undefined;

const fx = cliToolFixture({
  name: "tributary-transactions-tool",
  overrides: { "transaction.state.log.num.partitions": "5" },
  admin: true,
  setup: async () => {
    await fx.createTopics([{ name: TOPIC, partitions: 2 }]);
    kafka = new kafkajs.Kafka({
      clientId: "txn-tool-test",
      brokers: [fx.broker.bootstrap],
      logLevel: kafkajs.logLevel.NOTHING,
      retry: { retries: 20, initialRetryTime: 100, maxRetryTime: 1000 },
    });
    plain = kafka.producer();
    await plain.connect();
    await plain.send({
      topic: TOPIC,
      acks: -1,
      messages: Array.from({ length: BEFORE }, (_, i) => ({ partition: 0, value: `plain-${i}` })),
    });
    transactional = kafka.producer({ transactionalId: TXN_ID, idempotent: true, maxInFlightRequests: 1 });
    await transactional.connect();
    open = await transactional.transaction();
    await open.send({
      topic: TOPIC,
      acks: -1,
      messages: [
        { partition: 0, value: "txn-0" },
        { partition: 0, value: "txn-1" },
        { partition: 1, value: "txn-2" },
      ],
    });
  },
  teardown: async () => {
    await open?.abort().catch(() => undefined);
    await transactional?.disconnect();
    await plain?.disconnect();
  },
});
const txns = fx.tool("transactions");

/** A prettyPrintTable: every line ends with a tab, every column has one width; returns the trimmed cells. */
function table(out: readonly string[], headers: readonly string[]): string[][] {
  assert.ok(out.length >= 1, "a header line");
  const cells = out.map((l) => {
    assert.ok(l.endsWith("\t"), `line ends with a tab: ${JSON.stringify(l)}`);
    return l.slice(0, -1).split("\t");
  });
  for (let c = 0; c < headers.length; c++) {
    const width = Math.max(...cells.map((r) => r[c].trimEnd().length));
    for (const r of cells) assert.equal(r[c].length, width, `column ${headers[c]} padded to ${width}`);
  }
  const trimmed = cells.map((r) => r.map((x) => x.trimEnd()));
  assert.deepEqual(trimmed[0], headers);
  return trimmed.slice(1);
}

const PRODUCER_HEADERS = [
  "ProducerId",
  "ProducerEpoch",
  "LatestCoordinatorEpoch",
  "LastSequence",
  "LastTimestamp",
  "CurrentTransactionStartOffset",
];

async function lastStableOffset(partition: number): Promise<bigint> {
  const [r] = await fx.admin.listOffsets([{ topic: TOPIC, partition, spec: "latest" }], {
    isolationLevel: 1,
  });
  assert.equal(r.error, undefined);
  return r.offset;
}

async function highWatermark(partition: number): Promise<bigint> {
  const [r] = await fx.admin.listOffsets([{ topic: TOPIC, partition, spec: "latest" }]);
  assert.equal(r.error, undefined);
  return r.offset;
}

async function producersOf(partition: number): Promise<string[][]> {
  const r = await txns("describe-producers", "--topic", TOPIC, "--partition", String(partition));
  return table(ok(r, `describe-producers ${partition}`), PRODUCER_HEADERS);
}

describe("transactions with an open KafkaJS transaction", { timeout: 120_000 }, () => {
  let producerId = "";
  let coordinatorId = "";

  test("list shows the transaction Ongoing at its coordinator", async () => {
    const rows = table(ok(await txns("list"), "list"), [
      "TransactionalId",
      "Coordinator",
      "ProducerId",
      "TransactionState",
    ]);
    const mine = rows.filter((r) => r[0] === TXN_ID);
    assert.equal(mine.length, 1, JSON.stringify(rows));
    [, coordinatorId, producerId] = mine[0];
    const cluster = await fx.admin.describeCluster();
    assert.deepEqual(
      cluster.brokers.map((b) => String(b.id)),
      [coordinatorId],
    );
    assert.match(producerId, /^\d+$/);
    assert.equal(mine[0][3], "Ongoing");
  });

  test("describe shows the producer, timeout and partitions", async () => {
    const before = Date.now();
    const r = await txns("describe", "--transactional-id", TXN_ID);
    const [row] = table(ok(r, "describe"), [
      "CoordinatorId",
      "TransactionalId",
      "ProducerId",
      "ProducerEpoch",
      "TransactionState",
      "TransactionTimeoutMs",
      "CurrentTransactionStartTimeMs",
      "TransactionDurationMs",
      "TopicPartitions",
    ]);
    assert.deepEqual(row.slice(0, 6), [coordinatorId, TXN_ID, producerId, "0", "Ongoing", "60000"]);
    const start = Number(row[6]);
    assert.ok(start > before - 120_000 && start <= Date.now(), `start time ${row[6]}`);
    assert.ok(Number(row[7]) >= 0 && Number(row[7]) < 120_000, `duration ${row[7]}`);
    assert.equal(row[8], `${TOPIC}-0,${TOPIC}-1`);
  });

  test("describe-producers shows where the open transaction starts", async () => {
    const rows = await producersOf(0);
    assert.equal(rows.length, 1, JSON.stringify(rows));
    const [pid, epoch, coordinatorEpoch, lastSequence, lastTimestamp, start] = rows[0];
    assert.deepEqual([pid, epoch, coordinatorEpoch, lastSequence], [producerId, "0", "-1", "1"]);
    assert.ok(Number(lastTimestamp) > 0, `last timestamp ${lastTimestamp}`);
    assert.equal(start, String(BEFORE));
    const p1 = await producersOf(1);
    assert.deepEqual(
      p1.map((r) => [r[0], r[3], r[5]]),
      [[producerId, "0", "0"]],
    );
    // The open transaction holds the last stable offset at its first record.
    assert.equal(await lastStableOffset(0), BigInt(BEFORE));
    assert.equal(await lastStableOffset(1), 0n);
  });

  test("abort at a start offset with no open transaction fails in one line", async () => {
    const line = oneLineError(
      await txns("abort", "--topic", TOPIC, "--partition", "0", "--start-offset", "1"),
      "abort at 1",
    );
    assert.equal(line, `Could not find any open transactions starting at offset 1 on partition ${TOPIC}-0`);
  });

  test("abort --start-offset aborts the hanging transaction; read_committed reads past it", async () => {
    await plain.send({ topic: TOPIC, acks: -1, messages: [{ partition: 0, value: "after-0" }] });
    assert.equal(await lastStableOffset(0), BigInt(BEFORE));
    const r = await txns("abort", "--topic", TOPIC, "--partition", "0", "--start-offset", String(BEFORE));
    assert.deepEqual(ok(r, "abort"), []);
    // Records 3 and 4 (the transaction), 5 (after-0), 6 (the ABORT marker).
    assert.equal(await highWatermark(0), BigInt(BEFORE + 4));
    assert.equal(await lastStableOffset(0), BigInt(BEFORE + 4));
    const [row] = await producersOf(0);
    assert.equal(row[0], producerId);
    assert.equal(row[5], "None");
    assert.match(row[2], /^\d+$/, "the marker's coordinator epoch");
  });

  test("abort by --producer-id, --producer-epoch and --coordinator-epoch", async () => {
    const [p1] = await producersOf(1);
    const r = await txns(
      "abort",
      "--topic",
      TOPIC,
      "--partition",
      "1",
      "--producer-id",
      p1[0],
      "--producer-epoch",
      p1[1],
      "--coordinator-epoch",
      p1[2],
    );
    assert.deepEqual(ok(r, "abort by producer id"), []);
    assert.equal(await lastStableOffset(1), 2n);
    assert.equal((await producersOf(1))[0][5], "None");
  });

  test("a read_committed KafkaJS consumer sees exactly the records outside the aborted transaction", async () => {
    const consumer = kafka.consumer({ groupId: "txn-tool-rc", maxWaitTimeInMs: 200, readUncommitted: false });
    const got: string[] = [];
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [TOPIC], fromBeginning: true });
      await withDeadline(
        "read_committed consumer reaches after-0",
        30_000,
        new Promise<void>((resolve) => {
          void consumer.run({
            eachMessage: async ({ partition, message }) => {
              got.push(`${partition}:${message.value?.toString()}`);
              if (message.value?.toString() === "after-0") resolve();
            },
          });
        }),
      );
      await new Promise((r) => setTimeout(r, 1000));
    } finally {
      await consumer.disconnect();
    }
    assert.deepEqual(got, ["0:plain-0", "0:plain-1", "0:plain-2", "0:after-0"]);
  });
});

describe("transactions bad input", () => {
  test("a missing required flag, an unknown command, a bad number", async () => {
    assert.equal(
      oneLineError(await txns("describe-producers", "--topic", TOPIC), "no --partition"),
      "argument --partition is required",
    );
    assert.equal(
      oneLineError(await txns("describe"), "no --transactional-id"),
      "argument --transactional-id is required",
    );
    assert.match(
      oneLineError(await txns("frobnicate"), "unknown command"),
      /^argument COMMAND: invalid choice: 'frobnicate' \(choose from 'list', 'describe', /,
    );
    assert.equal(
      oneLineError(
        await txns("abort", "--topic", TOPIC, "--partition", "x", "--start-offset", "0"),
        "bad int",
      ),
      "Cannot parse argument 'x' of option partition",
    );
    assert.match(
      oneLineError(await txns("abort", "--topic", TOPIC, "--partition", "0"), "nothing to abort"),
      /^The transaction to abort must be identified either with --start-offset/,
    );
    assert.equal(
      oneLineError(await txns("--nope", "list"), "unknown option"),
      "nope is not a recognized option",
    );
  });

  test("Kafka's failure lines for an unknown transactional id and an unknown topic", async () => {
    const r = await txns("describe", "--transactional-id", "no-such-id");
    assert.match(
      oneLineError(r, "unknown transactional id"),
      /^Failed to describe transaction state of transactional-id `no-such-id`: .+\. Enable debug logging for additional detail\.$/,
      describeResult("describe", r),
    );
    assert.match(
      oneLineError(await txns("describe-producers", "--topic", "nope", "--partition", "0"), "unknown topic"),
      /^Failed to describe producers for partition nope-0 on leader: Topic 'nope' does not exist\. Enable debug/,
    );
  });

  test("--help lists the commands", async () => {
    const out = ok(await txns("--help"), "help").join("\n");
    for (const c of ["list", "describe", "describe-producers", "abort"])
      assert.match(out, new RegExp(`${c} \\(`));
  });
});
