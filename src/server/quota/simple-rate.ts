// SimpleRate: a byte rate measured over sampled time windows, as Kafka's metrics library measures the
// replication quotas (org.apache.kafka.common.metrics.stats.SimpleRate over a WindowedSum, a SampledStat).
// Owns the samples and the arithmetic, nothing else:
// - `samples` windows of `windowMs` each. A value is added to the current sample; once that sample is
//   `windowMs` old the next one starts (the oldest is reused when all `samples` exist).
// - A sample whose window started `samples * windowMs` or more ago is obsolete: it is reset (to 0, its
//   window starting now) before a measurement.
// - The rate is the sum of all samples divided by the time since the oldest sample's window started, but
//   never by less than one window (SimpleRate.windowSize): a burst at start-up is not divided by ~0 s.
// The quota bound is checked against this measurement (Quota.upperBound: acceptable while value <= bound).

interface Sample {
  value: number;
  /** When this sample's window started (ms). */
  startMs: number;
}

export interface RateConfig {
  /** Number of samples (replication.quota.window.num, Kafka's default 11). */
  readonly samples: number;
  /** Length of one sample's window in ms (replication.quota.window.size.seconds × 1000). */
  readonly windowMs: number;
}

export class SimpleRate {
  private readonly list: Sample[] = [];
  private current = 0;

  constructor(readonly config: RateConfig) {
    if (!(config.samples >= 1) || !(config.windowMs > 0))
      throw new RangeError(`invalid rate config: ${config.samples} samples of ${config.windowMs} ms`);
  }

  /** Adds `value` (bytes) at `nowMs` (Kafka's SampledStat.record). */
  record(value: number, nowMs: number): void {
    let sample = this.currentSample(nowMs);
    if (nowMs - sample.startMs >= this.config.windowMs) sample = this.advance(nowMs);
    sample.value += value;
  }

  /** Bytes per second at `nowMs` (Kafka's Rate.measure with SimpleRate's window size). */
  measure(nowMs: number): number {
    this.purgeObsolete(nowMs);
    let total = 0;
    for (const s of this.list) total += s.value;
    return total / (this.windowSizeMs(nowMs) / 1000);
  }

  private currentSample(nowMs: number): Sample {
    if (this.list.length === 0) this.list.push({ value: 0, startMs: nowMs });
    return this.list[this.current];
  }

  private advance(nowMs: number): Sample {
    this.current = (this.current + 1) % this.config.samples;
    if (this.current >= this.list.length) {
      const s = { value: 0, startMs: nowMs };
      this.list.push(s);
      return s;
    }
    const s = this.list[this.current];
    s.value = 0;
    s.startMs = nowMs;
    return s;
  }

  private purgeObsolete(nowMs: number): void {
    const expireAge = this.config.samples * this.config.windowMs;
    for (const s of this.list) {
      if (nowMs - s.startMs >= expireAge) {
        s.value = 0;
        s.startMs = nowMs;
      }
    }
  }

  /** The time the measurement divides by at `nowMs` (SimpleRate.windowSize), in ms. */
  windowSizeMs(nowMs: number): number {
    this.purgeObsolete(nowMs);
    let oldest = nowMs;
    for (const s of this.list) if (s.startMs < oldest) oldest = s.startMs;
    return Math.max(nowMs - oldest, this.config.windowMs);
  }
}
