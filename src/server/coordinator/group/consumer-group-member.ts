// A member of a KIP-848 consumer group (Kafka's ConsumerGroupMember) and the partition sets it carries:
// its subscription (topic names, rack, server assignor, rebalance timeout), its member epoch and previous
// member epoch, its reconciliation state (MemberState) and its current assignment (assigned partitions and
// partitions pending revocation). Assignments are keyed by topic id, as in the protocol and the records.

/** Kafka's MemberState, with the byte value written in ConsumerGroupCurrentMemberAssignmentValue.State. */
export type MemberState = "unrevoked_partitions" | "unreleased_partitions" | "stable" | "unknown";

const STATE_VALUES: Record<MemberState, number> = {
  stable: 0,
  unrevoked_partitions: 1,
  unreleased_partitions: 2,
  unknown: 127,
};

export function memberStateValue(state: MemberState): number {
  return STATE_VALUES[state];
}

export function memberStateOf(value: number): MemberState {
  for (const [k, v] of Object.entries(STATE_VALUES)) if (v === value) return k as MemberState;
  return "unknown";
}

/** Member epoch sent to leave the group (dynamic members). */
export const LEAVE_GROUP_MEMBER_EPOCH = -1;
/** Member epoch sent by a static member that will come back (its assignment is kept for the session). */
export const LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2;

/** topic id → partitions. */
export type Assignment = ReadonlyMap<string, ReadonlySet<number>>;

export const EMPTY_ASSIGNMENT: Assignment = new Map();

export interface ConsumerGroupMember {
  readonly memberId: string;
  readonly instanceId: string | null;
  readonly rackId: string | null;
  readonly memberEpoch: number;
  readonly previousMemberEpoch: number;
  readonly state: MemberState;
  readonly clientId: string;
  readonly clientHost: string;
  readonly subscribedTopicNames: readonly string[];
  readonly subscribedTopicRegex: string | null;
  readonly rebalanceTimeoutMs: number;
  readonly serverAssignorName: string | null;
  readonly assignedPartitions: Assignment;
  readonly partitionsPendingRevocation: Assignment;
}

export function newConsumerGroupMember(memberId: string): ConsumerGroupMember {
  return {
    memberId,
    instanceId: null,
    rackId: null,
    memberEpoch: 0,
    previousMemberEpoch: 0,
    state: "stable",
    clientId: "",
    clientHost: "",
    subscribedTopicNames: [],
    subscribedTopicRegex: null,
    rebalanceTimeoutMs: -1,
    serverAssignorName: null,
    assignedPartitions: EMPTY_ASSIGNMENT,
    partitionsPendingRevocation: EMPTY_ASSIGNMENT,
  };
}

// ---- assignment helpers ----

export function assignmentOf(
  entries: Iterable<{ topicId: string; partitions: Iterable<number> }>,
): Assignment {
  const out = new Map<string, Set<number>>();
  for (const e of entries) {
    const s = out.get(e.topicId) ?? new Set<number>();
    for (const p of e.partitions) s.add(p);
    if (s.size > 0) out.set(e.topicId, s);
  }
  return out;
}

/** As the records and the protocol carry it: topics and partitions sorted. */
export function assignmentEntries(a: Assignment): Array<{ topicId: string; partitions: number[] }> {
  return [...a]
    .filter(([, ps]) => ps.size > 0)
    .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))
    .map(([topicId, ps]) => ({ topicId, partitions: [...ps].sort((x, y) => x - y) }));
}

export function assignmentSize(a: Assignment): number {
  let n = 0;
  for (const ps of a.values()) n += ps.size;
  return n;
}

export function assignmentsEqual(a: Assignment, b: Assignment): boolean {
  const ea = assignmentEntries(a);
  const eb = assignmentEntries(b);
  if (ea.length !== eb.length) return false;
  return ea.every(
    (x, i) =>
      x.topicId === eb[i].topicId &&
      x.partitions.length === eb[i].partitions.length &&
      x.partitions.every((p, j) => p === eb[i].partitions[j]),
  );
}

/** Whether every partition of `sub` is in `sup`. */
export function isSubset(sub: Assignment, sup: Assignment): boolean {
  for (const [t, ps] of sub) {
    const s = sup.get(t);
    for (const p of ps) if (s === undefined || !s.has(p)) return false;
  }
  return true;
}

/** Whether the two assignments share a partition. */
export function intersects(a: Assignment, b: Assignment): boolean {
  for (const [t, ps] of a) {
    const s = b.get(t);
    if (s === undefined) continue;
    for (const p of ps) if (s.has(p)) return true;
  }
  return false;
}

export function sameSubscription(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const s = new Set(a);
  return b.every((x) => s.has(x));
}

/** Whether the member's current assignment (epochs, state, partitions) differs. */
export function currentAssignmentChanged(a: ConsumerGroupMember, b: ConsumerGroupMember): boolean {
  return (
    a.memberEpoch !== b.memberEpoch ||
    a.previousMemberEpoch !== b.previousMemberEpoch ||
    a.state !== b.state ||
    !assignmentsEqual(a.assignedPartitions, b.assignedPartitions) ||
    !assignmentsEqual(a.partitionsPendingRevocation, b.partitionsPendingRevocation)
  );
}
