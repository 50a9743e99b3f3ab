// Issue 16: topic administration and broker identity in a cluster on a real ZooKeeper. Deleting a
// replicated topic removes its logs on every broker and its znodes; adding partitions through a broker
// that is not the controller works (NOT_CONTROLLER sends the client to the controller); a broker without
// broker.id gets one from /brokers/seqid (reserved.broker.max.id + 1 = 1001) and keeps it across restarts
// (meta.properties); a log dir that belongs to another cluster is refused at startup with one line.

import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { after, before, test } from "node:test";

import { BrokerHarness, runCommand, tributaryArgv } from "../support/broker-harness.js";
import { ClusterHarness, withLogTails } from "../support/cluster-harness.js";

let cluster: ClusterHarness | undefined;
const extra: BrokerHarness[] = [];

before(async () => {
  cluster = await ClusterHarness.start({ brokers: 3, name: "cluster-admin" });
});

after(async () => {
  for (const b of extra) await b.close();
  await cluster?.close();
});

function partitionDirs(logDir: string, topic: string): string[] {
  if (!existsSync(logDir)) return [];
  return readdirSync(logDir).filter((d) => d.startsWith(`${topic}-`));
}

test("deleting a replicated topic removes its logs on every broker and its znodes", async () => {
  await withLogTails(
    () => cluster,
    async () => {
      const c = cluster!;
      await c.createTopic("doomed", 3, 3);
      for (const b of c.brokers) assert.equal(partitionDirs(b.logDir, "doomed").length, 3, b.logDir);
      await c.topics(["--delete", "--topic", "doomed"]);
      await c.waitFor("doomed's logs gone from every broker", 20_000, async () =>
        c.brokers.every((b) => partitionDirs(b.logDir, "doomed").length === 0) ? true : undefined,
      );
      await c.waitFor("doomed's znodes gone", 10_000, async () =>
        (await c.stat("/brokers/topics/doomed")) === undefined &&
        ((await c.children("/admin/delete_topics")) ?? []).length === 0
          ? true
          : undefined,
      );
      const list = await c.topics(["--list"]);
      assert.ok(!list.split("\n").includes("doomed"), list);
    },
  );
});

test("partitions added through a broker that is not the controller get leaders and replicas", async () => {
  await withLogTails(
    () => cluster,
    async () => {
      const c = cluster!;
      await c.createTopic("growing", 2, 2);
      const controller = await c.waitForController();
      const other = c.brokers.findIndex((_, i) => i !== controller);
      await c.topics(["--alter", "--topic", "growing", "--partitions", "5"], c.broker(other).bootstrap);
      const parts = await c.waitForDescribe(
        "growing",
        "5 partitions, each led, 2 replicas in the ISR",
        20_000,
        (ps) => ps.length === 5 && ps.every((p) => p.leader >= 0 && p.isr.length === 2),
      );
      assert.equal(parts.length, 5);
    },
  );
});

test("broker.id from /brokers/seqid (1001), kept across a restart; another cluster's log dir is refused", async () => {
  await withLogTails(
    () => cluster,
    async () => {
      const c = cluster!;
      const zk = `${c.zk.connectString}${c.chroot}`;
      const b = await BrokerHarness.start({
        name: "generated-id",
        overrides: { "zookeeper.connect": zk, "zookeeper.session.timeout.ms": "6000" },
      });
      extra.push(b);
      await c.waitForRegistered([0, 1, 2, 1001], 20_000, true);
      await b.stop("SIGTERM");
      await b.restart();
      await c.waitForRegistered([0, 1, 2, 1001], 20_000, true);
      await b.stop("SIGTERM");
      // The same log dir pointed at another (empty) chroot: a new cluster id there, refused.
      const r = await runCommand(
        "node",
        tributaryArgv([
          "server-start",
          "--override",
          `zookeeper.connect=${c.zk.connectString}/elsewhere`,
          "--override",
          `log.dirs=${b.logDir}`,
          "--override",
          "listeners=PLAINTEXT://127.0.0.1:0",
          "--override",
          "metrics.http.listener=",
        ]),
        { timeoutMs: 30_000 },
      );
      assert.notEqual(r.code, 0, r.stdout + r.stderr);
      const out = r.stdout + r.stderr;
      assert.match(
        out,
        /cluster\.id \S+ doesn't match the cluster's id \S+: the broker is trying to join the wrong cluster/,
      );
      assert.doesNotMatch(out, /^\s+at /m, "no stack trace");
    },
  );
});
