// The confirmation every action goes through: a modal that says what will happen, may ask to type the
// name of what is deleted, runs the action on "confirm", and shows its one-line error or closes on
// success. ActionButton shows it only to an admin.

import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { useMe } from "../api.js";
import { html } from "../html.js";

export interface DialogProps {
  title: string;
  confirmLabel: string;
  /** When set, the confirm button waits until this text is typed. */
  typeToConfirm?: string;
  danger?: boolean;
  onConfirm: () => Promise<void>;
  onClose: () => void;
  children?: ComponentChildren;
}

export function ActionDialog(props: DialogProps) {
  const [typed, setTyped] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const ready = !busy && (props.typeToConfirm === undefined || typed === props.typeToConfirm);
  const confirm = async (e: Event) => {
    e.preventDefault();
    if (!ready) return;
    setBusy(true);
    setError(undefined);
    try {
      await props.onConfirm();
      props.onClose();
    } catch (x) {
      setError((x as Error).message);
      setBusy(false);
    }
  };
  return html`<div class="backdrop" onClick=${(e: Event) => e.target === e.currentTarget && props.onClose()}>
    <form class="dialog" role="dialog" aria-modal="true" aria-label=${props.title} onSubmit=${confirm}>
      <h2>${props.title}</h2>
      ${props.children}
      ${
        props.typeToConfirm !== undefined &&
        html`<label class="confirm-name">Type <code>${props.typeToConfirm}</code> to confirm
          <input name="confirm-name" autocomplete="off" value=${typed} onInput=${(e: Event) => setTyped((e.target as HTMLInputElement).value)} /></label>`
      }
      ${error && html`<p class="error" role="alert" data-testid="action-error">${error}</p>`}
      <div class="buttons">
        <button type="button" onClick=${props.onClose}>Cancel</button>
        <button type="submit" name="confirm" class=${props.danger ? "danger" : "primary"} disabled=${!ready}>${busy ? "Working…" : props.confirmLabel}</button>
      </div>
    </form>
  </div>`;
}

/** A button that opens `dialog` (a render function given a close callback); shown to admins only. */
export function ActionButton(props: {
  label: string;
  name: string;
  danger?: boolean;
  dialog: (close: () => void) => unknown;
}) {
  const me = useMe();
  const [open, setOpen] = useState(false);
  if (me?.role !== "admin") return null;
  return html`<button type="button" name=${props.name} class=${props.danger ? "danger" : ""} onClick=${() => setOpen(true)}>${props.label}</button>
    ${open && props.dialog(() => setOpen(false))}`;
}
