// Event-loop delay while the log cleaner runs (issue 16). Run with `npm run bench:cleaner` (options after
// `--`: `--records N` default 3,000,000; `--keys N` default 10,000; `--value-bytes N` default 100;
// `--segment-bytes N` default 16 MiB; `--baseline-seconds N` default 10).
//
// One broker (test/support/broker-harness.ts: a child process on its own temporary log dir, the build this
// file was compiled into unless TRIBUTARY_DIST says otherwise, its /metrics endpoint on), with
// log.cleaner.backoff.ms=100 and the default log.cleaner.dedupe.buffer.size (128 MiB) and
// log.cleaner.io.buffer.size (512 KiB). Then:
// 1. a topic of 1 partition with cleanup.policy=compact, segment.bytes=16 MiB, min.cleanable.dirty.ratio=0.01
//    and min.compaction.lag.ms=1 hour (so nothing is cleanable while it is written);
// 2. N records (uncompressed batches of 1,000, keys "key-00000".."key-09999" round-robin, values of
//    --value-bytes) produced with Produce acks=1, 8 requests in flight on one connection; then `sync`;
// 3. baseline: the probe (below) for --baseline-seconds with no cleaning, bracketed by two /metrics scrapes;
// 4. cleaning: a /metrics scrape, the probe started, then IncrementalAlterConfigs min.compaction.lag.ms=0,
//    which makes every segment but the active one cleanable; the cleaner (within 100 ms) builds its offset
//    map over the whole dirty log and cleans it. The probe runs until the broker logs "Cleaned log", and
//    1 s more; then /metrics again.
// The probe: an ApiVersions request every 10 ms on one connection of its own, sent on schedule whether
// or not earlier ones were answered (an open loop: a request sent while the event loop is blocked waits
// out the block, as a client's would), each one's round trip recorded. From /metrics:
// nodejs_eventloop_lag_max_seconds (and p99), which covers the interval since the previous scrape (the
// broker resets it on every scrape; src/server/metrics/runtime-metrics.ts). Cleaning time: from the
// broker's "Cleaning log" / "Cleaned log" lines (src/storage/cleaner/cleaner.ts; the first is logged
// once the offset map is built) and the alter request. Also over the clean: the broker's CPU and RSS, how
// busy the machine's CPUs were (/proc/stat: other processes slow the broker down) and the bytes the
// broker's reads had to fetch from storage (/proc/<pid>/io read_bytes: reads the page cache missed).
// Prints a table; exits 1 when something failed.
// The run is bounded to 5 minutes; the broker and its directory are removed on every exit path.

import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { BrokerConnection } from "../src/client/network/broker-connection.js";
import { Apis } from "../src/protocol/generated/api-table.js";
import { buildRecordBatch } from "../src/protocol/records/index.js";
import { BrokerHarness, sleep } from "../test/support/broker-harness.js";
import { installCleanup } from "./support/child-processes.js";
import { loadAverage, machineLine } from "./support/machine.js";
import { machineCpuTimes, ProcSampler } from "./support/proc-sampler.js";

const USAGE =
  "usage: cleaner-latency.bench [--records N] [--keys N] [--value-bytes N] [--segment-bytes N] [--baseline-seconds N]";

function fail(message: string, code = 2): never {
  console.error(`cleaner-latency.bench: ${message}`);
  process.exit(code);
}

function parseArgs(argv: string[]): Record<string, number> {
  const o: Record<string, number> = {
    records: 3_000_000,
    keys: 10_000,
    "value-bytes": 100,
    "segment-bytes": 16 * 1024 * 1024,
    "baseline-seconds": 10,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--help" || a === "-h") {
      console.log(USAGE);
      process.exit(0);
    }
    const name = a.replace(/^--/, "");
    if (!a.startsWith("--") || !(name in o)) fail(`unknown argument '${a}' (${USAGE})`);
    const v = Number(argv[++i]);
    if (!Number.isInteger(v) || v <= 0) fail(`${a}: expected a positive integer, got '${argv[i] ?? ""}'`);
    o[name] = v;
  }
  return o;
}

const OPTIONS = parseArgs(process.argv.slice(2));
const RECORDS = OPTIONS.records;
const KEYS = OPTIONS.keys;
const VALUE_BYTES = OPTIONS["value-bytes"];
const SEGMENT_BYTES = OPTIONS["segment-bytes"];
const BASELINE_SECONDS = OPTIONS["baseline-seconds"];
const BATCH_RECORDS = 1000;
const IN_FLIGHT = 8;
const PROBE_INTERVAL_MS = 10;
const TOPIC = "cleaner-latency";
const STARTED = Date.now();
const DEADLINE = STARTED + 5 * 60_000;

/** The compiled tree to run: TRIBUTARY_DIST, else the one this file was compiled into. */
const DIST = resolve(process.env.TRIBUTARY_DIST ?? fileURLToPath(new URL("..", import.meta.url)));
process.env.TRIBUTARY_DIST = DIST; // the broker harness starts the same build

const left = (): number => Math.max(0, DEADLINE - Date.now());

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const ms = (x: number): string => (Number.isFinite(x) ? `${x.toFixed(1)} ms` : "n/a");

// ---- the probe ----

interface ProbeResult {
  /** Round trips (ms) of the answered probes. */
  readonly rtts: number[];
  readonly sent: number;
  readonly failed: number;
  readonly wallMs: number;
}

/** ApiVersions every PROBE_INTERVAL_MS on `conn`, on schedule (open loop), until stop() resolves it. */
function startProbe(conn: BrokerConnection): { stop: () => Promise<ProbeResult> } {
  const version = conn.versionFor(Apis.ApiVersions);
  const rtts: number[] = [];
  const pending = new Set<Promise<void>>();
  let sent = 0;
  let failed = 0;
  const t0 = performance.now();
  const tick = (): void => {
    // Catch up on ticks this process missed, so the schedule is the wall clock's, not the timer's.
    const due = Math.floor((performance.now() - t0) / PROBE_INTERVAL_MS) + 1;
    while (sent < due) {
      sent++;
      const at = performance.now();
      const p = conn
        .send(Apis.ApiVersions, version, {
          clientSoftwareName: "cleaner-latency-probe",
          clientSoftwareVersion: "1",
        })
        .then(
          () => {
            rtts.push(performance.now() - at);
          },
          () => {
            failed++;
          },
        )
        .finally(() => pending.delete(p));
      pending.add(p);
    }
  };
  tick();
  const timer = setInterval(tick, PROBE_INTERVAL_MS);
  return {
    stop: async () => {
      clearInterval(timer);
      const wallMs = performance.now() - t0;
      await Promise.race([Promise.all(pending), sleep(Math.min(60_000, left()))]);
      return { rtts: rtts.sort((a, b) => a - b), sent, failed: failed + pending.size, wallMs };
    },
  };
}

function probeFigures(r: ProbeResult): string {
  const slow = (limit: number) => r.rtts.filter((x) => x > limit).length;
  return (
    `${r.rtts.length} of ${r.sent} answered over ${(r.wallMs / 1000).toFixed(1)} s; ` +
    `p50 ${ms(percentile(r.rtts, 50))}, p99 ${ms(percentile(r.rtts, 99))}, p99.9 ${ms(percentile(r.rtts, 99.9))}, ` +
    `max ${ms(r.rtts.at(-1) ?? Number.NaN)}; > 50 ms: ${slow(50)}, > 100 ms: ${slow(100)}, > 500 ms: ${slow(500)}` +
    (r.failed > 0 ? `; ${r.failed} failed` : "")
  );
}

// ---- /metrics ----

async function scrapeLag(broker: BrokerHarness): Promise<{ max: number; p99: number; mean: number }> {
  const res = await fetch(broker.metricsUrl, { signal: AbortSignal.timeout(Math.min(60_000, left())) });
  const text = await res.text();
  const gauge = (name: string): number => {
    const m = new RegExp(`^${name} ([0-9.eE+-]+)$`, "m").exec(text);
    return m ? Number(m[1]) * 1000 : Number.NaN;
  };
  return {
    max: gauge("nodejs_eventloop_lag_max_seconds"),
    p99: gauge("nodejs_eventloop_lag_p99_seconds"),
    mean: gauge("nodejs_eventloop_lag_mean_seconds"),
  };
}

const lagFigures = (l: { max: number; p99: number; mean: number }): string =>
  `max ${ms(l.max)}, p99 ${ms(l.p99)}, mean ${ms(l.mean)}`;

// ---- /proc ----

/** Bytes the process had the block layer fetch for it (read_bytes of /proc/<pid>/io): reads the page cache missed. */
function storageReadBytes(pid: number): number {
  try {
    const m = /^read_bytes: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, "utf8"));
    return m ? Number(m[1]) : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** The machine's CPU seconds so far (/proc/stat): busy and total (NaN where /proc is not there). */
function machineCpu(): { busy: number; total: number } {
  const t = machineCpuTimes();
  return t === undefined
    ? { busy: Number.NaN, total: Number.NaN }
    : { busy: t.user + t.system, total: t.total };
}

// ---- the broker's log lines ----

/** Date.now() value of a "[yyyy-MM-dd HH:mm:ss,SSS] LEVEL ..." line's stamp (the broker's local time). */
function stampOf(line: string): number {
  const m = /^\[(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d),(\d{3})\]/.exec(line);
  if (!m) return Number.NaN;
  const n = m.slice(1).map(Number);
  return new Date(n[0], n[1] - 1, n[2], n[3], n[4], n[5], n[6]).getTime();
}

function lineAfter(broker: BrokerHarness, from: number, pattern: RegExp): string | undefined {
  return broker.stdout
    .slice(from)
    .split("\n")
    .find((l) => pattern.test(l));
}

// ---- run ----

const rows: Array<[string, string]> = [];
const row = (what: string, figure: string): void => {
  rows.push([what, figure]);
  console.log(`  ${what}: ${figure}`);
};

function keyedBatches(): Buffer[] {
  const value = Buffer.alloc(VALUE_BYTES);
  for (let i = 0; i < VALUE_BYTES; i++) value[i] = 97 + ((i * 7) % 26);
  const width = String(KEYS - 1).length;
  const batches: Buffer[] = [];
  const perCycle = Math.max(1, Math.ceil(KEYS / BATCH_RECORDS));
  const now = BigInt(Date.now());
  for (let b = 0; b < perCycle; b++) {
    const records = [];
    for (let i = 0; i < BATCH_RECORDS; i++) {
      const k = (b * BATCH_RECORDS + i) % KEYS;
      records.push({ key: Buffer.from(`key-${String(k).padStart(width, "0")}`), value, timestamp: now });
    }
    batches.push(buildRecordBatch({ records, timestamp: now }));
  }
  return batches;
}

async function produce(conn: BrokerConnection): Promise<{ ms: number; bytes: number }> {
  const version = conn.versionFor(Apis.Produce, { min: 3 });
  const batches = keyedBatches();
  const requests = Math.ceil(RECORDS / BATCH_RECORDS);
  let next = 0;
  let bytes = 0;
  const t0 = performance.now();
  const worker = async (): Promise<void> => {
    while (next < requests) {
      if (left() === 0) throw new Error("out of time while producing");
      const records = batches[next++ % batches.length];
      bytes += records.length;
      const res = await conn.send(Apis.Produce, version, {
        transactionalId: null,
        acks: 1,
        timeoutMs: 30_000,
        topicData: [{ name: TOPIC, partitionData: [{ index: 0, records }] }],
      });
      const code = res.responses[0].partitionResponses[0].errorCode;
      if (code !== 0) throw new Error(`Produce: error code ${code}`);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return { ms: performance.now() - t0, bytes };
}

async function alterTopic(conn: BrokerConnection, name: string, value: string): Promise<void> {
  const res = await conn.send(Apis.IncrementalAlterConfigs, conn.versionFor(Apis.IncrementalAlterConfigs), {
    resources: [{ resourceType: 2, resourceName: TOPIC, configs: [{ name, configOperation: 0, value }] }],
    validateOnly: false,
  });
  const r = res.responses[0];
  if (r.errorCode !== 0)
    throw new Error(`IncrementalAlterConfigs ${name}: error ${r.errorCode} ${r.errorMessage}`);
}

async function main(): Promise<number> {
  installCleanup();
  const load0 = loadAverage();
  console.log(
    `cleaner-latency.bench: ${RECORDS} records over ${KEYS} keys, values of ${VALUE_BYTES} B, segment.bytes ${SEGMENT_BYTES}; build ${DIST}`,
  );
  const broker = await BrokerHarness.start({
    name: "tributary-bench-cleaner",
    overrides: { "log.cleaner.backoff.ms": "100" },
    startTimeoutMs: 60_000,
  });
  let ok = true;
  const conns: BrokerConnection[] = [];
  try {
    const connect = async (clientId: string) => {
      const c = await BrokerConnection.connect(broker.host, broker.port, {
        clientId,
        requestTimeoutMs: 120_000,
      });
      conns.push(c);
      return c;
    };
    const admin = await connect("bench-admin");
    const producer = await connect("bench-producer");
    const probeConn = await connect("bench-probe");
    const created = await admin.send(Apis.CreateTopics, 7, {
      topics: [
        {
          name: TOPIC,
          numPartitions: 1,
          replicationFactor: 1,
          assignments: [],
          configs: [
            { name: "cleanup.policy", value: "compact" },
            { name: "segment.bytes", value: String(SEGMENT_BYTES) },
            { name: "min.cleanable.dirty.ratio", value: "0.01" },
            { name: "min.compaction.lag.ms", value: "3600000" },
          ],
        },
      ],
      timeoutMs: 30_000,
      validateOnly: false,
    });
    const ct = created.topics[0];
    if (ct.errorCode !== 0) throw new Error(`CreateTopics: error ${ct.errorCode} ${ct.errorMessage}`);

    // 2. The data set.
    const p = await produce(producer);
    row(
      "produce (acks=1, 8 in flight, batches of 1,000)",
      `${RECORDS.toLocaleString("en")} records, ${(p.bytes / 1e6).toFixed(1)} MB in ${(p.ms / 1000).toFixed(1)} s`,
    );
    spawnSync("sync");
    await sleep(1000);

    // 3. Baseline: no cleaning.
    await scrapeLag(broker);
    const base = startProbe(probeConn);
    await sleep(BASELINE_SECONDS * 1000);
    const baseProbe = await base.stop();
    const baseLag = await scrapeLag(broker);
    row("probe, no cleaning (ApiVersions every 10 ms)", probeFigures(baseProbe));
    row("nodejs_eventloop_lag, no cleaning", lagFigures(baseLag));

    // 4. Cleaning.
    const sampler = new ProcSampler(100);
    sampler.add("broker", broker.pid!);
    const logFrom = broker.stdout.length;
    await scrapeLag(broker);
    const read0 = storageReadBytes(broker.pid!);
    const cpu0 = machineCpu();
    sampler.start();
    const probe = startProbe(probeConn);
    await sleep(200);
    const alteredAt = Date.now();
    await alterTopic(admin, "min.compaction.lag.ms", "0");
    const cleanedPattern = new RegExp(`Cleaned log ${TOPIC}-0`);
    while (lineAfter(broker, logFrom, cleanedPattern) === undefined) {
      if (left() < 30_000) throw new Error("the cleaner did not finish in time");
      if (broker.lastExit) throw new Error(`the broker exited: ${broker.output}`);
      await sleep(50);
    }
    await sleep(1000);
    const cleanProbe = await probe.stop();
    sampler.stop();
    const read1 = storageReadBytes(broker.pid!);
    const cpu1 = machineCpu();
    const cleanLag = await scrapeLag(broker);
    const cleaning = lineAfter(broker, logFrom, new RegExp(`Cleaning log ${TOPIC}-0`)) ?? "";
    const cleaned = lineAfter(broker, logFrom, cleanedPattern) ?? "";
    const tCleaning = stampOf(cleaning);
    const tCleaned = stampOf(cleaned);
    row(
      'cleaning: alter → offset map built ("Cleaning log")',
      `${((tCleaning - alteredAt) / 1000).toFixed(2)} s (includes up to 100 ms of backoff)`,
    );
    row('cleaning: "Cleaning log" → "Cleaned log"', `${((tCleaned - tCleaning) / 1000).toFixed(2)} s`);
    row('cleaning: alter → "Cleaned log"', `${((tCleaned - alteredAt) / 1000).toFixed(2)} s`);
    row("probe while cleaning (ApiVersions every 10 ms)", probeFigures(cleanProbe));
    row("nodejs_eventloop_lag while cleaning", lagFigures(cleanLag));
    const u = sampler.usage("broker", alteredAt, tCleaned);
    if (u)
      row(
        "broker while cleaning",
        `${u.cores.toFixed(2)} cores (${u.cpuSeconds.toFixed(1)} CPU-s in ${u.wallSeconds.toFixed(1)} s), RSS up to ${(u.peakRssKiB / 1024).toFixed(1)} MiB`,
      );
    row(
      "machine while cleaning (all CPUs, /proc/stat)",
      `${((100 * (cpu1.busy - cpu0.busy)) / (cpu1.total - cpu0.total)).toFixed(0)} % busy`,
    );
    row(
      "broker reads the page cache missed while cleaning (/proc/<pid>/io read_bytes)",
      `${((read1 - read0) / 1e6).toFixed(1)} MB`,
    );
    console.log(`  broker: ${cleaning.trim()}`);
    console.log(`  broker: ${cleaned.trim()}`);
  } catch (e) {
    ok = false;
    console.error(`cleaner-latency.bench: ${(e as Error).stack ?? e}`);
  } finally {
    for (const c of conns) c.close();
    await broker.stop("SIGTERM").catch(() => undefined);
    await broker.close();
  }
  console.log(
    `\nmachine: ${machineLine()}; load average at start ${load0}, at end ${loadAverage()}; run time ${((Date.now() - STARTED) / 1000).toFixed(0)} s`,
  );
  console.log("\n| measurement | figure |\n| --- | --- |");
  for (const [w, f] of rows) console.log(`| ${w} | ${f} |`);
  return ok ? 0 : 1;
}

process.exitCode = await main();
