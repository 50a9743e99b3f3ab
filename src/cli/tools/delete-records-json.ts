// The --offset-json-file of `tributary delete-records` (Kafka's DeleteRecordsCommand format):
// `{"partitions": [{"topic": "foo", "partition": 1, "offset": 1}], "version": 1}`, validated with an
// error that names the JSON path of the first bad value (`partitions[2].offset: expected a number`).

import { UsageError } from "../args.js";

export interface RecordsToDelete {
  readonly topic: string;
  readonly partition: number;
  /** Delete records before this offset; -1 means the high watermark. */
  readonly offset: bigint;
}

function typeName(v: unknown): string {
  if (v === undefined) return "nothing (the field is missing)";
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return "an object";
  return `${typeof v === "string" ? "a string" : typeof v === "number" ? "a number" : `a ${typeof v}`} (${JSON.stringify(v)})`;
}

/** Parses and validates the file's text; throws a UsageError naming the JSON path. */
export function parseOffsetJson(text: string): RecordsToDelete[] {
  let js: unknown;
  try {
    js = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`The input string is not a valid JSON: ${(e as Error).message}`);
  }
  if (js === null || typeof js !== "object" || Array.isArray(js))
    throw new UsageError(`(root): expected an object, got ${typeName(js)}`);
  const root = js as Record<string, unknown>;
  if (root.version !== undefined) {
    if (typeof root.version !== "number" || !Number.isInteger(root.version))
      throw new UsageError(`version: expected an integer, got ${typeName(root.version)}`);
    if (root.version !== 1) throw new UsageError(`Not supported version field value ${root.version}`);
  }
  if (!("partitions" in root)) throw new UsageError("Missing partitions field");
  if (!Array.isArray(root.partitions))
    throw new UsageError(`partitions: expected an array, got ${typeName(root.partitions)}`);
  const out: RecordsToDelete[] = [];
  for (const [i, p] of root.partitions.entries()) {
    const at = `partitions[${i}]`;
    if (p === null || typeof p !== "object" || Array.isArray(p))
      throw new UsageError(`${at}: expected an object, got ${typeName(p)}`);
    const e = p as Record<string, unknown>;
    if (typeof e.topic !== "string" || e.topic === "")
      throw new UsageError(
        `${at}.topic: expected a topic name (a non-empty string), got ${typeName(e.topic)}`,
      );
    if (typeof e.partition !== "number")
      throw new UsageError(`${at}.partition: expected a number, got ${typeName(e.partition)}`);
    if (!Number.isInteger(e.partition) || e.partition < 0 || e.partition > 2 ** 31 - 1)
      throw new UsageError(
        `${at}.partition: expected a partition id (an integer from 0 to 2147483647), got ${e.partition}`,
      );
    if (typeof e.offset !== "number")
      throw new UsageError(`${at}.offset: expected a number, got ${typeName(e.offset)}`);
    if (!Number.isSafeInteger(e.offset) || e.offset < -1)
      throw new UsageError(
        `${at}.offset: expected an offset (an integer, -1 for the high watermark), got ${e.offset}`,
      );
    out.push({ topic: e.topic, partition: e.partition, offset: BigInt(e.offset) });
  }
  const seen = new Map<string, number>();
  for (const r of out)
    seen.set(`${r.topic}-${r.partition}`, (seen.get(`${r.topic}-${r.partition}`) ?? 0) + 1);
  const dups = [...seen].filter(([, n]) => n > 1).map(([k]) => k);
  if (dups.length > 0)
    throw new UsageError(`Offset json file contains duplicate topic partitions: ${dups.join(",")}`);
  return out;
}
