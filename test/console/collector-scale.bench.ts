// Benchmark (not part of `npm test`): the collector over 1,000 consumer groups × 10 partitions against a
// real broker — how long one sample takes (it must stay well inside console.sample.interval.ms), with the
// history written to SQLite — and how long the consumer-groups page takes to load and render in
// headless Chromium with 1,000 groups. Prints one line per measurement.
//
//   npx tsc -p tsconfig.json --outDir .e-dist && TRIBUTARY_DIST=$PWD/.e-dist node .e-dist/test/console/collector-scale.bench.js

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AdminClient } from "../../src/client/admin/admin-client.js";
import { GroupAdmin } from "../../src/client/admin/group-admin.js";
import { KafkaProducer } from "../../src/client/producer/kafka-producer.js";
import { toHistorySample } from "../../src/console/collector/collector.js";
import { sampleCluster } from "../../src/console/collector/sample-cluster.js";
import { openHistory } from "../../src/console/history/open-history.js";
import { BrokerHarness, waitFor } from "../support/broker-harness.js";
import { ConsoleHarness, launchChromium } from "./console-harness.js";

const GROUPS = Number(process.env.GROUPS ?? 1000);
const PARTITIONS = 10;
const TOPIC = "scale";

const broker = await BrokerHarness.start({ name: "console-scale" });
const dir = mkdtempSync(join(tmpdir(), "console-scale-"));
const admin = new AdminClient({ bootstrapServers: broker.bootstrap });
try {
  await admin.createTopics([{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 1 }]);
  const producer = new KafkaProducer({ "bootstrap.servers": broker.bootstrap, "linger.ms": "5" });
  const sends: Promise<unknown>[] = [];
  for (let p = 0; p < PARTITIONS; p++)
    for (let i = 0; i < 100; i++) sends.push(producer.send({ topic: TOPIC, partition: p, value: `v${i}` }));
  await Promise.all(sends);
  await producer.close();
  const groups = new GroupAdmin(admin.cluster);
  let t = performance.now();
  for (let g = 0; g < GROUPS; g += 50)
    await Promise.all(
      Array.from({ length: Math.min(50, GROUPS - g) }, (_, k) =>
        groups.alterConsumerGroupOffsets(
          `group-${g + k}`,
          Array.from({ length: PARTITIONS }, (_, p) => ({
            topic: TOPIC,
            partition: p,
            offset: BigInt((g + k) % 50),
          })),
        ),
      ),
    );
  console.log(
    `setup: ${GROUPS} groups × ${PARTITIONS} partitions committed in ${(performance.now() - t).toFixed(0)} ms`,
  );

  const history = await openHistory(`sqlite:${join(dir, "h.db")}`);
  const config = { alias: "scale", bootstrapServers: broker.bootstrap };
  for (let i = 0; i < 3; i++) {
    t = performance.now();
    const s = await sampleCluster(config, admin, Date.now);
    const sampled = performance.now() - t;
    t = performance.now();
    await history.record(toHistorySample(s));
    const written = performance.now() - t;
    const rows = s.groups.reduce((n, g) => n + g.partitions.length, 0);
    console.log(
      `sample ${i + 1}: ${s.groups.length} groups, ${rows} partition rows sampled in ${sampled.toFixed(0)} ms, written to SQLite in ${written.toFixed(0)} ms`,
    );
  }
  await history.close();

  const consoleProc = await ConsoleHarness.start([
    "--cluster",
    `scale=${broker.bootstrap}`,
    "--port",
    "0",
    "--sample-interval-ms",
    "30000",
    "--history-url",
    `sqlite:${join(dir, "console.db")}`,
    "--users-file",
    join(dir, "console-users.properties"),
  ]);
  const browser = await launchChromium();
  try {
    await waitFor("a first sample", 120_000, async () =>
      (await consoleProc.json<Array<{ samples: number }>>("/api/clusters"))[0].samples > 0 ? true : undefined,
    );
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    for (let i = 0; i < 3; i++) {
      t = performance.now();
      await page.goto(`${consoleProc.url}/#/c/scale/groups`);
      await page.locator(`tr[data-group='group-${GROUPS - 1}']`).waitFor({ timeout: 60_000 });
      const loaded = performance.now() - t;
      const rows = await page.locator("tr[data-group]").count();
      console.log(`groups page: ${rows} groups loaded and rendered in ${loaded.toFixed(0)} ms`);
      await page.goto("about:blank");
    }
    t = performance.now();
    await page.goto(`${consoleProc.url}/#/c/scale/groups/group-7`);
    await page.locator("tr[data-partition='9']").waitFor({ timeout: 60_000 });
    console.log(`a group's page (10 partitions, lag chart): ${(performance.now() - t).toFixed(0)} ms`);
  } finally {
    await browser.close();
    await consoleProc.stop();
  }
} finally {
  await admin.close();
  await broker.close();
  rmSync(dir, { recursive: true, force: true });
}
