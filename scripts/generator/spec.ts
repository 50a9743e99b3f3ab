// Loader for Kafka's JSON message specifications (../shared/kafka-protocol): strips the `//`
// comments, parses version ranges ("0+", "3-5", "1", "none") and normalises fields so the code
// generator (and the property tests, which use the specs as their oracle) read them the same way.

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface VersionRange {
  readonly lo: number;
  /** Inclusive upper bound; Infinity for "N+". */
  readonly hi: number;
}

export const NO_VERSIONS: VersionRange = { lo: 0, hi: -1 };

export function parseVersions(s: string | undefined, fallback: VersionRange = NO_VERSIONS): VersionRange {
  if (s === undefined) return fallback;
  const t = s.trim();
  if (t === "none") return NO_VERSIONS;
  let m = /^(\d+)\+$/.exec(t);
  if (m) return { lo: Number(m[1]), hi: Number.POSITIVE_INFINITY };
  m = /^(\d+)-(\d+)$/.exec(t);
  if (m) return { lo: Number(m[1]), hi: Number(m[2]) };
  m = /^(\d+)$/.exec(t);
  if (m) return { lo: Number(m[1]), hi: Number(m[1]) };
  throw new Error(`bad version range ${JSON.stringify(s)}`);
}

export function inRange(r: VersionRange, v: number): boolean {
  return v >= r.lo && v <= r.hi;
}

export interface FieldSpec {
  readonly name: string;
  /** camelCase property name used in TypeScript. */
  readonly prop: string;
  readonly type: string;
  readonly versions: VersionRange;
  readonly nullableVersions: VersionRange;
  readonly taggedVersions: VersionRange;
  readonly tag: number | undefined;
  /** Field-level override of the message's flexible versions (e.g. RequestHeader.ClientId). */
  readonly flexibleVersions: VersionRange | undefined;
  readonly default: string | undefined;
  readonly ignorable: boolean;
  readonly about: string | undefined;
  /** Inline struct fields, for struct and array-of-struct types declared in place. */
  readonly fields: FieldSpec[] | undefined;
}

export interface StructSpec {
  readonly name: string;
  readonly fields: FieldSpec[];
}

export interface MessageSpec {
  readonly file: string;
  readonly name: string;
  readonly type: "request" | "response" | "header" | "data";
  readonly apiKey: number | undefined;
  readonly listeners: string[];
  readonly validVersions: VersionRange;
  readonly flexibleVersions: VersionRange;
  readonly deprecatedVersions: VersionRange;
  readonly latestVersionUnstable: boolean;
  readonly fields: FieldSpec[];
  readonly commonStructs: StructSpec[];
}

export const PRIMITIVE_TYPES = new Set([
  "bool",
  "int8",
  "int16",
  "uint16",
  "int32",
  "uint32",
  "int64",
  "float64",
  "string",
  "uuid",
  "bytes",
  "records",
]);

export function camelCase(name: string): string {
  return name.charAt(0).toLowerCase() + name.slice(1);
}

/** Element type of an array type ("[]Foo" → "Foo"), or undefined when not an array. */
export function arrayElement(type: string): string | undefined {
  return type.startsWith("[]") ? type.slice(2) : undefined;
}

interface RawField {
  name: string;
  type: string;
  versions?: string;
  nullableVersions?: string;
  taggedVersions?: string;
  tag?: number | string;
  flexibleVersions?: string;
  default?: string | number | boolean;
  ignorable?: boolean;
  about?: string;
  fields?: RawField[];
}

function toField(raw: RawField): FieldSpec {
  const tagged = parseVersions(raw.taggedVersions);
  return {
    name: raw.name,
    prop: camelCase(raw.name),
    type: raw.type,
    versions: parseVersions(raw.versions, tagged),
    nullableVersions: parseVersions(raw.nullableVersions),
    taggedVersions: tagged,
    tag: raw.tag === undefined ? undefined : Number(raw.tag),
    flexibleVersions: raw.flexibleVersions === undefined ? undefined : parseVersions(raw.flexibleVersions),
    default: raw.default === undefined ? undefined : String(raw.default),
    ignorable: raw.ignorable === true,
    about: raw.about,
    fields: raw.fields?.map(toField),
  };
}

export function stripComments(text: string): string {
  return text
    .split("\n")
    .map((line) => line.replace(/^\s*\/\/.*$/, ""))
    .join("\n");
}

export function loadSpec(path: string, file: string): MessageSpec {
  const raw = JSON.parse(stripComments(readFileSync(path, "utf8")));
  return {
    file,
    name: raw.name,
    type: raw.type,
    apiKey: raw.apiKey,
    listeners: raw.listeners ?? [],
    validVersions: parseVersions(raw.validVersions),
    flexibleVersions: parseVersions(raw.flexibleVersions),
    deprecatedVersions: parseVersions(raw.deprecatedVersions),
    latestVersionUnstable: raw.latestVersionUnstable === true,
    fields: (raw.fields ?? []).map(toField),
    commonStructs: (raw.commonStructs ?? []).map((s: { name: string; fields: RawField[] }) => ({
      name: s.name,
      fields: s.fields.map(toField),
    })),
  };
}

export function loadSpecDir(dir: string): MessageSpec[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => loadSpec(join(dir, f), f));
}

/** All struct definitions of a message by name: inline ones and commonStructs. */
export function collectStructs(spec: MessageSpec): Map<string, StructSpec> {
  const out = new Map<string, StructSpec>();
  const add = (s: StructSpec): void => {
    if (out.has(s.name)) throw new Error(`${spec.file}: struct ${s.name} defined twice`);
    out.set(s.name, s);
    walk(s.fields);
  };
  const walk = (fields: FieldSpec[]): void => {
    for (const f of fields) {
      if (f.fields) add({ name: arrayElement(f.type) ?? f.type, fields: f.fields });
    }
  };
  for (const s of spec.commonStructs) add(s);
  walk(spec.fields);
  return out;
}

/** Where the shared protocol data lives, relative to the repository root. */
export const SHARED_PROTOCOL_DIR = "../shared/kafka-protocol";
