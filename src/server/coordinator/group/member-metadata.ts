// MemberMetadata: one member of a classic-protocol group (Kafka's MemberMetadata): its ids, timeouts, the
// protocols it supports with their metadata, its assignment, and the callbacks of its JoinGroup / SyncGroup
// requests still waiting for the rebalance to progress, and the answers a JoinGroup / SyncGroup gets on an
// error. Its heartbeat deadline is kept by the HeartbeatPurgatory (heartbeat-purgatory.ts).

import type { ScheduledTask } from "../../../common/scheduler.js";

export interface JoinGroupResult {
  readonly errorCode: number;
  readonly memberId: string;
  readonly generationId: number;
  readonly protocolType: string | null;
  readonly protocolName: string | null;
  readonly leaderId: string;
  readonly skipAssignment: boolean;
  /** Every member's metadata for the chosen protocol: only in the leader's response. */
  readonly members: ReadonlyArray<{ memberId: string; groupInstanceId: string | null; metadata: Buffer }>;
}

export interface SyncGroupResult {
  readonly errorCode: number;
  readonly protocolType: string | null;
  readonly protocolName: string | null;
  readonly assignment: Buffer;
}

export interface GroupProtocol {
  readonly name: string;
  readonly metadata: Buffer;
}

export const EMPTY_ASSIGNMENT: Buffer = Buffer.alloc(0);

/** A JoinGroup answered with an error: no generation, no protocol, no members. */
export function joinError(memberId: string, errorCode: number): JoinGroupResult {
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

/** A SyncGroup answered with an error and an empty assignment. */
export function syncError(errorCode: number): SyncGroupResult {
  return { errorCode, protocolType: null, protocolName: null, assignment: EMPTY_ASSIGNMENT };
}

export class MemberMetadata {
  assignment: Buffer = EMPTY_ASSIGNMENT;
  awaitingJoin: ((r: JoinGroupResult) => void) | undefined;
  awaitingSync: ((r: SyncGroupResult) => void) | undefined;
  /** Joined during the current rebalance and not yet synced (Kafka's isNew; expires after 5 minutes). */
  isNew = false;
  /** Deadline of the next heartbeat (session timeout), or of the new-member join timeout. */
  heartbeatTask: ScheduledTask | undefined;
  /** Monotonic counter bumped on every heartbeat, so a stale expiration can tell it was superseded. */
  heartbeatEpoch = 0;

  constructor(
    public memberId: string,
    readonly groupInstanceId: string | null,
    public clientId: string,
    public clientHost: string,
    public rebalanceTimeoutMs: number,
    public sessionTimeoutMs: number,
    readonly protocolType: string,
    public supportedProtocols: readonly GroupProtocol[],
  ) {}

  get isStaticMember(): boolean {
    return this.groupInstanceId !== null;
  }

  get isAwaitingJoin(): boolean {
    return this.awaitingJoin !== undefined;
  }

  get isAwaitingSync(): boolean {
    return this.awaitingSync !== undefined;
  }

  protocols(): Set<string> {
    return new Set(this.supportedProtocols.map((p) => p.name));
  }

  /** This member's metadata for `protocol` (it must support it). */
  metadata(protocol: string): Buffer {
    const p = this.supportedProtocols.find((x) => x.name === protocol);
    if (p === undefined) throw new Error(`member ${this.memberId} does not support protocol ${protocol}`);
    return p.metadata;
  }

  /** Same protocols, in the same order, with the same metadata (Kafka's MemberMetadata.matches). */
  matches(protocols: readonly GroupProtocol[]): boolean {
    if (protocols.length !== this.supportedProtocols.length) return false;
    return protocols.every(
      (p, i) =>
        p.name === this.supportedProtocols[i].name && p.metadata.equals(this.supportedProtocols[i].metadata),
    );
  }

  /** The first of this member's protocols that is among `candidates` (its vote). */
  vote(candidates: ReadonlySet<string>): string {
    const p = this.supportedProtocols.find((x) => candidates.has(x.name));
    if (p === undefined) throw new Error(`member ${this.memberId} supports none of ${[...candidates]}`);
    return p.name;
  }
}
