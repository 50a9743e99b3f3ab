// DumpLogSegmentsOptions: the command line of `tributary dump-log` as Kafka's joptsimple parser reads it
// (unique prefixes of long options, `--opt value` and `--opt=value`), its --help text, and the options a dump
// runs with: which parts to print (--print-data-log, --deep-iteration, --skip-record-metadata), the index
// checks (--verify-index-only, --index-sanity-check), the read limits (--max-bytes, --max-message-size) and
// the MessageParser the decoder options choose (message-parsers.ts, offsets-message-parser.ts); and the
// DumpContext the .log and index dumpers run with (these options, the collected disagreements, the output).

import { type DumpState, UsageError } from "./dump-errors.js";
import type { Output } from "./dump-output.js";
import {
  decoderFor,
  decoderParser,
  type MessageParser,
  parseTransactionLogRecord,
} from "./message-parsers.js";
import { parseOffsetsRecord } from "./offsets-message-parser.js";

/** Java's Integer.MAX_VALUE: the largest --max-bytes, and its default (read the whole file). */
export const INT_MAX = 0x7fffffff;

export const HELP = `This tool helps to parse a log file and dump its contents to the console, useful for debugging a seemingly corrupt log segment.
Usage: tributary dump-log --files <file1,file2,...> [options]

Option                                  Description
------                                  -----------
--deep-iteration                        If set, uses deep instead of shallow iteration. Automatically set
                                          if print-data-log is enabled.
--files <file1, file2, ...>             REQUIRED: The comma separated list of data and index log files to
                                          be dumped (.log, .index, .timeindex, .snapshot, .txnindex,
                                          leader-epoch-checkpoint).
--help                                  Print usage information.
--index-sanity-check                    If set, just checks the index sanity without printing its content.
                                          This is the same check that is executed on broker startup to
                                          determine if an index needs rebuilding or not.
--key-decoder-class [String]            If set, used to deserialize the keys: StringDecoder (default),
                                          IntegerDecoder or LongDecoder.
--max-bytes <Integer: size>             Limit the amount of total batches read in bytes avoiding reading the
                                          whole .log file(s). (default: 2147483647)
--max-message-size <Integer: size>      Size of largest message. (default: 5242880)
--offsets-decoder                       If set, log data will be parsed as offset data from the
                                          __consumer_offsets topic.
--print-data-log                        If set, printing the messages content when dumping data logs.
                                          Automatically set if any decoder option is specified.
--skip-record-metadata                  Whether to skip printing metadata for each record.
--transaction-log-decoder               If set, log data will be parsed as transaction metadata from the
                                          __transaction_state topic.
--value-decoder-class [String]          If set, used to deserialize the messages: StringDecoder (default),
                                          IntegerDecoder or LongDecoder.
--verify-index-only                     If set, just verify the index log without printing its content.`;

export interface DumpLogOptions {
  files: string[];
  printDataLog: boolean;
  deepIteration: boolean;
  indexSanityOnly: boolean;
  verifyOnly: boolean;
  skipRecordMetadata: boolean;
  maxMessageSize: number;
  maxBytes: number;
  /** Turns a record into the key and payload strings printed with --print-data-log (Kafka's MessageParser). */
  parser: MessageParser;
}

const FLAGS = [
  "deep-iteration",
  "help",
  "index-sanity-check",
  "print-data-log",
  "skip-record-metadata",
  "verify-index-only",
] as const;
const WITH_VALUE = ["files", "max-bytes", "max-message-size"] as const;
const WITH_OPTIONAL_VALUE = ["key-decoder-class", "value-decoder-class"] as const;
const PARSER_FLAGS = ["offsets-decoder", "transaction-log-decoder"] as const;
const UNSUPPORTED = ["cluster-metadata-decoder", "remote-log-metadata-decoder"] as const;
const ALL_OPTIONS: readonly string[] = [
  ...FLAGS,
  ...PARSER_FLAGS,
  ...WITH_VALUE,
  ...WITH_OPTIONAL_VALUE,
  ...UNSUPPORTED,
];

function parseSize(option: string, value: string): number {
  if (!/^\d{1,10}$/.test(value) || Number(value) > INT_MAX) {
    throw new UsageError(`--${option} expects an integer between 0 and ${INT_MAX}, got '${value}'`);
  }
  return Number(value);
}

/** What the .log and index dumpers work with: the options, the disagreements collected so far, the output. */
export interface DumpContext {
  readonly opts: DumpLogOptions;
  readonly state: DumpState;
  readonly out: Output;
}

/** Parses the command line as joptsimple does for DumpLogSegments (unique prefixes of long options too). */
export function parseDumpLogArgs(args: readonly string[]): DumpLogOptions | "help" {
  const seen = new Map<string, string | undefined>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith("--"))
      throw new UsageError(`unexpected argument '${arg}' (options start with --; see --help)`);
    const eq = arg.indexOf("=");
    const given = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
    const exact = ALL_OPTIONS.includes(given) ? [given] : ALL_OPTIONS.filter((o) => o.startsWith(given));
    if (exact.length !== 1 || given === "") {
      throw new UsageError(
        exact.length > 1
          ? `option '--${given}' is ambiguous (${exact.map((o) => `--${o}`).join(", ")})`
          : `unknown option '--${given}' (see --help)`,
      );
    }
    const name = exact[0];
    if ((UNSUPPORTED as readonly string[]).includes(name)) {
      throw new UsageError(`--${name} is not supported yet by tributary dump-log`);
    }
    let value: string | undefined = eq < 0 ? undefined : arg.slice(eq + 1);
    if ((WITH_VALUE as readonly string[]).includes(name)) {
      if (value === undefined) {
        value = args[++i];
        if (value === undefined) throw new UsageError(`option --${name} requires a value`);
      }
    } else if ((WITH_OPTIONAL_VALUE as readonly string[]).includes(name)) {
      if (value === undefined && args[i + 1] !== undefined && !args[i + 1].startsWith("--"))
        value = args[++i];
    } else if (value !== undefined) {
      throw new UsageError(`option --${name} does not take a value`);
    }
    seen.set(name, value);
  }
  if (seen.has("help")) return "help";
  const files = seen.get("files");
  if (files === undefined) throw new UsageError("missing required option --files (see --help)");
  const list = files.split(",").filter((f) => f !== "");
  if (list.length === 0) throw new UsageError("--files names no file");
  const anyDecoder =
    seen.has("key-decoder-class") ||
    seen.has("value-decoder-class") ||
    seen.has("offsets-decoder") ||
    seen.has("transaction-log-decoder");
  const printDataLog = seen.has("print-data-log") || anyDecoder;
  return {
    files: list,
    printDataLog,
    deepIteration: seen.has("deep-iteration") || printDataLog,
    indexSanityOnly: seen.has("index-sanity-check"),
    verifyOnly: seen.has("verify-index-only"),
    skipRecordMetadata: seen.has("skip-record-metadata"),
    maxMessageSize: seen.has("max-message-size")
      ? parseSize("max-message-size", seen.get("max-message-size")!)
      : 5 * 1024 * 1024,
    maxBytes: seen.has("max-bytes") ? parseSize("max-bytes", seen.get("max-bytes")!) : INT_MAX,
    parser: seen.has("offsets-decoder")
      ? parseOffsetsRecord
      : seen.has("transaction-log-decoder")
        ? parseTransactionLogRecord
        : decoderParser(
            decoderFor("key-decoder-class", seen.get("key-decoder-class")),
            decoderFor("value-decoder-class", seen.get("value-decoder-class")),
          ),
  };
}
