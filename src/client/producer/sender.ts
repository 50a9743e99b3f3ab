// Sender: moves ready batches from the RecordAccumulator to the brokers (Kafka's Sender). Each round
// takes, for every broker with sendable batches and fewer than max.in.flight.requests.per.connection
// requests outstanding, one Produce request holding every ready batch it leads (at most one batch per
// partition, max.request.size bytes). acks=0 requests get no response: their records complete with
// offset -1 once written. Partition errors that are retriable put the batch back after an exponential
// retry.backoff.ms (up to retry.backoff.max.ms), while retries and delivery.timeout.ms allow; errors
// that mean stale metadata (NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, …) also refresh the
// metadata. A lost connection retries every batch of its requests. Batches carry producer id -1: no
// idempotence (issue 7), so with retries and several requests in flight records may be reordered, as
// with Kafka's producer when enable.idempotence=false.

import type { Time } from "../../common/time.js";
import { Apis } from "../../protocol/generated/api-table.js";
import { ErrorCode } from "../../protocol/generated/errors.js";
import type { ProduceRequest, TopicProduceData } from "../../protocol/generated/messages/ProduceRequest.js";
import type { ProduceResponse } from "../../protocol/generated/messages/ProduceResponse.js";
import { INVALID_METADATA_ERRORS, KafkaClientError } from "../errors.js";
import type { ClusterClient } from "../network/cluster-client.js";
import type { ProducerBatch } from "./producer-batch.js";
import type { ProducerConfig } from "./producer-config.js";
import type { RecordAccumulator } from "./record-accumulator.js";

/** Partition leaders and counts, as the producer needs them on every send. */
export class ProducerMetadata {
  private leaders = new Map<string, Int32Array>();
  /** Partitions with a leader, per topic (computed once per refresh: send() asks for every record). */
  private available = new Map<string, readonly number[]>();
  private refreshing: Promise<void> | undefined;
  private readonly wanted = new Set<string>();
  private listeners: Array<() => void> = [];
  lastRefreshMs = 0;
  lastError: Error | undefined;
  /**
   * Topics the last answer refused for good — an invalid name, no authorization — (Kafka's
   * Metadata.checkInvalidTopics / checkUnauthorizedTopics): sends to them fail at once, not after
   * max.block.ms.
   */
  private readonly fatal = new Map<string, KafkaClientError>();

  constructor(
    readonly cluster: ClusterClient,
    private readonly time: Time,
  ) {}

  /** The error that fails every send to `topic` at once, if the last answer refused it for good. */
  fatalError(topic: string): KafkaClientError | undefined {
    return this.fatal.get(topic);
  }

  /** Number of partitions of a topic, or undefined when its metadata is not known yet. */
  partitionCount(topic: string): number | undefined {
    return this.leaders.get(topic)?.length;
  }

  leaderOf = (topic: string, partition: number): number | undefined => {
    const l = this.leaders.get(topic);
    if (l === undefined || partition >= l.length) return undefined;
    const id = l[partition];
    return id >= 0 ? id : undefined;
  };

  /** Partitions of `topic` that have a leader. */
  availablePartitions(topic: string): readonly number[] {
    const cached = this.available.get(topic);
    if (cached !== undefined) return cached;
    const l = this.leaders.get(topic);
    const out: number[] = [];
    if (l) for (let i = 0; i < l.length; i++) if (l[i] >= 0) out.push(i);
    if (l) this.available.set(topic, out);
    return out;
  }

  /** Called after each refresh (successful or not). */
  onUpdate(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Asks for a refresh including `topics`; at most one Metadata request is outstanding. */
  requestUpdate(topics: Iterable<string>): Promise<void> {
    for (const t of topics) this.wanted.add(t);
    if (this.refreshing) return this.refreshing;
    const run = async (): Promise<void> => {
      // Let a burst of requests for several topics share one Metadata request.
      await new Promise((r) => setImmediate(r));
      const topicList = [...this.wanted];
      try {
        const md = await this.cluster.refreshMetadata(topicList, { allowAutoTopicCreation: true });
        this.lastError = undefined;
        for (const name of topicList) {
          const t = md.topics.get(name);
          if (t === undefined) continue;
          if (t.errorCode === ErrorCode.INVALID_TOPIC_EXCEPTION) {
            this.fatal.set(name, KafkaClientError.of("INVALID_TOPIC_EXCEPTION", `Invalid topics: [${name}]`));
            continue;
          }
          if (t.errorCode === ErrorCode.TOPIC_AUTHORIZATION_FAILED) {
            this.fatal.set(
              name,
              KafkaClientError.of("TOPIC_AUTHORIZATION_FAILED", `Not authorized to access topics: [${name}]`),
            );
            continue;
          }
          this.fatal.delete(name);
          if (t.errorCode !== ErrorCode.NONE && t.partitions.length === 0) {
            if (
              t.errorCode !== ErrorCode.LEADER_NOT_AVAILABLE &&
              t.errorCode !== ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            )
              this.lastError = new KafkaClientError(t.errorCode, `Topic ${name}: metadata error`);
            continue;
          }
          const leaders = new Int32Array(t.partitions.length).fill(-1);
          for (const p of t.partitions) if (p.partition < leaders.length) leaders[p.partition] = p.leader;
          this.leaders.set(name, leaders);
          this.available.delete(name);
        }
      } catch (e) {
        this.lastError = e as Error;
      } finally {
        this.lastRefreshMs = this.time.milliseconds();
        this.refreshing = undefined;
        for (const l of this.listeners) l();
      }
    };
    this.refreshing = run();
    return this.refreshing;
  }

  /** Topics the producer has asked about. */
  get topics(): string[] {
    return [...this.wanted];
  }
}

export class Sender {
  private readonly inFlightByNode = new Map<number, number>();
  private readonly inFlightBatches = new Set<ProducerBatch>();
  private scheduled = false;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private running = true;
  private idleListeners: Array<() => void> = [];
  /** Runs after each batch is completed or failed and its memory freed (the producer wakes waiting sends). */
  onBatchDone: (() => void) | undefined;

  constructor(
    private readonly config: ProducerConfig,
    private readonly accumulator: RecordAccumulator,
    private readonly metadata: ProducerMetadata,
    private readonly time: Time,
  ) {
    metadata.onUpdate(() => this.wakeup());
  }

  /** Runs a send round soon (coalesced). */
  wakeup(): void {
    if (this.scheduled || !this.running) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.runOnce();
    });
  }

  /** Requests in flight. */
  get inFlightCount(): number {
    return this.inFlightBatches.size;
  }

  /** Resolves when nothing is queued or in flight. */
  whenIdle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((r) => this.idleListeners.push(r));
  }

  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
  }

  private isIdle(): boolean {
    return this.accumulator.queuedBatches === 0 && !this.accumulator.hasUndrained;
  }

  private checkIdle(): void {
    if (this.idleListeners.length > 0 && this.isIdle()) {
      for (const l of this.idleListeners.splice(0)) l();
    }
  }

  private runOnce(): void {
    if (!this.running) return;
    const now = this.time.milliseconds();
    this.accumulator.processWaiters(now);
    for (const b of this.accumulator.expiredBatches(now)) this.finish(b, expiryError(b, now));
    // metadata.max.age.ms: refresh even without errors, so new partitions and moved leaders are seen.
    if (
      now - this.metadata.lastRefreshMs >= this.config.metadataMaxAgeMs &&
      this.metadata.topics.length > 0
    ) {
      void this.metadata.requestUpdate([]);
    }
    const result = this.accumulator.ready(now, this.metadata.leaderOf);
    let next = result.nextReadyCheckDelayMs;
    if (result.unknownLeaderTopics.size > 0) {
      void this.metadata.requestUpdate(result.unknownLeaderTopics);
      next = Math.min(next, this.config.retryBackoffMs);
    }
    const mute = this.config.maxInFlightRequestsPerConnection === 1;
    for (const node of result.readyNodes) {
      if ((this.inFlightByNode.get(node) ?? 0) >= this.config.maxInFlightRequestsPerConnection) continue;
      const batches = this.accumulator.drain(
        node,
        this.metadata.leaderOf,
        this.config.maxRequestSize,
        now,
        mute,
      );
      if (batches.length > 0) this.sendProduce(node, batches);
    }
    const waiterDeadline = this.accumulator.nextWaiterDeadlineMs - now;
    next = Math.min(next, waiterDeadline);
    if (this.accumulator.queuedBatches > 0) next = Math.min(next, this.config.deliveryTimeoutMs);
    this.schedule(next);
    this.checkIdle();
  }

  private schedule(delayMs: number): void {
    if (!Number.isFinite(delayMs)) return;
    const at = this.time.milliseconds() + Math.max(0, delayMs);
    if (this.timer && at >= this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.timerAt = Number.POSITIVE_INFINITY;
        this.runOnce();
      },
      Math.max(0, delayMs),
    );
  }

  private sendProduce(node: number, batches: ProducerBatch[]): void {
    this.inFlightByNode.set(node, (this.inFlightByNode.get(node) ?? 0) + 1);
    for (const b of batches) this.inFlightBatches.add(b);
    const byTopic = new Map<string, TopicProduceData>();
    for (const b of batches) {
      let t = byTopic.get(b.topic);
      if (t === undefined) {
        t = { name: b.topic, partitionData: [] };
        byTopic.set(b.topic, t);
      }
      t.partitionData.push({ index: b.partition, records: b.records() });
    }
    const request: ProduceRequest = {
      transactionalId: null,
      acks: this.config.acks,
      timeoutMs: this.config.requestTimeoutMs,
      topicData: [...byTopic.values()],
    };
    const done = (): void => {
      this.inFlightByNode.set(node, (this.inFlightByNode.get(node) ?? 1) - 1);
      for (const b of batches) {
        this.inFlightBatches.delete(b);
        this.accumulator.unmute(b);
      }
      this.wakeup();
    };
    void (async () => {
      let connected = false;
      try {
        const conn = await this.metadata.cluster.connectionTo(node);
        connected = true;
        const version = conn.versionFor(Apis.Produce, { min: 3 });
        if (this.config.acks === 0) {
          await conn.sendOneWay(Apis.Produce, version, request);
          for (const b of batches) this.finish(b, null, -1n, -1n);
        } else {
          const response = await conn.send(Apis.Produce, version, request, {
            timeoutMs: this.config.requestTimeoutMs,
          });
          this.handleResponse(batches, response);
        }
      } catch (e) {
        const error =
          e instanceof KafkaClientError ? e : KafkaClientError.of("NETWORK_EXCEPTION", (e as Error).message);
        const now = this.time.milliseconds();
        for (const b of batches) {
          // Never sent (no connection): Kafka keeps such a batch in the accumulator while the node is not
          // ready, where it expires with the delivery timeout's error, not the connection's.
          if (!connected && now - b.createdMs >= this.config.deliveryTimeoutMs)
            this.finish(b, expiryError(b, now));
          else this.handleError(b, error.code, error.message);
        }
      } finally {
        done();
      }
    })();
  }

  private handleResponse(batches: ProducerBatch[], response: ProduceResponse): void {
    const results = new Map<
      string,
      { errorCode: number; baseOffset: bigint; logAppendTime: bigint; message: string | null }
    >();
    for (const t of response.responses) {
      for (const p of t.partitionResponses) {
        results.set(`${t.name}-${p.index}`, {
          errorCode: p.errorCode,
          baseOffset: p.baseOffset,
          logAppendTime: p.logAppendTimeMs,
          message: p.errorMessage,
        });
      }
    }
    for (const b of batches) {
      const r = results.get(`${b.topic}-${b.partition}`);
      if (r === undefined) {
        this.handleError(
          b,
          ErrorCode.UNKNOWN_SERVER_ERROR,
          `No response for partition ${b.topic}-${b.partition}`,
        );
      } else if (r.errorCode === ErrorCode.NONE) {
        this.finish(b, null, r.baseOffset, r.logAppendTime);
      } else {
        this.handleError(b, r.errorCode, r.message);
      }
    }
  }

  private handleError(batch: ProducerBatch, code: number, message: string | null): void {
    const error = new KafkaClientError(code, message);
    const now = this.time.milliseconds();
    const canRetry =
      error.retriable &&
      batch.attempts <= this.config.retries &&
      now - batch.createdMs < this.config.deliveryTimeoutMs &&
      this.running;
    if (INVALID_METADATA_ERRORS.has(code)) void this.metadata.requestUpdate([batch.topic]);
    if (!canRetry) {
      this.finish(batch, error);
      return;
    }
    const exp = this.config.retryBackoffMs * 2 ** Math.max(0, batch.attempts - 1);
    const backoff = Math.min(exp, Math.max(this.config.retryBackoffMaxMs, this.config.retryBackoffMs));
    // Kafka adds ±20% jitter to the exponential backoff.
    const jittered = Math.round(backoff * (0.8 + Math.random() * 0.4));
    this.accumulator.reenqueue(batch, now, jittered);
    this.schedule(jittered);
  }

  private finish(batch: ProducerBatch, error: Error | null, baseOffset = -1n, logAppendTime = -1n): void {
    if (error) batch.fail(error);
    else batch.complete(baseOffset, logAppendTime);
    this.accumulator.deallocate(batch);
    this.accumulator.processWaiters(this.time.milliseconds());
    this.onBatchDone?.();
  }

  /** Fails every queued batch (close with a timeout, or a fatal error). */
  abortIncomplete(error: Error): void {
    this.accumulator.failWaiters(error);
    for (const b of this.accumulator.abortQueued()) this.finish(b, error);
    this.checkIdle();
  }
}

/** Kafka's error for a batch that outlived delivery.timeout.ms without being acknowledged. */
function expiryError(b: ProducerBatch, now: number): KafkaClientError {
  return KafkaClientError.of(
    "REQUEST_TIMED_OUT",
    `Expiring ${b.recordCount} record(s) for ${b.topic}-${b.partition}:${now - b.createdMs} ms has passed since batch creation`,
  );
}
