// Test-only: a small tmpfs file system mounted on a fresh temporary directory, so a test can fill a log
// dir for real (ENOSPC from the kernel, statfs telling the truth). Needs root (mount(8)); `mountTmpfs`
// answers a reason string instead when mounting is refused, for the test to skip with (under CI the test
// file stops instead: required-tools.ts). `unmount` lazily
// unmounts (a broker killed a moment ago may still hold files) and removes the directory; a process-exit
// hook unmounts whatever a crashed test left mounted. Also: `freeBytes` (statfs) and a Python
// confluent-kafka producer that reports every record's fate (acknowledged offset, or error name and
// how long it took).

import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand } from "./broker-harness.js";
import { requireEnvironment } from "./required-tools.js";

const mounted = new Set<string>();
process.on("exit", () => {
  for (const dir of mounted) spawnSync("umount", ["-l", dir]);
});

/** A refusal to mount: under CI the test file stops (required-tools.ts), elsewhere the skip reason. */
function refused(reason: string): { skip: string } {
  return { skip: requireEnvironment(reason) || reason };
}

/** Mounts a tmpfs of `sizeMb` MiB on a new temporary dir: its path, or `{ skip }` saying why it cannot. */
export function mountTmpfs(prefix: string, sizeMb: number): { dir: string } | { skip: string } {
  if (process.getuid?.() !== 0) return refused("mounting a tmpfs needs root");
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const r = spawnSync("mount", ["-t", "tmpfs", "-o", `size=${sizeMb}m`, "tmpfs", dir], { encoding: "utf8" });
  if (r.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return refused(`mount -t tmpfs refused: ${(r.stderr || r.error?.message || "").trim()}`);
  }
  mounted.add(dir);
  return { dir };
}

export function unmount(dir: string): void {
  if (!mounted.has(dir)) return;
  spawnSync("umount", ["-l", dir]);
  mounted.delete(dir);
  rmSync(dir, { recursive: true, force: true });
}

export function freeBytes(dir: string): number {
  const s = statfsSync(dir);
  return Number(s.bavail) * Number(s.bsize);
}

/** What happened to each record a producer sent: acknowledged at an offset, or failed. */
export interface ProduceOutcome {
  /** [key, partition, offset] of every acknowledged record, in acknowledgement order. */
  readonly acked: Array<[number, number, number]>;
  /** [key, error name, seconds from produce() to the error] of every failed record. */
  readonly errors: Array<[number, string, number]>;
}

const PRODUCER_PY = `
import sys, json, time
from confluent_kafka import Producer
bootstrap, topic, first, count, size, stop_on_error, retries = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6] == "1", int(sys.argv[7])
p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "message.send.max.retries": retries,
              "enable.idempotence": False, "linger.ms": 5, "message.timeout.ms": 30000})
acked, errors, sent = [], [], {}
def cb(err, msg):
    k = int(msg.key())
    if err is None: acked.append([k, msg.partition(), msg.offset()])
    else: errors.append([k, err.name(), round(time.time() - sent[k], 3)])
pad = b"x" * size
for i in range(first, first + count):
    if stop_on_error and errors: break
    sent[i] = time.time()
    while True:
        try:
            p.produce(topic, key=str(i).encode(), value=(str(i) + ":").encode() + pad, callback=cb)
            break
        except BufferError:
            p.poll(0.05)
    p.poll(0)
p.flush(40)
print(json.dumps({"acked": acked, "errors": errors}))
`;

/**
 * Produces keys first..first+count-1 (values "<key>:" + size bytes) with acks=all (and by default no
 * retries), stopping
 * at the first failure when stopOnError; answers every record's outcome.
 */
export async function produceWithOutcomes(
  bootstrap: string,
  topic: string,
  opts: {
    first: number;
    count: number;
    size: number;
    stopOnError: boolean;
    workDir: string;
    /** message.send.max.retries (default 0: every error is reported as it came). */
    retries?: number;
  },
): Promise<ProduceOutcome> {
  const script = join(opts.workDir, "producer.py");
  writeFileSync(script, PRODUCER_PY);
  const r = await runCommand(
    "/usr/bin/python3",
    [
      script,
      bootstrap,
      topic,
      String(opts.first),
      String(opts.count),
      String(opts.size),
      opts.stopOnError ? "1" : "0",
      String(opts.retries ?? 0),
    ],
    { timeoutMs: 90_000 },
  );
  if (r.code !== 0) throw new Error(`producer failed (${r.code}): ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop() ?? "{}") as ProduceOutcome;
}
