// The console against a 3-broker ZooKeeper cluster (real ZooKeeper, real brokers, a real `tributary
// console` process with an under-replicated alert rule and its webhook in this test), pages in a real
// headless Chromium:
//   - with broker 2 stopped, the Overview's under-replicated count, the under-replicated alert (webhook
//     and Alerts page) and `topics --describe --under-replicated-partitions` count the same partitions —
//     here all of them __consumer_offsets', which the alert left out before;
//   - replica skew counts only the brokers that hold the topic: a topic spread evenly over brokers 0 and 1
//     (as a decommission of broker 2 leaves it) shows 0 %, not 100 % in orange; an uneven one still shows;
//   - a broker that has left the cluster has no row in the broker traffic table.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import { AdminClient } from "../../src/client/admin/admin-client.js";
import { GroupAdmin } from "../../src/client/admin/group-admin.js";
import { ClusterHarness, waitFor, withLogTails } from "../support/cluster-harness.js";
import { skipUnlessInstalled } from "../support/required-tools.js";
import { ConsoleHarness, launchChromium } from "./console-harness.js";

const skip = skipUnlessInstalled("chromium", "zookeeper");
const OFFSETS_PARTITIONS = 6;

interface Hook {
  readonly path: string;
  readonly body: { rule: string; state: string; value: number; message: string };
}

let cluster: ClusterHarness;
let admin: AdminClient;
let consoleProc: ConsoleHarness;
let receiver: Server;
const received: Hook[] = [];
let browser: Browser;
let page: Page;
let dir: string;

before(async () => {
  if (skip) return;
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ path: req.url ?? "", body: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()));
  const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  cluster = await ClusterHarness.start({
    brokers: 3,
    name: "console-cluster",
    overrides: { "offsets.topic.num.partitions": String(OFFSETS_PARTITIONS) },
  });
  admin = new AdminClient({ bootstrapServers: cluster.bootstrap() });
  // A user topic on broker 0 only (never under-replicated), and a commit, which creates __consumer_offsets
  // (replication factor 3: each of its partitions has a replica on broker 2).
  const [created] = await admin.createTopics([{ name: "orders", assignments: [[0]] }]);
  assert.equal(created.error, undefined);
  const [committed] = await new GroupAdmin(admin.cluster).alterConsumerGroupOffsets("billing", [
    { topic: "orders", partition: 0, offset: 0n },
  ]);
  assert.equal(committed.error, undefined);
  dir = mkdtempSync(join(tmpdir(), "console-cluster-"));
  const config = join(dir, "console.properties");
  writeFileSync(
    config,
    [
      "console.cluster.alias=dev",
      `dev.bootstrap.servers=${cluster.bootstrap()}`,
      `dev.metrics.urls=${cluster.brokers.map((b, i) => `${i}=${b.metricsUrl}`).join(",")}`,
      "console.alert.urp.type=under-replicated",
      `console.alert.urp.webhook=${hook}/urp`,
    ].join("\n"),
  );
  consoleProc = await ConsoleHarness.startSampling(config, dir);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
});

after(async () => {
  await browser?.close().catch(() => {});
  await consoleProc?.stop();
  await admin?.close();
  await cluster?.close();
  await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const text = async (p: Page, selector: string): Promise<string> =>
  ((await p.locator(selector).first().textContent()) ?? "").trim();

test("replica skew is over the brokers that hold the topic's replicas", { skip }, async () => {
  // As a decommission of broker 2 leaves a topic: three replicas each on brokers 0 and 1, none on 2.
  const [even, uneven] = await admin.createTopics([
    {
      name: "even",
      assignments: [
        [0, 1],
        [1, 0],
        [0, 1],
      ],
    },
    {
      name: "uneven",
      assignments: [[0], [0], [0], [1]],
    },
  ]);
  assert.equal(even.error, undefined);
  assert.equal(uneven.error, undefined);
  await page.goto(`${consoleProc.url}/#/c/dev/topics`);
  await page.locator("tr[data-topic=uneven]").waitFor({ timeout: 15_000 });
  const skew = async (topic: string) => {
    const cell = page.locator(`tr[data-topic=${topic}] td:nth-child(6)`); // Skew
    return {
      text: ((await cell.textContent()) ?? "").trim(),
      warn: ((await cell.getAttribute("class")) ?? "").includes("warn"),
    };
  };
  assert.deepEqual(await skew("even"), { text: "0%", warn: false });
  // Broker 0 holds 3 of 4 where 2 would be even over the 2 brokers that hold it: 1 of 2 brokers.
  assert.deepEqual(await skew("uneven"), { text: "50%", warn: true });
});

test(
  "with a broker stopped the Overview and the under-replicated alert count the same partitions",
  {
    skip,
  },
  () =>
    withLogTails(
      () => cluster,
      async () => {
        await cluster.stopBroker(2);
        // What an operator's tool says: every __consumer_offsets partition lacks broker 2 in its ISR.
        const urp = await waitFor("__consumer_offsets under-replicated", 30_000, async () => {
          const lines = (await cluster.topics(["--describe", "--under-replicated-partitions"]))
            .split("\n")
            .filter((l) => /\bPartition: \d+/.test(l));
          return lines.length === OFFSETS_PARTITIONS && lines.every((l) => l.includes("__consumer_offsets"))
            ? lines.length
            : undefined;
        });
        await page.goto(`${consoleProc.url}/#/c/dev/overview`);
        await waitFor(`the Overview shows ${urp} under-replicated`, 30_000, async () =>
          (await text(page, "[data-testid=under-replicated]")) === String(urp) ? true : undefined,
        );
        const firing = await waitFor("the under-replicated alert fires", 30_000, async () =>
          received.find((h) => h.path === "/urp" && h.body.state === "firing"),
        );
        assert.equal(firing.body.value, urp, "the alert counts what the Overview counts");
        await page.goto(`${consoleProc.url}/#/c/dev/alerts`);
        const row = page.locator("[data-testid=active-alerts] tr[data-rule=urp]");
        await row.waitFor({ timeout: 15_000 });
        assert.equal(
          ((await row.locator("td").last().textContent()) ?? "").trim(),
          `${urp} under-replicated partitions (threshold 0)`,
        );
      },
    ),
);

test("a broker that has left the cluster has no traffic row", { skip }, async () => {
  // Runs after broker 2 was stopped above (its registration is gone from ZooKeeper).
  assert.deepEqual(await cluster.registeredIds(), [0, 1]);
  await page.goto(`${consoleProc.url}/#/c/dev/overview`);
  const rows = () =>
    page.evaluate(() =>
      [...document.querySelectorAll("[data-testid=broker-rates] tbody tr")].map((tr) =>
        Number(tr.getAttribute("data-broker")),
      ),
    );
  await waitFor("the traffic table", 15_000, async () => ((await rows()).length > 0 ? true : undefined));
  // Two more samples: the rows stay those of the registered brokers.
  const before = Number(await page.locator("[data-testid=traffic-chart]").getAttribute("data-points"));
  await waitFor("two more samples", 15_000, async () =>
    Number(await page.locator("[data-testid=traffic-chart]").getAttribute("data-points")) >= before + 2
      ? true
      : undefined,
  );
  assert.deepEqual(await rows(), [0, 1]);
});
