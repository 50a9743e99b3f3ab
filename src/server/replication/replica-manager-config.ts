// ReplicaManagerConfig from the broker's config (Kafka's ReplicaManager reads KafkaConfig and the topic's
// LogConfig): the high-watermark checkpoint interval, fetch.max.bytes, and min.insync.replicas per topic —
// the topic's own value when it is a positive integer, else the broker's — which an acks=all produce
// needs in the ISR (NOT_ENOUGH_REPLICAS otherwise).

import type { KafkaConfig } from "../kafka-config.js";
import type { MetadataCache } from "../metadata/metadata-cache.js";
import type { ReplicaManagerConfig } from "./replica-manager.js";

export function replicaManagerConfigFrom(config: KafkaConfig, cache: MetadataCache): ReplicaManagerConfig {
  return {
    replicaHighWatermarkCheckpointIntervalMs: config.replicaHighWatermarkCheckpointIntervalMs,
    minInsyncReplicas: (topic) =>
      minInsyncReplicasOf(cache.topicConfig(topic), config.getInt("min.insync.replicas")),
    fetchMaxBytes: config.getInt("fetch.max.bytes"),
    metadataCacheContains: (tp) => cache.partitionState(tp.topic, tp.partition) !== undefined,
  };
}

/** A topic's min.insync.replicas: its config's value when a positive integer, else the broker's default. */
export function minInsyncReplicasOf(
  topicConfig: Readonly<Record<string, string>>,
  brokerDefault: number,
): number {
  const v = Number(topicConfig["min.insync.replicas"]);
  return Number.isInteger(v) && v > 0 ? v : brokerDefault;
}
