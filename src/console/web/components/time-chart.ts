// A time-series line chart (uPlot) of one or two scales: x is the sample time, each series its own
// values (null = a gap). It resizes with its container. The container carries data-points (how many
// times are drawn), data-sampled-at and data-series, so tests and people can tell what it holds.

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

export function TimeChart(props: TimeChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const shape = props.series.map((s) => `${s.label}/${s.axis}`).join("|");

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const width = (): number => Math.max(280, el.clientWidth - 12);
    const axes: uPlot.Axis[] = [{}, { scale: "left", label: props.leftLabel }];
    if (props.rightLabel)
      axes.push({ scale: "right", side: 1, label: props.rightLabel, grid: { show: false } });
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
        scales: { x: { time: true } },
      },
      data(props),
      el,
    );
    plot.current = u;
    const ro = new ResizeObserver(() => u.setSize({ width: width(), height: 240 }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [shape]);

  useEffect(() => {
    plot.current?.setData(data(props));
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
