// `dump-log` of a producer-state .snapshot (Kafka's ProducerStateManager.readSnapshot): version int16,
// crc uint32 (CRC32C of everything after it), then the producer entries; one line per producer as Kafka's
// DumpLogSegments prints them. A snapshot that fails the schema, has an unknown version or a wrong CRC is
// one line on stderr in Kafka's words. Snapshots over 64 MiB are refused rather than read.

import { statSync } from "node:fs";
import type { ProducerEntry } from "../../../protocol/generated/storage-records/ProducerSnapshot.js";
import { crc32c } from "../../../protocol/records/crc32c.js";
import { decrementSequence } from "../../../storage/producer-state/batch-metadata.js";
import { DumpError } from "./dump-errors.js";
import type { Output } from "./dump-output.js";
import { FileReader } from "./segment-file-reader.js";

/** Largest producer snapshot read. */
const MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024;

class SchemaError extends Error {}

export function dumpProducerSnapshot(path: string, out: Output): void {
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
  let version: number;
  let crc: number;
  let entries: ProducerEntry[];
  try {
    version = field("version", i16);
    crc = field("crc", u32);
    entries = field("producer_entries", () => {
      const n = i32();
      if (n < 0) throw new SchemaError(`Array size ${n} cannot be negative`);
      if (n > buf.length - pos)
        throw new SchemaError(`Error reading array of size ${n}, only ${buf.length - pos} bytes available`);
      const list: ProducerEntry[] = [];
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
