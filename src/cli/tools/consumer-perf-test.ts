// `tributary consumer-perf-test`: Kafka's kafka-consumer-perf-test.sh (ConsumerPerformance). Reads
// --messages records of --topic with Tributary's KafkaConsumer and prints Kafka's header and CSV line:
//   start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
// with times in --date-format (default yyyy-MM-dd HH:mm:ss:SSS) and %.4f numbers; --show-detailed-stats
// prints a "time, threadId, ..." line every --reporting-interval ms instead. Consumes in the group --group
// (default "perf-consumer-NNNNN", as Kafka's tool) by subscribe(); rebalance.time.ms is the time from the
// start (or from losing every partition) to getting partitions, measured by a rebalance listener as
// Kafka's ConsumerPerfRebListener, and fetch.time.ms the rest. Counts key + value bytes as Kafka does;
// check.crcs=false and auto.offset.reset=earliest (latest with --from-latest), as the Kafka tool sets.
// When the reader of its output goes away (`| head`), the run ends (consumer closed, status 0).

import { consumerConfigFromProperties } from "../../client/consumer/consumer-config.js";
import { KafkaConsumer } from "../../client/consumer/kafka-consumer.js";
import { loadPropertiesFile } from "../../client/producer/properties-file.js";
import { checkRequired, type ParsedArgs, runTool, type ToolSpec, UsageError } from "../args.js";
import { bootstrapServerOption } from "../tool-options.js";
import { StdoutClosedError, stdoutClosed } from "../tool-output.js";

export const CONSUMER_PERF_SPEC: ToolSpec = {
  name: "consumer-perf-test",
  description: "This tool is used to verify the consumer performance.",
  options: [
    bootstrapServerOption(),
    {
      name: "topic",
      description: "The topic to consume from.",
      arg: { type: "String", describedAs: "topic" },
    },
    {
      name: "messages",
      description: "REQUIRED: The number of messages to consume.",
      arg: { type: "Long", describedAs: "count" },
    },
    {
      name: "timeout",
      description: "The maximum allowed time in milliseconds between returned records.",
      arg: { type: "Long", describedAs: "milliseconds" },
      defaultValue: "10000",
    },
    {
      name: "reporting-interval",
      description: "Interval in milliseconds at which to print progress info.",
      arg: { type: "Long", describedAs: "interval_ms" },
      defaultValue: "5000",
    },
    {
      name: "show-detailed-stats",
      description:
        "If set, stats are reported for each reporting interval as configured by reporting-interval",
    },
    { name: "hide-header", description: "If set, skips printing the header for the stats" },
    {
      name: "date-format",
      description:
        "The date format to use for formatting the time field. See java.text.SimpleDateFormat for options.",
      arg: { type: "String", describedAs: "date format" },
      defaultValue: "yyyy-MM-dd HH:mm:ss:SSS",
    },
    {
      name: "fetch-size",
      description: "The amount of data to fetch in a single request.",
      arg: { type: "Integer", describedAs: "size" },
      defaultValue: "1048576",
    },
    {
      name: "socket-buffer-size",
      description: "The size of the tcp RECV size.",
      arg: { type: "Integer", describedAs: "size" },
      defaultValue: "2097152",
    },
    {
      name: "from-latest",
      description:
        "If the consumer does not already have an established offset to consume from, start with the latest message present in the log rather than the earliest message.",
    },
    {
      name: "consumer.config",
      description: "Consumer config properties file.",
      arg: { type: "String", describedAs: "config file" },
    },
    {
      name: "group",
      description: "The group id to consume on.",
      arg: { type: "String", describedAs: "gid" },
      defaultValue: `perf-consumer-${Math.floor(Math.random() * 100000)}`,
    },
  ],
};

export interface ConsumerPerfOptions {
  topic: string;
  messages: number;
  timeoutMs: number;
  reportingIntervalMs: number;
  showDetailedStats: boolean;
  hideHeader: boolean;
  dateFormat: string;
  consumerProps: Record<string, string>;
}

export function consumerPerfOptions(args: ParsedArgs): ConsumerPerfOptions {
  checkRequired(args, "messages");
  if (!args.has("topic"))
    throw new UsageError("Exactly one of the following arguments is required: [topic], [include]");
  checkRequired(args, "bootstrap-server");
  const reportingIntervalMs = args.int("reporting-interval")!;
  if (reportingIntervalMs <= 0) throw new UsageError("Reporting interval must be greater than 0.");
  const configFile = args.value("consumer.config");
  const props: Record<string, string> = configFile ? loadPropertiesFile(configFile) : {};
  props["bootstrap.servers"] = args.value("bootstrap-server")!;
  props["group.id"] = args.value("group")!;
  props["max.partition.fetch.bytes"] = args.value("fetch-size")!;
  // Kafka's tool sets receive.buffer.bytes (SO_RCVBUF); Node's sockets cannot, so the client ignores it.
  props["receive.buffer.bytes"] = args.value("socket-buffer-size")!;
  props["auto.offset.reset"] = args.has("from-latest") ? "latest" : "earliest";
  props["check.crcs"] = "false";
  if (props["client.id"] === undefined) props["client.id"] = "perf-consumer-client";
  return {
    topic: args.value("topic")!,
    messages: args.int("messages")!,
    timeoutMs: args.int("timeout")!,
    reportingIntervalMs,
    showDetailedStats: args.has("show-detailed-stats"),
    hideHeader: args.has("hide-header"),
    dateFormat: args.value("date-format")!,
    consumerProps: props,
  };
}

/** java.text.SimpleDateFormat for the common letters (y M d H h m s S a), in local time. */
export function formatDate(ms: number, pattern: string): string {
  const d = new Date(ms);
  const pad = (n: number, w: number): string => String(n).padStart(w, "0");
  let out = "";
  for (let i = 0; i < pattern.length; ) {
    const c = pattern[i];
    if (c === "'") {
      const end = pattern.indexOf("'", i + 1);
      out += end < 0 ? pattern.slice(i + 1) : pattern.slice(i + 1, end) || "'";
      i = end < 0 ? pattern.length : end + 1;
      continue;
    }
    let n = 1;
    while (pattern[i + n] === c) n++;
    i += n;
    switch (c) {
      case "y":
        out += n === 2 ? pad(d.getFullYear() % 100, 2) : pad(d.getFullYear(), n);
        break;
      case "M":
        out += pad(d.getMonth() + 1, n);
        break;
      case "d":
        out += pad(d.getDate(), n);
        break;
      case "H":
        out += pad(d.getHours(), n);
        break;
      case "h":
        out += pad(d.getHours() % 12 || 12, n);
        break;
      case "m":
        out += pad(d.getMinutes(), n);
        break;
      case "s":
        out += pad(d.getSeconds(), n);
        break;
      case "S":
        out += pad(d.getMilliseconds(), n);
        break;
      case "a":
        out += d.getHours() < 12 ? "AM" : "PM";
        break;
      default:
        out += c.repeat(n);
    }
  }
  return out;
}

const f4 = (n: number): string =>
  Number.isFinite(n) ? n.toFixed(4) : Number.isNaN(n) ? "NaN" : n > 0 ? "Infinity" : "-Infinity";

export const HEADER_FIELDS = ", rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec";

export function headerLine(detailed: boolean): string {
  return detailed
    ? `time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec${HEADER_FIELDS}`
    : `start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec${HEADER_FIELDS}`;
}

export function runConsumerPerfTest(argv: string[]): Promise<number> {
  return runTool(CONSUMER_PERF_SPEC, argv, (args) => consumerPerf(consumerPerfOptions(args)));
}

async function consumerPerf(o: ConsumerPerfOptions): Promise<number> {
  const consumer = new KafkaConsumer(consumerConfigFromProperties(o.consumerProps));
  if (!o.hideHeader) console.log(headerLine(o.showDetailedStats));
  let messagesRead = 0;
  let bytesRead = 0;
  let lastMessagesRead = 0;
  let lastBytesRead = 0;
  const startMs = Date.now();
  // Kafka's ConsumerPerfRebListener: time without partitions, from the start or the last full revocation.
  let joinTimeMs = 0;
  let joinTimeMsInSingleRound = 0;
  let joinStartMs = startMs;
  const owned = new Set<string>();
  try {
    await consumer.partitionsFor(o.topic);
    await consumer.subscribe([o.topic], {
      onPartitionsRevoked(partitions) {
        for (const tp of partitions) owned.delete(`${tp.topic}-${tp.partition}`);
        if (owned.size === 0) joinStartMs = Date.now();
      },
      onPartitionsAssigned(partitions) {
        if (owned.size === 0) {
          const elapsedMs = Date.now() - joinStartMs;
          joinTimeMs += elapsedMs;
          joinTimeMsInSingleRound += elapsedMs;
        }
        for (const tp of partitions) owned.add(`${tp.topic}-${tp.partition}`);
      },
    });
    let currentTimeMs = Date.now();
    let lastReportTimeMs = currentTimeMs;
    let lastConsumedTimeMs = currentTimeMs;
    while (messagesRead < o.messages && currentTimeMs - lastConsumedTimeMs <= o.timeoutMs) {
      // The reader of the output has gone (`| head`): the consumer is closed and the run ends.
      if (stdoutClosed()) throw new StdoutClosedError();
      const records = await consumer.poll(100);
      currentTimeMs = Date.now();
      if (records.length > 0) lastConsumedTimeMs = currentTimeMs;
      for (const r of records) {
        messagesRead++;
        if (r.key !== null) bytesRead += r.key.length;
        if (r.value !== null) bytesRead += r.value.length;
        if (currentTimeMs - lastReportTimeMs >= o.reportingIntervalMs) {
          if (o.showDetailedStats) {
            const elapsedMs = currentTimeMs - lastReportTimeMs;
            const totalMb = bytesRead / (1024 * 1024);
            const intervalMb = (bytesRead - lastBytesRead) / (1024 * 1024);
            const intervalMsgs = messagesRead - lastMessagesRead;
            const fetchTimeMs = elapsedMs - joinTimeMsInSingleRound;
            console.log(
              `${formatDate(currentTimeMs, o.dateFormat)}, 0, ${f4(totalMb)}, ${f4((1000.0 * intervalMb) / elapsedMs)}, ${messagesRead}, ${f4((intervalMsgs / elapsedMs) * 1000.0)}, ${joinTimeMsInSingleRound}, ${fetchTimeMs}, ${f4(fetchTimeMs <= 0 ? 0 : (1000.0 * intervalMb) / fetchTimeMs)}, ${f4(fetchTimeMs <= 0 ? 0 : (1000.0 * intervalMsgs) / fetchTimeMs)}`,
            );
          }
          joinTimeMsInSingleRound = 0;
          lastReportTimeMs = currentTimeMs;
          lastMessagesRead = messagesRead;
          lastBytesRead = bytesRead;
        }
      }
    }
    if (messagesRead < o.messages) {
      console.log(
        `WARNING: Exiting before consuming the expected number of messages: timeout (${o.timeoutMs} ms) exceeded. You can use the --timeout option to increase the timeout.`,
      );
    }
  } catch (e) {
    await consumer.close();
    throw e;
  }
  const endMs = Date.now();
  await consumer.close();
  const elapsedSec = (endMs - startMs) / 1000.0;
  const fetchTimeInMs = endMs - startMs - joinTimeMs;
  if (!o.showDetailedStats) {
    const totalMbRead = bytesRead / (1024 * 1024);
    console.log(
      `${formatDate(startMs, o.dateFormat)}, ${formatDate(endMs, o.dateFormat)}, ${f4(totalMbRead)}, ${f4(totalMbRead / elapsedSec)}, ${messagesRead}, ${f4(messagesRead / elapsedSec)}, ${joinTimeMs}, ${fetchTimeInMs}, ${f4(totalMbRead / (fetchTimeInMs / 1000.0))}, ${f4(messagesRead / (fetchTimeInMs / 1000.0))}`,
    );
  }
  return 0;
}
