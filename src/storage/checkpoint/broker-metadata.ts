// Files at the root of a log dir that describe the broker rather than a partition:
//
// - `meta.properties` (Kafka's BrokerMetadataCheckpoint / MetaProperties): a Java properties file, written
//   the way java.util.Properties.store writes it — a `#` comment line (empty), a `#<date>` line, then
//   `key=value` lines. ZooKeeper-mode brokers write version 0 (`version=0`, `broker.id`, `cluster.id`);
//   KRaft writes version 1 (`node.id` and a required `cluster.id`). Tributary writes version 0 and reads
//   both. A malformed file is a BrokerMetadataError naming the file, the line or key and what was expected.
//
// - `.kafka_cleanshutdown`: present only after a clean shutdown, so the next start can skip recovery.
//   ZooKeeper-mode Kafka 3.x writes it empty; Kafka 3.7+ may put `{"version":0,"brokerEpoch":N}` in it.
//   Both are accepted; its presence is what matters.

import { closeSync, existsSync, fsyncSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { fsyncDirectory, writeFileAtomically } from "../../common/atomic-file.js";
import { SYSTEM_TIME } from "../../common/time.js";
import {
  CheckpointFileError,
  MetadataFileError,
  parseJavaInt,
  readSmallFile,
  showLine,
} from "./checkpoint-file.js";

export const META_PROPERTIES_FILENAME = "meta.properties";
export const CLEAN_SHUTDOWN_FILENAME = ".kafka_cleanshutdown";
const MAX_META_PROPERTIES_BYTES = 1024 * 1024;

export interface BrokerMetadata {
  /** meta.properties version: 0 (ZooKeeper mode) or 1 (KRaft). */
  version: number;
  /** broker.id (version 0) or node.id (version 1). */
  brokerId: number;
  /** cluster.id, or null when a version 0 file has none. */
  clusterId: string | null;
  /** Every key of the file, including the ones above. */
  properties: ReadonlyMap<string, string>;
}

export class BrokerMetadataError extends MetadataFileError {
  constructor(file: string, line: number | undefined, expected: string, found: string) {
    super("", file, line, expected, found);
    this.name = "BrokerMetadataError";
  }
}

// ---- Java properties format (the subset Kafka's files use, read leniently like Properties.load) ----

/** Parses Java properties text: `#`/`!` comments, `key=value`, `key: value`, `key value`, escapes, continuations. */
export function parseProperties(text: string, file = "<properties>"): Map<string, string> {
  const out = new Map<string, string>();
  const raw = text.split(/\r\n|\n|\r/);
  for (let i = 0; i < raw.length; i++) {
    const lineNo = i + 1;
    let line = raw[i].replace(/^[ \t\f]+/, "");
    if (line === "" || line.startsWith("#") || line.startsWith("!")) continue;
    // A line ending in an odd number of backslashes continues on the next line.
    while (/(^|[^\\])(\\\\)*\\$/.test(line) && i + 1 < raw.length) {
      line = line.slice(0, -1) + raw[++i].replace(/^[ \t\f]+/, "");
    }
    let k = 0;
    while (k < line.length) {
      const c = line[k];
      if (c === "\\") {
        k += 2;
        continue;
      }
      if (c === "=" || c === ":" || c === " " || c === "\t" || c === "\f") break;
      k++;
    }
    const key = unescapeProperty(line.slice(0, k), file, lineNo);
    let rest = line.slice(k).replace(/^[ \t\f]*/, "");
    if (rest.startsWith("=") || rest.startsWith(":")) rest = rest.slice(1).replace(/^[ \t\f]*/, "");
    out.set(key, unescapeProperty(rest, file, lineNo));
  }
  return out;
}

function unescapeProperty(s: string, file: string, line: number): string {
  if (!s.includes("\\")) return s;
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c !== "\\") {
      out += c;
      continue;
    }
    const n = s[++i];
    if (n === undefined) break;
    if (n === "u") {
      const hex = s.slice(i + 1, i + 5);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
        throw new BrokerMetadataError(file, line, "a \\uXXXX escape", showLine(`\\u${hex}`));
      }
      out += String.fromCharCode(Number.parseInt(hex, 16));
      i += 4;
    } else {
      out += n === "t" ? "\t" : n === "n" ? "\n" : n === "r" ? "\r" : n === "f" ? "\f" : n;
    }
  }
  return out;
}

function escapeProperty(s: string, isKey: boolean): string {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    const code = c.charCodeAt(0);
    if (c === "\\") out += "\\\\";
    else if (c === "\t") out += "\\t";
    else if (c === "\n") out += "\\n";
    else if (c === "\r") out += "\\r";
    else if (c === "\f") out += "\\f";
    else if (c === " " && (isKey || i === 0)) out += "\\ ";
    else if ("=:#!".includes(c)) out += `\\${c}`;
    else if (code < 0x20 || code > 0x7e) out += `\\u${code.toString(16).toUpperCase().padStart(4, "0")}`;
    else out += c;
  }
  return out;
}

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** java.util.Date.toString in UTC: `Sun Nov 29 13:04:01 UTC 2026`. */
export function javaDateString(ms: number): string {
  const d = new Date(ms);
  const p = (n: number): string => String(n).padStart(2, "0");
  return `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} UTC ${d.getUTCFullYear()}`;
}

/** Java's Properties.store(out, "") text: `#`, `#<date>`, then one `key=value` line per entry. */
export function formatProperties(entries: Iterable<[string, string]>, nowMs: number): string {
  let out = `#\n#${javaDateString(nowMs)}\n`;
  for (const [k, v] of entries) out += `${escapeProperty(k, true)}=${escapeProperty(v, false)}\n`;
  return out;
}

// ---- meta.properties ----

/**
 * Reads `<logDir>/meta.properties`; undefined when there is none. Throws BrokerMetadataError when it is
 * malformed (missing or non-integer broker.id / node.id, version other than 0 or 1, v1 without cluster.id).
 */
export function readBrokerMetadata(logDir: string): BrokerMetadata | undefined {
  const file = join(logDir, META_PROPERTIES_FILENAME);
  let bytes: Buffer | undefined;
  try {
    bytes = readSmallFile(file, MAX_META_PROPERTIES_BYTES);
  } catch (e) {
    if (e instanceof CheckpointFileError) throw new BrokerMetadataError(file, undefined, e.expected, e.found);
    throw e;
  }
  if (bytes === undefined) return undefined;
  return parseBrokerMetadata(bytes.toString("utf8"), file);
}

/** Parses meta.properties text (see readBrokerMetadata). */
export function parseBrokerMetadata(text: string, file = META_PROPERTIES_FILENAME): BrokerMetadata {
  const props = parseProperties(text, file);
  const intKey = (key: string): number | undefined => {
    const v = props.get(key);
    if (v === undefined) return undefined;
    const n = parseJavaInt(v.trim());
    if (n === undefined)
      throw new BrokerMetadataError(file, undefined, `an integer ${key}`, `${key}=${showLine(v)}`);
    return n;
  };
  const version = intKey("version") ?? 0;
  const clusterId = props.get("cluster.id") ?? null;
  if (version === 0) {
    const brokerId = intKey("broker.id");
    if (brokerId === undefined) throw new BrokerMetadataError(file, undefined, "a broker.id key", "none");
    return { version, brokerId, clusterId, properties: props };
  }
  if (version === 1) {
    const nodeId = intKey("node.id");
    if (nodeId === undefined)
      throw new BrokerMetadataError(file, undefined, "a node.id key (version 1)", "none");
    if (clusterId === null)
      throw new BrokerMetadataError(file, undefined, "a cluster.id key (version 1)", "none");
    return { version, brokerId: nodeId, clusterId, properties: props };
  }
  throw new BrokerMetadataError(file, undefined, "version 0 or 1", `version=${version}`);
}

/**
 * Writes `<logDir>/meta.properties` version 0 atomically (ZooKeeper mode, as Kafka 3.x brokers with
 * zookeeper.connect do). `nowMs` only feeds the date comment line Java writes.
 */
export function writeBrokerMetadata(
  logDir: string,
  meta: { brokerId: number; clusterId: string | null },
  nowMs: number = SYSTEM_TIME.milliseconds(),
): void {
  if (!Number.isInteger(meta.brokerId) || meta.brokerId < 0 || meta.brokerId > 0x7fffffff) {
    throw new RangeError(`broker.id must be a non-negative int32, got ${meta.brokerId}`);
  }
  const entries: Array<[string, string]> = [];
  if (meta.clusterId !== null) entries.push(["cluster.id", meta.clusterId]);
  entries.push(["version", "0"], ["broker.id", String(meta.brokerId)]);
  writeFileAtomically(join(logDir, META_PROPERTIES_FILENAME), formatProperties(entries, nowMs));
}

// ---- .kafka_cleanshutdown ----

export function cleanShutdownMarkerPath(logDir: string): string {
  return join(logDir, CLEAN_SHUTDOWN_FILENAME);
}

export function hasCleanShutdownMarker(logDir: string): boolean {
  return existsSync(cleanShutdownMarkerPath(logDir));
}

/**
 * Writes the marker (fsynced, and its directory entry too). Empty, as ZooKeeper-mode Kafka writes it, or
 * `{"version":0,"brokerEpoch":N}` when a broker epoch is given (Kafka 3.7+, KIP-966).
 */
export function writeCleanShutdownMarker(logDir: string, brokerEpoch?: bigint): void {
  const path = cleanShutdownMarkerPath(logDir);
  const fd = openSync(path, "w");
  try {
    if (brokerEpoch !== undefined) writeSync(fd, `{"version":0,"brokerEpoch":${brokerEpoch}}`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  fsyncDirectory(logDir);
}

/** The broker epoch stored in the marker, if any (undefined when missing, empty or unreadable). */
export function readCleanShutdownBrokerEpoch(logDir: string): bigint | undefined {
  try {
    const bytes = readSmallFile(cleanShutdownMarkerPath(logDir), 4096);
    const m = bytes && /"brokerEpoch"\s*:\s*(-?\d{1,19})/.exec(bytes.toString("utf8"));
    return m ? BigInt(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

export function deleteCleanShutdownMarker(logDir: string): void {
  rmSync(cleanShutdownMarkerPath(logDir), { force: true });
  fsyncDirectory(logDir);
}
