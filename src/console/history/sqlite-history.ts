// HistoryStore on SQLite (better-sqlite3): one file beside the console's config, WAL mode, a sample
// written in one transaction. The driver is synchronous; a sample is a few hundred small rows, so the
// event loop is held for well under a millisecond per group.

import Database from "better-sqlite3";
import type { GroupPartitionSample, Sample, TopicSample } from "./history-store.js";
import {
  INSERT_BROKER_SAMPLE,
  INSERT_GROUP_SAMPLE,
  INSERT_TOPIC_SAMPLE,
  MIGRATIONS,
  VERSION_TABLE,
} from "./migrations.js";
import { SqlHistory } from "./sql-history.js";

export class SqliteHistory extends SqlHistory {
  readonly kind = "sqlite";
  private readonly db: Database.Database;

  constructor(readonly file: string) {
    super();
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

  protected async rows(sql: string, params: readonly unknown[]): Promise<Record<string, unknown>[]> {
    return this.db.prepare(sql).all(...params) as Record<string, unknown>[];
  }

  protected async execute(sql: string, params: readonly unknown[]): Promise<number> {
    return this.db.prepare(sql).run(...params).changes;
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
