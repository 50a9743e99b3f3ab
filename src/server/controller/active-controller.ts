// ActiveController: what exists only while this broker is the controller, for one term (one controller
// epoch) — the ControllerChannelManager to every live broker, the request batch, the partition state
// machine, the topic deletion manager, the log dir event handler, the partition reassignments and the auto
// leader rebalance task. Made when the broker wins the election, dropped when it resigns (resign(): the
// task cancelled, the channel shut down, the deletions forgotten), so no part of a former term can be used
// by mistake. On it, what the controller does to the ControllerContext (shared with KafkaController, which
// keeps it across terms) and to the brokers once an event has decided to act: Kafka's onBrokerStartup,
// onBrokerFailure and onNewPartitionCreation, starting topic deletions, replica leader elections (asked
// for, or auto.leader.rebalance.enable's), the processing of AlterPartition and of ControlledShutdown, and
// sending the batch. The election, the watches and the event queue stay in KafkaController.

import type { Logger } from "../../common/logger.js";
import type { ScheduledTask } from "../../common/scheduler.js";
import { ErrorCode } from "../../protocol/errors.js";
import type { LeaderAndIsrResponse } from "../../protocol/generated/messages/LeaderAndIsrResponse.js";
import type { StopReplicaResponse } from "../../protocol/generated/messages/StopReplicaResponse.js";
import { isStoreError, type KafkaZkClient } from "../metadata/kafka-zk-client.js";
import { ConfigEntityZNode, type LeaderAndIsr, ZkPaths } from "../metadata/zk-data.js";
import type { AlterPartitionItem, AlterPartitionResult } from "../replication/alter-partition-manager.js";
import { sameReplicaSet } from "../replication/partition-isr-state.js";
import { ControllerChannelManager } from "./controller-channel-manager.js";
import { type ControllerContext, type TopicPartitionKey, tpKey } from "./controller-context.js";
import { ControllerBrokerRequestBatch } from "./controller-request-batch.js";
import type { ControllerEventName } from "./controller-state.js";
import type { KafkaControllerOptions } from "./kafka-controller.js";
import { LogDirEventHandler } from "./log-dir-event-handler.js";
import { PartitionReassignments } from "./partition-reassignment.js";
import { PartitionStateMachine } from "./partition-state-machine.js";
import {
  ElectionType,
  electReplicaLeaders,
  partitionsForAutoLeaderRebalance,
  type ReplicaElectionResult,
} from "./replica-leader-election.js";
import { TopicDeletionManager } from "./topic-deletion-manager.js";

export interface ControlledShutdownResult {
  readonly errorCode: number;
  readonly remainingPartitions: TopicPartitionKey[];
}

/** What the active controller asks of KafkaController (its queue, its watches, the current term). */
export interface ActiveControllerHooks {
  /** A broker answered LeaderAndIsr (queued as LeaderAndIsrResponseReceived). */
  readonly onLeaderAndIsrResponse: (brokerId: number, r: LeaderAndIsrResponse) => void;
  /** A broker answered StopReplica: for the deletion manager of the term current when the answer comes. */
  readonly onStopReplicaResponse: (brokerId: number, r: StopReplicaResponse) => void;
  /** Queues the deletion manager's event; it runs only while this broker is still the controller. */
  readonly enqueueDeletionEvent: (name: ControllerEventName, fn: () => Promise<void>) => void;
  /** A topic is gone: its znode watch is no longer set. */
  readonly onTopicDeleted: (topic: string) => void;
}

export class ActiveController {
  readonly channel: ControllerChannelManager;
  readonly batch: ControllerBrokerRequestBatch;
  readonly psm: PartitionStateMachine;
  readonly deletion: TopicDeletionManager;
  readonly logDirEvents: LogDirEventHandler;
  readonly reassignments: PartitionReassignments;
  /** auto.leader.rebalance.enable's next check. */
  autoRebalanceTask: ScheduledTask | undefined;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly zk: KafkaZkClient,
    private readonly options: KafkaControllerOptions,
    private readonly hooks: ActiveControllerHooks,
    private readonly log: Logger,
  ) {
    this.channel = new ControllerChannelManager({
      controllerId: options.brokerId,
      interBrokerListenerName: options.interBrokerListenerName,
      localReceiver: options.localReceiver,
      requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
      security: options.security,
    });
    this.batch = new ControllerBrokerRequestBatch(
      options.brokerId,
      ctx,
      this.channel,
      options.interBrokerListenerName,
      hooks.onLeaderAndIsrResponse,
    );
    this.psm = new PartitionStateMachine(
      ctx,
      zk,
      this.batch,
      {
        uncleanLeaderElectionEnable: (t) => this.uncleanLeaderElectionEnabled(t),
        stats: options.stats,
        time: options.time,
      },
      log,
    );
    this.logDirEvents = new LogDirEventHandler(ctx, zk, this.psm, this.batch, log);
    this.reassignments = new PartitionReassignments(ctx, zk, this.psm, this.batch, log);
    this.deletion = new TopicDeletionManager(
      ctx,
      zk,
      this.batch,
      hooks.enqueueDeletionEvent,
      hooks.onTopicDeleted,
      log,
    );
  }

  /** The end of the term: nothing more is sent, scheduled or deleted by it. */
  resign(): void {
    this.autoRebalanceTask?.cancel();
    this.autoRebalanceTask = undefined;
    this.channel.shutdown();
    this.deletion.reset();
  }

  sendBatch(): void {
    this.batch.sendRequestsToBrokers(this.hooks.onStopReplicaResponse);
  }

  private async uncleanLeaderElectionEnabled(topic: string): Promise<boolean> {
    const n = await this.zk.store.get(ZkPaths.configTopic(topic));
    const v = n
      ? ConfigEntityZNode.decode(ZkPaths.configTopic(topic), n.data)["unclean.leader.election.enable"]
      : undefined;
    return v === undefined ? this.options.uncleanLeaderElectionEnable : v.trim().toLowerCase() === "true";
  }

  // ---- brokers ----

  async onBrokerStartup(ids: number[]): Promise<void> {
    const ctx = this.ctx;
    // A restarted broker reports its offline log dirs afresh (Kafka's replicasOnOfflineDirs.remove).
    for (const id of ids) ctx.replicasOnOfflineDirs.delete(id);
    const batch = this.batch;
    const existing = ctx.liveBrokerIds().filter((id) => !ids.includes(id));
    for (const id of ids) ctx.shuttingDownBrokerIds.delete(id);
    // Existing brokers learn the new broker list; new brokers the whole state.
    batch.addUpdateMetadataRequestForBrokers(existing, []);
    batch.addUpdateMetadataRequestForBrokers(ids);
    // Their replicas come online: each learns its partitions' leadership.
    await batch.addLeaderAndIsrRequestForReplicasOn(ids);
    await this.psm.triggerOnlinePartitionStateChange();
    // Reassignments waiting for replicas on these brokers go on.
    await this.reassignments.resume((tp) =>
      this.reassignments.assignmentOf(tp).replicas.some((r) => ids.includes(r)),
    );
    await this.deletion.resumeDeletions();
  }

  async onBrokerFailure(ids: number[]): Promise<void> {
    const ctx = this.ctx;
    for (const id of ids) ctx.replicasOnOfflineDirs.delete(id);
    for (const id of ids) ctx.shuttingDownBrokerIds.delete(id);
    this.deletion.onBrokerFailure(ids);
    const psm = this.psm;
    // Partitions led by a dead broker go offline and are re-elected among the live ISR members.
    const offline = ctx
      .allPartitions()
      .filter((tp) =>
        ids.includes(ctx.leadership.get(tpKey(tp.topic, tp.partition))?.leaderAndIsr.leader ?? -1),
      )
      .filter((tp) => !ctx.topicsToBeDeleted.has(tp.topic));
    psm.setOffline(offline);
    await psm.triggerOnlinePartitionStateChange();
    // The dead replicas leave every ISR.
    for (const id of ids) {
      const parts = ctx.partitionsOnBroker(id).filter((tp) => !ctx.topicsToBeDeleted.has(tp.topic));
      await psm.removeReplicaFromIsr(id, parts);
    }
    // Every broker learns who is alive, even when no partition changed.
    this.batch.addUpdateMetadataRequestForBrokers(ctx.liveBrokerIds(), []);
  }

  // ---- topics ----

  async onNewPartitionCreation(partitions: TopicPartitionKey[]): Promise<void> {
    if (partitions.length === 0) return;
    this.psm.setNew(partitions);
    await this.psm.toOnline(partitions, "offline");
    this.sendBatch();
  }

  // ---- topic deletion ----

  /**
   * The topics queued at /admin/delete_topics (Kafka's processTopicDeletion): their deletion starts; a
   * marker for an unknown topic, or any when delete.topic.enable is false, is removed.
   */
  async onTopicDeletion(queued: readonly string[]): Promise<void> {
    if (queued.length === 0) return;
    const ctx = this.ctx;
    const toDelete: string[] = [];
    for (const topic of queued) {
      if (!this.options.deleteTopicEnable || !ctx.assignments.has(topic)) {
        if (!this.options.deleteTopicEnable)
          this.log.info(`Removing ${ZkPaths.deleteTopic(topic)} since delete.topic.enable is false`);
        try {
          await this.zk.store.delete(ZkPaths.deleteTopic(topic));
        } catch (e) {
          if (!isStoreError(e, "NoNode")) throw e;
        }
        continue;
      }
      if (!ctx.topicsToBeDeleted.has(topic)) toDelete.push(topic);
    }
    if (toDelete.length === 0) return;
    this.log.info(`Starting topic deletion for topics ${toDelete.join(",")}`);
    await this.deletion.enqueueTopicsForDeletion(toDelete);
    this.sendBatch();
  }

  // ---- replica leader elections ----

  /** ElectLeaders from an admin client (see KafkaController.electLeaders). */
  async electLeaders(
    partitions: readonly TopicPartitionKey[] | undefined,
    type: ElectionType,
  ): Promise<ReplicaElectionResult[]> {
    const asked = partitions ?? this.ctx.allPartitions();
    this.log.info(
      `Starting replica leader election (${type === ElectionType.PREFERRED ? "PREFERRED" : "UNCLEAN"}) for ${partitions ? `partitions ${asked.map((tp) => tpKey(tp.topic, tp.partition)).join(",")}` : "all partitions"} triggered by AdminClientTriggered`,
    );
    const results = await electReplicaLeaders(this.ctx, this.psm, asked, type, "AdminClientTriggered");
    this.sendBatch();
    return partitions ? results : results.filter((r) => r.errorCode !== ErrorCode.ELECTION_NOT_NEEDED);
  }

  /** auto.leader.rebalance.enable's check: preferred leaders back where a broker's imbalance is too high. */
  async autoLeaderRebalance(imbalancePerBrokerPercentage: number): Promise<void> {
    const todo = partitionsForAutoLeaderRebalance(this.ctx, imbalancePerBrokerPercentage, (tp) =>
      this.ctx.reassigning.has(tpKey(tp.topic, tp.partition)),
    );
    if (todo.length === 0) return;
    this.log.info(
      `Starting replica leader election (PREFERRED) for partitions ${todo.map((tp) => tpKey(tp.topic, tp.partition)).join(",")} triggered by AutoTriggered`,
    );
    await electReplicaLeaders(this.ctx, this.psm, todo, ElectionType.PREFERRED, "AutoTriggered");
    this.sendBatch();
  }

  // ---- ISR changes from leaders ----

  /**
   * Kafka's processAlterPartition (see KafkaController.alterPartition). Returns the answers, and the
   * partitions being reassigned whose ISR changed (a grown ISR may complete their reassignment).
   */
  async processAlterPartition(
    brokerId: number,
    brokerEpoch: bigint,
    items: AlterPartitionItem[],
    fail: (code: number) => AlterPartitionResult[],
  ): Promise<{ results: AlterPartitionResult[]; reassigning: TopicPartitionKey[] }> {
    const ctx = this.ctx;
    // Only the broker's current registration may change ISRs (Kafka requires the exact broker epoch).
    const live = ctx.liveBrokers.get(brokerId);
    if (live === undefined || brokerEpoch !== live.epoch) {
      this.log.info(
        `Ignoring AlterPartition from broker ${brokerId} with broker epoch ${brokerEpoch}: ${live === undefined ? "the broker is not registered" : `its current broker epoch is ${live.epoch}`}`,
      );
      return { results: fail(ErrorCode.STALE_BROKER_EPOCH), reassigning: [] };
    }
    const results: AlterPartitionResult[] = [];
    const updates: Array<TopicPartitionKey & { leaderAndIsr: LeaderAndIsr; zkVersion: number }> = [];
    for (const i of items) {
      const k = tpKey(i.topic, i.partition);
      const cur = ctx.leadership.get(k);
      const reply = (errorCode: number): void => {
        results.push({
          topic: i.topic,
          partition: i.partition,
          errorCode,
          leaderEpoch: cur?.leaderAndIsr.leaderEpoch ?? -1,
          isr: cur ? [...cur.leaderAndIsr.isr] : [],
          partitionEpoch: cur?.zkVersion ?? -1,
        });
      };
      if (cur === undefined || ctx.topicsToBeDeleted.has(i.topic))
        reply(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      // Newer than what this controller knows: it is likely no longer the controller.
      else if (i.leaderEpoch > cur.leaderAndIsr.leaderEpoch || i.partitionEpoch > cur.zkVersion)
        reply(ErrorCode.NOT_CONTROLLER);
      else if (i.leaderEpoch < cur.leaderAndIsr.leaderEpoch) reply(ErrorCode.FENCED_LEADER_EPOCH);
      else if (cur.leaderAndIsr.leader !== brokerId) reply(ErrorCode.INVALID_REQUEST);
      // Already the state asked for (a repeat whose answer was lost): answered with it, before the
      // partition epoch is checked, so that AlterPartition is idempotent.
      else if (sameReplicaSet(i.newIsr, cur.leaderAndIsr.isr)) reply(ErrorCode.NONE);
      else if (i.partitionEpoch < cur.zkVersion) reply(ErrorCode.INVALID_UPDATE_VERSION);
      else if (i.newIsr.some((r) => !ctx.isLiveAndNotShuttingDown(r) && r !== brokerId))
        reply(ErrorCode.INELIGIBLE_REPLICA);
      else
        updates.push({
          topic: i.topic,
          partition: i.partition,
          leaderAndIsr: { ...cur.leaderAndIsr, isr: [...i.newIsr], controllerEpoch: ctx.epoch },
          zkVersion: cur.zkVersion,
        });
    }
    if (updates.length === 0) return { results, reassigning: [] };
    const { written, failed } = await this.zk.updateLeaderAndIsr(updates, ctx.epochZkVersion);
    for (const u of updates) {
      const k = tpKey(u.topic, u.partition);
      const v = written.get(k);
      if (v === undefined) {
        results.push({
          topic: u.topic,
          partition: u.partition,
          errorCode:
            failed.get(k) === "BadVersion"
              ? ErrorCode.INVALID_UPDATE_VERSION
              : ErrorCode.UNKNOWN_SERVER_ERROR,
          leaderEpoch: -1,
          isr: [],
          partitionEpoch: -1,
        });
        continue;
      }
      ctx.leadership.set(k, { leaderAndIsr: u.leaderAndIsr, zkVersion: v });
      this.log.info(
        `ISR of ${k} changed to [${u.leaderAndIsr.isr.join(",")}] by leader ${brokerId} (partition epoch ${v})`,
      );
      results.push({
        topic: u.topic,
        partition: u.partition,
        errorCode: ErrorCode.NONE,
        leaderEpoch: u.leaderAndIsr.leaderEpoch,
        isr: [...u.leaderAndIsr.isr],
        partitionEpoch: v,
      });
    }
    this.batch.addUpdateMetadataRequestForBrokers(ctx.liveBrokerIds(), updates);
    this.sendBatch();
    const reassigning = updates.filter(
      (u) => written.has(tpKey(u.topic, u.partition)) && ctx.reassigning.has(tpKey(u.topic, u.partition)),
    );
    return { results, reassigning };
  }

  // ---- controlled shutdown ----

  /** Kafka's doControlledShutdown: moves leadership off `brokerId`; answers the partitions it still leads. */
  async controlledShutdown(brokerId: number, brokerEpoch: bigint): Promise<ControlledShutdownResult> {
    const ctx = this.ctx;
    const live = ctx.liveBrokers.get(brokerId);
    if (live === undefined) {
      this.log.warn(`Controlled shutdown of broker ${brokerId} refused: it is not alive`);
      return { errorCode: ErrorCode.BROKER_NOT_AVAILABLE, remainingPartitions: [] };
    }
    if (brokerEpoch !== -1n && brokerEpoch < live.epoch) {
      this.log.info(
        `Ignoring controlled shutdown of broker ${brokerId}: its epoch ${brokerEpoch} is older than ${live.epoch}`,
      );
      return { errorCode: ErrorCode.STALE_BROKER_EPOCH, remainingPartitions: [] };
    }
    this.log.info(`Shutting down broker ${brokerId}`);
    ctx.shuttingDownBrokerIds.add(brokerId);
    const psm = this.psm;
    const onBroker = ctx.partitionsOnBroker(brokerId).filter((tp) => !ctx.topicsToBeDeleted.has(tp.topic));
    const multiReplica = onBroker.filter((tp) => ctx.replicasFor(tp.topic, tp.partition).length > 1);
    const led = multiReplica.filter(
      (tp) => ctx.leadership.get(tpKey(tp.topic, tp.partition))?.leaderAndIsr.leader === brokerId,
    );
    const followed = multiReplica.filter((tp) => !led.includes(tp));
    await psm.toOnline(led, "controlledShutdown");
    // Followers leave the ISR and stop fetching.
    await psm.removeReplicaFromIsr(brokerId, followed);
    for (const tp of followed) this.batch.addStopReplicaRequestForBrokers([brokerId], tp, false);
    this.sendBatch();
    const remaining = ctx
      .partitionsLedBy(brokerId)
      .filter((tp) => ctx.replicasFor(tp.topic, tp.partition).length > 1);
    this.log.info(`Broker ${brokerId} leaves ${remaining.length} partitions led after controlled shutdown`);
    return { errorCode: ErrorCode.NONE, remainingPartitions: remaining };
  }
}
