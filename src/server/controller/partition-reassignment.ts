// Partition reassignment in the controller (Kafka's onPartitionReassignment and its helpers in the
// ZooKeeper-mode KafkaController, KIP-455). A partition being reassigned has RS = TRS + ORS (target
// replicas first, then the original ones not in the target), AR = TRS − ORS (adding) and RR = ORS − TRS
// (removing); RS, AR and RR are written to the topic znode (`partitions`, `adding_replicas`,
// `removing_replicas`) before the controller's memory, so a new controller resumes from the znode.
//   Phase A (TRS not all in the ISR): leader epoch + 1, LeaderAndIsr with the new RS/AR/RR to every
//     replica (the adding ones as new replicas: they create their logs and start fetching).
//   Phase B (TRS all in the ISR, noticed when the leader's AlterPartition grows the ISR): RS = TRS; the
//     leader moves to a target replica if it is not one (or is dead), else the leader epoch goes up;
//     the removed replicas leave the ISR and get StopReplica with deletion; the topic znode gets RS = TRS
//     with no adding/removing; the partition leaves /admin/reassign_partitions; UpdateMetadata to all.
// Reassignments come from AlterPartitionReassignments (a null target cancels: back to ORS) and from the
// /admin/reassign_partitions znode, as ZooKeeper-mode Kafka accepts both.

import type { Logger } from "../../common/logger.js";
import { ErrorCode } from "../../protocol/errors.js";
import type { KafkaZkClient } from "../metadata/kafka-zk-client.js";
import type { ZkReassignment } from "../metadata/zk-data.js";
import { type ControllerContext, type TopicPartitionKey, tpKey } from "./controller-context.js";
import type { ControllerBrokerRequestBatch } from "./controller-request-batch.js";
import type { PartitionStateMachine } from "./partition-state-machine.js";

/** A partition's full replica assignment (Kafka's ReplicaAssignment): RS with AR and RR. */
export class ReplicaAssignment {
  constructor(
    readonly replicas: readonly number[],
    readonly adding: readonly number[] = [],
    readonly removing: readonly number[] = [],
  ) {}

  /** ORS: the replicas before the reassignment. */
  get origin(): number[] {
    return this.replicas.filter((r) => !this.adding.includes(r));
  }

  /** TRS: the replicas after it. */
  get target(): number[] {
    return this.replicas.filter((r) => !this.removing.includes(r));
  }

  get isBeingReassigned(): boolean {
    return this.adding.length > 0 || this.removing.length > 0;
  }

  /** The assignment while moving from the original replicas to `target` (target first, in its order). */
  reassignTo(target: readonly number[]): ReplicaAssignment {
    const origin = this.origin;
    const full = [...new Set([...target, ...origin])];
    return new ReplicaAssignment(
      full,
      full.filter((r) => !origin.includes(r)),
      full.filter((r) => !target.includes(r)),
    );
  }

  equals(o: ReplicaAssignment): boolean {
    const same = (a: readonly number[], b: readonly number[]): boolean =>
      a.length === b.length && a.every((x, i) => x === b[i]);
    return same(this.replicas, o.replicas) && same(this.adding, o.adding) && same(this.removing, o.removing);
  }

  toString(): string {
    return `ReplicaAssignment(replicas=${this.replicas.join(",")}, addingReplicas=${this.adding.join(",")}, removingReplicas=${this.removing.join(",")})`;
  }
}

export interface ReassignmentResult extends TopicPartitionKey {
  readonly errorCode: number;
  readonly errorMessage: string | null;
}

/** A reassignment asked for: the target replicas, or null to cancel the one in progress. */
export interface ReassignmentRequest extends TopicPartitionKey {
  readonly replicas: readonly number[] | null;
}

export class PartitionReassignments {
  constructor(
    private readonly ctx: ControllerContext,
    private readonly zk: KafkaZkClient,
    private readonly psm: PartitionStateMachine,
    private readonly batch: ControllerBrokerRequestBatch,
    private readonly log: Logger,
  ) {}

  /** The partition's full assignment as the controller knows it. */
  assignmentOf(tp: TopicPartitionKey): ReplicaAssignment {
    const r = this.ctx.reassigning.get(tpKey(tp.topic, tp.partition));
    return new ReplicaAssignment(this.ctx.replicasFor(tp.topic, tp.partition), r?.adding, r?.removing);
  }

  isReassigning(tp: TopicPartitionKey): boolean {
    return this.ctx.reassigning.has(tpKey(tp.topic, tp.partition));
  }

  /** Kafka's processApiPartitionReassignment: validates, then starts (or cancels) each reassignment. */
  async alter(requests: readonly ReassignmentRequest[]): Promise<ReassignmentResult[]> {
    const results: ReassignmentResult[] = [];
    const start: Array<{ tp: TopicPartitionKey; assignment: ReplicaAssignment }> = [];
    for (const r of requests) {
      const tp = { topic: r.topic, partition: r.partition };
      const invalid = r.replicas === null ? undefined : this.validateReplicas(tp, r.replicas);
      if (invalid !== undefined) {
        results.push({ ...tp, errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT, errorMessage: invalid });
        continue;
      }
      const built = this.buildReassignment(tp, r.replicas);
      if (built === undefined)
        results.push({ ...tp, errorCode: ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, errorMessage: null });
      else start.push({ tp, assignment: built });
    }
    // The latest reassignment wins: these partitions leave /admin/reassign_partitions.
    const keys = new Set(start.map((s) => tpKey(s.tp.topic, s.tp.partition)));
    await this.removeFromZkReassignment((z) => keys.has(tpKey(z.topic, z.partition)));
    results.push(...(await this.trigger(start)));
    return results;
  }

  /**
   * Kafka's processZkPartitionReassignment: the reassignments written to /admin/reassign_partitions; those
   * that cannot start leave the znode. Returns the partitions started.
   */
  async processZkReassignment(): Promise<Set<string>> {
    const wanted = await this.zk.getPartitionReassignment();
    if (wanted.length === 0) return new Set();
    const start: Array<{ tp: TopicPartitionKey; assignment: ReplicaAssignment }> = [];
    const failed = new Set<string>();
    for (const z of wanted) {
      const tp = { topic: z.topic, partition: z.partition };
      const built = this.buildReassignment(tp, z.replicas);
      if (built === undefined || this.validateReplicas(tp, z.replicas) !== undefined)
        failed.add(tpKey(z.topic, z.partition));
      else start.push({ tp, assignment: built });
    }
    const results = await this.trigger(start);
    for (const r of results) if (r.errorCode !== ErrorCode.NONE) failed.add(tpKey(r.topic, r.partition));
    if (failed.size > 0) {
      this.log.warn(`Failed reassignment through zk of partitions ${[...failed].join(",")}`);
      await this.removeFromZkReassignment((z) => failed.has(tpKey(z.topic, z.partition)));
    }
    return new Set(
      results.filter((r) => r.errorCode === ErrorCode.NONE).map((r) => tpKey(r.topic, r.partition)),
    );
  }

  /** After a failover or a broker's return: every reassignment in progress goes on (Kafka's maybeResumeReassignments). */
  async resume(filter: (tp: TopicPartitionKey) => boolean = () => true): Promise<void> {
    for (const k of [...this.ctx.reassigning.keys()]) {
      const tp = this.keyToPartition(k);
      if (tp === undefined || !filter(tp)) continue;
      await this.trigger([{ tp, assignment: this.assignmentOf(tp) }]);
    }
  }

  /** Kafka's maybeCompleteReassignment: called when a reassigning partition's ISR grew. */
  async maybeComplete(tp: TopicPartitionKey): Promise<void> {
    if (!this.isReassigning(tp)) return;
    const a = this.assignmentOf(tp);
    if (!this.isComplete(tp, a)) return;
    this.log.info(
      `Target replicas ${a.target.join(",")} have all caught up with the leader for reassigning partition ${tpKey(tp.topic, tp.partition)}`,
    );
    await this.onPartitionReassignment(tp, a);
  }

  /** Kafka's processListPartitionReassignments: the given partitions (or all) that are being reassigned. */
  list(
    partitions?: readonly TopicPartitionKey[],
  ): Array<TopicPartitionKey & { assignment: ReplicaAssignment }> {
    const asked = partitions ?? [...this.ctx.reassigning.keys()].flatMap((k) => this.keyToPartition(k) ?? []);
    return asked
      .filter((tp) => this.isReassigning(tp))
      .map((tp) => ({ ...tp, assignment: this.assignmentOf(tp) }));
  }

  // ---- Kafka's maybeTriggerPartitionReassignment / onPartitionReassignment ----

  private async trigger(
    start: ReadonlyArray<{ tp: TopicPartitionKey; assignment: ReplicaAssignment }>,
  ): Promise<ReassignmentResult[]> {
    const results: ReassignmentResult[] = [];
    for (const { tp, assignment } of start) {
      if (
        this.ctx.topicsToBeDeleted.has(tp.topic) ||
        this.ctx.replicasFor(tp.topic, tp.partition).length === 0
      ) {
        results.push({
          ...tp,
          errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
          errorMessage: "The partition does not exist.",
        });
        continue;
      }
      await this.onPartitionReassignment(tp, assignment);
      results.push({ ...tp, errorCode: ErrorCode.NONE, errorMessage: null });
    }
    return results;
  }

  private async onPartitionReassignment(
    tp: TopicPartitionKey,
    reassignment: ReplicaAssignment,
  ): Promise<void> {
    await this.updateCurrentReassignment(tp, reassignment);
    if (!this.isComplete(tp, reassignment)) {
      // A1: leader epoch + 1, LeaderAndIsr with RS/AR/RR to the original replicas and (as new) the adding ones.
      await this.updateLeaderEpochAndSendRequest(tp, reassignment);
      return;
    }
    const k = tpKey(tp.topic, tp.partition);
    // B2: RS = TRS, AR = RR = [] in memory.
    const completed = new ReplicaAssignment(reassignment.target);
    this.setInMemory(tp, completed);
    // B3: a target replica leads (or the same leader with a new epoch).
    const leader = this.ctx.leadership.get(k)?.leaderAndIsr.leader ?? -1;
    if (!completed.replicas.includes(leader) || !this.ctx.isLive(leader)) {
      this.log.info(
        `Leader ${leader} for partition ${k} being reassigned is not an alive member of the new replicas ${completed.replicas.join(",")}. Re-electing leader`,
      );
      await this.psm.toOnline([tp], "reassign");
    } else {
      await this.updateLeaderEpochAndSendRequest(tp, completed);
    }
    // B4/B5: the removed replicas leave the ISR and delete their logs.
    await this.stopRemovedReplicas(tp, reassignment.removing);
    // B6: the znode gets RS = TRS with nothing adding or removing; B7: out of /admin/reassign_partitions.
    await this.writeTopicAssignment(tp.topic);
    await this.removeFromZkReassignment(
      (z) =>
        z.topic === tp.topic &&
        z.partition === tp.partition &&
        z.replicas.length === completed.replicas.length &&
        z.replicas.every((r, i) => r === completed.replicas[i]),
    );
    // B8: every broker learns the partition's new replicas.
    this.batch.addUpdateMetadataRequestForBrokers(this.ctx.liveBrokerIds(), [tp]);
    this.log.info(`Reassignment of partition ${k} to ${completed.replicas.join(",")} completed`);
  }

  /** U1–U3: the new assignment to the znode, then memory; replicas no longer wanted are stopped. */
  private async updateCurrentReassignment(
    tp: TopicPartitionKey,
    reassignment: ReplicaAssignment,
  ): Promise<void> {
    const current = this.assignmentOf(tp);
    if (current.equals(reassignment)) return;
    this.log.info(
      `Updating assignment of partition ${tpKey(tp.topic, tp.partition)} from ${current} to ${reassignment}`,
    );
    this.setInMemory(tp, reassignment);
    await this.writeTopicAssignment(tp.topic);
    const unneeded = current.replicas.filter((r) => !reassignment.replicas.includes(r));
    if (unneeded.length > 0) await this.stopRemovedReplicas(tp, unneeded);
  }

  private isComplete(tp: TopicPartitionKey, a: ReplicaAssignment): boolean {
    if (!a.isBeingReassigned) return true;
    const isr = this.ctx.leadership.get(tpKey(tp.topic, tp.partition))?.leaderAndIsr.isr ?? [];
    return a.target.every((r) => isr.includes(r));
  }

  private async updateLeaderEpochAndSendRequest(tp: TopicPartitionKey, a: ReplicaAssignment): Promise<void> {
    const k = tpKey(tp.topic, tp.partition);
    for (let attempt = 0; attempt < 3; attempt++) {
      const cur = this.ctx.leadership.get(k);
      if (cur === undefined) return;
      const l = cur.leaderAndIsr;
      const retry = await this.psm.write(
        [
          {
            ...tp,
            leaderAndIsr: { ...l, leaderEpoch: l.leaderEpoch + 1, controllerEpoch: this.ctx.epoch },
            zkVersion: cur.zkVersion,
          },
        ],
        () => a.origin,
      );
      if (retry.length === 0) {
        // The adding replicas are new: they create their logs in a good log dir and start fetching.
        this.batch.addLeaderAndIsrRequestForBrokers(a.adding, tp, true);
        return;
      }
      await this.psm.reload(retry);
    }
    this.log.error(`Failed to send LeaderAndIsr with the new replica assignment ${a} for partition ${k}`);
  }

  private async stopRemovedReplicas(tp: TopicPartitionKey, removed: readonly number[]): Promise<void> {
    for (const r of removed) {
      await this.psm.removeReplicaFromIsr(r, [tp]);
      this.batch.addStopReplicaRequestForBrokers([r], tp, true);
    }
  }

  private setInMemory(tp: TopicPartitionKey, a: ReplicaAssignment): void {
    const k = tpKey(tp.topic, tp.partition);
    this.ctx.assignments.get(tp.topic)?.set(tp.partition, [...a.replicas]);
    if (a.isBeingReassigned)
      this.ctx.reassigning.set(k, { adding: [...a.adding], removing: [...a.removing] });
    else this.ctx.reassigning.delete(k);
  }

  /** The topic's znode from the controller's memory (Kafka's updateReplicaAssignmentForPartition). */
  private async writeTopicAssignment(topic: string): Promise<void> {
    const parts = this.ctx.assignments.get(topic);
    if (parts === undefined) return;
    const adding = new Map<number, number[]>();
    const removing = new Map<number, number[]>();
    for (const p of parts.keys()) {
      const r = this.ctx.reassigning.get(tpKey(topic, p));
      if (r === undefined) continue;
      adding.set(p, [...r.adding]);
      removing.set(p, [...r.removing]);
    }
    await this.zk.setTopicAssignment(
      topic,
      {
        topicId: this.ctx.topicIds.get(topic) ?? "AAAAAAAAAAAAAAAAAAAAAA",
        partitions: new Map([...parts].map(([p, r]) => [p, [...r]])),
        addingReplicas: adding,
        removingReplicas: removing,
      },
      this.ctx.epochZkVersion,
    );
  }

  /** Kafka's validateReplicas: a non-empty list of distinct ids ≥ 0 whose new members are alive. */
  private validateReplicas(tp: TopicPartitionKey, replicas: readonly number[]): string | undefined {
    if (replicas.length === 0) return "Empty replica list specified in partition reassignment.";
    if (new Set(replicas).size !== replicas.length)
      return `Duplicate replica ids in partition reassignment replica list: ${replicas.join(",")}`;
    if (replicas.some((r) => r < 0)) return `Invalid broker id in replica list: ${replicas.join(",")}`;
    if (this.ctx.replicasFor(tp.topic, tp.partition).length === 0) return undefined; // UNKNOWN_TOPIC_OR_PARTITION later
    const adding = this.assignmentOf(tp).reassignTo(replicas).adding;
    const dead = adding.filter((r) => !this.ctx.isLive(r));
    if (dead.length > 0)
      return `Replica assignment has brokers that are not alive. Replica list: ${adding.join(",")}, live broker list: ${this.ctx.liveBrokerIds().join(",")}`;
    return undefined;
  }

  /** Kafka's maybeBuildReassignment: a target (or, to cancel, the original replicas of one in progress). */
  private buildReassignment(
    tp: TopicPartitionKey,
    target: readonly number[] | null,
  ): ReplicaAssignment | undefined {
    const current = this.assignmentOf(tp);
    if (current.isBeingReassigned) return current.reassignTo(target ?? current.origin);
    return target === null ? undefined : current.reassignTo(target);
  }

  private async removeFromZkReassignment(remove: (z: ZkReassignment) => boolean): Promise<void> {
    const pending = await this.zk.getPartitionReassignment();
    if (pending.length === 0) return;
    const keep = pending.filter((z) => !remove(z));
    if (keep.length === pending.length) return;
    if (keep.length === 0)
      this.log.info("No more partitions need to be reassigned. Deleting zk path /admin/reassign_partitions");
    await this.zk.setOrDeletePartitionReassignment(keep, this.ctx.epochZkVersion);
  }

  private keyToPartition(k: string): TopicPartitionKey | undefined {
    const i = k.lastIndexOf("-");
    const tp = { topic: k.slice(0, i), partition: Number(k.slice(i + 1)) };
    return this.ctx.assignments.has(tp.topic) ? tp : undefined;
  }
}
