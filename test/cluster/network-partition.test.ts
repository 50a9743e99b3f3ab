// Issue 17: one network partition of a leader, step by step (the deterministic case of the fault schedule's
// partition-leader kind). On 3 brokers whose inter-broker and ZooKeeper links run through a LinkProxy, a
// topic with RF 3 and min.insync.replicas=2 is led by broker L. L is cut off from the other brokers and from
// ZooKeeper while a client still reaches it:
//   - an idempotent acks=all producer that only knows L gets no acknowledgement (L cannot reach its ISR,
//     nor shrink it: the controller is on the other side);
//   - ZooKeeper expires L's session, the others elect a new leader N with a higher leader epoch, and
//     acks=all writes through N are acknowledged;
// After the heal, L registers again, follows N, truncates what it appended alone, and the ISR is full:
// every replica holds the same batches, the consumed log is exactly the acknowledged records in order,
// and nothing written to L alone survives.
// The same for the controller C (on a topic with a partition C leads): another broker becomes controller
// while C is cut off, C acknowledges nothing through its own (local) controller path, and after the heal C
// resigns: every broker names the new controller, and C follows the partition's new leader.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { readWithKcat, runCommand } from "../support/broker-harness.js";
import { ClusterHarness, SESSION_TIMEOUT_MS, withLogTails } from "../support/cluster-harness.js";
import { skipUnlessInstalled } from "../support/required-tools.js";

const PYTHON = "/usr/bin/python3";
const TOPIC = "partitioned";
const missing = skipUnlessInstalled("python3", "confluent-kafka", "kcat");
let cluster: ClusterHarness | undefined;

// argv: bootstrap topic partition message_timeout_ms values... Produces each value to the partition (idempotent,
// acks=all), waits for every delivery report; prints `ack <offset> <value>` or `fail <value> <error>`.
const PRODUCE = `
import sys
from confluent_kafka import Producer
bootstrap, topic, part, timeout_ms = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
values = sys.argv[5:]
p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all",
              "message.timeout.ms": timeout_ms, "request.timeout.ms": min(timeout_ms, 30000)})
def report(err, msg):
    if err is None:
        print("ack %d %s" % (msg.offset(), msg.value().decode()), flush=True)
    else:
        print("fail %s %s" % (msg.value().decode(), str(err).replace("\\n", " ")), flush=True)
for v in values:
    p.produce(topic, value=v.encode(), partition=part, on_delivery=report)
left = p.flush(timeout_ms / 1000 + 10)
print("left %d" % left, flush=True)
`;

interface Produced {
  acked: Array<{ offset: number; value: string }>;
  failed: string[];
  output: string;
}

async function produce(
  bootstrap: string,
  values: string[],
  timeoutMs: number,
  topic = TOPIC,
  partition = 0,
): Promise<Produced> {
  const args = ["-c", PRODUCE, bootstrap, topic, String(partition), String(timeoutMs), ...values];
  const r = await runCommand(PYTHON, args, { timeoutMs: timeoutMs + 30_000 });
  const output = `${r.stdout}\n${r.stderr}`;
  assert.equal(r.code, 0, output);
  const acked = [...r.stdout.matchAll(/^ack (\d+) (\S+)$/gm)].map((m) => ({
    offset: Number(m[1]),
    value: m[2],
  }));
  const failed = [...r.stdout.matchAll(/^fail (\S+) /gm)].map((m) => m[1]);
  return { acked, failed, output };
}

/** Waits (bounded) until the 3 replicas of a partition hold the same batches; the last listing on failure. */
async function sameBatches(c: ClusterHarness, topic: string, partition: number): Promise<void> {
  let last = "";
  await c
    .waitFor(`every replica of ${topic}-${partition} holds the same batches`, 30_000, async () => {
      const logs = await Promise.all([0, 1, 2].map((i) => c.partitionBatches(i, topic, partition)));
      last = logs.map((l, i) => `broker ${i}: ${l.join(" | ")}`).join("\n");
      return logs.every((l) => l.join() === logs[0].join()) ? true : undefined;
    })
    .catch((e) => {
      throw new Error(`${(e as Error).message}\n${last}`);
    });
}

const values = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

before(async () => {
  if (missing) return;
  cluster = await ClusterHarness.start({ brokers: 3, name: "network-partition", linkProxy: true });
  await cluster.createTopic(TOPIC, 1, 3, { "min.insync.replicas": "2" });
  await cluster.waitForDescribe(TOPIC, "led, full ISR", 30_000, (ps) => ps[0]?.isr.length === 3);
});

after(async () => {
  await cluster?.close();
});

test("an isolated leader acknowledges nothing, loses its leadership, and rejoins truncated after the heal", {
  skip: missing,
  timeout: 180_000,
}, async () => {
  const c = cluster!;
  await withLogTails(
    () => c,
    async () => {
      const before = await produce(c.bootstrap(), values("before", 10), 30_000);
      assert.equal(before.acked.length, 10, before.output);
      assert.ok(c.proxy!.counts.forwarded > 0, "inter-broker traffic goes through the proxy");
      const [start] = await c.describe(TOPIC);
      const startState = (await c.partitionState(TOPIC, 0))!;
      const old = start.leader;
      const others = [0, 1, 2].filter((i) => i !== old);
      const othersBootstrap = others.map((i) => c.broker(i).bootstrap).join(",");

      const cutAt = Date.now();
      c.isolateBroker(old);
      // A producer that only reaches the isolated leader, while the others take over.
      const isolatedWrite = produce(c.broker(old).bootstrap, values("isolated", 3), 12_000);
      const [moved] = await c.waitForDescribe(
        TOPIC,
        `a leader other than the isolated ${old}`,
        SESSION_TIMEOUT_MS + 30_000,
        (ps) => ps[0] !== undefined && ps[0].leader >= 0 && ps[0].leader !== old,
        othersBootstrap,
      );
      const movedMs = Date.now() - cutAt;
      assert.ok(!moved.isr.includes(old), `the isolated broker left the ISR: ${JSON.stringify(moved)}`);
      assert.ok(!(await c.registeredIds()).includes(old), "its session expired: no /brokers/ids entry");
      const movedState = (await c.partitionState(TOPIC, 0))!;
      assert.ok(movedState.leader_epoch > startState.leader_epoch, JSON.stringify(movedState));

      // New connections across the cut were accepted and never answered (a blackhole), not refused.
      assert.ok(c.proxy!.counts.blackholed > 0, JSON.stringify(c.proxy!.counts));
      const lonely = await isolatedWrite;
      assert.deepEqual(
        lonely.acked,
        [],
        `the isolated leader acknowledged acks=all writes:\n${lonely.output}`,
      );
      assert.equal(lonely.failed.length, 3, lonely.output);

      const afterCut = await produce(othersBootstrap, values("after", 10), 30_000);
      assert.equal(afterCut.acked.length, 10, afterCut.output);

      c.healBroker(old);
      await c.waitForRegistered([old], 30_000);
      await c.waitForDescribe(TOPIC, "full ISR after the heal", 60_000, (ps) => ps[0]?.isr.length === 3);
      // The old leader's own metadata names the new leader too.
      const [seenByOld] = await c.describe(TOPIC, c.broker(old).bootstrap);
      assert.notEqual(seenByOld.leader, old);

      const acked = [...before.acked, ...afterCut.acked];
      const consumed = await readWithKcat(c.bootstrap(), TOPIC, 30_000);
      assert.deepEqual(
        consumed.map((m) => `${m.offset} ${m.value}`),
        acked.map((a) => `${a.offset} ${a.value}`),
        "the consumed log is exactly the acknowledged records, in order",
      );
      await sameBatches(c, TOPIC, 0);
      const oldLog = await c.partitionLog(old, TOPIC, 0);
      assert.deepEqual(
        [...oldLog.values()].filter((v) => v.startsWith("isolated")),
        [],
        "what the isolated leader appended alone is truncated",
      );
      process.stderr.write(
        `[network-partition] leader ${old} cut off: new leader ${moved.leader} after ${movedMs} ms; ${lonely.failed.length} isolated writes failed, ${acked.length} acknowledged and consumed\n`,
      );
    },
  );
});

test("an isolated controller loses the role, acknowledges nothing it leads, and resigns after the heal", {
  skip: missing,
  timeout: 180_000,
}, async () => {
  const c = cluster!;
  const topic = "partitioned-controller";
  await withLogTails(
    () => c,
    async () => {
      await c.createTopic(topic, 3, 3, { "min.insync.replicas": "2" });
      const parts = await c.waitForDescribe(topic, "led, full ISR", 30_000, (ps) =>
        ps.every((p) => p.leader >= 0 && p.isr.length === 3),
      );
      const old = await c.waitForController(10_000);
      const led = parts.find((p) => p.leader === old);
      assert.ok(led, `the controller ${old} leads a partition of ${topic}`);
      const others = [0, 1, 2].filter((i) => i !== old);
      const othersBootstrap = others.map((i) => c.broker(i).bootstrap).join(",");
      const epochBefore = (await c.controllerEpoch())!;

      c.isolateBroker(old);
      const isolatedWrite = produce(
        c.broker(old).bootstrap,
        values("isolated", 3),
        12_000,
        topic,
        led.partition,
      );
      const next = await c.waitForController(SESSION_TIMEOUT_MS + 30_000, [old]);
      assert.ok(others.includes(next));
      assert.ok((await c.controllerEpoch())! > epochBefore);
      await c.waitForDescribe(
        topic,
        `no partition led by the isolated controller ${old}`,
        30_000,
        (ps) => ps.every((p) => p.leader >= 0 && p.leader !== old && !p.isr.includes(old)),
        othersBootstrap,
      );
      const lonely = await isolatedWrite;
      assert.deepEqual(
        lonely.acked,
        [],
        `the isolated controller acknowledged acks=all writes:\n${lonely.output}`,
      );
      const afterCut = await produce(othersBootstrap, values("after", 5), 30_000, topic, led.partition);
      assert.equal(afterCut.acked.length, 5, afterCut.output);

      c.healBroker(old);
      await c.waitForRegistered([old], 30_000);
      await c.waitForDescribe(topic, "full ISR after the heal", 60_000, (ps) =>
        ps.every((p) => p.isr.length === 3),
      );
      // One controller, the new one, in ZooKeeper and in every broker's metadata (the old one resigned).
      await c.waitFor(`every broker names controller ${next}`, 30_000, async () => {
        const ids = await Promise.all([0, 1, 2].map(async (i) => (await c.metadata(i)).controllerId));
        return ids.every((id) => id === next) && (await c.controllerId()) === next ? true : undefined;
      });
      const consumed = (await readWithKcat(c.bootstrap(), topic, 30_000)).filter(
        (m) => m.partition === led.partition,
      );
      assert.deepEqual(
        consumed.map((m) => `${m.offset} ${m.value}`),
        afterCut.acked.map((a) => `${a.offset} ${a.value}`),
      );
      await sameBatches(c, topic, led.partition);
    },
  );
});
