// Audit log page: every action (and login) with its time, user, cluster, target, parameters and
// outcome, newest first.

import { useApi } from "../api.js";
import { Status } from "../components/layout.js";
import { html } from "../html.js";

interface Entry {
  ts: number;
  user: string;
  cluster: string;
  action: string;
  target: string;
  details: string;
  outcome: string;
}

export function AuditPage(props: { cluster: string }) {
  const { data, error, version } = useApi<Entry[]>("/api/audit", props.cluster);
  return html`<section data-version=${version}>
    <h1>Audit log</h1>
    <${Status} error=${error} loading=${!data && !error} />
    ${
      data &&
      html`<div class="table-wrap"><table data-testid="audit">
        <thead><tr><th>Time</th><th>User</th><th>Cluster</th><th>Action</th><th>Target</th><th>Outcome</th><th>Parameters</th></tr></thead>
        <tbody>${data.map(
          (e) => html`<tr data-action=${e.action}>
            <td>${new Date(e.ts).toLocaleString()}</td><td class="user">${e.user}</td><td>${e.cluster}</td>
            <td class="action">${e.action}</td><td class="target">${e.target}</td>
            <td class=${`outcome${e.outcome.startsWith("error") ? " error" : ""}`}>${e.outcome}</td>
            <td class="mono details">${e.details}</td></tr>`,
        )}</tbody>
      </table></div>
      ${data.length === 0 ? html`<p class="muted">No actions yet.</p>` : ""}`
    }
  </section>`;
}
