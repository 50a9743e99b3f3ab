// ConsumerConfig: the consumer settings by Kafka's names with Kafka 4's defaults, parsed from string
// properties (--consumer-property k=v, --consumer.config file) or given typed. Unknown keys are ignored
// as Kafka does; a bad value is a ConfigException naming the key. With group.id the consumer can
// subscribe() and commit through its group coordinator (group.instance.id, session.timeout.ms,
// heartbeat.interval.ms, max.poll.interval.ms — the rebalance timeout —, enable.auto.commit,
// auto.commit.interval.ms, partition.assignment.strategy: range and roundrobin); without it the consumer
// works on assigned partitions only and enable.auto.commit defaults to false, as in Kafka.

import type { SslOptions } from "../../common/ssl-engine-factory.js";
import {
  applyCommonClientProperty,
  boolValue,
  ConfigException,
  intValue,
  listValue,
  requireBootstrapServers,
  securityFromProperties,
} from "../config-parsing.js";
import type { SaslClientConfig } from "../network/sasl/sasl-client-mechanisms.js";
import { assignorFor } from "./partition-assignors.js";

export type AutoOffsetReset = "earliest" | "latest" | "none";

/** isolation.level: read_uncommitted (0) or read_committed (1), as on the wire. */
export type IsolationLevel = 0 | 1;

export interface ConsumerConfig {
  bootstrapServers: string[];
  clientId: string;
  /** security.protocol=SSL/SASL_SSL: TLS options from the ssl.* settings (undefined: no TLS). */
  ssl?: SslOptions;
  /** security.protocol=SASL_*: sasl.mechanism and sasl.jaas.config's credentials. */
  sasl?: SaslClientConfig;
  groupId: string | null;
  autoOffsetReset: AutoOffsetReset;
  isolationLevel: IsolationLevel;
  fetchMinBytes: number;
  fetchMaxWaitMs: number;
  maxPartitionFetchBytes: number;
  fetchMaxBytes: number;
  maxPollRecords: number;
  checkCrcs: boolean;
  requestTimeoutMs: number;
  retryBackoffMs: number;
  defaultApiTimeoutMs: number;
  clientRack: string;
  groupInstanceId: string | null;
  sessionTimeoutMs: number;
  heartbeatIntervalMs: number;
  /** max.poll.interval.ms: sent as the JoinGroup rebalance timeout. */
  maxPollIntervalMs: number;
  /** null: true with a group.id, false without (Kafka's default). */
  enableAutoCommit: boolean | null;
  autoCommitIntervalMs: number;
  /** Assignor names in preference order ("range", "roundrobin"). */
  partitionAssignmentStrategy: string[];
  /** metadata.max.age.ms: how often a group member looks for partition count changes of its topics. */
  metadataMaxAgeMs: number;
  /**
   * allow.auto.create.topics: the Metadata requests for subscribed topics let the broker create a missing
   * one (when its auto.create.topics.enable is on), as Kafka's consumer does.
   */
  allowAutoCreateTopics: boolean;
  /** exclude.internal.topics: a subscribed pattern never matches internal topics (__consumer_offsets, …). */
  excludeInternalTopics: boolean;
}

export const CONSUMER_DEFAULTS: Omit<ConsumerConfig, "bootstrapServers"> = {
  clientId: "",
  groupId: null,
  autoOffsetReset: "latest",
  isolationLevel: 0,
  fetchMinBytes: 1,
  fetchMaxWaitMs: 500,
  maxPartitionFetchBytes: 1048576,
  fetchMaxBytes: 52428800,
  maxPollRecords: 500,
  checkCrcs: true,
  requestTimeoutMs: 30000,
  retryBackoffMs: 100,
  defaultApiTimeoutMs: 60000,
  clientRack: "",
  groupInstanceId: null,
  sessionTimeoutMs: 45000,
  heartbeatIntervalMs: 3000,
  maxPollIntervalMs: 300000,
  enableAutoCommit: null,
  autoCommitIntervalMs: 5000,
  // Kafka 3.x: [RangeAssignor, CooperativeStickyAssignor]; the cooperative protocol is not implemented.
  partitionAssignmentStrategy: ["range"],
  metadataMaxAgeMs: 300000,
  allowAutoCreateTopics: true,
  excludeInternalTopics: true,
};

/** partition.assignment.strategy: a list of assignor names or Kafka class names. */
export function parseAssignmentStrategy(v: string): string[] {
  const names = listValue(v);
  if (names.length === 0)
    throw new ConfigException(`Invalid value ${v} for configuration partition.assignment.strategy`);
  return names.map((n) => {
    const a = assignorFor(n);
    if (!a) {
      throw new ConfigException(
        `Invalid value ${n} for configuration partition.assignment.strategy: Class ${n} cannot be found (supported: range, roundrobin)`,
      );
    }
    return a.name;
  });
}

/** isolation.level as Kafka spells it. */
export function parseIsolationLevel(v: string): IsolationLevel {
  const t = v.trim().toLowerCase();
  if (t === "read_uncommitted") return 0;
  if (t === "read_committed") return 1;
  throw new ConfigException(
    `Invalid value ${v} for configuration isolation.level: String must be one of: read_committed, read_uncommitted`,
  );
}

export function parseAutoOffsetReset(v: string): AutoOffsetReset {
  const t = v.trim().toLowerCase();
  if (t === "earliest" || t === "latest" || t === "none") return t;
  throw new ConfigException(
    `Invalid value ${v} for configuration auto.offset.reset: String must be one of: latest, earliest, none`,
  );
}

export function consumerConfigFromProperties(props: Readonly<Record<string, string>>): ConsumerConfig {
  const c: ConsumerConfig = { ...CONSUMER_DEFAULTS, bootstrapServers: [], ...securityFromProperties(props) };
  for (const [key, value] of Object.entries(props)) {
    if (applyCommonClientProperty(c, key, value)) continue;
    switch (key) {
      case "group.id":
        c.groupId = value;
        break;
      case "auto.offset.reset":
        c.autoOffsetReset = parseAutoOffsetReset(value);
        break;
      case "isolation.level":
        c.isolationLevel = parseIsolationLevel(value);
        break;
      case "fetch.min.bytes":
        c.fetchMinBytes = intValue(key, value, 0);
        break;
      case "fetch.max.wait.ms":
        c.fetchMaxWaitMs = intValue(key, value, 0);
        break;
      case "max.partition.fetch.bytes":
        c.maxPartitionFetchBytes = intValue(key, value, 0);
        break;
      case "fetch.max.bytes":
        c.fetchMaxBytes = intValue(key, value, 0);
        break;
      case "max.poll.records":
        c.maxPollRecords = intValue(key, value, 1);
        break;
      case "allow.auto.create.topics":
        c.allowAutoCreateTopics = boolValue(key, value);
        break;
      case "exclude.internal.topics":
        c.excludeInternalTopics = boolValue(key, value);
        break;
      case "check.crcs":
        c.checkCrcs = value.trim().toLowerCase() !== "false";
        break;
      case "default.api.timeout.ms":
        c.defaultApiTimeoutMs = intValue(key, value, 0);
        break;
      case "client.rack":
        c.clientRack = value;
        break;
      case "group.instance.id":
        c.groupInstanceId = value.trim() === "" ? null : value;
        break;
      case "session.timeout.ms":
        c.sessionTimeoutMs = intValue(key, value, 1);
        break;
      case "heartbeat.interval.ms":
        c.heartbeatIntervalMs = intValue(key, value, 1);
        break;
      case "max.poll.interval.ms":
        c.maxPollIntervalMs = intValue(key, value, 1);
        break;
      case "enable.auto.commit":
        c.enableAutoCommit = boolValue(key, value);
        break;
      case "auto.commit.interval.ms":
        c.autoCommitIntervalMs = intValue(key, value, 0);
        break;
      case "partition.assignment.strategy":
        c.partitionAssignmentStrategy = parseAssignmentStrategy(value);
        break;
      default:
        break;
    }
  }
  requireBootstrapServers(c.bootstrapServers);
  return c;
}
