// Meter and EWMA (common/metrics/meter.ts, ewma.ts) driven by MockTime: the one/five/fifteen-minute rates
// follow Yammer's values (3 events in the first 5 s interval → 0.6/s, then e^(-t/window) decay), several
// idle intervals at once decay exactly as one tick per interval, and the registry's 5-second tick on the
// MockScheduler keeps the rates moving when nothing is marked.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Ewma } from "../../../src/common/metrics/ewma.js";
import { Meter } from "../../../src/common/metrics/meter.js";
import { MetricsRegistry } from "../../../src/common/metrics/metrics-registry.js";
import { MockScheduler } from "../../../src/common/scheduler.js";
import { MockTime } from "../../../src/common/time.js";

const close = (a: number, b: number, what: string) =>
  assert.ok(Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b)), `${what}: ${a} != ${b}`);

describe("Meter", () => {
  test("3 events, then a minute of nothing: Yammer's EWMA values", () => {
    const time = new MockTime();
    const m = new Meter(time);
    m.mark(3);
    assert.equal(m.count, 3);
    time.sleep(5000);
    close(m.oneMinuteRate(), 0.6, "m1 after the first interval");
    close(m.fiveMinuteRate(), 0.6, "m5 after the first interval");
    close(m.fifteenMinuteRate(), 0.6, "m15 after the first interval");
    time.sleep(60_000); // 12 more intervals
    close(m.oneMinuteRate(), 0.6 * Math.exp(-1), "m1 a minute later");
    close(m.fiveMinuteRate(), 0.6 * Math.exp(-1 / 5), "m5 a minute later");
    close(m.fifteenMinuteRate(), 0.6 * Math.exp(-1 / 15), "m15 a minute later");
    // Yammer's published value for the one-minute EWMA after 1 minute.
    assert.ok(Math.abs(m.oneMinuteRate() - 0.22072766) < 1e-6);
  });

  test("a steady rate converges to that rate; the mean rate is count over elapsed time", () => {
    const time = new MockTime();
    const m = new Meter(time);
    for (let s = 0; s < 3600; s++) {
      m.mark(10);
      time.sleep(1000);
      if (s % 5 === 4) m.tick();
    }
    close(m.oneMinuteRate(), 10, "m1");
    assert.ok(Math.abs(m.fifteenMinuteRate() - 10) < 0.01, `m15 ${m.fifteenMinuteRate()}`);
    close(m.meanRate(), 10, "mean");
    assert.equal(m.count, 36_000);
  });

  test("ticking n intervals at once equals n single ticks", () => {
    const a = new Ewma(Ewma.alphaForMinutes(1));
    const b = new Ewma(Ewma.alphaForMinutes(1));
    a.update(50);
    b.update(50);
    a.tick();
    b.tick();
    a.update(20);
    b.update(20);
    a.tick(7);
    for (let i = 0; i < 7; i++) {
      b.tick();
    }
    close(a.ratePerSecond(), b.ratePerSecond(), "7 ticks");
  });

  test("events between ticks count in the interval they were marked in", () => {
    const time = new MockTime();
    const m = new Meter(time);
    time.sleep(4000);
    m.mark(5);
    m.tick(); // not yet 5 s: no interval ended
    time.sleep(1000);
    close(m.oneMinuteRate(), 1, "5 events in the first interval");
  });

  test("the registry ticks its meters every 5 s on the scheduler", async () => {
    const time = new MockTime();
    const scheduler = new MockScheduler(time);
    const registry = new MetricsRegistry(time);
    const m = registry.newMeter();
    registry.start(scheduler);
    m.mark(3);
    await scheduler.tick(5000);
    m.mark(1000); // marked after the first tick: belongs to the second interval
    await scheduler.tick(5000);
    const alpha = Ewma.alphaForMinutes(1);
    close(m.oneMinuteRate(), 0.6 + alpha * (200 - 0.6), "m1 after two scheduled ticks");
    registry.stop();
  });
});
