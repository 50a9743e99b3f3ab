// What the consumer-group pages show, from the collector's latest sample: the groups with state,
// members and total lag; one group's members and per-partition committed offset, log end offset, lag,
// lag in seconds and owner; its lag over time (in total or of one partition) from the history store,
// and a trend mark comparing the same partitions at both ends of its window.

import type { ClusterState } from "../collector/collector.js";
import type { GroupSnapshot } from "../collector/snapshot.js";
import type { HistoryStore, LagPoint, PartitionLagRow } from "../history/history-store.js";
import { HttpError } from "../http/router.js";

export type Trend = "growing" | "shrinking" | "steady";

/**
 * Compares like with like: the lag, summed over the partitions present in both, at the first and the
 * last of the last `window` sample times — up → growing, down → shrinking, else steady. A partition
 * that appears (a member assigned a partition without a commit) or goes away does not move it.
 */
export function trendOf(rows: readonly PartitionLagRow[], times: readonly number[]): Trend {
  if (times.length < 2) return "steady";
  const first = times[0];
  const last = times[times.length - 1];
  const at = (ts: number) =>
    new Map(rows.filter((r) => r.ts === ts).map((r) => [`${r.topic}\u0000${r.partition}`, r.lag]));
  const before = at(first);
  let delta = 0;
  for (const [key, lag] of at(last)) {
    const was = before.get(key);
    if (was !== undefined) delta += lag - was;
  }
  return delta > 0 ? "growing" : delta < 0 ? "shrinking" : "steady";
}

/** The trend over the last `window` samples of a group's history (`total`, oldest first). */
export async function groupTrend(
  history: HistoryStore,
  cluster: string,
  group: string,
  total: readonly LagPoint[],
  window = 5,
): Promise<Trend> {
  const last = total.slice(-window);
  if (last.length < 2) return "steady";
  const times = [last[0].ts, last[last.length - 1].ts];
  return trendOf(await history.groupLagByPartition(cluster, group, times), times);
}

function latest(state: ClusterState) {
  if (!state.latest)
    throw new HttpError(
      503,
      state.lastError ? `no sample yet: ${state.lastError}` : "no sample yet: the collector is starting",
    );
  return state.latest;
}

export function groupList(state: ClusterState) {
  const s = latest(state);
  return {
    sampledAt: s.ts,
    groups: s.groups.map((g) => ({
      groupId: g.groupId,
      state: g.state,
      protocolType: g.protocolType,
      members: g.members.length,
      topics: [...new Set(g.partitions.map((p) => p.topic))].sort(),
      totalLag: g.totalLag,
      maxLagMs: g.maxLagMs,
      lagMsUnknown: g.lagMsUnknown,
    })),
  };
}

export function findGroup(state: ClusterState, groupId: string): GroupSnapshot {
  const g = latest(state).groups.find((x) => x.groupId === groupId);
  if (!g) throw new HttpError(404, `group '${groupId}' is not in the latest sample`);
  return g;
}

/** A chart series: the group's total lag, or one partition's ("topic-partition"). */
export interface SeriesChoice {
  readonly topic: string;
  readonly partition: number;
}

export async function groupDetail(
  state: ClusterState,
  history: HistoryStore,
  groupId: string,
  sinceTs: number,
  series?: SeriesChoice,
) {
  const g = findGroup(state, groupId);
  const alias = state.config.alias;
  const total = await history.groupLag(alias, groupId, sinceTs);
  const chart = series
    ? await history.partitionLag(alias, groupId, series.topic, series.partition, sinceTs)
    : total;
  return {
    sampledAt: latest(state).ts,
    group: g,
    series: series ? `${series.topic}-${series.partition}` : "total",
    history: chart,
    trend: await groupTrend(history, alias, groupId, total),
  };
}
