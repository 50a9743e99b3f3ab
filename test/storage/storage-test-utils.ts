// Helpers for the storage tests: temp partition dirs, record batches, config, and an independent reader of
// the on-disk format (written from Kafka's documented layout, not from src/storage) used to check files.

import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { crc32c } from "@node-rs/crc32";
import { buildRecordBatch } from "../../src/protocol/records/index.js";
import { DEFAULT_LOG_CONFIG, type LogConfig } from "../../src/storage/log-config.js";
import { UnifiedLog } from "../../src/storage/unified-log.js";

/** A fresh `<tmp>/<prefix>-xxxx/topic-0` directory; returns it and a cleanup function. */
export function tempPartitionDir(prefix = "tributary-storage"): {
  dir: string;
  root: string;
  cleanup: () => void;
} {
  const root = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const dir = join(root, "topic-0");
  return {
    dir,
    root,
    // A log's leader-epoch writes may still be finishing in the background (their temporary file comes
    // and goes): the removal retries rather than failing on a directory that was not empty for a moment.
    cleanup: () => rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 20 }),
  };
}

export function config(overrides: Partial<LogConfig> = {}): LogConfig {
  return { ...DEFAULT_LOG_CONFIG, ...overrides };
}

/** A batch of `count` records with values of `valueSize` bytes and the given timestamp. */
export function batch(
  count: number,
  opts: { valueSize?: number; timestamp?: bigint; baseOffset?: bigint; epoch?: number } = {},
): Buffer {
  const value = Buffer.alloc(opts.valueSize ?? 10, 0x61);
  return buildRecordBatch({
    records: Array.from({ length: count }, (_, i) => ({ key: Buffer.from(`k${i}`), value })),
    timestamp: opts.timestamp ?? 1_700_000_000_000n,
    baseOffset: opts.baseOffset ?? 0n,
    partitionLeaderEpoch: opts.epoch ?? -1,
  });
}

/** One batch as parsed by the independent reader. */
export interface RawBatch {
  position: number;
  baseOffset: bigint;
  lastOffset: bigint;
  size: number;
  partitionLeaderEpoch: number;
  maxTimestamp: bigint;
  crcValid: boolean;
}

/**
 * Parses a `.log` file from Kafka's documented RecordBatch layout: baseOffset int64, batchLength int32,
 * partitionLeaderEpoch int32, magic int8, crc uint32 (CRC-32C of attributes..end), attributes int16,
 * lastOffsetDelta int32, baseTimestamp int64, maxTimestamp int64, ... Stops at a partial batch.
 */
export function parseLogFile(bytes: Buffer): { batches: RawBatch[]; trailingBytes: number } {
  const batches: RawBatch[] = [];
  let p = 0;
  while (p + 61 <= bytes.length) {
    const batchLength = bytes.readInt32BE(p + 8);
    const size = 12 + batchLength;
    if (batchLength < 49 || p + size > bytes.length) break;
    const crc = bytes.readUInt32BE(p + 17);
    const baseOffset = bytes.readBigInt64BE(p);
    batches.push({
      position: p,
      baseOffset,
      lastOffset: baseOffset + BigInt(bytes.readInt32BE(p + 23)),
      size,
      partitionLeaderEpoch: bytes.readInt32BE(p + 12),
      maxTimestamp: bytes.readBigInt64BE(p + 35),
      crcValid: bytes.readInt8(p + 16) === 2 && crc32c(bytes.subarray(p + 21, p + size)) >>> 0 === crc,
    });
    p += size;
  }
  return { batches, trailingBytes: bytes.length - p };
}

/** `.index` entries: (relativeOffset int32, position int32), 8 bytes each. */
export function parseOffsetIndexFile(path: string): Array<{ relativeOffset: number; position: number }> {
  const b = readFileSync(path);
  const out = [];
  for (let p = 0; p + 8 <= b.length; p += 8)
    out.push({ relativeOffset: b.readInt32BE(p), position: b.readInt32BE(p + 4) });
  return out;
}

/** `.timeindex` entries: (timestamp int64, relativeOffset int32), 12 bytes each. */
export function parseTimeIndexFile(path: string): Array<{ timestamp: bigint; relativeOffset: number }> {
  const b = readFileSync(path);
  const out = [];
  for (let p = 0; p + 12 <= b.length; p += 12)
    out.push({ timestamp: b.readBigInt64BE(p), relativeOffset: b.readInt32BE(p + 8) });
  return out;
}

/** Captures log lines emitted while fn runs. */
export async function captureLogs<T>(fn: () => T | Promise<T>): Promise<{ result: T; lines: string[] }> {
  const { setLogSink } = await import("../../src/common/logger.js");
  const lines: string[] = [];
  const prev = setLogSink((line) => lines.push(line));
  try {
    return { result: await fn(), lines };
  } finally {
    setLogSink(prev);
  }
}

/** What verifyLogDir found. */
export interface LogDirCheck {
  /** Every batch, in offset order, with the segment it is in. */
  batches: Array<RawBatch & { segment: bigint }>;
  /** Base offset of the first segment and the offset after the last batch. */
  startOffset: bigint;
  endOffset: bigint;
  segments: bigint[];
}

/**
 * Checks a partition directory with the independent parser: every segment holds whole batches with valid
 * CRCs and no trailing bytes, offsets are contiguous across segments (each segment starts where the
 * previous ended), every `.index` entry points at a batch boundary whose batch starts at or before the
 * entry's offset (the entry's offset being a batch's last offset), and every `.timeindex` entry names a
 * batch's last offset whose segment holds that timestamp. Throws an AssertionError-like Error otherwise.
 */
export function verifyLogDir(dir: string): LogDirCheck {
  const names = readdirSync(dir)
    .filter((n) => /^\d{20}\.log$/.test(n))
    .sort();
  const fail = (msg: string): never => {
    throw new Error(`log dir check failed: ${msg}`);
  };
  const out: LogDirCheck["batches"] = [];
  const segments: bigint[] = [];
  let expectNext: bigint | undefined;
  for (const name of names) {
    const base = BigInt(name.slice(0, 20));
    segments.push(base);
    const parsed = parseLogFile(readFileSync(join(dir, name)));
    if (parsed.trailingBytes !== 0) fail(`${name} has ${parsed.trailingBytes} trailing bytes`);
    if (expectNext !== undefined && base !== expectNext)
      fail(`${name} starts at ${base}, expected ${expectNext}`);
    let next = base;
    const byPosition = new Map<number, RawBatch>();
    const lastOffsets = new Map<bigint, RawBatch>();
    for (const b of parsed.batches) {
      if (!b.crcValid) fail(`${name}: batch at ${b.position} has a bad CRC`);
      if (b.baseOffset !== next)
        fail(`${name}: batch at ${b.position} has base offset ${b.baseOffset}, expected ${next}`);
      next = b.lastOffset + 1n;
      byPosition.set(b.position, b);
      lastOffsets.set(b.lastOffset, b);
      out.push({ ...b, segment: base });
    }
    expectNext = next;
    const idx = join(dir, `${name.slice(0, 20)}.index`);
    if (existsSync(idx)) {
      for (const e of parseOffsetIndexFile(idx)) {
        if (e.relativeOffset === 0 && e.position === 0) continue; // never written (preallocated)
        const off = base + BigInt(e.relativeOffset);
        const b = byPosition.get(e.position);
        if (!b) fail(`${idx}: entry (${off}, ${e.position}) is not at a batch boundary`);
        else if (b.baseOffset > off || !lastOffsets.has(off))
          fail(`${idx}: entry (${off}, ${e.position}) does not match batch ${b.baseOffset}`);
      }
    }
    const tidx = join(dir, `${name.slice(0, 20)}.timeindex`);
    if (existsSync(tidx)) {
      for (const e of parseTimeIndexFile(tidx)) {
        if (e.timestamp === 0n && e.relativeOffset === 0) continue;
        const off = base + BigInt(e.relativeOffset);
        const b = lastOffsets.get(off);
        if (!b || b.maxTimestamp !== e.timestamp)
          fail(`${tidx}: entry (${e.timestamp}, ${off}) matches no batch`);
      }
    }
  }
  return { batches: out, startOffset: segments[0] ?? 0n, endOffset: expectNext ?? 0n, segments };
}

export interface LogFixture {
  readonly dir: string;
  log: UnifiedLog;
  /** Clean shutdown, then load again. */
  reopen(): UnifiedLog;
  /** A crash: the log is abandoned (no close, no snapshot) and the dir loaded as after an unclean shutdown. */
  crash(recoveryPoint?: bigint): UnifiedLog;
  /** Loads the (already closed) dir again as after a clean shutdown. */
  load(): UnifiedLog;
  cleanup(): void;
}

/** A UnifiedLog in a fresh partition dir, with `extra` open options, that a test can restart or crash. */
export function openLogFixture(
  prefix: string,
  cfg: LogConfig,
  extra: Omit<Parameters<typeof UnifiedLog.open>[2], "recoveryPoint" | "hadCleanShutdown">,
): LogFixture {
  const t = tempPartitionDir(prefix);
  mkdirSync(t.dir, { recursive: true });
  const mk = (clean: boolean, recoveryPoint = 0n): UnifiedLog =>
    UnifiedLog.open(t.dir, cfg, { ...extra, recoveryPoint, hadCleanShutdown: clean });
  const fx: LogFixture = {
    dir: t.dir,
    log: mk(true),
    reopen() {
      fx.log.close();
      fx.log = mk(true);
      return fx.log;
    },
    crash(recoveryPoint = 0n) {
      fx.log = mk(false, recoveryPoint);
      return fx.log;
    },
    load() {
      fx.log = mk(true);
      return fx.log;
    },
    cleanup() {
      try {
        fx.log.close();
      } catch {}
      t.cleanup();
    },
  };
  return fx;
}
