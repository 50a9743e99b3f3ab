// GroupCoordinator: the entry point of every group API (Kafka's GroupCoordinator): it checks the group id
// and that this broker coordinates the group (its __consumer_offsets partition is led here and loaded: else
// NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS or COORDINATOR_NOT_AVAILABLE), then hands the request to
// the part that holds the group. A group id is either classic (JoinGroup, SyncGroup, Heartbeat, LeaveGroup:
// classic-group-coordinator.ts) or a KIP-848 consumer group (ConsumerGroupHeartbeat, ConsumerGroupDescribe:
// consumer-group-coordinator.ts); JoinGroup on a consumer group is INCONSISTENT_GROUP_PROTOCOL, as in Kafka
// 3.7 without online migration. The offset APIs of both go to the OffsetMetadataManager
// (offset-metadata-manager.ts); DescribeGroups, ListGroups and DeleteGroups are answered here. Leadership of
// a __consumer_offsets partition (onElection / onResignation) loads or unloads its groups in the
// GroupMetadataManager, which persists them.

import { Logger } from "../../../common/logger.js";
import type { Scheduler } from "../../../common/scheduler.js";
import type { Time } from "../../../common/time.js";
import { ErrorCode } from "../../../protocol/errors.js";
import {
  type ClassicGroupConfig,
  ClassicGroupCoordinator,
  type JoinGroupParams,
  type MemberIdentity,
  type SyncGroupParams,
} from "./classic-group-coordinator.js";
import {
  type ConsumerGroupConfig,
  ConsumerGroupCoordinator,
  type ConsumerGroupHeartbeatParams,
  type ConsumerGroupHeartbeatResult,
  DEFAULT_CONSUMER_GROUP_CONFIG,
  type DescribedConsumerGroup,
  heartbeatError,
} from "./consumer-group-coordinator.js";
import type { TopicsImage } from "./consumer-group-target-assignment.js";
import { groupSubscribedTopics } from "./consumer-protocol.js";
import type { CommittedOffset } from "./group-metadata.js";
import { GROUP_METADATA_TOPIC_NAME, type GroupMetadataManager } from "./group-metadata-manager.js";
import {
  EMPTY_ASSIGNMENT,
  type JoinGroupResult,
  joinError,
  type SyncGroupResult,
  syncError,
} from "./member-metadata.js";
import {
  type OffsetDeleteResult,
  type OffsetFetchPartition,
  OffsetMetadataManager,
} from "./offset-metadata-manager.js";

export interface GroupConfig extends ClassicGroupConfig {
  readonly offsetMetadataMaxBytes: number;
  /** group.consumer.* (KIP-848); Kafka's defaults when absent. */
  readonly consumerGroup?: Partial<ConsumerGroupConfig>;
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

export class GroupCoordinator {
  private readonly logger: Logger;
  private active = false;
  /** The classic groups' membership protocol. */
  private readonly classicGroups: ClassicGroupCoordinator;
  /** The KIP-848 consumer groups. */
  readonly consumerGroups: ConsumerGroupCoordinator;
  private readonly offsets: OffsetMetadataManager;

  constructor(
    readonly brokerId: number,
    config: GroupConfig,
    readonly groupManager: GroupMetadataManager,
    private readonly time: Time,
    scheduler: Scheduler,
  ) {
    this.logger = new Logger("kafka.coordinator.group.GroupCoordinator", `GroupCoordinator ${brokerId}`);
    this.classicGroups = new ClassicGroupCoordinator(config, groupManager, time, scheduler, this.logger);
    groupManager.onGroupLoaded = (g) => this.classicGroups.onGroupLoaded(g);
    groupManager.onGroupUnloaded = (g) => this.classicGroups.onGroupUnloaded(g);
    groupManager.subscribedTopicsOf = (g) => groupSubscribedTopics(g);
    this.consumerGroups = new ConsumerGroupCoordinator(
      brokerId,
      { ...DEFAULT_CONSUMER_GROUP_CONFIG, ...config.consumerGroup },
      groupManager,
      scheduler,
    );
    this.offsets = new OffsetMetadataManager(
      config.offsetMetadataMaxBytes,
      groupManager,
      this.consumerGroups,
      this.classicGroups.heartbeats,
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

  // ---- the classic group protocol ----

  joinGroup(p: JoinGroupParams): Promise<JoinGroupResult> {
    const status = this.validateGroupStatus(p.groupId, "join");
    if (status !== null) return Promise.resolve(joinError(p.memberId, status));
    if (this.consumerGroups.group(p.groupId) !== undefined)
      return Promise.resolve(joinError(p.memberId, ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
    return this.classicGroups.joinGroup(p);
  }

  syncGroup(p: SyncGroupParams): Promise<SyncGroupResult> {
    const status = this.validateGroupStatus(p.groupId, "sync");
    // A group still loading cannot be synced: the member rejoins (Kafka answers REBALANCE_IN_PROGRESS).
    if (status === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
      return Promise.resolve(syncError(ErrorCode.REBALANCE_IN_PROGRESS));
    if (status !== null) return Promise.resolve(syncError(status));
    return this.classicGroups.syncGroup(p);
  }

  heartbeat(groupId: string, memberId: string, groupInstanceId: string | null, generationId: number): number {
    const status = this.validateGroupStatus(groupId, "heartbeat");
    // While the group loads, heartbeats succeed so the member keeps its session (Kafka does the same).
    if (status === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS) return ErrorCode.NONE;
    if (status !== null) return status;
    return this.classicGroups.heartbeat(groupId, memberId, groupInstanceId, generationId);
  }

  leaveGroup(
    groupId: string,
    leaving: readonly MemberIdentity[],
  ): { errorCode: number; members: Array<MemberIdentity & { errorCode: number }> } {
    const status = this.validateGroupStatus(groupId, "leave");
    if (status !== null) return { errorCode: status, members: [] };
    return this.classicGroups.leaveGroup(groupId, leaving);
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
    const status = this.validateGroupStatus(groupId, "commit");
    if (status !== null) return new Map([...offsets.keys()].map((k) => [k, status]));
    return this.offsets.commitOffsets(groupId, { memberId, groupInstanceId, generationId }, offsets);
  }

  /** TxnOffsetCommit: offsets written in the producer's transaction, pending until its marker. */
  async commitTransactionalOffsets(
    groupId: string,
    producerId: bigint,
    producerEpoch: number,
    memberId: string,
    groupInstanceId: string | null,
    generationId: number,
    offsets: ReadonlyMap<string, CommittedOffset>,
  ): Promise<Map<string, number>> {
    const status = this.validateGroupStatus(groupId, "commit");
    if (status !== null) return new Map([...offsets.keys()].map((k) => [k, status]));
    return this.offsets.commitTransactionalOffsets(
      groupId,
      { producerId, producerEpoch },
      { memberId, groupInstanceId, generationId },
      offsets,
    );
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
    return this.offsets.fetchOffsets(groupId, partitions, member, requireStable);
  }

  /** OffsetDelete: per-partition codes, or a group-level error. */
  async deleteOffsets(
    groupId: string,
    partitions: ReadonlyArray<{ topic: string; partition: number }>,
  ): Promise<OffsetDeleteResult> {
    const status = this.validateGroupStatus(groupId, "offset-delete");
    if (status !== null) return { errorCode: status, partitions: new Map() };
    return this.offsets.deleteOffsets(groupId, partitions);
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
        this.logger.info(
          `Group ${groupId} deleted (${GROUP_METADATA_TOPIC_NAME}-${this.partitionFor(groupId)}).`,
        );
      }
      out.set(groupId, code);
    }
    return out;
  }
}
