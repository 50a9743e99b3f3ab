// Issue 17 on a cluster: 3 brokers on a real ZooKeeper, a topic with 3 partitions × RF 3 and
// min.insync.replicas=2; broker 2's log dir is a 64 MiB tmpfs that something else fills up. Broker 2's
// next append fails with ENOSPC: the dir is full, broker 2 writes /log_dir_event_notification/
// log_dir_event_<seq> ({"version":1,"broker":2,"event":1}), the controller deletes it, asks broker 2 with
// LeaderAndIsr, gets KAFKA_STORAGE_ERROR for its replicas and takes them offline: leadership moves off
// broker 2, it leaves every ISR, acks=all producing goes on, and `tributary log-dirs --describe` shows
// the dir's KafkaStorageException. Once space is freed (the filler file removed), broker 2 finds its dir
// writable without a restart, notifies again, and its replicas rejoin every ISR. Every acknowledged record
// is read back. Then a failure that is not a full disk: broker 2 restarted with disk-0's segment turned
// into a directory (EISDIR) answers KAFKA_STORAGE_ERROR for that replica only; disk-0 is led elsewhere
// without broker 2 in its ISR while broker 2 rejoins the other ISRs, and acks=all goes on. Skipped when a
// tmpfs cannot be mounted (not root).

import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { describeResult, runCommand } from "../support/broker-harness.js";
import { ClusterHarness, formatDescribe, withLogTails } from "../support/cluster-harness.js";
import { freeBytes, mountTmpfs, produceWithOutcomes, unmount } from "../support/tmpfs-mount.js";
import { runTributary } from "../support/tributary-cli.js";

const TOPIC = "disk";
const FULL = 2;
const MIB = 1024 * 1024;
const RECORD_BYTES = 16 * 1024;

const probe = mountTmpfs("tributary-full-probe-", 1);
const skip = "skip" in probe ? probe.skip : false;
if ("dir" in probe) unmount(probe.dir);

let cluster: ClusterHarness | undefined;
let mounted: string | undefined;
const work = mkdtempSync(join(tmpdir(), "tributary-full-cluster-"));

before(async () => {
  if (skip) return;
  cluster = await ClusterHarness.start({
    brokers: 3,
    name: "log-dir-full",
    overrides: {
      "log.dir.space.reserve.bytes": String(2 * MIB),
      "log.dir.full.probe.interval.ms": "500",
      "log.segment.bytes": String(4 * MIB),
    },
  });
  // Broker 2's log dir moves onto a small tmpfs of its own (stopped, copied, mounted in place, started).
  const b = cluster.brokers[FULL];
  await cluster.stopBroker(FULL, "SIGTERM");
  const saved = join(work, "saved");
  cpSync(b.logDir, saved, { recursive: true });
  for (const e of readdirSync(b.logDir)) rmSync(join(b.logDir, e), { recursive: true, force: true });
  const r = await runCommand("mount", ["-t", "tmpfs", "-o", "size=64m", "tmpfs", b.logDir]);
  assert.equal(r.code, 0, describeResult("mount", r));
  mounted = b.logDir;
  cpSync(saved, b.logDir, { recursive: true });
  await cluster.startBroker(FULL);
});

after(async () => {
  try {
    // Lazily first: the broker may still hold files there, and close() removes the mount point.
    if (mounted !== undefined) await runCommand("umount", ["-l", mounted]);
  } finally {
    await cluster?.close();
    rmSync(work, { recursive: true, force: true });
  }
});

/** Writes a filler file leaving about `leaveBytes` free on the tmpfs. */
function fill(dir: string, leaveBytes: number): string {
  const file = join(dir, "filler.bin");
  const size = Math.max(0, freeBytes(dir) - leaveBytes);
  writeFileSync(file, Buffer.alloc(size));
  return file;
}

test("a full log dir moves leadership off its broker, acks=all goes on, and the replica rejoins once space is freed", {
  skip,
  timeout: 240_000,
}, async () => {
  await withLogTails(
    () => cluster,
    async () => {
      const c = cluster!;
      await c.createTopic(TOPIC, 3, 3, { "min.insync.replicas": "2" });
      await c.waitForDescribe(
        TOPIC,
        "3 partitions, each led and fully in sync",
        30_000,
        (ps) => ps.length === 3 && ps.every((p) => p.leader >= 0 && p.isr.length === 3),
      );
      const acked = new Map<number, [number, number]>();
      let nextKey = 0;
      const produce = async (count: number): Promise<void> => {
        const out = await produceWithOutcomes(c.bootstrap(), TOPIC, {
          first: nextKey,
          count,
          size: RECORD_BYTES,
          stopOnError: false,
          workDir: work,
          retries: 60,
        });
        nextKey += count;
        for (const [k, p, o] of out.acked) acked.set(k, [p, o]);
        assert.deepEqual(out.errors, [], "every acks=all record acknowledged");
      };
      await produce(200);

      // Something else fills broker 2's disk; its next append fails with ENOSPC.
      const dir = mounted!;
      const filler = fill(dir, 512 * 1024);
      await produce(300);
      const broker = c.brokers[FULL];
      assert.match(broker.output, /Log dir \S+ is full/);
      assert.match(broker.output, /Log dir \S+ is full: telling the controller/);
      assert.match(
        broker.output,
        /Told the controller about a log dir event \(\S*\/log_dir_event_notification\/log_dir_event_\d{10}\)/,
      );

      const moved = await c.waitForDescribe(
        TOPIC,
        `broker ${FULL} leading nothing and out of every ISR`,
        30_000,
        (ps) =>
          ps.length === 3 && ps.every((p) => p.leader !== FULL && p.leader >= 0 && !p.isr.includes(FULL)),
      );
      for (const p of moved) assert.equal(p.isr.length, 2, formatDescribe(moved));
      // The controller handled and deleted the notification.
      const pending = await c.children("/log_dir_event_notification");
      assert.deepEqual(pending, [], "no notification left");

      // acks=all with min.insync.replicas=2 goes on with the two other replicas.
      await produce(200);

      const dirs = await runTributary([
        "log-dirs",
        "--bootstrap-server",
        c.bootstrap(),
        "--describe",
        "--broker-list",
        String(FULL),
      ]);
      assert.equal(dirs.code, 0, describeResult("log-dirs --describe", dirs));
      assert.match(dirs.stdout, /"error":"org\.apache\.kafka\.common\.errors\.KafkaStorageException"/);

      // Space freed: broker 2's dir is writable again without a restart and its replicas rejoin.
      rmSync(filler);
      const back = await c.waitForDescribe(
        TOPIC,
        `broker ${FULL} back in every ISR`,
        60_000,
        (ps) => ps.length === 3 && ps.every((p) => p.isr.length === 3),
      );
      assert.ok(
        back.every((p) => p.isr.includes(FULL)),
        formatDescribe(back),
      );
      assert.match(broker.output, /has free space again/);
      await produce(100);

      // Every acknowledged record is there.
      const r = await runCommand(
        "/usr/bin/kcat",
        ["-b", c.bootstrap(), "-C", "-t", TOPIC, "-o", "beginning", "-e", "-q", "-f", "%p\\t%o\\t%k\\n"],
        { timeoutMs: 60_000 },
      );
      assert.equal(r.code, 0, describeResult("kcat -C", r));
      const read = new Map<number, [number, number]>();
      for (const line of r.stdout.split("\n")) {
        if (line === "") continue;
        const [p, o, k] = line.split("\t").map(Number);
        read.set(k, [p, o]);
      }
      for (const [k, at] of acked) assert.deepEqual(read.get(k), at, `acknowledged record ${k}`);
      assert.equal(acked.size, 800);
    },
  );
});

test("a replica whose log fails to open (an I/O error, not a full disk) is offline: not led, not in the ISR", {
  skip,
  timeout: 120_000,
}, async () => {
  await withLogTails(
    () => cluster,
    async () => {
      const c = cluster!;
      const broker = c.brokers[FULL];
      await c.stopBroker(FULL, "SIGTERM");
      // disk-0's first segment becomes a directory: opening the log fails with EISDIR.
      const segment = join(broker.logDir, `${TOPIC}-0`, "00000000000000000000.log");
      renameSync(segment, `${segment}.saved`);
      mkdirSync(segment);
      await c.startBroker(FULL);
      const parts = await c.waitForDescribe(
        TOPIC,
        `broker ${FULL} back in the ISRs of ${TOPIC}-1 and ${TOPIC}-2 only`,
        60_000,
        (ps) =>
          ps.length === 3 && ps.every((p) => (p.partition === 0) !== p.isr.includes(FULL) && p.leader >= 0),
      );
      assert.notEqual(parts.find((p) => p.partition === 0)?.leader, FULL, formatDescribe(parts));
      assert.match(broker.output, new RegExp(`Partition ${TOPIC}-0 in dir \\S+ is offline`));
      const out = await produceWithOutcomes(c.bootstrap(), TOPIC, {
        first: 100_000,
        count: 50,
        size: 1024,
        stopOnError: false,
        workDir: work,
        retries: 60,
      });
      assert.deepEqual(out.errors, []);
      assert.equal(out.acked.length, 50);
    },
  );
});
