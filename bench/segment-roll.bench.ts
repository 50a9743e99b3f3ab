// Segment-roll benchmark: what a broker's event loop and a producer see while segments roll. Run with
// `npm run bench:roll` (options after `--`: `--records N` default 2,400,000 × 1 KiB, so two rolls of
// Kafka's default 1 GiB segment.bytes; `--rounds N` default 2). Compare two builds by pointing
// TRIBUTARY_DIST at the other one's dist (the same run of this file starts that build's broker and tool).
//
// Per round: a fresh broker (test/support/broker-harness.ts: `tributary server-start`, embedded metadata,
// its own temporary log dir on the disk), a topic of 1 partition, `sync`, then `tributary producer-perf-test`
// unthrottled with acks=1, batch.size=1048576, linger.ms=5. Meanwhile the broker's /metrics is read every
// second for nodejs_eventloop_lag_max_seconds (the most the event loop was held since the previous read).
// Printed per round: records/s and MB/s, latency p50/p99/max, the rolls the broker logged and the largest
// event-loop delay. A roll's flush (fdatasync of the whole rolled segment) is what this was written to
// see: run on the event loop it held every client of the broker for as long as the disk took.

import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { BrokerHarness } from "../test/support/broker-harness.js";
import { installCleanup, spawnChild, tail, tributaryCommand } from "./support/child-processes.js";
import { producerSummary } from "./support/perf-output.js";

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : dflt;
  if (!Number.isInteger(v) || v <= 0) {
    console.error(`segment-roll.bench: --${name}: expected a positive integer, got ${process.argv[i + 1]}`);
    process.exit(2);
  }
  return v;
}

const RECORDS = arg("records", 2_400_000);
const ROUNDS = arg("rounds", 2);
const DIST = resolve(process.env.TRIBUTARY_DIST ?? fileURLToPath(new URL("..", import.meta.url)));
process.env.TRIBUTARY_DIST = DIST; // the harness starts the same build

async function maxLagSeconds(broker: BrokerHarness): Promise<number> {
  const text = await (await fetch(broker.metricsUrl)).text();
  const m = /^nodejs_eventloop_lag_max_seconds (\S+)/m.exec(text);
  return m ? Number(m[1]) : Number.NaN;
}

async function round(n: number): Promise<void> {
  const broker = await BrokerHarness.start({ name: "tributary-roll-bench" });
  try {
    const create = tributaryCommand(DIST, [
      "topics",
      "--bootstrap-server",
      broker.bootstrap,
      "--create",
      "--topic",
      "roll",
      "--partitions",
      "1",
      "--replication-factor",
      "1",
    ]);
    const created = await spawnChild(create.cmd, create.argv, { timeoutMs: 30_000 }).done;
    if (created.code !== 0) throw new Error(`topics --create: exit ${created.code} (${tail(created)})`);
    spawnSync("sync");
    await maxLagSeconds(broker); // starts the window
    const perf = tributaryCommand(DIST, [
      "producer-perf-test",
      "--topic",
      "roll",
      "--num-records",
      String(RECORDS),
      "--record-size",
      "1024",
      "--throughput",
      "-1",
      "--producer-props",
      `bootstrap.servers=${broker.bootstrap}`,
      "acks=1",
      "batch.size=1048576",
      "linger.ms=5",
    ]);
    const lags: number[] = [];
    const sampler = setInterval(() => {
      maxLagSeconds(broker).then(
        (l) => lags.push(l),
        () => {},
      );
    }, 1000);
    const r = await spawnChild(perf.cmd, perf.argv, { timeoutMs: 300_000 }).done;
    clearInterval(sampler);
    lags.push(await maxLagSeconds(broker));
    const s = producerSummary(r.stdout);
    if (r.code !== 0 || !s) throw new Error(`producer-perf-test: exit ${r.code} (${tail(r)})`);
    const rolls = (broker.output.match(/Rolled new log segment/g) ?? []).length;
    const read = lags.filter((l) => Number.isFinite(l));
    const worst = read.length > 0 ? `${(Math.max(...read) * 1000).toFixed(0)} ms` : "unknown (no reading)";
    console.log(
      `round ${n}: ${Math.round(s.recordsPerSec).toLocaleString("en-US")} records/s = ${((s.recordsPerSec * 1024) / 1e6).toFixed(1)} MB/s; latency p50 ${s.p50Ms} ms, p99 ${s.p99Ms} ms, max ${s.maxMs} ms; ${rolls} rolls; event-loop delay at most ${worst} (per-second maxima: ${lags.map((l) => (l * 1000).toFixed(0)).join(" ")} ms)`,
    );
  } finally {
    await broker.close();
  }
}

installCleanup();
console.log(
  `Segment-roll benchmark, ${new Date().toISOString()}; build ${DIST}; ${RECORDS} × 1 KiB per round`,
);
for (let i = 1; i <= ROUNDS; i++) await round(i);
