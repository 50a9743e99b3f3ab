// Replication benchmark (issue 17): what replication costs a producer, and how fast a follower catches up.
// Run with `npm run bench:replication` (options after `--`: `--rounds N` default 2, `--seconds S` the
// length of each max-throughput run, default 15, `--catchup-records N` default 1,000,000 (1 KiB each, so
// ~1 GB), `--partitions N` default 6, `--retention-bytes N` of the measured topics, default 64 MiB (-1:
// unbounded; see RETENTION_BYTES), `--log-dirs disk|memory` default disk (see LOG_DIRS), `--keep-logs DIR`
// writes every broker's output there, `--override key=value` a broker setting and `--producer-prop
// key=value` a producer property, both repeatable).
//
// One real ZooKeeper server and 3 brokers on this machine (test/support/cluster-harness.ts: the Debian
// ZooKeeper, `tributary server-start` of the build this file was compiled into unless TRIBUTARY_DIST says
// otherwise, broker.id 0..2, each with its own log dir on 127.0.0.1). Kafka's defaults for what this
// measures: zookeeper.session.timeout.ms 18000, replica.lag.time.max.ms 30000, replica.fetch.* defaults
// (wait.max.ms 500, min.bytes 1, max.bytes 1 MiB per partition, response 10 MiB, one fetcher per leader).
//
// 0. Warm-up, not counted: RF 3 acks=all, 300,000 records, then runs of `--seconds` until one's rate is within
//    3 % of the previous such run's (at most 6).
// 1. Produce cost, in rounds (ABBA order across two rounds, so drift of the shared machine hits both):
//    A = a topic of 6 partitions, RF 3, min.insync.replicas=2, producer acks=all;
//    B = a topic of 6 partitions, RF 1, producer acks=1.
//    Each case, on a fresh topic (created with `tributary topics --create`, then waited for until every
//    partition has a leader and a full ISR in Metadata):
//    - a calibration run of `tributary producer-perf-test` (150,000 records), which also warms up the
//      brokers, then the measured max-throughput run with enough records for `--seconds` at the
//      calibration's rate (1 KiB records, batch.size=1048576, linger.ms=5, --throughput -1);
//    - then p50/p99 latency at half the measured records/s (`--throughput`), ~12 s worth of records, the
//      first fifth `--warmup-records` (the steady-state p99 is the figure);
//    - CPU (utime + stime from /proc) of each broker and of the producer over the tool's measured window,
//      also per GB produced and split into user space and kernel, with the whole machine's busy time
//      (/proc/stat), which the summary compares between RF 3 and RF 1; what the machine's disks wrote
//      meanwhile with the peak of dirty page cache (/proc/diskstats, /proc/meminfo: a run bound by the disk
//      shows its write rate at the disk's limit);
//      ISR shrinks/expansions the brokers logged meanwhile. The topic is deleted afterwards, and `sync`
//      runs before every measured run (dirty pages of the earlier run would stall appends).
// 2. Catch-up: a fresh RF-3 topic of 6 partitions; once its ISR is full, SIGTERM to a broker that is not
//    the controller (a controlled shutdown); ~1 GB produced to the topic (acks=1, unthrottled); the broker
//    started again on its log dir; Metadata v12 polled every 100 ms from another broker until the
//    restarted broker is in the ISR of every partition of the topic, and confirmed with `topics
//    --describe`. The size of its .log files for the topic is sampled every 100 ms, which splits the
//    time into start-up (spawn → first byte fetched) and transfer (first byte → all bytes → ISR).
// Prints a table and appends nothing (docs/benchmarks.md is written by hand from it). Exits 1 when a step
// failed. The run is bounded to 10 minutes; every child and temporary directory is removed on exit.

import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statfsSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Apis } from "../src/protocol/generated/api-table.js";
import { WireClient } from "../test/server/wire-client.js";
import { ClusterHarness, parseDescribe } from "../test/support/cluster-harness.js";
import { checkArguments } from "./support/arguments.js";
import {
  type Finished,
  installCleanup,
  spawnChild,
  tail,
  tributaryCommand,
} from "./support/child-processes.js";
import { DiskSampler, type DiskUsage } from "./support/disk-sampler.js";
import { hostMemoryLine, loadAverage, machineLine } from "./support/machine.js";
import { type ProducerSummary, producerSummary } from "./support/perf-output.js";
import { ProcSampler, type ProcUsage } from "./support/proc-sampler.js";
import { BenchReport } from "./support/report.js";

checkArguments("replication.bench", [
  "rounds",
  "seconds",
  "catchup-records",
  "partitions",
  "retention-bytes",
  "keep-logs",
  "log-dirs",
  "override",
  "producer-prop",
]);

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : dflt;
  if (!Number.isFinite(v) || v <= 0) {
    console.error(`replication.bench: --${name}: expected a positive number`);
    process.exit(2);
  }
  return v;
}

const ROUNDS = arg("rounds", 2);
const MAX_SECONDS = arg("seconds", 15);
const CATCHUP_RECORDS = arg("catchup-records", 1_000_000);
const PARTITIONS = arg("partitions", 6);
const KEEP_LOGS =
  process.argv.indexOf("--keep-logs") >= 0
    ? process.argv[process.argv.indexOf("--keep-logs") + 1]
    : undefined;
/**
 * `--log-dirs disk|memory` (default disk): where the brokers' log dirs (and every other temporary dir of the
 * run) live — under the OS's temporary dir, or on the tmpfs /dev/shm. The goal compares the cost of
 * replication on the machine's cores; on one machine the three brokers share one disk, which an RF 3 byte
 * reaches three times, so a disk slower than ~3× RF 1's rate bounds RF 3 by the disk instead (the summary
 * says so from the disk's busy time). In memory the disk is out of the comparison; the logs stay bounded
 * (RETENTION_BYTES), the catch-up topic takes ~3× its records' bytes.
 */
const LOG_DIRS = (() => {
  const i = process.argv.indexOf("--log-dirs");
  const v = i >= 0 ? process.argv[i + 1] : "disk";
  if (v !== "disk" && v !== "memory") {
    console.error(`replication.bench: --log-dirs: expected disk or memory, got ${v ?? "nothing"}`);
    process.exit(2);
  }
  return v;
})();
/** `--override key=value` (repeatable): extra settings for every broker, e.g. replica.fetch.wait.max.ms. */
const OVERRIDES = Object.fromEntries(
  process.argv.flatMap((a, i) => {
    if (a !== "--override" || i + 1 >= process.argv.length) return [];
    const kv = process.argv[i + 1];
    const eq = kv.indexOf("=");
    return eq > 0 ? [[kv.slice(0, eq), kv.slice(eq + 1)]] : [];
  }),
);
/** `--producer-prop key=value` (repeatable): extra producer properties (after the bench's own). */
const PRODUCER_PROPS = process.argv.flatMap((a, i) =>
  a === "--producer-prop" && i + 1 < process.argv.length ? [process.argv[i + 1]] : [],
);
/**
 * `--retention-bytes N` (default 64 MiB; -1: unbounded): retention.bytes of the measured topics, with
 * segment.bytes 16 MiB and the brokers' retention check and segment deletion every second, so each replica
 * keeps ~64–100 MiB whatever a run produces. Why: on this kind of VM memory that no process touched
 * recently is handed out slowly (dd into /dev/shm: 6 GB at 1.4 GB/s, 12 GB at 140 MB/s), so a run whose
 * logs (page cache or RAM disk) grow past ~4 GB measures the VM's memory, not the broker: RF 3 acks=all
 * sank from 72 MB/s to 27 MB/s at 4 GB in every such run, and held 72 MB/s for 35 s once the logs were
 * bounded (docs/benchmarks.md). Both cases get the same topic configs; the catch-up topic is unbounded.
 */
const RETENTION_BYTES = (() => {
  const i = process.argv.indexOf("--retention-bytes");
  if (i < 0) return 64 * 1024 * 1024;
  const v = Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || (v <= 0 && v !== -1)) {
    console.error("replication.bench: --retention-bytes: expected a positive integer or -1");
    process.exit(2);
  }
  return v;
})();
const SEGMENT_BYTES = 16 * 1024 * 1024;
/** The measured topics' configs beyond min.insync.replicas. */
const TOPIC_CONFIGS: Record<string, string> =
  RETENTION_BYTES > 0
    ? { "retention.bytes": String(RETENTION_BYTES), "segment.bytes": String(SEGMENT_BYTES) }
    : {};
const RETENTION_OVERRIDES: Record<string, string> =
  RETENTION_BYTES > 0
    ? { "log.retention.check.interval.ms": "1000", "log.segment.delete.delay.ms": "1000" }
    : {};
/** Records of the first warm-up run (RF 3, acks=all, not counted), whose rate sizes the runs after it. */
const WARMUP_RECORDS = 300_000;
const RECORD_SIZE = 1024;
const CALIBRATION_RECORDS = 150_000;
const LATENCY_SECONDS = 12;
const BROKERS = 3;
const STARTED = Date.now();
const RUN_DEADLINE = STARTED + 10 * 60_000 - 15_000;
const DIST = resolve(process.env.TRIBUTARY_DIST ?? fileURLToPath(new URL("..", import.meta.url)));
process.env.TRIBUTARY_DIST = DIST; // the harness starts the same build
const REPO = process.cwd();

// ---- output ----

const report = new BenchReport();
const rawLines: string[] = [];
const failures: string[] = [];
const record = (what: string, value: string): void => report.record(what, value);
const phase = (title: string): void => report.phase(title);
function failed(what: string, e: unknown): void {
  const msg = e instanceof Error ? e.message : String(e);
  failures.push(`${what}: ${msg.split("\n")[0]}`);
  console.log(`  FAILED ${what}: ${msg.slice(0, 4000)}`);
}
const mbs = (bytesPerSec: number): string => `${(bytesPerSec / 1e6).toFixed(1)} MB/s`;
const pct = (share: number): string => `${(share * 100).toFixed(0)} %`;
const count = (n: number): string => Math.round(n).toLocaleString("en-US");
const secs = (ms: number | undefined): string => (ms === undefined ? "never" : `${(ms / 1000).toFixed(2)} s`);
function left(): number {
  const l = RUN_DEADLINE - Date.now();
  if (l <= 0) throw new Error("the 10-minute run deadline passed");
  return l;
}
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * `--log-dirs memory`: every temporary dir of the run (the brokers' log dirs among them) under /dev/shm,
 * when it is a tmpfs with room for the catch-up topic's three copies and the bounded topics; else exit 2.
 */
function useMemoryForLogDirs(): void {
  const dir = "/dev/shm";
  const mounts = existsSync("/proc/mounts") ? readFileSync("/proc/mounts", "utf8") : "";
  if (!mounts.split("\n").some((l) => l.split(" ")[1] === dir && l.split(" ")[2] === "tmpfs")) {
    console.error(`replication.bench: --log-dirs memory: ${dir} is not a tmpfs on this machine`);
    process.exit(2);
  }
  const fs = statfsSync(dir);
  const free = fs.bavail * fs.bsize;
  const need = 3.2 * CATCHUP_RECORDS * RECORD_SIZE + 2 * 1024 ** 3;
  if (free < need) {
    console.error(
      `replication.bench: --log-dirs memory: ${dir} has ${(free / 1024 ** 3).toFixed(1)} GiB free, the run needs ~${(need / 1024 ** 3).toFixed(1)} GiB (fewer --catchup-records need less)`,
    );
    process.exit(2);
  }
  process.env.TMPDIR = dir; // os.tmpdir() of this process and of every child it starts
}

// ---- the cluster ----

let cluster: ClusterHarness;

function brokerCpu(u: Map<string, ProcUsage | undefined>, producedBytesPerSec?: number): string {
  const parts: string[] = [];
  let total = 0;
  for (let i = 0; i < BROKERS; i++) {
    const x = u.get(`broker${i}`);
    parts.push(`b${i} ${x ? x.cores.toFixed(2) : "?"}`);
    total += x?.cores ?? 0;
  }
  const c = u.get("client");
  const perGb =
    producedBytesPerSec !== undefined
      ? `; brokers' CPU-s per GB produced ${(total / (producedBytesPerSec / 1e9)).toFixed(1)}`
      : "";
  return `brokers ${parts.join(", ")} (sum ${total.toFixed(2)}), producer ${c ? c.cores.toFixed(2) : "?"} cores${perGb}`;
}

/** CPU-seconds per GB produced during a run, split by who spent them and where (user space / kernel). */
interface CpuPerGb {
  readonly brokersUser: number;
  readonly brokersSystem: number;
  readonly producerUser: number;
  readonly producerSystem: number;
  /** The whole machine's busy time: the processes above, the kernel's own threads and anything else. */
  readonly machine: number;
  /** How many of the machine's CPUs were busy, on average. */
  readonly machineCores: number;
}

function cpuPerGb(u: Map<string, ProcUsage | undefined>, producedBytesPerSec: number): CpuPerGb | undefined {
  const m = u.get("machine");
  const c = u.get("client");
  if (!m || !c || !(producedBytesPerSec > 0)) return undefined;
  const gb = (producedBytesPerSec / 1e9) * m.wallSeconds;
  let bu = 0;
  let bs = 0;
  for (let i = 0; i < BROKERS; i++) {
    bu += u.get(`broker${i}`)?.userSeconds ?? 0;
    bs += u.get(`broker${i}`)?.systemSeconds ?? 0;
  }
  return {
    brokersUser: bu / gb,
    brokersSystem: bs / gb,
    producerUser: c.userSeconds / gb,
    producerSystem: c.systemSeconds / gb,
    machine: m.cpuSeconds / gb,
    machineCores: m.cores,
  };
}

function cpuPerGbLine(x: CpuPerGb | undefined): string {
  if (!x) return "?";
  const f = (n: number): string => n.toFixed(2);
  return `brokers user ${f(x.brokersUser)} + system ${f(x.brokersSystem)}, producer user ${f(x.producerUser)} + system ${f(x.producerSystem)}; whole machine ${f(x.machine)} (${x.machineCores.toFixed(2)} of ${availableParallelism()} CPUs busy)`;
}

/** The disks' write rate in a window against the bytes produced meanwhile (RF copies are each written). */
function diskLine(d: DiskUsage | undefined, producedBytesPerSec: number): string {
  if (!d) return "?";
  const perByte = d.writtenBytesPerSec / producedBytesPerSec;
  const busy = Number.isNaN(d.busiestDiskBusy) ? "" : `, busiest disk busy ${pct(d.busiestDiskBusy)}`;
  return `wrote ${mbs(d.writtenBytesPerSec)} (${perByte.toFixed(2)} bytes per byte produced), dirty + writeback up to ${d.peakDirtyMiB.toFixed(0)} MiB${busy}`;
}

async function tool(args: string[], timeoutMs = 30_000): Promise<Finished> {
  const { cmd, argv } = tributaryCommand(DIST, args);
  return spawnChild(cmd, argv, { timeoutMs, cwd: REPO }).done;
}

async function createTopic(topic: string, rf: number, configs: Record<string, string>): Promise<void> {
  const args = ["topics", "--bootstrap-server", cluster.bootstrap(), "--create", "--topic", topic];
  args.push("--partitions", String(PARTITIONS), "--replication-factor", String(rf));
  for (const [k, v] of Object.entries(configs)) args.push("--config", `${k}=${v}`);
  const r = await tool(args);
  if (r.code !== 0) throw new Error(`topics --create --topic ${topic}: exit ${r.code} (${tail(r)})`);
}

async function deleteTopic(topic: string): Promise<void> {
  const r = await tool(["topics", "--bootstrap-server", cluster.bootstrap(), "--delete", "--topic", topic]);
  if (r.code !== 0) throw new Error(`topics --delete --topic ${topic}: exit ${r.code} (${tail(r)})`);
  const deadline = Date.now() + 30_000;
  while (
    cluster.brokers.some(
      (b) => existsSync(b.logDir) && readdirSync(b.logDir).some((d) => d.startsWith(`${topic}-`)),
    )
  ) {
    if (Date.now() > deadline) {
      console.log(`  (the partition directories of ${topic} were not all removed within 30 s; going on)`);
      return;
    }
    await sleep(200);
  }
}

interface PartitionInfo {
  readonly partition: number;
  readonly leader: number;
  readonly isr: readonly number[];
  readonly replicas: readonly number[];
}

/** Metadata v12 of `topic` from broker `via` (one connection kept per broker). */
const connections = new Map<number, WireClient>();
async function metadata(via: number, topic: string): Promise<PartitionInfo[]> {
  let c = connections.get(via);
  if (!c || c.closed) {
    c = await WireClient.connect(cluster.broker(via).port);
    connections.set(via, c);
  }
  try {
    const res = await c.request(Apis.Metadata, 12, {
      topics: [{ topicId: "AAAAAAAAAAAAAAAAAAAAAA", name: topic }],
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    const t = res.topics.find((x) => x.name === topic);
    if (t?.errorCode !== 0) return [];
    return t.partitions
      .map((p) => ({
        partition: p.partitionIndex,
        leader: p.leaderId,
        isr: p.isrNodes,
        replicas: p.replicaNodes,
      }))
      .sort((a, b) => a.partition - b.partition);
  } catch (e) {
    c.close();
    connections.delete(via);
    throw e;
  }
}

/** Waits until every live broker's Metadata shows every partition of `topic` led with a full ISR. */
async function waitFullIsr(topic: string, ms: number): Promise<void> {
  const deadline = Date.now() + Math.min(ms, left());
  let last: PartitionInfo[] = [];
  for (;;) {
    let ok = true;
    for (const i of cluster.liveIds()) {
      last = await metadata(i, topic).catch(() => []);
      if (last.length !== PARTITIONS || last.some((p) => p.leader < 0 || p.isr.length !== p.replicas.length))
        ok = false;
    }
    if (ok) return;
    if (Date.now() > deadline)
      throw new Error(`${topic}: no full ISR within ${ms} ms; last: ${JSON.stringify(last)}`);
    await sleep(100);
  }
}

/** ISR changes the brokers logged at or after `from` (Date.now()). */
function isrChanges(from: number): { shrinks: number; expansions: number; lines: string[] } {
  let shrinks = 0;
  let expansions = 0;
  const lines: string[] = [];
  for (const b of cluster.brokers) {
    for (const line of `${b.stdout}\n${b.stderr}`.split("\n")) {
      const m = /^\[(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d),(\d{3})\]/.exec(line);
      if (!m) continue;
      const [y, mo, d, h, mi, s, f] = m.slice(1).map(Number);
      if (new Date(y, mo - 1, d, h, mi, s, f).getTime() < from) continue;
      if (/Shrinking ISR/.test(line)) {
        shrinks++;
        if (lines.length < 6) lines.push(line);
      } else if (/Expanding ISR/.test(line)) expansions++;
    }
  }
  return { shrinks, expansions, lines };
}

// ---- producer-perf-test ----

interface Run {
  readonly summary: ProducerSummary;
  readonly steady?: ProducerSummary;
  readonly usage: Map<string, ProcUsage | undefined>;
  readonly disk: DiskUsage | undefined;
  readonly isr: { shrinks: number; expansions: number; lines: string[] };
}

async function produce(
  topic: string,
  acks: string,
  records: number,
  throughput: number,
  warmup = 0,
): Promise<Run> {
  spawnSync("sync");
  const args = ["producer-perf-test"];
  if (warmup > 0) args.push("--warmup-records", String(warmup));
  args.push("--topic", topic, "--num-records", String(records), "--record-size", String(RECORD_SIZE));
  args.push(
    "--throughput",
    String(throughput),
    "--producer-props",
    `bootstrap.servers=${cluster.bootstrap()}`,
  );
  args.push(`acks=${acks}`, "batch.size=1048576", "linger.ms=5", ...PRODUCER_PROPS);
  console.log(
    `  running producer-perf-test --num-records ${records} --throughput ${throughput} acks=${acks}`,
  );
  const sampler = new ProcSampler();
  for (let i = 0; i < BROKERS; i++) {
    const pid = cluster.broker(i).pid;
    if (cluster.isLive(i) && pid !== undefined) sampler.add(`broker${i}`, pid);
  }
  const lines = new Map<string, number>();
  const { cmd, argv } = tributaryCommand(DIST, args);
  const from = Date.now();
  const child = spawnChild(cmd, argv, {
    timeoutMs: Math.max(5_000, Math.min(150_000, left() - 10_000)),
    echo: "    | ",
    cwd: REPO,
    onLine: (l, at) => lines.set(l.trim(), at),
  });
  sampler.add("client", child.pid);
  sampler.addMachine("machine");
  sampler.start();
  const disk = new DiskSampler();
  disk.start();
  const r = await child.done;
  sampler.stop();
  disk.stop();
  const s = producerSummary(r.stdout);
  if (r.code !== 0 || !s) throw new Error(`producer-perf-test: exit ${r.code ?? r.signal} (${tail(r, 6)})`);
  if (s.records !== records) throw new Error(`producer-perf-test sent ${s.records} of ${records} records`);
  rawLines.push(`${topic}, acks=${acks}: ${s.line}`);
  const steady = warmup > 0 ? producerSummary(r.stdout, true) : undefined;
  if (steady) rawLines.push(`${topic}, acks=${acks}: ${steady.line}`);
  const end = lines.get(s.line) ?? Date.now();
  const start = end - (s.records / s.recordsPerSec) * 1000;
  const usage = new Map<string, ProcUsage | undefined>();
  for (const name of ["broker0", "broker1", "broker2", "client", "machine"])
    usage.set(name, sampler.usage(name, start, end));
  return { summary: s, steady, usage, disk: disk.usage(start, end), isr: isrChanges(from) };
}

// ---- 1. produce cost ----

interface CaseResult {
  readonly maxMBps: number;
  readonly p99Steady?: number;
  readonly cpu?: CpuPerGb;
  /** The busiest disk's busy share during the max run (NaN: unknown). */
  readonly diskBusy: number;
}
const results: { A: CaseResult[]; B: CaseResult[] } = { A: [], B: [] };

async function produceCase(which: "A" | "B", round: number): Promise<void> {
  const rf = which === "A" ? 3 : 1;
  const acks = which === "A" ? "all" : "1";
  const topic = `repl-${which === "A" ? "rf3-all" : "rf1-acks1"}-r${round}`;
  phase(`round ${round}: RF ${rf}, acks=${acks}, ${PARTITIONS} partitions (${topic})`);
  await createTopic(topic, rf, { ...TOPIC_CONFIGS, ...(rf === 3 ? { "min.insync.replicas": "2" } : {}) });
  await waitFullIsr(topic, 30_000);
  const desc = await metadata(cluster.liveIds()[0], topic);
  record("leaders of the partitions", desc.map((p) => `${p.partition}→${p.leader}`).join(" "));
  try {
    const cal = await produce(topic, acks, CALIBRATION_RECORDS, -1);
    let n = Math.round(Math.min(5_000_000, Math.max(200_000, cal.summary.recordsPerSec * MAX_SECONDS)));
    record(
      "calibration (not counted)",
      `${count(cal.summary.recordsPerSec)} records/s = ${mbs(cal.summary.recordsPerSec * RECORD_SIZE)} over ${count(CALIBRATION_RECORDS)} records`,
    );
    let max = await produce(topic, acks, n, -1);
    // The calibration ran on a cold broker; when the measured run was much shorter than asked, size a
    // second one at its rate and take that.
    if (n / max.summary.recordsPerSec < 0.6 * MAX_SECONDS) {
      const n2 = Math.round(Math.min(6_000_000, max.summary.recordsPerSec * MAX_SECONDS));
      record(
        "first max run too short (not counted)",
        `${count(n)} records in ${(n / max.summary.recordsPerSec).toFixed(1)} s at ${mbs(max.summary.recordsPerSec * RECORD_SIZE)}; again with ${count(n2)}`,
      );
      n = n2;
      max = await produce(topic, acks, n, -1);
    }
    const m = max.summary;
    const maxMBps = (m.recordsPerSec * RECORD_SIZE) / 1e6;
    record(
      `max throughput (${count(n)} records, ${(n / m.recordsPerSec || 0).toFixed(1)} s)`,
      `**${count(m.recordsPerSec)} records/s = ${mbs(m.recordsPerSec * RECORD_SIZE)}**; latency avg ${m.avgMs} ms, p50 ${m.p50Ms} ms, p99 ${m.p99Ms} ms, max ${m.maxMs} ms`,
    );
    record("  CPU during the max run", brokerCpu(max.usage, m.recordsPerSec * RECORD_SIZE));
    const cpu = cpuPerGb(max.usage, m.recordsPerSec * RECORD_SIZE);
    record("  CPU-s per GB produced, max run", cpuPerGbLine(cpu));
    record("  disks during the max run", diskLine(max.disk, m.recordsPerSec * RECORD_SIZE));
    record("  ISR shrinks / expansions logged during it", `${max.isr.shrinks} / ${max.isr.expansions}`);
    for (const l of max.isr.lines) console.log(`    ${l}`);
    const half = Math.max(1, Math.round(m.recordsPerSec / 2));
    const ln = Math.round(half * LATENCY_SECONDS);
    const lat = await produce(topic, acks, ln, half, Math.round(ln / 5));
    const w = lat.summary;
    const s = lat.steady;
    record(
      `at half rate (--throughput ${half}, ${count(ln)} records, first ${count(ln / 5)} warm-up)`,
      `${count(w.recordsPerSec)} records/s; steady state p50 ${s?.p50Ms ?? "?"} ms, **p99 ${s?.p99Ms ?? "?"} ms**, p99.9 ${s?.p999Ms ?? "?"} ms, max ${s?.maxMs ?? "?"} ms; whole run p99 ${w.p99Ms} ms, max ${w.maxMs} ms`,
    );
    record("  CPU at half rate", brokerCpu(lat.usage, w.recordsPerSec * RECORD_SIZE));
    record("  disks at half rate", diskLine(lat.disk, w.recordsPerSec * RECORD_SIZE));
    record("  ISR shrinks / expansions logged during it", `${lat.isr.shrinks} / ${lat.isr.expansions}`);
    for (const l of lat.isr.lines) console.log(`    ${l}`);
    results[which].push({
      maxMBps,
      p99Steady: s?.p99Ms,
      cpu,
      diskBusy: max.disk?.busiestDiskBusy ?? Number.NaN,
    });
  } finally {
    await deleteTopic(topic).catch((e) => failed(`delete ${topic}`, e));
  }
}

/** At most this many warm-up runs of `--seconds` each follow the first, short one. */
const WARMUP_MAX_RUNS = 6;
/** Warm-up ends once a run's rate is within this share of the previous run's. */
const WARMUP_STEADY = 0.03;

/**
 * RF 3 acks=all runs that are not counted, before the first round, until the rate stops rising: the
 * brokers' code is compiled, their heaps, memory pools and connections are sized, and the memory a run
 * cycles through has been touched, so the first measured case starts no colder than the rest. A short run
 * gives the rate, then runs as long as a measured one (`--seconds`) until one is within 3 % of the
 * previous such run (so at least two of them; at most WARMUP_MAX_RUNS). Why: the brokers' user-space CPU per GB fell by half over the first
 * ~50 s of RF 3 load (7.5 → 3.8 CPU-s per GB over six 10-s runs; V8's optimizing compiler took up
 * functions of the produce, append and fetch paths for the first time in the second and third runs), and
 * with one short warm-up run the first measured RF 3 case ran 15–30 % below every later one
 * (docs/benchmarks.md).
 */
async function warmUp(): Promise<void> {
  const topic = "repl-warmup";
  phase(
    `warm-up (not counted): RF 3, acks=all, ${count(WARMUP_RECORDS)} records, then ~${MAX_SECONDS} s runs until steady`,
  );
  await createTopic(topic, 3, { ...TOPIC_CONFIGS, "min.insync.replicas": "2" });
  await waitFullIsr(topic, 30_000);
  try {
    let rate = (await produce(topic, "all", WARMUP_RECORDS, -1)).summary.recordsPerSec;
    const rates = [rate];
    let steady = false;
    for (let i = 0; i < WARMUP_MAX_RUNS && !steady; i++) {
      const n = Math.round(Math.min(5_000_000, Math.max(200_000, rate * MAX_SECONDS)));
      const next = (await produce(topic, "all", n, -1)).summary.recordsPerSec;
      steady = i > 0 && Math.abs(next - rate) <= WARMUP_STEADY * rate;
      rate = next;
      rates.push(rate);
    }
    record(
      "warm-up runs",
      `${rates.map((r) => mbs(r * RECORD_SIZE)).join(" → ")} (${steady ? "steady: within 3 % of the run before" : `not steady after ${WARMUP_MAX_RUNS} runs`})`,
    );
  } finally {
    await deleteTopic(topic).catch((e) => failed(`delete ${topic}`, e));
  }
}

// ---- 2. catch-up ----

/** Bytes of the .log files of each partition directory of `topic` under `dir`. */
function partitionLogBytes(dir: string, topic: string): Map<string, number> {
  const out = new Map<string, number>();
  if (!existsSync(dir)) return out;
  for (const d of readdirSync(dir)) {
    if (!/^\d+$/.test(d.slice(topic.length + 1)) || !d.startsWith(`${topic}-`)) continue;
    const pd = join(dir, d);
    let total = 0;
    try {
      for (const f of readdirSync(pd)) if (f.endsWith(".log")) total += statSync(join(pd, f)).size;
    } catch {
      // the directory is being created or renamed
    }
    out.set(d, total);
  }
  return out;
}

function topicLogBytes(dir: string, topic: string): number {
  let total = 0;
  for (const v of partitionLogBytes(dir, topic).values()) total += v;
  return total;
}

async function catchUp(): Promise<void> {
  const topic = "repl-catchup";
  phase(
    `catch-up: RF 3, ${PARTITIONS} partitions, ${count(CATCHUP_RECORDS)} × 1 KiB produced while one broker is down`,
  );
  await createTopic(topic, 3, {});
  await waitFullIsr(topic, 30_000);
  const controller = await cluster.controllerId();
  const victim = [...Array(BROKERS).keys()].reverse().find((i) => i !== controller) ?? 0;
  const via = cluster.liveIds().find((i) => i !== victim) ?? 0;
  record("controller / stopped broker / Metadata polled from", `${controller} / ${victim} / ${via}`);
  const tStop = Date.now();
  const code = await cluster.stopBroker(victim, "SIGTERM");
  record("SIGTERM → exit (controlled shutdown)", `${secs(Date.now() - tStop)}, code ${code}`);
  await cluster.waitFor(`broker ${victim} out of every ISR of ${topic}`, 40_000, async () => {
    const parts = await metadata(via, topic);
    return parts.length === PARTITIONS && parts.every((p) => !p.isr.includes(victim) && p.leader >= 0)
      ? true
      : undefined;
  });
  const p = await produce(topic, "1", CATCHUP_RECORDS, -1);
  record(
    "produced while it was down (acks=1)",
    `${count(p.summary.recordsPerSec)} records/s = ${mbs(p.summary.recordsPerSec * RECORD_SIZE)}`,
  );
  // Each live broker leads some partitions and follows others: the leader's bytes of a partition are the
  // largest of its replicas'.
  const largest = new Map<string, number>();
  for (const i of cluster.liveIds())
    for (const [d, v] of partitionLogBytes(cluster.broker(i).logDir, topic))
      largest.set(d, Math.max(v, largest.get(d) ?? 0));
  const leaderBytes = [...largest.values()].reduce((a, b) => a + b, 0);
  const victimDir = cluster.broker(victim).logDir;
  const before = topicLogBytes(victimDir, topic);
  record(
    "bytes of the topic on its leaders / on the stopped broker",
    `${count(leaderBytes)} / ${count(before)}`,
  );
  spawnSync("sync");

  // Sample the restarted broker's bytes for the topic and its CPU while it catches up.
  const samples: { at: number; bytes: number }[] = [];
  const sampleTimer = setInterval(
    () => samples.push({ at: Date.now(), bytes: topicLogBytes(victimDir, topic) }),
    100,
  );
  const t0 = Date.now();
  let upAt: number | undefined;
  let inIsrAt: number | undefined;
  let firstIsrAt: number | undefined;
  let last: PartitionInfo[] = [];
  const sampler = new ProcSampler();
  try {
    const started = cluster.startBroker(victim).then(() => {
      upAt = Date.now();
    });
    // The pid exists once spawned; the harness only exposes it through the broker object.
    for (let i = 0; i < 50 && cluster.broker(victim).pid === undefined; i++) await sleep(10);
    for (let i = 0; i < BROKERS; i++) {
      const pid = cluster.broker(i).pid;
      if (pid !== undefined) sampler.add(`broker${i}`, pid);
    }
    sampler.start();
    const deadline = Date.now() + Math.min(240_000, left() - 20_000);
    while (inIsrAt === undefined) {
      const parts = await metadata(via, topic).catch(() => undefined);
      if (parts) {
        last = parts;
        const inIsr = parts.filter((x) => x.isr.includes(victim)).length;
        if (inIsr > 0 && firstIsrAt === undefined) firstIsrAt = Date.now();
        if (parts.length === PARTITIONS && inIsr === PARTITIONS) inIsrAt = Date.now();
      }
      if (inIsrAt === undefined) {
        if (Date.now() > deadline) break;
        await sleep(100);
      }
    }
    await started;
  } finally {
    clearInterval(sampleTimer);
    sampler.stop();
  }
  const after = topicLogBytes(victimDir, topic);
  samples.push({ at: Date.now(), bytes: after });
  const firstByte = samples.find((s) => s.bytes > before)?.at;
  const allBytes = samples.find((s) => s.bytes >= leaderBytes)?.at;
  record("restart (spawn) → ApiVersions answered", secs(upAt === undefined ? undefined : upAt - t0));
  record(
    "restart → first byte of the topic written on it (100 ms samples)",
    secs(firstByte && firstByte - t0),
  );
  record("restart → all the leader's bytes on it", secs(allBytes && allBytes - t0));
  record(
    "restart → in the ISR of a first / of every partition (Metadata)",
    `${secs(firstIsrAt && firstIsrAt - t0)} / **${secs(inIsrAt && inIsrAt - t0)}**`,
  );
  const fetched = after - before;
  if (inIsrAt !== undefined) {
    record(
      "bytes fetched ÷ (restart → in every ISR)",
      `**${mbs((fetched / (inIsrAt - t0)) * 1000)}** (${count(fetched)} bytes)`,
    );
    if (firstByte !== undefined && allBytes !== undefined && allBytes > firstByte)
      record(
        "bytes fetched ÷ (first byte → all bytes): the transfer alone",
        mbs((fetched / (allBytes - firstByte)) * 1000),
      );
    const u = new Map<string, ProcUsage | undefined>();
    for (let i = 0; i < BROKERS; i++) u.set(`broker${i}`, sampler.usage(`broker${i}`, t0, inIsrAt));
    record("  CPU while it caught up", brokerCpu(u).replace(/, producer .*$/, ""));
    const desc = await tool([
      "topics",
      "--bootstrap-server",
      cluster.bootstrap(),
      "--describe",
      "--topic",
      topic,
    ]);
    const parts = parseDescribe(desc.stdout);
    record(
      "topics --describe afterwards",
      parts.map((x) => `p${x.partition} leader ${x.leader} isr ${x.isr.join(",")}`).join("; "),
    );
  } else {
    failed(
      "catch-up",
      new Error(
        `broker ${victim} not back in every ISR of ${topic}; last Metadata: ${JSON.stringify(last)}; its bytes ${count(after)} of ${count(leaderBytes)}\n${cluster.logTails(40)}`,
      ),
    );
  }
}

// ---- main ----

async function main(): Promise<void> {
  installCleanup();
  setTimeout(
    () => {
      console.error("replication.bench: the run deadline passed; stopping");
      process.exit(1);
    },
    RUN_DEADLINE + 15_000 - Date.now(),
  ).unref();
  if (!existsSync(join(DIST, "src/cli/main.js"))) {
    console.error(`replication.bench: no compiled CLI at ${join(DIST, "src/cli/main.js")}; build first`);
    process.exit(2);
  }
  console.log(`Replication benchmark, ${new Date().toISOString()}`);
  console.log(`machine: ${machineLine()}; load average ${loadAverage()}`);
  const host = hostMemoryLine();
  if (host) console.log(host);
  console.log(`build: ${DIST}`);
  if (LOG_DIRS === "memory") useMemoryForLogDirs();
  console.log(`log dirs: ${LOG_DIRS === "memory" ? "in memory, under" : "on the disk, under"} ${tmpdir()}`);
  if (Object.keys(OVERRIDES).length > 0) console.log(`broker overrides: ${JSON.stringify(OVERRIDES)}`);
  if (PRODUCER_PROPS.length > 0) console.log(`extra producer properties: ${PRODUCER_PROPS.join(" ")}`);
  cluster = await ClusterHarness.start({
    brokers: BROKERS,
    name: "tributary-repl-bench",
    overrides: {
      "zookeeper.session.timeout.ms": "18000",
      "replica.lag.time.max.ms": "30000",
      "controlled.shutdown.retry.backoff.ms": "5000",
      ...RETENTION_OVERRIDES,
      ...OVERRIDES,
    },
  });
  console.log(`cluster: ${cluster.bootstrap()} (ZooKeeper ${cluster.zookeeperConnect})`);
  console.log(
    RETENTION_BYTES > 0
      ? `measured topics: retention.bytes ${RETENTION_BYTES}, segment.bytes ${SEGMENT_BYTES} (--retention-bytes -1: unbounded)`
      : "measured topics: unbounded retention",
  );
  try {
    try {
      await warmUp();
    } catch (e) {
      failed("warm-up", e);
    }
    for (let r = 1; r <= ROUNDS; r++) {
      for (const which of r % 2 === 1 ? (["A", "B"] as const) : (["B", "A"] as const)) {
        try {
          await produceCase(which, r);
        } catch (e) {
          failed(`round ${r} case ${which}`, e);
        }
      }
    }
    try {
      await catchUp();
    } catch (e) {
      failed("catch-up", e);
    }
  } finally {
    for (const c of connections.values()) c.close();
    if (KEEP_LOGS) {
      mkdirSync(KEEP_LOGS, { recursive: true });
      for (const [i, b] of cluster.brokers.entries()) {
        writeFileSync(join(KEEP_LOGS, `broker${i}.out`), b.stdout);
        writeFileSync(join(KEEP_LOGS, `broker${i}.err`), b.stderr);
      }
    }
    await cluster.close();
  }

  phase("summary");
  const sum = (xs: CaseResult[]): number => xs.reduce((a, x) => a + x.maxMBps, 0);
  for (let r = 0; r < Math.min(results.A.length, results.B.length); r++)
    record(
      `round ${r + 1}: RF3 acks=all ÷ RF1 acks=1 MB/s`,
      `${results.A[r].maxMBps.toFixed(1)} ÷ ${results.B[r].maxMBps.toFixed(1)} = ${(results.A[r].maxMBps / results.B[r].maxMBps).toFixed(2)}×`,
    );
  if (results.A.length > 0 && results.B.length > 0) {
    const ratio = sum(results.A) / results.A.length / (sum(results.B) / results.B.length);
    record(
      "mean RF3 acks=all ÷ mean RF1 acks=1",
      `**${ratio.toFixed(2)}×** (goal ≥ 0.4×: ${ratio >= 0.4 ? "met" : "NOT met"}; log dirs ${LOG_DIRS === "memory" ? "in memory" : "on the disk"})`,
    );
    const busy = (xs: CaseResult[]): number | undefined => {
      const v = xs.map((x) => x.diskBusy).filter((b) => !Number.isNaN(b));
      return v.length === 0 ? undefined : v.reduce((a, b) => a + b, 0) / v.length;
    };
    const [ba, bb] = [busy(results.A), busy(results.B)];
    const coresA = results.A.flatMap((x) => (x.cpu ? [x.cpu.machineCores] : []));
    const idleCpus = coresA.length > 0 && Math.max(...coresA) < 0.85 * availableParallelism();
    if (ba !== undefined && bb !== undefined)
      record(
        "busiest disk busy during the max runs, RF3 vs RF1",
        `${pct(ba)} vs ${pct(bb)}${ba >= 0.75 && idleCpus ? ": RF 3 was bound by the disk, which its three replicas share on this machine, with CPUs to spare (`--log-dirs memory` leaves the disk out)" : ""}`,
      );
  }
  cpuSummary();
  report.printTable();
  console.log(`\n${rawLines.join("\n")}`);
  console.log(`\nload average at the end: ${loadAverage()}`);
  console.log(`total run time ${((Date.now() - STARTED) / 1000).toFixed(0)} s`);
  if (failures.length > 0) {
    console.log("\nfailures:");
    for (const f of failures) console.log(`- ${f}`);
    process.exitCode = 1;
  }
}

/**
 * Where RF 3's extra CPU goes, from the max runs' CPU-seconds per GB: the brokers' user-space time RF 3
 * over RF 1 (3× is the floor of this design: every byte is appended by three replicas), their kernel time
 * likewise, and what the ratio would be if the brokers' own code cost nothing at all — the machine's
 * busy CPU-s per GB without the brokers' user time, at the same busy CPUs — which bounds what any change
 * to the broker's code can reach on this machine.
 */
function cpuSummary(): void {
  const mean = (xs: CaseResult[], k: keyof CpuPerGb): number | undefined => {
    const v = xs.flatMap((x) => (x.cpu ? [x.cpu[k]] : []));
    return v.length === 0 ? undefined : v.reduce((a, x) => a + x, 0) / v.length;
  };
  const get = (k: keyof CpuPerGb): [number, number] | undefined => {
    const a = mean(results.A, k);
    const b = mean(results.B, k);
    return a === undefined || b === undefined ? undefined : [a, b];
  };
  const bu = get("brokersUser");
  const bs = get("brokersSystem");
  const pu = get("producerUser");
  const ps = get("producerSystem");
  const ma = get("machine");
  const cores = get("machineCores");
  if (!bu || !bs || !pu || !ps || !ma || !cores) return;
  const vs = ([a, b]: [number, number]): string =>
    `${a.toFixed(2)} vs ${b.toFixed(2)} (${(a / b).toFixed(1)}×)`;
  record("CPU-s per GB, RF3 acks=all vs RF1 acks=1: brokers' user space", vs(bu));
  record("  brokers' kernel time", vs(bs));
  record("  producer, user + kernel", vs([pu[0] + ps[0], pu[1] + ps[1]]));
  record("  whole machine", `${vs(ma)}; busy CPUs ${cores[0].toFixed(2)} vs ${cores[1].toFixed(2)}`);
  const rate = (i: 0 | 1, withoutBrokersUser: boolean): number =>
    cores[i] / (ma[i] - (withoutBrokersUser ? bu[i] : 0));
  record(
    "  ratio from these figures / if the brokers' user space cost nothing",
    `${(rate(0, false) / rate(1, false)).toFixed(2)}× / ${(rate(0, true) / rate(1, true)).toFixed(2)}×`,
  );
}

await main();
