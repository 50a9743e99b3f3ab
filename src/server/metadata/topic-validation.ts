// What a topic request may ask for, checked before anything is written: topic names (Kafka's
// org.apache.kafka.common.internals.Topic: validate, hasCollisionChars, unifyCollisionChars), the most
// partitions one request may add, and explicit replica assignments (Kafka's
// AdminZkClient.validateReplicaAssignment). Pure functions throwing KafkaError with Kafka's codes and
// messages; whether a name is taken is the AdminZkClient's question, as it reads the cluster.

import { KafkaError } from "../../protocol/errors.js";

export const MAX_TOPIC_NAME_LENGTH = 249;

/** Kafka's Topic.validate: throws INVALID_TOPIC_EXCEPTION with Kafka's message. */
export function validateTopicName(name: string): void {
  if (name.length === 0)
    throw new KafkaError("INVALID_TOPIC_EXCEPTION", "Topic name is illegal, it can't be empty");
  if (name === "." || name === "..") {
    throw new KafkaError("INVALID_TOPIC_EXCEPTION", 'Topic name cannot be "." or ".."');
  }
  if (name.length > MAX_TOPIC_NAME_LENGTH) {
    throw new KafkaError(
      "INVALID_TOPIC_EXCEPTION",
      `Topic name is illegal, it can't be longer than ${MAX_TOPIC_NAME_LENGTH} characters, topic name: ${name}`,
    );
  }
  if (!/^[a-zA-Z0-9._-]+$/.test(name)) {
    throw new KafkaError(
      "INVALID_TOPIC_EXCEPTION",
      `Topic name "${name}" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`,
    );
  }
}

export function isValidTopicName(name: string): boolean {
  try {
    validateTopicName(name);
    return true;
  } catch {
    return false;
  }
}

/** '.' and '_' collide in metric names: "a.b" and "a_b" cannot both exist (Kafka's Topic.unifyCollisionChars). */
export function unifyCollisionChars(name: string): string {
  return name.replace(/\./g, "_");
}

/** The first of `existing` (other than `name` itself) whose metric name equals `name`'s, if any. */
export function collidingTopic(name: string, existing: Iterable<string>): string | undefined {
  const unified = unifyCollisionChars(name);
  for (const t of existing) if (t !== name && unifyCollisionChars(t) === unified) return t;
  return undefined;
}

/**
 * Most partitions one request may create, as Kafka's controller allows (MAX_PARTITIONS_PER_BATCH):
 * a bad or hostile count is refused before anything is allocated for it.
 */
export const MAX_PARTITIONS_PER_BATCH = 10_000;

/** POLICY_VIOLATION when one request would create more than MAX_PARTITIONS_PER_BATCH partitions. */
export function checkPartitionBatch(count: number): void {
  if (count > MAX_PARTITIONS_PER_BATCH) {
    throw new KafkaError("POLICY_VIOLATION", "Excessively large number of partitions per request.");
  }
}

/**
 * Kafka's AdminZkClient.validateReplicaAssignment for explicit assignments: partition ids consecutive from
 * `firstNew`, at least one replica, no broker twice, the same replication factor everywhere (and equal to
 * `expectedRf` when adding partitions to a topic), only brokers in `availableBrokers`.
 */
export function validateReplicaAssignment(
  assignment: ReadonlyMap<number, readonly number[]>,
  firstNew: number,
  expectedRf: number | undefined,
  availableBrokers: ReadonlySet<number>,
): void {
  const ids = [...assignment.keys()].sort((a, b) => a - b);
  ids.forEach((p, i) => {
    if (p !== firstNew + i) {
      throw new KafkaError(
        "INVALID_REPLICA_ASSIGNMENT",
        `Unexpected existing replica assignment for topic, partition ids must be consecutive from ${firstNew}: ${ids.join(", ")}`,
      );
    }
  });
  const rf = expectedRf ?? assignment.get(ids[0])?.length ?? 0;
  for (const p of ids) {
    const replicas = assignment.get(p)!;
    if (replicas.length === 0) {
      throw new KafkaError(
        "INVALID_REPLICA_ASSIGNMENT",
        `Cannot have replication factor of 0 for partition id ${p}.`,
      );
    }
    if (new Set(replicas).size !== replicas.length) {
      throw new KafkaError(
        "INVALID_REPLICA_ASSIGNMENT",
        `Duplicate brokers not allowed in replica assignment: ${replicas.join(", ")} for partition id ${p}.`,
      );
    }
    if (replicas.length !== rf) {
      throw new KafkaError(
        "INVALID_REPLICA_ASSIGNMENT",
        expectedRf === undefined
          ? "All partitions should have the same number of replicas"
          : `Inconsistent replication factor between partitions, partition 0 has ${expectedRf} while partition ${p} has ${replicas.length}.`,
      );
    }
    const unknown = replicas.filter((b) => !availableBrokers.has(b));
    if (unknown.length > 0) {
      throw new KafkaError(
        "INVALID_REPLICA_ASSIGNMENT",
        `Unknown broker(s) in replica assignment: ${unknown.join(", ")}.`,
      );
    }
  }
}
