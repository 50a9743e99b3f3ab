// Topic detail page: per partition its leader, replicas, in-sync replicas, start and end offsets, with
// under-replicated and offline partitions marked; messages in per second and log size over the last
// hour, from the history; its configs; and (for admins) add partitions, send a test message, delete
// the topic, edit a config.

import { enc, fmt, useApi } from "../api.js";
import { Status } from "../components/layout.js";
import { TimeChart } from "../components/time-chart.js";
import { EditConfigButton, TopicActions } from "../components/topic-actions.js";
import { html } from "../html.js";

interface TopicDetail {
  name: string;
  history: Array<{ ts: number; logSize: number; endOffsetSum: number }>;
  topicId: string;
  internal: boolean;
  partitions: Array<{
    partition: number;
    leader: number;
    replicas: number[];
    isr: number[];
    offline: number[];
    underReplicated: boolean;
    startOffset: number;
    endOffset: number;
  }>;
}

/** Messages in per second between consecutive samples (null for the first). */
function messagesIn(points: TopicDetail["history"]): Array<number | null> {
  return points.map((p, i) => {
    if (i === 0) return null;
    const dt = (p.ts - points[i - 1].ts) / 1000;
    return dt > 0 ? Math.max(0, p.endOffsetSum - points[i - 1].endOffsetSum) / dt : null;
  });
}

export function TopicPage(props: { cluster: string; topic: string }) {
  const { data, error, version, reload } = useApi<TopicDetail>(
    `/api/clusters/${enc(props.cluster)}/topics/${enc(props.topic)}`,
    props.cluster,
  );
  const configs = useApi<
    Array<{ name: string; value: string | null; source: string; isDefault: boolean; readOnly: boolean }>
  >(`/api/clusters/${enc(props.cluster)}/topics/${enc(props.topic)}/configs`);
  const refresh = () => {
    reload();
    configs.reload();
  };
  return html`<section data-version=${version}>
    <p><a href=${`#/c/${enc(props.cluster)}/topics`}>← Topics</a></p>
    <h1>Topic <code>${props.topic}</code></h1>
    <${Status} error=${error} loading=${!data} />
    ${
      data &&
      html`<p class="muted">Topic id <code>${data.topicId}</code> · ${data.partitions.length} partitions ·${" "}
        <a href=${`#/c/${enc(props.cluster)}/messages/${enc(props.topic)}`} data-testid="browse">Browse messages</a></p>
      <${TopicActions} cluster=${props.cluster} topic=${props.topic} partitions=${data.partitions.length} done=${refresh}
        deleted=${() => {
          location.hash = `#/c/${enc(props.cluster)}/topics`;
        }} />
      <h2>Messages in and log size</h2>
      <${TimeChart}
        testid="topic-chart"
        times=${data.history.map((p) => p.ts)}
        leftLabel="messages/s"
        rightLabel="messages kept"
        series=${[
          { label: "messages in /s", stroke: "#1e8449", axis: "left", values: messagesIn(data.history) },
          {
            label: "log size",
            stroke: "#7d3c98",
            axis: "right",
            dash: [6, 4],
            values: data.history.map((p) => p.logSize),
          },
        ]}
      />
      <h2>Partitions</h2>
      <div class="table-wrap"><table>
        <thead><tr><th class="num">Partition</th><th class="num">Leader</th><th>Replicas</th><th>ISR</th><th class="num">Start offset</th><th class="num">End offset</th><th class="num">Messages</th></tr></thead>
        <tbody>${data.partitions.map(
          (
            p,
          ) => html`<tr data-partition=${p.partition} class=${p.leader < 0 ? "offline" : p.underReplicated ? "under" : ""}>
            <td class="num">${p.partition}</td><td class="num">${p.leader < 0 ? "none" : p.leader}</td>
            <td>${p.replicas.join(", ")}</td><td>${p.isr.join(", ")}${p.underReplicated ? html` <span class="tag warn">under-replicated</span>` : ""}</td>
            <td class="num start">${fmt(p.startOffset)}</td><td class="num end">${fmt(p.endOffset)}</td>
            <td class="num">${fmt(Math.max(0, p.endOffset - Math.max(0, p.startOffset)))}</td></tr>`,
        )}</tbody>
      </table></div>
      <h2>Configs</h2>
      ${configs.error && html`<p class="error">${configs.error}</p>`}
      ${
        configs.data &&
        html`<div class="table-wrap"><table data-testid="configs">
          <thead><tr><th>Name</th><th>Value</th><th>Source</th><th></th></tr></thead>
          <tbody>${configs.data.map(
            (c) => html`<tr data-config=${c.name} class=${c.isDefault ? "" : "override"}>
              <td class="mono">${c.name}</td><td class="mono value">${c.value ?? "(sensitive)"}</td><td>${c.source}</td>
              <td>${!c.readOnly && html`<${EditConfigButton} cluster=${props.cluster} topic=${props.topic} name=${c.name} value=${c.value} isDefault=${c.isDefault} done=${refresh} />`}</td></tr>`,
          )}</tbody></table></div>`
      }`
    }
  </section>`;
}
