// The replication throttles of a reassignment, as Kafka's ReassignPartitionsCommand sets and clears them
// (shared by `reassign-partitions` and `decommission-broker`):
// - the move map: per partition, the source replicas (its current replicas, or for a reassignment already
//   in progress its replicas minus those being added) and the destinations (target replicas not sources);
// - --throttle R: leader.replication.throttled.replicas = `partition:source` of every move and
//   follower.replication.throttled.replicas = `partition:destination` on each topic, and
//   leader.replication.throttled.rate = follower.replication.throttled.rate = R on every broker that is
//   a source or a destination ("The inter-broker throttle limit was set to R B/s");
// - --replica-alter-log-dirs-throttle R: replica.alter.log.dirs.io.max.bytes.per.second = R on the brokers
//   whose replicas move between log dirs ("The replica-alter-dir throttle limit was set to R B/s");
// - once every reassignment is complete (--verify) or cancelled (--cancel), unless --preserve-throttles:
//   the three broker rates deleted on every live broker and every broker of the plan, the two topic
//   configs deleted on every topic of the plan ("Clearing broker-level throttles on brokers …",
//   "Clearing topic-level throttles on topic …").

import type { AdminClient } from "../../client/admin/admin-client.js";
import type { AlterConfigOp, ConfigResource } from "../../client/admin/admin-types.js";
import type { PartitionReassignment } from "../../client/admin/partition-admin.js";
import { UsageError } from "../args.js";

export const LEADER_THROTTLED_RATE = "leader.replication.throttled.rate";
export const FOLLOWER_THROTTLED_RATE = "follower.replication.throttled.rate";
export const LOG_DIR_THROTTLED_RATE = "replica.alter.log.dirs.io.max.bytes.per.second";
export const LEADER_THROTTLED_REPLICAS = "leader.replication.throttled.replicas";
export const FOLLOWER_THROTTLED_REPLICAS = "follower.replication.throttled.replicas";

export const YOU_MUST_RUN_VERIFY_PERIODICALLY_MESSAGE =
  "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.";

/** One partition's move: the replicas it copies from and the replicas it copies to. */
export interface PartitionMove {
  readonly sources: ReadonlySet<number>;
  readonly destinations: ReadonlySet<number>;
}

/** topic → partition → move (Kafka's MoveMap). */
export type MoveMap = Map<string, Map<number, PartitionMove>>;

/** A --throttle style value: a long, -1 (the default) meaning "not given". */
export function parseThrottle(option: string, raw: string | undefined): bigint {
  if (raw === undefined) return -1n;
  const v = raw.trim();
  if (!/^-?\d+$/.test(v) || BigInt(v) > 9223372036854775807n || BigInt(v) < -1n)
    throw new UsageError(
      `Invalid value '${raw}' for --${option}: expected a rate in bytes/s (a long >= 0; the throttle rate should be at least 1 KB/s)`,
    );
  return BigInt(v);
}

/** Kafka's calculateProposedMoveMap: the reassignments in progress, then the proposed ones over them. */
export function proposedMoveMap(
  ongoing: readonly PartitionReassignment[],
  proposed: ReadonlyArray<{ topic: string; partition: number; replicas: readonly number[] }>,
  current: ReadonlyMap<string, ReadonlyMap<number, readonly number[]>>,
): MoveMap {
  const moves: MoveMap = new Map();
  const put = (topic: string, partition: number, move: PartitionMove): void => {
    const m = moves.get(topic) ?? new Map<number, PartitionMove>();
    moves.set(topic, m);
    m.set(partition, move);
  };
  for (const r of ongoing) {
    const adding = new Set(r.addingReplicas);
    put(r.topic, r.partition, {
      sources: new Set(r.replicas.filter((x) => !adding.has(x))),
      destinations: adding,
    });
  }
  for (const p of proposed) {
    const inProgress = moves.get(p.topic)?.get(p.partition);
    const sources = new Set(inProgress?.sources ?? current.get(p.topic)?.get(p.partition) ?? []);
    put(p.topic, p.partition, {
      sources,
      destinations: new Set(p.replicas.filter((x) => !sources.has(x))),
    });
  }
  return moves;
}

function throttleList(
  parts: Map<number, PartitionMove>,
  pick: (m: PartitionMove) => Iterable<number>,
): string {
  // Kafka collects the `partition:broker` strings in a TreeSet: sorted as strings.
  const entries = new Set<string>();
  for (const [p, m] of parts) for (const b of pick(m)) entries.add(`${p}:${b}`);
  return [...entries].sort().join(",");
}

/** Kafka's calculateLeaderThrottles / calculateFollowerThrottles: topic → throttled-replicas values. */
export function topicThrottles(moves: MoveMap): Map<string, { leader: string; follower: string }> {
  const out = new Map<string, { leader: string; follower: string }>();
  for (const [topic, parts] of moves)
    out.set(topic, {
      leader: throttleList(parts, (m) => m.sources),
      follower: throttleList(parts, (m) => [...m.destinations].filter((d) => !m.sources.has(d))),
    });
  return out;
}

/** Kafka's calculateReassigningBrokers: every source and destination, ascending. */
export function reassigningBrokers(moves: MoveMap): number[] {
  const ids = new Set<number>();
  for (const parts of moves.values())
    for (const m of parts.values()) for (const b of [...m.sources, ...m.destinations]) ids.add(b);
  return [...ids].sort((a, b) => a - b);
}

async function alter(
  admin: AdminClient,
  changes: ReadonlyArray<{ resource: ConfigResource; ops: readonly AlterConfigOp[] }>,
): Promise<void> {
  if (changes.length === 0) return;
  const results = await admin.incrementalAlterConfigs(changes);
  const failed = results.filter((r) => r.error !== undefined);
  if (failed.length > 0)
    throw new UsageError(
      `Error setting throttle configs: ${failed.map((f) => `${f.resource.type} ${f.resource.name}: ${f.error!.message}`).join("; ")}`,
    );
}

/** Kafka's modifyReassignmentThrottle: the topic throttled replicas, then the brokers' rates; prints the line. */
export async function modifyReassignmentThrottle(
  admin: AdminClient,
  moves: MoveMap,
  interBrokerThrottle: bigint,
  out: (line: string) => void,
): Promise<void> {
  const topics = [...topicThrottles(moves)].map(([topic, t]) => ({
    resource: { type: "topic" as const, name: topic },
    ops: [
      { name: LEADER_THROTTLED_REPLICAS, op: "SET" as const, value: t.leader },
      { name: FOLLOWER_THROTTLED_REPLICAS, op: "SET" as const, value: t.follower },
    ],
  }));
  await alter(admin, topics);
  const rate = String(interBrokerThrottle);
  await alter(
    admin,
    reassigningBrokers(moves).map((id) => ({
      resource: { type: "broker" as const, name: String(id) },
      ops: [
        { name: LEADER_THROTTLED_RATE, op: "SET" as const, value: rate },
        { name: FOLLOWER_THROTTLED_RATE, op: "SET" as const, value: rate },
      ],
    })),
  );
  out(`The inter-broker throttle limit was set to ${interBrokerThrottle} B/s`);
}

/** Kafka's modifyLogDirThrottle: the rate on the brokers with replicas moving between log dirs. */
export async function modifyLogDirThrottle(
  admin: AdminClient,
  movingBrokers: readonly number[],
  logDirThrottle: bigint,
  out: (line: string) => void,
): Promise<void> {
  await alter(
    admin,
    movingBrokers.map((id) => ({
      resource: { type: "broker" as const, name: String(id) },
      ops: [{ name: LOG_DIR_THROTTLED_RATE, op: "SET" as const, value: String(logDirThrottle) }],
    })),
  );
  out(`The replica-alter-dir throttle limit was set to ${logDirThrottle} B/s`);
}

/**
 * Kafka's clearAllThrottles: deletes the three broker rates on every live broker and every broker the
 * plan names, and the two throttled-replicas configs on every topic of the plan.
 */
export async function clearAllThrottles(
  admin: AdminClient,
  targets: ReadonlyArray<{ topic: string; replicas: readonly number[] }>,
  out: (line: string) => void,
): Promise<void> {
  const live = (await admin.describeCluster()).brokers.map((b) => b.id);
  const brokers = [...new Set([...live, ...targets.flatMap((t) => t.replicas)])].sort((a, b) => a - b);
  out(`Clearing broker-level throttles on broker${brokers.length === 1 ? "" : "s"} ${brokers.join(",")}`);
  await alter(
    admin,
    brokers.map((id) => ({
      resource: { type: "broker" as const, name: String(id) },
      ops: [LEADER_THROTTLED_RATE, FOLLOWER_THROTTLED_RATE, LOG_DIR_THROTTLED_RATE].map((name) => ({
        name,
        op: "DELETE" as const,
      })),
    })),
  );
  const topics = [...new Set(targets.map((t) => t.topic))].sort();
  out(`Clearing topic-level throttles on topic${topics.length === 1 ? "" : "s"} ${topics.join(",")}`);
  await alter(
    admin,
    topics.map((name) => ({
      resource: { type: "topic" as const, name },
      ops: [LEADER_THROTTLED_REPLICAS, FOLLOWER_THROTTLED_REPLICAS].map((n) => ({
        name: n,
        op: "DELETE" as const,
      })),
    })),
  );
}
