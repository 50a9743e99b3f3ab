// The target assignment of a KIP-848 consumer group (Kafka's TargetAssignmentBuilder, with the subscription
// metadata it is computed from, Kafka's ConsumerGroup.computeSubscriptionMetadata):
//   - subscription metadata: the id and partition count of every topic some member subscribes to, as the
//     cluster metadata knows them now; a change (a topic created, deleted or given more partitions) is a
//     ConsumerGroupPartitionMetadata record and bumps the group epoch;
//   - the target assignment: the group's server assignor (the one the members prefer most, else the first
//     of group.consumer.assignors) run over the members' subscriptions resolved to topic ids, each with its
//     previous target; a ConsumerGroupTargetAssignmentMember record for every member whose target changed,
//     then the ConsumerGroupTargetAssignmentMetadata record that sets the assignment epoch to the group epoch.
// Pure: records are computed from the group's state; the caller writes and replays them.

import type { ConsumerGroup } from "./consumer-group.js";
import { type AssignmentMemberSpec, CONSUMER_GROUP_ASSIGNORS } from "./consumer-group-assignor.js";
import { assignmentsEqual, type ConsumerGroupMember, EMPTY_ASSIGNMENT } from "./consumer-group-member.js";
import type { ConsumerGroupRecord, SubscribedTopicMetadata } from "./consumer-group-records.js";

/** What the coordinator needs of the cluster metadata (the broker's MetadataCache). */
export interface TopicsImage {
  topicId(topic: string): string | undefined;
  topicName(topicId: string): string | undefined;
  numPartitions(topic: string): number | undefined;
}

/** The topic ids a member's subscription resolves to under the group's subscription metadata. */
export function subscribedTopicIds(group: ConsumerGroup, m: ConsumerGroupMember): Set<string> {
  const out = new Set<string>();
  for (const name of m.subscribedTopicNames) {
    const t = group.subscriptionMetadata.get(name);
    if (t !== undefined) out.add(t.topicId);
  }
  return out;
}

/** The ConsumerGroupPartitionMetadata record to write when the subscribed topics' metadata changed, else null. */
export function subscriptionMetadataUpdate(
  group: ConsumerGroup,
  topics: TopicsImage,
): ConsumerGroupRecord | null {
  const next: SubscribedTopicMetadata[] = [];
  for (const name of [...group.subscribedTopicNames()].sort()) {
    const topicId = topics.topicId(name);
    const numPartitions = topics.numPartitions(name);
    if (topicId === undefined || numPartitions === undefined) continue;
    next.push({ topicId, topicName: name, numPartitions });
  }
  const cur = group.subscriptionMetadata;
  const same =
    next.length === cur.size &&
    next.every((t) => {
      const c = cur.get(t.topicName);
      return c !== undefined && c.topicId === t.topicId && c.numPartitions === t.numPartitions;
    });
  if (same) return null;
  return { type: "partition-metadata", groupId: group.groupId, topics: next };
}

/** Kafka's TargetAssignmentBuilder.build: the members' changed targets, then the new assignment epoch. */
export function buildTargetAssignment(group: ConsumerGroup, assignorName: string): ConsumerGroupRecord[] {
  const assignor = CONSUMER_GROUP_ASSIGNORS.get(assignorName) ?? CONSUMER_GROUP_ASSIGNORS.get("uniform")!;
  const members = new Map<string, AssignmentMemberSpec>();
  for (const m of group.members.values()) {
    members.set(m.memberId, {
      subscribedTopicIds: subscribedTopicIds(group, m),
      previousAssignment: group.targetAssignment.get(m.memberId) ?? EMPTY_ASSIGNMENT,
    });
  }
  const topics = new Map([...group.subscriptionMetadata.values()].map((t) => [t.topicId, t.numPartitions]));
  const records: ConsumerGroupRecord[] = [];
  for (const [memberId, assignment] of assignor({ members, topics })) {
    if (!assignmentsEqual(group.targetAssignment.get(memberId) ?? EMPTY_ASSIGNMENT, assignment))
      records.push({ type: "target-assignment", groupId: group.groupId, memberId, assignment });
  }
  records.push({ type: "target-assignment-epoch", groupId: group.groupId, epoch: group.groupEpoch });
  return records;
}
