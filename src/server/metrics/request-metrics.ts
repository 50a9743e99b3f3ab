// RequestMetrics: Kafka's kafka.network:type=RequestMetrics per request name — RequestsPerSec per API
// version, ErrorsPerSec per error code of the responses (every errorCode in the body, NONE included; a
// handler's failure counts its one code), and the TotalTimeMs / RequestQueueTimeMs / ResponseSendTimeMs
// histograms — recorded when a
// request's response has been written (Kafka's RequestChannel.updateRequestMetrics). A Fetch counts under
// "Fetch" and also "FetchConsumer" or "FetchFollower", as Kafka does.
//
// The times, from the monotonic clock:
// - RequestQueueTimeMs: from the request's frame being read to the pipeline starting on it (includes
//   waiting behind earlier requests of the same connection, which Kafka does not read until then);
// - TotalTimeMs: from the frame being read to the response handed to the kernel (the socket write
//   callback), or to the handler's end when there is no response (acks=0);
// - ResponseSendTimeMs: from the response being encoded to it being handed to the kernel.
// LocalTimeMs / RemoteTimeMs / ThrottleTimeMs / ResponseQueueTimeMs are not reported: handlers are not
// split into local work and purgatory wait, there are no quotas, and a response is written as soon as it
// exists.
// Exported as the JMX exporter's rules name and type them: kafka_network_requestmetrics_requests_total
// {request,version} and kafka_network_requestmetrics_errors_total{request,error} (counters),
// kafka_network_requestmetrics_totaltimems{request,quantile} (gauge) with
// …_totaltimems_count{request} (counter), plus …_totaltimems_sum{request} (counter, Tributary's).

import type { MetricFamily, Sample } from "../../common/metrics/exposition.js";
import { type Histogram, YAMMER_QUANTILES } from "../../common/metrics/histogram.js";
import type { Meter } from "../../common/metrics/meter.js";
import type { MetricsRegistry } from "../../common/metrics/metrics-registry.js";
import { errorDefinition } from "../../protocol/errors.js";

/** When a request moved through the broker (monotonic ns), carried from the pipeline to the socket write. */
export interface RequestTiming {
  /** The RequestMetrics names it counts under (["Produce"], ["Fetch", "FetchConsumer"], …). */
  readonly names: readonly string[];
  readonly version: number;
  readonly receivedNs: bigint;
  readonly dequeuedNs: bigint;
  readonly completedNs: bigint;
  /** The response's error codes and their counts (response-error-counts.ts), when it has a body. */
  readonly errors?: ReadonlyMap<number, number>;
}

const FETCH_CONSUMER: readonly string[] = Object.freeze(["Fetch", "FetchConsumer"]);
const FETCH_FOLLOWER: readonly string[] = Object.freeze(["Fetch", "FetchFollower"]);
const namesByApi = new Map<string, readonly string[]>();

/** The RequestMetrics names of a request (a Fetch from a replica id ≥ 0 is a follower's). */
export function requestMetricNames(apiName: string, version: number, body: unknown): readonly string[] {
  if (apiName === "Fetch") {
    const b = body as { replicaId?: number; replicaState?: { replicaId?: number } };
    const replicaId = version >= 15 ? (b.replicaState?.replicaId ?? -1) : (b.replicaId ?? -1);
    return replicaId >= 0 ? FETCH_FOLLOWER : FETCH_CONSUMER;
  }
  let names = namesByApi.get(apiName);
  if (names === undefined) {
    names = Object.freeze([apiName]);
    namesByApi.set(apiName, names);
  }
  return names;
}

class RequestNameMetrics {
  readonly requestsByVersion = new Map<number, Meter>();
  /** ErrorsPerSec per error code. */
  readonly errorsByCode = new Map<number, Meter>();
  readonly totalTimeMs: Histogram;
  readonly requestQueueTimeMs: Histogram;
  readonly responseSendTimeMs: Histogram;

  constructor(private readonly registry: MetricsRegistry) {
    this.totalTimeMs = registry.newHistogram();
    this.requestQueueTimeMs = registry.newHistogram();
    this.responseSendTimeMs = registry.newHistogram();
  }

  errorRate(code: number): Meter {
    return this.meterIn(this.errorsByCode, code);
  }

  requestRate(version: number): Meter {
    return this.meterIn(this.requestsByVersion, version);
  }

  /** The meter of `key` in `meters`, registered on first use. */
  private meterIn(meters: Map<number, Meter>, key: number): Meter {
    let m = meters.get(key);
    if (m === undefined) {
      m = this.registry.newMeter();
      meters.set(key, m);
    }
    return m;
  }
}

const HISTOGRAMS: ReadonlyArray<readonly [string, string, (m: RequestNameMetrics) => Histogram]> = [
  [
    "totaltimems",
    "Milliseconds from a request being read to its response being written (TotalTimeMs)",
    (m) => m.totalTimeMs,
  ],
  [
    "requestqueuetimems",
    "Milliseconds a request waited between being read and being handled (RequestQueueTimeMs)",
    (m) => m.requestQueueTimeMs,
  ],
  [
    "responsesendtimems",
    "Milliseconds from a response being ready to it being written to the socket (ResponseSendTimeMs)",
    (m) => m.responseSendTimeMs,
  ],
];

/** Quantile label values as the exporter derives them from Yammer's NNthPercentile attributes. */
const QUANTILE_LABELS = ["0.50", "0.75", "0.95", "0.98", "0.99", "0.999"];

export class RequestMetrics {
  private readonly byName = new Map<string, RequestNameMetrics>();

  constructor(private readonly registry: MetricsRegistry) {}

  private metricsFor(name: string): RequestNameMetrics {
    let m = this.byName.get(name);
    if (m === undefined) {
      m = new RequestNameMetrics(this.registry);
      this.byName.set(name, m);
    }
    return m;
  }

  /** A request is done: its response was written at `sentNs` (or it has none and ended at completedNs). */
  record(timing: RequestTiming, sentNs: bigint): void {
    const totalMs = Number(sentNs - timing.receivedNs) / 1e6;
    const queueMs = Number(timing.dequeuedNs - timing.receivedNs) / 1e6;
    const sendMs = Number(sentNs - timing.completedNs) / 1e6;
    for (const name of timing.names) {
      const m = this.metricsFor(name);
      m.requestRate(timing.version).mark();
      m.totalTimeMs.update(totalMs);
      m.requestQueueTimeMs.update(queueMs);
      m.responseSendTimeMs.update(sendMs);
      if (timing.errors !== undefined) for (const [code, n] of timing.errors) m.errorRate(code).mark(n);
    }
  }

  collect(): MetricFamily[] {
    const names = [...this.byName.keys()].sort();
    const requests: Sample[] = [];
    for (const request of names) {
      const m = this.byName.get(request)!;
      for (const version of [...m.requestsByVersion.keys()].sort((a, b) => a - b)) {
        requests.push({
          labels: { request, version: String(version) },
          value: m.requestsByVersion.get(version)!.count,
        });
      }
    }
    const errors: Sample[] = [];
    for (const request of names) {
      const m = this.byName.get(request)!;
      for (const code of [...m.errorsByCode.keys()].sort((a, b) => a - b)) {
        errors.push({
          labels: { request, error: errorDefinition(code)?.name ?? `UNKNOWN_${code}` },
          value: m.errorsByCode.get(code)!.count,
        });
      }
    }
    const families: MetricFamily[] = [
      {
        name: "kafka_network_requestmetrics_requests_total",
        help: "Requests answered, per request name and API version (RequestsPerSec)",
        type: "counter",
        samples: requests,
      },
      {
        name: "kafka_network_requestmetrics_errors_total",
        help: "Error codes in responses, NONE included, per request name and error (ErrorsPerSec)",
        type: "counter",
        samples: errors,
      },
    ];
    // As the exporter's rules type them: the percentiles a gauge, Count a counter (`_count`); `_sum` is
    // Tributary's, a counter too. Not a Prometheus summary: Prometheus 3 rewrites a summary's quantile
    // label values ("0.50" → "0.5"), which would break queries written for Kafka's exporter output.
    for (const [family, help, histogram] of HISTOGRAMS) {
      const quantiles: Sample[] = [];
      const sums: Sample[] = [];
      const counts: Sample[] = [];
      for (const request of names) {
        const h = histogram(this.byName.get(request)!);
        const values = h.quantiles(YAMMER_QUANTILES);
        for (let i = 0; i < values.length; i++)
          quantiles.push({ labels: { request, quantile: QUANTILE_LABELS[i] }, value: values[i] });
        sums.push({ labels: { request }, value: h.sum });
        counts.push({ labels: { request }, value: h.count });
      }
      const name = `kafka_network_requestmetrics_${family}`;
      families.push(
        { name, help: `${help}, by percentile`, type: "gauge", samples: quantiles },
        { name: `${name}_count`, help: `${help}: requests recorded`, type: "counter", samples: counts },
        { name: `${name}_sum`, help: `${help}: sum of the times, ms`, type: "counter", samples: sums },
      );
    }
    return families;
  }
}
