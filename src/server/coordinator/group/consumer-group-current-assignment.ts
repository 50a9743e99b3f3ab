// The reconciliation of one member towards its target assignment (Kafka's CurrentAssignmentBuilder):
//   STABLE                 → reconcile when the target assignment epoch moved;
//   UNREVOKED_PARTITIONS   → wait until the member no longer reports the partitions pending revocation in its
//                            owned partitions (or until its rebalance timeout fences it), then reconcile;
//   UNRELEASED_PARTITIONS  → reconcile again: partitions still owned by another member (their partition
//                            epoch is set) are only given once that member has released them.
// A member keeps its epoch while it has partitions to revoke, and moves to the target assignment epoch once
// it has none, so no partition is ever owned by two members at once.

import type { Assignment, ConsumerGroupMember, MemberState } from "./consumer-group-member.js";

export interface ReconcileInput {
  readonly member: ConsumerGroupMember;
  readonly targetAssignmentEpoch: number;
  readonly targetAssignment: Assignment;
  /** Topic ids the member's subscription resolves to: a target on another topic is treated as empty. */
  readonly subscribedTopicIds: ReadonlySet<string>;
  /** The partitions the member reported owning in this heartbeat; null when not sent. */
  readonly ownedTopicPartitions: Assignment | null;
  /** Epoch of the member owning the partition, -1 when it is free. */
  readonly currentPartitionEpoch: (topicId: string, partition: number) => number;
}

function ownsAny(owned: Assignment | null, pending: Assignment): boolean {
  if (owned === null) return true;
  for (const [t, ps] of owned) {
    const s = pending.get(t);
    if (s === undefined) continue;
    for (const p of ps) if (s.has(p)) return true;
  }
  return false;
}

function withEpoch(
  m: ConsumerGroupMember,
  state: MemberState,
  epoch: number,
  assigned: Assignment,
  pending: Assignment,
): ConsumerGroupMember {
  return {
    ...m,
    state,
    previousMemberEpoch: m.memberEpoch,
    memberEpoch: epoch,
    assignedPartitions: assigned,
    partitionsPendingRevocation: pending,
  };
}

function computeNextAssignment(input: ReconcileInput, memberEpoch: number): ConsumerGroupMember {
  const { member, targetAssignment, targetAssignmentEpoch } = input;
  const current = member.assignedPartitions;
  let hasUnreleased = false;
  const newAssigned = new Map<string, Set<number>>();
  const newPending = new Map<string, Set<number>>();
  const newAssigning = new Map<string, Set<number>>();
  for (const topicId of new Set([...targetAssignment.keys(), ...current.keys()])) {
    const target = input.subscribedTopicIds.has(topicId)
      ? (targetAssignment.get(topicId) ?? new Set<number>())
      : new Set<number>();
    const owned = current.get(topicId) ?? new Set<number>();
    const assigned = new Set([...owned].filter((p) => target.has(p)));
    const revoking = new Set([...owned].filter((p) => !assigned.has(p)));
    const assigning = new Set<number>();
    const ownPending = member.partitionsPendingRevocation.get(topicId);
    for (const p of target) {
      if (assigned.has(p)) continue;
      if (input.currentPartitionEpoch(topicId, p) !== -1 && !(ownPending?.has(p) ?? false))
        hasUnreleased = true;
      else assigning.add(p);
    }
    if (assigned.size > 0) newAssigned.set(topicId, assigned);
    if (revoking.size > 0) newPending.set(topicId, revoking);
    if (assigning.size > 0) newAssigning.set(topicId, assigning);
  }
  if (newPending.size > 0 && ownsAny(input.ownedTopicPartitions, newPending)) {
    // Revoke first: the member stays in its epoch until it acknowledges the revocation.
    return withEpoch(member, "unrevoked_partitions", memberEpoch, newAssigned, newPending);
  }
  for (const [t, ps] of newAssigning) {
    const s = newAssigned.get(t) ?? new Set<number>();
    for (const p of ps) s.add(p);
    newAssigned.set(t, s);
  }
  return withEpoch(
    member,
    hasUnreleased ? "unreleased_partitions" : "stable",
    targetAssignmentEpoch,
    newAssigned,
    new Map(),
  );
}

/** The member's next state, or the member itself when it cannot move forward yet. */
export function reconcileMember(input: ReconcileInput): ConsumerGroupMember {
  const m = input.member;
  switch (m.state) {
    case "stable":
      return m.memberEpoch !== input.targetAssignmentEpoch ? computeNextAssignment(input, m.memberEpoch) : m;
    case "unrevoked_partitions":
      if (ownsAny(input.ownedTopicPartitions, m.partitionsPendingRevocation)) return m;
      return computeNextAssignment(input, m.memberEpoch);
    case "unreleased_partitions":
      return computeNextAssignment(input, m.memberEpoch);
    default:
      return computeNextAssignment(input, input.targetAssignmentEpoch);
  }
}
