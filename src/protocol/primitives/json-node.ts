// JSON trees of decoded messages, as Kafka's generated *JsonConverter.write builds them (Jackson nodes) and
// prints them (ObjectNode.toString: compact, fields in the specification's order). The generated
// `<Message>ToJson` functions build these trees; int64 fields stay bigints and print as plain integers
// (Jackson's LongNode), bytes print as standard base64 with padding (Jackson's BinaryNode).

export type JsonValue = null | boolean | number | bigint | string | JsonValue[] | JsonObject;

export interface JsonObject {
  [field: string]: JsonValue;
}

/** A bytes field as Jackson's BinaryNode prints it. */
export function jsonBinary(bytes: Buffer): string {
  return bytes.toString("base64");
}

/** The compact JSON text of a tree (bigints as integers). */
export function stringifyJson(value: JsonValue): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "bigint":
      return value.toString();
    case "number":
      return Number.isFinite(value) ? String(value) : JSON.stringify(String(value));
    case "boolean":
      return value ? "true" : "false";
    case "string":
      return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(stringifyJson).join(",")}]`;
  const parts: string[] = [];
  for (const [k, v] of Object.entries(value)) parts.push(`${JSON.stringify(k)}:${stringifyJson(v)}`);
  return `{${parts.join(",")}}`;
}
