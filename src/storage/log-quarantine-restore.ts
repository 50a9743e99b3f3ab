// QuarantineRestore: puts the intact batches of a quarantine (log-quarantine.ts) back into their
// partition's log, for a stopped broker (`tributary log-recover --restore`).
//
// When it is consistent: the partition's log must still end where recovery cut it (its log end offset is
// the manifest's logEndOffsetAfterCut). Then the intact pieces and later segments return as segments
// named after their first offset; the offsets skipped over the damaged batch are a gap, which Kafka's
// format allows (as after compaction: a fetch of an offset in the gap gets the next batch). When records
// were appended after the restart, they took the quarantined offsets, or at least a later leader epoch
// (a log's batches never go back in epoch): the restore is refused in one line and changes nothing (the
// quarantine's `.log` files can still be read with dump-log and their records produced again).
//
// What it guarantees: every restored file is checked first (each batch's magic, length, CRC32C, offsets
// increasing across files and after the log end); nothing is moved unless all pass. Each restored segment
// gets its indexes rebuilt from its batches; the partition's recovery point is lowered to the cut and the
// dir's clean-shutdown marker removed, so the next start recovers the restored segments as after a crash
// (CRCs again, leader-epoch cache, producer state and transaction index rebuilt from them). The manifest
// records the restore; the damaged bytes stay in the quarantine.

import { closeSync, existsSync, fstatSync, openSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { SYSTEM_TIME, type Time } from "../common/time.js";
import { parseTopicPartitionDir, topicPartitionKey } from "../common/topic-partition.js";
import { deleteCleanShutdownMarker, hasCleanShutdownMarker } from "./checkpoint/broker-metadata.js";
import { OffsetCheckpointFile } from "./checkpoint/offset-checkpoint-file.js";
import { DEFAULT_LOG_CONFIG, type LogConfig } from "./log-config.js";
import {
  filenamePrefixFromOffset,
  INDEX_FILE_SUFFIX,
  isLogFile,
  LOG_FILE_SUFFIX,
  TIME_INDEX_FILE_SUFFIX,
  TXN_INDEX_FILE_SUFFIX,
} from "./log-file-names.js";
import {
  batchFiles,
  listQuarantines,
  type QuarantinedFile,
  type QuarantineInfo,
  scanValidRun,
  writeManifest,
} from "./log-quarantine.js";
import { LogSegment } from "./log-segment.js";
import { RECOVERY_POINT_CHECKPOINT } from "./offset-checkpoints.js";

/** A restore that cannot be done, with the one-line reason. */
export class QuarantineRestoreError extends Error {}

export interface RestoreOutcome {
  readonly partition: string;
  readonly quarantine: string;
  /** Restored segment files, in offset order. */
  readonly files: readonly string[];
  readonly records: number;
  readonly logEndOffset: bigint;
}

/** The partition's log end offset, from the batch headers of its last segment (no index trusted). */
export function logEndOffsetOf(partitionDir: string): bigint {
  const bases = readdirSync(partitionDir)
    .filter(isLogFile)
    .map((n) => BigInt(n.slice(0, 20)))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (bases.length === 0) return 0n;
  const base = bases[bases.length - 1];
  const fd = openSync(join(partitionDir, filenamePrefixFromOffset(base) + LOG_FILE_SUFFIX), "r");
  try {
    const run = scanValidRun(fd, 0, fstatSync(fd).size, base - 1n, base, false);
    return run.batches > 0 ? run.lastOffset + 1n : base;
  } finally {
    closeSync(fd);
  }
}

function baseOf(f: QuarantinedFile): bigint {
  return BigInt(f.file.slice(0, 20));
}

/**
 * Restores one quarantine of the partition directory `partitionDir` in log dir `logDir`. Throws
 * QuarantineRestoreError (nothing changed) when it cannot.
 */
export function restoreQuarantine(
  logDir: string,
  partitionDir: string,
  q: QuarantineInfo,
  config: LogConfig = DEFAULT_LOG_CONFIG,
  time: Time = SYSTEM_TIME,
): RestoreOutcome {
  const m = q.manifest;
  const name = `${q.name} of partition ${partitionDir.split("/").pop()}`;
  if (m === undefined) throw new QuarantineRestoreError(`cannot restore ${name}: ${q.problem}`);
  if (m.restored !== undefined)
    throw new QuarantineRestoreError(`cannot restore ${name}: it was restored already at ${m.restored.time}`);
  if (m.reproduced !== undefined)
    throw new QuarantineRestoreError(
      `cannot restore ${name}: its records were produced again at ${m.reproduced.time} (offsets ${m.reproduced.firstOffset}..${m.reproduced.lastOffset} of ${m.reproduced.topic}-${m.reproduced.partition})`,
    );
  const files = batchFiles(m);
  if (files.length === 0)
    throw new QuarantineRestoreError(
      `cannot restore ${name}: it holds no intact batches, only damaged bytes`,
    );
  const cut = BigInt(m.logEndOffsetAfterCut);
  const leo = logEndOffsetOf(partitionDir);
  if (leo !== cut) {
    throw new QuarantineRestoreError(
      leo > cut
        ? `cannot restore ${name}: records were appended after the quarantine (the log end offset is ${leo}, it was ${cut} after the cut); the quarantined batches from offset ${files[0].firstOffset} were written before them and cannot follow them (offsets or leader epochs would go backwards); read them with dump-log --print-data-log and produce them again instead`
        : `cannot restore ${name}: the log end offset is ${leo}, below ${cut} where recovery cut the log (records were removed since), so the log no longer matches the quarantine`,
    );
  }
  // Check every file before moving any.
  let prevLast = cut - 1n;
  for (const f of files) {
    const path = join(q.dir, f.file);
    if (!existsSync(path)) throw new QuarantineRestoreError(`cannot restore ${name}: ${path} is missing`);
    const target = join(partitionDir, f.file);
    if (existsSync(target))
      throw new QuarantineRestoreError(`cannot restore ${name}: ${target} exists already in the partition`);
    const base = baseOf(f);
    const fd = openSync(path, "r");
    try {
      const size = fstatSync(fd).size;
      const run = scanValidRun(fd, 0, size, prevLast, base, true);
      if (run.end < size) {
        throw new QuarantineRestoreError(
          `cannot restore ${name}: ${path} has no valid batch at position ${run.end} of ${size} (damaged, or offsets not after ${run.batches > 0 ? run.lastOffset : prevLast}); nothing was restored`,
        );
      }
      prevLast = run.lastOffset;
    } finally {
      closeSync(fd);
    }
  }
  // Move back, rebuilding each segment's indexes from its batches.
  let records = 0;
  for (const f of files) {
    const base = baseOf(f);
    const prefix = filenamePrefixFromOffset(base);
    for (const suffix of [INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX, TXN_INDEX_FILE_SUFFIX]) {
      // Derived data: rebuilt below (the quarantined copies of a moved segment's indexes go).
      rmSync(join(q.dir, prefix + suffix), { force: true });
      rmSync(join(partitionDir, prefix + suffix), { force: true });
    }
    renameSync(join(q.dir, f.file), join(partitionDir, f.file));
    const seg = LogSegment.open(partitionDir, base, config, time, { fileAlreadyExists: true });
    try {
      const r = seg.recover();
      if (r.bytesTruncated > 0) throw new Error(`${f.file} changed while it was restored (${r.reason})`);
    } finally {
      seg.close();
    }
    records += f.records ?? 0;
  }
  // The next start recovers from the cut: recovery point lowered, clean-shutdown marker removed.
  const tp = parseTopicPartitionDir(partitionDir.split("/").pop() ?? "");
  if (tp !== undefined) {
    const cp = new OffsetCheckpointFile(join(logDir, RECOVERY_POINT_CHECKPOINT));
    let entries: Map<string, { tp: { topic: string; partition: number }; offset: bigint }>;
    try {
      entries = cp.read();
    } catch {
      entries = new Map();
    }
    const key = topicPartitionKey(tp);
    const current = entries.get(key)?.offset;
    entries.set(key, { tp, offset: current !== undefined && current < cut ? current : cut });
    cp.write(entries);
  }
  deleteCleanShutdownMarker(logDir);
  const newEnd = prevLast + 1n;
  writeManifest(q.dir, {
    ...m,
    restored: {
      time: new Date(time.milliseconds()).toISOString(),
      files: files.map((f) => f.file),
      logEndOffset: String(newEnd),
    },
  });
  return {
    partition: partitionDir.split("/").pop() ?? partitionDir,
    quarantine: q.name,
    files: files.map((f) => f.file),
    records,
    logEndOffset: newEnd,
  };
}

/** The partition directories of a log dir that hold quarantines, with them (oldest first). */
export function quarantinesIn(
  logDir: string,
): Array<{ partitionDir: string; quarantines: QuarantineInfo[] }> {
  const out: Array<{ partitionDir: string; quarantines: QuarantineInfo[] }> = [];
  const names = readdirSync(logDir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && parseTopicPartitionDir(e.name) !== undefined)
    .map((e) => e.name)
    .sort();
  for (const n of names) {
    const partitionDir = join(logDir, n);
    const quarantines = listQuarantines(partitionDir);
    if (quarantines.length > 0) out.push({ partitionDir, quarantines });
  }
  return out;
}

/** Whether the broker that owns `logDir` stopped cleanly (a running or crashed one has no marker). */
export function stoppedCleanly(logDir: string): boolean {
  return hasCleanShutdownMarker(logDir);
}
