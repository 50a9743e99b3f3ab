// Topics page: every topic with partitions, replication factor, messages kept, size on disk, replica
// skew, under-replicated and offline partitions; each links to its detail page. Admins can create a topic.

import { bytes, enc, fmt, useApi } from "../api.js";
import { Status } from "../components/layout.js";
import { CreateTopicButton } from "../components/topic-actions.js";
import { html } from "../html.js";

interface TopicRow {
  name: string;
  internal: boolean;
  partitions: number;
  replicationFactor: number;
  underReplicated: number;
  offline: number;
  messages: number;
  sizeBytes: number | null;
  skewPercent: number;
}

export function TopicsPage(props: { cluster: string }) {
  const { data, error, version, reload } = useApi<TopicRow[]>(
    `/api/clusters/${enc(props.cluster)}/topics`,
    props.cluster,
  );
  return html`<section data-version=${version}>
    <h1>Topics</h1>
    <div class="actions"><${CreateTopicButton} cluster=${props.cluster} done=${reload} /></div>
    <${Status} error=${error} loading=${!data} />
    ${
      data &&
      html`<div class="table-wrap"><table>
        <thead><tr><th>Topic</th><th class="num">Partitions</th><th class="num">Replication</th><th class="num">Messages</th><th class="num">Size</th><th class="num">Skew</th><th class="num">Under-replicated</th><th class="num">Offline</th></tr></thead>
        <tbody>${data.map(
          (t) => html`<tr data-topic=${t.name}>
            <td><a href=${`#/c/${enc(props.cluster)}/topics/${enc(t.name)}`}>${t.name}</a>${t.internal ? html` <span class="tag">internal</span>` : ""}</td>
            <td class="num">${t.partitions}</td><td class="num">${t.replicationFactor}</td><td class="num messages">${fmt(t.messages)}</td>
            <td class="num size">${t.sizeBytes === null ? "–" : bytes(t.sizeBytes)}</td><td class=${`num skew${t.skewPercent > 0 ? " warn" : ""}`}>${t.skewPercent}%</td>
            <td class=${`num${t.underReplicated > 0 ? " warn" : ""}`}>${t.underReplicated}</td>
            <td class=${`num${t.offline > 0 ? " warn" : ""}`}>${t.offline}</td></tr>`,
        )}</tbody>
      </table></div>`
    }
  </section>`;
}
