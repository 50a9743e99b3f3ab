// PartitionStateMachine: the controller's partition states (Kafka's ZkPartitionStateMachine):
// NonExistent → New → Online ⇄ Offline → NonExistent. New → Online writes the first state znode (leader =
// first live replica in assignment order, ISR = the live replicas, leader epoch 0); → Online from Online
// or Offline runs an election (offline, controlled-shutdown or preferred) and writes the new leadership
// with leader epoch + 1 by compare-and-set, fenced by the controller epoch. Every change made is added to
// the request batch (LeaderAndIsr to the partition's live replicas, UpdateMetadata to every broker).
// Each round of elections that wrote a new leader is timed (LeaderElectionRateAndTimeMs), and each
// partition given a leader from outside its ISR counted (UncleanLeaderElectionsPerSec).
// Also the one change Kafka's replica state machine makes to partition state, its OfflineReplica
// transition (removeReplicasFromIsr): a replica whose broker died, is shutting down, lost its log dir or
// leaves a reassignment is taken out of the ISR. The controller keeps no per-replica state: the replica
// states' other work is done by the request batch (OnlineReplica: LeaderAndIsr to a broker's replicas),
// the TopicDeletionManager (ReplicaDeletion*) and PartitionReassignments (NewReplica).

import { EventLoopSlices } from "../../common/event-loop-slices.js";
import type { Logger } from "../../common/logger.js";
import type { Time } from "../../common/time.js";
import type { KafkaZkClient, LeaderIsrAndZkVersion } from "../metadata/kafka-zk-client.js";
import type { LeaderAndIsr } from "../metadata/zk-data.js";
import type { ControllerStatsRecorder } from "../metrics/replication-metrics.js";
import { type ControllerContext, type TopicPartitionKey, tpKey } from "./controller-context.js";
import type { ControllerBrokerRequestBatch } from "./controller-request-batch.js";
import {
  controlledShutdownPartitionLeaderElection,
  offlinePartitionLeaderElection,
  preferredReplicaPartitionLeaderElection,
  reassignPartitionLeaderElection,
} from "./partition-leader-election.js";

/**
 * How a leader is chosen (Kafka's PartitionLeaderElectionStrategy): "offline" is
 * OfflinePartitionLeaderElectionStrategy with the topic's unclean.leader.election.enable, "unclean" the same
 * with unclean election allowed (an operator's ElectLeaders UNCLEAN), "reassign" moves leadership to a
 * replica of a completed reassignment's target replicas.
 */
export type ElectionStrategy = "offline" | "unclean" | "controlledShutdown" | "preferred" | "reassign";

export interface PartitionStateMachineOptions {
  /** unclean.leader.election.enable of a topic (its override, else the broker's). */
  readonly uncleanLeaderElectionEnable: (topic: string) => Promise<boolean>;
  /** ControllerStats: told of leader elections (with `time`, which times them). */
  readonly stats?: ControllerStatsRecorder;
  readonly time?: Time;
}

export class PartitionStateMachine {
  constructor(
    private readonly ctx: ControllerContext,
    private readonly zk: KafkaZkClient,
    private readonly batch: ControllerBrokerRequestBatch,
    private readonly options: PartitionStateMachineOptions,
    private readonly log: Logger,
  ) {}

  /** Kafka's triggerOnlinePartitionStateChange: New and Offline partitions (not being deleted) → Online. */
  async triggerOnlinePartitionStateChange(): Promise<void> {
    const todo = this.ctx
      .allPartitions()
      .filter((tp) => !this.ctx.topicsToBeDeleted.has(tp.topic))
      .filter((tp) => {
        const s = this.ctx.stateOf(tp);
        return s === "NewPartition" || s === "OfflinePartition";
      });
    await this.toOnline(todo, "offline");
  }

  setNew(partitions: readonly TopicPartitionKey[]): void {
    for (const tp of partitions) this.ctx.partitionStates.set(tpKey(tp.topic, tp.partition), "NewPartition");
  }

  setOffline(partitions: readonly TopicPartitionKey[]): void {
    for (const tp of partitions) {
      const k = tpKey(tp.topic, tp.partition);
      if (this.ctx.partitionStates.has(k)) this.ctx.partitionStates.set(k, "OfflinePartition");
    }
  }

  setNonExistent(partitions: readonly TopicPartitionKey[]): void {
    for (const tp of partitions) this.ctx.partitionStates.delete(tpKey(tp.topic, tp.partition));
  }

  /**
   * → OnlinePartition. Returns the partitions that could not be brought online (no eligible leader, or a
   * write that lost its race twice).
   */
  async toOnline(
    partitions: readonly TopicPartitionKey[],
    strategy: ElectionStrategy,
  ): Promise<TopicPartitionKey[]> {
    const failed: TopicPartitionKey[] = [];
    const fresh = partitions.filter((tp) => this.ctx.stateOf(tp) === "NewPartition");
    const existing = partitions.filter((tp) => this.ctx.stateOf(tp) !== "NewPartition");
    if (fresh.length > 0) failed.push(...(await this.initializeLeaderAndIsr(fresh)));
    if (existing.length > 0) failed.push(...(await this.electLeaders(existing, strategy)));
    return failed;
  }

  private async initializeLeaderAndIsr(
    partitions: readonly TopicPartitionKey[],
  ): Promise<TopicPartitionKey[]> {
    const failed: TopicPartitionKey[] = [];
    const creates: Array<{ topic: string; partition: number; leaderAndIsr: LeaderAndIsr }> = [];
    for (const tp of partitions) {
      const replicas = this.ctx.replicasFor(tp.topic, tp.partition);
      const live = replicas.filter((r) => this.ctx.isLive(r));
      if (live.length === 0) {
        this.log.error(
          `Controller failed to initialize partition ${tpKey(tp.topic, tp.partition)}: none of its assigned replicas (${replicas.join(",")}) are alive`,
        );
        failed.push(tp);
        continue;
      }
      creates.push({
        ...tp,
        leaderAndIsr: { leader: live[0], leaderEpoch: 0, isr: live, controllerEpoch: this.ctx.epoch },
      });
    }
    const results = await this.zk.createTopicPartitionStates(creates, this.ctx.epochZkVersion);
    const existing: TopicPartitionKey[] = [];
    const slices = new EventLoopSlices();
    for (const c of creates) {
      await slices.next();
      const k = tpKey(c.topic, c.partition);
      const r = results.get(k);
      if (r === 0) {
        this.ctx.leadership.set(k, { leaderAndIsr: c.leaderAndIsr, zkVersion: 0 });
        this.ctx.partitionStates.set(k, "OnlinePartition");
        this.batch.addLeaderAndIsrRequestForBrokers(c.leaderAndIsr.isr, c, true);
      } else if (r === "NodeExists") {
        existing.push(c);
      } else {
        this.log.error(`Controller failed to initialize partition ${k}: ${r}`);
        failed.push(c);
      }
    }
    if (existing.length > 0) {
      // Written by an earlier controller: take the state as it is.
      const states = await this.zk.getPartitionStates(existing);
      for (const tp of existing) {
        const k = tpKey(tp.topic, tp.partition);
        const s = states.get(k);
        if (!s) {
          failed.push(tp);
          continue;
        }
        this.ctx.leadership.set(k, s);
        this.ctx.partitionStates.set(
          k,
          this.ctx.isLive(s.leaderAndIsr.leader) ? "OnlinePartition" : "OfflinePartition",
        );
        this.batch.addLeaderAndIsrRequestForBrokers(this.ctx.replicasFor(tp.topic, tp.partition), tp, false);
      }
    }
    return failed;
  }

  private async electLeaders(
    partitions: readonly TopicPartitionKey[],
    strategy: ElectionStrategy,
  ): Promise<TopicPartitionKey[]> {
    const failed: TopicPartitionKey[] = [];
    const startNs = this.options.time?.nanoseconds();
    let elected = 0;
    let todo = [...partitions];
    const uncleanConfigs = new Map<string, Promise<boolean>>();
    const slices = new EventLoopSlices();
    for (let attempt = 0; attempt < 3 && todo.length > 0; attempt++) {
      const unclean = new Set<string>();
      const updates: Array<TopicPartitionKey & { leaderAndIsr: LeaderAndIsr; zkVersion: number }> = [];
      for (const tp of todo) {
        await slices.next();
        const k = tpKey(tp.topic, tp.partition);
        const cur = this.ctx.leadership.get(k);
        if (cur === undefined) {
          failed.push(tp);
          continue;
        }
        const next = await this.elect(tp, cur, strategy, unclean, uncleanConfigs);
        if (next === undefined) {
          if (strategy === "offline" || strategy === "unclean") {
            this.ctx.partitionStates.set(k, "OfflinePartition");
            this.log.error(
              `Controller failed to elect a leader for partition ${k}: no replica of ${this.ctx
                .replicasFor(tp.topic, tp.partition)
                .join(
                  ",",
                )} is alive and in the ISR [${cur.leaderAndIsr.isr.join(",")}]; the partition is offline`,
            );
          }
          failed.push(tp);
          continue;
        }
        updates.push({ ...tp, leaderAndIsr: next, zkVersion: cur.zkVersion });
      }
      const retry = await this.write(updates);
      for (const u of updates) {
        const k = tpKey(u.topic, u.partition);
        if (this.ctx.leadership.get(k)?.leaderAndIsr !== u.leaderAndIsr) continue; // not written
        elected++;
        if (unclean.has(k)) this.options.stats?.uncleanLeaderElection();
      }
      // Changed underneath (Kafka re-reads and retries): take what the znodes hold now.
      if (retry.length > 0) await this.reload(retry);
      todo = retry;
    }
    failed.push(...todo);
    const time = this.options.time;
    if (elected > 0 && startNs !== undefined && time !== undefined)
      this.options.stats?.leaderElection(Number(time.nanoseconds() - startNs) / 1e6);
    return failed;
  }

  /** The new leadership of `tp`, if any; an unclean choice adds the partition's key to `unclean`. */
  private async elect(
    tp: TopicPartitionKey,
    cur: LeaderIsrAndZkVersion,
    strategy: ElectionStrategy,
    unclean: Set<string>,
    uncleanConfigs: Map<string, Promise<boolean>>,
  ): Promise<LeaderAndIsr | undefined> {
    const replicas = this.ctx.replicasFor(tp.topic, tp.partition);
    const { isr } = cur.leaderAndIsr;
    // A replica on an offline (or full) log dir is not eligible, as Kafka's isReplicaOnline.
    const live = (id: number): boolean => this.ctx.isReplicaOnline(id, tp.topic, tp.partition);
    const base = { leaderEpoch: cur.leaderAndIsr.leaderEpoch + 1, controllerEpoch: this.ctx.epoch };
    switch (strategy) {
      case "offline":
      case "unclean": {
        // The topic's unclean.leader.election.enable is read only when no live ISR member can lead (Kafka's
        // collectUncleanLeaderElectionState), once per topic per election pass.
        let r = offlinePartitionLeaderElection(replicas, isr, live, false);
        if (r === undefined) {
          let enabled = uncleanConfigs.get(tp.topic);
          if (enabled === undefined) {
            enabled =
              strategy === "unclean"
                ? Promise.resolve(true)
                : this.options.uncleanLeaderElectionEnable(tp.topic);
            uncleanConfigs.set(tp.topic, enabled);
          }
          r = offlinePartitionLeaderElection(replicas, isr, live, await enabled);
        }
        if (r === undefined) return undefined;
        if (r.unclean) {
          unclean.add(tpKey(tp.topic, tp.partition));
          this.log.warn(
            `Unclean leader election. Partition ${tpKey(tp.topic, tp.partition)} has been elected leader ${r.leader} from outside the ISR; data loss may occur`,
          );
          return { ...base, leader: r.leader, isr: [r.leader] };
        }
        return { ...base, leader: r.leader, isr: isr.filter(live) };
      }
      case "controlledShutdown": {
        const shutting = this.ctx.shuttingDownBrokerIds;
        const leader = controlledShutdownPartitionLeaderElection(replicas, isr, live, shutting);
        if (leader === undefined) return undefined;
        return { ...base, leader, isr: isr.filter((r) => live(r) && !shutting.has(r)) };
      }
      case "preferred": {
        const leader = preferredReplicaPartitionLeaderElection(replicas, isr, live);
        if (leader === undefined || leader === cur.leaderAndIsr.leader) return undefined;
        return { ...base, leader, isr };
      }
      case "reassign": {
        const leader = reassignPartitionLeaderElection(replicas, isr, live);
        if (leader === undefined) return undefined;
        return { ...base, leader, isr };
      }
    }
  }

  /** Re-reads these partitions' state znodes into the context (after a compare-and-set lost). */
  async reload(partitions: readonly TopicPartitionKey[]): Promise<void> {
    const fresh = await this.zk.getPartitionStates(partitions);
    for (const [k, s] of fresh) this.ctx.leadership.set(k, s);
  }

  /**
   * `brokerId`'s replicas of these partitions leave their ISRs (Kafka's removeReplicasFromIsr): leader
   * epoch + 1; a leader removed leaves the partition without one (-1), and the last ISR member is kept so
   * that a clean election can still find it. The partition's other replicas get LeaderAndIsr. Retried when
   * a partition's znode moved on underneath.
   */
  async removeReplicaFromIsr(brokerId: number, partitions: readonly TopicPartitionKey[]): Promise<void> {
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
      todo = await this.write(updates, (tp) =>
        this.ctx.replicasFor(tp.topic, tp.partition).filter((r) => r !== brokerId),
      );
      if (todo.length > 0) await this.reload(todo);
    }
  }

  /**
   * Writes new leaderships (compare-and-set, fenced by the controller epoch); updates the context and adds
   * LeaderAndIsr for `recipients` (default: the partition's replicas) to the batch for those written;
   * returns the partitions whose znode moved on (to re-read and retry).
   */
  async write(
    updates: ReadonlyArray<TopicPartitionKey & { leaderAndIsr: LeaderAndIsr; zkVersion: number }>,
    recipients?: (tp: TopicPartitionKey) => number[],
  ): Promise<TopicPartitionKey[]> {
    if (updates.length === 0) return [];
    const { written, failed } = await this.zk.updateLeaderAndIsr(updates, this.ctx.epochZkVersion);
    const retry: TopicPartitionKey[] = [];
    const slices = new EventLoopSlices();
    for (const u of updates) {
      await slices.next();
      const k = tpKey(u.topic, u.partition);
      const v = written.get(k);
      if (v === undefined) {
        const code = failed.get(k);
        if (code === "BadVersion") retry.push({ topic: u.topic, partition: u.partition });
        else this.log.error(`Controller failed to update the state of partition ${k}: ${code}`);
        continue;
      }
      this.ctx.leadership.set(k, { leaderAndIsr: u.leaderAndIsr, zkVersion: v });
      this.ctx.partitionStates.set(
        k,
        u.leaderAndIsr.leader >= 0 && this.ctx.isLive(u.leaderAndIsr.leader)
          ? "OnlinePartition"
          : "OfflinePartition",
      );
      const to = recipients ? recipients(u) : this.ctx.replicasFor(u.topic, u.partition);
      this.batch.addLeaderAndIsrRequestForBrokers(to, u, false);
      if (u.leaderAndIsr.leader >= 0)
        this.log.info(
          `Partition ${k}: leader ${u.leaderAndIsr.leader}, leader epoch ${u.leaderAndIsr.leaderEpoch}, ISR [${u.leaderAndIsr.isr.join(",")}]`,
        );
    }
    return retry;
  }
}
