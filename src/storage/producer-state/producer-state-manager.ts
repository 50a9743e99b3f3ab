// ProducerStateManager: the idempotent/transactional producer state of one partition (Kafka's
// ProducerStateManager). It owns:
// - the map producerId → ProducerStateEntry, as of `mapEndOffset` (the log end offset it reflects);
// - the ongoing transactions (first offset → producer), for the last stable offset once transactions exist;
// - the `.snapshot` files in the partition dir: one per offset, written at segment roll and clean shutdown
//   (takeSnapshot), read at load (the latest readable one; a corrupt one is deleted and the next older one
//   tried, then the log is replayed from the snapshot's offset), deleted with their segments, after
//   truncation (those past the new end) and below the log start offset;
// - expiry: producers without an ongoing transaction whose last write is producer.id.expiration.ms old are
//   dropped (removeExpiredProducers, run by the log every producer.id.expiration.check.interval.ms).
// The map is only changed through update(ProducerAppendInfo) after the append reached the log.

import { readdirSync, rmSync } from "node:fs";
import { Logger } from "../../common/logger.js";
import {
  offsetFromFileName,
  PRODUCER_SNAPSHOT_FILE_SUFFIX,
  producerSnapshotFile,
} from "../log-file-names.js";
import {
  type AppendOrigin,
  type CompletedTxn,
  ProducerAppendInfo,
  type TxnMetadata,
} from "./producer-append-info.js";
import {
  CorruptSnapshotError,
  readProducerSnapshotFile,
  writeProducerSnapshotFile,
} from "./producer-snapshot-file.js";
import { ProducerStateEntry } from "./producer-state-entry.js";

export interface ProducerStateManagerConfig {
  /** producer.id.expiration.ms (Kafka default 86400000: one day). */
  producerIdExpirationMs: number;
}

export const DEFAULT_PRODUCER_ID_EXPIRATION_MS = 86_400_000;
/** producer.id.expiration.check.interval.ms (Kafka's internal default, 10 minutes). */
export const DEFAULT_PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS = 600_000;

export class ProducerStateManager {
  private readonly producers = new Map<bigint, ProducerStateEntry>();
  /** Ongoing transactions by first offset. */
  private readonly ongoingTxns = new Map<bigint, TxnMetadata>();
  /** Snapshot offsets on disk, ascending. */
  private snapshotOffsets: bigint[];
  private lastMapOffset = 0n;
  private lastSnapOffset = 0n;
  private readonly logger: Logger;

  constructor(
    readonly topicPartition: string,
    readonly logDir: string,
    public config: ProducerStateManagerConfig = { producerIdExpirationMs: DEFAULT_PRODUCER_ID_EXPIRATION_MS },
    logger?: Logger,
  ) {
    this.logger =
      logger ??
      new Logger("kafka.log.ProducerStateManager", `ProducerStateManager partition=${topicPartition}`);
    this.snapshotOffsets = ProducerStateManager.listSnapshotOffsets(logDir);
  }

  private static listSnapshotOffsets(dir: string): bigint[] {
    const out: bigint[] = [];
    for (const name of readdirSync(dir)) {
      if (
        !name.endsWith(PRODUCER_SNAPSHOT_FILE_SUFFIX) ||
        name.length !== 20 + PRODUCER_SNAPSHOT_FILE_SUFFIX.length
      )
        continue;
      const off = offsetFromFileName(name);
      if (off !== undefined) out.push(off);
    }
    return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /** The log end offset the producer map reflects. */
  get mapEndOffset(): bigint {
    return this.lastMapOffset;
  }

  get producerCount(): number {
    return this.producers.size;
  }

  /** The producers, by id (read-only view for DescribeProducers and tests). */
  activeProducers(): ReadonlyMap<bigint, ProducerStateEntry> {
    return this.producers;
  }

  /**
   * Each producer's last data offset (null when none is cached) and epoch: what the log cleaner must keep
   * (Kafka's UnifiedLog.lastRecordsOfActiveProducers; shape of the cleaner's LastRecordOfProducer).
   */
  lastRecordsOfActiveProducers(): Map<bigint, { lastDataOffset: bigint | null; producerEpoch: number }> {
    const out = new Map<bigint, { lastDataOffset: bigint | null; producerEpoch: number }>();
    for (const [pid, e] of this.producers) {
      const last = e.lastDataOffset();
      out.set(pid, { lastDataOffset: last >= 0n ? last : null, producerEpoch: e.producerEpoch });
    }
    return out;
  }

  lastEntry(producerId: bigint): ProducerStateEntry | undefined {
    return this.producers.get(producerId);
  }

  prepareUpdate(producerId: bigint, origin: AppendOrigin): ProducerAppendInfo {
    const current = this.producers.get(producerId) ?? ProducerStateEntry.empty(producerId);
    return new ProducerAppendInfo(this.topicPartition, producerId, current, origin, (m) =>
      this.logger.warn(m),
    );
  }

  /** Applies a validated append to the map. */
  update(appendInfo: ProducerAppendInfo): void {
    const pid = appendInfo.producerId;
    if (pid < 0n)
      throw new RangeError(`invalid producer id ${pid} passed to update for ${this.topicPartition}`);
    const updated = appendInfo.updatedEntry;
    const current = this.producers.get(pid);
    if (current === undefined) this.producers.set(pid, updated);
    else current.update(updated);
    for (const txn of appendInfo.transactions) this.ongoingTxns.set(txn.firstOffset, txn);
  }

  /**
   * The last stable offset once `completed` ends (Kafka's lastStableOffset(CompletedTxn)): the first
   * offset of the oldest other ongoing transaction, else just past the marker. Recorded in the .txnindex.
   */
  lastStableOffset(completed: CompletedTxn): bigint {
    let min: bigint | undefined;
    for (const [off, txn] of this.ongoingTxns)
      if (txn.producerId !== completed.producerId && (min === undefined || off < min)) min = off;
    return min ?? completed.lastOffset + 1n;
  }

  /** A transaction ended by a marker leaves the ongoing set. */
  completeTxn(completed: CompletedTxn): void {
    this.ongoingTxns.delete(completed.firstOffset);
  }

  /** First offset of the oldest ongoing transaction. */
  firstUnstableOffset(): bigint | undefined {
    let min: bigint | undefined;
    for (const off of this.ongoingTxns.keys()) if (min === undefined || off < min) min = off;
    return min;
  }

  updateMapEndOffset(offset: bigint): void {
    this.lastMapOffset = offset;
  }

  latestSnapshotOffset(): bigint | undefined {
    return this.snapshotOffsets.length > 0
      ? this.snapshotOffsets[this.snapshotOffsets.length - 1]
      : undefined;
  }

  oldestSnapshotOffset(): bigint | undefined {
    return this.snapshotOffsets.length > 0 ? this.snapshotOffsets[0] : undefined;
  }

  /** Snapshot offsets on disk, ascending (a copy). */
  snapshotFileOffsets(): bigint[] {
    return this.snapshotOffsets.slice();
  }

  /** Writes `<mapEndOffset>.snapshot` unless the map did not move since the last snapshot. */
  takeSnapshot(sync = true): string | undefined {
    if (this.lastMapOffset <= this.lastSnapOffset) return undefined;
    const file = producerSnapshotFile(this.logDir, this.lastMapOffset);
    const start = performance.now();
    writeProducerSnapshotFile(file, this.producers.values(), sync);
    this.logger.debug(
      `Wrote producer snapshot at offset ${this.lastMapOffset} with ${this.producers.size} producer ids in ${Math.round(performance.now() - start)} ms.`,
    );
    if (!this.snapshotOffsets.includes(this.lastMapOffset)) {
      this.snapshotOffsets.push(this.lastMapOffset);
      this.snapshotOffsets.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    }
    this.lastSnapOffset = this.lastMapOffset;
    return file;
  }

  removeAndDeleteSnapshot(offset: bigint): void {
    const i = this.snapshotOffsets.indexOf(offset);
    if (i >= 0) this.snapshotOffsets.splice(i, 1);
    rmSync(producerSnapshotFile(this.logDir, offset), { force: true });
  }

  /** Deletes every snapshot below `offset`. */
  deleteSnapshotsBefore(offset: bigint): void {
    for (const off of this.snapshotOffsets.filter((o) => o < offset)) this.removeAndDeleteSnapshot(off);
  }

  private isProducerExpired(nowMs: number, entry: ProducerStateEntry): boolean {
    return (
      entry.currentTxnFirstOffset < 0n &&
      BigInt(nowMs) - entry.lastTimestamp >= BigInt(this.config.producerIdExpirationMs)
    );
  }

  /** Drops producers idle for producer.id.expiration.ms (never one with an ongoing transaction). */
  removeExpiredProducers(nowMs: number): number {
    let n = 0;
    for (const [pid, entry] of this.producers) {
      if (this.isProducerExpired(nowMs, entry)) {
        this.producers.delete(pid);
        n++;
      }
    }
    return n;
  }

  /**
   * After truncation or at load (Kafka's truncateAndReload): snapshots past the log end or at/below the
   * log start are deleted; when the map does not already end at logEndOffset it is cleared and reloaded
   * from the latest readable snapshot (mapEndOffset then says where the log must be replayed from).
   */
  truncateAndReload(logStartOffset: bigint, logEndOffset: bigint, nowMs: number): void {
    for (const off of this.snapshotOffsets.slice()) {
      if (off > logEndOffset || off <= logStartOffset) this.removeAndDeleteSnapshot(off);
    }
    if (logEndOffset !== this.mapEndOffset) {
      this.producers.clear();
      this.ongoingTxns.clear();
      this.loadFromSnapshot(logStartOffset, nowMs);
    } else {
      this.onLogStartOffsetIncremented(logStartOffset);
    }
  }

  private loadFromSnapshot(logStartOffset: bigint, nowMs: number): void {
    for (;;) {
      const latest = this.latestSnapshotOffset();
      if (latest === undefined) {
        this.lastSnapOffset = logStartOffset;
        this.lastMapOffset = logStartOffset;
        return;
      }
      const file = producerSnapshotFile(this.logDir, latest);
      try {
        this.logger.debug(`Loading producer state from snapshot file '${file}'`);
        for (const entry of readProducerSnapshotFile(file)) {
          if (this.isProducerExpired(nowMs, entry)) continue;
          this.producers.set(entry.producerId, entry);
          if (entry.currentTxnFirstOffset >= 0n) {
            this.ongoingTxns.set(entry.currentTxnFirstOffset, {
              producerId: entry.producerId,
              firstOffset: entry.currentTxnFirstOffset,
            });
          }
        }
        this.lastSnapOffset = latest;
        this.lastMapOffset = latest;
        return;
      } catch (e) {
        if (!(e instanceof CorruptSnapshotError)) throw e;
        this.logger.warn(`Failed to load producer snapshot from '${file}': ${e.message}`);
        this.producers.clear();
        this.ongoingTxns.clear();
        this.removeAndDeleteSnapshot(latest);
      }
    }
  }

  /** The log start offset moved up (retention, DeleteRecords): older snapshots go. */
  onLogStartOffsetIncremented(logStartOffset: bigint): void {
    this.deleteSnapshotsBefore(logStartOffset);
    for (const [off] of this.ongoingTxns) if (off < logStartOffset) this.ongoingTxns.delete(off);
    if (this.lastMapOffset < logStartOffset) this.lastMapOffset = logStartOffset;
    this.lastSnapOffset = this.latestSnapshotOffset() ?? logStartOffset;
  }

  /** The log was emptied and restarts at `offset`: no producers, no snapshots. */
  truncateFullyAndStartAt(offset: bigint): void {
    this.producers.clear();
    this.ongoingTxns.clear();
    for (const off of this.snapshotOffsets.slice()) this.removeAndDeleteSnapshot(off);
    this.lastSnapOffset = 0n;
    this.lastMapOffset = offset;
  }

  /** Path of the snapshot at `offset` (whether or not it exists). */
  snapshotFile(offset: bigint): string {
    return producerSnapshotFile(this.logDir, offset);
  }
}
