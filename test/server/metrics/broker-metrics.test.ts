// /metrics on a real broker (harness, real sockets, real clients): kcat and KafkaJS produce, kcat
// consumes, then the scrape over HTTP must show the counters moved by the right amounts — messages in =
// records sent, bytes in = the batch bytes now in the partition's segment file (read from disk), bytes out =
// the bytes kcat fetched, a failed produce (INVALID_RECORD: keyless record on a compacted topic) counted
// as failed — request counts and latency quantiles for Produce / Fetch / FetchConsumer, the partition,
// controller and log gauges, the connection count, process metrics, and a text that passes the strict
// parser. Then the endpoint's failure modes: a port already taken (one ERROR line, broker keeps serving),
// "" (disabled), a malformed value (ConfigException).

import assert from "node:assert/strict";
import { readdirSync, statfsSync, statSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import kafkajs from "kafkajs";
import { KafkaConfig } from "../../../src/server/kafka-config.js";
import { ConfigException } from "../../../src/server/kafka-config-def.js";
import { BrokerHarness, describeResult, runCommand, waitFor } from "../../support/broker-harness.js";
import { skipUnlessInstalled } from "../../support/required-tools.js";
import { type ParsedFamily, parseExposition, sampleValue } from "./exposition-parser.js";

const KCAT = "/usr/bin/kcat";
const TOPIC = "metrics-t";
const COMPACTED = "metrics-compacted";

type Scrape = Map<string, ParsedFamily>;

async function scrape(broker: BrokerHarness): Promise<Scrape> {
  const res = await fetch(broker.metricsUrl);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  return parseExposition(await res.text());
}

/** Sum of a family's samples whose labels include `match`. */
function sum(s: Scrape, name: string, match: Record<string, string> = {}): number {
  let total = 0;
  for (const f of s.values())
    for (const x of f.samples)
      if (x.name === name && Object.entries(match).every(([k, v]) => x.labels[k] === v)) total += x.value;
  return total;
}

function value(s: Scrape, name: string, labels: Record<string, string> = {}): number {
  const v = sampleValue(s, name, labels);
  assert.ok(v !== undefined, `no sample ${name}${JSON.stringify(labels)}`);
  return v;
}

/** Bytes of the partition's segment files on disk. */
function logBytesOnDisk(logDir: string, topic: string, partition: number): number {
  const dir = join(logDir, `${topic}-${partition}`);
  return readdirSync(dir)
    .filter((f) => f.endsWith(".log"))
    .reduce((n, f) => n + statSync(join(dir, f)).size, 0);
}

describe("Prometheus /metrics on a real broker", {
  skip: skipUnlessInstalled("kcat"),
  timeout: 120_000,
}, () => {
  let broker: BrokerHarness;
  let kafka: kafkajs.Kafka;
  let admin: kafkajs.Admin;

  const kcat = async (args: string[], input?: string) => {
    const r = await runCommand(KCAT, ["-b", broker.bootstrap, ...args], { input, timeoutMs: 60_000 });
    assert.equal(r.code, 0, `${describeResult(`kcat ${args.join(" ")}`, r)}\n${broker.output}`);
    return r;
  };

  before(async () => {
    broker = await BrokerHarness.start({ name: "metrics-test" });
    kafka = new kafkajs.Kafka({
      clientId: "metrics-test",
      brokers: [broker.bootstrap],
      logLevel: kafkajs.logLevel.NOTHING,
      retry: { retries: 3, initialRetryTime: 100 },
    });
    admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      topics: [
        { topic: TOPIC, numPartitions: 3, replicationFactor: 1 },
        {
          topic: COMPACTED,
          numPartitions: 1,
          replicationFactor: 1,
          configEntries: [{ name: "cleanup.policy", value: "compact" }],
        },
      ],
      waitForLeaders: true,
      timeout: 10_000,
    });
  });

  after(async () => {
    await admin?.disconnect().catch(() => undefined);
    await broker?.close();
  });

  test("GET /metrics is the text format; other paths 404, other methods 405", async () => {
    const s = await scrape(broker);
    assert.ok(s.size > 20, `only ${s.size} families`);
    assert.equal((await fetch(`http://127.0.0.1:${broker.metricsPort}/`)).status, 404);
    assert.equal((await fetch(`http://127.0.0.1:${broker.metricsPort}/metricsx`)).status, 404);
    assert.equal((await fetch(broker.metricsUrl, { method: "POST" })).status, 405);
    assert.match(broker.stdout, /Metrics HTTP endpoint listening on http:\/\/127\.0\.0\.1:\d+\/metrics/);
  });

  test("produce then fetch: messages, bytes and requests move by exactly what was sent and read", async () => {
    const s0 = await scrape(broker);
    // kcat: 200 records to partition 0 (librdkafka batches them as it likes).
    const lines = Array.from({ length: 200 }, (_, i) => `record-${i}-${"x".repeat(i % 37)}`);
    await kcat(["-P", "-t", TOPIC, "-p", "0"], `${lines.join("\n")}\n`);
    // KafkaJS: 50 records to partition 1 in one request.
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({
      topic: TOPIC,
      messages: Array.from({ length: 50 }, (_, i) => ({ partition: 1, key: `k${i}`, value: `v${i}` })),
    });
    await producer.disconnect();

    const s1 = await scrape(broker);
    const delta = (name: string, labels: Record<string, string> = {}) =>
      (sampleValue(s1, name, labels) ?? 0) - (sampleValue(s0, name, labels) ?? 0);
    const onDisk = [0, 1, 2].map((p) => logBytesOnDisk(broker.logDir, TOPIC, p));
    assert.equal(onDisk[2], 0);
    assert.equal(delta("kafka_server_brokertopicmetrics_messagesin_total", { topic: TOPIC }), 250);
    assert.equal(delta("kafka_server_brokertopicmetrics_messagesin_total"), 250);
    assert.equal(
      delta("kafka_server_brokertopicmetrics_bytesin_total", { topic: TOPIC }),
      onDisk[0] + onDisk[1],
    );
    assert.equal(delta("kafka_server_brokertopicmetrics_bytesin_total"), onDisk[0] + onDisk[1]);
    assert.equal(delta("kafka_server_brokertopicmetrics_failedproducerequests_total", { topic: TOPIC }), 0);
    const producePartitions = delta("kafka_server_brokertopicmetrics_totalproducerequests_total", {
      topic: TOPIC,
    });
    assert.ok(producePartitions >= 2, `totalproducerequests ${producePartitions}`);
    // The log gauges agree with the disk and the records sent.
    for (const p of [0, 1, 2]) {
      const labels = { topic: TOPIC, partition: String(p) };
      assert.equal(value(s1, "kafka_log_log_size", labels), onDisk[p]);
      assert.equal(value(s1, "kafka_log_log_logendoffset", labels), [200, 50, 0][p]);
      assert.equal(value(s1, "kafka_log_log_logstartoffset", labels), 0);
      assert.equal(value(s1, "kafka_log_log_numlogsegments", labels), 1);
    }
    // Produce requests: counted per version, timed; the count of the histogram is the same requests.
    const produceRequests =
      sum(s1, "kafka_network_requestmetrics_requests_total", { request: "Produce" }) -
      sum(s0, "kafka_network_requestmetrics_requests_total", { request: "Produce" });
    assert.ok(
      produceRequests >= 2 && produceRequests <= producePartitions,
      `Produce requests ${produceRequests}`,
    );
    assert.equal(
      delta("kafka_network_requestmetrics_totaltimems_count", { request: "Produce" }),
      produceRequests,
    );
    for (const q of ["0.50", "0.75", "0.95", "0.98", "0.99", "0.999"]) {
      const v = value(s1, "kafka_network_requestmetrics_totaltimems", { request: "Produce", quantile: q });
      assert.ok(v > 0 && v < 30_000, `Produce TotalTimeMs ${q} = ${v}`);
    }
    const p99 = value(s1, "kafka_network_requestmetrics_totaltimems", {
      request: "Produce",
      quantile: "0.99",
    });
    const p50 = value(s1, "kafka_network_requestmetrics_totaltimems", {
      request: "Produce",
      quantile: "0.50",
    });
    assert.ok(p99 >= p50);
    const queue = value(s1, "kafka_network_requestmetrics_requestqueuetimems", {
      request: "Produce",
      quantile: "0.99",
    });
    assert.ok(queue <= p99, `queue ${queue} > total ${p99}`);
    assert.ok(
      sampleValue(s1, "kafka_network_requestmetrics_responsesendtimems", {
        request: "Produce",
        quantile: "0.50",
      }) !== undefined,
    );

    // kcat reads the topic from the beginning to its end: every byte of the log goes out once.
    const consumed = (await kcat(["-C", "-t", TOPIC, "-o", "beginning", "-e", "-q"])).stdout
      .trim()
      .split("\n");
    assert.equal(consumed.length, 250);
    const s2 = await scrape(broker);
    const delta2 = (name: string, labels: Record<string, string> = {}) =>
      (sampleValue(s2, name, labels) ?? 0) - (sampleValue(s1, name, labels) ?? 0);
    assert.equal(
      delta2("kafka_server_brokertopicmetrics_bytesout_total", { topic: TOPIC }),
      onDisk[0] + onDisk[1],
    );
    assert.equal(delta2("kafka_server_brokertopicmetrics_bytesout_total"), onDisk[0] + onDisk[1]);
    assert.equal(delta2("kafka_server_brokertopicmetrics_replicationbytesout_total"), 0);
    assert.ok(delta2("kafka_server_brokertopicmetrics_totalfetchrequests_total", { topic: TOPIC }) >= 3);
    assert.equal(delta2("kafka_server_brokertopicmetrics_failedfetchrequests_total"), 0);
    const fetches = sum(s2, "kafka_network_requestmetrics_requests_total", { request: "Fetch" });
    assert.ok(fetches >= 1);
    assert.equal(
      sum(s2, "kafka_network_requestmetrics_requests_total", { request: "FetchConsumer" }),
      fetches,
    );
    assert.equal(sum(s2, "kafka_network_requestmetrics_requests_total", { request: "FetchFollower" }), 0);
    assert.ok(
      value(s2, "kafka_network_requestmetrics_totaltimems", { request: "FetchConsumer", quantile: "0.99" }) >
        0,
    );
    // Metadata and ApiVersions are counted too, under Kafka's request names.
    assert.ok(sum(s2, "kafka_network_requestmetrics_requests_total", { request: "Metadata" }) >= 2);
    assert.ok(sum(s2, "kafka_network_requestmetrics_requests_total", { request: "ApiVersions" }) >= 2);
  });

  test("a keyless record on a compacted topic counts as a failed produce request", async () => {
    const s0 = await scrape(broker);
    const producer = kafka.producer({ retry: { retries: 0 } });
    await producer.connect();
    await assert.rejects(producer.send({ topic: COMPACTED, messages: [{ value: "no key" }] }));
    await producer.disconnect();
    const s1 = await scrape(broker);
    const delta = (name: string, labels: Record<string, string> = {}) =>
      (sampleValue(s1, name, labels) ?? 0) - (sampleValue(s0, name, labels) ?? 0);
    const failed = delta("kafka_server_brokertopicmetrics_failedproducerequests_total", { topic: COMPACTED });
    assert.ok(failed >= 1, `failedproducerequests ${failed}`);
    assert.equal(
      delta("kafka_server_brokertopicmetrics_totalproducerequests_total", { topic: COMPACTED }),
      failed,
    );
    assert.equal(delta("kafka_server_brokertopicmetrics_failedproducerequests_total"), failed);
    assert.equal(delta("kafka_server_brokertopicmetrics_messagesin_total", { topic: COMPACTED }), 0);
    assert.equal(delta("kafka_server_brokertopicmetrics_bytesin_total"), 0);
    // ErrorsPerSec: the partition's INVALID_RECORD in each Produce response, and no NONE among them.
    assert.equal(
      delta("kafka_network_requestmetrics_errors_total", { request: "Produce", error: "INVALID_RECORD" }),
      failed,
    );
    assert.equal(
      delta("kafka_network_requestmetrics_errors_total", { request: "Produce", error: "NONE" }),
      0,
    );
    assert.equal(s1.get("kafka_network_requestmetrics_errors_total")?.type, "counter");
    // Successful requests count NONE (the Metadata requests KafkaJS sent: one per topic and partition).
    assert.ok(
      delta("kafka_network_requestmetrics_errors_total", { request: "Metadata", error: "NONE" }) >= 1,
    );
  });

  test("partition, controller, socket-server, broker-state and process gauges", async () => {
    const s = await scrape(broker);
    assert.equal(value(s, "kafka_server_replicamanager_partitioncount"), 4);
    assert.equal(value(s, "kafka_server_replicamanager_leadercount"), 4);
    assert.equal(value(s, "kafka_server_replicamanager_underreplicatedpartitions"), 0);
    assert.equal(value(s, "kafka_server_replicamanager_offlinereplicacount"), 0);
    assert.equal(value(s, "kafka_server_replicamanager_underminisrpartitioncount"), 0);
    assert.equal(value(s, "kafka_server_replicamanager_atminisrpartitioncount"), 4);
    assert.equal(value(s, "kafka_controller_kafkacontroller_activecontrollercount"), 1);
    assert.equal(value(s, "kafka_controller_kafkacontroller_offlinepartitionscount"), 0);
    assert.equal(value(s, "kafka_controller_kafkacontroller_globaltopiccount"), 2);
    assert.equal(value(s, "kafka_controller_kafkacontroller_globalpartitioncount"), 4);
    assert.equal(value(s, "kafka_server_kafkaserver_brokerstate"), 3);
    assert.ok(value(s, "process_resident_memory_bytes") > 10 * 1024 * 1024);
    assert.ok(value(s, "process_cpu_seconds_total") > 0);
    assert.ok(value(s, "process_open_fds") > 0);
    assert.ok(Math.abs(value(s, "process_start_time_seconds") - Date.now() / 1000) < 600);
    assert.equal(s.get("process_cpu_seconds_total")?.type, "counter");
    assert.equal(s.get("kafka_server_replicamanager_partitioncount")?.type, "gauge");
    // As the exporter types them (a Prometheus summary would get its quantile values rewritten).
    assert.equal(s.get("kafka_network_requestmetrics_totaltimems")?.type, "gauge");
    assert.equal(s.get("kafka_network_requestmetrics_totaltimems_count")?.type, "counter");
    assert.equal(s.get("kafka_network_requestmetrics_totaltimems_sum")?.type, "counter");
    // kafka.cluster:type=Partition, one set per hosted partition (all led here, replication factor 1).
    const hosted = s.get("kafka_log_log_size")!.samples.map((x) => `${x.labels.topic}-${x.labels.partition}`);
    assert.equal(hosted.length, 4);
    const expected: Record<string, number> = {
      underreplicated: 0,
      insyncreplicascount: 1,
      underminisr: 0,
      atminisr: 1,
      replicascount: 1,
      laststableoffsetlag: 0,
    };
    for (const [gaugeName, v] of Object.entries(expected)) {
      const f = s.get(`kafka_cluster_partition_${gaugeName}`);
      assert.equal(f?.type, "gauge", gaugeName);
      assert.deepEqual(
        f.samples.map((x) => [`${x.labels.topic}-${x.labels.partition}`, x.value]),
        hosted.map((tp) => [tp, v]),
        gaugeName,
      );
    }

    // Three more raw connections show in connection-count, and leave it when closed. The count to add to
    // is taken once it stops moving: the broker sees the close of the previous test's producer a moment
    // after its disconnect() returns.
    const labels = { listener: "PLAINTEXT", networkProcessor: "0" };
    let previous: number | undefined;
    const base = await waitFor("connection_count settled", 5000, async () => {
      const now = value(await scrape(broker), "kafka_server_socket_server_metrics_connection_count", labels);
      const settled = now === previous;
      previous = now;
      return settled ? now : undefined;
    });
    const sockets: Socket[] = [];
    for (let i = 0; i < 3; i++) {
      const sock = connect({ host: broker.host, port: broker.port });
      await new Promise<void>((res, rej) => sock.once("connect", res).once("error", rej));
      sockets.push(sock);
    }
    await waitFor("connection_count + 3", 5000, async () =>
      value(await scrape(broker), "kafka_server_socket_server_metrics_connection_count", labels) === base + 3
        ? true
        : undefined,
    );
    for (const sock of sockets) sock.destroy();
    await waitFor("connection_count back", 5000, async () =>
      value(await scrape(broker), "kafka_server_socket_server_metrics_connection_count", labels) === base
        ? true
        : undefined,
    );
  });

  test("LastStableOffsetLag follows an open transaction (KafkaJS transactional producer), then 0 once aborted", async () => {
    const topic = "metrics-txn";
    await admin.createTopics({
      topics: [{ topic, numPartitions: 1, replicationFactor: 1 }],
      waitForLeaders: true,
      timeout: 10_000,
    });
    const lag = async () =>
      value(await scrape(broker), "kafka_cluster_partition_laststableoffsetlag", { topic, partition: "0" });
    assert.equal(await lag(), 0);
    // The first transaction creates __transaction_state (50 partitions): on a loaded machine its
    // coordinator takes longer than 3 quick retries to appear. KafkaJS looks the coordinator up with the
    // client's retry settings (the cluster's retrier), not the producer's, so this producer gets a client
    // of its own with more patience.
    const patient = new kafkajs.Kafka({
      clientId: "metrics-test-txn",
      brokers: [broker.bootstrap],
      logLevel: kafkajs.logLevel.NOTHING,
      retry: { retries: 8, initialRetryTime: 300 },
    });
    const producer = patient.producer({
      transactionalId: "metrics-txn-producer",
      maxInFlightRequests: 1,
      idempotent: true,
      retry: { retries: 8, initialRetryTime: 300 },
    });
    await producer.connect();
    try {
      const txn = await producer.transaction();
      await txn.send({ topic, messages: [{ value: "a" }, { value: "b" }, { value: "c" }] });
      // The high watermark moved past the three records; the last stable offset stays before them.
      assert.equal(await lag(), 3);
      await txn.abort();
      await waitFor("the lag back to 0 after the abort marker", 5000, async () => (await lag()) === 0);
    } finally {
      await producer.disconnect();
    }
  });

  test("the runtime's pauses: nodejs_gc_* counters by gctype and nodejs_eventloop_lag_* gauges", async () => {
    const s0 = await scrape(broker);
    const startedAt = Date.now();
    // 40 MB through the broker (kcat, 40,000 records of 1,000 bytes): beyond the 32 MiB of fresh socket-read
    // buffers after which V8 runs a scavenge whatever its heap looks like.
    const line = "g".repeat(1000);
    await kcat(["-P", "-t", TOPIC, "-p", "2"], `${Array.from({ length: 40_000 }, () => line).join("\n")}\n`);
    const s1 = await scrape(broker);
    const elapsedSeconds = (Date.now() - startedAt) / 1000;
    for (const gctype of ["Scavenge", "MarkSweepCompact", "IncrementalMarking", "ProcessWeakCallbacks"]) {
      assert.ok(
        value(s1, "nodejs_gc_runs_total", { gctype }) >= value(s0, "nodejs_gc_runs_total", { gctype }),
      );
    }
    const runs =
      value(s1, "nodejs_gc_runs_total", { gctype: "Scavenge" }) -
      value(s0, "nodejs_gc_runs_total", { gctype: "Scavenge" });
    const pause =
      value(s1, "nodejs_gc_pause_seconds_total", { gctype: "Scavenge" }) -
      value(s0, "nodejs_gc_pause_seconds_total", { gctype: "Scavenge" });
    assert.ok(runs >= 1, `${runs} scavenges while 40 MB went through`);
    assert.ok(pause > 0 && pause < elapsedSeconds, `${pause} s of scavenges in ${elapsedSeconds} s`);
    assert.equal(s1.get("nodejs_gc_runs_total")?.type, "counter");
    assert.equal(s1.get("nodejs_gc_pause_seconds_total")?.type, "counter");
    // The loop delay since the previous scrape: a 10 ms timer's period, plus whatever held the loop up.
    const lag = (q: string) => value(s1, `nodejs_eventloop_lag_${q}_seconds`);
    assert.ok(lag("min") >= 0.005 && lag("min") <= lag("p50"), `min ${lag("min")}, p50 ${lag("p50")}`);
    assert.ok(lag("p50") <= lag("p90") && lag("p90") <= lag("p99") && lag("p99") <= lag("max"));
    assert.ok(lag("mean") >= lag("min") && lag("mean") <= lag("max") && lag("stddev") >= 0);
    assert.ok(lag("max") < elapsedSeconds + 1, `max ${lag("max")} s`);
    assert.equal(s1.get("nodejs_eventloop_lag_p99_seconds")?.type, "gauge");
  });

  test("idle fractions (event loop utilization) and linux-disk bytes move with 40 MB of produce", async () => {
    const idle = (s: Scrape) => value(s, "kafka_network_socketserver_networkprocessoravgidle_percent");
    await scrape(broker);
    await new Promise((r) => setTimeout(r, 1000));
    const quiet = await scrape(broker);
    const line = "d".repeat(1000);
    await kcat(["-P", "-t", TOPIC, "-p", "1"], `${Array.from({ length: 40_000 }, () => line).join("\n")}\n`);
    const busy = await scrape(broker);
    // A second with nothing to do is mostly idle; taking 40 MB is less so.
    assert.ok(idle(quiet) > 0.5 && idle(quiet) <= 1, `idle over a quiet second: ${idle(quiet)}`);
    assert.ok(idle(busy) < idle(quiet), `idle while taking 40 MB ${idle(busy)} vs quiet ${idle(quiet)}`);
    const sinceStart = value(busy, "kafka_server_kafkarequesthandlerpool_requesthandleravgidle_percent");
    assert.ok(sinceStart > 0 && sinceStart < 1, `request handler idle since start ${sinceStart}`);
    assert.equal(busy.get("kafka_network_socketserver_networkprocessoravgidle_percent")?.type, "gauge");
    // write_bytes counts the page-cache pages the broker dirtied: the 40 MB appended (not on tmpfs,
    // where nothing goes to storage).
    const written =
      value(busy, "kafka_server_kafkaserver_linux_disk_write_bytes") -
      value(quiet, "kafka_server_kafkaserver_linux_disk_write_bytes");
    const TMPFS_MAGIC = 0x01021994;
    if (statfsSync(broker.logDir).type !== TMPFS_MAGIC) {
      assert.ok(written >= 20_000_000, `linux-disk-write-bytes grew by ${written} for 40 MB appended`);
    }
    assert.ok(value(busy, "kafka_server_kafkaserver_linux_disk_read_bytes") >= 0);
  });
});

describe("metrics.http.listener", { timeout: 60_000 }, () => {
  test('default http://0.0.0.0:9404; "" disables; a malformed value is a ConfigException', () => {
    assert.deepEqual(new KafkaConfig({}).metricsHttpListener, { host: "0.0.0.0", port: 9404 });
    assert.equal(new KafkaConfig({ "metrics.http.listener": "" }).metricsHttpListener, null);
    assert.deepEqual(new KafkaConfig({ "metrics.http.listener": "http://[::1]:0" }).metricsHttpListener, {
      host: "::1",
      port: 0,
    });
    for (const bad of ["9404", "https://localhost:9404", "http://localhost", "http://h:70000"]) {
      assert.throws(
        () => new KafkaConfig({ "metrics.http.listener": bad }),
        (e: unknown) =>
          e instanceof ConfigException &&
          e.message ===
            `Invalid value ${bad} for configuration metrics.http.listener: expected an http://host:port URL (port 0-65535), or empty to disable`,
      );
    }
  });

  test("a port already taken: one ERROR line, the broker serves without metrics", async () => {
    const blocker: Server = createServer();
    await new Promise<void>((res) => blocker.listen(0, "127.0.0.1", () => res()));
    const port = (blocker.address() as { port: number }).port;
    const broker = await BrokerHarness.start({
      name: "metrics-bind-fail",
      overrides: { "metrics.http.listener": `http://127.0.0.1:${port}` },
    });
    try {
      assert.equal(broker.metricsPort, undefined);
      const lines = broker.errorLines.filter((l) => /Metrics HTTP endpoint/.test(l));
      assert.equal(lines.length, 1, broker.output);
      assert.match(lines[0], new RegExp(`failed to bind to 127\\.0\\.0\\.1:${port}: Address already in use`));
      assert.equal(broker.errorLines.length, 1, broker.errorLines.join("\n"));
      // The harness saw the broker answer ApiVersions; it still serves.
      assert.ok(broker.isRunning);
    } finally {
      await broker.close();
      blocker.close();
    }
  });

  test('"" disables the endpoint: no line, no port', async () => {
    const broker = await BrokerHarness.start({
      name: "metrics-disabled",
      overrides: { "metrics.http.listener": "" },
    });
    try {
      assert.equal(broker.metricsPort, undefined);
      assert.doesNotMatch(broker.stdout + broker.stderr, /Metrics HTTP endpoint/);
      assert.equal(broker.errorLines.length, 0);
    } finally {
      await broker.close();
    }
  });
});
