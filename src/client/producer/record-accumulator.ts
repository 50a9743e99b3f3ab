// RecordAccumulator: the producer's queue of ProducerBatches per partition (Kafka's RecordAccumulator).
// send() appends to the partition's last open batch or starts a new one of batch.size bytes; a partition
// is ready to send when its first batch is full, has waited linger.ms, is being retried after
// retry.backoff.ms, or a flush/close is in progress. The bytes of unsent batches are bounded by
// buffer.memory: appends that need a new batch wait (FIFO, so record order is kept) until sent batches
// free memory, for at most max.block.ms.

import type { RecordHeader } from "../../protocol/records/record.js";
import { KafkaClientError } from "../errors.js";
import { BufferPool } from "./buffer-pool.js";
import { ProducerBatch, type SendCallback } from "./producer-batch.js";
import type { ProducerConfig } from "./producer-config.js";

/** Where to send: the leader of a partition, or undefined when unknown. */
export type LeaderLookup = (topic: string, partition: number) => number | undefined;

export interface ReadyCheckResult {
  /** Brokers with at least one sendable batch. */
  readyNodes: Set<number>;
  /** Topics with batches whose partition leader is unknown: refresh metadata. */
  unknownLeaderTopics: Set<string>;
  /** How long until something may become ready (ms); Infinity when nothing is queued. */
  nextReadyCheckDelayMs: number;
}

export interface AppendInput {
  topic: string;
  partition: number;
  /** CreateTime in ms. */
  timestamp: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: readonly RecordHeader[];
  callback: SendCallback;
  /** The partition was picked by the sticky partitioner (whose switch counts the appended bytes). */
  stickyPartition: boolean;
}

/** Runs once the record is in a batch, with its encoded size. */
export type OnAppended = (input: AppendInput, bytes: number) => void;

interface Waiter {
  input: AppendInput;
  deadlineMs: number;
  onAppended: OnAppended;
}

export class RecordAccumulator {
  private readonly batches = new Map<string, ProducerBatch[]>();
  /** Partitions with queued batches, by key, for ready()/drain(). */
  private readonly partitions = new Map<string, { topic: string; partition: number }>();
  private readonly incomplete = new Set<ProducerBatch>();
  private usedMemory = 0;
  /** Appends waiting for memory, FIFO from waitersHead (no Array.shift: the queue can be long). */
  private waiters: Waiter[] = [];
  private waitersHead = 0;
  private flushesInProgress = 0;
  private closing = false;
  /** Partitions with a batch in flight when max.in.flight.requests.per.connection is 1. */
  private readonly muted = new Set<string>();

  private readonly pool: BufferPool;
  /** The "topic-partition" keys, made once each: append() runs per record. */
  private readonly keys = new Map<string, string[]>();

  constructor(private readonly config: ProducerConfig) {
    this.pool = new BufferPool(
      config.batchSize,
      Math.max(1, Math.floor(config.bufferMemory / Math.max(1, config.batchSize))),
    );
  }

  /** True when a new batch would exceed buffer.memory or appends are already waiting. */
  get isMemoryFull(): boolean {
    return this.waitingCount > 0 || this.usedMemory + this.config.batchSize > this.config.bufferMemory;
  }

  get queuedBatches(): number {
    return this.incomplete.size;
  }

  /**
   * Whether a new record has to wait for memory behind earlier ones (then it goes to `enqueue`, not to
   * `append`). Throws once the producer is closing.
   */
  mustWait(): boolean {
    if (this.closing) throw new KafkaClientError(-1, "Cannot send after the producer is closed.");
    return this.waitingCount > 0;
  }

  /**
   * Queues an append that has to wait for memory: `onAppended` runs once memory allows it, and the
   * callback gets a TimeoutException-like error after max.block.ms.
   */
  enqueue(input: AppendInput, nowMs: number, onAppended: OnAppended): void {
    if (this.closing) throw new KafkaClientError(-1, "Cannot send after the producer is closed.");
    this.waiters.push({ input, deadlineMs: nowMs + this.config.maxBlockMs, onAppended });
  }

  /**
   * Appends a record to its partition's last batch or a new one: returns the encoded size (>0), or -1
   * when buffer.memory has no room for a new batch. The record's fields come one by one: this runs once
   * per record, and an object per record would be one more allocation for the young-generation GC.
   */
  append(
    topic: string,
    partition: number,
    timestamp: number,
    key: Buffer | null,
    value: Buffer | null,
    headers: readonly RecordHeader[],
    callback: SendCallback,
    nowMs: number,
  ): number {
    const dequeKey = this.keyOf(topic, partition);
    let deque = this.batches.get(dequeKey);
    if (deque === undefined) {
      deque = [];
      this.batches.set(dequeKey, deque);
      this.partitions.set(dequeKey, { topic, partition });
    }
    const last = deque.length > 0 ? deque[deque.length - 1] : undefined;
    if (last !== undefined) {
      const n = last.tryAppend(timestamp, key, value, headers, callback);
      if (n >= 0) return n;
      last.closed = true;
    }
    const estimate = recordSizeEstimate(key, value, headers);
    const size = Math.max(this.config.batchSize, estimate);
    if (this.usedMemory + size > this.config.bufferMemory && this.usedMemory > 0) return -1;
    const batch = new ProducerBatch(
      topic,
      partition,
      this.config.batchSize,
      nowMs,
      this.config.compressionType,
      this.config.compressionLevel,
      this.pool,
      estimate,
    );
    this.usedMemory += size;
    memoryOf.set(batch, size);
    deque.push(batch);
    this.incomplete.add(batch);
    return batch.tryAppend(timestamp, key, value, headers, callback);
  }

  private keyOf(topic: string, partition: number): string {
    let byPartition = this.keys.get(topic);
    if (byPartition === undefined) {
      byPartition = [];
      this.keys.set(topic, byPartition);
    }
    let key = byPartition[partition];
    if (key === undefined) {
      key = `${topic}-${partition}`;
      byPartition[partition] = key;
    }
    return key;
  }

  private get waitingCount(): number {
    return this.waiters.length - this.waitersHead;
  }

  /** Appends waiting records while memory allows; fails those past max.block.ms. */
  processWaiters(nowMs: number): void {
    while (this.waitersHead < this.waiters.length) {
      const w = this.waiters[this.waitersHead];
      if (nowMs >= w.deadlineMs) {
        this.waitersHead++;
        w.input.callback(
          KafkaClientError.of(
            "REQUEST_TIMED_OUT",
            `Failed to allocate memory within the configured max blocking time ${this.config.maxBlockMs} ms.`,
          ),
          null,
        );
        continue;
      }
      const { input } = w;
      const n = this.append(
        input.topic,
        input.partition,
        input.timestamp,
        input.key,
        input.value,
        input.headers,
        input.callback,
        nowMs,
      );
      if (n < 0) break;
      this.waitersHead++;
      w.onAppended(w.input, n);
    }
    if (this.waitersHead > 1024 && this.waitersHead * 2 > this.waiters.length) {
      this.waiters = this.waiters.slice(this.waitersHead);
      this.waitersHead = 0;
    } else if (this.waitersHead === this.waiters.length) {
      this.waiters = [];
      this.waitersHead = 0;
    }
  }

  /** Earliest max.block.ms deadline of a waiting append. */
  get nextWaiterDeadlineMs(): number {
    return this.waitingCount > 0 ? this.waiters[this.waitersHead].deadlineMs : Number.POSITIVE_INFINITY;
  }

  /** Which brokers have sendable batches (Kafka's RecordAccumulator.ready). */
  ready(nowMs: number, leaderOf: LeaderLookup): ReadyCheckResult {
    const readyNodes = new Set<number>();
    const unknownLeaderTopics = new Set<string>();
    let next = Number.POSITIVE_INFINITY;
    const flushing = this.flushesInProgress > 0 || this.closing || this.waitingCount > 0;
    for (const [key, deque] of this.batches) {
      const first = deque[0];
      if (first === undefined || first.inFlight) continue;
      const { topic, partition } = this.partitions.get(key)!;
      const leader = leaderOf(topic, partition);
      if (leader === undefined) {
        unknownLeaderTopics.add(topic);
        continue;
      }
      if (readyNodes.has(leader) || this.muted.has(key)) continue;
      const backingOff = first.attempts > 0 && nowMs < first.retryAtMs;
      const waitTime = first.attempts > 0 ? this.config.retryBackoffMs : this.config.lingerMs;
      const waited = nowMs - (first.attempts > 0 ? first.lastAttemptMs : first.createdMs);
      const full = deque.length > 1 || first.closed;
      const expired = waited >= waitTime;
      if (!backingOff && (full || expired || flushing)) {
        readyNodes.add(leader);
      } else {
        const delay = backingOff ? first.retryAtMs - nowMs : Math.max(0, waitTime - waited);
        if (delay < next) next = delay;
      }
    }
    return { readyNodes, unknownLeaderTopics, nextReadyCheckDelayMs: next };
  }

  /**
   * Takes the sendable batches led by `node`, at most one per partition, up to `maxSize` bytes in all
   * (Kafka's drain: a first batch always fits). With `mute` (max.in.flight = 1) the partitions are muted
   * until unmute().
   */
  drain(
    node: number,
    leaderOf: LeaderLookup,
    maxSize: number,
    nowMs: number,
    mute: boolean,
  ): ProducerBatch[] {
    const out: ProducerBatch[] = [];
    let size = 0;
    for (const [key, deque] of this.batches) {
      const first = deque[0];
      if (first === undefined || first.inFlight || this.muted.has(key)) continue;
      const { topic, partition } = this.partitions.get(key)!;
      if (leaderOf(topic, partition) !== node) continue;
      if (first.attempts > 0 && nowMs < first.retryAtMs) continue;
      const bytes = first.records().length;
      if (out.length > 0 && size + bytes > maxSize) break;
      size += bytes;
      deque.shift();
      first.inFlight = true;
      first.attempts++;
      first.lastAttemptMs = nowMs;
      if (mute) this.muted.add(key);
      out.push(first);
    }
    return out;
  }

  unmute(batch: ProducerBatch): void {
    this.muted.delete(this.keyOf(batch.topic, batch.partition));
  }

  /** Puts a batch back at the front of its partition's queue for a retry after retry.backoff.ms. */
  reenqueue(batch: ProducerBatch, nowMs: number, backoffMs: number): void {
    batch.inFlight = false;
    batch.retryAtMs = nowMs + backoffMs;
    const key = this.keyOf(batch.topic, batch.partition);
    let deque = this.batches.get(key);
    if (deque === undefined) {
      deque = [];
      this.batches.set(key, deque);
      this.partitions.set(key, { topic: batch.topic, partition: batch.partition });
    }
    deque.unshift(batch);
  }

  /** A batch is done (completed or failed): frees its memory. */
  deallocate(batch: ProducerBatch): void {
    if (!this.incomplete.delete(batch)) return;
    batch.release();
    this.usedMemory -= memoryOf.get(batch) ?? 0;
    memoryOf.delete(batch);
    const key = this.keyOf(batch.topic, batch.partition);
    const deque = this.batches.get(key);
    if (deque !== undefined && deque.length === 0) {
      this.batches.delete(key);
      this.partitions.delete(key);
    }
  }

  /** Queued (not in flight) batches older than delivery.timeout.ms: removed and returned. */
  expiredBatches(nowMs: number): ProducerBatch[] {
    const out: ProducerBatch[] = [];
    for (const deque of this.batches.values()) {
      while (deque.length > 0 && nowMs - deque[0].createdMs >= this.config.deliveryTimeoutMs) {
        const b = deque.shift()!;
        b.closed = true;
        out.push(b);
      }
    }
    return out;
  }

  /** Every incomplete batch (queued or in flight), for flush() and abort. */
  incompleteBatches(): ProducerBatch[] {
    return [...this.incomplete];
  }

  /** Queued batches, removed (for an abort on close). */
  abortQueued(): ProducerBatch[] {
    const out: ProducerBatch[] = [];
    for (const deque of this.batches.values()) out.push(...deque.splice(0));
    return out;
  }

  /** Fails the appends still waiting for memory. */
  failWaiters(error: Error): void {
    const waiting = this.waiters.slice(this.waitersHead);
    this.waiters = [];
    this.waitersHead = 0;
    for (const w of waiting) w.input.callback(error, null);
  }

  beginFlush(): void {
    this.flushesInProgress++;
  }

  endFlush(): void {
    this.flushesInProgress--;
  }

  close(): void {
    this.closing = true;
  }

  get hasUndrained(): boolean {
    for (const deque of this.batches.values()) if (deque.length > 0) return true;
    return this.waitingCount > 0;
  }
}

const memoryOf = new WeakMap<ProducerBatch, number>();

/** Upper bound of a record's encoded size (varints at their widest, headers included). */
function recordSizeEstimate(
  key: Buffer | null,
  value: Buffer | null,
  headers: readonly RecordHeader[],
): number {
  let n = 61 + 30 + (key?.length ?? 0) + (value?.length ?? 0);
  for (const h of headers) n += 10 + Buffer.byteLength(h.key) + (h.value?.length ?? 0);
  return n;
}
