// Message browser page: one partition of a topic from an offset, from a time, or its newest records;
// each record's offset, timestamp, key, value and headers, shown as text, pretty JSON or hex.

import { useState } from "preact/hooks";
import { enc, fmt, useApi } from "../api.js";
import { type BytesFormat, BytesView } from "../components/bytes-view.js";
import { Status } from "../components/layout.js";
import { html } from "../html.js";

interface Messages {
  partitions: number[];
  startOffset: string;
  endOffset: string;
  from: string;
  records: Array<{
    offset: string;
    timestamp: number;
    key: string | null;
    value: string | null;
    headers: Array<{ key: string; value: string | null }>;
  }>;
}

interface Query {
  partition: string;
  mode: "newest" | "offset" | "time";
  offset: string;
  time: string;
  limit: string;
}

function apiPath(cluster: string, topic: string, q: Query): string {
  const p = new URLSearchParams({ partition: q.partition, limit: q.limit });
  if (q.mode === "offset") p.set("offset", q.offset);
  if (q.mode === "time" && q.time !== "") p.set("timestamp", String(new Date(q.time).getTime()));
  return `/api/clusters/${enc(cluster)}/topics/${enc(topic)}/messages?${p}`;
}

export function MessagesPage(props: { cluster: string; topic: string }) {
  const [form, setForm] = useState<Query>({
    partition: "0",
    mode: "newest",
    offset: "0",
    time: "",
    limit: "50",
  });
  const [query, setQuery] = useState<Query>(form);
  const [format, setFormat] = useState<BytesFormat>("auto");
  const { data, error, version } = useApi<Messages>(apiPath(props.cluster, props.topic, query));
  const set = (k: keyof Query) => (e: Event) =>
    setForm({ ...form, [k]: (e.target as HTMLInputElement).value });
  const submit = (e: Event) => {
    e.preventDefault();
    setQuery({ ...form });
  };
  return html`<section data-version=${version}>
    <p><a href=${`#/c/${enc(props.cluster)}/topics/${enc(props.topic)}`}>← Topic ${props.topic}</a></p>
    <h1>Messages of <code>${props.topic}</code></h1>
    <form class="browse" onSubmit=${submit}>
      <label>Partition <select name="partition" value=${form.partition} onChange=${set("partition")}>
        ${(data?.partitions ?? [Number(form.partition)]).map((p) => html`<option value=${p}>${p}</option>`)}
      </select></label>
      <label>From <select name="mode" value=${form.mode} onChange=${set("mode")}>
        <option value="newest">newest</option><option value="offset">offset</option><option value="time">time</option>
      </select></label>
      ${form.mode === "offset" ? html`<label>Offset <input name="offset" inputmode="numeric" value=${form.offset} onInput=${set("offset")} /></label>` : ""}
      ${form.mode === "time" ? html`<label>Time <input name="time" type="datetime-local" step="1" value=${form.time} onInput=${set("time")} /></label>` : ""}
      <label>Limit <input name="limit" inputmode="numeric" size="4" value=${form.limit} onInput=${set("limit")} /></label>
      <button type="submit">Show</button>
      <label>View <select name="format" value=${format} onChange=${(e: Event) => setFormat((e.target as HTMLSelectElement).value as BytesFormat)}>
        <option value="auto">auto</option><option value="text">text</option><option value="json">JSON</option><option value="hex">hex</option>
      </select></label>
    </form>
    <${Status} error=${error} loading=${!data && !error} />
    ${
      data &&
      html`<p class="muted">Partition ${query.partition}: offsets ${fmt(Number(data.startOffset))} to ${fmt(Number(data.endOffset))};
        showing ${data.records.length} from offset ${fmt(Number(data.from))}.</p>
      <div class="table-wrap"><table class="messages">
        <thead><tr><th class="num">Offset</th><th>Timestamp</th><th>Key</th><th>Value</th><th>Headers</th></tr></thead>
        <tbody>${data.records.map(
          (r) => html`<tr data-offset=${r.offset}>
            <td class="num">${r.offset}</td><td>${new Date(r.timestamp).toISOString()}</td>
            <td><${BytesView} value=${r.key} format=${format} testid="key" /></td>
            <td><${BytesView} value=${r.value} format=${format} testid="value" /></td>
            <td>${r.headers.map(
              (h) =>
                html`<div class="header" data-header=${h.key}><b>${h.key}</b>: <${BytesView} value=${h.value} format=${format} testid="header-value" /></div>`,
            )}</td></tr>`,
        )}</tbody>
      </table></div>
      ${data.records.length === 0 ? html`<p class="muted">No records there.</p>` : ""}`
    }
  </section>`;
}
