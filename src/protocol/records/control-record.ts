// Control records: the records of a control batch (attributes bit 5), written by the broker, never by
// producers. The key is (version int16, type int16); for the end-transaction markers ABORT (0) and COMMIT
// (1) the value is (version int16, coordinatorEpoch int32) — Kafka's ControlRecordType and
// EndTransactionMarker. Also builds the one-record control batch that a WriteTxnMarkers request appends.

import { CompressionType } from "./compression.js";
import { CorruptRecordError } from "./corrupt-record-error.js";
import { buildRecordBatch } from "./memory-records.js";
import { NO_PARTITION_LEADER_EPOCH, NO_SEQUENCE } from "./record-batch.js";

export const ControlRecordType = {
  Unknown: -1,
  Abort: 0,
  Commit: 1,
  /** KRaft quorum records; listed so their batches can be recognised, never built here. */
  LeaderChange: 2,
  SnapshotHeader: 3,
  SnapshotFooter: 4,
  KRaftVersion: 5,
  KRaftVoters: 6,
} as const;
export type ControlRecordType = (typeof ControlRecordType)[keyof typeof ControlRecordType];

export const CONTROL_RECORD_KEY_VERSION = 0;
export const CONTROL_RECORD_KEY_SIZE = 4;
export const END_TXN_MARKER_VERSION = 0;
export const END_TXN_MARKER_VALUE_SIZE = 6;

export interface ControlRecordKey {
  version: number;
  /** The type id as stored (may be a type this code does not know). */
  typeId: number;
  type: ControlRecordType;
}

function invalid(message: string): CorruptRecordError {
  return new CorruptRecordError(message, "INVALID_RECORD");
}

/** Parses a control record key (Kafka's ControlRecordType.parse). Newer key versions are read as version 0. */
export function readControlRecordKey(key: Buffer | null): ControlRecordKey {
  if (key === null || key.length < CONTROL_RECORD_KEY_SIZE) {
    throw invalid(
      `control record key must have at least ${CONTROL_RECORD_KEY_SIZE} bytes, found ${key?.length ?? "null"}`,
    );
  }
  const version = key.readInt16BE(0);
  if (version < 0) throw invalid(`invalid control record key version ${version}`);
  const typeId = key.readInt16BE(2);
  const type = typeId >= 0 && typeId <= 6 ? (typeId as ControlRecordType) : ControlRecordType.Unknown;
  return { version, typeId, type };
}

export function writeControlRecordKey(type: ControlRecordType, version = CONTROL_RECORD_KEY_VERSION): Buffer {
  const b = Buffer.allocUnsafe(CONTROL_RECORD_KEY_SIZE);
  b.writeInt16BE(version, 0);
  b.writeInt16BE(type, 2);
  return b;
}

export interface EndTxnMarker {
  version: number;
  coordinatorEpoch: number;
}

/** Parses an end-transaction marker value (Kafka's EndTransactionMarker.deserializeValue). */
export function readEndTxnMarker(value: Buffer | null): EndTxnMarker {
  if (value === null || value.length < END_TXN_MARKER_VALUE_SIZE) {
    throw invalid(
      `end transaction marker value must have at least ${END_TXN_MARKER_VALUE_SIZE} bytes, found ${value?.length ?? "null"}`,
    );
  }
  const version = value.readInt16BE(0);
  if (version < 0) throw invalid(`invalid end transaction marker version ${version}`);
  return { version, coordinatorEpoch: value.readInt32BE(2) };
}

export function writeEndTxnMarker(coordinatorEpoch: number, version = END_TXN_MARKER_VERSION): Buffer {
  const b = Buffer.allocUnsafe(END_TXN_MARKER_VALUE_SIZE);
  b.writeInt16BE(version, 0);
  b.writeInt32BE(coordinatorEpoch, 2);
  return b;
}

export interface EndTxnMarkerBatchOptions {
  /** ControlRecordType.Commit or ControlRecordType.Abort. */
  type: typeof ControlRecordType.Commit | typeof ControlRecordType.Abort;
  producerId: bigint;
  producerEpoch: number;
  coordinatorEpoch: number;
  /** The marker's timestamp (the broker's clock, injected). */
  timestamp: bigint;
  baseOffset?: bigint;
  partitionLeaderEpoch?: number;
}

/**
 * Builds the control batch holding one COMMIT or ABORT marker (Kafka's
 * MemoryRecords.withEndTransactionMarker): transactional and control bits set, no sequence, uncompressed.
 */
export function buildEndTxnMarkerBatch(options: EndTxnMarkerBatchOptions): Buffer {
  return buildRecordBatch({
    records: [
      {
        key: writeControlRecordKey(options.type),
        value: writeEndTxnMarker(options.coordinatorEpoch),
        timestamp: options.timestamp,
      },
    ],
    compression: CompressionType.None,
    baseOffset: options.baseOffset ?? 0n,
    partitionLeaderEpoch: options.partitionLeaderEpoch ?? NO_PARTITION_LEADER_EPOCH,
    producerId: options.producerId,
    producerEpoch: options.producerEpoch,
    baseSequence: NO_SEQUENCE,
    isTransactional: true,
    isControl: true,
  });
}
