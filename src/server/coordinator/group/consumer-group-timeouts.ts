// The member timeouts of KIP-848 consumer groups (Kafka's GroupMetadataManager session and rebalance
// timeouts on the CoordinatorTimer):
//   - session timeout: every heartbeat restarts it (group.consumer.session.timeout.ms); a static member that
//     left with epoch -2 keeps its place and assignment until it fires;
//   - rebalance timeout: started when a member is asked to revoke partitions at an epoch (its own
//     rebalance.timeout.ms); if it is still revoking at that epoch when it fires, it is fenced.
// A timeout that fires hands the member to `onExpired` (the coordinator fences it). Owns the timers, at most
// one of each kind per member; they are runtime state, never written to __consumer_offsets, and started again
// for every member when a partition is loaded.

import type { ScheduledTask, Scheduler } from "../../../common/scheduler.js";
import type { ConsumerGroup } from "./consumer-group.js";

interface MemberTimers {
  readonly session: Map<string, ScheduledTask>;
  readonly rebalance: Map<string, ScheduledTask>;
}

export class ConsumerGroupTimeouts {
  private readonly timers = new WeakMap<ConsumerGroup, MemberTimers>();

  constructor(
    /** group.consumer.session.timeout.ms */
    private readonly sessionTimeoutMs: number,
    private readonly scheduler: Scheduler,
    private readonly onExpired: (group: ConsumerGroup, memberId: string, reason: string) => void,
  ) {}

  private of(group: ConsumerGroup): MemberTimers {
    let t = this.timers.get(group);
    if (t === undefined) {
      t = { session: new Map(), rebalance: new Map() };
      this.timers.set(group, t);
    }
    return t;
  }

  scheduleSessionTimeout(group: ConsumerGroup, memberId: string): void {
    const { session } = this.of(group);
    session.get(memberId)?.cancel();
    const timeout = this.sessionTimeoutMs;
    session.set(
      memberId,
      this.scheduler.schedule(
        `consumer-group-session-${group.groupId}-${memberId}`,
        () => {
          session.delete(memberId);
          this.onExpired(group, memberId, `its session expired (${timeout} ms)`);
        },
        timeout,
      ),
    );
  }

  scheduleRebalanceTimeout(group: ConsumerGroup, memberId: string, epoch: number, timeoutMs: number): void {
    this.cancelRebalanceTimeout(group, memberId);
    const { rebalance } = this.of(group);
    rebalance.set(
      memberId,
      this.scheduler.schedule(
        `consumer-group-rebalance-${group.groupId}-${memberId}`,
        () => {
          rebalance.delete(memberId);
          const m = group.members.get(memberId);
          if (m === undefined || m.memberEpoch !== epoch || m.state !== "unrevoked_partitions") return;
          this.onExpired(
            group,
            memberId,
            `it failed to transition from epoch ${epoch} within ${timeoutMs}ms`,
          );
        },
        Math.max(0, timeoutMs),
      ),
    );
  }

  cancelRebalanceTimeout(group: ConsumerGroup, memberId: string): void {
    const { rebalance } = this.of(group);
    rebalance.get(memberId)?.cancel();
    rebalance.delete(memberId);
  }

  cancelTimers(group: ConsumerGroup, memberId: string): void {
    const { session } = this.of(group);
    session.get(memberId)?.cancel();
    session.delete(memberId);
    this.cancelRebalanceTimeout(group, memberId);
  }
}
