// A group's (or one partition's) lag over time: lag in messages on the left axis, the lag in seconds
// (age of the oldest unconsumed record) on the right, one point per collector sample.

import { html } from "../html.js";
import { TimeChart } from "./time-chart.js";

export interface LagPoint {
  ts: number;
  lag: number;
  lagMs: number | null;
}

export function LagChart(props: { points: readonly LagPoint[]; sampledAt: number; series: string }) {
  return html`<${TimeChart}
    testid="lag-chart"
    times=${props.points.map((p) => p.ts)}
    sampledAt=${props.sampledAt}
    seriesName=${props.series}
    leftLabel="messages"
    rightLabel="seconds"
    series=${[
      { label: "lag (messages)", stroke: "#c0392b", axis: "left", values: props.points.map((p) => p.lag) },
      {
        label: "lag (seconds)",
        stroke: "#2e6fbd",
        axis: "right",
        dash: [6, 4],
        values: props.points.map((p) => (p.lagMs === null ? null : p.lagMs / 1000)),
      },
    ]}
  />`;
}
