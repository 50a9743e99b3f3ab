// What a first-time user saw in the console's charts and tables (issue 35), measured in a real headless
// Chromium against a real broker and real `tributary console` processes:
//   - with one sample the lag chart's x axis spans a minute around it (it ran from Feb 2027 to Aug 2029);
//   - nothing drawn on a chart overlaps: the boxes of every tick label (x and both y axes) and of both
//     axis titles, computed from where uPlot draws them (its axis positions and sizes, the labels'
//     measured widths in the chart's font), are disjoint — on the lag chart with one sample and on the
//     traffic chart with many;
//   - a member's long partition list wraps inside the Members table instead of running off it;
//   - the Alerts page without rules shows `console.alert.<name>.type`, not `&lt;name&gt;`.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import { AdminClient } from "../../src/client/admin/admin-client.js";
import { GroupAdmin } from "../../src/client/admin/group-admin.js";
import { KafkaProducer } from "../../src/client/producer/kafka-producer.js";
import { type BackgroundCommand, BrokerHarness, startCommand, waitFor } from "../support/broker-harness.js";
import { skipUnlessInstalled } from "../support/required-tools.js";
import { ConsoleHarness, launchChromium } from "./console-harness.js";

const KCAT = "/usr/bin/kcat";
const skip = skipUnlessInstalled("chromium", "kcat");
const WIDE_PARTITIONS = 64;

let broker: BrokerHarness;
let admin: AdminClient;
/** Samples once a minute: its charts have one point. */
let slow: ConsoleHarness;
/** Samples every 400 ms, with the broker's /metrics. */
let fast: ConsoleHarness;
let browser: Browser;
let dir: string;

before(async () => {
  if (skip) return;
  broker = await BrokerHarness.start({ name: "console-charts" });
  admin = new AdminClient({ bootstrapServers: broker.bootstrap });
  const created = await admin.createTopics([
    { name: "orders", numPartitions: 2, replicationFactor: 1 },
    { name: "wide", numPartitions: WIDE_PARTITIONS, replicationFactor: 1 },
  ]);
  assert.deepEqual(
    created.map((c) => c.error),
    [undefined, undefined],
  );
  const producer = new KafkaProducer({ "bootstrap.servers": broker.bootstrap, "linger.ms": "0" });
  // Lag of 1,500 messages and about 2 days: wide tick labels on both y axes ("150,000").
  for (let i = 0; i < 30; i++)
    await producer.send({
      topic: "orders",
      partition: i % 2,
      value: Buffer.alloc(2000, "v"),
      timestamp: Date.now() - 2 * 86_400_000,
    });
  await producer.close();
  await new GroupAdmin(admin.cluster).alterConsumerGroupOffsets("billing", [
    { topic: "orders", partition: 0, offset: 0n },
    { topic: "orders", partition: 1, offset: 0n },
  ]);
  dir = mkdtempSync(join(tmpdir(), "console-charts-"));
  const config = (name: string) => {
    const file = join(dir, `${name}.properties`);
    writeFileSync(
      file,
      [
        "console.cluster.alias=local",
        `local.bootstrap.servers=${broker.bootstrap}`,
        `local.metrics.urls=0=${broker.metricsUrl}`,
        `console.users.file=`,
      ].join("\n"),
    );
    return file;
  };
  const start = (name: string, interval: string) =>
    ConsoleHarness.start([
      "--config",
      config(name),
      "--port",
      "0",
      "--sample-interval-ms",
      interval,
      "--history-url",
      `sqlite:${join(dir, `${name}.db`)}`,
    ]);
  [slow, fast] = await Promise.all([start("slow", "60000"), start("fast", "400")]);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close().catch(() => {});
  await slow?.stop();
  await fast?.stop();
  await admin?.close();
  await broker?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Box {
  readonly what: string;
  readonly left: number;
  readonly right: number;
  readonly top: number;
  readonly bottom: number;
}

/**
 * Where the chart's texts are drawn, as boxes in CSS px of its canvas: every tick label line of every
 * axis and each axis title, from uPlot's own layout (axis _pos/_size/_lpos, ticks, gaps, the plot box)
 * and the texts' widths measured with the chart's fonts. Also the x scale's range, s.
 */
function chartGeometry(p: Page, testid: string) {
  return p.evaluate((id) => {
    // biome-ignore lint/suspicious/noExplicitAny: uPlot's layout fields are internal
    const u = (document.querySelector(`[data-testid=${id}]`) as any).uplot;
    const pr = window.devicePixelRatio;
    const ctx: CanvasRenderingContext2D = u.ctx;
    const plotLeft = u.bbox.left / pr;
    const plotTop = u.bbox.top / pr;
    const plotWidth = u.bbox.width / pr;
    const plotHeight = u.bbox.height / pr;
    const boxes: Box[] = [];
    const measure = (font: string, text: string) => {
      ctx.font = font;
      const m = ctx.measureText(text);
      return {
        width: m.width / pr,
        height: (m.actualBoundingBoxAscent + m.actualBoundingBoxDescent) / pr,
      };
    };
    // biome-ignore lint/suspicious/noExplicitAny: as above
    u.axes.forEach((a: any, i: number) => {
      if (!a.show || !a._values) return;
      const tickGap = (a.ticks.show ? a.ticks.size : 0) + a.gap;
      const lineHeight = a.font[1] * a.lineGap;
      a._splits.forEach((split: number, k: number) => {
        const value = a._values[k];
        if (value == null) return;
        const at = u.valToPos(split, a.scale);
        String(value)
          .split("\n")
          .forEach((line: string, j: number) => {
            const { width, height } = measure(a.font[0], line);
            if (a.side === 2) {
              const top = a._pos + tickGap + j * lineHeight;
              boxes.push({
                what: `x label ${line}`,
                left: plotLeft + at - width / 2,
                right: plotLeft + at + width / 2,
                top,
                bottom: top + height,
              });
            } else {
              const y = plotTop + at;
              const left = a.side === 3 ? a._pos - tickGap - width : a._pos + tickGap;
              boxes.push({
                what: `axis ${i} label ${line}`,
                left,
                right: left + width,
                top: y - height / 2,
                bottom: y + height / 2,
              });
            }
          });
      });
      if (a.label != null && a.side !== 2) {
        const { width, height } = measure(a.labelFont[0], a.label);
        const base = a.side === 3 ? a._lpos - a.labelGap : a._lpos + a.labelGap;
        boxes.push({
          what: `axis ${i} title ${a.label}`,
          left: a.side === 3 ? base - height : base,
          right: a.side === 3 ? base : base + height,
          top: plotTop + plotHeight / 2 - width / 2,
          bottom: plotTop + plotHeight / 2 + width / 2,
        });
      }
    });
    return { boxes, xMin: u.scales.x.min, xMax: u.scales.x.max, plotWidth, times: [...u.data[0]] };
  }, testid);
}

function overlaps(boxes: readonly Box[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i];
      const b = boxes[j];
      if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom)
        out.push(`${a.what} overlaps ${b.what}`);
    }
  return out;
}

test("with one sample the lag chart spans a minute around it, and nothing on it overlaps", {
  skip,
}, async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  try {
    await page.goto(`${slow.url}/#/c/local/groups/billing`);
    await waitFor("one point", 20_000, async () =>
      Number(await page.locator("[data-testid=lag-chart]").getAttribute("data-points")) === 1
        ? true
        : undefined,
    );
    const g = await chartGeometry(page, "lag-chart");
    assert.equal(g.times.length, 1);
    const [t] = g.times;
    assert.ok(g.xMin <= t && t <= g.xMax, `the sample (${t}) is within the x range [${g.xMin}, ${g.xMax}]`);
    assert.ok(g.xMax - g.xMin <= 120, `x range ${g.xMax - g.xMin} s for one sample`);
    assert.ok(g.boxes.filter((b) => b.what.startsWith("x label")).length >= 2, "x tick labels are drawn");
    assert.ok(g.boxes.some((b) => b.what.includes("title seconds")));
    assert.ok(
      g.boxes.some((b) => /axis 2 label \d{3},\d{3}/.test(b.what)),
      "the seconds axis has six-digit labels",
    );
    assert.deepEqual(overlaps(g.boxes), []);
  } finally {
    await page.close();
  }
});

test("the traffic chart with many samples: nothing overlaps, the x range is the samples'", {
  skip,
}, async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  try {
    await page.goto(`${fast.url}/#/c/local/overview`);
    await waitFor("20 samples", 30_000, async () =>
      Number(await page.locator("[data-testid=traffic-chart]").getAttribute("data-points")) >= 20
        ? true
        : undefined,
    );
    const g = await chartGeometry(page, "traffic-chart");
    const first = g.times[0];
    const last = g.times[g.times.length - 1];
    assert.ok(g.xMin <= first && last <= g.xMax);
    assert.ok(
      g.xMax - g.xMin <= Math.max(60, last - first) + 1e-6,
      "no wider than the samples (or a minute)",
    );
    assert.deepEqual(overlaps(g.boxes), []);
    // The same at a phone's width.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForTimeout(500);
    assert.deepEqual(overlaps((await chartGeometry(page, "traffic-chart")).boxes), []);
  } finally {
    await page.close();
  }
});

test("a member's long partition list wraps inside the Members table", { skip }, async () => {
  let member: BackgroundCommand | undefined;
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  try {
    member = startCommand(KCAT, [
      "-b",
      broker.bootstrap,
      "-G",
      "wide-readers",
      "-q",
      "-X",
      "enable.auto.commit=false",
      "-X",
      "enable.auto.offset.store=false",
      "wide",
    ]);
    await page.goto(`${fast.url}/#/c/local/groups/wide-readers`);
    const cell = page.locator("[data-testid=members] td.assignment");
    await waitFor(`${WIDE_PARTITIONS} partitions assigned`, 60_000, async () =>
      ((await cell.count()) > 0 ? await cell.first().textContent() : "")?.split(", ").length ===
      WIDE_PARTITIONS
        ? true
        : undefined,
    );
    const fit = await page.evaluate(() => {
      const table = document.querySelector("[data-testid=members]") as HTMLElement;
      const wrap = table.parentElement as HTMLElement;
      const cellBox = (table.querySelector("td.assignment") as HTMLElement).getBoundingClientRect();
      const wrapBox = wrap.getBoundingClientRect();
      return {
        scrollWidth: wrap.scrollWidth,
        clientWidth: wrap.clientWidth,
        cellRight: cellBox.right,
        wrapRight: wrapBox.right,
        cellHeight: cellBox.height,
      };
    });
    assert.ok(fit.scrollWidth <= fit.clientWidth, `the table scrolls sideways: ${JSON.stringify(fit)}`);
    assert.ok(
      fit.cellRight <= fit.wrapRight,
      `the partitions cell runs off the table: ${JSON.stringify(fit)}`,
    );
    assert.ok(fit.cellHeight > 30, "the list wraps onto several lines");
  } finally {
    await member?.stop("SIGTERM");
    await page.close();
  }
});

test("the Alerts page without rules names the keys with <name>, not &lt;name&gt;", { skip }, async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  try {
    await page.goto(`${fast.url}/#/c/local/alerts`);
    const note = page.getByText("No alert rules are configured");
    await note.waitFor({ timeout: 15_000 });
    const text = (await note.textContent()) ?? "";
    assert.match(text, /console\.alert\.<name>\.type=…/);
    assert.doesNotMatch(text, /&lt;|&gt;/);
  } finally {
    await page.close();
  }
});
