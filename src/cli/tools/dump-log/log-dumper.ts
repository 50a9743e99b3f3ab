// `dump-log` of a .log segment (Kafka's DumpLogSegments.dumpLog): "Log starting offset: N", then each entry
// as record-batch-printer.ts prints it, up to --max-bytes; bytes at the end that do not make a whole entry
// give "Found N invalid bytes at the end of <file>" (not when --max-bytes cut the read short).

import { basename } from "node:path";
import { type DumpContext, INT_MAX } from "./dump-log-options.js";
import { nextBatch } from "./file-log-input-stream.js";
import { printBatchLevel, printRecords } from "./record-batch-printer.js";
import { baseOffsetOfName, FileReader } from "./segment-file-reader.js";

export async function dumpLog(path: string, { opts, state, out }: DumpContext): Promise<void> {
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
