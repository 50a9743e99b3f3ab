// Cluster failover benchmark (issue 16): a real ZooKeeper and real broker processes on this machine. Run
// with `npm run bench:cluster` (options after `--`: `--brokers N` default 3, `--failover-topics N` default
// 10 and `--failover-partitions N` per topic default 100 (RF 3, or N when fewer brokers), `--topics N`
// default 100 and `--partitions N` per topic default 100 with `--rf N` default 2 for the controller run,
// `--batch N` topics per CreateTopics request, default 1, `--session-timeout MS` default 6000,
// `--create-budget S` bound in seconds on creating the controller run's partitions, default 240 (fewer
// whole requests are made when the rate seen says the rest would not fit, and the run says so),
// `--poll-gap MS` pause between two Metadata requests of one poller, default 10, `--only 1,2,3` the runs
// to do (3 includes 4), `--keep-logs DIR` writes every broker's output there, `--broker-node-option X`
// (repeatable) adds a Node option to the brokers, e.g. `--prof`; `--repeat N` does the selected runs N times
// and ends with each figure's median and range over them, CPU-seconds per 1,000 partitions included).
//
// Topics are created one per CreateTopics request: a broker applies a LeaderAndIsr synchronously and
// fsyncs each new leader's leader-epoch-checkpoint, so one request of 10 × 100 partitions stalled every
// broker's event loop ~8 s on this machine, past the 6 s ZooKeeper session, and the cluster re-elected
// its controller before the failover could be measured (docs/benchmarks.md).
//
// One ZooKeeper server (test/support/zookeeper-harness.ts, tickTime 500) and, per run, a fresh cluster of
// brokers (test/support/broker-harness.ts: `tributary server-start`, or TRIBUTARY_DIST's build) with
// broker.id 0..N-1, `zookeeper.connect=<zk>/<a chroot per run>` and zookeeper.session.timeout.ms 6000;
// everything else is Kafka's defaults. Every broker runs with a tiny preload (`--import data:…`) that
// prints the event loop's delay (perf_hooks.monitorEventLoopDelay, 10 ms resolution, as the broker's
// nodejs_eventloop_lag_* metrics) once a second to stderr, because the broker's /metrics endpoint is only
// served once its logs are loaded. The bench watches znodes with its own ZooKeeper session
// (ZooKeeperMetadataStore: one-shot watches on /brokers/ids/<id> and /controller) and polls Metadata v12
// on one connection per surviving broker (one request at a time, `--poll-gap` between them): a time
// "seen from broker b" is the arrival of the first response of b that shows the change.
// 1. Controlled shutdown: 10 topics × 100 partitions, RF 3, created with CreateTopics v7 on the
//    controller; once every partition has a leader and a full ISR on every broker, SIGTERM to a broker
//    that is not the controller (it leads ~1/3). Times from the signal: first and last of the partitions
//    it led with another leader, seen from each survivor; its /brokers/ids znode gone; its process exit.
// 2. The same on a fresh cluster with SIGKILL: the leaders move once the controller sees the znode go,
//    which is when ZooKeeper expires the session (zookeeper.session.timeout.ms); the controller's part is
//    znode gone → leaders moved.
// 3. Controller failover: 100 topics × 100 partitions, RF 2 (with RF 1 a dead broker's partitions could
//    have no live leader at all), fresh cluster; SIGKILL of the controller; /controller gone (session
//    expiry), a new /controller, and the first moment every partition has a live leader seen from each
//    survivor. The new controller's log lines split its part (elected, context initialized).
// 4. The killed controller restarts (an unclean restart of its ~2/3 of the replicas): spawn → "starting",
//    logs loaded (its "Loaded N logs" line), registered in ZooKeeper, ApiVersions answered (one request
//    sent as soon as the port accepts), "started", back in every ISR; the event-loop delay while it loads
//    and while it catches up; whether its ZooKeeper session timed out or expired.
// Prints a table and the findings; exits 1 when something failed. The run is bounded to 10 minutes (per
// repetition);
// temporary directories are removed.

import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TRIBUTARY_NODE_OPTIONS } from "../src/cli/node-options.js";
import { setLogLevel } from "../src/common/logger.js";
import { Apis } from "../src/protocol/generated/api-table.js";
import { defaultApiVersionsRequest } from "../src/protocol/generated/messages/ApiVersionsRequest.js";
import type { MetadataResponse } from "../src/protocol/generated/messages/MetadataResponse.js";
import { ZooKeeperMetadataStore } from "../src/server/metadata/zookeeper-metadata-store.js";
import { WireClient } from "../test/server/wire-client.js";
import { BrokerHarness, sleep } from "../test/support/broker-harness.js";
import { ZooKeeperHarness } from "../test/support/zookeeper-harness.js";
import { checkArguments } from "./support/arguments.js";
import { installCleanup } from "./support/child-processes.js";
import { machineLine } from "./support/machine.js";
import { cpuSeconds } from "./support/proc-sampler.js";
import { BenchReport } from "./support/report.js";

checkArguments("cluster.bench", [
  "brokers",
  "failover-topics",
  "failover-partitions",
  "topics",
  "partitions",
  "rf",
  "session-timeout",
  "create-budget",
  "poll-gap",
  "batch",
  "only",
  "keep-logs",
  "broker-node-option",
  "repeat",
]);

/** `--name N`: an integer >= `min`, or one line naming the option, the value and what was expected. */
function arg(name: string, dflt: number, min = 0): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return dflt;
  const raw = process.argv[i + 1];
  const v = Number(raw);
  if (raw === undefined || !Number.isInteger(v) || v < min) {
    console.error(`cluster.bench: --${name} needs an integer >= ${min}, got ${JSON.stringify(raw ?? "")}`);
    process.exit(2);
  }
  return v;
}

const BROKERS = arg("brokers", 3, 1);
const FO_TOPICS = arg("failover-topics", 10, 1);
const FO_PARTITIONS = arg("failover-partitions", 100, 1);
const FO_RF = Math.min(3, BROKERS);
/** Times each selected run is done (issue 34: medians of 3). */
const REPEAT = arg("repeat", 1, 1);
const CT_TOPICS = arg("topics", 100, 1);
const CT_PARTITIONS = arg("partitions", 100, 1);
const CT_RF = Math.min(arg("rf", 2, 1), BROKERS);
const SESSION_TIMEOUT_MS = arg("session-timeout", 6000, 1);
const CREATE_BUDGET_MS = arg("create-budget", 240, 1) * 1000;
const POLL_GAP_MS = arg("poll-gap", 10);
const CREATE_BATCH = arg("batch", 1, 1);
/** Which runs to do (1: SIGTERM, 2: SIGKILL, 3: controller failover and 4: its restart). */
const ONLY = new Set(
  (process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : "1,2,3")
    .split(",")
    .map(Number),
);
/** Where to write every broker's output when its cluster is closed (none by default). */
const KEEP_LOGS =
  process.argv.indexOf("--keep-logs") >= 0
    ? process.argv[process.argv.indexOf("--keep-logs") + 1]
    : undefined;

const STARTED = Date.now();
const RUN_DEADLINE = STARTED + REPEAT * 10 * 60_000 - 20_000;
const METADATA_VERSION = 12;

/** Prints the event loop's delay once a second: "[bench-eld] <epoch ms> <max ms> <p99 ms> <mean ms>". */
const ELD_PRELOAD = `import { monitorEventLoopDelay } from "node:perf_hooks";
const h = monitorEventLoopDelay({ resolution: 10 });
h.enable();
setInterval(() => {
  process.stderr.write("[bench-eld] " + Date.now() + " " + (h.max / 1e6).toFixed(1) + " " + (h.percentile(99) / 1e6).toFixed(1) + " " + (h.mean / 1e6).toFixed(1) + "\\n");
  h.reset();
}, 1000).unref();`;
/** Extra Node options for the brokers (`--broker-node-option --prof`, repeatable), for profiling. */
const EXTRA_NODE_OPTIONS = process.argv.flatMap((a, i) =>
  a === "--broker-node-option" && i + 1 < process.argv.length ? [process.argv[i + 1]] : [],
);
const NODE_OPTIONS = [
  ...TRIBUTARY_NODE_OPTIONS,
  `--import=data:text/javascript,${encodeURIComponent(ELD_PRELOAD)}`,
  ...EXTRA_NODE_OPTIONS,
];

// ---- output ----

const report = new BenchReport();
let failed = false;
const record = (what: string, value: string): void => report.record(what, value);
const phase = (title: string): void => report.phase(title);
const finding = (f: string): void => report.finding(f);
function note(s: string): void {
  console.log(`  (${s})`);
}

const ms = (x: number | undefined): string =>
  x === undefined || Number.isNaN(x)
    ? "—"
    : x >= 10_000
      ? `${(x / 1000).toFixed(2)} s`
      : `${x.toFixed(0)} ms`;
const since = (t0: number, t: number | undefined): string => (t === undefined ? "never" : ms(t - t0));

function left(): number {
  const l = RUN_DEADLINE - Date.now();
  if (l <= 0) throw new Error("the 10-minute run deadline passed");
  return l;
}

function sh(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: "utf8" });
  return (r.stdout ?? "").trim();
}

// ---- broker output ----

/** The text a broker wrote (stdout + stderr) since its last start. */
function sinceLastStart(b: BrokerHarness): { out: string; err: string } {
  const cut = (t: string): string => t.slice(t.lastIndexOf("=== start #"));
  return { out: cut(b.stdout), err: cut(b.stderr) };
}

/** Epoch ms of a log line's "[yyyy-MM-dd HH:mm:ss,SSS]" stamp (local time, as the broker writes it). */
function stampOf(line: string): number | undefined {
  const m = /^\[(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d),(\d{3})\]/.exec(line);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s, f] = m.slice(1).map(Number);
  return new Date(y, mo - 1, d, h, mi, s, f).getTime();
}

/** The first line of the broker's output since its last start (or of all of it) matching `re`, and its stamp. */
function logLine(
  b: BrokerHarness,
  re: RegExp,
  all = false,
  after = 0,
): { line: string; at: number | undefined } | undefined {
  const { out, err } = all ? { out: b.stdout, err: b.stderr } : sinceLastStart(b);
  for (const line of `${out}\n${err}`.split("\n")) {
    if (!re.test(line)) continue;
    const at = stampOf(line);
    if (at !== undefined && at < after) continue;
    return { line, at };
  }
  return undefined;
}

function countLines(b: BrokerHarness, re: RegExp): number {
  const { out, err } = sinceLastStart(b);
  return `${out}\n${err}`.split("\n").filter((l) => re.test(l)).length;
}

/** Lines of the broker's whole output matching `re` stamped at or after `from`. */
function countSince(b: BrokerHarness, re: RegExp, from: number): number {
  return `${b.stdout}\n${b.stderr}`.split("\n").filter((l) => re.test(l) && (stampOf(l) ?? 0) >= from).length;
}

/**
 * What a failover did to the surviving brokers between `from` and `to`: controller elections
 * (/controller_epoch before → after), ZooKeeper session expiries and the worst event-loop stall of each.
 */
async function aftermath(
  c: Cluster,
  survivors: readonly number[],
  epochBefore: string,
  from: number,
  to: number,
): Promise<void> {
  const epoch = (await c.store.get("/controller_epoch"))?.data.toString("utf8");
  const expiries = survivors.map((i) => countSince(c.brokers[i], /Session expired/, from));
  const stalls = survivors.map((i) =>
    Math.max(
      0,
      ...eldWindows(c.brokers[i])
        .filter((w) => w.at > from && w.at <= to + 1000)
        .map((w) => w.max),
    ),
  );
  record(
    "survivors meanwhile: /controller_epoch before → after / ZooKeeper session expiries / worst event-loop stall",
    `${epochBefore} → ${epoch} / ${survivors.map((i, j) => `broker ${i}: ${expiries[j]}`).join(", ")} / ${survivors.map((i, j) => `broker ${i}: ${ms(stalls[j])}`).join(", ")}`,
  );
  if (expiries.some((n) => n > 0)) {
    failed = true;
    for (const i of survivors) {
      const l = logLine(c.brokers[i], /Client session timed out/, true, from);
      if (l) finding(`cluster ${c.label}, broker ${i} after the failure: ${l.line}`);
    }
    finding(
      `cluster ${c.label}: the failover stalled survivors' event loops past the ZooKeeper session timeout: ${expiries.reduce((a, b) => a + b, 0)} session expiries, /controller_epoch ${epochBefore} → ${epoch}`,
    );
  }
}

interface EldWindow {
  readonly at: number;
  readonly max: number;
  readonly p99: number;
  readonly mean: number;
}

/** The broker's event-loop delay windows (one a second) since its last start. */
function eldWindows(b: BrokerHarness): EldWindow[] {
  const out: EldWindow[] = [];
  for (const m of sinceLastStart(b).err.matchAll(/^\[bench-eld\] (\d+) ([\d.]+) ([\d.]+) ([\d.]+)$/gm))
    out.push({ at: Number(m[1]), max: Number(m[2]), p99: Number(m[3]), mean: Number(m[4]) });
  return out;
}

/** A summary of the windows ending in (from, to]. */
function eldSummary(windows: readonly EldWindow[], from: number, to: number): string {
  const w = windows.filter((x) => x.at > from && x.at <= to + 1000);
  if (w.length === 0) return "no samples";
  const maxes = w.map((x) => x.max).sort((a, b) => a - b);
  const mean = w.reduce((s, x) => s + x.mean, 0) / w.length;
  const over = (t: number): number => maxes.filter((m) => m > t).length;
  return `max ${ms(maxes[maxes.length - 1])}, median of the 1-s maxima ${ms(maxes[Math.floor(maxes.length / 2)])}, mean ${ms(mean)}; ${over(100)} of ${w.length} seconds with a stall > 100 ms, ${over(1000)} > 1 s`;
}

/** The largest 1-s maximum of the windows ending in (from, to], in ms (NaN without one). */
function eldMax(windows: readonly EldWindow[], from: number, to: number): number {
  const w = windows.filter((x) => x.at > from && x.at <= to + 1000);
  return w.length === 0 ? Number.NaN : Math.max(...w.map((x) => x.max));
}

// ---- figures compared across repeated runs (`--repeat N`) ----

/** Each figure's value in every repetition, in the order first measured. */
const figures = new Map<string, number[]>();

function figure(name: string, value: number | undefined): void {
  if (value === undefined || !Number.isFinite(value)) return;
  const v = figures.get(name) ?? [];
  v.push(value);
  figures.set(name, v);
}

/** The median and range of every figure, one line each (a figure missing from a run has fewer values). */
function printFigures(): void {
  if (figures.size === 0) return;
  console.log(`\n| figure | median of ${REPEAT} | range | runs |`);
  console.log("|---|---|---|---|");
  for (const [name, v] of figures) {
    const s = [...v].sort((a, b) => a - b);
    const median = s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    const f = (x: number): string => (Number.isInteger(x) ? String(x) : x.toFixed(2));
    console.log(`| ${name} | ${f(median)} | ${f(s[0])}–${f(s[s.length - 1])} | ${v.length} |`);
  }
}

// ---- Metadata ----

interface PartitionInfo {
  readonly leader: number;
  readonly isr: readonly number[];
  readonly replicas: readonly number[];
}
type Partitions = Map<string, PartitionInfo>;

async function metadata(
  c: WireClient,
  topics: readonly string[] | null,
  timeoutMs: number,
): Promise<MetadataResponse> {
  const id = c.send(Apis.Metadata, METADATA_VERSION, {
    topics: topics === null ? null : topics.map((name) => ({ topicId: "AAAAAAAAAAAAAAAAAAAAAA", name })),
    allowAutoTopicCreation: false,
    includeClusterAuthorizedOperations: false,
    includeTopicAuthorizedOperations: false,
  });
  const res = await c.receive(Apis.Metadata, METADATA_VERSION, timeoutMs);
  if (res.correlationId !== id) throw new Error(`correlation id ${res.correlationId}, expected ${id}`);
  return res.body;
}

function partitionsOf(res: MetadataResponse, prefix: string): Partitions {
  const out: Partitions = new Map();
  for (const t of res.topics) {
    if (t.errorCode !== 0 || !t.name?.startsWith(prefix)) continue;
    for (const p of t.partitions)
      out.set(`${t.name}-${p.partitionIndex}`, {
        leader: p.errorCode === 0 || p.errorCode === 5 /* LEADER_NOT_AVAILABLE */ ? p.leaderId : -1,
        isr: p.isrNodes,
        replicas: p.replicaNodes,
      });
  }
  return out;
}

async function metadataOf(
  b: BrokerHarness,
  topics: readonly string[] | null,
  prefix: string,
): Promise<{ parts: Partitions; controllerId: number; brokers: number[] }> {
  const c = await WireClient.connect(b.port);
  try {
    const res = await metadata(c, topics, Math.min(30_000, left()));
    return {
      parts: partitionsOf(res, prefix),
      controllerId: res.controllerId,
      brokers: res.brokers.map((x) => x.nodeId).sort((x, y) => x - y),
    };
  } finally {
    c.close();
  }
}

interface PollResult {
  /** First response showing fewer pending partitions than at the start. */
  firstAt?: number;
  /** First response showing none pending. */
  doneAt?: number;
  polls: number;
  lastPending: number;
  lastError?: string;
  last?: Partitions;
}

/**
 * Polls Metadata on one connection to `b` (reconnecting after an error) until `pending` is 0 or `until`;
 * `stop()` ends it early.
 */
async function poll(
  b: BrokerHarness,
  topics: readonly string[] | null,
  prefix: string,
  pending: (p: Partitions) => number,
  initial: number,
  until: number,
  gapMs: number,
  stop: () => boolean = () => false,
): Promise<PollResult> {
  const r: PollResult = { polls: 0, lastPending: initial };
  let c: WireClient | undefined;
  while (Date.now() < until && !stop()) {
    try {
      c ??= await WireClient.connect(b.port);
      const res = await metadata(c, topics, Math.max(1000, until - Date.now()));
      const at = Date.now();
      r.polls++;
      r.last = partitionsOf(res, prefix);
      r.lastPending = pending(r.last);
      if (r.lastPending < initial && r.firstAt === undefined) r.firstAt = at;
      if (r.lastPending === 0) {
        r.doneAt = at;
        break;
      }
    } catch (e) {
      r.lastError = (e as Error).message.split("\n")[0];
      c?.close();
      c = undefined;
      await sleep(50);
    }
    await sleep(gapMs);
  }
  c?.close();
  return r;
}

// ---- ZooKeeper watches ----

/** Resolves with Date.now() when `path` is deleted (now if absent), or undefined at `until`. */
function whenDeleted(
  store: ZooKeeperMetadataStore,
  path: string,
  until: number,
): Promise<number | undefined> {
  return whenZnode(store, path, until, false);
}

/** Resolves with Date.now() when `path` exists (now if present), or undefined at `until`. */
function whenCreated(
  store: ZooKeeperMetadataStore,
  path: string,
  until: number,
): Promise<number | undefined> {
  return whenZnode(store, path, until, true);
}

function whenZnode(
  store: ZooKeeperMetadataStore,
  path: string,
  until: number,
  present: boolean,
): Promise<number | undefined> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (v: number | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(v);
    };
    const timer = setTimeout(() => settle(undefined), Math.max(0, until - Date.now()));
    const arm = (): void => {
      if (settled) return;
      store
        .exists(path, (ev) => {
          if (settled) return;
          if (ev.type === (present ? "NodeCreated" : "NodeDeleted")) settle(Date.now());
          else arm();
        })
        .then((stat) => {
          if ((stat !== undefined) === present) settle(Date.now());
        })
        .catch(() => setTimeout(arm, 50));
    };
    arm();
  });
}

async function znodeJson<T>(store: ZooKeeperMetadataStore, path: string): Promise<T | undefined> {
  const n = await store.get(path);
  return n ? (JSON.parse(n.data.toString("utf8")) as T) : undefined;
}

// ---- clusters ----

interface Cluster {
  readonly label: string;
  readonly chroot: string;
  readonly brokers: BrokerHarness[];
  readonly store: ZooKeeperMetadataStore;
}

async function startCluster(zk: ZooKeeperHarness, label: string, startTimeoutMs: number): Promise<Cluster> {
  const chroot = `/bench-${label}-${Date.now().toString(36)}`;
  const connect = `${zk.connectString}${chroot}`;
  const t0 = Date.now();
  const started = await Promise.allSettled(
    Array.from({ length: BROKERS }, (_, i) =>
      BrokerHarness.start({
        name: `tributary-bench-cluster-${label}-b${i}`,
        startTimeoutMs,
        nodeOptions: NODE_OPTIONS,
        overrides: {
          "zookeeper.connect": connect,
          "broker.id": String(i),
          "zookeeper.session.timeout.ms": String(SESSION_TIMEOUT_MS),
        },
      }),
    ),
  );
  const brokers: BrokerHarness[] = [];
  for (const s of started) if (s.status === "fulfilled") brokers.push(s.value);
  const bad = started.find((s) => s.status === "rejected");
  if (bad) {
    await Promise.all(brokers.map((b) => b.close()));
    throw new Error(
      `a broker did not start: ${String((bad as PromiseRejectedResult).reason).slice(0, 3000)}`,
    );
  }
  const store = await ZooKeeperMetadataStore.connect(connect, {
    sessionTimeoutMs: 30_000,
    connectionTimeoutMs: 15_000,
    clientName: "bench",
  });
  const cluster: Cluster = { label, chroot, brokers, store };
  // Every broker registered, a controller, and every broker's Metadata listing all of them.
  const want = brokers.map((_, i) => i).join(",");
  const until = Date.now() + Math.min(60_000, left());
  for (;;) {
    let ok = (await store.getChildren("/brokers/ids").catch(() => [])).length === BROKERS;
    ok &&= (await znodeJson<{ brokerid: number }>(store, "/controller").catch(() => undefined)) !== undefined;
    if (ok) {
      const seen = await Promise.all(brokers.map((b) => metadataOf(b, [], "").catch(() => undefined)));
      ok = seen.every((m) => m !== undefined && m.brokers.join(",") === want && m.controllerId >= 0);
    }
    if (ok) break;
    if (Date.now() > until) {
      await closeCluster(cluster);
      throw new Error(`cluster ${label}: brokers not all registered / no controller within 60 s`);
    }
    await sleep(100);
  }
  record(
    `cluster ${label}: ${BROKERS} brokers spawned → registered, controller elected, Metadata lists all`,
    ms(Date.now() - t0),
  );
  return cluster;
}

async function closeCluster(c: Cluster): Promise<void> {
  for (const [i, b] of c.brokers.entries()) {
    const errors = b.levelLines.ERROR ?? 0;
    const warns = b.levelLines.WARN ?? 0;
    if (errors > 0)
      finding(
        `cluster ${c.label}, broker ${i}: ${errors} ERROR and ${warns} WARN lines; first ERROR: ${b.errorLines[0]?.slice(0, 400)}`,
      );
  }
  if (KEEP_LOGS !== undefined) {
    mkdirSync(KEEP_LOGS, { recursive: true });
    for (const [i, b] of c.brokers.entries()) {
      writeFileSync(join(KEEP_LOGS, `cluster-${c.label}-broker-${i}.out`), b.stdout);
      writeFileSync(join(KEEP_LOGS, `cluster-${c.label}-broker-${i}.err`), b.stderr);
    }
    console.log(`  (broker output of cluster ${c.label} written to ${KEEP_LOGS})`);
  }
  await c.store.close().catch(() => undefined);
  // With extra Node options (a profiler) the brokers get a SIGTERM first, so that they write their output.
  if (EXTRA_NODE_OPTIONS.length > 0)
    await Promise.all(c.brokers.map((b) => (b.isRunning ? b.stop("SIGTERM", 30_000) : undefined)));
  await Promise.all(c.brokers.map((b) => b.close()));
}

async function controllerOf(c: Cluster): Promise<number> {
  const z = await znodeJson<{ brokerid: number }>(c.store, "/controller");
  if (z === undefined) throw new Error("no /controller");
  return z.brokerid;
}

const topicName = (prefix: string, i: number): string => `${prefix}${String(i).padStart(4, "0")}`;

/**
 * Creates `topics` topics of `partitions` partitions (replication factor `rf`) with CreateTopics v7 on
 * the controller, CREATE_BATCH topics a request; stops early (whole batches) when the rate so far says the
 * rest would not fit `budgetMs`. Returns the names created.
 */
async function createTopics(
  c: Cluster,
  prefix: string,
  topics: number,
  partitions: number,
  rf: number,
  budgetMs: number,
): Promise<string[]> {
  const controller = c.brokers[await controllerOf(c)];
  const conn = await WireClient.connect(controller.port);
  const names: string[] = [];
  const t0 = Date.now();
  const perRequest: number[] = [];
  let errors = 0;
  try {
    for (let first = 0; first < topics; first += CREATE_BATCH) {
      const batch: string[] = [];
      for (let i = first; i < Math.min(topics, first + CREATE_BATCH); i++) batch.push(topicName(prefix, i));
      const elapsed = Date.now() - t0;
      if (perRequest.length > 0) {
        const avg = elapsed / perRequest.length;
        if (elapsed + avg > budgetMs || Date.now() + avg + 120_000 > RUN_DEADLINE) {
          finding(
            `creation stopped after ${names.length} topics (${names.length * partitions} partitions): the next request would pass the ${ms(budgetMs)} creation budget or the run deadline (${ms(avg)} per request of ${CREATE_BATCH * partitions} partitions)`,
          );
          break;
        }
      }
      const r0 = Date.now();
      const id = conn.send(Apis.CreateTopics, 7, {
        topics: batch.map((name) => ({
          name,
          numPartitions: partitions,
          replicationFactor: rf,
          assignments: [],
          configs: [],
        })),
        timeoutMs: 60_000,
        validateOnly: false,
      });
      const res = await conn.receive(Apis.CreateTopics, 7, Math.min(120_000, left()));
      perRequest.push(Date.now() - r0);
      if (res.correlationId !== id) throw new Error("CreateTopics: wrong correlation id");
      for (const t of res.body.topics) {
        if (t.errorCode !== 0) {
          errors++;
          if (errors <= 3) finding(`CreateTopics ${t.name}: error ${t.errorCode} ${t.errorMessage ?? ""}`);
        }
      }
      names.push(...batch);
    }
  } finally {
    conn.close();
  }
  const total = Date.now() - t0;
  perRequest.sort((a, b) => a - b);
  record(
    `create ${names.length} topics × ${partitions} partitions, RF ${rf} (CreateTopics v7 on the controller, ${CREATE_BATCH} topics/request)`,
    `${ms(total)} (${((names.length * partitions * 1000) / total).toFixed(0)} partitions/s; per request median ${ms(perRequest[Math.floor(perRequest.length / 2)])}, max ${ms(perRequest[perRequest.length - 1])}); topics with an error: ${errors}`,
  );
  return names;
}

/**
 * Waits until every broker's Metadata lists all `total` partitions with a leader and a full ISR; returns
 * the partitions as the controller's broker lists them.
 */
async function waitReady(
  c: Cluster,
  names: readonly string[] | null,
  prefix: string,
  total: number,
  rf: number,
  boundMs: number,
  what: string,
): Promise<Partitions> {
  const t0 = Date.now();
  const until = t0 + Math.min(boundMs, left());
  let status = "";
  for (;;) {
    const seen = await Promise.all(c.brokers.map((b) => metadataOf(b, names, prefix).catch(() => undefined)));
    const counts = seen.map((m) =>
      m === undefined ? -1 : [...m.parts.values()].filter((p) => p.leader >= 0 && p.isr.length === rf).length,
    );
    status = counts.map((n, i) => `broker ${i}: ${n}`).join(", ");
    if (counts.every((n) => n === total)) {
      record(
        `${what}: every broker lists all ${total} partitions with a leader and ${rf} in the ISR`,
        `after ${ms(Date.now() - t0)}`,
      );
      return seen[await controllerOf(c)]!.parts;
    }
    if (Date.now() > until) {
      const m = seen.find((x) => x !== undefined);
      const bad = m
        ? [...m.parts].filter(([, p]) => !(p.leader >= 0 && p.isr.length === rf)).map(([k]) => k)
        : [];
      const topics = new Set(bad.map((k) => k.slice(0, k.lastIndexOf("-"))));
      throw new Error(
        `${what}: not every partition led with a full ISR within ${ms(boundMs)} (${status} of ${total}); ${bad.length} not ready in ${topics.size} topics (${[...topics].slice(0, 5).join(",")}), e.g. ${m ? sample(m.parts, bad) : ""}`,
      );
    }
    await sleep(250);
  }
}

function describeCounts(counts: Map<number, number>): string {
  return [...counts.entries()]
    .sort((x, y) => x[0] - y[0])
    .map(([id, n]) => `${id}: ${n}`)
    .join(", ");
}

/** A few partitions as "t-p leader L replicas [..] isr [..]". */
function sample(parts: Partitions, keys: Iterable<string> = parts.keys(), n = 4): string {
  const out: string[] = [];
  for (const k of keys) {
    const p = parts.get(k);
    out.push(
      p
        ? `${k} leader ${p.leader} replicas [${p.replicas.join(",")}] isr [${p.isr.join(",")}]`
        : `${k} absent`,
    );
    if (out.length >= n) break;
  }
  return out.join("; ");
}

/**
 * What creation did to the cluster before anything is stopped: controller elections (/controller_epoch,
 * 1 when the first controller never changed), ZooKeeper session expiries and the brokers' event-loop delay.
 */
async function setupHealth(c: Cluster, from: number): Promise<void> {
  const epoch = (await c.store.get("/controller_epoch"))?.data.toString("utf8");
  const expiries = c.brokers.map((b) => countLines(b, /Session expired/));
  const worst = c.brokers.map((b) =>
    Math.max(
      0,
      ...eldWindows(b)
        .filter((w) => w.at > from)
        .map((w) => w.max),
    ),
  );
  record(
    "during creation: /controller_epoch (1 = no re-election) / ZooKeeper session expiries per broker / worst event-loop stall per broker",
    `${epoch} / ${expiries.join(", ")} / ${worst.map((w) => ms(w)).join(", ")}`,
  );
  if (Number(epoch) !== 1 || expiries.some((n) => n > 0)) {
    for (const [i, b] of c.brokers.entries()) {
      const timedOut = logLine(b, /Client session timed out/);
      if (timedOut) finding(`cluster ${c.label}, broker ${i} during creation: ${timedOut.line}`);
    }
    finding(
      `cluster ${c.label}: creation stalled the brokers' event loops past the ZooKeeper session timeout: /controller_epoch ${epoch}, session expiries ${expiries.join(", ")}`,
    );
  }
}

function leaderCounts(parts: Partitions): Map<number, number> {
  const out = new Map<number, number>();
  for (const p of parts.values()) out.set(p.leader, (out.get(p.leader) ?? 0) + 1);
  return out;
}

/** Leaders that are not a survivor or were not in the partition's ISR before (an election-rule break). */
function electionViolations(
  before: Partitions,
  after: Partitions,
  keys: Iterable<string>,
  live: number[],
): string[] {
  const bad: string[] = [];
  for (const k of keys) {
    const a = after.get(k);
    const b = before.get(k);
    if (!a || !b || !live.includes(a.leader) || !b.isr.includes(a.leader))
      bad.push(`${k}: leader ${a?.leader} (ISR before [${b?.isr.join(",")}])`);
  }
  return bad;
}

// ---- runs 1 and 2: a broker leading ~1/3 of 1,000 partitions stops ----

async function brokerFailover(zk: ZooKeeperHarness, signal: "SIGTERM" | "SIGKILL"): Promise<void> {
  const label = signal === "SIGTERM" ? "a" : "b";
  phase(
    `run ${signal === "SIGTERM" ? 1 : 2}: ${signal} of a broker leading ~1/${BROKERS} of ${FO_TOPICS * FO_PARTITIONS} partitions (${FO_TOPICS} topics × ${FO_PARTITIONS}, RF ${FO_RF})`,
  );
  const c = await startCluster(zk, label, 60_000);
  try {
    const prefix = `fo${label}-`;
    const total = FO_TOPICS * FO_PARTITIONS;
    const setupStart = Date.now();
    const names = await createTopics(c, prefix, FO_TOPICS, FO_PARTITIONS, FO_RF, 180_000);
    const before = await waitReady(c, names, prefix, total, FO_RF, 120_000, "after creation");
    await setupHealth(c, setupStart);
    const controller = await controllerOf(c);
    const counts = leaderCounts(before);
    const victim = [...counts.entries()]
      .filter(([id]) => id !== controller && id >= 0)
      .sort((x, y) => y[1] - x[1])[0]?.[0];
    if (victim === undefined)
      throw new Error(
        `no broker other than the controller (${controller}) leads a partition: leaders ${describeCounts(counts)}; e.g. ${sample(before)}`,
      );
    const led = new Set([...before].filter(([, p]) => p.leader === victim).map(([k]) => k));
    const survivors = c.brokers.map((_, i) => i).filter((i) => i !== victim);
    record(
      "leaders per broker before / the controller / the stopped broker",
      `${[...counts.entries()]
        .sort((x, y) => x[0] - y[0])
        .map(([id, n]) => `${id}: ${n}`)
        .join(", ")} / ${controller} / ${victim} (leads ${led.size})`,
    );
    const pending = (p: Partitions): number => {
      let n = 0;
      for (const k of led) {
        const l = p.get(k)?.leader ?? -1;
        if (l === victim || l < 0) n++;
      }
      return n;
    };
    const bound = Date.now() + Math.min(signal === "SIGTERM" ? 60_000 : 30_000 + SESSION_TIMEOUT_MS, left());
    const vb = c.brokers[victim];
    const cpu0 = cpuSeconds(c.brokers[controller].pid!);
    const epochBefore = (await c.store.get("/controller_epoch"))?.data.toString("utf8") ?? "?";
    const znodeGone = whenDeleted(c.store, `/brokers/ids/${victim}`, bound);
    await sleep(200); // the watch is set
    const t0 = Date.now();
    let exitAt: number | undefined;
    const exited = vb.stop(signal, Math.max(1000, bound - Date.now())).then(
      (code) => {
        exitAt = Date.now();
        return code;
      },
      (e: Error) => {
        finding(`${signal}: the broker did not exit: ${e.message.split("\n")[0]}`);
        return null;
      },
    );
    const polls = await Promise.all(
      survivors.map((i) => poll(c.brokers[i], names, prefix, pending, led.size, bound, POLL_GAP_MS)),
    );
    const code = await exited;
    const gone = await znodeGone;
    const cpu = cpuSeconds(c.brokers[controller].pid!) - cpu0;
    for (const [j, i] of survivors.entries()) {
      const p = polls[j];
      const who = `broker ${i}${i === controller ? " (controller)" : ""}`;
      record(
        `${signal} → all ${led.size} partitions it led have another leader, seen from ${who}`,
        `${since(t0, p.doneAt)} (first of them: ${since(t0, p.firstAt)}; ${p.polls} Metadata polls)`,
      );
      if (p.doneAt === undefined) {
        failed = true;
        finding(
          `${signal}: seen from ${who}, ${p.lastPending} of ${led.size} partitions still had broker ${victim} (or no leader) as leader after ${ms(bound - t0)}${p.lastError ? ` (last error: ${p.lastError})` : ""}`,
        );
      } else {
        const bad = electionViolations(before, p.last!, led, survivors);
        if (bad.length > 0) {
          failed = true;
          finding(
            `${signal}: ${bad.length} new leaders break the election rule, e.g. ${bad.slice(0, 3).join("; ")}`,
          );
        }
      }
    }
    record(`${signal} → /brokers/ids/${victim} deleted`, since(t0, gone));
    record(
      `${signal} → broker process exited`,
      `${since(t0, exitAt)} (exit code ${code ?? vb.lastExit?.signal})`,
    );
    const done = Math.max(...polls.map((p) => p.doneAt ?? Number.NaN));
    if (signal === "SIGKILL" && gone !== undefined)
      record(
        `controller's part: /brokers/ids/${victim} deleted → all moved (slowest survivor)`,
        `${ms(done - gone)} (first partition moved ${ms(Math.min(...polls.map((p) => p.firstAt ?? Number.NaN)) - gone)} after)`,
      );
    record("controller process CPU from the signal to the end of this measurement", `${cpu.toFixed(2)} s`);
    await sleep(1100); // the last event-loop window
    await aftermath(c, survivors, epochBefore, t0, Number.isNaN(done) ? Date.now() : done);

    // The controller's and the stopped broker's own account.
    const cb = c.brokers[controller];
    if (signal === "SIGTERM") {
      const start = logLine(vb, /Starting controlled shutdown/, true, t0 - 1000);
      const okLine = logLine(vb, /Controlled shutdown request returned successfully/, true, t0 - 1000);
      const leaves = logLine(cb, new RegExp(`Broker ${victim} leaves \\d+ partitions led`), true, t0 - 1000);
      record(
        "stopped broker's log: controlled shutdown started / returned successfully (stamps − signal)",
        `${since(t0, start?.at)} / ${since(t0, okLine?.at)}`,
      );
      if (leaves) note(`controller: ${leaves.line.replace(/^\[[^\]]*\] /, "")} at ${since(t0, leaves.at)}`);
      if (!okLine) {
        failed = true;
        finding(
          `SIGTERM: no "Controlled shutdown request returned successfully" in broker ${victim}'s log; its last lines: ${vb.stdout.split("\n").slice(-8).join(" | ")}`,
        );
      }
      const retries = countLines(
        vb,
        /Remaining partitions to move|Error during controlled shutdown|unclean shutdown/,
      );
      if (retries > 0)
        finding(`SIGTERM: broker ${victim} logged ${retries} controlled-shutdown retry/failure lines`);
    } else {
      const noticed = logLine(cb, new RegExp(`deleted brokers: ${victim}\\b`), true, t0 - 1000);
      record(
        `controller's log: "deleted brokers: ${victim}" (stamp − signal; − znode deleted)`,
        `${since(t0, noticed?.at)}; ${gone !== undefined && noticed?.at !== undefined ? ms(noticed.at - gone) : "—"}`,
      );
    }
    // Did the stopped broker leave every ISR?
    await sleep(Math.min(1000, left()));
    const after = await metadataOf(c.brokers[survivors[0]], names, prefix);
    const stillIsr = [...after.parts.values()].filter((p) => p.isr.includes(victim)).length;
    record(
      `partitions whose ISR still lists broker ${victim} (1 s after the end)`,
      `${stillIsr} of ${total}`,
    );
    if (stillIsr > 0)
      finding(`${signal}: ${stillIsr} partitions still list the stopped broker ${victim} in their ISR`);
  } finally {
    await closeCluster(c);
  }
}

// ---- runs 3 and 4: controller failover over 10,000 partitions, then its restart ----

async function controllerFailover(zk: ZooKeeperHarness): Promise<void> {
  phase(
    `run 3: SIGKILL of the controller, ${CT_TOPICS * CT_PARTITIONS} partitions (${CT_TOPICS} topics × ${CT_PARTITIONS}, RF ${CT_RF}) on ${BROKERS} brokers`,
  );
  const c = await startCluster(zk, "c", 120_000);
  try {
    const prefix = "ct-";
    const setupStart = Date.now();
    const cpuCreate0 = c.brokers.map((b) => cpuSeconds(b.pid!));
    const names = await createTopics(c, prefix, CT_TOPICS, CT_PARTITIONS, CT_RF, CREATE_BUDGET_MS);
    const total = names.length * CT_PARTITIONS;
    const before = await waitReady(c, null, prefix, total, CT_RF, 180_000, "after creation");
    const createdAll = Date.now();
    await setupHealth(c, setupStart);
    const controller = await controllerOf(c);
    figure(
      `run 3: create ${total} partitions until every broker lists them led, s`,
      (createdAll - setupStart) / 1000,
    );
    const perK = (cpu: number): number => cpu / (total / 1000);
    figure(
      "run 3: creation CPU-s per 1,000 partitions, controller",
      perK(cpuSeconds(c.brokers[controller].pid!) - cpuCreate0[controller]),
    );
    const aFollower = c.brokers.findIndex((_, i) => i !== controller);
    figure(
      "run 3: creation CPU-s per 1,000 partitions, another broker",
      perK(cpuSeconds(c.brokers[aFollower].pid!) - cpuCreate0[aFollower]),
    );
    figure(
      "run 3: creation worst event-loop stall of any broker, ms",
      Math.max(...c.brokers.map((b) => eldMax(eldWindows(b), setupStart, createdAll))),
    );
    const counts = leaderCounts(before);
    const survivors = c.brokers.map((_, i) => i).filter((i) => i !== controller);
    const led = [...before.values()].filter((p) => p.leader === controller).length;
    const replicasOnVictim = [...before.values()].filter((p) => p.replicas.includes(controller)).length;
    record(
      "leaders per broker before / the controller killed",
      `${[...counts.entries()]
        .sort((x, y) => x[0] - y[0])
        .map(([id, n]) => `${id}: ${n}`)
        .join(", ")} / ${controller} (leads ${led}, holds ${replicasOnVictim} replicas)`,
    );
    const pending = (p: Partitions): number => {
      let n = total - p.size;
      for (const x of p.values()) if (!survivors.includes(x.leader)) n++;
      return n;
    };
    const bound = Date.now() + Math.min(60_000 + SESSION_TIMEOUT_MS, left());
    const vb = c.brokers[controller];
    const cpu0 = new Map(survivors.map((i) => [i, cpuSeconds(c.brokers[i].pid!)]));
    const epochBefore = (await c.store.get("/controller_epoch"))?.data.toString("utf8") ?? "?";
    const gone = whenDeleted(c.store, "/controller", bound);
    const brokerGone = whenDeleted(c.store, `/brokers/ids/${controller}`, bound);
    await sleep(200);
    const t0 = Date.now();
    await vb.stop("SIGKILL", 10_000);
    const polls = Promise.all(
      survivors.map((i) => poll(c.brokers[i], null, prefix, pending, led, bound, Math.max(POLL_GAP_MS, 20))),
    );
    const goneAt = await gone;
    const createdAt = goneAt === undefined ? undefined : await whenCreated(c.store, "/controller", bound);
    const newController = createdAt === undefined ? undefined : await controllerOf(c).catch(() => undefined);
    const results = await polls;
    const brokerGoneAt = await brokerGone;
    record(
      `SIGKILL → /controller deleted (session expiry; /brokers/ids/${controller} at ${since(t0, brokerGoneAt)})`,
      since(t0, goneAt),
    );
    record(
      `/controller deleted → new /controller (broker ${newController ?? "none"})`,
      goneAt === undefined ? "—" : since(goneAt, createdAt),
    );
    for (const [j, i] of survivors.entries()) {
      const p = results[j];
      const who = `broker ${i}${i === newController ? " (new controller)" : ""}`;
      if (goneAt !== undefined && p.doneAt !== undefined)
        figure(
          `run 3: /controller gone → all ${total} partitions led, seen from the ${i === newController ? "new controller" : "other survivor"}, ms`,
          p.doneAt - goneAt,
        );
      record(
        `/controller deleted → every one of the ${total} partitions has a live leader, seen from ${who}`,
        `${goneAt === undefined ? "—" : since(goneAt, p.doneAt)} (SIGKILL → ${since(t0, p.doneAt)}; first moved ${goneAt === undefined ? "—" : since(goneAt, p.firstAt)}; ${p.polls} polls)`,
      );
      if (p.doneAt === undefined) {
        failed = true;
        finding(
          `controller failover: seen from ${who}, ${p.lastPending} of ${total} partitions without a live leader ${ms(bound - t0)} after the SIGKILL${p.lastError ? ` (last error: ${p.lastError})` : ""}`,
        );
      } else {
        const keys = [...before].filter(([, x]) => x.leader === controller).map(([k]) => k);
        const bad = electionViolations(before, p.last!, keys, survivors);
        if (bad.length > 0) {
          failed = true;
          finding(
            `controller failover: ${bad.length} new leaders break the election rule, e.g. ${bad.slice(0, 3).join("; ")}`,
          );
        }
      }
    }
    if (newController !== undefined && goneAt !== undefined) {
      const nb = c.brokers[newController];
      const elected = logLine(nb, /successfully elected as the controller/, true, t0 - 1000);
      const init = logLine(nb, /Initialized controller context/, true, t0 - 1000);
      record(
        "new controller's log: elected / context initialized (stamps − /controller deleted)",
        `${since(goneAt, elected?.at)} / ${since(goneAt, init?.at)}`,
      );
      if (init) note(init.line.replace(/^\[[^\]]*\] /, ""));
      if (init?.at !== undefined)
        figure("run 3: /controller gone → context initialized, ms", init.at - goneAt);
      const doneAll = Math.max(...results.map((r) => r.doneAt ?? Number.NaN));
      const end = Number.isNaN(doneAll) ? Date.now() : doneAll;
      await sleep(1100); // the last event-loop window
      for (const i of survivors)
        record(
          `broker ${i}${i === newController ? " (new controller)" : ""}: event-loop delay from the SIGKILL to ${Number.isNaN(doneAll) ? "the bound" : "all leaders seen"}`,
          eldSummary(eldWindows(c.brokers[i]), t0, end),
        );
      await aftermath(c, survivors, epochBefore, t0, end);
      figure(
        "run 3: failover worst event-loop stall of a survivor, ms",
        Math.max(...survivors.map((i) => eldMax(eldWindows(c.brokers[i]), t0, end))),
      );
      for (const i of survivors)
        figure(
          `run 3: failover CPU-s per 1,000 partitions, ${i === newController ? "new controller" : "other survivor"}`,
          (cpuSeconds(c.brokers[i].pid!) - cpu0.get(i)!) / (total / 1000),
        );
      record(
        "CPU used from the SIGKILL to the end of this measurement, per survivor",
        survivors
          .map((i) => `broker ${i}: ${(cpuSeconds(c.brokers[i].pid!) - cpu0.get(i)!).toFixed(2)} s`)
          .join(", "),
      );
    }
    await restartAfterKill(c, controller, prefix);
  } finally {
    await closeCluster(c);
  }
}

/** ApiVersions v3 sent as soon as the port accepts; Date.now() of the answer (and of the send). */
async function apiVersionsProbe(
  port: number,
  until: number,
): Promise<{ sentAt?: number; answeredAt?: number }> {
  const out: { sentAt?: number; answeredAt?: number } = {};
  while (Date.now() < until) {
    let c: WireClient;
    try {
      c = await WireClient.connect(port);
    } catch {
      await sleep(20);
      continue;
    }
    try {
      out.sentAt = Date.now();
      c.send(Apis.ApiVersions, 3, {
        ...defaultApiVersionsRequest(),
        clientSoftwareName: "bench",
        clientSoftwareVersion: "1",
      });
      const frame = await c.nextFrame(Math.max(1, until - Date.now()));
      if (frame !== undefined) {
        out.answeredAt = Date.now();
        return out;
      }
    } catch {
      // timed out
    } finally {
      c.close();
    }
    await sleep(20);
  }
  return out;
}

async function restartAfterKill(c: Cluster, id: number, prefix: string): Promise<void> {
  const b = c.brokers[id];
  phase(`run 4: the killed controller (broker ${id}) starts again on its log dir (an unclean restart)`);
  const bound = Date.now() + Math.min(240_000, left());
  const registered = whenCreated(c.store, `/brokers/ids/${id}`, bound);
  await sleep(200);
  const t0 = Date.now();
  const probe = apiVersionsProbe(b.port, bound);
  let startError: string | undefined;
  const started = b.restart().then(
    () => Date.now(),
    (e: Error) => {
      startError = e.message.split("\n")[0];
      return undefined;
    },
  );
  const upAt = await started;
  const regAt = await registered;
  const api = await probe;
  // Back in the ISR of every partition it holds, seen from a survivor.
  const survivor = c.brokers.findIndex((_, i) => i !== id);
  let isrAt: number | undefined;
  let lastIn = 0;
  let holds = 0;
  if (upAt !== undefined) {
    const until = Date.now() + Math.min(90_000, left());
    while (Date.now() < until) {
      try {
        const m = await metadataOf(c.brokers[survivor], null, prefix);
        const mine = [...m.parts.values()].filter((p) => p.replicas.includes(id));
        holds = mine.length;
        lastIn = mine.filter((p) => p.isr.includes(id)).length;
        if (holds > 0 && lastIn === holds) {
          isrAt = Date.now();
          break;
        }
      } catch {
        // retry
      }
      await sleep(250);
    }
  }
  const starting = logLine(b, /\[KafkaServer id=\d+\] starting/);
  const loaded = logLine(b, /Loaded \d+ logs from /);
  const startedLine = logLine(b, /\[KafkaServer id=\d+\] started/);
  record('spawn → "starting" (Node and module start)', since(t0, starting?.at));
  if (loaded) {
    const n = /Loaded (\d+) logs/.exec(loaded.line)?.[1];
    record(
      `log loading: "starting" → "Loaded ${n} logs" (${/clean shutdown: \w+/.exec(loaded.line)?.[0] ?? ""})`,
      `${starting?.at !== undefined && loaded.at !== undefined ? ms(loaded.at - starting.at) : "—"} (${n !== undefined && starting?.at !== undefined && loaded.at !== undefined ? ((Number(n) * 1000) / (loaded.at - starting.at)).toFixed(0) : "—"} logs/s)`,
    );
  } else record("log loading", 'no "Loaded N logs" line');
  record(`spawn → registered again (/brokers/ids/${id} created)`, since(t0, regAt));
  record(
    "spawn → ApiVersions answered (one request, sent as soon as the port accepted)",
    `${since(t0, api.answeredAt)} (sent at ${since(t0, api.sentAt)})`,
  );
  record(
    'spawn → "started"',
    `${since(t0, startedLine?.at)}${startError ? ` (start failed: ${startError})` : ""}`,
  );
  figure(
    `run 4: restart after SIGKILL → back in every ISR (${holds} partitions), ms`,
    isrAt === undefined ? undefined : isrAt - t0,
  );
  record(
    `spawn → back in the ISR of all ${holds} partitions it holds (seen from broker ${survivor})`,
    isrAt === undefined ? `not within the bound: ${lastIn} of ${holds}` : since(t0, isrAt),
  );
  await sleep(1200); // the last window's line
  const windows = eldWindows(b);
  if (starting?.at !== undefined && loaded?.at !== undefined) {
    record(
      'event-loop delay while loading logs ("starting" → "Loaded")',
      eldSummary(windows, starting.at, loaded.at),
    );
  }
  if (loaded?.at !== undefined)
    record(
      'event-loop delay from "Loaded" to back in every ISR (or the bound)',
      eldSummary(windows, loaded.at, isrAt ?? Date.now()),
    );
  const timedOut = countLines(b, /Client session timed out/);
  const expired = countLines(b, /[Ss]ession expired/);
  const reconnected = countLines(b, /Reconnected\.|Disconnected from ZooKeeper/);
  record(
    "ZooKeeper session during the restart: read timeouts / disconnects+reconnects / expiries (broker log lines)",
    `${timedOut} / ${reconnected} / ${expired}`,
  );
  if (expired > 0) {
    const l = logLine(b, /[Ss]ession expired/);
    finding(`the restarting broker's ZooKeeper session expired: ${l?.line}`);
  }
  if (upAt !== undefined && b.metricsPort !== undefined) {
    try {
      const text = await (await fetch(b.metricsUrl)).text();
      const max = /^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)?.[1];
      const p99 = /^nodejs_eventloop_lag_p99_seconds (\S+)$/m.exec(text)?.[1];
      if (max !== undefined)
        record(
          "its /metrics once up: nodejs_eventloop_lag_max_seconds / p99 (since the endpoint was served)",
          `${ms(Number(max) * 1000)} / ${ms(Number(p99) * 1000)}`,
        );
    } catch (e) {
      note(`metrics scrape failed: ${(e as Error).message}`);
    }
  }
  if (upAt === undefined) {
    failed = true;
    finding(`the restart of broker ${id} failed: ${startError}`);
  }
  if (isrAt === undefined && upAt !== undefined)
    finding(`broker ${id} was back in ${lastIn} of the ${holds} ISRs it belongs to when the bound passed`);
}

async function main(): Promise<void> {
  installCleanup();
  setLogLevel("WARN");
  console.log(
    `Cluster failover benchmark: ${BROKERS} brokers, zookeeper.session.timeout.ms=${SESSION_TIMEOUT_MS}`,
  );
  console.log(
    `machine: ${machineLine()}; build: ${process.env.TRIBUTARY_DIST ?? "dist/ (bin/tributary.js)"}`,
  );
  console.log(`date -u: ${sh("date", ["-u"])}`);
  console.log(`uptime:  ${sh("uptime", [])}`);
  const zk = await ZooKeeperHarness.start({ servers: 1 });
  console.log(`ZooKeeper (1 server, tickTime 500) at ${zk.connectString}`);
  try {
    for (let r = 1; r <= REPEAT; r++) {
      if (REPEAT > 1) phase(`repetition ${r} of ${REPEAT}`);
      for (const [n, run] of [
        () => brokerFailover(zk, "SIGTERM"),
        () => brokerFailover(zk, "SIGKILL"),
        () => controllerFailover(zk),
      ].entries()) {
        if (!ONLY.has(n + 1)) continue;
        try {
          await run();
        } catch (e) {
          failed = true;
          finding(`FAILED: ${(e as Error).message.split("\n").slice(0, 6).join(" | ")}`);
        }
      }
    }
  } finally {
    await zk.close();
  }
  console.log(`\nuptime at the end: ${sh("uptime", [])}`);
  report.printTable();
  printFigures();
  console.log(`\ntotal run time ${((Date.now() - STARTED) / 1000).toFixed(0)} s`);
  if (failed) process.exitCode = 1;
}

await main();
