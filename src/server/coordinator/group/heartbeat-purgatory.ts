// HeartbeatPurgatory: the session deadlines of classic-group members (Kafka's GroupCoordinator
// heartbeatPurgatory of DelayedHeartbeat operations). Every heartbeat, JoinGroup, SyncGroup or OffsetCommit
// of a member pushes its deadline out by its session timeout (Kafka's completeAndScheduleNextExpiration); a
// member first joining gets NEW_MEMBER_JOIN_TIMEOUT_MS instead. A member whose deadline passes is kept while
// its JoinGroup or SyncGroup is still waiting (Kafka's shouldKeepAlive), else handed to `onMemberExpired`.
// Members pending their second join (KIP-394) expire after their session timeout the same way.
// Invariant: a member has at most one deadline; `heartbeatEpoch` (bumped on every cancel) makes a deadline
// that was superseded do nothing when it fires. Timers come from the injected Scheduler.

import type { Logger } from "../../../common/logger.js";
import type { Scheduler } from "../../../common/scheduler.js";
import type { GroupMetadata } from "./group-metadata.js";
import type { MemberMetadata } from "./member-metadata.js";

/** How long a new member has to complete its first rebalance before it is dropped (Kafka: 5 minutes). */
export const NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000;

export interface HeartbeatExpiration {
  /** The member missed its deadline and is not waiting on a rebalance: remove it from the group. */
  onMemberExpired(group: GroupMetadata, member: MemberMetadata): void;
  /** A pending member (KIP-394) never sent its second JoinGroup: the join may complete without it. */
  onPendingMemberExpired(group: GroupMetadata): void;
}

export class HeartbeatPurgatory {
  constructor(
    private readonly scheduler: Scheduler,
    private readonly logger: Logger,
    private readonly expiration: HeartbeatExpiration,
  ) {}

  cancel(member: MemberMetadata): void {
    member.heartbeatTask?.cancel();
    member.heartbeatTask = undefined;
    member.heartbeatEpoch++;
  }

  /** Kafka's completeAndScheduleNextExpiration: the member must be heard from again within timeoutMs. */
  schedule(group: GroupMetadata, member: MemberMetadata, timeoutMs: number): void {
    this.cancel(member);
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
      this.schedule(group, member, member.sessionTimeoutMs);
      return;
    }
    this.logger.info(
      `Member ${member.memberId} in group ${group.groupId} has failed, removing it from the group`,
    );
    this.expiration.onMemberExpired(group, member);
  }

  /** A member told MEMBER_ID_REQUIRED has timeoutMs to join again with its new id. */
  schedulePendingMemberExpiration(group: GroupMetadata, memberId: string, timeoutMs: number): void {
    this.scheduler.schedule(
      `pending-member-${group.groupId}-${memberId}`,
      () => {
        if (!group.pendingMembers.delete(memberId)) return;
        this.logger.info(
          `Pending member ${memberId} in group ${group.groupId} has been removed after session timeout expiration.`,
        );
        this.expiration.onPendingMemberExpired(group);
      },
      timeoutMs,
    );
  }
}
