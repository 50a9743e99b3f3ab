// SqlHistory: what the SQLite and MySQL/MariaDB history stores share — every read query and its mapping
// from rows to points, the audit and alert inserts and the retention purge — over two primitives a
// driver supplies: `rows` (a SELECT's rows) and `execute` (a statement's affected-row count). The
// subclasses keep what differs between the drivers: connecting, migrations (DDL is transactional in
// SQLite, commits implicitly in MySQL) and writing a sample in one transaction.

import type {
  AlertEventRow,
  AuditEntry,
  BrokerPoint,
  HistoryStore,
  LagPoint,
  PartitionLagRow,
  Sample,
  TopicPoint,
} from "./history-store.js";
import {
  ALERT_EVENTS_QUERY,
  AUDIT_QUERY,
  BROKER_SAMPLES_QUERY,
  GROUP_LAG_BY_PARTITION_QUERY,
  GROUP_LAG_QUERY,
  INSERT_ALERT_EVENT,
  INSERT_AUDIT,
  PARTITION_LAG_QUERY,
  TOPIC_SIZES_QUERY,
} from "./migrations.js";

type Row = Record<string, unknown>;

const num = (v: unknown): number => Number(v);
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** The sample tables retention purges. */
const SAMPLE_TABLES = ["group_partition_samples", "topic_samples", "broker_samples"];

export abstract class SqlHistory implements HistoryStore {
  abstract readonly kind: "sqlite" | "mysql";
  abstract readonly description: string;
  abstract migrate(): Promise<number>;
  abstract schemaVersion(): Promise<number>;
  abstract record(sample: Sample): Promise<void>;
  abstract close(): Promise<void>;
  /** The rows of a SELECT with `?` parameters. */
  protected abstract rows(sql: string, params: readonly unknown[]): Promise<Row[]>;
  /** Runs a statement with `?` parameters; returns how many rows it changed. */
  protected abstract execute(sql: string, params: readonly unknown[]): Promise<number>;

  async groupLag(cluster: string, group: string, sinceTs: number): Promise<LagPoint[]> {
    return (await this.rows(GROUP_LAG_QUERY, [cluster, group, sinceTs])).map((r) => ({
      ts: num(r.ts),
      lag: num(r.lag),
      lagMs: num(r.known) > 0 ? num(r.lag_ms) : null,
    }));
  }

  async partitionLag(
    cluster: string,
    group: string,
    topic: string,
    partition: number,
    sinceTs: number,
  ): Promise<LagPoint[]> {
    return (await this.rows(PARTITION_LAG_QUERY, [cluster, group, topic, partition, sinceTs])).map((r) => ({
      ts: num(r.ts),
      lag: num(r.lag),
      lagMs: numOrNull(r.lag_ms),
    }));
  }

  async groupLagByPartition(
    cluster: string,
    group: string,
    times: readonly number[],
  ): Promise<PartitionLagRow[]> {
    const out: PartitionLagRow[] = [];
    for (let i = 0; i < times.length; i += 2) {
      const pair = [times[i], times[i + 1] ?? times[i]];
      const rows = await this.rows(GROUP_LAG_BY_PARTITION_QUERY, [cluster, group, ...pair]);
      for (const r of rows)
        out.push({ ts: num(r.ts), topic: String(r.topic), partition: num(r.partition_id), lag: num(r.lag) });
    }
    return out;
  }

  async topicSizes(cluster: string, topic: string, sinceTs: number): Promise<TopicPoint[]> {
    return (await this.rows(TOPIC_SIZES_QUERY, [cluster, topic, sinceTs])).map((r) => ({
      ts: num(r.ts),
      logSize: num(r.log_size),
      endOffsetSum: num(r.end_offset_sum),
    }));
  }

  async audit(e: AuditEntry): Promise<void> {
    await this.execute(INSERT_AUDIT, [e.ts, e.user, e.cluster, e.action, e.target, e.details, e.outcome]);
  }

  async auditLog(limit: number): Promise<AuditEntry[]> {
    return (await this.rows(AUDIT_QUERY, [limit])).map((r) => ({
      ts: num(r.ts),
      user: String(r.username),
      cluster: String(r.cluster),
      action: String(r.action),
      target: String(r.target),
      details: String(r.details),
      outcome: String(r.outcome),
    }));
  }

  async alertEvent(e: AlertEventRow): Promise<void> {
    await this.execute(INSERT_ALERT_EVENT, [
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
    return (await this.rows(ALERT_EVENTS_QUERY, [limit])).map((r) => ({
      ...(r as unknown as AlertEventRow),
      ts: num(r.ts),
      value: num(r.value),
      threshold: num(r.threshold),
    }));
  }

  async brokerSamples(cluster: string, sinceTs: number): Promise<BrokerPoint[]> {
    return (await this.rows(BROKER_SAMPLES_QUERY, [cluster, sinceTs])).map((r) => ({
      ts: num(r.ts),
      brokerId: num(r.broker_id),
      messagesIn: numOrNull(r.messages_in),
      bytesIn: numOrNull(r.bytes_in),
      bytesOut: numOrNull(r.bytes_out),
      requests: numOrNull(r.requests),
    }));
  }

  async purge(beforeTs: number): Promise<number> {
    let removed = 0;
    for (const table of SAMPLE_TABLES)
      removed += await this.execute(`DELETE FROM ${table} WHERE ts < ?`, [beforeTs]);
    return removed;
  }
}
