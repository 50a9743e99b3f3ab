// `tributary transactions` (kafka-transactions.sh, Kafka's TransactionsCommand): `[--bootstrap-server
// host:port] [--command-config FILE] COMMAND [options]` with the commands `list` (TransactionalId
// Coordinator ProducerId TransactionState), `describe --transactional-id` (CoordinatorId TransactionalId
// ProducerId ProducerEpoch TransactionState TransactionTimeoutMs CurrentTransactionStartTimeMs
// TransactionDurationMs TopicPartitions), `describe-producers --topic --partition [--broker-id]`
// (ProducerId ProducerEpoch LatestCoordinatorEpoch LastSequence LastTimestamp
// CurrentTransactionStartOffset) and `abort --topic --partition (--start-offset | --producer-id
// --producer-epoch --coordinator-epoch)`. Tables are printed as Kafka's prettyPrintTable does: every
// column padded to its widest value and followed by a tab. Failures print Kafka's one-line messages
// ("Failed to … : <cause>. Enable debug logging for additional detail.") and exit 1.

import { type AbortTransactionSpec, TransactionAdmin } from "../../client/admin/transaction-admin.js";
import { SYSTEM_TIME } from "../../common/time.js";
import { errorLine, type OptionDef, type ParsedArgs, runTool, type ToolSpec, UsageError } from "../args.js";
import { withAdminClient } from "../tool-options.js";

const BASE_OPTIONS: readonly OptionDef[] = [
  {
    name: "bootstrap-server",
    description:
      "hostname and port for the broker to connect to, in the form `host:port` (multiple comma-separated entries can be given)",
    arg: { type: "String", describedAs: "host:port" },
  },
  {
    name: "command-config",
    description: "property file containing configs to be passed to admin client",
    arg: { type: "String", describedAs: "FILE" },
  },
];

const DESCRIPTION =
  "This tool is used to analyze the transactional state of producers in the cluster. It can be used to detect and recover from hanging transactions.";

interface Command {
  readonly help: string;
  readonly options: readonly OptionDef[];
  /** Options argparse marks `required(true)`. */
  readonly required: readonly string[];
  readonly execute: (txns: TransactionAdmin, args: ParsedArgs) => Promise<void>;
}

const TOPIC: OptionDef = {
  name: "topic",
  description: "topic name",
  arg: { type: "String", describedAs: "topic" },
};
const PARTITION: OptionDef = {
  name: "partition",
  description: "partition number",
  arg: { type: "Integer", describedAs: "partition" },
};

const COMMANDS: Record<string, Command> = {
  list: { help: "list transactions", options: [], required: [], execute: list },
  describe: {
    help: "describe the state of an active transactional-id",
    options: [
      {
        name: "transactional-id",
        description: "transactional id",
        arg: { type: "String", describedAs: "transactional-id" },
      },
    ],
    required: ["transactional-id"],
    execute: describeTransaction,
  },
  "describe-producers": {
    help: "describe the states of active producers for a topic partition",
    options: [
      {
        name: "broker-id",
        description: "optional broker id to describe the producer state on a specific replica",
        arg: { type: "Integer", describedAs: "broker-id" },
      },
      TOPIC,
      PARTITION,
    ],
    required: ["topic", "partition"],
    execute: describeProducers,
  },
  abort: {
    help: "abort a hanging transaction (requires administrative privileges)",
    options: [
      TOPIC,
      PARTITION,
      {
        name: "start-offset",
        description: "start offset of the transaction to abort (brokers on versions 3.0 and above)",
        arg: { type: "Long", describedAs: "start-offset" },
      },
      {
        name: "producer-id",
        description: "producer id (brokers on versions older than 3.0)",
        arg: { type: "Long", describedAs: "producer-id" },
      },
      {
        name: "producer-epoch",
        description: "producer epoch (brokers on versions older than 3.0)",
        arg: { type: "Integer", describedAs: "producer-epoch" },
      },
      {
        name: "coordinator-epoch",
        description: "coordinator epoch (brokers on versions older than 3.0)",
        arg: { type: "Integer", describedAs: "coordinator-epoch" },
      },
    ],
    required: ["topic", "partition"],
    execute: abort,
  },
};

const COMMAND_NAMES = Object.keys(COMMANDS);

const BASE_SPEC: ToolSpec = {
  name: "transactions",
  description: `${DESCRIPTION}\nCommands: ${COMMAND_NAMES.map((c) => `${c} (${COMMANDS[c].help})`).join("; ")}.\nUsage: transactions --bootstrap-server host:port COMMAND [options]; COMMAND --help lists a command's options.`,
  options: BASE_OPTIONS,
};

/** A failure printed as Kafka's printErrorAndExit(message, cause) does. */
class CommandFailure extends UsageError {}

function failed(message: string, cause: unknown): CommandFailure {
  return new CommandFailure(`${message}: ${errorLine(cause)}. Enable debug logging for additional detail.`);
}

/** Index of the COMMAND argument: the first token that is neither an option nor a base option's value. */
function commandIndex(argv: readonly string[]): number {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith("-")) return i;
    const name = a.replace(/^--?/, "");
    if (!name.includes("=") && BASE_OPTIONS.some((o) => o.name === name)) i++;
  }
  return -1;
}

export async function runTransactions(argv: string[]): Promise<number> {
  const at = commandIndex(argv);
  if (at < 0) {
    // No command: --help/--version/no arguments print as any tool does; otherwise argparse's complaint.
    if (argv.length === 0 || argv.includes("--help") || argv.includes("--version"))
      return runTool(BASE_SPEC, argv, async () => 0);
    return runTool(BASE_SPEC, argv, async () => {
      throw new UsageError(
        "too few arguments: expected a COMMAND (one of list, describe, describe-producers, abort)",
      );
    });
  }
  const name = argv[at];
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    process.stderr.write(
      `argument COMMAND: invalid choice: '${name}' (choose from ${COMMAND_NAMES.map((c) => `'${c}'`).join(", ")})\n`,
    );
    return 1;
  }
  const spec: ToolSpec = {
    name: `transactions ${name}`,
    description: `${name}: ${command.help}`,
    options: [...BASE_OPTIONS, ...command.options],
  };
  const rest = [...argv.slice(0, at), ...argv.slice(at + 1)];
  if (argv.slice(0, at).includes("--help")) return runTool(BASE_SPEC, ["--help"], async () => 0);
  return runTool(
    spec,
    rest,
    async (args) => {
      for (const r of ["bootstrap-server", ...command.required])
        if (!args.has(r)) throw new UsageError(`argument --${r} is required`);
      await withAdminClient(
        args,
        (admin) => command.execute(new TransactionAdmin(admin.cluster), args),
        (o) => ({ ...o, clientId: o.clientId === "adminclient-1" ? "transactions-tool" : o.clientId }),
      );
      return 0;
    },
    { allowNoArgs: true },
  );
}

/** Kafka's prettyPrintTable: each column padded to its widest cell, every cell followed by a tab. */
export function prettyPrintTable(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (row: readonly string[]): string =>
    `${row.map((c, i) => `${c.padEnd(widths[i])}\t`).join("")}\n`;
  return [headers, ...rows].map(line).join("");
}

async function list(txns: TransactionAdmin): Promise<void> {
  let byBroker: Awaited<ReturnType<TransactionAdmin["listTransactions"]>>;
  try {
    byBroker = await txns.listTransactions();
  } catch (e) {
    throw failed("Failed to list transactions", e);
  }
  const rows: string[][] = [];
  for (const [brokerId, listings] of byBroker)
    for (const l of listings) rows.push([l.transactionalId, String(brokerId), String(l.producerId), l.state]);
  process.stdout.write(
    prettyPrintTable(["TransactionalId", "Coordinator", "ProducerId", "TransactionState"], rows),
  );
}

async function describeTransaction(txns: TransactionAdmin, args: ParsedArgs): Promise<void> {
  const transactionalId = args.value("transactional-id") ?? "";
  const [d] = await txns.describeTransactions([transactionalId]);
  if (d.error)
    throw failed(`Failed to describe transaction state of transactional-id \`${transactionalId}\``, d.error);
  const start = d.transactionStartTimeMs;
  const row = [
    String(d.coordinatorId),
    transactionalId,
    String(d.producerId),
    String(d.producerEpoch),
    d.state,
    String(d.transactionTimeoutMs),
    start === undefined ? "None" : String(start),
    start === undefined ? "None" : String(BigInt(SYSTEM_TIME.milliseconds()) - start),
    d.topicPartitions.map((tp) => `${tp.topic}-${tp.partition}`).join(","),
  ];
  process.stdout.write(
    prettyPrintTable(
      [
        "CoordinatorId",
        "TransactionalId",
        "ProducerId",
        "ProducerEpoch",
        "TransactionState",
        "TransactionTimeoutMs",
        "CurrentTransactionStartTimeMs",
        "TransactionDurationMs",
        "TopicPartitions",
      ],
      [row],
    ),
  );
}

async function describeProducers(txns: TransactionAdmin, args: ParsedArgs): Promise<void> {
  const topic = args.value("topic") ?? "";
  const partition = args.int("partition") ?? 0;
  const brokerId = args.int("broker-id");
  let producers: Awaited<ReturnType<TransactionAdmin["describeProducers"]>>;
  try {
    producers = await txns.describeProducers(topic, partition, brokerId === undefined ? {} : { brokerId });
  } catch (e) {
    const on = brokerId === undefined ? "leader" : `broker ${brokerId}`;
    throw failed(`Failed to describe producers for partition ${topic}-${partition} on ${on}`, e);
  }
  const rows = producers.map((p) => [
    String(p.producerId),
    String(p.producerEpoch),
    String(p.coordinatorEpoch ?? -1),
    String(p.lastSequence),
    String(p.lastTimestamp),
    p.currentTransactionStartOffset === undefined ? "None" : String(p.currentTransactionStartOffset),
  ]);
  process.stdout.write(
    prettyPrintTable(
      [
        "ProducerId",
        "ProducerEpoch",
        "LatestCoordinatorEpoch",
        "LastSequence",
        "LastTimestamp",
        "CurrentTransactionStartOffset",
      ],
      rows,
    ),
  );
}

function specText(s: AbortTransactionSpec): string {
  return `AbortTransactionSpec(topicPartition=${s.topic}-${s.partition}, producerId=${s.producerId}, producerEpoch=${s.producerEpoch}, coordinatorEpoch=${s.coordinatorEpoch})`;
}

function checkShort(name: string, v: number): number {
  if (v < -32768 || v > 32767) throw new UsageError(`Cannot parse argument '${v}' of option ${name}`);
  return v;
}

async function abort(txns: TransactionAdmin, args: ParsedArgs): Promise<void> {
  const topic = args.value("topic") ?? "";
  const partition = args.int("partition") ?? 0;
  const startOffset = args.value("start-offset");
  const producerId = args.value("producer-id");
  if (startOffset === undefined && producerId === undefined)
    throw new UsageError(
      "The transaction to abort must be identified either with --start-offset (for brokers on 3.0 or above) or with --producer-id, --producer-epoch, and --coordinator-epoch (for older brokers)",
    );
  let spec: AbortTransactionSpec;
  if (startOffset === undefined) {
    const producerEpoch = args.int("producer-epoch");
    if (producerEpoch === undefined) throw new UsageError("Missing required argument --producer-epoch");
    const coordinatorEpoch = args.int("coordinator-epoch");
    if (coordinatorEpoch === undefined) throw new UsageError("Missing required argument --coordinator-epoch");
    // A hanging transaction of a new producer id has coordinator epoch -1; 0 is at most any real epoch.
    spec = {
      topic,
      partition,
      producerId: BigInt(producerId ?? "0"),
      producerEpoch: checkShort("producer-epoch", producerEpoch),
      coordinatorEpoch: Math.max(0, coordinatorEpoch),
    };
  } else {
    let producers: Awaited<ReturnType<TransactionAdmin["describeProducers"]>>;
    try {
      producers = await txns.describeProducers(topic, partition);
    } catch (e) {
      throw failed(`Failed to validate producer state for partition ${topic}-${partition}`, e);
    }
    const offset = BigInt(startOffset);
    const found = producers.find((p) => p.currentTransactionStartOffset === offset);
    if (!found)
      throw new UsageError(
        `Could not find any open transactions starting at offset ${startOffset} on partition ${topic}-${partition}`,
      );
    spec = {
      topic,
      partition,
      producerId: found.producerId,
      producerEpoch: found.producerEpoch,
      coordinatorEpoch: found.coordinatorEpoch ?? 0,
    };
  }
  try {
    await txns.abortTransaction(spec);
  } catch (e) {
    throw failed(`Failed to abort transaction ${specText(spec)}`, e);
  }
}
