// Runtime helpers shared by the generated message codecs: arrays (classic and compact), the
// tagged-field section of flexible versions, and deep equality used to decide whether a tagged
// struct differs from its default. Kept small: per-field work is emitted inline by the generator.

import { ProtocolDecodeError, ProtocolEncodeError } from "./errors.js";
import type { Reader } from "./reader.js";
import { Writer } from "./writer.js";

/** A tagged field this codec does not know, kept as raw bytes so re-encoding preserves it. */
export interface RawTaggedField {
  tag: number;
  data: Buffer;
}

export interface TaggedEntry {
  tag: number;
  write: (w: Writer) => void;
}

export const EMPTY_BUFFER: Buffer = Buffer.alloc(0);

export function readArray<T>(
  r: Reader,
  flexible: boolean,
  nullable: boolean,
  field: string,
  readElement: (r: Reader) => T,
): T[] | null {
  const n = flexible ? r.compactArrayLength() : r.arrayLength();
  if (n < 0) {
    if (!nullable) throw new ProtocolDecodeError(`non-nullable field ${field} was null`);
    return null;
  }
  const out: T[] = [];
  for (let i = 0; i < n; i++) out.push(readElement(r));
  return out;
}

export function writeArray<T>(
  w: Writer,
  flexible: boolean,
  nullable: boolean,
  field: string,
  values: readonly T[] | null,
  writeElement: (w: Writer, v: T) => void,
): void {
  if (values === null) {
    if (!nullable) throw new ProtocolEncodeError(`non-nullable field ${field} was null`);
    if (flexible) w.uvarint(0);
    else w.int32(-1);
    return;
  }
  if (flexible) w.compactArrayLength(values.length);
  else w.arrayLength(values.length);
  for (const v of values) writeElement(w, v);
}

/** Reads a tagged field's payload with `read`, checking that it used exactly `size` bytes. */
export function readTaggedValue<T>(r: Reader, size: number, field: string, read: (r: Reader) => T): T {
  if (size > r.remaining)
    throw new ProtocolDecodeError(`tagged field ${field} of ${size} bytes is truncated`);
  const end = r.pos + size;
  const v = read(r);
  if (r.pos !== end)
    throw new ProtocolDecodeError(
      `tagged field ${field} declared ${size} bytes but used ${r.pos - end + size}`,
    );
  return v;
}

/** Writes the tagged-field section: known entries and preserved unknown ones, ascending by tag. */
export function writeTaggedFields(
  w: Writer,
  known: TaggedEntry[],
  unknown: RawTaggedField[] | undefined,
): void {
  const all: Array<{ tag: number; data: Buffer }> = [];
  for (const e of known) {
    const sub = new Writer(64);
    e.write(sub);
    all.push({ tag: e.tag, data: sub.toBuffer() });
  }
  if (unknown) for (const u of unknown) all.push(u);
  all.sort((a, b) => a.tag - b.tag);
  w.uvarint(all.length);
  for (const { tag, data } of all) {
    w.uvarint(tag);
    w.uvarint(data.length);
    w.raw(data);
  }
}

/** Structural equality over plain decoded values (numbers, bigints, strings, Buffers, arrays, objects). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Buffer.isBuffer(a) || Buffer.isBuffer(b))
    return Buffer.isBuffer(a) && Buffer.isBuffer(b) && a.equals(b);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}
