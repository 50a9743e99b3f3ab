// Broker traffic from the brokers' /metrics counters kept in the history: the cluster's messages in
// and bytes in/out per second over the last hour (charts), and per registered broker (one that has left
// has no row) its latest rates of messages, bytes and requests (a table), each rate the difference of two samples over their interval
// (a counter that went down — a broker restart — gives no rate).

import { bytes, enc, fmt, useApi } from "../api.js";
import { html } from "../html.js";
import { TimeChart } from "./time-chart.js";

interface Point {
  ts: number;
  brokerId: number;
  messagesIn: number | null;
  bytesIn: number | null;
  bytesOut: number | null;
  requests: number | null;
}

interface BrokerMetrics {
  configured: boolean;
  brokerIds: number[];
  latest: Array<{ brokerId: number; error?: string }>;
  points: Point[];
}

type Field = "messagesIn" | "bytesIn" | "bytesOut" | "requests";

function rate(prev: number | null | undefined, cur: number | null | undefined, dtMs: number): number | null {
  if (prev == null || cur == null || dtMs <= 0 || cur < prev) return null;
  return ((cur - prev) * 1000) / dtMs;
}

/** Cluster totals per sample time: rates of each field between consecutive samples. */
function clusterRates(points: readonly Point[]) {
  const byTs = new Map<number, Point[]>();
  for (const p of points) byTs.set(p.ts, [...(byTs.get(p.ts) ?? []), p]);
  const times = [...byTs.keys()].sort((a, b) => a - b);
  const sum = (ts: number, f: Field): number | null => {
    const list = byTs.get(ts) ?? [];
    return list.some((p) => p[f] === null) ? null : list.reduce((s, p) => s + (p[f] ?? 0), 0);
  };
  const series = (f: Field) =>
    times.map((t, i) => (i === 0 ? null : rate(sum(times[i - 1], f), sum(t, f), t - times[i - 1])));
  return {
    times,
    messagesIn: series("messagesIn"),
    bytesIn: series("bytesIn"),
    bytesOut: series("bytesOut"),
  };
}

/** Each registered broker's rates between its last two samples (a broker that has left: no row). */
function brokerRates(points: readonly Point[], registered: readonly number[]) {
  const byBroker = new Map<number, Point[]>(registered.map((id) => [id, []]));
  for (const p of points) byBroker.get(p.brokerId)?.push(p);
  return [...byBroker].map(([id, list]) => {
    const [a, b] = list.slice(-2);
    const r = (f: Field) => (a && b ? rate(a[f], b[f], b.ts - a.ts) : null);
    return {
      id,
      messagesIn: r("messagesIn"),
      bytesIn: r("bytesIn"),
      bytesOut: r("bytesOut"),
      requests: r("requests"),
    };
  });
}

const perSec = (v: number | null, f: (n: number) => string) => (v === null ? "–" : `${f(v)}/s`);

export function BrokerRates(props: { cluster: string }) {
  const { data } = useApi<BrokerMetrics>(`/api/clusters/${enc(props.cluster)}/broker-metrics`, props.cluster);
  if (!data) return null;
  if (!data.configured)
    return html`<p class="muted">Broker traffic: set <code>${props.cluster}.metrics.port</code> or <code>${props.cluster}.metrics.urls</code> (docs/console.md).</p>`;
  const c = clusterRates(data.points);
  const errors = data.latest.filter((b) => b.error);
  return html`<h2>Traffic</h2>
    ${errors.map((b) => html`<p class="error">broker ${b.brokerId} /metrics: ${b.error}</p>`)}
    <${TimeChart}
      testid="traffic-chart"
      times=${c.times}
      leftLabel="messages/s"
      rightLabel="bytes/s"
      series=${[
        { label: "messages in /s", stroke: "#1e8449", axis: "left", values: c.messagesIn },
        { label: "bytes in /s", stroke: "#2e6fbd", axis: "right", dash: [6, 4], values: c.bytesIn },
        { label: "bytes out /s", stroke: "#c0392b", axis: "right", dash: [2, 3], values: c.bytesOut },
      ]}
    />
    <div class="table-wrap"><table data-testid="broker-rates">
      <thead><tr><th>Broker</th><th class="num">Messages in</th><th class="num">Bytes in</th><th class="num">Bytes out</th><th class="num">Requests</th></tr></thead>
      <tbody>${brokerRates(data.points, data.brokerIds).map(
        (
          b,
        ) => html`<tr data-broker=${b.id}><td>${b.id}</td><td class="num">${perSec(b.messagesIn, (n) => fmt(Math.round(n)))}</td>
          <td class="num">${perSec(b.bytesIn, (n) => bytes(Math.round(n)))}</td><td class="num">${perSec(b.bytesOut, (n) => bytes(Math.round(n)))}</td>
          <td class="num requests">${perSec(b.requests, (n) => n.toFixed(1))}</td></tr>`,
      )}</tbody></table></div>`;
}
