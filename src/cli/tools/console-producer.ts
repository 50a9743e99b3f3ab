// `tributary console-producer`: Kafka's kafka-console-producer.sh. Reads stdin line by line and sends
// each line as a record to --topic with Tributary's KafkaProducer, as Kafka's LineMessageReader does:
// `--property parse.key=true` splits key and value at `key.separator` (default tab), `parse.headers`
// reads `h1:v1,h2:v2` before them (headers.delimiter / headers.separator / headers.key.separator),
// `null.marker` turns a matching key or value into null (reader properties from --reader-config, then
// --property; --line-reader may name Kafka's LineMessageReader, the only reader). Producer settings:
// --producer.config file, then --producer-property k=v, then the explicit flags (--request-required-acks, default -1;
// --compression-codec, gzip when given without a value; --batch-size / --max-partition-memory-bytes =
// batch.size; --timeout = linger.ms, 1000; --request-timeout-ms, 1500; --message-send-max-retries =
// retries; --retry-backoff-ms; --metadata-expiry-ms = metadata.max.age.ms; --max-block-ms;
// --max-memory-bytes = buffer.memory; --socket-buffer-size = send.buffer.bytes, which Node cannot set
// and the producer ignores; --sync), as ConsoleProducer merges them: an explicit flag wins, a flag's
// default fills a key the properties left unset. A send error is printed as Kafka's
// ErrorLoggingCallback does.

import { createInterface } from "node:readline";
import { KafkaProducer, type ProducerRecord } from "../../client/producer/kafka-producer.js";
import { producerConfigFromProperties } from "../../client/producer/producer-config.js";
import { loadPropertiesFile, parseKeyValue } from "../../client/producer/properties-file.js";
import type { RecordHeader } from "../../protocol/records/record.js";
import { checkRequired, type ParsedArgs, runTool, type ToolSpec, UsageError } from "../args.js";
import { bootstrapServerOption } from "../tool-options.js";

/** --line-reader: Kafka's LineMessageReader by its 4.x and 3.x class names (the default; the only one). */
const LINE_READER = "org.apache.kafka.tools.LineMessageReader";
const LINE_READERS: ReadonlySet<string> = new Set([
  LINE_READER,
  "kafka.tools.ConsoleProducer$LineMessageReader",
]);

export const CONSOLE_PRODUCER_SPEC: ToolSpec = {
  name: "console-producer",
  description: "This tool helps to read data from standard input and publish it to Kafka.",
  options: [
    bootstrapServerOption(
      "REQUIRED: The server(s) to connect to. The broker list string in the form HOST1:PORT1,HOST2:PORT2.",
    ),
    {
      name: "topic",
      description: "REQUIRED: The topic id to produce messages to.",
      arg: { type: "String", describedAs: "topic" },
    },
    {
      name: "batch-size",
      description: "Number of messages to send in a single batch if they are not being sent synchronously.",
      arg: { type: "Integer", describedAs: "size" },
      defaultValue: "16384",
    },
    {
      name: "compression-codec",
      description:
        "The compression codec: either 'none', 'gzip', 'snappy', 'lz4', or 'zstd'. If specified without value, then it defaults to 'gzip'",
      arg: { type: "String", describedAs: "compression-codec" },
    },
    {
      name: "producer-property",
      description: "A mechanism to pass user-defined properties in the form key=value to the producer.",
      arg: { type: "String", describedAs: "producer_prop" },
    },
    {
      name: "producer.config",
      description:
        "Producer config properties file. Note that [producer-property] takes precedence over this config.",
      arg: { type: "String", describedAs: "config file" },
    },
    {
      name: "property",
      description:
        "A mechanism to pass user-defined properties in the form key=value to the message reader: parse.key, key.separator, parse.headers, headers.delimiter, headers.separator, headers.key.separator, null.marker, ignore.error.",
      arg: { type: "String", describedAs: "prop" },
    },
    {
      name: "line-reader",
      description:
        "The class name of the class to use for reading lines from standard in. By default each line is read as a separate message.",
      arg: { type: "String", describedAs: "reader_class" },
      defaultValue: LINE_READER,
    },
    {
      name: "reader-config",
      description:
        "Config properties file for the message reader. Note that [property] takes precedence over this config.",
      arg: { type: "String", describedAs: "config file" },
    },
    {
      name: "request-required-acks",
      description: "The required `acks` of the producer requests",
      arg: { type: "String", describedAs: "request required acks" },
      defaultValue: "-1",
    },
    {
      name: "sync",
      description:
        "If set message send requests to the brokers are synchronously, one at a time as they arrive.",
    },
    {
      name: "timeout",
      description:
        "If set and the producer is running in asynchronous mode, this gives the maximum amount of time a message will queue awaiting sufficient batch size. The value is given in ms. This is the option to control `linger.ms` in producer configs.",
      arg: { type: "Long", describedAs: "timeout_ms" },
      defaultValue: "1000",
    },
    {
      name: "request-timeout-ms",
      description: "The ack timeout of the producer requests. Value must be non-negative and non-zero.",
      arg: { type: "Integer", describedAs: "request timeout ms" },
      defaultValue: "1500",
    },
    {
      name: "message-send-max-retries",
      description:
        "Brokers can fail receiving the message for multiple reasons, and being unavailable transiently is just one of them. This property specifies the number of retries before the producer give up and drop this message. This is the option to control `retries` in producer configs.",
      arg: { type: "Integer", describedAs: "Integer" },
      defaultValue: "3",
    },
    {
      name: "retry-backoff-ms",
      description:
        "Before each retry, the producer refreshes the metadata of relevant topics. Since leader election takes a bit of time, this property specifies the amount of time that the producer waits before refreshing the metadata. This is the option to control `retry.backoff.ms` in producer configs.",
      arg: { type: "Long", describedAs: "Long" },
      defaultValue: "100",
    },
    {
      name: "metadata-expiry-ms",
      description:
        "The period of time in milliseconds after which we force a refresh of metadata even if we haven't seen any leadership changes. This is the option to control `metadata.max.age.ms` in producer configs.",
      arg: { type: "Long", describedAs: "metadata expiration interval" },
      defaultValue: "300000",
    },
    {
      name: "max-block-ms",
      description:
        "The max time that the producer will block for during a send request. This is the option to control `max.block.ms` in producer configs.",
      arg: { type: "Long", describedAs: "max block on send" },
      defaultValue: "60000",
    },
    {
      name: "max-memory-bytes",
      description:
        "The total memory used by the producer to buffer records waiting to be sent to the server. This is the option to control `buffer.memory` in producer configs.",
      arg: { type: "Long", describedAs: "total memory in bytes" },
      defaultValue: "33554432",
    },
    {
      name: "max-partition-memory-bytes",
      description:
        "The buffer size allocated for a partition. When records are received which are smaller than this size the producer will attempt to optimistically group them together until this size is reached. This is the option to control `batch.size` in producer configs.",
      arg: { type: "Integer", describedAs: "memory in bytes per partition" },
      defaultValue: "16384",
    },
    {
      name: "socket-buffer-size",
      description:
        "The size of the tcp RECV size. This is the option to control `send.buffer.bytes` in producer configs.",
      arg: { type: "Integer", describedAs: "size" },
      defaultValue: "102400",
    },
  ],
};

export interface ConsoleProducerOptions {
  topic: string;
  sync: boolean;
  producerProps: Record<string, string>;
  reader: LineReaderConfig;
}

export interface LineReaderConfig {
  parseKey: boolean;
  keySeparator: string;
  parseHeaders: boolean;
  headersDelimiter: string;
  headersSeparator: string;
  headersKeySeparator: string;
  nullMarker: string | undefined;
  ignoreError: boolean;
}

/** Kafka's --compression-codec takes an optional value (gzip when absent). */
function withCodecDefault(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    out.push(argv[i]);
    if (argv[i] === "--compression-codec" && (i + 1 >= argv.length || argv[i + 1].startsWith("--")))
      out.push("gzip");
  }
  return out;
}

export function consoleProducerOptions(args: ParsedArgs): ConsoleProducerOptions {
  checkRequired(args, "bootstrap-server", "topic");
  const configFile = args.value("producer.config");
  const props: Record<string, string> = configFile ? loadPropertiesFile(configFile) : {};
  for (const p of args.values("producer-property")) {
    const [k, v] = parseKeyValue("--producer-property", p);
    props[k] = v;
  }
  props["bootstrap.servers"] = args.value("bootstrap-server")!;
  // ConsoleProducer's maybeMergeOptions: an explicit flag wins, its default fills a missing key.
  const merge = (key: string, name: string): void => {
    if (args.has(name) || props[key] === undefined) props[key] = args.value(name)!;
  };
  merge("acks", "request-required-acks");
  merge("request.timeout.ms", "request-timeout-ms");
  merge("retries", "message-send-max-retries");
  merge("retry.backoff.ms", "retry-backoff-ms");
  merge("send.buffer.bytes", "socket-buffer-size");
  merge("buffer.memory", "max-memory-bytes");
  // Two flags set batch.size, as in Kafka: --max-partition-memory-bytes is merged last.
  merge("batch.size", "batch-size");
  merge("batch.size", "max-partition-memory-bytes");
  merge("metadata.max.age.ms", "metadata-expiry-ms");
  merge("max.block.ms", "max-block-ms");
  merge("linger.ms", "timeout");
  if (args.has("compression-codec")) props["compression.type"] = args.value("compression-codec")!;
  else if (props["compression.type"] === undefined) props["compression.type"] = "none";
  if (props["client.id"] === undefined) props["client.id"] = "console-producer";
  // Kafka's readerProps(): the --reader-config file, then the --property values over it.
  const readerConfig = args.value("reader-config");
  const reader: Record<string, string> = readerConfig ? loadPropertiesFile(readerConfig) : {};
  const lineReader = args.value("line-reader")!;
  if (!LINE_READERS.has(lineReader)) {
    throw new UsageError(
      `--line-reader: unknown class '${lineReader}' (expected one of ${[...LINE_READERS].join(", ")})`,
    );
  }
  for (const p of args.values("property")) {
    const [k, v] = parseKeyValue("--property", p);
    reader[k] = v;
  }
  const bool = (k: string): boolean => (reader[k] ?? "false").trim().toLowerCase() === "true";
  return {
    topic: args.value("topic")!,
    sync: args.has("sync"),
    producerProps: props,
    reader: {
      parseKey: bool("parse.key"),
      keySeparator: reader["key.separator"] ?? "\t",
      parseHeaders: bool("parse.headers"),
      headersDelimiter: reader["headers.delimiter"] ?? "\t",
      headersSeparator: reader["headers.separator"] ?? ",",
      headersKeySeparator: reader["headers.key.separator"] ?? ":",
      nullMarker: reader["null.marker"],
      ignoreError: bool("ignore.error"),
    },
  };
}

/** One stdin line → a record (Kafka's LineMessageReader). Throws naming the line on a missing separator. */
export function lineToRecord(
  topic: string,
  line: string,
  lineNumber: number,
  c: LineReaderConfig,
): ProducerRecord {
  let rest = line;
  let headers: RecordHeader[] = [];
  const orNull = (s: string): Buffer | null =>
    c.nullMarker !== undefined && s === c.nullMarker ? null : Buffer.from(s, "utf8");
  if (c.parseHeaders) {
    const at = rest.indexOf(c.headersDelimiter);
    if (at < 0) {
      if (!c.ignoreError)
        throw new Error(`No headers delimiter found on line number ${lineNumber}: '${line}'`);
    } else {
      const text = rest.slice(0, at);
      rest = rest.slice(at + c.headersDelimiter.length);
      if (text !== "") {
        headers = text.split(c.headersSeparator).map((h) => {
          const k = h.indexOf(c.headersKeySeparator);
          if (k < 0) {
            if (!c.ignoreError)
              throw new Error(`No header key separator found in pair '${h}' on line number ${lineNumber}`);
            return { key: h, value: null };
          }
          const value = h.slice(k + c.headersKeySeparator.length);
          return { key: h.slice(0, k), value: orNull(value) };
        });
      }
    }
  }
  if (!c.parseKey) return { topic, key: null, value: orNull(rest), headers };
  const at = rest.indexOf(c.keySeparator);
  if (at < 0) {
    if (c.ignoreError) return { topic, key: null, value: orNull(rest), headers };
    throw new Error(`No key separator found on line number ${lineNumber}: '${line}'`);
  }
  return {
    topic,
    key: orNull(rest.slice(0, at)),
    value: orNull(rest.slice(at + c.keySeparator.length)),
    headers,
  };
}

export function runConsoleProducer(argv: string[]): Promise<number> {
  return runTool(CONSOLE_PRODUCER_SPEC, withCodecDefault(argv), async (args) => {
    const o = consoleProducerOptions(args);
    const producer = new KafkaProducer(producerConfigFromProperties(o.producerProps));
    let status = 0;
    let lineNumber = 0;
    const rl = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
    try {
      for await (const line of rl) {
        lineNumber++;
        const record = lineToRecord(o.topic, line, lineNumber, o.reader);
        const sent = producer.send(record).catch((e: Error) => {
          // Kafka's ErrorLoggingCallback.
          const key = record.key === null || record.key === undefined ? "null" : record.key.toString();
          const value = record.value === null ? "null" : `${(record.value as Buffer).length} bytes`;
          process.stderr.write(
            `ERROR Error when sending message to topic ${o.topic} with key: ${key}, value: ${value} with error: ${e.message}\n`,
          );
          status = 1;
        });
        if (o.sync) {
          // One at a time: send now rather than after linger.ms, and wait for the acknowledgement.
          await producer.flush();
          await sent;
        } else if (producer.bufferFull) await producer.waitForSpace();
      }
    } finally {
      rl.close();
      await producer.close();
    }
    return status;
  });
}
