// Test-only: what the cluster tests of the ISR rules (issue 31: test/cluster/isr-*.test.ts) share — a
// partition pinned to chosen brokers (so the leader is not the controller and its AlterPartition and the
// controller's LeaderAndIsr go through the LinkProxy), the partition as the brokers' Metadata and as
// ZooKeeper tell it, a confluent-kafka producer (/usr/bin/python3) that sends a list of values with acks=all
// and reports each delivery, a steady acks=1 producer in the background, and the decoding of a captured
// LeaderAndIsr and of the broker's answer to its replay.

import assert from "node:assert/strict";

import { decodeRequest, decodeResponse } from "../../src/protocol/framing.js";
import { Apis } from "../../src/protocol/generated/api-table.js";
import type { LeaderAndIsrPartitionState } from "../../src/protocol/generated/messages/LeaderAndIsrRequest.js";
import { defaultMetadataRequest } from "../../src/protocol/generated/messages/MetadataRequest.js";
import { WireClient } from "../server/wire-client.js";
import { type BackgroundCommand, runCommand, startCommand, withDeadline } from "./broker-harness.js";
import type { ClusterHarness } from "./cluster-harness.js";
import type { CapturedRequest, ReplayAnswer } from "./link-proxy.js";
import { skipUnlessInstalled } from "./required-tools.js";

export const PYTHON = "/usr/bin/python3";
/** What these tests need that may not be installed: `false`, or the skip reason (required-tools.ts). */
export const missingTools: string | false = skipUnlessInstalled("python3", "confluent-kafka");

/** Creates `topic` with one partition on `replicas` (the first is the preferred leader). */
export async function createPinnedTopic(
  c: ClusterHarness,
  topic: string,
  replicas: readonly number[],
  configs: Readonly<Record<string, string>> = {},
): Promise<void> {
  const args = ["--create", "--topic", topic, "--replica-assignment", replicas.join(":")];
  for (const [k, v] of Object.entries(configs)) args.push("--config", `${k}=${v}`);
  await c.topics(args);
}

export interface PartitionView {
  readonly leader: number;
  readonly leaderEpoch: number;
  readonly isr: number[];
}

/** The partition as broker `i`'s Metadata answer tells it (its metadata cache), ISR sorted. */
export async function metadataView(
  c: ClusterHarness,
  i: number,
  topic: string,
  partition = 0,
): Promise<PartitionView | undefined> {
  const client = await WireClient.connect(c.broker(i).port);
  try {
    const res = await withDeadline(
      `Metadata of ${topic} from broker ${i}`,
      5000,
      client.request(Apis.Metadata, 7, {
        ...defaultMetadataRequest(),
        topics: [{ topicId: "AAAAAAAAAAAAAAAAAAAAAA", name: topic }],
      }),
    );
    const p = res.topics
      .find((t) => t.name === topic)
      ?.partitions.find((x) => x.partitionIndex === partition);
    if (p === undefined || p.errorCode !== 0) return undefined;
    return { leader: p.leaderId, leaderEpoch: p.leaderEpoch, isr: [...p.isrNodes].sort((a, b) => a - b) };
  } finally {
    client.socket.destroy();
  }
}

/** The partition state znode with its partition epoch (the znode's version), ISR sorted. */
export async function zkView(
  c: ClusterHarness,
  topic: string,
  partition = 0,
): Promise<(PartitionView & { partitionEpoch: number }) | undefined> {
  const path = `/brokers/topics/${topic}/partitions/${partition}/state`;
  // One read: the state and its version from two reads could be from either side of a change.
  const node = await c.znodeWithStat(path);
  if (node === undefined) return undefined;
  const state = JSON.parse(node.data) as { leader: number; leader_epoch: number; isr: number[] };
  const stat = node.stat;
  return {
    leader: state.leader,
    leaderEpoch: state.leader_epoch,
    isr: [...state.isr].sort((a, b) => a - b),
    partitionEpoch: stat.version,
  };
}

/** Waits until ZooKeeper's ISR of the partition is exactly `isr`; the last state read is in the error. */
export async function waitForZkIsr(
  c: ClusterHarness,
  topic: string,
  isr: readonly number[],
  ms: number,
  why: string,
): Promise<PartitionView & { partitionEpoch: number }> {
  const want = [...isr].sort((a, b) => a - b).join(",");
  let last: unknown;
  return c
    .waitFor(`ISR of ${topic}-0 in ZooKeeper to be [${want}] (${why})`, ms, async () => {
      const v = await zkView(c, topic);
      last = v;
      return v !== undefined && v.isr.join(",") === want ? v : undefined;
    })
    .catch((e) => {
      throw new Error(`${(e as Error).message}; last state: ${JSON.stringify(last)}`);
    });
}

/** Lines of broker `i`'s output (since its first start) that match `re`. */
export function logLines(c: ClusterHarness, i: number, re: RegExp): string[] {
  return c
    .broker(i)
    .stdout.split("\n")
    .filter((l) => re.test(l));
}

// argv: bootstrap topic partition message_timeout_ms acks values... Produces each value (acks=all:
// idempotent), waits for every delivery report; prints `ack <offset> <value>` or `fail <value> <error>`,
// then `left <n>`.
const PRODUCE_ALL = `
import sys
from confluent_kafka import Producer
bootstrap, topic, part, timeout_ms, acks = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": acks == "all", "acks": acks,
              "message.timeout.ms": timeout_ms, "request.timeout.ms": min(timeout_ms, 30000)})
def report(err, msg):
    if err is None:
        print("ack %d %s" % (msg.offset(), msg.value().decode()), flush=True)
    else:
        print("fail %s %s" % (msg.value().decode(), str(err).replace("\\n", " ")), flush=True)
for v in sys.argv[6:]:
    p.produce(topic, value=v.encode(), partition=part, on_delivery=report)
print("left %d" % p.flush(timeout_ms / 1000 + 10), flush=True)
`;

export interface Produced {
  readonly acked: Array<{ offset: number; value: string }>;
  readonly failed: string[];
  readonly output: string;
}

/** Produces `values` to partition 0 of `topic` (acks=all unless told); every delivery reported (bounded). */
export async function produceAll(
  bootstrap: string,
  topic: string,
  values: readonly string[],
  timeoutMs: number,
  acks: "all" | "1" = "all",
): Promise<Produced> {
  const args = ["-c", PRODUCE_ALL, bootstrap, topic, "0", String(timeoutMs), acks, ...values];
  const r = await runCommand(PYTHON, args, { timeoutMs: timeoutMs + 30_000 });
  const output = `${r.stdout}\n${r.stderr}`;
  assert.equal(r.code, 0, `the producer failed:\n${output}`);
  return {
    acked: [...r.stdout.matchAll(/^ack (\d+) (\S+)$/gm)].map((m) => ({ offset: Number(m[1]), value: m[2] })),
    failed: [...r.stdout.matchAll(/^fail (\S+) (.*)$/gm)].map((m) => `${m[1]}: ${m[2]}`),
    output,
  };
}

export const values = (prefix: string, n: number): string[] =>
  Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

// argv: bootstrap topic rate_per_s seconds value_bytes. Produces to partition 0 with acks=1 at a steady rate
// (linger 5 ms), printing `tick <seconds> <produced> <acked> <failed>` every second and
// `done <produced> <acked> <failed> <left>` at the end; SIGTERM ends it early (after a flush).
const STEADY = `
import sys, time, signal
from confluent_kafka import Producer
bootstrap, topic, rate, seconds, size = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
stop = [False]
signal.signal(signal.SIGTERM, lambda *a: stop.__setitem__(0, True))
p = Producer({"bootstrap.servers": bootstrap, "acks": "1", "linger.ms": 5, "message.timeout.ms": 30000})
counts = {"acked": 0, "failed": 0}
def report(err, msg):
    counts["failed" if err is not None else "acked"] += 1
value = b"v" * size
start = time.time(); n = 0; next_tick = 1.0
while not stop[0]:
    elapsed = time.time() - start
    if elapsed >= seconds: break
    target = int(elapsed * rate)
    while n < target:
        try:
            p.produce(topic, value=value, partition=0, on_delivery=report); n += 1
        except BufferError:
            break
    p.poll(0.001)
    if elapsed >= next_tick:
        print("tick %.1f %d %d %d" % (elapsed, n, counts["acked"], counts["failed"]), flush=True)
        next_tick += 1.0
left = p.flush(30)
print("done %d %d %d %d" % (n, counts["acked"], counts["failed"], left), flush=True)
`;

export interface SteadyResult {
  readonly produced: number;
  readonly acked: number;
  readonly failed: number;
  readonly left: number;
  readonly output: string;
}

/** A steady acks=1 producer on partition 0, running in the background. */
export class SteadyProducer {
  private constructor(private readonly cmd: BackgroundCommand) {}

  static start(bootstrap: string, topic: string, ratePerS: number, seconds: number, valueBytes: number) {
    return new SteadyProducer(
      startCommand(PYTHON, [
        "-c",
        STEADY,
        bootstrap,
        topic,
        String(ratePerS),
        String(seconds),
        String(valueBytes),
      ]),
    );
  }

  /** The last tick: records produced and acknowledged so far. */
  progress(): { produced: number; acked: number } {
    const ticks = [...this.cmd.stdout().matchAll(/^tick \S+ (\d+) (\d+) \d+$/gm)];
    const last = ticks[ticks.length - 1];
    return last ? { produced: Number(last[1]), acked: Number(last[2]) } : { produced: 0, acked: 0 };
  }

  /** Waits for the producer to end (stopping it early with SIGTERM when `now`); its final counts. */
  async finish(now = false, ms = 60_000): Promise<SteadyResult> {
    const r = now
      ? await this.cmd.stop("SIGTERM", ms)
      : await withDeadline("the steady producer to finish", ms, this.cmd.exited).catch(() =>
          this.cmd.stop("SIGKILL"),
        );
    const output = `${r.stdout}\n${r.stderr}`;
    const m = /^done (\d+) (\d+) (\d+) (\d+)$/m.exec(r.stdout);
    if (!m) throw new Error(`the steady producer ended without its counts:\n${output.slice(-4000)}`);
    return { produced: Number(m[1]), acked: Number(m[2]), failed: Number(m[3]), left: Number(m[4]), output };
  }
}

/** The partition states a captured LeaderAndIsr request carries. */
export function leaderAndIsrStates(req: CapturedRequest): LeaderAndIsrPartitionState[] {
  const d = decodeRequest(req.body);
  if (!d.ok) throw new Error(`a captured LeaderAndIsr does not decode: ${d.kind}`);
  const body = d.request.body as {
    ungroupedPartitionStates: LeaderAndIsrPartitionState[];
    topicStates: Array<{ topicName: string; partitionStates: LeaderAndIsrPartitionState[] }>;
  };
  return [
    ...body.ungroupedPartitionStates,
    ...body.topicStates.flatMap((t) => t.partitionStates.map((p) => ({ ...p, topicName: t.topicName }))),
  ];
}

/** The broker's answer to a replayed LeaderAndIsr, as one line (top-level and per-partition error codes). */
export function describeLeaderAndIsrAnswer(a: ReplayAnswer): string {
  const { body } = decodeResponse(Apis.LeaderAndIsr, a.apiVersion, a.body);
  const parts = [
    ...body.partitionErrors.map((p) => `${p.topicName}-${p.partitionIndex}: ${p.errorCode}`),
    ...body.topics.flatMap((t) =>
      t.partitionErrors.map((p) => `${t.topicId}-${p.partitionIndex}: ${p.errorCode}`),
    ),
  ];
  return `error ${body.errorCode}; partitions ${parts.join(", ") || "(none)"} (via ${a.via})`;
}
