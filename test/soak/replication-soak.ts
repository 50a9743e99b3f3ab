// Issue 17 and issue 31: Kafka's replication system test, reduced to what fits on this machine, and its soak
// run.
//
// `runFaultSchedule` is one schedule: on a 3-broker cluster, a topic with RF 3, min.insync.replicas=2 and
// 3 partitions; an idempotent confluent-kafka producer (acks=all) sends `p<partition>-<n>` (key
// `k<partition>`) round-robin over the partitions and reports every delivery (partition, offset, value)
// while a seeded random fault schedule runs, one fault at a time (FAULT_KINDS; docs/cluster.md has the
// table):
//   - signals: SIGTERM of the leader of a partition, SIGKILL of a leader, SIGKILL of the controller;
//   - network (a cluster started with `linkProxy: true`, test/support/link-proxy.ts): a leader, or the
//     controller, cut off from the other brokers and from ZooKeeper for longer than
//     zookeeper.session.timeout.ms while clients still reach it, then healed; a short cut of a leader (1–3 s:
//     its session survives, nothing is elected); 10–30 ms each way on every inter-broker link for 3–8 s
//     (no follower may leave an ISR);
//   - control plane (also through the proxy): the answer to a leader's AlterPartition dropped while a
//     follower is cut off so the leader shrinks the ISR (the leader must retry, the controller answer success
//     to the repeat); a LeaderAndIsr captured earlier sent again to its broker (it must change nothing:
//     every partition answered with an error); an AlterPartition captured earlier sent again to the
//     controller (ZooKeeper's ISR and partition epoch must not change); LeaderAndIsr, UpdateMetadata and
//     AlterPartition answers held 0.5–3 s while a leader is SIGTERMed and restarted or cut off past the
//     session timeout;
//   - ZooKeeper: SIGSTOP of the ZooKeeper server for 1–2.5 s (within the session timeout: nothing moves),
//     or for the session timeout plus 1–3 s (sessions expire: brokers register again, a controller is
//     elected), then SIGCONT.
// After each fault: the victim's roles moved where they must (as the other brokers see it) or, for the
// faults that must move nothing, every leader and the controller are where they were; the victim is started
// again (or healed, resumed); every partition's ISR is full again within ISR_FULL_BOUND_MS (the time is
// recorded) and the producer makes progress before the next fault. Then production stops and the checks run:
//   - every partition's ISR is full in ZooKeeper and in every broker's metadata, within ISR_FULL_BOUND_MS;
//   - the producer had no fatal error and delivered everything it was given (flush left nothing);
//   - every acknowledged value is consumed (kcat -C -e -o beginning) exactly once, at the partition and
//     offset it was acknowledged with; no value is consumed twice;
//   - per partition, the consumed values follow the producer's order (n strictly increasing), with the
//     partition's key;
//   - every replica's log (`tributary dump-log` of its segments) equals the leader's: same offsets, same
//     values — and the leader's equals what was consumed.
// The seed is printed at the start and is in every failure message; FAULT_SEED=<n> repeats a schedule.
//
// As a script (`npm run soak [-- --schedules N] [--faults F] [--minutes M] [--kinds a,b,…]`): N schedules
// (default 20) with different seeds on one cluster (a fresh one after a failure, whose brokers' whole logs
// are written to a directory it names), no new schedule after M minutes; then counts: schedules run, faults
// injected by kind, records acknowledged and consumed, losses and duplicates, the times until every ISR was
// full, what the control-plane faults did, and the failures with their seeds.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

import { decodeRequest, decodeResponse } from "../../src/protocol/framing.js";
import { ApiKey, Apis } from "../../src/protocol/generated/api-table.js";
import type { AlterPartitionRequest } from "../../src/protocol/generated/messages/AlterPartitionRequest.js";
import { defaultMetadataRequest } from "../../src/protocol/generated/messages/MetadataRequest.js";
import { WireClient } from "../server/wire-client.js";
import { readWithKcat, withDeadline } from "../support/broker-harness.js";
import {
  ClusterHarness,
  formatDescribe,
  type PartitionDescription,
  SESSION_TIMEOUT_MS,
  sleep,
} from "../support/cluster-harness.js";
import { leaderAndIsrStates, metadataView, zkView } from "../support/isr-faults.js";
import type { CapturedRequest, LinkProxy, RequestCapture } from "../support/link-proxy.js";
import { Random } from "../support/random.js";

export const PYTHON = "/usr/bin/python3";
export const KCAT = "/usr/bin/kcat";
export const PARTITIONS = 3;
/** Seconds between two produce() calls of the driver. */
const PACE_S = 0.004;
/**
 * After each fault (from the restart, heal or resume), and after the last one, every partition's ISR must
 * be full within this bound, or the schedule fails.
 */
export const ISR_FULL_BOUND_MS = 30_000;

export type FaultKind =
  | "sigterm-leader"
  | "sigkill-leader"
  | "sigkill-controller"
  | "partition-leader"
  | "partition-controller"
  | "blip-leader"
  | "drop-alter-partition"
  | "replay-leader-and-isr"
  | "replay-alter-partition"
  | "delay-control-plane"
  | "latency-links"
  | "pause-zookeeper"
  | "pause-zookeeper-expire";
export const FAULT_KINDS: readonly FaultKind[] = [
  "sigterm-leader",
  "sigkill-leader",
  "sigkill-controller",
  "partition-leader",
  "partition-controller",
  "blip-leader",
  "drop-alter-partition",
  "replay-leader-and-isr",
  "replay-alter-partition",
  "delay-control-plane",
  "latency-links",
  "pause-zookeeper",
  "pause-zookeeper-expire",
];
/** The kinds that act through the link proxy (cuts, latency, dropped, held or replayed frames). */
const PROXY_KINDS: ReadonlySet<FaultKind> = new Set<FaultKind>([
  "partition-leader",
  "partition-controller",
  "blip-leader",
  "drop-alter-partition",
  "replay-leader-and-isr",
  "replay-alter-partition",
  "delay-control-plane",
  "latency-links",
]);

/** The kinds (of `kinds`, default all) a cluster can run: those in PROXY_KINDS need the harness's link proxy. */
export function faultKindsFor(c: ClusterHarness, kinds: readonly FaultKind[] = FAULT_KINDS): FaultKind[] {
  return kinds.filter((k) => c.proxy !== undefined || !PROXY_KINDS.has(k));
}

/** A comma-separated list of fault kinds (FAULT_KINDS, `--kinds`); throws one line naming a bad one. */
export function parseFaultKinds(text: string): FaultKind[] {
  const out: FaultKind[] = [];
  for (const raw of text.split(",")) {
    const k = raw.trim();
    if (k === "") continue;
    if (!(FAULT_KINDS as readonly string[]).includes(k))
      throw new Error(`unknown fault kind "${k}": expected some of ${FAULT_KINDS.join(", ")}`);
    if (!out.includes(k as FaultKind)) out.push(k as FaultKind);
  }
  if (out.length === 0) throw new Error(`no fault kind given: expected some of ${FAULT_KINDS.join(", ")}`);
  return out;
}

export interface FaultRecord {
  readonly kind: FaultKind;
  /** The broker acted on; -1 when the fault is not one broker's (ZooKeeper, every link). */
  readonly victim: number;
  /** The partition whose leader was chosen (undefined for the controller and cluster-wide faults). */
  readonly partition?: number;
  /**
   * Milliseconds: until the victim's roles moved (0 for faults that must move nothing), the victim was down
   * (or cut off, paused, under latency), until the ISRs were full again after the restart (or heal, resume).
   */
  readonly movedMs: number;
  readonly downMs: number;
  readonly recoveredMs: number;
  /** What the fault did, in words, for the log. */
  readonly detail?: string;
  /** What the fault did, counted (answers dropped, held, requests replayed, sessions expired, …). */
  readonly effects?: Readonly<Record<string, number>>;
}

/** What the final checks counted (all 0 in a schedule that passed). */
export interface CheckCounts {
  /** Acknowledged values not consumed. */
  readonly lost: number;
  /** Values consumed more than once. */
  readonly duplicates: number;
  /** Acknowledged values consumed at another partition or offset. */
  readonly moved: number;
  /** Values out of the producer's order, or not the producer's. */
  readonly misordered: number;
  /** Replica logs that differ from their leader's (or the leader's from what was consumed). */
  readonly replicasDiffering: number;
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
  readonly checks: CheckCounts;
  /** The final check: ms until ZooKeeper and every broker showed every ISR full (after the producer stopped). */
  readonly finalIsrMs: number;
  readonly ms: number;
}

/** A schedule's failure: the message starts with the seed; `checks` when the final checks ran. */
export class ScheduleFailure extends Error {
  constructor(
    message: string,
    readonly seed: number,
    readonly checks?: CheckCounts,
  ) {
    super(message);
  }
}

export interface ScheduleOptions {
  readonly seed: number;
  readonly faults: number;
  /** The kinds to draw from (default: all the cluster can run). */
  readonly kinds?: readonly FaultKind[];
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
  /** Acknowledgements per partition. */
  readonly ackedOn: number[] = new Array<number>(PARTITIONS).fill(0);
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
      if (kind === "ack") {
        this.acks.push({ partition: Number(a), offset: Number(b), value: rest.join(" ") });
        this.ackedOn[Number(a)]++;
      } else if (kind === "fail") this.failures.push(`${a}: ${[b, ...rest].join(" ")}`);
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

/**
 * Waits (default ISR_FULL_BOUND_MS) until every partition of `topic` has a live leader and the full ISR as
 * every live broker's metadata tells it, the same leaders in all. One broker's view is not enough: the
 * controller sends a broker one request at a time and waits for each answer, so while answers are held (or
 * after a broker returns) a broker's metadata can lag the others' by seconds and still show the full ISR
 * it had before the fault.
 */
export async function waitFullIsr(
  c: ClusterHarness,
  topic: string,
  ms = ISR_FULL_BOUND_MS,
): Promise<PartitionDescription[]> {
  let last = "";
  return c
    .waitFor(`${topic}: every partition led, with the full ISR, in every broker's metadata`, ms, async () => {
      let first: PartitionDescription[] | undefined;
      for (const i of c.liveIds()) {
        const ps = await view(c, topic, [i]);
        last = `broker ${i}'s metadata:\n${formatDescribe(ps)}`;
        if (!isFull(ps)) return undefined;
        if (first === undefined) first = ps;
        else if (ps.some((q, k) => q.leader !== first![k].leader)) {
          last = `leaders differ between brokers: ${first.map((q) => q.leader)} vs broker ${i}'s ${ps.map((q) => q.leader)}`;
          return undefined;
        }
      }
      return first;
    })
    .catch((e) => {
      throw new Error(`${(e as Error).message}\nlast seen: ${last}`);
    });
}

/**
 * The topic's partitions as a broker's Metadata answer tells them — what `topics --describe` prints, without
 * starting a process for it (1–2 s on the shared machine; this takes milliseconds). Asked of the brokers
 * `via` (default: every live one) in turn until one answers.
 */
export async function view(
  c: ClusterHarness,
  topic: string,
  via: readonly number[] = c.liveIds(),
): Promise<PartitionDescription[]> {
  let last: unknown;
  for (const i of via) {
    try {
      const client = await withDeadline(
        `connecting to broker ${i}`,
        5000,
        WireClient.connect(c.broker(i).port),
      );
      try {
        const res = await withDeadline(
          `Metadata of ${topic} from broker ${i}`,
          5000,
          client.request(Apis.Metadata, 7, {
            ...defaultMetadataRequest(),
            topics: [{ topicId: "AAAAAAAAAAAAAAAAAAAAAA", name: topic }],
          }),
        );
        const t = res.topics.find((x) => x.name === topic);
        return (t?.partitions ?? [])
          .map((q) => ({
            topic,
            partition: q.partitionIndex,
            leader: q.leaderId,
            replicas: [...q.replicaNodes],
            isr: [...q.isrNodes],
          }))
          .sort((a, b) => a.partition - b.partition);
      } finally {
        client.socket.destroy();
      }
    } catch (e) {
      last = e;
    }
  }
  throw new Error(`no broker of ${via.join(",")} answered a Metadata request: ${String(last)}`);
}

/** Waits until `check` accepts `view(topic)` (asked of `via`); the last view is in the error. */
async function waitForView(
  c: ClusterHarness,
  topic: string,
  what: string,
  ms: number,
  check: (ps: PartitionDescription[]) => boolean,
  via?: readonly number[],
): Promise<PartitionDescription[]> {
  let last: PartitionDescription[] | undefined;
  return c
    .waitFor(`${topic}: ${what}`, ms, async () => {
      last = await view(c, topic, via);
      return check(last) ? last : undefined;
    })
    .catch((e) => {
      throw new Error(`${(e as Error).message}\nlast seen:\n${formatDescribe(last)}`);
    });
}

function isFull(ps: PartitionDescription[]): boolean {
  return ps.length === PARTITIONS && ps.every((p) => p.leader >= 0 && p.isr.length === p.replicas.length);
}

/**
 * Settings of the clusters the schedules run on:
 *   - the schedule decides where leadership goes (a fault's victim is the leader it picked), so the
 *     controller's own preferred-leader rebalancing, which would move leadership under it 5 s after each
 *     controller failover, is off;
 *   - controller.socket.timeout.ms 5 s (Kafka: 30 s), the timeout of a broker's AlterPartition and
 *     ControlledShutdown and of the controller's requests: a leader whose AlterPartition answer was dropped
 *     sends it again after this, and until then acks=all on the partition waits.
 */
export const FAULT_CLUSTER_OVERRIDES: Readonly<Record<string, string>> = {
  "auto.leader.rebalance.enable": "false",
  "controller.socket.timeout.ms": "5000",
};

/** Control-plane requests captured on a cluster's proxy from the first schedule on, for the replay kinds. */
interface Captures {
  readonly leaderAndIsr: RequestCapture;
  readonly alterPartition: RequestCapture;
}
const capturesByProxy = new WeakMap<LinkProxy, Captures>();
/** Frames kept per capture (the oldest are dropped). */
const CAPTURES_KEPT = 300;

function capturesOf(proxy: LinkProxy): Captures {
  let x = capturesByProxy.get(proxy);
  if (x === undefined) {
    x = {
      leaderAndIsr: proxy.captureRequests({ apiKey: ApiKey.LeaderAndIsr }),
      alterPartition: proxy.captureRequests({ apiKey: ApiKey.AlterPartition }),
    };
    capturesByProxy.set(proxy, x);
  }
  for (const cap of [x.leaderAndIsr, x.alterPartition])
    if (cap.frames.length > CAPTURES_KEPT) cap.frames.splice(0, cap.frames.length - CAPTURES_KEPT);
  return x;
}

/** What a fault gets: the cluster, the schedule's topic, rng and producer, and its log. */
interface FaultContext {
  readonly c: ClusterHarness;
  readonly topic: string;
  readonly rng: Random;
  readonly producer: ProducerDriver;
  readonly log: (line: string) => void;
  /** Waits for `more` acknowledgements (on `partition` only, when given) within `ms`. */
  progress(what: string, more: number, ms: number, partition?: number): Promise<void>;
}

type FaultOutcome = Omit<FaultRecord, "kind">;

/** Runs one fault of `kind` and the checks that follow it. */
async function runFault(x: FaultContext, kind: FaultKind): Promise<FaultOutcome> {
  const { c, topic, rng } = x;
  switch (kind) {
    case "sigterm-leader":
    case "sigkill-leader": {
      const partition = rng.int(0, PARTITIONS - 1);
      const victim = (await view(c, topic))[partition].leader;
      x.log(`broker ${victim} (leader of partition ${partition})`);
      const r = await signalFault(x, kind === "sigterm-leader" ? "SIGTERM" : "SIGKILL", victim, false);
      return { victim, partition, ...r };
    }
    case "sigkill-controller": {
      const victim = await c.waitForController(10_000);
      x.log(`broker ${victim} (controller)`);
      return { victim, ...(await signalFault(x, "SIGKILL", victim, true)) };
    }
    case "partition-leader":
    case "partition-controller": {
      let partition: number | undefined;
      let victim: number;
      if (kind === "partition-controller") {
        victim = await c.waitForController(10_000);
        x.log(`broker ${victim} (controller)`);
      } else {
        partition = rng.int(0, PARTITIONS - 1);
        victim = (await view(c, topic))[partition].leader;
        x.log(`broker ${victim} (leader of partition ${partition})`);
      }
      return { victim, partition, ...(await isolateAndHeal(x, victim)) };
    }
    case "blip-leader": {
      const partition = rng.int(0, PARTITIONS - 1);
      const victim = (await view(c, topic))[partition].leader;
      x.log(`broker ${victim} (leader of partition ${partition})`);
      return { victim, partition, ...(await blip(x, victim)) };
    }
    case "drop-alter-partition":
      return dropAlterPartition(x);
    case "replay-leader-and-isr":
      return replayLeaderAndIsr(x);
    case "replay-alter-partition":
      return replayAlterPartition(x);
    case "delay-control-plane":
      return delayControlPlane(x);
    case "latency-links":
      return latencyLinks(x);
    case "pause-zookeeper":
      return pauseZooKeeper(x, false);
    case "pause-zookeeper-expire":
      return pauseZooKeeper(x, true);
  }
}

/** Runs one fault schedule against a running 3-broker cluster (every broker up). Throws, seed included, on failure. */
export async function runFaultSchedule(c: ClusterHarness, options: ScheduleOptions): Promise<ScheduleResult> {
  const { seed } = options;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const topic = options.topic ?? `faults-${seed}`;
  const rng = new Random(seed);
  const started = Date.now();
  const t = () => `${((Date.now() - started) / 1000).toFixed(1)}s`;
  const kinds = faultKindsFor(c, options.kinds);
  if (kinds.length === 0)
    throw new Error(`none of the fault kinds ${options.kinds?.join(", ")} runs without the link proxy`);
  const plan = planFaults(rng, options.faults, kinds);
  log(
    `[replication-faults] seed ${seed} (repeat with FAULT_SEED=${seed}, ${plan.length} faults); topic ${topic}; faults: ${plan.join(", ")}`,
  );
  // Capturing before the topic exists: the LeaderAndIsr that created it can be sent again later.
  if (c.proxy) capturesOf(c.proxy);
  const faults: FaultRecord[] = [];
  let producer: ProducerDriver | undefined;
  let checks: CheckCounts | undefined;
  let step = "setup";
  try {
    await c.createTopic(topic, PARTITIONS, 3, { "min.insync.replicas": "2" });
    await waitFullIsr(c, topic);
    // Every broker's address: the ports stay the same across restarts.
    const bootstrap = c.brokers.map((b) => b.bootstrap).join(",");
    producer = new ProducerDriver(bootstrap, topic, 60_000 + options.faults * 120_000);
    const p = producer;
    const progress = async (what: string, more: number, ms: number, partition?: number) => {
      const count = () => (partition === undefined ? p.acked : p.ackedOn[partition]);
      const from = count();
      const on = partition === undefined ? "" : ` on partition ${partition}`;
      await c.waitFor(`${what}: ${more} more acknowledgements${on} (from ${from})`, ms, async () =>
        p.fatal.length > 0
          ? Promise.reject(new Error(`fatal producer error: ${p.fatal[0]}`))
          : count() >= from + more
            ? true
            : undefined,
      );
    };
    step = "first acknowledgements";
    await progress("before the first fault", 200, 30_000);

    for (const [k, kind] of plan.entries()) {
      step = `fault ${k + 1}/${plan.length} (${kind})`;
      const at = step;
      const x: FaultContext = {
        c,
        topic,
        rng,
        producer: p,
        log: (line) => log(`[replication-faults] ${t()} ${at}: ${line}; acks so far ${p.acked}`),
        progress,
      };
      const r = await runFault(x, kind);
      faults.push({ kind, ...r });
      log(`[replication-faults] ${t()} ${step}: ${describeOutcome(r)}`);
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
    const finalAt = Date.now();
    const final = await waitFullEverywhere(c, topic);
    const finalIsrMs = Date.now() - finalAt;

    step = "replica comparison";
    // Every replica's log equal to the leader's (followers may still be fetching the tail: bounded retry).
    const leaderLogs = new Map<number, Map<number, string>>();
    let lastDiff = "";
    let replicaProblem: string | undefined;
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
        replicaProblem = `${(e as Error).message}\n${lastDiff}${formatDescribe(final)}`;
      });
    const replicasDiffering = new Set(
      [...lastDiff.matchAll(/^partition (\d+): (?:batches of )?leader \d+ vs replica (\d+)/gm)].map(
        (m) => `${m[1]}/${m[2]}`,
      ),
    ).size;

    step = "consume and check";
    const consumed = await readWithKcat(c.bootstrap(), topic, 60_000);
    const problems: string[] = [];
    const counts = { lost: 0, duplicates: 0, moved: 0, misordered: 0, replicasDiffering };
    const seen = new Map<string, { partition: number; offset: number }>();
    const lastN = new Map<number, { n: number; offset: number }>();
    const byPartition = new Map<number, Map<number, string>>();
    for (const m of consumed) {
      const prev = seen.get(m.value);
      if (prev) {
        counts.duplicates++;
        problems.push(
          `duplicate ${m.value}: at ${prev.partition}/${prev.offset} and ${m.partition}/${m.offset}`,
        );
      }
      seen.set(m.value, { partition: m.partition, offset: m.offset });
      const v = /^p(\d+)-(\d+)$/.exec(m.value);
      if (!v || Number(v[1]) !== m.partition || m.key !== `k${m.partition}`) {
        counts.misordered++;
        problems.push(`unexpected record at ${m.partition}/${m.offset}: key ${m.key} value ${m.value}`);
        continue;
      }
      const n = Number(v[2]);
      const last = lastN.get(m.partition);
      if (last && n <= last.n) {
        counts.misordered++;
        problems.push(
          `order: partition ${m.partition}: p${m.partition}-${n} at offset ${m.offset} after p${m.partition}-${last.n} at offset ${last.offset}`,
        );
      }
      lastN.set(m.partition, { n, offset: m.offset });
      const bp = byPartition.get(m.partition) ?? new Map<number, string>();
      byPartition.set(m.partition, bp);
      bp.set(m.offset, m.value);
    }
    for (const a of p.acks) {
      const got = seen.get(a.value);
      if (!got) {
        counts.lost++;
        problems.push(`lost: ${a.value} acknowledged at ${a.partition}/${a.offset}, not consumed`);
      } else if (got.partition !== a.partition || got.offset !== a.offset) {
        counts.moved++;
        problems.push(
          `moved: ${a.value} acknowledged at ${a.partition}/${a.offset}, consumed at ${got.partition}/${got.offset}`,
        );
      }
    }
    for (const part of final) {
      const d = diffLogs(
        leaderLogs.get(part.partition) ?? new Map(),
        byPartition.get(part.partition) ?? new Map(),
      );
      if (d) {
        counts.replicasDiffering++;
        problems.push(`partition ${part.partition}: leader ${part.leader}'s log vs consumed: ${d}`);
      }
    }
    checks = counts;
    if (replicaProblem !== undefined) problems.unshift(replicaProblem);
    if (problems.length > 0)
      throw new Error(
        `${problems.length} problem(s) (consumed ${consumed.length}, acknowledged ${p.acked}; lost ${counts.lost}, duplicates ${counts.duplicates}, moved ${counts.moved}, out of order ${counts.misordered}, replicas differing ${counts.replicasDiffering}):\n${problems.slice(0, 30).join("\n")}`,
      );
    log(
      `[replication-faults] ${t()} checks passed: acknowledged ${p.acked}, consumed ${consumed.length}, ${faults.length} faults; every ISR full ${faults.at(-1)?.recoveredMs ?? 0} ms after the last fault, and in ZooKeeper and every broker ${finalIsrMs} ms after the producer stopped`,
    );
    return {
      seed,
      topic,
      faults,
      produced,
      acknowledged: p.acked,
      deliveryErrors: p.failures.length,
      consumed: consumed.length,
      checks: counts,
      finalIsrMs,
      ms: Date.now() - started,
    };
  } catch (e) {
    const acked = producer
      ? `; acknowledged so far ${producer.acked}; delivery errors ${producer.failures.slice(0, 5).join(" | ")}; client errors ${producer.clientErrors.slice(-5).join(" | ")}`
      : "";
    const done = faults.map((f) => `${f.kind}@${f.victim}`).join(", ");
    // The next schedule on this cluster starts with every link healed, no frame rule but the captures, and
    // ZooKeeper running.
    for (const i of c.isolatedIds()) c.healBroker(i);
    c.proxy?.healAll();
    c.proxy?.clearLatency();
    for (const r of heldRules) r.disarm();
    heldRules.clear();
    await resumeZooKeeper(c).catch(() => {});
    throw new ScheduleFailure(
      `[FAULT_SEED=${seed}, ${plan.length} faults] replication fault schedule failed at ${step} after ${t()} (faults done: ${done || "none"}${acked}): ${(e as Error).message}`,
      seed,
      checks,
    );
  } finally {
    producer?.kill();
  }
}

/** The fault's outcome in a log line. */
function describeOutcome(r: FaultOutcome): string {
  const times =
    r.movedMs > 0
      ? `roles moved in ${r.movedMs} ms, down ${r.downMs} ms, full ISR ${r.recoveredMs} ms after the restart, heal or resume`
      : `nothing moved; fault lasted ${r.downMs} ms, full ISR ${r.recoveredMs} ms after it ended`;
  return r.detail ? `${r.detail}; ${times}` : times;
}

/**
 * The final ISR check: every partition led and with the full ISR in ZooKeeper's partition state and in the
 * metadata of every live broker, within ISR_FULL_BOUND_MS.
 */
async function waitFullEverywhere(c: ClusterHarness, topic: string): Promise<PartitionDescription[]> {
  let last = "";
  return c
    .waitFor(
      `every ISR of ${topic} full in ZooKeeper and in every broker's metadata`,
      ISR_FULL_BOUND_MS,
      async () => {
        const ps = await view(c, topic);
        last = formatDescribe(ps);
        if (!isFull(ps)) return undefined;
        for (const part of ps) {
          const zk = await c.partitionState(topic, part.partition);
          last = `ZooKeeper: partition ${part.partition}: ${JSON.stringify(zk)}`;
          if (zk === undefined || zk.leader !== part.leader || zk.isr.length !== part.replicas.length)
            return undefined;
          for (const i of c.liveIds()) {
            const v = await metadataView(c, i, topic, part.partition);
            last = `broker ${i}'s metadata: partition ${part.partition}: ${JSON.stringify(v)}`;
            if (v === undefined || v.leader !== part.leader || v.isr.length !== part.replicas.length)
              return undefined;
          }
        }
        return ps;
      },
    )
    .catch((e) => {
      throw new Error(`${(e as Error).message}; last seen: ${last}`);
    });
}

/** Throws unless every partition has the leader it had `before` (a fault that must move nothing). */
function sameLeaders(before: PartitionDescription[], after: PartitionDescription[], why: string): void {
  const moved = before
    .filter((b) => after.find((a) => a.partition === b.partition)?.leader !== b.leader)
    .map(
      (b) =>
        `partition ${b.partition}: ${b.leader} → ${after.find((a) => a.partition === b.partition)?.leader}`,
    );
  if (moved.length > 0) throw new Error(`leadership moved though ${why}: ${moved.join(", ")}`);
}

/** SIGTERM or SIGKILL of `victim`; its roles must move, then it is restarted and rejoins every ISR. */
async function signalFault(
  x: FaultContext,
  signal: "SIGTERM" | "SIGKILL",
  victim: number,
  wasController: boolean,
): Promise<Pick<FaultRecord, "movedMs" | "downMs" | "recoveredMs">> {
  const { c, topic, rng } = x;
  const faultAt = Date.now();
  const code = await c.stopBroker(victim, signal);
  if (signal === "SIGTERM" && code !== 0)
    throw new Error(`broker ${victim} exited with ${code} after SIGTERM`);
  // The victim's roles move to the others before it comes back.
  if (wasController) await c.waitForController(30_000, [victim]);
  await waitForView(
    c,
    topic,
    `no partition led by the stopped broker ${victim}`,
    30_000,
    (ps) => ps.length === PARTITIONS && ps.every((q) => q.leader >= 0 && q.leader !== victim),
  );
  const movedMs = Date.now() - faultAt;
  await x.progress(`while broker ${victim} is down`, 50, 30_000);
  await sleep(rng.int(0, 2000));
  const downMs = Date.now() - faultAt;
  await c.startBroker(victim);
  const restartedAt = Date.now();
  await waitFullIsr(c, topic);
  const recoveredMs = Date.now() - restartedAt;
  await x.progress(`after broker ${victim} rejoined`, 50, 30_000);
  return { movedMs, downMs, recoveredMs };
}

/**
 * A short cut (1–3 s) of `victim` from the other brokers and ZooKeeper: within the session timeout and
 * replica.lag.time.max.ms, so nothing is elected; the followers reconnect and every ISR is full.
 */
async function blip(
  x: FaultContext,
  victim: number,
): Promise<Pick<FaultRecord, "movedMs" | "downMs" | "recoveredMs">> {
  const { c, topic, rng } = x;
  const before = await view(c, topic);
  const cutMs = rng.int(1000, 3000);
  c.isolateBroker(victim);
  await sleep(cutMs);
  c.healBroker(victim);
  const healedAt = Date.now();
  const after = await waitFullIsr(c, topic);
  const recoveredMs = Date.now() - healedAt;
  sameLeaders(before, after, `broker ${victim} was cut off only ${cutMs} ms`);
  await x.progress(`after broker ${victim}'s short cut`, 50, 30_000);
  return { movedMs: 0, downMs: cutMs, recoveredMs };
}

/**
 * The partition-leader fault: cuts `victim` off from the other brokers and ZooKeeper while the producer
 * still reaches it; the others must elect new leaders for its partitions (the controller too, when it was
 * the victim: its session expires), and the producer must make progress through them. After at least the
 * session timeout plus a random 0–2 s the links heal: the victim's new session registers it again, it
 * becomes a follower, truncates what it appended alone, and every ISR is full again.
 */
async function isolateAndHeal(
  x: FaultContext,
  victim: number,
): Promise<Pick<FaultRecord, "movedMs" | "downMs" | "recoveredMs">> {
  const { c, topic, rng } = x;
  const faultAt = Date.now();
  const wasController = (await c.controllerId()) === victim;
  c.isolateBroker(victim);
  // What the rest of the cluster says: asked of the other brokers only (the victim's view is stale).
  const others = c.brokers.map((_, i) => i).filter((i) => i !== victim);
  if (wasController) await c.waitForController(SESSION_TIMEOUT_MS + 30_000, [victim]);
  await waitForView(
    c,
    topic,
    `no partition led by the isolated broker ${victim}`,
    SESSION_TIMEOUT_MS + 30_000,
    (ps) => ps.length === PARTITIONS && ps.every((q) => q.leader >= 0 && q.leader !== victim),
    others,
  );
  const movedMs = Date.now() - faultAt;
  await x.progress(`while broker ${victim} is cut off`, 50, 60_000);
  const cutFor = SESSION_TIMEOUT_MS + rng.int(0, 2000);
  await sleep(Math.max(0, faultAt + cutFor - Date.now()));
  const downMs = Date.now() - faultAt;
  c.healBroker(victim);
  const healedAt = Date.now();
  await c.waitForRegistered([victim], 30_000);
  await waitFullIsr(c, topic);
  const recoveredMs = Date.now() - healedAt;
  await x.progress(`after broker ${victim} was healed`, 50, 30_000);
  return { movedMs, downMs, recoveredMs };
}

/**
 * drop-alter-partition (issue 31, item 3): the link between a partition's leader L (not the controller, so
 * its AlterPartition crosses the proxy) and a follower F (not the controller) is cut; after
 * replica.lag.time.max.ms L proposes an ISR without F, the controller writes it, and the proxy drops that one
 * answer. L must send it again (controller.socket.timeout.ms later) and the controller answer success to the
 * change it already applied: acks=all on the partition must go on without F while the link is still cut.
 * Then the link heals, F rejoins the ISR (a later change, accepted), and no leader moved. When every
 * partition is led by the controller (its AlterPartition is a local call) the cut runs without the drop.
 */
async function dropAlterPartition(x: FaultContext): Promise<FaultOutcome> {
  const { c, topic, rng } = x;
  const proxy = c.proxy!;
  const controller = await c.waitForController(10_000);
  const before = await view(c, topic);
  const remote = before.filter((q) => q.leader >= 0 && q.leader !== controller);
  const part = remote.length > 0 ? remote[rng.int(0, remote.length - 1)] : before[rng.int(0, PARTITIONS - 1)];
  const leader = part.leader;
  const followers = part.replicas.filter((r) => r !== leader && r !== controller);
  const follower = followers[rng.int(0, followers.length - 1)];
  x.log(
    `leader ${leader} of partition ${part.partition}, follower ${follower} cut off from it${remote.length === 0 ? " (every partition led by the controller: nothing to drop)" : ""}`,
  );
  const rule =
    remote.length > 0 ? proxy.dropResponses({ apiKey: ApiKey.AlterPartition, src: leader }, 1) : undefined;
  const marks = c.brokers.map((b) => b.stdout.length);
  const faultAt = Date.now();
  let shrinkMs = 0;
  let resumedMs = 0;
  proxy.cut(leader, follower);
  try {
    // Asked of the other brokers: when the leader is the controller, the cut also keeps its UpdateMetadata
    // from the follower, whose metadata then still shows the old ISR (as a Kafka broker's would).
    await waitForView(
      c,
      topic,
      `broker ${follower} out of partition ${part.partition}'s ISR (its link to leader ${leader} cut)`,
      30_000,
      (ps) => ps.length === PARTITIONS && !ps[part.partition].isr.includes(follower),
      c.liveIds().filter((id) => id !== follower),
    );
    const shrunkAt = Date.now();
    shrinkMs = shrunkAt - faultAt;
    // The line latency-links looks for (so that its check can fail): the leader's shrink of this partition.
    const want = `Shrinking ISR for partition ${topic}-${part.partition} `;
    await c.waitFor(`leader ${leader} logging "${want}…"`, 5000, async () =>
      isrChangeLines(c, topic, marks).some((l) => l.startsWith(`broker ${leader}: `) && l.includes(want))
        ? true
        : undefined,
    );
    if (rule)
      await c.waitFor(`the proxy to drop leader ${leader}'s AlterPartition answer`, 10_000, async () =>
        rule.hits >= 1 ? true : undefined,
      );
    // Until the leader learns the shrink (from its retry) its HW waits for the cut follower.
    await x.progress(
      `acks=all on partition ${part.partition} without broker ${follower} (leader ${leader} sending its AlterPartition again)`,
      30,
      ISR_FULL_BOUND_MS,
      part.partition,
    );
    resumedMs = Date.now() - shrunkAt;
  } finally {
    rule?.disarm();
    proxy.heal(leader, follower);
  }
  const healedAt = Date.now();
  const after = await waitFullIsr(c, topic);
  const recoveredMs = Date.now() - healedAt;
  sameLeaders(before, after, `only the link ${leader}–${follower} was cut`);
  await x.progress(`after the link ${leader}–${follower} healed`, 50, 30_000);
  return {
    victim: leader,
    partition: part.partition,
    movedMs: 0,
    downMs: healedAt - faultAt,
    recoveredMs,
    detail: `ISR shrunk ${shrinkMs} ms after the cut; ${rule?.hits ?? 0} AlterPartition answer dropped; acks=all on the partition ${resumedMs} ms after the shrink`,
    effects: { alterPartitionAnswersDropped: rule?.hits ?? 0 },
  };
}

/**
 * replay-leader-and-isr (issue 31, item 4): a LeaderAndIsr captured earlier in the run (the latest one to a
 * running broker naming this topic, or an older one) is sent to its broker again, as the controller resends
 * one after a timeout or a failover. Its leader epochs are not above the broker's, so it must change
 * nothing: every partition answered with an error (STALE_CONTROLLER_EPOCH, or a top-level stale controller
 * or broker epoch), every leader where it was, every ISR full.
 */
async function replayLeaderAndIsr(x: FaultContext): Promise<FaultOutcome> {
  const { c, topic, rng } = x;
  const proxy = c.proxy!;
  const cap = capturesOf(proxy).leaderAndIsr;
  const ours = cap.frames.filter((f) => c.isLive(f.dst) && statesOf(f).some((s) => s.topicName === topic));
  if (ours.length === 0)
    throw new Error(
      `no LeaderAndIsr naming ${topic} captured to a running broker (${cap.frames.length} captured)`,
    );
  const dsts = [...new Set(ours.map((f) => f.dst))].sort((a, b) => a - b);
  const dst = dsts[rng.int(0, dsts.length - 1)];
  const to = ours.filter((f) => f.dst === dst);
  const req = rng.chance(0.5) ? to[to.length - 1] : to[rng.int(0, to.length - 1)];
  const states = statesOf(req).filter((s) => s.topicName === topic);
  const sent = states
    .map((s) => `${s.partitionIndex}: leader ${s.leader} epoch ${s.leaderEpoch} ISR [${s.isr}]`)
    .join(", ");
  const ageS = ((Date.now() - req.atMs) / 1000).toFixed(1);
  x.log(`broker ${dst}: a LeaderAndIsr from controller ${req.src} captured ${ageS} s ago (${sent})`);
  const before = await view(c, topic);
  const faultAt = Date.now();
  const answer = await proxy.replay(req);
  const { body } = decodeResponse(Apis.LeaderAndIsr, answer.apiVersion, answer.body);
  const errors = [
    ...body.partitionErrors.map((e) => e.errorCode),
    ...body.topics.flatMap((t) => t.partitionErrors.map((e) => e.errorCode)),
  ];
  const applied = body.errorCode === 0 ? errors.filter((e) => e === 0).length : 0;
  const said = `error ${body.errorCode}, partition errors [${errors.join(",")}]`;
  if (applied > 0) {
    const now = await Promise.all(states.map((s) => metadataView(c, dst, topic, s.partitionIndex)));
    throw new Error(
      `broker ${dst} applied ${applied} partition state(s) of a LeaderAndIsr sent again ${ageS} s after the first time (${sent}; its metadata now: ${JSON.stringify(now)}): answered ${said}`,
    );
  }
  const downMs = Date.now() - faultAt;
  const after = await waitFullIsr(c, topic);
  const recoveredMs = Date.now() - faultAt;
  sameLeaders(before, after, `broker ${dst} was only sent an old LeaderAndIsr`);
  await x.progress(`after the LeaderAndIsr sent again to broker ${dst}`, 50, 30_000);
  return {
    victim: dst,
    movedMs: 0,
    downMs,
    recoveredMs,
    detail: `LeaderAndIsr sent again to broker ${dst} (${sent}), answered ${said}`,
    effects: {
      leaderAndIsrReplayed: 1,
      leaderAndIsrPartitionsRefused:
        body.errorCode !== 0 ? errors.length : errors.filter((e) => e !== 0).length,
    },
  };
}

function statesOf(f: CapturedRequest): ReturnType<typeof leaderAndIsrStates> {
  try {
    return leaderAndIsrStates(f);
  } catch {
    return [];
  }
}

interface AlterPartitionSent {
  readonly frame: CapturedRequest;
  readonly items: Array<{
    topic: string;
    partition: number;
    leaderEpoch: number;
    newIsr: number[];
    partitionEpoch: number;
  }>;
}

function alterPartitionOf(f: CapturedRequest): AlterPartitionSent | undefined {
  const d = decodeRequest(f.body);
  if (!d.ok) return undefined;
  const body = d.request.body as AlterPartitionRequest;
  return {
    frame: f,
    items: body.topics.flatMap((t) =>
      t.partitions.map((q) => ({
        topic: t.topicName,
        partition: q.partitionIndex,
        leaderEpoch: q.leaderEpoch,
        newIsr: [...(q.newIsr.length > 0 ? q.newIsr : q.newIsrWithEpochs.map((b) => b.brokerId))],
        partitionEpoch: q.partitionEpoch,
      })),
    ),
  };
}

const sameSet = (a: readonly number[], b: readonly number[]) =>
  a.length === b.length && [...a].sort().join(",") === [...b].sort().join(",");

/**
 * replay-alter-partition (a duplicated control-plane request): an AlterPartition a leader sent earlier is
 * sent to the controller again. Only one that is already superseded is chosen (its partition epoch below
 * ZooKeeper's, or asking for the ISR ZooKeeper has), so the controller must refuse it
 * (INVALID_UPDATE_VERSION, FENCED_LEADER_EPOCH, …) or answer with the current state: ZooKeeper's ISR must not
 * become the replayed one, every leader stays, every ISR is full. With nothing captured yet that qualifies,
 * the fault is skipped (counted). One sent to the controller of now is preferred; a leader that is the
 * controller itself makes a local call, so when only requests to a former controller were captured, one of
 * those is sent: that broker must answer NOT_CONTROLLER and change nothing (counted apart).
 */
async function replayAlterPartition(x: FaultContext): Promise<FaultOutcome> {
  const { c, topic } = x;
  const proxy = c.proxy!;
  const controller = await c.waitForController(10_000);
  const sent = capturesOf(proxy)
    .alterPartition.frames.map(alterPartitionOf)
    .filter(
      (s): s is AlterPartitionSent => s !== undefined && s.items.length > 0 && s.items.length <= PARTITIONS,
    );
  // Those to the controller of now before the others, and among them (by the seed) either the latest first
  // or those asking for a smaller ISR than the replicas first (a superseded shrink must be refused).
  const toController = sent.filter((s) => s.frame.dst === controller).reverse();
  const shrinksFirst = x.rng.chance(0.5);
  const partial = (s: AlterPartitionSent) => s.items.some((i) => i.newIsr.length < 3);
  const ordered = [
    ...(shrinksFirst ? toController.filter(partial) : []),
    ...toController.filter((s) => !shrinksFirst || !partial(s)),
    ...sent.filter((s) => s.frame.dst !== controller).reverse(),
  ];
  let chosen: { s: AlterPartitionSent; zk: Array<Awaited<ReturnType<typeof zkView>>> } | undefined;
  for (const s of ordered.slice(0, 3)) {
    const zk = await Promise.all(s.items.map((i) => zkView(c, i.topic, i.partition)));
    const superseded = s.items.every((i, k) => {
      const z = zk[k];
      return z !== undefined && (i.partitionEpoch < z.partitionEpoch || sameSet(i.newIsr, z.isr));
    });
    if (superseded) {
      chosen = { s, zk };
      break;
    }
  }
  if (chosen === undefined) {
    x.log(
      `nothing to send again (${sent.length} AlterPartition captured, none superseded among the latest 3)`,
    );
    return {
      victim: -1,
      movedMs: 0,
      downMs: 0,
      recoveredMs: 0,
      detail: "skipped",
      effects: { alterPartitionReplaySkipped: 1 },
    };
  }
  const { s, zk } = chosen;
  const what = s.items
    .map(
      (i) =>
        `${i.topic}-${i.partition} ISR [${i.newIsr}] at leader epoch ${i.leaderEpoch}, partition epoch ${i.partitionEpoch}`,
    )
    .join("; ");
  const ageS = ((Date.now() - s.frame.atMs) / 1000).toFixed(1);
  x.log(
    `controller ${s.frame.dst}: an AlterPartition from broker ${s.frame.src} captured ${ageS} s ago (${what})`,
  );
  const before = await view(c, topic);
  const faultAt = Date.now();
  const answer = await proxy.replay(s.frame);
  const { body } = decodeResponse(Apis.AlterPartition, answer.apiVersion, answer.body);
  const answers = body.topics.flatMap((t) => t.partitions.map((q) => ({ topic: t.topicName, ...q })));
  const said = `error ${body.errorCode}; ${answers.map((a) => `${a.topic}-${a.partitionIndex}: ${a.errorCode}${a.errorCode === 0 ? ` ISR [${a.isr}] partition epoch ${a.partitionEpoch}` : ""}`).join(", ")}`;
  const now = await Promise.all(s.items.map((i) => zkView(c, i.topic, i.partition)));
  const applied = s.items.filter((i, k) => {
    const was = zk[k]!;
    const is = now[k];
    const accepted =
      answers.find((a) => a.topic === i.topic && a.partitionIndex === i.partition)?.errorCode === 0;
    return !sameSet(i.newIsr, was.isr) && (accepted || (is !== undefined && sameSet(i.newIsr, is.isr)));
  });
  if (applied.length > 0)
    throw new Error(
      `controller ${s.frame.dst} applied an AlterPartition sent again ${ageS} s after the first time (${what}): answered ${said}; ZooKeeper before ${JSON.stringify(zk)}, after ${JSON.stringify(now)}`,
    );
  const downMs = Date.now() - faultAt;
  const after = await waitFullIsr(c, topic);
  const recoveredMs = Date.now() - faultAt;
  sameLeaders(before, after, "the controller was only sent an old AlterPartition");
  await x.progress(`after the AlterPartition sent again to broker ${s.frame.dst}`, 50, 30_000);
  return {
    victim: s.frame.dst,
    movedMs: 0,
    downMs,
    recoveredMs,
    detail: `AlterPartition of broker ${s.frame.src} sent again to broker ${s.frame.dst} (${what}), answered ${said}`,
    effects:
      s.frame.dst === controller
        ? { alterPartitionReplayedToController: 1 }
        : { alterPartitionReplayedToFormerController: 1 },
  };
}

/** Frame rules holding answers, for the clean-up after a failure. */
const heldRules = new Set<{ disarm(): void }>();

/**
 * delay-control-plane: every LeaderAndIsr, UpdateMetadata and AlterPartition answer held 0.5–3 s (later
 * answers on the connection wait behind it) while a partition's leader is SIGTERMed and restarted, or cut
 * off from the other brokers and ZooKeeper past the session timeout and healed (elections, the victim's
 * return and the ISR expansions all under held answers); then what sigterm-leader or partition-leader
 * requires.
 */
async function delayControlPlane(x: FaultContext): Promise<FaultOutcome> {
  const { c, topic, rng } = x;
  const proxy = c.proxy!;
  const ms = rng.int(500, 3000);
  const sigterm = rng.chance(0.5);
  const partition = rng.int(0, PARTITIONS - 1);
  const victim = (await view(c, topic))[partition].leader;
  x.log(
    `control-plane answers held ${ms} ms while broker ${victim} (leader of partition ${partition}) is ${sigterm ? "SIGTERMed and restarted" : "cut off past the session timeout"}`,
  );
  const rules = [ApiKey.LeaderAndIsr, ApiKey.UpdateMetadata, ApiKey.AlterPartition].map((apiKey) =>
    proxy.delayResponses({ apiKey }, ms, Number.POSITIVE_INFINITY),
  );
  for (const r of rules) heldRules.add(r);
  let r: Pick<FaultRecord, "movedMs" | "downMs" | "recoveredMs">;
  try {
    r = sigterm ? await signalFault(x, "SIGTERM", victim, false) : await isolateAndHeal(x, victim);
  } finally {
    for (const rule of rules) {
      rule.disarm();
      heldRules.delete(rule);
    }
  }
  const held = rules.reduce((a, rule) => a + rule.hits, 0);
  return {
    victim,
    partition,
    ...r,
    detail: `${sigterm ? "SIGTERM and restart" : "network partition"} of broker ${victim} with ${held} control-plane answers held ${ms} ms`,
    effects: { controlPlaneAnswersHeld: held },
  };
}

/**
 * latency-links (issue 31, item 1): 10–30 ms each way on every inter-broker link for 3–8 s while the
 * producer runs. A follower that keeps fetching is caught up (it reaches the log end the leader had at its
 * previous fetch), so no ISR may change: no leader logs "Shrinking ISR" for the topic and no controller
 * "ISR of … changed" during the window, and when a view (one every ~200 ms) shows a shrunk ISR, ZooKeeper's
 * ISR must still be full (the view's broker lagging, counted); acks=all goes on.
 */
async function latencyLinks(x: FaultContext): Promise<FaultOutcome> {
  const { c, topic, rng, producer } = x;
  const proxy = c.proxy!;
  const ms = rng.int(10, 30);
  const forMs = rng.int(3000, 8000);
  x.log(`${ms} ms each way on every inter-broker link for ${forMs} ms`);
  const before = await view(c, topic);
  const marks = c.brokers.map((b) => b.stdout.length);
  const from = producer.acked;
  const faultAt = Date.now();
  const shrinks: string[] = [];
  let polls = 0;
  proxy.setLatency(ms);
  try {
    while (Date.now() - faultAt < forMs) {
      const ps = await view(c, topic);
      polls++;
      for (const q of ps)
        if (q.isr.length !== q.replicas.length)
          shrinks.push(`partition ${q.partition} ISR [${q.isr}] at ${Date.now() - faultAt} ms`);
      await sleep(200);
    }
    if (producer.acked - from < 50)
      await x.progress(`under ${ms} ms latency`, 50 - (producer.acked - from), 30_000);
  } finally {
    proxy.clearLatency();
  }
  const endedAt = Date.now();
  const acks = producer.acked - from;
  await sleep(500); // the brokers' last lines of the window, through their pipes
  const changes = isrChangeLines(c, topic, marks);
  // A view can lag (a broker's metadata waits behind the controller's earlier requests to it): a shrunk ISR
  // seen there counts when ZooKeeper's ISR is not full either; the logged changes count always.
  const zk =
    shrinks.length > 0 ? await Promise.all(before.map((q) => c.partitionState(topic, q.partition))) : [];
  const notFull = zk.filter((z) => z === undefined || z.isr.length !== 3).map((z) => JSON.stringify(z));
  if (changes.length > 0 || notFull.length > 0)
    throw new Error(
      `an ISR changed under ${ms} ms each way on the inter-broker links (no broker failed): ${[...changes.slice(0, 10), ...shrinks.slice(0, 5), ...notFull.map((z) => `ZooKeeper: ${z}`)].join("; ")}`,
    );
  const after = await waitFullIsr(c, topic);
  const recoveredMs = Date.now() - endedAt;
  sameLeaders(before, after, "the links were only slow");
  await x.progress(`after the latency ended`, 50, 30_000);
  return {
    victim: -1,
    movedMs: 0,
    downMs: endedAt - faultAt,
    recoveredMs,
    detail: `${ms} ms each way for ${endedAt - faultAt} ms: ${acks} acks, ${polls} views, ${shrinks.length} of them with a shrunk ISR (ZooKeeper's full: a lagging broker), no ISR change logged`,
    effects: { latencyLaggingViews: shrinks.length },
  };
}

/**
 * Lines the brokers logged since `marks` (stdout lengths) about an ISR change of `topic`: a leader's
 * "Shrinking ISR for partition <topic>-<p>" / "Expanding ISR …" proposal or the controller's
 * "ISR of <topic>-<p> changed to …".
 */
function isrChangeLines(c: ClusterHarness, topic: string, marks: readonly number[]): string[] {
  const t = topic.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const re = new RegExp(
    `(?:(?:Shrinking|Expanding) ISR for partition ${t}-\\d+ |ISR of ${t}-\\d+ changed to)`,
  );
  return c.brokers.flatMap((b, i) =>
    b.stdout
      .slice(marks[i])
      .split("\n")
      .filter((l) => re.test(l))
      .map((l) => `broker ${i}: ${l.trim()}`),
  );
}

/** SIGCONT of every suspended ZooKeeper server (start resumes a suspended one and waits until it serves). */
async function resumeZooKeeper(c: ClusterHarness): Promise<void> {
  const servers = c.zk.connectString.split(",").length;
  for (let i = 0; i < servers; i++) await c.zk.start(i);
}

/**
 * pause-zookeeper: every ZooKeeper server SIGSTOPped, then SIGCONTed. Within the session timeout (1–2.5 s)
 * no session may expire: the same controller at the same epoch, every leader where it was. Past it
 * (pause-zookeeper-expire: the session timeout plus 1–3 s) the brokers' sessions expire when ZooKeeper
 * resumes (counted when the controller epoch moved): every broker registers again, a controller is elected,
 * every ISR is full. In both, the brokers keep acknowledging acks=all writes while ZooKeeper is paused
 * (no ISR change is needed).
 */
async function pauseZooKeeper(x: FaultContext, expire: boolean): Promise<FaultOutcome> {
  const { c, topic, rng, producer } = x;
  const [controller, epochBefore, before] = await Promise.all([
    c.waitForController(10_000),
    c.controllerEpoch(),
    view(c, topic),
  ]);
  const pauseMs = expire ? SESSION_TIMEOUT_MS + rng.int(1000, 3000) : rng.int(1000, 2500);
  x.log(
    `ZooKeeper paused ${pauseMs} ms (session timeout ${SESSION_TIMEOUT_MS} ms); controller ${controller}`,
  );
  const servers = c.zk.connectString.split(",").length;
  const from = producer.acked;
  const faultAt = Date.now();
  for (let i = 0; i < servers; i++) await c.zk.stop(i, "SIGSTOP");
  try {
    await sleep(pauseMs);
  } finally {
    await resumeZooKeeper(c);
  }
  const resumedAt = Date.now();
  const ackedWhilePaused = producer.acked - from;
  if (ackedWhilePaused === 0)
    throw new Error(`no acks=all write acknowledged during the ${pauseMs} ms ZooKeeper was paused`);
  let detail: string;
  let expired = 0;
  let recoveredMs: number;
  if (!expire) {
    const after = await waitFullIsr(c, topic);
    recoveredMs = Date.now() - resumedAt;
    const [now, epochAfter] = await Promise.all([c.controllerId(), c.controllerEpoch()]);
    if (now !== controller || epochAfter !== epochBefore)
      throw new Error(
        `the controller moved (broker ${controller} at epoch ${epochBefore} → broker ${now} at epoch ${epochAfter}) though ZooKeeper was paused only ${pauseMs} ms, within the session timeout`,
      );
    sameLeaders(before, after, `ZooKeeper was paused only ${pauseMs} ms, within the session timeout`);
    detail = `paused ${pauseMs} ms: ${ackedWhilePaused} acks meanwhile, the same controller and leaders`;
  } else {
    await c.waitForRegistered(
      c.brokers.map((_, i) => i),
      ISR_FULL_BOUND_MS,
    );
    const now = await c.waitForController(ISR_FULL_BOUND_MS);
    await waitFullIsr(c, topic, Math.max(1000, resumedAt + ISR_FULL_BOUND_MS - Date.now()));
    recoveredMs = Date.now() - resumedAt;
    const epochAfter = await c.controllerEpoch();
    expired = epochAfter !== epochBefore ? 1 : 0;
    detail = `paused ${pauseMs} ms: ${ackedWhilePaused} acks meanwhile; controller ${controller} at epoch ${epochBefore} → ${now} at epoch ${epochAfter}`;
  }
  await x.progress(`after ZooKeeper resumed`, 50, 30_000);
  return {
    victim: -1,
    movedMs: 0,
    downMs: resumedAt - faultAt,
    recoveredMs,
    detail,
    effects: {
      acksWhileZooKeeperPaused: ackedWhilePaused,
      ...(expire ? { controllerEpochMoved: expired } : {}),
    },
  };
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

function argText(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return undefined;
  const v = process.argv[i + 1];
  if (v === undefined || v.startsWith("--")) throw new Error(`--${name} needs a value`);
  return v;
}

/** Writes every broker's whole output, ZooKeeper's last lines and the proxy's state under a new directory; its path. */
function saveLogs(c: ClusterHarness, seed: number): string {
  const dir = join(tmpdir(), "replication-soak", `seed-${seed}-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  for (const [i, b] of c.brokers.entries()) {
    writeFileSync(join(dir, `broker-${i}.stdout.log`), b.stdout);
    writeFileSync(join(dir, `broker-${i}.stderr.log`), b.stderr);
  }
  writeFileSync(join(dir, "zookeeper.log"), c.zk.logs(400));
  if (c.proxy)
    writeFileSync(
      join(dir, "proxy.txt"),
      `cut links: ${c.proxy.cutLinks().join(" ") || "none"}\ncounts: ${JSON.stringify(c.proxy.counts)}\n`,
    );
  return dir;
}

function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

async function soak(): Promise<void> {
  const schedules = argValue("schedules", 20);
  const faultsPer = argValue("faults", 6);
  const minutes = argValue("minutes", 24 * 60);
  const kindsArg = argText("kinds") ?? process.env.FAULT_KINDS;
  const kinds = kindsArg ? parseFaultKinds(kindsArg) : FAULT_KINDS;
  const base = seedFromEnv();
  const seeds = Array.from({ length: schedules }, (_, i) => (base + i * 7919) >>> 0);
  console.log(
    `replication soak: ${schedules} schedules of ${faultsPer} faults (${kinds.length} kinds), seeds ${base}+k*7919, no new schedule after ${minutes} min`,
  );
  let cluster: ClusterHarness | undefined;
  const results: ScheduleResult[] = [];
  const failures: Array<{ seed: number; message: string; logs?: string; checks?: CheckCounts }> = [];
  const started = Date.now();
  let run = 0;
  try {
    for (const [k, seed] of seeds.entries()) {
      if (Date.now() - started > minutes * 60_000) {
        console.log(`${minutes} min passed: no more schedules (${k} of ${schedules} run)`);
        break;
      }
      run++;
      try {
        cluster ??= await ClusterHarness.start({
          brokers: 3,
          name: "replication-soak",
          linkProxy: true,
          overrides: FAULT_CLUSTER_OVERRIDES,
        });
        const r = await runFaultSchedule(cluster, {
          seed,
          faults: faultsPer,
          kinds,
          log: (l) => console.log(l),
        });
        results.push(r);
        console.log(`schedule ${k + 1}/${schedules} seed ${seed}: ok in ${(r.ms / 1000).toFixed(1)} s`);
      } catch (e) {
        const message = (e as Error).message;
        const logs = cluster ? saveLogs(cluster, seed) : undefined;
        failures.push({ seed, message, logs, checks: e instanceof ScheduleFailure ? e.checks : undefined });
        console.log(`schedule ${k + 1}/${schedules} seed ${seed}: FAILED\n${message}`);
        if (cluster)
          console.log(
            `===== cluster logs at the failure (whole logs in ${logs}) =====\n${cluster.logTails(40)}`,
          );
        // A fresh cluster for the next schedule.
        await cluster?.close();
        cluster = undefined;
      }
    }
  } finally {
    await cluster?.close();
  }
  const all = results.flatMap((r) => r.faults);
  const sum = (f: (r: ScheduleResult) => number) => results.reduce((a, r) => a + f(r), 0);
  const wallS = (Date.now() - started) / 1000;
  const checked = [...results.map((r) => r.checks), ...failures.flatMap((f) => (f.checks ? [f.checks] : []))];
  const total = (f: (c: CheckCounts) => number) => checked.reduce((a, c) => a + f(c), 0);
  console.log("\n===== replication soak summary =====");
  console.log(`schedules run:        ${run} (passed ${results.length}, failed ${failures.length})`);
  console.log(`faults injected:      ${all.length} in passed schedules`);
  console.log(`records produced:     ${sum((r) => r.produced)}`);
  console.log(`records acknowledged: ${sum((r) => r.acknowledged)}`);
  console.log(`records consumed:     ${sum((r) => r.consumed)}`);
  console.log(`delivery errors:      ${sum((r) => r.deliveryErrors)}`);
  console.log(
    `final checks run:     ${checked.length} schedules: acknowledged lost ${total((c) => c.lost)}, duplicates ${total((c) => c.duplicates)}, at another offset ${total((c) => c.moved)}, out of order ${total((c) => c.misordered)}, replicas differing ${total((c) => c.replicasDiffering)}`,
  );
  const lastIsr = results.map((r) => r.faults.at(-1)?.recoveredMs ?? 0);
  const finalIsr = results.map((r) => r.finalIsrMs);
  console.log(
    `ISR full after the last fault: max ${Math.max(0, ...lastIsr)} ms (bound ${ISR_FULL_BOUND_MS} ms); in ZooKeeper and every broker at the end: max ${Math.max(0, ...finalIsr)} ms`,
  );
  console.log(
    `wall time:            ${wallS.toFixed(0)} s (${all.length > 0 ? (wallS / all.length).toFixed(1) : "-"} s per fault, schedule set-up and checks included)`,
  );
  console.log(
    "per kind: count, ms until every ISR was full after the fault ended (median / p95 / max), time per fault (median)",
  );
  for (const kind of kinds) {
    const fs = all.filter((f) => f.kind === kind);
    const isr = fs.map((f) => f.recoveredMs).sort((a, b) => a - b);
    const dur = fs.map((f) => f.downMs + f.recoveredMs).sort((a, b) => a - b);
    console.log(
      `  ${kind.padEnd(24)} ${String(fs.length).padStart(5)}   ISR full ${percentile(isr, 0.5)} / ${percentile(isr, 0.95)} / ${isr.at(-1) ?? 0} ms   fault ${percentile(dur, 0.5)} ms`,
    );
  }
  const effects = new Map<string, number>();
  for (const f of all)
    for (const [k, v] of Object.entries(f.effects ?? {})) effects.set(k, (effects.get(k) ?? 0) + v);
  if (effects.size > 0) console.log(`effects: ${[...effects].map(([k, v]) => `${k} ${v}`).join(", ")}`);
  for (const f of failures)
    console.log(
      `FAILED seed ${f.seed} (FAULT_SEED=${f.seed}): ${f.message.split("\n")[0]}${f.logs ? ` [logs: ${f.logs}]` : ""}`,
    );
  process.exitCode = failures.length > 0 ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  soak().catch((e) => {
    console.error(`replication soak: ${(e as Error).message}`);
    process.exitCode = 1;
  });
}
