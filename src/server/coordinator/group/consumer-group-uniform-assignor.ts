// The server-side "uniform" assignor (Kafka's UniformAssignor, the default): spreads the partitions of the
// subscribed topics as evenly as possible over the members subscribed to them, and is sticky — a member
// keeps the partitions of its previous target assignment that it is still subscribed to, and only the
// partitions needed to even out the counts move. With identical subscriptions every member ends with
// floor(P/N) or ceil(P/N) partitions; with different subscriptions no member subscribed to a partition has
// two fewer partitions than the member holding it.

import type { AssignmentSpec } from "./consumer-group-assignor.js";
import type { Assignment } from "./consumer-group-member.js";

interface Slot {
  readonly topicId: string;
  readonly partition: number;
}

export function uniformAssign(spec: AssignmentSpec): Map<string, Assignment> {
  const memberIds = [...spec.members.keys()].sort();
  const owned = new Map<string, Slot[]>(memberIds.map((id) => [id, []]));
  const taken = new Set<string>();
  const key = (t: string, p: number): string => `${t}:${p}`;
  const subscribed = (id: string, t: string): boolean =>
    spec.members.get(id)!.subscribedTopicIds.has(t) && spec.topics.has(t);

  // 1. Stickiness: keep the previous target where it is still valid.
  for (const id of memberIds) {
    for (const [t, ps] of spec.members.get(id)!.previousAssignment) {
      if (!subscribed(id, t)) continue;
      const n = spec.topics.get(t)!;
      for (const p of [...ps].sort((a, b) => a - b)) {
        if (p >= n || taken.has(key(t, p))) continue;
        taken.add(key(t, p));
        owned.get(id)!.push({ topicId: t, partition: p });
      }
    }
  }

  // 2. Every free partition goes to the least loaded member subscribed to its topic.
  const leastLoaded = (candidates: string[]): string =>
    candidates.reduce((best, id) => (owned.get(id)!.length < owned.get(best)!.length ? id : best));
  for (const t of [...spec.topics.keys()].sort()) {
    const candidates = memberIds.filter((id) => subscribed(id, t));
    if (candidates.length === 0) continue;
    for (let p = 0; p < spec.topics.get(t)!; p++) {
      if (taken.has(key(t, p))) continue;
      taken.add(key(t, p));
      owned.get(leastLoaded(candidates))!.push({ topicId: t, partition: p });
    }
  }

  // 3. Balance: move one partition at a time from a member holding two more than another member that
  // could take it, until no such move exists.
  for (let moved = true; moved; ) {
    moved = false;
    const byLoad = [...memberIds].sort(
      (a, b) => owned.get(b)!.length - owned.get(a)!.length || (a < b ? -1 : 1),
    );
    for (const from of byLoad) {
      const fromSlots = owned.get(from)!;
      for (const to of [...byLoad].reverse()) {
        const toSlots = owned.get(to)!;
        if (fromSlots.length - toSlots.length <= 1) break;
        // The highest-numbered partition `to` can take.
        let pick = -1;
        for (let i = fromSlots.length - 1; i >= 0; i--) {
          if (subscribed(to, fromSlots[i].topicId)) {
            pick = i;
            break;
          }
        }
        if (pick < 0) continue;
        toSlots.push(fromSlots.splice(pick, 1)[0]);
        moved = true;
        break;
      }
      if (moved) break;
    }
  }

  const out = new Map<string, Assignment>();
  for (const id of memberIds) {
    const a = new Map<string, Set<number>>();
    for (const s of owned.get(id)!) {
      const ps = a.get(s.topicId) ?? new Set<number>();
      ps.add(s.partition);
      a.set(s.topicId, ps);
    }
    out.set(id, a);
  }
  return out;
}
