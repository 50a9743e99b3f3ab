// `tributary producer-perf-test`: Kafka's kafka-producer-perf-test.sh (ProducerPerformance). Sends
// --num-records records of --record-size bytes (or payloads from --payload-file, or with
// --payload-monotonic the record's index as decimal text, 0, 1, 2, …) to --topic, throttled
// to --throughput records/s (-1: no limit), with Tributary's KafkaProducer configured by
// --producer-props k=v... and --producer.config. Prints Kafka's window line every 5 s and its summary
// line, formatted as ProducerPerformance's printf does:
//   N records sent, X.X records/sec (Y.YY MB/sec), A.A ms avg latency, M.0 ms max latency.
//   N records sent, X.XXXXXX records/sec (Y.YY MB/sec), A.AA ms avg latency, M.00 ms max latency, p50 ms 50th, p95 ms 95th, p99 ms 99th, p999 ms 99.9th.
// --warmup-records N (KIP-1052): the first N records count only in the whole-run summary; from record N on a
// second Stats takes over the window lines ("In steady state." at its first) and adds a summary line
// "M steady state records sent, …" after the whole-run one.
// Payloads are random uppercase letters as Kafka's are; instead of drawing every byte anew, each record
// takes one of 1,024 random windows of a 1 MiB random pool (same alphabet, much less CPU in the sender's
// loop; the windows are made once, so a record allocates no Buffer of its own).
// When the reader of its output goes away (`| head`), it stops sending, closes the producer (the records
// sent are still delivered) and ends with status 0, without the summary nobody would read.

import { readFileSync } from "node:fs";
import { KafkaProducer } from "../../client/producer/kafka-producer.js";
import type { SendCallback } from "../../client/producer/producer-batch.js";
import { producerConfigFromProperties } from "../../client/producer/producer-config.js";
import { loadPropertiesFile, parseKeyValue } from "../../client/producer/properties-file.js";
import { stdoutClosed } from "../tool-output.js";

/** How many random windows of the random pool the records' payloads are taken from. */
const PAYLOAD_WINDOWS = 1024;

const HELP = `usage: producer-perf-test --topic TOPIC --num-records NUM-RECORDS
                          (--record-size RECORD-SIZE | --payload-file PAYLOAD-FILE |
                           --payload-monotonic)
                          [--payload-delimiter PAYLOAD-DELIMITER] --throughput THROUGHPUT
                          [--producer-props PROP-NAME=PROP-VALUE [PROP-NAME=PROP-VALUE ...]]
                          [--producer.config CONFIG-FILE] [--warmup-records WARMUP-RECORDS]

This tool is used to verify the producer performance.

  --topic TOPIC              produce messages to this topic
  --num-records NUM-RECORDS  number of messages to produce
  --record-size RECORD-SIZE  message size in bytes
  --payload-file PAYLOAD-FILE
                             file to read the message payloads from (UTF-8 text); a payload is picked at
                             random for each message
  --payload-monotonic        payload is monotonically increasing integer. Note that you must provide
                             exactly one of --record-size or --payload-file or --payload-monotonic.
  --payload-delimiter PAYLOAD-DELIMITER
                             delimiter of the payloads in --payload-file (default: \\n)
  --throughput THROUGHPUT    throttle maximum message throughput to *approximately* THROUGHPUT
                             messages/sec. Set this to -1 to disable throttling.
  --producer-props PROP-NAME=PROP-VALUE ...
                             kafka producer related configuration properties like bootstrap.servers,
                             client.id etc. These configs take precedence over those passed via
                             --producer.config.
  --producer.config CONFIG-FILE
                             producer config properties file.
  --warmup-records WARMUP-RECORDS
                             The number of records to treat as warmup; these initial records will not be
                             included in steady-state statistics. An additional summary line will be
                             printed describing the steady-state statistics. (default: 0).
  --help                     print this help`;

export interface ProducerPerfOptions {
  topic: string;
  numRecords: number;
  recordSize: number | undefined;
  payloadFile: string | undefined;
  /** --payload-monotonic: each record's value is its index as decimal text (Kafka's Long.toString). */
  payloadMonotonic: boolean;
  payloadDelimiter: string;
  throughput: number;
  props: Record<string, string>;
  warmupRecords: number;
}

class UsageError extends Error {}

const VALUE_FLAGS = new Set([
  "--topic",
  "--num-records",
  "--record-size",
  "--payload-file",
  "--payload-delimiter",
  "--throughput",
  "--producer.config",
  "--warmup-records",
]);

function numberArg(flag: string, v: string, integer: boolean): number {
  const n = Number(v);
  if (v.trim() === "" || !Number.isFinite(n) || (integer && !Number.isInteger(n))) {
    throw new UsageError(
      `argument ${flag}: could not convert '${v}' to ${integer ? "an integer" : "a number"}`,
    );
  }
  return n;
}

export function parseProducerPerfArgs(args: readonly string[]): ProducerPerfOptions | "help" {
  const values = new Map<string, string>();
  const producerProps: string[] = [];
  let payloadMonotonic = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--help" || a === "-h") return "help";
    if (a === "--payload-monotonic") {
      payloadMonotonic = true;
      continue;
    }
    if (a === "--producer-props") {
      let n = 0;
      while (i + 1 < args.length && !args[i + 1].startsWith("--")) {
        producerProps.push(args[++i]);
        n++;
      }
      if (n === 0) throw new UsageError("argument --producer-props: expected at least one argument");
      continue;
    }
    if (!VALUE_FLAGS.has(a)) {
      throw new UsageError(
        a.startsWith("-") ? `unrecognized argument '${a}' (see --help)` : `unexpected argument '${a}'`,
      );
    }
    const v = args[i + 1];
    if (v === undefined) throw new UsageError(`argument ${a}: expected one argument`);
    values.set(a, v);
    i++;
  }
  for (const required of ["--topic", "--num-records", "--throughput"]) {
    if (!values.has(required)) throw new UsageError(`argument ${required} is required`);
  }
  const recordSize = values.has("--record-size")
    ? numberArg("--record-size", values.get("--record-size")!, true)
    : undefined;
  const payloadFile = values.get("--payload-file");
  if ([recordSize !== undefined, payloadFile !== undefined, payloadMonotonic].filter(Boolean).length !== 1) {
    throw new UsageError(
      "exactly one of --record-size or --payload-file or --payload-monotonic must be specified",
    );
  }
  const numRecords = numberArg("--num-records", values.get("--num-records")!, true);
  if (numRecords <= 0) throw new UsageError("--num-records should be greater than zero");
  const warmupRecords = Math.max(
    0,
    values.has("--warmup-records") ? numberArg("--warmup-records", values.get("--warmup-records")!, true) : 0,
  );
  if (warmupRecords >= numRecords) {
    throw new UsageError(
      "The value for --warmup-records must be strictly fewer than the number of records in the test, --num-records.",
    );
  }
  if (recordSize !== undefined && recordSize <= 0)
    throw new UsageError("--record-size should be greater than zero");
  const configFile = values.get("--producer.config");
  if (producerProps.length === 0 && configFile === undefined) {
    throw new UsageError("Either --producer-props or --producer.config must be specified.");
  }
  const props: Record<string, string> = configFile ? loadPropertiesFile(configFile) : {};
  for (const p of producerProps) {
    const [k, v] = parseKeyValue("--producer-props", p);
    if (v.includes("=")) throw new UsageError(`Invalid property: ${p}`);
    props[k] = v;
  }
  if (props["client.id"] === undefined) props["client.id"] = "perf-producer-client";
  const delimiter = values.get("--payload-delimiter") ?? "\\n";
  return {
    topic: values.get("--topic")!,
    numRecords,
    recordSize,
    payloadFile,
    payloadMonotonic,
    payloadDelimiter: delimiter === "\\n" ? "\n" : delimiter,
    throughput: numberArg("--throughput", values.get("--throughput")!, false),
    props,
    warmupRecords,
  };
}

/** Java's %.Nf for the values printed here. */
function fixed(n: number, digits: number): string {
  if (!Number.isFinite(n)) return Number.isNaN(n) ? "NaN" : n > 0 ? "Infinity" : "-Infinity";
  return n.toFixed(digits);
}

/** ProducerPerformance.Stats: window lines every 5 s, the total line, sampled latency percentiles. */
export class ProducerPerfStats {
  private readonly start: number;
  private windowStart: number;
  private readonly latencies: Int32Array;
  private readonly sampling: number;
  private iteration = 0;
  private index = 0;
  count = 0;
  private bytes = 0;
  private maxLatency = 0;
  private totalLatency = 0;
  private windowCount = 0;
  private windowMaxLatency = 0;
  private windowTotalLatency = 0;
  private windowBytes = 0;
  private suppressed = false;

  constructor(
    numRecords: number,
    private readonly print: (line: string) => void,
    private readonly now: () => number = Date.now,
    private readonly reportingIntervalMs = 5000,
    /** The steady-state Stats of --warmup-records (its summary says "steady state"). */
    private readonly isSteadyState = false,
  ) {
    this.start = now();
    this.windowStart = this.start;
    this.sampling = Math.floor(numRecords / Math.min(numRecords, 500000));
    this.latencies = new Int32Array(Math.floor(numRecords / this.sampling) + 1);
  }

  record(latency: number, bytes: number, time: number): void {
    this.count++;
    this.bytes += bytes;
    this.totalLatency += latency;
    if (latency > this.maxLatency) this.maxLatency = latency;
    this.windowCount++;
    this.windowBytes += bytes;
    this.windowTotalLatency += latency;
    if (latency > this.windowMaxLatency) this.windowMaxLatency = latency;
    if (this.iteration % this.sampling === 0) {
      this.latencies[this.index] = latency;
      this.index++;
    }
    if (time - this.windowStart >= this.reportingIntervalMs) {
      if (this.isSteadyState && this.count === this.windowCount) this.print("In steady state.");
      if (!this.suppressed) this.printWindow();
      this.newWindow();
    }
    this.iteration++;
  }

  /** No more window lines (the whole-run Stats once the steady-state one takes over). */
  suppressPrinting(): void {
    this.suppressed = true;
  }

  printWindow(): void {
    const elapsed = this.now() - this.windowStart;
    const recsPerSec = (1000.0 * this.windowCount) / elapsed;
    const mbPerSec = (1000.0 * this.windowBytes) / elapsed / (1024.0 * 1024.0);
    this.print(
      `${this.windowCount} records sent, ${fixed(recsPerSec, 1)} records/sec (${fixed(mbPerSec, 2)} MB/sec), ${fixed(this.windowTotalLatency / this.windowCount, 1)} ms avg latency, ${fixed(this.windowMaxLatency, 1)} ms max latency.`,
    );
  }

  private newWindow(): void {
    this.windowStart = this.now();
    this.windowCount = 0;
    this.windowMaxLatency = 0;
    this.windowTotalLatency = 0;
    this.windowBytes = 0;
  }

  printTotal(): void {
    const elapsed = this.now() - this.start;
    const recsPerSec = (1000.0 * this.count) / elapsed;
    const mbPerSec = (1000.0 * this.bytes) / elapsed / (1024.0 * 1024.0);
    const size = Math.min(this.index, this.latencies.length);
    const sorted = this.latencies.slice(0, size).sort();
    const perc = (p: number): number => (size === 0 ? 0 : sorted[Math.floor(p * size)]);
    this.print(
      `${this.count}${this.isSteadyState ? " steady state" : ""} records sent, ${fixed(recsPerSec, 6)} records/sec (${fixed(mbPerSec, 2)} MB/sec), ${fixed(this.totalLatency / this.count, 2)} ms avg latency, ${fixed(this.maxLatency, 2)} ms max latency, ${perc(0.5)} ms 50th, ${perc(0.95)} ms 95th, ${perc(0.99)} ms 99th, ${perc(0.999)} ms 99.9th.`,
    );
  }
}

function readPayloads(path: string, delimiter: string): Buffer[] {
  console.log(`Reading payloads from: ${path}`);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    throw new UsageError("File does not exist or empty file provided.");
  }
  if (text.length === 0) throw new UsageError("File does not exist or empty file provided.");
  const payloads = text
    .split(delimiter)
    .filter((s) => s !== "")
    .map((s) => Buffer.from(s, "utf8"));
  console.log(`Number of messages read: ${payloads.length}`);
  return payloads;
}

export async function runProducerPerfTest(args: string[]): Promise<number> {
  let opts: ProducerPerfOptions | "help";
  try {
    opts = parseProducerPerfArgs(args);
  } catch (e) {
    console.error(`tributary producer-perf-test: ${(e as Error).message}`);
    return 1;
  }
  if (opts === "help") {
    console.log(HELP);
    return 0;
  }
  let config: ReturnType<typeof producerConfigFromProperties>;
  let payloads: Buffer[] = [];
  try {
    config = producerConfigFromProperties(opts.props);
    if (opts.payloadFile !== undefined) payloads = readPayloads(opts.payloadFile, opts.payloadDelimiter);
  } catch (e) {
    console.error(`tributary producer-perf-test: ${(e as Error).message}`);
    return 1;
  }
  const producer = new KafkaProducer(config);
  // A random pool of uppercase letters; each record is one of PAYLOAD_WINDOWS random windows of it.
  const recordSize = opts.recordSize ?? 0;
  const poolSize = recordSize > 0 ? Math.max(1 << 20, recordSize * 2) : 0;
  const pool = Buffer.allocUnsafe(poolSize);
  for (let i = 0; i < poolSize; i++) pool[i] = 65 + Math.floor(Math.random() * 26);
  if (payloads.length === 0 && recordSize > 0)
    payloads = Array.from({ length: PAYLOAD_WINDOWS }, () => {
      const start = ((poolSize - recordSize) * Math.random()) | 0;
      return pool.subarray(start, start + recordSize);
    });
  const payloadOf = (): Buffer => payloads[Math.floor(Math.random() * payloads.length)];

  let failed: Error | undefined;
  const print = (l: string): void => console.log(l);
  if (opts.warmupRecords > 0) {
    print(
      `Warmup first ${opts.warmupRecords} records. Steady state results will print after the complete test summary.`,
    );
  }
  const stats = new ProducerPerfStats(opts.numRecords, print);
  let steadyStateStats: ProducerPerfStats | undefined;
  const startMs = Date.now();
  const throughput = opts.throughput;
  let lastYieldMs = startMs;
  for (let i = 0; i < opts.numRecords; i++) {
    if (stdoutClosed()) break;
    const payload = opts.payloadMonotonic ? Buffer.from(String(i), "utf8") : payloadOf();
    const sendStart = Date.now();
    const bytes = payload.length;
    if (opts.warmupRecords > 0 && i === opts.warmupRecords) {
      steadyStateStats = new ProducerPerfStats(
        opts.numRecords - opts.warmupRecords,
        print,
        Date.now,
        5000,
        true,
      );
      stats.suppressPrinting();
    }
    const steady = steadyStateStats;
    // What the callback keeps until the acknowledgement, as small integers: with acks=all that is ~100 ms,
    // and a time since the epoch would be one more heap object per record for the young-generation GC
    // to copy.
    const sentAfterMs = sendStart - startMs;
    const cb: SendCallback = (e) => {
      const now = Date.now();
      if (e === null) {
        const latency = now - startMs - sentAfterMs;
        stats.record(latency, bytes, now);
        steady?.record(latency, bytes, now);
      } else if (failed === undefined) {
        failed = e;
        console.error(`tributary producer-perf-test: ${e.message}`);
      }
    };
    producer.sendWithCallback({ topic: opts.topic, value: payload }, cb);
    if (failed) break;
    // ThroughputThrottler: keep the rate at about `throughput` records/s.
    if (throughput > 0) {
      const elapsed = Date.now() - startMs;
      const ahead = ((i + 1) / throughput) * 1000 - elapsed;
      if (ahead >= 2) {
        await new Promise((r) => setTimeout(r, ahead));
        lastYieldMs = Date.now();
      }
    } else if (throughput === 0) {
      await new Promise(() => {});
    }
    // Kafka's producer sends from its own I/O thread while this loop runs; here the two share one event
    // loop, so the loop lets the sender and the network run at least once a millisecond.
    if (producer.bufferFull) {
      await producer.waitForSpace();
      lastYieldMs = Date.now();
    } else if (sendStart - lastYieldMs >= 1) {
      await new Promise((r) => setImmediate(r));
      lastYieldMs = Date.now();
    }
  }
  await producer.close();
  if (stdoutClosed()) return failed ? 1 : 0;
  if (failed && stats.count === 0) return 1;
  stats.printTotal();
  steadyStateStats?.printTotal();
  return failed ? 1 : 0;
}
