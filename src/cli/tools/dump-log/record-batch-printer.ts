// How `dump-log` prints a .log file's entries, as Kafka's DumpLogSegments does: one line per batch
// ("baseOffset: … isvalid: true", or "offset: …" for a legacy message), and with --deep-iteration one
// "| offset: …" line per record, with its sequence and header keys, a control record's marker, and with
// --print-data-log the key and payload from the options' MessageParser. Offsets that do not follow one
// another are collected for the end (DumpState.nonConsecutive); a record that does not print is one line
// on stderr and the dump goes on.

import { resolve } from "node:path";
import {
  COMPRESSION_CODEC_MASK,
  compressionTypeName,
  type DecodedRecord,
  RECORD_BATCH_OVERHEAD,
  readControlRecordKey,
  readEndTxnMarker,
  TIMESTAMP_TYPE_MASK,
} from "../../../protocol/records/index.js";
import { incrementSequence } from "../../../storage/producer-state/batch-metadata.js";
import { DumpState } from "./dump-errors.js";
import type { DumpLogOptions } from "./dump-log-options.js";
import type { Output } from "./dump-output.js";
import {
  batchRecords,
  type FileBatch,
  legacyEntry,
  readV2Header,
  type V2Header,
  v2BatchCrc,
} from "./file-log-input-stream.js";
import type { FileReader } from "./segment-file-reader.js";

function timestampTypeName(magic: number, attributes: number): string {
  if (magic === 0) return "NoTimestampType";
  return attributes & TIMESTAMP_TYPE_MASK ? "LogAppendTime" : "CreateTime";
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

export function printBatchLevel(f: FileReader, b: FileBatch, position: number, out: Output): void {
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

export function printRecords(
  f: FileReader,
  b: FileBatch,
  opts: DumpLogOptions,
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
