// Java properties text (Kafka's Utils.loadProps / java.util.Properties.load, for --producer.config,
// --consumer.config and friends): `key=value`, `key: value` or `key value` lines, `#`/`!` comments,
// backslash line continuations and escapes. Shared by the producer and consumer tools.

import { readFileSync } from "node:fs";

function unescapeJava(s: string): string {
  return s.replace(/\\(u[0-9a-fA-F]{4}|.)/g, (_, c: string) => {
    if (c.length === 5) return String.fromCharCode(Number.parseInt(c.slice(1), 16));
    return c === "t" ? "\t" : c === "n" ? "\n" : c === "r" ? "\r" : c === "f" ? "\f" : c;
  });
}

/** Parses properties text into key → value (later keys win). */
export function parseProperties(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split(/\r\n|\r|\n/);
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i].replace(/^[ \t\f]+/, "");
    if (line === "" || line.startsWith("#") || line.startsWith("!")) continue;
    // An odd number of trailing backslashes continues the line.
    while (/(^|[^\\])(\\\\)*\\$/.test(line) && i + 1 < lines.length) {
      line = line.slice(0, -1) + lines[++i].replace(/^[ \t\f]+/, "");
    }
    const m = /^((?:\\.|[^=:\s\\])*)[ \t\f]*(?:[=:][ \t\f]*|[ \t\f]+|$)(.*)$/.exec(line);
    if (!m) continue;
    out[unescapeJava(m[1])] = unescapeJava(m[2]);
  }
  return out;
}

/** Reads a properties file; the error names the file. */
export function loadPropertiesFile(path: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new Error(
      `cannot read properties file ${path}: ${code === "ENOENT" ? "no such file" : (e as Error).message}`,
    );
  }
  return parseProperties(text);
}

/** `k=v` as given to --producer-property / --consumer-property / --producer-props. */
export function parseKeyValue(flag: string, entry: string): [string, string] {
  const i = entry.indexOf("=");
  if (i <= 0) throw new Error(`${flag} expects key=value, got '${entry}'`);
  return [entry.slice(0, i), entry.slice(i + 1)];
}
