// Issue 16: consumer groups in a cluster. A confluent-kafka consumer group reads a topic whose partitions
// are led by three brokers, through the group's coordinator (the leader of its __consumer_offsets
// partition) and commits; `consumer-groups --describe` shows every partition at its log end with lag 0.
// Then the coordinator broker stops (SIGTERM): leadership of the __consumer_offsets partition moves to a
// follower that had replicated the commits, which becomes the coordinator and answers with the same
// committed offsets; a consumer of the same group resumes from them and reads only what came after.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { runCommand } from "../support/broker-harness.js";
import { ClusterHarness, withLogTails } from "../support/cluster-harness.js";

const PYTHON = "/usr/bin/python3";
const KCAT = "/usr/bin/kcat";
const GROUP = "cluster-group";
let cluster: ClusterHarness | undefined;

before(async () => {
  cluster = await ClusterHarness.start({ brokers: 3, name: "consumer-groups-cluster" });
});

after(async () => {
  await cluster?.close();
});

/** Reads `expected` records as a member of GROUP, commits synchronously, prints the values. */
const GROUP_CONSUMER = `
import sys
from confluent_kafka import Consumer
bootstrap, topic, expected = sys.argv[1], sys.argv[2], int(sys.argv[3])
c = Consumer({"bootstrap.servers": bootstrap, "group.id": "${GROUP}", "auto.offset.reset": "earliest",
              "enable.auto.commit": False})
c.subscribe([topic])
seen = []
import time
deadline = time.time() + 40
while len(seen) < expected and time.time() < deadline:
    m = c.poll(0.5)
    if m is None or m.error():
        continue
    seen.append(m.value().decode())
c.commit(asynchronous=False)
c.close()
print("\\n".join(seen))
`;

async function consume(bootstrap: string, topic: string, expected: number): Promise<string[]> {
  const r = await runCommand(PYTHON, ["-c", GROUP_CONSUMER, bootstrap, topic, String(expected)], {
    timeoutMs: 60_000,
  });
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.split("\n").filter((l) => l !== "");
}

/** `n` records spread evenly over the topic's 3 partitions (kcat's keyless records stick to one). */
async function produce(bootstrap: string, topic: string, tag: string, n: number): Promise<void> {
  for (let p = 0; p < 3; p++) {
    const input = Array.from({ length: n / 3 }, (_, i) => `${tag}-${p}-${i}`).join("\n") + "\n";
    const r = await runCommand(
      KCAT,
      ["-b", bootstrap, "-P", "-t", topic, "-p", String(p), "-X", "acks=all"],
      {
        input,
        timeoutMs: 30_000,
      },
    );
    assert.equal(r.code, 0, r.stderr);
  }
}

/** `consumer-groups --describe` rows: partition → [current offset, log end offset, lag]. */
async function describeGroup(c: ClusterHarness, via: string): Promise<Map<number, string[]>> {
  const r = await c.tributary(["consumer-groups", "--bootstrap-server", via, "--describe", "--group", GROUP]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const rows = new Map<number, string[]>();
  for (const line of r.stdout.split("\n")) {
    const f = line.trim().split(/\s+/);
    if (f[0] === GROUP && f[1] === "grouped") rows.set(Number(f[2]), [f[3], f[4], f[5]]);
  }
  return rows;
}

test("a group's commits survive the loss of its coordinator", async () => {
  await withLogTails(
    () => cluster,
    async () => {
      const c = cluster!;
      await c.topics(["--create", "--topic", "grouped", "--replica-assignment", "0:1:2,1:2:0,2:0:1"]);
      await c.waitForDescribe(
        "grouped",
        "full ISRs",
        20_000,
        (ps) => ps.length === 3 && ps.every((p) => p.isr.length === 3),
      );
      const bootstrap = c.bootstrap();
      await produce(bootstrap, "grouped", "first", 90);
      const first = await consume(bootstrap, "grouped", 90);
      assert.equal(first.length, 90, `read ${first.length} of 90`);
      let rows = await describeGroup(c, bootstrap);
      assert.equal(rows.size, 3, [...rows].join("\n"));
      for (const [p, [current, end, lag]] of rows) {
        assert.equal(current, end, `partition ${p}: committed ${current}, log end ${end}`);
        assert.equal(lag, "0");
      }
      const before = new Map(rows);
      // The coordinator: the leader of the group's __consumer_offsets partition.
      const coordinator = await coordinatorOf(c, bootstrap);
      assert.equal(await c.stopBroker(coordinator, "SIGTERM"), 0);
      const survivors = c.bootstrap([coordinator]);
      // The new coordinator serves the same committed offsets.
      rows = await c.waitFor("the group described by its new coordinator", 30_000, async () => {
        try {
          const r = await describeGroup(c, survivors);
          return r.size === 3 ? r : undefined;
        } catch {
          return undefined;
        }
      });
      for (const [p, [current]] of rows)
        assert.equal(current, before.get(p)![0], `partition ${p} committed offset`);
      // A member resumes after them: only the new records.
      await produce(survivors, "grouped", "second", 30);
      const second = await consume(survivors, "grouped", 30);
      assert.equal(second.length, 30, second.join(","));
      assert.ok(
        second.every((v) => v.startsWith("second-")),
        second.join(","),
      );
    },
  );
});

/** The group's coordinator broker, as `consumer-groups --describe --state` prints it. */
async function coordinatorOf(c: ClusterHarness, bootstrap: string): Promise<number> {
  const r = await c.tributary([
    "consumer-groups",
    "--bootstrap-server",
    bootstrap,
    "--describe",
    "--group",
    GROUP,
    "--state",
  ]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  // GROUP  COORDINATOR (ID)  ASSIGNMENT-STRATEGY  STATE  #MEMBERS
  const line = r.stdout.split("\n").find((l) => l.trim().startsWith(GROUP));
  const m = line ? /\((\d+)\)/.exec(line) : null;
  assert.ok(m, r.stdout);
  return Number(m[1]);
}
