// What `reassign-partitions --generate` and `decommission-broker` plan from: the cluster's brokers (with
// racks), the current replicas of topics, and a proposed assignment of those topics over a set of
// brokers, made by Kafka's AdminUtils.assignReplicasToBrokers (rack-aware unless disabled) with each
// topic's partition count and replication factor unchanged.

import type { AdminClient } from "../../client/admin/admin-client.js";
import {
  assignReplicasToBrokers,
  brokerPlacements,
  RackAwareMode,
} from "../../server/metadata/replica-assignment.js";
import { UsageError } from "../args.js";

/** topic → partition → replicas. */
export type TopicAssignments = Map<string, Map<number, number[]>>;

/** The live brokers of the cluster (DescribeCluster) with their racks. */
export async function clusterBrokers(
  admin: AdminClient,
): Promise<Array<{ id: number; rack: string | null }>> {
  return (await admin.describeCluster()).brokers.map((b) => ({ id: b.id, rack: b.rack }));
}

/** The current replicas of every partition of `topics`; topics that do not exist are left out. */
export async function currentAssignment(
  admin: AdminClient,
  topics: readonly string[],
): Promise<TopicAssignments> {
  const out: TopicAssignments = new Map();
  for (const d of await admin.describeTopics([...new Set(topics)])) {
    if (d.error) {
      if (d.error.errorName === "UNKNOWN_TOPIC_OR_PARTITION") continue;
      throw d.error;
    }
    out.set(d.name, new Map(d.partitions.map((p) => [p.partition, [...p.replicas]])));
  }
  return out;
}

/**
 * Kafka's calculateAssignment: every partition of `current`'s topics placed over `brokerIds` (which must
 * be among `brokers`); `what` names the broker list in errors.
 */
export function proposeAssignment(
  current: TopicAssignments,
  brokers: ReadonlyArray<{ id: number; rack: string | null }>,
  brokerIds: readonly number[],
  rackAware: boolean,
  what: string,
): TopicAssignments {
  const chosen = brokers.filter((b) => brokerIds.includes(b.id));
  const withRack = chosen.filter((b) => b.rack !== null).length;
  if (rackAware && withRack !== 0 && withRack !== chosen.length)
    throw new UsageError(
      "Not all brokers have rack information. Add --disable-rack-aware in command line to make replica assignment without rack information.",
    );
  const placements = brokerPlacements(chosen, rackAware ? RackAwareMode.Enforced : RackAwareMode.Disabled);
  const proposed: TopicAssignments = new Map();
  for (const [topic, parts] of current) {
    const rf = parts.get(0)?.length ?? [...parts.values()][0]?.length ?? 0;
    if (rf > placements.length)
      throw new UsageError(
        `Replication factor: ${rf} larger than available brokers: ${placements.length} (topic ${topic}, ${what} ${brokerIds.join(",")})`,
      );
    proposed.set(topic, assignReplicasToBrokers(placements, parts.size, rf));
  }
  return proposed;
}
