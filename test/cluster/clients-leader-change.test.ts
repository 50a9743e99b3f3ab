// Issue 16: real clients keep producing across a leader change. kcat, confluent-kafka (python3),
// kafka-python and KafkaJS each produce N messages with acks=all, paced, to their own single-partition
// topic with RF 3, all four led by the same broker (not the controller); once every client has had
// acknowledgements, that broker is stopped with SIGTERM (a controlled shutdown: leadership moves to the
// next replica) while the clients go on sending. Each producer must see all N messages acknowledged and no
// delivery error (retries and metadata refreshes are the clients' own business), and — the followers
// having replicated what the ISR acknowledged — every acknowledged message must be in the new leader's log
// at the offset it was acknowledged with, whether the old or the new leader acknowledged it (kcat reports
// no offsets: there, every line must be in the new leader's log). The log is read with `tributary dump-log`.

import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { after, before, describe, test } from "node:test";
import kafkajs from "kafkajs";
import { type CommandResult, describeResult, sleep } from "../support/broker-harness.js";
import { ClusterHarness, formatDescribe, withLogTails } from "../support/cluster-harness.js";
import { skipUnlessInstalled } from "../support/required-tools.js";

const { Kafka, logLevel } = kafkajs;

const KCAT = "/usr/bin/kcat";
const PYTHON = "/usr/bin/python3";
/** Messages per client, and the pause between two sends (so production spans the leader change). */
const N = 300;
const PACE_MS = 15;
/** Acknowledgements every client must have before the leader is stopped. */
const ACKS_BEFORE_STOP = 20;

/** What a producer reports: every acknowledged value (with its offset, when the client says it) and errors. */
interface ProducerReport {
  /** value, offset, and when the acknowledgement arrived (ms since the epoch). */
  acked: Array<[value: string, offset: number, at: number]>;
  errors: string[];
  /** kcat only: value and when its line was written to kcat's stdin. */
  sent?: Array<[value: string, at: number]>;
}

/** A client producing in the background: its acknowledgement count so far, and its final report. */
interface RunningProducer {
  readonly name: string;
  readonly topic: string;
  acks(): number;
  readonly done: Promise<ProducerReport>;
}

// Shared by the two python drivers: argv bootstrap topic n pace_seconds; stdout `progress <acks>` lines
// and one `result <json>` line at the end.
const PYTHON_COMMON = `
import json, sys, time
bootstrap, topic, n, pace = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
acked, errors = [], []
def progress():
    print("progress %d" % len(acked), flush=True)
def report(extra):
    out = {"acked": acked, "errors": errors}
    out.update(extra)
    print("result " + json.dumps(out), flush=True)
`;

const CONFLUENT_DRIVER = `${PYTHON_COMMON}
from confluent_kafka import Producer
def on_delivery(err, msg):
    if err is not None:
        errors.append(str(err))
    else:
        acked.append([msg.value().decode(), msg.offset(), time.time() * 1000])
        progress()
p = Producer({
    "bootstrap.servers": bootstrap, "client.id": "leader-change-confluent", "acks": "all",
    "linger.ms": 5, "message.timeout.ms": 30000, "retry.backoff.ms": 100,
})
for i in range(n):
    p.produce(topic, value=("%s-%04d" % (topic, i)).encode(), partition=0, on_delivery=on_delivery)
    p.poll(0)
    time.sleep(pace)
left = p.flush(40)
if left:
    errors.append("%d messages not delivered by flush" % left)
report({})
`;

const KAFKA_PYTHON_DRIVER = `${PYTHON_COMMON}
from kafka import KafkaProducer
p = KafkaProducer(
    bootstrap_servers=bootstrap.split(","), client_id="leader-change-kafka-python", acks="all",
    retries=50, retry_backoff_ms=200, request_timeout_ms=10000, linger_ms=5,
    max_in_flight_requests_per_connection=1,
)
def ok(value):
    def cb(md):
        acked.append([value, md.offset, time.time() * 1000])
        progress()
    return cb
def failed(e):
    errors.append(repr(e))
futures = []
for i in range(n):
    value = "%s-%04d" % (topic, i)
    f = p.send(topic, value=value.encode(), partition=0)
    f.add_callback(ok(value))
    f.add_errback(failed)
    futures.append(f)
    time.sleep(pace)
p.flush(timeout=40)
p.close(timeout=10)
report({"unresolved": sum(1 for f in futures if not f.is_done)})
`;

/** The python drivers' `result {json}` line. */
function parseResultLine(r: CommandResult): ProducerReport {
  const line = r.stdout.split("\n").find((l) => l.startsWith("result "));
  if (!line) throw new Error(`no result line\n${describeResult("driver", r)}`);
  return JSON.parse(line.slice("result ".length)) as ProducerReport;
}

/** Starts a driver process that prints `progress N` lines and a final `result {json}` line. */
function startDriver(
  name: string,
  topic: string,
  cmd: string,
  args: string[],
  feed?: (child: ChildProcess) => Promise<void>,
  parse: (r: CommandResult) => ProducerReport = parseResultLine,
): RunningProducer {
  const child = spawn(cmd, args, { stdio: [feed ? "pipe" : "ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  let acks = 0;
  child.stdout?.setEncoding("utf8");
  child.stderr?.setEncoding("utf8");
  child.stdout?.on("data", (d: string) => {
    stdout += d;
    const all = [...stdout.matchAll(/^progress (\d+)$/gm)];
    if (all.length > 0) acks = Number(all[all.length - 1][1]);
  });
  child.stderr?.on("data", (d: string) => {
    stderr += d;
  });
  child.stdin?.on("error", () => {});
  const exited = new Promise<number | null>((res) => {
    child.once("error", (e) => {
      stderr += String(e);
      res(null);
    });
    child.once("close", (code) => res(code));
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
  const done = (async () => {
    if (feed) await feed(child);
    const code = await exited;
    clearTimeout(timer);
    const r: CommandResult = { code, signal: null, stdout, stderr };
    if (code !== 0) throw new Error(describeResult(name, r));
    return parse(r);
  })();
  return { name, topic, acks: () => acks, done };
}

/**
 * kcat -P fed one line per PACE_MS on stdin. kcat reads its input in blocks of 1 KiB (fread), so each line
 * is padded to that size to be produced as soon as it is written. kcat reports no per-message
 * acknowledgements: its exit status (1 when a message was not delivered) and its "Delivery failed" lines
 * are the report; `acks` counts lines written.
 */
function startKcat(bootstrap: string, topic: string): RunningProducer {
  const sent: Array<[string, number]> = [];
  const values = Array.from({ length: N }, (_, i) => {
    const v = `${topic}-${String(i).padStart(4, "0")}-`;
    return v.padEnd(1023, "x");
  });
  const inner = startDriver(
    "kcat",
    topic,
    KCAT,
    [
      "-b",
      bootstrap,
      "-P",
      "-t",
      topic,
      "-p",
      "0",
      "-X",
      "acks=all",
      "-X",
      "linger.ms=5",
      "-X",
      "message.timeout.ms=30000",
      "-X",
      "retry.backoff.ms=100",
    ],
    async (child) => {
      for (const v of values) {
        child.stdin?.write(`${v}\n`);
        sent.push([v, Date.now()]);
        await sleep(PACE_MS);
      }
      child.stdin?.end();
    },
    (r) => ({
      acked: [],
      sent,
      errors: r.stderr.split("\n").filter((l) => /Delivery failed|Failed to (produce|deliver)/i.test(l)),
    }),
  );
  return { name: "kcat", topic, acks: () => sent.length, done: inner.done };
}

/** KafkaJS in this process: one send() per message (acks all), not awaited one by one. */
function startKafkaJs(bootstrap: string, topic: string): RunningProducer {
  const kafka = new Kafka({
    clientId: "leader-change-kafkajs",
    brokers: bootstrap.split(","),
    logLevel: logLevel.NOTHING,
    retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 2000 },
  });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  const report: ProducerReport = { acked: [], errors: [] };
  const done = (async () => {
    await producer.connect();
    try {
      const sends: Promise<void>[] = [];
      for (let i = 0; i < N; i++) {
        const value = `${topic}-${String(i).padStart(4, "0")}`;
        sends.push(
          producer
            .send({ topic, acks: -1, timeout: 10_000, messages: [{ value, partition: 0 }] })
            .then((res) => {
              report.acked.push([value, Number(res[0].baseOffset), Date.now()]);
            })
            .catch((e: Error) => {
              report.errors.push(`${value}: ${e.name}: ${e.message}`);
            }),
        );
        await sleep(PACE_MS);
      }
      await Promise.all(sends);
    } finally {
      await producer.disconnect();
    }
    return report;
  })();
  return { name: "KafkaJS", topic, acks: () => report.acked.length, done };
}

const missing = skipUnlessInstalled("kcat", "python3", "confluent-kafka");

describe("producers across a leader change (SIGTERM of the leader)", {
  skip: missing,
}, () => {
  let cluster: ClusterHarness | undefined;

  before(async () => {
    cluster = await ClusterHarness.start({ brokers: 3, name: "clients-leader-change" });
  });

  after(async () => {
    await cluster?.close();
  });

  test("kcat, confluent-kafka, kafka-python and KafkaJS: every message acknowledged, no delivery error", async () => {
    await withLogTails(
      () => cluster,
      async () => {
        const c = cluster!;
        // The leader is not the controller, so the controller stays put; the next replica takes over.
        const controller = await c.waitForController();
        const leader = (controller + 1) % 3;
        const next = (controller + 2) % 3;
        const assignment = `${leader}:${next}:${controller}`;
        const topics = {
          kcat: "lc-kcat",
          confluent: "lc-confluent",
          kafkaPython: "lc-kafka-python",
          kafkajs: "lc-kafkajs",
        };
        for (const t of Object.values(topics)) {
          await c.topics(["--create", "--topic", t, "--replica-assignment", assignment]);
        }
        for (const t of Object.values(topics)) {
          await c.waitForDescribe(
            t,
            `led by ${leader} with the full ISR`,
            20_000,
            (ps) => ps.length === 1 && ps[0].leader === leader && ps[0].isr.length === 3,
          );
        }

        const bootstrap = c.bootstrap();
        const pace = String(PACE_MS / 1000);
        const producers: RunningProducer[] = [
          startKcat(bootstrap, topics.kcat),
          startDriver("confluent-kafka", topics.confluent, PYTHON, [
            "-c",
            CONFLUENT_DRIVER,
            bootstrap,
            topics.confluent,
            String(N),
            pace,
          ]),
          startDriver("kafka-python", topics.kafkaPython, PYTHON, [
            "-c",
            KAFKA_PYTHON_DRIVER,
            bootstrap,
            topics.kafkaPython,
            String(N),
            pace,
          ]),
          startKafkaJs(bootstrap, topics.kafkajs),
        ];
        // A failure of one client is reported after the others are done, not as an unhandled rejection.
        const settled = Promise.allSettled(producers.map((p) => p.done));

        await c
          .waitFor(`every producer with ${ACKS_BEFORE_STOP} acknowledgements`, 30_000, async () =>
            producers.every((p) => p.acks() >= ACKS_BEFORE_STOP) ? true : undefined,
          )
          .catch((e) => {
            throw new Error(
              `${(e as Error).message}: ${producers.map((p) => `${p.name} ${p.acks()}`).join(", ")}`,
            );
          });
        const acksAtStop = producers.map((p) => `${p.name}: ${p.acks()}`).join(", ");
        assert.equal(await c.stopBroker(leader, "SIGTERM"), 0, `broker ${leader} exit status`);
        const stoppedAt = Date.now();

        const results = await settled;
        const failures = results.flatMap((r, i) =>
          r.status === "rejected"
            ? [`${producers[i].name}: ${(r.reason as Error)?.message ?? r.reason}`]
            : [],
        );
        assert.deepEqual(failures, [], failures.join("\n\n"));

        for (const t of Object.values(topics)) {
          const parts = await c.describe(t);
          assert.equal(parts[0].leader, next, `${t} leader after the stop\n${formatDescribe(parts)}`);
          assert.ok(!parts[0].isr.includes(leader), formatDescribe(parts));
        }

        for (const [i, p] of producers.entries()) {
          const report = (results[i] as PromiseFulfilledResult<ProducerReport>).value;
          const what = `${p.name} (acknowledged when the leader was stopped: ${acksAtStop})`;
          assert.deepEqual(report.errors, [], `${what}: delivery errors`);
          const values = Array.from({ length: N }, (_, k) => `${p.topic}-${String(k).padStart(4, "0")}`);
          const newLog = await c.partitionLog(next, p.topic, 0);
          const inNew = new Map([...newLog].map(([offset, v]) => [v, offset]));
          if (report.sent) {
            // kcat: exit status 0 and no failure line means every line was delivered (acks=all).
            const late = report.sent.filter(([, at]) => at > stoppedAt);
            assert.ok(late.length > 0, `${what}: nothing was sent after the old leader exited`);
            for (const [v] of report.sent)
              assert.ok(inNew.has(v), `${what}: ${v}, acknowledged, is not in the new leader's log`);
            continue;
          }
          assert.equal(report.acked.length, N, `${what}: ${report.acked.length} of ${N} acknowledged`);
          assert.deepEqual(
            report.acked.map(([v]) => v).sort(),
            values,
            `${what}: the acknowledged values are not the ones sent`,
          );
          const late = report.acked.filter(([, , at]) => at > stoppedAt);
          assert.ok(late.length > 0, `${what}: no acknowledgement after the old leader exited`);
          // acks=all: what the old leader acknowledged was in the whole ISR, the new leader included.
          for (const [v, offset] of report.acked) {
            assert.equal(
              newLog.get(offset),
              v,
              `${what}: ${v} acknowledged at offset ${offset} by the old or the new leader; the new leader's log has ${JSON.stringify(newLog.get(offset))} there (and ${v} at ${inNew.get(v)})`,
            );
          }
        }
      },
    );
  });
});
