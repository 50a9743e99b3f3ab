// Prometheus text exposition format, version 0.0.4 (what a Prometheus server scrapes from /metrics):
// per metric family a `# HELP name text` line, a `# TYPE name type` line, then one line per sample,
// `name{label="value",…} value`. Owns the family/sample model, the name checks and the escaping rules:
// label values escape backslash, double quote and line feed; HELP text escapes backslash and line feed;
// values are Go-style floats (`+Inf`, `-Inf`, `NaN`). A summary's samples are the family name with a
// `quantile` label plus `<name>_sum` and `<name>_count`.

export const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export type MetricType = "counter" | "gauge" | "summary" | "untyped";

export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  /** Appended to the family name ("_sum", "_count" of a summary); default none. */
  readonly suffix?: string;
  readonly labels?: Labels;
  readonly value: number;
}

export interface MetricFamily {
  readonly name: string;
  readonly help: string;
  readonly type: MetricType;
  readonly samples: readonly Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export function isValidMetricName(name: string): boolean {
  return METRIC_NAME.test(name);
}

export function escapeLabelValue(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

export function escapeHelp(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

export function formatValue(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Number.POSITIVE_INFINITY) return "+Inf";
  if (v === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(v);
}

/** The text of `families`, one family after the other; throws on an invalid metric or label name. */
export function writeExposition(families: Iterable<MetricFamily>): string {
  const out: string[] = [];
  for (const f of families) {
    if (!METRIC_NAME.test(f.name)) throw new Error(`invalid metric name ${JSON.stringify(f.name)}`);
    out.push(`# HELP ${f.name} ${escapeHelp(f.help)}\n# TYPE ${f.name} ${f.type}\n`);
    for (const s of f.samples) {
      let line = s.suffix === undefined ? f.name : f.name + s.suffix;
      const labels = s.labels;
      if (labels !== undefined) {
        const parts: string[] = [];
        for (const k in labels) {
          if (!LABEL_NAME.test(k) || k.startsWith("__"))
            throw new Error(`invalid label name ${JSON.stringify(k)} on ${f.name}`);
          parts.push(`${k}="${escapeLabelValue(labels[k])}"`);
        }
        if (parts.length > 0) line += `{${parts.join(",")}}`;
      }
      out.push(`${line} ${formatValue(s.value)}\n`);
    }
  }
  return out.join("");
}
