// `tributary log-recover`: inspect and restore what log recovery quarantined instead of deleting it
// (storage/log-quarantine.ts; Kafka has no such tool: its recovery deletes those bytes).
//
//   --log-dir D --list       every quarantine under D: partition, when and why, and per file its byte
//                            range in the original segment, offsets, batches and records
//   --log-dir D --restore    for a stopped broker: puts the intact batches back into their partition's log
//                            where that is consistent (storage/log-quarantine-restore.ts); a quarantine
//                            that cannot be restored is one line on stderr saying why, and exit status 1.
//                            D's `.lock` is held meanwhile (storage/log-dir-lock.ts): refused while a
//                            broker holds it, and no broker starts on D until the restore is done
//   --log-dir D --reproduce --bootstrap-server B [--topic T]
//                            for a running broker, when a restore is refused (new records took the
//                            quarantined offsets): produces the intact records again (key, value, headers,
//                            timestamp; new offsets, in order, acks=all) to the same partition of their
//                            topic or of T; transactional and control batches are left out (their
//                            outcome is not in the quarantine) and counted; the manifest records it
//   --partition T-N          only that partition
//
// Every error is one line naming what and why; nothing prints a stack trace.

import { existsSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { KafkaProducer } from "../../client/producer/kafka-producer.js";
import { describeHolder, LOCK_FILE_NAME } from "../../common/dir-lock.js";
import {
  ATTRIBUTES_OFFSET,
  CONTROL_FLAG_MASK,
  decodeBatchRecords,
  RECORDS_COUNT_OFFSET,
  TRANSACTIONAL_FLAG_MASK,
} from "../../protocol/records/index.js";
import { LogDirLockedError, LogDirLocks } from "../../storage/log-dir-lock.js";
import { type QuarantineInfo, quarantinedBatches, writeManifest } from "../../storage/log-quarantine.js";
import {
  QuarantineRestoreError,
  quarantinesIn,
  restoreQuarantine,
  stoppedCleanly,
} from "../../storage/log-quarantine-restore.js";
import { checkInvalid, checkRequired, type ParsedArgs, runTool, type ToolSpec, UsageError } from "../args.js";

export const LOG_RECOVER_SPEC: ToolSpec = {
  name: "log-recover",
  description:
    "This tool lists and restores what log recovery moved to a quarantine (instead of deleting it) after finding a damaged batch.",
  options: [
    {
      name: "log-dir",
      description: "REQUIRED: a log directory of the broker (an entry of log.dirs).",
      arg: { type: "String", describedAs: "dir" },
    },
    { name: "list", description: "List the quarantines: partition, byte ranges, offsets, record counts." },
    {
      name: "restore",
      description:
        "Put the intact quarantined batches back into their partition's log (the broker must be stopped).",
    },
    {
      name: "reproduce",
      description:
        "Produce the intact quarantined records again through a running broker (new offsets), for a quarantine that cannot be restored. Leaves out transactional and control batches.",
    },
    {
      name: "bootstrap-server",
      description: "With --reproduce: the broker(s) to produce to.",
      arg: { type: "String", describedAs: "server(s) to connect to" },
    },
    {
      name: "topic",
      description: "With --reproduce: the topic to produce to (default: the quarantine's own topic).",
      arg: { type: "String", describedAs: "topic" },
    },
    {
      name: "partition",
      description: "Only this partition.",
      arg: { type: "String", describedAs: "topic-partition" },
    },
  ],
};

function describe(q: QuarantineInfo): string[] {
  const m = q.manifest;
  if (m === undefined) return [`  ${q.name}: ${q.problem}; ${q.bytes} bytes of files`];
  const r = m.reproduced;
  const state = m.restored
    ? `restored at ${m.restored.time}`
    : r
      ? `reproduced at ${r.time}: ${r.records} records to ${r.topic}-${r.partition} offsets ${r.firstOffset}..${r.lastOffset}`
      : "not restored";
  const lines = [
    `  ${q.name} (${m.time}, ${state}): recovery cut the log at position ${m.cutPosition} of ${m.cutSegment} (${m.reason}); the log ended at offset ${m.logEndOffsetAfterCut} after the cut`,
  ];
  for (const f of m.files) {
    const here = existsSync(`${q.dir}/${f.file}`) ? "" : " (restored)";
    const offsets =
      f.firstOffset !== undefined
        ? ` offsets ${f.firstOffset}..${f.lastOffset} ${f.batches} batches ${f.records} records`
        : "";
    const checked = f.kind === "damaged" ? "" : f.crcChecked ? " crc checked" : " crc checked on restore";
    const partial = f.headersEndAt !== undefined ? ` headers end at position ${f.headersEndAt}` : "";
    lines.push(
      `    ${f.kind.padEnd(8)} ${f.file} bytes [${f.start}, ${f.end}) of ${f.source}${offsets}${checked}${partial}${here}`,
    );
  }
  return lines;
}

async function logRecover(args: ParsedArgs): Promise<number> {
  checkRequired(args, "log-dir");
  checkInvalid(args, "list", ["restore", "reproduce"]);
  checkInvalid(args, "restore", ["reproduce"]);
  if (!args.has("list") && !args.has("restore") && !args.has("reproduce"))
    throw new UsageError("Exactly one of --list, --restore or --reproduce must be given");
  if (args.has("reproduce")) checkRequired(args, "bootstrap-server");
  const logDir = args.value("log-dir") ?? "";
  if (!existsSync(logDir) || !statSync(logDir).isDirectory())
    throw new UsageError(`--log-dir ${logDir}: expected an existing log directory`);
  const only = args.value("partition");
  if (args.has("restore")) return restoreLocked(logDir, only);
  const found = quarantinesIn(logDir).filter((p) => only === undefined || basename(p.partitionDir) === only);

  if (args.has("list")) {
    if (found.length === 0) {
      process.stdout.write(`No quarantined data in ${logDir}${only ? ` for partition ${only}` : ""}\n`);
      return 0;
    }
    for (const p of found) {
      process.stdout.write(`Partition ${basename(p.partitionDir)}\n`);
      for (const q of p.quarantines) process.stdout.write(`${describe(q).join("\n")}\n`);
    }
    return 0;
  }

  return reproduce(args, found);
}

/** --restore: the log dir is locked before anything in it is read, until the restore is done. */
function restoreLocked(logDir: string, only: string | undefined): number {
  let locks: LogDirLocks;
  try {
    locks = LogDirLocks.acquire([logDir]);
  } catch (e) {
    const why =
      e instanceof LogDirLockedError
        ? `cannot restore in ${logDir}: a broker is using it (${describeHolder(e.holderPid)} holds ${join(logDir, LOCK_FILE_NAME)}); stop it with server-stop first`
        : (e as Error).message;
    process.stderr.write(`${why}\n`);
    return 1;
  }
  try {
    const lockFailure = locks.failure(logDir);
    if (lockFailure !== undefined) {
      process.stderr.write(`cannot restore in ${logDir}: cannot lock it: ${lockFailure.message}\n`);
      return 1;
    }
    return restore(logDir, only);
  } finally {
    locks.release();
  }
}

/** --restore, with the log dir locked. */
function restore(logDir: string, only: string | undefined): number {
  if (!stoppedCleanly(logDir)) {
    process.stderr.write(
      `cannot restore in ${logDir}: the broker using it is running or did not stop cleanly (no .kafka_cleanshutdown); stop it with server-stop first (after a crash, start and stop it once so recovery runs)\n`,
    );
    return 1;
  }
  const found = quarantinesIn(logDir).filter((p) => only === undefined || basename(p.partitionDir) === only);
  const pending = found.flatMap((p) =>
    p.quarantines
      .filter((q) => q.manifest?.restored === undefined && q.manifest?.reproduced === undefined)
      .map((q) => ({ p, q })),
  );
  if (pending.length === 0) {
    process.stdout.write(`Nothing to restore in ${logDir}${only ? ` for partition ${only}` : ""}\n`);
    return 0;
  }
  let failed = 0;
  for (const { p, q } of pending) {
    try {
      const r = restoreQuarantine(logDir, p.partitionDir, q);
      process.stdout.write(
        `Restored ${r.quarantine} of partition ${r.partition}: ${r.files.length} segments (${r.files.join(", ")}), ${r.records} records; the log now ends at offset ${r.logEndOffset} and is recovered on the next start\n`,
      );
    } catch (e) {
      if (!(e instanceof QuarantineRestoreError) && !(e as NodeJS.ErrnoException).code) throw e;
      failed++;
      process.stderr.write(`${(e as Error).message}\n`);
    }
  }
  return failed > 0 ? 1 : 0;
}

/** --reproduce: every pending quarantine's intact records, produced again in order. */
async function reproduce(
  args: ParsedArgs,
  found: Array<{ partitionDir: string; quarantines: QuarantineInfo[] }>,
): Promise<number> {
  const pending = found.flatMap((p) =>
    p.quarantines.filter(
      (q) =>
        q.manifest !== undefined && q.manifest.restored === undefined && q.manifest.reproduced === undefined,
    ),
  );
  if (pending.length === 0) {
    process.stdout.write("Nothing to reproduce\n");
    return 0;
  }
  // Check every batch before sending anything.
  for (const q of pending) {
    try {
      for (const _ of quarantinedBatches(q)) {
        // checked as it is read
      }
    } catch (e) {
      process.stderr.write(`cannot reproduce ${q.name}: ${(e as Error).message}; nothing was sent\n`);
      return 1;
    }
  }
  const producer = new KafkaProducer({
    "bootstrap.servers": args.value("bootstrap-server") ?? "",
    acks: "all",
    "max.in.flight.requests.per.connection": "1",
    "client.id": "log-recover",
  });
  try {
    for (const q of pending) {
      const m = q.manifest!;
      const topic = args.value("topic") ?? m.topic;
      let records = 0;
      let skipped = 0;
      let first: bigint | undefined;
      let last: bigint | undefined;
      for (const { batch } of quarantinedBatches(q)) {
        const attributes = batch.readInt16BE(ATTRIBUTES_OFFSET);
        if ((attributes & (TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK)) !== 0) {
          skipped += batch.readInt32BE(RECORDS_COUNT_OFFSET);
          continue;
        }
        const sent = await Promise.all(
          decodeBatchRecords(batch).map((r) =>
            producer.send({
              topic,
              partition: m.partition,
              key: r.key,
              value: r.value,
              headers: r.headers,
              timestamp: r.timestamp,
            }),
          ),
        );
        for (const md of sent) {
          const o = BigInt(md.offset);
          if (first === undefined || o < first) first = o;
          if (last === undefined || o > last) last = o;
        }
        records += sent.length;
      }
      writeManifest(q.dir, {
        ...m,
        reproduced: {
          time: new Date().toISOString(),
          topic,
          partition: m.partition,
          records,
          firstOffset: String(first ?? -1n),
          lastOffset: String(last ?? -1n),
          skippedRecords: skipped,
        },
      });
      process.stdout.write(
        `Reproduced ${records} records of ${q.name} of partition ${m.topic}-${m.partition} to ${topic}-${m.partition} at offsets ${first ?? "-"}..${last ?? "-"}${skipped > 0 ? `; left out ${skipped} records of transactional or control batches` : ""}\n`,
      );
    }
  } finally {
    await producer.close(10_000);
  }
  return 0;
}

export async function runLogRecover(argv: string[]): Promise<number> {
  return runTool(LOG_RECOVER_SPEC, argv, logRecover);
}
