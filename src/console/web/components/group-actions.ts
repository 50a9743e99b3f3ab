// The consumer-group actions: reset offsets (a scenario, an optional topic; "Preview" runs a dry run
// and shows the plan, "Reset offsets" executes it) and delete the group (type its name to confirm).

import { useState } from "preact/hooks";
import { enc, fmt, postJson } from "../api.js";
import { html } from "../html.js";
import { ActionButton, ActionDialog } from "./action-dialog.js";

interface Plan {
  plan: Array<{ topic: string; partition: number; currentOffset: number | null; newOffset: number }>;
}

const SCENARIOS = [
  ["to-earliest", "to earliest"],
  ["to-latest", "to latest"],
  ["to-current", "to current"],
  ["to-offset", "to offset"],
  ["shift-by", "shift by"],
  ["to-datetime", "to date/time"],
] as const;

function ResetDialog(props: { cluster: string; group: string; close: () => void; done: () => void }) {
  const [scenario, setScenario] = useState("to-earliest");
  const [val, setVal] = useState("0");
  const [topic, setTopic] = useState("");
  const [preview, setPreview] = useState<Plan | undefined>();
  const [previewError, setPreviewError] = useState<string | undefined>();
  const path = `/api/clusters/${enc(props.cluster)}/groups/${enc(props.group)}/reset-offsets`;
  const request = (dryRun: boolean) => ({
    scenario,
    ...(scenario === "to-offset" || scenario === "shift-by" ? { value: Number(val) } : {}),
    ...(scenario === "to-datetime" ? { value: new Date(val).getTime() } : {}),
    ...(topic === "" ? {} : { topic }),
    dryRun,
  });
  const change = (set: (v: string) => void) => (e: Event) => {
    set((e.target as HTMLInputElement).value);
    setPreview(undefined);
  };
  const runPreview = async () => {
    setPreviewError(undefined);
    try {
      setPreview(await postJson<Plan>(path, request(true)));
    } catch (e) {
      setPreviewError((e as Error).message);
    }
  };
  return html`<${ActionDialog} title=${`Reset offsets of ${props.group}`} confirmLabel="Reset offsets" onClose=${props.close}
    onConfirm=${async () => {
      if (!preview) throw new Error("preview the new offsets first");
      await postJson(path, request(false));
      props.done();
    }}>
    <label>Scenario <select name="scenario" value=${scenario} onChange=${change(setScenario)}>
      ${SCENARIOS.map(([v, label]) => html`<option value=${v}>${label}</option>`)}
    </select></label>
    ${(scenario === "to-offset" || scenario === "shift-by") && html`<label>${scenario === "to-offset" ? "Offset" : "Shift by"} <input name="value" inputmode="numeric" value=${val} onInput=${change(setVal)} /></label>`}
    ${scenario === "to-datetime" && html`<label>Date/time <input name="value" type="datetime-local" step="1" value=${val} onInput=${change(setVal)} /></label>`}
    <label>Topic (empty: all the group's partitions) <input name="topic" value=${topic} onInput=${change(setTopic)} /></label>
    <p><button type="button" name="preview" onClick=${runPreview}>Preview (dry run)</button></p>
    ${previewError && html`<p class="error" role="alert">${previewError}</p>`}
    ${
      preview &&
      html`<div class="table-wrap"><table data-testid="reset-plan">
        <thead><tr><th>Topic</th><th class="num">Partition</th><th class="num">Current</th><th class="num">New offset</th></tr></thead>
        <tbody>${preview.plan.map(
          (p) => html`<tr data-partition=${p.partition}><td>${p.topic}</td><td class="num">${p.partition}</td>
            <td class="num">${p.currentOffset === null ? "–" : fmt(p.currentOffset)}</td><td class="num new-offset">${fmt(p.newOffset)}</td></tr>`,
        )}</tbody></table></div>`
    }
  <//>`;
}

export function GroupActions(props: {
  cluster: string;
  group: string;
  done: () => void;
  deleted: () => void;
}) {
  return html`<div class="actions">
    <${ActionButton} label="Reset offsets" name="reset-offsets"
      dialog=${(close: () => void) => html`<${ResetDialog} cluster=${props.cluster} group=${props.group} close=${close} done=${props.done} />`} />
    <${ActionButton} label="Delete group" name="delete-group" danger=${true}
      dialog=${(
        close: () => void,
      ) => html`<${ActionDialog} title=${`Delete group ${props.group}`} confirmLabel="Delete group" danger=${true}
        typeToConfirm=${props.group} onClose=${close}
        onConfirm=${async () => {
          await postJson(`/api/clusters/${enc(props.cluster)}/groups/${enc(props.group)}/delete`, {});
          props.deleted();
        }}>
        <p>The group <b>${props.group}</b> and its committed offsets are deleted (only an empty group can be).</p>
      <//>`} />
  </div>`;
}
