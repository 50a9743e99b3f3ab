// HistoryStore on MySQL/MariaDB through the `mariadb` driver (pure JavaScript): a small pool, a
// sample written in one transaction with batched inserts. The URL is mysql://user:password@host:port/db
// (a socketPath=… query parameter connects over a Unix socket). Numbers come back as JS numbers.

import { createPool, type Pool } from "mariadb";
import type {
  AlertEventRow,
  AuditEntry,
  BrokerPoint,
  HistoryStore,
  LagPoint,
  Sample,
  TopicPoint,
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

export class MysqlHistory implements HistoryStore {
  readonly kind = "mysql";
  readonly description: string;
  private readonly pool: Pool;

  constructor(url: string) {
    const u = new URL(url);
    const socketPath = u.searchParams.get("socketPath") ?? undefined;
    this.description = `mysql://${u.host}${u.pathname}`;
    this.pool = createPool({
      host: u.hostname,
      port: u.port ? Number(u.port) : 3306,
      user: decodeURIComponent(u.username || "root"),
      password: decodeURIComponent(u.password),
      database: decodeURIComponent(u.pathname.slice(1)),
      socketPath,
      connectionLimit: 2,
      connectTimeout: 5_000,
      bigIntAsNumber: true,
      decimalAsNumber: true,
      insertIdAsNumber: true,
    });
  }

  async schemaVersion(): Promise<number> {
    await this.pool.query(VERSION_TABLE);
    const rows = await this.pool.query("SELECT MAX(version) AS v FROM console_schema_version");
    return rows[0]?.v == null ? 0 : Number(rows[0].v);
  }

  async migrate(): Promise<number> {
    let version = await this.schemaVersion();
    for (const m of MIGRATIONS) {
      if (m.version <= version) continue;
      // DDL commits implicitly in MySQL: the version row is written after the last statement succeeds.
      for (const sql of m.statements("mysql")) await this.pool.query(sql);
      await this.pool.query("INSERT INTO console_schema_version (version) VALUES (?)", [m.version]);
      version = m.version;
    }
    return version;
  }

  async record(sample: Sample): Promise<void> {
    const conn = await this.pool.getConnection();
    try {
      await conn.beginTransaction();
      if (sample.groups.length > 0)
        await conn.batch(
          INSERT_GROUP_SAMPLE,
          sample.groups.map((s) => [
            sample.cluster,
            sample.ts,
            s.group,
            s.topic,
            s.partition,
            s.committedOffset,
            s.logEndOffset,
            s.lag,
            s.lagMs,
          ]),
        );
      if (sample.topics.length > 0)
        await conn.batch(
          INSERT_TOPIC_SAMPLE,
          sample.topics.map((s) => [sample.cluster, sample.ts, s.topic, s.logSize, s.endOffsetSum]),
        );
      const brokers = sample.brokers ?? [];
      if (brokers.length > 0)
        await conn.batch(
          INSERT_BROKER_SAMPLE,
          brokers.map((b) => [
            sample.cluster,
            sample.ts,
            b.brokerId,
            b.messagesIn,
            b.bytesIn,
            b.bytesOut,
            b.requests,
          ]),
        );
      await conn.commit();
    } catch (e) {
      await conn.rollback().catch(() => {});
      throw e;
    } finally {
      await conn.release();
    }
  }

  async groupLag(cluster: string, group: string, sinceTs: number): Promise<LagPoint[]> {
    const rows = (await this.pool.query(GROUP_LAG_QUERY, [cluster, group, sinceTs])) as Array<{
      ts: number;
      lag: number;
      lag_ms: number | null;
      known: number;
    }>;
    return rows.map((r) => ({
      ts: Number(r.ts),
      lag: Number(r.lag),
      lagMs: Number(r.known) > 0 ? Number(r.lag_ms) : null,
    }));
  }

  async partitionLag(
    cluster: string,
    group: string,
    topic: string,
    partition: number,
    sinceTs: number,
  ): Promise<LagPoint[]> {
    const rows = (await this.pool.query(PARTITION_LAG_QUERY, [
      cluster,
      group,
      topic,
      partition,
      sinceTs,
    ])) as Array<{ ts: number; lag: number; lag_ms: number | null }>;
    return rows.map((r) => ({
      ts: Number(r.ts),
      lag: Number(r.lag),
      lagMs: r.lag_ms === null ? null : Number(r.lag_ms),
    }));
  }

  async topicSizes(cluster: string, topic: string, sinceTs: number): Promise<TopicPoint[]> {
    const rows = (await this.pool.query(TOPIC_SIZES_QUERY, [cluster, topic, sinceTs])) as Array<{
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
    await this.pool.query(INSERT_AUDIT, [e.ts, e.user, e.cluster, e.action, e.target, e.details, e.outcome]);
  }

  async auditLog(limit: number): Promise<AuditEntry[]> {
    const rows = (await this.pool.query(AUDIT_QUERY, [limit])) as Array<{
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
    await this.pool.query(INSERT_ALERT_EVENT, [
      e.ts,
      e.rule,
      e.type,
      e.cluster,
      e.subject,
      e.state,
      e.value,
      e.threshold,
      e.message,
      e.delivery,
    ]);
  }

  async alertEvents(limit: number): Promise<AlertEventRow[]> {
    const rows = (await this.pool.query(ALERT_EVENTS_QUERY, [limit])) as AlertEventRow[];
    return rows.map((r) => ({
      ...r,
      ts: Number(r.ts),
      value: Number(r.value),
      threshold: Number(r.threshold),
    }));
  }

  async brokerSamples(cluster: string, sinceTs: number): Promise<BrokerPoint[]> {
    const rows = (await this.pool.query(BROKER_SAMPLES_QUERY, [cluster, sinceTs])) as Array<{
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
    const a = await this.pool.query("DELETE FROM group_partition_samples WHERE ts < ?", [beforeTs]);
    const b = await this.pool.query("DELETE FROM topic_samples WHERE ts < ?", [beforeTs]);
    const c = await this.pool.query("DELETE FROM broker_samples WHERE ts < ?", [beforeTs]);
    return Number(a.affectedRows) + Number(b.affectedRows) + Number(c.affectedRows);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
