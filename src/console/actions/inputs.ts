// Checking an action's JSON body: each reader returns the typed value or throws a 400 HttpError with
// one line naming the field and what was expected.

import { HttpError } from "../http/router.js";

export type Body = Record<string, unknown>;

export function asBody(v: unknown): Body {
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new HttpError(400, "expected a JSON object");
  return v as Body;
}

export function str(b: Body, field: string, optional?: false): string;
export function str(b: Body, field: string, optional: true): string | undefined;
export function str(b: Body, field: string, optional = false): string | undefined {
  const v = b[field];
  if (v === undefined && optional) return undefined;
  if (typeof v !== "string" || v === "") throw new HttpError(400, `${field}: expected a non-empty string`);
  return v;
}

export function int(b: Body, field: string, min: number, max: number, optional?: false): number;
export function int(b: Body, field: string, min: number, max: number, optional: true): number | undefined;
export function int(b: Body, field: string, min: number, max: number, optional = false): number | undefined {
  const v = b[field];
  if (v === undefined && optional) return undefined;
  const n = typeof v === "string" && /^-?\d+$/.test(v.trim()) ? Number(v) : v;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < min || n > max)
    throw new HttpError(400, `${field}: expected a whole number from ${min} to ${max}`);
  return n;
}

export function bool(b: Body, field: string): boolean {
  const v = b[field];
  if (v === undefined) return false;
  if (typeof v !== "boolean") throw new HttpError(400, `${field}: expected true or false`);
  return v;
}

/** A {name: value} object of strings. */
export function stringMap(b: Body, field: string): Record<string, string> {
  const v = b[field];
  if (v === undefined) return {};
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new HttpError(400, `${field}: expected an object of strings`);
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) {
    if (typeof x !== "string") throw new HttpError(400, `${field}.${k}: expected a string`);
    out[k] = x;
  }
  return out;
}

export function stringList(b: Body, field: string): string[] {
  const v = b[field];
  if (v === undefined) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== "string"))
    throw new HttpError(400, `${field}: expected a list of strings`);
  return v as string[];
}
