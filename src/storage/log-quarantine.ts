// LogQuarantine: what log recovery moves aside instead of destroying (issue 20). Where Kafka's
// LogLoader.recoverLog truncates a log at its first invalid batch and deletes every later segment, the
// LogLoader hands those bytes to a quarantine first, so nothing acknowledged is lost:
//
//   <log dir>/<topic>-<partition>/quarantine-<epoch ms>/
//     quarantine.json                                  the manifest (written last, atomically)
//     <base offset, 20 digits>.log                     an intact piece: whole, CRC-checked batches cut from
//                                                      the damaged segment after its damaged batch
//     <segment base>.log.<start>-<end>.damaged         raw bytes [start, end) of the damaged segment that
//                                                      hold no valid batch (the damaged batch)
//     <base>.log, .index, .timeindex, .txnindex        a later segment, moved as it was
//
// `tributary log-recover` lists a quarantine, restores it (log-quarantine-restore.ts) or produces its
// records again through a running broker (`--reproduce`, quarantinedBatches below).
//
// Why inside the partition directory: Kafka's LogManager parses the name of every directory directly in a
// log dir (LocalLog.parseTopicPartitionName): `<topic>-<n>` is loaded as a log, `…-delete` is deleted,
// `…-stray` is deleted as a stray replica, `…-future` is loaded as a future replica, and a name it cannot
// parse stops the broker with a KafkaException — no name is safe there. Kafka's LogLoader, its cleaner
// and kafka-dump-log only look at the *files* of a partition directory (`dir.listFiles if file.isFile`),
// and Tributary's LogLoader only at names matching `<20 digits>.<suffix>`: a sub-directory named
// `quarantine-*` is invisible to both. It goes away with the partition (topic deletion removes the
// directory recursively), which is what a deleted topic's data should do.
//
// Invariants: the bytes of the damaged segment from the cut on are all in the quarantine (intact pieces
// plus damaged ranges cover [cut, old size) exactly); later segments are renamed, never copied; all of it
// happens before the damaged segment is truncated (later segments moved, tail copied and synced, manifest
// written), so after a crash midway the segment is still whole, the next recovery cuts at the same place
// and continues the same folder (one without a manifest, or with a manifest of this very cut), adopting
// what was moved already. Offsets in the manifest are decimal strings (JSON has no 64-bit integers).

import {
  closeSync,
  existsSync,
  fdatasyncSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { basename, join } from "node:path";
import {
  BATCH_LENGTH_OFFSET,
  isRecordBatchCrcValid,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  MIN_BATCH_LENGTH,
  RECORD_BATCH_MAGIC,
  RECORD_BATCH_OVERHEAD,
  RECORDS_COUNT_OFFSET,
} from "../protocol/records/index.js";
import { filenamePrefixFromOffset, LOG_FILE_SUFFIX } from "./log-file-names.js";

export const QUARANTINE_DIR_PREFIX = "quarantine-";
export const QUARANTINE_MANIFEST = "quarantine.json";
export const DAMAGED_FILE_SUFFIX = ".damaged";
const INT32_MAX = 2147483647;
const COPY_CHUNK = 1 << 20;

/** One file of a quarantine. */
export interface QuarantinedFile {
  /** Name inside the quarantine folder. */
  readonly file: string;
  /** intact: valid batches cut from the damaged segment; damaged: bytes with no valid batch; segment: a later segment. */
  readonly kind: "intact" | "damaged" | "segment";
  /** The partition-directory file the bytes came from, and their range [start, end) in it. */
  readonly source: string;
  readonly start: number;
  readonly end: number;
  /** Batches read from the file's headers (for damaged files: none). */
  readonly firstOffset?: string;
  readonly lastOffset?: string;
  readonly batches?: number;
  readonly records?: number;
  /** Whether every batch's CRC was checked when quarantined (intact pieces: yes; moved segments: no). */
  readonly crcChecked: boolean;
  /** Where the header chain of a moved segment stopped short of its end (damage found later). */
  readonly headersEndAt?: number;
  /** Index files moved with a segment. */
  readonly indexFiles?: readonly string[];
}

export interface QuarantineManifest {
  readonly version: 1;
  readonly topic: string;
  readonly partition: number;
  readonly time: string;
  readonly timeMs: number;
  /** Why recovery stopped. */
  readonly reason: string;
  /** The segment that was cut, the position of the cut, and the log end offset after it. */
  readonly cutSegment: string;
  readonly cutPosition: number;
  readonly logEndOffsetAfterCut: string;
  readonly files: readonly QuarantinedFile[];
  /** Set by `tributary log-recover --restore`. */
  readonly restored?: {
    readonly time: string;
    readonly files: readonly string[];
    readonly logEndOffset: string;
  };
  /** Set by `tributary log-recover --reproduce`: the records were produced again (new offsets). */
  readonly reproduced?: {
    readonly time: string;
    readonly topic: string;
    readonly partition: number;
    readonly records: number;
    readonly firstOffset: string;
    readonly lastOffset: string;
    /** Records of transactional and control batches left out. */
    readonly skippedRecords: number;
  };
}

/** A quarantine folder found on disk. */
export interface QuarantineInfo {
  readonly dir: string;
  readonly name: string;
  /** Undefined when the manifest is missing or unreadable (see `problem`). */
  readonly manifest?: QuarantineManifest;
  readonly problem?: string;
  /** Bytes of the files in the folder (manifest excluded). */
  readonly bytes: number;
}

/** A run of valid batches found by a scan. */
export interface BatchRun {
  readonly start: number;
  readonly end: number;
  readonly firstOffset: bigint;
  readonly lastOffset: bigint;
  readonly batches: number;
  readonly records: number;
}

/** A segment file's size and the run of valid batches its headers describe (CRCs not checked). */
function scanSegmentFile(path: string, segBase: bigint): { size: number; run: BatchRun } {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    return { size, run: scanValidRun(fd, 0, size, segBase - 1n, segBase, false) };
  } finally {
    closeSync(fd);
  }
}

/** The manifest entry of a later segment moved into the quarantine (absent file: an empty one). */
function segmentEntry(
  file: string,
  scanned: { size: number; run: BatchRun } | undefined,
  indexFiles: string[],
): QuarantinedFile {
  const size = scanned?.size ?? 0;
  const run = scanned?.run;
  return {
    file,
    kind: "segment",
    source: file,
    start: 0,
    end: size,
    ...(run !== undefined && run.batches > 0
      ? {
          firstOffset: String(run.firstOffset),
          lastOffset: String(run.lastOffset),
          batches: run.batches,
          records: run.records,
        }
      : {}),
    crcChecked: false,
    ...(run !== undefined && run.end < size ? { headersEndAt: run.end } : {}),
    indexFiles,
  };
}

function readFully(fd: number, buf: Buffer, position: number, length = buf.length): number {
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buf, done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}

/**
 * The batch at `pos` if it is valid: magic 2, a length that fits before `end`, offsets after `prevLast`
 * and within `segBase + Int32.MAX`, and (with checkCrc) a matching CRC32C. Reads at most the batch.
 */
export function validBatchAt(
  fd: number,
  pos: number,
  end: number,
  prevLast: bigint,
  segBase: bigint,
  checkCrc: boolean,
  header: Buffer = Buffer.alloc(RECORD_BATCH_OVERHEAD),
): { size: number; base: bigint; last: bigint; records: number } | undefined {
  if (pos + RECORD_BATCH_OVERHEAD > end) return undefined;
  if (readFully(fd, header, pos, RECORD_BATCH_OVERHEAD) < RECORD_BATCH_OVERHEAD) return undefined;
  const length = header.readInt32BE(BATCH_LENGTH_OFFSET);
  if (header.readInt8(MAGIC_OFFSET) !== RECORD_BATCH_MAGIC || length < MIN_BATCH_LENGTH) return undefined;
  const size = LOG_OVERHEAD + length;
  if (size > end - pos) return undefined;
  const base = header.readBigInt64BE(0);
  const delta = header.readInt32BE(LAST_OFFSET_DELTA_OFFSET);
  const last = base + BigInt(delta);
  if (delta < 0 || base <= prevLast || base < segBase || last - segBase > BigInt(INT32_MAX)) return undefined;
  if (checkCrc) {
    // Bounded by the file: size <= end - pos.
    const whole = Buffer.allocUnsafe(size);
    if (readFully(fd, whole, pos) < size || !isRecordBatchCrcValid(whole, 0)) return undefined;
  }
  return { size, base, last, records: header.readInt32BE(RECORDS_COUNT_OFFSET) };
}

/** The longest run of valid batches starting at `pos` (empty when the batch at `pos` is not valid). */
export function scanValidRun(
  fd: number,
  pos: number,
  end: number,
  prevLast: bigint,
  segBase: bigint,
  checkCrc: boolean,
): BatchRun {
  const header = Buffer.alloc(RECORD_BATCH_OVERHEAD);
  let p = pos;
  let last = prevLast;
  let first = -1n;
  let batches = 0;
  let records = 0;
  for (;;) {
    const b = validBatchAt(fd, p, end, last, segBase, checkCrc, header);
    if (b === undefined) break;
    if (batches === 0) first = b.base;
    batches++;
    records += b.records;
    last = b.last;
    p += b.size;
  }
  return { start: pos, end: p, firstOffset: first, lastOffset: last, batches, records };
}

/**
 * The first position in [from, end) where a valid (CRC-checked) batch with offsets after `prevLast`
 * starts: how the scan finds its footing again after a damaged batch whose length cannot be trusted.
 * Reads the file in 1 MiB windows; only candidates whose magic, length and offsets fit are CRC-checked.
 */
export function findNextValidBatch(
  fd: number,
  from: number,
  end: number,
  prevLast: bigint,
  segBase: bigint,
): number | undefined {
  const window = Buffer.allocUnsafe(COPY_CHUNK + RECORD_BATCH_OVERHEAD);
  const header = Buffer.alloc(RECORD_BATCH_OVERHEAD);
  for (let start = from; start + RECORD_BATCH_OVERHEAD <= end; start += COPY_CHUNK) {
    const got = readFully(fd, window, start, Math.min(window.length, end - start));
    const limit = Math.min(COPY_CHUNK, got - RECORD_BATCH_OVERHEAD + 1);
    for (let i = 0; i < limit; i++) {
      if (window[i + MAGIC_OFFSET] !== RECORD_BATCH_MAGIC) continue;
      const length = window.readInt32BE(i + BATCH_LENGTH_OFFSET);
      if (length < MIN_BATCH_LENGTH || LOG_OVERHEAD + length > end - (start + i)) continue;
      const base = window.readBigInt64BE(i);
      if (base <= prevLast || base < segBase) continue;
      if (validBatchAt(fd, start + i, end, prevLast, segBase, true, header) !== undefined) return start + i;
    }
  }
  return undefined;
}

/** Copies bytes [start, end) of `fd` to a new file `to`, synced. */
function copyRange(fd: number, start: number, end: number, to: string): void {
  // Overwrites: a quarantine interrupted by a crash is redone in the same folder with the same names.
  const out = openSync(to, "w");
  try {
    const buf = Buffer.allocUnsafe(Math.min(COPY_CHUNK, Math.max(1, end - start)));
    for (let p = start; p < end; ) {
      const n = readFully(fd, buf, p, Math.min(buf.length, end - p));
      if (n === 0) throw new Error(`unexpected end of file at position ${p} while copying to ${to}`);
      let w = 0;
      while (w < n) w += writeSync(out, buf, w, n - w, p - start + w);
      p += n;
    }
    fdatasyncSync(out);
  } finally {
    closeSync(out);
  }
}

function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, "r");
    try {
      fdatasyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Not every file system syncs directories; the rename is still atomic.
  }
}

/** Writes the manifest atomically (temp file, sync, rename). */
export function writeManifest(qdir: string, manifest: QuarantineManifest): void {
  const tmp = join(qdir, `${QUARANTINE_MANIFEST}.tmp`);
  writeFileSync(tmp, `${JSON.stringify(manifest, null, 2)}\n`);
  const fd = openSync(tmp, "r");
  try {
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, join(qdir, QUARANTINE_MANIFEST));
  syncDir(qdir);
}

/**
 * Builds one quarantine while the LogLoader recovers a partition: the damaged segment's tail (split into
 * intact pieces and damaged ranges), then the later segments moved as they are, then the manifest.
 */
export class QuarantineWriter {
  private dir: string | undefined;
  private readonly files: QuarantinedFile[] = [];
  private cut: { segment: string; position: number; reason: string } | undefined;

  constructor(
    readonly partitionDir: string,
    readonly topic: string,
    readonly partition: number,
    private readonly nowMs: number,
  ) {}

  get isEmpty(): boolean {
    return this.files.length === 0;
  }

  get quarantineDir(): string | undefined {
    return this.dir;
  }

  get quarantinedFiles(): readonly QuarantinedFile[] {
    return this.files;
  }

  get bytes(): number {
    return this.files.reduce((s, f) => s + (f.end - f.start), 0);
  }

  /** Records where and why the log is cut (the first cut counts); call before moving or saving anything. */
  begin(cutSegment: string, cutPosition: number, reason: string): void {
    if (this.cut === undefined) this.cut = { segment: cutSegment, position: cutPosition, reason };
  }

  /**
   * A write that never completed — a partial batch at the very end of the log, nothing valid after it —
   * is what Kafka's recovery exists to cut: no quarantine for it.
   */
  isTornWrite(
    logPath: string,
    segBase: bigint,
    validBytes: number,
    prevLast: bigint,
    reason: string,
    lastSegment: boolean,
  ): boolean {
    if (!lastSegment || !isPartialBatchReason(reason)) return false;
    const fd = openSync(logPath, "r");
    try {
      return findNextValidBatch(fd, validBytes, fstatSync(fd).size, prevLast, segBase) === undefined;
    } finally {
      closeSync(fd);
    }
  }

  /**
   * The folder: a quarantine of the same cut that a crash interrupted (no manifest, or a manifest of this
   * very cut: the cut segment was not truncated yet) is continued, else a new one is made.
   */
  private folder(): string {
    if (this.dir === undefined) {
      const cut = this.cut;
      const resumable = listQuarantines(this.partitionDir).find(
        (q) =>
          q.manifest === undefined ||
          (q.manifest.restored === undefined &&
            cut !== undefined &&
            q.manifest.cutSegment === cut.segment &&
            q.manifest.cutPosition === cut.position),
      );
      if (resumable !== undefined) {
        this.dir = resumable.dir;
        return this.dir;
      }
      let name = `${QUARANTINE_DIR_PREFIX}${this.nowMs}`;
      for (let i = 1; existsSync(join(this.partitionDir, name)); i++)
        name = `${QUARANTINE_DIR_PREFIX}${this.nowMs}-${i}`;
      this.dir = join(this.partitionDir, name);
      mkdirSync(this.dir);
    }
    return this.dir;
  }

  /**
   * Saves bytes [validBytes, file size) of the segment file `logPath` (base offset `segBase`, last valid
   * offset `prevLast` before the cut) before recovery truncates them: runs of valid batches become
   * `<base>.log` pieces, the bytes between them `.damaged` files.
   */
  saveTail(logPath: string, segBase: bigint, validBytes: number, prevLast: bigint): void {
    const source = basename(logPath);
    const fd = openSync(logPath, "r");
    try {
      const end = fstatSync(fd).size;
      const qdir = this.folder();
      let pos = validBytes;
      let last = prevLast;
      while (pos < end) {
        const run = scanValidRun(fd, pos, end, last, segBase, true);
        if (run.batches > 0) {
          const file = filenamePrefixFromOffset(run.firstOffset) + LOG_FILE_SUFFIX;
          copyRange(fd, run.start, run.end, join(qdir, file));
          this.files.push({
            file,
            kind: "intact",
            source,
            start: run.start,
            end: run.end,
            firstOffset: String(run.firstOffset),
            lastOffset: String(run.lastOffset),
            batches: run.batches,
            records: run.records,
            crcChecked: true,
          });
          last = run.lastOffset;
          pos = run.end;
          continue;
        }
        const next = findNextValidBatch(fd, pos + 1, end, last, segBase) ?? end;
        const file = `${source}.${pos}-${next}${DAMAGED_FILE_SUFFIX}`;
        copyRange(fd, pos, next, join(qdir, file));
        this.files.push({ file, kind: "damaged", source, start: pos, end: next, crcChecked: false });
        pos = next;
      }
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Moves a later segment's files (closed by the caller) into the quarantine, after reading its batch
   * headers for the manifest (first/last offset, batches, records; CRCs are checked on restore).
   */
  moveSegment(logPath: string, segBase: bigint, indexPaths: readonly string[]): void {
    const qdir = this.folder();
    const source = basename(logPath);
    const scanned = existsSync(logPath) ? scanSegmentFile(logPath, segBase) : undefined;
    if (scanned !== undefined) renameSync(logPath, join(qdir, source));
    const moved: string[] = [];
    for (const p of indexPaths) {
      if (!existsSync(p)) continue;
      renameSync(p, join(qdir, basename(p)));
      moved.push(basename(p));
    }
    this.files.push(segmentEntry(source, scanned, moved));
  }

  /**
   * Files already in a continued folder that this run did not write: segments an interrupted run had
   * moved, and its pieces (listed again under the same names when this run re-cut them).
   */
  private adoptLeftovers(qdir: string): void {
    const known = new Set(this.files.map((f) => f.file));
    const names = readdirSync(qdir).sort();
    for (const name of names) {
      if (known.has(name)) continue;
      const damaged = /^(\d{20}\.log)\.(\d+)-(\d+)\.damaged$/.exec(name);
      if (damaged) {
        const [, source, start, end] = damaged;
        this.files.push({
          file: name,
          kind: "damaged",
          source,
          start: Number(start),
          end: Number(end),
          crcChecked: false,
        });
        continue;
      }
      if (!/^\d{20}\.log$/.test(name)) continue;
      const prefix = name.slice(0, 20);
      const scanned = scanSegmentFile(join(qdir, name), BigInt(prefix));
      this.files.push(
        segmentEntry(
          name,
          scanned,
          names.filter((n) => n !== name && n.startsWith(prefix) && !n.endsWith(DAMAGED_FILE_SUFFIX)),
        ),
      );
    }
    this.files.sort((a, b) => (a.source === b.source ? a.start - b.start : a.source < b.source ? -1 : 1));
  }

  /** Writes (or rewrites) the manifest; returns it (undefined when nothing was quarantined). */
  finish(logEndOffsetAfterCut: bigint): QuarantineManifest | undefined {
    if (this.dir === undefined) return undefined;
    this.adoptLeftovers(this.dir);
    const cut = this.cut ?? {
      segment: this.files[0]?.source ?? "",
      position: 0,
      reason: "segments after a cut",
    };
    const manifest: QuarantineManifest = {
      version: 1,
      topic: this.topic,
      partition: this.partition,
      time: new Date(this.nowMs).toISOString(),
      timeMs: this.nowMs,
      reason: cut.reason,
      cutSegment: cut.segment,
      cutPosition: cut.position,
      logEndOffsetAfterCut: String(logEndOffsetAfterCut),
      files: this.files,
    };
    syncDir(this.partitionDir);
    writeManifest(this.dir, manifest);
    return manifest;
  }
}

/** LogSegment.recover's reasons for a batch cut short by the end of the file. */
export function isPartialBatchReason(reason: string): boolean {
  return /^a partial batch/.test(reason);
}

/** `file[start, end)` items for a log line. */
export function describeRanges(files: readonly QuarantinedFile[]): string {
  return files
    .map((f) => {
      const offsets = f.firstOffset !== undefined ? ` offsets ${f.firstOffset}..${f.lastOffset}` : "";
      const from = f.kind === "segment" ? "" : ` from ${f.source}`;
      return `${f.kind} ${f.file} = bytes [${f.start}, ${f.end})${from}${offsets}`;
    })
    .join("; ");
}

function isQuarantineName(name: string): boolean {
  return name.startsWith(QUARANTINE_DIR_PREFIX);
}

/** Every quarantine folder of a partition directory, oldest first. */
export function listQuarantines(partitionDir: string): QuarantineInfo[] {
  let entries: import("node:fs").Dirent[];
  try {
    entries = readdirSync(partitionDir, { withFileTypes: true });
  } catch {
    return [];
  }
  const out: QuarantineInfo[] = [];
  for (const e of entries) {
    if (!e.isDirectory() || !isQuarantineName(e.name)) continue;
    const dir = join(partitionDir, e.name);
    let bytes = 0;
    for (const f of readdirSync(dir)) {
      if (f === QUARANTINE_MANIFEST) continue;
      try {
        bytes += statSync(join(dir, f)).size;
      } catch {
        // gone meanwhile
      }
    }
    const path = join(dir, QUARANTINE_MANIFEST);
    if (!existsSync(path)) {
      out.push({
        dir,
        name: e.name,
        bytes,
        problem: `no ${QUARANTINE_MANIFEST} (an interrupted quarantine)`,
      });
      continue;
    }
    try {
      const manifest = JSON.parse(readFileSync(path, "utf8")) as QuarantineManifest;
      if (manifest.version !== 1 || !Array.isArray(manifest.files))
        throw new Error(`expected version 1 with a files array`);
      out.push({ dir, name: e.name, bytes, manifest });
    } catch (err) {
      out.push({ dir, name: e.name, bytes, problem: `${path} is unreadable: ${(err as Error).message}` });
    }
  }
  const t = (q: QuarantineInfo): number => q.manifest?.timeMs ?? 0;
  return out.sort((a, b) => t(a) - t(b) || (a.name < b.name ? -1 : 1));
}

/** The files of a manifest that hold batches (intact pieces and moved segments), in offset order. */
export function batchFiles(manifest: QuarantineManifest): QuarantinedFile[] {
  const base = (f: QuarantinedFile): bigint => BigInt(f.file.slice(0, 20));
  return manifest.files
    .filter((f) => (f.kind === "intact" || f.kind === "segment") && (f.batches ?? 0) > 0)
    .sort((a, b) => (base(a) < base(b) ? -1 : base(a) > base(b) ? 1 : 0));
}

/**
 * Every batch of a quarantine's batch files in offset order, each checked (magic, length, CRC32C, offsets
 * increasing). Throws an Error naming the file and position of the first batch that fails. One batch in
 * memory at a time (bounded by its file's size).
 */
export function* quarantinedBatches(q: QuarantineInfo): Generator<{ file: string; batch: Buffer }> {
  if (q.manifest === undefined) throw new Error(`${q.dir}: ${q.problem}`);
  let prevLast = BigInt(q.manifest.logEndOffsetAfterCut) - 1n;
  const header = Buffer.alloc(RECORD_BATCH_OVERHEAD);
  for (const f of batchFiles(q.manifest)) {
    const path = join(q.dir, f.file);
    const fd = openSync(path, "r");
    try {
      const size = fstatSync(fd).size;
      const base = BigInt(f.file.slice(0, 20));
      for (let pos = 0; pos < size; ) {
        const b = validBatchAt(fd, pos, size, prevLast, base, true, header);
        if (b === undefined)
          throw new Error(
            `${path} has no valid batch at position ${pos} of ${size} (damaged, or offsets not after ${prevLast})`,
          );
        const batch = Buffer.allocUnsafe(b.size);
        readFully(fd, batch, pos);
        yield { file: f.file, batch };
        prevLast = b.last;
        pos += b.size;
      }
    } finally {
      closeSync(fd);
    }
  }
}
