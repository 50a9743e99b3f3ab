// Delivers an alert to its webhook: an HTTP POST of the JSON event, 5 s at most; the outcome ("ok",
// "HTTP 500", "error: …") is returned for the alert history, never thrown.

export interface AlertEvent {
  readonly ts: number;
  readonly rule: string;
  readonly type: string;
  readonly cluster: string;
  readonly subject: string;
  /** "firing" or "resolved". */
  readonly state: "firing" | "resolved";
  readonly value: number;
  readonly threshold: number;
  readonly message: string;
}

export async function deliver(url: string, event: AlertEvent): Promise<string> {
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": "tributary-console" },
      body: JSON.stringify(event),
      signal: AbortSignal.timeout(5_000),
    });
    await res.arrayBuffer().catch(() => {});
    return res.ok ? "ok" : `HTTP ${res.status}`;
  } catch (e) {
    const cause = (e as Error & { cause?: Error }).cause;
    return `error: ${cause?.message ?? (e as Error).message}`;
  }
}
