// The KIP-848 consumer group protocol (Kafka's GroupMetadataManager.consumerGroupHeartbeat and friends):
//   - ConsumerGroupHeartbeat: join (member epoch 0), heartbeat, leave (-1; -2 for a static member that comes
//     back). A subscription change, a member joining or leaving, or a change of a subscribed topic's
//     partition count bumps the group epoch; the target assignment is then recomputed
//     (consumer-group-target-assignment.ts), and each member reconciles towards it on its heartbeats,
//     revoking partitions before others receive them (consumer-group-current-assignment.ts);
//   - members fenced when their session or rebalance timeout passes (consumer-group-timeouts.ts),
//     FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID / UNRELEASED_INSTANCE_ID / UNSUPPORTED_ASSIGNOR /
//     GROUP_MAX_SIZE_REACHED / INVALID_REQUEST as Kafka answers them;
//   - ConsumerGroupDescribe, the ListGroups entries of consumer groups, DeleteGroups of an empty one (the
//     offset APIs are in offset-metadata-manager.ts);
//   - persistence: every change is a ConsumerGroupRecord appended to the group's __consumer_offsets
//     partition, and replayed from there when the partition is loaded (the hook in GroupMetadataManager).
// Owns the consumer groups of the loaded partitions. The GroupCoordinator checks that this broker
// coordinates the group before calling in here.

import { randomBytes } from "node:crypto";
import { Logger } from "../../../common/logger.js";
import type { Scheduler } from "../../../common/scheduler.js";
import { ErrorCode, errorNameOf } from "../../../protocol/errors.js";
import type { RecordInput } from "../../../protocol/records/memory-records.js";
import { ConsumerGroup } from "./consumer-group.js";
import { DEFAULT_CONSUMER_GROUP_ASSIGNOR } from "./consumer-group-assignor.js";
import { reconcileMember } from "./consumer-group-current-assignment.js";
import {
  type Assignment,
  assignmentsEqual,
  type ConsumerGroupMember,
  currentAssignmentChanged,
  EMPTY_ASSIGNMENT,
  isSubset,
  LEAVE_GROUP_MEMBER_EPOCH,
  LEAVE_GROUP_STATIC_MEMBER_EPOCH,
  newConsumerGroupMember,
  sameSubscription,
} from "./consumer-group-member.js";
import {
  type ConsumerGroupRecord,
  currentAssignmentRecord,
  decodeConsumerGroupRecord,
  encodeConsumerGroupRecord,
  groupEpochRecord,
  memberSubscriptionRecord,
  memberTombstones,
} from "./consumer-group-records.js";
import {
  buildTargetAssignment,
  subscribedTopicIds,
  subscriptionMetadataUpdate,
  type TopicsImage,
} from "./consumer-group-target-assignment.js";
import { ConsumerGroupTimeouts } from "./consumer-group-timeouts.js";
import { CONSUMER_PROTOCOL_TYPE } from "./consumer-protocol.js";
import { type CommittedOffset, parseOffsetKey } from "./group-metadata.js";
import type { GroupMetadataManager } from "./group-metadata-manager.js";
import { offsetCommitKey } from "./group-metadata-records.js";

export interface ConsumerGroupConfig {
  /** group.consumer.session.timeout.ms */
  readonly sessionTimeoutMs: number;
  /** group.consumer.heartbeat.interval.ms */
  readonly heartbeatIntervalMs: number;
  /** group.consumer.max.size */
  readonly maxSize: number;
  /** group.consumer.assignors (names; the first is the default). */
  readonly assignors: readonly string[];
}

export const DEFAULT_CONSUMER_GROUP_CONFIG: ConsumerGroupConfig = {
  sessionTimeoutMs: 45_000,
  heartbeatIntervalMs: 5_000,
  maxSize: 2147483647,
  assignors: [DEFAULT_CONSUMER_GROUP_ASSIGNOR, "range"],
};

export interface ConsumerGroupHeartbeatParams {
  readonly apiVersion: number;
  readonly groupId: string;
  readonly memberId: string;
  readonly memberEpoch: number;
  readonly instanceId: string | null;
  readonly rackId: string | null;
  readonly rebalanceTimeoutMs: number;
  readonly subscribedTopicNames: readonly string[] | null;
  readonly subscribedTopicRegex: string | null;
  readonly serverAssignor: string | null;
  readonly ownedTopicPartitions: Assignment | null;
  readonly clientId: string;
  readonly clientHost: string;
}

export interface ConsumerGroupHeartbeatResult {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly memberId: string | null;
  readonly memberEpoch: number;
  readonly heartbeatIntervalMs: number;
  /** The member's assigned partitions, when sent (on join, on a full request, or when they changed). */
  readonly assignment: Assignment | null;
}

export interface DescribedConsumerGroup {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly groupId: string;
  readonly state: string;
  readonly groupEpoch: number;
  readonly assignmentEpoch: number;
  readonly assignorName: string;
  readonly members: ReadonlyArray<{
    member: ConsumerGroupMember;
    targetAssignment: Assignment;
  }>;
}

export function heartbeatError(
  errorCode: number,
  errorMessage: string | null = null,
): ConsumerGroupHeartbeatResult {
  return {
    errorCode,
    errorMessage,
    memberId: null,
    memberEpoch: 0,
    heartbeatIntervalMs: 0,
    assignment: null,
  };
}

class RequestError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export class ConsumerGroupCoordinator {
  private readonly groups = new Map<string, ConsumerGroup>();
  private readonly logger: Logger;
  private readonly timeouts: ConsumerGroupTimeouts;

  constructor(
    brokerId: number,
    readonly config: ConsumerGroupConfig,
    private readonly manager: GroupMetadataManager,
    scheduler: Scheduler,
  ) {
    this.logger = new Logger(
      "kafka.coordinator.group.GroupMetadataManager",
      `ConsumerGroups brokerId=${brokerId}`,
    );
    this.timeouts = new ConsumerGroupTimeouts(config.sessionTimeoutMs, scheduler, (group, memberId, reason) =>
      this.fence(group, memberId, reason),
    );
    manager.consumerGroupLoader = {
      replay: (key, value) => this.replayLoaded(key, value),
      loaded: (partition, offsets) => this.onLoaded(partition, offsets),
      unloaded: (partition) => this.onUnloaded(partition),
    };
  }

  /** The consumer group of that id, if there is one (not a classic group). */
  group(groupId: string): ConsumerGroup | undefined {
    const g = this.groups.get(groupId);
    return g === undefined || g.dead ? undefined : g;
  }

  currentGroups(): ConsumerGroup[] {
    return [...this.groups.values()].filter((g) => !g.dead);
  }

  // ---- ConsumerGroupHeartbeat ----

  /** Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid; null when valid. */
  validateRequest(p: ConsumerGroupHeartbeatParams): ConsumerGroupHeartbeatResult | null {
    const invalid = (m: string) => heartbeatError(ErrorCode.INVALID_REQUEST, m);
    if (p.groupId === "") return invalid("GroupId can't be empty.");
    if (p.instanceId === "") return invalid("InstanceId can't be empty.");
    if (p.rackId === "") return invalid("RackId can't be empty.");
    if (p.subscribedTopicRegex !== null) return invalid("SubscribedTopicRegex is not supported yet.");
    if (p.apiVersion >= 1 && p.memberId === "") return invalid("MemberId can't be empty.");
    if (p.memberEpoch > 0 || p.memberEpoch === LEAVE_GROUP_MEMBER_EPOCH) {
      if (p.memberId === "") return invalid("MemberId can't be empty.");
    } else if (p.memberEpoch === 0) {
      if (p.rebalanceTimeoutMs === -1)
        return invalid("RebalanceTimeoutMs must be provided in first request.");
      if (p.ownedTopicPartitions === null || p.ownedTopicPartitions.size > 0)
        return invalid("TopicPartitions must be empty when (re-)joining.");
      if (p.subscribedTopicNames === null || p.subscribedTopicNames.length === 0)
        return invalid("SubscribedTopicNames must be set in first request.");
    } else if (p.memberEpoch === LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
      if (p.memberId === "") return invalid("MemberId can't be empty.");
      if (p.instanceId === null) return invalid("InstanceId can't be null.");
    } else {
      return invalid("MemberEpoch is invalid.");
    }
    if (p.serverAssignor !== null && !this.config.assignors.includes(p.serverAssignor)) {
      return heartbeatError(
        ErrorCode.UNSUPPORTED_ASSIGNOR,
        `ServerAssignor ${p.serverAssignor} is not supported. Supported assignors: ${this.config.assignors.join(", ")}.`,
      );
    }
    return null;
  }

  async heartbeat(
    p: ConsumerGroupHeartbeatParams,
    topics: TopicsImage,
  ): Promise<ConsumerGroupHeartbeatResult> {
    const records: ConsumerGroupRecord[] = [];
    let created: ConsumerGroup | undefined;
    let result: ConsumerGroupHeartbeatResult;
    let group: ConsumerGroup;
    try {
      if (p.memberEpoch === LEAVE_GROUP_MEMBER_EPOCH || p.memberEpoch === LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
        group = this.existingGroup(p.groupId);
        result = this.leave(group, p, records);
      } else {
        const existing = this.groups.get(p.groupId);
        if (existing === undefined || existing.dead) {
          group = this.createGroup(p.groupId, p.memberEpoch === 0);
          created = group;
        } else group = existing;
        result = this.joinOrHeartbeat(group, p, topics, records);
      }
    } catch (e) {
      if (e instanceof RequestError) return heartbeatError(e.code, e.message);
      throw e;
    }
    if (records.length === 0) return result;
    const code = await this.manager.append(
      group.groupId,
      records.map((r) => encodeConsumerGroupRecord(r)),
    );
    if (code !== ErrorCode.NONE) {
      if (created !== undefined && created.members.size === 0) this.groups.delete(created.groupId);
      return heartbeatError(code);
    }
    return result;
  }

  private existingGroup(groupId: string): ConsumerGroup {
    const g = this.group(groupId);
    if (g === undefined)
      throw new RequestError(ErrorCode.UNKNOWN_MEMBER_ID, `Consumer group ${groupId} not found.`);
    return g;
  }

  /** Kafka's getOrMaybeCreateConsumerGroup: a simple classic group (offsets only) is taken over. */
  private createGroup(groupId: string, createIfNotExists: boolean): ConsumerGroup {
    if (!createIfNotExists)
      throw new RequestError(ErrorCode.UNKNOWN_MEMBER_ID, `Consumer group ${groupId} not found.`);
    const classic = this.manager.getGroup(groupId);
    const g = new ConsumerGroup(groupId);
    if (classic !== undefined && !classic.is("Dead")) {
      if (!classic.is("Empty") || classic.protocolType !== null || classic.members.size > 0)
        throw new RequestError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} is not a consumer group.`);
      for (const [k, o] of classic.offsets) g.offsets.set(k, o);
      this.manager.removeGroup(groupId);
    }
    this.groups.set(groupId, g);
    return g;
  }

  private joinOrHeartbeat(
    group: ConsumerGroup,
    p: ConsumerGroupHeartbeatParams,
    topics: TopicsImage,
    records: ConsumerGroupRecord[],
  ): ConsumerGroupHeartbeatResult {
    const emit = (r: ConsumerGroupRecord): void => {
      records.push(r);
      group.replay(r);
    };
    // v0: the coordinator names a new member (Kafka's Uuid.randomUuid().toString(): base64url, 22 chars).
    const memberId =
      p.memberEpoch === 0 && p.memberId === "" ? randomBytes(16).toString("base64url") : p.memberId;
    let member = group.members.get(memberId);
    if (p.memberEpoch === 0) {
      if (member === undefined && group.members.size >= this.config.maxSize) {
        throw new RequestError(
          ErrorCode.GROUP_MAX_SIZE_REACHED,
          `The consumer group has reached its maximum capacity of ${this.config.maxSize} members.`,
        );
      }
      if (p.instanceId !== null) member = this.staticJoin(group, memberId, p.instanceId, emit) ?? member;
      if (member === undefined) {
        this.logger.info(`[GroupId ${group.groupId}] Member ${memberId} joins the consumer group.`);
        member = newConsumerGroupMember(memberId);
      }
    } else {
      if (member === undefined)
        throw new RequestError(
          ErrorCode.UNKNOWN_MEMBER_ID,
          `Member ${memberId} is not a member of group ${group.groupId}.`,
        );
      this.throwIfMemberEpochIsInvalid(member, p.memberEpoch, p.ownedTopicPartitions);
    }
    const isNew = !group.members.has(memberId);
    const before = member;

    // 1. The member's subscription.
    const updated: ConsumerGroupMember = {
      ...member,
      instanceId: p.instanceId ?? member.instanceId,
      rackId: p.rackId ?? member.rackId,
      rebalanceTimeoutMs: p.rebalanceTimeoutMs !== -1 ? p.rebalanceTimeoutMs : member.rebalanceTimeoutMs,
      serverAssignorName: p.serverAssignor ?? member.serverAssignorName,
      subscribedTopicNames:
        p.subscribedTopicNames !== null ? [...p.subscribedTopicNames].sort() : member.subscribedTopicNames,
      clientId: p.clientId,
      clientHost: p.clientHost,
    };
    let bumpGroupEpoch = false;
    if (
      isNew ||
      updated.instanceId !== member.instanceId ||
      updated.rackId !== member.rackId ||
      updated.rebalanceTimeoutMs !== member.rebalanceTimeoutMs ||
      updated.serverAssignorName !== member.serverAssignorName ||
      updated.clientId !== member.clientId ||
      updated.clientHost !== member.clientHost ||
      !sameSubscription(updated.subscribedTopicNames, member.subscribedTopicNames)
    ) {
      emit(memberSubscriptionRecord(group.groupId, updated));
      if (isNew || !sameSubscription(updated.subscribedTopicNames, member.subscribedTopicNames)) {
        this.logger.info(
          `[GroupId ${group.groupId}] Member ${memberId} updated its subscribed topics to: [${updated.subscribedTopicNames.join(", ")}].`,
        );
        bumpGroupEpoch = true;
      }
    }

    // 2. The subscribed topics' metadata (a topic created, deleted or given more partitions).
    const metadata = subscriptionMetadataUpdate(group, topics);
    if (metadata !== null) {
      emit(metadata);
      bumpGroupEpoch = true;
    }

    // 3. The group epoch, then the target assignment when it is behind.
    if (bumpGroupEpoch) {
      emit(groupEpochRecord(group.groupId, group.groupEpoch + 1));
      this.logger.info(`[GroupId ${group.groupId}] Bumped group epoch to ${group.groupEpoch}.`);
    }
    if (group.groupEpoch > group.assignmentEpoch) this.updateTargetAssignment(group, emit);

    // 4. Reconcile the member towards its target.
    const current = group.members.get(memberId)!;
    const next = reconcileMember({
      member: current,
      targetAssignmentEpoch: group.assignmentEpoch,
      targetAssignment: group.targetAssignment.get(memberId) ?? EMPTY_ASSIGNMENT,
      subscribedTopicIds: subscribedTopicIds(group, current),
      ownedTopicPartitions: p.ownedTopicPartitions,
      currentPartitionEpoch: (t, partition) => group.currentPartitionEpoch(t, partition),
    });
    if (currentAssignmentChanged(current, next)) {
      emit(currentAssignmentRecord(group.groupId, next));
      this.logger.info(
        `[GroupId ${group.groupId}] Member ${memberId} new assignment state: epoch=${next.memberEpoch}, previousEpoch=${next.previousMemberEpoch}, state=${next.state}.`,
      );
    }

    // 5. Timers.
    this.timeouts.scheduleSessionTimeout(group, memberId);
    if (next.state === "unrevoked_partitions") {
      if (current.state !== "unrevoked_partitions" || current.memberEpoch !== next.memberEpoch || isNew)
        this.timeouts.scheduleRebalanceTimeout(group, memberId, next.memberEpoch, next.rebalanceTimeoutMs);
    } else {
      this.timeouts.cancelRebalanceTimeout(group, memberId);
    }

    const fullRequest =
      p.rebalanceTimeoutMs !== -1 && p.subscribedTopicNames !== null && p.ownedTopicPartitions !== null;
    const sendAssignment =
      p.memberEpoch === 0 ||
      fullRequest ||
      !assignmentsEqual(before.assignedPartitions, next.assignedPartitions);
    return {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      memberId,
      memberEpoch: next.memberEpoch,
      heartbeatIntervalMs: this.config.heartbeatIntervalMs,
      assignment: sendAssignment ? next.assignedPartitions : null,
    };
  }

  /** A static member (re)joining: it takes over the assignment of the one that left with epoch -2. */
  private staticJoin(
    group: ConsumerGroup,
    memberId: string,
    instanceId: string,
    emit: (r: ConsumerGroupRecord) => void,
  ): ConsumerGroupMember | undefined {
    const existingId = group.staticMembers.get(instanceId);
    if (existingId === undefined || existingId === memberId) return undefined;
    const old = group.members.get(existingId)!;
    if (old.memberEpoch !== LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
      throw new RequestError(
        ErrorCode.UNRELEASED_INSTANCE_ID,
        `Static member ${existingId} with instance id ${instanceId} is not released yet.`,
      );
    }
    this.logger.info(
      `[GroupId ${group.groupId}] Static member ${existingId} with instance id ${instanceId} is replaced by ${memberId}.`,
    );
    const target = group.targetAssignment.get(existingId);
    this.timeouts.cancelTimers(group, existingId);
    for (const r of memberTombstones(group.groupId, existingId)) emit(r);
    const replacement: ConsumerGroupMember = {
      ...old,
      memberId,
      memberEpoch: old.previousMemberEpoch,
      previousMemberEpoch: old.previousMemberEpoch,
    };
    emit(memberSubscriptionRecord(group.groupId, replacement));
    if (target !== undefined)
      emit({ type: "target-assignment", groupId: group.groupId, memberId, assignment: target });
    emit(currentAssignmentRecord(group.groupId, replacement));
    return group.members.get(memberId);
  }

  /** Kafka's throwIfMemberEpochIsInvalid. */
  private throwIfMemberEpochIsInvalid(
    member: ConsumerGroupMember,
    received: number,
    owned: Assignment | null,
  ): void {
    if (received > member.memberEpoch) {
      throw new RequestError(
        ErrorCode.FENCED_MEMBER_EPOCH,
        `The consumer group member has a greater member epoch (${received}) than the one known by the group coordinator (${member.memberEpoch}). The member must abandon all its partitions and rejoin.`,
      );
    }
    if (received < member.memberEpoch) {
      // The response carrying the new epoch may have been lost: the previous epoch is accepted with a
      // subset of the current assignment.
      if (
        received !== member.previousMemberEpoch ||
        owned === null ||
        !isSubset(owned, member.assignedPartitions)
      ) {
        throw new RequestError(
          ErrorCode.FENCED_MEMBER_EPOCH,
          `The consumer group member has a smaller member epoch (${received}) than the one known by the group coordinator (${member.memberEpoch}). The member must abandon all its partitions and rejoin.`,
        );
      }
    }
  }

  /** Runs the group's assignor (Kafka's TargetAssignmentBuilder) and writes the members' new targets. */
  private updateTargetAssignment(group: ConsumerGroup, emit: (r: ConsumerGroupRecord) => void): void {
    const assignorName = group.preferredServerAssignor(
      this.config.assignors[0] ?? DEFAULT_CONSUMER_GROUP_ASSIGNOR,
    );
    for (const r of buildTargetAssignment(group, assignorName)) emit(r);
    this.logger.info(
      `[GroupId ${group.groupId}] Computed a new target assignment for epoch ${group.groupEpoch} with the ${assignorName} assignor.`,
    );
  }

  // ---- leaving and fencing ----

  private leave(
    group: ConsumerGroup,
    p: ConsumerGroupHeartbeatParams,
    records: ConsumerGroupRecord[],
  ): ConsumerGroupHeartbeatResult {
    const member = group.members.get(p.memberId);
    if (member === undefined)
      throw new RequestError(
        ErrorCode.UNKNOWN_MEMBER_ID,
        `Member ${p.memberId} is not a member of group ${group.groupId}.`,
      );
    const emit = (r: ConsumerGroupRecord): void => {
      records.push(r);
      group.replay(r);
    };
    if (p.memberEpoch === LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
      if (member.instanceId !== p.instanceId)
        throw new RequestError(
          ErrorCode.FENCED_INSTANCE_ID,
          `Static member ${p.memberId} with instance id ${p.instanceId} is fenced by another member.`,
        );
      this.logger.info(
        `[GroupId ${group.groupId}] Static member ${p.memberId} with instance id ${p.instanceId} left the consumer group; its assignment is kept for the session timeout.`,
      );
      emit(
        currentAssignmentRecord(group.groupId, {
          ...member,
          previousMemberEpoch: member.memberEpoch,
          memberEpoch: LEAVE_GROUP_STATIC_MEMBER_EPOCH,
          partitionsPendingRevocation: EMPTY_ASSIGNMENT,
        }),
      );
      this.timeouts.cancelRebalanceTimeout(group, p.memberId);
      this.timeouts.scheduleSessionTimeout(group, p.memberId);
    } else {
      this.logger.info(`[GroupId ${group.groupId}] Member ${p.memberId} left the consumer group.`);
      this.removeMember(group, p.memberId, emit);
    }
    return {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      memberId: p.memberId,
      memberEpoch: p.memberEpoch,
      heartbeatIntervalMs: 0,
      assignment: null,
    };
  }

  /** Kafka's consumerGroupFenceMember: tombstones for the member, then a new group epoch. */
  private removeMember(group: ConsumerGroup, memberId: string, emit: (r: ConsumerGroupRecord) => void): void {
    this.timeouts.cancelTimers(group, memberId);
    for (const r of memberTombstones(group.groupId, memberId)) emit(r);
    const remaining = group.subscribedTopicNames();
    const kept = [...group.subscriptionMetadata.values()].filter((t) => remaining.has(t.topicName));
    if (kept.length !== group.subscriptionMetadata.size)
      emit({ type: "partition-metadata", groupId: group.groupId, topics: kept });
    emit(groupEpochRecord(group.groupId, group.groupEpoch + 1));
  }

  private fence(group: ConsumerGroup, memberId: string, reason: string): void {
    if (this.group(group.groupId) !== group || !group.members.has(memberId)) return;
    this.logger.info(
      `[GroupId ${group.groupId}] Member ${memberId} fenced from the group because ${reason}.`,
    );
    const records: ConsumerGroupRecord[] = [];
    this.removeMember(group, memberId, (r) => {
      records.push(r);
      group.replay(r);
    });
    void this.manager.append(group.groupId, records.map(encodeConsumerGroupRecord)).then((code) => {
      if (code !== ErrorCode.NONE)
        this.logger.warn(
          `[GroupId ${group.groupId}] Failed to write the fencing of member ${memberId}: error ${errorNameOf(code)}.`,
        );
    });
  }

  // ---- describe / list ----

  describe(groupId: string): DescribedConsumerGroup {
    const g = this.group(groupId);
    const notFound = (msg: string): DescribedConsumerGroup => ({
      errorCode: ErrorCode.GROUP_ID_NOT_FOUND,
      errorMessage: msg,
      groupId,
      state: "Dead",
      groupEpoch: -1,
      assignmentEpoch: -1,
      assignorName: "",
      members: [],
    });
    if (g === undefined) {
      const classic = this.manager.getGroup(groupId);
      return classic !== undefined && !classic.is("Dead")
        ? notFound(`Group ${groupId} is not a consumer group.`)
        : notFound(`Group ${groupId} not found.`);
    }
    return {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      groupId,
      state: g.state,
      groupEpoch: g.groupEpoch,
      assignmentEpoch: g.assignmentEpoch,
      assignorName: g.preferredServerAssignor(this.config.assignors[0] ?? DEFAULT_CONSUMER_GROUP_ASSIGNOR),
      members: [...g.members.values()].map((member) => ({
        member,
        targetAssignment: g.targetAssignment.get(member.memberId) ?? EMPTY_ASSIGNMENT,
      })),
    };
  }

  /** ListGroups entries (type "consumer"). */
  listed(): Array<{ groupId: string; protocolType: string; state: string; type: string }> {
    return this.currentGroups().map((g) => ({
      groupId: g.groupId,
      protocolType: CONSUMER_PROTOCOL_TYPE,
      state: g.state,
      type: "consumer",
    }));
  }

  // ---- DeleteGroups ----

  /** DeleteGroups of a consumer group: only an empty one (NON_EMPTY_GROUP otherwise), with its offsets. */
  async deleteGroup(group: ConsumerGroup): Promise<number> {
    if (group.members.size > 0) return ErrorCode.NON_EMPTY_GROUP;
    const g = group.groupId;
    const records: RecordInput[] = [...group.offsets.keys()].map((k) => {
      const { topic, partition } = parseOffsetKey(k);
      return { key: offsetCommitKey(g, topic, partition), value: null };
    });
    for (const r of [
      { type: "target-assignment-epoch", groupId: g, epoch: null },
      { type: "partition-metadata", groupId: g, topics: null },
      groupEpochRecord(g, null),
    ] as ConsumerGroupRecord[])
      records.push(encodeConsumerGroupRecord(r));
    const code = await this.manager.append(g, records);
    if (code === ErrorCode.NONE && group.members.size === 0) {
      group.dead = true;
      this.groups.delete(g);
      this.logger.info(`[GroupId ${g}] Consumer group deleted.`);
    }
    return code;
  }

  // ---- loading (hooks called by GroupMetadataManager) ----

  private replayLoaded(key: Buffer, value: Buffer | null): void {
    const r = decodeConsumerGroupRecord(key, value);
    let g = this.groups.get(r.groupId);
    if (r.type === "group-epoch" && r.epoch === null) {
      this.groups.delete(r.groupId);
      return;
    }
    if (g === undefined) {
      const isTombstone =
        (r.type === "member-subscription" || r.type === "current-assignment") && r.value === null;
      if (isTombstone) return;
      g = new ConsumerGroup(r.groupId);
      this.groups.set(r.groupId, g);
    }
    g.replay(r);
  }

  private onLoaded(partition: number, offsets: Map<string, Map<string, CommittedOffset>>): void {
    let n = 0;
    for (const g of this.groups.values()) {
      if (this.manager.partitionFor(g.groupId) !== partition) continue;
      n++;
      for (const [k, o] of offsets.get(g.groupId) ?? []) g.offsets.set(k, o);
      offsets.delete(g.groupId);
      for (const m of g.members.values()) {
        this.timeouts.scheduleSessionTimeout(g, m.memberId);
        if (m.state === "unrevoked_partitions")
          this.timeouts.scheduleRebalanceTimeout(g, m.memberId, m.memberEpoch, m.rebalanceTimeoutMs);
      }
    }
    if (n > 0) this.logger.info(`Loaded ${n} consumer group(s) from partition ${partition}.`);
  }

  private onUnloaded(partition: number | null): void {
    for (const g of [...this.groups.values()]) {
      if (partition !== null && this.manager.partitionFor(g.groupId) !== partition) continue;
      for (const id of [...g.members.keys()]) this.timeouts.cancelTimers(g, id);
      this.groups.delete(g.groupId);
    }
  }
}
