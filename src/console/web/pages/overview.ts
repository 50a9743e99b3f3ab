// Overview page: the cluster's brokers (controller and rack marked, leaders and replicas per broker,
// disk use per log dir), topic and partition counts, under-replicated and offline partitions, and the
// brokers' traffic (messages and bytes in/out, requests) from their /metrics.

import { bytes, fmt, useApi } from "../api.js";
import { BrokerRates } from "../components/broker-rates.js";
import { Status } from "../components/layout.js";
import { html } from "../html.js";

interface Overview {
  clusterId: string;
  controllerId: number;
  brokers: Array<{
    id: number;
    host: string;
    port: number;
    rack: string | null;
    controller: boolean;
    leaders: number;
    replicas: number | null;
    logDirs: Array<{
      path: string;
      usedBytes: number;
      totalBytes: number;
      usableBytes: number;
      error: string | null;
    }>;
  }>;
  topics: number;
  internalTopics: number;
  partitions: number;
  underReplicated: number;
  internalUnderReplicated: number;
  offline: number;
}

export function OverviewPage(props: { cluster: string }) {
  const { data, error, version } = useApi<Overview>(
    `/api/clusters/${encodeURIComponent(props.cluster)}/overview`,
    props.cluster,
  );
  const card = (label: string, value: number, id: string, bad = false) =>
    html`<div class=${`card${bad && value > 0 ? " bad" : ""}`}><div class="value" data-testid=${id}>${fmt(value)}</div><div class="label">${label}</div></div>`;
  return html`<section data-version=${version}>
    <h1>Overview</h1>
    <${Status} error=${error} loading=${!data} />
    ${
      data &&
      html`<p class="muted">Cluster id <code>${data.clusterId}</code></p>
        <div class="cards">
          ${card("brokers", data.brokers.length, "brokers")} ${card(`topics (+${data.internalTopics} internal)`, data.topics, "topics")}
          ${card("partitions", data.partitions, "partitions")}
          ${card(data.internalUnderReplicated > 0 ? `under-replicated (${data.internalUnderReplicated} of internal topics)` : "under-replicated", data.underReplicated, "under-replicated", true)}
          ${card("offline", data.offline, "offline", true)}
        </div>
        <h2>Brokers</h2>
        <div class="table-wrap"><table>
          <thead><tr><th>Id</th><th>Host</th><th>Port</th><th>Rack</th><th class="num">Leaders</th><th class="num">Replicas</th><th>Role</th></tr></thead>
          <tbody>${data.brokers.map(
            (b) => html`<tr data-broker=${b.id}>
              <td>${b.id}</td><td>${b.host}</td><td>${b.port}</td><td>${b.rack ?? "–"}</td><td class="num">${b.leaders}</td>
              <td class="num">${b.replicas ?? "–"}</td><td>${b.controller ? html`<span class="tag">controller</span>` : ""}</td></tr>`,
          )}</tbody>
        </table></div>
        <${BrokerRates} cluster=${props.cluster} />
        <h2>Disk use</h2>
        <div class="table-wrap"><table>
          <thead><tr><th>Broker</th><th>Log dir</th><th class="num">Used by logs</th><th class="num">Usable</th><th class="num">Total</th></tr></thead>
          <tbody>${data.brokers.flatMap((b) =>
            b.logDirs.map(
              (d) => html`<tr data-logdir=${`${b.id}:${d.path}`}>
                <td>${b.id}</td><td class="mono">${d.path}</td>
                <td class="num used">${d.error ? html`<span class="error">${d.error}</span>` : bytes(d.usedBytes)}</td>
                <td class="num">${bytes(d.usableBytes)}</td><td class="num">${bytes(d.totalBytes)}</td></tr>`,
            ),
          )}</tbody>
        </table></div>`
    }
  </section>`;
}
