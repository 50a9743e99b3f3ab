// ReplicaStateMachine: the controller's view of each replica (Kafka's ZkReplicaStateMachine), reduced to
// the two transitions the controller drives today. OnlineReplica: a broker that starts (or a new
// controller) tells each live replica its partition's leadership with LeaderAndIsr. OfflineReplica: a
// replica whose broker died or is shutting down leaves the partition's ISR (leader epoch + 1; a leader
// removed leaves the partition without one, and the last ISR member is kept so that a clean election can
// still find it), the partition's other replicas get LeaderAndIsr, and — for a broker that is still up —
// the replica gets StopReplica (without deleting its log). Reassignment's states (NewReplica,
// ReplicaDeletion*) come with issue 18.

import type { LeaderAndIsr } from "../metadata/zk-data.js";
import { type ControllerContext, type TopicPartitionKey, tpKey } from "./controller-context.js";
import type { ControllerBrokerRequestBatch } from "./controller-request-batch.js";
import type { PartitionStateMachine } from "./partition-state-machine.js";

export class ReplicaStateMachine {
  constructor(
    private readonly ctx: ControllerContext,
    private readonly psm: PartitionStateMachine,
    private readonly batch: ControllerBrokerRequestBatch,
  ) {}

  /** OnlineReplica for every replica on these brokers: each learns its partitions' leadership. */
  onlineReplicas(brokerIds: readonly number[]): void {
    for (const id of brokerIds) {
      for (const tp of this.ctx.partitionsOnBroker(id)) {
        if (this.ctx.topicsToBeDeleted.has(tp.topic)) continue;
        if (this.ctx.leadership.has(tpKey(tp.topic, tp.partition)))
          this.batch.addLeaderAndIsrRequestForBrokers([id], tp, false);
      }
    }
  }

  /**
   * OfflineReplica for `brokerId`'s replicas of these partitions: out of their ISRs; `stopReplica` (a broker
   * that is shutting down, not dead) also sends it StopReplica without deletion.
   */
  async offlineReplicas(
    brokerId: number,
    partitions: readonly TopicPartitionKey[],
    stopReplica: boolean,
  ): Promise<void> {
    await this.removeReplicaFromIsr(brokerId, partitions);
    if (stopReplica)
      for (const tp of partitions) this.batch.addStopReplicaRequestForBrokers([brokerId], tp, false);
  }

  /** Kafka's removeReplicasFromIsr, retried when a partition's znode moved on underneath. */
  private async removeReplicaFromIsr(
    brokerId: number,
    partitions: readonly TopicPartitionKey[],
  ): Promise<void> {
    let todo = [...partitions];
    for (let attempt = 0; attempt < 3 && todo.length > 0; attempt++) {
      const updates: Array<TopicPartitionKey & { leaderAndIsr: LeaderAndIsr; zkVersion: number }> = [];
      for (const tp of todo) {
        const cur = this.ctx.leadership.get(tpKey(tp.topic, tp.partition));
        if (cur === undefined) continue;
        const l = cur.leaderAndIsr;
        if (!l.isr.includes(brokerId) && l.leader !== brokerId) continue;
        const leader = l.leader === brokerId ? -1 : l.leader;
        const isr = l.isr.length === 1 && l.isr[0] === brokerId ? l.isr : l.isr.filter((r) => r !== brokerId);
        updates.push({
          ...tp,
          leaderAndIsr: { leader, isr, leaderEpoch: l.leaderEpoch + 1, controllerEpoch: this.ctx.epoch },
          zkVersion: cur.zkVersion,
        });
      }
      todo = await this.psm.write(updates, (tp) =>
        this.ctx.replicasFor(tp.topic, tp.partition).filter((r) => r !== brokerId),
      );
      if (todo.length > 0) await this.psm.reload(todo);
    }
  }
}
