// Benchmark support: reads the summary lines of `tributary producer-perf-test` and `consumer-perf-test`,
// which print Kafka's ProducerPerformance and ConsumerPerformance formats:
//   N records sent, X records/sec (Y MB/sec), A ms avg latency, M ms max latency, p50 ms 50th, p95 ms 95th, p99 ms 99th, p999 ms 99.9th.
//   (with --warmup-records, a second such line: "N steady state records sent, …")
//   start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
// Kafka's "MB" in both is 1024 × 1024 bytes.

export interface ProducerSummary {
  readonly line: string;
  readonly records: number;
  readonly recordsPerSec: number;
  /** As printed: MiB/s. */
  readonly mibPerSec: number;
  readonly avgMs: number;
  readonly maxMs: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly p99Ms: number;
  readonly p999Ms: number;
}

const PRODUCER_SUMMARY =
  /^(\d+)( steady state)? records sent, ([\d.]+) records\/sec \(([\d.]+) MB\/sec\), ([\d.]+) ms avg latency, ([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99\.9th\.$/;

/**
 * The summary line of producer-perf-test's output (the whole run's, or with `steadyState` the one after
 * --warmup-records), or undefined when there is none.
 */
export function producerSummary(stdout: string, steadyState = false): ProducerSummary | undefined {
  for (const line of stdout.split("\n").reverse()) {
    const m = PRODUCER_SUMMARY.exec(line.trim());
    if (!m || (m[2] !== undefined) !== steadyState) continue;
    const n = [m[1], ...m.slice(3)].map(Number);
    return {
      line: line.trim(),
      records: n[0],
      recordsPerSec: n[1],
      mibPerSec: n[2],
      avgMs: n[3],
      maxMs: n[4],
      p50Ms: n[5],
      p95Ms: n[6],
      p99Ms: n[7],
      p999Ms: n[8],
    };
  }
  return undefined;
}

export interface ConsumerSummary {
  readonly line: string;
  /** As printed: MiB, and MiB/s and msgs/s over the whole run (group join included). */
  readonly mib: number;
  readonly mibPerSec: number;
  readonly messages: number;
  readonly messagesPerSec: number;
  /** Time to join the group and get partitions (Kafka's rebalance.time.ms). */
  readonly rebalanceMs: number;
  /** The rest of the run, and MiB/s and msgs/s over it (Kafka's fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec). */
  readonly fetchTimeMs: number;
  readonly fetchMibPerSec: number;
  readonly fetchMessagesPerSec: number;
  /** start.time and end.time as Date.now() values (NaN unless in the default --date-format). */
  readonly startMs: number;
  readonly endMs: number;
  /** The tool's warning when it stopped before reading --messages records. */
  readonly warning?: string;
}

/** The CSV line after consumer-perf-test's header, or undefined when there is none. */
export function consumerSummary(stdout: string): ConsumerSummary | undefined {
  const lines = stdout.split("\n").map((l) => l.trim());
  const header = lines.findIndex((l) => l.startsWith("start.time, end.time, data.consumed.in.MB"));
  if (header < 0) return undefined;
  const warning = lines.find((l) => l.startsWith("WARNING:"));
  for (const line of lines.slice(header + 1)) {
    const f = line.split(", ");
    if (f.length !== 10) continue;
    const n = f.map(Number);
    if (![2, 3, 4, 5, 6, 7, 8, 9].every((i) => Number.isFinite(n[i]))) continue;
    return {
      line,
      mib: n[2],
      mibPerSec: n[3],
      messages: n[4],
      messagesPerSec: n[5],
      rebalanceMs: n[6],
      fetchTimeMs: n[7],
      fetchMibPerSec: n[8],
      fetchMessagesPerSec: n[9],
      startMs: localTime(f[0]),
      endMs: localTime(f[1]),
      warning,
    };
  }
  return undefined;
}

/** "yyyy-MM-dd HH:mm:ss:SSS" in local time (the tool's default --date-format) as a Date.now() value. */
function localTime(text: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2}):(\d{3})$/.exec(text);
  if (!m) return Number.NaN;
  const [y, mo, d, h, mi, sec, ms] = m.slice(1).map(Number);
  return new Date(y, mo - 1, d, h, mi, sec, ms).getTime();
}
