// `tributary dump-log`: Kafka's DumpLogSegments (kafka.tools.DumpLogSegments, kafka-dump-log.sh, Kafka 3.5+)
// for the files of a partition directory, printing the same lines:
//
//   .log        "Log starting offset: N", one line per batch ("baseOffset: … isvalid: true"), and with
//               --deep-iteration / --print-data-log one "| offset: …" line per record; a partial batch at
//               the end gives "Found N invalid bytes at the end of <file>".
//   .index      "offset: N position: M" per entry; index/log disagreements go to stderr ("Mismatches in :…").
//   .timeindex  "timestamp: T offset: O" per entry; disagreements with the log go to stderr.
//   .snapshot   one line per producer of a producer-state snapshot.
//   .txnindex   one line per aborted transaction.
//   leader-epoch-checkpoint (a Tributary addition: Kafka's tool cannot read it) "epoch: E startOffset: O".
//
// --offsets-decoder prints __consumer_offsets records as JSON, as Kafka 4.0 does (offsets-message-parser.ts);
// --transaction-log-decoder prints __transaction_state records as Kafka's TransactionLog.formatRecordKeyAndValue
// does (its partitions in the order they are stored, where Kafka's come in hash-set order).
//
// Files are read through a bounded window (sizes are checked against the file before anything is
// allocated), so a corrupt file of any size costs bounded memory. Where Kafka's tool would die with a stack
// trace on a corrupt file, this prints Kafka's exception message as one line on stderr, goes on with the
// next file, and exits with status 1. When the reader of its output goes away (`| head`), it stops (status 0).

import { closeSync, existsSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { readTransactionLogKey } from "../../protocol/generated/coordinator-records/TransactionLogKey.js";
import { readTransactionLogValue } from "../../protocol/generated/coordinator-records/TransactionLogValue.js";
import { Reader } from "../../protocol/primitives/reader.js";
import { crc32c } from "../../protocol/records/crc32c.js";
import {
  COMPRESSION_CODEC_MASK,
  compressionTypeName,
  type DecodedRecord,
  decodeRecordBatches,
  LOG_OVERHEAD,
  parseRecordBatchHeader,
  RECORD_BATCH_OVERHEAD,
  type RecordBatchHeader,
  readControlRecordKey,
  readEndTxnMarker,
  TIMESTAMP_TYPE_MASK,
} from "../../protocol/records/index.js";
import {
  type TransactionState,
  transactionStateFromId,
} from "../../server/coordinator/transaction/transaction-state.js";
import { CheckpointFileError } from "../../storage/checkpoint/checkpoint-file.js";
import { LeaderEpochCheckpointFile } from "../../storage/leader-epoch/leader-epoch-checkpoint-file.js";
import { StdoutClosedError, writeOutput } from "../tool-output.js";
import { parseOffsetsRecord } from "./offsets-message-parser.js";

const INT_MAX = 0x7fffffff;
/** Bytes needed to read an entry's offset, size and magic (Kafka's HEADER_SIZE_UP_TO_MAGIC). */
const HEADER_SIZE_UP_TO_MAGIC = 17;
/** Kafka's LegacyRecord.RECORD_OVERHEAD_V0: the smallest size field of any entry. */
const MIN_ENTRY_SIZE = 14;
/** Largest batch loaded whole for --deep-iteration (larger ones are reported, not decoded). */
const MAX_DEEP_BATCH_BYTES = 256 * 1024 * 1024;
/** Largest producer snapshot read. */
const MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024;
const WINDOW_BYTES = 1024 * 1024;
const OFFSET_INDEX_ENTRY = 8;
const TIME_INDEX_ENTRY = 12;
const ABORTED_TXN_SIZE = 34;
const LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint";

const HELP = `This tool helps to parse a log file and dump its contents to the console, useful for debugging a seemingly corrupt log segment.
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

/** A line for the user: printed on stderr, ends the current file, exit status 1. */
class DumpError extends Error {}

/** Bad command line: one line on stderr, exit status 1, nothing dumped. */
class UsageError extends Error {}

interface Options {
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

type MessageParser = (record: DecodedRecord) => [key: string | undefined, payload: string | undefined];

type Decoder = (bytes: Buffer) => string;

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

function decoderFor(option: string, className: string | undefined): Decoder {
  const name = (className ?? "StringDecoder").split(".").pop();
  switch (name) {
    case "StringDecoder":
      return (b) => b.toString("utf8");
    case "IntegerDecoder":
      return (b) => {
        if (b.length < 4)
          throw new DumpError("java.nio.BufferUnderflowException (IntegerDecoder needs 4 bytes)");
        return String(b.readInt32BE(0));
      };
    case "LongDecoder":
      return (b) => {
        if (b.length < 8)
          throw new DumpError("java.nio.BufferUnderflowException (LongDecoder needs 8 bytes)");
        return String(b.readBigInt64BE(0));
      };
    default:
      throw new UsageError(
        `--${option}: unsupported decoder '${className}' (expected StringDecoder, IntegerDecoder or LongDecoder)`,
      );
  }
}

function parseSize(option: string, value: string): number {
  if (!/^\d{1,10}$/.test(value) || Number(value) > INT_MAX) {
    throw new UsageError(`--${option} expects an integer between 0 and ${INT_MAX}, got '${value}'`);
  }
  return Number(value);
}

/** Parses the command line as joptsimple does for DumpLogSegments (unique prefixes of long options too). */
export function parseDumpLogArgs(args: readonly string[]): Options | "help" {
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

/** Kafka's DecoderMessageParser: key and value through the decoders; a null key or value prints nothing. */
function decoderParser(keyDecoder: Decoder, valueDecoder: Decoder): MessageParser {
  return (r) => [
    r.key === null ? undefined : keyDecoder(r.key),
    r.value === null ? undefined : valueDecoder(r.value),
  ];
}

/** --transaction-log-decoder: __transaction_state records as Kafka's TransactionLog.formatRecordKeyAndValue prints them. */
function parseTransactionLogRecord(r: DecodedRecord): [string | undefined, string | undefined] {
  if (r.key === null) throw new DumpError("Failed to decode transaction log record: missing key");
  const kr = new Reader(r.key);
  const version = kr.int16();
  if (version !== 0) return [`unknown::version=${version}`, undefined];
  const key = `transaction_metadata::transactionalId=${readTransactionLogKey(kr, version).transactionalId}`;
  if (r.value === null) return [key, "<DELETE>"];
  const vr = new Reader(r.value);
  const vv = vr.int16();
  if (vv < 0 || vv > 1) throw new DumpError(`Unknown version ${vv} from the transaction log message value`);
  const v = readTransactionLogValue(vr, vv);
  let state: TransactionState;
  try {
    state = transactionStateFromId(v.transactionStatus);
  } catch {
    throw new DumpError(
      `Unknown transaction state byte ${v.transactionStatus} from the transaction status message`,
    );
  }
  const partitions = (v.transactionPartitions ?? []).flatMap((tp) =>
    tp.partitionIds.map((p) => `${tp.topic}-${p}`),
  );
  return [
    key,
    `producerId:${v.producerId},producerEpoch:${v.producerEpoch},state=${state},partitions=[${partitions.join(",")}],txnLastUpdateTimestamp=${v.transactionLastUpdateTimestampMs},txnTimeoutMs=${v.transactionTimeoutMs}`,
  ];
}

// ---- output ----

/** Buffered stdout/stderr that respects pipe back-pressure (huge dumps must not pile up in memory). */
class Output {
  private out = "";
  private line = "";
  errors = 0;

  constructor(
    private readonly stdout: NodeJS.WritableStream,
    private readonly stderr: NodeJS.WritableStream,
  ) {}

  print(s: string): void {
    this.line += s;
  }

  println(s = ""): void {
    this.out += `${this.line}${s}\n`;
    this.line = "";
  }

  /** A line on stderr (flushes stdout first so the two stay in order on a terminal). */
  err(s: string): void {
    this.flushSync();
    this.stderr.write(`${s}\n`);
  }

  private flushSync(): void {
    if (this.out === "") return;
    this.stdout.write(this.out);
    this.out = "";
  }

  /** Writes what is buffered, waiting while the reader is behind; throws StdoutClosedError once it has gone. */
  private async flush(): Promise<void> {
    const chunk = this.out;
    this.out = "";
    await writeOutput(chunk, this.stdout);
  }

  async maybeFlush(): Promise<void> {
    if (this.out.length < 64 * 1024) return;
    await this.flush();
  }

  async end(): Promise<void> {
    if (this.line !== "") this.println();
    await this.flush();
  }
}

// ---- bounded file access ----

/** Positional reads through a 1 MiB window; never allocates more than the bytes asked for and present. */
class FileReader {
  readonly size: number;
  private window = Buffer.alloc(0);
  private windowStart = 0;

  private constructor(
    private readonly fd: number,
    readonly path: string,
  ) {
    this.size = fstatSync(fd).size;
  }

  static open(path: string): FileReader {
    return new FileReader(openSync(path, "r"), path);
  }

  close(): void {
    closeSync(this.fd);
  }

  /** Up to `length` bytes at `position` (fewer at the end of the file). */
  read(position: number, length: number): Buffer {
    if (position < 0 || position >= this.size || length <= 0) return Buffer.alloc(0);
    const len = Math.min(length, this.size - position);
    if (position >= this.windowStart && position + len <= this.windowStart + this.window.length) {
      return this.window.subarray(position - this.windowStart, position - this.windowStart + len);
    }
    if (len > WINDOW_BYTES) {
      const buf = Buffer.allocUnsafe(len);
      return buf.subarray(0, this.readInto(buf, position));
    }
    const buf = Buffer.allocUnsafe(Math.min(WINDOW_BYTES, this.size - position));
    this.window = buf.subarray(0, this.readInto(buf, position));
    this.windowStart = position;
    return this.window.subarray(0, Math.min(len, this.window.length));
  }

  private readInto(buf: Buffer, position: number): number {
    let done = 0;
    while (done < buf.length) {
      const n = readSync(this.fd, buf, done, buf.length - done, position + done);
      if (n === 0) break;
      done += n;
    }
    return done;
  }
}

/** Kafka's Utils.readFullyOrFail message for a short read. */
function readFullyOrFail(f: FileReader, position: number, length: number, what: string): Buffer {
  const b = f.read(position, length);
  if (b.length < length) {
    throw new DumpError(
      `Failed to read \`${what}\` from file channel \`${f.path}\`. Expected to read ${length} bytes, but reached end of file after reading ${b.length} bytes. Started read from position ${position}.`,
    );
  }
  return b;
}

// ---- batches of a .log file (Kafka's FileLogInputStream) ----

interface FileBatch {
  position: number;
  /** LOG_OVERHEAD + size field. */
  size: number;
  magic: number;
  /** The entry's first 17 bytes (offset, size, epoch/crc, magic). */
  offsetField: bigint;
}

/**
 * The batch at `position`, or undefined at the end (fewer than 17 bytes left, or a batch that does not
 * fit before `end`). Throws DumpError for a size field below the minimum, as Kafka's CorruptRecordException.
 */
function nextBatch(f: FileReader, position: number, end: number): FileBatch | undefined {
  if (position >= end - HEADER_SIZE_UP_TO_MAGIC) return undefined;
  const h = readFullyOrFail(f, position, HEADER_SIZE_UP_TO_MAGIC, "log header");
  const sizeField = h.readInt32BE(8);
  if (sizeField < MIN_ENTRY_SIZE) {
    throw new DumpError(
      `Found record size ${sizeField} smaller than minimum record overhead (${MIN_ENTRY_SIZE}) in file ${f.path}.`,
    );
  }
  if (position > end - LOG_OVERHEAD - sizeField) return undefined;
  return {
    position,
    size: LOG_OVERHEAD + sizeField,
    magic: h.readInt8(16),
    offsetField: h.readBigInt64BE(0),
  };
}

/** The parsed v2 header of a batch, with its last offset (Kafka's DefaultRecordBatch accessors). */
type V2Header = RecordBatchHeader & { lastOffset: bigint };

/** The header as stored, damaged or not: dump-log shows what is there (no validation). */
function readV2Header(f: FileReader, b: FileBatch): V2Header {
  const h = parseRecordBatchHeader(
    readFullyOrFail(f, b.position, RECORD_BATCH_OVERHEAD, "record batch header"),
  );
  return { ...h, lastOffset: h.baseOffset + BigInt(h.lastOffsetDelta) };
}

/** CRC32C over attributes..end of the batch, streamed through the window. */
function v2BatchCrc(f: FileReader, b: FileBatch): number {
  let crc = 0;
  for (let p = b.position + 21; p < b.position + b.size; ) {
    const chunk = f.read(p, Math.min(WINDOW_BYTES, b.position + b.size - p));
    if (chunk.length === 0) break;
    crc = crc32c(chunk, crc);
    p += chunk.length;
  }
  return crc >>> 0;
}

/** Kafka's DefaultRecordBatch.incrementSequence. */
function incrementSequence(sequence: number, increment: number): number {
  if (sequence > INT_MAX - increment) return increment - (INT_MAX - sequence) - 1;
  return sequence + increment;
}

/** Kafka's DefaultRecordBatch.decrementSequence. */
function decrementSequence(sequence: number, decrement: number): number {
  if (sequence < decrement) return INT_MAX - (decrement - sequence) + 1;
  return sequence - decrement;
}

function timestampTypeName(magic: number, attributes: number): string {
  if (magic === 0) return "NoTimestampType";
  return attributes & TIMESTAMP_TYPE_MASK ? "LogAppendTime" : "CreateTime";
}

/** The batch's last offset, as the index checks use it (loads only the header). */
function batchLastOffset(f: FileReader, b: FileBatch): bigint {
  if (b.magic < 2) return b.offsetField;
  return readV2Header(f, b).lastOffset;
}

/** Decodes the records of a batch (no CRC check: like Kafka, deep iteration reads what is there). */
function batchRecords(f: FileReader, b: FileBatch): DecodedRecord[] {
  if (b.size > MAX_DEEP_BATCH_BYTES) {
    throw new DumpError(
      `batch at position ${b.position} of ${f.path} has ${b.size} bytes, more than the ${MAX_DEEP_BATCH_BYTES} read for deep iteration`,
    );
  }
  const bytes = readFullyOrFail(f, b.position, b.size, "record batch");
  const decoded = decodeRecordBatches(bytes, { verifyCrc: false });
  return decoded.length === 0 ? [] : decoded[0].records;
}

const CONTROL_TYPE_NAMES: Record<number, string> = {
  0: "ABORT",
  1: "COMMIT",
  2: "LEADER_CHANGE",
  3: "SNAPSHOT_HEADER",
  4: "SNAPSHOT_FOOTER",
  5: "KRAFT_VERSION",
  6: "KRAFT_VOTERS",
};

// ---- the dump state and the per-file dumpers ----

class DumpState {
  readonly indexMismatches = new Map<string, Array<[bigint, bigint]>>();
  readonly timeMismatches = new Map<string, Array<[bigint, bigint]>>();
  readonly outOfOrder = new Map<string, Array<[bigint, bigint]>>();
  readonly shallowNotFound = new Map<string, Array<[bigint, bigint]>>();
  readonly nonConsecutive = new Map<string, Array<[bigint, bigint]>>();

  static add(map: Map<string, Array<[bigint, bigint]>>, file: string, pair: [bigint, bigint]): void {
    const list = map.get(file);
    if (list) list.push(pair);
    else map.set(file, [pair]);
  }
}

function baseOffsetOfName(path: string): bigint {
  const prefix = basename(path).split(".")[0];
  if (!/^\d{1,20}$/.test(prefix) || BigInt(prefix) > 2n ** 63n - 1n) {
    throw new DumpError(`Cannot dump ${path}: the file name does not start with a segment base offset`);
  }
  return BigInt(prefix);
}

function companionFile(path: string, suffix: string): string {
  return join(dirname(resolve(path)), basename(path).split(".")[0] + suffix);
}

async function dumpLog(path: string, opts: Options, state: DumpState, out: Output): Promise<void> {
  out.println(`Log starting offset: ${baseOffsetOfName(path)}`);
  const f = FileReader.open(path);
  try {
    const end = Math.min(f.size, opts.maxBytes);
    let validBytes = 0;
    let lastOffset = -1n;
    for (let b = nextBatch(f, 0, end); b !== undefined; b = nextBatch(f, b.position + b.size, end)) {
      printBatchLevel(f, b, validBytes, out);
      if (opts.deepIteration) {
        lastOffset = printRecords(f, b, opts, state, out, lastOffset, path);
      }
      validBytes += b.size;
      await out.maybeFlush();
    }
    const trailing = end - validBytes;
    if (trailing > 0 && opts.maxBytes === INT_MAX) {
      out.println(`Found ${trailing} invalid bytes at the end of ${basename(path)}`);
    }
  } finally {
    f.close();
  }
}

function printBatchLevel(f: FileReader, b: FileBatch, position: number, out: Output): void {
  if (b.magic >= 2) {
    const h = readV2Header(f, b);
    const lastSequence = h.baseSequence === -1 ? -1 : incrementSequence(h.baseSequence, h.lastOffsetDelta);
    const deleteHorizon = h.attributes & 0x40 ? `OptionalLong[${h.baseTimestamp}]` : "OptionalLong.empty";
    out.print(
      `baseOffset: ${h.baseOffset} lastOffset: ${h.lastOffset} count: ${h.recordsCount} baseSequence: ${h.baseSequence} lastSequence: ${lastSequence} producerId: ${h.producerId} producerEpoch: ${h.producerEpoch} partitionLeaderEpoch: ${h.partitionLeaderEpoch} isTransactional: ${(h.attributes & 0x10) !== 0} isControl: ${(h.attributes & 0x20) !== 0} deleteHorizonMs: ${deleteHorizon}`,
    );
    const valid = b.size >= RECORD_BATCH_OVERHEAD && v2BatchCrc(f, b) === h.crc;
    out.println(
      ` position: ${position} ${timestampTypeName(2, h.attributes)}: ${h.maxTimestamp} size: ${b.size} magic: ${h.magic} compresscodec: ${compressionTypeName(h.attributes & COMPRESSION_CODEC_MASK)} crc: ${h.crc} isvalid: ${valid}`,
    );
    return;
  }
  const l = legacyEntry(f, b);
  out.print(`offset: ${b.offsetField}`);
  out.println(
    ` position: ${position} ${timestampTypeName(l.magic, l.attributes)}: ${l.timestamp} size: ${b.size} magic: ${l.magic} compresscodec: ${compressionTypeName(l.attributes & COMPRESSION_CODEC_MASK)} crc: ${l.crc} isvalid: ${l.valid}`,
  );
}

/** A legacy (magic 0/1) message's header fields and CRC32 check (Kafka's LegacyRecord). */
function legacyEntry(
  f: FileReader,
  b: FileBatch,
): { magic: number; attributes: number; timestamp: bigint; crc: number; valid: boolean } {
  const bytes = readFullyOrFail(f, b.position, Math.min(b.size, MAX_DEEP_BATCH_BYTES), "legacy record");
  const magic = bytes.readInt8(16);
  const attributes = bytes.length > 17 ? bytes.readInt8(17) : 0;
  const timestamp = magic === 1 && bytes.length >= 26 ? bytes.readBigInt64BE(18) : -1n;
  const crc = bytes.readUInt32BE(12);
  let valid = false;
  if (bytes.length === b.size) {
    valid = crc32Ieee(bytes.subarray(16)) >>> 0 === crc;
  }
  return { magic, attributes, timestamp, crc, valid };
}

let crcTable: Uint32Array | undefined;
/** IEEE CRC32 (legacy messages); small and only used for magic 0/1 entries. */
function crc32Ieee(data: Buffer): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (let i = 0; i < data.length; i++) crc = crcTable[(crc ^ data[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function printRecords(
  f: FileReader,
  b: FileBatch,
  opts: Options,
  state: DumpState,
  out: Output,
  lastOffsetIn: bigint,
  path: string,
): bigint {
  let lastOffset = lastOffsetIn;
  let records: DecodedRecord[];
  let header: V2Header | undefined;
  let legacy: ReturnType<typeof legacyEntry> | undefined;
  try {
    if (b.magic >= 2) header = readV2Header(f, b);
    else legacy = legacyEntry(f, b);
    records = b.size < RECORD_BATCH_OVERHEAD && b.magic >= 2 ? [] : batchRecords(f, b);
  } catch (e) {
    out.err(
      `Error reading the records of the batch at position ${b.position} of ${path}: ${(e as Error).message}`,
    );
    out.errors++;
    return lastOffset;
  }
  const magic = header?.magic ?? legacy!.magic;
  const attributes = header?.attributes ?? legacy!.attributes;
  const tsType = timestampTypeName(magic, attributes);
  const isControl = header !== undefined && (header.attributes & 0x20) !== 0;
  for (const r of records) {
    if (lastOffset === -1n) lastOffset = r.offset;
    else if (r.offset !== lastOffset + 1n)
      DumpState.add(state.nonConsecutive, resolve(path), [lastOffset, r.offset]);
    lastOffset = r.offset;

    let prefix = "| ";
    try {
      if (!opts.skipRecordMetadata) {
        out.print(
          `${prefix}offset: ${r.offset} ${tsType}: ${r.timestamp} keySize: ${r.key === null ? -1 : r.key.length} valueSize: ${r.value === null ? -1 : r.value.length}`,
        );
        prefix = " ";
        if (header !== undefined) {
          const seq =
            header.baseSequence === -1
              ? -1
              : incrementSequence(header.baseSequence, Number(r.offset - header.baseOffset));
          out.print(` sequence: ${seq} headerKeys: [${r.headers.map((h) => h.key).join(",")}]`);
        } else if (legacy !== undefined) {
          out.print(` isValid: ${legacy.valid} crc: ${legacy.crc}}`);
        }
        if (isControl) {
          const key = readControlRecordKey(r.key);
          const name = CONTROL_TYPE_NAMES[key.typeId] ?? "UNKNOWN";
          if (key.typeId === 0 || key.typeId === 1) {
            const marker = readEndTxnMarker(r.value);
            out.print(` endTxnMarker: ${name} coordinatorEpoch: ${marker.coordinatorEpoch}`);
          } else {
            out.print(` controlType: ${name}(${key.typeId})`);
          }
        }
      }
      if (opts.printDataLog && !isControl) {
        const [key, payload] = opts.parser(r);
        if (key !== undefined) {
          out.print(`${prefix}key: ${key}`);
          prefix = " ";
        }
        if (payload !== undefined) out.print(` payload: ${payload}`);
      }
    } catch (e) {
      out.println();
      out.err(`Error printing the record at offset ${r.offset} of ${path}: ${(e as Error).message}`);
      out.errors++;
      continue;
    }
    out.println();
  }
  return lastOffset;
}

// ---- .index ----

async function dumpIndex(path: string, opts: Options, state: DumpState, out: Output): Promise<void> {
  const baseOffset = baseOffsetOfName(path);
  const logPath = companionFile(path, ".log");
  if (!existsSync(logPath)) throw new DumpError(`${logPath} (No such file or directory)`);
  const index = FileReader.open(path);
  const log = FileReader.open(logPath);
  try {
    const entries = Math.floor(index.size / OFFSET_INDEX_ENTRY);
    if (entries === 0) {
      out.println(`${path} is empty.`);
      return;
    }
    if (opts.indexSanityOnly) {
      const last = baseOffset + BigInt(index.read((entries - 1) * OFFSET_INDEX_ENTRY, 4).readInt32BE(0));
      if (last < baseOffset) {
        throw new DumpError(
          `Corrupt index found, index file (${resolve(path)}) has non-zero size but the last offset is ${last} which is less than the base offset ${baseOffset}`,
        );
      }
      if (index.size % OFFSET_INDEX_ENTRY !== 0) {
        throw new DumpError(
          `Index file ${resolve(path)} is corrupt, found ${index.size} bytes which is neither positive nor a multiple of ${OFFSET_INDEX_ENTRY}`,
        );
      }
      out.println(`${path} passed sanity check.`);
      return;
    }
    for (let i = 0; i < entries; i++) {
      const e = index.read(i * OFFSET_INDEX_ENTRY, OFFSET_INDEX_ENTRY);
      const offset = baseOffset + BigInt(e.readInt32BE(0));
      const position = e.readInt32BE(4);
      // A preallocated index ends in zero entries: stop at the first one, as Kafka does.
      if (offset === baseOffset && i > 0) return;
      let firstBatchLastOffset = -1n;
      if (position >= 0 && position <= log.size) {
        const b = nextBatch(log, position, Math.min(log.size, position + opts.maxMessageSize));
        if (b !== undefined) firstBatchLastOffset = batchLastOffset(log, b);
      }
      // The first slot of an active (preallocated) index that has no entry yet is zeros too: an entry
      // (base offset, position 0) exists only when the first batch ends at the base offset. Kafka reports
      // the zeros as a mismatch, which reads like corruption; it is unused space.
      if (i === 0 && offset === baseOffset && position === 0 && firstBatchLastOffset !== offset) return;
      if (firstBatchLastOffset !== offset) {
        DumpState.add(state.indexMismatches, resolve(path), [offset, firstBatchLastOffset]);
      }
      if (!opts.verifyOnly) out.println(`offset: ${offset} position: ${position}`);
      if (i % 4096 === 4095) await out.maybeFlush();
    }
  } finally {
    index.close();
    log.close();
  }
}

/** Kafka's OffsetIndex.lookup: the entry with the largest offset <= target, or (baseOffset, 0). */
function offsetIndexLookup(index: FileReader | undefined, baseOffset: bigint, target: bigint): number {
  if (index === undefined) return 0;
  const entries = Math.floor(index.size / OFFSET_INDEX_ENTRY);
  if (entries === 0) return 0;
  const offsetAt = (slot: number): bigint =>
    baseOffset + BigInt(index.read(slot * OFFSET_INDEX_ENTRY, 4).readInt32BE(0));
  const search = (begin: number, end: number): number => {
    let lo = begin;
    let hi = end;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      const found = offsetAt(mid);
      if (found > target) hi = mid - 1;
      else if (found < target) lo = mid;
      else return mid;
    }
    return lo;
  };
  const warmEntries = Math.floor(8192 / OFFSET_INDEX_ENTRY);
  const firstHot = Math.max(0, entries - 1 - warmEntries);
  let slot: number;
  if (offsetAt(firstHot) < target) slot = search(firstHot, entries - 1);
  else if (offsetAt(0) > target) slot = -1;
  else slot = search(0, firstHot);
  if (slot === -1) return 0;
  return index.read(slot * OFFSET_INDEX_ENTRY + 4, 4).readInt32BE(0);
}

// ---- .timeindex ----

async function dumpTimeIndex(path: string, opts: Options, state: DumpState, out: Output): Promise<void> {
  const baseOffset = baseOffsetOfName(path);
  const logPath = companionFile(path, ".log");
  if (!existsSync(logPath)) throw new DumpError(`${logPath} (No such file or directory)`);
  const indexPath = companionFile(path, ".index");
  const log = FileReader.open(logPath);
  const index = existsSync(indexPath) ? FileReader.open(indexPath) : undefined;
  const timeIndex = FileReader.open(path);
  try {
    const entries = Math.floor(timeIndex.size / TIME_INDEX_ENTRY);
    const entryAt = (i: number): { timestamp: bigint; offset: bigint } => {
      const e = timeIndex.read(i * TIME_INDEX_ENTRY, TIME_INDEX_ENTRY);
      return { timestamp: e.readBigInt64BE(0), offset: baseOffset + BigInt(e.readInt32BE(8)) };
    };
    if (opts.indexSanityOnly) {
      const last = entries === 0 ? { timestamp: -1n, offset: baseOffset } : entryAt(entries - 1);
      const abs = resolve(path);
      if (entries !== 0 && last.timestamp < entryAt(0).timestamp) {
        throw new DumpError(
          `Corrupt time index found, time index file (${abs}) has non-zero size but the last timestamp is ${last.timestamp} which is less than the first timestamp ${entryAt(0).timestamp}`,
        );
      }
      if (entries !== 0 && last.offset < baseOffset) {
        throw new DumpError(
          `Corrupt time index found, time index file (${abs}) has non-zero size but the last offset is ${last.offset} which is less than the first offset ${baseOffset}`,
        );
      }
      if (timeIndex.size % TIME_INDEX_ENTRY !== 0) {
        throw new DumpError(
          `Time index file ${abs} is corrupt, found ${timeIndex.size} bytes which is neither positive nor a multiple of ${TIME_INDEX_ENTRY}`,
        );
      }
      out.println(`${path} passed sanity check.`);
      return;
    }
    const abs = resolve(path);
    let prevTimestamp = -1n;
    for (let i = 0; i < entries; i++) {
      const entry = entryAt(i);
      if (entry.offset === baseOffset && i > 0) return;
      const position = offsetIndexLookup(index, baseOffset, entry.offset);
      let found: FileBatch | undefined;
      let foundLast = -1n;
      if (position >= 0 && position <= log.size) {
        for (
          let b = nextBatch(log, position, log.size);
          b !== undefined;
          b = nextBatch(log, b.position + b.size, log.size)
        ) {
          const last = batchLastOffset(log, b);
          if (last >= entry.offset) {
            found = b;
            foundLast = last;
            break;
          }
        }
      }
      if (found === undefined) {
        DumpState.add(state.shallowNotFound, abs, [entry.offset, -1n]);
      } else if (foundLast !== entry.offset) {
        DumpState.add(state.shallowNotFound, abs, [entry.offset, foundLast]);
      } else {
        let maxTimestamp = -1n;
        for (const r of batchRecords(log, found)) if (r.timestamp > maxTimestamp) maxTimestamp = r.timestamp;
        if (maxTimestamp !== entry.timestamp)
          DumpState.add(state.timeMismatches, abs, [entry.timestamp, maxTimestamp]);
        if (prevTimestamp >= entry.timestamp)
          DumpState.add(state.outOfOrder, abs, [entry.timestamp, prevTimestamp]);
      }
      if (!opts.verifyOnly) out.println(`timestamp: ${entry.timestamp} offset: ${entry.offset}`);
      prevTimestamp = entry.timestamp;
      if (i % 4096 === 4095) await out.maybeFlush();
    }
  } finally {
    log.close();
    index?.close();
    timeIndex.close();
  }
}

// ---- .snapshot (ProducerStateManager.readSnapshot) ----

class SchemaError extends Error {}

function dumpProducerSnapshot(path: string, out: Output): void {
  const size = statSync(path).size;
  if (size > MAX_SNAPSHOT_BYTES) {
    throw new DumpError(
      `Snapshot ${path} has ${size} bytes, more than the ${MAX_SNAPSHOT_BYTES} this tool reads`,
    );
  }
  const f = FileReader.open(path);
  let buf: Buffer;
  try {
    buf = Buffer.from(f.read(0, size));
  } finally {
    f.close();
  }
  let pos = 0;
  const need = (n: number): void => {
    if (pos + n > buf.length) throw new SchemaError("java.nio.BufferUnderflowException");
  };
  const field = <T>(name: string, read: () => T): T => {
    try {
      return read();
    } catch (e) {
      throw new SchemaError(`Error reading field '${name}': ${(e as Error).message}`);
    }
  };
  const take = (n: number): number => {
    need(n);
    pos += n;
    return pos - n;
  };
  const i16 = (): number => buf.readInt16BE(take(2));
  const i32 = (): number => buf.readInt32BE(take(4));
  const u32 = (): number => buf.readUInt32BE(take(4));
  const i64 = (): bigint => buf.readBigInt64BE(take(8));
  interface Entry {
    producerId: bigint;
    epoch: number;
    lastSequence: number;
    lastOffset: bigint;
    offsetDelta: number;
    timestamp: bigint;
    coordinatorEpoch: number;
    currentTxnFirstOffset: bigint;
  }
  let version: number;
  let crc: number;
  let entries: Entry[];
  try {
    version = field("version", i16);
    crc = field("crc", u32);
    entries = field("producer_entries", () => {
      const n = i32();
      if (n < 0) throw new SchemaError(`Array size ${n} cannot be negative`);
      if (n > buf.length - pos)
        throw new SchemaError(`Error reading array of size ${n}, only ${buf.length - pos} bytes available`);
      const list: Entry[] = [];
      for (let i = 0; i < n; i++) {
        list.push({
          producerId: field("producer_id", i64),
          epoch: field("epoch", i16),
          lastSequence: field("last_sequence", i32),
          lastOffset: field("last_offset", i64),
          offsetDelta: field("offset_delta", i32),
          timestamp: field("timestamp", i64),
          coordinatorEpoch: field("coordinator_epoch", i32),
          currentTxnFirstOffset: field("current_txn_first_offset", i64),
        });
      }
      return list;
    });
  } catch (e) {
    out.err(`Snapshot failed schema validation: ${(e as Error).message}`);
    out.errors++;
    return;
  }
  if (version !== 1) {
    out.err(`Snapshot contained an unknown file version ${version}`);
    out.errors++;
    return;
  }
  const computed = crc32c(buf.subarray(6)) >>> 0;
  if (crc !== computed) {
    out.err(`Snapshot is corrupt (CRC is no longer valid). Stored crc: ${crc}. Computed crc: ${computed}`);
    out.errors++;
    return;
  }
  for (const e of entries) {
    const txn =
      e.currentTxnFirstOffset >= 0n ? `OptionalLong[${e.currentTxnFirstOffset}]` : "OptionalLong.empty";
    out.print(
      `producerId: ${e.producerId} producerEpoch: ${e.epoch} coordinatorEpoch: ${e.coordinatorEpoch} currentTxnFirstOffset: ${txn} lastTimestamp: ${e.timestamp} `,
    );
    if (e.lastOffset >= 0n) {
      out.print(
        `firstSequence: ${decrementSequence(e.lastSequence, e.offsetDelta)} lastSequence: ${e.lastSequence} lastOffset: ${e.lastOffset} offsetDelta: ${e.offsetDelta} timestamp: ${e.timestamp}`,
      );
    }
    out.println();
  }
}

// ---- .txnindex (TransactionIndex / AbortedTxn) ----

function dumpTxnIndex(path: string, out: Output): void {
  const f = FileReader.open(path);
  try {
    const n = Math.floor(f.size / ABORTED_TXN_SIZE);
    for (let i = 0; i < n; i++) {
      const e = f.read(i * ABORTED_TXN_SIZE, ABORTED_TXN_SIZE);
      const version = e.readInt16BE(0);
      if (version > 0) {
        throw new DumpError(
          `Unexpected aborted transaction version ${version} in transaction index ${resolve(path)}, current version is 0`,
        );
      }
      out.println(
        `version: ${version} producerId: ${e.readBigInt64BE(2)} firstOffset: ${e.readBigInt64BE(10)} lastOffset: ${e.readBigInt64BE(18)} lastStableOffset: ${e.readBigInt64BE(26)}`,
      );
    }
  } finally {
    f.close();
  }
}

// ---- leader-epoch-checkpoint ----

function dumpLeaderEpochCheckpoint(path: string, out: Output): void {
  let entries: ReturnType<LeaderEpochCheckpointFile["read"]>;
  try {
    entries = new LeaderEpochCheckpointFile(path).read();
  } catch (e) {
    if (e instanceof CheckpointFileError) throw new DumpError(e.message);
    throw e;
  }
  for (const e of entries) out.println(`epoch: ${e.epoch} startOffset: ${e.startOffset}`);
}

// ---- main ----

function printErrors(state: DumpState, out: Output): void {
  for (const [file, list] of state.indexMismatches) {
    out.err(`Mismatches in :${file}`);
    // Kafka prepends to an immutable list, so the newest mismatch comes first.
    for (const [indexOffset, logOffset] of [...list].reverse()) {
      out.err(`  Index offset: ${indexOffset}, log offset: ${logOffset}`);
    }
  }
  for (const [file, list] of state.timeMismatches) {
    out.err(`Found timestamp mismatch in :${file}`);
    for (const [a, b] of list) out.err(`  Index timestamp: ${a}, log timestamp: ${b}`);
  }
  for (const [file, list] of state.outOfOrder) {
    out.err(`Found out of order timestamp in :${file}`);
    for (const [a, b] of list) out.err(`  Index timestamp: ${a}, Previously indexed timestamp: ${b}`);
  }
  for (const list of state.shallowNotFound.values()) {
    out.err("The following indexed offsets are not found in the log.");
    for (const [a, b] of list) out.err(`Indexed offset: ${a}, found log offset: ${b}`);
  }
  for (const [file, list] of state.nonConsecutive) {
    out.err(`Non-consecutive offsets in ${file}`);
    for (const [a, b] of [...list].reverse()) out.err(`  ${a} is followed by ${b}`);
  }
}

/** Runs the tool; returns the exit status. */
export async function runDumpLog(
  args: string[],
  stdout: NodeJS.WritableStream = process.stdout,
  stderr: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  let opts: Options | "help";
  try {
    opts = parseDumpLogArgs(args);
  } catch (e) {
    if (e instanceof UsageError) {
      stderr.write(`tributary dump-log: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
  if (opts === "help") {
    stdout.write(`${HELP}\n`);
    return 0;
  }
  for (const file of opts.files) {
    if (!existsSync(file)) {
      stderr.write(`tributary dump-log: no such file: ${file}\n`);
      return 1;
    }
    if (statSync(file).isDirectory()) {
      stderr.write(`tributary dump-log: ${file} is a directory, expected a file\n`);
      return 1;
    }
  }
  const out = new Output(stdout, stderr);
  const state = new DumpState();
  for (const file of opts.files) {
    out.println(`Dumping ${file}`);
    const name = basename(file);
    const dot = name.lastIndexOf(".");
    const suffix = dot < 0 ? "" : name.slice(dot);
    try {
      if (suffix === ".log") await dumpLog(file, opts, state, out);
      else if (suffix === ".index") await dumpIndex(file, opts, state, out);
      else if (suffix === ".timeindex") await dumpTimeIndex(file, opts, state, out);
      else if (suffix === ".snapshot") dumpProducerSnapshot(file, out);
      else if (suffix === ".txnindex") dumpTxnIndex(file, out);
      else if (name === LEADER_EPOCH_CHECKPOINT) dumpLeaderEpochCheckpoint(file, out);
      else out.err(`Ignoring unknown file ${file}`);
    } catch (e) {
      // The reader of the output has gone (`| head`): nothing more to dump for anyone.
      if (e instanceof StdoutClosedError) return 0;
      // Never a stack trace: Kafka's exception message (DumpError) or the error's own message, one line.
      if (e instanceof DumpError) out.err(e.message);
      else out.err(`Error dumping ${file}: ${(e as Error).message}`);
      out.errors++;
    }
    try {
      await out.maybeFlush();
    } catch (e) {
      if (e instanceof StdoutClosedError) return 0;
      throw e;
    }
  }
  printErrors(state, out);
  try {
    await out.end();
  } catch (e) {
    if (!(e instanceof StdoutClosedError)) throw e;
  }
  return out.errors > 0 ? 1 : 0;
}
