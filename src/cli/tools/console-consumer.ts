// `tributary console-consumer`: Kafka's kafka-console-consumer.sh with its DefaultMessageFormatter.
// Reads --topic (or the topics whose whole name --include's regular expression matches, a pattern
// subscription) in a consumer group (subscribe): --group (or group.id in --consumer-property /
// --consumer.config, which must agree), else a random "console-consumer-NNNNN" group with
// enable.auto.commit=false unless set, as Kafka's ConsoleConsumerOptions; a group's committed offsets
// win, else auto.offset.reset (--from-beginning: earliest, default latest; an explicit auto.offset.reset
// that conflicts with --from-beginning is refused). --partition assigns that one partition (--offset
// earliest|latest|<n>) instead and cannot be used with a group. Each record prints as
// [CreateTime:ts<sep>][Partition:p<sep>][Offset:o<sep>][Delivery:NOT_PRESENT<sep>][Epoch:NOT_PRESENT<sep>]
// [h1:v1,h2:v2 | NO_HEADERS<sep>][key<sep>]value<line separator>, as selected by --property
// print.timestamp/print.partition/print.offset/print.delivery/print.epoch/print.headers/print.key/
// print.value, key.separator (tab), line.separator (\n), headers.separator (,), null.literal; keys,
// values and header values through Kafka's deserializer classes when --key-deserializer /
// --value-deserializer or key./value./headers.deserializer name one (message-deserializers.ts). A record
// they cannot read ends the run (exit 1) unless --skip-message-on-error. --formatter takes Kafka's
// DefaultMessageFormatter (3.x or 4.x class name) or NoOpMessageFormatter; --formatter-config is a
// properties file of formatter properties, which --property overrides.
// Stops after --max-messages, or when no record came for --timeout-ms (Kafka logs the TimeoutException
// and ends normally), then prints "Processed a total of N messages" on stderr; closing commits the
// consumed positions when auto-commit is on — records polled but not printed (--max-messages reached
// mid-batch) are sought back first, as Kafka's resetUnconsumedOffsets does — then leaves the group.
// When the reader of its output goes away (`| head`), it prints Kafka's "Unable to write to standard
// out, closing consumer." on stderr and ends the same way (closing, count, exit 0).

import { consumerConfigFromProperties, parseIsolationLevel } from "../../client/consumer/consumer-config.js";
import type { ConsumerRecord } from "../../client/consumer/fetcher.js";
import { KafkaConsumer } from "../../client/consumer/kafka-consumer.js";
import { loadPropertiesFile, parseKeyValue } from "../../client/producer/properties-file.js";
import { checkRequired, type ParsedArgs, runTool, type ToolSpec, UsageError } from "../args.js";
import { bootstrapServerOption } from "../tool-options.js";
import { StdoutClosedError, stdoutClosed, writeOutput } from "../tool-output.js";
import {
  DeserializationError,
  deserializerFor,
  type MessageDeserializer,
  SUPPORTED_DESERIALIZERS,
} from "./message-deserializers.js";

/** --formatter: Kafka's DefaultMessageFormatter by its 3.x and 4.x class names (the default). */
const DEFAULT_FORMATTER = "org.apache.kafka.tools.consumer.DefaultMessageFormatter";
const DEFAULT_FORMATTERS: ReadonlySet<string> = new Set([
  DEFAULT_FORMATTER,
  "kafka.tools.DefaultMessageFormatter",
]);
const NO_OP_FORMATTERS: ReadonlySet<string> = new Set([
  "org.apache.kafka.tools.consumer.NoOpMessageFormatter",
  "kafka.tools.NoOpMessageFormatter",
]);

export const CONSOLE_CONSUMER_SPEC: ToolSpec = {
  name: "console-consumer",
  description: "This tool helps to read data from Kafka topics and outputs it to standard output.",
  options: [
    bootstrapServerOption(),
    { name: "topic", description: "The topic to consume on.", arg: { type: "String", describedAs: "topic" } },
    {
      name: "include",
      description: "Regular expression specifying list of topics to include for consumption.",
      arg: { type: "String", describedAs: "Java regex (String)" },
    },
    {
      name: "partition",
      description:
        "The partition to consume from. Consumption starts from the end of the partition unless '--offset' is specified.",
      arg: { type: "Integer", describedAs: "partition" },
    },
    {
      name: "offset",
      description:
        "The offset to consume from (a non-negative number), or 'earliest' which means from beginning, or 'latest' which means from end",
      arg: { type: "String", describedAs: "consume offset" },
      defaultValue: "latest",
    },
    {
      name: "from-beginning",
      description:
        "If the consumer does not already have an established offset to consume from, start with the earliest message present in the log rather than the latest message.",
    },
    {
      name: "max-messages",
      description:
        "The maximum number of messages to consume before exiting. If not set, consumption is continual.",
      arg: { type: "Integer", describedAs: "num_messages" },
    },
    {
      name: "timeout-ms",
      description:
        "If specified, exit if no message is available for consumption for the specified interval.",
      arg: { type: "Integer", describedAs: "timeout_ms" },
    },
    {
      name: "property",
      description:
        "The properties to initialize the message formatter. Default properties include: print.timestamp=true|false, print.key=true|false, print.offset=true|false, print.delivery=true|false, print.epoch=true|false, print.partition=true|false, print.headers=true|false, print.value=true|false, key.separator=<key.separator>, line.separator=<line.separator>, headers.separator=<line.separator>, null.literal=<null.literal>, key.deserializer=<key.deserializer>, value.deserializer=<value.deserializer>, headers.deserializer=<headers.deserializer>",
      arg: { type: "String", describedAs: "prop" },
    },
    {
      name: "consumer-property",
      description: "A mechanism to pass user-defined properties in the form key=value to the consumer.",
      arg: { type: "String", describedAs: "consumer_prop" },
    },
    {
      name: "consumer.config",
      description:
        "Consumer config properties file. Note that [consumer-property] takes precedence over this config.",
      arg: { type: "String", describedAs: "config file" },
    },
    {
      name: "isolation-level",
      description:
        "Set to read_committed in order to filter out transactional messages which are not committed. Set to read_uncommitted to read all messages.",
      arg: { type: "String", describedAs: "isolation level" },
      defaultValue: "read_uncommitted",
    },
    {
      name: "group",
      description: "The consumer group id of the consumer.",
      arg: { type: "String", describedAs: "consumer group id" },
    },
    {
      name: "key-deserializer",
      description: "The name of the class to use for deserializing keys.",
      arg: { type: "String", describedAs: "deserializer for key" },
    },
    {
      name: "value-deserializer",
      description: "The name of the class to use for deserializing values.",
      arg: { type: "String", describedAs: "deserializer for values" },
    },
    {
      name: "formatter",
      description: "The name of a class to use for formatting kafka messages for display.",
      arg: { type: "String", describedAs: "class" },
      defaultValue: DEFAULT_FORMATTER,
    },
    {
      name: "formatter-config",
      description:
        "Config properties file to initialize the message formatter. Note that [property] takes precedence over this config.",
      arg: { type: "String", describedAs: "config file" },
    },
    {
      name: "skip-message-on-error",
      description: "If there is an error when processing a message, skip it instead of halt.",
    },
  ],
};

export interface FormatterConfig {
  printTimestamp: boolean;
  printKey: boolean;
  printValue: boolean;
  printPartition: boolean;
  printOffset: boolean;
  /** print.delivery: a share group's delivery count, which a consumer group's records never have. */
  printDelivery: boolean;
  /** print.epoch: Kafka's tool prints "Epoch:NOT_PRESENT" (it drops the leader epoch from each record). */
  printEpoch: boolean;
  printHeaders: boolean;
  keySeparator: Buffer;
  lineSeparator: Buffer;
  headersSeparator: Buffer;
  nullLiteral: Buffer;
  /** key.deserializer / value.deserializer / headers.deserializer (--key-deserializer, --value-deserializer). */
  keyDeserializer?: MessageDeserializer;
  valueDeserializer?: MessageDeserializer;
  headersDeserializer?: MessageDeserializer;
}

export interface ConsoleConsumerOptions {
  /** --topic, or undefined with --include. */
  topic: string | undefined;
  /** --include: a pattern subscription (whole topic names, internal topics aside). */
  include: RegExp | undefined;
  partition: number | undefined;
  /** earliest, latest, or an offset. */
  offset: "earliest" | "latest" | bigint;
  maxMessages: number;
  timeoutMs: number;
  consumerProps: Record<string, string>;
  formatter: FormatterConfig;
  skipMessageOnError: boolean;
  /** --formatter NoOpMessageFormatter: records are consumed and counted, nothing is printed. */
  printNothing: boolean;
}

export function consoleConsumerOptions(args: ParsedArgs): ConsoleConsumerOptions {
  checkRequired(args, "bootstrap-server");
  if (args.has("topic") === args.has("include"))
    throw new UsageError("Exactly one of include/topic is required.");
  let include: RegExp | undefined;
  if (args.has("include")) {
    try {
      include = new RegExp(args.value("include")!);
    } catch {
      throw new UsageError(`--include: '${args.value("include")}' is not a valid regular expression`);
    }
  }
  const partition = args.int("partition");
  if (partition !== undefined && include !== undefined)
    throw new UsageError("The topic is required when partition is specified.");
  if (partition !== undefined && partition < 0) throw new UsageError(`Invalid partition ${partition}`);
  const fromBeginning = args.has("from-beginning");
  let offset: "earliest" | "latest" | bigint = fromBeginning ? "earliest" : "latest";
  if (args.has("offset")) {
    if (partition === undefined) throw new UsageError("The partition is required when offset is specified.");
    if (fromBeginning)
      throw new UsageError("Options from-beginning and offset cannot be specified together.");
    const o = args.value("offset")!.trim().toLowerCase();
    if (o === "earliest" || o === "latest") offset = o;
    else if (/^\d+$/.test(o)) offset = BigInt(o);
    else
      throw new UsageError(
        "The provided offset value is incorrect. Valid values are 'earliest', 'latest', or a non-negative long.",
      );
  }
  const configFile = args.value("consumer.config");
  const fileProps: Record<string, string> = configFile ? loadPropertiesFile(configFile) : {};
  const extraProps: Record<string, string> = {};
  for (const p of args.values("consumer-property")) {
    const [k, v] = parseKeyValue("--consumer-property", p);
    extraProps[k] = v;
  }
  const props: Record<string, string> = { ...fileProps, ...extraProps };
  // Kafka's checkConsumerGroup: every group id given must be the same; a group excludes --partition.
  const groupIds = new Set<string>();
  if (args.has("group")) groupIds.add(args.value("group")!);
  if (fileProps["group.id"] !== undefined) groupIds.add(fileProps["group.id"]);
  if (extraProps["group.id"] !== undefined) groupIds.add(extraProps["group.id"]);
  if (groupIds.size > 1) {
    throw new UsageError(
      `The group ids provided in different places (directly using '--group', via '--consumer-property', or via '--consumer.config') do not match. Detected group ids: ${[
        ...groupIds,
      ]
        .map((g) => `'${g}'`)
        .join(", ")}`,
    );
  }
  if (groupIds.size > 0 && partition !== undefined)
    throw new UsageError("Options group and partition cannot be specified together.");
  // Kafka's setAutoOffsetResetValue: an explicit auto.offset.reset wins, but must not contradict
  // --from-beginning.
  if (props["auto.offset.reset"] !== undefined) {
    if (fromBeginning && props["auto.offset.reset"] !== "earliest") {
      throw new UsageError(
        `Can't simultaneously specify --from-beginning and 'auto.offset.reset=${props["auto.offset.reset"]}', please remove one option`,
      );
    }
  } else {
    props["auto.offset.reset"] = fromBeginning ? "earliest" : "latest";
  }
  props["bootstrap.servers"] = args.value("bootstrap-server")!;
  if (groupIds.size === 0) {
    props["group.id"] = `console-consumer-${Math.floor(Math.random() * 100000)}`;
    // The generated group and its offsets are not meant to be used again.
    if (props["enable.auto.commit"] === undefined) props["enable.auto.commit"] = "false";
  } else {
    props["group.id"] = [...groupIds][0];
  }
  if (args.has("isolation-level") || props["isolation.level"] === undefined) {
    const level = args.value("isolation-level")!;
    try {
      parseIsolationLevel(level);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    props["isolation.level"] = level;
  }
  if (props["client.id"] === undefined) props["client.id"] = "console-consumer";
  // Kafka's formatterArgs(): the --formatter-config file, then --key-/--value-deserializer (when not
  // empty), then the --property values, each overriding the one before.
  const formatterConfig = args.value("formatter-config");
  const f: Record<string, string> = formatterConfig ? loadPropertiesFile(formatterConfig) : {};
  const fromFlag = new Map<string, string>();
  for (const [flag, key] of [
    ["key-deserializer", "key.deserializer"],
    ["value-deserializer", "value.deserializer"],
  ] as const) {
    const v = args.value(flag);
    if (v !== undefined && v !== "") {
      f[key] = v;
      fromFlag.set(key, flag);
    }
  }
  for (const p of args.values("property")) {
    const [k, v] = parseKeyValue("--property", p);
    f[k] = v;
    fromFlag.delete(k);
  }
  const formatter = args.value("formatter") ?? DEFAULT_FORMATTER;
  if (!DEFAULT_FORMATTERS.has(formatter) && !NO_OP_FORMATTERS.has(formatter)) {
    throw new UsageError(
      `--formatter: unknown class '${formatter}' (expected one of ${[...DEFAULT_FORMATTERS, ...NO_OP_FORMATTERS].join(", ")})`,
    );
  }
  const bool = (k: string, d: boolean): boolean => (k in f ? f[k].trim().toLowerCase() === "true" : d);
  const bytes = (k: string, d: string): Buffer => Buffer.from(f[k] ?? d, "utf8");
  const maxMessages = args.int("max-messages") ?? -1;
  const timeoutMs = args.int("timeout-ms") ?? -1;
  const deserializer = (property: string): MessageDeserializer | undefined => {
    const name = f[property];
    if (name === undefined) return undefined;
    const d = deserializerFor(name);
    if (d === undefined) {
      const flag = fromFlag.get(property);
      throw new UsageError(
        `${flag ? `--${flag}` : property}: unknown class '${name}' (expected one of ${SUPPORTED_DESERIALIZERS.join(", ")})`,
      );
    }
    return d;
  };
  return {
    topic: args.value("topic"),
    include,
    partition,
    offset,
    // As Kafka's ConsoleConsumer: -1 (the default) is no limit; any other value is the limit, 0 included.
    maxMessages,
    timeoutMs,
    consumerProps: props,
    formatter: {
      printTimestamp: bool("print.timestamp", false),
      printKey: bool("print.key", false),
      printValue: bool("print.value", true),
      printPartition: bool("print.partition", false),
      printOffset: bool("print.offset", false),
      printDelivery: bool("print.delivery", false),
      printEpoch: bool("print.epoch", false),
      printHeaders: bool("print.headers", false),
      keySeparator: bytes("key.separator", "\t"),
      lineSeparator: bytes("line.separator", "\n"),
      headersSeparator: bytes("headers.separator", ","),
      nullLiteral: bytes("null.literal", "null"),
      keyDeserializer: deserializer("key.deserializer"),
      valueDeserializer: deserializer("value.deserializer"),
      headersDeserializer: deserializer("headers.deserializer"),
    },
    skipMessageOnError: args.has("skip-message-on-error"),
    printNothing: NO_OP_FORMATTERS.has(formatter),
  };
}

/**
 * Kafka's ConsumerWrapper.resetUnconsumedOffsets: each partition goes back to its first record that
 * poll() returned but the tool did not print, so closing (which commits the positions with a group)
 * leaves those records for the next run.
 */
function resetUnconsumedOffsets(consumer: KafkaConsumer, unconsumed: readonly ConsumerRecord[]): void {
  const first = new Map<string, ConsumerRecord>();
  for (const r of unconsumed) {
    const key = `${r.topic}-${r.partition}`;
    const seen = first.get(key);
    if (seen === undefined || r.offset < seen.offset) first.set(key, r);
  }
  for (const r of first.values()) {
    try {
      consumer.seek({ topic: r.topic, partition: r.partition }, r.offset);
    } catch {
      // no longer assigned (a rebalance meanwhile): nothing to commit for it here
    }
  }
}

/** DefaultMessageFormatter.deserialize: a null is the null literal, which the deserializer then reads. */
function deserialized(bytes: Buffer | null, d: MessageDeserializer | undefined, nullLiteral: Buffer): Buffer {
  const raw = bytes ?? nullLiteral;
  return d === undefined ? raw : Buffer.from(d(raw), "utf8");
}

/** DefaultMessageFormatter.writeTo: the bytes printed for one record. Throws a DeserializationError. */
export function formatRecord(r: ConsumerRecord, c: FormatterConfig): Buffer {
  const parts: Buffer[] = [];
  const sep = (more: boolean): void => {
    parts.push(more ? c.keySeparator : c.lineSeparator);
  };
  if (c.printTimestamp) {
    parts.push(Buffer.from(`${r.timestampType}:${r.timestamp}`));
    sep(
      c.printPartition ||
        c.printOffset ||
        c.printDelivery ||
        c.printEpoch ||
        c.printHeaders ||
        c.printKey ||
        c.printValue,
    );
  }
  if (c.printPartition) {
    parts.push(Buffer.from(`Partition:${r.partition}`));
    sep(c.printOffset || c.printDelivery || c.printEpoch || c.printHeaders || c.printKey || c.printValue);
  }
  if (c.printOffset) {
    parts.push(Buffer.from(`Offset:${r.offset}`));
    sep(c.printDelivery || c.printEpoch || c.printHeaders || c.printKey || c.printValue);
  }
  if (c.printDelivery) {
    parts.push(Buffer.from("Delivery:NOT_PRESENT"));
    sep(c.printEpoch || c.printHeaders || c.printKey || c.printValue);
  }
  if (c.printEpoch) {
    // Kafka's ConsoleConsumer hands its formatter a copy of each record made without the leader epoch
    // (Optional.empty()), so it always prints NOT_PRESENT; so does this tool, to print the same lines.
    parts.push(Buffer.from("Epoch:NOT_PRESENT"));
    sep(c.printHeaders || c.printKey || c.printValue);
  }
  if (c.printHeaders) {
    if (r.headers.length === 0) parts.push(Buffer.from("NO_HEADERS"));
    r.headers.forEach((h, i) => {
      parts.push(Buffer.from(`${h.key}:`), deserialized(h.value, c.headersDeserializer, c.nullLiteral));
      if (i < r.headers.length - 1) parts.push(c.headersSeparator);
    });
    sep(c.printKey || c.printValue);
  }
  if (c.printKey) {
    parts.push(deserialized(r.key, c.keyDeserializer, c.nullLiteral));
    sep(c.printValue);
  }
  if (c.printValue) {
    parts.push(deserialized(r.value, c.valueDeserializer, c.nullLiteral));
    parts.push(c.lineSeparator);
  }
  return Buffer.concat(parts);
}

/** Writes the records' bytes; false when the reader of standard output has gone. */
async function write(chunk: Buffer): Promise<boolean> {
  try {
    await writeOutput(chunk);
    return !stdoutClosed();
  } catch (e) {
    if (e instanceof StdoutClosedError) return false;
    throw e;
  }
}

/** Kafka's ConsoleConsumer.checkErr: nobody reads the output any more, the consumer is closed. */
const UNABLE_TO_WRITE = "Unable to write to standard out, closing consumer.\n";

export function runConsoleConsumer(argv: string[]): Promise<number> {
  return runTool(CONSOLE_CONSUMER_SPEC, argv, async (args) => {
    const o = consoleConsumerOptions(args);
    const consumer = new KafkaConsumer(consumerConfigFromProperties(o.consumerProps));
    let count = 0;
    let stop = false;
    /** A record the formatter could not print (without --skip-message-on-error): it ends the run. */
    let failure: string | undefined;
    /** Records of the last poll that were not handed to the formatter (--max-messages reached, a failure). */
    let unconsumed: ConsumerRecord[] = [];
    /** The reader of standard output has gone (reported once, as Kafka's checkErr). */
    let outputClosed = false;
    const closeOnClosedOutput = (): void => {
      if (!outputClosed) process.stderr.write(UNABLE_TO_WRITE);
      outputClosed = true;
    };
    const onSignal = (): void => {
      stop = true;
    };
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
    try {
      if (o.include !== undefined) {
        await consumer.subscribe(o.include);
      } else if (o.partition !== undefined && o.topic !== undefined) {
        const partitions = await consumer.partitionsFor(o.topic);
        if (!partitions.includes(o.partition)) {
          throw new UsageError(
            `Partition ${o.partition} of topic ${o.topic} does not exist (the topic has ${partitions.length} partitions)`,
          );
        }
        const tp = { topic: o.topic, partition: o.partition };
        consumer.assign([tp]);
        if (typeof o.offset === "bigint") consumer.seek(tp, o.offset);
        else if (o.offset === "earliest") consumer.seekToBeginning([tp]);
        else consumer.seekToEnd([tp]);
      } else if (o.topic !== undefined) {
        await consumer.partitionsFor(o.topic);
        await consumer.subscribe([o.topic]);
      }
      let lastData = Date.now();
      while (!stop && (o.maxMessages === -1 || count < o.maxMessages)) {
        // A write that failed after it returned (a pipe's EPIPE comes as an event).
        if (stdoutClosed()) {
          closeOnClosedOutput();
          break;
        }
        const wait =
          o.timeoutMs >= 0 ? Math.max(0, Math.min(1000, o.timeoutMs - (Date.now() - lastData))) : 1000;
        const records = await consumer.poll(wait);
        if (records.length === 0) {
          if (o.timeoutMs >= 0 && Date.now() - lastData >= o.timeoutMs) {
            // Kafka logs the consumer's TimeoutException and ends normally.
            process.stderr.write(
              "ERROR Error processing message, terminating consumer process: org.apache.kafka.common.errors.TimeoutException\n",
            );
            break;
          }
          continue;
        }
        lastData = Date.now();
        const out: Buffer[] = [];
        for (let i = 0; i < records.length; i++) {
          if (o.maxMessages !== -1 && count >= o.maxMessages) {
            unconsumed = records.slice(i);
            break;
          }
          count++;
          if (o.printNothing) continue;
          try {
            out.push(formatRecord(records[i], o.formatter));
          } catch (e) {
            if (!(e instanceof DeserializationError)) throw e;
            const why = `org.apache.kafka.common.errors.SerializationException: ${e.message}`;
            if (o.skipMessageOnError) {
              process.stderr.write(`ERROR Error processing message, skipping this message: ${why}\n`);
              continue;
            }
            failure = why;
            unconsumed = records.slice(i + 1);
            break;
          }
        }
        if (out.length > 0 && !(await write(Buffer.concat(out)))) {
          closeOnClosedOutput();
          break;
        }
        if (failure !== undefined) break;
      }
      // The last write's EPIPE arrives as an event a turn later.
      if (!outputClosed && !o.printNothing) {
        await new Promise((r) => setImmediate(r));
        if (stdoutClosed()) closeOnClosedOutput();
      }
    } finally {
      process.removeListener("SIGINT", onSignal);
      process.removeListener("SIGTERM", onSignal);
      resetUnconsumedOffsets(consumer, unconsumed);
      await consumer.close();
    }
    // Kafka's ConsoleConsumer reports the count on its way out, then the error that ended it.
    process.stderr.write(`Processed a total of ${count} messages\n`);
    if (failure !== undefined) {
      process.stderr.write(`ERROR Unknown error when running consumer: ${failure}\n`);
      return 1;
    }
    return 0;
  });
}
