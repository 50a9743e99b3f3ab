// The server-side "range" assignor (Kafka's RangeAssignor): topic by topic, the members subscribed to the
// topic (sorted by member id) each get one contiguous range of its partitions; the first
// `partitions % members` of them get one partition more. Members subscribed to the same topics with the
// same partition counts thus get the same partition numbers on each topic (co-partitioning).

import type { AssignmentSpec } from "./consumer-group-assignor.js";
import type { Assignment } from "./consumer-group-member.js";

export function rangeAssign(spec: AssignmentSpec): Map<string, Assignment> {
  const out = new Map<string, Map<string, Set<number>>>();
  const memberIds = [...spec.members.keys()].sort();
  for (const id of memberIds) out.set(id, new Map());
  for (const topicId of [...spec.topics.keys()].sort()) {
    const n = spec.topics.get(topicId) ?? 0;
    const subscribers = memberIds.filter((id) => spec.members.get(id)!.subscribedTopicIds.has(topicId));
    if (subscribers.length === 0 || n <= 0) continue;
    const quota = Math.floor(n / subscribers.length);
    const extra = n % subscribers.length;
    let next = 0;
    subscribers.forEach((id, i) => {
      const count = quota + (i < extra ? 1 : 0);
      if (count === 0) return;
      const ps = new Set<number>();
      for (let p = next; p < next + count; p++) ps.add(p);
      next += count;
      out.get(id)!.set(topicId, ps);
    });
  }
  return out;
}
