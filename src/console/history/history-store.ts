// The history database behind one small interface: what the collector writes each sample (per group
// and partition: committed offset, log end offset, lag, lag in ms; per topic: log size and end offset;
// per broker: its metric counters) and what the pages and the tests read back (a group's or a
// partition's lag over time, a topic's size, broker counters), the audit log of actions and the alert
// history. Implemented for SQLite (sqlite-history.ts) and MySQL/MariaDB (mysql-history.ts);
// openHistory() picks by URL.

export interface GroupPartitionSample {
  readonly group: string;
  readonly topic: string;
  readonly partition: number;
  /** -1: no committed offset (the lag then counts from the log start offset). */
  readonly committedOffset: number;
  readonly logEndOffset: number;
  readonly lag: number;
  /** Age of the oldest unconsumed record in ms; null when unknown. 0 when there is no lag. */
  readonly lagMs: number | null;
}

export interface TopicSample {
  readonly topic: string;
  /** Messages kept: sum over partitions of (end offset − start offset). */
  readonly logSize: number;
  /** Sum of the partitions' end offsets (messages ever written). */
  readonly endOffsetSum: number;
}

/** A broker's metric counters at a sample (null when its /metrics lacks one). */
export interface BrokerSample {
  readonly brokerId: number;
  readonly messagesIn: number | null;
  readonly bytesIn: number | null;
  readonly bytesOut: number | null;
  readonly requests: number | null;
}

export interface BrokerPoint extends BrokerSample {
  readonly ts: number;
}

export interface Sample {
  readonly cluster: string;
  /** When the sample was taken, ms since the epoch. */
  readonly ts: number;
  readonly groups: readonly GroupPartitionSample[];
  readonly topics: readonly TopicSample[];
  readonly brokers?: readonly BrokerSample[];
}

/** One point of a group's lag over time: totals over its partitions. */
export interface LagPoint {
  readonly ts: number;
  readonly lag: number;
  /** The largest partition lag in ms at that time; null when unknown. */
  readonly lagMs: number | null;
}

/** One partition's lag at one sample time. */
export interface PartitionLagRow {
  readonly ts: number;
  readonly topic: string;
  readonly partition: number;
  readonly lag: number;
}

/** One point of a topic's size over time. */
export interface TopicPoint {
  readonly ts: number;
  readonly logSize: number;
  readonly endOffsetSum: number;
}

/** One action as the audit log keeps it (every action, whether it succeeded or failed). */
export interface AuditEntry {
  readonly ts: number;
  readonly user: string;
  readonly cluster: string;
  /** e.g. "create-topic", "reset-offsets", "login". */
  readonly action: string;
  /** What it acted on: a topic, a group, … */
  readonly target: string;
  /** The request's parameters, JSON. */
  readonly details: string;
  /** "ok", or "error: <message>". */
  readonly outcome: string;
}

/** An alert starting or stopping to fire, with how its webhook delivery went. */
export interface AlertEventRow {
  readonly ts: number;
  readonly rule: string;
  readonly type: string;
  readonly cluster: string;
  readonly subject: string;
  readonly state: string;
  readonly value: number;
  readonly threshold: number;
  readonly message: string;
  /** "ok", "HTTP 500", "error: …" or "no webhook". */
  readonly delivery: string;
}

export interface HistoryStore {
  readonly kind: "sqlite" | "mysql";
  /** Where it is, for the start-up line (no password). */
  readonly description: string;
  /** Brings the schema to the current version; returns that version. */
  migrate(): Promise<number>;
  schemaVersion(): Promise<number>;
  record(sample: Sample): Promise<void>;
  /** A group's total lag per sample time since `sinceTs`, oldest first. */
  groupLag(cluster: string, group: string, sinceTs: number): Promise<LagPoint[]>;
  /** One partition's lag per sample time since `sinceTs`, oldest first. */
  partitionLag(
    cluster: string,
    group: string,
    topic: string,
    partition: number,
    sinceTs: number,
  ): Promise<LagPoint[]>;
  /** The group's lag per partition at each of the given sample times (for a like-with-like trend). */
  groupLagByPartition(cluster: string, group: string, times: readonly number[]): Promise<PartitionLagRow[]>;
  /** A topic's end offsets (summed over partitions) and log size per sample time since `sinceTs`. */
  topicSizes(cluster: string, topic: string, sinceTs: number): Promise<TopicPoint[]>;
  audit(entry: AuditEntry): Promise<void>;
  /** The newest `limit` audit entries, newest first. */
  auditLog(limit: number): Promise<AuditEntry[]>;
  /** Every broker's counters per sample time since `sinceTs`, oldest first. */
  brokerSamples(cluster: string, sinceTs: number): Promise<BrokerPoint[]>;
  alertEvent(e: AlertEventRow): Promise<void>;
  /** The newest `limit` alert events, newest first. */
  alertEvents(limit: number): Promise<AlertEventRow[]>;
  /** Deletes samples older than `beforeTs`; returns the rows removed. */
  purge(beforeTs: number): Promise<number>;
  close(): Promise<void>;
}
