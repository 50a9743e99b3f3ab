// KafkaProducer: Tributary's producer client (Kafka's KafkaProducer). send(record) picks the partition
// (explicit, murmur2 of the key, or sticky for keyless records), appends the record to the
// RecordAccumulator and resolves with {topic, partition, offset, timestamp} once the broker acknowledged
// it (acks=0: offset -1 once written); the Sender ships batches in the background. flush() waits for
// everything sent so far, close() flushes and closes the connections.
//
//   const producer = new KafkaProducer({ "bootstrap.servers": "127.0.0.1:9092", acks: "all" });
//   const md = await producer.send({ topic: "orders", key: "k1", value: "hello" });
//   await producer.close();
//
// Idempotence and transactions are issue 7: this producer sends with producer id -1 and refuses
// enable.idempotence=true and transactional.id (ProducerConfig).

import { SYSTEM_TIME, type Time } from "../../common/time.js";
import type { RecordHeader } from "../../protocol/records/record.js";
import { KafkaClientError } from "../errors.js";
import { ClusterClient } from "../network/cluster-client.js";
import { partitionForKey, StickyPartitioner } from "./partitioner.js";
import type { RecordMetadata, SendCallback } from "./producer-batch.js";
import { type ProducerConfig, producerConfigFromProperties } from "./producer-config.js";
import { type AppendInput, RecordAccumulator } from "./record-accumulator.js";
import { ProducerMetadata, Sender } from "./sender.js";

export type { RecordMetadata, SendCallback } from "./producer-batch.js";

/** A record to send (Kafka's ProducerRecord). Strings are encoded as UTF-8. */
export interface ProducerRecord {
  topic: string;
  partition?: number;
  key?: Buffer | string | null;
  value: Buffer | string | null;
  headers?: readonly RecordHeader[];
  /** CreateTime in ms; defaults to now. */
  timestamp?: number | bigint;
}

interface Pending {
  record: ProducerRecord;
  callback: SendCallback;
  deadlineMs: number;
}

const NO_HEADERS: readonly RecordHeader[] = Object.freeze([]);

function toBytes(v: Buffer | string | null | undefined): Buffer | null {
  if (v === undefined || v === null) return null;
  return typeof v === "string" ? Buffer.from(v, "utf8") : v;
}

export class KafkaProducer {
  readonly config: ProducerConfig;
  private readonly time: Time;
  private readonly cluster: ClusterClient;
  private readonly metadata: ProducerMetadata;
  private readonly accumulator: RecordAccumulator;
  private readonly sender: Sender;
  private readonly sticky: StickyPartitioner;
  /** Records waiting for their topic's metadata, per topic, in send order. */
  private readonly waitingForMetadata = new Map<string, Pending[]>();
  private closed = false;
  private readonly spaceWaiters: Array<() => void> = [];

  constructor(config: ProducerConfig | Readonly<Record<string, string>>, options: { time?: Time } = {}) {
    this.config =
      "bootstrapServers" in config && Array.isArray(config.bootstrapServers)
        ? (config as ProducerConfig)
        : producerConfigFromProperties(config as Record<string, string>);
    this.time = options.time ?? SYSTEM_TIME;
    this.cluster = new ClusterClient({
      bootstrapServers: this.config.bootstrapServers,
      clientId: this.config.clientId || "producer-1",
      requestTimeoutMs: this.config.requestTimeoutMs,
      ssl: this.config.ssl,
      sasl: this.config.sasl,
      retryBackoffMs: this.config.retryBackoffMs,
      defaultApiTimeoutMs: this.config.maxBlockMs,
    });
    this.metadata = new ProducerMetadata(this.cluster, this.time);
    this.accumulator = new RecordAccumulator(this.config);
    this.sender = new Sender(this.config, this.accumulator, this.metadata, this.time);
    this.sticky = new StickyPartitioner(this.config.batchSize);
    this.metadata.onUpdate(() => this.onMetadata());
    this.sender.onBatchDone = () => {
      if (this.spaceWaiters.length > 0) this.notifySpace();
    };
  }

  /** Sends a record; resolves once it is acknowledged as acks requires. */
  send(record: ProducerRecord): Promise<RecordMetadata> {
    return new Promise((resolve, reject) => {
      this.sendWithCallback(record, (e, md) => (e ? reject(e) : resolve(md!)));
    });
  }

  /**
   * Kafka's send(record, callback): the callback runs once with (error, null) or (null, metadata). No
   * promise per record, for high-rate senders (producer-perf-test).
   */
  sendWithCallback(record: ProducerRecord, callback: SendCallback): void {
    if (this.closed) {
      callback(new KafkaClientError(-1, "Cannot perform operation after producer has been closed"), null);
      return;
    }
    const waiting = this.waitingForMetadata.get(record.topic);
    if (waiting === undefined && this.metadata.partitionCount(record.topic) !== undefined) {
      this.appendNow(record, callback);
      return;
    }
    const pending: Pending = {
      record,
      callback,
      deadlineMs: this.time.milliseconds() + this.config.maxBlockMs,
    };
    if (waiting) waiting.push(pending);
    else this.waitingForMetadata.set(record.topic, [pending]);
    void this.metadata.requestUpdate([record.topic]);
  }

  /**
   * True while sends would wait: for buffer.memory, or for a topic's metadata (where Kafka's send()
   * blocks). Fast senders await waitForSpace() then.
   */
  get bufferFull(): boolean {
    return this.accumulator.isMemoryFull || this.waitingForMetadata.size > 0;
  }

  /** Resolves when a send would no longer wait (back-pressure for fast senders). */
  waitForSpace(): Promise<void> {
    if (!this.bufferFull) return Promise.resolve();
    return new Promise((r) => this.spaceWaiters.push(r));
  }

  /**
   * The number of partitions of a topic, waiting (up to max.block.ms) for its metadata; the topic is
   * auto-created when the broker allows it, as on a first send.
   */
  async partitionsFor(topic: string): Promise<number> {
    const deadline = this.time.milliseconds() + this.config.maxBlockMs;
    for (;;) {
      const n = this.metadata.partitionCount(topic);
      if (n !== undefined) return n;
      const fatal = this.metadata.fatalError(topic);
      if (fatal !== undefined) throw fatal;
      if (this.time.milliseconds() >= deadline) {
        const why = this.metadata.lastError ? ` (${this.metadata.lastError.message})` : "";
        throw KafkaClientError.of(
          "REQUEST_TIMED_OUT",
          `Topic ${topic} not present in metadata after ${this.config.maxBlockMs} ms.${why}`,
        );
      }
      await this.metadata.requestUpdate([topic]);
      if (this.metadata.partitionCount(topic) === undefined)
        await new Promise((r) => setTimeout(r, this.config.retryBackoffMs));
    }
  }

  /** Sends everything queued now and waits for the acknowledgements (Kafka's flush()). */
  async flush(): Promise<void> {
    while (this.waitingForMetadata.size > 0) {
      await new Promise<void>((r) => this.metadata.onUpdate(r));
    }
    this.accumulator.beginFlush();
    try {
      this.sender.wakeup();
      await this.sender.whenIdle();
    } finally {
      this.accumulator.endFlush();
    }
  }

  /**
   * Flushes and closes. With timeoutMs, records still unsent after it are failed (Kafka's
   * close(Duration)); timeoutMs 0 aborts at once.
   */
  async close(timeoutMs = Number.POSITIVE_INFINITY): Promise<void> {
    if (this.closed) return;
    const flushed = this.flush();
    this.closed = true;
    if (Number.isFinite(timeoutMs)) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([flushed, new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
      clearTimeout(timer);
      this.sender.abortIncomplete(KafkaClientError.of("NETWORK_EXCEPTION", "Producer is closed forcefully."));
    } else {
      await flushed;
    }
    this.accumulator.close();
    this.sender.stop();
    for (const list of this.waitingForMetadata.values())
      for (const p of list)
        p.callback(new KafkaClientError(-1, "Producer closed while waiting for metadata"), null);
    this.waitingForMetadata.clear();
    await this.cluster.close();
  }

  private onMetadata(): void {
    const now = this.time.milliseconds();
    for (const [topic, list] of this.waitingForMetadata) {
      if (this.metadata.partitionCount(topic) !== undefined) {
        this.waitingForMetadata.delete(topic);
        for (const p of list) this.appendNow(p.record, p.callback);
        continue;
      }
      const fatal = this.metadata.fatalError(topic);
      if (fatal !== undefined) {
        this.waitingForMetadata.delete(topic);
        for (const p of list) p.callback(fatal, null);
        continue;
      }
      const expired = list.filter((p) => now >= p.deadlineMs);
      if (expired.length > 0) {
        const rest = list.filter((p) => now < p.deadlineMs);
        const why = this.metadata.lastError ? ` (${this.metadata.lastError.message})` : "";
        for (const p of expired)
          p.callback(
            KafkaClientError.of(
              "REQUEST_TIMED_OUT",
              `Topic ${topic} not present in metadata after ${this.config.maxBlockMs} ms.${why}`,
            ),
            null,
          );
        if (rest.length === 0) {
          this.waitingForMetadata.delete(topic);
          continue;
        }
        this.waitingForMetadata.set(topic, rest);
      }
      setTimeout(() => void this.metadata.requestUpdate([topic]), this.config.retryBackoffMs);
    }
    this.notifySpace();
  }

  private appendNow(record: ProducerRecord, callback: SendCallback): void {
    const topic = record.topic;
    const numPartitions = this.metadata.partitionCount(topic)!;
    const key = toBytes(record.key);
    let partition = record.partition;
    let sticky = false;
    if (partition === undefined || partition === null) {
      if (key !== null && !this.config.partitionerIgnoreKeys) {
        partition = partitionForKey(key, numPartitions);
      } else {
        partition = this.sticky.partition(topic, numPartitions, this.metadata.availablePartitions(topic));
        sticky = true;
      }
    } else if (!Number.isInteger(partition) || partition < 0 || partition >= numPartitions) {
      callback(
        KafkaClientError.of(
          "UNKNOWN_TOPIC_OR_PARTITION",
          `Invalid partition given with record: ${partition} is not in the range [0...${numPartitions}).`,
        ),
        null,
      );
      return;
    }
    const now = this.time.milliseconds();
    const timestamp = record.timestamp === undefined ? now : Number(record.timestamp);
    const value = toBytes(record.value);
    const headers = record.headers ?? NO_HEADERS;
    const size = (key?.length ?? 0) + (value?.length ?? 0);
    if (size + 82 > this.config.maxRequestSize) {
      callback(
        KafkaClientError.of(
          "MESSAGE_TOO_LARGE",
          `The message is ${size + 82} bytes when serialized which is larger than ${this.config.maxRequestSize}, which is the value of the max.request.size configuration.`,
        ),
        null,
      );
      return;
    }
    try {
      const acc = this.accumulator;
      const n = acc.mustWait()
        ? -1
        : acc.append(topic, partition, timestamp, key, value, headers, callback, now);
      if (n >= 0) {
        this.appended(topic, partition, sticky, n);
        return;
      }
      const input: AppendInput = {
        topic,
        partition,
        timestamp,
        key,
        value,
        headers,
        callback,
        stickyPartition: sticky,
      };
      acc.enqueue(input, now, this.onAppended);
    } catch (e) {
      callback(e as Error, null);
      return;
    }
    this.sender.wakeup();
  }

  /** After a record went into a batch (now, or once memory was free): the sticky partitioner counts it. */
  private appended(topic: string, partition: number, stickyPartition: boolean, bytes: number): void {
    if (stickyPartition) {
      const numPartitions = this.metadata.partitionCount(topic);
      if (numPartitions !== undefined)
        this.sticky.onAppend(
          topic,
          partition,
          bytes,
          numPartitions,
          this.metadata.availablePartitions(topic),
        );
    }
    this.sender.wakeup();
  }

  private readonly onAppended = (input: AppendInput, bytes: number): void =>
    this.appended(input.topic, input.partition, input.stickyPartition, bytes);

  private notifySpace(): void {
    if (this.bufferFull) return;
    for (const r of this.spaceWaiters.splice(0)) r();
  }
}
