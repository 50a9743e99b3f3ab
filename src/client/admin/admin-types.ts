// The admin client's typed inputs and results (Kafka's Admin API classes: NewTopic, TopicDescription,
// ConfigEntry, OffsetSpec, ListOffsetsResultInfo, LogDirDescription, …) and the protocol enums they use
// (ConfigResource.Type, ConfigEntry.ConfigSource, AlterConfigOp.OpType). A per-resource failure is
// carried as `error: KafkaClientError` next to the resource it belongs to.

import type { KafkaClientError } from "../errors.js";

/** ConfigResource.Type ids on the wire. */
export const ConfigResourceType = { UNKNOWN: 0, TOPIC: 2, BROKER: 4, BROKER_LOGGER: 8 } as const;
export type ConfigResourceTypeName = "topic" | "broker" | "broker-logger";

/** ConfigEntry.ConfigSource ids on the wire, and Kafka's names for them. */
export const CONFIG_SOURCE_NAMES: Readonly<Record<number, string>> = {
  0: "UNKNOWN",
  1: "DYNAMIC_TOPIC_CONFIG",
  2: "DYNAMIC_BROKER_CONFIG",
  3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
  4: "STATIC_BROKER_CONFIG",
  5: "DEFAULT_CONFIG",
  6: "DYNAMIC_BROKER_LOGGER_CONFIG",
  7: "CLIENT_METRICS_CONFIG",
  8: "GROUP_CONFIG",
};

/** AlterConfigOp.OpType ids on the wire. */
export const AlterConfigOpType = { SET: 0, DELETE: 1, APPEND: 2, SUBTRACT: 3 } as const;
export type AlterConfigOpName = keyof typeof AlterConfigOpType;

export interface NewTopic {
  readonly name: string;
  /** -1 (or omitted) for the broker's num.partitions; ignored with `assignments`. */
  readonly numPartitions?: number;
  /** -1 (or omitted) for the broker's default.replication.factor; ignored with `assignments`. */
  readonly replicationFactor?: number;
  /** Replica broker ids per partition, partition 0 first. */
  readonly assignments?: ReadonlyArray<readonly number[]>;
  readonly configs?: Readonly<Record<string, string>>;
}

export interface CreateTopicResult {
  readonly name: string;
  readonly error?: KafkaClientError;
  readonly topicId?: string;
  readonly numPartitions?: number;
  readonly replicationFactor?: number;
  /** The topic's configs as created (v5+). */
  readonly configs?: ReadonlyArray<{ name: string; value: string | null; source: number }>;
}

export interface DeleteTopicResult {
  readonly name: string;
  readonly error?: KafkaClientError;
}

export interface TopicListing {
  readonly name: string;
  readonly topicId: string;
  readonly isInternal: boolean;
}

export interface TopicPartitionInfo {
  readonly partition: number;
  /** Leader broker id, -1 when the partition has none. */
  readonly leader: number;
  readonly leaderEpoch: number;
  readonly replicas: readonly number[];
  readonly isr: readonly number[];
  readonly offlineReplicas: readonly number[];
  /** LEADER_NOT_AVAILABLE and the like; the partition is still listed. */
  readonly error?: KafkaClientError;
}

export interface TopicDescription {
  readonly name: string;
  readonly topicId: string;
  readonly isInternal: boolean;
  readonly partitions: readonly TopicPartitionInfo[];
  readonly error?: KafkaClientError;
}

export interface NewPartitions {
  readonly topic: string;
  /** The new total partition count. */
  readonly totalCount: number;
  /** Replicas of each new partition. */
  readonly assignments?: ReadonlyArray<readonly number[]>;
}

export interface CreatePartitionsResult {
  readonly topic: string;
  readonly error?: KafkaClientError;
}

export interface ConfigResource {
  readonly type: ConfigResourceTypeName;
  /** Topic name, broker id, or "" for the cluster-wide broker default. */
  readonly name: string;
}

export interface ConfigSynonym {
  readonly name: string;
  readonly value: string | null;
  readonly source: number;
}

export interface ConfigEntry {
  readonly name: string;
  /** null when sensitive. */
  readonly value: string | null;
  readonly source: number;
  readonly isDefault: boolean;
  readonly isSensitive: boolean;
  readonly isReadOnly: boolean;
  readonly synonyms: readonly ConfigSynonym[];
  readonly documentation: string | null;
}

export interface DescribeConfigsResult {
  readonly resource: ConfigResource;
  readonly entries: readonly ConfigEntry[];
  readonly error?: KafkaClientError;
}

export interface AlterConfigOp {
  readonly name: string;
  readonly op: AlterConfigOpName;
  /** Required except for DELETE. */
  readonly value?: string;
}

export interface AlterConfigsResult {
  readonly resource: ConfigResource;
  readonly error?: KafkaClientError;
}

/**
 * OffsetSpec: latest (-1), earliest (-2), max-timestamp (-3, ListOffsets v7+), earliest-local (-4, v8+),
 * latest-tiered (-5, v9+) or a timestamp in ms.
 */
export type OffsetSpec =
  | "earliest"
  | "latest"
  | "max-timestamp"
  | "earliest-local"
  | "latest-tiered"
  | { timestamp: bigint | number };

export interface TopicPartitionRef {
  readonly topic: string;
  readonly partition: number;
}

export interface ListOffsetsResultInfo extends TopicPartitionRef {
  /** -1 when no offset matches (a timestamp after the last record). */
  readonly offset: bigint;
  readonly timestamp: bigint;
  readonly leaderEpoch: number;
  readonly error?: KafkaClientError;
}

export interface DeleteRecordsResultInfo extends TopicPartitionRef {
  readonly lowWatermark: bigint;
  readonly error?: KafkaClientError;
}

export interface ReplicaInfo extends TopicPartitionRef {
  readonly size: bigint;
  readonly offsetLag: bigint;
  readonly isFuture: boolean;
}

export interface LogDirDescription {
  readonly path: string;
  readonly error?: KafkaClientError;
  readonly replicas: readonly ReplicaInfo[];
  /** -1 when the broker does not report it (DescribeLogDirs < v4). */
  readonly totalBytes: bigint;
  readonly usableBytes: bigint;
}

export interface BrokerLogDirs {
  readonly brokerId: number;
  readonly logDirs: readonly LogDirDescription[];
  readonly error?: KafkaClientError;
}

export interface ClusterDescription {
  readonly clusterId: string;
  readonly controllerId: number;
  readonly brokers: ReadonlyArray<{ id: number; host: string; port: number; rack: string | null }>;
}

/** Throws the first per-resource error of `results`, if any. */
export function throwFirstError(results: Iterable<{ error?: KafkaClientError }>): void {
  for (const r of results) if (r.error) throw r.error;
}

/** Partitions grouped by topic, in first-seen order (the shape of most Kafka requests). */
export function groupPartitionsByTopic(partitions: readonly TopicPartitionRef[]): Map<string, number[]> {
  const m = new Map<string, number[]>();
  for (const p of partitions) {
    const l = m.get(p.topic);
    if (l) l.push(p.partition);
    else m.set(p.topic, [p.partition]);
  }
  return m;
}
