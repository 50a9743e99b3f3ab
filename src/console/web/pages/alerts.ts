// Alerts page: the configured rules, the alerts firing now, and the history of alerts starting and
// stopping to fire with how their webhook delivery went; refreshed after every sample.

import { useApi } from "../api.js";
import { Status } from "../components/layout.js";
import { html } from "../html.js";

interface Alerts {
  rules: Array<{
    name: string;
    type: string;
    threshold: number;
    group: string | null;
    cluster: string | null;
    webhook: string | null;
  }>;
  active: Array<{
    rule: string;
    cluster: string;
    subject: string;
    value: number;
    message: string;
    since: number;
  }>;
  events: Array<{
    ts: number;
    rule: string;
    cluster: string;
    subject: string;
    state: string;
    message: string;
    delivery: string;
  }>;
}

export function AlertsPage(props: { cluster: string }) {
  const { data, error, version } = useApi<Alerts>("/api/alerts", props.cluster);
  return html`<section data-version=${version}>
    <h1>Alerts</h1>
    <${Status} error=${error} loading=${!data && !error} />
    ${
      data &&
      html`<h2>Firing now</h2>
      ${
        data.active.length === 0
          ? html`<p class="muted" data-testid="no-alerts">Nothing is firing.</p>`
          : html`<div class="table-wrap"><table data-testid="active-alerts">
            <thead><tr><th>Rule</th><th>Cluster</th><th>Subject</th><th>Since</th><th>Message</th></tr></thead>
            <tbody>${data.active.map(
              (
                a,
              ) => html`<tr class="firing" data-rule=${a.rule} data-subject=${a.subject}><td>${a.rule}</td><td>${a.cluster}</td>
                <td>${a.subject}</td><td>${new Date(a.since).toLocaleTimeString()}</td><td>${a.message}</td></tr>`,
            )}</tbody></table></div>`
      }
      <h2>Rules</h2>
      ${
        data.rules.length === 0
          ? html`<p class="muted" data-testid="no-rules">No alert rules are configured (${"console.alert.<name>.type=…"}, docs/console.md).</p>`
          : html`<div class="table-wrap"><table>
            <thead><tr><th>Name</th><th>Type</th><th class="num">Threshold</th><th>Groups</th><th>Cluster</th><th>Webhook</th></tr></thead>
            <tbody>${data.rules.map(
              (
                r,
              ) => html`<tr data-rule=${r.name}><td>${r.name}</td><td>${r.type}</td><td class="num">${r.threshold}</td>
                <td>${r.group ?? "all"}</td><td>${r.cluster ?? "all"}</td><td>${r.webhook ?? "–"}</td></tr>`,
            )}</tbody></table></div>`
      }
      <h2>History</h2>
      <div class="table-wrap"><table data-testid="alert-history">
        <thead><tr><th>Time</th><th>Rule</th><th>Cluster</th><th>Subject</th><th>State</th><th>Message</th><th>Webhook</th></tr></thead>
        <tbody>${data.events.map(
          (
            e,
          ) => html`<tr data-rule=${e.rule} data-state=${e.state}><td>${new Date(e.ts).toLocaleString()}</td><td>${e.rule}</td>
            <td>${e.cluster}</td><td>${e.subject}</td><td class=${`state-${e.state}`}>${e.state}</td><td>${e.message}</td><td>${e.delivery}</td></tr>`,
        )}</tbody></table></div>`
    }
  </section>`;
}
