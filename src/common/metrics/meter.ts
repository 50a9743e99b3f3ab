// Meter: Kafka's (Yammer's) Meter — a count of events and their one-, five- and fifteen-minute
// exponentially-weighted rates and mean rate, in events per second. mark(n) is two additions per average
// (no clock read, no allocation), so it can sit on the produce and fetch paths; the averages are ticked
// every 5 s of the injected Time's monotonic clock, by tick() (the MetricsRegistry calls it periodically)
// and before any rate is read.

import type { Time } from "../time.js";
import { Ewma, TICK_INTERVAL_NS } from "./ewma.js";

export class Meter {
  private _count = 0;
  private readonly m1 = new Ewma(Ewma.alphaForMinutes(1));
  private readonly m5 = new Ewma(Ewma.alphaForMinutes(5));
  private readonly m15 = new Ewma(Ewma.alphaForMinutes(15));
  private readonly startNs: bigint;
  private lastTickNs: bigint;

  constructor(private readonly time: Time) {
    this.startNs = time.nanoseconds();
    this.lastTickNs = this.startNs;
  }

  mark(n = 1): void {
    this._count += n;
    this.m1.update(n);
    this.m5.update(n);
    this.m15.update(n);
  }

  /** Events marked since creation (the JMX `Count` attribute). */
  get count(): number {
    return this._count;
  }

  /** Ends every 5-second interval that has passed (Yammer's tickIfNecessary). */
  tick(): void {
    const now = this.time.nanoseconds();
    const age = now - this.lastTickNs;
    if (age < TICK_INTERVAL_NS) return;
    const intervals = Number(age / TICK_INTERVAL_NS);
    this.lastTickNs = now - (age % TICK_INTERVAL_NS);
    this.m1.tick(intervals);
    this.m5.tick(intervals);
    this.m15.tick(intervals);
  }

  oneMinuteRate(): number {
    this.tick();
    return this.m1.ratePerSecond();
  }

  fiveMinuteRate(): number {
    this.tick();
    return this.m5.ratePerSecond();
  }

  fifteenMinuteRate(): number {
    this.tick();
    return this.m15.ratePerSecond();
  }

  /** Events per second since creation. */
  meanRate(): number {
    if (this._count === 0) return 0;
    const elapsedS = Number(this.time.nanoseconds() - this.startNs) / 1e9;
    return elapsedS > 0 ? this._count / elapsedS : 0;
  }
}
