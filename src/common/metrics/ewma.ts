// EWMA: an exponentially-weighted moving average of a rate, ticked every 5 seconds — the average behind
// a Yammer Meter's OneMinuteRate / FiveMinuteRate / FifteenMinuteRate (what Kafka's JMX meters report).
// update(n) counts events; tick() folds the events of the interval that ended into the average. Ticking n
// intervals at once costs O(1) (the idle intervals decay the rate by (1-α)^(n-1)).

/** Yammer's tick interval: 5 seconds. */
export const TICK_INTERVAL_NS = 5_000_000_000n;
const TICK_INTERVAL_S = 5;

export class Ewma {
  private uncounted = 0;
  /** Events per second. */
  private rate = 0;
  private initialized = false;

  /** α for an average over `minutes` minutes, ticked every 5 s (Yammer's M1/M5/M15 alphas). */
  static alphaForMinutes(minutes: number): number {
    return 1 - Math.exp(-TICK_INTERVAL_S / 60 / minutes);
  }

  constructor(private readonly alpha: number) {}

  update(n: number): void {
    this.uncounted += n;
  }

  /** Ends `intervals` tick intervals: the first carries the uncounted events, the others none. */
  tick(intervals = 1): void {
    if (intervals <= 0) return;
    const instantRate = this.uncounted / TICK_INTERVAL_S;
    this.uncounted = 0;
    if (this.initialized) this.rate += this.alpha * (instantRate - this.rate);
    else {
      this.rate = instantRate;
      this.initialized = true;
    }
    if (intervals > 1) this.rate *= (1 - this.alpha) ** (intervals - 1);
  }

  /** The average rate in events per second. */
  ratePerSecond(): number {
    return this.rate;
  }
}
