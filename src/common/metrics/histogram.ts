// Histogram: Kafka's (Yammer's) biased Histogram — count, sum, min, max and the 50/75/95/98/99/99.9th
// percentiles of recent values, as the request-time histograms (TotalTimeMs, RequestQueueTimeMs, …) report
// them. Yammer samples into an exponentially decaying reservoir (α = 0.015/s, biased to the last ~5
// minutes); here the same forward decay weights a bounded log-bucketed histogram instead of a sample, so
// update() is O(1) and allocation-free:
// - a value v > MIN_VALUE lands in bucket i = ceil(log_γ(v / MIN_VALUE)), γ = (1+ε)/(1-ε), ε = 1%; the
//   bucket reports 2·MIN_VALUE·γ^i/(γ+1), within ε of every value it holds (values ≤ MIN_VALUE report 0,
//   values above MAX_VALUE are clamped to it);
// - each update adds the current weight e^(α·(t − landmark)) to its bucket, so older values count less
//   (Yammer's ExponentiallyDecayingReservoir); t moves in 5 s steps (tick()), and once an hour the weights
//   are rescaled to a new landmark (Yammer's RESCALE_THRESHOLD) so they stay finite.
// A quantile q is the value of the first bucket at which the cumulative weight reaches q of the total
// (nearest rank), so its relative error against the exact nearest-rank quantile of the (weighted) data is
// at most ε.

import type { Time } from "../time.js";

/** Relative error bound of a reported quantile. */
export const RELATIVE_ERROR = 0.01;
/** Values at or below this report as 0 (1 µs when values are milliseconds). */
export const MIN_VALUE = 1e-3;
/** Values above this are clamped (10^7: ~2.8 hours in milliseconds). */
export const MAX_VALUE = 1e7;
/** Yammer's ExponentiallyDecayingReservoir default α (per second). */
export const DEFAULT_ALPHA = 0.015;
/** The percentiles Yammer's histograms publish over JMX (50thPercentile … 999thPercentile). */
export const YAMMER_QUANTILES: readonly number[] = [0.5, 0.75, 0.95, 0.98, 0.99, 0.999];

const GAMMA = (1 + RELATIVE_ERROR) / (1 - RELATIVE_ERROR);
const LOG_GAMMA = Math.log(GAMMA);
const BUCKETS = Math.ceil(Math.log(MAX_VALUE / MIN_VALUE) / LOG_GAMMA) + 1;
const TICK_NS = 5_000_000_000n;
const RESCALE_THRESHOLD_NS = 3_600_000_000_000n;

export class Histogram {
  private readonly weights = new Float64Array(BUCKETS);
  private totalWeight = 0;
  private weight = 1;
  private _count = 0;
  private _sum = 0;
  private _min = Number.POSITIVE_INFINITY;
  private _max = Number.NEGATIVE_INFINITY;
  private landmarkNs: bigint;
  private lastTickNs: bigint;

  constructor(
    private readonly time: Time,
    private readonly alpha = DEFAULT_ALPHA,
  ) {
    this.landmarkNs = time.nanoseconds();
    this.lastTickNs = this.landmarkNs;
  }

  update(value: number): void {
    this._count++;
    this._sum += value;
    if (value < this._min) this._min = value;
    if (value > this._max) this._max = value;
    let i = 0;
    if (value > MIN_VALUE) {
      i = Math.ceil(Math.log(value / MIN_VALUE) / LOG_GAMMA);
      if (i >= BUCKETS) i = BUCKETS - 1;
      else if (i < 1) i = 1;
    }
    this.weights[i] += this.weight;
    this.totalWeight += this.weight;
  }

  /** Number of values recorded (the JMX `Count`). */
  get count(): number {
    return this._count;
  }

  get sum(): number {
    return this._sum;
  }

  get min(): number {
    return this._count === 0 ? 0 : this._min;
  }

  get max(): number {
    return this._count === 0 ? 0 : this._max;
  }

  get mean(): number {
    return this._count === 0 ? 0 : this._sum / this._count;
  }

  /** Moves the decay weight to the current 5-second step; rescales once the landmark is an hour old. */
  tick(): void {
    const now = this.time.nanoseconds();
    if (now - this.lastTickNs < TICK_NS) return;
    this.lastTickNs = now - ((now - this.lastTickNs) % TICK_NS);
    const sinceLandmark = this.lastTickNs - this.landmarkNs;
    if (sinceLandmark >= RESCALE_THRESHOLD_NS) {
      const factor = Math.exp(-this.alpha * (Number(sinceLandmark) / 1e9));
      for (let i = 0; i < BUCKETS; i++) this.weights[i] *= factor;
      this.totalWeight *= factor;
      this.landmarkNs = this.lastTickNs;
      this.weight = 1;
    } else {
      this.weight = Math.exp(this.alpha * (Number(sinceLandmark) / 1e9));
    }
  }

  quantile(q: number): number {
    return this.quantiles([q])[0];
  }

  /** The values at quantiles `qs` (each in [0, 1]), in the order given; 0 for an empty histogram. */
  quantiles(qs: readonly number[]): number[] {
    this.tick();
    const out = new Array<number>(qs.length).fill(0);
    if (this.totalWeight <= 0) return out;
    const order = qs.map((_, i) => i).sort((a, b) => qs[a] - qs[b]);
    let k = 0;
    let cumulative = 0;
    for (let i = 0; i < BUCKETS && k < order.length; i++) {
      const w = this.weights[i];
      if (w === 0) continue;
      cumulative += w;
      while (k < order.length && cumulative >= qs[order[k]] * this.totalWeight * (1 - 1e-12)) {
        out[order[k]] = bucketValue(i);
        k++;
      }
    }
    // Rounding left a quantile above the last bucket's cumulative weight: it is the largest bucket's value.
    for (; k < order.length; k++) out[order[k]] = this.lastBucketValue();
    return out;
  }

  private lastBucketValue(): number {
    for (let i = BUCKETS - 1; i >= 0; i--) if (this.weights[i] > 0) return bucketValue(i);
    return 0;
  }
}

function bucketValue(i: number): number {
  if (i === 0) return 0;
  return (2 * MIN_VALUE * GAMMA ** i) / (GAMMA + 1);
}
