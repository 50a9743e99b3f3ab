// Moving a replica between the log dirs of one broker (AlterReplicaLogDirs, issue 18), with a real broker
// process holding two log dirs:
//   - a partition holding ~200 MB moves to the other dir while a confluent-kafka producer (acks=all,
//     idempotent) keeps writing to it; `tributary log-dirs --describe` run during the move (the broker held
//     with SIGSTOP right after AlterReplicaLogDirs answered, so the copy of 200 MB cannot be over) shows the
//     future replica in the target dir (isFuture true, offsetLag > 0); afterwards the files are in the target
//     dir, nothing of the partition is left in the old one, the leader-epoch-checkpoint came along;
//   - the move back is interrupted by SIGKILL of the broker right after AlterReplicaLogDirs answered (a
//     `-future` dir is on disk); after a restart it completes by itself;
//   - every acknowledged record is read back with kcat, once, at contiguous offsets; after a clean stop
//     the recovery-point, log-start and replication-offset checkpoints of the partition are in its new dir
//     only, with the log end offset.
//   - with replica.alter.log.dirs.io.max.bytes.per.second set (configs --alter on the broker), a ~40 MB
//     move takes bytes / rate (within -30 %/+100 %), log-dirs --describe half way shows the future replica;
//   - bad requests sent with @platformatic/kafka's AlterReplicaLogDirs v2 get Kafka's error codes:
//     LOG_DIR_NOT_FOUND (a path not in log.dirs, a relative path), KAFKA_STORAGE_ERROR (an offline log dir),
//     UNKNOWN_TOPIC_OR_PARTITION, INVALID_TOPIC_EXCEPTION (a future dir name over 255 characters), and NONE
//     for a replica already in the dir asked for.

import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { alterReplicaLogDirsV2, Connection } from "@platformatic/kafka";
import { AdminClient } from "../../src/client/admin/admin-client.js";
import { ReplicaLogDirAdmin } from "../../src/client/admin/replica-log-dir-admin.js";
import {
  BrokerHarness,
  describeResult,
  readWithKcat,
  runCommand,
  sleep,
  startCommand,
  waitFor,
} from "../support/broker-harness.js";
import { runTributary } from "../support/tributary-cli.js";

const PYTHON = "/usr/bin/python3";
/** Records written before the moves: ~200 MB, a copy that takes a good fraction of a second at least. */
const PRELOAD = 320_000;

/** Writes "p-<i>" with acks=all until the stop file exists; prints every acknowledged value. */
const PRODUCE_UNTIL_STOPPED = `
import sys, os, time
from confluent_kafka import Producer
bootstrap, topic, stopfile = sys.argv[1], sys.argv[2], sys.argv[3]
p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True, "linger.ms": 5,
              "message.timeout.ms": 120000, "reconnect.backoff.max.ms": 500})
acked = []
def cb(err, msg):
    if err is None: acked.append(msg.value().decode())
i = 0
while not os.path.exists(stopfile):
    try:
        p.produce(topic, ("p-%d" % i).encode(), on_delivery=cb)
        i += 1
    except BufferError:
        p.poll(0.05)
        continue
    if i % 50 == 0:
        p.poll(0)
        time.sleep(0.005)
left = p.flush(90)
print("\\n".join(acked))
sys.stderr.write("produced %d, acknowledged %d, unflushed %d\\n" % (i, len(acked), left))
`;

function partitionEntries(dir: string, tp: string): string[] {
  return readdirSync(dir).filter((n) => n === tp || n.startsWith(`${tp}.`));
}

function checkpointOffset(file: string, topic: string, partition: number): bigint | undefined {
  if (!existsSync(file)) return undefined;
  for (const line of readFileSync(file, "utf8").split("\n").slice(2)) {
    const [t, p, o] = line.split(" ");
    if (t === topic && Number(p) === partition) return BigInt(o);
  }
  return undefined;
}

/** Sends AlterReplicaLogDirs v2 with @platformatic/kafka; the error code of each partition, in order. */
async function alterWithPlatformatic(
  broker: BrokerHarness,
  dirs: ReadonlyArray<{ path: string; topic: string; partition: number }>,
): Promise<number[]> {
  const conn = new Connection("alter-log-dirs-test");
  await conn.connect(broker.host, broker.port);
  try {
    let response: {
      results: Array<{ topicName: string; partitions: Array<{ partitionIndex: number; errorCode: number }> }>;
    };
    try {
      response = await alterReplicaLogDirsV2.api.async(
        conn,
        dirs.map((d) => ({ path: d.path, topics: [{ name: d.topic, partitions: [d.partition] }] })),
      );
    } catch (e) {
      // The client throws on any error code; the response comes with it.
      const r = (e as { response?: typeof response }).response;
      if (r === undefined) throw e;
      response = r;
    }
    return dirs.map((d) => {
      const t = response.results.find((x) => x.topicName === d.topic);
      const p = t?.partitions.find((x) => x.partitionIndex === d.partition);
      assert.ok(p !== undefined, `no result for ${d.topic}-${d.partition}`);
      return p.errorCode;
    });
  } finally {
    await conn.close();
  }
}

describe("AlterReplicaLogDirs on one broker with two log dirs", () => {
  const work = mkdtempSync(join(tmpdir(), "tributary-alter-log-dirs-"));
  const dirA = join(work, "a");
  const dirB = join(work, "b");
  const stopFile = join(work, "stop-producer");
  let broker: BrokerHarness | undefined;
  let admin: AdminClient | undefined;

  after(async () => {
    writeFileSync(stopFile, "");
    await admin?.close();
    await broker?.close();
    rmSync(work, { recursive: true, force: true });
  });

  async function currentAndFuture(topic: string): Promise<[string | null, string | null]> {
    const dirs = new ReplicaLogDirAdmin(admin!.cluster);
    const [info] = await dirs.describeReplicaLogDirs([{ topic, partition: 0, brokerId: 0 }]);
    return [info.currentReplicaLogDir, info.futureReplicaLogDir];
  }

  /** AlterReplicaLogDirs, then `signal` to the broker the moment it answered. */
  async function moveThenSignal(topic: string, dir: string, signal: NodeJS.Signals): Promise<void> {
    const dirs = new ReplicaLogDirAdmin(admin!.cluster);
    const [r] = await dirs.alterReplicaLogDirs([{ topic, partition: 0, brokerId: 0, dir }]);
    process.kill(broker!.pid!, signal);
    assert.equal(r.error, undefined, `AlterReplicaLogDirs: ${r.error?.message}`);
  }

  test("a partition moves while a producer writes, survives a SIGKILL mid-move, loses nothing", async (t) => {
    const b = await BrokerHarness.start({
      name: "alter-log-dirs",
      overrides: { "log.dirs": `${dirA},${dirB}`, "num.partitions": "1" },
    });
    broker = b;
    admin = new AdminClient({ bootstrapServers: b.bootstrap });
    const created = await runTributary([
      "topics",
      "--bootstrap-server",
      b.bootstrap,
      "--create",
      "--topic",
      "moving",
      "--partitions",
      "1",
      "--replication-factor",
      "1",
      "--config",
      "segment.bytes=8388608",
    ]);
    assert.equal(created.code, 0, describeResult("topics --create", created));
    const [source] = await currentAndFuture("moving");
    assert.ok(source === dirA || source === dirB, `moving-0 is in ${source}`);
    const target = source === dirA ? dirB : dirA;

    // ~200 MB to copy (kcat), then a producer that keeps writing.
    const preload = join(work, "preload.txt");
    const value = "v".repeat(600);
    writeFileSync(preload, Array.from({ length: PRELOAD }, (_, i) => `pre-${i}-${value}`).join("\n") + "\n");
    const loaded = await runCommand(
      "/usr/bin/kcat",
      ["-b", b.bootstrap, "-P", "-t", "moving", "-l", preload],
      {
        timeoutMs: 120_000,
      },
    );
    assert.equal(loaded.code, 0, describeResult("kcat -P", loaded));
    const producer = startCommand(PYTHON, ["-c", PRODUCE_UNTIL_STOPPED, b.bootstrap, "moving", stopFile]);
    await sleep(1000);
    const epochsBefore = readFileSync(join(source!, "moving-0", "leader-epoch-checkpoint"), "utf8");

    // 1. The move, with log-dirs --describe while it runs.
    await moveThenSignal("moving", target, "SIGSTOP");
    const describing = runTributary(
      ["log-dirs", "--bootstrap-server", b.bootstrap, "--describe", "--topic-list", "moving"],
      { timeoutMs: 60_000 },
    );
    await sleep(1500);
    process.kill(b.pid!, "SIGCONT");
    const described = await describing;
    assert.equal(described.code, 0, describeResult("log-dirs --describe", described));
    const doc = JSON.parse(described.stdout.split("\n").find((l) => l.startsWith("{"))!) as {
      brokers: Array<{
        logDirs: Array<{
          logDir: string;
          partitions: Array<{ partition: string; size: number; offsetLag: number; isFuture: boolean }>;
        }>;
      }>;
    };
    const inDir = (d: string) => doc.brokers[0].logDirs.find((x) => x.logDir === d)!.partitions;
    const future = inDir(target).find((p) => p.partition === "moving-0");
    t.diagnostic(`during the move: ${JSON.stringify(doc.brokers[0].logDirs)}`);
    assert.ok(future?.isFuture === true, `the future replica in ${target}: ${described.stdout}`);
    assert.ok(future.offsetLag > 0, `a future replica still behind: ${described.stdout}`);
    const current = inDir(source!).find((p) => p.partition === "moving-0");
    assert.ok(current?.isFuture === false && current.offsetLag === 0, described.stdout);
    assert.ok(current.size > future.size, described.stdout);

    await waitFor("the move to complete", 60_000, async () => {
      const [cur, fut] = await currentAndFuture("moving");
      return cur === target && fut === null ? true : undefined;
    });
    await waitFor(`nothing left in ${source}`, 10_000, async () =>
      partitionEntries(source!, "moving-0").length === 0 ? true : undefined,
    );
    assert.deepEqual(partitionEntries(target, "moving-0"), ["moving-0"]);
    assert.ok(readdirSync(join(target, "moving-0")).filter((f) => f.endsWith(".log")).length > 5);
    const epochsAfter = readFileSync(join(target, "moving-0", "leader-epoch-checkpoint"), "utf8");
    assert.equal(epochsAfter, epochsBefore, "the leader epochs came along");

    // 2. The move back, interrupted by SIGKILL; a restart completes it.
    await moveThenSignal("moving", source!, "SIGKILL");
    await waitFor("the broker gone", 10_000, async () => (b.isRunning ? undefined : true)).catch(() => {});
    const futures = partitionEntries(source!, "moving-0");
    assert.equal(futures.length, 1, `a future dir in ${source}: ${futures}`);
    assert.match(futures[0], /^moving-0\.[0-9a-f]{32}-future$/);
    t.diagnostic(
      `after SIGKILL: ${source}: ${futures[0]} (${readdirSync(join(source!, futures[0])).length} files)`,
    );
    assert.deepEqual(partitionEntries(target, "moving-0"), ["moving-0"]);
    await b.restart();
    await waitFor("the interrupted move to complete", 60_000, async () => {
      const [cur, fut] = await currentAndFuture("moving");
      return cur === source && fut === null ? true : undefined;
    });
    await waitFor(`nothing left in ${target}`, 10_000, async () =>
      partitionEntries(target, "moving-0").length === 0 ? true : undefined,
    );
    assert.deepEqual(partitionEntries(source!, "moving-0"), ["moving-0"]);

    // 3. Every acknowledged record, once, at contiguous offsets.
    await sleep(500);
    writeFileSync(stopFile, "");
    const produced = await producer.exited;
    assert.equal(produced.code, 0, describeResult("producer", produced));
    const acked = produced.stdout.split("\n").filter((l) => l !== "");
    assert.ok(acked.length > 1000, `records acknowledged during the moves: ${produced.stderr}`);
    const read = await readWithKcat(b.bootstrap, "moving", 120_000);
    t.diagnostic(
      `${acked.length} records acknowledged during the moves (${produced.stderr.trim()}); ${read.length} read`,
    );
    const gaps = read.filter((m, i) => m.offset !== i).map((m) => m.offset);
    assert.deepEqual(gaps.slice(0, 5), [], "contiguous offsets from 0");
    const values = new Map<string, number>();
    for (const m of read) values.set(m.value, (values.get(m.value) ?? 0) + 1);
    const missing = acked.filter((v) => !values.has(v));
    assert.deepEqual(missing.slice(0, 10), [], `${missing.length} acknowledged records missing`);
    const twice = [...values].filter(([, n]) => n > 1);
    assert.deepEqual(twice.slice(0, 10), [], "no record twice");
    assert.equal(read.filter((m) => m.value.startsWith("pre-")).length, PRELOAD);

    // 4. A clean stop: the checkpoints of the partition are in its dir only, at the log end.
    await b.stop("SIGTERM");
    const end = BigInt(read.length);
    for (const name of ["recovery-point-offset-checkpoint", "replication-offset-checkpoint"]) {
      assert.equal(checkpointOffset(join(source!, name), "moving", 0), end, `${name} in ${source}`);
      assert.equal(checkpointOffset(join(target, name), "moving", 0), undefined, `${name} in ${target}`);
    }
    assert.equal(checkpointOffset(join(source!, "log-start-offset-checkpoint"), "moving", 0) ?? 0n, 0n);
    assert.equal(
      readFileSync(join(source!, "moving-0", "leader-epoch-checkpoint"), "utf8"),
      epochsBefore,
      "the leader epochs came back",
    );
    await b.restart();
    const again = await readWithKcat(b.bootstrap, "moving", 120_000);
    assert.equal(again.length, read.length, "the same records after a restart");
  });

  test("replica.alter.log.dirs.io.max.bytes.per.second bounds the copy", async (t) => {
    const dirs = [join(work, "t1"), join(work, "t2")];
    const b = await BrokerHarness.start({
      name: "alter-log-dirs-throttle",
      overrides: { "log.dirs": dirs.join(",") },
    });
    const throttledAdmin = new AdminClient({ bootstrapServers: b.bootstrap });
    try {
      const created = await runTributary([
        "topics",
        "--bootstrap-server",
        b.bootstrap,
        "--create",
        "--topic",
        "slow",
        "--partitions",
        "1",
        "--replication-factor",
        "1",
      ]);
      assert.equal(created.code, 0, describeResult("topics --create", created));
      const preload = join(work, "slow.txt");
      writeFileSync(
        preload,
        `${Array.from({ length: 64_000 }, (_, i) => `slow-${i}-${"s".repeat(600)}`).join("\n")}\n`,
      );
      const loaded = await runCommand(
        "/usr/bin/kcat",
        ["-b", b.bootstrap, "-P", "-t", "slow", "-l", preload],
        {
          timeoutMs: 60_000,
        },
      );
      assert.equal(loaded.code, 0, describeResult("kcat -P", loaded));
      const rate = 10_000_000;
      const configured = await runTributary([
        "configs",
        "--bootstrap-server",
        b.bootstrap,
        "--entity-type",
        "brokers",
        "--entity-name",
        "0",
        "--alter",
        "--add-config",
        `replica.alter.log.dirs.io.max.bytes.per.second=${rate}`,
      ]);
      assert.equal(configured.code, 0, describeResult("configs --alter", configured));
      await sleep(1000); // (the dynamic config reaches the quota through the metadata cache)
      const logDirs = new ReplicaLogDirAdmin(throttledAdmin.cluster);
      const [info] = await logDirs.describeReplicaLogDirs([{ topic: "slow", partition: 0, brokerId: 0 }]);
      const from = info.currentReplicaLogDir!;
      const to = dirs.find((d) => d !== from)!;
      const bytes = Number(
        (await throttledAdmin.describeLogDirs([0]))[0].logDirs.find((d) => d.path === from)!.replicas[0].size,
      );
      const started = Date.now();
      const [r] = await logDirs.alterReplicaLogDirs([{ topic: "slow", partition: 0, brokerId: 0, dir: to }]);
      assert.equal(r.error, undefined);
      // Half way: the future replica is there, behind.
      await sleep(((bytes / rate) * 1000) / 2);
      const described = await runTributary(["log-dirs", "--bootstrap-server", b.bootstrap, "--describe"]);
      assert.match(
        described.stdout,
        /"partition":"slow-0","size":\d+,"offsetLag":[1-9]\d*,"isFuture":true/,
        described.stdout,
      );
      await waitFor("the throttled move to complete", 60_000, async () => {
        const [i] = await logDirs.describeReplicaLogDirs([{ topic: "slow", partition: 0, brokerId: 0 }]);
        return i.currentReplicaLogDir === to && i.futureReplicaLogDir === null ? true : undefined;
      });
      const seconds = (Date.now() - started) / 1000;
      const expected = bytes / rate;
      t.diagnostic(
        `${bytes} bytes at ${rate} B/s: ${seconds.toFixed(2)} s (bytes / rate = ${expected.toFixed(2)} s)`,
      );
      // (The first window may run ahead: the rate is measured over at least one second.)
      assert.ok(
        seconds >= expected * 0.7 && seconds <= expected * 2,
        `${seconds} s for ${expected.toFixed(2)} s`,
      );
      assert.equal((await readWithKcat(b.bootstrap, "slow", 60_000)).length, 64_000);
    } finally {
      await throttledAdmin.close();
      await b.close();
    }
  });

  test("bad requests get Kafka's error codes (@platformatic/kafka)", async () => {
    const offline = join(work, "not-a-dir");
    writeFileSync(offline, "a file where a log dir should be");
    const b = await BrokerHarness.start({
      name: "alter-log-dirs-errors",
      overrides: { "log.dirs": `${join(work, "c")},${offline}` },
    });
    try {
      const created = await runTributary([
        "topics",
        "--bootstrap-server",
        b.bootstrap,
        "--create",
        "--topic",
        "here",
        "--partitions",
        "1",
        "--replication-factor",
        "1",
      ]);
      assert.equal(created.code, 0, describeResult("topics --create", created));
      const codes = await alterWithPlatformatic(b, [
        { path: join(work, "elsewhere"), topic: "here", partition: 0 },
      ]);
      assert.deepEqual(codes, [57], "LOG_DIR_NOT_FOUND for a dir not in log.dirs");
      assert.deepEqual(await alterWithPlatformatic(b, [{ path: "c", topic: "here", partition: 0 }]), [57]);
      assert.deepEqual(
        await alterWithPlatformatic(b, [{ path: offline, topic: "here", partition: 0 }]),
        [56],
        "KAFKA_STORAGE_ERROR for an offline dir",
      );
      assert.deepEqual(
        await alterWithPlatformatic(b, [{ path: join(work, "c"), topic: "nowhere", partition: 0 }]),
        [3],
        "UNKNOWN_TOPIC_OR_PARTITION",
      );
      assert.deepEqual(
        await alterWithPlatformatic(b, [{ path: join(work, "c"), topic: "x".repeat(220), partition: 0 }]),
        [17],
        "INVALID_TOPIC_EXCEPTION: the future dir name would be over 255 characters",
      );
      assert.deepEqual(
        await alterWithPlatformatic(b, [{ path: join(work, "c"), topic: "here", partition: 0 }]),
        [0],
        "NONE: the replica is already there",
      );
      assert.deepEqual(partitionEntries(join(work, "c"), "here-0"), ["here-0"], "nothing moved");
    } finally {
      await b.close();
    }
  });
});
