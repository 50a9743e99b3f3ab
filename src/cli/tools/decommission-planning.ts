// What `decommission-broker` moves: only the partitions with a replica on the broker being removed, and in
// each of them only that replica, replaced in place by one of the remaining live brokers (the other
// replicas keep their brokers and their order, so a preferred leader that was not on the broker stays
// the preferred leader). The replacement of each replica is chosen greedily, partition by partition in
// topic then partition order, from the brokers not already in the list:
//   1. rack awareness (unless disabled): a broker on a rack none of the other replicas is on, else one on
//      the rack they use least (as Kafka's rack-aware assignment spreads a partition over racks);
//   2. the fewest replicas over the whole cluster (every partition of every topic, the moves planned so
//      far included), so the remaining brokers end up as even as they can;
//   3. for a replacement of the first replica (the preferred leader), the fewest preferred leaderships;
//   4. the fewest replicas of the same topic; 5. the lowest broker id.
// Some brokers with a rack and some without is refused (as reassign-partitions --generate refuses it).

import { UsageError } from "../args.js";
import type { TopicAssignments } from "./reassignment-planning.js";

export interface LiveBroker {
  readonly id: number;
  readonly rack: string | null;
}

/** Increments a count in a map. */
function bump<K>(m: Map<K, number>, k: K, by = 1): void {
  m.set(k, (m.get(k) ?? 0) + by);
}

/**
 * The new replica lists of the partitions of `all` (every topic of the cluster) that have a replica on
 * `removed`, over the live `brokers` other than `removed`. Partitions without a replica on it are not in
 * the result.
 */
export function planBrokerRemoval(
  all: TopicAssignments,
  brokers: readonly LiveBroker[],
  removed: number,
  rackAware: boolean,
): TopicAssignments {
  const remaining = brokers.filter((b) => b.id !== removed).sort((a, b) => a.id - b.id);
  const withRack = remaining.filter((b) => b.rack !== null).length;
  if (rackAware && withRack !== 0 && withRack !== remaining.length)
    throw new UsageError(
      "Not all brokers have rack information. Add --disable-rack-aware in command line to make replica assignment without rack information.",
    );
  const rackOf = new Map<number, string | null>(
    brokers.map((b) => [b.id, rackAware && withRack > 0 ? b.rack : null]),
  );
  const load = new Map<number, number>(remaining.map((b) => [b.id, 0]));
  const leaders = new Map<number, number>(remaining.map((b) => [b.id, 0]));
  const topicLoad = new Map<string, Map<number, number>>();
  for (const [topic, parts] of all) {
    const t = new Map<number, number>();
    topicLoad.set(topic, t);
    for (const replicas of parts.values()) {
      replicas.forEach((r, i) => {
        if (!load.has(r)) return;
        bump(load, r);
        bump(t, r);
        if (i === 0) bump(leaders, r);
      });
    }
  }
  const plan: TopicAssignments = new Map();
  for (const topic of [...all.keys()].sort()) {
    const parts = all.get(topic)!;
    const t = topicLoad.get(topic)!;
    for (const p of [...parts.keys()].sort((a, b) => a - b)) {
      const current = parts.get(p)!;
      const at = current.indexOf(removed);
      if (at < 0) continue;
      const others = current.filter((r) => r !== removed);
      const candidates = remaining.filter((b) => !others.includes(b.id));
      if (candidates.length === 0)
        throw new UsageError(
          `Replication factor: ${current.length} larger than available brokers: ${remaining.length} (${topic}-${p} has replicas ${current.join(",")}; the remaining brokers are ${remaining.map((b) => b.id).join(",") || "none"})`,
        );
      const rackUses = (b: LiveBroker): number => {
        const rack = rackOf.get(b.id) ?? null;
        return rack === null ? 0 : others.filter((o) => rackOf.get(o) === rack).length;
      };
      const key = (b: LiveBroker): number[] => [
        rackUses(b),
        load.get(b.id)!,
        at === 0 ? leaders.get(b.id)! : 0,
        t.get(b.id) ?? 0,
        b.id,
      ];
      let best = candidates[0];
      let bestKey = key(best);
      for (const c of candidates.slice(1)) {
        const k = key(c);
        const i = k.findIndex((v, j) => v !== bestKey[j]);
        if (i >= 0 && k[i] < bestKey[i]) {
          best = c;
          bestKey = k;
        }
      }
      const replicas = [...current];
      replicas[at] = best.id;
      bump(load, best.id);
      bump(t, best.id);
      if (at === 0) bump(leaders, best.id);
      const out = plan.get(topic) ?? new Map<number, number[]>();
      plan.set(topic, out);
      out.set(p, replicas);
    }
  }
  return plan;
}
