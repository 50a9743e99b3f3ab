// HistoryStore on MySQL/MariaDB through the `mariadb` driver (pure JavaScript): a small pool, a
// sample written in one transaction with batched inserts. The URL is mysql://user:password@host:port/db
// (a socketPath=… query parameter connects over a Unix socket). Numbers come back as JS numbers.

import { createPool, type Pool } from "mariadb";
import type { Sample } from "./history-store.js";
import {
  INSERT_BROKER_SAMPLE,
  INSERT_GROUP_SAMPLE,
  INSERT_TOPIC_SAMPLE,
  MIGRATIONS,
  VERSION_TABLE,
} from "./migrations.js";
import { SqlHistory } from "./sql-history.js";

export class MysqlHistory extends SqlHistory {
  readonly kind = "mysql";
  readonly description: string;
  private readonly pool: Pool;

  constructor(url: string) {
    super();
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

  protected async rows(sql: string, params: readonly unknown[]): Promise<Record<string, unknown>[]> {
    return (await this.pool.query(sql, [...params])) as Record<string, unknown>[];
  }

  protected async execute(sql: string, params: readonly unknown[]): Promise<number> {
    const r = await this.pool.query(sql, [...params]);
    return Number(r.affectedRows);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
