// The controller's event queue metrics, read from a real 2-broker ZooKeeper cluster's /metrics under the
// JMX exporter's names (kafka.controller:type=ControllerStats,name=<State>RateAndTimeMs, and
// type=ControllerEventManager EventQueueTimeMs / EventQueueSize): a topic created runs a TopicChange
// event on the controller (and on no other broker: only the controller watches /brokers/topics); the other
// broker stopped with SIGTERM runs a ControlledShutdown event, then a BrokerChange when its registration
// goes. Each of those states' count moves by what ran, the queue-time histogram counts them too, and the
// states nothing triggered (deletion, reassignment, elections asked for, log dirs, …) stay at zero.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { sampleValue } from "../server/metrics/exposition-parser.js";
import { ClusterHarness, withLogTails } from "../support/cluster-harness.js";
import {
  requireSample,
  type Scrape,
  scrapeMetrics,
  waitForScrape as waitForMetrics,
} from "../support/metrics-scrape.js";

let cluster: ClusterHarness | undefined;

before(async () => {
  cluster = await ClusterHarness.start({
    brokers: 2,
    name: "controller-event-metrics",
    // No AutoLeaderBalance check (Kafka's first one comes 5 s after a failover) among the states that stay still.
    overrides: { "auto.leader.rebalance.enable": "false" },
  });
});

after(async () => {
  await cluster?.close();
});

const STATS = "kafka_controller_controllerstats_";
const QUEUE_TIME = "kafka_controller_controllereventmanager_eventqueuetimems";
const QUEUE_SIZE = "kafka_controller_controllereventmanager_eventqueuesize";

function scrape(i: number): Promise<Scrape> {
  return scrapeMetrics(cluster!.broker(i).metricsUrl);
}

/** `_count` of a state's timer (`metric`: Kafka's name as the exporter lowercases it). */
function count(s: Scrape, metric: string): number {
  return requireSample(s, `${STATS}${metric}_count`);
}

function counts(s: Scrape, metrics: readonly string[]): Record<string, number> {
  return Object.fromEntries(metrics.map((m) => [m, count(s, m)]));
}

/** Waits until broker i's scrape satisfies `check`; the last scrape's controller samples are in the error. */
function waitForScrape(i: number, what: string, check: (s: Scrape) => boolean): Promise<Scrape> {
  return waitForMetrics(
    cluster!.broker(i).metricsUrl,
    `broker ${i}: ${what}`,
    check,
    /^kafka_controller_/,
    30_000,
  );
}

// Lowercased Kafka metric names of the states that run here, and of those nothing in this test triggers.
const RAN = ["topicchangerateandtimems", "controlledshutdownrateandtimems", "brokerchangerateandtimems"];
const STILL = [
  "topicdeletionrateandtimems",
  "partitionreassignmentrateandtimems",
  "listpartitionreassignmentrateandtimems",
  "autoleaderbalancerateandtimems",
  "manualleaderbalancerateandtimems",
  "logdirchangerateandtimems",
  "controllershutdownrateandtimems",
  "uncleanleaderelectionenablerateandtimems",
  "topicuncleanleaderelectionenablerateandtimems",
  "updatefeaturesrateandtimems",
];

test("per-ControllerState rate-and-time metrics count the events that ran: topic creation, controlled shutdown, broker change", async () => {
  const c = cluster!;
  await withLogTails(
    () => cluster,
    async () => {
      const controller = await c.waitForController();
      const other = controller === 0 ? 1 : 0;
      // Both brokers' queues ran their Startup event (ControllerChange), and only those timers exist per state.
      const first = await scrape(controller);
      assert.ok(count(first, "controllerchangerateandtimems") >= 1);
      assert.ok(count(await scrape(other), "controllerchangerateandtimems") >= 1);
      for (const name of ["idle", "updatemetadataresponsereceived", "alterpartitionreassignment"])
        assert.equal(first.get(`${STATS}${name}rateandtimems`), undefined, `${name}: no timer, as Kafka`);
      for (const m of [...RAN, ...STILL]) {
        assert.equal(first.get(`${STATS}${m}`)?.type, "gauge", `${m}{quantile} is a gauge`);
        assert.equal(first.get(`${STATS}${m}_count`)?.type, "counter", `${m}_count is a counter`);
        assert.ok(first.get(`${STATS}${m}_sum`), `${m}_sum`);
      }
      assert.equal(first.get(QUEUE_SIZE)?.type, "gauge");
      assert.equal(first.get(QUEUE_TIME)?.type, "gauge");

      // A topic created: TopicChange on the controller; the other broker does not watch topics.
      const before = await scrape(controller);
      const otherBefore = count(await scrape(other), "topicchangerateandtimems");
      await c.createTopic("event-metrics", 2, 2);
      const created = await waitForScrape(
        controller,
        "a TopicChange event timed",
        (s) => count(s, "topicchangerateandtimems") > count(before, "topicchangerateandtimems"),
      );
      assert.equal(count(await scrape(other), "topicchangerateandtimems"), otherBefore);
      assert.equal(
        count(created, "controlledshutdownrateandtimems"),
        count(before, "controlledshutdownrateandtimems"),
      );
      assert.equal(count(created, "brokerchangerateandtimems"), count(before, "brokerchangerateandtimems"));

      // The other broker stops (SIGTERM: a controlled shutdown, then its registration goes).
      await c.stopBroker(other);
      const stopped = await waitForScrape(
        controller,
        "ControlledShutdown and BrokerChange events timed",
        (s) =>
          count(s, "controlledshutdownrateandtimems") > count(created, "controlledshutdownrateandtimems") &&
          count(s, "brokerchangerateandtimems") > count(created, "brokerchangerateandtimems"),
      );
      const end = counts(stopped, [...RAN, ...STILL]);
      const start = counts(before, [...RAN, ...STILL]);
      for (const m of RAN) assert.ok(end[m] > start[m], `${m}: ${start[m]} → ${end[m]}`);
      for (const m of STILL) assert.equal(end[m], 0, `${m} never ran`);
      // Each event waited in the queue first: EventQueueTimeMs counts at least the events timed since.
      const ran = RAN.reduce((n, m) => n + end[m] - start[m], 0);
      const queued =
        sampleValue(stopped, `${QUEUE_TIME}_count`)! - sampleValue(before, `${QUEUE_TIME}_count`)!;
      assert.ok(queued >= ran, `EventQueueTimeMs counted ${queued} events, the states ${ran}`);
      for (const m of RAN) assert.ok(sampleValue(stopped, `${STATS}${m}`, { quantile: "0.99" })! >= 0);
      await waitForScrape(controller, "no event waiting", (s) => sampleValue(s, QUEUE_SIZE) === 0);
      await c.startBroker(other);
    },
  );
});
