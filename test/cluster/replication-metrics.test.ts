// Issue 17's metrics, read from a real 3-broker cluster's /metrics endpoints under the JMX exporter's
// names: a follower killed with SIGKILL (not the controller) while records keep arriving → its leader
// shrinks the ISR through the controller (kafka_server_replicamanager_isrshrinks_total), counts the
// partition under-replicated and at min.insync.replicas; the controller elects new leaders for the
// partitions the dead broker led (kafka_controller_controllerstats_leaderelectionrateandtimems_count) and
// counts its RF-1 partition offline. Restarted, the broker catches up, the leader expands the ISR
// (…_isrexpands_total) and nothing is under-replicated or offline any more. Along the way: exactly one
// active controller, and the followers' ReplicaFetcherManager MaxLag{clientId="Replica"}.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { sampleValue } from "../server/metrics/exposition-parser.js";
import { runCommand } from "../support/broker-harness.js";
import { ClusterHarness, withLogTails } from "../support/cluster-harness.js";
import {
  type Scrape,
  scrapeMetrics,
  requireSample as value,
  waitForScrape as waitForMetrics,
} from "../support/metrics-scrape.js";

const KCAT = "/usr/bin/kcat";
const TOPIC = "repl-metrics";
const SOLO = "repl-metrics-solo";
let cluster: ClusterHarness | undefined;

before(async () => {
  cluster = await ClusterHarness.start({
    brokers: 3,
    name: "replication-metrics",
    // The leader must notice the dead follower (lag time + one check) well before the ZooKeeper session
    // (6 s) expires and the controller takes it out of the ISR itself, which is no ISR shrink.
    overrides: { "replica.lag.time.max.ms": "1500" },
  });
});

after(async () => {
  await cluster?.close();
});

async function scrape(i: number): Promise<Scrape> {
  return scrapeMetrics(cluster!.broker(i).metricsUrl);
}

/** Waits until broker i's scrape satisfies `check`; the last scrape is in the error. */
function waitForScrape(i: number, what: string, check: (s: Scrape) => boolean): Promise<Scrape> {
  return waitForMetrics(
    cluster!.broker(i).metricsUrl,
    `broker ${i}: ${what}`,
    check,
    /replicamanager|kafkacontroller|controllerstats|replicafetcher/,
  );
}

async function produce(bootstrap: string, partition: number, n: number): Promise<void> {
  const input = Array.from({ length: n }, (_, i) => `m${i}`).join("\n");
  const r = await runCommand(
    KCAT,
    ["-b", bootstrap, "-P", "-t", TOPIC, "-p", String(partition), "-X", "acks=1"],
    { input: `${input}\n`, timeoutMs: 20_000 },
  );
  assert.equal(r.code, 0, r.stderr);
}

const RM = "kafka_server_replicamanager_";
const SHRINKS = `${RM}isrshrinks_total`;
const EXPANDS = `${RM}isrexpands_total`;
const UNDER = `${RM}underreplicatedpartitions`;
const ELECTIONS = "kafka_controller_controllerstats_leaderelectionrateandtimems_count";
const OFFLINE = "kafka_controller_kafkacontroller_offlinepartitionscount";
const ACTIVE = "kafka_controller_kafkacontroller_activecontrollercount";
const MAX_LAG = "kafka_server_replicafetchermanager_maxlag";

test("replication and controller metrics follow a follower's SIGKILL and restart", async () => {
  await withLogTails(
    () => cluster,
    async () => {
      const c = cluster!;
      const ctl = await c.waitForController();
      const [leader, victim] = [0, 1, 2].filter((i) => i !== ctl);
      // Partition 0 led by `leader`, partition 1 by `victim` (the first live replica leads); the RF-1
      // topic lives on `victim` only.
      await c.topics([
        "--create",
        "--topic",
        TOPIC,
        "--replica-assignment",
        `${leader}:${victim}:${ctl},${victim}:${leader}:${ctl}`,
        "--config",
        "min.insync.replicas=2",
      ]);
      await c.topics(["--create", "--topic", SOLO, "--replica-assignment", `${victim}`]);
      await c.waitForDescribe(TOPIC, "both partitions fully in sync", 20_000, (ps) =>
        ps.every((p) => p.leader === p.replicas[0] && p.isr.length === 3),
      );
      await c.waitForDescribe(SOLO, "led", 20_000, (ps) => ps.every((p) => p.leader === victim));
      await produce(c.bootstrap(), 0, 5);

      // Steady state: one active controller, nothing under-replicated or offline, the names all there.
      const base = await waitForScrape(leader, "nothing under-replicated", (s) => value(s, UNDER) === 0);
      const ctlBase = await waitForScrape(ctl, "nothing offline", (s) => value(s, OFFLINE) === 0);
      let active = 0;
      for (const i of [0, 1, 2]) {
        const s = i === leader ? base : i === ctl ? ctlBase : await scrape(i);
        active += value(s, ACTIVE);
        assert.equal(s.get(SHRINKS)?.type, "counter");
        assert.equal(s.get(ELECTIONS)?.type, "counter");
        assert.equal(s.get("kafka_controller_controllerstats_uncleanleaderelections_total")?.type, "counter");
        assert.equal(s.get(MAX_LAG)?.type, "gauge");
        assert.ok(value(s, MAX_LAG, { clientId: "Replica" }) >= 0);
        assert.equal(
          sampleValue(s, "kafka_controller_controllerstats_leaderelectionrateandtimems", {
            quantile: "0.99",
          }) !== undefined,
          true,
        );
        assert.equal(value(s, `${RM}underminisrpartitioncount`), 0);
      }
      assert.equal(active, 1, "exactly one active controller");
      assert.equal(value(ctlBase, ACTIVE), 1);
      assert.equal(value(base, `${RM}atminisrpartitioncount`), 0);
      const shrinks0 = value(base, SHRINKS);
      const expands0 = value(base, EXPANDS);
      const elections0 = value(ctlBase, ELECTIONS);
      const unclean0 = value(ctlBase, "kafka_controller_controllerstats_uncleanleaderelections_total");

      // The follower dies; records keep arriving at the leader, so it falls behind and leaves the ISR.
      assert.notEqual(await c.stopBroker(victim, "SIGKILL"), 0);
      await produce(c.bootstrap([victim]), 0, 5);
      const shrunk = await waitForScrape(
        leader,
        "ISR shrink counted, partition under-replicated",
        (s) => value(s, SHRINKS) > shrinks0 && value(s, UNDER) > 0,
      );
      assert.ok(value(shrunk, `${RM}atminisrpartitioncount`) >= 1, "ISR of 2 = min.insync.replicas");
      assert.equal(value(shrunk, `${RM}underminisrpartitioncount`), 0);

      // The controller notices (session expiry): partition 1 gets a new leader, the RF-1 one goes offline.
      const ctlDown = await waitForScrape(
        ctl,
        "leader election counted, the RF-1 partition offline",
        (s) => value(s, ELECTIONS) > elections0 && value(s, OFFLINE) === 1,
      );
      assert.equal(
        value(ctlDown, "kafka_controller_controllerstats_uncleanleaderelections_total"),
        unclean0,
        "clean elections only",
      );
      assert.ok(value(ctlDown, "kafka_controller_controllerstats_leaderelectionrateandtimems_sum") >= 0);
      // Both partitions now led by `leader`, each with an ISR of 2.
      await waitForScrape(leader, "both partitions under-replicated", (s) => value(s, UNDER) === 2);

      // Back: it catches up, the leader expands the ISRs, nothing under-replicated or offline.
      await c.startBroker(victim);
      await waitForScrape(
        leader,
        "ISR expansion counted, nothing under-replicated",
        (s) => value(s, EXPANDS) > expands0 && value(s, UNDER) === 0,
      );
      await waitForScrape(ctl, "nothing offline", (s) => value(s, OFFLINE) === 0);
      const back = await waitForScrape(
        victim,
        "follows with a MaxLag of 0",
        (s) => value(s, MAX_LAG, { clientId: "Replica" }) === 0,
      );
      assert.equal(value(back, ACTIVE), 0);
    },
  );
});
