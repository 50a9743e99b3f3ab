// Issue 31, item 1: the caught-up rule under inter-broker latency. 3 brokers whose inter-broker links run
// through a LinkProxy holding every chunk 15 ms each way; one partition, RF 3, and a steady acks=1 stream of
// 3,000 records/s for 25 s; replica.lag.time.max.ms=4000. A follower fetching all the time is always one
// round trip behind the leader's log end, so a leader that counts it caught up only when its fetch reaches
// the log end *now* never does, and shrinks the ISR after replica.lag.time.max.ms. Kafka also counts a
// follower caught up when its fetch reaches the log end the leader had at its *previous* fetch
// (Replica.updateFetchState, lastFetchLeaderLogEndOffset): then the ISR stays full for the whole run —
// asked of every broker's Metadata twice a second; at the end ZooKeeper's partition epoch must be the one
// the topic started with (no ISR change at all, even one undone between two polls), and the leader must
// have logged no "Shrinking ISR".

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { ApiKey } from "../../src/protocol/generated/api-table.js";
import { ClusterHarness, sleep, withLogTails } from "../support/cluster-harness.js";
import {
  createPinnedTopic,
  logLines,
  metadataView,
  missingTools,
  SteadyProducer,
  waitForZkIsr,
  zkView,
} from "../support/isr-faults.js";

const TOPIC = "caught-up";
const LATENCY_MS = 15;
const RATE = 3000;
const SECONDS = 25;
const LAG_MS = 4000;
let cluster: ClusterHarness | undefined;

before(async () => {
  if (missingTools) return;
  cluster = await ClusterHarness.start({
    brokers: 3,
    name: "isr-caught-up",
    linkProxy: true,
    overrides: { "replica.lag.time.max.ms": String(LAG_MS) },
  });
});

after(async () => {
  await cluster?.close();
});

test("followers one round trip behind a steady stream stay in the ISR (the previous fetch's log end counts)", {
  skip: missingTools,
  timeout: 120_000,
}, async () => {
  const c = cluster!;
  await withLogTails(
    () => c,
    async () => {
      const controller = await c.waitForController();
      const [leader, f1] = [0, 1, 2].filter((i) => i !== controller);
      await createPinnedTopic(c, TOPIC, [leader, f1, controller]);
      const start = await waitForZkIsr(c, TOPIC, [0, 1, 2], 30_000, "the new topic");
      const proxy = c.proxy!;
      proxy.setLatency(LATENCY_MS);
      const fetchesBefore = proxy.requestsSeen(ApiKey.Fetch, undefined, leader);
      const producer = SteadyProducer.start(c.bootstrap(), TOPIC, RATE, SECONDS, 200);
      const startedAt = Date.now();
      let shrunk: { atMs: number; broker: number; isr: number[] } | undefined;
      try {
        while (Date.now() - startedAt < SECONDS * 1000 && shrunk === undefined) {
          for (const i of [0, 1, 2]) {
            const v = await metadataView(c, i, TOPIC);
            if (v !== undefined && v.isr.length < 3) {
              shrunk = { atMs: Date.now() - startedAt, broker: i, isr: v.isr };
              break;
            }
          }
          await sleep(500);
        }
      } finally {
        proxy.clearLatency();
      }
      const result = await producer.finish(shrunk !== undefined);
      const progress = `${result.produced} records produced, ${result.acked} acknowledged, ${result.failed} failed`;
      const shrinks = logLines(c, leader, /Shrinking ISR/);
      assert.equal(
        shrunk,
        undefined,
        `the ISR shrank ${shrunk?.atMs} ms into the stream (broker ${shrunk?.broker}'s Metadata: [${shrunk?.isr}]) with ${LATENCY_MS} ms each way; ${progress}; the leader ${leader} logged:\n${shrinks.join("\n")}`,
      );
      // A shrink quickly undone (the follower expanded back at once) can fall between two polls: the
      // partition epoch counts every ISR change.
      const zk = await zkView(c, TOPIC);
      assert.equal(
        zk?.partitionEpoch,
        start.partitionEpoch,
        `the ISR changed ${zk === undefined ? "?" : zk.partitionEpoch - start.partitionEpoch} times during the stream (ZooKeeper at the end: ${JSON.stringify(zk)}); ${progress}; the leader ${leader} logged:\n${logLines(c, leader, /(Shrinking|Expanding) ISR/).join("\n")}`,
      );
      assert.deepEqual(shrinks, [], `the leader ${leader} proposed shrinking the ISR`);
      assert.deepEqual(zk?.isr, [0, 1, 2], `ZooKeeper's state at the end: ${JSON.stringify(zk)}`);
      // The stream really ran for the whole time, through the delayed links.
      assert.ok(result.acked >= RATE * SECONDS * 0.5, progress);
      assert.equal(result.failed, 0, progress);
      const fetches = proxy.requestsSeen(ApiKey.Fetch, undefined, leader) - fetchesBefore;
      assert.ok(fetches > 100, `only ${fetches} fetches reached the leader through the proxy`);
      process.stderr.write(
        `[isr-caught-up] ${progress}; ${fetches} fetches to the leader, ISR full throughout\n`,
      );
    },
  );
});
