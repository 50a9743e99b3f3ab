// Scale benchmark (issue 4): one broker with 10,000 partitions. Run with `npm run bench:scale` (options
// after `--`: `--topics N` default 100, `--partitions N` per topic, default 100, `--batch N` topics per
// CreateTopics request, default 10, `--requests N` Metadata requests per latency figure, default 300,
// `--nofile N` RLIMIT_NOFILE to try for run 2, default 65536, `--start-bound S` bound in seconds on each
// start-up of run 2, default 60).
//
// It starts a real broker child process (test/support/broker-harness.ts: `node bin/tributary.js
// server-start`, or TRIBUTARY_DIST's build) on a fresh temporary log dir, then:
// 1. creates the topics with CreateTopics v7 in batches (timeout_ms 60 s), timing the creation and the time
//    until Metadata (v12, all topics) lists every partition with a leader, and checks with one ListOffsets
//    v7 request for every partition that each has a working log (Metadata alone can say "led" for a
//    partition whose log failed to open);
// 2. measures Metadata latency (p50/p99, one request at a time on one connection) for all topics and for
//    one topic;
// 3. reads the broker's VmRSS and open file descriptors (/proc/<pid>/status, /proc/<pid>/fd, split by
//    .log/.index/.timeindex) after creation and after 10 s idle;
// 4. SIGTERM (clean shutdown time), start again (time from spawn until Metadata shows every partition with
//    a leader: the load time), RSS and fds after restart; then the same after SIGKILL (unclean restart),
//    sampling RSS and counting "Loaded log" lines so that a start-up that does not finish within the bound
//    still reports how far it got.
// `ulimit -n` (RLIMIT_NOFILE, inherited by the broker) is reported next to the fd count. A failure (broker
// exit, timeout, partitions without a log) is recorded with the broker's last lines and ends that run. If
// run 1 failed, run 2 raises RLIMIT_NOFILE with prlimit(1) and repeats; where that is not permitted, it
// repeats with the most whole topics that fit the limit (fds per partition as seen in run 1). Prints a
// table and the findings; exits 1 when something failed. Temporary directories are removed; the whole run
// is bounded to 5 minutes.

import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { Apis } from "../src/protocol/generated/api-table.js";
import type { MetadataResponse } from "../src/protocol/generated/messages/MetadataResponse.js";
import { WireClient } from "../test/server/wire-client.js";
import { BrokerHarness, sleep } from "../test/support/broker-harness.js";
import { checkArguments } from "./support/arguments.js";
import { installCleanup } from "./support/child-processes.js";
import { machineLine } from "./support/machine.js";
import { BenchReport } from "./support/report.js";

checkArguments("scale.bench", ["topics", "partitions", "batch", "requests", "nofile", "start-bound"]);

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
}

let TOPICS = arg("topics", 100);
const PARTITIONS = arg("partitions", 100);
const BATCH = arg("batch", 10);
const REQUESTS = arg("requests", 300);
let TOTAL = TOPICS * PARTITIONS;
/** Segment-file fds per partition seen after creation (run 1), for sizing run 2. */
let fdsPerPartition = 3;
const STARTED = Date.now();
const RUN_DEADLINE = STARTED + 5 * 60_000 - 15_000;
/** When run 1 fails, run 2 raises RLIMIT_NOFILE to this (0: no second run). */
const RAISED_NOFILE = arg("nofile", 65_536);
/** Bound on each start-up of run 2 (the unclean restart's load may not finish within it). */
const UNCLEAN_WINDOW_MS = arg("start-bound", 60) * 1000;
const METADATA_VERSION = 12;
const CREATE_VERSION = 7;

const METADATA = Apis.Metadata;
const CREATE_TOPICS = Apis.CreateTopics;
const LIST_OFFSETS = Apis.ListOffsets;

const topicName = (i: number): string => `scale-${String(i).padStart(4, "0")}`;

const report = new BenchReport();
const record = (what: string, value: string): void => report.record(what, value);
const phase = (title: string): void => report.phase(title);
const finding = (f: string): void => report.finding(f);

const ms = (x: number): string => `${x.toFixed(x < 10 ? 2 : x < 100 ? 1 : 0)} ms`;
const mib = (kib: number): string => `${(kib / 1024).toFixed(1)} MiB`;

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function rssKiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) : Number.NaN;
}

/** Open fds of `pid`, split by kind (segment/index files, sockets, other). */
function fds(pid: number): { total: number; log: number; index: number; timeindex: number; other: number } {
  const out = { total: 0, log: 0, index: 0, timeindex: 0, other: 0 };
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target = "";
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed meanwhile
    }
    out.total++;
    if (target.endsWith(".log")) out.log++;
    else if (target.endsWith(".index")) out.index++;
    else if (target.endsWith(".timeindex")) out.timeindex++;
    else out.other++;
  }
  return out;
}

function fdLimit(pid: number): string {
  const m = /Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/.exec(
    readFileSync(`/proc/${pid}/limits`, "utf8"),
  );
  return m ? `soft ${m[1]}, hard ${m[2]}` : "unknown";
}

function left(): number {
  const l = RUN_DEADLINE - Date.now();
  if (l <= 0) throw new Error("the 5-minute run deadline passed");
  return l;
}

async function metadata(
  client: WireClient,
  topics: string[] | null,
  timeoutMs = 30_000,
): Promise<MetadataResponse> {
  const id = client.send(METADATA, METADATA_VERSION, {
    topics: topics === null ? null : topics.map((name) => ({ topicId: "AAAAAAAAAAAAAAAAAAAAAA", name })),
    allowAutoTopicCreation: false,
    includeClusterAuthorizedOperations: false,
    includeTopicAuthorizedOperations: false,
  });
  const res = await client.receive(METADATA, METADATA_VERSION, Math.min(timeoutMs, left()));
  if (res.correlationId !== id) throw new Error(`correlation id ${res.correlationId}, expected ${id}`);
  return res.body;
}

/** Partitions of our topics that have a leader and no error. */
function ledPartitions(res: MetadataResponse): number {
  let n = 0;
  for (const t of res.topics) {
    if (t.errorCode !== 0 || !t.name?.startsWith("scale-")) continue;
    for (const p of t.partitions) if (p.errorCode === 0 && p.leaderId >= 0) n++;
  }
  return n;
}

/** Polls Metadata (all topics) on fresh connections until all TOTAL partitions have a leader. */
async function waitAllLed(broker: BrokerHarness, what: string): Promise<number> {
  let last = -1;
  for (;;) {
    if (broker.lastExit) throw new Error(`broker exited (${JSON.stringify(broker.lastExit)}) while ${what}`);
    try {
      const c = await WireClient.connect(broker.port);
      try {
        last = ledPartitions(await metadata(c, null));
      } finally {
        c.close();
      }
      if (last === TOTAL) return last;
    } catch {
      // not answering yet
    }
    if (Date.now() + 50 > RUN_DEADLINE)
      throw new Error(`${what}: ${last}/${TOTAL} partitions with a leader when the run deadline passed`);
    await sleep(50);
  }
}

async function latency(
  broker: BrokerHarness,
  topics: string[] | null,
  n: number,
): Promise<{ p50: number; p99: number; max: number; bytes: number }> {
  const c = await WireClient.connect(broker.port);
  const times: number[] = [];
  let bytes = 0;
  try {
    for (let i = 0; i < 5; i++) await metadata(c, topics); // warm-up
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      const res = await metadata(c, topics);
      times.push(performance.now() - t0);
      if (i === 0) {
        const led = ledPartitions(res);
        const want = topics === null ? TOTAL : topics.length * PARTITIONS;
        if (led !== want)
          throw new Error(`Metadata listed ${led} partitions with a leader, expected ${want}`);
      }
    }
    // Size of one response on the wire.
    const id = c.send(METADATA, METADATA_VERSION, {
      topics: topics === null ? null : topics.map((name) => ({ topicId: "AAAAAAAAAAAAAAAAAAAAAA", name })),
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    const frame = await c.nextFrame(30_000);
    if (!frame || frame.readInt32BE(0) !== id) throw new Error("no Metadata response");
    bytes = frame.length + 4;
  } finally {
    c.close();
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), max: times[times.length - 1], bytes };
}

/** Partitions of our topics that ListOffsets (latest) answers without error: those with a log. */
async function served(broker: BrokerHarness): Promise<{ ok: number; errors: Map<number, number> }> {
  const c = await WireClient.connect(broker.port);
  try {
    const topics = [];
    for (let t = 0; t < TOPICS; t++) {
      const partitions = [];
      for (let p = 0; p < PARTITIONS; p++)
        partitions.push({ partitionIndex: p, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 });
      topics.push({ name: topicName(t), partitions });
    }
    const id = c.send(LIST_OFFSETS, 7, { replicaId: -1, isolationLevel: 0, topics, timeoutMs: 30_000 });
    const res = await c.receive(LIST_OFFSETS, 7, Math.min(60_000, left()));
    if (res.correlationId !== id) throw new Error("ListOffsets: wrong correlation id");
    let ok = 0;
    const errors = new Map<number, number>();
    for (const t of res.body.topics)
      for (const p of t.partitions) {
        if (p.errorCode === 0) ok++;
        else errors.set(p.errorCode, (errors.get(p.errorCode) ?? 0) + 1);
      }
    return { ok, errors };
  } finally {
    c.close();
  }
}

async function checkServed(broker: BrokerHarness, label: string): Promise<boolean> {
  const s = await served(broker);
  const errs = [...s.errors].map(([code, n]) => `${n} × error ${code}`).join(", ");
  record(
    `partitions ListOffsets answers without error, ${label}`,
    `${s.ok} of ${TOTAL}${errs ? ` (${errs})` : ""}`,
  );
  if (s.ok !== TOTAL)
    finding(`${label}: only ${s.ok} of ${TOTAL} partitions have a working log (ListOffsets: ${errs})`);
  return s.ok === TOTAL;
}

function snapshot(broker: BrokerHarness, label: string): void {
  const pid = broker.pid;
  if (pid === undefined || broker.lastExit) return;
  record(`broker RSS, ${label}`, mib(rssKiB(pid)));
  const f = fds(pid);
  if (f.index > 100) fdsPerPartition = Math.max(1, Math.round((f.log + f.index + f.timeindex) / f.index));
  record(
    `broker open fds, ${label}`,
    `${f.total} (.log ${f.log}, .index ${f.index}, .timeindex ${f.timeindex}, other ${f.other})`,
  );
}

/** Broker ERROR lines since the last start, counted by message with the partition name removed. */
function errorLines(broker: BrokerHarness, since: number): string[] {
  const lines = (broker.stdout.slice(since) + broker.stderr)
    .split("\n")
    .filter((l) => /\bERROR\b|EMFILE/.test(l));
  return lines;
}

async function create(broker: BrokerHarness): Promise<void> {
  const c = await WireClient.connect(broker.port);
  const t0 = performance.now();
  const perBatch: number[] = [];
  let failedTopics = 0;
  try {
    for (let first = 0; first < TOPICS; first += BATCH) {
      const names: string[] = [];
      for (let i = first; i < Math.min(TOPICS, first + BATCH); i++) names.push(topicName(i));
      const b0 = performance.now();
      const id = c.send(CREATE_TOPICS, CREATE_VERSION, {
        topics: names.map((name) => ({
          name,
          numPartitions: PARTITIONS,
          replicationFactor: 1,
          assignments: [],
          configs: [],
        })),
        timeoutMs: 60_000,
        validateOnly: false,
      });
      const res = await c.receive(CREATE_TOPICS, CREATE_VERSION, Math.min(90_000, left()));
      perBatch.push(performance.now() - b0);
      if (res.correlationId !== id) throw new Error("CreateTopics: wrong correlation id");
      const bad = res.body.topics.filter((t) => t.errorCode !== 0);
      failedTopics += bad.length;
      if (bad.length > 0)
        finding(`CreateTopics: ${bad[0].name}: error ${bad[0].errorCode} ${bad[0].errorMessage ?? ""}`);
    }
  } finally {
    c.close();
  }
  const created = performance.now() - t0;
  record(
    `create ${TOPICS} topics × ${PARTITIONS} partitions (CreateTopics v7, ${BATCH} topics/request)`,
    `${ms(created)} (${((TOTAL / created) * 1000).toFixed(0)} partitions/s; per request p50 ${ms(
      percentile(
        perBatch.sort((a, b) => a - b),
        50,
      ),
    )}, max ${ms(perBatch[perBatch.length - 1])}); topics with an error: ${failedTopics}`,
  );
  await waitAllLed(broker, "waiting for leaders after creation");
  record("start of creation → Metadata lists every partition with a leader", ms(performance.now() - t0));
}

/** Lines of the last start's output that say a log was loaded. */
function logsLoaded(broker: BrokerHarness): number {
  const from = broker.stdout.lastIndexOf("=== start #");
  let n = 0;
  for (const m of broker.stdout.slice(from).matchAll(/\] Loaded log /g)) if (m) n++;
  return n;
}

/**
 * Stops the broker with `signal`, starts it again and times spawn → Metadata with every partition led. While
 * it starts, samples RSS and loaded logs every second; when it is not up within the harness's start bound,
 * records how far it got and throws.
 */
async function restart(broker: BrokerHarness, signal: "SIGTERM" | "SIGKILL"): Promise<void> {
  const label = signal === "SIGTERM" ? "clean" : "unclean";
  const s0 = performance.now();
  const code = await broker.stop(signal, Math.min(60_000, left()));
  const stopped = performance.now() - s0;
  if (signal === "SIGTERM") {
    record("SIGTERM → exit (clean shutdown)", `${ms(stopped)} (exit code ${code})`);
    if (code !== 0) finding(`SIGTERM exit code ${code}`);
  }
  const t0 = performance.now();
  let peakRss = 0;
  let done = false;
  const sampler = (async () => {
    while (!done) {
      const pid = broker.pid;
      if (pid !== undefined && !broker.lastExit) {
        try {
          peakRss = Math.max(peakRss, rssKiB(pid));
        } catch {
          // exited
        }
      }
      await sleep(250);
    }
  })();
  try {
    await broker.restart();
  } catch (e) {
    const loaded = logsLoaded(broker);
    const secs = (performance.now() - t0) / 1000;
    const msg = (e as Error).message.split("\n")[0];
    record(
      `${label} restart: not up`,
      `${msg}; after ${secs.toFixed(0)} s ${loaded} of ${TOTAL} logs loaded (${(loaded / secs).toFixed(1)} logs/s` +
        `${loaded > 0 ? `, ≈ ${((TOTAL / loaded) * secs).toFixed(0)} s for all` : ""}); peak RSS ${mib(peakRss)}`,
    );
    if (!broker.lastExit && broker.pid !== undefined) snapshot(broker, `${label} restart, still loading`);
    throw new Error(`${label} restart failed: ${msg}`);
  } finally {
    done = true;
    await sampler;
  }
  const listening = performance.now() - t0;
  await waitAllLed(broker, `loading after ${signal}`);
  const loaded = performance.now() - t0;
  record(
    `${label} restart: spawn → all ${TOTAL} partitions in Metadata (load time)`,
    `${ms(loaded)} (ApiVersions answered after ${ms(listening)}; peak RSS while loading ${mib(peakRss)})`,
  );
}

/** One full run: fresh broker, creation, latency, RSS, clean and unclean restarts. */
async function scenario(startTimeoutMs: number): Promise<boolean> {
  let broker: BrokerHarness | undefined;
  let ok = true;
  try {
    const b0 = performance.now();
    broker = await BrokerHarness.start({ name: "tributary-scale", startTimeoutMs });
    record("fresh broker: spawn → ApiVersions answered", ms(performance.now() - b0));
    record("RLIMIT_NOFILE of the broker (ulimit -n)", fdLimit(broker.pid!));
    snapshot(broker, "empty");

    await create(broker);
    snapshot(broker, "right after creation");
    const errs = errorLines(broker, 0);
    if (errs.length > 0) {
      record(
        "broker ERROR lines during creation",
        `${errs.length}; first: ${errs[0].replace(/^\[[^\]]*\] /, "")}`,
      );
      finding(`during creation the broker logged ${errs.length} ERROR lines, first: ${errs[0]}`);
    }
    const allServed = await checkServed(broker, "after creation");

    if (allServed) {
      const all = await latency(broker, null, REQUESTS);
      record(
        `Metadata v12, all topics (${TOTAL} partitions, ${(all.bytes / 1024).toFixed(0)} KiB response), ${REQUESTS} requests`,
        `p50 ${ms(all.p50)}, p99 ${ms(all.p99)}, max ${ms(all.max)}`,
      );
      const one = await latency(broker, [topicName(Math.min(42, TOPICS - 1))], REQUESTS * 3);
      record(
        `Metadata v12, one topic (${PARTITIONS} partitions, ${(one.bytes / 1024).toFixed(1)} KiB), ${REQUESTS * 3} requests`,
        `p50 ${ms(one.p50)}, p99 ${ms(one.p99)}, max ${ms(one.max)}`,
      );
      await sleep(Math.min(10_000, left()));
      snapshot(broker, "idle 10 s later");
    } else {
      ok = false;
    }

    await restart(broker, "SIGTERM");
    snapshot(broker, "after clean restart");
    if (!(await checkServed(broker, "after clean restart"))) ok = false;
    if (ok) {
      await sleep(Math.min(5_000, left()));
      snapshot(broker, "5 s after clean restart");
      const allAfter = await latency(broker, null, Math.min(100, REQUESTS));
      record(
        "Metadata v12, all topics, after clean restart",
        `p50 ${ms(allAfter.p50)}, p99 ${ms(allAfter.p99)}`,
      );
    }

    await restart(broker, "SIGKILL");
    snapshot(broker, "after unclean restart");
    if (!(await checkServed(broker, "after unclean restart"))) ok = false;

    const code = await broker.stop("SIGTERM", Math.min(60_000, left()));
    if (code !== 0) finding(`final SIGTERM exit code ${code}`);
  } catch (e) {
    ok = false;
    const msg = (e as Error).message;
    finding(`FAILED: ${msg.split("\n")[0]}`);
    if (broker) {
      const since = (t: string): string => t.slice(t.lastIndexOf("=== start #"));
      const tail = `${since(broker.stdout)}\n${since(broker.stderr)}`
        .split("\n")
        .filter((l) => l.trim() !== "" && !/\] Loaded log |Created log for/.test(l))
        .slice(-6);
      for (const l of tail) finding(`  broker: ${l}`);
      if (broker.lastExit) record("broker exit", JSON.stringify(broker.lastExit));
    }
  } finally {
    await broker?.close();
  }
  return ok;
}

/** Raises this process's RLIMIT_NOFILE (inherited by the broker) with prlimit(1); false when not allowed. */
function raiseFdLimit(n: number): boolean {
  const r = spawnSync("prlimit", [`--pid=${process.pid}`, `--nofile=${n}:${n}`], { encoding: "utf8" });
  return r.status === 0 && fdLimit(process.pid) === `soft ${n}, hard ${n}`;
}

async function main(): Promise<void> {
  installCleanup();
  console.log(`Scale benchmark: ${TOPICS} topics × ${PARTITIONS} partitions = ${TOTAL} partitions`);
  console.log(
    `machine: ${machineLine()}; build: ${process.env.TRIBUTARY_DIST ?? "dist/ (bin/tributary.js)"}`,
  );
  console.log(`RLIMIT_NOFILE (ulimit -n) of this process: ${fdLimit(process.pid)}`);
  phase(`run 1: RLIMIT_NOFILE as inherited (${fdLimit(process.pid)})`);
  const ok = await scenario(60_000);
  if (!ok) process.exitCode = 1;
  if (!ok && RAISED_NOFILE > 0) {
    if (raiseFdLimit(RAISED_NOFILE)) {
      phase(`run 2: RLIMIT_NOFILE raised to ${RAISED_NOFILE} with prlimit`);
      await scenario(Math.min(UNCLEAN_WINDOW_MS, left()));
    } else {
      // No CAP_SYS_RESOURCE: measure the rest at the largest whole number of topics that fits the limit.
      const m = /soft (\d+)/.exec(fdLimit(process.pid));
      const soft = m ? Number(m[1]) : 1024;
      const fit = Math.floor((soft - 200) / fdsPerPartition / PARTITIONS);
      finding(
        `RLIMIT_NOFILE cannot be raised to ${RAISED_NOFILE} here (prlimit: not permitted, hard limit ${soft}); ` +
          `run 2 uses ${fit * PARTITIONS} partitions (${fdsPerPartition} fds each, 200 spare)`,
      );
      if (fit > 0 && fit < TOPICS) {
        TOPICS = fit;
        TOTAL = TOPICS * PARTITIONS;
        phase(
          `run 2: ${TOTAL} partitions (${TOPICS} topics × ${PARTITIONS}), the most that fit RLIMIT_NOFILE ${soft}`,
        );
        await scenario(Math.min(UNCLEAN_WINDOW_MS, left()));
      }
    }
  }

  report.printTable();
  console.log(`\ntotal run time ${((Date.now() - STARTED) / 1000).toFixed(0)} s`);
}

await main();
