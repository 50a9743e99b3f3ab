// What each alert rule sees in a cluster's latest sample: the subjects it fires for, with the value
// that made it fire. group-lag / group-lag-seconds: each matching group whose total lag (messages) or
// oldest unconsumed record (seconds) is above the threshold; under-replicated / offline: the cluster,
// when its count is above the threshold; broker-down: each broker seen in an earlier sample that the
// cluster no longer describes — every seen broker when the cluster cannot be reached at all.

import type { ClusterSnapshot } from "../collector/snapshot.js";
import type { AlertRule } from "./alert-rules.js";

export interface Firing {
  /** What fires: "group billing", "broker 2", "cluster". */
  readonly subject: string;
  readonly value: number;
  readonly message: string;
}

/** `snapshot` is undefined when the last sample failed (the cluster is unreachable). */
export function evaluate(
  rule: AlertRule,
  snapshot: ClusterSnapshot | undefined,
  seenBrokers: ReadonlySet<number>,
): Firing[] {
  if (rule.type === "broker-down") {
    const present = new Set(snapshot?.brokerIds ?? []);
    return [...seenBrokers]
      .filter((id) => !present.has(id))
      .sort((a, b) => a - b)
      .map((id) => ({
        subject: `broker ${id}`,
        value: 1,
        message: snapshot
          ? `broker ${id} is no longer in the cluster`
          : `broker ${id}: the cluster cannot be reached`,
      }));
  }
  if (!snapshot) return [];
  if (rule.type === "under-replicated" || rule.type === "offline") {
    const n = rule.type === "offline" ? snapshot.offline : snapshot.underReplicated;
    return n > rule.threshold
      ? [
          {
            subject: "cluster",
            value: n,
            message: `${n} ${rule.type} partitions (threshold ${rule.threshold})`,
          },
        ]
      : [];
  }
  const out: Firing[] = [];
  for (const g of snapshot.groups) {
    if (rule.group && !rule.group.test(g.groupId)) continue;
    if (rule.type === "group-lag" && g.totalLag > rule.threshold)
      out.push({
        subject: `group ${g.groupId}`,
        value: g.totalLag,
        message: `group ${g.groupId} lags ${g.totalLag} messages (threshold ${rule.threshold})`,
      });
    if (rule.type === "group-lag-seconds" && g.maxLagMs !== null && g.maxLagMs / 1000 > rule.threshold) {
      const s = Math.round(g.maxLagMs / 1000);
      out.push({
        subject: `group ${g.groupId}`,
        value: s,
        message: `group ${g.groupId}'s oldest unconsumed record is ${g.lagMsUnknown > 0 ? "at least " : ""}${s} s old (threshold ${rule.threshold})`,
      });
    }
  }
  return out;
}
