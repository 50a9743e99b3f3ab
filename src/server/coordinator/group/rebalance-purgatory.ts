// RebalancePurgatory: the rebalance of a classic group, from PreparingRebalance to the answers of the
// members waiting in JoinGroup and SyncGroup (Kafka's GroupCoordinator rebalancePurgatory of DelayedJoin
// operations, with prepareRebalance / onCompleteJoin). A rebalance waits until every member has rejoined or
// the largest rebalance timeout passed (DelayedJoin); a group that was Empty first waits out
// group.initial.rebalance.delay.ms, longer while new members keep arriving, up to the rebalance timeout
// (InitialDelayedJoin). Completing the join drops the members that did not rejoin, starts the next
// generation and answers every JoinGroup (the leader gets the members' metadata); an Empty result is
// persisted at once. The leader's assignment (or an error) is then propagated to the members waiting in
// SyncGroup. Owns GroupMetadata's rebalanceTimer, initialRebalancePending and newMemberAdded; a timer
// that fires for a generation or state that has moved on does nothing.

import type { Logger } from "../../../common/logger.js";
import type { Scheduler } from "../../../common/scheduler.js";
import type { Time } from "../../../common/time.js";
import { ErrorCode, errorNameOf } from "../../../protocol/errors.js";
import type { GroupMetadata } from "./group-metadata.js";
import { GROUP_METADATA_TOPIC_NAME, type GroupMetadataManager } from "./group-metadata-manager.js";
import type { HeartbeatPurgatory } from "./heartbeat-purgatory.js";
import { EMPTY_ASSIGNMENT, type JoinGroupResult, syncError } from "./member-metadata.js";

export class RebalancePurgatory {
  constructor(
    /** group.initial.rebalance.delay.ms */
    private readonly initialRebalanceDelayMs: number,
    private readonly groupManager: GroupMetadataManager,
    private readonly heartbeats: HeartbeatPurgatory,
    private readonly time: Time,
    private readonly scheduler: Scheduler,
    private readonly logger: Logger,
  ) {}

  private nowMs(): bigint {
    return BigInt(this.time.milliseconds());
  }

  private topicPartitionOf(group: GroupMetadata): string {
    return `${GROUP_METADATA_TOPIC_NAME}-${this.groupManager.partitionFor(group.groupId)}`;
  }

  /** Every member's metadata for the group's protocol: what the leader's JoinGroup answer carries. */
  currentMemberMetadata(group: GroupMetadata): JoinGroupResult["members"] {
    const protocol = group.protocolName;
    if (protocol === null) return [];
    return [...group.members.values()].map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      metadata: m.metadata(protocol),
    }));
  }

  /** A rebalance starts if the group's state allows one; one already preparing may now complete. */
  maybePrepareRebalance(group: GroupMetadata, reason: string): void {
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
      const delay = this.initialRebalanceDelayMs;
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
          const delay = Math.min(this.initialRebalanceDelayMs, remainingMs);
          this.scheduleInitialJoin(group, delay, Math.max(remainingMs - delay, 0));
        } else {
          group.initialRebalancePending = false;
          this.onCompleteJoin(group);
        }
      },
      delayMs,
    );
  }

  /** Kafka's DelayedJoin.tryComplete: the join completes early once every member has rejoined. */
  tryCompleteJoin(group: GroupMetadata): void {
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
      this.heartbeats.cancel(m);
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
      this.heartbeats.schedule(group, m, m.sessionTimeoutMs);
    }
  }

  /** The members waiting in SyncGroup get `errorCode`, and every assignment is cleared. */
  resetAndPropagateAssignmentError(group: GroupMetadata, errorCode: number): void {
    for (const m of group.members.values()) {
      m.assignment = EMPTY_ASSIGNMENT;
      const cb = m.awaitingSync;
      m.awaitingSync = undefined;
      cb?.(syncError(errorCode));
    }
  }

  /** The leader's assignment, once stored, answers every member waiting in SyncGroup. */
  setAndPropagateAssignment(group: GroupMetadata, assignments: ReadonlyMap<string, Buffer>): void {
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
      this.heartbeats.schedule(group, m, m.sessionTimeoutMs);
    }
  }
}
