// Emits the TypeScript codec of one message spec: an interface per struct (all fields of all
// versions), a default constructor, and read/write functions that take the version and branch on it
// exactly where the spec says a field appears, becomes nullable, tagged or flexible.

import {
  arrayElement,
  collectStructs,
  type FieldSpec,
  type MessageSpec,
  PRIMITIVE_TYPES,
  type StructSpec,
  type VersionRange,
} from "./spec.js";

const RESERVED = new Set([
  "Reader",
  "Writer",
  "Buffer",
  "RawTaggedField",
  "TaggedEntry",
  "Array",
  "Object",
  "JsonObject",
]);

class VersionConditions {
  constructor(private readonly valid: VersionRange) {}

  /** A boolean TS expression over `version`, simplified to "true"/"false" where the range decides. */
  of(r: VersionRange): string {
    const lo = Math.max(r.lo, this.valid.lo);
    const hi = Math.min(r.hi, this.valid.hi);
    if (lo > hi) return "false";
    const parts: string[] = [];
    if (lo > this.valid.lo) parts.push(`version >= ${lo}`);
    if (hi < this.valid.hi) parts.push(`version <= ${hi}`);
    return parts.length === 0 ? "true" : parts.join(" && ");
  }
}

function and(a: string, b: string): string {
  if (a === "false" || b === "false") return "false";
  if (a === "true") return b;
  if (b === "true") return a;
  return `${a} && ${b}`;
}

function not(a: string): string {
  if (a === "true") return "false";
  if (a === "false") return "true";
  return `!(${a})`;
}

/** Expression choosing between two expressions on a version condition. */
function ternary(c: string, a: string, b: string): string {
  if (c === "true" || a === b) return a;
  if (c === "false") return b;
  return `(${c} ? ${a} : ${b})`;
}

function isNullableAnywhere(f: FieldSpec): boolean {
  return f.nullableVersions.lo <= f.nullableVersions.hi;
}

const NUMERIC_READ: Record<string, string> = {
  bool: "bool",
  int8: "int8",
  int16: "int16",
  uint16: "uint16",
  int32: "int32",
  uint32: "uint32",
  int64: "int64",
  float64: "float64",
  uuid: "uuid",
};

export function emitMessage(spec: MessageSpec, importPrefix: string): string {
  const structs = collectStructs(spec);
  /** Data specs (coordinator and storage records, embedded protocols) also get JSON converters. */
  const withJson = spec.type === "data";
  for (const name of structs.keys()) {
    if (RESERVED.has(name) || name === spec.name)
      throw new Error(`${spec.file}: struct name ${name} clashes`);
  }
  const cond = new VersionConditions(spec.validVersions);
  const out: string[] = [];

  const tsType = (f: FieldSpec): string => {
    const elem = arrayElement(f.type);
    const base = (t: string): string => {
      switch (t) {
        case "bool":
          return "boolean";
        case "int64":
          return "bigint";
        case "string":
        case "uuid":
          return "string";
        case "bytes":
        case "records":
          return "Buffer";
        default:
          return PRIMITIVE_TYPES.has(t) ? "number" : t;
      }
    };
    const t = elem === undefined ? base(f.type) : `${base(elem)}[]`;
    return isNullableAnywhere(f) ? `${t} | null` : t;
  };

  const defaultValue = (f: FieldSpec): string => {
    const d = f.default;
    if (d === "null") {
      if (!isNullableAnywhere(f))
        throw new Error(`${spec.file}: ${f.name} defaults to null but is never nullable`);
      return "null";
    }
    if (arrayElement(f.type) !== undefined) return "[]";
    switch (f.type) {
      case "bool":
        return d === "true" ? "true" : "false";
      case "int8":
      case "int16":
      case "uint16":
      case "int32":
      case "uint32":
      case "float64":
        return d === undefined ? "0" : String(Number(d));
      case "int64":
        return d === undefined ? "0n" : `${BigInt(d)}n`;
      case "string":
        return JSON.stringify(d ?? "");
      case "uuid":
        return '"AAAAAAAAAAAAAAAAAAAAAA"';
      case "bytes":
      case "records":
        return "EMPTY_BUFFER";
      default:
        return `default${f.type}()`;
    }
  };

  /** Whether a value differs from the field's default (for tagged fields and unsupported versions). */
  const differsFromDefault = (f: FieldSpec, x: string): string => {
    const d = defaultValue(f);
    if (d === "null") return `${x} !== null`;
    if (arrayElement(f.type) !== undefined) return `${x} === null || ${x}.length !== 0`;
    if (f.type === "bytes" || f.type === "records") return `${x} === null || ${x}.length !== 0`;
    if (!PRIMITIVE_TYPES.has(f.type)) return `!deepEqual(${x}, ${d})`;
    return `${x} !== ${d}`;
  };

  /** Versions in which a field is written in place (present and not tagged). */
  const regularOf = (f: FieldSpec): string => {
    const v = f.versions;
    const t = f.taggedVersions;
    if (t.lo > t.hi) return cond.of(v);
    if (t.hi < Math.min(v.hi, spec.validVersions.hi))
      throw new Error(`${spec.file}: ${f.name} is tagged in a middle range`);
    return cond.of({ lo: v.lo, hi: Math.min(v.hi, t.lo - 1) });
  };

  const flexOf = (f: FieldSpec): string => cond.of(f.flexibleVersions ?? spec.flexibleVersions);

  /** Expression reading one non-array value of type `t`. `flex` and `nul` are version conditions. */
  const readScalar = (t: string, flex: string, nul: string): string => {
    if (NUMERIC_READ[t]) return `r.${NUMERIC_READ[t]}()`;
    if (t === "string") {
      return ternary(
        flex,
        ternary(nul, "r.compactNullableString()", "r.compactString()"),
        ternary(nul, "r.nullableString()", "r.string()"),
      );
    }
    if (t === "bytes" || t === "records") {
      return ternary(
        flex,
        ternary(nul, "r.compactNullableBytes()", "r.compactBytes()"),
        ternary(nul, "r.nullableBytes()", "r.bytes()"),
      );
    }
    return ternary(nul, `(r.int8() < 0 ? null : read${t}(r, version))`, `read${t}(r, version)`);
  };

  const readField = (f: FieldSpec, flexCond: string): string => {
    const nul = cond.of(f.nullableVersions);
    const elem = arrayElement(f.type);
    if (elem === undefined) return readScalar(f.type, flexCond, nul);
    const inner = readScalar(elem, flexCond, "false");
    const call = `readArray(r, ${flexCond}, ${nul}, ${JSON.stringify(f.name)}, (r) => ${inner})`;
    return isNullableAnywhere(f) ? call : `${call}!`;
  };

  /** Statement choosing between two statements on a version condition. */
  const branch = (c: string, a: string, b: string): string => {
    if (c === "true" || a === b) return a;
    if (c === "false") return b;
    return `if (${c}) { ${a} } else { ${b} }`;
  };

  /** Statement writing one non-array value `x` of type `t`. */
  const writeScalar = (t: string, x: string, flex: string, nul: string, name: string): string => {
    if (NUMERIC_READ[t]) return `w.${NUMERIC_READ[t]}(${x});`;
    if (t === "string" || t === "bytes" || t === "records") {
      const kind = t === "string" ? "String" : "Bytes";
      const cast = t === "string" ? "string" : "Buffer";
      const call = (m: string): string => `w.${m}(${x} as ${cast});`;
      return branch(
        flex,
        branch(nul, call(`compactNullable${kind}`), call(`compact${kind}`)),
        branch(nul, call(`nullable${kind}`), call(kind === "String" ? "string" : "bytes")),
      );
    }
    const nonNull = `if (${x} === null) throw new ProtocolEncodeError("non-nullable field ${name} was null"); write${t}(w, ${x}, version);`;
    const nullable = `if (${x} === null) { w.int8(-1); } else { w.int8(1); write${t}(w, ${x}, version); }`;
    return branch(nul, nullable, nonNull);
  };

  const writeField = (f: FieldSpec, x: string, flexCond: string): string => {
    const nul = cond.of(f.nullableVersions);
    const elem = arrayElement(f.type);
    if (elem === undefined) return writeScalar(f.type, x, flexCond, nul, f.name);
    const inner =
      NUMERIC_READ[elem] || elem === "string" || elem === "bytes"
        ? writeScalar(elem, "e", flexCond, "false", f.name)
        : `write${elem}(w, e, version);`;
    return `writeArray(w, ${flexCond}, ${nul}, ${JSON.stringify(f.name)}, ${x}, (w, e) => { ${inner} });`;
  };

  const emitStruct = (name: string, fields: FieldSpec[]): void => {
    const flexible = cond.of(spec.flexibleVersions);
    // Interface.
    out.push(`export interface ${name} {`);
    for (const f of fields) {
      if (f.about) out.push(`  /** ${f.about.replace(/\*\//g, "* /")} */`);
      out.push(`  ${f.prop}: ${tsType(f)};`);
    }
    if (flexible !== "false")
      out.push(
        "  /** Tagged fields this codec does not know, preserved on re-encode. */",
        "  _unknownTaggedFields?: RawTaggedField[];",
      );
    out.push("}", "");

    // Default constructor.
    out.push(`export function default${name}(): ${name} {`);
    out.push(`  return { ${fields.map((f) => `${f.prop}: ${defaultValue(f)}`).join(", ")} };`);
    out.push("}", "");

    // Reader.
    out.push(`export function read${name}(r: Reader, version: number): ${name} {`);
    for (const f of fields) {
      const regular = regularOf(f);
      const decl = `  let f_${f.prop}: ${tsType(f)} = ${defaultValue(f)};`;
      out.push(decl);
      if (regular !== "false") {
        const stmt = `f_${f.prop} = ${readField(f, flexOf(f))};`;
        out.push(regular === "true" ? `  ${stmt}` : `  if (${regular}) ${stmt}`);
      }
    }
    const taggedFields = fields.filter((f) => f.tag !== undefined && cond.of(f.taggedVersions) !== "false");
    if (flexible !== "false") {
      out.push("  let _unknownTaggedFields: RawTaggedField[] | undefined;");
      out.push(`  if (${flexible}) {`);
      out.push("    const n = r.uvarint();");
      out.push("    for (let i = 0; i < n; i++) {");
      out.push("      const tag = r.uvarint();");
      out.push("      const size = r.uvarint();");
      if (taggedFields.length > 0) {
        out.push("      switch (tag) {");
        for (const f of taggedFields) {
          const tc = cond.of(f.taggedVersions);
          out.push(`        case ${f.tag}:`);
          out.push(
            `          if (${tc}) { f_${f.prop} = readTaggedValue(r, size, ${JSON.stringify(f.name)}, (r) => ${readField(f, "true")}); continue; }`,
          );
          out.push("          break;");
        }
        out.push("      }");
      }
      out.push("      (_unknownTaggedFields ??= []).push({ tag, data: r.raw(size) });");
      out.push("    }");
      out.push("  }");
    }
    const props = fields.map((f) => `${f.prop}: f_${f.prop}`).join(", ");
    if (flexible !== "false") {
      out.push(`  const out: ${name} = { ${props} };`);
      out.push("  if (_unknownTaggedFields) out._unknownTaggedFields = _unknownTaggedFields;");
      out.push("  return out;");
    } else {
      out.push(`  return { ${props} };`);
    }
    out.push("}", "");

    // Writer.
    out.push(`export function write${name}(w: Writer, v: ${name}, version: number): void {`);
    for (const f of fields) {
      const present = cond.of(f.versions);
      const regular = regularOf(f);
      if (regular !== "false") {
        const stmt = writeField(f, `v.${f.prop}`, flexOf(f));
        out.push(regular === "true" ? `  ${stmt}` : `  if (${regular}) { ${stmt} }`);
      }
      if (!f.ignorable && present !== "true") {
        out.push(
          `  if (${and(not(present), `(${differsFromDefault(f, `v.${f.prop}`)})`)}) throw new ProtocolEncodeError(\`${name}.${f.name} is not supported at version \${version}\`);`,
        );
      }
    }
    if (flexible !== "false") {
      out.push(`  if (${flexible}) {`);
      if (taggedFields.length > 0) {
        out.push("    const tagged: TaggedEntry[] = [];");
        for (const f of taggedFields) {
          const x = `v.${f.prop}`;
          out.push(
            `    if (${and(cond.of(f.taggedVersions), `(${differsFromDefault(f, x)})`)}) tagged.push({ tag: ${f.tag}, write: (w) => { ${writeField(f, x, "true")} } });`,
          );
        }
        out.push("    writeTaggedFields(w, tagged, v._unknownTaggedFields);");
      } else {
        out.push("    if (v._unknownTaggedFields === undefined) w.uvarint(0);");
        out.push("    else writeTaggedFields(w, [], v._unknownTaggedFields);");
      }
      out.push("  }");
    }
    out.push("}", "");
    if (withJson) emitJson(name, fields);
  };

  /** JSON value of one non-array value `x` of type `t` (Kafka's JsonConverter: Jackson nodes). */
  const jsonScalar = (t: string, x: string, nullable: boolean): string => {
    if (NUMERIC_READ[t] || t === "string") return x;
    const e = t === "bytes" || t === "records" ? `jsonBinary(${x})` : `${t}ToJson(${x}, version)`;
    return nullable ? `(${x} === null ? null : ${e})` : e;
  };

  /**
   * `<Struct>ToJson(v, version)`: Kafka's generated JsonConverter.write — every field present in the
   * version, in the specification's order, tagged ones only when they differ from their default.
   */
  const emitJson = (name: string, fields: FieldSpec[]): void => {
    out.push(`export function ${name}ToJson(v: ${name}, version: number): JsonObject {`);
    out.push("  const o: JsonObject = {};");
    for (const f of fields) {
      const x = `v.${f.prop}`;
      const elem = arrayElement(f.type);
      const nullable = isNullableAnywhere(f);
      const items =
        elem === undefined
          ? ""
          : NUMERIC_READ[elem] || elem === "string"
            ? `[...${x}]`
            : `${x}.map((e) => ${jsonScalar(elem, "e", false)})`;
      const value =
        elem === undefined
          ? jsonScalar(f.type, x, nullable)
          : nullable
            ? `(${x} === null ? null : ${items})`
            : items;
      // Written in place where the field is regular; where it is tagged, only when not at its default.
      const regular = regularOf(f);
      const tagged = cond.of({
        lo: Math.max(f.versions.lo, f.taggedVersions.lo),
        hi: Math.min(f.versions.hi, f.taggedVersions.hi),
      });
      const taggedWhen = tagged === "false" ? "false" : and(tagged, `(${differsFromDefault(f, x)})`);
      const when =
        taggedWhen === "false"
          ? regular
          : regular === "false"
            ? taggedWhen
            : `(${regular}) || (${taggedWhen})`;
      if (when === "false") continue;
      const stmt = `o.${f.prop} = ${value};`;
      out.push(when === "true" ? `  ${stmt}` : `  if (${when}) ${stmt}`);
    }
    out.push("  return o;");
    out.push("}", "");
  };

  out.push(
    "// DO NOT EDIT: generated by scripts/generator from Apache Kafka's message specification",
    `// ${spec.file}. Regenerate with \`npm run generate\`.`,
    "/* eslint-disable */",
    "",
    `import { type RawTaggedField, type TaggedEntry, EMPTY_BUFFER, deepEqual, readArray, readTaggedValue, writeArray, writeTaggedFields } from "${importPrefix}primitives/codec-helpers.js";`,
    `import { ProtocolEncodeError } from "${importPrefix}primitives/errors.js";`,
    `import type { Reader } from "${importPrefix}primitives/reader.js";`,
    `import type { Writer } from "${importPrefix}primitives/writer.js";`,
    ...(withJson
      ? [`import { type JsonObject, jsonBinary } from "${importPrefix}primitives/json-node.js";`]
      : []),
    "",
    `export const ${spec.name}Versions = { min: ${spec.validVersions.lo}, max: ${spec.validVersions.hi} } as const;`,
    "",
  );
  emitStruct(spec.name, spec.fields);
  for (const s of structs.values()) emitStruct(s.name, s.fields);
  return `${out.join("\n")}\n`;
}

export type { StructSpec };
