// Histogram (common/metrics/histogram.ts): quantiles against the exact nearest-rank quantiles of known
// data within the documented relative error, forward decay with MockTime (recent values dominate, as in
// Yammer's exponentially decaying reservoir), and the bounds (values ≤ 1 µs, values above MAX_VALUE).

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  Histogram,
  MAX_VALUE,
  RELATIVE_ERROR,
  YAMMER_QUANTILES,
} from "../../../src/common/metrics/histogram.js";
import { MockTime } from "../../../src/common/time.js";
import { Random } from "../../support/random.js";

/** The exact nearest-rank quantile: the smallest value with at least q·n values at or below it. */
function exactQuantile(sorted: readonly number[], q: number): number {
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[rank - 1];
}

function checkAgainstExact(values: number[], what: string): void {
  const h = new Histogram(new MockTime());
  for (const v of values) h.update(v);
  const sorted = [...values].sort((a, b) => a - b);
  const qs = [0, 0.01, 0.1, 0.25, ...YAMMER_QUANTILES, 1];
  const got = h.quantiles(qs);
  for (let i = 0; i < qs.length; i++) {
    const exact = exactQuantile(sorted, qs[i]);
    const err = Math.abs(got[i] - exact) / exact;
    assert.ok(
      err <= RELATIVE_ERROR + 1e-9,
      `${what}: q=${qs[i]} gave ${got[i]}, exact ${exact} (relative error ${err})`,
    );
  }
  assert.equal(h.count, values.length);
  const sum = values.reduce((a, b) => a + b, 0);
  assert.ok(Math.abs(h.sum - sum) <= 1e-6 * sum);
  assert.equal(h.min, sorted[0]);
  assert.equal(h.max, sorted[sorted.length - 1]);
}

describe("Histogram quantiles", () => {
  test("uniform, exponential and log-normal data: every quantile within 1% of the exact one", () => {
    const random = new Random(42);
    const rnd = () => random.next();
    const uniform = Array.from({ length: 10_000 }, () => 0.01 + rnd() * 1000);
    checkAgainstExact(uniform, "uniform");
    const exponential = Array.from({ length: 10_000 }, () => -Math.log(1 - rnd()) * 5 + 0.002);
    checkAgainstExact(exponential, "exponential");
    const logNormal = Array.from({ length: 20_000 }, () => {
      const z = Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
      return Math.exp(1 + 2 * z);
    });
    checkAgainstExact(logNormal, "log-normal");
  });

  test("small samples: 1, 2 and 10 values", () => {
    checkAgainstExact([3.5], "one value");
    checkAgainstExact([1, 100], "two values");
    checkAgainstExact([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], "ten values");
  });

  test("an empty histogram reports 0 everywhere (as Yammer's empty snapshot)", () => {
    const h = new Histogram(new MockTime());
    assert.deepEqual(h.quantiles(YAMMER_QUANTILES), [0, 0, 0, 0, 0, 0]);
    assert.equal(h.count, 0);
    assert.equal(h.max, 0);
  });

  test("values at or below 1 µs report 0; values above MAX_VALUE are clamped to it", () => {
    const h = new Histogram(new MockTime());
    h.update(0);
    h.update(0.0005);
    assert.equal(h.quantile(0.99), 0);
    h.update(MAX_VALUE * 100);
    h.update(MAX_VALUE * 100);
    const top = h.quantile(1);
    assert.ok(Math.abs(top - MAX_VALUE) / MAX_VALUE <= RELATIVE_ERROR, `top ${top}`);
  });

  test("forward decay: after ten minutes new values outweigh a larger number of old ones", () => {
    const time = new MockTime();
    const h = new Histogram(time);
    for (let i = 0; i < 1000; i++) h.update(100);
    assert.ok(Math.abs(h.quantile(0.5) - 100) <= 1);
    // 10 minutes later (weight e^(0.015·600) ≈ 8103 per new value), 10 values of 1 ms take the median.
    for (let s = 0; s < 600; s += 5) {
      time.sleep(5000);
      h.tick();
    }
    for (let i = 0; i < 10; i++) h.update(1);
    assert.ok(Math.abs(h.quantile(0.5) - 1) <= 0.01, `median ${h.quantile(0.5)}`);
    // The count is not decayed (the JMX Count attribute).
    assert.equal(h.count, 1010);
  });

  test("rescaling after an hour keeps the proportions of the weights", () => {
    const time = new MockTime();
    const h = new Histogram(time);
    time.sleep(3_590_000);
    h.tick();
    for (let i = 0; i < 30; i++) h.update(10);
    for (let i = 0; i < 70; i++) h.update(1000);
    const before = h.quantiles([0.2, 0.5]);
    time.sleep(20_000); // crosses the one-hour landmark: weights rescaled
    h.tick();
    assert.deepEqual(h.quantiles([0.2, 0.5]), before);
    // New values after the rescale weigh as much as values recorded 20 s earlier, times e^(0.015·20).
    for (let i = 0; i < 60; i++) h.update(10);
    const w = Math.exp(0.015 * 20);
    const share10 = (30 + 60 * w) / (100 + 60 * w);
    assert.ok(share10 > 0.5);
    assert.ok(Math.abs(h.quantile(0.5) - 10) <= 0.1, `median ${h.quantile(0.5)}`);
  });
});
