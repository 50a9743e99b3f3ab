// Benchmark support: samples the CPU time (utime + stime from /proc/<pid>/stat) and resident memory
// (VmRSS from /proc/<pid>/status) of running processes while a benchmark phase runs, so each phase can
// report how much of a core a process used and how much memory it held. Linux only.

import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (getconf CLK_TCK; 100 on Linux). */
const CLK_TCK = ((): number => {
  const r = spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" });
  const n = Number(r.stdout?.trim());
  return r.status === 0 && n > 0 ? n : 100;
})();

/** CPU seconds (user + system) a process has used so far; NaN once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: fields are counted after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK; // fields 14 (utime) and 15 (stime)
  } catch {
    return Number.NaN;
  }
}

/** Resident set size in KiB (VmRSS); NaN once the process is gone. */
export function rssKiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** What one process did during a sampled phase (or a window of it). */
export interface ProcUsage {
  /** CPU seconds used during the window. */
  readonly cpuSeconds: number;
  /** Wall-clock seconds of the window. */
  readonly wallSeconds: number;
  /** CPU seconds per wall second: 1.0 is one core fully busy. */
  readonly cores: number;
  /** Largest RSS sampled in the window. */
  readonly peakRssKiB: number;
}

interface Sample {
  /** Date.now() of the sample. */
  readonly at: number;
  readonly cpu: number;
  readonly rss: number;
}

/**
 * Samples named processes every `intervalMs` from start() until stop(), keeping the samples so that a
 * window inside the phase (a tool's own measured interval) can be judged afterwards. A process may be
 * added after start (a client spawned for the phase). A process that exits before stop() keeps its last
 * sample, so up to one interval of its CPU time may not be counted.
 */
export class ProcSampler {
  private readonly series = new Map<string, { pid: number; samples: Sample[] }>();
  private timer: NodeJS.Timeout | undefined;
  private started = 0;
  private stopped = 0;

  constructor(private readonly intervalMs = 200) {}

  /** Starts sampling `pid` under `name`. */
  add(name: string, pid: number): void {
    const s = { pid, samples: [] as Sample[] };
    this.series.set(name, s);
    this.sampleOne(s);
  }

  start(): void {
    this.started = Date.now();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
  }

  private sampleOne(s: { pid: number; samples: Sample[] }): void {
    const cpu = cpuSeconds(s.pid);
    if (Number.isNaN(cpu)) return; // exited: keep the last sample
    s.samples.push({ at: Date.now(), cpu, rss: rssKiB(s.pid) });
  }

  private sample(): void {
    for (const s of this.series.values()) this.sampleOne(s);
  }

  /** Takes a last sample and stops. */
  stop(): void {
    this.sample();
    if (this.timer) clearInterval(this.timer);
    this.stopped = Date.now();
  }

  /**
   * Usage of `name` between `fromMs` and `toMs` (Date.now() values; default: the whole phase), with CPU
   * time interpolated linearly between the samples around each end.
   */
  usage(name: string, fromMs = this.started, toMs = this.stopped): ProcUsage | undefined {
    const samples = this.series.get(name)?.samples ?? [];
    if (samples.length === 0 || !(toMs > fromMs)) return undefined;
    const cpuAt = (t: number): number => {
      if (t <= samples[0].at) return samples[0].cpu;
      for (let i = 1; i < samples.length; i++) {
        const a = samples[i - 1];
        const b = samples[i];
        if (t <= b.at) return a.cpu + ((b.cpu - a.cpu) * (t - a.at)) / Math.max(1, b.at - a.at);
      }
      return samples[samples.length - 1].cpu;
    };
    const used = cpuAt(toMs) - cpuAt(fromMs);
    const wallSeconds = (toMs - fromMs) / 1000;
    let peakRssKiB = Number.NaN;
    for (const x of samples) {
      if (Number.isNaN(x.rss) || x.at < fromMs - this.intervalMs || x.at > toMs + this.intervalMs) continue;
      if (!(peakRssKiB >= x.rss)) peakRssKiB = x.rss;
    }
    return { cpuSeconds: used, wallSeconds, cores: used / wallSeconds, peakRssKiB };
  }
}
