// GroupCoordinatorConfig: what the group coordinator and its GroupMetadataManager take from the broker's
// config (Kafka's GroupConfig and OffsetConfig, built from KafkaConfig in GroupCoordinator.apply): the
// classic groups' group.* and offset* keys, the KIP-848 groups' group.consumer.* keys, and the naming of
// group.consumer.assignors.

import type { KafkaConfig } from "../../kafka-config.js";
import type { GroupConfig } from "./group-coordinator.js";
import type { GroupMetadataManagerConfig } from "./group-metadata-manager.js";

/** group.* and group.consumer.* of the broker's config. */
export function groupConfigFrom(config: KafkaConfig): GroupConfig {
  return {
    groupMinSessionTimeoutMs: config.getInt("group.min.session.timeout.ms"),
    groupMaxSessionTimeoutMs: config.getInt("group.max.session.timeout.ms"),
    groupInitialRebalanceDelayMs: config.getInt("group.initial.rebalance.delay.ms"),
    groupMaxSize: config.getInt("group.max.size"),
    offsetMetadataMaxBytes: config.getInt("offset.metadata.max.bytes"),
    consumerGroup: {
      sessionTimeoutMs: config.getInt("group.consumer.session.timeout.ms"),
      heartbeatIntervalMs: config.getInt("group.consumer.heartbeat.interval.ms"),
      maxSize: config.getInt("group.consumer.max.size"),
      assignors: config.getList("group.consumer.assignors").map(consumerGroupAssignorName),
    },
  };
}

/**
 * An entry of group.consumer.assignors as the clients name it in ConsumerGroupHeartbeat: Kafka takes class
 * names (org.apache.kafka.coordinator.group.assignor.UniformAssignor → "uniform") or, in 4.0, the short names.
 */
export function consumerGroupAssignorName(entry: string): string {
  return entry
    .trim()
    .replace(/^org\.apache\.kafka\.coordinator\.group\.assignor\.(\w+)Assignor$/, "$1")
    .toLowerCase();
}

/** offsets.* of the broker's config (Kafka's OffsetConfig). */
export function offsetConfigFrom(config: KafkaConfig): GroupMetadataManagerConfig {
  return {
    offsetsTopicNumPartitions: config.getInt("offsets.topic.num.partitions"),
    offsetsRetentionMs: config.getInt("offsets.retention.minutes") * 60_000,
    offsetsRetentionCheckIntervalMs: config.getLong("offsets.retention.check.interval.ms"),
    offsetCommitTimeoutMs: config.getInt("offsets.commit.timeout.ms"),
    offsetsLoadBufferSize: config.getInt("offsets.load.buffer.size"),
  };
}
