// Exactly-once with real clients against a real broker (issue 7, "Must show"): the confluent-kafka copier
// (eos-copier.py: consume a group read_committed, upper-case, produce to the same partition of an output
// topic, send_offsets_to_transaction, commit) SIGKILLed at random moments over many rounds, the broker
// SIGKILLed and restarted under it every third round; the output read read_committed is exactly the
// transformed input (no loss, no duplicates, per-partition order), and read_uncommitted shows the aborted
// data the kills left. Also KafkaJS transaction.sendOffsets with commit (consumer-groups shows the offsets)
// and abort (offsets unchanged), and OffsetFetch require_stable (v7) answering UNSTABLE_OFFSET_COMMIT while
// a transaction holds pending offsets for the group, NONE after its commit.

import assert from "node:assert/strict";
import { resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import kafkajs from "kafkajs";
import { ErrorCode } from "../../../src/protocol/errors.js";
import { Apis } from "../../../src/protocol/generated/api-table.js";
import type { OffsetFetchResponse } from "../../../src/protocol/generated/messages/OffsetFetchResponse.js";
import {
  type BackgroundCommand,
  BrokerHarness,
  type CommandResult,
  describeResult,
  runCommand,
  sleep,
  startCommand,
  waitFor,
} from "../../support/broker-harness.js";
import { Random } from "../../support/random.js";
import { runTributary } from "../../support/tributary-cli.js";
import { WireClient } from "../wire-client.js";

const { Kafka, logLevel } = kafkajs;
const PYTHON = "/usr/bin/python3";
const COPIER = resolve(process.cwd(), "test/server/transactions/eos-copier.py");
const CONSUMER = resolve(process.cwd(), "test/server/transactions/log-side-consumer.py");

const PARTITIONS = 3;
const RECORDS = 3000;
const ROUNDS = 12;
/** Records per copier transaction, and its "processing" time (ms) between produce and commit: the copy
 * spans the rounds (about 10 s of copying) and most kills land in an open transaction. */
const BATCH = 10;
const WORK_MS = 25;

interface Consumed {
  p: number;
  o: number;
  v: string;
}

interface CopierEvent {
  event: "ready" | "commit" | "abort" | "done";
  n?: number;
  error?: string;
}

function events(stdout: string): CopierEvent[] {
  return stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as CopierEvent);
}

describe("exactly-once copier and transactional offsets with real clients", { timeout: 240_000 }, () => {
  let broker: BrokerHarness;

  before(async () => {
    broker = await BrokerHarness.start({
      name: "exactly-once",
      overrides: {
        "group.initial.rebalance.delay.ms": "0",
        // Transactions of killed producers (transaction.timeout.ms 10000 in the copier) are aborted within
        // a second of timing out; a new copier instance fences and aborts them at init_transactions anyway.
        "transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000",
      },
    });
  });

  after(async () => {
    await broker?.close();
  });

  function kafkaClient(clientId: string): kafkajs.Kafka {
    return new Kafka({
      clientId,
      brokers: [broker.bootstrap],
      logLevel: logLevel.NOTHING,
      retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 },
    });
  }

  async function createTopics(kafka: kafkajs.Kafka, topics: readonly string[]): Promise<void> {
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.createTopics({
        topics: topics.map((topic) => ({ topic, numPartitions: PARTITIONS, replicationFactor: 1 })),
      });
    } finally {
      await admin.disconnect();
    }
  }

  async function consume(
    topic: string,
    isolation: "read_committed" | "read_uncommitted",
  ): Promise<Consumed[]> {
    const r = await runCommand(
      PYTHON,
      [CONSUMER, broker.bootstrap, topic, String(PARTITIONS), isolation, "4", "40"],
      {
        timeoutMs: 60_000,
      },
    );
    assert.equal(r.code, 0, describeResult(`consume ${topic} ${isolation}`, r));
    return r.stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Consumed);
  }

  function valuesByPartition(records: readonly Consumed[]): string[][] {
    const m: string[][] = Array.from({ length: PARTITIONS }, () => []);
    for (const r of [...records].sort((a, b) => a.o - b.o)) m[r.p].push(r.v);
    return m;
  }

  /** OffsetFetch v7 for one group and topic (all partitions), with require_stable as given. */
  async function offsetFetch(
    group: string,
    topic: string,
    requireStable: boolean,
  ): Promise<OffsetFetchResponse> {
    const c = await WireClient.connect(broker.port);
    try {
      return await c.request(Apis.OffsetFetch, 7, {
        groupId: group,
        topics: [{ name: topic, partitionIndexes: [0, 1, 2] }],
        groups: [],
        requireStable,
      });
    } finally {
      c.close();
    }
  }

  /** [errorCode, committedOffset] per partition, from an OffsetFetch answer. */
  function fetched(r: OffsetFetchResponse, topic: string): Array<[number, number]> {
    const t = r.topics.find((x) => x.name === topic);
    assert.ok(t, `no ${topic} in ${JSON.stringify(r, (_, v) => (typeof v === "bigint" ? String(v) : v))}`);
    return [...t.partitions]
      .sort((a, b) => a.partitionIndex - b.partitionIndex)
      .map((p) => [p.errorCode, Number(p.committedOffset)]);
  }

  /** The CURRENT-OFFSET column of `consumer-groups --describe --group <group>`, per partition of `topic`. */
  async function describedOffsets(group: string, topic: string): Promise<string[]> {
    const r = await runTributary([
      "consumer-groups",
      "--bootstrap-server",
      broker.bootstrap,
      "--describe",
      "--group",
      group,
    ]);
    assert.equal(r.code, 0, describeResult("consumer-groups --describe", r));
    const rows = r.stdout
      .split("\n")
      .map((l) => l.trim().split(/\s+/))
      .filter((f) => f[0] === group && f[1] === topic);
    const out: string[] = [];
    for (const f of rows) out[Number(f[2])] = f[3];
    return out;
  }

  test("copier SIGKILLed in ≥ 10 rounds (and the broker in some): the output is the input, exactly once", async () => {
    const seed = Number(process.env.EOS_SEED ?? Date.now() % 1_000_000);
    console.log(`exactly-once copier: seed ${seed} (replay with EOS_SEED=${seed})`);
    const rng = new Random(seed);
    const input = "eos-in";
    const output = "eos-out";
    const group = "eos-copier";
    const kafka = kafkaClient("eos-input");
    await createTopics(kafka, [input, output]);

    // N keyed records, each partition's in a known order.
    const expected: string[][] = Array.from({ length: PARTITIONS }, () => []);
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    try {
      for (let from = 0; from < RECORDS; from += 500) {
        const messages = [];
        for (let i = from; i < Math.min(RECORDS, from + 500); i++) {
          const p = i % PARTITIONS;
          const value = `rec-${String(i).padStart(5, "0")}-p${p}-${rng.string(6).replace(/[^\w]/g, "x")}`;
          messages.push({ key: `key-${i}`, value, partition: p });
          expected[p].push(value.toUpperCase());
        }
        await producer.send({ topic: input, acks: -1, messages });
      }
    } finally {
      await producer.disconnect();
    }

    const copierArgs = (maxS: number): string[] => [
      COPIER,
      broker.bootstrap,
      input,
      output,
      group,
      "eos-copier-txn",
      "eos-copier-1",
      String(maxS),
      String(BATCH),
      String(WORK_MS),
    ];
    /** Waits (bounded) until the copier printed "ready" or exited; true when ready. */
    const untilReady = async (copier: BackgroundCommand, exited: { r?: CommandResult }): Promise<boolean> =>
      waitFor("copier ready", 30_000, async () => {
        if (events(copier.stdout()).some((e) => e.event === "ready")) return true;
        return exited.r ? false : undefined;
      });

    const summary: string[] = [];
    let commits = 0;
    let aborts = 0;
    let brokerKills = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      const copier = startCommand(PYTHON, copierArgs(60));
      const exited: { r?: CommandResult } = {};
      void copier.exited.then((r) => {
        exited.r = r;
      });
      const ready = await untilReady(copier, exited);
      const runMs = rng.int(300, 1500);
      await sleep(runMs);
      let note = "";
      if (round % 3 === 0) {
        // The broker dies under the running copier, and comes back on the same port and log dir.
        await broker.stop("SIGKILL");
        await broker.restart();
        brokerKills++;
        const moreMs = rng.int(300, 1500);
        await sleep(moreMs);
        note = ` + broker SIGKILL/restart + ${moreMs} ms`;
      }
      const r = await copier.stop("SIGKILL");
      const ev = events(r.stdout);
      const c = ev.filter((e) => e.event === "commit").length;
      const a = ev.filter((e) => e.event === "abort").length;
      commits += c;
      aborts += a;
      summary.push(
        `round ${round}: ready=${ready} ran ${runMs} ms${note}; ${c} commits, ${a} aborts; exit ${r.code ?? r.signal}`,
      );
      if (r.code !== null && r.code !== 0) summary.push(`  copier stderr: ${r.stderr.slice(-500)}`);
    }

    // The final run copies the rest and exits once the committed offsets reach the input's end.
    const final = await runCommand(PYTHON, copierArgs(60), { timeoutMs: 75_000 });
    summary.push(`final run: ${events(final.stdout).filter((e) => e.event === "commit").length} commits`);
    console.log(summary.join("\n"));
    assert.equal(final.code, 0, describeResult("final copier run", final));
    assert.ok(events(final.stdout).some((e) => e.event === "done"));

    // The group's committed offsets are the input's end offsets (no transaction left pending).
    const committedOffsets = await waitFor("stable committed offsets", 15_000, async () => {
      const f = fetched(await offsetFetch(group, input, true), input);
      return f.every(([code]) => code === ErrorCode.NONE) ? f : undefined;
    });
    assert.deepEqual(
      committedOffsets.map(([, o]) => o),
      expected.map((l) => l.length),
    );

    const committed = await consume(output, "read_committed");
    const everything = await consume(output, "read_uncommitted");
    const aborted = everything.length - committed.length;
    console.log(
      `output: ${committed.length} records read_committed (input ${RECORDS}), ${everything.length} read_uncommitted ` +
        `(${aborted} aborted); ${commits} commits and ${aborts} client aborts seen in the rounds; ${brokerKills} broker kills`,
    );
    const got = valuesByPartition(committed);
    for (let p = 0; p < PARTITIONS; p++) {
      const dup = got[p].length - new Set(got[p]).size;
      assert.equal(dup, 0, `partition ${p}: ${dup} duplicates`);
      assert.equal(got[p].length, expected[p].length, `partition ${p}: ${got[p].length} records`);
      assert.deepEqual(got[p], expected[p], `partition ${p}: contents or order differ`);
    }
    assert.ok(aborted > 0, "no aborted record in the output: the kills never hit an open transaction");
    assert.ok(everything.length <= RECORDS + aborted);
  });

  test("KafkaJS sendOffsets + commit: consumer-groups shows the offsets; + abort: offsets unchanged", async () => {
    const kafka = kafkaClient("eos-kjs");
    const topic = "eos-kjs-in";
    const sink = "eos-kjs-out";
    const group = "eos-kjs-group";
    await createTopics(kafka, [topic, sink]);
    const plain = kafka.producer();
    await plain.connect();
    await plain.send({
      topic,
      acks: -1,
      messages: Array.from({ length: 30 }, (_, i) => ({ value: `in-${i}`, partition: i % PARTITIONS })),
    });
    await plain.disconnect();

    const p = kafka.producer({ transactionalId: "eos-kjs-txn", idempotent: true, maxInFlightRequests: 1 });
    await p.connect();
    try {
      const t1 = await p.transaction();
      await t1.send({ topic: sink, messages: [{ value: "out-1", partition: 0 }] });
      await t1.sendOffsets({
        consumerGroupId: group,
        topics: [
          {
            topic,
            partitions: [
              { partition: 0, offset: "4" },
              { partition: 1, offset: "7" },
              { partition: 2, offset: "10" },
            ],
          },
        ],
      });
      await t1.commit();
      // The COMMIT marker reaches __consumer_offsets after EndTxn answered: wait for it (bounded).
      const shown = await waitFor("consumer-groups shows the committed offsets", 15_000, async () => {
        const o = await describedOffsets(group, topic);
        return o.join(",") === "4,7,10" ? o : undefined;
      });
      assert.deepEqual(shown, ["4", "7", "10"]);

      const t2 = await p.transaction();
      await t2.send({ topic: sink, messages: [{ value: "out-2", partition: 0 }] });
      await t2.sendOffsets({
        consumerGroupId: group,
        topics: [
          {
            topic,
            partitions: [
              { partition: 0, offset: "9" },
              { partition: 2, offset: "3" },
            ],
          },
        ],
      });
      await t2.abort();
      // Once the ABORT marker is written the offsets are stable again, and still the committed ones.
      const after = await waitFor("stable offsets after the abort", 15_000, async () => {
        const f = fetched(await offsetFetch(group, topic, true), topic);
        return f.every(([code]) => code === ErrorCode.NONE) ? f : undefined;
      });
      assert.deepEqual(after, [
        [ErrorCode.NONE, 4],
        [ErrorCode.NONE, 7],
        [ErrorCode.NONE, 10],
      ]);
      assert.deepEqual(await describedOffsets(group, topic), ["4", "7", "10"]);
    } finally {
      await p.disconnect();
    }
  });

  test("OffsetFetch require_stable: UNSTABLE_OFFSET_COMMIT while a transaction holds offsets, NONE after", async () => {
    const kafka = kafkaClient("eos-stable");
    const topic = "eos-stable-in";
    const group = "eos-stable-group";
    await createTopics(kafka, [topic]);
    const p = kafka.producer({ transactionalId: "eos-stable-txn", idempotent: true, maxInFlightRequests: 1 });
    await p.connect();
    try {
      const t = await p.transaction();
      await t.sendOffsets({
        consumerGroupId: group,
        topics: [{ topic, partitions: [{ partition: 1, offset: "5" }] }],
      });
      // Pending: require_stable answers UNSTABLE_OFFSET_COMMIT for the partition; without it, the last
      // committed offset (none: -1).
      const pending = fetched(await offsetFetch(group, topic, true), topic);
      assert.equal(pending[1][0], ErrorCode.UNSTABLE_OFFSET_COMMIT, JSON.stringify(pending));
      const unstable = fetched(await offsetFetch(group, topic, false), topic);
      assert.deepEqual(unstable[1], [ErrorCode.NONE, -1]);
      await t.commit();
      const stable = await waitFor("stable after the commit", 15_000, async () => {
        const f = fetched(await offsetFetch(group, topic, true), topic);
        return f[1][0] === ErrorCode.NONE ? f : undefined;
      });
      assert.deepEqual(stable[1], [ErrorCode.NONE, 5]);
      assert.deepEqual(stable[0], [ErrorCode.NONE, -1]);
    } finally {
      await p.disconnect();
    }
  });
});
