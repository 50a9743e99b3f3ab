// Issue 18: replica throttles on a real cluster (real ZooKeeper, broker processes, the `tributary` tools,
// kcat as the reader).
//   - A throttled reassignment: two partitions holding THROTTLE_TEST_MB MB (default 240) on broker 0 move
//     to broker 1 with `reassign-partitions --execute --throttle THROTTLE_TEST_RATE` (default 12 MB/s).
//     The time from --execute to completion is what the rate implies (bytes / rate) ±20 %; while it runs,
//     ZooKeeper holds Kafka's throttle configs (rates on brokers 0 and 1, leader throttled replicas =
//     `p:0`, follower = `p:1`) and the leader's LeaderReplication byte-rate metric is near the rate;
//     `--verify` then clears them ("Clearing broker-level throttles on brokers 0,1", "Clearing
//     topic-level throttles on topic moving") — gone from ZooKeeper and from `configs --describe`; kcat
//     reads every record, offsets contiguous, from the new replica. The 1 GB variant:
//     `THROTTLE_TEST_MB=1024 npm run soak:throttle` (docs/benchmarks.md).
//   - `configs --alter --add-config leader.replication.throttled.rate=…` on a broker; bad values refused
//     with Kafka's error; `--execute --additional --throttle` changes the rate of a running throttled
//     reassignment (a crawl at 50 KB/s finishes at once at 100 MB/s); `--cancel` clears the throttles.
//   - `decommission-broker --throttle` sets the same throttles and clears them when the broker is empty.
//   - Followers in the ISR are never throttled: with 1000 B/s rates and `*` on both lists, acks=all
//     writes of 5 MB to an RF 2 topic go at full speed and the follower stays in the ISR.

import assert from "node:assert/strict";
import { readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { AdminClient } from "../../src/client/admin/admin-client.js";
import { PartitionAdmin } from "../../src/client/admin/partition-admin.js";
import {
  type CommandResult,
  outputLines as lines,
  runCommand,
  showResult as show,
} from "../support/broker-harness.js";
import { ClusterHarness, withLogTails } from "../support/cluster-harness.js";

const MB = Number(process.env.THROTTLE_TEST_MB ?? 240);
const RATE = Number(process.env.THROTTLE_TEST_RATE ?? 12_000_000);
const RECORD_SIZE = 1000;

let cluster: ClusterHarness | undefined;

before(async () => {
  cluster = await ClusterHarness.start({
    brokers: 2,
    name: "throttle",
    overrides: { "auto.leader.rebalance.enable": "false" },
  });
});

after(async () => {
  await cluster?.close();
});

async function tool(args: readonly string[], timeoutMs = 60_000): Promise<CommandResult> {
  const r = await cluster!.tributary(
    [args[0], "--bootstrap-server", cluster!.bootstrap(), ...args.slice(1)],
    timeoutMs,
  );
  assert.equal(r.code, 0, show(r));
  return r;
}

function file(name: string, text: string): string {
  const p = join(cluster!.broker(0).root, name);
  writeFileSync(p, text);
  return p;
}

function plan(topic: string, partitions: number, replicas: number[]): string {
  const parts = Array.from({ length: partitions }, (_, p) => ({ topic, partition: p, replicas }));
  return file(`${topic}-plan.json`, JSON.stringify({ version: 1, partitions: parts }));
}

/** Bytes of the partition's segment files on a broker. */
function logBytes(brokerIndex: number, topic: string, partition: number): number {
  const dir = join(cluster!.broker(brokerIndex).logDir, `${topic}-${partition}`);
  let n = 0;
  for (const f of readdirSync(dir)) if (f.endsWith(".log")) n += statSync(join(dir, f)).size;
  return n;
}

const THROTTLE_KEYS = [
  "leader.replication.throttled.rate",
  "follower.replication.throttled.rate",
  "replica.alter.log.dirs.io.max.bytes.per.second",
  "leader.replication.throttled.replicas",
  "follower.replication.throttled.replicas",
];

async function zkConfig(path: string): Promise<Record<string, string>> {
  const n = await cluster!.znodeJson<{ config: Record<string, string> }>(path);
  return n?.config ?? {};
}

async function describedThrottles(): Promise<string[]> {
  const out: string[] = [];
  for (const args of [
    ["--entity-type", "brokers", "--entity-name", "0"],
    ["--entity-type", "brokers", "--entity-name", "1"],
    ["--entity-type", "topics", "--entity-name", "moving"],
  ]) {
    const r = await tool(["configs", "--describe", ...args]);
    out.push(...lines(r.stdout).filter((l) => THROTTLE_KEYS.some((k) => l.includes(k))));
  }
  return out;
}

async function produce(topic: string, records: number, acks = "1"): Promise<void> {
  const r = await cluster!.tributary(
    [
      "producer-perf-test",
      "--topic",
      topic,
      "--num-records",
      String(records),
      "--record-size",
      String(RECORD_SIZE),
      "--throughput",
      "-1",
      "--producer-props",
      `bootstrap.servers=${cluster!.bootstrap()}`,
      `acks=${acks}`,
      "linger.ms=5",
      "batch.size=262144",
    ],
    300_000,
  );
  assert.equal(r.code, 0, show(r));
}

async function scrape(brokerIndex: number, name: string): Promise<number | undefined> {
  const res = await fetch(cluster!.broker(brokerIndex).metricsUrl);
  const m = new RegExp(`^${name} (\\S+)$`, "m").exec(await res.text());
  return m ? Number(m[1]) : undefined;
}

test(`a reassignment throttled to ${RATE} B/s moves ${MB} MB in the time the rate implies; --verify clears the throttles`, async () => {
  await withLogTails(
    () => cluster,
    async () => {
      const c = cluster!;
      await tool(["topics", "--create", "--topic", "moving", "--replica-assignment", "0,0"]);
      await c.waitForDescribe("moving", "2 partitions on broker 0", 20_000, (ps) => ps.length === 2);
      const records = Math.round((MB * 1_000_000) / RECORD_SIZE);
      await produce("moving", records);
      const bytes = logBytes(0, "moving", 0) + logBytes(0, "moving", 1);
      assert.ok(bytes >= MB * 1_000_000, `${bytes} bytes on disk`);

      const admin = new AdminClient({ bootstrapServers: c.bootstrap(), defaultApiTimeoutMs: 10_000 });
      const partitions = new PartitionAdmin(admin.cluster);
      try {
        const p = plan("moving", 2, [1]);
        const t0 = performance.now();
        const exec = await tool([
          "reassign-partitions",
          "--execute",
          "--reassignment-json-file",
          p,
          "--throttle",
          String(RATE),
        ]);
        const out = lines(exec.stdout);
        const warn = out.indexOf(
          "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.",
        );
        assert.ok(warn > 0, show(exec));
        assert.equal(out[warn + 1], `The inter-broker throttle limit was set to ${RATE} B/s`, show(exec));
        assert.equal(
          out[warn + 2],
          "Successfully started partition reassignments for moving-0,moving-1",
          show(exec),
        );
        // Kafka's throttle configs, while it runs.
        const rate = String(RATE);
        for (const id of [0, 1])
          assert.deepEqual(await zkConfig(`/config/brokers/${id}`), {
            "leader.replication.throttled.rate": rate,
            "follower.replication.throttled.rate": rate,
          });
        assert.deepEqual(await zkConfig("/config/topics/moving"), {
          "leader.replication.throttled.replicas": "0:0,1:0",
          "follower.replication.throttled.replicas": "0:1,1:1",
        });
        let leaderRate: number | undefined;
        let done = -1;
        for (;;) {
          const ongoing = await partitions.listPartitionReassignments();
          if (ongoing.length === 0) {
            done = performance.now();
            break;
          }
          const elapsed = performance.now() - t0;
          if (leaderRate === undefined && elapsed > 8000)
            leaderRate = await scrape(0, "kafka_server_leaderreplication_byte_rate");
          assert.ok(elapsed < (bytes / RATE) * 1000 * 2 + 30_000, `still moving after ${elapsed} ms`);
          await new Promise((r) => setTimeout(r, 200));
        }
        const seconds = (done - t0) / 1000;
        const implied = bytes / RATE;
        const figure = `moved ${bytes} bytes in ${seconds.toFixed(1)} s at --throttle ${RATE}: ${(bytes / seconds / 1e6).toFixed(2)} MB/s, implied ${implied.toFixed(1)} s (${(((seconds - implied) / implied) * 100).toFixed(1)} %); leader byte-rate metric at 8 s: ${leaderRate}`;
        process.stdout.write(`# ${figure}\n`);
        assert.ok(Math.abs(seconds - implied) <= implied * 0.2, figure);
        assert.ok(leaderRate !== undefined && leaderRate > RATE * 0.6 && leaderRate < RATE * 1.4, figure);

        const verify = await tool(["reassign-partitions", "--verify", "--reassignment-json-file", p]);
        assert.deepEqual(
          lines(verify.stdout),
          [
            "Status of partition reassignment:",
            "Reassignment of partition moving-0 is completed.",
            "Reassignment of partition moving-1 is completed.",
            "Clearing broker-level throttles on brokers 0,1",
            "Clearing topic-level throttles on topic moving",
          ],
          show(verify),
        );
        for (const path of ["/config/brokers/0", "/config/brokers/1", "/config/topics/moving"])
          assert.deepEqual(await zkConfig(path), {}, path);
        assert.deepEqual(await describedThrottles(), []);
      } finally {
        await admin.close();
      }

      // Every record, from the new replica (broker 1 is now the only one), offsets contiguous.
      const described = await c.describe("moving");
      assert.deepEqual(
        described.map((d) => [d.leader, d.replicas]),
        [
          [1, [1]],
          [1, [1]],
        ],
      );
      const read = await runCommand(
        "kcat",
        ["-C", "-b", c.bootstrap(), "-t", "moving", "-o", "beginning", "-e", "-q", "-f", "%p %o %S\\n"],
        { timeoutMs: 180_000 },
      );
      assert.equal(read.code, 0, show({ ...read, stdout: read.stdout.slice(0, 2000) }));
      const next = [0, 0];
      let count = 0;
      for (const l of read.stdout.split("\n")) {
        if (l === "") continue;
        const [part, offset, size] = l.split(" ").map(Number);
        assert.equal(offset, next[part], `partition ${part}: offset ${offset} after ${next[part] - 1}`);
        assert.equal(size, RECORD_SIZE);
        next[part]++;
        count++;
      }
      assert.equal(count, records);
    },
  );
});

test("configs sets the broker throttles; --execute --additional --throttle changes a running one's rate; --cancel clears them", async () => {
  await withLogTails(
    () => cluster,
    async () => {
      const c = cluster!;
      const set = await tool([
        "configs",
        "--entity-type",
        "brokers",
        "--entity-name",
        "0",
        "--alter",
        "--add-config",
        "leader.replication.throttled.rate=5000000,follower.replication.throttled.rate=6000000",
      ]);
      assert.match(set.stdout, /Completed updating config for broker 0\./);
      const described = await tool([
        "configs",
        "--describe",
        "--entity-type",
        "brokers",
        "--entity-name",
        "0",
      ]);
      assert.match(
        described.stdout,
        /^ {2}leader\.replication\.throttled\.rate=5000000 sensitive=false synonyms=\{DYNAMIC_BROKER_CONFIG:leader\.replication\.throttled\.rate=5000000\}$/m,
      );
      assert.equal((await zkConfig("/config/brokers/0"))["follower.replication.throttled.rate"], "6000000");
      const bad = await c.tributary([
        "configs",
        "--bootstrap-server",
        c.bootstrap(),
        "--entity-type",
        "brokers",
        "--entity-name",
        "0",
        "--alter",
        "--add-config",
        "leader.replication.throttled.rate=-1",
      ]);
      assert.notEqual(bad.code, 0);
      assert.match(bad.stderr + bad.stdout, /leader\.replication\.throttled\.rate/);

      await tool(["topics", "--create", "--topic", "crawl", "--replica-assignment", "0"]);
      await c.waitForDescribe("crawl", "on broker 0", 20_000, (ps) => ps.length === 1);
      const badList = await c.tributary([
        "configs",
        "--bootstrap-server",
        c.bootstrap(),
        "--entity-type",
        "topics",
        "--entity-name",
        "crawl",
        "--alter",
        "--add-config",
        "leader.replication.throttled.replicas=0-1",
      ]);
      assert.notEqual(badList.code, 0);
      assert.match(badList.stderr + badList.stdout, /\[partitionId\]:\[brokerId\]/);
      await produce("crawl", 5000); // 5 MB: 100 s at 50 KB/s
      const p = plan("crawl", 1, [1]);
      await tool(["reassign-partitions", "--execute", "--reassignment-json-file", p, "--throttle", "50000"]);
      assert.equal((await zkConfig("/config/brokers/1"))["follower.replication.throttled.rate"], "50000");
      await new Promise((r) => setTimeout(r, 3000));
      const slow = await tool(["reassign-partitions", "--verify", "--reassignment-json-file", p]);
      assert.ok(slow.stdout.includes("Reassignment of partition crawl-0 is still in progress."), show(slow));
      assert.ok(!slow.stdout.includes("Clearing"), show(slow));
      // One fetch (replica.fetch.max.bytes, 1 MB) goes before the quota has measured anything; then 50 KB/s.
      const copied = logBytes(1, "crawl", 0);
      assert.ok(copied < 2_500_000, `${copied} of 5 MB copied after ~3 s at 50 KB/s`);

      // Without --additional an execute is refused while one runs; with it, the new rate applies.
      const refused = await c.tributary([
        "reassign-partitions",
        "--bootstrap-server",
        c.bootstrap(),
        "--execute",
        "--reassignment-json-file",
        p,
        "--throttle",
        "100000000",
      ]);
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr + refused.stdout, /Use --additional to override this/);
      const faster = await tool([
        "reassign-partitions",
        "--execute",
        "--additional",
        "--reassignment-json-file",
        p,
        "--throttle",
        "100000000",
        "--replica-alter-log-dirs-throttle",
        "2000000",
      ]);
      assert.ok(
        faster.stdout.includes("The inter-broker throttle limit was set to 100000000 B/s"),
        show(faster),
      );
      // As Kafka: the log-dir rate goes only to brokers with a replica moving between log dirs (none here).
      assert.ok(
        faster.stdout.includes("The replica-alter-dir throttle limit was set to 2000000 B/s"),
        show(faster),
      );
      assert.equal(
        (await zkConfig("/config/brokers/1"))["replica.alter.log.dirs.io.max.bytes.per.second"],
        undefined,
      );
      for (const id of [0, 1])
        assert.equal(
          (await zkConfig(`/config/brokers/${id}`))["leader.replication.throttled.rate"],
          "100000000",
        );
      // The throttled replicas keep the running move's sources and destinations.
      assert.deepEqual(await zkConfig("/config/topics/crawl"), {
        "leader.replication.throttled.replicas": "0:0",
        "follower.replication.throttled.replicas": "0:1",
      });
      await c.waitFor("crawl-0 moved at the new rate", 20_000, async () => {
        const r = await tool(["reassign-partitions", "--verify", "--reassignment-json-file", p]);
        return r.stdout.includes("is completed.") ? true : undefined;
      });
      for (const path of ["/config/brokers/0", "/config/brokers/1", "/config/topics/crawl"])
        assert.deepEqual(await zkConfig(path), {}, path);

      // --cancel clears the throttles of a cancelled one (unless --preserve-throttles).
      const back = plan("crawl", 1, [0]);
      await tool([
        "reassign-partitions",
        "--execute",
        "--reassignment-json-file",
        back,
        "--throttle",
        "50000",
      ]);
      const kept = await tool([
        "reassign-partitions",
        "--verify",
        "--preserve-throttles",
        "--reassignment-json-file",
        back,
      ]);
      assert.ok(!kept.stdout.includes("Clearing"), show(kept));
      const cancel = await tool(["reassign-partitions", "--cancel", "--reassignment-json-file", back]);
      assert.deepEqual(
        lines(cancel.stdout),
        [
          "Successfully cancelled partition reassignment for: crawl-0",
          "Clearing broker-level throttles on brokers 0,1",
          "Clearing topic-level throttles on topic crawl",
        ],
        show(cancel),
      );
      for (const path of ["/config/brokers/0", "/config/brokers/1", "/config/topics/crawl"])
        assert.deepEqual(await zkConfig(path), {}, path);
    },
  );
});

test("decommission-broker --throttle throttles the moves as reassign-partitions does and clears the throttles when done", async () => {
  await withLogTails(
    () => cluster,
    async () => {
      const c = cluster!;
      // Broker 0 holds only this topic by now (the others moved to broker 1).
      await tool(["topics", "--create", "--topic", "leaving", "--replica-assignment", "0"]);
      await c.waitForDescribe("leaving", "on broker 0", 20_000, (ps) => ps.length === 1);
      await produce("leaving", 4000); // 4 MB: ~2 s at 2 MB/s
      const moving = (await tool(["topics", "--list"])).stdout;
      const r = await tool(
        ["decommission-broker", "--broker-id", "0", "--throttle", "2000000", "--timeout", "120000"],
        150_000,
      );
      const out = lines(r.stdout);
      const at = out.indexOf("The inter-broker throttle limit was set to 2000000 B/s");
      assert.ok(at > 0, show(r));
      assert.equal(out.at(-3), "Clearing broker-level throttles on brokers 0,1", show(r));
      assert.equal(out.at(-2), "Clearing topic-level throttles on topic leaving", show(r));
      assert.equal(out.at(-1), "Broker 0 holds no partition replicas now: it can be stopped.");
      for (const path of ["/config/brokers/0", "/config/brokers/1", "/config/topics/leaving"])
        assert.deepEqual(await zkConfig(path), {}, path);
      assert.ok(moving.includes("leaving"));
      assert.deepEqual(
        (await c.describe("leaving")).map((d) => d.replicas),
        [[1]],
      );
    },
  );
});

test("in-sync followers are not throttled: acks=all at full speed under a 1000 B/s throttle on every replica", async () => {
  await withLogTails(
    () => cluster,
    async () => {
      const c = cluster!;
      await tool(["topics", "--create", "--topic", "insync", "--replica-assignment", "1:0"]);
      await c.waitForDescribe("insync", "ISR 1,0", 20_000, (ps) => ps.length === 1 && ps[0].isr.length === 2);
      for (const id of ["0", "1"])
        await tool([
          "configs",
          "--entity-type",
          "brokers",
          "--entity-name",
          id,
          "--alter",
          "--add-config",
          "leader.replication.throttled.rate=1000,follower.replication.throttled.rate=1000",
        ]);
      await tool([
        "configs",
        "--entity-type",
        "topics",
        "--entity-name",
        "insync",
        "--alter",
        "--add-config",
        "leader.replication.throttled.replicas=*,follower.replication.throttled.replicas=*",
      ]);
      assert.equal((await zkConfig("/config/topics/insync"))["leader.replication.throttled.replicas"], "*");
      const t0 = performance.now();
      await produce("insync", 5000, "all"); // 5 MB: 5000 s at 1000 B/s if it were throttled
      const seconds = (performance.now() - t0) / 1000;
      assert.ok(seconds < 60, `${seconds} s`);
      const [p] = await c.describe("insync");
      assert.deepEqual([p.leader, [...p.isr].sort()], [1, [0, 1]]);
      assert.ok(logBytes(0, "insync", 0) >= 5_000_000, `${logBytes(0, "insync", 0)} bytes on the follower`);
      for (const id of ["0", "1"])
        await tool([
          "configs",
          "--entity-type",
          "brokers",
          "--entity-name",
          id,
          "--alter",
          "--delete-config",
          "leader.replication.throttled.rate,follower.replication.throttled.rate",
        ]);
    },
  );
});
