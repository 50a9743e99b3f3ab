// Page-cache benchmark: what writing a log into the page cache costs on this machine, as a function of how
// much page cache the logs hold. No broker runs: it is the machine's side of a broker's appends, for reading
// the replication figures (an RF 3 cluster holds three times the page cache of RF 1 for the same retention).
// Run with `npm run bench:page-cache` (options after `--`: `--footprints 240,480,960,1440,2880` MiB,
// `--gb N` written per footprint, default 12; `--partitions N` files written in turn, default 6; `--dir D`,
// default a temporary directory under the OS's; `--rounds N`, default 2).
//
// Per footprint: `--partitions` logs written in turn, 1 MiB `pwrite`s (synchronous, as a broker's appends),
// each log rolling to a new 16 MiB file (the replication bench's segment.bytes), and the oldest file of all
// deleted whenever the files hold more than the footprint — retention at a steady rate, as a broker with
// bounded logs does. Nothing is fsynced: the bytes stay in the page cache until the files are deleted.
// Printed: GB/s, and per GB written the milliseconds spent in `pwrite`, in `unlink` and in `open`.
// Footprints run in ascending order, then descending in the next round, so drift of the machine shows.
//
// On a VM whose kernel reports freed memory to its host (free page reporting; the bench prints its settings
// as `host memory:`), the host takes back the pages a deleted file frees, and the next write into them pays
// for the host to hand them over again: the cost per GiB then climbs with the footprint. Memory the guest
// keeps (anonymous memory written over and over) does not (docs/benchmarks.md, "The host takes freed
// memory back").

import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { checkArguments } from "./support/arguments.js";
import { hostMemoryLine, loadAverage, machineLine } from "./support/machine.js";
import { BenchReport } from "./support/report.js";

checkArguments("page-cache.bench", ["footprints", "gb", "partitions", "rounds", "dir"]);

function option(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function positiveInt(name: string, dflt: number): number {
  const raw = option(name);
  const v = raw === undefined ? dflt : Number(raw);
  if (!Number.isInteger(v) || v <= 0) {
    console.error(`page-cache.bench: --${name}: expected a positive integer, got ${raw}`);
    process.exit(2);
  }
  return v;
}

const FOOTPRINTS_MIB = (option("footprints") ?? "240,480,960,1440,2880").split(",").map((s) => {
  const v = Number(s);
  if (!Number.isInteger(v) || v < 16) {
    console.error(`page-cache.bench: --footprints: expected MiB values of at least 16, got ${s}`);
    process.exit(2);
  }
  return v;
});
const GB = positiveInt("gb", 12);
const PARTITIONS = positiveInt("partitions", 6);
const ROUNDS = positiveInt("rounds", 2);
const SEGMENT_BYTES = 16 << 20;
const WRITE_BYTES = 1 << 20;

interface Result {
  readonly gbPerSec: number;
  readonly writeMsPerGb: number;
  readonly unlinkMsPerGb: number;
  readonly openMsPerGb: number;
}

function run(dir: string, footprintMiB: number): Result {
  const data = Buffer.alloc(WRITE_BYTES, 0x41);
  const logs = Array.from({ length: PARTITIONS }, () => ({ fd: -1, position: 0 }));
  const files: string[] = [];
  const maxFiles = Math.max(1, Math.ceil((footprintMiB * 2 ** 20) / SEGMENT_BYTES));
  const writes = Math.round((GB * 2 ** 30) / WRITE_BYTES);
  let fileNo = 0;
  let writeMs = 0;
  let unlinkMs = 0;
  let openMs = 0;
  const started = performance.now();
  try {
    for (let i = 0; i < writes; i++) {
      const log = logs[i % PARTITIONS];
      if (log.fd < 0 || log.position + WRITE_BYTES > SEGMENT_BYTES) {
        if (log.fd >= 0) closeSync(log.fd);
        let t = performance.now();
        const file = join(dir, `${String(fileNo++).padStart(20, "0")}.log`);
        log.fd = openSync(file, "w");
        log.position = 0;
        files.push(file);
        openMs += performance.now() - t;
        t = performance.now();
        while (files.length > maxFiles) unlinkSync(files.shift()!);
        unlinkMs += performance.now() - t;
      }
      const t = performance.now();
      writeSync(log.fd, data, 0, WRITE_BYTES, log.position);
      writeMs += performance.now() - t;
      log.position += WRITE_BYTES;
    }
  } finally {
    for (const log of logs) if (log.fd >= 0) closeSync(log.fd);
    for (const f of files) rmSync(f, { force: true });
  }
  const written = (writes * WRITE_BYTES) / 2 ** 30;
  return {
    gbPerSec: written / ((performance.now() - started) / 1000),
    writeMsPerGb: writeMs / written,
    unlinkMsPerGb: unlinkMs / written,
    openMsPerGb: openMs / written,
  };
}

const base = option("dir");
let dir: string;
try {
  if (base !== undefined) mkdirSync(base, { recursive: true });
  dir = mkdtempSync(join(base ?? tmpdir(), "tributary-page-cache-bench-"));
} catch (e) {
  console.error(
    `page-cache.bench: --dir: cannot make a directory in ${base ?? tmpdir()}: ${(e as Error).message}`,
  );
  process.exit(2);
}
const report = new BenchReport();
try {
  console.log(
    `page-cache.bench: ${GB} GiB per footprint in 1 MiB writes over ${PARTITIONS} logs of 16 MiB files, in ${dir}`,
  );
  console.log(`machine: ${machineLine()}; load average ${loadAverage()}`);
  const host = hostMemoryLine();
  if (host) console.log(host);
  const byFootprint = new Map<number, Result[]>();
  for (let r = 1; r <= ROUNDS; r++) {
    report.phase(`round ${r}`);
    const order = r % 2 === 1 ? FOOTPRINTS_MIB : [...FOOTPRINTS_MIB].reverse();
    for (const fp of order) {
      const x = run(dir, fp);
      byFootprint.set(fp, [...(byFootprint.get(fp) ?? []), x]);
      report.record(
        `footprint ${fp} MiB`,
        `${x.gbPerSec.toFixed(2)} GiB/s; per GiB written: pwrite ${x.writeMsPerGb.toFixed(0)} ms, unlink ${x.unlinkMsPerGb.toFixed(0)} ms, open ${x.openMsPerGb.toFixed(0)} ms`,
      );
    }
  }
  report.phase("mean of the rounds");
  for (const fp of FOOTPRINTS_MIB) {
    const xs = byFootprint.get(fp) ?? [];
    const mean = (k: keyof Result): number => xs.reduce((a, x) => a + x[k], 0) / xs.length;
    report.record(
      `footprint ${fp} MiB`,
      `${mean("gbPerSec").toFixed(2)} GiB/s; pwrite ${mean("writeMsPerGb").toFixed(0)} ms per GiB`,
    );
  }
  report.printTable();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
