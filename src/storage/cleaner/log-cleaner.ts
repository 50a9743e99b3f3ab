// Log cleaner core: compaction of record batches, as pure logic over bytes. Owns Kafka's Cleaner rules
// (buildOffsetMap, cleanInto's record filter, MemoryRecords.filterTo, CleanedTransactionMetadata); it
// does no I/O and knows nothing of segments files: UnifiedLog / the cleaner thread read a segment's
// bytes (in chunks if they like), pass them here, and write `output` into the `.cleaned` segment.
//
// A clean round (Kafka's Cleaner.doClean), as a caller wires it:
//   1. map.clear(); an OffsetMapBuilder over the dirty section [firstDirtyOffset, firstUncleanableOffset)
//      (cleanable-ratio.ts computes it) with the aborted transactions of that range; then addBatches(chunk)
//      for each dirty segment's bytes in order (the first may start at the index position of
//      firstDirtyOffset) and endSegment(nextSegmentBaseOffset, or firstUncleanableOffset for the last)
//      after each, until `full`. endOffset = map.latestOffset + 1 is the new cleaner checkpoint.
//   2. One CleanedTransactionState for the round. For every segment with baseOffset < endOffset (clean
//      and dirty, grouped with groupSegmentsBySize), oldest first: state.addAbortedTransactions(the
//      segment's aborted txns), cleanBatches(bytes, ctx) with upperBoundOffsetOfCleaningRound =
//      firstUncleanableOffset and the producer state's last records, write `output` to the group's
//      `.cleaned` segment, and after the group rebuild its .txnindex from
//      state.takeRetainedAbortedTransactions(). `cleanLog` below does all of this over in-memory segments
//      (one cleaned segment per input segment).
//
// Retain rules (Kafka 3.x, magic v2):
// - A record is kept iff its offset >= the map's offset for its key (the last value per key wins); every
//   record beyond map.latestOffset is kept. A record with a null key is dropped (Kafka rejects them on
//   produce to a compacted topic and its cleaner drops them, counting an invalid message).
// - Tombstones (null value): the first clean that retains a tombstone stamps its batch with a delete
//   horizon (attribute bit 6, baseTimestamp = now + delete.retention.ms; KIP-534). A later clean drops
//   the tombstone once now >= horizon. A batch that is stamped is rebuilt even if no record is dropped.
// - Aborted transactions: data batches of an aborted transaction (producer id + offset range from the
//   .txnindex) are dropped whole, and never enter the offset map.
// - Transaction markers (control batches): an ABORT marker is kept while any batch of its transaction was
//   still seen in this clean; a COMMIT marker while any batch of its transaction was seen. Once a marker
//   could go, its batch is stamped with a delete horizon (as tombstones are), and the marker is removed by
//   a later clean once now >= horizon. Other control types are kept. An empty control batch goes.
// - A batch whose records are all removed is dropped, except: (a) the batch holding an active producer's
//   last data offset (or, when the producer's last entry is a marker, its marker with the same epoch) is
//   kept as an empty batch header so the producer's last sequence/epoch survive; (b) the batch that ends
//   at the round's upper bound (nextOffset == upperBoundOffsetOfCleaningRound) is kept empty so the last
//   offset is not lost. An empty batch keeps base offset, last offset delta, producer id/epoch, base
//   sequence, partition leader epoch, max timestamp and the transactional/control bits, uncompressed.
// - A batch whose records are all kept (and needs no horizon stamp) is copied byte for byte. Otherwise it
//   is rebuilt with its codec, base offset, original last offset delta (so the last sequence stays
//   right), producer id/epoch, base sequence, partition leader epoch, timestamp type and flags; records
//   keep their offsets, timestamps and headers.
// Simplified: legacy magic 0/1 entries are indexed into the offset map but copied through unchanged (the
// broker writes only magic 2); the legacy delete horizon (segment last-modified based) is not used.
//
// Memory: cleanBatches holds the decoded records of one batch at a time plus the output of its input, so
// the caller bounds memory by feeding chunks (log.cleaner.io.buffer.size): it consumes whole batches and
// returns bytesRead; bytesRead 0 on a non-empty chunk means the next batch is larger than the chunk
// (batchSizeAt(chunk) gives its size: read that much, up to max.message.bytes). The offset map is a fixed
// block (see offset-map.ts).

import {
  batchAttributes,
  buildRecordBatch,
  CompressionType,
  ControlRecordType,
  type DecodedRecord,
  decodeBatchRecords,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  lastOffsetOf,
  MAX_TIMESTAMP_OFFSET,
  NO_TIMESTAMP,
  RECORD_BATCH_OVERHEAD,
  type RecordBatchHeader,
  RecordBatchIterator,
  readControlRecordKey,
  TimestampType,
  writeRecordBatchCrc,
  writeRecordBatchHeader,
} from "../../protocol/records/index.js";
import type { OffsetMapView, SkimpyOffsetMap } from "./offset-map.js";

/** An aborted transaction as the .txnindex holds it (Kafka's AbortedTxn). */
export interface AbortedTransaction {
  producerId: bigint;
  firstOffset: bigint;
  lastOffset: bigint;
  lastStableOffset?: bigint;
}

/** What the producer state manager knows of an active producer's last entry (Kafka's LastRecord). */
export interface LastRecordOfProducer {
  /** Offset of the producer's last data record, or null when its last entry is a transaction marker. */
  lastDataOffset: bigint | null;
  producerEpoch: number;
}

/**
 * Transaction bookkeeping of one clean round (Kafka's CleanedTransactionMetadata): which aborted
 * transactions are open as the cleaner walks the log, which committed ones had batches, and which aborted
 * transactions keep their marker (to be written to the cleaned segment's .txnindex).
 */
export class CleanedTransactionState {
  private pending: AbortedTransaction[] = [];
  private readonly added = new Set<string>();
  private readonly ongoingCommitted = new Set<bigint>();
  private readonly ongoingAborted = new Map<
    bigint,
    { txn: AbortedTransaction; lastObservedBatchOffset: bigint | null }
  >();
  private retained: AbortedTransaction[] = [];

  /** Adds aborted transactions (e.g. those of the next segment); one already added is ignored. */
  addAbortedTransactions(txns: Iterable<AbortedTransaction>): void {
    let added = false;
    for (const t of txns) {
      const id = `${t.producerId}:${t.firstOffset}`;
      if (this.added.has(id)) continue;
      this.added.add(id);
      this.pending.push(t);
      added = true;
    }
    if (added)
      this.pending.sort((a, b) =>
        a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0,
      );
  }

  private consumeAbortedTxnsUpTo(offset: bigint): void {
    let i = 0;
    while (i < this.pending.length && this.pending[i].firstOffset <= offset) {
      const txn = this.pending[i++];
      if (!this.ongoingAborted.has(txn.producerId)) {
        this.ongoingAborted.set(txn.producerId, { txn, lastObservedBatchOffset: null });
      }
    }
    if (i > 0) this.pending = this.pending.slice(i);
  }

  /**
   * A control batch was read; `firstRecordKey` is its first record's key, or undefined when the batch has
   * no records. True when the marker may be discarded (its transaction left no batch in this round).
   */
  onControlBatchRead(header: RecordBatchHeader, firstRecordKey: Buffer | null | undefined): boolean {
    this.consumeAbortedTxnsUpTo(lastOffsetOf(header));
    if (firstRecordKey === undefined) return true; // an empty control batch was already cleaned
    const type = readControlRecordKey(firstRecordKey).type;
    const producerId = header.producerId;
    if (type === ControlRecordType.Abort) {
      const meta = this.ongoingAborted.get(producerId);
      this.ongoingAborted.delete(producerId);
      if (meta !== undefined && meta.lastObservedBatchOffset !== null) {
        this.retained.push(meta.txn);
        return false;
      }
      return true;
    }
    if (type === ControlRecordType.Commit) {
      return !this.ongoingCommitted.delete(producerId);
    }
    return false;
  }

  /** A data batch was read. True when it belongs to an aborted transaction (discard it). */
  onBatchRead(header: RecordBatchHeader): boolean {
    this.consumeAbortedTxnsUpTo(lastOffsetOf(header));
    if (!header.isTransactional) return false;
    const meta = this.ongoingAborted.get(header.producerId);
    if (meta !== undefined) {
      meta.lastObservedBatchOffset = lastOffsetOf(header);
      return true;
    }
    this.ongoingCommitted.add(header.producerId);
    return false;
  }

  /** Aborted transactions whose ABORT marker was kept since the last call: the cleaned .txnindex entries. */
  takeRetainedAbortedTransactions(): AbortedTransaction[] {
    const r = this.retained;
    this.retained = [];
    return r;
  }
}

export interface OffsetMapBuildStats {
  batchesRead: number;
  messagesRead: number;
  bytesRead: number;
}

export interface OffsetMapBuilderOptions {
  /** First dirty offset: records below it are not mapped. */
  startOffset: bigint;
  /** Aborted transactions of the dirty range [startOffset, firstUncleanableOffset). */
  abortedTransactions?: Iterable<AbortedTransaction>;
  /** log.cleaner.io.buffer.load.factor (default 0.9): stop mapping when the map holds slots * this. */
  loadFactor?: number;
  maxDecompressedBytes?: number;
}

/**
 * Builds the offset map over the dirty section, batch by batch (Kafka's Cleaner.buildOffsetMap). Feed it
 * each dirty segment's bytes (whole or in chunks) with addBatches, then endSegment; stop when `full`.
 * The caller clears the map first (a new builder does not).
 */
export class OffsetMapBuilder {
  /** True once the map reached its load factor; the last batches fed were not (all) mapped. */
  full = false;
  readonly stats: OffsetMapBuildStats = { batchesRead: 0, messagesRead: 0, bytesRead: 0 };
  private readonly transactions = new CleanedTransactionState();
  private readonly startOffset: bigint;
  private readonly maxDesiredMapSize: number;
  private readonly maxDecompressedBytes: number | undefined;

  constructor(
    readonly map: SkimpyOffsetMap,
    options: OffsetMapBuilderOptions,
  ) {
    this.startOffset = options.startOffset;
    const loadFactor = options.loadFactor ?? 0.9;
    // Never the last free slot: the open-addressing table needs one to end a probe.
    this.maxDesiredMapSize = Math.min(Math.floor(map.slots * loadFactor), map.slots - 1);
    if (this.maxDesiredMapSize < 1) {
      throw new RangeError(
        "offset map is too small to fit in even a single message, so log cleaning will never make progress. " +
          "You can increase log.cleaner.dedupe.buffer.size or decrease log.cleaner.threads",
      );
    }
    this.maxDecompressedBytes = options.maxDecompressedBytes;
    if (options.abortedTransactions) this.transactions.addAbortedTransactions(options.abortedTransactions);
  }

  /** Adds aborted transactions found later (e.g. per segment). */
  addAbortedTransactions(txns: Iterable<AbortedTransaction>): void {
    this.transactions.addAbortedTransactions(txns);
  }

  /**
   * Maps the complete batches of `chunk` (a trailing partial batch is left alone). Returns the bytes of
   * the batches consumed; when the map fills up mid-way, `full` is set and the rest is not consumed.
   */
  addBatches(chunk: Buffer): number {
    if (this.full) return 0;
    const it = new RecordBatchIterator(chunk, { allowLegacy: true, allowIncompleteTail: true });
    const map = this.map;
    const start = this.startOffset;
    let consumed = 0;
    for (const entry of it) {
      const batchBytes = chunk.subarray(entry.position, entry.position + entry.size);
      const h = entry.header;
      if (h === null) {
        // Legacy magic 0/1 entry: map its keyed records; its offsets come from the records.
        const records = decodeBatchRecords(batchBytes, this.maxDecompressedBytes);
        let last = -1n;
        for (const r of records) {
          if (r.key !== null && r.offset >= start) {
            if (map.size >= this.maxDesiredMapSize) return this.stop(consumed);
            map.put(r.key, r.offset);
          }
          this.stats.messagesRead++;
          if (r.offset > last) last = r.offset;
        }
        if (last >= start) map.updateLatestOffset(last);
      } else if (h.isControl) {
        const records = decodeBatchRecords(batchBytes, this.maxDecompressedBytes);
        this.transactions.onControlBatchRead(h, records.length > 0 ? records[0].key : undefined);
        this.stats.messagesRead++;
      } else if (this.transactions.onBatchRead(h)) {
        // Aborted: not mapped.
        this.stats.messagesRead += h.recordsCount;
      } else if (lastOffsetOf(h) >= start) {
        for (const r of decodeBatchRecords(batchBytes, this.maxDecompressedBytes)) {
          if (r.key !== null && r.offset >= start) {
            if (map.size >= this.maxDesiredMapSize) return this.stop(consumed);
            map.put(r.key, r.offset);
          }
          this.stats.messagesRead++;
        }
      } else {
        this.stats.messagesRead += h.recordsCount;
      }
      if (h !== null && lastOffsetOf(h) >= start) map.updateLatestOffset(lastOffsetOf(h));
      consumed = entry.position + entry.size;
      this.stats.batchesRead++;
      this.stats.bytesRead += entry.size;
    }
    return consumed;
  }

  private stop(consumed: number): number {
    this.full = true;
    return consumed;
  }

  /** Marks the end of a dirty segment: the map covers up to nextSegmentBaseOffset - 1 (offset gaps). */
  endSegment(nextSegmentBaseOffset: bigint): void {
    if (!this.full) this.map.updateLatestOffset(nextSegmentBaseOffset - 1n);
  }

  /** The end (exclusive) of what the map covers: the new cleaner checkpoint after this round. */
  get endOffset(): bigint {
    return this.map.latestOffset + 1n;
  }
}

/** A dirty segment's bytes and the base offset of the segment after it (or the uncleanable offset). */
export interface DirtySegmentBytes {
  records: Buffer;
  nextSegmentBaseOffset: bigint;
}

export interface BuildOffsetMapResult {
  full: boolean;
  /** map.latestOffset + 1: clean up to here, and checkpoint it. */
  endOffset: bigint;
  stats: OffsetMapBuildStats;
}

/** Clears `map` and maps the dirty segments, oldest first, until the map is full. */
export function buildOffsetMap(
  map: SkimpyOffsetMap,
  dirtySegments: Iterable<DirtySegmentBytes>,
  options: OffsetMapBuilderOptions,
): BuildOffsetMapResult {
  map.clear();
  const builder = new OffsetMapBuilder(map, options);
  for (const seg of dirtySegments) {
    builder.addBatches(seg.records);
    if (builder.full) break;
    builder.endSegment(seg.nextSegmentBaseOffset);
  }
  return { full: builder.full, endOffset: builder.endOffset, stats: builder.stats };
}

/** What cleanBatches needs besides the bytes. */
export interface CleanContext {
  map: OffsetMapView;
  /** The time of the clean (Kafka's currentTime), from the injected Time. */
  nowMs: number;
  /** delete.retention.ms */
  deleteRetentionMs: number;
  /** Shared by every segment of one clean round; add each segment's aborted transactions before it. */
  transactions: CleanedTransactionState;
  /** Active producers' last entries (producer id -> last record), from the producer state manager. */
  activeProducers?: ReadonlyMap<bigint, LastRecordOfProducer>;
  /** The round's first uncleanable offset: the batch ending there is kept even if emptied. */
  upperBoundOffsetOfCleaningRound?: bigint;
  maxDecompressedBytes?: number;
}

export interface CleanStats {
  batchesRead: number;
  messagesRead: number;
  bytesRead: number;
  batchesRetained: number;
  messagesRetained: number;
  bytesRetained: number;
  /** Records without a key (dropped). */
  invalidMessages: number;
  /** Tombstones dropped because their delete horizon passed. */
  tombstonesRemoved: number;
  /** Data batches of aborted transactions dropped. */
  abortedBatchesRemoved: number;
  /** Transaction marker batches dropped. */
  markersRemoved: number;
  /** Batches copied byte for byte. */
  batchesCopied: number;
  /** Batches kept as an empty header. */
  emptyBatchesRetained: number;
}

export function emptyCleanStats(): CleanStats {
  return {
    batchesRead: 0,
    messagesRead: 0,
    bytesRead: 0,
    batchesRetained: 0,
    messagesRetained: 0,
    bytesRetained: 0,
    invalidMessages: 0,
    tombstonesRemoved: 0,
    abortedBatchesRemoved: 0,
    markersRemoved: 0,
    batchesCopied: 0,
    emptyBatchesRetained: 0,
  };
}

export interface CleanResult {
  /** The retained batches, concatenated: append to the cleaned segment. */
  output: Buffer;
  /** Bytes of `input` consumed (whole batches); a partial trailing batch is left for the next chunk. */
  bytesRead: number;
  /** Largest offset retained (-1n if none): the cleaned segment append's largestOffset. */
  maxOffset: bigint;
  /** Largest timestamp retained (-1n if none) and the last offset of its batch (for the time index). */
  maxTimestamp: bigint;
  shallowOffsetOfMaxTimestamp: bigint;
  stats: CleanStats;
}

/**
 * Kafka's BatchRetention: "delete" drops the batch without looking at its records, "retain-empty" keeps
 * its header even if no record is kept, "delete-empty" drops it if no record is kept.
 */
type BatchRetention = "delete" | "retain-empty" | "delete-empty";

/** The delete horizon of a batch, or undefined (Kafka's RecordBatch.deleteHorizonMs). */
export function deleteHorizonOf(h: RecordBatchHeader): bigint | undefined {
  return h.hasDeleteHorizonMs ? h.baseTimestamp : undefined;
}

/** The header-only batch Kafka writes to keep a producer's last sequence (DefaultRecordBatch.writeEmptyHeader). */
function emptyBatchOf(h: RecordBatchHeader): Buffer {
  const b = Buffer.alloc(RECORD_BATCH_OVERHEAD);
  writeRecordBatchHeader(b, 0, {
    baseOffset: h.baseOffset,
    batchLength: RECORD_BATCH_OVERHEAD - LOG_OVERHEAD,
    partitionLeaderEpoch: h.partitionLeaderEpoch,
    attributes: batchAttributes({
      compression: CompressionType.None,
      timestampType: h.timestampType,
      isTransactional: h.isTransactional,
      isControl: h.isControl,
    }),
    lastOffsetDelta: h.lastOffsetDelta,
    baseTimestamp: NO_TIMESTAMP,
    maxTimestamp: h.maxTimestamp,
    producerId: h.producerId,
    producerEpoch: h.producerEpoch,
    baseSequence: h.baseSequence,
    recordsCount: 0,
  });
  return b;
}

/** Rebuilds a batch with some of its records (Kafka's MemoryRecords.buildRetainedRecordsInto). */
function rebuildBatch(
  h: RecordBatchHeader,
  records: readonly DecodedRecord[],
  deleteHorizonMs: bigint | undefined,
): Buffer {
  const logAppendTime = h.timestampType === TimestampType.LogAppendTime;
  const out = buildRecordBatch({
    records: records.map((r) => ({
      key: r.key,
      value: r.value,
      headers: r.headers,
      timestamp: r.timestamp,
      offsetDelta: Number(r.offset - h.baseOffset),
    })),
    compression: h.compression,
    baseOffset: h.baseOffset,
    partitionLeaderEpoch: h.partitionLeaderEpoch,
    producerId: h.producerId,
    producerEpoch: h.producerEpoch,
    baseSequence: h.baseSequence,
    isTransactional: h.isTransactional,
    isControl: h.isControl,
    timestampType: logAppendTime ? TimestampType.LogAppendTime : TimestampType.CreateTime,
    timestamp: logAppendTime ? h.maxTimestamp : undefined,
    deleteHorizonMs,
  });
  // Keep the original last offset, so the producer's last sequence (baseSequence + lastOffsetDelta) stays.
  if (out.readInt32BE(LAST_OFFSET_DELTA_OFFSET) !== h.lastOffsetDelta) {
    out.writeInt32BE(h.lastOffsetDelta, LAST_OFFSET_DELTA_OFFSET);
    writeRecordBatchCrc(out, 0);
  }
  return out;
}

/**
 * Cleans the batches of one segment (or a chunk of whole batches of it) with the offset map: Kafka's
 * Cleaner.cleanInto + MemoryRecords.filterTo. Returns the retained batches and what was consumed. Throws
 * CorruptRecordError on a bad batch (CRC, size, records), as Kafka's cleaner fails the partition.
 */
export function cleanBatches(input: Buffer, ctx: CleanContext): CleanResult {
  const stats = emptyCleanStats();
  const out: Buffer[] = [];
  let maxOffset = -1n;
  let maxTimestamp = -1n;
  let shallowOffsetOfMaxTimestamp = -1n;
  const now = BigInt(ctx.nowMs);
  const map = ctx.map;
  const latestOffset = map.latestOffset;

  const retainedBatch = (
    bytes: Buffer,
    batchMaxTimestamp: bigint,
    lastOffset: bigint,
    records: number,
    batchMaxOffset: bigint,
  ): void => {
    out.push(bytes);
    stats.batchesRetained++;
    stats.messagesRetained += records;
    stats.bytesRetained += bytes.length;
    if (batchMaxOffset > maxOffset) maxOffset = batchMaxOffset;
    if (batchMaxTimestamp > maxTimestamp) {
      maxTimestamp = batchMaxTimestamp;
      shallowOffsetOfMaxTimestamp = lastOffset;
    }
  };

  const it = new RecordBatchIterator(input, { allowLegacy: true, allowIncompleteTail: true });
  let consumed = 0;
  for (const entry of it) {
    const batchBytes = input.subarray(entry.position, entry.position + entry.size);
    consumed = entry.position + entry.size;
    stats.batchesRead++;
    stats.bytesRead += entry.size;
    const h = entry.header;
    if (h === null) {
      // Legacy magic 0/1 entry: copied through (see the header comment).
      const records = decodeBatchRecords(batchBytes, ctx.maxDecompressedBytes);
      stats.messagesRead += records.length;
      let last = -1n;
      let ts = -1n;
      for (const r of records) {
        if (r.offset > last) last = r.offset;
        if (r.timestamp > ts) ts = r.timestamp;
      }
      stats.batchesCopied++;
      retainedBatch(batchBytes, ts, last, records.length, last);
      continue;
    }

    const lastOffset = lastOffsetOf(h);
    const horizon = deleteHorizonOf(h);
    // Control batches are decoded first: their first record says what kind of marker they are.
    let decoded: DecodedRecord[] | null = null;
    let canDiscardBatch: boolean;
    if (h.isControl) {
      decoded = decodeBatchRecords(batchBytes, ctx.maxDecompressedBytes);
      canDiscardBatch = ctx.transactions.onControlBatchRead(
        h,
        decoded.length > 0 ? decoded[0].key : undefined,
      );
    } else {
      canDiscardBatch = ctx.transactions.onBatchRead(h);
    }
    // Markers are removed like tombstones: only once their delete horizon has passed.
    const discardBatchRecords = h.isControl
      ? canDiscardBatch && horizon !== undefined && horizon <= now
      : canDiscardBatch;

    let isLastBatchOfProducer = false;
    if (h.producerId >= 0n && ctx.activeProducers !== undefined) {
      const last = ctx.activeProducers.get(h.producerId);
      if (last !== undefined) {
        isLastBatchOfProducer =
          last.lastDataOffset !== null
            ? lastOffset === last.lastDataOffset
            : h.isControl && h.producerEpoch === last.producerEpoch;
      }
    }
    let retention: BatchRetention;
    if (isLastBatchOfProducer) retention = "retain-empty";
    else if (
      ctx.upperBoundOffsetOfCleaningRound !== undefined &&
      lastOffset + 1n === ctx.upperBoundOffsetOfCleaningRound
    )
      retention = "retain-empty";
    else if (discardBatchRecords) retention = "delete";
    else retention = "delete-empty";
    const containsMarkerForEmptyTxn = canDiscardBatch && h.isControl;

    if (retention === "delete") {
      if (h.isControl) stats.markersRemoved++;
      else stats.abortedBatchesRemoved++;
      continue;
    }

    const records = decoded ?? decodeBatchRecords(batchBytes, ctx.maxDecompressedBytes);
    stats.messagesRead += records.length;
    const kept: DecodedRecord[] = [];
    let containsTombstones = false;
    let batchMaxOffset = -1n;
    for (const r of records) {
      let keep: boolean;
      if (discardBatchRecords) {
        keep = false;
      } else if (h.isControl) {
        keep = true;
      } else if (r.offset > latestOffset) {
        keep = true;
      } else if (r.key === null) {
        stats.invalidMessages++;
        keep = false;
      } else {
        const latestForKey = r.offset >= map.get(r.key);
        const retainDeletes = horizon === undefined || now < horizon;
        keep = latestForKey && (r.value !== null || retainDeletes);
        if (latestForKey && !keep) stats.tombstonesRemoved++;
      }
      if (keep) {
        kept.push(r);
        if (r.value === null) containsTombstones = true;
        if (r.offset > batchMaxOffset) batchMaxOffset = r.offset;
      }
    }

    if (kept.length > 0) {
      const needToSetDeleteHorizon =
        (containsTombstones || containsMarkerForEmptyTxn) && horizon === undefined;
      if (kept.length === records.length && !needToSetDeleteHorizon) {
        stats.batchesCopied++;
        retainedBatch(batchBytes, h.maxTimestamp, lastOffset, kept.length, lastOffset);
      } else {
        const newHorizon = needToSetDeleteHorizon ? now + BigInt(ctx.deleteRetentionMs) : horizon;
        const rebuilt = rebuildBatch(h, kept, newHorizon);
        retainedBatch(
          rebuilt,
          rebuilt.readBigInt64BE(MAX_TIMESTAMP_OFFSET),
          lastOffset,
          kept.length,
          batchMaxOffset,
        );
      }
    } else if (retention === "retain-empty") {
      stats.emptyBatchesRetained++;
      retainedBatch(emptyBatchOf(h), h.maxTimestamp, lastOffset, 0, lastOffset);
    } else if (h.isControl) {
      stats.markersRemoved++;
    }
  }

  return {
    output: out.length === 1 ? Buffer.from(out[0]) : Buffer.concat(out),
    bytesRead: consumed,
    maxOffset,
    maxTimestamp,
    shallowOffsetOfMaxTimestamp,
    stats,
  };
}

function minOffset(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

function maxOffset(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

function addStats(into: CleanStats, s: CleanStats): void {
  for (const k of Object.keys(into) as (keyof CleanStats)[]) into[k] += s[k];
}

/** A segment held in memory, for cleanLog. */
export interface InMemorySegment {
  baseOffset: bigint;
  /** The .log bytes. */
  records: Buffer;
  lastModifiedMs: number;
}

export interface CleanLogOptions {
  map: SkimpyOffsetMap;
  /** The cleaner checkpoint (or log start offset): where the dirty section starts. */
  firstDirtyOffset: bigint;
  /** From cleanableOffsets: active segment base, last stable offset, min.compaction.lag.ms. */
  firstUncleanableOffset: bigint;
  nowMs: number;
  deleteRetentionMs: number;
  /** Every aborted transaction of the log (the segments' .txnindex entries). */
  abortedTransactions?: readonly AbortedTransaction[];
  activeProducers?: ReadonlyMap<bigint, LastRecordOfProducer>;
  loadFactor?: number;
  maxDecompressedBytes?: number;
}

export interface CleanedSegment extends InMemorySegment {
  /** True when this segment went through the cleaner (else it is the input segment, untouched). */
  cleaned: boolean;
  /** Aborted transactions whose markers remain in this segment: its new .txnindex. */
  abortedTransactions: AbortedTransaction[];
}

export interface CleanLogResult {
  segments: CleanedSegment[];
  /** The new cleaner checkpoint (first offset not cleaned). */
  endOffset: bigint;
  mapFull: boolean;
  stats: CleanStats;
}

/**
 * One clean round over in-memory segments (Kafka's Cleaner.doClean without segment grouping): maps the
 * dirty section, then cleans every segment below the map's end, each into one cleaned segment that keeps
 * its base offset and last-modified time. Segments from the map's end on are returned unchanged.
 */
export function cleanLog(segments: readonly InMemorySegment[], options: CleanLogOptions): CleanLogResult {
  const txns = options.abortedTransactions ?? [];
  const nextBase = (i: number, fallback: bigint): bigint =>
    i + 1 < segments.length ? segments[i + 1].baseOffset : fallback;
  const inRange = (t: AbortedTransaction, from: bigint, to: bigint): boolean =>
    t.lastOffset >= from && t.firstOffset < to;

  // 1. The offset map over [firstDirtyOffset, firstUncleanableOffset).
  const from = options.firstDirtyOffset;
  const to = options.firstUncleanableOffset;
  const dirty: DirtySegmentBytes[] = [];
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i];
    const next = nextBase(i, to);
    if (s.baseOffset >= to) break;
    if (next <= from) continue;
    dirty.push({ records: s.records, nextSegmentBaseOffset: minOffset(next, to) });
  }
  const built = buildOffsetMap(options.map, dirty, {
    startOffset: from,
    abortedTransactions: txns.filter((t) => inRange(t, from, to)),
    loadFactor: options.loadFactor,
    maxDecompressedBytes: options.maxDecompressedBytes,
  });
  // With nothing dirty the map is empty: keep the checkpoint where it was rather than at 0.
  const endOffset = maxOffset(built.endOffset, from);

  // 2. Clean every segment that starts below endOffset.
  const state = new CleanedTransactionState();
  const stats = emptyCleanStats();
  const result: CleanedSegment[] = [];
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i];
    if (s.baseOffset >= endOffset || built.endOffset <= from) {
      result.push({ ...s, cleaned: false, abortedTransactions: [] });
      continue;
    }
    const upper = nextBase(i, BigInt(Number.MAX_SAFE_INTEGER));
    state.addAbortedTransactions(txns.filter((t) => inRange(t, s.baseOffset, upper)));
    const r = cleanBatches(s.records, {
      map: options.map,
      nowMs: options.nowMs,
      deleteRetentionMs: options.deleteRetentionMs,
      transactions: state,
      activeProducers: options.activeProducers,
      upperBoundOffsetOfCleaningRound: to,
      maxDecompressedBytes: options.maxDecompressedBytes,
    });
    addStats(stats, r.stats);
    result.push({
      baseOffset: s.baseOffset,
      records: r.output,
      lastModifiedMs: s.lastModifiedMs,
      cleaned: true,
      abortedTransactions: state.takeRetainedAbortedTransactions(),
    });
  }
  return { segments: result, endOffset, mapFull: built.full, stats };
}

/** A segment summary with its index sizes, for grouping. */
export interface GroupableSegment {
  baseOffset: bigint;
  sizeInBytes: number;
  /** .index and .timeindex bytes (trimmed sizes for inactive segments); 0 when unknown. */
  offsetIndexSizeInBytes?: number;
  timeIndexSizeInBytes?: number;
}

const INT32_MAX = 0x7fffffffn;

/**
 * Groups consecutive segments to clean into one cleaned segment each (Kafka's Cleaner.groupSegmentsBySize):
 * a group's log bytes stay <= maxSize (segment.bytes), its index and time index bytes <= maxIndexSize
 * (segment.index.bytes), and its offsets within int32 of its first base offset (relative offsets of the
 * index). A segment's last offset is estimated as the next segment's base - 1, or
 * firstUncleanableOffset - 1 for the last one; an empty segment skips that check.
 */
export function groupSegmentsBySize<S extends GroupableSegment>(
  segments: readonly S[],
  maxSize: number,
  maxIndexSize: number,
  firstUncleanableOffset: bigint,
): S[][] {
  const groups: S[][] = [];
  let i = 0;
  while (i < segments.length) {
    const first = segments[i];
    const group: S[] = [first];
    let logSize = first.sizeInBytes;
    let indexSize = first.offsetIndexSizeInBytes ?? 0;
    let timeIndexSize = first.timeIndexSizeInBytes ?? 0;
    i++;
    while (i < segments.length) {
      const s = segments[i];
      const lastOffsetOfS =
        i + 1 < segments.length ? segments[i + 1].baseOffset - 1n : firstUncleanableOffset - 1n;
      const fits =
        logSize + s.sizeInBytes <= maxSize &&
        indexSize + (s.offsetIndexSizeInBytes ?? 0) <= maxIndexSize &&
        timeIndexSize + (s.timeIndexSizeInBytes ?? 0) <= maxIndexSize &&
        (s.sizeInBytes === 0 || lastOffsetOfS - first.baseOffset <= INT32_MAX);
      if (!fits) break;
      group.push(s);
      logSize += s.sizeInBytes;
      indexSize += s.offsetIndexSizeInBytes ?? 0;
      timeIndexSize += s.timeIndexSizeInBytes ?? 0;
      i++;
    }
    groups.push(group);
  }
  return groups;
}
