// Partition assignors of the classic consumer group protocol (Kafka's ConsumerPartitionAssignor): the
// group leader runs the chosen one over every member's subscription. "range" (RangeAssignor, first in
// Kafka 3.x's default partition.assignment.strategy): per topic, the subscribed members in MemberInfo
// order get consecutive ranges, the first `partitions % members` one partition more. "roundrobin"
// (RoundRobinAssignor): every partition of the sorted topics dealt in turn to the members in MemberInfo
// order, skipping members not subscribed to its topic. MemberInfo order: static members
// (group.instance.id) first by instance id, then dynamic members by member id.

import type { TopicPartition } from "../../common/topic-partition.js";

export interface MemberSubscription {
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly topics: readonly string[];
}

export interface PartitionAssignor {
  /** The protocol name sent in JoinGroup ("range", "roundrobin"). */
  readonly name: string;
  /** Partitions by member id (every member present, possibly with none). */
  assign(
    partitionsPerTopic: ReadonlyMap<string, number>,
    members: readonly MemberSubscription[],
  ): Map<string, TopicPartition[]>;
}

/** Kafka's MemberInfo.compareTo (Java String order = UTF-16 code units, as JavaScript compares). */
export function compareMembers(a: MemberSubscription, b: MemberSubscription): number {
  const cmp = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);
  if (a.groupInstanceId !== null && b.groupInstanceId !== null)
    return cmp(a.groupInstanceId, b.groupInstanceId);
  if (a.groupInstanceId !== null) return -1;
  if (b.groupInstanceId !== null) return 1;
  return cmp(a.memberId, b.memberId);
}

function emptyAssignment(members: readonly MemberSubscription[]): Map<string, TopicPartition[]> {
  return new Map(members.map((m) => [m.memberId, []]));
}

export const RANGE_ASSIGNOR: PartitionAssignor = {
  name: "range",
  assign(partitionsPerTopic, members) {
    const out = emptyAssignment(members);
    const topics = [...new Set(members.flatMap((m) => m.topics))].sort();
    for (const topic of topics) {
      const count = partitionsPerTopic.get(topic);
      if (count === undefined) continue; // unknown topic: nothing to assign
      const consumers = members.filter((m) => m.topics.includes(topic)).sort(compareMembers);
      const per = Math.floor(count / consumers.length);
      const extra = count % consumers.length;
      consumers.forEach((m, i) => {
        const start = per * i + Math.min(i, extra);
        const length = per + (i < extra ? 1 : 0);
        const list = out.get(m.memberId)!;
        for (let p = start; p < start + length; p++) list.push({ topic, partition: p });
      });
    }
    return out;
  },
};

export const ROUND_ROBIN_ASSIGNOR: PartitionAssignor = {
  name: "roundrobin",
  assign(partitionsPerTopic, members) {
    const out = emptyAssignment(members);
    const consumers = [...members].sort(compareMembers);
    if (consumers.length === 0) return out;
    const topics = [...new Set(members.flatMap((m) => m.topics))].sort();
    let next = 0;
    for (const topic of topics) {
      const count = partitionsPerTopic.get(topic);
      if (count === undefined) continue;
      for (let p = 0; p < count; p++) {
        // The next member (circularly) subscribed to this topic; some member is, or the topic is not here.
        while (!consumers[next % consumers.length].topics.includes(topic)) next++;
        out.get(consumers[next % consumers.length].memberId)!.push({ topic, partition: p });
        next++;
      }
    }
    return out;
  },
};

const BY_NAME = new Map<string, PartitionAssignor>([
  ["range", RANGE_ASSIGNOR],
  ["org.apache.kafka.clients.consumer.RangeAssignor", RANGE_ASSIGNOR],
  ["roundrobin", ROUND_ROBIN_ASSIGNOR],
  ["org.apache.kafka.clients.consumer.RoundRobinAssignor", ROUND_ROBIN_ASSIGNOR],
]);

/** The assignor for a partition.assignment.strategy entry (short name or Kafka class name). */
export function assignorFor(name: string): PartitionAssignor | undefined {
  return BY_NAME.get(name.trim());
}
