// Throughput benchmark (issue 5) against the machine's limits. Run with `npm run bench` (options after
// `--`: `--records N`, default 1000000; `--consume-records M`, default 3000000; `--no-append` to leave
// docs/benchmarks/throughput.md alone, for trial runs).
// Needs iperf3, redis-server, redis-cli and redis-benchmark on PATH; on Debian:
//   apt-get install -y iperf3 redis-server redis-tools
// (it says in one line what is missing instead of starting).
//
// In one run it measures:
// 1. loopback TCP bandwidth: one iperf3 stream for 5 s (`iperf3 -s -1` + `iperf3 -c 127.0.0.1 -J`);
// 2. the peer users would otherwise pick, Redis Streams: a fresh redis-server without persistence, N XADDs
//    of 1 KiB values at pipeline 64 with redis-benchmark, then XRANGE COUNT 100 reads (bench/support/peers.ts);
// 3. a fresh Tributary broker (test/support/broker-harness.ts, its own temporary log dir, the build this
//    file was compiled into unless TRIBUTARY_DIST says otherwise): spawn → ApiVersions answered, then two
//    8-partition topics created with `tributary topics --create`;
// 4. produce: `tributary producer-perf-test` (the real executable, as a child process) sending N records of
//    1 KiB, acks=1, batch.size=1048576, linger.ms=5, unthrottled; records/s, MB/s and latencies from its
//    Kafka-format summary line;
// 5. consume: `tributary consumer-perf-test --messages N` on the same topic; fetch.MB.sec and fetch.nMsg.sec
//    from its CSV (the group join, rebalance.time.ms, is reported apart); then the topic is topped up to M
//    records (`--consume-records`, default 3,000,000; producer-perf-test, not measured) and a new
//    consumer-perf-test reads all M: the figure the target is judged on (see DEFAULT_CONSUME_RECORDS);
// 6. latency: producer-perf-test with --throughput set to half the records/s of step 4 (a topic per run,
//    at most 30 s worth of records, the first fifth of them --warmup-records), twice: with the properties of
//    step 4 (linger.ms=5) and with linger.ms=0 (what a latency-sensitive producer sets); the p50/p99 of the
//    whole run and of the steady state after the warm-up;
//    Before each of steps 4–6 a `sync` writes out what earlier phases left dirty in the page cache: with
//    gigabytes dirty, the kernel's writeback throttling stalls appends for tens of milliseconds (measured:
//    steady-state p99 11 ms on a clean page cache, 149 ms after a 3 GB dd), which is the earlier phase's cost;
//    and before each latency run the topic the phase before wrote is deleted (each latency run writes its
//    own): otherwise the page cache grows into memory this VM has never backed, a host fault per fresh
//    4 KiB page inside the broker's appends (measured: steady-state avg 1.65 → 0.80 ms, p99 5 → 4 ms when
//    2 GB written before are deleted first; docs/benchmarks.md). A long-running broker's page cache is
//    full and recycles its pages, as here;
// 7. during steps 4–6: broker and client CPU (utime + stime of /proc/<pid>/stat) and RSS, sampled every
//    200 ms and taken over the interval the tool itself measured (its start-up and shutdown left out).
// 8. idle memory, once that broker has stopped: a fresh broker, 10 topics × 100 partitions created with
//    one CreateTopics, its RSS after 10 s without clients (target ≤ 150 MB).
// Then it prints a table with the ratios issue 5 asks for (produce MB/s ÷ Redis XADD MB/s, consume MB/s ÷
// loopback, …) next to the targets, and appends a dated run to "## Throughput (issue 5)" in
// docs/benchmarks/throughput.md (the Throughput rows of docs/benchmarks.md's table then want its figures:
// `npm run check:benchmarks` fails until they have them). MB/s is 10^6 bytes of record data per second
// (the perf tools print MiB/s as Kafka's do; their lines are quoted as printed). The run is bounded to
// 5 minutes; every child process and temporary directory is removed on every exit path
// (bench/support/child-processes.ts). Exits 1 when a step failed (the table then shows what was measured).

import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { loadavg } from "node:os";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { AdminClient } from "../src/client/admin/admin-client.js";
import { BrokerHarness } from "../test/support/broker-harness.js";
import { appendRunToSection } from "./support/benchmarks-doc.js";
import {
  type Finished,
  installCleanup,
  onPath,
  registerTempDir,
  spawnChild,
  tail,
  tributaryCommand,
} from "./support/child-processes.js";
import { hostMemoryLine, loadAverage, machineLine } from "./support/machine.js";
import { type IperfResult, iperf3Loopback, type RedisStreamsResult, redisStreams } from "./support/peers.js";
import {
  type ConsumerSummary,
  consumerSummary,
  type ProducerSummary,
  producerSummary,
} from "./support/perf-output.js";
import { ProcSampler, type ProcUsage, rssKiB } from "./support/proc-sampler.js";

const USAGE = "usage: throughput.bench [--records N] [--consume-records M] [--no-append]";
const RECORD_SIZE = 1024;
const PARTITIONS = 8;
const TOPIC = "bench-throughput";
/** Each latency run writes a topic of its own: bench-latency-linger5, bench-latency-linger0. */
const latencyTopic = (lingerMs: number): string => `bench-latency-linger${lingerMs}`;
const PRODUCER_PROPS = ["acks=1", "batch.size=1048576", "linger.ms=5"];
/** linger.ms of the two latency runs: the throughput run's, and none. */
const LATENCY_LINGERS = [5, 0] as const;
/** The share of the latency run's records that are --warmup-records. */
const WARMUP_SHARE = 0.2;
/** The idle-RSS phase: a fresh broker with this many topics × partitions, measured after IDLE_SECONDS. */
const IDLE_TOPICS = 10;
const IDLE_PARTITIONS = 100;
const IDLE_SECONDS = 10;
const IPERF_SECONDS = 5;
/** The latency run sends at most this many seconds' worth of records at half the max rate. */
const LATENCY_SECONDS = 30;
/**
 * The consume figure the target is judged on reads this many records (at least --records): a consumer's
 * first gigabyte includes growing its heap into memory this VM has never backed (~0.3 s of page faults
 * per run; docs/benchmarks.md "The consumer's first gigabyte"), which a longer read amortizes.
 */
const DEFAULT_CONSUME_RECORDS = 3_000_000;
const STARTED = Date.now();
const RUN_DEADLINE = STARTED + 5 * 60_000;

function parseArgs(argv: string[]): { records: number; consumeRecords: number; append: boolean } {
  let records = 1_000_000;
  let consumeRecords: number | undefined;
  let append = true;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--no-append") append = false;
    else if (a === "--records") {
      records = Number(argv[++i]);
      if (!Number.isInteger(records) || records <= 0)
        fail(`--records: expected a positive integer, got '${argv[i] ?? ""}'`);
    } else if (a === "--consume-records") {
      consumeRecords = Number(argv[++i]);
      if (!Number.isInteger(consumeRecords) || consumeRecords <= 0)
        fail(`--consume-records: expected a positive integer, got '${argv[i] ?? ""}'`);
    } else if (a === "--help" || a === "-h") {
      console.log(USAGE);
      process.exit(0);
    } else fail(`unknown argument '${a}' (${USAGE})`);
  }
  return { records, consumeRecords: Math.max(records, consumeRecords ?? DEFAULT_CONSUME_RECORDS), append };
}

function fail(message: string, code = 2): never {
  console.error(`throughput.bench: ${message}`);
  process.exit(code);
}

const ARGV = process.argv.slice(2);
const OPTIONS = parseArgs(ARGV);
/** The compiled tree to run: TRIBUTARY_DIST, else the one this file was compiled into. */
const DIST = resolve(process.env.TRIBUTARY_DIST ?? fileURLToPath(new URL("..", import.meta.url)));
process.env.TRIBUTARY_DIST = DIST; // the broker harness starts the same build
const REPO = process.cwd();

// ---- figures ----

interface Row {
  readonly what: string;
  readonly figure: string;
  readonly target?: string;
}
const rows: Row[] = [];
const failures: string[] = [];
const rawLines: string[] = [];

function row(what: string, figure: string, target?: string): void {
  rows.push({ what, figure, target });
  console.log(`  ${what}: ${figure}${target ? `  [${target}]` : ""}`);
}
function section(title: string): void {
  rows.push({ what: `**${title}**`, figure: "" });
  console.log(`\n${title}`);
}
function failed(what: string, e: unknown): void {
  const msg = (e instanceof Error ? e.message : String(e)).split("\n")[0];
  failures.push(`${what}: ${msg}`);
  console.log(`  FAILED ${what}: ${msg}`);
}

const MB = 1e6;
const mbs = (bytesPerSec: number): string =>
  `${(bytesPerSec / MB).toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 })} MB/s`;
const count = (n: number): string => Math.round(n).toLocaleString("en-US");
const mib = (kib: number): string => `${(kib / 1024).toFixed(1)} MiB`;
const ratio = (a: number, b: number): number => a / b;
const fmtRatio = (r: number): string => (Number.isFinite(r) ? `${r.toFixed(r < 0.1 ? 3 : 2)}×` : "n/a");
/** "met" / "NOT met" for a figure and its target, "n/a" when the figure is missing. */
const met = (figure: number, ok: (x: number) => boolean): string =>
  Number.isNaN(figure) ? "n/a" : ok(figure) ? "met" : "NOT met";
function usage(u: ProcUsage | undefined): string {
  if (!u) return "n/a";
  return `${u.cores.toFixed(2)} cores (${u.cpuSeconds.toFixed(1)} CPU-s in ${u.wallSeconds.toFixed(1)} s), RSS up to ${mib(u.peakRssKiB)}`;
}
function left(): number {
  return RUN_DEADLINE - Date.now();
}

// ---- the machine ----

function commandLine(): string {
  if (process.env.npm_lifecycle_event === "bench")
    return `npm run bench${ARGV.length > 0 ? ` -- ${ARGV.join(" ")}` : ""}`;
  const script = relative(REPO, fileURLToPath(import.meta.url));
  return `node ${script}${ARGV.length > 0 ? ` ${ARGV.join(" ")}` : ""}`;
}

function missingPrerequisites(): string | undefined {
  const missing = ["iperf3", "redis-server", "redis-cli", "redis-benchmark"].filter((p) => !onPath(p));
  if (missing.length === 0) return undefined;
  const packages = new Set(
    missing.map((p) => (p === "iperf3" ? "iperf3" : p === "redis-server" ? "redis-server" : "redis-tools")),
  );
  return `missing ${missing.join(", ")} on PATH; install with: apt-get install -y ${[...packages].join(" ")}`;
}

// ---- Tributary's tools ----

/**
 * Deletes a topic written by an earlier phase and waits until its partition directories are gone, so the
 * pages that cached its files are free again and the next phase's appends reuse them.
 */
async function deleteTopic(broker: BrokerHarness, topic: string): Promise<void> {
  const { cmd, argv } = tributaryCommand(DIST, [
    "topics",
    "--bootstrap-server",
    broker.bootstrap,
    "--delete",
    "--topic",
    topic,
  ]);
  const r = await spawnChild(cmd, argv, { timeoutMs: 30_000, cwd: REPO }).done;
  if (r.code !== 0)
    throw new Error(`tributary topics --delete --topic ${topic}: exit ${r.code} (${tail(r)})`);
  const deadline = Date.now() + 30_000;
  while (readdirSync(broker.logDir).some((d) => d.startsWith(`${topic}-`))) {
    if (Date.now() > deadline)
      throw new Error(`the partition directories of ${topic} were not removed in 30 s`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

async function createTopic(bootstrap: string, topic: string): Promise<void> {
  const { cmd, argv } = tributaryCommand(DIST, [
    "topics",
    "--bootstrap-server",
    bootstrap,
    "--create",
    "--topic",
    topic,
    "--partitions",
    String(PARTITIONS),
    "--replication-factor",
    "1",
  ]);
  const r = await spawnChild(cmd, argv, { timeoutMs: 30_000, cwd: REPO }).done;
  if (r.code !== 0)
    throw new Error(`tributary topics --create --topic ${topic}: exit ${r.code} (${tail(r)})`);
}

interface Phase<T> {
  readonly result: T;
  /** Broker and tool during the tool's own measured interval. */
  readonly broker: ProcUsage | undefined;
  readonly client: ProcUsage | undefined;
}

/** Arrival time (Date.now()) of each stdout line of a tool. */
type LineTimes = ReadonlyMap<string, number>;

/**
 * Runs a tool as a child process while sampling it and the broker. `parse` reads its output and returns
 * the figures and the interval the tool measured them over ([from, to], Date.now() values), which is the
 * window the CPU figures are taken over (the tool's start-up and shutdown are left out). Dirty pages of the
 * phases before are written out first (`sync`), so their writeback does not stall this phase's appends.
 */
async function sampled<T>(
  broker: BrokerHarness,
  args: string[],
  timeoutMs: number,
  parse: (r: Finished, lines: LineTimes) => { result: T; window: readonly [number, number] },
): Promise<Phase<T>> {
  spawnSync("sync");
  const sampler = new ProcSampler();
  sampler.add("broker", broker.pid!);
  const lines = new Map<string, number>();
  const { cmd, argv } = tributaryCommand(DIST, args);
  const child = spawnChild(cmd, argv, {
    timeoutMs,
    echo: "    | ",
    cwd: REPO,
    onLine: (l, at) => lines.set(l.trim(), at),
  });
  sampler.add("client", child.pid);
  sampler.start();
  const r = await child.done;
  sampler.stop();
  if (broker.lastExit) throw new Error(`the broker exited (${JSON.stringify(broker.lastExit)})`);
  const { result, window } = parse(r, lines);
  return {
    result,
    broker: sampler.usage("broker", window[0], window[1]),
    client: sampler.usage("client", window[0], window[1]),
  };
}

function produceArgs(
  bootstrap: string,
  topic: string,
  records: number,
  throughput: number,
  options: { warmupRecords?: number; lingerMs?: number } = {},
): string[] {
  const props = PRODUCER_PROPS.map((p) =>
    p.startsWith("linger.ms=") && options.lingerMs !== undefined ? `linger.ms=${options.lingerMs}` : p,
  );
  return [
    "producer-perf-test",
    ...(options.warmupRecords ? ["--warmup-records", String(options.warmupRecords)] : []),
    "--topic",
    topic,
    "--num-records",
    String(records),
    "--record-size",
    String(RECORD_SIZE),
    "--throughput",
    String(throughput),
    "--producer-props",
    `bootstrap.servers=${bootstrap}`,
    ...props,
  ];
}

interface LatencyResult {
  whole: ProducerSummary;
  steady: ProducerSummary;
}

function parseLatency(
  records: number,
): (r: Finished, lines: LineTimes) => { result: LatencyResult; window: readonly [number, number] } {
  const whole = parseProducer(records);
  return (r, lines) => {
    const w = whole(r, lines);
    const steady = producerSummary(r.stdout, true);
    if (!steady) throw new Error(`producer-perf-test printed no steady-state summary (${tail(r)})`);
    rawLines.push(steady.line);
    return { result: { whole: w.result, steady }, window: w.window };
  };
}

function parseProducer(
  records: number,
): (r: Finished, lines: LineTimes) => { result: ProducerSummary; window: readonly [number, number] } {
  return (r, lines) => {
    const s = producerSummary(r.stdout);
    if (r.code !== 0 || !s) throw new Error(`producer-perf-test: exit ${r.code ?? r.signal} (${tail(r)})`);
    if (s.records !== records) throw new Error(`producer-perf-test sent ${s.records} of ${records} records`);
    rawLines.push(s.line);
    // The summary is printed as the measurement ends; it lasted records ÷ records/s.
    const end = lines.get(s.line) ?? Date.now();
    return { result: s, window: [end - (s.records / s.recordsPerSec) * 1000, end] };
  };
}

function parseConsumer(
  records: number,
): (r: Finished) => { result: ConsumerSummary; window: readonly [number, number] } {
  return (r) => {
    const s = consumerSummary(r.stdout);
    if (r.code !== 0 || !s) throw new Error(`consumer-perf-test: exit ${r.code ?? r.signal} (${tail(r)})`);
    rawLines.push(s.line);
    if (s.messages !== records)
      throw new Error(`consumer-perf-test read ${s.messages} of ${records} records (${s.warning ?? ""})`);
    // fetch.time.ms is the end of the run: the figures below leave the group join out.
    return { result: s, window: [s.endMs - s.fetchTimeMs, s.endMs] };
  };
}

// ---- the run ----

interface Figures {
  iperf?: IperfResult;
  redis?: RedisStreamsResult;
  startMs?: number;
  idleRssKiB?: number;
  produce?: Phase<ProducerSummary>;
  /** consumer-perf-test over the records of the produce step, from the consumer's start. */
  consumeCold?: Phase<ConsumerSummary>;
  /** consumer-perf-test over --consume-records records: the figure the target is judged on. */
  consume?: Phase<ConsumerSummary>;
  /** By linger.ms. */
  latency: Map<number, Phase<LatencyResult>>;
  latencyTarget?: number;
  /** RSS of a fresh broker idle with IDLE_TOPICS × IDLE_PARTITIONS partitions. */
  idleRss1000KiB?: number;
}

/**
 * Issue 5's memory target: a fresh broker, 10 topics × 100 partitions created with one CreateTopics
 * request (Tributary's AdminClient), then IDLE_SECONDS without clients; VmRSS from /proc.
 */
async function idleRssPhase(f: Figures): Promise<void> {
  const partitions = IDLE_TOPICS * IDLE_PARTITIONS;
  section(`Tributary idle with ${count(partitions)} partitions (a fresh broker)`);
  const broker = await BrokerHarness.start({ name: "tributary-bench-idle" });
  registerTempDir(broker.root);
  try {
    const admin = new AdminClient({ bootstrapServers: broker.bootstrap });
    const t0 = performance.now();
    try {
      const results = await admin.createTopics(
        Array.from({ length: IDLE_TOPICS }, (_, i) => ({
          name: `bench-idle-${i}`,
          numPartitions: IDLE_PARTITIONS,
          replicationFactor: 1,
        })),
      );
      const bad = results.filter((r) => r.error !== undefined);
      if (bad.length > 0) throw new Error(`CreateTopics: ${bad[0].name}: ${bad[0].error?.message}`);
    } finally {
      await admin.close();
    }
    const createMs = performance.now() - t0;
    await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
    f.idleRss1000KiB = rssKiB(broker.pid!);
    row(
      `broker RSS, idle ${IDLE_SECONDS} s after creating ${IDLE_TOPICS} topics × ${IDLE_PARTITIONS} partitions (created in ${(createMs / 1000).toFixed(1)} s)`,
      mib(f.idleRss1000KiB),
      `target ≤ 150 MB: ${met(f.idleRss1000KiB * 1024, (x) => x <= 150e6)}`,
    );
  } catch (e) {
    failed(`idle RSS with ${partitions} partitions`, e);
  } finally {
    const code = await broker.stop("SIGTERM", 30_000);
    if (code !== 0) failures.push(`the idle broker exited with ${code} after SIGTERM`);
  }
}

async function peers(f: Figures): Promise<void> {
  section(`loopback TCP (iperf3, one stream, ${IPERF_SECONDS} s)`);
  try {
    f.iperf = await iperf3Loopback(IPERF_SECONDS, 30_000);
    row(
      "iperf3 127.0.0.1 bandwidth",
      mbs(f.iperf.bytesPerSecond),
      `iperf3's CPU: sender ${f.iperf.senderCpuPercent.toFixed(0)} %, receiver ${f.iperf.receiverCpuPercent.toFixed(0)} % of a core`,
    );
  } catch (e) {
    failed("iperf3", e);
  }

  section(`Redis Streams (redis-server, no persistence; ${count(OPTIONS.records)} × 1 KiB)`);
  try {
    const r = await redisStreams(OPTIONS.records, STARTED + 90_000, (l) => console.log(`  running ${l}`));
    f.redis = r;
    row(
      `XADD, redis-benchmark -P ${r.pipeline} (Redis ${r.version})`,
      `${count(r.xaddPerSecond)} entries/s = ${mbs(r.xaddPerSecond * r.valueBytes)} (${r.xaddWallSeconds.toFixed(1)} s)`,
    );
    row("  redis-server during XADD", usage(r.server));
    row("  redis-benchmark during XADD", usage(r.client));
    if (r.xrangeError) failed("redis XRANGE", r.xrangeError);
    else
      row(
        `XRANGE s - + COUNT ${r.xrangeCount} (the same ${r.xrangeCount} entries each time), -P 16`,
        `${count(r.xrangePerSecond * r.xrangeCount)} entries/s = ${mbs(r.xrangePerSecond * r.xrangeCount * r.valueBytes)}`,
      );
  } catch (e) {
    failed("Redis Streams", e);
  }
}

/** One consumer-perf-test run over the first `records` records of TOPIC (a new group each time). */
async function consumePhase(
  broker: BrokerHarness,
  records: number,
  what: string,
): Promise<Phase<ConsumerSummary> | undefined> {
  console.log(`  running consumer-perf-test --messages ${records}`);
  try {
    const phase = await sampled(
      broker,
      [
        "consumer-perf-test",
        "--bootstrap-server",
        broker.bootstrap,
        "--topic",
        TOPIC,
        "--messages",
        String(records),
      ],
      Math.max(10_000, Math.min(120_000, left() - 30_000)),
      parseConsumer(records),
    );
    const c = phase.result;
    row(
      what,
      `${count(c.fetchMessagesPerSec)} records/s = ${mbs(c.fetchMibPerSec * 2 ** 20)} (${c.fetchTimeMs} ms for ${count(c.messages)} records; group join ${c.rebalanceMs} ms before)`,
    );
    row("  broker during consume", usage(phase.broker));
    row("  consumer-perf-test during consume", usage(phase.client));
    return phase;
  } catch (e) {
    failed(`consume (${count(records)} records)`, e);
    return undefined;
  }
}

async function tributaryPhases(f: Figures): Promise<void> {
  const records = OPTIONS.records;
  section(
    `Tributary (one broker, ${PARTITIONS} partitions, ${count(records)} × 1 KiB, ${PRODUCER_PROPS.join(" ")})`,
  );
  const t0 = performance.now();
  const broker = await BrokerHarness.start({
    name: "tributary-bench",
    overrides: { "num.partitions": String(PARTITIONS) },
  });
  registerTempDir(broker.root);
  try {
    f.startMs = performance.now() - t0;
    row(
      "broker spawn → ApiVersions answered",
      `${f.startMs.toFixed(0)} ms`,
      `target ≤ 1 s: ${met(f.startMs, (x) => x <= 1000)}`,
    );
    await createTopic(broker.bootstrap, TOPIC);
    await createTopic(broker.bootstrap, latencyTopic(LATENCY_LINGERS[0]));
    f.idleRssKiB = rssKiB(broker.pid!);
    row(`broker RSS, idle with 2 topics × ${PARTITIONS} partitions`, mib(f.idleRssKiB));

    console.log(`  running producer-perf-test --num-records ${records} --throughput -1`);
    try {
      f.produce = await sampled(
        broker,
        produceArgs(broker.bootstrap, TOPIC, records, -1),
        Math.max(10_000, Math.min(150_000, left() - 60_000)),
        parseProducer(records),
      );
      const p = f.produce.result;
      row(
        "produce, unthrottled",
        `${count(p.recordsPerSec)} records/s = ${mbs(p.recordsPerSec * RECORD_SIZE)}; latency avg ${p.avgMs} ms, p50 ${p.p50Ms} ms, p99 ${p.p99Ms} ms, max ${p.maxMs} ms`,
      );
      row("  broker during produce", usage(f.produce.broker));
      row("  producer-perf-test during produce", usage(f.produce.client));
    } catch (e) {
      failed("produce", e);
    }

    if (f.produce) {
      f.consumeCold = await consumePhase(
        broker,
        records,
        `consume, the first ${count(records)} records (fetch.MB.sec, fetch.nMsg.sec: after the group join)`,
      );
      const more = OPTIONS.consumeRecords - records;
      if (more > 0) {
        console.log(`  running producer-perf-test --num-records ${more} --throughput -1 (not measured)`);
        try {
          await sampled(
            broker,
            produceArgs(broker.bootstrap, TOPIC, more, -1),
            Math.max(10_000, Math.min(150_000, left() - 60_000)),
            parseProducer(more),
          );
          f.consume = await consumePhase(
            broker,
            OPTIONS.consumeRecords,
            `consume, ${count(OPTIONS.consumeRecords)} records (a new consumer; fetch.MB.sec, fetch.nMsg.sec)`,
          );
        } catch (e) {
          failed(`writing ${count(more)} more records to consume`, e);
        }
      } else f.consume = f.consumeCold;

      const half = Math.max(1, Math.round(f.produce.result.recordsPerSec / 2));
      const n = Math.min(records, half * LATENCY_SECONDS);
      const warmup = Math.floor(n * WARMUP_SHARE);
      f.latencyTarget = half;
      let written = TOPIC;
      for (const linger of LATENCY_LINGERS) {
        const topic = latencyTopic(linger);
        console.log(
          `  running producer-perf-test --num-records ${n} --warmup-records ${warmup} --throughput ${half} (linger.ms=${linger})`,
        );
        try {
          await deleteTopic(broker, written);
          if (linger !== LATENCY_LINGERS[0]) await createTopic(broker.bootstrap, topic);
          written = topic;
          const phase = await sampled(
            broker,
            produceArgs(broker.bootstrap, topic, n, half, {
              warmupRecords: warmup,
              lingerMs: linger,
            }),
            Math.max(5_000, Math.min(LATENCY_SECONDS * 3_000, left() - 10_000)),
            parseLatency(n),
          );
          f.latency.set(linger, phase);
          const { whole: w, steady: s } = phase.result;
          row(
            `produce at half the max rate, linger.ms=${linger} (--throughput ${half}, ${count(n)} records, the first ${count(warmup)} warm-up)`,
            `${count(w.recordsPerSec)} records/s; whole run: latency p50 ${w.p50Ms} ms, p95 ${w.p95Ms} ms, p99 ${w.p99Ms} ms, p99.9 ${w.p999Ms} ms, max ${w.maxMs} ms; steady state: p50 ${s.p50Ms} ms, p95 ${s.p95Ms} ms, p99 ${s.p99Ms} ms, p99.9 ${s.p999Ms} ms, max ${s.maxMs} ms`,
            `p99 target ≤ 5 ms (steady state): ${met(s.p99Ms, (x) => x <= 5)}${linger > 0 ? ` (linger.ms=${linger} alone holds a record up to ${linger} ms)` : ""}`,
          );
          row(`  broker at half rate, linger.ms=${linger}`, usage(phase.broker));
          row(`  producer-perf-test at half rate, linger.ms=${linger}`, usage(phase.client));
        } catch (e) {
          failed(`latency at half rate (linger.ms=${linger})`, e);
        }
      }
    }
    if (!broker.lastExit) row("broker RSS at the end", mib(rssKiB(broker.pid!)));
    if (broker.lastExit) failures.push(`the broker exited: ${JSON.stringify(broker.lastExit)}`);
    else {
      const code = await broker.stop("SIGTERM", 30_000);
      if (code !== 0) failures.push(`the broker exited with ${code} after SIGTERM`);
    }
  } finally {
    await broker.close();
  }
}

function ratios(f: Figures): void {
  section("ratios");
  const loop = f.iperf?.bytesPerSecond ?? Number.NaN;
  const xadd = f.redis ? f.redis.xaddPerSecond : Number.NaN;
  const xaddBytes = f.redis ? f.redis.xaddPerSecond * f.redis.valueBytes : Number.NaN;
  const xrangeBytes = f.redis
    ? f.redis.xrangePerSecond * f.redis.xrangeCount * f.redis.valueBytes
    : Number.NaN;
  const produceBytes = f.produce ? f.produce.result.recordsPerSec * RECORD_SIZE : Number.NaN;
  const produceRecords = f.produce ? f.produce.result.recordsPerSec : Number.NaN;
  const consumeBytes = f.consume ? f.consume.result.fetchMibPerSec * 2 ** 20 : Number.NaN;
  const r1 = ratio(produceBytes, xaddBytes);
  row("produce MB/s ÷ Redis XADD MB/s", fmtRatio(r1), `target ≥ 1.0×: ${met(r1, (x) => x >= 1)}`);
  row("produce records/s ÷ Redis XADD entries/s", fmtRatio(ratio(produceRecords, xadd)));
  row("produce MB/s ÷ iperf3 loopback", fmtRatio(ratio(produceBytes, loop)));
  const consumed = f.consume ? count(f.consume.result.messages) : "?";
  if (f.consumeCold && f.consumeCold !== f.consume) {
    const cold = f.consumeCold.result;
    row(
      `consume MB/s ÷ iperf3 loopback, the first ${count(cold.messages)} records`,
      fmtRatio(ratio(cold.fetchMibPerSec * 2 ** 20, loop)),
    );
  }
  const r4 = ratio(consumeBytes, loop);
  row(
    `consume MB/s ÷ iperf3 loopback, ${consumed} records`,
    fmtRatio(r4),
    `target ≥ 0.5×: ${met(r4, (x) => x >= 0.5)}`,
  );
  row("consume MB/s ÷ Redis XRANGE MB/s", fmtRatio(ratio(consumeBytes, xrangeBytes)));
  if (f.startMs !== undefined)
    row(
      "broker spawn → ApiVersions answered",
      `${f.startMs.toFixed(0)} ms`,
      `target ≤ 1 s: ${met(f.startMs, (x) => x <= 1000)}`,
    );
  if (f.idleRss1000KiB !== undefined)
    row(
      `broker RSS idle with ${count(IDLE_TOPICS * IDLE_PARTITIONS)} partitions`,
      mib(f.idleRss1000KiB),
      `target ≤ 150 MB: ${met(f.idleRss1000KiB * 1024, (x) => x <= 150e6)}`,
    );
  for (const [linger, phase] of f.latency) {
    const { whole, steady } = phase.result;
    row(
      `p99 produce latency at half the max rate, linger.ms=${linger}: steady state (whole run)`,
      `${steady.p99Ms} ms (${whole.p99Ms} ms)`,
      `target ≤ 5 ms: ${met(steady.p99Ms, (x) => x <= 5)}`,
    );
  }
}

function table(): string {
  const lines = ["| measurement | figure | target / note |", "|---|---|---|"];
  for (const r of rows)
    lines.push(
      r.what.startsWith("**") ? `| ${r.what} | | |` : `| ${r.what} | ${r.figure} | ${r.target ?? ""} |`,
    );
  return lines.join("\n");
}

const SECTION_INTRO = `
- Command: \`npm run bench\` (builds, then runs \`node dist/bench/throughput.bench.js\`; source
  \`bench/throughput.bench.ts\`; options after \`--\`: \`--records N\`, default 1000000; \`--no-append\` to
  leave this file alone). It needs iperf3 and Redis: \`apt-get install -y iperf3 redis-server redis-tools\`.
- One run measures loopback TCP bandwidth (one iperf3 stream, 5 s), Redis Streams (a fresh redis-server
  without persistence; \`redis-benchmark -P 64 -n N XADD s '*' f <1 KiB value>\`, then \`XRANGE s - + COUNT
  100\`), and a fresh Tributary broker: \`tributary producer-perf-test\` (N records of 1 KiB, 8 partitions,
  acks=1, batch.size=1048576, linger.ms=5, unthrottled), \`tributary consumer-perf-test\` on the same
  records (its fetch.MB.sec, which leaves out the group join: with Kafka's default
  group.initial.rebalance.delay.ms that is 3 s of no fetching), and producer-perf-test at half the
  measured records/s for the p50/p99 latency, with the first fifth of its records \`--warmup-records\`
  (Kafka's KIP-1052 flag: the steady-state summary leaves them out), once with linger.ms=5 and once with
  linger.ms=0, each into a topic of its own after the topic written before it is deleted (since
  2026-11-29 23:30 UTC: see "Latency and the page cache's growth"); then a fresh broker's RSS 10 s after
  creating 10 topics × 100 partitions. Broker and client CPU (utime + stime) and RSS are sampled from
  /proc every 200 ms and taken over the interval each tool measured itself (its start-up and shutdown
  left out).
- redis-benchmark 7.0 neither substitutes \`__data__\` nor applies \`-d\` in a custom command (it would
  store the 8 bytes "__data__"), so the 1 KiB value is given literally and the bench checks the stored
  entries (count and value length).
- MB/s = 10^6 bytes of record data (values) per second; the perf tools' own lines, quoted below each
  run, print Kafka's MB/sec, which is MiB/s. "cores" = CPU seconds per wall-clock second.
`;

function appendToDocs(f: Figures, machineLine: string): void {
  const now = new Date();
  const stamp = `${now.toISOString().slice(0, 10)} ${now.toISOString().slice(11, 16)} UTC`;
  const run = [
    `### Run of ${stamp}`,
    "",
    `- Command: \`${commandLine()}\``,
    `- Machine: ${machineLine}.`,
    `- Records: ${count(OPTIONS.records)} × ${RECORD_SIZE} B (consume: also ${count(OPTIONS.consumeRecords)}); build: ${relative(REPO, DIST) || "."}; total run time ${((Date.now() - STARTED) / 1000).toFixed(0)} s.`,
    f.latencyTarget ? `- Half rate: --throughput ${f.latencyTarget} records/s.` : "",
    failures.length > 0 ? `- Failures: ${failures.join("; ")}` : "",
    "",
    table(),
    "",
    "The tools' summary lines, as printed:",
    "",
    "```",
    ...rawLines,
    "```",
  ]
    .filter((l, i, a) => l !== "" || a[i - 1] !== "")
    .join("\n");
  const doc = join(REPO, "docs/benchmarks/throughput.md");
  appendRunToSection(doc, "## Throughput (issue 5)", SECTION_INTRO, run);
  console.log(`\nappended this run to ${relative(REPO, doc)}`);
  console.log("update the Throughput rows of the table in docs/benchmarks.md (npm run check:benchmarks)");
}

async function main(): Promise<void> {
  installCleanup();
  // Every step has its own deadline; this bounds the sum (cleanup runs from the exit hook).
  setTimeout(
    () => {
      console.error(
        `throughput.bench: the run deadline passed (${(RUN_DEADLINE + 30_000 - STARTED) / 1000} s); stopping`,
      );
      process.exit(1);
    },
    RUN_DEADLINE + 30_000 - Date.now(),
  ).unref();
  const missing = missingPrerequisites();
  if (missing) fail(missing);
  if (!existsSync(join(DIST, "src/cli/main.js")))
    fail(`no compiled CLI at ${join(DIST, "src/cli/main.js")}; run \`npm run build\` first`);
  const machine = `${machineLine()}; load average at start ${loadAverage()}`;
  console.log(`Throughput benchmark: ${count(OPTIONS.records)} records of ${RECORD_SIZE} B`);
  console.log(`machine: ${machine}`);
  const host = hostMemoryLine();
  if (host) console.log(host);
  console.log(`build: ${DIST}`);
  if (loadavg()[0] > 0.5)
    console.log(`note: the 1-minute load average is ${loadavg()[0].toFixed(2)}; other work shares the CPUs`);
  const f: Figures = { latency: new Map() };
  await peers(f);
  try {
    await tributaryPhases(f);
  } catch (e) {
    failed("broker", e);
  }
  await idleRssPhase(f);
  ratios(f);
  console.log(`\n${table()}`);
  if (rawLines.length > 0) console.log(`\n${rawLines.join("\n")}`);
  if (failures.length > 0) {
    console.log("\nfailures:");
    for (const x of failures) console.log(`- ${x}`);
    process.exitCode = 1;
  }
  console.log(`\ntotal run time ${((Date.now() - STARTED) / 1000).toFixed(0)} s`);
  if (OPTIONS.append) appendToDocs(f, machine);
  else console.log("--no-append: docs/benchmarks/throughput.md left alone");
}

await main();
