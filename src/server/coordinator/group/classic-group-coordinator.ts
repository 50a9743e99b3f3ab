// ClassicGroupCoordinator: the classic group membership protocol (Kafka's GroupCoordinator handleJoinGroup,
// handleSyncGroup, handleHeartbeat and handleLeaveGroup; GroupMetadataManager.classicGroup* in Kafka 3.7+):
// JoinGroup with KIP-394's member-id-required first join, KIP-345 static membership (a static member
// rejoining a Stable group with the same protocols keeps its assignment, its old member id is fenced) and
// KIP-814's skipped assignment; SyncGroup (the leader's assignment stored, then given to every member);
// Heartbeat; batched LeaveGroup. Rebalances run in the RebalancePurgatory (DelayedJoin, InitialDelayedJoin),
// session deadlines in the HeartbeatPurgatory (DelayedHeartbeat). The GroupCoordinator has checked that this
// broker coordinates the group, and that it is not a KIP-848 consumer group, before calling in here; every
// answer is a Kafka error code.

import { randomUUID } from "node:crypto";
import type { Logger } from "../../../common/logger.js";
import type { Scheduler } from "../../../common/scheduler.js";
import type { Time } from "../../../common/time.js";
import { ErrorCode, errorNameOf } from "../../../protocol/errors.js";
import type { GroupMetadata } from "./group-metadata.js";
import type { GroupMetadataManager } from "./group-metadata-manager.js";
import { HeartbeatPurgatory, NEW_MEMBER_JOIN_TIMEOUT_MS } from "./heartbeat-purgatory.js";
import {
  EMPTY_ASSIGNMENT,
  type GroupProtocol,
  type JoinGroupResult,
  joinError,
  MemberMetadata,
  type SyncGroupResult,
  syncError,
} from "./member-metadata.js";
import { RebalancePurgatory } from "./rebalance-purgatory.js";

export interface ClassicGroupConfig {
  readonly groupMinSessionTimeoutMs: number;
  readonly groupMaxSessionTimeoutMs: number;
  readonly groupInitialRebalanceDelayMs: number;
  readonly groupMaxSize: number;
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

/** Answers a JoinGroup (the resolver of its pending promise). */
type JoinCallback = (r: JoinGroupResult) => void;

/** The member's JoinGroup and SyncGroup still waiting, if any, are answered with errorCode. */
function answerWaiting(member: MemberMetadata, errorCode: number): void {
  const join = member.awaitingJoin;
  member.awaitingJoin = undefined;
  join?.(joinError(member.memberId, errorCode));
  const sync = member.awaitingSync;
  member.awaitingSync = undefined;
  sync?.(syncError(errorCode));
}

export class ClassicGroupCoordinator {
  /** The members' session deadlines. */
  readonly heartbeats: HeartbeatPurgatory;
  private readonly rebalance: RebalancePurgatory;

  constructor(
    private readonly config: ClassicGroupConfig,
    private readonly groupManager: GroupMetadataManager,
    private readonly time: Time,
    scheduler: Scheduler,
    private readonly logger: Logger,
  ) {
    this.heartbeats = new HeartbeatPurgatory(scheduler, logger, {
      onMemberExpired: (group, member) =>
        this.removeMemberAndUpdateGroup(
          group,
          member,
          `removing member ${member.memberId} on heartbeat expiration`,
        ),
      onPendingMemberExpired: (group) => this.rebalance.tryCompleteJoin(group),
    });
    this.rebalance = new RebalancePurgatory(
      config.groupInitialRebalanceDelayMs,
      groupManager,
      this.heartbeats,
      time,
      scheduler,
      logger,
    );
  }

  private nowMs(): bigint {
    return BigInt(this.time.milliseconds());
  }

  // ---- JoinGroup ----

  /** JoinGroup of a group this broker coordinates that is not a KIP-848 consumer group. */
  joinGroup(p: JoinGroupParams): Promise<JoinGroupResult> {
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
  private rejectJoin(group: GroupMetadata, p: JoinGroupParams, cb: JoinCallback): boolean {
    if (group.is("Dead")) cb(joinError(p.memberId, ErrorCode.COORDINATOR_NOT_AVAILABLE));
    else if (!group.supportsProtocols(p.protocolType, p.protocols))
      cb(joinError(p.memberId, ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
    else return false;
    return true;
  }

  private doNewMemberJoinGroup(group: GroupMetadata, p: JoinGroupParams, cb: JoinCallback): void {
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
      this.heartbeats.schedulePendingMemberExpiration(group, newMemberId, p.sessionTimeoutMs);
      cb(joinError(newMemberId, ErrorCode.MEMBER_ID_REQUIRED));
      return;
    }
    this.addMemberAndRebalance(group, newMemberId, p, cb);
  }

  private doStaticMemberJoinGroup(
    group: GroupMetadata,
    newMemberId: string,
    p: JoinGroupParams,
    cb: JoinCallback,
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
    this.heartbeats.cancel(old);
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
        this.heartbeats.schedule(group, member, member.sessionTimeoutMs);
        cb({
          errorCode: ErrorCode.NONE,
          memberId: newMemberId,
          generationId: generation,
          protocolType: group.protocolType,
          protocolName: group.protocolName,
          leaderId: group.leaderId ?? "",
          skipAssignment: skip,
          members: skip ? this.rebalance.currentMemberMetadata(group) : [],
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

  private doCurrentMemberJoinGroup(group: GroupMetadata, p: JoinGroupParams, cb: JoinCallback): void {
    if (this.rejectJoin(group, p, cb)) return;
    if (group.isPendingMember(p.memberId)) {
      this.addMemberAndRebalance(group, p.memberId, p, cb);
      return;
    }
    const invalid = group.validateMember(p.memberId, p.groupInstanceId);
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
        this.heartbeats.schedule(group, member, member.sessionTimeoutMs);
        cb({ ...this.currentGenerationJoinResult(group, member.memberId), members: [] });
        return;
      default:
        cb(joinError(p.memberId, ErrorCode.UNKNOWN_MEMBER_ID));
        return;
    }
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
      members: group.isLeader(memberId) ? this.rebalance.currentMemberMetadata(group) : [],
    };
  }

  private addMemberAndRebalance(
    group: GroupMetadata,
    memberId: string,
    p: JoinGroupParams,
    cb: JoinCallback,
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
    this.heartbeats.schedule(group, member, NEW_MEMBER_JOIN_TIMEOUT_MS);
    this.rebalance.maybePrepareRebalance(
      group,
      `Adding new member ${memberId} with group instance id ${p.groupInstanceId ?? "None"}${p.reason ? `; client reason: ${p.reason}` : ""}`,
    );
  }

  private updateMemberAndRebalance(
    group: GroupMetadata,
    member: MemberMetadata,
    p: JoinGroupParams,
    cb: JoinCallback,
    reason: string,
  ): void {
    member.supportedProtocols = p.protocols;
    member.rebalanceTimeoutMs = p.rebalanceTimeoutMs;
    member.sessionTimeoutMs = p.sessionTimeoutMs;
    const previous = member.awaitingJoin;
    member.awaitingJoin = cb;
    // A second JoinGroup from the same member replaces the first, which is answered as superseded.
    previous?.(joinError(member.memberId, ErrorCode.REBALANCE_IN_PROGRESS));
    this.rebalance.maybePrepareRebalance(group, reason);
  }

  // ---- SyncGroup ----

  syncGroup(p: SyncGroupParams): Promise<SyncGroupResult> {
    const group = this.groupManager.getGroup(p.groupId);
    if (group === undefined) return Promise.resolve(syncError(ErrorCode.UNKNOWN_MEMBER_ID));
    if (group.is("Dead")) return Promise.resolve(syncError(ErrorCode.COORDINATOR_NOT_AVAILABLE));
    const invalid = group.validateMember(p.memberId, p.groupInstanceId);
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
        this.heartbeats.schedule(group, member, member.sessionTimeoutMs);
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
              this.rebalance.resetAndPropagateAssignmentError(group, code);
              this.rebalance.maybePrepareRebalance(
                group,
                `Error ${errorNameOf(code)} when storing group assignment during SyncGroup`,
              );
              return;
            }
            this.rebalance.setAndPropagateAssignment(group, assignments);
            group.transitionTo("Stable", this.nowMs());
          });
        });
      default:
        return Promise.resolve(syncError(ErrorCode.COORDINATOR_NOT_AVAILABLE));
    }
  }

  // ---- Heartbeat ----

  heartbeat(groupId: string, memberId: string, groupInstanceId: string | null, generationId: number): number {
    const group = this.groupManager.getGroup(groupId);
    if (group === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (group.is("Dead")) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    const invalid = group.validateMember(memberId, groupInstanceId);
    if (invalid !== null) return invalid;
    if (generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION;
    const member = group.get(memberId)!;
    switch (group.state) {
      case "Empty":
        return ErrorCode.UNKNOWN_MEMBER_ID;
      case "CompletingRebalance":
      case "Stable":
        this.heartbeats.schedule(group, member, member.sessionTimeoutMs);
        return ErrorCode.NONE;
      case "PreparingRebalance":
        this.heartbeats.schedule(group, member, member.sessionTimeoutMs);
        return ErrorCode.REBALANCE_IN_PROGRESS;
      default:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    }
  }

  /** Kafka's removeMemberAndUpdateGroup: its waiting requests are answered, the group rebalances. */
  private removeMemberAndUpdateGroup(group: GroupMetadata, member: MemberMetadata, reason: string): void {
    this.heartbeats.cancel(member);
    answerWaiting(member, ErrorCode.UNKNOWN_MEMBER_ID);
    group.remove(member.memberId);
    switch (group.state) {
      case "Stable":
      case "CompletingRebalance":
        this.rebalance.maybePrepareRebalance(group, reason);
        break;
      case "PreparingRebalance":
        this.rebalance.tryCompleteJoin(group);
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
        this.rebalance.tryCompleteJoin(group);
        return { ...m, errorCode: ErrorCode.NONE };
      }
      const invalid = group.validateMember(memberId, m.groupInstanceId);
      if (invalid !== null) return { ...m, errorCode: invalid };
      const member = group.get(memberId)!;
      this.logger.info(`Member ${memberId} has left group ${groupId} through explicit LeaveGroup request`);
      this.removeMemberAndUpdateGroup(group, member, `removing member ${memberId} on LeaveGroup`);
      return { ...m, errorCode: ErrorCode.NONE };
    });
    return { errorCode: ErrorCode.NONE, members };
  }

  /** A loaded group's members must heartbeat again within their session timeouts. */
  onGroupLoaded(group: GroupMetadata): void {
    for (const m of group.members.values()) this.heartbeats.schedule(group, m, m.sessionTimeoutMs);
  }

  /** The group's partition moved away: its timers stop and every waiting member is told NOT_COORDINATOR. */
  onGroupUnloaded(group: GroupMetadata): void {
    group.rebalanceTimer?.cancel();
    for (const m of group.members.values()) {
      this.heartbeats.cancel(m);
      answerWaiting(m, ErrorCode.NOT_COORDINATOR);
    }
    group.state = "Dead";
  }
}
