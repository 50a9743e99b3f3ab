// Test-only: what each client driver is asked to do during a fixture capture, and the exact records
// each produce scenario sends. The plan is written to a JSON file for the driver, and the produce
// scenarios are copied into the fixture manifest so tests can check the captured record batches decode
// to exactly these records.

export type Codec = "none" | "gzip" | "snappy" | "lz4" | "zstd";

export interface HeaderSpec {
  key: string;
  /** UTF-8 text, or null for a null header value. */
  value: string | null;
}

export interface RecordSpec {
  /** UTF-8 text, or null for a null key. */
  key: string | null;
  /** UTF-8 text, or null for a null value (a tombstone). */
  value: string | null;
  headers: HeaderSpec[];
}

export interface ProduceScenario {
  topic: string;
  compression: Codec;
  records: RecordSpec[];
  /** Acks the producer is configured with (-1 = all). */
  acks: number;
  idempotent?: boolean;
  transactionalId?: string;
}

export interface CapturePlan {
  bootstrap: string;
  admin: { topics: [string, string] };
  produce: ProduceScenario[];
  /** A group consumer subscribes to `topic` and reads `expect` records before committing and leaving. */
  consume: { group: string; topic: string; expect: number };
}

export interface RecordOptions {
  /** Allow a null key (default true). */
  nullKey?: boolean;
  /** Allow a null value (default true). */
  nullValue?: boolean;
  /** Allow a header with a null value (default false). */
  nullHeaderValue?: boolean;
  /** Headers on every record instead of the varied per-record ones (kcat's -H works that way). */
  fixedHeaders?: HeaderSpec[];
}

/** A handful of small, varied records: keyed and unkeyed, headers, non-ASCII text, a tombstone, a compressible value. */
export function sampleRecords(prefix: string, o: RecordOptions = {}): RecordSpec[] {
  const h = (list: HeaderSpec[]): HeaderSpec[] => o.fixedHeaders ?? list;
  const out: RecordSpec[] = [
    {
      key: `${prefix}-k0`,
      value: `${prefix} value 0`,
      headers: h([{ key: "trace-id", value: `${prefix}-t0` }]),
    },
    { key: o.nullKey === false ? `${prefix}-k1` : null, value: `${prefix} unkeyed value 1`, headers: h([]) },
    {
      key: `${prefix}-k2`,
      value: `${prefix} ünïcødé ✓ value 2`,
      headers: h([
        { key: "h-a", value: "alpha" },
        { key: "h-b", value: o.nullHeaderValue ? null : "beta" },
      ]),
    },
    { key: `${prefix}-k3`, value: o.nullValue === false ? `${prefix} value 3` : null, headers: h([]) },
    { key: `${prefix}-k4`, value: `${prefix} ${"compressible ".repeat(12)}4`, headers: h([]) },
  ];
  return out;
}
