// Consumer groups page: every group with its state, members, topics, total lag and the age of its
// oldest unconsumed record, from the latest collector sample; refreshed after each sample.

import { enc, fmt, groupAge, useApi } from "../api.js";
import { Status } from "../components/layout.js";
import { html } from "../html.js";

interface GroupList {
  sampledAt: number;
  groups: Array<{
    groupId: string;
    state: string;
    members: number;
    topics: string[];
    totalLag: number;
    maxLagMs: number | null;
    lagMsUnknown: number;
  }>;
}

export function GroupsPage(props: { cluster: string }) {
  const { data, error, version } = useApi<GroupList>(
    `/api/clusters/${enc(props.cluster)}/groups`,
    props.cluster,
  );
  return html`<section data-version=${version}>
    <h1>Consumer groups</h1>
    <${Status} error=${error} loading=${!data} />
    ${
      data &&
      html`<p class="muted">Sampled at ${new Date(data.sampledAt).toLocaleTimeString()}</p>
      <div class="table-wrap"><table>
        <thead><tr><th>Group</th><th>State</th><th class="num">Members</th><th>Topics</th><th class="num">Total lag</th><th class="num">Lag (time)</th></tr></thead>
        <tbody>${data.groups.map(
          (g) => html`<tr data-group=${g.groupId}>
            <td><a href=${`#/c/${enc(props.cluster)}/groups/${enc(g.groupId)}`}>${g.groupId}</a></td>
            <td><span class=${`state ${g.state}`}>${g.state}</span></td><td class="num">${g.members}</td>
            <td>${g.topics.join(", ")}</td><td class="num total-lag">${fmt(g.totalLag)}</td><td class="num lag-time" title=${groupAge(g.maxLagMs, g.lagMsUnknown).title}>${groupAge(g.maxLagMs, g.lagMsUnknown).text}</td></tr>`,
        )}</tbody>
      </table></div>
      ${data.groups.length === 0 ? html`<p class="muted">No consumer groups.</p>` : ""}`
    }
  </section>`;
}
