// The server-side assignors of KIP-848 (Kafka's ConsumerGroupPartitionAssignor): given the members'
// subscriptions (as topic ids), the partition count of each subscribed topic and the previous target
// assignment, compute the new target assignment of every member. "uniform" (the default of
// group.consumer.assignors) and "range" are registered here, in Kafka's order.

import type { Assignment } from "./consumer-group-member.js";
import { rangeAssign } from "./consumer-group-range-assignor.js";
import { uniformAssign } from "./consumer-group-uniform-assignor.js";

export interface AssignmentMemberSpec {
  readonly subscribedTopicIds: ReadonlySet<string>;
  /** The member's previous target assignment (assignors may keep it: stickiness). */
  readonly previousAssignment: Assignment;
}

export interface AssignmentSpec {
  /** memberId → spec. */
  readonly members: ReadonlyMap<string, AssignmentMemberSpec>;
  /** topicId → number of partitions, for every subscribed topic that exists. */
  readonly topics: ReadonlyMap<string, number>;
}

export type PartitionAssignor = (spec: AssignmentSpec) => Map<string, Assignment>;

/** group.consumer.assignors: the first one is the default. */
export const CONSUMER_GROUP_ASSIGNORS: ReadonlyMap<string, PartitionAssignor> = new Map([
  ["uniform", uniformAssign],
  ["range", rangeAssign],
]);

export const DEFAULT_CONSUMER_GROUP_ASSIGNOR = "uniform";

/** Members sorted by id, as both assignors iterate them. */
export function sortedMemberIds(spec: AssignmentSpec): string[] {
  return [...spec.members.keys()].sort();
}

/** The topics in a deterministic order (by id). */
export function sortedTopicIds(spec: AssignmentSpec): string[] {
  return [...spec.topics.keys()].sort();
}
