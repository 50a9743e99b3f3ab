// GroupMetadata: the state of one classic-protocol consumer group (Kafka's GroupMetadata): its state
// machine (Empty → PreparingRebalance → CompletingRebalance → Stable, and Dead), generation, protocol type
// and chosen protocol, leader, members (in join order), members pending their second join (KIP-394),
// static members by group.instance.id (KIP-345) and the committed offsets. Pure state: the coordinator
// drives the transitions, the GroupMetadataManager persists them.

import { ErrorCode } from "../../../protocol/errors.js";
import type { GroupProtocol, MemberMetadata } from "./member-metadata.js";

export type GroupState = "Empty" | "PreparingRebalance" | "CompletingRebalance" | "Stable" | "Dead";

/** The states each state may be entered from (Kafka's GroupState.validPreviousStates). */
const VALID_PREVIOUS: Record<GroupState, readonly GroupState[]> = {
  Empty: ["PreparingRebalance"],
  PreparingRebalance: ["Stable", "CompletingRebalance", "Empty"],
  CompletingRebalance: ["PreparingRebalance"],
  Stable: ["CompletingRebalance"],
  Dead: ["Stable", "PreparingRebalance", "CompletingRebalance", "Empty", "Dead"],
};

export interface CommittedOffset {
  readonly offset: bigint;
  readonly leaderEpoch: number;
  readonly metadata: string;
  readonly commitTimestamp: bigint;
  /** OffsetCommit v2–v4 retention_time_ms, as OffsetCommitValue v1 stores it; null otherwise. */
  readonly expireTimestamp: bigint | null;
}

export function offsetKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

export function parseOffsetKey(key: string): { topic: string; partition: number } {
  const i = key.lastIndexOf("\u0000");
  return { topic: key.slice(0, i), partition: Number(key.slice(i + 1)) };
}

export class GroupMetadata {
  state: GroupState;
  generationId = 0;
  protocolType: string | null = null;
  protocolName: string | null = null;
  leaderId: string | null = null;
  currentStateTimestamp: bigint | null;
  readonly members = new Map<string, MemberMetadata>();
  readonly pendingMembers = new Set<string>();
  readonly staticMembers = new Map<string, string>();
  readonly offsets = new Map<string, CommittedOffset>();
  /**
   * Offsets written by TxnOffsetCommit, per producer id, until the transaction's marker reaches this
   * group's __consumer_offsets partition: COMMIT makes them the committed offsets, ABORT drops them.
   */
  readonly pendingTransactionalOffsets = new Map<bigint, Map<string, CommittedOffset>>();
  /** A member joined during the initial delayed rebalance (Kafka's newMemberAdded). */
  newMemberAdded = false;
  /** The pending DelayedJoin / InitialDelayedJoin timer. */
  rebalanceTimer: { cancel(): void } | undefined;
  /** The rebalance waits out group.initial.rebalance.delay.ms (InitialDelayedJoin) instead of completing early. */
  initialRebalancePending = false;

  constructor(
    readonly groupId: string,
    initialState: GroupState,
    nowMs: bigint,
  ) {
    this.state = initialState;
    this.currentStateTimestamp = nowMs;
  }

  is(state: GroupState): boolean {
    return this.state === state;
  }

  transitionTo(state: GroupState, nowMs: bigint): void {
    if (!VALID_PREVIOUS[state].includes(this.state)) {
      throw new Error(
        `Group ${this.groupId} should be in one of ${VALID_PREVIOUS[state]} before ${state}, not ${this.state}`,
      );
    }
    this.state = state;
    this.currentStateTimestamp = nowMs;
  }

  has(memberId: string): boolean {
    return this.members.has(memberId);
  }

  get(memberId: string): MemberMetadata | undefined {
    return this.members.get(memberId);
  }

  isLeader(memberId: string): boolean {
    return this.leaderId === memberId;
  }

  isPendingMember(memberId: string): boolean {
    return this.pendingMembers.has(memberId);
  }

  staticMemberId(groupInstanceId: string): string | undefined {
    return this.staticMembers.get(groupInstanceId);
  }

  /** Kafka's validateCurrentMember: static membership fencing, then membership; null when valid. */
  validateMember(memberId: string, groupInstanceId: string | null): number | null {
    if (groupInstanceId !== null) {
      const current = this.staticMemberId(groupInstanceId);
      if (current !== undefined && current !== memberId) return ErrorCode.FENCED_INSTANCE_ID;
    }
    if (!this.has(memberId)) return ErrorCode.UNKNOWN_MEMBER_ID;
    return null;
  }

  get size(): number {
    return this.members.size;
  }

  get numMembersAwaitingJoin(): number {
    let n = 0;
    for (const m of this.members.values()) if (m.isAwaitingJoin) n++;
    return n;
  }

  hasAllMembersJoined(): boolean {
    return this.members.size === this.numMembersAwaitingJoin && this.pendingMembers.size === 0;
  }

  notYetRejoinedMembers(): MemberMetadata[] {
    return [...this.members.values()].filter((m) => !m.isAwaitingJoin);
  }

  add(member: MemberMetadata): void {
    if (this.members.size === 0) this.protocolType = member.protocolType;
    if (this.leaderId === null) this.leaderId = member.memberId;
    this.members.set(member.memberId, member);
    if (member.groupInstanceId !== null) this.staticMembers.set(member.groupInstanceId, member.memberId);
    this.pendingMembers.delete(member.memberId);
  }

  remove(memberId: string): MemberMetadata | undefined {
    const m = this.members.get(memberId);
    if (m === undefined) return undefined;
    this.members.delete(memberId);
    if (m.groupInstanceId !== null && this.staticMembers.get(m.groupInstanceId) === memberId) {
      this.staticMembers.delete(m.groupInstanceId);
    }
    if (this.leaderId === memberId) this.leaderId = this.members.keys().next().value ?? null;
    return m;
  }

  /** A static member rejoining with a new member id takes the old one's place (Kafka's replaceStaticMember). */
  replaceStaticMember(groupInstanceId: string, oldMemberId: string, newMemberId: string): MemberMetadata {
    const m = this.members.get(oldMemberId);
    if (m === undefined)
      throw new Error(`static member ${groupInstanceId} (${oldMemberId}) is not in the group`);
    this.members.delete(oldMemberId);
    m.memberId = newMemberId;
    this.members.set(newMemberId, m);
    if (this.leaderId === oldMemberId) this.leaderId = newMemberId;
    this.staticMembers.set(groupInstanceId, newMemberId);
    return m;
  }

  /** Every member supports protocolType and at least one protocol all members support (or the group is empty). */
  supportsProtocols(protocolType: string, protocols: readonly GroupProtocol[]): boolean {
    if (this.members.size === 0) return protocolType !== "" && protocols.length > 0;
    if (this.protocolType !== protocolType) return false;
    const names = new Set(protocols.map((p) => p.name));
    const candidates = this.candidateProtocols();
    for (const c of candidates) if (names.has(c)) return true;
    return false;
  }

  /** Protocols every member supports. */
  candidateProtocols(): Set<string> {
    let out: Set<string> | undefined;
    for (const m of this.members.values()) {
      const ps = m.protocols();
      out = out === undefined ? ps : new Set([...out].filter((p) => ps.has(p)));
    }
    return out ?? new Set();
  }

  /** The protocol with most votes among the candidates (Kafka's selectProtocol); ties go to the leader's pick. */
  selectProtocol(): string {
    const candidates = this.candidateProtocols();
    const votes = new Map<string, number>();
    for (const m of this.members.values()) {
      const v = m.vote(candidates);
      votes.set(v, (votes.get(v) ?? 0) + 1);
    }
    let best: string | undefined;
    let bestVotes = -1;
    const leader = this.leaderId !== null ? this.members.get(this.leaderId) : undefined;
    const order = leader !== undefined ? leader.supportedProtocols.map((p) => p.name) : [...votes.keys()];
    for (const name of [...order, ...votes.keys()]) {
      const n = votes.get(name) ?? -1;
      if (n > bestVotes) {
        best = name;
        bestVotes = n;
      }
    }
    if (best === undefined) throw new Error(`group ${this.groupId} has no protocol all members support`);
    return best;
  }

  /** Kafka's initNextGeneration: a new generation, CompletingRebalance with members, else Empty. */
  initNextGeneration(nowMs: bigint): void {
    this.generationId++;
    if (this.members.size > 0) {
      this.protocolName = this.selectProtocol();
      this.transitionTo("CompletingRebalance", nowMs);
    } else {
      this.protocolName = null;
      this.transitionTo("Empty", nowMs);
    }
  }

  maxRebalanceTimeoutMs(): number {
    let max = 0;
    for (const m of this.members.values()) max = Math.max(max, m.rebalanceTimeoutMs);
    return max;
  }

  canRebalance(): boolean {
    return VALID_PREVIOUS.PreparingRebalance.includes(this.state);
  }

  /** An open transaction has written an offset for this partition (OffsetFetch require_stable). */
  hasPendingTransactionalOffset(key: string): boolean {
    for (const m of this.pendingTransactionalOffsets.values()) if (m.has(key)) return true;
    return false;
  }
}
