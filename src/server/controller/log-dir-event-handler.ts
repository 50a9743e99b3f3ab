// LogDirEventHandler: the controller's side of log dir failures (Kafka's LogDirEventNotificationHandler,
// KafkaController.onBrokerLogDirFailure and the replica half of onLeaderAndIsrResponseReceived), and of
// Tributary's full log dirs. A broker whose log dir fails, fills up or has space again writes a
// /log_dir_event_notification/log_dir_event_<seq> znode; the controller reads and deletes them and sends
// each live broker named LeaderAndIsr for all its replicas. Every LeaderAndIsr response tells which of the
// broker's replicas are on an offline (or full) dir: KAFKA_STORAGE_ERROR. A replica newly offline becomes
// OfflineReplica: where it leads, a leader is elected among the partition's other online ISR replicas;
// where it follows, it leaves the ISR (the last ISR member is kept, as Kafka). A replica answering NONE
// after being offline is online again: it already had its leadership in that LeaderAndIsr (a follower
// fetches and rejoins the ISR), and partitions left without a leader are elected again. A replica answering
// STALE_CONTROLLER_EPOCH had that leadership already (a LeaderAndIsr at its current leader epoch changes
// nothing on the broker, as Kafka's) and its log dir is fine: online again too.
// Unlike Kafka, a leader on an offline dir with no other online ISR replica keeps the leadership (a single
// broker with a full disk keeps serving reads and answers KAFKA_STORAGE_ERROR to writes, where Kafka would
// leave the partition without a leader).

import type { Logger } from "../../common/logger.js";
import { ErrorCode } from "../../protocol/errors.js";
import type { LeaderAndIsrResponse } from "../../protocol/generated/messages/LeaderAndIsrResponse.js";
import type { KafkaZkClient } from "../metadata/kafka-zk-client.js";
import { type ControllerContext, type TopicPartitionKey, tpKey } from "./controller-context.js";
import type { ControllerBrokerRequestBatch } from "./controller-request-batch.js";
import type { PartitionStateMachine } from "./partition-state-machine.js";

export class LogDirEventHandler {
  constructor(
    private readonly ctx: ControllerContext,
    private readonly zk: KafkaZkClient,
    private readonly psm: PartitionStateMachine,
    private readonly batch: ControllerBrokerRequestBatch,
    private readonly log: Logger,
  ) {}

  /**
   * Reads the pending notifications (watching for more), deletes them, and asks each live broker they
   * name for the state of all its replicas (LeaderAndIsr; the caller sends the batch).
   */
  async processNotifications(watcher: () => void): Promise<void> {
    const { names, brokerIds } = await this.zk.getLogDirEventNotifications(watcher);
    if (names.length === 0) return;
    await this.zk.deleteLogDirEventNotifications(names);
    const ids = [...new Set(brokerIds)].filter((id) => this.ctx.isLive(id)).sort((a, b) => a - b);
    if (ids.length === 0) return;
    this.log.info(
      `Handling log dir events of brokers ${ids.join(",")}: sending LeaderAndIsr for their replicas`,
    );
    await this.batch.addLeaderAndIsrRequestForReplicasOn(ids);
  }

  /** A LeaderAndIsr response of `brokerId`: its replicas' log dir states, and the transitions that follow. */
  async onLeaderAndIsrResponse(brokerId: number, r: LeaderAndIsrResponse): Promise<void> {
    if (!this.ctx.isLive(brokerId) || r.errorCode !== ErrorCode.NONE) return;
    const offlineNow: TopicPartitionKey[] = [];
    const onlineNow: TopicPartitionKey[] = [];
    let offline = this.ctx.replicasOnOfflineDirs.get(brokerId);
    // v5+ answers by topic id (the partition's topic name is not on the wire); v0-4 by name.
    const names = new Map([...this.ctx.topicIds].map(([name, id]) => [id, name]));
    const errors = [
      ...r.partitionErrors,
      ...r.topics.flatMap((t) =>
        t.partitionErrors.map((p) => ({ ...p, topicName: names.get(t.topicId) ?? p.topicName })),
      ),
    ];
    for (const p of errors) {
      if (p.topicName === "") continue;
      const tp = { topic: p.topicName, partition: p.partitionIndex };
      const k = tpKey(tp.topic, tp.partition);
      if (p.errorCode === ErrorCode.KAFKA_STORAGE_ERROR) {
        if (offline === undefined) {
          offline = new Set();
          this.ctx.replicasOnOfflineDirs.set(brokerId, offline);
        }
        if (!offline.has(k)) {
          offline.add(k);
          offlineNow.push(tp);
        }
      } else if (
        (p.errorCode === ErrorCode.NONE || p.errorCode === ErrorCode.STALE_CONTROLLER_EPOCH) &&
        offline?.delete(k)
      ) {
        onlineNow.push(tp);
      }
    }
    if (offline !== undefined && offline.size === 0) this.ctx.replicasOnOfflineDirs.delete(brokerId);
    if (offlineNow.length > 0) await this.onReplicasBecomeOffline(brokerId, offlineNow);
    if (onlineNow.length > 0) {
      this.log.info(
        `Replicas of ${onlineNow.map((tp) => tpKey(tp.topic, tp.partition)).join(",")} on broker ${brokerId} are online again`,
      );
      // Partitions that were left without a leader may have one now.
      await this.psm.triggerOnlinePartitionStateChange();
    }
  }

  /** Kafka's onReplicasBecomeOffline for one broker's replicas on an offline (or full) log dir. */
  private async onReplicasBecomeOffline(brokerId: number, partitions: TopicPartitionKey[]): Promise<void> {
    const ctx = this.ctx;
    const live = partitions.filter((tp) => ctx.leadership.has(tpKey(tp.topic, tp.partition)));
    this.log.info(
      `Replicas of ${live.map((tp) => tpKey(tp.topic, tp.partition)).join(",")} on broker ${brokerId} are on an offline log dir (KAFKA_STORAGE_ERROR): OfflineReplica`,
    );
    const led = live.filter(
      (tp) => ctx.leadership.get(tpKey(tp.topic, tp.partition))?.leaderAndIsr.leader === brokerId,
    );
    // Leadership moves to another online ISR replica (the replica on the offline dir is not eligible).
    const kept = await this.psm.toOnline(led, "controlledShutdown");
    for (const tp of kept) {
      this.log.warn(
        `No other online in-sync replica of ${tpKey(tp.topic, tp.partition)}: broker ${brokerId} stays its leader with its log dir offline`,
      );
    }
    const keptKeys = new Set(kept.map((tp) => tpKey(tp.topic, tp.partition)));
    // Followers (and former leaders) on the offline dir leave the ISR.
    const followed = live.filter((tp) => !keptKeys.has(tpKey(tp.topic, tp.partition)));
    await this.psm.removeReplicaFromIsr(brokerId, followed);
  }
}
