// Issue 18: reassignment JSON with explicit log_dirs on a real cluster (ZooKeeper, three broker processes
// with two log dirs each, `tributary reassign-partitions` as kafka-reassign-partitions.sh, confluent-kafka
// clients, @platformatic/kafka for a raw AlterReplicaLogDirs):
//   - one partition moves from brokers 0,1 to 1,2 with a log dir for each replica (broker 1 moves its
//     replica to its other dir, broker 2's new replica goes to the dir asked for: --execute retries
//     AlterReplicaLogDirs while broker 2 does not have the replica yet), another partition only moves
//     between the dirs of broker 2; --verify prints Kafka's partition and replica lines until everything
//     is complete; every acknowledged record is read back; the replicas are in the dirs asked for and
//     nowhere else;
//   - AlterReplicaLogDirs for a replica a broker does not have answers REPLICA_NOT_AVAILABLE and the broker
//     remembers the dir: a later reassignment that adds the replica there creates it in that dir;
//   - a follower's move interrupted by SIGKILL (a `-future` dir on disk) completes after the restart while
//     the follower catches up with what an acks=all producer wrote meanwhile; the replicas end identical;
//   - log_dirs that do not fit the plan (a relative path, a count that differs from the replicas') are one
//     line naming the file and JSON path, and change nothing; a dir the broker does not have is Kafka's
//     "Failed to alter dir" with LOG_DIR_NOT_FOUND.

import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { alterReplicaLogDirsV2, Connection } from "@platformatic/kafka";
import { AdminClient } from "../../src/client/admin/admin-client.js";
import { ReplicaLogDirAdmin } from "../../src/client/admin/replica-log-dir-admin.js";
import {
  type CommandResult,
  describeResult,
  outputLines as lines,
  runCommand,
  showResult as show,
} from "../support/broker-harness.js";
import { ClusterHarness, withLogTails } from "../support/cluster-harness.js";
import { waitUnregistered } from "../support/failover-steps.js";

const PYTHON = "/usr/bin/python3";
const work = mkdtempSync(join(tmpdir(), "tributary-reassign-log-dirs-"));
/** Log dir `d` (0 or 1) of broker `i`. */
const dirOf = (i: number, d: number): string => join(work, `b${i}`, d === 0 ? "one" : "two");
let cluster: ClusterHarness | undefined;

before(async () => {
  cluster = await ClusterHarness.start({
    brokers: 3,
    name: "reassign-log-dirs",
    overrides: { "auto.leader.rebalance.enable": "false" },
    brokerOverrides: (i) => ({ "log.dirs": `${dirOf(i, 0)},${dirOf(i, 1)}` }),
  });
});

after(async () => {
  await cluster?.close();
  rmSync(work, { recursive: true, force: true });
});

async function reassign(args: readonly string[]): Promise<CommandResult> {
  return cluster!.tributary(
    ["reassign-partitions", "--bootstrap-server", cluster!.bootstrap(), ...args],
    60_000,
  );
}

function file(name: string, text: string): string {
  const p = join(work, name);
  writeFileSync(p, text);
  return p;
}

/** The dirs of broker i holding something of `tp` (its log, a future log), as "<dir>/<name>". */
function placement(i: number, tp: string): string[] {
  const out: string[] = [];
  for (const d of [0, 1]) {
    if (!existsSync(dirOf(i, d))) continue;
    for (const n of readdirSync(dirOf(i, d)))
      if (n === tp || n.startsWith(`${tp}.`)) out.push(join(dirOf(i, d), n));
  }
  return out;
}

const PRODUCE = `
import sys
from confluent_kafka import Producer
bootstrap, topic, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True, "linger.ms": 5})
acked = []
for i in range(n):
    p.produce(topic, ("r-%d" % i).encode(), partition=i % 2, on_delivery=lambda err, msg: acked.append(0) if err is None else None)
    if i % 100 == 0: p.poll(0)
p.flush(30)
print(len(acked))
`;

const CONSUME = `
import sys, time
from confluent_kafka import Consumer
bootstrap, topic, expected = sys.argv[1], sys.argv[2], int(sys.argv[3])
c = Consumer({"bootstrap.servers": bootstrap, "group.id": "check-%f" % time.time(), "auto.offset.reset": "earliest", "enable.auto.commit": False})
c.subscribe([topic])
seen = []
deadline = time.time() + 30
while len(seen) < expected and time.time() < deadline:
    m = c.poll(0.5)
    if m is None or m.error(): continue
    seen.append(m.value().decode())
c.close()
print("\\n".join(seen))
`;

/** AlterReplicaLogDirs v2 with @platformatic/kafka to broker i: the error code of the one partition. */
async function alterWithPlatformatic(
  i: number,
  path: string,
  topic: string,
  partition: number,
): Promise<number> {
  const b = cluster!.broker(i);
  const conn = new Connection("reassign-log-dirs-test");
  await conn.connect(b.host, b.port);
  try {
    type Response = { results: Array<{ partitions: Array<{ errorCode: number }> }> };
    let response: Response;
    try {
      response = await alterReplicaLogDirsV2.api.async(conn, [
        { path, topics: [{ name: topic, partitions: [partition] }] },
      ]);
    } catch (e) {
      const r = (e as { response?: Response }).response;
      if (r === undefined) throw e;
      response = r;
    }
    return response.results[0].partitions[0].errorCode;
  } finally {
    await conn.close();
  }
}

test("a reassignment with log_dirs moves replicas between brokers and between dirs; --verify as Kafka", async () => {
  await withLogTails(
    () => cluster,
    async () => {
      const c = cluster!;
      await c.topics(["--create", "--topic", "spread", "--replica-assignment", "0:1,1:2"]);
      await c.waitForDescribe(
        "spread",
        "both partitions led",
        20_000,
        (ps) => ps.length === 2 && ps.every((p) => p.leader >= 0),
      );
      const r = await runCommand(PYTHON, ["-c", PRODUCE, c.bootstrap(), "spread", "20000"], {
        timeoutMs: 60_000,
      });
      assert.equal(r.code, 0, show(r));
      assert.equal(Number(r.stdout.trim()), 20000);

      // Where each replica is now, and the other dir of its broker.
      const dirIndex = (i: number, tp: string): number => {
        const p = placement(i, tp);
        assert.equal(p.length, 1, `${tp} on broker ${i}: ${p}`);
        return p[0].startsWith(`${dirOf(i, 0)}/`) ? 0 : 1;
      };
      const b1Target = dirOf(1, 1 - dirIndex(1, "spread-0"));
      const b2Target = dirOf(2, 1 - dirIndex(2, "spread-1"));
      const plan = file(
        "plan.json",
        JSON.stringify({
          version: 1,
          partitions: [
            { topic: "spread", partition: 0, replicas: [1, 2], log_dirs: [b1Target, dirOf(2, 1)] },
            { topic: "spread", partition: 1, replicas: [1, 2], log_dirs: ["any", b2Target] },
          ],
        }),
      );
      const exec = await reassign([
        "--execute",
        "--reassignment-json-file",
        plan,
        "--replica-alter-log-dirs-throttle",
        "100000000",
      ]);
      assert.equal(exec.code, 0, show(exec));
      const out = lines(exec.stdout);
      // The brokers whose replicas move between dirs get replica.alter.log.dirs.io.max.bytes.per.second.
      assert.ok(out.includes("The replica-alter-dir throttle limit was set to 100000000 B/s"), show(exec));
      assert.ok(
        out.includes("Successfully started partition reassignments for spread-0,spread-1"),
        show(exec),
      );
      // Sorted by broker, topic, partition, as Kafka prints them (with its trailing space).
      assert.deepEqual(
        out.filter((l) => l.startsWith("Successfully started moving")),
        [
          `Successfully started moving log directory to ${b1Target} for replica spread-0 with broker 1 `,
          `Successfully started moving log directory to ${dirOf(2, 1)} for replica spread-0 with broker 2 `,
          `Successfully started moving log directory to ${b2Target} for replica spread-1 with broker 2 `,
        ],
        show(exec),
      );

      const verified = await c.waitFor("the reassignment and the moves complete", 60_000, async () => {
        const v = await reassign(["--verify", "--reassignment-json-file", plan]);
        assert.equal(v.code, 0, show(v));
        // Once everything is complete, Kafka's --verify clears the throttles and says so.
        const got = lines(v.stdout).filter((l) => !l.startsWith("Clearing "));
        // Every line is one of Kafka's.
        for (const l of got.slice(1))
          assert.match(
            l,
            /^Reassignment of partition spread-[01] is (completed|still in progress)\.$|^Reassignment of replica spread-[01]-[12] (completed successfully|is still in progress)\.$/,
            show(v),
          );
        if (!got.every((l, i) => i === 0 || / is completed\.$| completed successfully\.$/.test(l)))
          return undefined;
        assert.match(v.stdout, /\nClearing broker-level throttles on brokers [\d,]+\n/, show(v));
        return got;
      });
      assert.deepEqual(verified, [
        "Status of partition reassignment:",
        "Reassignment of partition spread-0 is completed.",
        "Reassignment of partition spread-1 is completed.",
        "Reassignment of replica spread-0-1 completed successfully.",
        "Reassignment of replica spread-0-2 completed successfully.",
        "Reassignment of replica spread-1-2 completed successfully.",
      ]);
      await c.waitFor("broker 1's old copy of spread-0 removed", 10_000, async () =>
        placement(1, "spread-0").length === 1 ? true : undefined,
      );
      assert.deepEqual(placement(1, "spread-0"), [join(b1Target, "spread-0")]);
      assert.deepEqual(placement(2, "spread-0"), [join(dirOf(2, 1), "spread-0")]);
      await c.waitFor("broker 2's old copy of spread-1 removed", 10_000, async () =>
        placement(2, "spread-1").length === 1 ? true : undefined,
      );
      assert.deepEqual(placement(2, "spread-1"), [join(b2Target, "spread-1")]);
      await c.waitFor("broker 0's replica of spread-0 deleted", 20_000, async () =>
        placement(0, "spread-0").length === 0 ? true : undefined,
      );
      const consumed = await runCommand(PYTHON, ["-c", CONSUME, c.bootstrap(), "spread", "20000"], {
        timeoutMs: 60_000,
      });
      assert.equal(consumed.code, 0, show(consumed));
      const values = lines(consumed.stdout);
      assert.equal(new Set(values).size, 20000, "every acknowledged record, once");

      // A replica broker 0 does not have: REPLICA_NOT_AVAILABLE, and the dir is remembered for it.
      assert.equal(await alterWithPlatformatic(0, dirOf(0, 1), "spread", 1), 9);
      assert.deepEqual(placement(0, "spread-1"), []);
      const add = file(
        "add.json",
        '{"version":1,"partitions":[{"topic":"spread","partition":1,"replicas":[1,2,0]}]}',
      );
      const exec2 = await reassign(["--execute", "--reassignment-json-file", add]);
      assert.equal(exec2.code, 0, show(exec2));
      await c.waitFor("broker 0's replica of spread-1 created", 30_000, async () =>
        placement(0, "spread-1").length === 1 ? true : undefined,
      );
      assert.deepEqual(placement(0, "spread-1"), [join(dirOf(0, 1), "spread-1")], "in the dir remembered");
    },
  );
});

test("log_dirs that do not fit: one line naming the file and JSON path, nothing changed", async () => {
  await withLogTails(
    () => cluster,
    async () => {
      const c = cluster!;
      await c.topics(["--create", "--topic", "still", "--replica-assignment", "1"]);
      await c.waitForDescribe("still", "led by 1", 20_000, (ps) => ps[0]?.leader === 1);
      const before = placement(1, "still-0");
      const relative = file(
        "relative.json",
        '{"version":1,"partitions":[{"topic":"still","partition":0,"replicas":[1],"log_dirs":["two"]}]}',
      );
      const r1 = await reassign(["--execute", "--reassignment-json-file", relative]);
      assert.notEqual(r1.code, 0, show(r1));
      assert.equal(lines(r1.stdout + r1.stderr).length, 1, show(r1));
      assert.match(r1.stdout + r1.stderr, /relative\.json: partitions\[0\]\.log_dirs\[0\]: /, show(r1));
      const count = file(
        "count.json",
        `{"version":1,"partitions":[{"topic":"still","partition":0,"replicas":[1],"log_dirs":["${dirOf(1, 0)}","${dirOf(1, 1)}"]}]}`,
      );
      const r2 = await reassign(["--execute", "--reassignment-json-file", count]);
      assert.notEqual(r2.code, 0, show(r2));
      assert.equal(lines(r2.stdout + r2.stderr).length, 1, show(r2));
      assert.match(
        r2.stdout + r2.stderr,
        /count\.json: .*Size of replicas list \[1\] is different from size of log dirs list/,
        show(r2),
      );
      const unknown = file(
        "unknown.json",
        `{"version":1,"partitions":[{"topic":"still","partition":0,"replicas":[1],"log_dirs":["${join(work, "b1", "three")}"]}]}`,
      );
      const r3 = await reassign(["--execute", "--reassignment-json-file", unknown]);
      assert.notEqual(r3.code, 0, show(r3));
      assert.match(
        r3.stdout + r3.stderr,
        /Failed to alter dir for still-0-1: .*not found in the broker config/,
        show(r3),
      );
      assert.deepEqual(placement(1, "still-0"), before, "the replica stayed where it was");
      assert.deepEqual((await c.describe("still"))[0].replicas, [1]);
    },
  );
});

/** The batches (offsets, epoch, CRC) of the partition dir `dir`, by dump-log. */
async function batchesIn(dir: string): Promise<string[]> {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".log"))
    .sort()
    .map((f) => join(dir, f));
  const r = await cluster!.tributary(["dump-log", "--files", files.join(",")]);
  if (r.code !== 0) throw new Error(describeResult(`dump-log ${dir}`, r));
  return [
    ...r.stdout.matchAll(
      /^baseOffset: (\d+) lastOffset: (\d+) .*?partitionLeaderEpoch: (-?\d+) .*? crc: (\d+) isvalid: true$/gm,
    ),
  ].map((m) => `${m[1]}..${m[2]} epoch ${m[3]} crc ${m[4]}`);
}

test("a follower's move interrupted by SIGKILL completes after the restart; the replicas end identical", async () => {
  await withLogTails(
    () => cluster,
    async () => {
      const c = cluster!;
      await c.topics(["--create", "--topic", "killed", "--replica-assignment", "1:2"]);
      await c.waitForDescribe(
        "killed",
        "in sync on 1,2",
        20_000,
        (ps) => ps[0]?.leader === 1 && ps[0].isr.length === 2,
      );
      const preload = join(work, "killed.txt");
      writeFileSync(
        preload,
        `${Array.from({ length: 150_000 }, (_, i) => `k-${i}-${"k".repeat(500)}`).join("\n")}\n`,
      );
      const loaded = await runCommand(
        "/usr/bin/kcat",
        ["-b", c.bootstrap(), "-P", "-t", "killed", "-l", preload],
        {
          timeoutMs: 120_000,
        },
      );
      assert.equal(loaded.code, 0, show(loaded));
      await c.waitForDescribe("killed", "in sync on 1,2", 30_000, (ps) => ps[0]?.isr.length === 2);
      const from = placement(2, "killed-0")[0].slice(0, -"/killed-0".length);
      const to = from === dirOf(2, 0) ? dirOf(2, 1) : dirOf(2, 0);
      const admin = new AdminClient({ bootstrapServers: c.bootstrap() });
      try {
        const [r] = await new ReplicaLogDirAdmin(admin.cluster).alterReplicaLogDirs([
          { topic: "killed", partition: 0, brokerId: 2, dir: to },
        ]);
        await c.stopBroker(2, "SIGKILL");
        assert.equal(r.error, undefined, r.error?.message);
      } finally {
        await admin.close();
      }
      const onDisk = placement(2, "killed-0");
      assert.equal(onDisk.length, 2, `the current log and a future log: ${onDisk}`);
      assert.ok(
        onDisk.some((p) => /\/killed-0\.[0-9a-f]{32}-future$/.test(p) && p.startsWith(`${to}/`)),
        `${onDisk}`,
      );
      await waitUnregistered(c, 2);
      // Written while broker 2 is down: it catches up on its current log while the copy goes on.
      const more = join(work, "killed-more.txt");
      writeFileSync(more, `${Array.from({ length: 4000 }, (_, i) => `more-${i}`).join("\n")}\n`);
      const r2 = await runCommand(
        "/usr/bin/kcat",
        ["-b", c.bootstrap([2]), "-P", "-t", "killed", "-X", "acks=all", "-l", more],
        { timeoutMs: 60_000 },
      );
      assert.equal(r2.code, 0, show(r2));
      await c.startBroker(2);
      await c.waitFor("broker 2's replica moved", 60_000, async () => {
        const p = placement(2, "killed-0");
        return p.length === 1 && p[0] === join(to, "killed-0") ? true : undefined;
      });
      await c.waitForDescribe("killed", "in sync on 1,2 again", 30_000, (ps) => ps[0]?.isr.length === 2);
      const leader = await batchesIn(placement(1, "killed-0")[0]);
      assert.ok(leader.length > 10);
      await c.waitFor("broker 2's replica identical to the leader's", 30_000, async () =>
        (await batchesIn(join(to, "killed-0"))).join() === leader.join() ? true : undefined,
      );
    },
  );
});
