// What the consumer-group pages show, from the collector's latest sample: the groups with state,
// members and total lag; one group's members and per-partition committed offset, log end offset, lag,
// lag in seconds and owner; its lag over time (in total or of one partition) from the history store,
// and a trend mark.

import type { ClusterState } from "../collector/collector.js";
import type { GroupSnapshot } from "../collector/snapshot.js";
import type { HistoryStore, LagPoint } from "../history/history-store.js";
import { HttpError } from "../http/router.js";

export type Trend = "growing" | "shrinking" | "steady";

/** Compares the last `window` points' total lag: up → growing, down → shrinking, else steady. */
export function trendOf(points: readonly LagPoint[], window = 5): Trend {
  const last = points.slice(-window);
  if (last.length < 2) return "steady";
  const delta = last[last.length - 1].lag - last[0].lag;
  return delta > 0 ? "growing" : delta < 0 ? "shrinking" : "steady";
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
    trend: trendOf(total),
  };
}
