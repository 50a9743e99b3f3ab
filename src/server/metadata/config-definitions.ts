// Config definitions for DescribeConfigs / AlterConfigs / CreateTopics: every topic config Kafka knows
// (type, default, documentation, broker synonyms), the broker log.* synonym keys with their defaults,
// which broker configs are dynamically updatable, validation of topic configs (LogConfig's parsers plus
// the keys other layers own), and the computation of a config's value, source and synonyms exactly as
// Kafka's ConfigHelper does (dynamic broker → dynamic default → static → default, listed in that order,
// then dropped up to the primary synonym).

import {
  BROKER_SYNONYMS,
  brokerLogConfigFrom,
  InvalidLogConfigError,
  type LogConfig,
  logConfigFrom,
} from "../../storage/log-config.js";
import { BROKER_CONFIG_DEFS } from "../kafka-config-def.js";

/** DescribeConfigs config_source values. */
export const ConfigSource = {
  UNKNOWN: 0,
  DYNAMIC_TOPIC_CONFIG: 1,
  DYNAMIC_BROKER_CONFIG: 2,
  DYNAMIC_DEFAULT_BROKER_CONFIG: 3,
  STATIC_BROKER_CONFIG: 4,
  DEFAULT_CONFIG: 5,
  DYNAMIC_BROKER_LOGGER_CONFIG: 6,
} as const;

/** DescribeConfigs config_type values. */
export const ConfigType = {
  UNKNOWN: 0,
  BOOLEAN: 1,
  STRING: 2,
  INT: 3,
  SHORT: 4,
  LONG: 5,
  DOUBLE: 6,
  LIST: 7,
  CLASS: 8,
  PASSWORD: 9,
} as const;

/** ConfigResource types. */
export const ConfigResourceType = {
  UNKNOWN: 0,
  TOPIC: 2,
  BROKER: 4,
  BROKER_LOGGER: 8,
  CLIENT_METRICS: 16,
  GROUP: 32,
} as const;

const LONG_MAX = "9223372036854775807";

interface TopicConfigDef {
  readonly type: number;
  readonly default: string;
  readonly doc: string;
  /** Broker synonyms, highest priority first, with the unit factor. */
  readonly synonyms: ReadonlyArray<readonly [string, number]>;
  /** Validates a value (throws InvalidLogConfigError); LogConfig keys are validated by logConfigFrom. */
  readonly validate?: (key: string, value: string) => void;
}

const T = ConfigType;

function validateBoolean(key: string, value: string): void {
  const v = value.trim().toLowerCase();
  if (v !== "true" && v !== "false") throw new InvalidLogConfigError(key, value, "true or false");
}

function validateLong(min: bigint) {
  return (key: string, value: string): void => {
    const v = value.trim();
    if (!/^-?\d+$/.test(v) || BigInt(v) < min || BigInt(v) > BigInt(LONG_MAX)) {
      throw new InvalidLogConfigError(key, value, `a long >= ${min}`);
    }
  };
}

function validateInt(min: number) {
  return (key: string, value: string): void => {
    const v = value.trim();
    if (!/^-?\d+$/.test(v) || Number(v) < min || Number(v) > 2147483647) {
      throw new InvalidLogConfigError(key, value, `an integer >= ${min}`);
    }
  };
}

function validateOneOf(options: readonly string[]) {
  return (key: string, value: string): void => {
    if (!options.includes(value.trim()))
      throw new InvalidLogConfigError(key, value, `one of ${options.join(", ")}`);
  };
}

function validateThrottledReplicas(key: string, value: string): void {
  // Kafka's ThrottledReplicaListValidator: every trimmed entry `partition:broker` (or empty), or `*`.
  const entries = value.split(",").map((e) => e.trim());
  if (entries.join("").trim() === "*") return;
  if (!entries.every((e) => /^(\d+:\d+)?$/.test(e)))
    throw new InvalidLogConfigError(
      key,
      value,
      "the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...",
    );
}

const syn = (topicKey: string): ReadonlyArray<readonly [string, number]> => BROKER_SYNONYMS[topicKey] ?? [];

/** Kafka's topic configs (TopicConfig / LogConfig.configDef), by name. */
export const TOPIC_CONFIG_DEFS: Readonly<Record<string, TopicConfigDef>> = {
  "cleanup.policy": {
    type: T.LIST,
    default: "delete",
    doc: 'This config designates the retention policy to use on log segments. The "delete" policy (which is the default) will discard old segments when their retention time or size limit has been reached. The "compact" policy will enable log compaction, which retains the latest value for each key.',
    synonyms: syn("cleanup.policy"),
  },
  "compression.type": {
    type: T.STRING,
    default: "producer",
    doc: "Specify the final compression type for a given topic. This configuration accepts the standard compression codecs ('gzip', 'snappy', 'lz4', 'zstd'). It additionally accepts 'uncompressed' which is equivalent to no compression; and 'producer' which means retain the original compression codec set by the producer.",
    synonyms: [["compression.type", 1]],
    validate: validateOneOf(["uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"]),
  },
  "delete.retention.ms": {
    type: T.LONG,
    default: "86400000",
    doc: "The amount of time to retain delete tombstone markers for log compacted topics.",
    synonyms: syn("delete.retention.ms"),
  },
  "file.delete.delay.ms": {
    type: T.LONG,
    default: "60000",
    doc: "The time to wait before deleting a file from the filesystem",
    synonyms: syn("file.delete.delay.ms"),
  },
  "flush.messages": {
    type: T.LONG,
    default: LONG_MAX,
    doc: "This setting allows specifying an interval at which we will force an fsync of data written to the log.",
    synonyms: syn("flush.messages"),
  },
  "flush.ms": {
    type: T.LONG,
    default: LONG_MAX,
    doc: "This setting allows specifying a time interval at which we will force an fsync of data written to the log.",
    synonyms: syn("flush.ms"),
  },
  "follower.replication.throttled.replicas": {
    type: T.LIST,
    default: "",
    doc: "A list of replicas for which log replication should be throttled on the follower side.",
    synonyms: [],
    validate: validateThrottledReplicas,
  },
  "index.interval.bytes": {
    type: T.INT,
    default: "4096",
    doc: "This setting controls how frequently Kafka adds an index entry to its offset index.",
    synonyms: syn("index.interval.bytes"),
  },
  "leader.replication.throttled.replicas": {
    type: T.LIST,
    default: "",
    doc: "A list of replicas for which log replication should be throttled on the leader side.",
    synonyms: [],
    validate: validateThrottledReplicas,
  },
  "local.retention.bytes": {
    type: T.LONG,
    default: "-2",
    doc: "The maximum size of local log segments that can grow for a partition before it deletes the old segments.",
    synonyms: [["log.local.retention.bytes", 1]],
    validate: validateLong(-2n),
  },
  "local.retention.ms": {
    type: T.LONG,
    default: "-2",
    doc: "The number of milliseconds to keep the local log segment before it gets deleted.",
    synonyms: [["log.local.retention.ms", 1]],
    validate: validateLong(-2n),
  },
  "max.compaction.lag.ms": {
    type: T.LONG,
    default: LONG_MAX,
    doc: "The maximum time a message will remain ineligible for compaction in the log.",
    synonyms: syn("max.compaction.lag.ms"),
  },
  "max.message.bytes": {
    type: T.INT,
    default: "1048588",
    doc: "The largest record batch size allowed by Kafka (after compression if compression is enabled).",
    synonyms: syn("max.message.bytes"),
  },
  "message.downconversion.enable": {
    type: T.BOOLEAN,
    default: "true",
    doc: "This configuration controls whether down-conversion of message formats is enabled to satisfy consume requests.",
    synonyms: [["log.message.downconversion.enable", 1]],
    validate: validateBoolean,
  },
  "message.format.version": {
    type: T.STRING,
    default: "3.0-IV1",
    doc: "[DEPRECATED] Specify the message format version the broker will use to append messages to the logs.",
    synonyms: [["log.message.format.version", 1]],
  },
  "message.timestamp.after.max.ms": {
    type: T.LONG,
    default: LONG_MAX,
    doc: "This configuration sets the allowable timestamp difference between the message timestamp and the broker's timestamp.",
    synonyms: [["log.message.timestamp.after.max.ms", 1]],
    validate: validateLong(0n),
  },
  "message.timestamp.before.max.ms": {
    type: T.LONG,
    default: LONG_MAX,
    doc: "This configuration sets the allowable timestamp difference between the broker's timestamp and the message timestamp.",
    synonyms: [["log.message.timestamp.before.max.ms", 1]],
    validate: validateLong(0n),
  },
  "message.timestamp.difference.max.ms": {
    type: T.LONG,
    default: LONG_MAX,
    doc: "[DEPRECATED] The maximum difference allowed between the timestamp when a broker receives a message and the timestamp specified in the message.",
    synonyms: [["log.message.timestamp.difference.max.ms", 1]],
    validate: validateLong(0n),
  },
  "message.timestamp.type": {
    type: T.STRING,
    default: "CreateTime",
    doc: "Define whether the timestamp in the message is message create time or log append time.",
    synonyms: syn("message.timestamp.type"),
  },
  "min.cleanable.dirty.ratio": {
    type: T.DOUBLE,
    default: "0.5",
    doc: "This configuration controls how frequently the log compactor will attempt to clean the log.",
    synonyms: syn("min.cleanable.dirty.ratio"),
  },
  "min.compaction.lag.ms": {
    type: T.LONG,
    default: "0",
    doc: "The minimum time a message will remain uncompacted in the log.",
    synonyms: syn("min.compaction.lag.ms"),
  },
  "min.insync.replicas": {
    type: T.INT,
    default: "1",
    doc: 'When a producer sets acks to "all" (or "-1"), this configuration specifies the minimum number of replicas that must acknowledge a write for the write to be considered successful.',
    synonyms: [["min.insync.replicas", 1]],
    validate: validateInt(1),
  },
  preallocate: {
    type: T.BOOLEAN,
    default: "false",
    doc: "True if we should preallocate the file on disk when creating a new log segment.",
    synonyms: syn("preallocate"),
  },
  "remote.storage.enable": {
    type: T.BOOLEAN,
    default: "false",
    doc: "To enable tiered storage for a topic, set this configuration as true.",
    synonyms: [],
    validate: validateBoolean,
  },
  "retention.bytes": {
    type: T.LONG,
    default: "-1",
    doc: 'This configuration controls the maximum size a partition can grow to before we will discard old log segments to free up space if we are using the "delete" retention policy.',
    synonyms: syn("retention.bytes"),
  },
  "retention.ms": {
    type: T.LONG,
    default: "604800000",
    doc: 'This configuration controls the maximum time we will retain a log before we will discard old log segments to free up space if we are using the "delete" retention policy.',
    synonyms: syn("retention.ms"),
  },
  "segment.bytes": {
    type: T.INT,
    default: "1073741824",
    doc: "This configuration controls the segment file size for the log.",
    synonyms: syn("segment.bytes"),
  },
  "segment.index.bytes": {
    type: T.INT,
    default: "10485760",
    doc: "This configuration controls the size of the index that maps offsets to file positions.",
    synonyms: syn("segment.index.bytes"),
  },
  "segment.jitter.ms": {
    type: T.LONG,
    default: "0",
    doc: "The maximum random jitter subtracted from the scheduled segment roll time to avoid thundering herds of segment rolling",
    synonyms: syn("segment.jitter.ms"),
  },
  "segment.ms": {
    type: T.LONG,
    default: "604800000",
    doc: "This configuration controls the period of time after which Kafka will force the log to roll even if the segment file isn't full to ensure that retention can delete or compact old data.",
    synonyms: syn("segment.ms"),
  },
  "unclean.leader.election.enable": {
    type: T.BOOLEAN,
    default: "false",
    doc: "Indicates whether to enable replicas not in the ISR set to be elected as leader as a last resort, even though doing so may result in data loss.",
    synonyms: [["unclean.leader.election.enable", 1]],
    validate: validateBoolean,
  },
};

export const TOPIC_CONFIG_NAMES: readonly string[] = Object.keys(TOPIC_CONFIG_DEFS).sort();

/** Types and defaults (null: none) of the broker log.* synonyms that KafkaConfig does not list. */
const BROKER_LOG_KEYS: Readonly<Record<string, readonly [number, string | null]>> = {
  "log.segment.bytes": [T.INT, "1073741824"],
  "log.roll.ms": [T.LONG, null],
  "log.roll.hours": [T.INT, "168"],
  "log.roll.jitter.ms": [T.LONG, null],
  "log.roll.jitter.hours": [T.INT, "0"],
  "log.index.size.max.bytes": [T.INT, "10485760"],
  "log.index.interval.bytes": [T.INT, "4096"],
  "log.retention.ms": [T.LONG, null],
  "log.retention.minutes": [T.INT, null],
  "log.retention.hours": [T.INT, "168"],
  "log.retention.bytes": [T.LONG, "-1"],
  "log.cleanup.policy": [T.LIST, "delete"],
  "log.cleaner.delete.retention.ms": [T.LONG, "86400000"],
  "log.cleaner.min.cleanable.ratio": [T.DOUBLE, "0.5"],
  "log.cleaner.min.compaction.lag.ms": [T.LONG, "0"],
  "log.cleaner.max.compaction.lag.ms": [T.LONG, LONG_MAX],
  "log.flush.interval.messages": [T.LONG, LONG_MAX],
  "log.flush.interval.ms": [T.LONG, null],
  "log.flush.scheduler.interval.ms": [T.LONG, LONG_MAX],
  "log.segment.delete.delay.ms": [T.LONG, "60000"],
  "log.message.timestamp.type": [T.STRING, "CreateTime"],
  "log.preallocate": [T.BOOLEAN, "false"],
  "log.local.retention.ms": [T.LONG, "-2"],
  "log.local.retention.bytes": [T.LONG, "-2"],
};

const TYPE_BY_NAME: Record<string, number> = {
  int: T.INT,
  long: T.LONG,
  short: T.SHORT,
  double: T.DOUBLE,
  boolean: T.BOOLEAN,
  string: T.STRING,
  list: T.LIST,
  password: T.PASSWORD,
  class: T.CLASS,
};

/** Every broker config name Tributary describes, sorted. */
export function brokerConfigNames(): string[] {
  return [...new Set([...Object.keys(BROKER_CONFIG_DEFS), ...Object.keys(BROKER_LOG_KEYS)])].sort();
}

/**
 * Broker configs that exist only as dynamic configs (Kafka's DynamicConfig.Broker: the replication
 * throttles, longs >= 0, Long.MAX_VALUE when absent); server.properties does not know them.
 */
const DYNAMIC_ONLY_BROKER_LONGS = new Set([
  "leader.replication.throttled.rate",
  "follower.replication.throttled.rate",
  "replica.alter.log.dirs.io.max.bytes.per.second",
]);

export function brokerConfigType(name: string): number {
  if (DYNAMIC_ONLY_BROKER_LONGS.has(name)) return T.LONG;
  const d = BROKER_CONFIG_DEFS[name];
  if (d) return TYPE_BY_NAME[d.type] ?? T.UNKNOWN;
  return BROKER_LOG_KEYS[name]?.[0] ?? T.UNKNOWN;
}

export function brokerConfigDefault(name: string): string | null {
  const d = BROKER_CONFIG_DEFS[name];
  if (d) return d.default;
  return BROKER_LOG_KEYS[name]?.[1] ?? null;
}

export function isKnownBrokerKey(name: string): boolean {
  return name in BROKER_CONFIG_DEFS || name in BROKER_LOG_KEYS;
}

export function isSensitiveBrokerConfig(name: string): boolean {
  return brokerConfigType(name) === T.PASSWORD || name.includes("password");
}

/** Broker configs that may be set at /config/brokers (Kafka's DynamicBrokerConfig.AllDynamicConfigs, the slice known here). */
const DYNAMIC_BROKER_CONFIGS = new Set<string>([
  ...Object.values(TOPIC_CONFIG_DEFS).flatMap((d) => d.synonyms.map(([k]) => k)),
  "num.io.threads",
  "num.network.threads",
  "num.replica.fetchers",
  "num.recovery.threads.per.data.dir",
  "background.threads",
  "max.connections",
  "max.connections.per.ip",
  "max.connections.per.ip.overrides",
  "max.connection.creation.rate",
  "listeners",
  "advertised.listeners",
  "listener.security.protocol.map",
  "log.cleaner.threads",
  "log.cleaner.dedupe.buffer.size",
  "log.cleaner.io.buffer.size",
  "log.cleaner.io.buffer.load.factor",
  "log.cleaner.io.max.bytes.per.second",
  "log.cleaner.backoff.ms",
  "metric.reporters",
  "follower.replication.throttled.rate",
  "leader.replication.throttled.rate",
  "replica.alter.log.dirs.io.max.bytes.per.second",
]);

/** Per-broker-only dynamic configs (cannot be set at <default>). */
const PER_BROKER_ONLY = new Set(["listeners", "advertised.listeners", "listener.security.protocol.map"]);

export function isDynamicBrokerConfig(name: string): boolean {
  return DYNAMIC_BROKER_CONFIGS.has(name);
}

/** A config problem for one resource: the Kafka error name and its one-line message. */
export class ConfigValidationError extends Error {
  constructor(
    readonly errorName: "INVALID_CONFIG" | "INVALID_REQUEST",
    message: string,
  ) {
    super(message);
    this.name = "ConfigValidationError";
  }
}

/** Validates a full set of topic config overrides (names and values), as Kafka's LogConfig.validate. */
export function validateTopicConfigs(props: Record<string, string>): void {
  for (const key of Object.keys(props)) {
    if (!(key in TOPIC_CONFIG_DEFS))
      throw new ConfigValidationError("INVALID_CONFIG", `Unknown topic config name: ${key}`);
  }
  try {
    logConfigFrom(props);
    for (const [key, value] of Object.entries(props)) TOPIC_CONFIG_DEFS[key].validate?.(key, value);
  } catch (e) {
    if (e instanceof InvalidLogConfigError) throw new ConfigValidationError("INVALID_CONFIG", e.message);
    throw e;
  }
}

/** Validates dynamic broker config values (names must be dynamically updatable). */
export function validateBrokerConfigs(props: Record<string, string>, perBroker: boolean): void {
  const notDynamic = Object.keys(props).filter(
    (k) => isKnownBrokerKey(k) && (!isDynamicBrokerConfig(k) || (!perBroker && PER_BROKER_ONLY.has(k))),
  );
  if (notDynamic.length > 0) {
    throw new ConfigValidationError(
      "INVALID_REQUEST",
      `Cannot update these configs dynamically: Set(${notDynamic.join(", ")})`,
    );
  }
  for (const [key, value] of Object.entries(props)) {
    const type = brokerConfigType(key);
    const v = value.trim();
    let ok = true;
    if (DYNAMIC_ONLY_BROKER_LONGS.has(key)) ok = /^\d+$/.test(v) && BigInt(v) <= BigInt(LONG_MAX);
    else if (type === T.INT || type === T.LONG || type === T.SHORT) ok = /^-?\d+$/.test(v);
    else if (type === T.BOOLEAN) ok = v === "true" || v === "false";
    else if (type === T.DOUBLE) ok = v !== "" && Number.isFinite(Number(v));
    if (!ok) {
      const expected =
        type === T.BOOLEAN
          ? "true or false"
          : type === T.DOUBLE
            ? "a number"
            : DYNAMIC_ONLY_BROKER_LONGS.has(key)
              ? "a long >= 0 (bytes/s)"
              : type === T.LONG
                ? "a long"
                : "an integer";
      throw new ConfigValidationError(
        "INVALID_CONFIG",
        `Invalid value ${JSON.stringify(value)} for configuration ${key}: expected ${expected}`,
      );
    }
  }
  // The log.* defaults (and compression.type, message.max.bytes) must also be values a topic accepts.
  try {
    dynamicBrokerLogConfig({ staticConfig: {}, dynamicDefault: {}, dynamicBroker: props });
  } catch (e) {
    if (e instanceof InvalidLogConfigError) throw new ConfigValidationError("INVALID_CONFIG", e.message);
    throw e;
  }
}

export interface ConfigSynonym {
  readonly name: string;
  readonly value: string | null;
  readonly source: number;
}

export interface DescribedConfig {
  readonly name: string;
  readonly value: string | null;
  readonly readOnly: boolean;
  readonly source: number;
  readonly isSensitive: boolean;
  readonly synonyms: ConfigSynonym[];
  readonly configType: number;
  readonly documentation: string | null;
}

/** The broker-level config layers a value is resolved from. */
export interface BrokerConfigLayers {
  /** /config/brokers/<id> */
  readonly dynamicBroker: Record<string, string>;
  /** /config/brokers/<default> */
  readonly dynamicDefault: Record<string, string>;
  /** server.properties (+ overrides) */
  readonly staticConfig: Record<string, string>;
}

/**
 * The broker's default topic config with dynamic broker configs applied (Kafka's DynamicBrokerConfig: the
 * static properties, overridden by /config/brokers/<default>, overridden by /config/brokers/<id>; then
 * the usual synonym priority, e.g. log.retention.ms over log.retention.hours whichever layer holds it).
 * Throws InvalidLogConfigError naming the broker key.
 */
export function dynamicBrokerLogConfig(layers: BrokerConfigLayers): LogConfig {
  const merged: Record<string, string> = {};
  const logKeys = new Set(Object.values(BROKER_SYNONYMS).flatMap((g) => g.map(([k]) => k)));
  for (const layer of [layers.staticConfig, layers.dynamicDefault, layers.dynamicBroker]) {
    for (const [k, v] of Object.entries(layer)) if (logKeys.has(k)) merged[k] = v;
  }
  return brokerLogConfigFrom(merged);
}

/** The broker synonym group a broker key belongs to (Kafka's DynamicBrokerConfig.brokerConfigSynonyms). */
function brokerSynonymGroup(name: string): string[] {
  for (const group of Object.values(BROKER_SYNONYMS)) {
    const names = group.map(([k]) => k);
    if (names.length > 1 && names.includes(name)) {
      // flush.ms: log.flush.interval.ms falls back to log.flush.scheduler.interval.ms, not the other way.
      if (name === "log.flush.scheduler.interval.ms") return [name];
      return names;
    }
  }
  return [name];
}

/** Kafka's ConfigHelper.configSynonyms. */
function configSynonyms(
  name: string,
  group: readonly string[],
  layers: BrokerConfigLayers,
  sensitive: boolean,
): ConfigSynonym[] {
  const out: ConfigSynonym[] = [];
  const add = (map: Record<string, string | null>, source: number): void => {
    for (const s of group) {
      const v = map[s];
      if (v !== undefined && v !== null) out.push({ name: s, value: sensitive ? null : v, source });
    }
  };
  add(layers.dynamicBroker, ConfigSource.DYNAMIC_BROKER_CONFIG);
  add(layers.dynamicDefault, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
  add(layers.staticConfig, ConfigSource.STATIC_BROKER_CONFIG);
  const defaults: Record<string, string | null> = {};
  for (const s of group) defaults[s] = brokerConfigDefault(s);
  add(defaults, ConfigSource.DEFAULT_CONFIG);
  const i = out.findIndex((s) => s.name === name);
  return i < 0 ? [] : out.slice(i);
}

function brokerValue(name: string, layers: BrokerConfigLayers): string | null {
  return (
    layers.dynamicBroker[name] ??
    layers.dynamicDefault[name] ??
    layers.staticConfig[name] ??
    brokerConfigDefault(name)
  );
}

/** A topic config's effective value when the topic does not override it: its broker synonyms, else the default. */
export function topicDefaultValue(name: string, layers: BrokerConfigLayers): string {
  const def = TOPIC_CONFIG_DEFS[name];
  for (const [brokerKey, factor] of def.synonyms) {
    const raw =
      layers.dynamicBroker[brokerKey] ?? layers.dynamicDefault[brokerKey] ?? layers.staticConfig[brokerKey];
    if (raw === undefined) continue;
    if (factor === 1) return raw.trim();
    const v = raw.trim();
    if (!/^-?\d+$/.test(v)) continue;
    const n = BigInt(v);
    return n < 0n ? "-1" : String(n * BigInt(factor));
  }
  return def.default;
}

/** One topic config as DescribeConfigs reports it (Kafka's ConfigHelper.createTopicConfigEntry). */
export function describeTopicConfig(
  name: string,
  overrides: Record<string, string>,
  layers: BrokerConfigLayers,
  includeSynonyms: boolean,
  includeDocumentation: boolean,
): DescribedConfig {
  const def = TOPIC_CONFIG_DEFS[name];
  const sensitive = def.type === T.PASSWORD;
  const overridden = overrides[name] !== undefined;
  const value = overridden ? overrides[name] : topicDefaultValue(name, layers);
  const primary = def.synonyms[0]?.[0];
  const list = primary
    ? configSynonyms(
        primary,
        def.synonyms.map(([k]) => k),
        layers,
        sensitive,
      )
    : [];
  const all = overridden
    ? [{ name, value: sensitive ? null : value, source: ConfigSource.DYNAMIC_TOPIC_CONFIG }, ...list]
    : list;
  return {
    name,
    value: sensitive ? null : value,
    readOnly: false,
    source: all.length === 0 ? ConfigSource.DEFAULT_CONFIG : all[0].source,
    isSensitive: sensitive,
    synonyms: includeSynonyms ? all : [],
    configType: def.type,
    documentation: includeDocumentation ? def.doc : null,
  };
}

/** One broker config as DescribeConfigs reports it (Kafka's ConfigHelper.createBrokerConfigEntry). */
export function describeBrokerConfig(
  name: string,
  layers: BrokerConfigLayers,
  perBroker: boolean,
  includeSynonyms: boolean,
  includeDocumentation: boolean,
): DescribedConfig {
  const sensitive = isSensitiveBrokerConfig(name);
  const value = perBroker ? brokerValue(name, layers) : (layers.dynamicDefault[name] ?? null);
  let all = configSynonyms(name, brokerSynonymGroup(name), layers, sensitive);
  if (!perBroker) all = all.filter((s) => s.source === ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
  return {
    name,
    value: sensitive ? null : value,
    readOnly: !isDynamicBrokerConfig(name),
    source: all.length === 0 ? ConfigSource.DEFAULT_CONFIG : all[0].source,
    isSensitive: sensitive,
    synonyms: includeSynonyms ? all : [],
    configType: brokerConfigType(name),
    documentation: includeDocumentation ? null : null,
  };
}
