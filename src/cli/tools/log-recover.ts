// `tributary log-recover`: inspect and restore what log recovery quarantined instead of deleting it
// (storage/log-quarantine.ts; Kafka has no such tool: its recovery deletes those bytes).
//
//   --log-dir D --list       every quarantine under D: partition, when and why, and per file its byte
//                            range in the original segment, offsets, batches and records
//   --log-dir D --restore    for a stopped broker: puts the intact batches back into their partition's log
//                            where that is consistent (storage/log-quarantine-restore.ts); a quarantine
//                            that cannot be restored is one line on stderr saying why, and exit status 1
//   --partition T-N          only that partition
//
// Every error is one line naming what and why; nothing prints a stack trace.

import { existsSync, statSync } from "node:fs";
import { basename } from "node:path";
import type { QuarantineInfo } from "../../storage/log-quarantine.js";
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
      name: "partition",
      description: "Only this partition.",
      arg: { type: "String", describedAs: "topic-partition" },
    },
  ],
};

function describe(q: QuarantineInfo): string[] {
  const m = q.manifest;
  if (m === undefined) return [`  ${q.name}: ${q.problem}; ${q.bytes} bytes of files`];
  const state = m.restored ? `restored at ${m.restored.time}` : "not restored";
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
  checkInvalid(args, "list", ["restore"]);
  if (!args.has("list") && !args.has("restore"))
    throw new UsageError("Exactly one of --list or --restore must be given");
  const logDir = args.value("log-dir") ?? "";
  if (!existsSync(logDir) || !statSync(logDir).isDirectory())
    throw new UsageError(`--log-dir ${logDir}: expected an existing log directory`);
  const only = args.value("partition");
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

  if (!stoppedCleanly(logDir)) {
    process.stderr.write(
      `cannot restore in ${logDir}: the broker using it is running or did not stop cleanly (no .kafka_cleanshutdown); stop it with server-stop first (after a crash, start and stop it once so recovery runs)\n`,
    );
    return 1;
  }
  const pending = found.flatMap((p) =>
    p.quarantines.filter((q) => q.manifest?.restored === undefined).map((q) => ({ p, q })),
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

export async function runLogRecover(argv: string[]): Promise<number> {
  return runTool(LOG_RECOVER_SPEC, argv, logRecover);
}
