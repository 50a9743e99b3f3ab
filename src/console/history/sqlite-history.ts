// HistoryStore on SQLite (better-sqlite3): one file beside the console's config, WAL mode, a sample
// written in one transaction. The driver is synchronous; a sample is a few hundred small rows, so the
// event loop is held for well under a millisecond per group.

import Database from "better-sqlite3";
import type {
  AlertEventRow,
  AuditEntry,
  BrokerPoint,
  GroupPartitionSample,
  HistoryStore,
  LagPoint,
  Sample,
  TopicPoint,
  TopicSample,
} from "./history-store.js";
import {
  ALERT_EVENTS_QUERY,
  AUDIT_QUERY,
  BROKER_SAMPLES_QUERY,
  GROUP_LAG_QUERY,
  INSERT_ALERT_EVENT,
  INSERT_AUDIT,
  INSERT_BROKER_SAMPLE,
  INSERT_GROUP_SAMPLE,
  INSERT_TOPIC_SAMPLE,
  MIGRATIONS,
  PARTITION_LAG_QUERY,
  TOPIC_SIZES_QUERY,
  VERSION_TABLE,
} from "./migrations.js";

export class SqliteHistory implements HistoryStore {
  readonly kind = "sqlite";
  private readonly db: Database.Database;

  constructor(readonly file: string) {
    this.db = new Database(file);
    if (file !== ":memory:") this.db.pragma("journal_mode = WAL");
  }

  get description(): string {
    return `sqlite:${this.file}`;
  }

  async schemaVersion(): Promise<number> {
    this.db.exec(VERSION_TABLE);
    const row = this.db.prepare("SELECT MAX(version) AS v FROM console_schema_version").get() as {
      v: number | null;
    };
    return row.v ?? 0;
  }

  async migrate(): Promise<number> {
    let version = await this.schemaVersion();
    for (const m of MIGRATIONS) {
      if (m.version <= version) continue;
      this.db.transaction(() => {
        for (const sql of m.statements("sqlite")) this.db.exec(sql);
        this.db.prepare("INSERT INTO console_schema_version (version) VALUES (?)").run(m.version);
      })();
      version = m.version;
    }
    return version;
  }

  async record(sample: Sample): Promise<void> {
    const g = this.db.prepare(INSERT_GROUP_SAMPLE);
    const t = this.db.prepare(INSERT_TOPIC_SAMPLE);
    const bs = this.db.prepare(INSERT_BROKER_SAMPLE);
    this.db.transaction(() => {
      for (const s of sample.groups as GroupPartitionSample[])
        g.run(
          sample.cluster,
          sample.ts,
          s.group,
          s.topic,
          s.partition,
          s.committedOffset,
          s.logEndOffset,
          s.lag,
          s.lagMs,
        );
      for (const b of sample.brokers ?? [])
        bs.run(sample.cluster, sample.ts, b.brokerId, b.messagesIn, b.bytesIn, b.bytesOut, b.requests);
      for (const s of sample.topics as TopicSample[])
        t.run(sample.cluster, sample.ts, s.topic, s.logSize, s.endOffsetSum);
    })();
  }

  async groupLag(cluster: string, group: string, sinceTs: number): Promise<LagPoint[]> {
    const rows = this.db.prepare(GROUP_LAG_QUERY).all(cluster, group, sinceTs) as Array<{
      ts: number;
      lag: number;
      lag_ms: number | null;
      known: number;
    }>;
    return rows.map((r) => ({
      ts: Number(r.ts),
      lag: Number(r.lag),
      lagMs: r.known > 0 ? Number(r.lag_ms) : null,
    }));
  }

  async partitionLag(
    cluster: string,
    group: string,
    topic: string,
    partition: number,
    sinceTs: number,
  ): Promise<LagPoint[]> {
    const rows = this.db
      .prepare(PARTITION_LAG_QUERY)
      .all(cluster, group, topic, partition, sinceTs) as Array<{
      ts: number;
      lag: number;
      lag_ms: number | null;
    }>;
    return rows.map((r) => ({
      ts: Number(r.ts),
      lag: Number(r.lag),
      lagMs: r.lag_ms === null ? null : Number(r.lag_ms),
    }));
  }

  async topicSizes(cluster: string, topic: string, sinceTs: number): Promise<TopicPoint[]> {
    const rows = this.db.prepare(TOPIC_SIZES_QUERY).all(cluster, topic, sinceTs) as Array<{
      ts: number;
      log_size: number;
      end_offset_sum: number;
    }>;
    return rows.map((r) => ({
      ts: Number(r.ts),
      logSize: Number(r.log_size),
      endOffsetSum: Number(r.end_offset_sum),
    }));
  }

  async audit(e: AuditEntry): Promise<void> {
    this.db.prepare(INSERT_AUDIT).run(e.ts, e.user, e.cluster, e.action, e.target, e.details, e.outcome);
  }

  async auditLog(limit: number): Promise<AuditEntry[]> {
    const rows = this.db.prepare(AUDIT_QUERY).all(limit) as Array<{
      ts: number;
      username: string;
      cluster: string;
      action: string;
      target: string;
      details: string;
      outcome: string;
    }>;
    return rows.map((r) => ({
      ts: Number(r.ts),
      user: r.username,
      cluster: r.cluster,
      action: r.action,
      target: r.target,
      details: r.details,
      outcome: r.outcome,
    }));
  }

  async alertEvent(e: AlertEventRow): Promise<void> {
    this.db
      .prepare(INSERT_ALERT_EVENT)
      .run(e.ts, e.rule, e.type, e.cluster, e.subject, e.state, e.value, e.threshold, e.message, e.delivery);
  }

  async alertEvents(limit: number): Promise<AlertEventRow[]> {
    const rows = this.db.prepare(ALERT_EVENTS_QUERY).all(limit) as AlertEventRow[];
    return rows.map((r) => ({
      ...r,
      ts: Number(r.ts),
      value: Number(r.value),
      threshold: Number(r.threshold),
    }));
  }

  async brokerSamples(cluster: string, sinceTs: number): Promise<BrokerPoint[]> {
    const rows = this.db.prepare(BROKER_SAMPLES_QUERY).all(cluster, sinceTs) as Array<{
      ts: number;
      broker_id: number;
      messages_in: number | null;
      bytes_in: number | null;
      bytes_out: number | null;
      requests: number | null;
    }>;
    const n = (v: number | null): number | null => (v === null ? null : Number(v));
    return rows.map((r) => ({
      ts: Number(r.ts),
      brokerId: Number(r.broker_id),
      messagesIn: n(r.messages_in),
      bytesIn: n(r.bytes_in),
      bytesOut: n(r.bytes_out),
      requests: n(r.requests),
    }));
  }

  async purge(beforeTs: number): Promise<number> {
    const a = this.db.prepare("DELETE FROM group_partition_samples WHERE ts < ?").run(beforeTs).changes;
    const b = this.db.prepare("DELETE FROM topic_samples WHERE ts < ?").run(beforeTs).changes;
    const c = this.db.prepare("DELETE FROM broker_samples WHERE ts < ?").run(beforeTs).changes;
    return a + b + c;
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
