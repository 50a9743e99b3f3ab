// Issue 17, "Must show": the transactions and consumer groups of the earlier work keep their guarantees on
// RF-3 internal topics. The exactly-once copier of issue 7 (test/server/transactions/eos-copier.py:
// confluent-kafka, consume read_committed in a group, upper-case, produce to the same partition of an output
// topic, send_offsets_to_transaction, commit; aborts and rewinds on abortable errors) runs against a 3-broker
// cluster (real ZooKeeper) with `transaction.state.log.replication.factor=3`,
// `offsets.topic.replication.factor=3`, RF-3 topics and `min.insync.replicas=2`. While it copies, the broker
// that is its transaction coordinator — the leader of __transaction_state partition
// abs(javaHashCode(transactional.id)) % 50, checked against FindCoordinator — is SIGKILLed, and started again
// once ZooKeeper expired its session; then the same is done to the coordinator that took over. A replica of
// __transaction_state elsewhere must take over the transaction state (open transactions completed or aborted,
// none lost), and __consumer_offsets the group's offsets.
// The copier is an application: when it exits on an error librdkafka deems fatal (PRODUCER_FENCED after the
// coordinator aborted a transaction that outlived transaction.timeout.ms during the outage, INVALID_TXN_STATE,
// FENCED_INSTANCE_ID of its static consumer) or commits nothing for STALL_MS, it is started again, as a
// supervisor would; every run is reported, and a stall is diagnosed (OffsetFetch require_stable of the group,
// `transactions describe`) before the kill.
// Checks: the output read read_committed (confluent-kafka) is exactly the upper-cased input, each record
// once, in order per partition (a lost commit, a duplicated transaction or a visible aborted record fails
// it); the copier finishes (the group's committed offsets reach the input's end); every replica of the
// output ends identical (batches, epochs, CRCs) with the full ISR back. A seed (EOS_FAILOVER_SEED) picks the
// kill moments and is printed.

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";

import { Apis } from "../../src/protocol/generated/api-table.js";
import { WireClient } from "../server/wire-client.js";
import {
  type BackgroundCommand,
  describeResult,
  runCommand,
  sleep,
  startCommand,
} from "../support/broker-harness.js";
import { ClusterHarness } from "../support/cluster-harness.js";
import { killUntilExpired, PYTHON, withFullLogsOnFailure } from "../support/failover-steps.js";
import { Random } from "../support/random.js";

const COPIER = resolve(process.cwd(), "test/server/transactions/eos-copier.py");
const CONSUMER = resolve(process.cwd(), "test/server/transactions/log-side-consumer.py");
const PARTITIONS = 3;
const RECORDS = 1500;
const TXN_ID = "eos-failover-txn";
const GROUP = "eos-failover";
const INPUT = "eos-fo-in";
const OUTPUT = "eos-fo-out";
/** A copier that commits nothing for this long is killed and replaced (see the watchdog). */
const STALL_MS = 25_000;
/** transaction.state.log.num.partitions (Kafka's default, left as it is). */
const TXN_PARTITIONS = 50;

let cluster: ClusterHarness | undefined;

before(async () => {
  cluster = await ClusterHarness.start({
    brokers: 3,
    name: "exactly-once-failover",
    overrides: {
      "transaction.state.log.replication.factor": "3",
      "transaction.state.log.min.isr": "2",
      "offsets.topic.replication.factor": "3",
      "min.insync.replicas": "2",
      "default.replication.factor": "3",
      "transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000",
    },
  });
});

after(async () => {
  await cluster?.close();
});

/** Java's String.hashCode (UTF-16 code units, 32-bit overflow). */
function javaHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

/** Kafka's partitionFor: Utils.abs(hashCode) % partitions (Utils.abs maps MIN_VALUE to 0). */
function txnPartition(id: string): number {
  const h = javaHashCode(id);
  return (h === -2147483648 ? 0 : Math.abs(h)) % TXN_PARTITIONS;
}

/** The broker FindCoordinator (key type 1, transaction) names, asked of broker `via`; -1 on an error. */
function findTxnCoordinator(c: ClusterHarness, via: number): Promise<number> {
  return findCoordinator(c, via, TXN_ID, 1);
}

/** Writes the input: record i to partition i % 3, idempotent, acks=all; returns the expected output. */
const INPUT_PRODUCER = `
import sys
from confluent_kafka import Producer
bootstrap, topic, n, parts, salt = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True, "linger.ms": 5})
failed = []
for i in range(n):
    p.produce(topic, key=f"key-{i}".encode(), value=f"rec-{i:05d}-p{i % parts}-{salt}".encode(), partition=i % parts,
              on_delivery=lambda err, msg: failed.append(str(err)) if err else None)
    p.poll(0)
left = p.flush(60)
print("failed", len(failed) + left, failed[:3], flush=True)
`;

/** FindCoordinator (v3) for a group (key type 0) or transactional id (1), asked of broker `via`. */
async function findCoordinator(c: ClusterHarness, via: number, key: string, keyType: 0 | 1): Promise<number> {
  const client = await WireClient.connect(c.broker(via).port);
  try {
    const res = await client.request(Apis.FindCoordinator, 3, { key, keyType, coordinatorKeys: [] });
    return res.errorCode === 0 ? res.nodeId : -1;
  } finally {
    client.socket.destroy();
  }
}

/**
 * What a stalled copier waits on, for the failure report: the group's OffsetFetch with require_stable (a
 * transaction whose markers never reached __consumer_offsets leaves UNSTABLE_OFFSET_COMMIT for ever) and the
 * transactional id's state as `tributary transactions describe` prints it.
 */
async function diagnoseStall(c: ClusterHarness): Promise<string> {
  const via = c.liveIds()[0];
  const out: string[] = [];
  const gc = await findCoordinator(c, via, GROUP, 0);
  out.push(`  group coordinator: ${gc}`);
  if (gc >= 0) {
    const client = await WireClient.connect(c.broker(gc).port);
    try {
      const res = await client.request(Apis.OffsetFetch, 7, {
        groupId: GROUP,
        topics: [{ name: INPUT, partitionIndexes: [0, 1, 2] }],
        groups: [],
        requireStable: true,
      });
      const parts = res.topics.flatMap((t) =>
        t.partitions.map(
          (p) => `${t.name}-${p.partitionIndex}: error ${p.errorCode} offset ${p.committedOffset}`,
        ),
      );
      out.push(`  OffsetFetch(require_stable) from ${gc}: error ${res.errorCode}; ${parts.join("; ")}`);
    } finally {
      client.socket.destroy();
    }
  }
  const d = await c.tributary([
    "transactions",
    "--bootstrap-server",
    c.bootstrap(),
    "describe",
    "--transactional-id",
    TXN_ID,
  ]);
  out.push(`  transactions describe: exit ${d.code}\n${d.stdout}${d.stderr}`);
  return out.join("\n");
}

interface Consumed {
  p: number;
  o: number;
  v: string;
}

async function consume(c: ClusterHarness, topic: string, isolation: string): Promise<Consumed[]> {
  const r = await runCommand(
    PYTHON,
    [CONSUMER, c.bootstrap(), topic, String(PARTITIONS), isolation, "4", "40"],
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

function copierEvents(stdout: string): Array<{ event: string; n?: number; error?: string }> {
  return stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l));
}

test("exactly-once copier survives SIGKILLs of its transaction coordinator on RF-3 internal topics", async () => {
  await withFullLogsOnFailure(
    "exactly-once-failover",
    () => cluster,
    async () => {
      const c = cluster!;
      const seed = Number(process.env.EOS_FAILOVER_SEED ?? Date.now() % 1_000_000);
      console.log(`exactly-once failover: seed ${seed} (replay with EOS_FAILOVER_SEED=${seed})`);
      const rng = new Random(seed);
      for (const t of [INPUT, OUTPUT]) await c.createTopic(t, PARTITIONS, 3, { "min.insync.replicas": "2" });
      await c.waitForDescribe(
        INPUT,
        "full ISRs",
        20_000,
        (ps) => ps.length === 3 && ps.every((p) => p.isr.length === 3),
      );
      await c.waitForDescribe(
        OUTPUT,
        "full ISRs",
        20_000,
        (ps) => ps.length === 3 && ps.every((p) => p.isr.length === 3),
      );
      const salt = String(seed);
      const wrote = await runCommand(
        PYTHON,
        ["-c", INPUT_PRODUCER, c.bootstrap(), INPUT, String(RECORDS), "3", salt],
        {
          timeoutMs: 90_000,
        },
      );
      assert.match(wrote.stdout, /^failed 0 /, describeResult("input producer", wrote));
      const expected: string[][] = Array.from({ length: PARTITIONS }, () => []);
      for (let i = 0; i < RECORDS; i++)
        expected[i % PARTITIONS].push(
          `rec-${String(i).padStart(5, "0")}-p${i % PARTITIONS}-${salt}`.toUpperCase(),
        );

      const copierArgs = [
        COPIER,
        c.bootstrap(),
        INPUT,
        OUTPUT,
        GROUP,
        TXN_ID,
        "eos-failover-1",
        "120",
        "10",
        "40",
      ];
      // The copier, started again whenever it exits without having finished (a client that gives up on an
      // error it does not retry, e.g. NOT_COORDINATOR from committed(), is a client's choice; the guarantee
      // under test is the output's).
      const runs: string[] = [];
      let copier: BackgroundCommand = startCommand(PYTHON, copierArgs);
      let commits = 0;
      let finished = false;
      let stopping = false;
      const supervise = async (): Promise<void> => {
        for (let run = 1; ; run++) {
          const r = await copier.exited;
          const ev = copierEvents(r.stdout);
          const aborts = ev.filter((e) => e.event === "abort");
          commits += ev.filter((e) => e.event === "commit").length;
          runs.push(
            `copier run ${run}: exit ${r.code ?? r.signal}; ${ev.filter((e) => e.event === "commit").length} commits, ${aborts.length} aborts ${JSON.stringify(aborts.map((e) => e.error?.slice(0, 160)))}`,
          );
          if (r.code !== 0) runs.push(`  stderr: ${r.stderr.slice(-1500)}`);
          if (process.env.CLUSTER_FULL_LOGS)
            writeFileSync(join(tmpdir(), `eos-failover-copier-${run}.log`), r.stdout + r.stderr);
          if (ev.some((e) => e.event === "done")) {
            finished = true;
            return;
          }
          if (stopping || run >= 8) return;
          copier = startCommand(PYTHON, copierArgs);
        }
      };
      const supervisor = supervise();
      const commitsSoFar = () =>
        commits + copierEvents(copier.stdout()).filter((e) => e.event === "commit").length;
      // A liveness probe, as an operator would run one: a copier that committed nothing for STALL_MS (its
      // consumer stopped by a fatal error, e.g. FENCED_INSTANCE_ID after its group coordinator moved) is
      // killed, and the supervisor starts another.
      let diagnosed = false;
      const watchdog = (async () => {
        let seen = -1;
        let since = Date.now();
        while (!finished && !stopping) {
          await sleep(1000);
          const now = commitsSoFar();
          if (now !== seen) {
            seen = now;
            since = Date.now();
          } else if (Date.now() - since > STALL_MS && !finished && !stopping) {
            runs.push(`watchdog: no commit for ${STALL_MS} ms (at ${now} commits); copier killed`);
            if (!diagnosed) {
              diagnosed = true;
              runs.push(await diagnoseStall(c).catch((e) => `  (diagnosis failed: ${(e as Error).message})`));
            }
            await copier.stop("SIGKILL");
            since = Date.now();
          }
        }
      })();
      const tp = txnPartition(TXN_ID);
      const kills: string[] = [];
      try {
        for (let round = 1; round <= 2; round++) {
          // Each kill finds the copier committing.
          const from = commitsSoFar();
          await c.waitFor(`copier committing (round ${round})`, 60_000, async () =>
            commitsSoFar() >= from + 3 || finished ? true : undefined,
          );
          assert.ok(
            !finished,
            "the copier finished before the kill: too few records for the test to mean anything",
          );
          await sleep(rng.int(100, 1500));
          // The coordinator: the leader of the transactional id's __transaction_state partition, as
          // FindCoordinator tells it.
          // Asked until the two agree: right after a restart, leadership can still move (the preferred
          // leader's return) between the Metadata answer and the FindCoordinator answer of another broker.
          const { leader, via } = await c.waitFor(
            `FindCoordinator naming the leader of __transaction_state-${tp} (round ${round})`,
            20_000,
            async () => {
              const parts = await c.describe("__transaction_state");
              const l = parts.find((p) => p.partition === tp)?.leader ?? -1;
              const v = c.liveIds().find((i) => i !== l);
              if (l < 0 || v === undefined) return undefined;
              return (await findTxnCoordinator(c, v).catch(() => -1)) === l
                ? { leader: l, via: v }
                : undefined;
            },
          );
          const before = commitsSoFar();
          await killUntilExpired(c, leader);
          const next = await c.waitFor(`a new coordinator for ${TXN_ID}`, 30_000, async () => {
            const n = await findTxnCoordinator(c, via).catch(() => -1);
            return n >= 0 && n !== leader ? n : undefined;
          });
          await c.startBroker(leader);
          await c.waitForRegistered([0, 1, 2], 30_000);
          kills.push(
            `round ${round}: killed coordinator ${leader} after ${before} commits; ${next} took over; ${commitsSoFar()} commits once ${leader} was back`,
          );
        }
        await c.waitFor("the copier finished", 150_000, async () => (finished ? true : undefined));
      } finally {
        stopping = true;
        await copier.stop("SIGKILL");
        await supervisor;
        await watchdog;
        console.log([...kills, ...runs].join("\n"));
      }

      const committed = await consume(c, OUTPUT, "read_committed");
      const got: string[][] = Array.from({ length: PARTITIONS }, () => []);
      for (const r of [...committed].sort((x, y) => x.o - y.o)) got[r.p].push(r.v);
      for (let p = 0; p < PARTITIONS; p++) {
        const dup = got[p].length - new Set(got[p]).size;
        assert.equal(dup, 0, `output partition ${p}: ${dup} duplicates`);
        assert.equal(got[p].length, expected[p].length, `output partition ${p}: ${got[p].length} records`);
        assert.deepEqual(got[p], expected[p], `output partition ${p}: contents or order differ`);
      }
      const everything = await consume(c, OUTPUT, "read_uncommitted");
      console.log(`output: ${committed.length} read_committed, ${everything.length} read_uncommitted`);

      // Every replica of the output holds the same batches (including the transaction markers).
      await c.waitForDescribe(OUTPUT, "full ISRs", 30_000, (ps) => ps.every((p) => p.isr.length === 3));
      for (let p = 0; p < PARTITIONS; p++) {
        const b0 = await c.partitionBatches(0, OUTPUT, p);
        assert.ok(b0.length > 0);
        assert.deepEqual(await c.partitionBatches(1, OUTPUT, p), b0, `output-${p}: replica 1 differs from 0`);
        assert.deepEqual(await c.partitionBatches(2, OUTPUT, p), b0, `output-${p}: replica 2 differs from 0`);
      }
    },
  );
});
