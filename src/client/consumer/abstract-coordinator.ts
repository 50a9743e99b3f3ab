// AbstractCoordinator: a member of a classic group (Kafka's AbstractCoordinator). Finds the group's
// coordinator (FindCoordinator) and keeps its own connection to it (so a JoinGroup parked by the
// coordinator for a rebalance never holds up fetches), joins (JoinGroup, retrying at once with the
// member id given by MEMBER_ID_REQUIRED, KIP-394; group.instance.id for static members, KIP-345), lets
// the leader compute the assignment, syncs (SyncGroup), heartbeats every heartbeat.interval.ms while
// Stable, and leaves (LeaveGroup) on close. REBALANCE_IN_PROGRESS asks for a rejoin; ILLEGAL_GENERATION
// resets the generation and UNKNOWN_MEMBER_ID the generation and member id before rejoining;
// NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, a lost connection, or no heartbeat answer within
// session.timeout.ms mark the coordinator unknown and rediscover it. Subclasses supply the embedded
// protocol (metadata, the leader's assignment, what joining means for them).

import { Apis } from "../../protocol/generated/api-table.js";
import { ErrorCode } from "../../protocol/generated/errors.js";
import type { JoinGroupResponseMember } from "../../protocol/generated/messages/JoinGroupResponse.js";
import { KafkaClientError } from "../errors.js";
import { BrokerConnection } from "../network/broker-connection.js";
import type { BrokerNode, ClusterClient } from "../network/cluster-client.js";

export interface GroupProtocol {
  readonly name: string;
  readonly metadata: Buffer;
}

export interface Generation {
  readonly generationId: number;
  readonly memberId: string;
  readonly protocolName: string | null;
}

export const NO_GENERATION: Generation = { generationId: -1, memberId: "", protocolName: null };

/** Kafka's MemberState. */
export type MemberState = "UNJOINED" | "PREPARING_REBALANCE" | "COMPLETING_REBALANCE" | "STABLE";

export interface GroupRebalanceConfig {
  readonly groupId: string;
  readonly groupInstanceId: string | null;
  readonly clientId: string;
  readonly sessionTimeoutMs: number;
  readonly rebalanceTimeoutMs: number;
  readonly heartbeatIntervalMs: number;
  readonly requestTimeoutMs: number;
  readonly retryBackoffMs: number;
}

/** Kafka's JOIN_GROUP_TIMEOUT_LAPSE: JoinGroup may wait the rebalance timeout plus this. */
const JOIN_GROUP_TIMEOUT_LAPSE_MS = 5000;

/** Errors after which the coordinator must be looked up again. */
function coordinatorMoved(code: number): boolean {
  return (
    code === ErrorCode.NOT_COORDINATOR ||
    code === ErrorCode.COORDINATOR_NOT_AVAILABLE ||
    code === ErrorCode.NETWORK_EXCEPTION ||
    code === ErrorCode.REQUEST_TIMED_OUT
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export abstract class AbstractCoordinator {
  protected generation: Generation = NO_GENERATION;
  protected state: MemberState = "UNJOINED";
  private coordinatorNode: BrokerNode | null = null;
  private coordinatorConn: Promise<BrokerConnection> | null = null;
  private rejoinNeeded = true;
  private needsJoinPrepare = true;
  private joining: Promise<void> | null = null;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  /** Bumped by every start/stop, so an old heartbeat chain ends. */
  private heartbeatEpoch = 0;
  private heartbeatInFlight = false;
  private lastHeartbeatReceived = 0;
  /** A fatal error (FENCED_INSTANCE_ID, …) met outside a caller's call, thrown by the next one. */
  private fatal: Error | undefined;
  protected closed = false;

  constructor(
    protected readonly cluster: ClusterClient,
    protected readonly rebalanceConfig: GroupRebalanceConfig,
  ) {}

  protected abstract protocolType(): string;
  /** The protocols this member supports, in preference order, with its metadata for each. */
  protected abstract metadata(): GroupProtocol[];
  /** Before (re)joining: e.g. commit and revoke the partitions owned so far. */
  protected abstract onJoinPrepare(generation: Generation): Promise<void>;
  /** As leader: the assignment (member id → bytes) for the members of this generation. */
  protected abstract onLeaderElected(
    protocol: string,
    members: readonly JoinGroupResponseMember[],
  ): Promise<Map<string, Buffer>>;
  /** After SyncGroup: take this member's assignment. */
  protected abstract onJoinComplete(generation: Generation, assignment: Buffer): Promise<void>;
  /** False once the member should stop (re)joining: it is closing or no longer subscribed. */
  protected abstract wantsMembership(): boolean;

  get groupId(): string {
    return this.rebalanceConfig.groupId;
  }

  /** The current generation (NO_GENERATION before the first join). */
  currentGeneration(): Generation {
    return this.generation;
  }

  memberState(): MemberState {
    return this.state;
  }

  /** True when the next poll must (re)join the group. */
  rejoinNeededOrPending(): boolean {
    return this.rejoinNeeded || this.joining !== null;
  }

  requestRejoin(): void {
    this.rejoinNeeded = true;
  }

  coordinatorUnknown(): boolean {
    return this.coordinatorNode === null;
  }

  protected throwIfFatal(): void {
    const f = this.fatal;
    if (f) {
      this.fatal = undefined;
      throw f;
    }
  }

  /** Forgets the coordinator; the next request looks it up again (Kafka's markCoordinatorUnknown). */
  markCoordinatorUnknown(): void {
    this.coordinatorNode = null;
    const conn = this.coordinatorConn;
    this.coordinatorConn = null;
    conn?.then((c) => c.close()).catch(() => undefined);
  }

  /** The connection to the group's coordinator, finding it first when unknown. */
  protected async coordinator(): Promise<BrokerConnection> {
    for (;;) {
      if (this.closed) throw KafkaClientError.of("NETWORK_EXCEPTION", "The consumer is closed");
      if (this.coordinatorConn === null) {
        const pending = (async () => {
          const node = await this.cluster.findCoordinator(this.groupId, "group");
          this.coordinatorNode = node;
          return BrokerConnection.connect(node.host, node.port, {
            clientId: this.rebalanceConfig.clientId,
            requestTimeoutMs: this.rebalanceConfig.requestTimeoutMs,
            ...this.cluster.security,
          });
        })();
        this.coordinatorConn = pending;
        pending.catch(() => {
          if (this.coordinatorConn === pending) this.markCoordinatorUnknown();
        });
      }
      const current = this.coordinatorConn;
      const conn = await current;
      if (!conn.closed) return conn;
      if (this.coordinatorConn === current) this.markCoordinatorUnknown();
    }
  }

  /** Error handling common to every coordinator request: rediscover on coordinator errors. */
  protected onCoordinatorError(e: unknown): void {
    if (e instanceof KafkaClientError && coordinatorMoved(e.code)) this.markCoordinatorUnknown();
  }

  /**
   * Joins (or rejoins) the group if needed, resolving once Stable. Concurrent callers share one join;
   * a caller may stop waiting (poll's timeout) while the join goes on.
   */
  ensureActiveGroup(): Promise<void> {
    this.throwIfFatal();
    if (!this.rejoinNeeded && this.state === "STABLE") return Promise.resolve();
    if (this.joining === null) {
      const p = this.joinGroupIfNeeded().finally(() => {
        if (this.joining === p) this.joining = null;
      });
      this.joining = p;
    }
    return this.joining;
  }

  private async joinGroupIfNeeded(): Promise<void> {
    while (this.rejoinNeeded && !this.closed && this.wantsMembership()) {
      let conn: BrokerConnection;
      try {
        conn = await this.coordinator();
      } catch (e) {
        if (e instanceof KafkaClientError && e.retriable && !this.closed) {
          await sleep(this.rebalanceConfig.retryBackoffMs);
          continue;
        }
        throw e;
      }
      if (this.needsJoinPrepare) {
        this.needsJoinPrepare = false;
        this.stopHeartbeats();
        await this.onJoinPrepare(this.generation);
      }
      try {
        const assignment = await this.joinAndSync(conn);
        if (assignment === undefined) continue; // MEMBER_ID_REQUIRED: join again at once with the id
        this.rejoinNeeded = false;
        this.needsJoinPrepare = true;
        this.state = "STABLE";
        this.lastHeartbeatReceived = Date.now();
        this.startHeartbeats();
        await this.onJoinComplete(this.generation, assignment);
      } catch (e) {
        if (!(e instanceof KafkaClientError)) throw e;
        if (this.state !== "STABLE") this.state = "UNJOINED";
        switch (e.code) {
          case ErrorCode.UNKNOWN_MEMBER_ID:
            this.generation = NO_GENERATION;
            continue;
          case ErrorCode.ILLEGAL_GENERATION:
            this.generation = { ...NO_GENERATION, memberId: this.generation.memberId };
            continue;
          case ErrorCode.REBALANCE_IN_PROGRESS:
            continue;
          default:
            if (coordinatorMoved(e.code)) this.markCoordinatorUnknown();
            if (!e.retriable) throw e;
            await sleep(this.rebalanceConfig.retryBackoffMs);
        }
      }
    }
  }

  /** One JoinGroup + SyncGroup; undefined when the coordinator asked for a rejoin with a member id. */
  private async joinAndSync(conn: BrokerConnection): Promise<Buffer | undefined> {
    const c = this.rebalanceConfig;
    this.state = "PREPARING_REBALANCE";
    const joinVersion = conn.versionFor(Apis.JoinGroup, { min: c.groupInstanceId !== null ? 5 : 0 });
    const join = await conn.send(
      Apis.JoinGroup,
      joinVersion,
      {
        groupId: c.groupId,
        sessionTimeoutMs: c.sessionTimeoutMs,
        rebalanceTimeoutMs: c.rebalanceTimeoutMs,
        memberId: this.generation.memberId,
        groupInstanceId: c.groupInstanceId,
        protocolType: this.protocolType(),
        protocols: this.metadata().map((p) => ({ name: p.name, metadata: p.metadata })),
        reason: null,
      },
      { timeoutMs: Math.max(c.requestTimeoutMs, c.rebalanceTimeoutMs + JOIN_GROUP_TIMEOUT_LAPSE_MS) },
    );
    if (join.errorCode === ErrorCode.MEMBER_ID_REQUIRED) {
      this.generation = { ...NO_GENERATION, memberId: join.memberId };
      return undefined;
    }
    if (join.errorCode !== ErrorCode.NONE) {
      throw new KafkaClientError(join.errorCode, `JoinGroup of group ${c.groupId}`);
    }
    this.generation = {
      generationId: join.generationId,
      memberId: join.memberId,
      protocolName: join.protocolName,
    };
    this.state = "COMPLETING_REBALANCE";
    const protocol = join.protocolName ?? "";
    let assignments: Map<string, Buffer> = new Map();
    if (join.leader === join.memberId && !join.skipAssignment) {
      assignments = await this.onLeaderElected(protocol, join.members);
    }
    const syncVersion = conn.versionFor(Apis.SyncGroup, { min: c.groupInstanceId !== null ? 3 : 0 });
    const sync = await conn.send(Apis.SyncGroup, syncVersion, {
      groupId: c.groupId,
      generationId: join.generationId,
      memberId: join.memberId,
      groupInstanceId: c.groupInstanceId,
      protocolType: this.protocolType(),
      protocolName: join.protocolName,
      assignments: [...assignments].map(([memberId, assignment]) => ({ memberId, assignment })),
    });
    if (sync.errorCode !== ErrorCode.NONE) {
      throw new KafkaClientError(sync.errorCode, `SyncGroup of group ${c.groupId}`);
    }
    return sync.assignment;
  }

  private startHeartbeats(): void {
    this.stopHeartbeats();
    const epoch = this.heartbeatEpoch;
    const tick = (): void => {
      this.heartbeatTimer = setTimeout(() => {
        this.heartbeat().finally(() => {
          if (epoch === this.heartbeatEpoch && this.state === "STABLE" && !this.closed) tick();
        });
      }, this.rebalanceConfig.heartbeatIntervalMs);
      this.heartbeatTimer.unref?.();
    };
    tick();
  }

  protected stopHeartbeats(): void {
    this.heartbeatEpoch++;
    if (this.heartbeatTimer !== undefined) clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
  }

  /** One Heartbeat (Kafka's HeartbeatResponseHandler). */
  private async heartbeat(): Promise<void> {
    if (this.heartbeatInFlight || this.closed || this.state !== "STABLE") return;
    const c = this.rebalanceConfig;
    if (Date.now() - this.lastHeartbeatReceived > c.sessionTimeoutMs) this.markCoordinatorUnknown();
    this.heartbeatInFlight = true;
    try {
      const conn = await this.coordinator();
      const g = this.generation;
      const res = await conn.send(Apis.Heartbeat, conn.versionFor(Apis.Heartbeat), {
        groupId: c.groupId,
        generationId: g.generationId,
        memberId: g.memberId,
        groupInstanceId: c.groupInstanceId,
      });
      if (this.generation !== g) return; // a rejoin happened meanwhile
      switch (res.errorCode) {
        case ErrorCode.NONE:
          this.lastHeartbeatReceived = Date.now();
          break;
        case ErrorCode.REBALANCE_IN_PROGRESS:
          this.lastHeartbeatReceived = Date.now();
          this.requestRejoin();
          break;
        case ErrorCode.ILLEGAL_GENERATION:
          this.generation = { ...NO_GENERATION, memberId: g.memberId };
          this.requestRejoin();
          break;
        case ErrorCode.UNKNOWN_MEMBER_ID:
          this.generation = NO_GENERATION;
          this.requestRejoin();
          break;
        case ErrorCode.FENCED_INSTANCE_ID:
          this.generation = NO_GENERATION;
          this.state = "UNJOINED";
          this.fatal = new KafkaClientError(
            res.errorCode,
            `Received fatal exception: group.instance.id ${c.groupInstanceId} gets fenced`,
          );
          break;
        default:
          if (coordinatorMoved(res.errorCode)) this.markCoordinatorUnknown();
          else if (res.errorCode !== ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
            this.fatal = new KafkaClientError(res.errorCode, `Heartbeat of group ${c.groupId}`);
      }
    } catch (e) {
      this.onCoordinatorError(e);
    } finally {
      this.heartbeatInFlight = false;
    }
  }

  /**
   * Leaves the group (LeaveGroup) unless this is a static member, which keeps its place until its
   * session times out (Kafka's maybeLeaveGroup); then resets to no generation.
   */
  async maybeLeaveGroup(reason: string): Promise<void> {
    this.stopHeartbeats();
    const g = this.generation;
    const c = this.rebalanceConfig;
    if (c.groupInstanceId === null && g.memberId !== "" && this.coordinatorConn !== null) {
      try {
        const conn = await this.coordinator();
        const version = conn.versionFor(Apis.LeaveGroup);
        await conn.send(
          Apis.LeaveGroup,
          version,
          {
            groupId: c.groupId,
            memberId: version < 3 ? g.memberId : "",
            members: version >= 3 ? [{ memberId: g.memberId, groupInstanceId: null, reason }] : [],
          },
          { timeoutMs: Math.min(c.requestTimeoutMs, 5000) },
        );
      } catch {
        // Leaving is best effort: the session timeout removes the member anyway.
      }
    }
    this.generation = NO_GENERATION;
    this.state = "UNJOINED";
    this.rejoinNeeded = true;
    this.needsJoinPrepare = true;
  }

  /** Stops heartbeats and closes the coordinator connection (leave first with maybeLeaveGroup). */
  protected closeCoordinator(): void {
    this.closed = true;
    this.stopHeartbeats();
    this.markCoordinatorUnknown();
  }
}
