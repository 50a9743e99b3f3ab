// The topic actions' buttons and dialogs: create a topic (topics page); add partitions, send a test
// message and delete the topic (topic page); set or remove one config (topic page's config table).
// Each goes through ActionDialog and calls the JSON API; `done` refreshes the page.

import { useState } from "preact/hooks";
import { enc, postJson } from "../api.js";
import { html } from "../html.js";
import { ActionButton, ActionDialog } from "./action-dialog.js";

const value = (set: (v: string) => void) => (e: Event) => set((e.target as HTMLInputElement).value);

/** "k=v" lines → {k: v}; throws on a line without "=". */
function parseConfigs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "")) {
    const eq = line.indexOf("=");
    if (eq <= 0) throw new Error(`configs: '${line}' is not name=value`);
    out[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return out;
}

function CreateTopicDialog(props: { cluster: string; close: () => void; done: () => void }) {
  const [name, setName] = useState("");
  const [partitions, setPartitions] = useState("1");
  const [rf, setRf] = useState("1");
  const [configs, setConfigs] = useState("");
  return html`<${ActionDialog} title="Create topic" confirmLabel="Create" onClose=${props.close}
    onConfirm=${async () => {
      await postJson(`/api/clusters/${enc(props.cluster)}/topics`, {
        name,
        partitions: Number(partitions),
        replicationFactor: Number(rf),
        configs: parseConfigs(configs),
      });
      props.done();
    }}>
    <label>Name <input name="name" value=${name} onInput=${value(setName)} /></label>
    <label>Partitions <input name="partitions" inputmode="numeric" value=${partitions} onInput=${value(setPartitions)} /></label>
    <label>Replication factor <input name="replicationFactor" inputmode="numeric" value=${rf} onInput=${value(setRf)} /></label>
    <label>Configs (name=value a line) <textarea name="configs" rows="3" value=${configs} onInput=${value(setConfigs)}></textarea></label>
  <//>`;
}

export function CreateTopicButton(props: { cluster: string; done: () => void }) {
  return html`<${ActionButton} label="Create topic" name="create-topic"
    dialog=${(close: () => void) => html`<${CreateTopicDialog} cluster=${props.cluster} close=${close} done=${props.done} />`} />`;
}

function AddPartitionsDialog(props: {
  cluster: string;
  topic: string;
  current: number;
  close: () => void;
  done: () => void;
}) {
  const [count, setCount] = useState(String(props.current + 1));
  return html`<${ActionDialog} title=${`Add partitions to ${props.topic}`} confirmLabel="Add partitions" onClose=${props.close}
    onConfirm=${async () => {
      await postJson(`/api/clusters/${enc(props.cluster)}/topics/${enc(props.topic)}/partitions`, {
        totalCount: Number(count),
      });
      props.done();
    }}>
    <p>The topic has ${props.current} partitions. Partitions can be added, never removed; keys may map to other partitions afterwards.</p>
    <label>New total <input name="totalCount" inputmode="numeric" value=${count} onInput=${value(setCount)} /></label>
  <//>`;
}

function SendMessageDialog(props: { cluster: string; topic: string; close: () => void; done: () => void }) {
  const [partition, setPartition] = useState("");
  const [key, setKey] = useState("");
  const [val, setVal] = useState("");
  const [headers, setHeaders] = useState("");
  return html`<${ActionDialog} title=${`Send a test message to ${props.topic}`} confirmLabel="Send" onClose=${props.close}
    onConfirm=${async () => {
      await postJson(`/api/clusters/${enc(props.cluster)}/topics/${enc(props.topic)}/messages`, {
        ...(partition === "" ? {} : { partition: Number(partition) }),
        ...(key === "" ? {} : { key }),
        value: val,
        headers: parseConfigs(headers),
      });
      props.done();
    }}>
    <label>Partition (empty: the producer's choice) <input name="partition" inputmode="numeric" value=${partition} onInput=${value(setPartition)} /></label>
    <label>Key <input name="key" value=${key} onInput=${value(setKey)} /></label>
    <label>Value <textarea name="value" rows="4" value=${val} onInput=${value(setVal)}></textarea></label>
    <label>Headers (name=value a line) <textarea name="headers" rows="2" value=${headers} onInput=${value(setHeaders)}></textarea></label>
  <//>`;
}

export function TopicActions(props: {
  cluster: string;
  topic: string;
  partitions: number;
  done: () => void;
  deleted: () => void;
}) {
  const base = `/api/clusters/${enc(props.cluster)}/topics/${enc(props.topic)}`;
  return html`<div class="actions">
    <${ActionButton} label="Add partitions" name="add-partitions"
      dialog=${(close: () => void) => html`<${AddPartitionsDialog} cluster=${props.cluster} topic=${props.topic} current=${props.partitions} close=${close} done=${props.done} />`} />
    <${ActionButton} label="Send test message" name="send-message"
      dialog=${(close: () => void) => html`<${SendMessageDialog} cluster=${props.cluster} topic=${props.topic} close=${close} done=${props.done} />`} />
    <${ActionButton} label="Delete topic" name="delete-topic" danger=${true}
      dialog=${(
        close: () => void,
      ) => html`<${ActionDialog} title=${`Delete topic ${props.topic}`} confirmLabel="Delete topic" danger=${true}
        typeToConfirm=${props.topic} onClose=${close}
        onConfirm=${async () => {
          await postJson(`${base}/delete`, {});
          props.deleted();
        }}>
        <p>Every partition of <b>${props.topic}</b> and all its records are deleted. This cannot be undone.</p>
      <//>`} />
  </div>`;
}

export function EditConfigButton(props: {
  cluster: string;
  topic: string;
  name: string;
  value: string | null;
  isDefault: boolean;
  done: () => void;
}) {
  const [val, setVal] = useState(props.value ?? "");
  const [remove, setRemove] = useState(false);
  const base = `/api/clusters/${enc(props.cluster)}/topics/${enc(props.topic)}/configs`;
  return html`<${ActionButton} label="Edit" name=${`edit-${props.name}`}
    dialog=${(
      close: () => void,
    ) => html`<${ActionDialog} title=${`${props.topic}: ${props.name}`} confirmLabel="Apply" onClose=${close}
      onConfirm=${async () => {
        await postJson(base, remove ? { delete: [props.name] } : { set: { [props.name]: val } });
        props.done();
      }}>
      <p>Now: <code>${props.value ?? "(sensitive)"}</code>${props.isDefault ? " (default)" : ""}</p>
      <label>New value <input name="config-value" value=${val} disabled=${remove} onInput=${value(setVal)} /></label>
      ${!props.isDefault && html`<label class="check"><input type="checkbox" name="config-delete" checked=${remove} onChange=${(e: Event) => setRemove((e.target as HTMLInputElement).checked)} /> Remove the override (back to the default)</label>`}
    <//>`} />`;
}
