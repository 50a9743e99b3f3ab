// How the message browser shows a key, value or header value (base64 from the API): as UTF-8 text, as
// pretty-printed JSON (when it parses), or as hex; "auto" picks JSON, then text, then hex.

import { html } from "../html.js";

export type BytesFormat = "auto" | "text" | "json" | "hex";

function bytesOf(b64: string): Uint8Array {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function asText(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

function asJson(text: string | null): string | null {
  if (text === null || !/^\s*[[{"]/.test(text)) return null;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return null;
  }
}

export function asHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(" ");
}

/** The shown string and the format used. */
export function renderBytes(
  b64: string | null,
  format: BytesFormat,
): { text: string; used: BytesFormat | "null" } {
  if (b64 === null) return { text: "null", used: "null" };
  const bytes = bytesOf(b64);
  const text = asText(bytes);
  if (format === "hex") return { text: asHex(bytes), used: "hex" };
  if (format === "text") return text === null ? { text: asHex(bytes), used: "hex" } : { text, used: "text" };
  const json = asJson(text);
  if (json !== null) return { text: json, used: "json" };
  if (format === "json" || text === null)
    return text === null ? { text: asHex(bytes), used: "hex" } : { text, used: "text" };
  return { text, used: "text" };
}

export function BytesView(props: { value: string | null; format: BytesFormat; testid: string }) {
  const r = renderBytes(props.value, props.format);
  return html`<pre class=${`bytes ${r.used}`} data-testid=${props.testid} data-format=${r.used}>${r.text}</pre>`;
}
