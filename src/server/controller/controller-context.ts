// ControllerContext: the active controller's cached view of the cluster (Kafka's ControllerContext), read
// from the store once at failover and then kept up to date by the controller's own writes and watches,
// so a broker change never re-reads every partition state. Owns: the controller epoch and its znode
// version, the live brokers with their registrations and epochs (czxid), brokers shutting down, topic
// ids, replica assignments (with the adding and removing replicas of partitions being reassigned), each
// partition's leadership (LeaderAndIsr + znode version) and state-machine state, and the topics queued for
// deletion.

import type { LeaderIsrAndZkVersion } from "../metadata/kafka-zk-client.js";
import type { BrokerRegistration } from "../metadata/zk-data.js";

/** Kafka's PartitionState of the partition state machine. */
export type PartitionStateName =
  | "NewPartition"
  | "OnlinePartition"
  | "OfflinePartition"
  | "NonExistentPartition";

export interface TopicPartitionKey {
  readonly topic: string;
  readonly partition: number;
}

export function tpKey(topic: string, partition: number): string {
  return `${topic}-${partition}`;
}

export interface LiveBroker {
  readonly reg: BrokerRegistration;
  /** The broker epoch: the czxid of its registration znode. */
  readonly epoch: bigint;
}

export class ControllerContext {
  epoch = 0;
  epochZkVersion = 0;
  readonly liveBrokers = new Map<number, LiveBroker>();
  readonly shuttingDownBrokerIds = new Set<number>();
  readonly topicIds = new Map<string, string>();
  /** topic → partition → replicas (assignment order; while reassigned: the target then the original ones). */
  readonly assignments = new Map<string, Map<number, number[]>>();
  /** "topic-partition" → the replicas being added and removed, for the partitions being reassigned. */
  readonly reassigning = new Map<string, { readonly adding: number[]; readonly removing: number[] }>();
  /** "topic-partition" → leadership. */
  readonly leadership = new Map<string, LeaderIsrAndZkVersion>();
  readonly partitionStates = new Map<string, PartitionStateName>();
  readonly topicsToBeDeleted = new Set<string>();
  /**
   * broker → "topic-partition" of its replicas whose log dir failed or is full (Kafka's
   * replicasOnOfflineDirs, from LeaderAndIsr responses with KAFKA_STORAGE_ERROR): not eligible as leaders.
   */
  readonly replicasOnOfflineDirs = new Map<number, Set<string>>();

  reset(): void {
    this.replicasOnOfflineDirs.clear();
    this.liveBrokers.clear();
    this.shuttingDownBrokerIds.clear();
    this.topicIds.clear();
    this.assignments.clear();
    this.reassigning.clear();
    this.leadership.clear();
    this.partitionStates.clear();
    this.topicsToBeDeleted.clear();
  }

  allTopics(): string[] {
    return [...this.assignments.keys()];
  }

  isLive(brokerId: number): boolean {
    return this.liveBrokers.has(brokerId);
  }

  /** Kafka's isReplicaOnline: the broker is live and the replica's log dir is not offline (nor full). */
  isReplicaOnline(brokerId: number, topic: string, partition: number): boolean {
    return this.isLive(brokerId) && !this.replicasOnOfflineDirs.get(brokerId)?.has(tpKey(topic, partition));
  }

  /** Live and not shutting down (Kafka's liveBrokerIds). */
  isLiveAndNotShuttingDown(brokerId: number): boolean {
    return this.liveBrokers.has(brokerId) && !this.shuttingDownBrokerIds.has(brokerId);
  }

  liveBrokerIds(): number[] {
    return [...this.liveBrokers.keys()].sort((a, b) => a - b);
  }

  replicasFor(topic: string, partition: number): number[] {
    return this.assignments.get(topic)?.get(partition) ?? [];
  }

  partitionsOfTopic(topic: string): TopicPartitionKey[] {
    const a = this.assignments.get(topic);
    if (!a) return [];
    return [...a.keys()].sort((x, y) => x - y).map((partition) => ({ topic, partition }));
  }

  allPartitions(): TopicPartitionKey[] {
    const out: TopicPartitionKey[] = [];
    for (const t of this.assignments.keys()) out.push(...this.partitionsOfTopic(t));
    return out;
  }

  /** Partitions with a replica on `brokerId`. */
  partitionsOnBroker(brokerId: number): TopicPartitionKey[] {
    const out: TopicPartitionKey[] = [];
    for (const [topic, parts] of this.assignments) {
      for (const [partition, replicas] of parts)
        if (replicas.includes(brokerId)) out.push({ topic, partition });
    }
    return out;
  }

  /** Partitions whose current leader is `brokerId`. */
  partitionsLedBy(brokerId: number): TopicPartitionKey[] {
    return this.allPartitions().filter(
      (tp) => this.leadership.get(tpKey(tp.topic, tp.partition))?.leaderAndIsr.leader === brokerId,
    );
  }

  stateOf(tp: TopicPartitionKey): PartitionStateName {
    return this.partitionStates.get(tpKey(tp.topic, tp.partition)) ?? "NonExistentPartition";
  }

  removeTopic(topic: string): void {
    for (const tp of this.partitionsOfTopic(topic)) {
      const k = tpKey(tp.topic, tp.partition);
      this.leadership.delete(k);
      this.partitionStates.delete(k);
      this.reassigning.delete(k);
    }
    this.assignments.delete(topic);
    this.topicIds.delete(topic);
    this.topicsToBeDeleted.delete(topic);
  }
}
