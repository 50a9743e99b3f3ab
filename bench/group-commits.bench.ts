// Group commit benchmark (issue 6): 1,000 consumer groups each committing an offset every 100 ms
// (10,000 OffsetCommit requests per second) against one broker. Run with `npm run bench:groups` (options
// after `--`: `--groups N` default 1000, `--interval-ms N` default 100, `--seconds N` measured window,
// default 30, `--connections N` client connections the groups are spread over, default 20, `--partitions N`
// partitions committed per request, default 1).
//
// It starts a real broker child process (test/support/broker-harness.ts) on a fresh log dir with the
// default offsets.topic.num.partitions (50), creates a topic, finds each group's coordinator, then every
// group commits (OffsetCommit v8, standalone: generation -1, as a consumer using assign() and commitSync
// does) the next offset of its partition every interval, on a timer staggered across the interval. It
// measures each commit's latency (request written → response decoded, on the client), counts errors and
// requests that could not be sent on time (the client falling behind), and reads the broker's CPU time
// (utime+stime from /proc/<pid>/stat) and RSS over the window; the client's own CPU is reported too
// (both share this machine's cores). At the end it checks with OffsetFetch that every group's last
// committed offset is what it sent. Prints a table; exits 1 on errors.

import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { BrokerConnection } from "../src/client/network/broker-connection.js";
import { Apis } from "../src/protocol/generated/api-table.js";
import { BrokerHarness, sleep } from "../test/support/broker-harness.js";
import { checkArguments } from "./support/arguments.js";
import { installCleanup } from "./support/child-processes.js";

checkArguments("group-commits.bench", ["groups", "interval-ms", "seconds", "connections", "partitions"]);

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
}

const GROUPS = arg("groups", 1000);
const INTERVAL_MS = arg("interval-ms", 100);
const SECONDS = arg("seconds", 30);
const CONNECTIONS = arg("connections", 20);
const PARTITIONS = arg("partitions", 1);
const TOPIC = "commits";

function procCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  // utime and stime are fields 14 and 15 of /proc/<pid>/stat (1-based), in clock ticks (100 Hz).
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

async function main(): Promise<number> {
  installCleanup();
  const broker = await BrokerHarness.start({
    name: "tributary-bench-groups",
    overrides: { "metrics.http.listener": "", "num.partitions": String(PARTITIONS) },
  });
  const conns: BrokerConnection[] = [];
  try {
    const pid = broker.pid!;
    for (let i = 0; i < CONNECTIONS; i++) {
      conns.push(await BrokerConnection.connect("127.0.0.1", broker.port, { clientId: `bench-${i}` }));
    }
    const admin = conns[0];
    await admin.send(Apis.CreateTopics, 7, {
      topics: [
        { name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 1, assignments: [], configs: [] },
      ],
      timeoutMs: 30_000,
      validateOnly: false,
    });
    // FindCoordinator creates __consumer_offsets; wait until every group has its coordinator (here: us).
    const groups = Array.from({ length: GROUPS }, (_, i) => `bench-group-${i}`);
    for (let attempt = 0; ; attempt++) {
      const r = await admin.send(Apis.FindCoordinator, 4, { key: "", keyType: 0, coordinatorKeys: groups });
      if (r.coordinators.every((c) => c.errorCode === 0)) break;
      if (attempt > 100) throw new Error("coordinators not available after 10 s");
      await sleep(100);
    }
    const version = admin.versionFor(Apis.OffsetCommit);
    const latencies: number[] = [];
    const next = new Array<bigint>(GROUPS).fill(0n);
    let errors = 0;
    let firstError = "";
    let late = 0;
    let inFlight = 0;
    let measuring = false;
    const commit = (g: number): void => {
      const conn = conns[g % CONNECTIONS];
      const offset = ++next[g];
      const t0 = performance.now();
      inFlight++;
      conn
        .send(Apis.OffsetCommit, version, {
          groupId: groups[g],
          generationIdOrMemberEpoch: -1,
          memberId: "",
          groupInstanceId: null,
          retentionTimeMs: -1n,
          topics: [
            {
              name: TOPIC,
              partitions: Array.from({ length: PARTITIONS }, (_, p) => ({
                partitionIndex: p,
                committedOffset: offset,
                committedLeaderEpoch: -1,
                commitTimestamp: -1n,
                committedMetadata: "",
              })),
            },
          ],
        })
        .then(
          (r) => {
            inFlight--;
            if (measuring) latencies.push(performance.now() - t0);
            for (const p of r.topics[0].partitions) {
              if (p.errorCode !== 0) {
                errors++;
                firstError ||= `group ${groups[g]}: error ${p.errorCode}`;
              }
            }
          },
          (e: Error) => {
            inFlight--;
            errors++;
            firstError ||= e.message;
          },
        );
    };
    // Each group commits on its own schedule, staggered over the interval; a tick that finds the group's
    // previous commit unanswered for more than an interval counts as late (the broker falling behind).
    const started = performance.now();
    const due = groups.map((_, g) => started + (g * INTERVAL_MS) / GROUPS);
    const warmupMs = 3000;
    let cpu0 = 0;
    let wall0 = 0;
    let clientCpu0 = process.cpuUsage();
    let rssMax = 0;
    let lastRssAt = 0;
    const endAt = started + warmupMs + SECONDS * 1000;
    let g = 0;
    while (performance.now() < endAt) {
      const now = performance.now();
      if (!measuring && now - started >= warmupMs) {
        measuring = true;
        cpu0 = procCpuMs(pid);
        wall0 = now;
        clientCpu0 = process.cpuUsage();
      }
      let sent = 0;
      for (let scanned = 0; scanned < GROUPS; scanned++) {
        const i = (g + scanned) % GROUPS;
        if (due[i] > now) continue;
        if (now - due[i] > INTERVAL_MS && measuring) late++;
        commit(i);
        due[i] = Math.max(due[i] + INTERVAL_MS, now - INTERVAL_MS);
        sent++;
      }
      g = (g + 1) % GROUPS;
      if (sent === 0) await sleep(1);
      else await new Promise((r) => setImmediate(r));
      if (measuring && now - lastRssAt >= 1000) {
        lastRssAt = now;
        rssMax = Math.max(rssMax, rssMiB(pid));
      }
    }
    const wallMs = performance.now() - wall0;
    const brokerCpuMs = procCpuMs(pid) - cpu0;
    const clientCpu = process.cpuUsage(clientCpu0);
    rssMax = Math.max(rssMax, rssMiB(pid));
    while (inFlight > 0) await sleep(10);
    // Every group's last commit is what OffsetFetch returns.
    let mismatched = 0;
    for (let i = 0; i < GROUPS; i += 100) {
      const batch = groups.slice(i, i + 100);
      const r = await admin.send(Apis.OffsetFetch, 8, {
        groupId: "",
        topics: [],
        groups: batch.map((groupId) => ({ groupId, memberId: null, memberEpoch: -1, topics: null })),
        requireStable: false,
      });
      r.groups.forEach((rg, j) => {
        const got = rg.topics[0]?.partitions[0]?.committedOffset;
        if (got !== next[i + j]) mismatched++;
      });
    }
    latencies.sort((a, b) => a - b);
    const rate = latencies.length / (wallMs / 1000);
    const rows: Array<[string, string]> = [
      [
        "groups × interval",
        `${GROUPS} × ${INTERVAL_MS} ms (${PARTITIONS} partition(s) per commit), ${CONNECTIONS} connections`,
      ],
      ["measured window", `${(wallMs / 1000).toFixed(1)} s after ${warmupMs / 1000} s warm-up`],
      [
        "commits answered",
        `${latencies.length} (${rate.toFixed(0)}/s; target ${((GROUPS * 1000) / INTERVAL_MS).toFixed(0)}/s)`,
      ],
      [
        "commit latency p50 / p99 / p99.9 / max",
        `${quantile(latencies, 0.5).toFixed(2)} / ${quantile(latencies, 0.99).toFixed(2)} / ${quantile(latencies, 0.999).toFixed(2)} / ${(latencies.at(-1) ?? Number.NaN).toFixed(2)} ms`,
      ],
      ["broker CPU", `${((100 * brokerCpuMs) / wallMs).toFixed(0)} % of one core (${cpus().length} cores)`],
      [
        "client CPU (same machine)",
        `${((100 * (clientCpu.user + clientCpu.system)) / 1000 / wallMs).toFixed(0)} % of one core`,
      ],
      ["broker RSS (max sampled)", `${rssMax.toFixed(0)} MiB`],
      ["late sends (client behind)", String(late)],
      ["errors", `${errors}${firstError ? ` (first: ${firstError})` : ""}`],
      ["last commit != OffsetFetch", String(mismatched)],
    ];
    for (const [k, v] of rows) console.log(`| ${k} | ${v} |`);
    return errors > 0 || mismatched > 0 ? 1 : 0;
  } finally {
    for (const c of conns) c.close();
    await broker.close();
  }
}

process.exitCode = await main();
