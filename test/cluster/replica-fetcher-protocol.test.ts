// Issue 17, the replica fetcher's protocol on a real 3-broker cluster (real ZooKeeper, broker processes)
// with num.replica.fetchers=2:
// - partitions of a leader are spread over two fetchers by Kafka's getFetcherId, each fetcher opens its own
//   incremental fetch session (KIP-227) with the leader, no session error is logged, and after acks=all
//   writes every replica of every partition holds the same batches (offsets, epochs, CRCs);
// - KIP-101's divergence story (as leader-epoch-truncation.test.ts) is resolved by the DivergingEpoch of
//   Fetch v12: the returning follower logs its truncation "(diverging epoch: …)" and no broker received a
//   single OffsetForLeaderEpoch request (kafka_network_requestmetrics_requests_total).

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { getFetcherId } from "../../src/server/replication/fetcher-id.js";
import { parseExposition } from "../server/metrics/exposition-parser.js";
import { runCommand } from "../support/broker-harness.js";
import { ClusterHarness, formatDescribe, withLogTails } from "../support/cluster-harness.js";
import { createAssignedTopic, twoNonControllers } from "../support/failover-steps.js";

const KCAT = "/usr/bin/kcat";
const SPREAD = "spread";
const PARTITIONS = 6;
const DIVERGE = "diverge";
let cluster: ClusterHarness | undefined;

before(async () => {
  cluster = await ClusterHarness.start({
    brokers: 3,
    name: "replica-fetcher-protocol",
    overrides: { "num.replica.fetchers": "2" },
  });
});

after(async () => {
  await cluster?.close();
});

async function produce(bootstrap: string, topic: string, partition: number, values: string[], acks: string) {
  const r = await runCommand(
    KCAT,
    ["-b", bootstrap, "-P", "-t", topic, "-p", String(partition), "-X", `acks=${acks}`],
    { input: `${values.join("\n")}\n`, timeoutMs: 30_000 },
  );
  assert.equal(r.code, 0, r.stderr);
}

/** OffsetForLeaderEpoch requests broker i answered since it started (all versions). */
async function offsetForLeaderEpochRequests(i: number): Promise<number> {
  const res = await fetch(cluster!.broker(i).metricsUrl);
  assert.equal(res.status, 200);
  const family = parseExposition(await res.text()).get("kafka_network_requestmetrics_requests_total");
  assert.ok(family, "request metrics exposed");
  return family.samples
    .filter((s) => s.labels.request === "OffsetForLeaderEpoch")
    .reduce((a, s) => a + s.value, 0);
}

test("two fetchers per leader, chosen by Kafka's fetcher id, each in its own fetch session", async () => {
  await withLogTails(
    () => cluster,
    async () => {
      const c = cluster!;
      await c.topics([
        "--create",
        "--topic",
        SPREAD,
        "--partitions",
        String(PARTITIONS),
        "--replication-factor",
        "3",
      ]);
      await c.waitForDescribe(
        SPREAD,
        "full ISR",
        30_000,
        (ps) => ps.length === PARTITIONS && ps.every((p) => p.isr.length === 3),
      );
      for (let p = 0; p < PARTITIONS; p++)
        await produce(
          c.bootstrap(),
          SPREAD,
          p,
          Array.from({ length: 40 }, (_, i) => `p${p}-m${i}`),
          "all",
        );
      for (let p = 0; p < PARTITIONS; p++) {
        const leader = (await c.describe(SPREAD)).find((d) => d.partition === p)!.leader;
        const onLeader = await c.partitionLog(leader, SPREAD, p);
        assert.equal(onLeader.size, 40, `partition ${p} holds what was acknowledged`);
        const batches = await c.partitionBatches(leader, SPREAD, p);
        for (const i of [0, 1, 2])
          assert.deepEqual(await c.partitionBatches(i, SPREAD, p), batches, `replica ${i} of ${SPREAD}-${p}`);
      }
      const fetcherIdsSeen = new Set<number>();
      for (const i of [0, 1, 2]) {
        const out = c.broker(i).stdout;
        for (const m of out.matchAll(
          /Added fetcher to broker (\d+) \(fetcherId (\d+)\) for partitions (.*)/g,
        )) {
          const fetcherId = Number(m[2]);
          for (const pm of m[3].matchAll(new RegExp(`${SPREAD}-(\\d+) \\(offset`, "g"))) {
            assert.equal(
              fetcherId,
              getFetcherId(SPREAD, Number(pm[1]), 2),
              `${SPREAD}-${pm[1]} on broker ${i}`,
            );
            fetcherIdsSeen.add(fetcherId);
          }
        }
        // Each fetcher (by its log context) had the leader create a session for it.
        for (const f of [0, 1])
          assert.match(
            out,
            new RegExp(`fetcherId=${f}\\] Node \\d created incremental fetch session \\d+`),
            `broker ${i} fetcher ${f} in a fetch session`,
          );
        assert.doesNotMatch(out, /was unable to process the fetch request/, `broker ${i}: no session error`);
      }
      assert.deepEqual([...fetcherIdsSeen].sort(), [0, 1]);
    },
  );
});

test("a diverged follower truncates on the Fetch response's DivergingEpoch, with no OffsetForLeaderEpoch", async () => {
  await withLogTails(
    () => cluster,
    async () => {
      const c = cluster!;
      const [a, b] = await twoNonControllers(c);
      await createAssignedTopic(c, DIVERGE, [a, b], { "unclean.leader.election.enable": "true" });
      await produce(c.bootstrap(), DIVERGE, 0, ["m1"], "all");
      // b fails; a alone takes m2; a fails; b returns first, is elected uncleanly and takes m3 at offset 1.
      await c.stopBroker(b, "SIGKILL");
      await c.waitForDescribe(DIVERGE, `ISR [${a}]`, 30_000, (ps) => ps[0]?.isr.join() === String(a));
      await produce(c.bootstrap([b]), DIVERGE, 0, ["m2"], "1");
      await c.stopBroker(a, "SIGKILL");
      await c.waitForDescribe(DIVERGE, "offline", 30_000, (ps) => ps[0]?.leader === -1);
      await c.startBroker(b);
      await c.waitForDescribe(DIVERGE, `led by ${b}`, 30_000, (ps) => ps[0]?.leader === b);
      await produce(c.bootstrap([a]), DIVERGE, 0, ["m3"], "1");

      const aOutBefore = c.broker(a).stdout.length;
      await c.startBroker(a);
      const parts = await c.waitForDescribe(DIVERGE, `${a} back in the ISR`, 30_000, (ps) =>
        (ps[0]?.isr ?? []).includes(a),
      );
      assert.equal(parts[0].leader, b, formatDescribe(parts));
      const onB = await c.partitionLog(b, DIVERGE, 0);
      assert.deepEqual(
        [...onB],
        [
          [0, "m1"],
          [1, "m3"],
        ],
      );
      assert.deepEqual([...(await c.partitionLog(a, DIVERGE, 0))], [...onB]);
      assert.deepEqual(await c.partitionBatches(a, DIVERGE, 0), await c.partitionBatches(b, DIVERGE, 0));
      const since = c.broker(a).stdout.slice(aOutBefore);
      assert.match(
        since,
        /Truncating partition diverge-0 to offset 1 \(diverging epoch: leader epoch \d+ ends at 1;/,
      );
      for (const i of [0, 1, 2])
        assert.equal(
          await offsetForLeaderEpochRequests(i),
          0,
          `OffsetForLeaderEpoch requests on broker ${i}`,
        );
    },
  );
});
