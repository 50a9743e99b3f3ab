// Benchmark support: samples the CPU time (utime and stime from /proc/<pid>/stat) and resident memory
// (VmRSS from /proc/<pid>/status) of running processes while a benchmark phase runs, so each phase can
// report how much of a core a process used, how much of it was the kernel's, and how much memory it held;
// and the whole machine's busy time (/proc/stat), which also counts the kernel's own threads (writeback,
// softirqs) that no process is charged for. Linux only.

import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (getconf CLK_TCK; 100 on Linux). */
const CLK_TCK = ((): number => {
  const r = spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" });
  const n = Number(r.stdout?.trim());
  return r.status === 0 && n > 0 ? n : 100;
})();

/** CPU seconds a process has spent in user space and in the kernel so far; undefined once it is gone. */
export function cpuTimes(pid: number): { user: number; system: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: fields are counted after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // fields 14 (utime) and 15 (stime)
    return { user: Number(fields[11]) / CLK_TCK, system: Number(fields[12]) / CLK_TCK };
  } catch {
    return undefined;
  }
}

/** CPU seconds (user + system) a process has used so far; NaN once it is gone. */
export function cpuSeconds(pid: number): number {
  const t = cpuTimes(pid);
  return t === undefined ? Number.NaN : t.user + t.system;
}

/**
 * CPU seconds of the whole machine so far, summed over its CPUs (/proc/stat's "cpu" line): busy in user
 * space (user + nice; guest time is inside user) and in the kernel (system + irq + softirq), and the total
 * with idle, iowait and steal (time the hypervisor gave to others), which are not busy.
 */
export function machineCpuTimes(): { user: number; system: number; total: number } | undefined {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0];
    const f = line.trim().split(/\s+/).slice(1, 9).map(Number);
    return {
      user: (f[0] + f[1]) / CLK_TCK,
      system: (f[2] + f[5] + f[6]) / CLK_TCK,
      total: f.reduce((a, b) => a + b, 0) / CLK_TCK,
    };
  } catch {
    return undefined;
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
  /** Of which in user space, and in the kernel (system calls, page faults). */
  readonly userSeconds: number;
  readonly systemSeconds: number;
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
  readonly user: number;
  readonly system: number;
  readonly rss: number;
}

interface Series {
  /** The current counters, or undefined once the process is gone. */
  readonly read: () => { user: number; system: number; rss: number } | undefined;
  readonly samples: Sample[];
}

/**
 * Samples named processes every `intervalMs` from start() until stop(), keeping the samples so that a
 * window inside the phase (a tool's own measured interval) can be judged afterwards. A process may be
 * added after start (a client spawned for the phase). A process that exits before stop() keeps its last
 * sample, so up to one interval of its CPU time may not be counted.
 */
export class ProcSampler {
  private readonly series = new Map<string, Series>();
  private timer: NodeJS.Timeout | undefined;
  private started = 0;
  private stopped = 0;

  constructor(private readonly intervalMs = 200) {}

  /** Starts sampling `pid` under `name`. */
  add(name: string, pid: number): void {
    this.addSeries(name, () => {
      const t = cpuTimes(pid);
      return t === undefined ? undefined : { ...t, rss: rssKiB(pid) };
    });
  }

  /** Samples the whole machine's busy time under `name` (its RSS is NaN). */
  addMachine(name: string): void {
    this.addSeries(name, () => {
      const t = machineCpuTimes();
      return t === undefined ? undefined : { user: t.user, system: t.system, rss: Number.NaN };
    });
  }

  private addSeries(name: string, read: Series["read"]): void {
    const s: Series = { read, samples: [] };
    this.series.set(name, s);
    this.sampleOne(s);
  }

  start(): void {
    this.started = Date.now();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
  }

  private sampleOne(s: Series): void {
    const x = s.read();
    if (x === undefined) return; // exited: keep the last sample
    s.samples.push({ at: Date.now(), user: x.user, system: x.system, rss: x.rss });
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
    const at = (t: number, k: "user" | "system"): number => {
      if (t <= samples[0].at) return samples[0][k];
      for (let i = 1; i < samples.length; i++) {
        const a = samples[i - 1];
        const b = samples[i];
        if (t <= b.at) return a[k] + ((b[k] - a[k]) * (t - a.at)) / Math.max(1, b.at - a.at);
      }
      return samples[samples.length - 1][k];
    };
    const userSeconds = at(toMs, "user") - at(fromMs, "user");
    const systemSeconds = at(toMs, "system") - at(fromMs, "system");
    const used = userSeconds + systemSeconds;
    const wallSeconds = (toMs - fromMs) / 1000;
    let peakRssKiB = Number.NaN;
    for (const x of samples) {
      if (Number.isNaN(x.rss) || x.at < fromMs - this.intervalMs || x.at > toMs + this.intervalMs) continue;
      if (!(peakRssKiB >= x.rss)) peakRssKiB = x.rss;
    }
    return {
      cpuSeconds: used,
      userSeconds,
      systemSeconds,
      wallSeconds,
      cores: used / wallSeconds,
      peakRssKiB,
    };
  }
}
