// Kafka's AbstractResponse.errorCounts, which feeds the ErrorsPerSec meters of RequestMetrics: how many
// times each error code appears in a response — every `errorCode` field of the response body, at the top
// and nested (per topic, partition, group, transaction marker, …), NONE included, as Kafka's per-API
// errorCounts count them. Record bytes (Buffers) are not walked.

export function responseErrorCounts(body: unknown): Map<number, number> {
  const counts = new Map<number, number>();
  const stack: unknown[] = [body];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== "object" || v instanceof Uint8Array) continue;
    if (Array.isArray(v)) {
      for (const e of v) if (e !== null && typeof e === "object") stack.push(e);
      continue;
    }
    const o = v as Record<string, unknown>;
    for (const k in o) {
      const f = o[k];
      if (k === "errorCode") {
        if (typeof f === "number") counts.set(f, (counts.get(f) ?? 0) + 1);
      } else if (f !== null && typeof f === "object") {
        stack.push(f);
      }
    }
  }
  return counts;
}
