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
// --offsets-decoder prints __consumer_offsets records as JSON, as Kafka 4.0 does; --transaction-log-decoder
// prints __transaction_state records as Kafka's TransactionLog.formatRecordKeyAndValue does (its partitions
// in the order they are stored, where Kafka's come in hash-set order).
//
// Files are read through a bounded window (sizes are checked against the file before anything is
// allocated), so a corrupt file of any size costs bounded memory. Where Kafka's tool would die with a stack
// trace on a corrupt file, this prints Kafka's exception message as one line on stderr, goes on with the
// next file, and exits with status 1. When the reader of its output goes away (`| head`), it stops (status 0).
//
// The parts, in dump-log/: the command line (dump-log-options.ts), one dumper per file kind (log-dumper.ts,
// offset-index-dumper.ts, time-index-dumper.ts, producer-snapshot-dumper.ts, txn-index-dumper.ts,
// leader-epoch-checkpoint-dumper.ts), the .log entries (file-log-input-stream.ts) and how they print
// (record-batch-printer.ts), the key/value parsers (message-parsers.ts, offsets-message-parser.ts), the
// bounded file reads (segment-file-reader.ts), the output (dump-output.ts) and the errors (dump-errors.ts).

import { existsSync, statSync } from "node:fs";
import { basename } from "node:path";
import { StdoutClosedError } from "../tool-output.js";
import { DumpError, DumpState, printErrors, UsageError } from "./dump-log/dump-errors.js";
import { type DumpLogOptions, HELP, parseDumpLogArgs } from "./dump-log/dump-log-options.js";
import { Output } from "./dump-log/dump-output.js";
import {
  dumpLeaderEpochCheckpoint,
  LEADER_EPOCH_CHECKPOINT,
} from "./dump-log/leader-epoch-checkpoint-dumper.js";
import { dumpLog } from "./dump-log/log-dumper.js";
import { dumpIndex } from "./dump-log/offset-index-dumper.js";
import { dumpProducerSnapshot } from "./dump-log/producer-snapshot-dumper.js";
import { dumpTimeIndex } from "./dump-log/time-index-dumper.js";
import { dumpTxnIndex } from "./dump-log/txn-index-dumper.js";

/** Runs the tool; returns the exit status. */
export async function runDumpLog(
  args: string[],
  stdout: NodeJS.WritableStream = process.stdout,
  stderr: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  let opts: DumpLogOptions | "help";
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
  const context = { opts, state, out };
  for (const file of opts.files) {
    out.println(`Dumping ${file}`);
    const name = basename(file);
    const dot = name.lastIndexOf(".");
    const suffix = dot < 0 ? "" : name.slice(dot);
    try {
      if (suffix === ".log") await dumpLog(file, context);
      else if (suffix === ".index") await dumpIndex(file, context);
      else if (suffix === ".timeindex") await dumpTimeIndex(file, context);
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
