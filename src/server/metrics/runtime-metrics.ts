// RuntimeMetrics: the Node runtime's own pauses, under the names Node's Prometheus exporters use (a
// broker on the JVM gets jvm_gc_* from the JMX exporter; this one runs on V8):
// - nodejs_gc_runs_total{gctype} and nodejs_gc_pause_seconds_total{gctype} (prometheus-gc-stats' names
//   and label, with the gctype values Node's v8.GCProfiler gives it): garbage collections and the time
//   the event loop stood still in them, by V8's GC type — "Scavenge" (young generation),
//   "MarkSweepCompact" (full), "IncrementalMarking" (marking steps), "ProcessWeakCallbacks";
// - nodejs_eventloop_lag_{min,max,mean,stddev,p50,p90,p99}_seconds (prom-client's names and values):
//   the time between the runs of a 10 ms timer, over the interval since the previous scrape (then reset,
//   as prom-client does) — 10 ms on an idle loop, more by however long the loop was busy or blocked.
//   Every request waits out such delays, so the p99 less 10 ms bounds what the loop adds to latency.
// Counted from start() to stop(): a GC PerformanceObserver and perf_hooks.monitorEventLoopDelay.

import {
  constants,
  type IntervalHistogram,
  monitorEventLoopDelay,
  PerformanceObserver,
} from "node:perf_hooks";
import type { MetricFamily } from "../../common/metrics/exposition.js";

/**
 * V8's GC types as perf_hooks reports them (entry.detail.kind, V8's GCType bits), by the names
 * v8.GCProfiler gives them — the `gctype` label values of prometheus-gc-stats.
 */
const GC_KINDS: ReadonlyMap<number, string> = new Map([
  [constants.NODE_PERFORMANCE_GC_MINOR, "Scavenge"],
  [constants.NODE_PERFORMANCE_GC_MAJOR, "MarkSweepCompact"],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, "IncrementalMarking"],
  [constants.NODE_PERFORMANCE_GC_WEAKCB, "ProcessWeakCallbacks"],
]);

/** prom-client's default eventLoopMonitoringPrecision. */
const EVENT_LOOP_RESOLUTION_MS = 10;

export class RuntimeMetrics {
  private readonly runs = new Map<string, number>();
  private readonly pauseSeconds = new Map<string, number>();
  private observer: PerformanceObserver | undefined;
  private delay: IntervalHistogram | undefined;

  constructor() {
    for (const kind of GC_KINDS.values()) {
      this.runs.set(kind, 0);
      this.pauseSeconds.set(kind, 0);
    }
  }

  start(): void {
    if (this.observer !== undefined) return;
    this.observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        const detail = (entry as { detail?: { kind?: number } }).detail;
        const kind = GC_KINDS.get(detail?.kind ?? -1);
        if (kind === undefined) continue;
        this.runs.set(kind, (this.runs.get(kind) ?? 0) + 1);
        this.pauseSeconds.set(kind, (this.pauseSeconds.get(kind) ?? 0) + entry.duration / 1000);
      }
    });
    this.observer.observe({ entryTypes: ["gc"] });
    this.delay = monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS });
    this.delay.enable();
  }

  stop(): void {
    this.observer?.disconnect();
    this.observer = undefined;
    this.delay?.disable();
    this.delay = undefined;
  }

  collect(): MetricFamily[] {
    const byKind = (values: ReadonlyMap<string, number>) =>
      [...values].map(([gctype, value]) => ({ labels: { gctype }, value }));
    const families: MetricFamily[] = [
      {
        name: "nodejs_gc_runs_total",
        help: "Garbage collections, by V8's GC type (Scavenge = young generation, MarkSweepCompact = full).",
        type: "counter",
        samples: byKind(this.runs),
      },
      {
        name: "nodejs_gc_pause_seconds_total",
        help: "Seconds the event loop was paused by garbage collection, by V8's GC type.",
        type: "counter",
        samples: byKind(this.pauseSeconds),
      },
    ];
    const h = this.delay;
    if (h === undefined || h.count === 0) return families;
    const seconds = (ns: number) => ns / 1e9;
    const lag = (name: string, help: string, ns: number): MetricFamily => ({
      name: `nodejs_eventloop_lag_${name}_seconds`,
      help,
      type: "gauge",
      samples: [{ value: seconds(ns) }],
    });
    families.push(
      lag("min", "The minimum recorded event loop delay since the last scrape.", h.min),
      lag("max", "The maximum recorded event loop delay since the last scrape.", h.max),
      lag("mean", "The mean of the recorded event loop delays since the last scrape.", h.mean),
      lag("stddev", "The standard deviation of the recorded event loop delays.", h.stddev),
      lag("p50", "The 50th percentile of the recorded event loop delays.", h.percentile(50)),
      lag("p90", "The 90th percentile of the recorded event loop delays.", h.percentile(90)),
      lag("p99", "The 99th percentile of the recorded event loop delays.", h.percentile(99)),
    );
    h.reset();
    return families;
  }
}
