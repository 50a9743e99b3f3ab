// Issue 17, "Must show": KIP-101's first failure story and the KIP-101 / KIP-279 acceptance cases (after
// Kafka's EpochDrivenReplicationProtocolAcceptanceTest), with real processes: a real ZooKeeper, three broker
// processes (the controller hosts no replica of the topics under test, so it is never killed), kcat and
// confluent-kafka clients. Faults are process faults: SIGTERM (controlled shutdown), SIGKILL, SIGSTOP/SIGCONT.
// A SIGKILLed broker is started again only once ZooKeeper expired its session (before that it could not
// register), by which time the controller has taken it out of the ISR — so where a story needs a replica
// outside the ISR to lead, the topic enables unclean election, as Kafka's acceptance test does.
//
// 1. Story (1), "a follower restarts before learning the new HW, then the leader dies": m1 is acknowledged
//    (acks=all) once the follower fetched it; the follower is SIGKILLed with a high watermark on disk below
//    m1 (the checkpoint interval is long); the leader is frozen and the follower restarted as its follower,
//    then the leader's session expires and the follower is elected. It must still hold m1 (a follower that
//    truncated to its high watermark on restart would have dropped it), and after the old leader returns,
//    both replicas hold the same batches.
// 2. The basic epoch workflow: each replica's leader-epoch-checkpoint after successive leader changes (the
//    leader records a new epoch at its log end at once, the follower when it fetches the epoch's first batch).
// 3. Offsets never go backwards: an idempotent acks=all producer writes one record at a time while leadership
//    moves back and forth (SIGTERM of each leader in turn); the acknowledged offsets strictly increase and
//    every acknowledged record is at its offset in both replicas.
// 4. No divergent logs after a clean failover: the leader takes records with acks=1 while its follower is
//    frozen, dies; the follower (still in the ISR) is elected and takes other records at those offsets; the
//    old leader returns, truncates exactly its unreplicated tail, and the replicas end identical.
// 5. KIP-279's double failover: A (epoch ea) has a record at offset 1 that B lacks; A dies and B leads (eb) and
//    takes another record at offset 1; B dies and A leads again (ea2) without having followed B, and appends.
//    B, returning, asks about its epoch eb, which A never had; A answers with epoch ea, ending at 2, an epoch B
//    never had either: B truncates to where its own epochs below ea end (1) and asks again, about epoch 0 —
//    iterative truncation to the divergence point. Taking A's first answer as it is (KIP-101 without KIP-279)
//    keeps B's divergent record at offset 1 and the logs differ.
// Every case ends with both replicas compared batch for batch (offsets, leader epochs, CRCs from dump-log).

import assert from "node:assert/strict";
import { after, afterEach, before, test } from "node:test";
import { isDeepStrictEqual } from "node:util";

import { sleep, startCommand } from "../support/broker-harness.js";
import { ClusterHarness } from "../support/cluster-harness.js";
import {
  createAssignedTopic,
  epochCheckpoint,
  hwCheckpoint,
  killUntilExpired,
  PYTHON,
  produceOne,
  twoNonControllers,
  waitForPartition,
  withFullLogsOnFailure,
} from "../support/failover-steps.js";

let cluster: ClusterHarness | undefined;

before(async () => {
  cluster = await ClusterHarness.start({
    brokers: 3,
    name: "leader-epoch-acceptance",
    overrides: {
      // A follower's high watermark reaches its disk late (story 1 kills it before it does).
      "replica.high.watermark.checkpoint.interval.ms": "600000",
      // A follower frozen for a few seconds stays in the ISR (case 4).
      "replica.lag.time.max.ms": "15000",
    },
  });
});

afterEach(async () => {
  // A failed case leaves no broker frozen or down for the next one.
  const c = cluster;
  if (!c) return;
  c.resumeSuspended();
  for (let i = 0; i < c.size; i++) if (!c.isLive(i)) await c.startBroker(i).catch(() => undefined);
});

after(async () => {
  await cluster?.close();
});

async function createTopic(topic: string, replicas: readonly number[], configs: Record<string, string>) {
  await createAssignedTopic(cluster!, topic, replicas, configs);
}

/** Both replicas hold the same batches (offsets, epochs, CRCs) and records; returns the records. */
async function assertIdentical(topic: string, a: number, b: number): Promise<Map<number, string>> {
  const c = cluster!;
  const batchesA = await c.partitionBatches(a, topic, 0);
  const batchesB = await c.partitionBatches(b, topic, 0);
  assert.deepEqual(batchesB, batchesA, `replica ${b}'s batches differ from replica ${a}'s`);
  const logA = await c.partitionLog(a, topic, 0);
  assert.deepEqual([...(await c.partitionLog(b, topic, 0))], [...logA]);
  return logA;
}

test("KIP-101 story 1: a follower restarted before it learned the HW keeps the acknowledged record and leads", async () => {
  await withFullLogsOnFailure(
    "leader-epoch-acceptance",
    () => cluster,
    async () => {
      const c = cluster!;
      const topic = "kip101-hw";
      const [leader, follower] = await twoNonControllers(c);
      await createTopic(topic, [leader, follower], { "unclean.leader.election.enable": "true" });
      await produceOne(c.bootstrap(), topic, 0, "m0", "all");
      await produceOne(c.bootstrap(), topic, 0, "m1", "all"); // acknowledged: the follower has fetched it

      // The follower dies with m1 in its log and a high watermark on disk that does not cover it.
      await killUntilExpired(c, follower);
      const state = await waitForPartition(c, topic, 0, leader, [leader]);
      assert.deepEqual(
        [...(await c.partitionLog(follower, topic, 0))],
        [
          [0, "m0"],
          [1, "m1"],
        ],
      );
      const hw = hwCheckpoint(c, follower, topic, 0) ?? 0;
      assert.ok(
        hw < 2,
        `the follower's checkpointed HW (${hw}) must be below m1's end for the story to hold`,
      );

      // It restarts as the follower of a leader that is frozen (so it cannot fetch m1 again), and the
      // leader dies: its session expires, and the only live replica is elected.
      c.suspendBroker(leader);
      await c.startBroker(follower);
      const elected = await waitForPartition(c, topic, 0, follower, [follower], 40_000);
      assert.ok(elected.leader_epoch > state.leader_epoch);
      const onNewLeader = await c.partitionLog(follower, topic, 0);
      assert.equal(
        onNewLeader.get(1),
        "m1",
        `the acknowledged m1 was lost: ${JSON.stringify([...onNewLeader])}`,
      );

      // The new leader takes m2; the old one returns as its follower and ends with the same log.
      await produceOne(c.bootstrap([leader]), topic, 0, "m2", "all");
      await c.stopBroker(leader, "SIGKILL");
      await c.startBroker(leader);
      await waitForPartition(c, topic, 0, follower, [leader, follower]);
      const log = await assertIdentical(topic, follower, leader);
      assert.deepEqual(
        [...log],
        [
          [0, "m0"],
          [1, "m1"],
          [2, "m2"],
        ],
      );
    },
  );
});

test("KIP-101 basic epoch workflow: leader-epoch-checkpoint on each replica after successive leader changes", async () => {
  await withFullLogsOnFailure(
    "leader-epoch-acceptance",
    () => cluster,
    async () => {
      const c = cluster!;
      const topic = "kip101-epochs";
      const [a, b] = await twoNonControllers(c);
      await createTopic(topic, [a, b], {});
      const epochs = async (): Promise<[string[], string[]]> => [
        epochCheckpoint(c, a, topic, 0),
        epochCheckpoint(c, b, topic, 0),
      ];
      // The checkpoints as they settle: a new epoch's entry is written off the event loop, within
      // milliseconds of the change (LeaderEpochFileCache.assign), so a read right after an ack may precede it.
      const expectEpochs = async (want: [string[], string[]]): Promise<void> => {
        const until = Date.now() + 3000;
        let got = await epochs();
        while (!isDeepStrictEqual(got, want) && Date.now() < until) {
          await sleep(50);
          got = await epochs();
        }
        assert.deepEqual(got, want);
      };
      const lastBatchEpoch = async (broker: number): Promise<string | undefined> =>
        (await c.partitionBatches(broker, topic, 0)).at(-1)?.match(/epoch (-?\d+)/)?.[1];

      await produceOne(c.bootstrap(), topic, 0, "r0", "all");
      await expectEpochs([["0 0"], ["0 0"]]);
      assert.equal(await lastBatchEpoch(a), "0");
      assert.equal(await lastBatchEpoch(b), "0");

      // Bounce the follower: the controller takes it out of the ISR (epoch 1, leader a, which records
      // epoch 1 at its log end, 1, at once); nothing reaches the follower until a batch of epoch 1 does.
      assert.equal(await c.stopBroker(b, "SIGTERM"), 0);
      await waitForPartition(c, topic, 0, a, [a]);
      await c.startBroker(b);
      const s1 = await waitForPartition(c, topic, 0, a, [a, b]);
      assert.equal(s1.leader_epoch, 1);
      await expectEpochs([["0 0", "1 1"], ["0 0"]]);
      await produceOne(c.bootstrap(), topic, 0, "r1", "all");
      await expectEpochs([
        ["0 0", "1 1"],
        ["0 0", "1 1"],
      ]);
      assert.equal(await lastBatchEpoch(a), "1");
      assert.equal(await lastBatchEpoch(b), "1");

      // Bounce the leader: b leads in epoch 2 from its log end, 2.
      assert.equal(await c.stopBroker(a, "SIGTERM"), 0);
      await waitForPartition(c, topic, 0, b, [b]);
      await c.startBroker(a);
      const s2 = await waitForPartition(c, topic, 0, b, [a, b]);
      assert.equal(s2.leader_epoch, 2);
      await expectEpochs([
        ["0 0", "1 1"],
        ["0 0", "1 1", "2 2"],
      ]);
      await produceOne(c.bootstrap(), topic, 0, "r2", "all");
      await expectEpochs([
        ["0 0", "1 1", "2 2"],
        ["0 0", "1 1", "2 2"],
      ]);
      assert.equal(await lastBatchEpoch(a), "2");
      assert.equal(await lastBatchEpoch(b), "2");
      await assertIdentical(topic, a, b);
    },
  );
});

/** Writes `r<seq>` records one at a time (idempotent, acks=all) until stdin closes; prints "seq offset|ERR". */
const SEQUENTIAL_PRODUCER = `
import sys, time
from confluent_kafka import Producer
bootstrap, topic, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True,
              "message.timeout.ms": 30000, "linger.ms": 0})
seq = 0
end = time.time() + seconds
while time.time() < end:
    out = {}
    def report(err, msg):
        out["r"] = f"ERR {err}" if err else str(msg.offset())
    p.produce(topic, value=f"r{seq}".encode(), partition=0, on_delivery=report)
    p.flush(40)
    print(f"{seq} {out.get('r', 'ERR undelivered')}", flush=True)
    seq += 1
    time.sleep(0.01)
print("done", flush=True)
`;

test("KIP-101: offsets never go backwards while leadership moves back and forth", async () => {
  await withFullLogsOnFailure(
    "leader-epoch-acceptance",
    () => cluster,
    async () => {
      const c = cluster!;
      const topic = "kip101-offsets";
      const [a, b] = await twoNonControllers(c);
      await createTopic(topic, [a, b], {});
      const producer = startCommand(PYTHON, ["-c", SEQUENTIAL_PRODUCER, c.bootstrap(), topic, "25"]);
      const acked = () =>
        producer
          .stdout()
          .split("\n")
          .map((l) => /^(\d+) (\d+)$/.exec(l))
          .filter((m) => m !== null)
          .map((m) => ({ seq: Number(m[1]), offset: Number(m[2]) }));
      const marks: number[] = [];
      try {
        await c.waitFor("first records acknowledged", 15_000, async () =>
          acked().length >= 20 ? true : undefined,
        );
        // Leadership a → b (controlled shutdown of a), a back in the ISR, then b → a, b back.
        for (const [from, to] of [
          [a, b],
          [b, a],
        ]) {
          marks.push(acked().length);
          assert.equal(await c.stopBroker(from, "SIGTERM"), 0);
          await waitForPartition(c, topic, 0, to, [to]);
          await c.startBroker(from);
          await waitForPartition(c, topic, 0, to, [a, b]);
          await sleep(500);
        }
        marks.push(acked().length);
      } finally {
        const r = await producer.stop("SIGTERM", 10_000);
        if (r.stderr.trim() !== "") console.log(`producer stderr: ${r.stderr.slice(-1500)}`);
      }
      const records = acked();
      console.log(`${records.length} records acknowledged; before each leader change: ${marks.join(", ")}`);
      assert.ok(
        marks[1] > marks[0] && marks[2] > marks[1],
        `records acknowledged under each leader: ${marks}`,
      );
      const errors = producer
        .stdout()
        .split("\n")
        .filter((l) => / ERR /.test(l));
      assert.deepEqual(errors, [], "records not acknowledged");
      for (let i = 1; i < records.length; i++) {
        assert.ok(
          records[i].offset > records[i - 1].offset,
          `offset went backwards: r${records[i - 1].seq} at ${records[i - 1].offset}, then r${records[i].seq} at ${records[i].offset}`,
        );
      }
      await waitForPartition(c, topic, 0, a, [a, b]);
      const log = await assertIdentical(topic, a, b);
      for (const r of records)
        assert.equal(log.get(r.offset), `r${r.seq}`, `r${r.seq} acknowledged at ${r.offset}`);
    },
  );
});

test("KIP-101: no divergent logs after a clean failover (the old leader truncates its unreplicated tail)", async () => {
  await withFullLogsOnFailure(
    "leader-epoch-acceptance",
    () => cluster,
    async () => {
      const c = cluster!;
      const topic = "kip101-diverge";
      const [a, b] = await twoNonControllers(c);
      await createTopic(topic, [a, b], {}); // unclean election off
      for (let i = 0; i < 5; i++) await produceOne(c.bootstrap(), topic, 0, `m${i}`, "all");

      // b frozen (still in the ISR) once its fetch in flight has been answered (replica.fetch.wait.max.ms is
      // 500 ms: a frozen follower would otherwise still read a response carrying x5); a takes x5, x6 alone
      // (acks=1), and dies.
      c.suspendBroker(b);
      await sleep(1500);
      await produceOne(c.broker(a).bootstrap, topic, 0, "x5", "1");
      await produceOne(c.broker(a).bootstrap, topic, 0, "x6", "1");
      await c.stopBroker(a, "SIGKILL");
      c.resumeBroker(b);
      assert.equal((await c.partitionLog(a, topic, 0)).get(6), "x6");

      // b, in the ISR, is elected once a's session expired: a clean election. It takes y5..y7.
      await waitForPartition(c, topic, 0, b, [b], 30_000);
      assert.equal((await c.partitionLog(b, topic, 0)).size, 5, "b holds none of a's unreplicated records");
      for (let i = 5; i < 8; i++) await produceOne(c.bootstrap([a]), topic, 0, `y${i}`, "all");

      await c.startBroker(a);
      await waitForPartition(c, topic, 0, b, [a, b]);
      const log = await assertIdentical(topic, b, a);
      assert.deepEqual([...log.values()], ["m0", "m1", "m2", "m3", "m4", "y5", "y6", "y7"]);
      const truncation = c
        .broker(a)
        .stdout.match(new RegExp(`Truncating partition ${topic}-0 to offset (\\d+)`));
      assert.equal(
        truncation?.[1],
        "5",
        "the old leader truncated exactly its unreplicated tail (to offset 5)",
      );
    },
  );
});

test("KIP-279 double failover: the follower truncates iteratively across two epochs to the divergence point", async () => {
  await withFullLogsOnFailure(
    "leader-epoch-acceptance",
    () => cluster,
    async () => {
      const c = cluster!;
      const topic = "kip279-double";
      const [a, b] = await twoNonControllers(c);
      await createTopic(topic, [a, b], { "unclean.leader.election.enable": "true" });
      await produceOne(c.bootstrap(), topic, 0, "m0", "all");

      // b dies: a leads alone (the ISR shrink is a new epoch, ea) and takes a1 at offset 1; then a dies.
      await killUntilExpired(c, b);
      const ea = (await waitForPartition(c, topic, 0, a, [a])).leader_epoch;
      await produceOne(c.bootstrap([b]), topic, 0, "a1", "all");
      await killUntilExpired(c, a);
      await waitForPartition(c, topic, 0, -1);
      // First failover: b returns first and leads (epoch eb) from its log [m0]; it takes b1 at offset 1, dies.
      await c.startBroker(b);
      const eb = (await waitForPartition(c, topic, 0, b, [b])).leader_epoch;
      await produceOne(c.bootstrap([a]), topic, 0, "b1", "all");
      await killUntilExpired(c, b);
      await waitForPartition(c, topic, 0, -1);
      // Second failover: a returns and leads again (epoch ea2) without ever having followed b; it takes a2.
      await c.startBroker(a);
      const ea2 = (await waitForPartition(c, topic, 0, a, [a])).leader_epoch;
      assert.ok(ea < eb && eb < ea2, `epochs ${ea} < ${eb} < ${ea2}`);
      await produceOne(c.bootstrap([b]), topic, 0, "a2", "all");
      const wantA = ["0 0", `${ea} 1`, `${ea2} 2`];
      for (let i = 0; i < 60 && !isDeepStrictEqual(epochCheckpoint(c, a, topic, 0), wantA); i++)
        await sleep(50);
      assert.deepEqual(epochCheckpoint(c, a, topic, 0), wantA);
      assert.deepEqual(epochCheckpoint(c, b, topic, 0), ["0 0", `${eb} 1`]);

      // b returns as a's follower. It asks where its latest epoch eb ends: a never had eb and answers with its
      // largest epoch below it, ea, ending at 2. b has no epoch ea (its largest below is 0, ending at 1), so it
      // truncates to 1 and asks again about epoch 0 (a: ends at 1): b1 is dropped, a1 and a2 fetched. Taking
      // a's first answer as it is (truncate to min(2, its log end 2)) would keep b1 at offset 1.
      await c.startBroker(b);
      await waitForPartition(c, topic, 0, a, [a, b]);
      const log = await assertIdentical(topic, a, b);
      assert.deepEqual([...log.values()], ["m0", "a1", "a2"]);
      assert.deepEqual(epochCheckpoint(c, b, topic, 0), epochCheckpoint(c, a, topic, 0));
      const truncation = c
        .broker(b)
        .stdout.match(new RegExp(`Truncating partition ${topic}-0 to offset (\\d+)`));
      assert.equal(truncation?.[1], "1", "b truncated at the divergence point, offset 1");
    },
  );
});
