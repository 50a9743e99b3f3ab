// The ZooKeeper browser against a real ZooKeeper (Debian's, started by the test) and a real broker in
// ZooKeeper mode under a chroot: the console (with `<alias>.zookeeper.connect`) lists /brokers/ids with
// the broker's id, shows the broker's registration JSON (its endpoint) and that it is ephemeral, and
// /controller; a missing znode is a 404 and a bad path a 400; the page in Chromium navigates from the
// root down to the broker's znode. Skipped with the reason when ZooKeeper is not installed.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { BrokerHarness, freePort } from "../support/broker-harness.js";
import { skipUnlessInstalled } from "../support/required-tools.js";
import { ZooKeeperHarness } from "../support/zookeeper-harness.js";
import { ConsoleHarness, launchChromium, screenshotDir } from "./console-harness.js";

const skip = skipUnlessInstalled("zookeeper");

let zk: ZooKeeperHarness;
let broker: BrokerHarness;
let consoleProc: ConsoleHarness;
let dir: string;

before(async () => {
  if (skip) return;
  zk = await ZooKeeperHarness.start({ servers: 1 });
  const port = await freePort();
  broker = await BrokerHarness.start({
    name: "console-zk",
    port,
    overrides: {
      "broker.id": "0",
      "zookeeper.connect": `${zk.connectString}/kafka`,
      "zookeeper.session.timeout.ms": "6000",
      "offsets.topic.replication.factor": "1",
    },
  });
  dir = mkdtempSync(join(tmpdir(), "console-zk-"));
  const config = join(dir, "console.properties");
  writeFileSync(
    config,
    [
      "console.cluster.alias=zk",
      `zk.bootstrap.servers=${broker.bootstrap}`,
      `zk.zookeeper.connect=${zk.connectString}/kafka`,
      `console.history.url=sqlite:${join(dir, "h.db")}`,
    ].join("\n"),
  );
  consoleProc = await ConsoleHarness.start([
    "--config",
    config,
    "--port",
    "0",
    "--sample-interval-ms",
    "1000",
  ]);
});

after(async () => {
  await consoleProc?.stop();
  await broker?.close();
  await zk?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface ZNode {
  path: string;
  children: string[];
  data: string | null;
  stat: { ephemeralOwner: string | null; numChildren: number };
}

test("the ZooKeeper browser reads Kafka's znodes under the chroot", { skip }, async () => {
  const root = await consoleProc.json<ZNode>("/api/clusters/zk/zookeeper?path=/");
  for (const child of ["brokers", "controller", "cluster"]) assert.ok(root.children.includes(child), child);
  const ids = await consoleProc.json<ZNode>("/api/clusters/zk/zookeeper?path=/brokers/ids");
  assert.deepEqual(ids.children, ["0"]);
  const b0 = await consoleProc.json<ZNode>("/api/clusters/zk/zookeeper?path=/brokers/ids/0");
  const registration = JSON.parse(Buffer.from(b0.data ?? "", "base64").toString("utf8"));
  assert.equal(registration.port, broker.port);
  assert.ok(b0.stat.ephemeralOwner !== null, "a broker's registration is ephemeral");
  const controller = await consoleProc.json<ZNode>("/api/clusters/zk/zookeeper?path=/controller");
  assert.equal(JSON.parse(Buffer.from(controller.data ?? "", "base64").toString("utf8")).brokerid, 0);

  const missing = await fetch(`${consoleProc.url}/api/clusters/zk/zookeeper?path=/nope`);
  assert.equal(missing.status, 404);
  assert.deepEqual(await missing.json(), { error: "no znode /nope" });
  const bad = await fetch(`${consoleProc.url}/api/clusters/zk/zookeeper?path=brokers`);
  assert.equal(bad.status, 400);
});

test("the ZooKeeper page goes from the root to a broker's znode", {
  skip: skip || skipUnlessInstalled("chromium"),
}, async () => {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${consoleProc.url}/#/c/zk/overview`);
    await page.click("nav a[href='#/c/zk/zookeeper']");
    await page.click("[data-testid=zk-children] li[data-child=brokers] a");
    await page.click("[data-testid=zk-children] li[data-child=ids] a");
    await page.click("[data-testid=zk-children] li[data-child='0'] a");
    await page.locator("[data-testid=zk-data][data-format=json]").waitFor({ timeout: 15_000 });
    assert.match(
      (await page.locator("[data-testid=zk-data]").textContent()) ?? "",
      new RegExp(`"port": ${broker.port}`),
    );
    assert.match((await page.locator("[data-testid=zk-stat] td.owner").textContent()) ?? "", /^0x[0-9a-f]+$/);
    const shots = screenshotDir("tributary-console-zookeeper-screenshots");
    console.log(`console screenshots: ${shots}`);
    await page.screenshot({ path: join(shots, "zookeeper-broker-1280x800.png"), fullPage: true });
  } finally {
    await browser.close();
  }
});
