// Replica leader elections asked for by an operator (ElectLeaders, KIP-460) or by the controller's own
// leader-imbalance check (auto.leader.rebalance.enable): Kafka's processReplicaLeaderElection and
// checkAndTriggerAutoLeaderRebalance. PREFERRED moves leadership back to the first replica of the
// assignment when it is alive and in the ISR; UNCLEAN gives a leaderless partition a leader, from outside
// the ISR if need be (only when an operator asks). Each partition gets Kafka's answer: none (elected),
// ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE / ELIGIBLE_LEADERS_NOT_AVAILABLE,
// INVALID_TOPIC_EXCEPTION (being deleted) or UNKNOWN_TOPIC_OR_PARTITION.

import { ErrorCode } from "../../protocol/errors.js";
import { type ControllerContext, type TopicPartitionKey, tpKey } from "./controller-context.js";
import { preferredReplicaPartitionLeaderElection } from "./partition-leader-election.js";
import type { PartitionStateMachine } from "./partition-state-machine.js";

/** ElectLeaders' election_type: 0 = PREFERRED, 1 = UNCLEAN (Kafka's ElectionType). */
export const ElectionType = { PREFERRED: 0, UNCLEAN: 1 } as const;
export type ElectionType = (typeof ElectionType)[keyof typeof ElectionType];

/** Why an election runs (Kafka's ElectionTrigger). */
export type ElectionTrigger = "AdminClientTriggered" | "AutoTriggered";

export interface ReplicaElectionResult {
  readonly topic: string;
  readonly partition: number;
  readonly errorCode: number;
  readonly errorMessage: string | null;
}

/**
 * Runs the elections and answers every partition asked for. The caller owns the controller's event queue
 * (this runs inside one event) and sends the request batch afterwards.
 */
export async function electReplicaLeaders(
  ctx: ControllerContext,
  psm: PartitionStateMachine,
  partitions: readonly TopicPartitionKey[],
  type: ElectionType,
  trigger: ElectionTrigger,
): Promise<ReplicaElectionResult[]> {
  const results: ReplicaElectionResult[] = [];
  const answer = (tp: TopicPartitionKey, errorCode: number, errorMessage: string | null): void => {
    results.push({ topic: tp.topic, partition: tp.partition, errorCode, errorMessage });
  };
  const electable: TopicPartitionKey[] = [];
  for (const tp of partitions) {
    const leadership = ctx.leadership.get(tpKey(tp.topic, tp.partition));
    if (ctx.replicasFor(tp.topic, tp.partition).length === 0 || leadership === undefined) {
      answer(tp, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.");
      continue;
    }
    if (ctx.topicsToBeDeleted.has(tp.topic)) {
      answer(tp, ErrorCode.INVALID_TOPIC_EXCEPTION, "The topic is being deleted");
      continue;
    }
    const leader = leadership.leaderAndIsr.leader;
    const needed =
      type === ElectionType.PREFERRED
        ? leader !== ctx.replicasFor(tp.topic, tp.partition)[0]
        : leader < 0 || !ctx.isLive(leader);
    if (needed) electable.push(tp);
    else answer(tp, ErrorCode.ELECTION_NOT_NEEDED, null);
  }
  if (electable.length === 0) return results;
  const strategy =
    type === ElectionType.PREFERRED
      ? "preferred"
      : trigger === "AdminClientTriggered"
        ? "unclean"
        : "offline";
  const failed = new Set(
    (await psm.toOnline(electable, strategy)).map((tp) => tpKey(tp.topic, tp.partition)),
  );
  for (const tp of electable) {
    if (!failed.has(tpKey(tp.topic, tp.partition))) answer(tp, ErrorCode.NONE, null);
    else
      answer(
        tp,
        type === ElectionType.PREFERRED
          ? ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE
          : ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE,
        `Failed to elect leader for partition ${tpKey(tp.topic, tp.partition)} under strategy ${
          type === ElectionType.PREFERRED
            ? "PreferredReplicaPartitionLeaderElectionStrategy"
            : `OfflinePartitionLeaderElectionStrategy(${trigger === "AdminClientTriggered"})`
        }`,
      );
  }
  return results;
}

/**
 * Kafka's checkAndTriggerAutoLeaderRebalance: for each broker, the partitions whose preferred replica it
 * is; when more than `imbalancePercentage` % of them are led elsewhere, those whose preferred replica can
 * lead now (alive, in the ISR) are returned for a PREFERRED election. Partitions of topics being deleted
 * and those `skip` names (under reassignment) are left alone.
 */
export function partitionsForAutoLeaderRebalance(
  ctx: ControllerContext,
  imbalancePercentage: number,
  skip: (tp: TopicPartitionKey) => boolean = () => false,
): TopicPartitionKey[] {
  const byPreferred = new Map<number, TopicPartitionKey[]>();
  for (const tp of ctx.allPartitions()) {
    if (ctx.topicsToBeDeleted.has(tp.topic)) continue;
    const preferred = ctx.replicasFor(tp.topic, tp.partition)[0];
    if (preferred === undefined) continue;
    const list = byPreferred.get(preferred);
    if (list) list.push(tp);
    else byPreferred.set(preferred, [tp]);
  }
  const out: TopicPartitionKey[] = [];
  for (const [broker, parts] of byPreferred) {
    const notPreferred = parts.filter((tp) => {
      const l = ctx.leadership.get(tpKey(tp.topic, tp.partition));
      return l !== undefined && l.leaderAndIsr.leader !== broker;
    });
    if (notPreferred.length / parts.length <= imbalancePercentage / 100) continue;
    for (const tp of notPreferred) {
      if (skip(tp)) continue;
      const isr = ctx.leadership.get(tpKey(tp.topic, tp.partition))?.leaderAndIsr.isr ?? [];
      const replicas = ctx.replicasFor(tp.topic, tp.partition);
      if (preferredReplicaPartitionLeaderElection(replicas, isr, (id) => ctx.isLive(id)) !== undefined)
        out.push(tp);
    }
  }
  return out;
}
