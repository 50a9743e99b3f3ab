// End to end in a real headless Chromium, against a real broker and a real `tributary console`
// process: a topic with known data and a group with a known lag → the group page shows exactly that lag
// per partition and in total, and a lag in seconds of about the age given to the records; after
// several sample intervals the lag chart holds exactly the samples taken (checked against the SQLite
// history file), and one partition's series on request; a real consumer catches up → the page's lag goes to 0 without a reload, the owner
// shows and the trend mark says shrinking; overview (with the broker's traffic from its /metrics),
// topics and topic pages show the cluster; /metrics
// has kafka_exporter's series and passes `promtool check metrics`; the message browser shows a record's key, value (pretty JSON, hex) and
// headers, from the newest records, from an offset and from a time. Screenshots of every page (desktop 1280×800 and phone width) go to the
// folder the test prints.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import Database from "better-sqlite3";
import type { Browser, Page } from "playwright-core";
import { AdminClient } from "../../src/client/admin/admin-client.js";
import { GroupAdmin } from "../../src/client/admin/group-admin.js";
import { KafkaConsumer } from "../../src/client/consumer/kafka-consumer.js";
import { KafkaProducer } from "../../src/client/producer/kafka-producer.js";
import { BrokerHarness, describeResult, runCommand, waitFor } from "../support/broker-harness.js";
import { skipUnlessInstalled } from "../support/required-tools.js";
import { ConsoleHarness, launchChromium, screenshotDir } from "./console-harness.js";

const PROMTOOL = "/usr/bin/promtool";
const TOPIC = "orders";
const GROUP = "billing";
const INTERVAL_MS = 700;
/** Records are produced with CreateTime an hour ago: the lag in seconds must say about that. */
const AGE_MS = 3_600_000;
const END = [10, 6];
const COMMITTED = [4, 1];

const skip = skipUnlessInstalled("chromium");
/** `false`, or why `promtool check metrics` cannot run (under CI a missing prometheus stops the file). */
const noPromtool = skipUnlessInstalled("promtool");

let broker: BrokerHarness;
let admin: AdminClient;
let consoleProc: ConsoleHarness;
let browser: Browser;
let page: Page;
let dir: string;
let shots: string;

before(async () => {
  if (skip) return;
  broker = await BrokerHarness.start({ name: "console-e2e" });
  admin = new AdminClient({ bootstrapServers: broker.bootstrap });
  const [created] = await admin.createTopics([{ name: TOPIC, numPartitions: 2, replicationFactor: 1 }]);
  assert.equal(created.error, undefined);
  const producer = new KafkaProducer({ "bootstrap.servers": broker.bootstrap, "linger.ms": "0" });
  const oldTs = Date.now() - AGE_MS;
  for (const [partition, n] of END.entries())
    for (let i = 0; i < n; i++)
      await producer.send({
        topic: TOPIC,
        partition,
        key: `k${i}`,
        value: `v${partition}-${i}`,
        timestamp: oldTs + i,
      });
  await producer.close();
  const results = await new GroupAdmin(admin.cluster).alterConsumerGroupOffsets(
    GROUP,
    COMMITTED.map((offset, partition) => ({ topic: TOPIC, partition, offset: BigInt(offset) })),
  );
  assert.deepEqual(
    results.map((r) => r.error),
    [undefined, undefined],
  );
  dir = mkdtempSync(join(tmpdir(), "console-e2e-"));
  const config = join(dir, "console.properties");
  writeFileSync(
    config,
    [
      "console.cluster.alias=local",
      `local.bootstrap.servers=${broker.bootstrap}`,
      `local.metrics.urls=0=${broker.metricsUrl}`,
    ].join("\n"),
  );
  consoleProc = await ConsoleHarness.start([
    "--config",
    config,
    "--port",
    "0",
    "--sample-interval-ms",
    String(INTERVAL_MS),
    "--history-url",
    `sqlite:${join(dir, "history.db")}`,
  ]);
  shots = screenshotDir("tributary-console-screenshots");
  console.log(`console screenshots: ${shots}`);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
});

after(async () => {
  await browser?.close().catch(() => {});
  const code = await consoleProc?.stop();
  if (consoleProc) assert.equal(code, 0, `console exit status\n${consoleProc.stderr}`);
  await admin?.close();
  await broker?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const text = async (selector: string): Promise<string> =>
  (await page.locator(selector).first().textContent()) ?? "";

async function waitText(selector: string, expected: string, timeoutMs = 15_000): Promise<void> {
  await waitFor(`${selector} shows ${expected}`, timeoutMs, async () =>
    (await text(selector)).trim() === expected ? true : undefined,
  );
}

test("the group page shows the known lag per partition and in total, with lag in seconds", {
  skip,
}, async () => {
  await page.goto(`${consoleProc.url}/#/c/local/groups/${GROUP}`);
  await waitText("[data-testid=total-lag]", String(END[0] - COMMITTED[0] + END[1] - COMMITTED[1]));
  for (const p of [0, 1]) {
    const row = `tr[data-topic=${TOPIC}][data-partition="${p}"]`;
    assert.equal((await text(`${row} td.committed`)).trim(), String(COMMITTED[p]));
    assert.equal((await text(`${row} td.log-end`)).trim(), String(END[p]));
    assert.equal((await text(`${row} td.lag`)).trim(), String(END[p] - COMMITTED[p]));
    const lagMs = Number(await page.locator(`${row} td.lag-time`).getAttribute("data-lag-ms"));
    assert.ok(
      lagMs >= AGE_MS && lagMs < AGE_MS + 120_000,
      `partition ${p} lag in ms ${lagMs}, expected about ${AGE_MS}`,
    );
    assert.match(await text(`${row} td.lag-time`), /^1h 0m \d+s$/);
  }
  assert.equal((await text("[data-testid=trend]")).trim(), "● steady");
});

test("after several sample intervals the lag chart has exactly the samples taken", { skip }, async () => {
  const wanted = 5;
  await waitFor(`chart with ${wanted} points`, 30_000, async () =>
    Number(await page.locator("[data-testid=lag-chart]").getAttribute("data-points")) >= wanted
      ? true
      : undefined,
  );
  // Read the page's points and the sample time they were fetched with, then count the history rows up to then.
  const state = await page.evaluate(() => {
    const chart = document.querySelector("[data-testid=lag-chart]");
    return {
      points: Number(chart?.getAttribute("data-points")),
      sampledAt: Number(chart?.getAttribute("data-sampled-at")),
    };
  });
  const db = new Database(join(dir, "history.db"), { readonly: true });
  try {
    const row = db
      .prepare("SELECT COUNT(DISTINCT ts) AS n FROM group_partition_samples WHERE group_id = ? AND ts <= ?")
      .get(GROUP, state.sampledAt) as { n: number };
    assert.equal(state.points, row.n, "chart points = samples in the history");
    const lags = db
      .prepare("SELECT SUM(lag) AS lag FROM group_partition_samples WHERE group_id = ? GROUP BY ts")
      .all(GROUP) as Array<{ lag: number }>;
    assert.ok(
      lags.every((l) => l.lag === 11),
      `every sample so far has lag 11: ${JSON.stringify(lags)}`,
    );
  } finally {
    db.close();
  }
  assert.ok(state.points >= wanted);
  await page.screenshot({ path: join(shots, "group-lagging-1280x800.png"), fullPage: true });

  // One partition's series: the same sample times, that partition's lag.
  await page.selectOption("select[name=series]", `${TOPIC}-0`);
  await waitFor("partition 0 series", 15_000, async () =>
    (await page.locator("[data-testid=lag-chart]").getAttribute("data-series")) === `${TOPIC}-0`
      ? true
      : undefined,
  );
  const one = await consoleProc.json<{ series: string; history: Array<{ lag: number }> }>(
    `/api/clusters/local/groups/${GROUP}?topic=${TOPIC}&partition=0`,
  );
  assert.equal(one.series, `${TOPIC}-0`);
  assert.ok(one.history.length >= wanted && one.history.every((p) => p.lag === END[0] - COMMITTED[0]));
  await page.selectOption("select[name=series]", "");
});

test("the other pages show the cluster, and fit a phone's width", { skip }, async () => {
  const visit = async (hash: string, ready: string, name: string): Promise<void> => {
    await page.goto(`${consoleProc.url}/${hash}`);
    await page.locator(ready).first().waitFor({ timeout: 15_000 });
    await page.screenshot({ path: join(shots, `${name}-1280x800.png`), fullPage: true });
  };
  await visit("#/c/local/overview", "[data-testid=brokers]", "overview");
  assert.equal((await text("[data-testid=brokers]")).trim(), "1");
  const all = await admin.describeTopics((await admin.listTopics({ listInternal: true })).map((t) => t.name));
  const partitions = all.reduce((s, t) => s + t.partitions.length, 0);
  assert.equal((await text("[data-testid=partitions]")).trim(), String(partitions));
  assert.equal((await text("tr[data-broker='0'] .tag")).trim(), "controller");
  assert.equal(await page.locator("tr[data-logdir^='0:']").count(), 1, "the broker's one log dir");
  // Traffic from the broker's /metrics: the console's own requests make the request rate positive.
  await waitFor("a request rate", 15_000, async () =>
    /^\d+\.\d\/s$/.test((await text("[data-testid=broker-rates] tr[data-broker='0'] td.requests")).trim()) &&
    Number.parseFloat(await text("[data-testid=broker-rates] tr[data-broker='0'] td.requests")) > 0
      ? true
      : undefined,
  );
  assert.ok(Number(await page.locator("[data-testid=traffic-chart]").getAttribute("data-points")) >= 2);
  assert.match(await text("tr[data-logdir^='0:'] td.used"), /^\d+(\.\d)? (B|KiB|MiB)$/);
  await visit("#/c/local/topics", `tr[data-topic=${TOPIC}]`, "topics");
  assert.match(await text(`tr[data-topic=${TOPIC}]`), /orders\s*2\s*1\s*16/);
  assert.match(await text(`tr[data-topic=${TOPIC}] td.size`), /^\d+(\.\d)? (B|KiB)$/);
  await visit(`#/c/local/topics/${TOPIC}`, "tr[data-partition='1']", "topic");
  assert.ok(Number(await page.locator("[data-testid=topic-chart]").getAttribute("data-points")) >= 1);
  for (const p of [0, 1]) {
    assert.equal((await text(`tr[data-partition='${p}'] td.start`)).trim(), "0");
    assert.equal((await text(`tr[data-partition='${p}'] td.end`)).trim(), String(END[p]));
  }
  await visit("#/c/local/groups", `tr[data-group=${GROUP}]`, "groups");
  assert.equal((await text(`tr[data-group=${GROUP}] td.total-lag`)).trim(), "11");

  const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
  try {
    for (const [hash, ready, name] of [
      [`#/c/local/groups/${GROUP}`, "[data-testid=total-lag]", "group"],
      ["#/c/local/overview", "[data-testid=brokers]", "overview"],
      ["#/c/local/topics", `tr[data-topic=${TOPIC}]`, "topics"],
      [`#/c/local/topics/${TOPIC}`, "tr[data-partition='1']", "topic"],
      ["#/c/local/groups", `tr[data-group=${GROUP}]`, "groups"],
    ] as const) {
      await phone.goto(`${consoleProc.url}/${hash}`);
      await phone.locator(ready).first().waitFor({ timeout: 15_000 });
      const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `${name} page is ${overflow}px wider than a phone`);
      await phone.screenshot({ path: join(shots, `${name}-phone-390.png`), fullPage: true });
    }
  } finally {
    await phone.close();
  }
});

test("/metrics has kafka_exporter's series with the known lag and passes promtool", { skip }, async (t) => {
  const body = await (await fetch(`${consoleProc.url}/metrics`)).text();
  assert.match(body, /^kafka_brokers\{cluster="local"\} 1$/m);
  assert.match(
    body,
    /^kafka_consumergroup_lag\{cluster="local",consumergroup="billing",topic="orders",partition="0"\} 6$/m,
  );
  assert.match(
    body,
    /^kafka_consumergroup_lag\{cluster="local",consumergroup="billing",topic="orders",partition="1"\} 5$/m,
  );
  assert.match(
    body,
    /^kafka_consumergroup_current_offset\{cluster="local",consumergroup="billing",topic="orders",partition="0"\} 4$/m,
  );
  assert.match(
    body,
    /^kafka_topic_partition_current_offset\{cluster="local",topic="orders",partition="1"\} 6$/m,
  );
  assert.match(
    body,
    /^kafka_topic_partition_oldest_offset\{cluster="local",topic="orders",partition="0"\} 0$/m,
  );
  const seconds =
    /^kafka_consumergroup_lag_seconds\{cluster="local",consumergroup="billing",topic="orders",partition="0"\} ([\d.]+)$/m.exec(
      body,
    );
  assert.ok(seconds && Number(seconds[1]) >= AGE_MS / 1000, `lag seconds: ${seconds?.[1]}`);
  assert.doesNotMatch(body, /_sum\{/, "no _sum gauges (promtool rejects them)");
  if (noPromtool) {
    t.diagnostic(`${noPromtool}: promtool check metrics not run`);
    return;
  }
  const checked = await runCommand(PROMTOOL, ["check", "metrics"], { input: body });
  assert.equal(checked.code, 0, describeResult("promtool check metrics", checked));
});

test("a consumer catches up: the page's lag goes to 0 without a reload", { skip }, async () => {
  await page.goto(`${consoleProc.url}/#/c/local/groups/${GROUP}`);
  await waitText("[data-testid=total-lag]", "11");
  await page.evaluate(() => {
    (window as unknown as { notReloaded: boolean }).notReloaded = true;
  });
  const consumer = new KafkaConsumer({
    "bootstrap.servers": broker.bootstrap,
    "group.id": GROUP,
    "client.id": "catch-up",
    "enable.auto.commit": "false",
  });
  try {
    await consumer.subscribe([TOPIC]);
    let got = 0;
    const deadline = Date.now() + 30_000;
    while (got < 11 && Date.now() < deadline) got += (await consumer.poll(500)).length;
    assert.equal(got, 11, "the consumer reads the 11 unconsumed records");
    await consumer.commitSync();
    // Total and trend read together: the first render with no lag must say the lag is shrinking.
    const first = await waitFor("total lag 0", 20_000, async () => {
      const seen = await page.evaluate(() => ({
        total: document.querySelector("[data-testid=total-lag]")?.textContent?.trim(),
        trend: document.querySelector("[data-testid=trend]")?.getAttribute("data-trend"),
      }));
      return seen.total === "0" ? seen : undefined;
    });
    assert.equal(first.trend, "shrinking");
    for (const p of [0, 1]) assert.equal((await text(`tr[data-partition="${p}"] td.lag`)).trim(), "0");
    assert.equal(
      await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded),
      true,
    );
    await waitFor("owner shown", 15_000, async () =>
      (await text(`tr[data-partition="0"]`)).includes("catch-up (/127.0.0.1)") ? true : undefined,
    );
    await page.screenshot({ path: join(shots, "group-caught-up-1280x800.png"), fullPage: true });
  } finally {
    await consumer.close(5_000);
  }
});

test("the message browser shows a record's key, value and headers, from an offset or a time", {
  skip,
}, async () => {
  const topic = "browse";
  const t0 = Date.UTC(2024, 0, 1, 12, 0, 0);
  const [created] = await admin.createTopics([{ name: topic, numPartitions: 1, replicationFactor: 1 }]);
  assert.equal(created.error, undefined);
  const producer = new KafkaProducer({ "bootstrap.servers": broker.bootstrap, "linger.ms": "0" });
  await producer.send({
    topic,
    partition: 0,
    key: "user-42",
    value: JSON.stringify({ id: 42, name: "Ada" }),
    headers: [
      { key: "trace", value: Buffer.from("abc-123") },
      { key: "bin", value: Buffer.from([0, 1, 2, 255]) },
    ],
    timestamp: t0,
  });
  await producer.send({ topic, partition: 0, key: null, value: "plain text", timestamp: t0 + 60_000 });
  await producer.close();

  const utc = await browser.newPage({ viewport: { width: 1280, height: 800 }, timezoneId: "UTC" });
  try {
    await utc.goto(`${consoleProc.url}/#/c/local/topics/${topic}`);
    await utc.locator("[data-testid=browse]").click();
    const row0 = utc.locator("tr[data-offset='0']");
    await row0.waitFor({ timeout: 15_000 });
    assert.equal(await row0.locator("[data-testid=key]").textContent(), "user-42");
    assert.equal(await row0.locator("[data-testid=value]").getAttribute("data-format"), "json");
    assert.equal(
      await row0.locator("[data-testid=value]").textContent(),
      '{\n  "id": 42,\n  "name": "Ada"\n}',
    );
    assert.equal(
      await row0.locator("[data-header=trace] [data-testid=header-value]").textContent(),
      "abc-123",
    );
    assert.equal(
      await row0.locator("[data-header=bin] [data-testid=header-value]").textContent(),
      "00 01 02 ff",
    );
    assert.match((await row0.textContent()) ?? "", /2024-01-01T12:00:00\.000Z/);
    assert.equal(await utc.locator("tr[data-offset='1'] [data-testid=key]").textContent(), "null");
    assert.equal(await utc.locator("tr[data-offset='1'] [data-testid=value]").textContent(), "plain text");
    await utc.screenshot({ path: join(shots, "messages-1280x800.png"), fullPage: true });

    await utc.selectOption("select[name=format]", "hex");
    assert.equal(await row0.locator("[data-testid=key]").textContent(), "75 73 65 72 2d 34 32");

    await utc.selectOption("select[name=mode]", "offset");
    await utc.fill("input[name=offset]", "1");
    await utc.click("button[type=submit]");
    await waitFor("from offset 1", 15_000, async () =>
      (await utc.locator("tr[data-offset]").count()) === 1 ? true : undefined,
    );
    assert.equal(await utc.locator("tr[data-offset]").first().getAttribute("data-offset"), "1");

    await utc.selectOption("select[name=mode]", "time");
    await utc.fill("input[name=time]", "2024-01-01T12:00:30");
    await utc.click("button[type=submit]");
    await waitFor("from 12:00:30", 15_000, async () =>
      (await utc.locator("tr[data-offset]").count()) === 1 &&
      (await utc.locator("tr[data-offset='1']").count()) === 1
        ? true
        : undefined,
    );
    await utc.fill("input[name=time]", "2024-01-01T11:59:00");
    await utc.click("button[type=submit]");
    await waitFor("from 11:59", 15_000, async () =>
      (await utc.locator("tr[data-offset]").count()) === 2 ? true : undefined,
    );
  } finally {
    await utc.close();
  }
  const bad = await fetch(`${consoleProc.url}/api/clusters/local/topics/${topic}/messages?offset=x`);
  assert.equal(bad.status, 400);
  assert.deepEqual(await bad.json(), { error: "offset: expected a whole number, got 'x'" });
});
