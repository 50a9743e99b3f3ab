// The history store and the collector, against SQLite and against a real MariaDB server (skipped with a
// reason when mariadb-server is not installed): migrations bring a new database to the current schema
// version and are idempotent on reopen, and a version-1 file is upgraded keeping its rows; the collector, sampling a real broker every 300 ms, writes one
// point per sample with exactly the group's known lag (in total and per partition) and a lag in ms of
// about the records' age, the topic's size and the broker's /metrics counters per sample;
// the audit log and the alert history return entries newest first; retention purges only samples older than the cut; a
// database that cannot be reached is one line.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import Database from "better-sqlite3";
import { AdminClient } from "../../src/client/admin/admin-client.js";
import { GroupAdmin } from "../../src/client/admin/group-admin.js";
import { KafkaProducer } from "../../src/client/producer/kafka-producer.js";
import { Collector } from "../../src/console/collector/collector.js";
import { ConfigError } from "../../src/console/console-config.js";
import type { HistoryStore } from "../../src/console/history/history-store.js";
import { CURRENT_VERSION, MIGRATIONS, VERSION_TABLE } from "../../src/console/history/migrations.js";
import { openHistory } from "../../src/console/history/open-history.js";
import { BrokerHarness, waitFor } from "../support/broker-harness.js";
import { createDatabase, ensureMariadb, mariadbSkip, stopMariadbIfStarted } from "./mariadb-fixture.js";

const TOPIC = "events";
const GROUP = "reporting";
const AGE_MS = 600_000;
const END = [8, 5];
const COMMITTED = [2, 0];
const LAG = END[0] - COMMITTED[0] + END[1] - COMMITTED[1];

let broker: BrokerHarness;
let dir: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "console-history-"));
  broker = await BrokerHarness.start({ name: "console-history" });
  const admin = new AdminClient({ bootstrapServers: broker.bootstrap });
  try {
    await admin.createTopics([{ name: TOPIC, numPartitions: 2, replicationFactor: 1 }]);
    const producer = new KafkaProducer({ "bootstrap.servers": broker.bootstrap, "linger.ms": "0" });
    const ts = Date.now() - AGE_MS;
    for (const [partition, n] of END.entries())
      for (let i = 0; i < n; i++)
        await producer.send({ topic: TOPIC, partition, value: `r${i}`, timestamp: ts });
    await producer.close();
    await new GroupAdmin(admin.cluster).alterConsumerGroupOffsets(
      GROUP,
      COMMITTED.map((offset, partition) => ({ topic: TOPIC, partition, offset: BigInt(offset) })),
    );
  } finally {
    await admin.close();
  }
});

after(async () => {
  await broker?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function historyTests(name: string, url: () => Promise<string>): void {
  let store: HistoryStore;
  let historyUrl: string;

  before(async () => {
    historyUrl = await url();
    store = await openHistory(historyUrl);
  });
  after(async () => {
    await store?.close();
  });

  test(`${name}: migrations reach the current version and reopening changes nothing`, async () => {
    assert.equal(await store.schemaVersion(), CURRENT_VERSION);
    const again = await openHistory(historyUrl);
    try {
      assert.equal(await again.schemaVersion(), CURRENT_VERSION);
    } finally {
      await again.close();
    }
  });

  test(`${name}: the collector writes one point per sample with the known lag`, async () => {
    const alias = `c-${name}`;
    const collector = new Collector({
      clusters: [{ alias, bootstrapServers: broker.bootstrap, metricsUrls: { 0: broker.metricsUrl } }],
      intervalMs: 300,
      retentionDays: 7,
      history: store,
    });
    collector.start();
    const started = Date.now();
    try {
      await waitFor("4 samples", 30_000, async () =>
        (collector.clusters.get(alias)?.samples ?? 0) >= 4 ? true : undefined,
      );
    } finally {
      await collector.close();
    }
    const samples = collector.clusters.get(alias)!.samples;
    const points = await store.groupLag(alias, GROUP, 0);
    assert.equal(points.length, samples, "one point per sample");
    for (const p of points) {
      assert.equal(p.lag, LAG);
      assert.ok(p.lagMs !== null && p.lagMs >= AGE_MS && p.lagMs < AGE_MS + 120_000, `lag ms ${p.lagMs}`);
      assert.ok(p.ts >= started - 1000);
    }
    assert.ok(
      points.every((p, i) => i === 0 || p.ts > points[i - 1].ts),
      "points in time order",
    );
    for (const [partition, end] of END.entries()) {
      const series = await store.partitionLag(alias, GROUP, TOPIC, partition, 0);
      assert.deepEqual(
        series.map((p) => p.ts),
        points.map((p) => p.ts),
        `partition ${partition}: a point per sample`,
      );
      assert.ok(
        series.every((p) => p.lag === end - COMMITTED[partition]),
        `partition ${partition} lag`,
      );
    }
    // The rows of two sample times, per partition (the group page's like-with-like trend).
    const ends = [points[0].ts, points[points.length - 1].ts];
    assert.deepEqual(
      await store.groupLagByPartition(alias, GROUP, ends),
      ends.flatMap((ts) =>
        END.map((end, partition) => ({ ts, topic: TOPIC, partition, lag: end - COMMITTED[partition] })),
      ),
    );
    const counters = await store.brokerSamples(alias, 0);
    assert.equal(counters.length, samples, "broker 0's counters once per sample");
    // The records produced, and the two committed offsets appended to __consumer_offsets (all-topics
    // MessagesInPerSec counts internal appends too, as Kafka's does).
    const messagesIn = END[0] + END[1] + COMMITTED.length;
    assert.ok(
      counters.every((c) => c.brokerId === 0 && c.messagesIn === messagesIn),
      JSON.stringify(counters[0]),
    );
    assert.ok(counters.every((c) => (c.bytesIn ?? 0) > 0 && (c.requests ?? 0) > 0));
    assert.ok(
      counters[counters.length - 1].requests! > counters[0].requests!,
      "requests grow between samples",
    );
    const sizes = await store.topicSizes(alias, TOPIC, 0);
    assert.equal(sizes.length, samples);
    assert.ok(sizes.every((s) => s.logSize === END[0] + END[1] && s.endOffsetSum === END[0] + END[1]));
  });

  test(`${name}: the audit log keeps every entry, newest first`, async () => {
    const ts = Date.now();
    const entry = {
      ts,
      user: "alice",
      cluster: "c",
      target: "topic t",
      details: '{"name":"t"}',
      outcome: "ok",
    };
    for (const action of ["create-topic", "add-partitions", "delete-topic"])
      await store.audit({ ...entry, action });
    const log = await store.auditLog(2);
    assert.deepEqual(
      log.map((e) => e.action),
      ["delete-topic", "add-partitions"],
    );
    assert.deepEqual(log[0], { ...entry, action: "delete-topic" });
  });

  test(`${name}: alert events are kept, newest first`, async () => {
    const e = {
      ts: Date.now(),
      rule: "lag",
      type: "group-lag",
      cluster: "c",
      subject: "group g",
      state: "firing",
      value: 11,
      threshold: 5.5,
      message: "group g lags 11 messages",
      delivery: "ok",
    };
    await store.alertEvent(e);
    await store.alertEvent({ ...e, state: "resolved", delivery: "HTTP 500" });
    assert.deepEqual(await store.alertEvents(5), [{ ...e, state: "resolved", delivery: "HTTP 500" }, e]);
  });

  test(`${name}: retention purges only the samples older than the cut`, async () => {
    const alias = `retention-${name}`;
    const now = Date.now();
    const old = now - 10 * 86_400_000;
    const row = {
      group: GROUP,
      topic: TOPIC,
      partition: 0,
      committedOffset: 1,
      logEndOffset: 4,
      lag: 3,
      lagMs: 1000,
    };
    await store.record({
      cluster: alias,
      ts: old,
      groups: [row, { ...row, partition: 1 }],
      topics: [{ topic: TOPIC, logSize: 4, endOffsetSum: 4 }],
    });
    await store.record({ cluster: alias, ts: now, groups: [row], topics: [] });
    assert.equal((await store.groupLag(alias, GROUP, 0)).length, 2);
    assert.equal(await store.purge(now - 7 * 86_400_000), 3, "two partition rows and one topic row");
    assert.deepEqual(await store.groupLag(alias, GROUP, 0), [{ ts: now, lag: 3, lagMs: 1000 }]);
  });
}

describe("SQLite history", () => {
  historyTests("sqlite", async () => `sqlite:${join(dir, "history.db")}`);
});

describe("MariaDB history", { skip: mariadbSkip }, () => {
  let drop: (() => Promise<void>) | undefined;
  historyTests("mariadb", async () => {
    await ensureMariadb();
    const db = await createDatabase("tributary_console_history_test");
    drop = db.drop;
    return db.url;
  });
  after(async () => {
    await drop?.();
    await stopMariadbIfStarted();
  });
});

test("a history database that cannot be reached is one line naming it", async () => {
  await assert.rejects(openHistory("mysql://nobody:secret@127.0.0.1:1/history"), (e: Error) => {
    assert.ok(e instanceof ConfigError);
    assert.match(e.message, /^console\.history\.url: mysql:\/\/127\.0\.0\.1:1\/history: /);
    assert.doesNotMatch(e.message, /secret|\n/);
    return true;
  });
});

test("a version-1 SQLite history is migrated to the current version and keeps its rows", async () => {
  const file = join(dir, "v1.db");
  const db = new Database(file);
  db.exec(VERSION_TABLE);
  for (const sql of MIGRATIONS[0].statements("sqlite")) db.exec(sql);
  db.prepare("INSERT INTO console_schema_version (version) VALUES (1)").run();
  db.prepare(
    "INSERT INTO group_partition_samples (cluster, ts, group_id, topic, partition_id, committed_offset, log_end_offset, lag, lag_ms) VALUES ('c', 5, 'g', 't', 0, 1, 3, 2, NULL)",
  ).run();
  db.close();
  const store = await openHistory(`sqlite:${file}`);
  try {
    assert.equal(await store.schemaVersion(), CURRENT_VERSION);
    assert.ok(CURRENT_VERSION >= 2);
    assert.deepEqual(await store.groupLag("c", "g", 0), [{ ts: 5, lag: 2, lagMs: null }]);
    await store.audit({
      ts: 6,
      user: "u",
      cluster: "c",
      action: "a",
      target: "t",
      details: "{}",
      outcome: "ok",
    });
    assert.equal((await store.auditLog(10)).length, 1);
  } finally {
    await store.close();
  }
});
