// `dump-log` of a .txnindex file (Kafka's TransactionIndex of AbortedTxn entries: version int16, producerId,
// firstOffset, lastOffset, lastStableOffset int64): one line per aborted transaction; an entry of a version
// above 0 ends the file with Kafka's message.

import { resolve } from "node:path";
import { DumpError } from "./dump-errors.js";
import type { Output } from "./dump-output.js";
import { FileReader } from "./segment-file-reader.js";

const ABORTED_TXN_SIZE = 34;

export function dumpTxnIndex(path: string, out: Output): void {
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
