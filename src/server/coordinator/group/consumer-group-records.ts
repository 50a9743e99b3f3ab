// The KIP-848 records of `__consumer_offsets` (Kafka's GroupCoordinatorRecordHelpers for consumer groups),
// through the generated codecs of ../shared/kafka-protocol/coordinator-records. Key versions:
//   3 ConsumerGroupMetadataKey (group)                   → ConsumerGroupMetadataValue v0 (group epoch)
//   4 ConsumerGroupPartitionMetadataKey (group)          → ConsumerGroupPartitionMetadataValue v0 (topics)
//   5 ConsumerGroupMemberMetadataKey (group, member)     → ConsumerGroupMemberMetadataValue v0 (subscription)
//   6 ConsumerGroupTargetAssignmentMetadataKey (group)   → ConsumerGroupTargetAssignmentMetadataValue v0
//   7 ConsumerGroupTargetAssignmentMemberKey (group, m)  → ConsumerGroupTargetAssignmentMemberValue v0
//   8 ConsumerGroupCurrentMemberAssignmentKey (group, m) → ConsumerGroupCurrentMemberAssignmentValue v0
// A null value is a tombstone. Records are kept typed (ConsumerGroupRecord) so the coordinator applies to
// its state exactly what it writes, and replays the same records when it loads the partition.

import {
  readConsumerGroupCurrentMemberAssignmentKey,
  writeConsumerGroupCurrentMemberAssignmentKey,
} from "../../../protocol/generated/coordinator-records/ConsumerGroupCurrentMemberAssignmentKey.js";
import {
  readConsumerGroupCurrentMemberAssignmentValue,
  writeConsumerGroupCurrentMemberAssignmentValue,
} from "../../../protocol/generated/coordinator-records/ConsumerGroupCurrentMemberAssignmentValue.js";
import {
  readConsumerGroupMemberMetadataKey,
  writeConsumerGroupMemberMetadataKey,
} from "../../../protocol/generated/coordinator-records/ConsumerGroupMemberMetadataKey.js";
import {
  type ConsumerGroupMemberMetadataValue,
  readConsumerGroupMemberMetadataValue,
  writeConsumerGroupMemberMetadataValue,
} from "../../../protocol/generated/coordinator-records/ConsumerGroupMemberMetadataValue.js";
import {
  readConsumerGroupMetadataKey,
  writeConsumerGroupMetadataKey,
} from "../../../protocol/generated/coordinator-records/ConsumerGroupMetadataKey.js";
import {
  readConsumerGroupMetadataValue,
  writeConsumerGroupMetadataValue,
} from "../../../protocol/generated/coordinator-records/ConsumerGroupMetadataValue.js";
import {
  readConsumerGroupPartitionMetadataKey,
  writeConsumerGroupPartitionMetadataKey,
} from "../../../protocol/generated/coordinator-records/ConsumerGroupPartitionMetadataKey.js";
import {
  readConsumerGroupPartitionMetadataValue,
  writeConsumerGroupPartitionMetadataValue,
} from "../../../protocol/generated/coordinator-records/ConsumerGroupPartitionMetadataValue.js";
import {
  readConsumerGroupTargetAssignmentMemberKey,
  writeConsumerGroupTargetAssignmentMemberKey,
} from "../../../protocol/generated/coordinator-records/ConsumerGroupTargetAssignmentMemberKey.js";
import {
  readConsumerGroupTargetAssignmentMemberValue,
  writeConsumerGroupTargetAssignmentMemberValue,
} from "../../../protocol/generated/coordinator-records/ConsumerGroupTargetAssignmentMemberValue.js";
import {
  readConsumerGroupTargetAssignmentMetadataKey,
  writeConsumerGroupTargetAssignmentMetadataKey,
} from "../../../protocol/generated/coordinator-records/ConsumerGroupTargetAssignmentMetadataKey.js";
import {
  readConsumerGroupTargetAssignmentMetadataValue,
  writeConsumerGroupTargetAssignmentMetadataValue,
} from "../../../protocol/generated/coordinator-records/ConsumerGroupTargetAssignmentMetadataValue.js";
import { Reader } from "../../../protocol/primitives/reader.js";
import { Writer } from "../../../protocol/primitives/writer.js";
import type { RecordInput } from "../../../protocol/records/memory-records.js";
import {
  type Assignment,
  assignmentEntries,
  assignmentOf,
  type ConsumerGroupMember,
  type MemberState,
  memberStateOf,
  memberStateValue,
} from "./consumer-group-member.js";

export const CONSUMER_GROUP_KEY_VERSIONS = { min: 3, max: 8 } as const;

export interface SubscribedTopicMetadata {
  readonly topicId: string;
  readonly topicName: string;
  readonly numPartitions: number;
}

export interface MemberSubscription {
  readonly instanceId: string | null;
  readonly rackId: string | null;
  readonly clientId: string;
  readonly clientHost: string;
  readonly subscribedTopicNames: readonly string[];
  readonly subscribedTopicRegex: string | null;
  readonly rebalanceTimeoutMs: number;
  readonly serverAssignorName: string | null;
}

export interface MemberCurrentAssignment {
  readonly memberEpoch: number;
  readonly previousMemberEpoch: number;
  readonly state: MemberState;
  readonly assignedPartitions: Assignment;
  readonly partitionsPendingRevocation: Assignment;
}

export type ConsumerGroupRecord =
  | { readonly type: "group-epoch"; readonly groupId: string; readonly epoch: number | null }
  | {
      readonly type: "partition-metadata";
      readonly groupId: string;
      readonly topics: readonly SubscribedTopicMetadata[] | null;
    }
  | {
      readonly type: "member-subscription";
      readonly groupId: string;
      readonly memberId: string;
      readonly value: MemberSubscription | null;
    }
  | { readonly type: "target-assignment-epoch"; readonly groupId: string; readonly epoch: number | null }
  | {
      readonly type: "target-assignment";
      readonly groupId: string;
      readonly memberId: string;
      readonly assignment: Assignment | null;
    }
  | {
      readonly type: "current-assignment";
      readonly groupId: string;
      readonly memberId: string;
      readonly value: MemberCurrentAssignment | null;
    };

// ---- builders (Kafka's GroupCoordinatorRecordHelpers) ----

export function groupEpochRecord(groupId: string, epoch: number | null): ConsumerGroupRecord {
  return { type: "group-epoch", groupId, epoch };
}

export function memberSubscriptionRecord(groupId: string, m: ConsumerGroupMember): ConsumerGroupRecord {
  return {
    type: "member-subscription",
    groupId,
    memberId: m.memberId,
    value: {
      instanceId: m.instanceId,
      rackId: m.rackId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      subscribedTopicNames: m.subscribedTopicNames,
      subscribedTopicRegex: m.subscribedTopicRegex,
      rebalanceTimeoutMs: m.rebalanceTimeoutMs,
      serverAssignorName: m.serverAssignorName,
    },
  };
}

export function currentAssignmentRecord(groupId: string, m: ConsumerGroupMember): ConsumerGroupRecord {
  return {
    type: "current-assignment",
    groupId,
    memberId: m.memberId,
    value: {
      memberEpoch: m.memberEpoch,
      previousMemberEpoch: m.previousMemberEpoch,
      state: m.state,
      assignedPartitions: m.assignedPartitions,
      partitionsPendingRevocation: m.partitionsPendingRevocation,
    },
  };
}

/** The three tombstones that remove a member (Kafka writes them in this order). */
export function memberTombstones(groupId: string, memberId: string): ConsumerGroupRecord[] {
  return [
    { type: "current-assignment", groupId, memberId, value: null },
    { type: "target-assignment", groupId, memberId, assignment: null },
    { type: "member-subscription", groupId, memberId, value: null },
  ];
}

// ---- serde ----

function versioned(version: number, write: (w: Writer) => void): Buffer {
  const w = new Writer(64);
  w.int16(version);
  write(w);
  return w.toBuffer();
}

const partitionsOut = (a: Assignment) => assignmentEntries(a);

/** The record as written to __consumer_offsets. */
export function encodeConsumerGroupRecord(r: ConsumerGroupRecord): RecordInput {
  const g = r.groupId;
  switch (r.type) {
    case "group-epoch":
      return {
        key: versioned(3, (w) => writeConsumerGroupMetadataKey(w, { groupId: g }, 3)),
        value:
          r.epoch === null
            ? null
            : versioned(0, (w) => writeConsumerGroupMetadataValue(w, { epoch: r.epoch! }, 0)),
      };
    case "partition-metadata":
      return {
        key: versioned(4, (w) => writeConsumerGroupPartitionMetadataKey(w, { groupId: g }, 4)),
        value:
          r.topics === null
            ? null
            : versioned(0, (w) =>
                writeConsumerGroupPartitionMetadataValue(
                  w,
                  { topics: r.topics!.map((t) => ({ ...t, partitionMetadata: [] })) },
                  0,
                ),
              ),
      };
    case "member-subscription": {
      const v = r.value;
      return {
        key: versioned(5, (w) =>
          writeConsumerGroupMemberMetadataKey(w, { groupId: g, memberId: r.memberId }, 5),
        ),
        value:
          v === null
            ? null
            : versioned(0, (w) => {
                const value: ConsumerGroupMemberMetadataValue = {
                  instanceId: v.instanceId,
                  rackId: v.rackId,
                  clientId: v.clientId,
                  clientHost: v.clientHost,
                  subscribedTopicNames: [...v.subscribedTopicNames],
                  subscribedTopicRegex: v.subscribedTopicRegex,
                  rebalanceTimeoutMs: v.rebalanceTimeoutMs,
                  serverAssignor: v.serverAssignorName,
                  classicMemberMetadata: null,
                };
                writeConsumerGroupMemberMetadataValue(w, value, 0);
              }),
      };
    }
    case "target-assignment-epoch":
      return {
        key: versioned(6, (w) => writeConsumerGroupTargetAssignmentMetadataKey(w, { groupId: g }, 6)),
        value:
          r.epoch === null
            ? null
            : versioned(0, (w) =>
                writeConsumerGroupTargetAssignmentMetadataValue(w, { assignmentEpoch: r.epoch! }, 0),
              ),
      };
    case "target-assignment":
      return {
        key: versioned(7, (w) =>
          writeConsumerGroupTargetAssignmentMemberKey(w, { groupId: g, memberId: r.memberId }, 7),
        ),
        value:
          r.assignment === null
            ? null
            : versioned(0, (w) =>
                writeConsumerGroupTargetAssignmentMemberValue(
                  w,
                  { topicPartitions: partitionsOut(r.assignment!) },
                  0,
                ),
              ),
      };
    case "current-assignment": {
      const v = r.value;
      return {
        key: versioned(8, (w) =>
          writeConsumerGroupCurrentMemberAssignmentKey(w, { groupId: g, memberId: r.memberId }, 8),
        ),
        value:
          v === null
            ? null
            : versioned(0, (w) =>
                writeConsumerGroupCurrentMemberAssignmentValue(
                  w,
                  {
                    memberEpoch: v.memberEpoch,
                    previousMemberEpoch: v.previousMemberEpoch,
                    state: memberStateValue(v.state),
                    assignedPartitions: partitionsOut(v.assignedPartitions),
                    partitionsPendingRevocation: partitionsOut(v.partitionsPendingRevocation),
                  },
                  0,
                ),
              ),
      };
    }
  }
}

function valueReader(value: Buffer | null): Reader | null {
  if (value === null) return null;
  const r = new Reader(value);
  const version = r.int16();
  if (version !== 0) throw new RangeError(`unknown consumer group record value version ${version}`);
  return r;
}

/** Decodes a record whose key version is 3–8 (the key's int16 version included in `key`). */
export function decodeConsumerGroupRecord(key: Buffer, value: Buffer | null): ConsumerGroupRecord {
  const kr = new Reader(key);
  const version = kr.int16();
  const vr = valueReader(value);
  switch (version) {
    case 3: {
      const { groupId } = readConsumerGroupMetadataKey(kr, 3);
      return {
        type: "group-epoch",
        groupId,
        epoch: vr === null ? null : readConsumerGroupMetadataValue(vr, 0).epoch,
      };
    }
    case 4: {
      const { groupId } = readConsumerGroupPartitionMetadataKey(kr, 4);
      const topics =
        vr === null
          ? null
          : readConsumerGroupPartitionMetadataValue(vr, 0).topics.map((t) => ({
              topicId: t.topicId,
              topicName: t.topicName,
              numPartitions: t.numPartitions,
            }));
      return { type: "partition-metadata", groupId, topics };
    }
    case 5: {
      const { groupId, memberId } = readConsumerGroupMemberMetadataKey(kr, 5);
      if (vr === null) return { type: "member-subscription", groupId, memberId, value: null };
      const v = readConsumerGroupMemberMetadataValue(vr, 0);
      return {
        type: "member-subscription",
        groupId,
        memberId,
        value: {
          instanceId: v.instanceId,
          rackId: v.rackId,
          clientId: v.clientId,
          clientHost: v.clientHost,
          subscribedTopicNames: v.subscribedTopicNames,
          subscribedTopicRegex: v.subscribedTopicRegex,
          rebalanceTimeoutMs: v.rebalanceTimeoutMs,
          serverAssignorName: v.serverAssignor,
        },
      };
    }
    case 6: {
      const { groupId } = readConsumerGroupTargetAssignmentMetadataKey(kr, 6);
      const epoch =
        vr === null ? null : readConsumerGroupTargetAssignmentMetadataValue(vr, 0).assignmentEpoch;
      return { type: "target-assignment-epoch", groupId, epoch };
    }
    case 7: {
      const { groupId, memberId } = readConsumerGroupTargetAssignmentMemberKey(kr, 7);
      const assignment =
        vr === null
          ? null
          : assignmentOf(readConsumerGroupTargetAssignmentMemberValue(vr, 0).topicPartitions);
      return { type: "target-assignment", groupId, memberId, assignment };
    }
    case 8: {
      const { groupId, memberId } = readConsumerGroupCurrentMemberAssignmentKey(kr, 8);
      if (vr === null) return { type: "current-assignment", groupId, memberId, value: null };
      const v = readConsumerGroupCurrentMemberAssignmentValue(vr, 0);
      return {
        type: "current-assignment",
        groupId,
        memberId,
        value: {
          memberEpoch: v.memberEpoch,
          previousMemberEpoch: v.previousMemberEpoch,
          state: memberStateOf(v.state),
          assignedPartitions: assignmentOf(v.assignedPartitions),
          partitionsPendingRevocation: assignmentOf(v.partitionsPendingRevocation),
        },
      };
    }
    default:
      throw new RangeError(`not a consumer group record key version: ${version}`);
  }
}
