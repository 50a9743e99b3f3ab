// Issue 16: transactions across brokers. A confluent-kafka transactional producer writes to three
// partitions led by three different brokers, commits one transaction and aborts the next; the coordinator
// (the leader of the transactional id's __transaction_state partition) writes the markers to each
// partition's leader — WriteTxnMarkers to the other brokers — so a read_committed consumer (kcat) sees
// exactly the committed records on every partition and a read_uncommitted one sees both.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { runCommand } from "../support/broker-harness.js";
import { ClusterHarness, withLogTails } from "../support/cluster-harness.js";

const PYTHON = "/usr/bin/python3";
const KCAT = "/usr/bin/kcat";
const PER_PARTITION = 20;
let cluster: ClusterHarness | undefined;

before(async () => {
  cluster = await ClusterHarness.start({ brokers: 3, name: "transactions-cluster" });
});

after(async () => {
  await cluster?.close();
});

const TRANSACTIONAL_PRODUCER = `
import sys
from confluent_kafka import Producer
bootstrap, topic, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
p = Producer({"bootstrap.servers": bootstrap, "transactional.id": "cluster-txn", "transaction.timeout.ms": 30000})
p.init_transactions(30)
for outcome in ("commit", "abort"):
    p.begin_transaction()
    for part in range(3):
        for i in range(n):
            p.produce(topic, value=f"{outcome}-{part}-{i}".encode(), partition=part)
    p.flush(30)
    if outcome == "commit":
        p.commit_transaction(30)
    else:
        p.abort_transaction(30)
print("done")
`;

async function readAll(bootstrap: string, topic: string, isolation: string): Promise<string[]> {
  const r = await runCommand(
    KCAT,
    [
      "-b",
      bootstrap,
      "-C",
      "-t",
      topic,
      "-o",
      "beginning",
      "-e",
      "-q",
      "-f",
      "%p %s\\n",
      "-X",
      `isolation.level=${isolation}`,
    ],
    { timeoutMs: 30_000 },
  );
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.split("\n").filter((l) => l !== "");
}

test("a transaction over partitions led by three brokers commits and aborts on each of them", async () => {
  await withLogTails(
    () => cluster,
    async () => {
      const c = cluster!;
      // One partition led by each broker.
      await c.topics(["--create", "--topic", "txn", "--replica-assignment", "0:1:2,1:2:0,2:0:1"]);
      const parts = await c.waitForDescribe(
        "txn",
        "3 partitions, full ISRs",
        20_000,
        (ps) => ps.length === 3 && ps.every((p) => p.isr.length === 3),
      );
      assert.deepEqual(parts.map((p) => p.leader).sort(), [0, 1, 2]);
      const bootstrap = c.bootstrap();
      const r = await runCommand(
        PYTHON,
        ["-c", TRANSACTIONAL_PRODUCER, bootstrap, "txn", String(PER_PARTITION)],
        {
          timeoutMs: 90_000,
        },
      );
      assert.equal(r.stdout.trim(), "done", r.stdout + r.stderr);
      const committed = await readAll(bootstrap, "txn", "read_committed");
      for (const p of [0, 1, 2]) {
        const mine = committed.filter((l) => l.startsWith(`${p} `));
        assert.equal(mine.length, PER_PARTITION, `partition ${p}: ${mine.length} committed records read`);
        assert.ok(
          mine.every((l) => l.startsWith(`${p} commit-${p}-`)),
          mine.join("\n"),
        );
      }
      const uncommitted = await readAll(bootstrap, "txn", "read_uncommitted");
      assert.equal(uncommitted.length, 2 * 3 * PER_PARTITION, "both transactions' records, read_uncommitted");
    },
  );
});
