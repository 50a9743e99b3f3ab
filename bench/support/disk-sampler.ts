// Benchmark support: samples what the machine's disks wrote (/proc/diskstats, sectors written of every
// whole disk listed in /sys/block except loop and ram devices) and how much dirty page cache waited for
// writeback (Dirty + Writeback of /proc/meminfo) while a benchmark phase runs, and how much of the time the
// busiest disk had I/O in flight (diskstats' io_ticks, what iostat shows as %util), so a phase can say
// whether it was bound by the disk: a writer that dirties pages faster than the disk writes them back is
// made to wait inside write() once Dirty reaches the kernel's limit (vm.dirty_ratio), and one that fsyncs
// waits for the disk itself. Linux only.

import { readdirSync, readFileSync } from "node:fs";

const SECTOR_BYTES = 512;

function wholeDisks(): Set<string> {
  try {
    return new Set(readdirSync("/sys/block").filter((d) => !d.startsWith("loop") && !d.startsWith("ram")));
  } catch {
    return new Set();
  }
}

/** Bytes written so far by the machine's whole disks; NaN when /proc/diskstats cannot be read. */
export function diskBytesWritten(disks = wholeDisks()): number {
  try {
    let sectors = 0;
    for (const line of readFileSync("/proc/diskstats", "utf8").split("\n")) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && disks.has(f[2])) sectors += Number(f[9]); // field 10: sectors written
    }
    return sectors * SECTOR_BYTES;
  } catch {
    return Number.NaN;
  }
}

/** Milliseconds each whole disk has spent with I/O in flight so far (diskstats' io_ticks, field 13). */
function diskBusyMs(disks: Set<string>): Map<string, number> {
  const out = new Map<string, number>();
  try {
    for (const line of readFileSync("/proc/diskstats", "utf8").split("\n")) {
      const f = line.trim().split(/\s+/);
      if (f.length > 12 && disks.has(f[2])) out.set(f[2], Number(f[12]));
    }
  } catch {
    // no /proc/diskstats: no busy figure
  }
  return out;
}

/** Dirty + Writeback of /proc/meminfo, in MiB. */
export function dirtyMiB(): number {
  try {
    const m = readFileSync("/proc/meminfo", "utf8");
    const kib = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(m)?.[1] ?? 0);
    return (kib("Dirty") + kib("Writeback")) / 1024;
  } catch {
    return Number.NaN;
  }
}

export interface DiskUsage {
  /** Bytes per second the disks wrote during the window. */
  readonly writtenBytesPerSec: number;
  /** The most page cache that was dirty or under writeback at a sample in the window, MiB. */
  readonly peakDirtyMiB: number;
  /** The share of the window (0..1) the busiest disk had I/O in flight; NaN when unknown. */
  readonly busiestDiskBusy: number;
}

/** Samples the disks every `intervalMs` from start() until stop(); usage() judges a window of it. */
export class DiskSampler {
  private readonly disks = wholeDisks();
  private readonly samples: Array<{ at: number; written: number; dirty: number; busy: Map<string, number> }> =
    [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly intervalMs = 200) {}

  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    this.sample();
    if (this.timer) clearInterval(this.timer);
  }

  private sample(): void {
    this.samples.push({
      at: Date.now(),
      written: diskBytesWritten(this.disks),
      dirty: dirtyMiB(),
      busy: diskBusyMs(this.disks),
    });
  }

  /**
   * The disks' write rate between `fromMs` and `toMs` (interpolated between samples), the peak dirty, and
   * the busiest disk's busy share between the samples nearest the window's ends.
   */
  usage(fromMs: number, toMs: number): DiskUsage | undefined {
    const s = this.samples;
    if (s.length < 2 || !(toMs > fromMs)) return undefined;
    const at = (t: number): number => {
      if (t <= s[0].at) return s[0].written;
      for (let i = 1; i < s.length; i++) {
        const a = s[i - 1];
        const b = s[i];
        if (t <= b.at) return a.written + ((b.written - a.written) * (t - a.at)) / Math.max(1, b.at - a.at);
      }
      return s[s.length - 1].written;
    };
    let peak = 0;
    for (const x of s)
      if (x.at >= fromMs - this.intervalMs && x.at <= toMs + this.intervalMs) peak = Math.max(peak, x.dirty);
    const nearest = (t: number) => s.reduce((a, b) => (Math.abs(b.at - t) < Math.abs(a.at - t) ? b : a));
    const first = nearest(fromMs);
    const last = nearest(toMs);
    let busy = Number.NaN;
    if (last.at > first.at)
      for (const [disk, ms] of last.busy) {
        const before = first.busy.get(disk);
        if (before !== undefined)
          busy = Math.max(Number.isNaN(busy) ? 0 : busy, (ms - before) / (last.at - first.at));
      }
    return {
      writtenBytesPerSec: ((at(toMs) - at(fromMs)) * 1000) / (toMs - fromMs),
      peakDirtyMiB: peak,
      busiestDiskBusy: Math.min(1, busy),
    };
  }
}
