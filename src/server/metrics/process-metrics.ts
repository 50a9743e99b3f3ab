// Process metrics under the names every Prometheus client library exports (the JMX exporter's
// process_* collector): CPU seconds, resident and virtual memory, start time, open and maximum file
// descriptors. Read on each scrape; the /proc ones only where /proc exists (Linux).

import { readdirSync, readFileSync } from "node:fs";
import type { MetricFamily } from "../../common/metrics/exposition.js";
import type { Time } from "../../common/time.js";

function gauge(name: string, help: string, value: number): MetricFamily {
  return { name, help, type: "gauge", samples: [{ value }] };
}

function procValues(): { openFds?: number; maxFds?: number; virtualBytes?: number } {
  const out: { openFds?: number; maxFds?: number; virtualBytes?: number } = {};
  try {
    out.openFds = readdirSync("/proc/self/fd").length;
  } catch {
    // no /proc
  }
  try {
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    if (m) out.maxFds = m[1] === "unlimited" ? Number.POSITIVE_INFINITY : Number(m[1]);
  } catch {
    // no /proc
  }
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    // Fields after the parenthesised command name; vsize is field 23 overall.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    out.virtualBytes = Number(fields[20]);
  } catch {
    // no /proc
  }
  return out;
}

export function collectProcessMetrics(time: Time): MetricFamily[] {
  const cpu = process.cpuUsage();
  const families = [
    gauge("process_resident_memory_bytes", "Resident memory size in bytes.", process.memoryUsage.rss()),
    {
      name: "process_cpu_seconds_total",
      help: "Total user and system CPU time spent in seconds.",
      type: "counter" as const,
      samples: [{ value: (cpu.user + cpu.system) / 1e6 }],
    },
    gauge(
      "process_start_time_seconds",
      "Start time of the process since unix epoch in seconds.",
      Math.round(time.milliseconds() - process.uptime() * 1000) / 1000,
    ),
  ];
  const proc = procValues();
  if (proc.virtualBytes !== undefined && Number.isFinite(proc.virtualBytes))
    families.push(gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.", proc.virtualBytes));
  if (proc.openFds !== undefined)
    families.push(gauge("process_open_fds", "Number of open file descriptors.", proc.openFds));
  if (proc.maxFds !== undefined)
    families.push(gauge("process_max_fds", "Maximum number of open file descriptors.", proc.maxFds));
  return families;
}
