// A KIP-848 consumer group (Kafka's ConsumerGroup): group epoch, target assignment epoch and target
// assignment, members (with their member epochs and current assignments), static members by instance id,
// the subscribed topics' metadata the last target assignment was computed from, the epoch of the member
// owning each partition, and the group's committed offsets. Its state is derived (Empty, Assigning,
// Reconciling, Stable; Dead once deleted), as are the member-epoch checks of OffsetCommit and OffsetFetch
// (Kafka's validateOffsetCommit / validateOffsetFetch). Every change goes through `replay` of a
// ConsumerGroupRecord, so the live state and the state rebuilt from __consumer_offsets are the same.

import { ErrorCode } from "../../../protocol/errors.js";
import {
  type Assignment,
  type ConsumerGroupMember,
  EMPTY_ASSIGNMENT,
  newConsumerGroupMember,
} from "./consumer-group-member.js";
import type { ConsumerGroupRecord, SubscribedTopicMetadata } from "./consumer-group-records.js";
import type { CommittedOffset } from "./group-metadata.js";

export type ConsumerGroupState = "Empty" | "Assigning" | "Reconciling" | "Stable" | "Dead";

export class ConsumerGroup {
  groupEpoch = 0;
  assignmentEpoch = 0;
  readonly members = new Map<string, ConsumerGroupMember>();
  /** instance id → member id. */
  readonly staticMembers = new Map<string, string>();
  /** member id → target assignment. */
  readonly targetAssignment = new Map<string, Assignment>();
  /** topic name → metadata, as of the last ConsumerGroupPartitionMetadata record. */
  subscriptionMetadata = new Map<string, SubscribedTopicMetadata>();
  /** topic id → partition → epoch of the member owning it (assigned or pending revocation). */
  private readonly partitionEpochs = new Map<string, Map<number, number>>();
  /** offsetKey(topic, partition) → committed offset. */
  readonly offsets = new Map<string, CommittedOffset>();
  dead = false;

  constructor(readonly groupId: string) {}

  get state(): ConsumerGroupState {
    if (this.dead) return "Dead";
    if (this.members.size === 0) return "Empty";
    if (this.groupEpoch > this.assignmentEpoch) return "Assigning";
    for (const m of this.members.values()) {
      if (m.state !== "stable" || m.memberEpoch !== this.assignmentEpoch) return "Reconciling";
    }
    return "Stable";
  }

  currentPartitionEpoch(topicId: string, partition: number): number {
    return this.partitionEpochs.get(topicId)?.get(partition) ?? -1;
  }

  /** The assignor the members prefer most (Kafka's computePreferredServerAssignor), else the default. */
  preferredServerAssignor(defaultName: string): string {
    const counts = new Map<string, number>();
    for (const m of this.members.values()) {
      if (m.serverAssignorName !== null)
        counts.set(m.serverAssignorName, (counts.get(m.serverAssignorName) ?? 0) + 1);
    }
    let best = defaultName;
    let bestCount = 0;
    for (const [name, n] of counts) {
      if (n > bestCount) {
        best = name;
        bestCount = n;
      }
    }
    return best;
  }

  /** Kafka's ConsumerGroup.validateOffsetCommit; null when the commit may proceed. */
  validateOffsetCommit(memberId: string, memberEpoch: number): number | null {
    // An admin client or a consumer outside group management may commit to an empty group.
    if (memberEpoch < 0 && this.members.size === 0) return null;
    const member = this.members.get(memberId);
    if (member === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (memberEpoch !== member.memberEpoch) return ErrorCode.STALE_MEMBER_EPOCH;
    return null;
  }

  /** Kafka's ConsumerGroup.validateOffsetFetch (OffsetFetch v9 carries the member id and epoch). */
  validateOffsetFetch(memberId: string | null, memberEpoch: number): number | null {
    if (memberId === null && memberEpoch < 0) return null;
    const member = memberId === null ? undefined : this.members.get(memberId);
    if (member === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (memberEpoch !== member.memberEpoch) return ErrorCode.STALE_MEMBER_EPOCH;
    return null;
  }

  /** Every topic name some member subscribes to. */
  subscribedTopicNames(): Set<string> {
    const out = new Set<string>();
    for (const m of this.members.values()) for (const t of m.subscribedTopicNames) out.add(t);
    return out;
  }

  private setPartitionEpochs(m: ConsumerGroupMember | undefined, add: boolean): void {
    if (m === undefined) return;
    for (const a of [m.assignedPartitions, m.partitionsPendingRevocation]) {
      for (const [t, ps] of a) {
        let e = this.partitionEpochs.get(t);
        if (e === undefined) {
          if (!add) continue;
          e = new Map();
          this.partitionEpochs.set(t, e);
        }
        for (const p of ps) {
          if (add) e.set(p, m.memberEpoch);
          else if (e.get(p) === m.memberEpoch) e.delete(p);
        }
        if (e.size === 0) this.partitionEpochs.delete(t);
      }
    }
  }

  private putMember(m: ConsumerGroupMember): void {
    const old = this.members.get(m.memberId);
    this.setPartitionEpochs(old, false);
    if (old?.instanceId != null && old.instanceId !== m.instanceId) this.staticMembers.delete(old.instanceId);
    this.members.set(m.memberId, m);
    if (m.instanceId !== null) this.staticMembers.set(m.instanceId, m.memberId);
    this.setPartitionEpochs(m, true);
  }

  private removeMember(memberId: string): void {
    const old = this.members.get(memberId);
    if (old === undefined) return;
    this.setPartitionEpochs(old, false);
    this.members.delete(memberId);
    if (old.instanceId !== null && this.staticMembers.get(old.instanceId) === memberId)
      this.staticMembers.delete(old.instanceId);
  }

  /** Applies one record (Kafka's GroupMetadataManager.replay for the consumer group records). */
  replay(r: ConsumerGroupRecord): void {
    switch (r.type) {
      case "group-epoch":
        if (r.epoch === null) this.dead = true;
        else {
          this.dead = false;
          this.groupEpoch = r.epoch;
        }
        return;
      case "partition-metadata":
        this.subscriptionMetadata = new Map((r.topics ?? []).map((t) => [t.topicName, t]));
        return;
      case "member-subscription": {
        if (r.value === null) {
          this.removeMember(r.memberId);
          return;
        }
        const old = this.members.get(r.memberId) ?? newConsumerGroupMember(r.memberId);
        this.putMember({
          ...old,
          ...r.value,
          subscribedTopicNames: [...r.value.subscribedTopicNames],
        });
        return;
      }
      case "target-assignment-epoch":
        this.assignmentEpoch = r.epoch ?? 0;
        return;
      case "target-assignment":
        if (r.assignment === null) this.targetAssignment.delete(r.memberId);
        else this.targetAssignment.set(r.memberId, r.assignment);
        return;
      case "current-assignment": {
        const old = this.members.get(r.memberId);
        if (old === undefined) {
          if (r.value !== null) this.putMember({ ...newConsumerGroupMember(r.memberId), ...r.value });
          return;
        }
        if (r.value === null) {
          this.putMember({
            ...old,
            memberEpoch: -1,
            previousMemberEpoch: -1,
            state: "stable",
            assignedPartitions: EMPTY_ASSIGNMENT,
            partitionsPendingRevocation: EMPTY_ASSIGNMENT,
          });
        } else {
          this.putMember({ ...old, ...r.value });
        }
        return;
      }
    }
  }
}
