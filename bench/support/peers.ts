// Benchmark support: the reference figures a throughput figure is judged against. `iperf3Loopback` is
// the machine's loopback TCP bandwidth (one iperf3 stream, `iperf3 -s -1` + `iperf3 -c 127.0.0.1 -J`).
// `redisStreams` is the peer users would otherwise pick: a fresh `redis-server` (no persistence, in a
// temporary dir) fed by `redis-benchmark -P 64 ... XADD s * f <value>` with 1 KiB values, then read
// with `XRANGE s - + COUNT 100`. redis-benchmark 7.0 does not substitute `__data__` (nor apply `-d`) in
// a custom command (it stores the 8 bytes "__data__"), so the 1 KiB value is passed literally and the
// stored entries are checked (count and value length) before the figure is used.
// Debian: apt-get install -y iperf3 redis-server redis-tools.

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, sleep } from "../../test/support/broker-harness.js";
import {
  type Finished,
  registerTempDir,
  removeTempDir,
  runChild,
  spawnChild,
  tail,
} from "./child-processes.js";
import { ProcSampler, type ProcUsage } from "./proc-sampler.js";

export interface IperfResult {
  /** Bytes per second received by the server (end.sum_received). */
  readonly bytesPerSecond: number;
  readonly seconds: number;
  /** iperf3's own CPU figures (percent of one core): client (sender) and server (receiver). */
  readonly senderCpuPercent: number;
  readonly receiverCpuPercent: number;
}

interface IperfJson {
  error?: string;
  end?: {
    sum_received?: { bits_per_second: number; seconds: number };
    cpu_utilization_percent?: { host_total: number; remote_total: number };
  };
}

/** One TCP stream over 127.0.0.1 for `seconds`. Throws with iperf3's message on failure. */
export async function iperf3Loopback(seconds: number, timeoutMs: number): Promise<IperfResult> {
  const port = await freePort();
  const server = spawnChild("iperf3", ["-s", "-1", "-B", "127.0.0.1", "-p", String(port)], { timeoutMs });
  try {
    let last: Finished | undefined;
    for (let attempt = 0; attempt < 10; attempt++) {
      await sleep(200); // the server needs a moment to listen
      last = await runChild("iperf3", ["-c", "127.0.0.1", "-p", String(port), "-t", String(seconds), "-J"], {
        timeoutMs: seconds * 1000 + 15_000,
      });
      let j: IperfJson;
      try {
        j = JSON.parse(last.stdout) as IperfJson;
      } catch {
        throw new Error(`iperf3 -c: no JSON output (${tail(last)})`);
      }
      if (j.error !== undefined) {
        if (/connection refused/i.test(j.error)) continue;
        throw new Error(`iperf3 -c: ${j.error}`);
      }
      const r = j.end?.sum_received;
      if (!r || !(r.bits_per_second > 0)) throw new Error("iperf3 -c: no end.sum_received in its JSON");
      return {
        bytesPerSecond: r.bits_per_second / 8,
        seconds: r.seconds,
        senderCpuPercent: j.end?.cpu_utilization_percent?.host_total ?? Number.NaN,
        receiverCpuPercent: j.end?.cpu_utilization_percent?.remote_total ?? Number.NaN,
      };
    }
    throw new Error(`iperf3 -c: the server on port ${port} never accepted (${last ? tail(last) : ""})`);
  } finally {
    await server.stop(2_000);
  }
}

export interface RedisStreamsResult {
  readonly version: string;
  readonly entries: number;
  readonly valueBytes: number;
  readonly pipeline: number;
  /** XADD requests per second as redis-benchmark reports them. */
  readonly xaddPerSecond: number;
  readonly xaddWallSeconds: number;
  /** redis-server and redis-benchmark during the XADD run. */
  readonly server: ProcUsage;
  readonly client: ProcUsage;
  /** XRANGE s - + COUNT 100 requests per second (each returns 100 entries), or NaN when it failed. */
  readonly xrangePerSecond: number;
  readonly xrangeCount: number;
  readonly xrangeError?: string;
}

/** A random 1 KiB of uppercase letters, as Kafka's perf producer fills its payloads. */
function letters(n: number): string {
  let s = "";
  for (let i = 0; i < n; i++) s += String.fromCharCode(65 + Math.floor(Math.random() * 26));
  return s;
}

function requestsPerSecond(r: Finished, what: string): number {
  // -q prints progress with \r, then "<command>: 123456.78 requests per second, p50=... msec".
  const all = [...r.stdout.matchAll(/: ([\d.]+) requests per second/g)];
  if (r.code !== 0 || all.length === 0)
    throw new Error(`redis-benchmark ${what}: exit ${r.code} (${tail(r)})`);
  return Number(all[all.length - 1][1]);
}

/**
 * Starts a redis-server on a free port in a temporary dir (`--save '' --appendonly no`), runs XADD with
 * `entries` 1 KiB values at pipeline 64, checks what was stored, measures XRANGE reads, stops it.
 */
export async function redisStreams(
  entries: number,
  deadline: number,
  onPhase: (line: string) => void,
): Promise<RedisStreamsResult> {
  const dir = mkdtempSync(join(tmpdir(), "tributary-bench-redis-"));
  registerTempDir(dir);
  const port = String(await freePort());
  const left = (): number => Math.max(1_000, deadline - Date.now());
  const cli = (...args: string[]): Promise<Finished> =>
    runChild("redis-cli", ["-h", "127.0.0.1", "-p", port, ...args], { timeoutMs: 10_000 });
  const server = spawnChild(
    "redis-server",
    ["--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
    { timeoutMs: left() },
  );
  try {
    let up = false;
    for (let i = 0; i < 50 && !up; i++) {
      await sleep(100);
      up = (await cli("PING")).stdout.trim() === "PONG";
    }
    if (!up)
      throw new Error(
        `redis-server on port ${port} did not answer PING within 5 s (${tail(await server.stop())})`,
      );
    const info = (await cli("INFO", "server")).stdout;
    const version = /redis_version:(\S+)/.exec(info)?.[1] ?? "?";

    const valueBytes = 1024;
    const pipeline = 64;
    onPhase(`redis-benchmark -P ${pipeline} -n ${entries} XADD s '*' f <${valueBytes} bytes>`);
    const sampler = new ProcSampler();
    sampler.add("server", server.pid);
    const bench = spawnChild(
      "redis-benchmark",
      ["-h", "127.0.0.1", "-p", port, "-P", String(pipeline), "-n", String(entries), "-q"].concat([
        "XADD",
        "s",
        "*",
        "f",
        letters(valueBytes),
      ]),
      { timeoutMs: left() },
    );
    sampler.add("client", bench.pid);
    sampler.start();
    const xadd = await bench.done;
    sampler.stop();
    const xaddPerSecond = requestsPerSecond(xadd, "XADD");

    const len = Number((await cli("XLEN", "s")).stdout.trim());
    const first = (await cli("XRANGE", "s", "-", "+", "COUNT", "1")).stdout.split("\n");
    // With pipelining redis-benchmark may send up to a pipeline's worth more per client than -n.
    if (!(len >= entries) || first[1] !== "f" || first[2]?.length !== valueBytes)
      throw new Error(
        `redis-benchmark XADD stored ${len} entries (expected ≥ ${entries}) with a value of ${first[2]?.length} bytes (expected ${valueBytes})`,
      );

    const xrangeCount = 100;
    let xrangePerSecond = Number.NaN;
    let xrangeError: string | undefined;
    onPhase(`redis-benchmark -P 16 -n 20000 XRANGE s - + COUNT ${xrangeCount}`);
    try {
      const xrange = await runChild(
        "redis-benchmark",
        ["-h", "127.0.0.1", "-p", port, "-P", "16", "-n", "20000", "-q", "XRANGE", "s", "-", "+"].concat([
          "COUNT",
          String(xrangeCount),
        ]),
        { timeoutMs: Math.min(60_000, left()) },
      );
      xrangePerSecond = requestsPerSecond(xrange, "XRANGE");
    } catch (e) {
      xrangeError = (e as Error).message;
    }
    return {
      version,
      entries,
      valueBytes,
      pipeline,
      xaddPerSecond,
      xaddWallSeconds: xadd.wallMs / 1000,
      server: sampler.usage("server")!,
      client: sampler.usage("client")!,
      xrangePerSecond,
      xrangeCount,
      xrangeError,
    };
  } finally {
    await server.stop(5_000);
    removeTempDir(dir);
  }
}
