// Lag an operator can trust (issue 35), in a real headless Chromium against a real broker and a real
// `tributary console` process, each number checked against what kcat and `tributary consumer-groups
// --describe` say at the same moment:
//   - a partition whose next unconsumed batch is larger than the collector's 16 KiB per-partition fetch
//     limit, second in its leader's Fetch response, shows its lag in time (not `unknown`), equal to the
//     record's timestamp as kcat reads it, at the cost of one extra single-partition Fetch;
//   - the group's "oldest unconsumed record" is the oldest over every partition; a partition whose record
//     cannot be read makes it a lower bound ("≥"), never leaves it out silently (summariseLag);
//   - a group whose member (kcat -G, auto commit off) is assigned partitions it has not committed shows
//     every assigned partition, "-" for the committed offset as the consumer-groups tool prints it, the
//     lag counted from the log start offset (said in a legend) and in the total; the trend mark compares
//     the same partitions, so the partitions appearing do not make it "growing".

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import { AdminClient } from "../../src/client/admin/admin-client.js";
import { GroupAdmin } from "../../src/client/admin/group-admin.js";
import { KafkaProducer } from "../../src/client/producer/kafka-producer.js";
import { summariseLag } from "../../src/console/collector/sample-cluster.js";
import {
  type BackgroundCommand,
  BrokerHarness,
  describeResult,
  runCommand,
  startCommand,
  waitFor,
} from "../support/broker-harness.js";
import { skipUnlessInstalled } from "../support/required-tools.js";
import { runTributary } from "../support/tributary-cli.js";
import { ConsoleHarness, launchChromium } from "./console-harness.js";

const KCAT = "/usr/bin/kcat";
const skip = skipUnlessInstalled("chromium", "kcat");

const WIDE = "wide";
const LAGGER = "lagger";
const HOUR = 3_600_000;
/** A value larger than the collector's per-partition fetch limit (16 KiB), as the issue saw (20,440 bytes). */
const BIG_VALUE_BYTES = 20_440;

let broker: BrokerHarness;
let admin: AdminClient;
let consoleProc: ConsoleHarness;
let browser: Browser;
let page: Page;
let dir: string;

before(async () => {
  if (skip) return;
  broker = await BrokerHarness.start({ name: "console-lag" });
  admin = new AdminClient({ bootstrapServers: broker.bootstrap });
  const [created] = await admin.createTopics([{ name: WIDE, numPartitions: 2, replicationFactor: 1 }]);
  assert.equal(created.error, undefined);
  const producer = new KafkaProducer({ "bootstrap.servers": broker.bootstrap, "linger.ms": "0" });
  const now = Date.now();
  // Partition 0: small records an hour old — first in the leader's response, it has data, so the
  // broker's one oversized batch allowance (KIP-74) is used up before partition 1.
  for (let i = 0; i < 3; i++)
    await producer.send({ topic: WIDE, partition: 0, value: `small-${i}`, timestamp: now - HOUR + i });
  // Partition 1: its next unconsumed batch is one 20,440-byte record two hours old, then small ones.
  await producer.send({
    topic: WIDE,
    partition: 1,
    value: Buffer.alloc(BIG_VALUE_BYTES, "x"),
    timestamp: now - 2 * HOUR,
  });
  for (let i = 0; i < 2; i++)
    await producer.send({ topic: WIDE, partition: 1, value: `after-${i}`, timestamp: now - HOUR / 2 });
  await producer.close();
  const results = await new GroupAdmin(admin.cluster).alterConsumerGroupOffsets(LAGGER, [
    { topic: WIDE, partition: 0, offset: 0n },
    { topic: WIDE, partition: 1, offset: 0n },
  ]);
  assert.deepEqual(
    results.map((r) => r.error),
    [undefined, undefined],
  );
  dir = mkdtempSync(join(tmpdir(), "console-lag-"));
  const config = join(dir, "console.properties");
  writeFileSync(
    config,
    ["console.cluster.alias=local", `local.bootstrap.servers=${broker.bootstrap}`].join("\n"),
  );
  consoleProc = await ConsoleHarness.startSampling(config, dir);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
});

after(async () => {
  await browser?.close().catch(() => {});
  await consoleProc?.stop();
  await admin?.close();
  await broker?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The record at `offset` of a partition as kcat reads it: timestamp (ms) and payload size. */
async function kcatRecord(topic: string, partition: number, offset: number) {
  const r = await runCommand(KCAT, [
    "-b",
    broker.bootstrap,
    "-C",
    "-q",
    "-e",
    "-t",
    topic,
    "-p",
    String(partition),
    "-o",
    String(offset),
    "-c",
    "1",
    "-f",
    "%T %S\\n",
  ]);
  assert.equal(r.code, 0, describeResult("kcat -C", r));
  const [ts, size] = r.stdout.trim().split(" ").map(Number);
  return { ts, size };
}

interface PageRow {
  partition: number;
  lagMs: string;
  text: string;
}

/** The group page's rows, card and sample time, read together (one render). */
async function readGroupPage(p: Page) {
  return p.evaluate(() => {
    const rows = [...document.querySelectorAll("[data-testid=partitions] tbody tr")].map((tr) => ({
      partition: Number(tr.getAttribute("data-partition")),
      lagMs: tr.querySelector("td.lag-time")?.getAttribute("data-lag-ms") ?? "",
      text: tr.querySelector("td.lag-time")?.textContent?.trim() ?? "",
    }));
    const card = document.querySelector("[data-testid=max-lag-time]");
    return {
      rows,
      cardMs: card?.getAttribute("data-lag-ms") ?? "",
      cardText: card?.textContent?.trim() ?? "",
      sampledAt: Number(document.querySelector("[data-testid=lag-chart]")?.getAttribute("data-sampled-at")),
    };
  });
}

test("a partition whose next batch exceeds the fetch limit, second in its leader's response, shows its lag time", {
  skip,
}, async () => {
  const big = await kcatRecord(WIDE, 1, 0);
  assert.ok(big.size > 16 * 1024, `the next unconsumed record of ${WIDE}-1 is ${big.size} bytes`);
  const small = await kcatRecord(WIDE, 0, 0);
  await page.goto(`${consoleProc.url}/#/c/local/groups/${LAGGER}`);
  const seen = await waitFor("both partitions' rows", 20_000, async () => {
    const s = await readGroupPage(page);
    return s.rows.length === 2 && s.sampledAt > 0 ? s : undefined;
  });
  const row = (p: number): PageRow => seen.rows.find((r) => r.partition === p) as PageRow;
  assert.notEqual(row(1).text, "unknown", `${WIDE}-1's lag time`);
  // lag in ms = the sample time − the timestamp of the record at the committed offset, exactly.
  assert.equal(seen.sampledAt - Number(row(1).lagMs), big.ts, `${WIDE}-1: the record's timestamp (kcat %T)`);
  assert.equal(
    seen.sampledAt - Number(row(0).lagMs),
    small.ts,
    `${WIDE}-0: the record's timestamp (kcat %T)`,
  );
  assert.match(row(1).text, /^2h 0m \d+s$/);
  // The cost: one Fetch for the leader's two partitions, and one more for the partition that did not fit.
  const [cluster] =
    await consoleProc.json<
      Array<{ lastSample: { timestampReads: { requests: number; retries: number } } | null }>
    >("/api/clusters");
  assert.deepEqual(cluster.lastSample?.timestampReads, { requests: 2, retries: 1 });
});

test("the group's oldest unconsumed record is the oldest over every partition", { skip }, async () => {
  await page.goto(`${consoleProc.url}/#/c/local/groups/${LAGGER}`);
  const seen = await waitFor("the group page", 20_000, async () => {
    const s = await readGroupPage(page);
    return s.rows.length === 2 && s.cardMs !== "" ? s : undefined;
  });
  const oldest = Math.max(...seen.rows.map((r) => Number(r.lagMs)));
  assert.equal(Number(seen.cardMs), oldest, JSON.stringify(seen));
  assert.equal(seen.cardText, seen.rows.find((r) => r.partition === 1)?.text);
  assert.match(seen.cardText, /^2h 0m \d+s$/);
});

test("a lagging partition whose record cannot be read makes the group's age a lower bound", () => {
  assert.deepEqual(
    summariseLag([
      { lag: 5, lagMs: 241_000 },
      { lag: 9, lagMs: null },
      { lag: 0, lagMs: 0 },
    ]),
    { totalLag: 14, maxLagMs: 241_000, lagMsUnknown: 1 },
  );
  assert.deepEqual(summariseLag([{ lag: 9, lagMs: null }]), { totalLag: 9, maxLagMs: null, lagMsUnknown: 1 });
  assert.deepEqual(summariseLag([{ lag: 0, lagMs: 0 }]), { totalLag: 0, maxLagMs: 0, lagMsUnknown: 0 });
  assert.deepEqual(summariseLag([]), { totalLag: 0, maxLagMs: 0, lagMsUnknown: 0 });
});

/** `consumer-groups --describe --group` rows: TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG … */
async function describeGroupCli(group: string) {
  const r = await runTributary([
    "consumer-groups",
    "--bootstrap-server",
    broker.bootstrap,
    "--describe",
    "--group",
    group,
  ]);
  assert.equal(r.code, 0, describeResult("consumer-groups --describe", r));
  const lines = r.stdout.split("\n").filter((l) => l.trim() !== "");
  const header = lines.findIndex((l) => l.startsWith("GROUP "));
  assert.ok(header >= 0, r.stdout);
  return lines.slice(header + 1).map((l) => {
    const [, topic, partition, current, end, lag, consumerId, host, clientId] = l.trim().split(/\s+/);
    return { topic, partition: Number(partition), current, end, lag, consumerId, host, clientId };
  });
}

test("a member's assigned partitions without a commit are shown with '-' and lag from the log start", {
  skip,
}, async () => {
  const topic = "events";
  const group = "readers";
  const [created] = await admin.createTopics([{ name: topic, numPartitions: 4, replicationFactor: 1 }]);
  assert.equal(created.error, undefined);
  const producer = new KafkaProducer({ "bootstrap.servers": broker.bootstrap, "linger.ms": "0" });
  for (const [partition, n] of [5, 6, 7, 8].entries())
    for (let i = 0; i < n; i++) await producer.send({ topic, partition, value: `e${partition}-${i}` });
  await producer.close();
  // Partition 3's log starts at 2: its lag without a commit is 8 − 2 = 6, not 8.
  const [deleted] = await admin.deleteRecords([{ topic, partition: 3, offset: 2n }]);
  assert.equal(deleted.error, undefined);
  const results = await new GroupAdmin(admin.cluster).alterConsumerGroupOffsets(group, [
    { topic, partition: 0, offset: 2n },
    { topic, partition: 1, offset: 3n },
  ]);
  assert.deepEqual(
    results.map((r) => r.error),
    [undefined, undefined],
  );
  // A few samples of the group with its two committed partitions only: the trend's earlier end.
  const page2 = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  let member: BackgroundCommand | undefined;
  try {
    await page2.goto(`${consoleProc.url}/#/c/local/groups/${group}`);
    await waitFor("3 points with 2 partitions", 20_000, async () => {
      const points = Number(await page2.locator("[data-testid=lag-chart]").getAttribute("data-points"));
      return points >= 3 && (await page2.locator("[data-testid=partitions] tbody tr").count()) === 2
        ? true
        : undefined;
    });
    assert.equal(await page2.locator("[data-testid=trend]").getAttribute("data-trend"), "steady");
    // A real member, assigned all four partitions, that never commits (latest: it reads nothing new).
    member = startCommand(KCAT, [
      "-b",
      broker.bootstrap,
      "-G",
      group,
      "-q",
      "-X",
      "enable.auto.commit=false",
      "-X",
      "enable.auto.offset.store=false",
      "-X",
      "auto.offset.reset=latest",
      "-X",
      "client.id=no-commit",
      topic,
    ]);
    // Every render from the one that first shows the four rows must keep the trend steady.
    const trends = new Set<string>();
    const seen = await waitFor("4 partitions on the page", 60_000, async () => {
      const s = await page2.evaluate(() => ({
        rows: [...document.querySelectorAll("[data-testid=partitions] tbody tr")].map((tr) => ({
          partition: Number(tr.getAttribute("data-partition")),
          committed: tr.querySelector("td.committed")?.textContent?.trim() ?? "",
          end: tr.querySelector("td.log-end")?.textContent?.trim() ?? "",
          lag: Number(tr.querySelector("td.lag")?.getAttribute("data-lag")),
          lagTitle: tr.querySelector("td.lag")?.getAttribute("title") ?? "",
          owner: tr.lastElementChild?.textContent?.trim() ?? "",
        })),
        total: document.querySelector("[data-testid=total-lag]")?.textContent?.trim(),
        trend: document.querySelector("[data-testid=trend]")?.getAttribute("data-trend") ?? "",
        legend: document.querySelector("[data-testid=no-commit-legend]")?.textContent ?? "",
      }));
      if (s.rows.length === 4) trends.add(s.trend);
      return s.rows.length === 4 && s.rows.every((r) => r.owner.startsWith("no-commit")) ? s : undefined;
    });
    const cli = await waitFor("the group stable in consumer-groups --describe", 20_000, async () => {
      const rows = await describeGroupCli(group);
      return rows.length === 4 && rows.every((r) => r.clientId === "no-commit") ? rows : undefined;
    });
    const starts = [0, 0, 0, 2];
    let total = 0;
    for (const c of cli) {
      const row = seen.rows.find((r) => r.partition === c.partition);
      assert.ok(row, `partition ${c.partition} on the page`);
      assert.equal(
        row.committed,
        c.current,
        `partition ${c.partition}: committed offset as the tool prints it`,
      );
      assert.equal(row.end, c.end, `partition ${c.partition}: log end offset`);
      assert.ok(row.owner.includes(c.host), `partition ${c.partition}: owner ${row.owner} on ${c.host}`);
      if (c.current === "-") {
        assert.equal(c.lag, "-");
        assert.equal(
          row.lag,
          Number(c.end) - starts[c.partition],
          `partition ${c.partition}: lag from the log start`,
        );
        assert.match(row.lagTitle, /log start offset/);
      } else assert.equal(row.lag, Number(c.lag), `partition ${c.partition}: lag`);
      total += row.lag;
    }
    assert.deepEqual(
      cli.map((c) => c.current),
      ["2", "3", "-", "-"],
    );
    assert.equal(seen.total, String(total));
    assert.equal(total, 3 + 3 + 7 + 6);
    assert.match(seen.legend, /counts from the log start offset/);
    // Five more samples with all four partitions: the trend never said growing.
    const points = Number(await page2.locator("[data-testid=lag-chart]").getAttribute("data-points"));
    await waitFor("5 more samples", 30_000, async () => {
      trends.add((await page2.locator("[data-testid=trend]").getAttribute("data-trend")) ?? "");
      return Number(await page2.locator("[data-testid=lag-chart]").getAttribute("data-points")) >= points + 5
        ? true
        : undefined;
    });
    assert.deepEqual([...trends], ["steady"], "a partition appearing does not make the lag 'growing'");
  } finally {
    await member?.stop("SIGTERM");
    await page2.close();
  }
});
