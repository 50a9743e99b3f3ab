// Producer-state replay: applies record batch headers to a ProducerStateManager (Kafka's
// UnifiedLog.updateProducers / loadProducersFromRecords) and rebuilds the state of a log at load and
// after truncation (Kafka's rebuildProducerState): the latest readable snapshot at or below the log end
// is loaded, then every batch from its offset to the log end is replayed, reading only batch headers
// (a control batch's single marker record is decoded). A log without a readable snapshot is replayed
// from its start: a snapshot is never required and never trusted blindly.

import {
  ControlRecordType,
  decodeBatchRecords,
  type RecordBatchHeader,
  readControlRecordKey,
  readEndTxnMarker,
} from "../../protocol/records/index.js";
import type { LogSegment } from "../log-segment.js";
import type { TransactionIndex } from "../transaction-index.js";
import { incrementSequence } from "./batch-metadata.js";
import type { AppendOrigin, CompletedTxn, ProducerAppendInfo } from "./producer-append-info.js";
import type { ProducerStateManager } from "./producer-state-manager.js";

/** The header fields producer state needs (a RecordBatchHeader has them all). */
export type ProducerBatchHeader = Pick<
  RecordBatchHeader,
  | "baseOffset"
  | "lastOffsetDelta"
  | "maxTimestamp"
  | "producerId"
  | "producerEpoch"
  | "baseSequence"
  | "isTransactional"
  | "isControl"
>;

/** Kafka's RecordBatch.lastSequence. */
export function lastSequenceOf(h: ProducerBatchHeader): number {
  return h.baseSequence < 0 ? h.baseSequence : incrementSequence(h.baseSequence, h.lastOffsetDelta);
}

/** A control batch's end-transaction marker (undefined for other control records). */
export function endTxnMarkerOf(batch: Buffer): { isAbort: boolean; coordinatorEpoch: number } | undefined {
  const [record] = decodeBatchRecords(batch);
  if (record === undefined) return undefined;
  const key = readControlRecordKey(record.key);
  if (key.type !== ControlRecordType.Abort && key.type !== ControlRecordType.Commit) return undefined;
  return {
    isAbort: key.type === ControlRecordType.Abort,
    coordinatorEpoch: readEndTxnMarker(record.value).coordinatorEpoch,
  };
}

/**
 * Validates one batch with a producer id against the state (Kafka's updateProducers), collecting the
 * change in `updated`; `batchBytes` is needed only for control batches. Throws KafkaError.
 */
export function updateProducers(
  psm: ProducerStateManager,
  h: ProducerBatchHeader,
  updated: Map<bigint, ProducerAppendInfo>,
  origin: AppendOrigin,
  batchBytes: () => Buffer,
  completedTxns?: CompletedTxn[],
): void {
  let info = updated.get(h.producerId);
  if (info === undefined) {
    info = psm.prepareUpdate(h.producerId, origin);
    updated.set(h.producerId, info);
  }
  const lastOffset = h.baseOffset + BigInt(h.lastOffsetDelta);
  if (h.isControl) {
    const marker = endTxnMarkerOf(batchBytes());
    if (marker === undefined) return;
    const done = info.appendEndTxnMarker(
      marker.isAbort,
      marker.coordinatorEpoch,
      h.producerEpoch,
      h.baseOffset,
      h.maxTimestamp,
    );
    if (done !== undefined) completedTxns?.push(done);
    return;
  }
  info.appendDataBatch(
    h.producerEpoch,
    h.baseSequence,
    lastSequenceOf(h),
    h.maxTimestamp,
    h.baseOffset,
    lastOffset,
    h.isTransactional,
  );
}

/**
 * Applies collected changes (after the append reached the log). With `txnIndex` (the segment holding the
 * markers), each aborted transaction is recorded there with the last stable offset as of its marker
 * (Kafka's LogSegment.updateTxnIndex) before it leaves the ongoing set (completeTxn).
 */
export function applyProducerUpdates(
  psm: ProducerStateManager,
  updated: Map<bigint, ProducerAppendInfo>,
  completedTxns: readonly CompletedTxn[] = [],
  txnIndex?: TransactionIndex,
): void {
  for (const info of updated.values()) psm.update(info);
  for (const t of completedTxns) {
    if (txnIndex !== undefined && t.isAborted) {
      txnIndex.append({
        producerId: t.producerId,
        firstOffset: t.firstOffset,
        lastOffset: t.lastOffset,
        lastStableOffset: psm.lastStableOffset(t),
      });
    }
    psm.completeTxn(t);
  }
}

/**
 * The producer-state changes of one append, collected batch by batch while it is validated and applied
 * once its bytes are in the log (Kafka's analyzeAndValidateProducerState, then the updates after the
 * local append): nothing reaches the ProducerStateManager for an append that fails.
 */
export class ProducerStateUpdates {
  private updated: Map<bigint, ProducerAppendInfo> | undefined;
  private completed: CompletedTxn[] | undefined;

  constructor(
    private readonly psm: ProducerStateManager,
    private readonly origin: AppendOrigin,
  ) {}

  /** Validates one batch with a producer id (updateProducers); its bytes are read only for markers. */
  add(h: ProducerBatchHeader, batchBytes: () => Buffer): void {
    this.updated ??= new Map();
    this.completed ??= [];
    updateProducers(this.psm, h, this.updated, this.origin, batchBytes, this.completed);
  }

  /** Applies the changes (ABORTs into `txnIndex`: applyProducerUpdates) and moves the map end offset. */
  apply(txnIndex: TransactionIndex, mapEndOffset: bigint): void {
    if (this.updated !== undefined) applyProducerUpdates(this.psm, this.updated, this.completed, txnIndex);
    this.psm.updateMapEndOffset(mapEndOffset);
  }
}

/** One batch of `seg` (header `h`, `size` bytes) into the pending updates; its bytes are read only for markers. */
function replayBatch(
  psm: ProducerStateManager,
  seg: LogSegment,
  h: RecordBatchHeader,
  size: number,
  updated: Map<bigint, ProducerAppendInfo>,
  completed: CompletedTxn[],
): void {
  const at = h.baseOffset;
  updateProducers(
    psm,
    h,
    updated,
    "replication",
    () => seg.read(at, size, seg.size, true)?.records ?? Buffer.alloc(0),
    completed,
  );
}

/**
 * Replays one just-recovered segment batch by batch into `psm` (which must reflect the log up to the
 * segment's base offset) and rebuilds the segment's .txnindex on the way (Kafka's LogSegment.recover with
 * updateProducerState). Leaves the map at the segment's next offset.
 */
export function replaySegmentRebuildingTxnIndex(psm: ProducerStateManager, seg: LogSegment): void {
  const found = seg.translateOffset(seg.baseOffset);
  let pos = found?.position ?? 0;
  for (;;) {
    const h = seg.readFullBatchHeader(pos);
    if (h === undefined) break;
    const size = 12 + h.batchLength;
    if (h.producerId >= 0n) {
      const updated = new Map<bigint, ProducerAppendInfo>();
      const completed: CompletedTxn[] = [];
      replayBatch(psm, seg, h, size, updated, completed);
      applyProducerUpdates(psm, updated, completed, seg.txnIndex);
    }
    pos += size;
  }
  psm.updateMapEndOffset(seg.readNextOffset());
}

/**
 * Brings the state to `logEndOffset` (Kafka's rebuildProducerState): reloads from the latest snapshot when
 * the map is elsewhere, replays the segments from there, and snapshots the result. Returns how many
 * batches were replayed.
 */
export function rebuildProducerState(
  psm: ProducerStateManager,
  segments: readonly LogSegment[],
  logStartOffset: bigint,
  logEndOffset: bigint,
  nowMs: number,
  takeSnapshot = true,
): number {
  psm.truncateAndReload(logStartOffset, logEndOffset, nowMs);
  let replayed = 0;
  if (logEndOffset > psm.mapEndOffset) {
    const from = psm.mapEndOffset > logStartOffset ? psm.mapEndOffset : logStartOffset;
    for (let i = 0; i < segments.length; i++) {
      const seg = segments[i];
      const next = i + 1 < segments.length ? segments[i + 1].baseOffset : logEndOffset;
      if (next <= from) continue;
      let start = from;
      if (seg.baseOffset > start) start = seg.baseOffset;
      const found = seg.translateOffset(start);
      if (found === undefined) continue;
      let pos = found.position;
      const updated = new Map<bigint, ProducerAppendInfo>();
      const completed: CompletedTxn[] = [];
      for (;;) {
        const h = seg.readFullBatchHeader(pos);
        if (h === undefined) break;
        const size = 12 + h.batchLength;
        if (h.baseOffset >= logEndOffset) break;
        if (h.producerId >= 0n && h.baseOffset + BigInt(h.lastOffsetDelta) >= start) {
          replayBatch(psm, seg, h, size, updated, completed);
          replayed++;
        }
        pos += size;
      }
      applyProducerUpdates(psm, updated, completed);
    }
  }
  psm.updateMapEndOffset(logEndOffset);
  if (takeSnapshot) psm.takeSnapshot();
  return replayed;
}
