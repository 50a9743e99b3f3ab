// The history schema as numbered migrations, written once for both dialects (the few differences are
// the column types). The database's `console_schema_version` table holds the version reached; each
// store runs the migrations above it, in order, at start-up.

export type Dialect = "sqlite" | "mysql";

export interface Migration {
  readonly version: number;
  readonly statements: (d: Dialect) => string[];
}

const text = (d: Dialect, n: number): string => (d === "mysql" ? `VARCHAR(${n})` : "TEXT");
/** An auto-numbered primary key: rows read back newest first by it. */
const autoId = (d: Dialect): string =>
  d === "mysql" ? "BIGINT AUTO_INCREMENT PRIMARY KEY" : "INTEGER PRIMARY KEY AUTOINCREMENT";

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    statements: (d) => [
      `CREATE TABLE group_partition_samples (
        cluster ${text(d, 128)} NOT NULL,
        ts BIGINT NOT NULL,
        group_id ${text(d, 255)} NOT NULL,
        topic ${text(d, 255)} NOT NULL,
        partition_id INTEGER NOT NULL,
        committed_offset BIGINT NOT NULL,
        log_end_offset BIGINT NOT NULL,
        lag BIGINT NOT NULL,
        lag_ms BIGINT NULL
      )`,
      "CREATE INDEX gps_group_ts ON group_partition_samples (cluster, group_id, ts)",
      "CREATE INDEX gps_ts ON group_partition_samples (ts)",
      `CREATE TABLE topic_samples (
        cluster ${text(d, 128)} NOT NULL,
        ts BIGINT NOT NULL,
        topic ${text(d, 255)} NOT NULL,
        log_size BIGINT NOT NULL,
        end_offset_sum BIGINT NOT NULL
      )`,
      "CREATE INDEX ts_topic_ts ON topic_samples (cluster, topic, ts)",
      "CREATE INDEX ts_ts ON topic_samples (ts)",
    ],
  },
  {
    version: 2,
    statements: (d) => [
      `CREATE TABLE audit_log (
        id ${autoId(d)},
        ts BIGINT NOT NULL,
        username ${text(d, 64)} NOT NULL,
        cluster ${text(d, 128)} NOT NULL,
        action ${text(d, 64)} NOT NULL,
        target ${text(d, 512)} NOT NULL,
        details ${d === "mysql" ? "MEDIUMTEXT" : "TEXT"} NOT NULL,
        outcome ${text(d, 1024)} NOT NULL
      )`,
      "CREATE INDEX audit_ts ON audit_log (ts)",
    ],
  },
  {
    version: 3,
    statements: (d) => [
      `CREATE TABLE alert_events (
        id ${autoId(d)},
        ts BIGINT NOT NULL,
        rule ${text(d, 128)} NOT NULL,
        type ${text(d, 32)} NOT NULL,
        cluster ${text(d, 128)} NOT NULL,
        subject ${text(d, 512)} NOT NULL,
        state ${text(d, 16)} NOT NULL,
        value DOUBLE PRECISION NOT NULL,
        threshold DOUBLE PRECISION NOT NULL,
        message ${text(d, 1024)} NOT NULL,
        delivery ${text(d, 1024)} NOT NULL
      )`,
      "CREATE INDEX alert_events_ts ON alert_events (ts)",
    ],
  },
  {
    version: 4,
    statements: (d) => [
      `CREATE TABLE broker_samples (
        cluster ${text(d, 128)} NOT NULL,
        ts BIGINT NOT NULL,
        broker_id INTEGER NOT NULL,
        messages_in DOUBLE PRECISION NULL,
        bytes_in DOUBLE PRECISION NULL,
        bytes_out DOUBLE PRECISION NULL,
        requests DOUBLE PRECISION NULL
      )`,
      "CREATE INDEX bs_cluster_ts ON broker_samples (cluster, ts)",
      "CREATE INDEX bs_ts ON broker_samples (ts)",
    ],
  },
];

export const CURRENT_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;

export const VERSION_TABLE = "CREATE TABLE IF NOT EXISTS console_schema_version (version INTEGER NOT NULL)";

export const GROUP_LAG_QUERY = `SELECT ts, SUM(lag) AS lag, MAX(lag_ms) AS lag_ms, COUNT(lag_ms) AS known
  FROM group_partition_samples WHERE cluster = ? AND group_id = ? AND ts >= ? GROUP BY ts ORDER BY ts`;

export const INSERT_GROUP_SAMPLE = `INSERT INTO group_partition_samples
  (cluster, ts, group_id, topic, partition_id, committed_offset, log_end_offset, lag, lag_ms)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`;

export const INSERT_TOPIC_SAMPLE =
  "INSERT INTO topic_samples (cluster, ts, topic, log_size, end_offset_sum) VALUES (?, ?, ?, ?, ?)";

export const PARTITION_LAG_QUERY = `SELECT ts, lag, lag_ms FROM group_partition_samples
  WHERE cluster = ? AND group_id = ? AND topic = ? AND partition_id = ? AND ts >= ? ORDER BY ts`;

/** The rows of one group at up to two sample times (the ends of the trend window). */
export const GROUP_LAG_BY_PARTITION_QUERY = `SELECT ts, topic, partition_id, lag FROM group_partition_samples
  WHERE cluster = ? AND group_id = ? AND ts IN (?, ?) ORDER BY ts, topic, partition_id`;

export const TOPIC_SIZES_QUERY = `SELECT ts, log_size, end_offset_sum FROM topic_samples
  WHERE cluster = ? AND topic = ? AND ts >= ? ORDER BY ts`;

export const INSERT_AUDIT =
  "INSERT INTO audit_log (ts, username, cluster, action, target, details, outcome) VALUES (?, ?, ?, ?, ?, ?, ?)";

export const AUDIT_QUERY =
  "SELECT ts, username, cluster, action, target, details, outcome FROM audit_log ORDER BY id DESC LIMIT ?";

export const INSERT_ALERT_EVENT = `INSERT INTO alert_events
  (ts, rule, type, cluster, subject, state, value, threshold, message, delivery) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

export const ALERT_EVENTS_QUERY = `SELECT ts, rule, type, cluster, subject, state, value, threshold, message, delivery
  FROM alert_events ORDER BY id DESC LIMIT ?`;

export const INSERT_BROKER_SAMPLE = `INSERT INTO broker_samples
  (cluster, ts, broker_id, messages_in, bytes_in, bytes_out, requests) VALUES (?, ?, ?, ?, ?, ?, ?)`;

export const BROKER_SAMPLES_QUERY = `SELECT ts, broker_id, messages_in, bytes_in, bytes_out, requests
  FROM broker_samples WHERE cluster = ? AND ts >= ? ORDER BY ts, broker_id`;
