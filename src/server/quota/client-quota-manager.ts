// ClientQuotaManager: Kafka's ClientQuotaManager with its DefaultQuotaCallback, for one quota type
// (Produce: producer_byte_rate, Fetch: consumer_byte_rate; Request: ClientRequestQuotaManager;
// ControllerMutation: ControllerMutationQuotaManager). Owns
// the quotas set per entity and their precedence, the per-(user, client-id) rate sensors a request's
// value is recorded in, the throttle time a violation earns, and the quota metrics.
//
// Entities (as /config/users, /config/clients name them): user (sanitized principal name) or <default>,
// client id or <default>, or both. For a request from user u with client id c the quota is the first set of
//   /config/users/u/clients/c, /config/users/u/clients/<default>, /config/users/u,
//   /config/users/<default>/clients/c, /config/users/<default>/clients/<default>, /config/users/<default>,
//   /config/clients/c, /config/clients/<default>
// and the metric tags (user, client-id) name the level it came from: both for a <user, client> quota,
// ("u", "") for a user quota, ("", "c") for a client-id quota (all clients sharing a tag share the rate).
// A value recorded over the quota throttles: QuotaUtils.throttleTime over the rate's window. Nothing is
// recorded until the first quota of this type is set (quotasEnabled). Sensors unused for an hour are
// dropped (InactiveSensorExpirationTimeSeconds).

import { Logger } from "../../common/logger.js";
import type { MetricFamily } from "../../common/metrics/exposition.js";
import type { Time } from "../../common/time.js";
import { type SampleConfig, SampledAvg, SampledRate, throttleTimeMs } from "./sampled-rate.js";

export type ClientQuotaType = "Produce" | "Fetch" | "Request" | "ControllerMutation";

/** ZooKeeperInternals.DEFAULT_STRING: the default user or client-id entity. */
export const DEFAULT_ENTITY = "<default>";

/** ClientQuotaManager.InactiveSensorExpirationTimeSeconds */
const INACTIVE_SENSOR_EXPIRATION_MS = 3600 * 1000;
/** metrics.num.samples / metrics.sample.window.ms defaults: the throttle-time average's windows. */
const THROTTLE_TIME_SAMPLES: SampleConfig = { samples: 2, windowMs: 30_000 };

export interface QuotaMetricTags {
  /** Sanitized user principal name, or "" */
  readonly user: string;
  /** Client id, or "" */
  readonly clientId: string;
}

interface ClientSensors {
  readonly tags: QuotaMetricTags;
  readonly rate: SampledRate;
  readonly throttleTime: SampledAvg;
  lastUsedMs: number;
}

/** The key of an entity: user (sanitized) and client id, each absent (undefined) or a name or <default>. */
function entityKey(user: string | undefined, clientId: string | undefined): string {
  return `${user === undefined ? "-" : `=${user}`}\u0000${clientId === undefined ? "-" : `=${clientId}`}`;
}

export class ClientQuotaManager {
  protected readonly logger: Logger;
  /** Quota bounds by entity (DefaultQuotaCallback.overriddenQuotas). */
  private readonly overriddenQuotas = new Map<string, number>();
  private readonly sensors = new Map<string, ClientSensors>();
  private enabled = false;

  constructor(
    readonly quotaType: ClientQuotaType,
    readonly config: SampleConfig,
    protected readonly time: Time,
  ) {
    this.logger = new Logger("kafka.server.ClientQuotaManager", `ThrottledChannelReaper-${quotaType}`);
  }

  /** Whether any quota of this type was ever set (Kafka's quotasEnabled: until then nothing is recorded). */
  get quotasEnabled(): boolean {
    return this.enabled;
  }

  /**
   * Sets (bound) or removes (undefined) the quota of an entity: `sanitizedUser` a sanitized user name or
   * <default> (undefined: no user part), `clientId` a client id or <default> (undefined: none).
   */
  updateQuota(
    sanitizedUser: string | undefined,
    clientId: string | undefined,
    bound: number | undefined,
  ): void {
    if (sanitizedUser === undefined && clientId === undefined) return;
    const key = entityKey(sanitizedUser, clientId);
    const what = `${this.quotaType} quota for user ${sanitizedUser ?? "-"} client-id ${clientId ?? "-"}`;
    if (bound === undefined) {
      if (this.overriddenQuotas.delete(key)) this.logger.info(`Removing ${what}`);
      return;
    }
    this.enabled = true;
    if (this.overriddenQuotas.get(key) !== bound) this.logger.info(`Changing ${what} to ${bound}`);
    this.overriddenQuotas.set(key, bound);
  }

  private has(user: string | undefined, clientId: string | undefined): boolean {
    return this.overriddenQuotas.has(entityKey(user, clientId));
  }

  private get(user: string | undefined, clientId: string | undefined): number | undefined {
    return this.overriddenQuotas.get(entityKey(user, clientId));
  }

  /** DefaultQuotaCallback.quotaMetricTags: which (user, client-id) the request's rate is kept under. */
  quotaMetricTags(sanitizedUser: string, clientId: string): QuotaMetricTags {
    const D = DEFAULT_ENTITY;
    if (this.has(sanitizedUser, clientId) || this.has(sanitizedUser, D))
      return { user: sanitizedUser, clientId };
    if (this.has(sanitizedUser, undefined)) return { user: sanitizedUser, clientId: "" };
    if (this.has(D, clientId) || this.has(D, D)) return { user: sanitizedUser, clientId };
    if (this.has(D, undefined)) return { user: sanitizedUser, clientId: "" };
    return { user: "", clientId };
  }

  /** DefaultQuotaCallback.quotaLimit: the bound for these metric tags, undefined when none applies. */
  quotaLimit(tags: QuotaMetricTags): number | undefined {
    const D = DEFAULT_ENTITY;
    const { user, clientId } = tags;
    if (user !== "" && clientId !== "")
      return this.get(user, clientId) ?? this.get(user, D) ?? this.get(D, clientId) ?? this.get(D, D);
    if (user !== "") return this.get(user, undefined) ?? this.get(D, undefined);
    if (clientId !== "") return this.get(undefined, clientId) ?? this.get(undefined, D);
    return undefined;
  }

  /** The bound that applies to a user (sanitized) and client id, undefined when none does. */
  quotaFor(sanitizedUser: string, clientId: string): number | undefined {
    return this.quotaLimit(this.quotaMetricTags(sanitizedUser, clientId));
  }

  private sensorsFor(sanitizedUser: string, clientId: string, nowMs: number): ClientSensors {
    const tags = this.quotaMetricTags(sanitizedUser, clientId);
    const key = `${tags.user}\u0000${tags.clientId}`;
    let s = this.sensors.get(key);
    if (s === undefined) {
      this.expireSensors(nowMs);
      s = {
        tags,
        rate: new SampledRate(this.config),
        throttleTime: new SampledAvg(THROTTLE_TIME_SAMPLES),
        lastUsedMs: nowMs,
      };
      this.sensors.set(key, s);
    }
    s.lastUsedMs = nowMs;
    return s;
  }

  private expireSensors(nowMs: number): void {
    for (const [k, s] of this.sensors)
      if (nowMs - s.lastUsedMs > INACTIVE_SENSOR_EXPIRATION_MS) this.sensors.delete(k);
  }

  /**
   * maybeRecordAndGetThrottleTimeMs: records `value` for the client at `nowMs` (when quotas of this type
   * are on) and returns how long it must be throttled, 0 when within its quota.
   */
  maybeRecordAndGetThrottleTimeMs(
    sanitizedUser: string,
    clientId: string,
    value: number,
    nowMs: number,
  ): number {
    if (!this.enabled) return 0;
    const s = this.sensorsFor(sanitizedUser, clientId, nowMs);
    s.rate.record(value, nowMs);
    const bound = this.quotaLimit(s.tags);
    if (bound === undefined) return 0;
    const observed = s.rate.measure(nowMs);
    if (observed <= bound) return 0;
    const ms = this.throttleTime(observed, bound, s.rate.windowSize(nowMs));
    this.logger.debug(
      `Quota violated for sensor (${this.quotaType}-${s.tags.user}-${s.tags.clientId}). Delay time: (${ms})`,
    );
    return ms;
  }

  /** QuotaUtils.throttleTime (ClientRequestQuotaManager bounds it). */
  protected throttleTime(observed: number, bound: number, windowSizeMs: number): number {
    return throttleTimeMs(observed, bound, windowSizeMs);
  }

  /** recordNoThrottle: counts `value` towards the client's rate without checking the quota. */
  recordNoThrottle(sanitizedUser: string, clientId: string, value: number, nowMs: number): void {
    if (!this.enabled) return;
    this.sensorsFor(sanitizedUser, clientId, nowMs).rate.record(value, nowMs);
  }

  /** unrecordQuotaSensor: takes back a value recorded for a response that was not sent (throttled fetch). */
  unrecordQuotaSensor(sanitizedUser: string, clientId: string, value: number, nowMs: number): void {
    this.recordNoThrottle(sanitizedUser, clientId, -value, nowMs);
  }

  /**
   * getMaxValueInQuotaWindow: the most one request may carry without being throttled for certain,
   * quota × (quota.window.num − 1) × quota.window.size.seconds (caps a throttled consumer's fetch size).
   */
  getMaxValueInQuotaWindow(sanitizedUser: string, clientId: string): number {
    if (!this.enabled) return Number.MAX_VALUE;
    const bound = this.quotaFor(sanitizedUser, clientId);
    if (bound === undefined) return Number.MAX_VALUE;
    return bound * (this.config.samples - 1) * (this.config.windowMs / 1000);
  }

  /** throttle(): the channel is throttled for `throttleMs` (its throttle-time average). */
  recordThrottle(sanitizedUser: string, clientId: string, throttleMs: number, nowMs: number): void {
    if (throttleMs <= 0) return;
    this.sensorsFor(sanitizedUser, clientId, nowMs).throttleTime.record(throttleMs, nowMs);
  }

  /** The name of the rate metric: byte-rate (ClientRequestQuotaManager: request-time). */
  protected get rateMetricName(): string {
    return "byte-rate";
  }

  /**
   * The metrics, as the JMX exporter's quota rules name kafka.server:type=<Produce|Fetch|Request>,
   * user=…,client-id=… attributes: kafka_server_quota_<byte_rate|request_time|throttle_time>
   * {resource, user, clientId} (gauges).
   */
  collect(): MetricFamily[] {
    const now = this.time.milliseconds();
    this.expireSensors(now);
    const sensors = [...this.sensors.values()];
    const labels = (s: ClientSensors) => ({
      resource: this.quotaType,
      user: s.tags.user,
      clientId: s.tags.clientId,
    });
    const rateName = this.rateMetricName;
    return [
      {
        name: `kafka_server_quota_${rateName.replace(/-/g, "_")}`,
        help: `Tracking ${rateName} per user/client-id`,
        type: "gauge",
        samples: sensors.map((s) => ({ labels: labels(s), value: s.rate.measure(now) })),
      },
      {
        name: "kafka_server_quota_throttle_time",
        help: "Tracking average throttle-time per user/client-id",
        type: "gauge",
        samples: sensors.map((s) => ({ labels: labels(s), value: s.throttleTime.measure(now) })),
      },
    ];
  }
}
