// Producer-state snapshot files, `<20-digit offset>.snapshot` in the partition directory, in Kafka's exact
// format (ProducerStateManager.writeSnapshot/readSnapshot): version int16 (1), crc uint32 (CRC32C of every
// byte after it), then the ProducerSnapshot schema's entries array (storage-records/ProducerSnapshot.json).
// A snapshot that fails to parse, has another version or a wrong CRC is a CorruptSnapshotError: the
// caller deletes it and falls back to an older snapshot or the log.

import { closeSync, fdatasyncSync, openSync, readFileSync, writeSync } from "node:fs";
import {
  readProducerSnapshot,
  writeProducerSnapshot,
} from "../../protocol/generated/storage-records/ProducerSnapshot.js";
import { Reader } from "../../protocol/primitives/reader.js";
import { Writer } from "../../protocol/primitives/writer.js";
import { crc32c } from "../../protocol/records/crc32c.js";
import { BatchMetadata } from "./batch-metadata.js";
import { ProducerStateEntry } from "./producer-state-entry.js";

export const PRODUCER_SNAPSHOT_VERSION = 1;
const CRC_OFFSET = 2;
const PRODUCER_ENTRIES_OFFSET = 6;

export class CorruptSnapshotError extends Error {
  override name = "CorruptSnapshotError";
}

/** The bytes of a snapshot of `entries`. */
export function encodeProducerSnapshot(entries: Iterable<ProducerStateEntry>): Buffer {
  const w = new Writer(256);
  w.int16(PRODUCER_SNAPSHOT_VERSION);
  const producerEntries = [];
  for (const e of entries) {
    producerEntries.push({
      producerId: e.producerId,
      epoch: e.producerEpoch,
      lastSequence: e.lastSeq(),
      lastOffset: e.lastDataOffset(),
      offsetDelta: e.lastOffsetDelta(),
      timestamp: e.lastTimestamp,
      coordinatorEpoch: e.coordinatorEpoch,
      currentTxnFirstOffset: e.currentTxnFirstOffset,
    });
  }
  writeProducerSnapshot(w, { crc: 0, producerEntries }, PRODUCER_SNAPSHOT_VERSION);
  const buf = w.toBuffer();
  buf.writeUInt32BE(crc32c(buf.subarray(PRODUCER_ENTRIES_OFFSET)) >>> 0, CRC_OFFSET);
  return buf;
}

/** Parses snapshot bytes; throws CorruptSnapshotError. */
export function decodeProducerSnapshot(buf: Buffer): ProducerStateEntry[] {
  if (buf.length < PRODUCER_ENTRIES_OFFSET)
    throw new CorruptSnapshotError(`Snapshot of ${buf.length} bytes is shorter than its header`);
  const version = buf.readInt16BE(0);
  if (version !== PRODUCER_SNAPSHOT_VERSION)
    throw new CorruptSnapshotError(`Snapshot contained an unknown file version ${version}`);
  const stored = buf.readUInt32BE(CRC_OFFSET);
  const computed = crc32c(buf.subarray(PRODUCER_ENTRIES_OFFSET)) >>> 0;
  if (stored !== computed) {
    throw new CorruptSnapshotError(
      `Snapshot is corrupt (CRC is no longer valid). Stored crc: ${stored}. Computed crc: ${computed}`,
    );
  }
  let snapshot: ReturnType<typeof readProducerSnapshot>;
  try {
    const r = new Reader(buf.subarray(CRC_OFFSET));
    snapshot = readProducerSnapshot(r, PRODUCER_SNAPSHOT_VERSION);
    if (r.remaining !== 0) throw new Error(`${r.remaining} bytes after the last entry`);
  } catch (e) {
    throw new CorruptSnapshotError(`Snapshot failed schema validation: ${(e as Error).message}`);
  }
  return snapshot.producerEntries.map(
    (p) =>
      new ProducerStateEntry(
        p.producerId,
        p.epoch,
        p.coordinatorEpoch,
        p.timestamp,
        p.currentTxnFirstOffset >= 0n ? p.currentTxnFirstOffset : -1n,
        p.lastOffset >= 0n
          ? new BatchMetadata(p.lastSequence, p.lastOffset, p.offsetDelta, p.timestamp)
          : undefined,
      ),
  );
}

/** Reads a snapshot file; a missing or unreadable file is a CorruptSnapshotError too. */
export function readProducerSnapshotFile(file: string): ProducerStateEntry[] {
  let buf: Buffer;
  try {
    buf = readFileSync(file);
  } catch (e) {
    throw new CorruptSnapshotError(`Failed to read snapshot ${file}: ${(e as Error).message}`);
  }
  return decodeProducerSnapshot(buf);
}

/** Writes a snapshot file (replacing one at the same offset), fdatasync'ed when `sync`. */
export function writeProducerSnapshotFile(
  file: string,
  entries: Iterable<ProducerStateEntry>,
  sync: boolean,
): void {
  const buf = encodeProducerSnapshot(entries);
  const fd = openSync(file, "w");
  try {
    let written = 0;
    while (written < buf.length) written += writeSync(fd, buf, written, buf.length - written, written);
    if (sync) fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
