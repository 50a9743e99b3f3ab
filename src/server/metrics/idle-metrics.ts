// IdleMetrics: how much of the broker's capacity to serve requests is unused, under the names Kafka's
// dashboards and alerts read for it (the JMX exporter's `…Percent` rule: a fraction 0–1):
// - kafka_network_socketserver_networkprocessoravgidle_percent (Kafka's NetworkProcessorAvgIdlePercent,
//   a gauge of the network threads' recent idle ratio);
// - kafka_server_kafkarequesthandlerpool_requesthandleravgidle_percent (Kafka's
//   RequestHandlerAvgIdlePercent, a meter of which the exporter reads the mean rate since start).
// Here one event loop both does the network I/O and runs the handlers, so both are its idle fraction
// from perf_hooks' eventLoopUtilization (time waiting for I/O over all time, GC counting as busy): the
// network one over the interval since the previous scrape (the whole run at the first), the request
// handler one since the process started, as the exporter reads Kafka's meter.

import { type EventLoopUtilization, performance } from "node:perf_hooks";
import type { MetricFamily } from "../../common/metrics/exposition.js";

export class IdleMetrics {
  private last: EventLoopUtilization | undefined;

  collect(): MetricFamily[] {
    const total = performance.eventLoopUtilization();
    const recent = this.last === undefined ? total : performance.eventLoopUtilization(total, this.last);
    this.last = total;
    return [
      {
        name: "kafka_network_socketserver_networkprocessoravgidle_percent",
        help: "Fraction of the time the event loop (network I/O and request handling) was idle since the previous scrape (NetworkProcessorAvgIdlePercent)",
        type: "gauge",
        samples: [{ value: idleFraction(recent) }],
      },
      {
        name: "kafka_server_kafkarequesthandlerpool_requesthandleravgidle_percent",
        help: "Fraction of the time the event loop was idle since the broker started (RequestHandlerAvgIdlePercent, mean rate)",
        type: "gauge",
        samples: [{ value: idleFraction(total) }],
      },
    ];
  }
}

function idleFraction(u: EventLoopUtilization): number {
  const all = u.idle + u.active;
  return all > 0 ? u.idle / all : 1;
}
