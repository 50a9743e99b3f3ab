// ControllerBrokerRequestBatch: what one controller event has to tell brokers, collected and then sent
// together (Kafka's AbstractControllerBrokerRequestBatch): LeaderAndIsr per broker (the partitions it
// replicates whose leadership changed), UpdateMetadata to every live broker (changed partitions, or the
// whole state for new brokers), StopReplica per broker. Sent in Kafka's order — LeaderAndIsr, then
// UpdateMetadata, then StopReplica — each request carrying the controller epoch and the receiving
// broker's epoch, so a broker can refuse a stale controller (STALE_CONTROLLER_EPOCH) or a request meant
// for its previous incarnation (STALE_BROKER_EPOCH).

import { EventLoopSlices } from "../../common/event-loop-slices.js";
import { getOrCreate } from "../../common/maps.js";
import type { LeaderAndIsrPartitionState } from "../../protocol/generated/messages/LeaderAndIsrRequest.js";
import type { LeaderAndIsrResponse } from "../../protocol/generated/messages/LeaderAndIsrResponse.js";
import type { StopReplicaResponse } from "../../protocol/generated/messages/StopReplicaResponse.js";
import type {
  UpdateMetadataBroker,
  UpdateMetadataPartitionState,
} from "../../protocol/generated/messages/UpdateMetadataRequest.js";
import type { ControllerChannelManager } from "./controller-channel-manager.js";
import { type ControllerContext, type TopicPartitionKey, tpKey } from "./controller-context.js";

/** Leader id written to UpdateMetadata for partitions of a topic being deleted (Kafka's LeaderDuringDelete). */
export const LEADER_DURING_DELETE = -2;

const SECURITY_PROTOCOL_IDS: Record<string, number> = {
  PLAINTEXT: 0,
  SSL: 1,
  SASL_PLAINTEXT: 2,
  SASL_SSL: 3,
};

export class ControllerBrokerRequestBatch {
  private readonly leaderAndIsr = new Map<
    number,
    Map<string, LeaderAndIsrPartitionState & { topicId: string }>
  >();
  private readonly stopReplica = new Map<
    number,
    Map<string, { topic: string; partition: number; deletePartition: boolean; leaderEpoch: number }>
  >();
  private readonly updateMetadataBrokers = new Set<number>();
  private readonly updateMetadataPartitions = new Map<string, TopicPartitionKey>();
  private updateMetadataAllPartitions = false;

  constructor(
    private readonly controllerId: number,
    private readonly context: ControllerContext,
    private readonly channel: ControllerChannelManager,
    private readonly interBrokerListenerName: string,
    private readonly onLeaderAndIsrResponse?: (brokerId: number, r: LeaderAndIsrResponse) => void,
  ) {}

  /** LeaderAndIsr for `tp` to each live broker of `brokerIds`, and UpdateMetadata of `tp` to every broker. */
  addLeaderAndIsrRequestForBrokers(
    brokerIds: readonly number[],
    tp: TopicPartitionKey,
    isNew: boolean,
  ): void {
    const k = tpKey(tp.topic, tp.partition);
    const l = this.context.leadership.get(k);
    if (l === undefined) return;
    const replicas = this.context.replicasFor(tp.topic, tp.partition);
    const reassigning = this.context.reassigning.get(k);
    for (const id of brokerIds) {
      if (!this.context.isLive(id)) continue;
      const m = getOrCreate(this.leaderAndIsr, id, () => new Map());
      const prev = m.get(k);
      m.set(k, {
        topicName: tp.topic,
        topicId: this.context.topicIds.get(tp.topic) ?? "AAAAAAAAAAAAAAAAAAAAAA",
        partitionIndex: tp.partition,
        controllerEpoch: l.leaderAndIsr.controllerEpoch,
        leader: l.leaderAndIsr.leader,
        leaderEpoch: l.leaderAndIsr.leaderEpoch,
        isr: [...l.leaderAndIsr.isr],
        partitionEpoch: l.zkVersion,
        replicas: [...replicas],
        addingReplicas: [...(reassigning?.adding ?? [])],
        removingReplicas: [...(reassigning?.removing ?? [])],
        isNew: isNew || (prev?.isNew ?? false),
        leaderRecoveryState: 0,
      });
    }
    this.addUpdateMetadataRequestForBrokers(this.context.liveBrokerIds(), [tp]);
  }

  /**
   * LeaderAndIsr to each of `brokerIds` for every partition it replicates that has a leader and isn't being
   * deleted: what a broker that starts (or a new controller, or a log dir event) makes its replicas learn
   * (Kafka's replica state machine moving them to OnlineReplica).
   */
  async addLeaderAndIsrRequestForReplicasOn(brokerIds: readonly number[]): Promise<void> {
    // Every partition of the cluster at a failover: in slices (event-loop-slices.ts).
    const slices = new EventLoopSlices();
    for (const id of brokerIds) {
      for (const tp of this.context.partitionsOnBroker(id)) {
        await slices.next();
        if (this.context.topicsToBeDeleted.has(tp.topic)) continue;
        if (this.context.leadership.has(tpKey(tp.topic, tp.partition)))
          this.addLeaderAndIsrRequestForBrokers([id], tp, false);
      }
    }
  }

  addStopReplicaRequestForBrokers(
    brokerIds: readonly number[],
    tp: TopicPartitionKey,
    deletePartition: boolean,
  ): void {
    const k = tpKey(tp.topic, tp.partition);
    const leaderEpoch = this.context.leadership.get(k)?.leaderAndIsr.leaderEpoch ?? -1;
    for (const id of brokerIds) {
      if (!this.context.isLive(id)) continue;
      const m = getOrCreate(this.stopReplica, id, () => new Map());
      const prev = m.get(k);
      m.set(k, {
        topic: tp.topic,
        partition: tp.partition,
        deletePartition: deletePartition || (prev?.deletePartition ?? false),
        // Deleting a topic: -2 lets the broker skip the epoch check (Kafka's EpochDuringDelete).
        leaderEpoch: deletePartition ? -2 : leaderEpoch,
      });
    }
  }

  /** UpdateMetadata to `brokerIds`: the given partitions, or (none given) every partition. */
  addUpdateMetadataRequestForBrokers(
    brokerIds: readonly number[],
    partitions?: readonly TopicPartitionKey[],
  ): void {
    for (const id of brokerIds) this.updateMetadataBrokers.add(id);
    if (partitions === undefined) this.updateMetadataAllPartitions = true;
    else for (const tp of partitions) this.updateMetadataPartitions.set(tpKey(tp.topic, tp.partition), tp);
  }

  get isEmpty(): boolean {
    return (
      this.leaderAndIsr.size === 0 && this.stopReplica.size === 0 && this.updateMetadataBrokers.size === 0
    );
  }

  /** Sends everything collected (LeaderAndIsr, UpdateMetadata, StopReplica) and clears the batch. */
  sendRequestsToBrokers(onStopReplicaResponse?: (brokerId: number, r: StopReplicaResponse) => void): void {
    const ctx = this.context;
    const epoch = ctx.epoch;
    const brokerEpoch = (id: number): bigint => ctx.liveBrokers.get(id)?.epoch ?? -1n;
    for (const [id, states] of this.leaderAndIsr) {
      const byTopic = new Map<
        string,
        { topicName: string; topicId: string; partitionStates: LeaderAndIsrPartitionState[] }
      >();
      const leaders = new Set<number>();
      for (const s of states.values()) {
        const t = getOrCreate(byTopic, s.topicName, () => ({
          topicName: s.topicName,
          topicId: s.topicId,
          partitionStates: [],
        }));
        const { topicId: _id, ...state } = s;
        t.partitionStates.push(state);
        if (s.leader >= 0) leaders.add(s.leader);
      }
      const liveLeaders = [...leaders]
        .filter((l) => ctx.isLive(l))
        .map((l) => {
          const e = this.interBrokerEndpoint(l);
          return { brokerId: l, hostName: e?.host ?? "", port: e?.port ?? -1 };
        });
      this.channel.sendRequest(id, {
        kind: "LeaderAndIsr",
        body: {
          controllerId: this.controllerId,
          isKRaftController: false,
          controllerEpoch: epoch,
          brokerEpoch: brokerEpoch(id),
          type: 0,
          ungroupedPartitionStates: [],
          topicStates: [...byTopic.values()],
          liveLeaders,
        },
        onResponse: (r) => this.onLeaderAndIsrResponse?.(id, r),
      });
    }
    if (this.updateMetadataBrokers.size > 0) {
      const parts = this.updateMetadataAllPartitions
        ? ctx.allPartitions()
        : [...this.updateMetadataPartitions.values()];
      const topicStates = this.updateMetadataTopicStates(parts);
      const liveBrokers = this.liveBrokersForUpdateMetadata();
      for (const id of [...this.updateMetadataBrokers].sort((a, b) => a - b)) {
        if (!ctx.isLive(id)) continue;
        this.channel.sendRequest(id, {
          kind: "UpdateMetadata",
          body: {
            controllerId: this.controllerId,
            isKRaftController: false,
            type: 0,
            controllerEpoch: epoch,
            brokerEpoch: brokerEpoch(id),
            ungroupedPartitionStates: [],
            topicStates,
            liveBrokers,
          },
        });
      }
    }
    for (const [id, states] of this.stopReplica) {
      const byTopic = new Map<
        string,
        {
          topicName: string;
          partitionStates: Array<{ partitionIndex: number; leaderEpoch: number; deletePartition: boolean }>;
        }
      >();
      for (const s of states.values()) {
        const t = getOrCreate(byTopic, s.topic, () => ({ topicName: s.topic, partitionStates: [] }));
        t.partitionStates.push({
          partitionIndex: s.partition,
          leaderEpoch: s.leaderEpoch,
          deletePartition: s.deletePartition,
        });
      }
      this.channel.sendRequest(id, {
        kind: "StopReplica",
        body: {
          controllerId: this.controllerId,
          isKRaftController: false,
          controllerEpoch: epoch,
          brokerEpoch: brokerEpoch(id),
          deletePartitions: false,
          ungroupedPartitions: [],
          topics: [],
          topicStates: [...byTopic.values()],
        },
        onResponse: (r) => onStopReplicaResponse?.(id, r),
      });
    }
    this.leaderAndIsr.clear();
    this.stopReplica.clear();
    this.updateMetadataBrokers.clear();
    this.updateMetadataPartitions.clear();
    this.updateMetadataAllPartitions = false;
  }

  private interBrokerEndpoint(id: number) {
    const endpoints = this.context.liveBrokers.get(id)?.reg.endpoints ?? [];
    return endpoints.find((e) => e.listenerName === this.interBrokerListenerName) ?? endpoints[0];
  }

  private updateMetadataTopicStates(parts: readonly TopicPartitionKey[]) {
    const ctx = this.context;
    const byTopic = new Map<
      string,
      { topicName: string; topicId: string; partitionStates: UpdateMetadataPartitionState[] }
    >();
    for (const tp of parts) {
      const l = ctx.leadership.get(tpKey(tp.topic, tp.partition));
      if (l === undefined) continue;
      const replicas = ctx.replicasFor(tp.topic, tp.partition);
      const deleting = ctx.topicsToBeDeleted.has(tp.topic);
      const t = getOrCreate(byTopic, tp.topic, () => ({
        topicName: tp.topic,
        topicId: ctx.topicIds.get(tp.topic) ?? "AAAAAAAAAAAAAAAAAAAAAA",
        partitionStates: [],
      }));
      t.partitionStates.push({
        topicName: tp.topic,
        partitionIndex: tp.partition,
        controllerEpoch: l.leaderAndIsr.controllerEpoch,
        leader: deleting ? LEADER_DURING_DELETE : l.leaderAndIsr.leader,
        leaderEpoch: l.leaderAndIsr.leaderEpoch,
        isr: [...l.leaderAndIsr.isr],
        zkVersion: l.zkVersion,
        replicas: [...replicas],
        offlineReplicas: replicas.filter((r) => !ctx.isLive(r)),
      });
    }
    return [...byTopic.values()];
  }

  private liveBrokersForUpdateMetadata(): UpdateMetadataBroker[] {
    return this.context.liveBrokerIds().map((id) => {
      const b = this.context.liveBrokers.get(id)!;
      return {
        id,
        v0Host: "",
        v0Port: 0,
        endpoints: b.reg.endpoints.map((e) => ({
          port: e.port,
          host: e.host,
          listener: e.listenerName,
          securityProtocol: SECURITY_PROTOCOL_IDS[e.securityProtocol] ?? 0,
        })),
        rack: b.reg.rack,
      };
    });
  }
}
