// Test-only: a strict parser of the Prometheus text exposition format 0.0.4, written from the format's
// description, independent of the writer under test. It rejects what a Prometheus server would reject or
// what the format does not allow: a sample before its family's TYPE, a TYPE or HELP given twice or after
// samples of the family, a sample whose name does not belong to the current family (for a summary: the
// name with a `quantile` label, `_sum`, `_count`), bad metric or label names, bad escapes in label values,
// unparseable values, duplicate series, and (being strict) empty lines and a missing final line feed.

export interface ParsedSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface ParsedFamily {
  readonly name: string;
  help?: string;
  type: string;
  readonly samples: ParsedSample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);

function fail(lineNo: number, line: string, why: string): never {
  throw new Error(`line ${lineNo}: ${why}: ${JSON.stringify(line)}`);
}

function parseValue(s: string): number | undefined {
  if (s === "+Inf") return Number.POSITIVE_INFINITY;
  if (s === "-Inf") return Number.NEGATIVE_INFINITY;
  if (s === "NaN") return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) return undefined;
  return Number(s);
}

/** Parses `text`; throws on the first violation. Families keyed by name, in order. */
export function parseExposition(text: string): Map<string, ParsedFamily> {
  const families = new Map<string, ParsedFamily>();
  if (text.length > 0 && !text.endsWith("\n")) throw new Error("the text does not end with a line feed");
  const lines = text.split("\n");
  lines.pop();
  let current: ParsedFamily | undefined;
  const seenSeries = new Set<string>();
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n];
    const lineNo = n + 1;
    if (line === "") fail(lineNo, line, "empty line");
    if (line.startsWith("#")) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) {
        if (/^# (HELP|TYPE)/.test(line)) fail(lineNo, line, "malformed HELP/TYPE");
        continue; // a comment
      }
      const [, kind, name, rest] = m;
      if (!METRIC_NAME.test(name)) fail(lineNo, line, "invalid metric name");
      let f = families.get(name);
      if (f === undefined) {
        f = { name, type: "", samples: [] };
        families.set(name, f);
      } else if (f !== current || f.samples.length > 0) {
        fail(lineNo, line, `${kind} for ${name} after its samples or another family`);
      }
      current = f;
      if (kind === "HELP") {
        if (f.help !== undefined) fail(lineNo, line, "second HELP");
        if (/\\[^\\n]/.test(rest.replace(/\\\\/g, ""))) fail(lineNo, line, "bad escape in HELP");
        f.help = rest.replace(/\\n|\\\\/g, (e) => (e === "\\n" ? "\n" : "\\"));
      } else {
        if (f.type !== "") fail(lineNo, line, "second TYPE");
        if (!TYPES.has(rest)) fail(lineNo, line, "unknown type");
        f.type = rest;
      }
      continue;
    }
    // name{labels} value [timestamp]
    const nm = /^([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(line);
    if (!nm) fail(lineNo, line, "no metric name");
    const name = nm[1];
    let pos = name.length;
    const labels: Record<string, string> = {};
    if (line[pos] === "{") {
      pos++;
      while (line[pos] !== "}") {
        const lm = /^([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(line.slice(pos));
        if (!lm || !LABEL_NAME.test(lm[1])) fail(lineNo, line, "bad label name");
        pos += lm[0].length;
        let value = "";
        for (;;) {
          const c = line[pos];
          if (c === undefined) fail(lineNo, line, "unterminated label value");
          if (c === '"') break;
          if (c === "\\") {
            const e = line[pos + 1];
            if (e === "\\") value += "\\";
            else if (e === '"') value += '"';
            else if (e === "n") value += "\n";
            else fail(lineNo, line, "bad escape in label value");
            pos += 2;
          } else {
            value += c;
            pos++;
          }
        }
        pos++;
        if (lm[1] in labels) fail(lineNo, line, "label given twice");
        labels[lm[1]] = value;
        if (line[pos] === ",") pos++;
        else if (line[pos] !== "}") fail(lineNo, line, "expected , or }");
      }
      pos++;
    }
    if (line[pos] !== " ") fail(lineNo, line, "expected a space before the value");
    const parts = line.slice(pos + 1).split(" ");
    if (parts.length > 2) fail(lineNo, line, "too many fields");
    const value = parseValue(parts[0]);
    if (value === undefined) fail(lineNo, line, "bad value");
    if (parts.length === 2 && !/^-?\d+$/.test(parts[1])) fail(lineNo, line, "bad timestamp");
    if (current === undefined || current.type === "") fail(lineNo, line, "sample before its family's TYPE");
    const base = current.name;
    let belongs = name === base;
    if (current.type === "summary") {
      belongs = (name === base && "quantile" in labels) || name === `${base}_sum` || name === `${base}_count`;
      if (name === base && parseValue(labels.quantile ?? "") === undefined)
        fail(lineNo, line, "bad quantile label");
    } else if (current.type === "histogram") {
      belongs = name === `${base}_bucket` || name === `${base}_sum` || name === `${base}_count`;
    }
    if (!belongs) fail(lineNo, line, `sample not of family ${base} (${current.type})`);
    const series = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seenSeries.has(series)) fail(lineNo, line, "duplicate series");
    seenSeries.add(series);
    current.samples.push({ name, labels, value });
  }
  return families;
}

/** The value of the one sample `name` whose labels equal `labels` exactly, or undefined. */
export function sampleValue(
  families: Map<string, ParsedFamily>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const want = JSON.stringify(Object.entries(labels).sort());
  for (const f of families.values()) {
    for (const s of f.samples) {
      if (s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === want) return s.value;
    }
  }
  return undefined;
}
