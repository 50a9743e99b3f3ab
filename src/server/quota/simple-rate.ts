// SimpleRate: Kafka's SimpleRate, the Rate the replication quotas are measured with. The samples, their
// windows and their expiry are SampledRate's (sampled-rate.ts: replication.quota.window.num windows of
// replication.quota.window.size.seconds); only the time the sum is divided by differs: the time since the
// oldest retained window began, but never less than one window (SimpleRate.windowSize), so a burst at
// start-up is not divided by ~0 s and a steady rate is not diluted by empty windows that never existed.
// The quota bound is checked against this measurement (Quota.upperBound: acceptable while value <= bound).

import { type SampleConfig, SampledRate } from "./sampled-rate.js";

export type RateConfig = SampleConfig;

export class SimpleRate extends SampledRate {
  constructor(config: RateConfig) {
    if (!(config.samples >= 1) || !(config.windowMs > 0))
      throw new RangeError(`invalid rate config: ${config.samples} samples of ${config.windowMs} ms`);
    super(config);
  }

  /** The time the measurement divides by at `nowMs` (SimpleRate.windowSize), in ms. */
  override windowSize(nowMs: number): number {
    this.stat.purgeObsoleteSamples(nowMs);
    return Math.max(nowMs - this.stat.oldest(nowMs).startTimeMs, this.config.windowMs);
  }

  /** windowSize under the name the replication quota manager uses. */
  windowSizeMs(nowMs: number): number {
    return this.windowSize(nowMs);
  }
}
