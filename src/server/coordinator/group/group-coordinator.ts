// GroupCoordinator: the classic group protocol (Kafka's GroupCoordinator): JoinGroup (with KIP-394's
// member-id-required first join and KIP-345 static membership), SyncGroup, Heartbeat, LeaveGroup (batched),
// OffsetCommit, OffsetFetch, DescribeGroups, ListGroups, DeleteGroups and OffsetDelete, over the groups
// its GroupMetadataManager holds. Rebalances wait for every member to rejoin within the rebalance timeout
// (a DelayedJoin), or, for a group that was Empty, out group.initial.rebalance.delay.ms (InitialDelayedJoin);
// members that stop heartbeating within their session timeout are removed (DelayedHeartbeat). Timers come
// from the injected Scheduler; every answer is a Kafka error code. A group id is either classic or a KIP-848
// consumer group (consumer-group-coordinator.ts, reached through consumerGroupHeartbeat/Describe and the
// consumer-group branches of the offset, list and delete APIs); JoinGroup on a consumer group is
// INCONSISTENT_GROUP_PROTOCOL, as in Kafka 3.7 without online migration.

import { randomUUID } from "node:crypto";
import { Logger } from "../../../common/logger.js";
import type { Scheduler } from "../../../common/scheduler.js";
import type { Time } from "../../../common/time.js";
import { ErrorCode, errorNameOf } from "../../../protocol/errors.js";
import {
  type ConsumerGroupConfig,
  ConsumerGroupCoordinator,
  type ConsumerGroupHeartbeatParams,
  type ConsumerGroupHeartbeatResult,
  DEFAULT_CONSUMER_GROUP_CONFIG,
  type DescribedConsumerGroup,
  heartbeatError,
  type TopicsImage,
} from "./consumer-group-coordinator.js";
import { groupSubscribedTopics } from "./consumer-protocol.js";
import { type CommittedOffset, GroupMetadata, offsetKey, parseOffsetKey } from "./group-metadata.js";
import { GROUP_METADATA_TOPIC_NAME, type GroupMetadataManager } from "./group-metadata-manager.js";
import {
  EMPTY_ASSIGNMENT,
  type GroupProtocol,
  type JoinGroupResult,
  MemberMetadata,
  type SyncGroupResult,
} from "./member-metadata.js";

/** How long a new member has to complete its first rebalance before it is dropped (Kafka: 5 minutes). */
export const NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000;

export interface GroupConfig {
  readonly groupMinSessionTimeoutMs: number;
  readonly groupMaxSessionTimeoutMs: number;
  readonly groupInitialRebalanceDelayMs: number;
  readonly groupMaxSize: number;
  readonly offsetMetadataMaxBytes: number;
  /** group.consumer.* (KIP-848); Kafka's defaults when absent. */
  readonly consumerGroup?: Partial<ConsumerGroupConfig>;
}

export interface JoinGroupParams {
  readonly groupId: string;
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  /** JoinGroup v4+: a new dynamic member first gets MEMBER_ID_REQUIRED (KIP-394). */
  readonly requireKnownMemberId: boolean;
  /** JoinGroup v9+ (KIP-814): a static leader rejoining a stable group is told to skip the assignment. */
  readonly supportSkippingAssignment: boolean;
  readonly clientId: string;
  readonly clientHost: string;
  readonly rebalanceTimeoutMs: number;
  readonly sessionTimeoutMs: number;
  readonly protocolType: string;
  readonly protocols: readonly GroupProtocol[];
  readonly reason: string | null;
}

export interface SyncGroupParams {
  readonly groupId: string;
  readonly generationId: number;
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly protocolType: string | null;
  readonly protocolName: string | null;
  readonly assignments: ReadonlyMap<string, Buffer>;
}

export interface MemberIdentity {
  readonly memberId: string;
  readonly groupInstanceId: string | null;
}

export interface GroupSummary {
  readonly errorCode: number;
  readonly state: string;
  readonly protocolType: string;
  readonly protocol: string;
  readonly members: ReadonlyArray<{
    memberId: string;
    groupInstanceId: string | null;
    clientId: string;
    clientHost: string;
    metadata: Buffer;
    assignment: Buffer;
  }>;
}

export interface OffsetFetchPartition {
  readonly topic: string;
  readonly partition: number;
  readonly offset: bigint;
  readonly leaderEpoch: number;
  readonly metadata: string;
  readonly errorCode: number;
}

type Api =
  | "join"
  | "sync"
  | "heartbeat"
  | "leave"
  | "commit"
  | "fetch"
  | "describe"
  | "delete"
  | "offset-delete"
  | "consumer-heartbeat"
  | "consumer-describe";

function joinError(memberId: string, errorCode: number): JoinGroupResult {
  return {
    errorCode,
    memberId,
    generationId: -1,
    protocolType: null,
    protocolName: null,
    leaderId: "",
    skipAssignment: false,
    members: [],
  };
}

function syncError(errorCode: number): SyncGroupResult {
  return { errorCode, protocolType: null, protocolName: null, assignment: EMPTY_ASSIGNMENT };
}

export class GroupCoordinator {
  private readonly logger: Logger;
  private active = false;
  /** The KIP-848 consumer groups. */
  readonly consumerGroups: ConsumerGroupCoordinator;

  constructor(
    readonly brokerId: number,
    private readonly config: GroupConfig,
    readonly groupManager: GroupMetadataManager,
    private readonly time: Time,
    private readonly scheduler: Scheduler,
  ) {
    this.logger = new Logger("kafka.coordinator.group.GroupCoordinator", `GroupCoordinator ${brokerId}`);
    groupManager.onGroupLoaded = (g) => {
      for (const m of g.members.values()) this.scheduleHeartbeatExpiration(g, m, m.sessionTimeoutMs);
    };
    groupManager.onGroupUnloaded = (g) => this.onGroupUnloaded(g);
    groupManager.subscribedTopicsOf = (g) => groupSubscribedTopics(g);
    this.consumerGroups = new ConsumerGroupCoordinator(
      brokerId,
      { ...DEFAULT_CONSUMER_GROUP_CONFIG, ...config.consumerGroup },
      groupManager,
      scheduler,
    );
  }

  // ---- KIP-848 ----

  /** ConsumerGroupHeartbeat: validated, then run by the consumer group coordinator if the group is ours. */
  consumerGroupHeartbeat(
    p: ConsumerGroupHeartbeatParams,
    topics: TopicsImage,
  ): Promise<ConsumerGroupHeartbeatResult> {
    if (!this.active) return Promise.resolve(heartbeatError(ErrorCode.COORDINATOR_NOT_AVAILABLE));
    const invalid = this.consumerGroups.validateRequest(p);
    if (invalid !== null) return Promise.resolve(invalid);
    const status = this.validateGroupStatus(p.groupId, "consumer-heartbeat");
    if (status !== null) return Promise.resolve(heartbeatError(status));
    return this.consumerGroups.heartbeat(p, topics);
  }

  /** ConsumerGroupDescribe of one group. */
  consumerGroupDescribe(groupId: string): DescribedConsumerGroup {
    const status = this.validateGroupStatus(groupId, "consumer-describe");
    if (status !== null)
      return { ...this.consumerGroups.describe(groupId), errorCode: status, errorMessage: null };
    return this.consumerGroups.describe(groupId);
  }

  startup(): void {
    this.logger.info("Starting up.");
    this.groupManager.startup();
    this.active = true;
    this.logger.info("Startup complete.");
  }

  shutdown(): void {
    this.logger.info("Shutting down.");
    this.active = false;
    this.groupManager.shutdown();
    this.logger.info("Shutdown complete.");
  }

  /** This broker became leader of __consumer_offsets-<partition> (Kafka's onElection). */
  onElection(partition: number): void {
    this.logger.info(`Elected as the group coordinator for partition ${partition}`);
    this.groupManager.scheduleLoad(partition);
  }

  /** This broker is no longer leader of __consumer_offsets-<partition> (Kafka's onResignation). */
  onResignation(partition: number): void {
    if (!this.groupManager.isPartitionOwned(partition) && !this.groupManager.isPartitionLoading(partition))
      return;
    this.logger.info(`Resigned as the group coordinator for partition ${partition}`);
    this.groupManager.unload(partition);
  }

  partitionFor(groupId: string): number {
    return this.groupManager.partitionFor(groupId);
  }

  private nowMs(): bigint {
    return BigInt(this.time.milliseconds());
  }

  private topicPartitionOf(group: GroupMetadata): string {
    return `${GROUP_METADATA_TOPIC_NAME}-${this.partitionFor(group.groupId)}`;
  }

  /** Kafka's validateGroupStatus; null when the request may proceed. */
  private validateGroupStatus(groupId: string, api: Api): number | null {
    // OffsetCommit/OffsetFetch/DescribeGroups/DeleteGroups accept the empty group id (Kafka's isValidGroupId).
    const emptyAllowed = api === "commit" || api === "fetch" || api === "describe" || api === "delete";
    if (!emptyAllowed && groupId === "") return ErrorCode.INVALID_GROUP_ID;
    if (!this.active) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    if (this.groupManager.isGroupLoading(groupId)) return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
    if (!this.groupManager.isGroupLocal(groupId)) return ErrorCode.NOT_COORDINATOR;
    return null;
  }

  /** Kafka's validateCurrentMember: static membership fencing, then membership. */
  private validateCurrentMember(
    group: GroupMetadata,
    memberId: string,
    groupInstanceId: string | null,
  ): number | null {
    if (groupInstanceId !== null) {
      const current = group.staticMemberId(groupInstanceId);
      if (current !== undefined && current !== memberId) return ErrorCode.FENCED_INSTANCE_ID;
    }
    if (!group.has(memberId)) return ErrorCode.UNKNOWN_MEMBER_ID;
    return null;
  }

  // ---- JoinGroup ----

  joinGroup(p: JoinGroupParams): Promise<JoinGroupResult> {
    const status = this.validateGroupStatus(p.groupId, "join");
    if (status !== null) return Promise.resolve(joinError(p.memberId, status));
    if (this.consumerGroups.group(p.groupId) !== undefined)
      return Promise.resolve(joinError(p.memberId, ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
    if (
      p.sessionTimeoutMs < this.config.groupMinSessionTimeoutMs ||
      p.sessionTimeoutMs > this.config.groupMaxSessionTimeoutMs
    ) {
      return Promise.resolve(joinError(p.memberId, ErrorCode.INVALID_SESSION_TIMEOUT));
    }
    const isUnknownMember = p.memberId === "";
    let group = this.groupManager.getGroup(p.groupId);
    if (group === undefined) {
      if (!isUnknownMember) return Promise.resolve(joinError(p.memberId, ErrorCode.UNKNOWN_MEMBER_ID));
      group = this.groupManager.getOrCreateGroup(p.groupId);
    }
    const g = group;
    if (!this.acceptJoiningMember(g, p.memberId, p.groupInstanceId)) {
      this.logger.info(
        `Rejected join of member ${p.memberId || "(new)"} to group ${g.groupId}: the group has reached its maximum size (${this.config.groupMaxSize}).`,
      );
      return Promise.resolve(joinError(p.memberId, ErrorCode.GROUP_MAX_SIZE_REACHED));
    }
    return new Promise((resolve) => {
      if (isUnknownMember) this.doNewMemberJoinGroup(g, p, resolve);
      else this.doCurrentMemberJoinGroup(g, p, resolve);
    });
  }

  /** Kafka's acceptJoiningMember: new members are accepted up to group.max.size. */
  private acceptJoiningMember(
    group: GroupMetadata,
    memberId: string,
    groupInstanceId: string | null,
  ): boolean {
    if (groupInstanceId !== null && group.staticMemberId(groupInstanceId) !== undefined) return true;
    switch (group.state) {
      case "Empty":
      case "Dead":
        return true;
      case "PreparingRebalance":
        // Members already waiting are counted, not the group size (which may exceed a lowered maximum).
        return (
          (group.get(memberId)?.isAwaitingJoin ?? false) ||
          group.numMembersAwaitingJoin < this.config.groupMaxSize
        );
      default:
        return group.has(memberId) || group.size < this.config.groupMaxSize;
    }
  }

  /** A Dead group, or protocols the group's members do not share, end a JoinGroup at once. */
  private rejectJoin(group: GroupMetadata, p: JoinGroupParams, cb: (r: JoinGroupResult) => void): boolean {
    if (group.is("Dead")) cb(joinError(p.memberId, ErrorCode.COORDINATOR_NOT_AVAILABLE));
    else if (!group.supportsProtocols(p.protocolType, p.protocols))
      cb(joinError(p.memberId, ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
    else return false;
    return true;
  }

  private doNewMemberJoinGroup(
    group: GroupMetadata,
    p: JoinGroupParams,
    cb: (r: JoinGroupResult) => void,
  ): void {
    if (this.rejectJoin(group, p, cb)) return;
    const newMemberId = `${p.clientId}-${randomUUID()}`;
    if (p.groupInstanceId !== null) {
      this.doStaticMemberJoinGroup(group, newMemberId, p, cb);
      return;
    }
    if (p.requireKnownMemberId) {
      this.logger.info(
        `Dynamic member with unknown member id joins group ${group.groupId} in ${group.state} state. Created a new member id ${newMemberId} and request the member to rejoin with this id.`,
      );
      group.pendingMembers.add(newMemberId);
      this.schedulePendingMemberExpiration(group, newMemberId, p.sessionTimeoutMs);
      cb(joinError(newMemberId, ErrorCode.MEMBER_ID_REQUIRED));
      return;
    }
    this.addMemberAndRebalance(group, newMemberId, p, cb);
  }

  private doStaticMemberJoinGroup(
    group: GroupMetadata,
    newMemberId: string,
    p: JoinGroupParams,
    cb: (r: JoinGroupResult) => void,
  ): void {
    const instanceId = p.groupInstanceId!;
    const oldMemberId = group.staticMemberId(instanceId);
    if (oldMemberId === undefined) {
      this.logger.info(
        `Static member with groupInstanceId=${instanceId} and unknown member id joins group ${group.groupId} in ${group.state} state. Created a new member id ${newMemberId} for this member and add to the group.`,
      );
      this.addMemberAndRebalance(group, newMemberId, p, cb);
      return;
    }
    this.logger.info(
      `Static member which joins during ${group.state} state with groupInstanceId=${instanceId} and member id ${oldMemberId} is replaced by ${newMemberId}; the old one is fenced.`,
    );
    const old = group.get(oldMemberId)!;
    this.cancelHeartbeat(old);
    const oldJoin = old.awaitingJoin;
    const oldSync = old.awaitingSync;
    old.awaitingJoin = undefined;
    old.awaitingSync = undefined;
    oldJoin?.(joinError(oldMemberId, ErrorCode.FENCED_INSTANCE_ID));
    oldSync?.(syncError(ErrorCode.FENCED_INSTANCE_ID));
    const oldProtocols = old.supportedProtocols;
    const member = group.replaceStaticMember(instanceId, oldMemberId, newMemberId);
    member.clientId = p.clientId;
    member.clientHost = p.clientHost;
    member.sessionTimeoutMs = p.sessionTimeoutMs;
    member.rebalanceTimeoutMs = p.rebalanceTimeoutMs;
    if (group.is("Stable") && member.matches(p.protocols)) {
      // Rejoin without a rebalance: persist the new member id, keep the assignment (Kafka 2.4+).
      const generation = group.generationId;
      void this.groupManager.storeGroup(group).then((code) => {
        if (code !== ErrorCode.NONE) {
          this.logger.warn(
            `Failed to persist the replacement of static member ${instanceId} in group ${group.groupId}: error ${errorNameOf(code)}; reverting to ${oldMemberId}.`,
          );
          if (group.has(newMemberId)) {
            group.replaceStaticMember(instanceId, newMemberId, oldMemberId).supportedProtocols = oldProtocols;
          }
          return cb(joinError(newMemberId, code));
        }
        const isLeader = group.isLeader(newMemberId);
        const skip = isLeader && p.supportSkippingAssignment;
        this.scheduleHeartbeatExpiration(group, member, member.sessionTimeoutMs);
        cb({
          errorCode: ErrorCode.NONE,
          memberId: newMemberId,
          generationId: generation,
          protocolType: group.protocolType,
          protocolName: group.protocolName,
          leaderId: group.leaderId ?? "",
          skipAssignment: skip,
          members: skip ? this.currentMemberMetadata(group) : [],
        });
      });
      return;
    }
    this.updateMemberAndRebalance(
      group,
      member,
      p,
      cb,
      `static member ${instanceId} rejoined with new protocols`,
    );
  }

  private doCurrentMemberJoinGroup(
    group: GroupMetadata,
    p: JoinGroupParams,
    cb: (r: JoinGroupResult) => void,
  ): void {
    if (this.rejectJoin(group, p, cb)) return;
    if (group.isPendingMember(p.memberId)) {
      this.addMemberAndRebalance(group, p.memberId, p, cb);
      return;
    }
    const invalid = this.validateCurrentMember(group, p.memberId, p.groupInstanceId);
    if (invalid !== null) {
      cb(joinError(p.memberId, invalid));
      return;
    }
    const member = group.get(p.memberId)!;
    switch (group.state) {
      case "PreparingRebalance":
        this.updateMemberAndRebalance(
          group,
          member,
          p,
          cb,
          `Member ${member.memberId} joining group during ${group.state}`,
        );
        return;
      case "CompletingRebalance":
        if (member.matches(p.protocols)) {
          // The member missed its JoinGroup response: send it again.
          cb(this.currentGenerationJoinResult(group, member.memberId));
          return;
        }
        this.updateMemberAndRebalance(
          group,
          member,
          p,
          cb,
          `Updating metadata for member ${member.memberId} during ${group.state}`,
        );
        return;
      case "Stable":
        if (group.isLeader(member.memberId) || !member.matches(p.protocols)) {
          this.updateMemberAndRebalance(
            group,
            member,
            p,
            cb,
            group.isLeader(member.memberId)
              ? `leader ${member.memberId} re-joining group during Stable`
              : `Updating metadata for member ${member.memberId} during Stable`,
          );
          return;
        }
        this.scheduleHeartbeatExpiration(group, member, member.sessionTimeoutMs);
        cb({ ...this.currentGenerationJoinResult(group, member.memberId), members: [] });
        return;
      default:
        cb(joinError(p.memberId, ErrorCode.UNKNOWN_MEMBER_ID));
        return;
    }
  }

  private currentMemberMetadata(group: GroupMetadata): JoinGroupResult["members"] {
    const protocol = group.protocolName;
    if (protocol === null) return [];
    return [...group.members.values()].map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      metadata: m.metadata(protocol),
    }));
  }

  private currentGenerationJoinResult(group: GroupMetadata, memberId: string): JoinGroupResult {
    return {
      errorCode: ErrorCode.NONE,
      memberId,
      generationId: group.generationId,
      protocolType: group.protocolType,
      protocolName: group.protocolName,
      leaderId: group.leaderId ?? "",
      skipAssignment: false,
      members: group.isLeader(memberId) ? this.currentMemberMetadata(group) : [],
    };
  }

  private addMemberAndRebalance(
    group: GroupMetadata,
    memberId: string,
    p: JoinGroupParams,
    cb: (r: JoinGroupResult) => void,
  ): void {
    const member = new MemberMetadata(
      memberId,
      p.groupInstanceId,
      p.clientId,
      p.clientHost,
      p.rebalanceTimeoutMs,
      p.sessionTimeoutMs,
      p.protocolType,
      p.protocols,
    );
    member.isNew = true;
    // A member joining an initial delayed rebalance extends it (Kafka's newMemberAdded).
    if (group.is("PreparingRebalance") && group.generationId === 0) group.newMemberAdded = true;
    group.add(member);
    member.awaitingJoin = cb;
    this.scheduleHeartbeatExpiration(group, member, NEW_MEMBER_JOIN_TIMEOUT_MS);
    this.maybePrepareRebalance(
      group,
      `Adding new member ${memberId} with group instance id ${p.groupInstanceId ?? "None"}${p.reason ? `; client reason: ${p.reason}` : ""}`,
    );
  }

  private updateMemberAndRebalance(
    group: GroupMetadata,
    member: MemberMetadata,
    p: JoinGroupParams,
    cb: (r: JoinGroupResult) => void,
    reason: string,
  ): void {
    member.supportedProtocols = p.protocols;
    member.rebalanceTimeoutMs = p.rebalanceTimeoutMs;
    member.sessionTimeoutMs = p.sessionTimeoutMs;
    const previous = member.awaitingJoin;
    member.awaitingJoin = cb;
    // A second JoinGroup from the same member replaces the first, which is answered as superseded.
    previous?.(joinError(member.memberId, ErrorCode.REBALANCE_IN_PROGRESS));
    this.maybePrepareRebalance(group, reason);
  }

  private maybePrepareRebalance(group: GroupMetadata, reason: string): void {
    if (group.canRebalance()) this.prepareRebalance(group, reason);
    else if (group.is("PreparingRebalance")) this.tryCompleteJoin(group);
  }

  private prepareRebalance(group: GroupMetadata, reason: string): void {
    if (group.is("CompletingRebalance"))
      this.resetAndPropagateAssignmentError(group, ErrorCode.REBALANCE_IN_PROGRESS);
    const wasEmpty = group.is("Empty");
    group.transitionTo("PreparingRebalance", this.nowMs());
    this.logger.info(
      `Preparing to rebalance group ${group.groupId} in state ${group.state} with old generation ${group.generationId} (${this.topicPartitionOf(group)}) (reason: ${reason})`,
    );
    group.rebalanceTimer?.cancel();
    if (wasEmpty) {
      const delay = this.config.groupInitialRebalanceDelayMs;
      this.scheduleInitialJoin(group, delay, Math.max(group.maxRebalanceTimeoutMs() - delay, 0));
    } else {
      group.initialRebalancePending = false;
      const generation = group.generationId;
      group.rebalanceTimer = this.scheduler.schedule(
        `delayed-join-${group.groupId}`,
        () => {
          if (group.is("PreparingRebalance") && group.generationId === generation) this.onCompleteJoin(group);
        },
        group.maxRebalanceTimeoutMs(),
      );
      this.tryCompleteJoin(group);
    }
  }

  /** Kafka's InitialDelayedJoin: waits `delayMs`, longer while new members keep arriving (up to `remainingMs`). */
  private scheduleInitialJoin(group: GroupMetadata, delayMs: number, remainingMs: number): void {
    group.initialRebalancePending = true;
    group.rebalanceTimer = this.scheduler.schedule(
      `initial-delayed-join-${group.groupId}`,
      () => {
        if (!group.is("PreparingRebalance") || !group.initialRebalancePending) return;
        if (group.newMemberAdded && remainingMs > 0) {
          group.newMemberAdded = false;
          const delay = Math.min(this.config.groupInitialRebalanceDelayMs, remainingMs);
          this.scheduleInitialJoin(group, delay, Math.max(remainingMs - delay, 0));
        } else {
          group.initialRebalancePending = false;
          this.onCompleteJoin(group);
        }
      },
      delayMs,
    );
  }

  private tryCompleteJoin(group: GroupMetadata): void {
    if (group.is("PreparingRebalance") && !group.initialRebalancePending && group.hasAllMembersJoined()) {
      this.onCompleteJoin(group);
    }
  }

  /** Kafka's onCompleteJoin: drop members that did not rejoin, start the next generation, answer the joins. */
  private onCompleteJoin(group: GroupMetadata): void {
    if (!group.is("PreparingRebalance")) return;
    group.rebalanceTimer?.cancel();
    group.rebalanceTimer = undefined;
    group.initialRebalancePending = false;
    for (const m of group.notYetRejoinedMembers()) {
      this.logger.info(`Group ${group.groupId} removed dynamic members who haven't joined: ${m.memberId}`);
      this.cancelHeartbeat(m);
      group.remove(m.memberId);
    }
    group.initNextGeneration(this.nowMs());
    if (group.is("Empty")) {
      this.logger.info(
        `Group ${group.groupId} with generation ${group.generationId} is now empty (${this.topicPartitionOf(group)})`,
      );
      void this.groupManager.storeGroup(group, new Map()).then((code) => {
        if (code !== ErrorCode.NONE) {
          this.logger.warn(
            `Failed to write empty metadata for group ${group.groupId}: error ${errorNameOf(code)}`,
          );
        }
      });
      return;
    }
    this.logger.info(
      `Stabilized group ${group.groupId} generation ${group.generationId} (${this.topicPartitionOf(group)}) with ${group.size} members`,
    );
    const all = this.currentMemberMetadata(group);
    for (const m of group.members.values()) {
      const cb = m.awaitingJoin;
      m.awaitingJoin = undefined;
      m.isNew = false;
      cb?.({
        errorCode: ErrorCode.NONE,
        memberId: m.memberId,
        generationId: group.generationId,
        protocolType: group.protocolType,
        protocolName: group.protocolName,
        leaderId: group.leaderId ?? "",
        skipAssignment: false,
        members: group.isLeader(m.memberId) ? all : [],
      });
      this.scheduleHeartbeatExpiration(group, m, m.sessionTimeoutMs);
    }
  }

  private resetAndPropagateAssignmentError(group: GroupMetadata, errorCode: number): void {
    for (const m of group.members.values()) {
      m.assignment = EMPTY_ASSIGNMENT;
      const cb = m.awaitingSync;
      m.awaitingSync = undefined;
      cb?.(syncError(errorCode));
    }
  }

  private setAndPropagateAssignment(group: GroupMetadata, assignments: ReadonlyMap<string, Buffer>): void {
    for (const m of group.members.values()) {
      m.assignment = assignments.get(m.memberId) ?? EMPTY_ASSIGNMENT;
      const cb = m.awaitingSync;
      m.awaitingSync = undefined;
      cb?.({
        errorCode: ErrorCode.NONE,
        protocolType: group.protocolType,
        protocolName: group.protocolName,
        assignment: m.assignment,
      });
      this.scheduleHeartbeatExpiration(group, m, m.sessionTimeoutMs);
    }
  }

  // ---- SyncGroup ----

  syncGroup(p: SyncGroupParams): Promise<SyncGroupResult> {
    const status = this.validateGroupStatus(p.groupId, "sync");
    // A group still loading cannot be synced: the member rejoins (Kafka answers REBALANCE_IN_PROGRESS).
    if (status === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
      return Promise.resolve(syncError(ErrorCode.REBALANCE_IN_PROGRESS));
    if (status !== null) return Promise.resolve(syncError(status));
    const group = this.groupManager.getGroup(p.groupId);
    if (group === undefined) return Promise.resolve(syncError(ErrorCode.UNKNOWN_MEMBER_ID));
    if (group.is("Dead")) return Promise.resolve(syncError(ErrorCode.COORDINATOR_NOT_AVAILABLE));
    const invalid = this.validateCurrentMember(group, p.memberId, p.groupInstanceId);
    if (invalid !== null) return Promise.resolve(syncError(invalid));
    if (p.generationId !== group.generationId)
      return Promise.resolve(syncError(ErrorCode.ILLEGAL_GENERATION));
    if (
      (p.protocolType !== null && p.protocolType !== group.protocolType) ||
      (p.protocolName !== null && p.protocolName !== group.protocolName)
    ) {
      return Promise.resolve(syncError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
    }
    const member = group.get(p.memberId)!;
    switch (group.state) {
      case "Empty":
        return Promise.resolve(syncError(ErrorCode.UNKNOWN_MEMBER_ID));
      case "PreparingRebalance":
        return Promise.resolve(syncError(ErrorCode.REBALANCE_IN_PROGRESS));
      case "Stable":
        this.scheduleHeartbeatExpiration(group, member, member.sessionTimeoutMs);
        return Promise.resolve({
          errorCode: ErrorCode.NONE,
          protocolType: group.protocolType,
          protocolName: group.protocolName,
          assignment: member.assignment,
        });
      case "CompletingRebalance":
        return new Promise((resolve) => {
          member.awaitingSync?.(syncError(ErrorCode.REBALANCE_IN_PROGRESS));
          member.awaitingSync = resolve;
          if (!group.isLeader(p.memberId)) return;
          let staticMembers = 0;
          for (const m of group.members.values()) if (m.isStaticMember) staticMembers++;
          this.logger.info(
            `Assignment received from leader ${p.memberId} for group ${group.groupId} for generation ${group.generationId}. The group has ${group.size} members, ${staticMembers} of which are static.`,
          );
          const assignments = new Map<string, Buffer>();
          for (const m of group.members.values())
            assignments.set(m.memberId, p.assignments.get(m.memberId) ?? EMPTY_ASSIGNMENT);
          const generation = group.generationId;
          void this.groupManager.storeGroup(group, assignments).then((code) => {
            if (!group.is("CompletingRebalance") || group.generationId !== generation) return;
            if (code !== ErrorCode.NONE) {
              this.resetAndPropagateAssignmentError(group, code);
              this.maybePrepareRebalance(
                group,
                `Error ${errorNameOf(code)} when storing group assignment during SyncGroup`,
              );
              return;
            }
            this.setAndPropagateAssignment(group, assignments);
            group.transitionTo("Stable", this.nowMs());
          });
        });
      default:
        return Promise.resolve(syncError(ErrorCode.COORDINATOR_NOT_AVAILABLE));
    }
  }

  // ---- Heartbeat ----

  heartbeat(groupId: string, memberId: string, groupInstanceId: string | null, generationId: number): number {
    const status = this.validateGroupStatus(groupId, "heartbeat");
    // While the group loads, heartbeats succeed so the member keeps its session (Kafka does the same).
    if (status === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS) return ErrorCode.NONE;
    if (status !== null) return status;
    const group = this.groupManager.getGroup(groupId);
    if (group === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (group.is("Dead")) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    const invalid = this.validateCurrentMember(group, memberId, groupInstanceId);
    if (invalid !== null) return invalid;
    if (generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION;
    const member = group.get(memberId)!;
    switch (group.state) {
      case "Empty":
        return ErrorCode.UNKNOWN_MEMBER_ID;
      case "CompletingRebalance":
      case "Stable":
        this.scheduleHeartbeatExpiration(group, member, member.sessionTimeoutMs);
        return ErrorCode.NONE;
      case "PreparingRebalance":
        this.scheduleHeartbeatExpiration(group, member, member.sessionTimeoutMs);
        return ErrorCode.REBALANCE_IN_PROGRESS;
      default:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    }
  }

  private cancelHeartbeat(member: MemberMetadata): void {
    member.heartbeatTask?.cancel();
    member.heartbeatTask = undefined;
    member.heartbeatEpoch++;
  }

  /** Kafka's completeAndScheduleNextExpiration: the member must be heard from again within timeoutMs. */
  private scheduleHeartbeatExpiration(group: GroupMetadata, member: MemberMetadata, timeoutMs: number): void {
    this.cancelHeartbeat(member);
    const epoch = member.heartbeatEpoch;
    member.heartbeatTask = this.scheduler.schedule(
      `heartbeat-${group.groupId}-${member.memberId}`,
      () => this.onExpireHeartbeat(group, member, epoch),
      timeoutMs,
    );
  }

  private onExpireHeartbeat(group: GroupMetadata, member: MemberMetadata, epoch: number): void {
    if (member.heartbeatEpoch !== epoch || group.get(member.memberId) !== member) return;
    // A member waiting for its JoinGroup or SyncGroup answer is alive (Kafka's shouldKeepAlive).
    if ((member.isAwaitingJoin && !member.isNew) || member.isAwaitingSync) {
      this.scheduleHeartbeatExpiration(group, member, member.sessionTimeoutMs);
      return;
    }
    this.logger.info(
      `Member ${member.memberId} in group ${group.groupId} has failed, removing it from the group`,
    );
    this.removeMemberAndUpdateGroup(
      group,
      member,
      `removing member ${member.memberId} on heartbeat expiration`,
    );
  }

  private schedulePendingMemberExpiration(group: GroupMetadata, memberId: string, timeoutMs: number): void {
    this.scheduler.schedule(
      `pending-member-${group.groupId}-${memberId}`,
      () => {
        if (!group.pendingMembers.delete(memberId)) return;
        this.logger.info(
          `Pending member ${memberId} in group ${group.groupId} has been removed after session timeout expiration.`,
        );
        this.tryCompleteJoin(group);
      },
      timeoutMs,
    );
  }

  private removeMemberAndUpdateGroup(group: GroupMetadata, member: MemberMetadata, reason: string): void {
    this.cancelHeartbeat(member);
    const join = member.awaitingJoin;
    member.awaitingJoin = undefined;
    join?.(joinError(member.memberId, ErrorCode.UNKNOWN_MEMBER_ID));
    const sync = member.awaitingSync;
    member.awaitingSync = undefined;
    sync?.(syncError(ErrorCode.UNKNOWN_MEMBER_ID));
    group.remove(member.memberId);
    switch (group.state) {
      case "Stable":
      case "CompletingRebalance":
        this.maybePrepareRebalance(group, reason);
        break;
      case "PreparingRebalance":
        this.tryCompleteJoin(group);
        break;
      default:
        break;
    }
  }

  // ---- LeaveGroup ----

  leaveGroup(
    groupId: string,
    leaving: readonly MemberIdentity[],
  ): { errorCode: number; members: Array<MemberIdentity & { errorCode: number }> } {
    const status = this.validateGroupStatus(groupId, "leave");
    if (status !== null) return { errorCode: status, members: [] };
    const group = this.groupManager.getGroup(groupId);
    if (group === undefined) {
      return {
        errorCode: ErrorCode.NONE,
        members: leaving.map((m) => ({ ...m, errorCode: ErrorCode.UNKNOWN_MEMBER_ID })),
      };
    }
    if (group.is("Dead")) return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, members: [] };
    const members = leaving.map((m) => {
      let memberId = m.memberId;
      if (memberId === "" && m.groupInstanceId !== null) {
        memberId = group.staticMemberId(m.groupInstanceId) ?? "";
      }
      if (group.isPendingMember(memberId)) {
        group.pendingMembers.delete(memberId);
        this.logger.info(
          `Pending member ${memberId} has left group ${groupId} through explicit LeaveGroup request`,
        );
        this.tryCompleteJoin(group);
        return { ...m, errorCode: ErrorCode.NONE };
      }
      const invalid = this.validateCurrentMember(group, memberId, m.groupInstanceId);
      if (invalid !== null) return { ...m, errorCode: invalid };
      const member = group.get(memberId)!;
      this.logger.info(`Member ${memberId} has left group ${groupId} through explicit LeaveGroup request`);
      this.removeMemberAndUpdateGroup(group, member, `removing member ${memberId} on LeaveGroup`);
      return { ...m, errorCode: ErrorCode.NONE };
    });
    return { errorCode: ErrorCode.NONE, members };
  }

  // ---- Offsets ----

  /** OffsetCommit: one error code per offsetKey(topic, partition) given. */
  async commitOffsets(
    groupId: string,
    memberId: string,
    groupInstanceId: string | null,
    generationId: number,
    offsets: ReadonlyMap<string, CommittedOffset>,
  ): Promise<Map<string, number>> {
    const all = (code: number): Map<string, number> => new Map([...offsets.keys()].map((k) => [k, code]));
    const status = this.validateGroupStatus(groupId, "commit");
    if (status !== null) return all(status);
    const consumerGroup = this.consumerGroups.group(groupId);
    if (consumerGroup !== undefined) {
      return this.consumerGroups.commitOffsets(
        consumerGroup,
        memberId,
        generationId,
        offsets,
        this.config.offsetMetadataMaxBytes,
      );
    }
    let group = this.groupManager.getGroup(groupId);
    if (group === undefined) {
      if (generationId >= 0) return all(ErrorCode.ILLEGAL_GENERATION);
      // A standalone consumer (assign) keeps its offsets in a group without members.
      group = this.groupManager.getOrCreateGroup(groupId);
    }
    if (group.is("Dead")) return all(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    if (generationId >= 0 || memberId !== "" || groupInstanceId !== null) {
      const invalid = this.validateCurrentMember(group, memberId, groupInstanceId);
      if (invalid !== null) return all(invalid);
      if (generationId !== group.generationId) return all(ErrorCode.ILLEGAL_GENERATION);
      if (group.is("CompletingRebalance")) return all(ErrorCode.REBALANCE_IN_PROGRESS);
      const member = group.get(memberId)!;
      this.scheduleHeartbeatExpiration(group, member, member.sessionTimeoutMs);
    } else if (!group.is("Empty")) {
      // The group has members: only they may commit.
      return all(ErrorCode.UNKNOWN_MEMBER_ID);
    }
    return this.storeOffsets(group, offsets);
  }

  /** Stores the offsets whose metadata fits offset.metadata.max.bytes (OFFSET_METADATA_TOO_LARGE for the rest). */
  private async storeOffsets(
    group: GroupMetadata,
    offsets: ReadonlyMap<string, CommittedOffset>,
    transaction?: { readonly producerId: bigint; readonly producerEpoch: number },
  ): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const valid = new Map<string, CommittedOffset>();
    for (const [k, o] of offsets) {
      if (Buffer.byteLength(o.metadata) > this.config.offsetMetadataMaxBytes)
        out.set(k, ErrorCode.OFFSET_METADATA_TOO_LARGE);
      else valid.set(k, o);
    }
    const code = await this.groupManager.storeOffsets(group, valid, transaction);
    for (const k of valid.keys()) out.set(k, code);
    return out;
  }

  /**
   * TxnOffsetCommit (Kafka's handleTxnCommitOffsets): offsets written in the producer's transaction,
   * pending until its marker. A member id or generation given (v3+) is checked as for OffsetCommit; without
   * them any producer may commit, even into a group with members (older clients send neither).
   */
  async commitTransactionalOffsets(
    groupId: string,
    producerId: bigint,
    producerEpoch: number,
    memberId: string,
    groupInstanceId: string | null,
    generationId: number,
    offsets: ReadonlyMap<string, CommittedOffset>,
  ): Promise<Map<string, number>> {
    const all = (code: number): Map<string, number> => new Map([...offsets.keys()].map((k) => [k, code]));
    const status = this.validateGroupStatus(groupId, "commit");
    if (status !== null) return all(status);
    if (this.consumerGroups.group(groupId) !== undefined) {
      // Transactional commits into KIP-848 consumer groups are not supported yet.
      return all(ErrorCode.UNSUPPORTED_VERSION);
    }
    const group = this.groupManager.getOrCreateGroup(groupId);
    if (group.is("Dead")) return all(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    if (generationId >= 0 || memberId !== "" || groupInstanceId !== null) {
      const invalid = this.validateCurrentMember(group, memberId, groupInstanceId);
      if (invalid !== null) return all(invalid);
      if (generationId !== group.generationId) return all(ErrorCode.ILLEGAL_GENERATION);
    }
    return this.storeOffsets(group, offsets, { producerId, producerEpoch });
  }

  /** A transaction marker reached __consumer_offsets-<partition>: its pending offsets commit or vanish. */
  onTransactionCompleted(partition: number, producerId: bigint, committed: boolean): void {
    this.groupManager.completeTransaction(partition, producerId, committed);
  }

  /**
   * OffsetFetch for one group: partitions null means every committed offset of the group. `member` (v9) is
   * checked against a consumer group's member epochs.
   */
  fetchOffsets(
    groupId: string,
    partitions: ReadonlyArray<{ topic: string; partition: number }> | null,
    member: { memberId: string | null; memberEpoch: number } = { memberId: null, memberEpoch: -1 },
    requireStable = false,
  ): { errorCode: number; partitions: OffsetFetchPartition[] } {
    const status = this.validateGroupStatus(groupId, "fetch");
    if (status !== null) return { errorCode: status, partitions: [] };
    const consumerGroup = this.consumerGroups.group(groupId);
    if (consumerGroup !== undefined) {
      const invalid = this.consumerGroups.validateOffsetFetch(
        consumerGroup,
        member.memberId,
        member.memberEpoch,
      );
      if (invalid !== null) return { errorCode: invalid, partitions: [] };
    }
    const group = consumerGroup ?? this.groupManager.getGroup(groupId);
    const none = (topic: string, partition: number): OffsetFetchPartition => ({
      topic,
      partition,
      offset: -1n,
      leaderEpoch: -1,
      metadata: "",
      errorCode: ErrorCode.NONE,
    });
    const found = (topic: string, partition: number, o: CommittedOffset): OffsetFetchPartition => ({
      topic,
      partition,
      offset: o.offset,
      leaderEpoch: o.leaderEpoch,
      metadata: o.metadata,
      errorCode: ErrorCode.NONE,
    });
    if (partitions === null) {
      if (group === undefined) return { errorCode: ErrorCode.NONE, partitions: [] };
      return {
        errorCode: ErrorCode.NONE,
        partitions: [...group.offsets].map(([k, o]) => {
          const { topic, partition } = parseOffsetKey(k);
          return found(topic, partition, o);
        }),
      };
    }
    return {
      errorCode: ErrorCode.NONE,
      partitions: partitions.map(({ topic, partition }) => {
        const k = offsetKey(topic, partition);
        // require_stable (KIP-447): an open transaction's offset for the partition is not answered yet.
        if (requireStable && group instanceof GroupMetadata && group.hasPendingTransactionalOffset(k)) {
          return { ...none(topic, partition), errorCode: ErrorCode.UNSTABLE_OFFSET_COMMIT };
        }
        const o = group?.offsets.get(k);
        return o === undefined ? none(topic, partition) : found(topic, partition, o);
      }),
    };
  }

  // ---- Describe / List / Delete ----

  describeGroup(groupId: string): GroupSummary {
    const status = this.validateGroupStatus(groupId, "describe");
    const dead: GroupSummary = {
      errorCode: ErrorCode.NONE,
      state: "Dead",
      protocolType: "",
      protocol: "",
      members: [],
    };
    if (status !== null) return { ...dead, errorCode: status, state: "" };
    const group = this.groupManager.getGroup(groupId);
    if (group === undefined) return dead;
    const stable = group.is("Stable");
    const protocol = group.protocolName;
    return {
      errorCode: ErrorCode.NONE,
      state: group.state,
      protocolType: group.protocolType ?? "",
      protocol: stable && protocol !== null ? protocol : "",
      members: [...group.members.values()].map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        metadata: stable && protocol !== null ? m.metadata(protocol) : EMPTY_ASSIGNMENT,
        assignment: stable ? m.assignment : EMPTY_ASSIGNMENT,
      })),
    };
  }

  /** ListGroups: the groups of loaded partitions, filtered by state (case-insensitive) and type. */
  listGroups(
    statesFilter: readonly string[],
    typesFilter: readonly string[],
  ): {
    errorCode: number;
    groups: Array<{ groupId: string; protocolType: string; state: string; type: string }>;
  } {
    if (!this.active) return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, groups: [] };
    const states = new Set(statesFilter.map((s) => s.toLowerCase()));
    const types = new Set(typesFilter.map((s) => s.toLowerCase()));
    const groups: Array<{ groupId: string; protocolType: string; state: string; type: string }> =
      this.groupManager
        .currentGroups()
        .filter((g) => !g.is("Dead"))
        .filter((g) => states.size === 0 || states.has(g.state.toLowerCase()))
        .filter(() => types.size === 0 || types.has("classic"))
        .map((g) => ({
          groupId: g.groupId,
          protocolType: g.protocolType ?? "",
          state: g.state,
          type: "classic",
        }));
    for (const g of this.consumerGroups.listed()) {
      if (states.size > 0 && !states.has(g.state.toLowerCase())) continue;
      if (types.size > 0 && !types.has("consumer")) continue;
      groups.push(g);
    }
    return { errorCode: ErrorCode.NONE, groups };
  }

  /** DeleteGroups: only Empty groups (NON_EMPTY_GROUP otherwise); unknown or dead ones are GROUP_ID_NOT_FOUND. */
  async deleteGroups(groupIds: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const groupId of groupIds) {
      const status = this.validateGroupStatus(groupId, "delete");
      if (status !== null) {
        out.set(groupId, status);
        continue;
      }
      const consumerGroup = this.consumerGroups.group(groupId);
      if (consumerGroup !== undefined) {
        out.set(groupId, await this.consumerGroups.deleteGroup(consumerGroup));
        continue;
      }
      const group = this.groupManager.getGroup(groupId);
      if (group === undefined || group.is("Dead")) {
        out.set(groupId, ErrorCode.GROUP_ID_NOT_FOUND);
        continue;
      }
      if (!group.is("Empty")) {
        out.set(groupId, ErrorCode.NON_EMPTY_GROUP);
        continue;
      }
      const code = await this.groupManager.deleteOffsets(group, [...group.offsets.keys()], true);
      if (code === ErrorCode.NONE && group.is("Empty")) {
        group.transitionTo("Dead", this.nowMs());
        this.groupManager.removeGroup(groupId);
        this.logger.info(`Group ${groupId} deleted (${this.topicPartitionOf(group)}).`);
      }
      out.set(groupId, code);
    }
    return out;
  }

  /** OffsetDelete: per-partition codes, or a group-level error. */
  async deleteOffsets(
    groupId: string,
    partitions: ReadonlyArray<{ topic: string; partition: number }>,
  ): Promise<{ errorCode: number; partitions: Map<string, number> }> {
    const status = this.validateGroupStatus(groupId, "offset-delete");
    if (status !== null) return { errorCode: status, partitions: new Map() };
    const consumerGroup = this.consumerGroups.group(groupId);
    if (consumerGroup !== undefined) return this.consumerGroups.deleteOffsets(consumerGroup, partitions);
    const group = this.groupManager.getGroup(groupId);
    if (group === undefined || group.is("Dead"))
      return { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, partitions: new Map() };
    const out = new Map<string, number>();
    let subscribed: Set<string> | undefined;
    if (!group.is("Empty")) {
      subscribed = groupSubscribedTopics(group);
      if (subscribed === undefined) return { errorCode: ErrorCode.NON_EMPTY_GROUP, partitions: new Map() };
    }
    const keys: string[] = [];
    for (const { topic, partition } of partitions) {
      const k = offsetKey(topic, partition);
      if (subscribed?.has(topic)) out.set(k, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC);
      else {
        out.set(k, ErrorCode.NONE);
        if (group.offsets.has(k)) keys.push(k);
      }
    }
    const code = await this.groupManager.deleteOffsets(group, keys, false);
    if (code !== ErrorCode.NONE) return { errorCode: code, partitions: new Map() };
    return { errorCode: ErrorCode.NONE, partitions: out };
  }

  private onGroupUnloaded(group: GroupMetadata): void {
    group.rebalanceTimer?.cancel();
    for (const m of group.members.values()) {
      this.cancelHeartbeat(m);
      const join = m.awaitingJoin;
      m.awaitingJoin = undefined;
      join?.(joinError(m.memberId, ErrorCode.NOT_COORDINATOR));
      const sync = m.awaitingSync;
      m.awaitingSync = undefined;
      sync?.(syncError(ErrorCode.NOT_COORDINATOR));
    }
    group.state = "Dead";
  }
}
