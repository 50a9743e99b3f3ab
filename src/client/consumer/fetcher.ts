// Fetcher: sends Fetch requests and turns their answers into records (Kafka's Fetcher/FetchCollector).
// One Fetch per partition leader at a time, inside that broker's incremental fetch session (KIP-227),
// with fetch.min.bytes / fetch.max.wait.ms / fetch.max.bytes / max.partition.fetch.bytes /
// isolation.level. A partition's fetched bytes wait in the buffer as they came (batches are bytes) and
// are decoded batch by batch as poll() takes records, so the next fetch (from the end of the buffered
// data) can be in flight meanwhile; no fetch is sent while a response's worth of data is buffered.
// Paused partitions are not fetched; their buffered records wait for resume() and do not count
// against that bound.
// Control batches are skipped; with read_committed, batches of aborted transactions (the response's
// abortedTransactions) are dropped; a partial batch at the end of a partition's data is left for the
// next fetch. OFFSET_OUT_OF_RANGE schedules the auto.offset.reset (or fails poll() with "none"); errors
// meaning stale metadata ask for a metadata refresh.

import { Apis } from "../../protocol/generated/api-table.js";
import { ErrorCode } from "../../protocol/generated/errors.js";
import type { FetchRequest, FetchTopic } from "../../protocol/generated/messages/FetchRequest.js";
import type { FetchResponse } from "../../protocol/generated/messages/FetchResponse.js";
import { decodeRecordBatches } from "../../protocol/records/memory-records.js";
import type { RecordHeader } from "../../protocol/records/record.js";
import { LOG_OVERHEAD, TimestampType } from "../../protocol/records/record-batch.js";
import { RecordBatchIterator } from "../../protocol/records/record-batch-iterator.js";
import { INVALID_METADATA_ERRORS, KafkaClientError } from "../errors.js";
import type { ClusterClient } from "../network/cluster-client.js";
import { AbortedTransactionFilter } from "./aborted-transactions.js";
import type { ConsumerConfig } from "./consumer-config.js";
import { FetchSessionHandler, type FetchTarget, fetchPartition } from "./fetch-session.js";
import type { PartitionState, SubscriptionState } from "./subscription-state.js";

/** A record as poll() returns it (Kafka's ConsumerRecord). */
export interface ConsumerRecord {
  topic: string;
  partition: number;
  offset: bigint;
  timestamp: bigint;
  timestampType: "CreateTime" | "LogAppendTime";
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
  leaderEpoch: number;
}

/** Fetched bytes of one partition, consumed batch by batch. */
interface CompletedFetch {
  state: PartitionState;
  seekEpoch: number;
  records: Buffer;
  /** Position of the next batch in `records`. */
  pos: number;
  /** Records of the batch being returned, and how many were taken. */
  current: ConsumerRecord[] | undefined;
  currentIndex: number;
  /** Offset after the current batch. */
  currentNext: bigint;
  filter: AbortedTransactionFilter;
}

export class Fetcher {
  private readonly sessions = new Map<number, FetchSessionHandler>();
  private readonly inFlight = new Set<number>();
  private readonly buffered: CompletedFetch[] = [];
  private bufferedBytes = 0;
  private waiters: Array<() => void> = [];
  /** An error to throw from the next poll (OFFSET_OUT_OF_RANGE with reset none, authorization, …). */
  private pendingError: Error | undefined;
  /** Topics whose leaders are unknown or stale: refresh before fetching them. */
  readonly staleTopics = new Set<string>();
  private closed = false;

  constructor(
    private readonly config: ConsumerConfig,
    private readonly cluster: ClusterClient,
    private readonly subscriptions: SubscriptionState,
  ) {}

  /** Resolves when a fetch completes (or after `ms`), at once when records poll() may return are buffered. */
  waitForData(ms: number): Promise<void> {
    if (this.hasBufferedData || this.pendingError) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(), ms);
      const done = (): void => {
        clearTimeout(timer);
        resolve();
      };
      this.waiters.push(done);
    });
  }

  private notify(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Ends a waitForData() now (a partition was resumed: its buffered records may be returned). */
  wakeup(): void {
    this.notify();
  }

  /** Whether records of a partition that is not paused are buffered. */
  get hasBufferedData(): boolean {
    return this.buffered.some((cf) => !cf.state.paused);
  }

  /** Buffered bytes of paused partitions: they wait for resume() and do not hold back other fetches. */
  private pausedBufferedBytes(): number {
    let bytes = 0;
    for (const cf of this.buffered) if (cf.state.paused) bytes += cf.records.length;
    return bytes;
  }

  takeError(): Error | undefined {
    const e = this.pendingError;
    this.pendingError = undefined;
    return e;
  }

  /**
   * Sends a Fetch to every leader that has fetchable partitions and no fetch in flight, unless a whole
   * response's worth of data is still buffered (see bufferLimit).
   */
  sendFetches(): void {
    if (this.closed) return;
    const byNode = new Map<number, PartitionState[]>();
    let fetchable = 0;
    for (const s of this.subscriptions.all()) {
      if (s.fetchPosition === null || s.reset !== null || s.paused) continue;
      fetchable++;
      const leader = this.cluster.leaderFor(s.topic, s.partition);
      if (leader === undefined) {
        this.staleTopics.add(s.topic);
        continue;
      }
      if (this.inFlight.has(leader)) continue;
      let list = byNode.get(leader);
      if (list === undefined) {
        list = [];
        byNode.set(leader, list);
      }
      list.push(s);
    }
    if (this.bufferedBytes - this.pausedBufferedBytes() >= this.bufferLimit(fetchable)) return;
    for (const [node, states] of byNode) this.fetchFrom(node, states);
  }

  /**
   * Buffered bytes (of partitions not paused) at which no further fetch is sent: the most one response
   * can carry for the fetchable partitions (fetch.max.bytes, or max.partition.fetch.bytes per partition
   * when that is less). The application then works through one response while the next is in flight, as Kafka's consumer does
   * by not fetching partitions that still have data buffered. Buffering more only keeps more memory live
   * and makes fresh pages to fault in: bounded by fetch.max.bytes (50 MiB) instead, consumer-perf-test
   * ran 14 % slower with an RSS of 242 MB instead of 178 MB (docs/benchmarks.md). At least one byte:
   * with either setting 0 (allowed, as in Kafka; the broker still returns one batch) an empty buffer
   * always fetches.
   */
  private bufferLimit(fetchablePartitions: number): number {
    return Math.max(
      1,
      Math.min(this.config.fetchMaxBytes, fetchablePartitions * this.config.maxPartitionFetchBytes),
    );
  }

  private fetchFrom(node: number, states: PartitionState[]): void {
    let session = this.sessions.get(node);
    if (session === undefined) {
      session = new FetchSessionHandler();
      this.sessions.set(node, session);
    }
    const targets: FetchTarget[] = states.map((s) => ({
      topic: s.topic,
      partition: s.partition,
      fetchOffset: s.fetchPosition!,
      maxBytes: this.config.maxPartitionFetchBytes,
    }));
    const epochs = new Map<string, { state: PartitionState; seekEpoch: number; fetchOffset: bigint }>();
    for (const s of states)
      epochs.set(`${s.topic}-${s.partition}`, {
        state: s,
        seekEpoch: s.seekEpoch,
        fetchOffset: s.fetchPosition!,
      });
    const built = session.build(targets);
    const topics = new Map<string, FetchTopic>();
    for (const t of built.toSend) {
      let ft = topics.get(t.topic);
      if (ft === undefined) {
        ft = {
          topic: t.topic,
          topicId: this.cluster.topic(t.topic)?.topicId ?? "AAAAAAAAAAAAAAAAAAAAAA",
          partitions: [],
        };
        topics.set(t.topic, ft);
      }
      ft.partitions.push(fetchPartition(t));
    }
    const forgotten = new Map<string, number[]>();
    for (const f of built.toForget) {
      const l = forgotten.get(f.topic);
      if (l) l.push(f.partition);
      else forgotten.set(f.topic, [f.partition]);
    }
    const request: FetchRequest = {
      clusterId: null,
      replicaId: -1,
      replicaState: { replicaId: -1, replicaEpoch: -1n },
      maxWaitMs: this.config.fetchMaxWaitMs,
      minBytes: this.config.fetchMinBytes,
      maxBytes: this.config.fetchMaxBytes,
      isolationLevel: this.config.isolationLevel,
      sessionId: built.sessionId,
      sessionEpoch: built.sessionEpoch,
      topics: [...topics.values()],
      forgottenTopicsData: [...forgotten].map(([topic, partitions]) => ({
        topic,
        topicId: this.cluster.topic(topic)?.topicId ?? "AAAAAAAAAAAAAAAAAAAAAA",
        partitions,
      })),
      rackId: this.config.clientRack,
    };
    this.inFlight.add(node);
    void (async () => {
      try {
        const conn = await this.cluster.connectionTo(node);
        // v12: flexible, sessions, topic names (v13+ address topics by id).
        const version = conn.versionFor(Apis.Fetch, { min: 4, max: 12 });
        const response = await conn.send(Apis.Fetch, version, request, {
          timeoutMs: this.config.requestTimeoutMs + this.config.fetchMaxWaitMs,
        });
        if (!session.handleResponse(response.errorCode, response.sessionId)) {
          if (
            response.errorCode !== ErrorCode.FETCH_SESSION_ID_NOT_FOUND &&
            response.errorCode !== ErrorCode.INVALID_FETCH_SESSION_EPOCH
          ) {
            this.pendingError = new KafkaClientError(response.errorCode, "Fetch failed");
          }
        } else {
          this.handleResponse(response, epochs);
        }
      } catch (e) {
        session.handleError();
        for (const s of states) this.staleTopics.add(s.topic);
        if (!(e instanceof KafkaClientError) || !e.retriable) this.pendingError = e as Error;
        await new Promise((r) => setTimeout(r, this.config.retryBackoffMs));
      } finally {
        this.inFlight.delete(node);
        this.notify();
        // Pipelining: fetch the next data while the application works through this response (bounded
        // by fetch.max.bytes of buffered data).
        if (this.staleTopics.size === 0 && this.pendingError === undefined) this.sendFetches();
      }
    })();
  }

  private handleResponse(
    response: FetchResponse,
    requested: Map<string, { state: PartitionState; seekEpoch: number; fetchOffset: bigint }>,
  ): void {
    for (const t of response.responses) {
      for (const p of t.partitions) {
        const req = requested.get(`${t.topic}-${p.partitionIndex}`);
        if (req === undefined) continue;
        const s = req.state;
        // A seek since the request, or a partition no longer assigned: drop the answer.
        if (s.seekEpoch !== req.seekEpoch || this.subscriptions.get(s.topic, s.partition) !== s) continue;
        if (s.fetchPosition !== req.fetchOffset) continue;
        if (p.errorCode === ErrorCode.NONE) {
          s.highWatermark = p.highWatermark;
          if (p.lastStableOffset >= 0n) s.lastStableOffset = p.lastStableOffset;
          if (p.logStartOffset >= 0n) s.logStartOffset = p.logStartOffset;
          const records = p.records;
          if (records === null || records.length === 0) continue;
          const end = this.endOfCompleteBatches(records, req.fetchOffset);
          if (end.next === null) {
            if (end.bytes === 0 && records.length >= this.config.maxPartitionFetchBytes) {
              this.pendingError = KafkaClientError.of(
                "RECORD_LIST_TOO_LARGE",
                `There are some messages at [Partition=Offset]: {${s.topic}-${s.partition}=${req.fetchOffset}} whose size is larger than the fetch size ${this.config.maxPartitionFetchBytes} and hence cannot be returned.`,
              );
            }
            continue;
          }
          s.fetchPosition = end.next;
          this.buffered.push({
            state: s,
            seekEpoch: s.seekEpoch,
            records: records.subarray(0, end.bytes),
            pos: 0,
            current: undefined,
            currentIndex: 0,
            currentNext: req.fetchOffset,
            filter: new AbortedTransactionFilter(p.abortedTransactions, this.config.isolationLevel === 1),
          });
          this.bufferedBytes += end.bytes;
        } else if (p.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE) {
          const strategy = this.config.autoOffsetReset;
          if (strategy === "none") {
            this.pendingError = KafkaClientError.of(
              "OFFSET_OUT_OF_RANGE",
              `Fetch position FetchPosition{offset=${req.fetchOffset}} is out of range for partition ${s.topic}-${s.partition}`,
            );
          } else {
            this.subscriptions.requestReset(s.topic, s.partition, strategy);
          }
        } else if (INVALID_METADATA_ERRORS.has(p.errorCode)) {
          this.staleTopics.add(s.topic);
        } else if (
          p.errorCode === ErrorCode.TOPIC_AUTHORIZATION_FAILED ||
          p.errorCode === ErrorCode.CORRUPT_MESSAGE
        ) {
          this.pendingError = new KafkaClientError(p.errorCode, `Fetch of ${s.topic}-${s.partition} failed`);
        }
      }
    }
  }

  /** Bytes of the complete batches of `records` and the offset after the last one (null: none). */
  private endOfCompleteBatches(records: Buffer, fetchOffset: bigint): { bytes: number; next: bigint | null } {
    const it = new RecordBatchIterator(records, {
      verifyCrc: false,
      allowIncompleteTail: true,
      allowLegacy: true,
    });
    let next: bigint | null = null;
    let bytes = 0;
    for (const entry of it) {
      bytes = entry.position + entry.size;
      if (entry.header !== null) {
        const last = entry.header.baseOffset + BigInt(entry.header.lastOffsetDelta);
        if (last + 1n > (next ?? fetchOffset)) next = last + 1n;
      } else {
        // A legacy entry: its offset is the last offset it holds.
        const last = records.readBigInt64BE(entry.position);
        if (last + 1n > (next ?? fetchOffset)) next = last + 1n;
      }
    }
    return { bytes, next };
  }

  /** Up to `max` records from the buffer, advancing positions; paused partitions' records stay. */
  collect(max: number): ConsumerRecord[] {
    const out: ConsumerRecord[] = [];
    let i = 0;
    while (out.length < max && i < this.buffered.length) {
      const cf = this.buffered[i];
      const s = cf.state;
      if (cf.seekEpoch !== s.seekEpoch || this.subscriptions.get(s.topic, s.partition) !== s) {
        this.dropAt(i);
        continue;
      }
      if (s.paused) {
        i++;
        continue;
      }
      if (cf.current !== undefined && cf.currentIndex < cf.current.length) {
        // Records before the position (a batch fetched from its start after a seek into it) are skipped;
        // the position moves once per run of records, not per record.
        let last: ConsumerRecord | undefined;
        while (out.length < max && cf.currentIndex < cf.current.length) {
          const r = cf.current[cf.currentIndex++];
          if (last === undefined && s.position !== null && r.offset < s.position) continue;
          out.push(r);
          last = r;
        }
        if (last !== undefined) s.position = last.offset + 1n;
        if (cf.currentIndex >= cf.current.length) {
          if (s.position === null || s.position < cf.currentNext) s.position = cf.currentNext;
          cf.current = undefined;
        }
        continue;
      }
      if (cf.pos >= cf.records.length) {
        this.dropAt(i);
        continue;
      }
      this.nextBatch(cf);
    }
    return out;
  }

  private dropAt(i: number): void {
    const [cf] = this.buffered.splice(i, 1);
    this.bufferedBytes -= cf.records.length;
  }

  /** Decodes the next batch of `cf` into cf.current (empty when the batch is skipped). */
  private nextBatch(cf: CompletedFetch): void {
    const s = cf.state;
    const size = LOG_OVERHEAD + cf.records.readInt32BE(cf.pos + 8);
    const bytes = cf.records.subarray(cf.pos, cf.pos + size);
    cf.pos += size;
    let decoded: ReturnType<typeof decodeRecordBatches>;
    try {
      decoded = decodeRecordBatches(bytes, { verifyCrc: this.config.checkCrcs });
    } catch (e) {
      this.pendingError = KafkaClientError.of(
        "CORRUPT_MESSAGE",
        `Received a corrupt record batch from ${s.topic}-${s.partition}: ${(e as Error).message}`,
      );
      cf.pos = cf.records.length;
      cf.current = [];
      cf.currentIndex = 0;
      return;
    }
    const out: ConsumerRecord[] = [];
    let next = cf.currentNext;
    for (const { header, records } of decoded) {
      const last =
        header.magic >= 2
          ? header.baseOffset + BigInt(header.lastOffsetDelta)
          : (records.at(-1)?.offset ?? header.baseOffset);
      if (last + 1n > next) next = last + 1n;
      if (cf.filter.skip(header, records[0]?.key)) continue;
      const tsType = header.timestampType === TimestampType.LogAppendTime ? "LogAppendTime" : "CreateTime";
      for (const r of records) {
        out.push({
          topic: s.topic,
          partition: s.partition,
          offset: r.offset,
          timestamp: r.timestamp,
          timestampType: tsType,
          key: r.key,
          value: r.value,
          headers: r.headers,
          leaderEpoch: header.partitionLeaderEpoch,
        });
      }
    }
    cf.current = out;
    cf.currentIndex = 0;
    cf.currentNext = next;
  }

  /** Forgets buffered data of partitions no longer assigned or seeked. */
  clearBufferedFor(topic: string, partition: number): void {
    for (let i = this.buffered.length - 1; i >= 0; i--) {
      const s = this.buffered[i].state;
      if (s.topic === topic && s.partition === partition) {
        this.bufferedBytes -= this.buffered[i].records.length;
        this.buffered.splice(i, 1);
      }
    }
  }

  close(): void {
    this.closed = true;
    this.notify();
  }
}
