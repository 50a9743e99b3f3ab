// Benchmark support: the lines that say what a bench ran on — CPUs, memory, kernel, Node.js, the load — and,
// on a virtual machine whose kernel hands the memory it frees back to the host (Linux free page reporting),
// that mechanism's settings: they decide what writing into fresh page cache costs there, so the benches
// that measure writing logs at rate (throughput, replication, page-cache) print them beside their figures
// (docs/benchmarks.md, "The host takes freed memory back").

import { readdirSync, readFileSync, statSync } from "node:fs";
import { availableParallelism, cpus, loadavg, release, totalmem } from "node:os";
import { join } from "node:path";

/** "2 vCPUs (AMD EPYC), 23.5 GiB RAM, Linux 6.1.0, Node.js v20.20.2". */
export function machineLine(): string {
  const model = cpus()[0]?.model.trim() ?? "?";
  const ram = (totalmem() / 2 ** 30).toFixed(1);
  return `${availableParallelism()} vCPUs (${model}), ${ram} GiB RAM, Linux ${release()}, Node.js ${process.version}`;
}

/** The 1, 5 and 15 minute load averages: "0.42, 0.36, 0.65". */
export function loadAverage(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(", ");
}

const PAGE_REPORTING = "/sys/module/page_reporting/parameters";

/**
 * The settings of the kernel's free page reporting, "page_reporting_order 9, min_free_ms 0" (its writable
 * parameters; the read-only ones are counters), or undefined where the kernel does not report free pages
 * to a host (no such module: bare metal, or a VM without a reporting balloon).
 */
function freePageReporting(): string | undefined {
  let names: string[];
  try {
    names = readdirSync(PAGE_REPORTING).sort();
  } catch {
    return undefined;
  }
  const settings: string[] = [];
  for (const name of names) {
    try {
      const path = join(PAGE_REPORTING, name);
      if ((statSync(path).mode & 0o200) === 0) continue;
      settings.push(`${name} ${readFileSync(path, "utf8").trim()}`);
    } catch {
      // a parameter that cannot be read is left out
    }
  }
  return settings.length > 0 ? settings.join(", ") : undefined;
}

/** The line a bench prints under its machine line when free page reporting is on, else undefined. */
export function hostMemoryLine(): string | undefined {
  const s = freePageReporting();
  return s === undefined ? undefined : `host memory: freed pages are reported to the host (${s})`;
}
