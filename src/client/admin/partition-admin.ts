// PartitionAdmin: the Admin API calls that move partition leadership and replicas (Kafka's
// Admin.electLeaders, alterPartitionReassignments, listPartitionReassignments), each sent to the
// controller (NOT_CONTROLLER → refresh metadata, retry). Per-partition errors come back as
// `error: KafkaClientError` in the results.
//
// Usage:
//   const partitions = new PartitionAdmin(cluster);
//   const results = await partitions.electLeaders("preferred", [{ topic: "t", partition: 0 }]);

import { ErrorCode } from "../../protocol/errors.js";
import { Apis } from "../../protocol/generated/api-table.js";
import { KafkaClientError } from "../errors.js";
import type { ClusterClient } from "../network/cluster-client.js";
import { groupPartitionsByTopic, type TopicPartitionRef } from "./admin-types.js";

/** Kafka's ElectionType. */
export type ElectionType = "preferred" | "unclean";

/** A reassignment in progress (Kafka's PartitionReassignment). */
export interface PartitionReassignment extends TopicPartitionRef {
  readonly replicas: number[];
  readonly addingReplicas: number[];
  readonly removingReplicas: number[];
}

export interface ReassignmentResult extends TopicPartitionRef {
  readonly error?: KafkaClientError;
}

export interface ElectionResult extends TopicPartitionRef {
  /** Absent when a leader was elected; ELECTION_NOT_NEEDED when the right one already leads. */
  readonly error?: KafkaClientError;
}

function byTopicAndPartition(a: TopicPartitionRef, b: TopicPartitionRef): number {
  return a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1;
}

/** One partition's outcome: just its name when the error code is NONE, else with the error. */
function partitionOutcome(
  topic: string,
  partition: number,
  errorCode: number,
  errorMessage: string | null,
): TopicPartitionRef & { readonly error?: KafkaClientError } {
  return errorCode === ErrorCode.NONE
    ? { topic, partition }
    : { topic, partition, error: new KafkaClientError(errorCode, errorMessage) };
}

export class PartitionAdmin {
  constructor(
    readonly cluster: ClusterClient,
    private readonly timeoutMs = cluster.defaultApiTimeoutMs,
  ) {}

  /**
   * ElectLeaders: `partitions` undefined asks for every partition (the controller then answers only those
   * that needed an election). Sorted by topic and partition.
   */
  async electLeaders(
    type: ElectionType,
    partitions: readonly TopicPartitionRef[] | undefined,
  ): Promise<ElectionResult[]> {
    const res = await this.cluster.sendToController(
      Apis.ElectLeaders,
      (version) => {
        if (version < 1 && type !== "preferred")
          throw KafkaClientError.of(
            "UNSUPPORTED_VERSION",
            "The broker does not support unclean leader elections (ElectLeaders v1)",
          );
        return {
          electionType: type === "preferred" ? 0 : 1,
          topicPartitions:
            partitions === undefined
              ? null
              : [...groupPartitionsByTopic(partitions)].map(([topic, ps]) => ({ topic, partitions: ps })),
          timeoutMs: this.timeoutMs,
        };
      },
      (r) => [
        r.errorCode,
        ...r.replicaElectionResults.flatMap((t) => t.partitionResult.map((p) => p.errorCode)),
      ],
    );
    if (res.errorCode !== ErrorCode.NONE) throw new KafkaClientError(res.errorCode);
    return res.replicaElectionResults
      .flatMap((t): ElectionResult[] =>
        t.partitionResult.map((p) => partitionOutcome(t.topic, p.partitionId, p.errorCode, p.errorMessage)),
      )
      .sort(byTopicAndPartition);
  }

  /**
   * AlterPartitionReassignments: each partition to its new replicas, or (replicas null) its reassignment
   * cancelled. Sorted by topic and partition.
   */
  async alterPartitionReassignments(
    reassignments: ReadonlyArray<TopicPartitionRef & { replicas: readonly number[] | null }>,
  ): Promise<ReassignmentResult[]> {
    const topics = new Map<string, Array<{ partitionIndex: number; replicas: number[] | null }>>();
    for (const r of reassignments) {
      const l = topics.get(r.topic) ?? [];
      l.push({ partitionIndex: r.partition, replicas: r.replicas === null ? null : [...r.replicas] });
      topics.set(r.topic, l);
    }
    const res = await this.cluster.sendToController(
      Apis.AlterPartitionReassignments,
      () => ({
        timeoutMs: this.timeoutMs,
        topics: [...topics].map(([name, partitions]) => ({ name, partitions })),
      }),
      (r) => [r.errorCode],
    );
    if (res.errorCode !== ErrorCode.NONE) throw new KafkaClientError(res.errorCode, res.errorMessage);
    return res.responses
      .flatMap((t): ReassignmentResult[] =>
        t.partitions.map((p) => partitionOutcome(t.name, p.partitionIndex, p.errorCode, p.errorMessage)),
      )
      .sort(byTopicAndPartition);
  }

  /** ListPartitionReassignments: those in progress (of `partitions`, or all). Sorted by topic and partition. */
  async listPartitionReassignments(
    partitions?: readonly TopicPartitionRef[],
  ): Promise<PartitionReassignment[]> {
    const res = await this.cluster.sendToController(
      Apis.ListPartitionReassignments,
      () => ({
        timeoutMs: this.timeoutMs,
        topics:
          partitions === undefined
            ? null
            : [...groupPartitionsByTopic(partitions)].map(([name, partitionIndexes]) => ({
                name,
                partitionIndexes,
              })),
      }),
      (r) => [r.errorCode],
    );
    if (res.errorCode !== ErrorCode.NONE) throw new KafkaClientError(res.errorCode, res.errorMessage);
    return res.topics
      .flatMap((t) =>
        t.partitions.map((p) => ({
          topic: t.name,
          partition: p.partitionIndex,
          replicas: p.replicas,
          addingReplicas: p.addingReplicas,
          removingReplicas: p.removingReplicas,
        })),
      )
      .sort(byTopicAndPartition);
  }
}
