// The JSON files the Kafka tools read (delete-records offsets, reassignment plans, topics-to-move,
// leader-election partitions): read, parsed and walked with every error as one line naming the file,
// where in it, and what was expected — `plan.json: partitions[2].replicas[1]: expected a broker id (an
// integer from 0 to 2147483647), got a string ("3")`, or for a syntax error the line and column
// (`plan.json: not valid JSON at line 4, column 17: expected ',' or '}' after property value`) where
// Kafka's tools say only "The input string is not a valid JSON".

import { readFileSync } from "node:fs";
import { UsageError } from "./args.js";

/** What a JSON value is, for "got …" in an error: `a string ("3")`, `an array`, `nothing (…)`. */
export function describeJsonValue(v: unknown): string {
  if (v === undefined) return "nothing (the field is missing)";
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return "an object";
  if (typeof v === "string") return `a string (${JSON.stringify(v)})`;
  if (typeof v === "number") return `a number (${v})`;
  return `a ${typeof v} (${JSON.stringify(v)})`;
}

/** Line and column (both from 1) of a character offset in text. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}

/** Where V8's JSON.parse message says it stopped (`… at position 42`), or the end for a truncated text. */
function syntaxErrorOffset(message: string, text: string): number | undefined {
  const at = /at position (\d+)/.exec(message);
  if (at) return Number(at[1]);
  if (/end of (JSON )?input/i.test(message)) return text.length;
  return undefined;
}

/** The reason of a V8 JSON syntax error without its position and the echoed input. */
function syntaxErrorReason(message: string): string {
  return message
    .replace(/,? ?"[^"]*"(\.\.\.)? is not valid JSON$/, "")
    .replace(/ in JSON at position \d+.*$/, "")
    .replace(/ at position \d+.*$/, "")
    .trim();
}

/** Parses text from `source` (a file name, for errors); a syntax error is one line with line and column. */
export function parseJsonText(text: string, source: string): JsonNode {
  try {
    return new JsonNode(JSON.parse(text), "", source);
  } catch (e) {
    const message = (e as Error).message;
    const offset = syntaxErrorOffset(message, text);
    const where =
      offset === undefined
        ? ""
        : (({ line, column }) => ` at line ${line}, column ${column}`)(lineAndColumn(text, offset));
    throw new UsageError(`${source}: not valid JSON${where}: ${syntaxErrorReason(message)}`);
  }
}

/** Reads and parses a JSON file; a missing or unreadable file is one line too. */
export function readJsonFile(file: string): JsonNode {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UsageError(
      `${file}: ${code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory, expected a JSON file" : (e as Error).message}`,
    );
  }
  return parseJsonText(text, file);
}

/** A value inside a parsed JSON document, with its path for error messages. */
export class JsonNode {
  constructor(
    readonly value: unknown,
    /** `partitions[2].replicas`; "" for the root. */
    readonly path: string,
    readonly source: string,
  ) {}

  /** One line: `<file>: <path>: <what>`. */
  error(what: string): UsageError {
    return new UsageError(`${this.source}: ${this.path === "" ? "(root)" : this.path}: ${what}`);
  }

  /** `expected <expected>, got <what it is>`. */
  expected(expected: string): UsageError {
    return this.error(`expected ${expected}, got ${describeJsonValue(this.value)}`);
  }

  get isMissing(): boolean {
    return this.value === undefined;
  }

  /** The named field of this object (checked to be an object); missing fields have value undefined. */
  field(name: string): JsonNode {
    const o = this.object();
    return new JsonNode(
      Object.hasOwn(o, name) ? o[name] : undefined,
      this.path === "" ? name : `${this.path}.${name}`,
      this.source,
    );
  }

  object(): Record<string, unknown> {
    const v = this.value;
    if (v === null || typeof v !== "object" || Array.isArray(v)) throw this.expected("an object");
    return v as Record<string, unknown>;
  }

  /** The elements of this array, each with its path. */
  elements(what = "an array"): JsonNode[] {
    if (!Array.isArray(this.value)) throw this.expected(what);
    return this.value.map((v, i) => new JsonNode(v, `${this.path}[${i}]`, this.source));
  }

  string(what = "a string"): string {
    if (typeof this.value !== "string") throw this.expected(what);
    return this.value;
  }

  /** A topic name as Kafka allows it: 1 to 249 characters of ASCII letters, digits, '.', '_' and '-'. */
  topicName(): string {
    const what = "a topic name (1 to 249 of a-z A-Z 0-9 . _ -)";
    const s = this.string(what);
    if (!/^[a-zA-Z0-9._-]{1,249}$/.test(s) || s === "." || s === "..") throw this.expected(what);
    return s;
  }

  /**
   * An integer within [min, max]; `what` names it in the error (`a partition id` → "expected a partition
   * id (an integer from 0 to 2147483647)"), or `expected` replaces the whole description.
   */
  integer(
    what: string,
    min: number,
    max: number,
    expected = `${what} (an integer from ${min} to ${max})`,
  ): number {
    const v = this.value;
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min || v > max)
      throw this.expected(expected);
    return v;
  }

  partitionId(): number {
    return this.integer("a partition id", 0, 2 ** 31 - 1);
  }

  brokerId(): number {
    return this.integer("a broker id", 0, 2 ** 31 - 1);
  }

  /** The optional `version` field of a tool's file: absent or `1`. */
  checkVersion(supported: readonly number[] = [1]): void {
    const version = this.field("version");
    if (version.isMissing) return;
    const v = version.integer("a version", 0, 2 ** 31 - 1);
    if (!supported.includes(v))
      throw version.error(`Not supported version field value ${v} (expected ${supported.join(" or ")})`);
  }
}
