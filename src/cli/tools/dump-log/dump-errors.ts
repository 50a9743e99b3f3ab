// How `dump-log` fails, as Kafka's DumpLogSegments reports it: a bad command line (UsageError: one line,
// nothing dumped), a file that cannot be read on (DumpError: Kafka's exception message as one line on
// stderr, the next file is dumped, exit status 1), and the index/log disagreements collected over all the
// files and printed on stderr at the end (DumpState, printErrors: Kafka's misMatchesForIndexFilesMap,
// TimeIndexDumpErrors and nonConsecutivePairsForLogFilesMap, in Kafka's order and wording).

import type { Output } from "./dump-output.js";

/** A line for the user: printed on stderr, ends the current file, exit status 1. */
export class DumpError extends Error {}

/** Bad command line: one line on stderr, exit status 1, nothing dumped. */
export class UsageError extends Error {}

/** The disagreements found so far, by file (absolute path), each a pair of offsets or timestamps. */
export class DumpState {
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

export function printErrors(state: DumpState, out: Output): void {
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
