// SampledRate / SampledAvg: Kafka's metrics measurements a quota is checked against
// (org.apache.kafka.common.metrics.stats.SampledStat with Rate over a WindowedSum, and Avg), and
// QuotaUtils.throttleTime. Kept apart from the quota managers so any quota (client or replication) can
// measure with it.
//
// A stat keeps `samples` windows of `windowMs` (quota.window.num = 11, quota.window.size.seconds = 1),
// plus one overlapping placeholder. A value is added to the current window; a window is complete once
// windowMs has passed since it started, and the next record starts a new one (reusing the oldest slot).
// Windows whose last event is samples × windowMs old are reset when measured. The rate is the sum of the
// windows over the elapsed time since the oldest window started, counted as at least samples − 1 full
// windows (so a new client is not measured over a few milliseconds), at least 1 ms.

export interface SampleConfig {
  /** quota.window.num */
  readonly samples: number;
  /** quota.window.size.seconds × 1000 */
  readonly windowMs: number;
}

interface Sample {
  value: number;
  eventCount: number;
  startTimeMs: number;
  lastEventMs: number;
}

export class SampledStat {
  private readonly samples: Sample[] = [];
  private current = 0;

  constructor(readonly config: SampleConfig) {}

  record(value: number, nowMs: number): void {
    let sample = this.currentSample(nowMs);
    if (nowMs - sample.startTimeMs >= this.config.windowMs) sample = this.advance(nowMs);
    sample.value += value;
    sample.eventCount += 1;
    sample.lastEventMs = nowMs;
  }

  private currentSample(nowMs: number): Sample {
    if (this.samples.length === 0) this.samples.push(newSample(nowMs));
    return this.samples[this.current];
  }

  private advance(nowMs: number): Sample {
    const maxSamples = this.config.samples + 1;
    this.current = (this.current + 1) % maxSamples;
    if (this.current >= this.samples.length) {
      const s = newSample(nowMs);
      this.samples.push(s);
      return s;
    }
    const s = this.samples[this.current];
    resetSample(s, nowMs);
    return s;
  }

  purgeObsoleteSamples(nowMs: number): void {
    const expireAge = this.config.samples * this.config.windowMs;
    for (const s of this.samples) if (nowMs - s.lastEventMs >= expireAge) resetSample(s, nowMs);
  }

  oldest(nowMs: number): Sample {
    if (this.samples.length === 0) this.samples.push(newSample(nowMs));
    let oldest = this.samples[0];
    for (const s of this.samples) if (s.startTimeMs < oldest.startTimeMs) oldest = s;
    return oldest;
  }

  /** Sum and event count of the windows still in the measurement. */
  totals(nowMs: number): { value: number; count: number } {
    this.purgeObsoleteSamples(nowMs);
    let value = 0;
    let count = 0;
    for (const s of this.samples) {
      value += s.value;
      count += s.eventCount;
    }
    return { value, count };
  }
}

function newSample(nowMs: number): Sample {
  return { value: 0, eventCount: 0, startTimeMs: nowMs, lastEventMs: nowMs };
}

function resetSample(s: Sample, nowMs: number): void {
  s.value = 0;
  s.eventCount = 0;
  s.startTimeMs = nowMs;
  s.lastEventMs = nowMs;
}

/** Kafka's Rate (per second) over a WindowedSum. */
export class SampledRate {
  protected readonly stat: SampledStat;

  constructor(readonly config: SampleConfig) {
    this.stat = new SampledStat(config);
  }

  record(value: number, nowMs: number): void {
    this.stat.record(value, nowMs);
  }

  /** Units per second over the retained windows. */
  measure(nowMs: number): number {
    const { value } = this.stat.totals(nowMs);
    return value / (this.windowSize(nowMs) / 1000);
  }

  /** Rate.windowSize: the time the rate is computed over, in ms. */
  windowSize(nowMs: number): number {
    this.stat.purgeObsoleteSamples(nowMs);
    let elapsed = nowMs - this.stat.oldest(nowMs).startTimeMs;
    const fullWindows = Math.floor(elapsed / this.config.windowMs);
    const minFullWindows = this.config.samples - 1;
    if (fullWindows < minFullWindows) elapsed += (minFullWindows - fullWindows) * this.config.windowMs;
    return Math.max(elapsed, 1);
  }
}

/** Kafka's Avg: the mean of the values recorded in the retained windows, NaN when there are none. */
export class SampledAvg {
  private readonly stat: SampledStat;

  constructor(config: SampleConfig) {
    this.stat = new SampledStat(config);
  }

  record(value: number, nowMs: number): void {
    this.stat.record(value, nowMs);
  }

  measure(nowMs: number): number {
    const { value, count } = this.stat.totals(nowMs);
    return count === 0 ? Number.NaN : value / count;
  }
}

/**
 * QuotaUtils.throttleTime: how long (ms) the client must stay quiet for the rate measured over
 * `windowSizeMs` to come back to `bound` — (observed − bound) / bound × window size, rounded.
 */
export function throttleTimeMs(observed: number, bound: number, windowSizeMs: number): number {
  return Math.round(((observed - bound) / bound) * windowSizeMs);
}
