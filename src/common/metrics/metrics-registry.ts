// MetricsRegistry: the broker's metrics as one scrape (Kafka's KafkaYammerMetrics registry plus what the
// JMX exporter does on a scrape). It creates Meters and Histograms over the injected Time and ticks them
// every 5 s on the Scheduler (so their decaying averages follow the clock even when nothing marks them),
// and it holds collectors: functions run on each scrape that turn meters, histograms and gauges (values
// computed on the spot) into metric families. collect() merges families of the same name, in first-seen
// order.

import type { ScheduledTask, Scheduler } from "../scheduler.js";
import type { Time } from "../time.js";
import { type MetricFamily, type Sample, writeExposition } from "./exposition.js";
import { Histogram } from "./histogram.js";
import { Meter } from "./meter.js";

export type Collector = () => Iterable<MetricFamily>;

interface Tickable {
  tick(): void;
}

export class MetricsRegistry {
  private readonly tickables = new Set<Tickable>();
  private readonly collectors: Collector[] = [];
  private tickTask: ScheduledTask | undefined;

  constructor(readonly time: Time) {}

  newMeter(): Meter {
    const m = new Meter(this.time);
    this.tickables.add(m);
    return m;
  }

  newHistogram(): Histogram {
    const h = new Histogram(this.time);
    this.tickables.add(h);
    return h;
  }

  /** Stops ticking a meter or histogram that is no longer reported. */
  remove(metric: Meter | Histogram): void {
    this.tickables.delete(metric);
  }

  register(collector: Collector): void {
    this.collectors.push(collector);
  }

  tick(): void {
    for (const t of this.tickables) t.tick();
  }

  /** Ticks every meter and histogram every 5 s until stop(). */
  start(scheduler: Scheduler): void {
    if (this.tickTask !== undefined) return;
    this.tickTask = scheduler.schedule("metrics-tick", () => this.tick(), 5000, 5000);
  }

  stop(): void {
    this.tickTask?.cancel();
    this.tickTask = undefined;
  }

  collect(): MetricFamily[] {
    const byName = new Map<string, { family: MetricFamily; samples: Sample[] }>();
    for (const c of this.collectors) {
      for (const f of c()) {
        const seen = byName.get(f.name);
        if (seen === undefined) byName.set(f.name, { family: f, samples: [...f.samples] });
        else if (seen.family.type !== f.type)
          throw new Error(`metric ${f.name} collected as ${seen.family.type} and ${f.type}`);
        else seen.samples.push(...f.samples);
      }
    }
    return [...byName.values()].map(({ family, samples }) => ({ ...family, samples }));
  }

  /** The Prometheus text exposition of every collector. */
  scrape(): string {
    return writeExposition(this.collect());
  }
}
