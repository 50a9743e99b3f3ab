// BrokerTopicStats: Kafka's kafka.server:type=BrokerTopicMetrics meters — per topic (`topic=<t>`) and the
// all-topics aggregate (no topic tag) — and where the broker marks them (as Kafka's ReplicaManager and
// KafkaApis do):
// - produce, per partition of a request: TotalProduceRequestsPerSec always; on a successful append
//   BytesInPerSec (the partition's record bytes as received) and MessagesInPerSec (the appended record
//   count, from the batch headers' offsets); FailedProduceRequestsPerSec on an unexpected failure (Kafka
//   does not count UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, MESSAGE_TOO_LARGE,
//   RECORD_LIST_TOO_LARGE, CORRUPT_MESSAGE, KAFKA_STORAGE_ERROR as failures of the broker);
// - fetch, per partition of a request: TotalFetchRequestsPerSec on the first read; FailedFetchRequestsPerSec
//   on an unexpected read error; BytesOutPerSec (consumers) or ReplicationBytesOutPerSec (followers, all
//   topics only) with the record bytes of the response.
// Exported as the JMX exporter's `<name>PerSec` Count rule names them:
// kafka_server_brokertopicmetrics_<name>_total{topic="t"} and, for the aggregate, without the label.

import type { MetricFamily, Sample } from "../../common/metrics/exposition.js";
import type { Meter } from "../../common/metrics/meter.js";
import type { MetricsRegistry } from "../../common/metrics/metrics-registry.js";
import { ErrorCode } from "../../protocol/errors.js";

/** Produce errors Kafka's appendToLocalLog does not count in FailedProduceRequestsPerSec. */
const EXPECTED_PRODUCE_ERRORS: ReadonlySet<string> = new Set([
  "UNKNOWN_TOPIC_OR_PARTITION",
  "NOT_LEADER_OR_FOLLOWER",
  "MESSAGE_TOO_LARGE",
  "RECORD_LIST_TOO_LARGE",
  "CORRUPT_MESSAGE",
  "KAFKA_STORAGE_ERROR",
]);

/** Fetch error codes Kafka's readFromLog does not count in FailedFetchRequestsPerSec. */
const EXPECTED_FETCH_ERRORS: ReadonlySet<number> = new Set([
  ErrorCode.NONE,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.UNKNOWN_LEADER_EPOCH,
  ErrorCode.FENCED_LEADER_EPOCH,
  ErrorCode.REPLICA_NOT_AVAILABLE,
  ErrorCode.KAFKA_STORAGE_ERROR,
  ErrorCode.OFFSET_OUT_OF_RANGE,
  ErrorCode.INCONSISTENT_TOPIC_ID,
]);

export function isFailedProduce(errorName: string): boolean {
  return errorName !== "NONE" && !EXPECTED_PRODUCE_ERRORS.has(errorName);
}

export function isFailedFetch(errorCode: number): boolean {
  return !EXPECTED_FETCH_ERRORS.has(errorCode);
}

/** The meters of one topic, or of all topics. */
export class BrokerTopicMetrics {
  readonly messagesIn: Meter;
  readonly bytesIn: Meter;
  readonly bytesOut: Meter;
  readonly failedProduceRequests: Meter;
  readonly failedFetchRequests: Meter;
  readonly totalProduceRequests: Meter;
  readonly totalFetchRequests: Meter;

  constructor(private readonly registry: MetricsRegistry) {
    this.messagesIn = registry.newMeter();
    this.bytesIn = registry.newMeter();
    this.bytesOut = registry.newMeter();
    this.failedProduceRequests = registry.newMeter();
    this.failedFetchRequests = registry.newMeter();
    this.totalProduceRequests = registry.newMeter();
    this.totalFetchRequests = registry.newMeter();
  }

  close(): void {
    for (const m of [
      this.messagesIn,
      this.bytesIn,
      this.bytesOut,
      this.failedProduceRequests,
      this.failedFetchRequests,
      this.totalProduceRequests,
      this.totalFetchRequests,
    ])
      this.registry.remove(m);
  }
}

/** [exported name, help, meter of a BrokerTopicMetrics]; aggregate-only meters are listed apart. */
const TOPIC_METERS: ReadonlyArray<readonly [string, string, (m: BrokerTopicMetrics) => Meter]> = [
  ["messagesin", "Records appended to the log (MessagesInPerSec)", (m) => m.messagesIn],
  ["bytesin", "Record bytes appended from producers (BytesInPerSec)", (m) => m.bytesIn],
  ["bytesout", "Record bytes sent to consumers in fetch responses (BytesOutPerSec)", (m) => m.bytesOut],
  [
    "failedproducerequests",
    "Partitions of produce requests that failed unexpectedly (FailedProduceRequestsPerSec)",
    (m) => m.failedProduceRequests,
  ],
  [
    "failedfetchrequests",
    "Partitions of fetch requests that failed unexpectedly (FailedFetchRequestsPerSec)",
    (m) => m.failedFetchRequests,
  ],
  [
    "totalproducerequests",
    "Partitions of produce requests (TotalProduceRequestsPerSec)",
    (m) => m.totalProduceRequests,
  ],
  [
    "totalfetchrequests",
    "Partitions of fetch requests read (TotalFetchRequestsPerSec)",
    (m) => m.totalFetchRequests,
  ],
];

export class BrokerTopicStats {
  readonly allTopicsStats: BrokerTopicMetrics;
  /** All topics only, as Kafka: record bytes sent to follower replicas. */
  readonly replicationBytesOut: Meter;
  private readonly stats = new Map<string, BrokerTopicMetrics>();

  constructor(private readonly registry: MetricsRegistry) {
    this.allTopicsStats = new BrokerTopicMetrics(registry);
    this.replicationBytesOut = registry.newMeter();
  }

  topicStats(topic: string): BrokerTopicMetrics {
    let m = this.stats.get(topic);
    if (m === undefined) {
      m = new BrokerTopicMetrics(this.registry);
      this.stats.set(topic, m);
    }
    return m;
  }

  /** Forgets a topic's meters (Kafka: when the topic is deleted from this broker). */
  removeMetrics(topic: string): void {
    this.stats.get(topic)?.close();
    this.stats.delete(topic);
  }

  /** One partition of a produce request was handled: `errorName` "NONE" when its batches were appended. */
  recordProduce(topic: string, errorName: string, bytes: number, messages: number): void {
    const t = this.topicStats(topic);
    const all = this.allTopicsStats;
    t.totalProduceRequests.mark();
    all.totalProduceRequests.mark();
    if (errorName === "NONE") {
      t.bytesIn.mark(bytes);
      all.bytesIn.mark(bytes);
      t.messagesIn.mark(messages);
      all.messagesIn.mark(messages);
    } else if (isFailedProduce(errorName)) {
      t.failedProduceRequests.mark();
      all.failedProduceRequests.mark();
    }
  }

  /** One partition of a fetch request was read (the first read of the request, not a purgatory re-read). */
  recordFetchRead(topic: string, errorCode: number): void {
    const t = this.topicStats(topic);
    t.totalFetchRequests.mark();
    this.allTopicsStats.totalFetchRequests.mark();
    if (isFailedFetch(errorCode)) {
      t.failedFetchRequests.mark();
      this.allTopicsStats.failedFetchRequests.mark();
    }
  }

  /** Record bytes of one partition in a fetch response (Kafka's updateBytesOut). */
  updateBytesOut(topic: string, isFollower: boolean, bytes: number): void {
    if (isFollower) {
      this.replicationBytesOut.mark(bytes);
    } else {
      this.topicStats(topic).bytesOut.mark(bytes);
      this.allTopicsStats.bytesOut.mark(bytes);
    }
  }

  collect(): MetricFamily[] {
    const families: MetricFamily[] = [];
    const topics = [...this.stats.keys()].sort();
    for (const [name, help, meter] of TOPIC_METERS) {
      const samples: Sample[] = [{ value: meter(this.allTopicsStats).count }];
      for (const topic of topics)
        samples.push({ labels: { topic }, value: meter(this.stats.get(topic)!).count });
      families.push({
        name: `kafka_server_brokertopicmetrics_${name}_total`,
        help,
        type: "counter",
        samples,
      });
    }
    families.push({
      name: "kafka_server_brokertopicmetrics_replicationbytesout_total",
      help: "Record bytes sent to follower replicas in fetch responses (ReplicationBytesOutPerSec)",
      type: "counter",
      samples: [{ value: this.replicationBytesOut.count }],
    });
    return families;
  }
}
