// ControllerRequests: what a broker does with the controller's LeaderAndIsr, UpdateMetadata and StopReplica
// (Kafka's KafkaApis.handleLeaderAndIsrRequest / handleUpdateMetadataRequest / handleStopReplicaRequest
// with ReplicaManager's controller-epoch checks). Owns the fencing: a request from an older controller
// epoch than the newest seen is refused with STALE_CONTROLLER_EPOCH, and one addressed to an earlier
// incarnation of this broker (broker epoch below the current registration's czxid) with
// STALE_BROKER_EPOCH. Leadership goes to the ReplicaManager (topic configs read first for new topics, as
// Kafka reads /config/topics when it creates a log), metadata to the MetadataCache, and leadership of
// __consumer_offsets / __transaction_state partitions to the coordinators.

import { EventLoopSlices } from "../common/event-loop-slices.js";
import { Logger } from "../common/logger.js";
import { getOrCreate } from "../common/maps.js";
import { ErrorCode } from "../protocol/errors.js";
import type { LeaderAndIsrRequest } from "../protocol/generated/messages/LeaderAndIsrRequest.js";
import type { LeaderAndIsrResponse } from "../protocol/generated/messages/LeaderAndIsrResponse.js";
import type { StopReplicaRequest } from "../protocol/generated/messages/StopReplicaRequest.js";
import type { StopReplicaResponse } from "../protocol/generated/messages/StopReplicaResponse.js";
import type { UpdateMetadataRequest } from "../protocol/generated/messages/UpdateMetadataRequest.js";
import type { UpdateMetadataResponse } from "../protocol/generated/messages/UpdateMetadataResponse.js";
import type { ControlPlaneReceiver } from "./controller/controller-channel-manager.js";
import type { MetadataCache } from "./metadata/metadata-cache.js";
import { type PartitionState, partitionStateFrom } from "./metadata/partition-state.js";
import type { ReplicaFetcherManager } from "./replication/replica-fetcher-manager.js";
import type { PartitionErrors, ReplicaManager } from "./replication/replica-manager.js";

/** Leadership changes of this broker, for the coordinators (Kafka's onLeadershipChange). */
export interface LeadershipListener {
  onBecomeLeader(topic: string, partition: number, leaderEpoch: number): void;
  onResign(topic: string, partition: number): void;
}

/** Epoch that StopReplica carries for a topic being deleted (Kafka's EpochDuringDelete). */
const EPOCH_DURING_DELETE = -2;

export class ControllerRequests implements ControlPlaneReceiver {
  private readonly log: Logger;
  /** The newest controller epoch seen (Kafka's ReplicaManager.controllerEpoch). */
  controllerEpoch = 0;
  /** Leaders' endpoints as the last LeaderAndIsr gave them (before UpdateMetadata tells the cache). */
  private readonly leaderEndpoints = new Map<number, { host: string; port: number }>();

  constructor(
    private readonly brokerId: number,
    /** The current registration's czxid (changes when the broker registers again after a session expiry). */
    private readonly brokerEpoch: () => bigint,
    private readonly replicaManager: ReplicaManager,
    private readonly cache: MetadataCache,
    private readonly leadership: LeadershipListener,
    private readonly fetchers?: ReplicaFetcherManager,
  ) {
    this.log = new Logger("state.change.logger", `Broker id=${brokerId}`);
  }

  private isBrokerEpochStale(requestEpoch: bigint): boolean {
    return requestEpoch !== -1n && requestEpoch < this.brokerEpoch();
  }

  private fencingError(controllerEpoch: number, brokerEpoch: bigint, what: string): number {
    if (this.isBrokerEpochStale(brokerEpoch)) {
      this.log.info(
        `Received ${what} with broker epoch ${brokerEpoch} smaller than the current broker epoch ${this.brokerEpoch()}`,
      );
      return ErrorCode.STALE_BROKER_EPOCH;
    }
    if (controllerEpoch < this.controllerEpoch) {
      this.log.warn(
        `Ignoring ${what} since its controller epoch ${controllerEpoch} is older than the current controller epoch ${this.controllerEpoch}`,
      );
      return ErrorCode.STALE_CONTROLLER_EPOCH;
    }
    this.controllerEpoch = controllerEpoch;
    return ErrorCode.NONE;
  }

  async leaderAndIsr(request: LeaderAndIsrRequest): Promise<LeaderAndIsrResponse> {
    const states: PartitionState[] = [];
    for (const t of request.topicStates) {
      for (const p of t.partitionStates) {
        states.push(partitionStateFrom(t.topicName, t.topicId, p, p.partitionEpoch));
      }
    }
    const respond = (
      codeOf: (s: PartitionState) => number,
      errorCode: number = ErrorCode.NONE,
    ): LeaderAndIsrResponse => {
      const byTopic = new Map<
        string,
        { topicId: string; partitionErrors: LeaderAndIsrResponse["partitionErrors"] }
      >();
      for (const s of states) {
        const t = getOrCreate(byTopic, s.topic, () => ({ topicId: s.topicId, partitionErrors: [] }));
        t.partitionErrors.push({ topicName: s.topic, partitionIndex: s.partition, errorCode: codeOf(s) });
      }
      return { errorCode, partitionErrors: [], topics: [...byTopic.values()] };
    };
    const fenced = this.fencingError(
      request.controllerEpoch,
      request.brokerEpoch,
      `LeaderAndIsr request from controller ${request.controllerId}`,
    );
    if (fenced !== ErrorCode.NONE) return respond(() => fenced, fenced);
    const mine = states.filter((s) => s.replicas.includes(this.brokerId));
    // Topic configs first: a log created for a new topic gets its overrides.
    await this.cache.loadTopicConfigs([...new Set(mine.map((s) => s.topic))]);
    for (const l of request.liveLeaders)
      this.leaderEndpoints.set(l.brokerId, { host: l.hostName, port: l.port });
    // The logs this request creates are made durable together, before it is answered (new-logs-sync.ts).
    const logManager = this.replicaManager.logManager;
    logManager.deferNewLogSync();
    let results: PartitionErrors;
    try {
      results = await this.becomeLeaderOrFollowerSliced(mine);
    } catch (e) {
      await logManager.syncNewLogs();
      throw e;
    }
    // A new log that could not be made durable is offline: KAFKA_STORAGE_ERROR, and no fetcher for it.
    for (const tp of await logManager.syncNewLogs()) {
      const r = results.get(`${tp.topic}-${tp.partition}`);
      if (r !== undefined)
        results.set(`${tp.topic}-${tp.partition}`, { ...r, errorCode: ErrorCode.KAFKA_STORAGE_ERROR });
    }
    const led: Array<{ topic: string; partition: number }> = [];
    const followed: Array<{
      topicPartition: { topic: string; partition: number };
      leaderId: number;
      leaderEpoch: number;
    }> = [];
    const failed: Array<{ topic: string; partition: number }> = [];
    for (const s of mine) {
      const r = results.get(`${s.topic}-${s.partition}`);
      // A state at the current leader epoch (or older) changed nothing: fetchers and coordinators stay,
      // except that a follower whose log dir is offline or full stops fetching into it.
      if (r?.ignored) {
        if (r.errorCode === ErrorCode.KAFKA_STORAGE_ERROR && s.leader !== this.brokerId)
          failed.push({ topic: s.topic, partition: s.partition });
        continue;
      }
      if (r !== undefined && r.errorCode !== ErrorCode.NONE) {
        // KAFKA_STORAGE_ERROR: no fetching into an offline or full log dir. A leader on a full dir that
        // the controller kept (no other in-sync replica) still leads: its reads go on.
        const p = this.replicaManager.getPartition({ topic: s.topic, partition: s.partition });
        const keepsLeading =
          s.leader === this.brokerId && p?.isLeader === true && !p.isOffline && p.log !== undefined;
        if (!keepsLeading) {
          failed.push({ topic: s.topic, partition: s.partition });
          continue;
        }
      }
      if (s.leader === this.brokerId) {
        led.push({ topic: s.topic, partition: s.partition });
        this.leadership.onBecomeLeader(s.topic, s.partition, s.leaderEpoch);
      } else {
        followed.push({
          topicPartition: { topic: s.topic, partition: s.partition },
          leaderId: s.leader,
          leaderEpoch: s.leaderEpoch,
        });
        this.leadership.onResign(s.topic, s.partition);
      }
    }
    this.fetchers?.removeFetcherForPartitions([...led, ...failed]);
    this.fetchers?.addFetcherForPartitions(followed);
    return respond((s) => {
      if (!s.replicas.includes(this.brokerId)) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
      return results.get(`${s.topic}-${s.partition}`)?.errorCode ?? ErrorCode.NONE;
    });
  }

  /**
   * ReplicaManager.becomeLeaderOrFollower one partition at a time, handing the event loop back every
   * SLICE_MS (event-loop-slices.ts): becoming leader or follower creates logs and writes checkpoints, and a LeaderAndIsr of
   * thousands of partitions (a failover, a large CreateTopics) would otherwise hold the loop for seconds —
   * long enough to miss ZooKeeper heartbeats (docs/benchmarks.md, cluster failover).
   */
  private async becomeLeaderOrFollowerSliced(states: readonly PartitionState[]): Promise<PartitionErrors> {
    const results: PartitionErrors = new Map();
    const slices = new EventLoopSlices();
    for (const s of states) {
      await slices.next();
      for (const [k, v] of this.replicaManager.becomeLeaderOrFollower([s])) results.set(k, v);
    }
    return results;
  }

  /** A leader's endpoint on `listenerName`: from the metadata cache, else from the last LeaderAndIsr. */
  leaderEndpoint(brokerId: number, listenerName: string): { host: string; port: number } | undefined {
    return this.cache.endpointFor(brokerId, listenerName) ?? this.leaderEndpoints.get(brokerId);
  }

  async updateMetadata(request: UpdateMetadataRequest): Promise<UpdateMetadataResponse> {
    const fenced = this.fencingError(
      request.controllerEpoch,
      request.brokerEpoch,
      `UpdateMetadata request from controller ${request.controllerId}`,
    );
    if (fenced !== ErrorCode.NONE) return { errorCode: fenced };
    await this.cache.updateMetadata(request);
    return { errorCode: ErrorCode.NONE };
  }

  async stopReplica(request: StopReplicaRequest): Promise<StopReplicaResponse> {
    const all = request.topicStates.flatMap((t) =>
      t.partitionStates.map((p) => ({
        topic: t.topicName,
        partition: p.partitionIndex,
        leaderEpoch: p.leaderEpoch,
        deletePartition: p.deletePartition,
      })),
    );
    const fenced = this.fencingError(
      request.controllerEpoch,
      request.brokerEpoch,
      `StopReplica request from controller ${request.controllerId}`,
    );
    if (fenced !== ErrorCode.NONE) {
      return {
        errorCode: fenced,
        partitionErrors: all.map((p) => ({
          topicName: p.topic,
          partitionIndex: p.partition,
          errorCode: fenced,
        })),
      };
    }
    const errors: StopReplicaResponse["partitionErrors"] = [];
    const toStop: Array<{ topic: string; partition: number }> = [];
    const toDelete: Array<{ topic: string; partition: number }> = [];
    for (const p of all) {
      const current = this.replicaManager.getPartition(p)?.leaderEpoch;
      if (
        p.leaderEpoch !== EPOCH_DURING_DELETE &&
        p.leaderEpoch >= 0 &&
        current !== undefined &&
        p.leaderEpoch < current
      ) {
        this.log.warn(
          `Ignoring StopReplica for ${p.topic}-${p.partition}: its leader epoch ${p.leaderEpoch} is older than ${current}`,
        );
        errors.push({
          topicName: p.topic,
          partitionIndex: p.partition,
          errorCode: ErrorCode.FENCED_LEADER_EPOCH,
        });
        continue;
      }
      (p.deletePartition ? toDelete : toStop).push({ topic: p.topic, partition: p.partition });
      this.leadership.onResign(p.topic, p.partition);
    }
    for (const [group, del] of [
      [toStop, false],
      [toDelete, true],
    ] as const) {
      if (group.length === 0) continue;
      this.fetchers?.removeFetcherForPartitions(group);
      const r = this.replicaManager.stopReplicas(group, del);
      for (const p of group) {
        errors.push({
          topicName: p.topic,
          partitionIndex: p.partition,
          errorCode: r.get(`${p.topic}-${p.partition}`)?.errorCode ?? ErrorCode.NONE,
        });
      }
    }
    return { errorCode: ErrorCode.NONE, partitionErrors: errors };
  }
}
