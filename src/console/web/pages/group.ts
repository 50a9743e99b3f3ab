// Consumer group page: state, coordinator, members; per partition (every committed or assigned one) the
// committed offset ("-" when none, its lag then counted from the log start offset, marked * with a
// legend), log end offset, lag in messages and in time (age of the oldest unconsumed record) and owner;
// total lag with a growing / shrinking / steady trend mark (the same partitions compared); the lag-over-time chart from the history, in total or of one
// partition. Updated after
// every collector sample (Server-Sent Events), without a reload. Admins can reset offsets (after a
// dry-run preview) and delete the group.

import { useState } from "preact/hooks";
import { age, enc, fmt, groupAge, useApi } from "../api.js";
import { GroupActions } from "../components/group-actions.js";
import { LagChart, type LagPoint } from "../components/lag-chart.js";
import { Status } from "../components/layout.js";
import { html } from "../html.js";

interface GroupDetail {
  sampledAt: number;
  series: string;
  trend: "growing" | "shrinking" | "steady";
  history: LagPoint[];
  group: {
    groupId: string;
    state: string;
    protocolType: string;
    assignor: string;
    coordinator: number;
    members: Array<{
      memberId: string;
      clientId: string;
      host: string;
      assignment: Array<{ topic: string; partition: number }>;
    }>;
    partitions: Array<{
      topic: string;
      partition: number;
      committedOffset: number | null;
      logEndOffset: number;
      lag: number;
      lagMs: number | null;
      owner: string | null;
    }>;
    totalLag: number;
    maxLagMs: number | null;
    lagMsUnknown: number;
  };
}

const NO_COMMIT = "no committed offset: lag counted from the log start offset";

const TREND_MARK = { growing: "▲ growing", shrinking: "▼ shrinking", steady: "● steady" } as const;

export function GroupPage(props: { cluster: string; group: string }) {
  const [series, setSeries] = useState("");
  const [topic, partition] =
    series === ""
      ? []
      : [series.slice(0, series.lastIndexOf("-")), series.slice(series.lastIndexOf("-") + 1)];
  const query = series === "" ? "" : `?topic=${enc(topic ?? "")}&partition=${partition}`;
  const { data, error, version, reload } = useApi<GroupDetail>(
    `/api/clusters/${enc(props.cluster)}/groups/${enc(props.group)}${query}`,
    props.cluster,
  );
  const g = data?.group;
  return html`<section data-version=${version}>
    <p><a href=${`#/c/${enc(props.cluster)}/groups`}>← Consumer groups</a></p>
    <h1>Group <code>${props.group}</code></h1>
    <${Status} error=${error} loading=${!data} />
    ${
      data &&
      g &&
      html`<div class="cards">
        <div class="card"><div class="value" data-testid="total-lag">${fmt(g.totalLag)}</div><div class="label">total lag (messages)</div></div>
        <div class="card"><div class="value" data-testid="max-lag-time" data-lag-ms=${g.maxLagMs ?? ""} data-unknown=${g.lagMsUnknown} title=${groupAge(g.maxLagMs, g.lagMsUnknown).title}>${groupAge(g.maxLagMs, g.lagMsUnknown).text}</div><div class="label">oldest unconsumed record (all partitions)</div></div>
        <div class="card"><div class=${`value trend ${data.trend}`} data-testid="trend" data-trend=${data.trend}>${TREND_MARK[data.trend]}</div><div class="label">trend</div></div>
        <div class="card"><div class="value"><span class=${`state ${g.state}`} data-testid="state">${g.state}</span></div><div class="label">state · ${g.protocolType || "no protocol"} · coordinator ${g.coordinator} · ${g.assignor || "no assignor"}</div></div>
      </div>
      <${GroupActions} cluster=${props.cluster} group=${props.group} done=${reload}
        deleted=${() => {
          location.hash = `#/c/${enc(props.cluster)}/groups`;
        }} />
      <h2>Lag over time
        <select class="series" name="series" aria-label="series" value=${series} onChange=${(e: Event) => setSeries((e.target as HTMLSelectElement).value)}>
          <option value="">all partitions (total)</option>
          ${g.partitions.map((p) => html`<option value=${`${p.topic}-${p.partition}`}>${p.topic} / ${p.partition}</option>`)}
        </select>
      </h2>
      <${LagChart} points=${data.history} sampledAt=${data.sampledAt} series=${data.series} />
      <h2>Partitions</h2>
      <div class="table-wrap"><table data-testid="partitions">
        <thead><tr><th>Topic</th><th class="num">Partition</th><th class="num">Committed offset</th><th class="num">Log end offset</th><th class="num">Lag</th><th class="num">Lag (time)</th><th>Owner</th></tr></thead>
        <tbody>${g.partitions.map(
          (p) => html`<tr data-topic=${p.topic} data-partition=${p.partition}>
            <td>${p.topic}</td><td class="num">${p.partition}</td>
            <td class="num committed" title=${p.committedOffset === null ? NO_COMMIT : ""}>${p.committedOffset === null ? "-" : fmt(p.committedOffset)}</td>
            <td class="num log-end">${fmt(p.logEndOffset)}</td>
            <td class=${`num lag${p.committedOffset === null ? " from-start" : ""}`} data-lag=${p.lag} title=${p.committedOffset === null ? NO_COMMIT : ""}>${fmt(p.lag)}${p.committedOffset === null ? "*" : ""}</td>
            <td class="num lag-time" data-lag-ms=${p.lagMs ?? ""}>${age(p.lagMs)}</td><td>${p.owner ?? "–"}</td></tr>`,
        )}</tbody>
      </table></div>
      ${
        g.partitions.some((p) => p.committedOffset === null) &&
        html`<p class="muted legend" data-testid="no-commit-legend">- no committed offset (as Kafka's consumer-groups tool prints it): the partition is assigned but the group has not committed.
          * Its lag counts from the log start offset — what a consumer with auto.offset.reset=earliest has to read; the total includes it.</p>`
      }
      <h2>Members</h2>
      ${
        g.members.length === 0
          ? html`<p class="muted">No active members.</p>`
          : html`<div class="table-wrap"><table data-testid="members">
            <thead><tr><th>Client id</th><th>Host</th><th>Member id</th><th>Partitions</th></tr></thead>
            <tbody>${g.members.map(
              (
                m,
              ) => html`<tr data-member=${m.memberId}><td>${m.clientId}</td><td>${m.host}</td><td class="mono wrap">${m.memberId}</td>
                <td class="wrap assignment">${m.assignment.map((a) => `${a.topic}-${a.partition}`).join(", ")}</td></tr>`,
            )}</tbody></table></div>`
      }
      <p class="muted">Sampled at ${new Date(data.sampledAt).toLocaleTimeString()}</p>`
    }
  </section>`;
}
