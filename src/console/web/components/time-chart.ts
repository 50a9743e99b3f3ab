// A time-series line chart (uPlot) of one or two scales: x is the sample time, each series its own
// values (null = a gap). It resizes with its container. The container carries data-points (how many
// times are drawn), data-sampled-at and data-series, so tests and people can tell what it holds, and its
// uPlot instance as `uplot` (the tests measure the drawn axes through it). Laid out so nothing overlaps:
// the x axis spans at least a minute around the samples (one sample no longer spans years), its labels
// are "HH:MM" or "HH:MM:SS" with the date under the first one and where the day changes, at least
// X_SPACE px apart; each y axis is as wide as its widest tick label, so its title never covers them.

import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import { html } from "../html.js";

export interface ChartSeries {
  readonly label: string;
  readonly stroke: string;
  /** "left" or "right" axis. */
  readonly axis: "left" | "right";
  readonly values: ReadonlyArray<number | null>;
  readonly dash?: number[];
}

export interface TimeChartProps {
  /** Sample times, ms since the epoch. */
  readonly times: readonly number[];
  readonly series: readonly ChartSeries[];
  readonly leftLabel: string;
  readonly rightLabel?: string;
  readonly testid: string;
  readonly sampledAt?: number;
  readonly seriesName?: string;
}

function data(p: TimeChartProps): uPlot.AlignedData {
  return [p.times.map((t) => t / 1000), ...p.series.map((s) => [...s.values])] as uPlot.AlignedData;
}

/** The narrowest x range, s: one sample (or a few close together) sits in a minute's window. */
const MIN_X_SPAN_S = 60;
/** Pixels between x ticks, at least: the widest label ("00:00:00", "Dec 31") is ~55 px wide. */
const X_SPACE = 80;
/** Tick steps of the x axis, s: never below a second. */
const X_INCRS = [
  1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800,
];

const two = (n: number): string => String(n).padStart(2, "0");
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** "HH:MM" (a step of a minute or more) or "HH:MM:SS", local time; the date below on day changes. */
function timeLabels(_u: uPlot, splits: number[], _axis: number, _space: number, incr: number): string[] {
  let lastDay = "";
  return splits.map((s) => {
    const d = new Date(s * 1000);
    const time =
      incr >= 60 && d.getSeconds() === 0
        ? `${two(d.getHours())}:${two(d.getMinutes())}`
        : `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
    const day = `${MONTHS[d.getMonth()]} ${d.getDate()}`;
    const label = day === lastDay ? time : `${time}\n${day}`;
    lastDay = day;
    return label;
  });
}

/** A y axis as wide as its tick marks, gap and widest tick label (uPlot's default is a fixed 50 px). */
function yAxisSize(u: uPlot, values: string[] | null, axisIdx: number, cycleNum: number): number {
  const axis = u.axes[axisIdx] as uPlot.Axis & { _size?: number };
  if (cycleNum > 1 && axis._size !== undefined) return axis._size;
  let widest = 0;
  if (values && values.length > 0) {
    u.ctx.font = (axis.font as unknown as [string])[0];
    for (const v of values) widest = Math.max(widest, u.ctx.measureText(String(v)).width / devicePixelRatio);
  }
  return Math.ceil((axis.ticks?.size ?? 10) + (axis.gap ?? 5) + widest + 4);
}

/**
 * The x range (s): the samples' span, widened to a minute around them when shorter. Set explicitly: for
 * a single point uPlot's own x range is 86,400 / ms units, which with times in seconds is 1,000 days.
 */
function xRange(times: readonly number[]): { min: number; max: number } | undefined {
  if (times.length === 0) return undefined;
  const min = times[0] / 1000;
  const max = times[times.length - 1] / 1000;
  if (max - min >= MIN_X_SPAN_S) return { min, max };
  const mid = (min + max) / 2;
  return { min: mid - MIN_X_SPAN_S / 2, max: mid + MIN_X_SPAN_S / 2 };
}

export function TimeChart(props: TimeChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const shape = props.series.map((s) => `${s.label}/${s.axis}`).join("|");

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const width = (): number => Math.max(280, el.clientWidth - 12);
    const axes: uPlot.Axis[] = [
      { space: X_SPACE, incrs: X_INCRS, values: timeLabels },
      { scale: "left", label: props.leftLabel, size: yAxisSize },
    ];
    if (props.rightLabel)
      axes.push({ scale: "right", side: 1, label: props.rightLabel, grid: { show: false }, size: yAxisSize });
    const u = new uPlot(
      {
        width: width(),
        height: 240,
        series: [
          {},
          ...props.series.map((s) => ({
            label: s.label,
            stroke: s.stroke,
            width: 2,
            scale: s.axis,
            dash: s.dash,
          })),
        ],
        axes,
        scales: { x: { time: true, auto: false } },
      },
      data(props),
      el,
    );
    const range = xRange(props.times);
    if (range) u.setScale("x", range);
    plot.current = u;
    (el as HTMLDivElement & { uplot?: uPlot }).uplot = u;
    const ro = new ResizeObserver(() => u.setSize({ width: width(), height: 240 }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [shape]);

  useEffect(() => {
    const u = plot.current;
    if (!u) return;
    u.setData(data(props));
    const range = xRange(props.times);
    if (range) u.setScale("x", range);
  }, [props.times, props.series]);

  return html`<div
    class="chart"
    data-testid=${props.testid}
    data-points=${props.times.length}
    data-sampled-at=${props.sampledAt ?? ""}
    data-series=${props.seriesName ?? ""}
    ref=${box}
  ></div>`;
}
