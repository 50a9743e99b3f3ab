// The ISR of a partition as its leader holds it (Kafka's PartitionState in cluster/Partition.scala, KIP-497):
// one value, always in exactly one of three states.
//   - CommittedPartitionState: the ISR the controller last confirmed (by LeaderAndIsr or an AlterPartition
//     answer); no change in flight.
//   - PendingExpandIsr: the leader asked the controller to add one follower. Until the answer, the committed
//     ISR stays the ISR for min.insync.replicas and acks, but the high watermark already waits for the new
//     member too (the "maximal ISR"): the controller may have committed the larger ISR, and that member may
//     be elected before the leader hears back, so nothing past its log end may be acknowledged.
//   - PendingShrinkIsr: the leader asked to remove followers. The maximal ISR is still the committed one (the
//     HW keeps waiting for the replicas being removed until the controller confirms).
// At most one change is in flight: while pending, no new expansion or shrink is proposed. The proposal sent
// (leader epoch, new ISR, partition epoch) is kept with the pending state, so an answer or a retry can be
// matched to the state it was made for.

/** The ISR change a leader sends in AlterPartition. */
export interface AlterPartitionProposal {
  readonly leaderEpoch: number;
  readonly newIsr: readonly number[];
  /** The partition epoch (the state znode's version) the change is based on. */
  readonly partitionEpoch: number;
}

export class CommittedPartitionState {
  readonly isInflight = false;
  constructor(readonly isr: readonly number[]) {}

  get maximalIsr(): readonly number[] {
    return this.isr;
  }

  toString(): string {
    return `CommittedPartitionState(isr=${this.isr.join(",")})`;
  }
}

export class PendingExpandIsr {
  readonly isInflight = true;
  readonly maximalIsr: readonly number[];
  constructor(
    readonly newInSyncReplicaId: number,
    readonly sent: AlterPartitionProposal,
    readonly lastCommittedState: CommittedPartitionState,
  ) {
    this.maximalIsr = [...lastCommittedState.isr, newInSyncReplicaId];
  }

  get isr(): readonly number[] {
    return this.lastCommittedState.isr;
  }

  toString(): string {
    return `PendingExpandIsr(newInSyncReplicaId=${this.newInSyncReplicaId}, sentIsr=${this.sent.newIsr.join(",")}, lastCommittedState=${this.lastCommittedState})`;
  }
}

export class PendingShrinkIsr {
  readonly isInflight = true;
  constructor(
    readonly outOfSyncReplicaIds: readonly number[],
    readonly sent: AlterPartitionProposal,
    readonly lastCommittedState: CommittedPartitionState,
  ) {}

  get isr(): readonly number[] {
    return this.lastCommittedState.isr;
  }

  get maximalIsr(): readonly number[] {
    return this.lastCommittedState.isr;
  }

  toString(): string {
    return `PendingShrinkIsr(outOfSyncReplicaIds=${this.outOfSyncReplicaIds.join(",")}, sentIsr=${this.sent.newIsr.join(",")}, lastCommittedState=${this.lastCommittedState})`;
  }
}

export type PendingPartitionChange = PendingExpandIsr | PendingShrinkIsr;
export type PartitionIsrState = CommittedPartitionState | PendingPartitionChange;

/** Same members, in any order. */
export function sameReplicaSet(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((r) => b.includes(r));
}
