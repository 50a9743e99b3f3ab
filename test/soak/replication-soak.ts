// Issue 17: Kafka's replication system test, reduced to what fits on this machine, and its soak run.
//
// `runFaultSchedule` is one schedule: on a 3-broker cluster, a topic with RF 3, min.insync.replicas=2 and
// 3 partitions; an idempotent confluent-kafka producer (acks=all) sends `p<partition>-<n>` (key
// `k<partition>`) round-robin over the partitions and reports every delivery (partition, offset, value)
// while a seeded random fault schedule runs: SIGTERM of the leader of a partition, SIGKILL of a leader,
// SIGKILL of the controller, and (on a cluster started with `linkProxy: true`) a network partition of a
// leader, or of the controller: cut off from the other brokers and from ZooKeeper
// (test/support/link-proxy.ts) for longer than zookeeper.session.timeout.ms, while clients still reach it,
// then healed; or a short cut of a leader (1–3 s, well within the session timeout and
// replica.lag.time.max.ms): its session survives, nothing is elected, the followers catch up. After each fault the victim's
// leadership (and, for the controller, the controller role) must move — as the other brokers see it — the
// victim is started again (or healed), every partition's ISR must be full again and the producer must make
// progress before the next fault. Then production stops and the checks run:
//   - the producer had no fatal error and delivered everything it was given (flush left nothing);
//   - every acknowledged value is consumed (kcat -C -e -o beginning) exactly once, at the partition and
//     offset it was acknowledged with; no value is consumed twice;
//   - per partition, the consumed values follow the producer's order (n strictly increasing), with the
//     partition's key;
//   - every replica's log (`tributary dump-log` of its segments) equals the leader's: same offsets, same
//     values — and the leader's equals what was consumed.
// The seed is printed at the start and is in every failure message; FAULT_SEED=<n> repeats a schedule.
//
// As a script (`npm run soak [-- --schedules N] [--faults F]`): N schedules (default 20) with different
// seeds on one cluster (a fresh one after a failure), then counts: schedules run, faults injected, records
// acknowledged and consumed, and the failures with their seeds.

import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

import { readWithKcat } from "../support/broker-harness.js";
import {
  ClusterHarness,
  formatDescribe,
  type PartitionDescription,
  SESSION_TIMEOUT_MS,
  sleep,
} from "../support/cluster-harness.js";
import { Random } from "../support/random.js";

export const PYTHON = "/usr/bin/python3";
export const KCAT = "/usr/bin/kcat";
export const PARTITIONS = 3;
/** Seconds between two produce() calls of the driver. */
const PACE_S = 0.004;

export type FaultKind =
  | "sigterm-leader"
  | "sigkill-leader"
  | "sigkill-controller"
  | "partition-leader"
  | "partition-controller"
  | "blip-leader";
export const FAULT_KINDS: readonly FaultKind[] = [
  "sigterm-leader",
  "sigkill-leader",
  "sigkill-controller",
  "partition-leader",
  "partition-controller",
  "blip-leader",
];
/** The kinds a cluster can run: a network partition needs the harness's link proxy. */
export function faultKindsFor(c: ClusterHarness): readonly FaultKind[] {
  return c.proxy
    ? FAULT_KINDS
    : FAULT_KINDS.filter((k) => !k.startsWith("partition-") && k !== "blip-leader");
}

export interface FaultRecord {
  readonly kind: FaultKind;
  readonly victim: number;
  /** The partition whose leader was chosen (undefined for the controller). */
  readonly partition?: number;
  /**
   * Milliseconds: until the victim's roles moved, the victim was down (or cut off), until the ISRs were full
   * again after the restart (or heal).
   */
  readonly movedMs: number;
  readonly downMs: number;
  readonly recoveredMs: number;
}

export interface ScheduleResult {
  readonly seed: number;
  readonly topic: string;
  readonly faults: FaultRecord[];
  readonly produced: number;
  readonly acknowledged: number;
  /** Delivery reports with an error (values that may or may not be in the log, at most once). */
  readonly deliveryErrors: number;
  readonly consumed: number;
  readonly ms: number;
}

export interface ScheduleOptions {
  readonly seed: number;
  readonly faults: number;
  /** Topic name; default `faults-<seed>`. */
  readonly topic?: string;
  readonly log?: (line: string) => void;
}

/** FAULT_SEED from the environment, or a fresh one. */
export function seedFromEnv(): number {
  const env = process.env.FAULT_SEED;
  if (env !== undefined && env !== "") {
    const n = Number(env);
    if (!Number.isInteger(n)) throw new Error(`FAULT_SEED=${env} is not an integer`);
    return n >>> 0;
  }
  return Math.floor(Math.random() * 2 ** 31);
}

/**
 * The fault kinds of a schedule: with at least as many faults as kinds, each kind once in a random order
 * first, then random kinds.
 */
export function planFaults(
  rng: Random,
  count: number,
  kinds: readonly FaultKind[] = FAULT_KINDS,
): FaultKind[] {
  const plan: FaultKind[] = [];
  if (count >= kinds.length) {
    const left = [...kinds];
    while (left.length > 0) plan.push(left.splice(rng.int(0, left.length - 1), 1)[0]);
  }
  while (plan.length < count) plan.push(kinds[rng.int(0, kinds.length - 1)]);
  return plan;
}

// argv: bootstrap topic partitions pace_seconds. Produces until a `stop` line (or EOF) on stdin, then
// flushes (bounded). Prints `ack <partition> <offset> <value>`, `fail <value> <json error>`,
// `clienterr <code> <fatal> <json>` as they happen and `done <json counts per partition> <left>` last.
const PRODUCER_DRIVER = `
import json, sys, threading, time
from confluent_kafka import Producer
bootstrap, topic, partitions, pace = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
stop = threading.Event()
lock = threading.Lock()
def watch_stdin():
    for line in sys.stdin:
        if line.strip() == "stop":
            break
    stop.set()
threading.Thread(target=watch_stdin, daemon=True).start()
def out(line):
    with lock:
        sys.stdout.write(line + "\\n")
        sys.stdout.flush()
def on_error(err):
    out("clienterr %s %s %s" % (err.code(), 1 if err.fatal() else 0, json.dumps(str(err))))
p = Producer({
    "bootstrap.servers": bootstrap, "client.id": "replication-faults", "enable.idempotence": True,
    "acks": "all", "linger.ms": 5, "message.timeout.ms": 90000, "retry.backoff.ms": 100,
    "reconnect.backoff.ms": 50, "reconnect.backoff.max.ms": 500, "error_cb": on_error,
})
def on_delivery(err, msg):
    v = msg.value().decode()
    if err is not None:
        out("fail %s %s" % (v, json.dumps(str(err))))
    else:
        out("ack %d %d %s" % (msg.partition(), msg.offset(), v))
n = [0] * partitions
i = 0
while not stop.is_set():
    part = i % partitions
    i += 1
    v = "p%d-%d" % (part, n[part])
    n[part] += 1
    while True:
        try:
            p.produce(topic, key=("k%d" % part).encode(), value=v.encode(), partition=part, on_delivery=on_delivery)
            break
        except BufferError:
            p.poll(0.05)
    p.poll(0)
    time.sleep(pace)
left = p.flush(60)
out("done %s %d" % (json.dumps(n, separators=(",", ":")), left))
`;

interface Ack {
  readonly partition: number;
  readonly offset: number;
  readonly value: string;
}

/** The producer driver running in the background. */
class ProducerDriver {
  readonly acks: Ack[] = [];
  readonly failures: string[] = [];
  readonly clientErrors: string[] = [];
  readonly fatal: string[] = [];
  done?: { counts: number[]; left: number };
  stderr = "";
  private buffer = "";
  private readonly child: ChildProcess;
  private readonly exited: Promise<number | null>;
  private readonly timer: NodeJS.Timeout;

  constructor(bootstrap: string, topic: string, maxMs: number) {
    this.child = spawn(
      PYTHON,
      ["-c", PRODUCER_DRIVER, bootstrap, topic, String(PARTITIONS), String(PACE_S)],
      {
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    this.child.stdout?.setEncoding("utf8");
    this.child.stderr?.setEncoding("utf8");
    this.child.stdout?.on("data", (d: string) => this.onData(d));
    this.child.stderr?.on("data", (d: string) => {
      this.stderr += d;
    });
    this.child.stdin?.on("error", () => {});
    this.exited = new Promise((res) => {
      this.child.once("error", (e) => {
        this.stderr += String(e);
        res(null);
      });
      this.child.once("close", (code) => res(code));
    });
    this.timer = setTimeout(() => this.child.kill("SIGKILL"), maxMs);
  }

  private onData(d: string): void {
    this.buffer += d;
    const lines = this.buffer.split("\n");
    this.buffer = lines.pop() ?? "";
    for (const line of lines) {
      const [kind, a, b, ...rest] = line.split(" ");
      if (kind === "ack") this.acks.push({ partition: Number(a), offset: Number(b), value: rest.join(" ") });
      else if (kind === "fail") this.failures.push(`${a}: ${[b, ...rest].join(" ")}`);
      else if (kind === "clienterr") {
        const text = `${a} ${rest.join(" ")}`;
        this.clientErrors.push(text);
        if (b === "1") this.fatal.push(text);
      } else if (kind === "done") {
        try {
          this.done = { counts: JSON.parse(a) as number[], left: Number(b) };
        } catch {
          this.stderr += `\n[driver] unreadable final line: ${line}`;
        }
      }
    }
  }

  get acked(): number {
    return this.acks.length;
  }

  /** Asks the driver to stop producing and waits (bounded) for its final line and exit. */
  async stop(ms = 90_000): Promise<void> {
    this.child.stdin?.end("stop\n");
    let deadline: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      this.exited,
      new Promise<"timeout">((res) => {
        deadline = setTimeout(() => res("timeout"), ms);
      }),
    ]);
    clearTimeout(deadline);
    clearTimeout(this.timer);
    if (code === "timeout") {
      this.child.kill("SIGKILL");
      throw new Error(`the producer did not finish within ${ms} ms after stop\n${this.stderr.slice(-3000)}`);
    }
    if (code !== 0 || !this.done)
      throw new Error(
        `the producer exited with ${code} (final line: ${!!this.done})\n${this.stderr.slice(-3000)}`,
      );
  }

  kill(): void {
    clearTimeout(this.timer);
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
  }
}

/** Waits until every partition of `topic` has a live leader and the full ISR. */
export async function waitFullIsr(
  c: ClusterHarness,
  topic: string,
  ms: number,
): Promise<PartitionDescription[]> {
  return c.waitForDescribe(
    topic,
    `every partition led, with the full ISR`,
    ms,
    (ps) => ps.length === PARTITIONS && ps.every((p) => p.leader >= 0 && p.isr.length === p.replicas.length),
  );
}

/**
 * Settings of the clusters the schedules run on: the schedule decides where leadership goes (a fault's
 * victim is the leader it picked), so the controller's own preferred-leader rebalancing, which would move
 * leadership under it 5 s after each controller failover, is off.
 */
export const FAULT_CLUSTER_OVERRIDES: Readonly<Record<string, string>> = {
  "auto.leader.rebalance.enable": "false",
};

/** Runs one fault schedule against a running 3-broker cluster (every broker up). Throws, seed included, on failure. */
export async function runFaultSchedule(c: ClusterHarness, options: ScheduleOptions): Promise<ScheduleResult> {
  const { seed } = options;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const topic = options.topic ?? `faults-${seed}`;
  const rng = new Random(seed);
  const started = Date.now();
  const t = () => `${((Date.now() - started) / 1000).toFixed(1)}s`;
  const plan = planFaults(rng, options.faults, faultKindsFor(c));
  log(
    `[replication-faults] seed ${seed} (repeat with FAULT_SEED=${seed}, ${plan.length} faults); topic ${topic}; faults: ${plan.join(", ")}`,
  );
  const faults: FaultRecord[] = [];
  let producer: ProducerDriver | undefined;
  let step = "setup";
  try {
    await c.createTopic(topic, PARTITIONS, 3, { "min.insync.replicas": "2" });
    await waitFullIsr(c, topic, 30_000);
    // Every broker's address: the ports stay the same across restarts.
    const bootstrap = c.brokers.map((b) => b.bootstrap).join(",");
    producer = new ProducerDriver(bootstrap, topic, 60_000 + options.faults * 120_000);
    const p = producer;
    const progress = async (what: string, more: number, ms: number) => {
      const from = p.acked;
      await c.waitFor(`${what}: ${more} more acknowledgements (from ${from})`, ms, async () =>
        p.fatal.length > 0
          ? Promise.reject(new Error(`fatal producer error: ${p.fatal[0]}`))
          : p.acked >= from + more
            ? true
            : undefined,
      );
    };
    step = "first acknowledgements";
    await progress("before the first fault", 200, 30_000);

    for (const [k, kind] of plan.entries()) {
      step = `fault ${k + 1}/${plan.length} (${kind})`;
      const parts = await c.describe(topic);
      let victim: number;
      let partition: number | undefined;
      if (kind === "sigkill-controller" || kind === "partition-controller") {
        victim = await c.waitForController(10_000);
      } else {
        partition = rng.int(0, PARTITIONS - 1);
        victim = parts[partition].leader;
      }
      log(
        `[replication-faults] ${t()} ${step}: broker ${victim}${partition !== undefined ? ` (leader of partition ${partition})` : " (controller)"}; acks so far ${p.acked}`,
      );
      const faultAt = Date.now();
      if (kind === "blip-leader") {
        const cutMs = rng.int(1000, 3000);
        c.isolateBroker(victim);
        await sleep(cutMs);
        c.healBroker(victim);
        const healedAt = Date.now();
        await waitFullIsr(c, topic, 60_000);
        const recoveredMs = Date.now() - healedAt;
        await progress(`after broker ${victim}'s short cut`, 50, 30_000);
        faults.push({ kind, victim, partition, movedMs: 0, downMs: cutMs, recoveredMs });
        log(
          `[replication-faults] ${t()} ${step}: cut off ${cutMs} ms, full ISR ${recoveredMs} ms after the heal`,
        );
        continue;
      }
      if (kind === "partition-leader" || kind === "partition-controller") {
        const r = await isolateAndHeal(c, topic, victim, rng, (what, more, ms) => progress(what, more, ms));
        faults.push({ kind, victim, partition, ...r });
        log(
          `[replication-faults] ${t()} ${step}: leadership moved in ${r.movedMs} ms, cut off ${r.downMs} ms, full ISR ${r.recoveredMs} ms after the heal`,
        );
        continue;
      }
      const signal = kind === "sigterm-leader" ? "SIGTERM" : "SIGKILL";
      const code = await c.stopBroker(victim, signal);
      if (signal === "SIGTERM" && code !== 0)
        throw new Error(`broker ${victim} exited with ${code} after SIGTERM`);
      // The victim's roles move to the others before it comes back.
      if (kind === "sigkill-controller") await c.waitForController(30_000, [victim]);
      await c.waitForDescribe(
        topic,
        `no partition led by the stopped broker ${victim}`,
        30_000,
        (ps) => ps.length === PARTITIONS && ps.every((q) => q.leader >= 0 && q.leader !== victim),
      );
      const movedMs = Date.now() - faultAt;
      await progress(`while broker ${victim} is down`, 50, 30_000);
      await sleep(rng.int(0, 2000));
      const downMs = Date.now() - faultAt;
      await c.startBroker(victim);
      const restartedAt = Date.now();
      await waitFullIsr(c, topic, 60_000);
      const recoveredMs = Date.now() - restartedAt;
      await progress(`after broker ${victim} rejoined`, 50, 30_000);
      faults.push({ kind, victim, partition, movedMs, downMs, recoveredMs });
      log(
        `[replication-faults] ${t()} ${step}: roles moved in ${movedMs} ms, down ${downMs} ms, full ISR ${recoveredMs} ms after the restart`,
      );
    }

    step = "stopping the producer";
    await p.stop();
    const done = p.done!;
    const produced = done.counts.reduce((a, b) => a + b, 0);
    log(
      `[replication-faults] ${t()} producer stopped: produced ${produced}, acknowledged ${p.acked}, delivery errors ${p.failures.length}, client errors ${p.clientErrors.length}`,
    );
    if (p.fatal.length > 0) throw new Error(`fatal producer error(s): ${p.fatal.slice(0, 5).join("; ")}`);
    if (done.left !== 0) throw new Error(`${done.left} messages still undelivered after the final flush`);

    step = "final ISR";
    const final = await waitFullIsr(c, topic, 60_000);

    step = "replica comparison";
    // Every replica's log equal to the leader's (followers may still be fetching the tail: bounded retry).
    const leaderLogs = new Map<number, Map<number, string>>();
    let lastDiff = "";
    await c
      .waitFor(`every replica of ${topic} identical to its leader`, 30_000, async () => {
        lastDiff = "";
        for (const part of final) {
          const leaderLog = await c.partitionLog(part.leader, topic, part.partition);
          leaderLogs.set(part.partition, leaderLog);
          for (const r of part.replicas) {
            if (r === part.leader) continue;
            const d = diffLogs(leaderLog, await c.partitionLog(r, topic, part.partition));
            if (d) lastDiff += `partition ${part.partition}: leader ${part.leader} vs replica ${r}: ${d}\n`;
            // Batch for batch too: offsets, leader epochs and CRCs of every replica's segment files.
            const lb = await c.partitionBatches(part.leader, topic, part.partition);
            const rb = await c.partitionBatches(r, topic, part.partition);
            const i = lb.findIndex((x, k) => x !== rb[k]);
            if (i >= 0 || lb.length !== rb.length)
              lastDiff += `partition ${part.partition}: batches of leader ${part.leader} vs replica ${r} differ at #${i < 0 ? Math.min(lb.length, rb.length) : i}: ${lb[i] ?? "(none)"} vs ${rb[i] ?? "(none)"}\n`;
          }
        }
        return lastDiff === "" ? true : undefined;
      })
      .catch((e) => {
        throw new Error(`${(e as Error).message}\n${lastDiff}${formatDescribe(final)}`);
      });

    step = "consume and check";
    const consumed = await readWithKcat(c.bootstrap(), topic, 60_000);
    const problems: string[] = [];
    const seen = new Map<string, { partition: number; offset: number }>();
    const lastN = new Map<number, { n: number; offset: number }>();
    const byPartition = new Map<number, Map<number, string>>();
    for (const m of consumed) {
      const prev = seen.get(m.value);
      if (prev)
        problems.push(
          `duplicate ${m.value}: at ${prev.partition}/${prev.offset} and ${m.partition}/${m.offset}`,
        );
      seen.set(m.value, { partition: m.partition, offset: m.offset });
      const v = /^p(\d+)-(\d+)$/.exec(m.value);
      if (!v || Number(v[1]) !== m.partition || m.key !== `k${m.partition}`) {
        problems.push(`unexpected record at ${m.partition}/${m.offset}: key ${m.key} value ${m.value}`);
        continue;
      }
      const n = Number(v[2]);
      const last = lastN.get(m.partition);
      if (last && n <= last.n)
        problems.push(
          `order: partition ${m.partition}: p${m.partition}-${n} at offset ${m.offset} after p${m.partition}-${last.n} at offset ${last.offset}`,
        );
      lastN.set(m.partition, { n, offset: m.offset });
      const bp = byPartition.get(m.partition) ?? new Map<number, string>();
      byPartition.set(m.partition, bp);
      bp.set(m.offset, m.value);
    }
    for (const a of p.acks) {
      const got = seen.get(a.value);
      if (!got) problems.push(`lost: ${a.value} acknowledged at ${a.partition}/${a.offset}, not consumed`);
      else if (got.partition !== a.partition || got.offset !== a.offset)
        problems.push(
          `moved: ${a.value} acknowledged at ${a.partition}/${a.offset}, consumed at ${got.partition}/${got.offset}`,
        );
    }
    for (const part of final) {
      const d = diffLogs(
        leaderLogs.get(part.partition) ?? new Map(),
        byPartition.get(part.partition) ?? new Map(),
      );
      if (d) problems.push(`partition ${part.partition}: leader ${part.leader}'s log vs consumed: ${d}`);
    }
    if (problems.length > 0)
      throw new Error(
        `${problems.length} problem(s) (consumed ${consumed.length}, acknowledged ${p.acked}):\n${problems.slice(0, 30).join("\n")}`,
      );
    log(
      `[replication-faults] ${t()} checks passed: acknowledged ${p.acked}, consumed ${consumed.length}, ${faults.length} faults`,
    );
    return {
      seed,
      topic,
      faults,
      produced,
      acknowledged: p.acked,
      deliveryErrors: p.failures.length,
      consumed: consumed.length,
      ms: Date.now() - started,
    };
  } catch (e) {
    const acked = producer
      ? `; acknowledged so far ${producer.acked}; delivery errors ${producer.failures.slice(0, 5).join(" | ")}; client errors ${producer.clientErrors.slice(-5).join(" | ")}`
      : "";
    const done = faults.map((f) => `${f.kind}@${f.victim}`).join(", ");
    // The next schedule on this cluster starts with every link healed.
    for (const i of c.isolatedIds()) c.healBroker(i);
    throw new Error(
      `[FAULT_SEED=${seed}, ${plan.length} faults] replication fault schedule failed at ${step} after ${t()} (faults done: ${done || "none"}${acked}): ${(e as Error).message}`,
    );
  } finally {
    producer?.kill();
  }
}

/**
 * The partition-leader fault: cuts `victim` off from the other brokers and ZooKeeper while the producer
 * still reaches it; the others must elect new leaders for its partitions (the controller too, when it was
 * the victim: its session expires), and the producer must make progress through them. After at least the
 * session timeout plus a random 0–2 s the links heal: the victim's new session registers it again, it
 * becomes a follower, truncates what it appended alone, and every ISR is full again.
 */
async function isolateAndHeal(
  c: ClusterHarness,
  topic: string,
  victim: number,
  rng: Random,
  progress: (what: string, more: number, ms: number) => Promise<void>,
): Promise<Omit<FaultRecord, "kind" | "victim" | "partition">> {
  const faultAt = Date.now();
  const wasController = (await c.controllerId()) === victim;
  c.isolateBroker(victim);
  // What the rest of the cluster says: asked of the other brokers only (the victim's view is stale).
  const others = c.brokers.map((b, i) => (i === victim ? "" : b.bootstrap)).filter((b) => b !== "");
  if (wasController) await c.waitForController(SESSION_TIMEOUT_MS + 30_000, [victim]);
  await c.waitForDescribe(
    topic,
    `no partition led by the isolated broker ${victim}`,
    SESSION_TIMEOUT_MS + 30_000,
    (ps) => ps.length === PARTITIONS && ps.every((q) => q.leader >= 0 && q.leader !== victim),
    others.join(","),
  );
  const movedMs = Date.now() - faultAt;
  await progress(`while broker ${victim} is cut off`, 50, 60_000);
  const cutFor = SESSION_TIMEOUT_MS + rng.int(0, 2000);
  await sleep(Math.max(0, faultAt + cutFor - Date.now()));
  const downMs = Date.now() - faultAt;
  c.healBroker(victim);
  const healedAt = Date.now();
  await c.waitForRegistered([victim], 30_000);
  await waitFullIsr(c, topic, 60_000);
  const recoveredMs = Date.now() - healedAt;
  await progress(`after broker ${victim} was healed`, 50, 30_000);
  return { movedMs, downMs, recoveredMs };
}

/** Undefined when equal; otherwise a description of the first differences. */
function diffLogs(a: Map<number, string>, b: Map<number, string>): string | undefined {
  const diffs: string[] = [];
  const offsets = [...new Set([...a.keys(), ...b.keys()])].sort((x, y) => x - y);
  for (const o of offsets) {
    if (a.get(o) !== b.get(o))
      diffs.push(`offset ${o}: ${JSON.stringify(a.get(o))} vs ${JSON.stringify(b.get(o))}`);
  }
  if (diffs.length === 0) return undefined;
  const range = (m: Map<number, string>) =>
    m.size === 0 ? "empty" : `${m.size} records, ${Math.min(...m.keys())}..${Math.max(...m.keys())}`;
  return `${diffs.length} differing offsets (${range(a)} vs ${range(b)}); first: ${diffs.slice(0, 5).join("; ")}`;
}

// ---- the soak script ----

function argValue(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return dflt;
  const v = Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || v <= 0) throw new Error(`--${name} needs a positive integer`);
  return v;
}

async function soak(): Promise<void> {
  const schedules = argValue("schedules", 20);
  const faultsPer = argValue("faults", 6);
  const base = seedFromEnv();
  const seeds = Array.from({ length: schedules }, (_, i) => (base + i * 7919) >>> 0);
  console.log(`replication soak: ${schedules} schedules of ${faultsPer} faults, seeds ${base}+k*7919`);
  let cluster: ClusterHarness | undefined;
  const results: ScheduleResult[] = [];
  const failures: Array<{ seed: number; message: string }> = [];
  const started = Date.now();
  try {
    for (const [k, seed] of seeds.entries()) {
      try {
        cluster ??= await ClusterHarness.start({
          brokers: 3,
          name: "replication-soak",
          linkProxy: true,
          overrides: FAULT_CLUSTER_OVERRIDES,
        });
        const r = await runFaultSchedule(cluster, { seed, faults: faultsPer, log: (l) => console.log(l) });
        results.push(r);
        console.log(`schedule ${k + 1}/${schedules} seed ${seed}: ok in ${(r.ms / 1000).toFixed(1)} s`);
      } catch (e) {
        const message = (e as Error).message;
        failures.push({ seed, message });
        console.log(`schedule ${k + 1}/${schedules} seed ${seed}: FAILED\n${message}`);
        if (cluster) console.log(`===== cluster logs at the failure =====\n${cluster.logTails(40)}`);
        // A fresh cluster for the next schedule.
        await cluster?.close();
        cluster = undefined;
      }
    }
  } finally {
    await cluster?.close();
  }
  const faultCount = results.reduce((a, r) => a + r.faults.length, 0);
  const byKind = FAULT_KINDS.map(
    (kind) => `${kind} ${results.reduce((a, r) => a + r.faults.filter((f) => f.kind === kind).length, 0)}`,
  );
  const sum = (f: (r: ScheduleResult) => number) => results.reduce((a, r) => a + f(r), 0);
  console.log("\n===== replication soak summary =====");
  console.log(`schedules run:        ${seeds.length} (passed ${results.length}, failed ${failures.length})`);
  console.log(`faults injected:      ${faultCount} in passed schedules (${byKind.join(", ")})`);
  console.log(`records produced:     ${sum((r) => r.produced)}`);
  console.log(`records acknowledged: ${sum((r) => r.acknowledged)}`);
  console.log(`records consumed:     ${sum((r) => r.consumed)}`);
  console.log(`delivery errors:      ${sum((r) => r.deliveryErrors)}`);
  console.log(`wall time:            ${((Date.now() - started) / 1000).toFixed(0)} s`);
  for (const f of failures)
    console.log(`FAILED seed ${f.seed} (FAULT_SEED=${f.seed}): ${f.message.split("\n")[0]}`);
  process.exitCode = failures.length > 0 ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  soak().catch((e) => {
    console.error(e);
    process.exitCode = 1;
  });
}
