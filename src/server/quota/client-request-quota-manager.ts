// ClientRequestQuotaManager: Kafka's request quota (request_percentage) — the share of the broker's
// request-handling time a user / client id may use, as a percentage of one handler thread per quota
// window. Recorded per request as its handling time converted to percent-seconds
// (NanosToPercentagePerSecond = 100 / 1e9), so the rate over the window is a percentage; the throttle
// time is bounded by one quota window (quota.window.size.seconds), as Kafka bounds it. The quota
// resolution and sensors are ClientQuotaManager's; the rate metric is request-time.
//
// "Handling time" on Tributary's one event loop: the time the request's handler ran on it (its
// synchronous parts and the response encoding), not the time it waited (a long-polling Fetch in the
// purgatory, acks=all waiting for the ISR) — as Kafka counts a request thread's time, not the wait.

import type { Time } from "../../common/time.js";
import { ClientQuotaManager } from "./client-quota-manager.js";
import type { SampleConfig } from "./sampled-rate.js";
import { throttleTimeMs } from "./sampled-rate.js";

/** ClientRequestQuotaManager.NanosToPercentagePerSecond */
export const NANOS_TO_PERCENTAGE_PER_SECOND = 100 / 1e9;

export class ClientRequestQuotaManager extends ClientQuotaManager {
  private readonly maxThrottleTimeMs: number;

  constructor(config: SampleConfig, time: Time) {
    super("Request", config, time);
    this.maxThrottleTimeMs = config.windowMs;
  }

  /** Records a request's handling time (ns) and returns its throttle time (ms). */
  maybeRecordRequestTime(sanitizedUser: string, clientId: string, handlingNs: number, nowMs: number): number {
    return this.maybeRecordAndGetThrottleTimeMs(
      sanitizedUser,
      clientId,
      handlingNs * NANOS_TO_PERCENTAGE_PER_SECOND,
      nowMs,
    );
  }

  /** QuotaUtils.boundedThrottleTime with one quota window as the bound. */
  protected override throttleTime(observed: number, bound: number, windowSizeMs: number): number {
    return Math.min(throttleTimeMs(observed, bound, windowSizeMs), this.maxThrottleTimeMs);
  }

  protected override get rateMetricName(): string {
    return "request-time";
  }
}
