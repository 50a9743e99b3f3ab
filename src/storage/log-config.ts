// LogConfig: the topic-level log settings (Kafka's LogConfig / TopicConfig), with Kafka's property names
// and defaults. Owns the mapping from `segment.bytes`-style keys to typed fields and the validation of
// their values; the one-line error on bad input names the key, the value and what was expected.
// Invariant: every field of a LogConfig holds a value Kafka itself would accept for that key.

export const LONG_MAX = 9223372036854775807n;
/** Long.MAX as a millisecond count usable in JS arithmetic: "never". */
export const NEVER_MS = Number.MAX_SAFE_INTEGER;

export type CleanupPolicy = "delete" | "compact";
export type MessageTimestampType = "CreateTime" | "LogAppendTime";
/** compression.type: a codec, `uncompressed`, or `producer` (keep the producer's codec). */
export type TopicCompressionType = "producer" | "uncompressed" | "gzip" | "snappy" | "lz4" | "zstd";
const TOPIC_COMPRESSION_TYPES: readonly string[] = [
  "producer",
  "uncompressed",
  "gzip",
  "snappy",
  "lz4",
  "zstd",
];

export interface LogConfig {
  /** segment.bytes */
  readonly segmentBytes: number;
  /** segment.ms */
  readonly segmentMs: number;
  /** segment.jitter.ms */
  readonly segmentJitterMs: number;
  /** segment.index.bytes */
  readonly segmentIndexBytes: number;
  /** index.interval.bytes */
  readonly indexIntervalBytes: number;
  /** retention.ms (-1: unlimited) */
  readonly retentionMs: number;
  /** retention.bytes (-1: unlimited) */
  readonly retentionBytes: number;
  /** cleanup.policy: a list of delete / compact */
  readonly cleanupPolicy: readonly CleanupPolicy[];
  /** delete.retention.ms */
  readonly deleteRetentionMs: number;
  /** min.cleanable.dirty.ratio */
  readonly minCleanableDirtyRatio: number;
  /** min.compaction.lag.ms */
  readonly minCompactionLagMs: number;
  /** max.compaction.lag.ms */
  readonly maxCompactionLagMs: number;
  /** flush.messages (bigint: Kafka's default is Long.MAX) */
  readonly flushMessages: bigint;
  /** flush.ms */
  readonly flushMs: number;
  /** file.delete.delay.ms */
  readonly fileDeleteDelayMs: number;
  /** max.message.bytes */
  readonly maxMessageBytes: number;
  /** message.timestamp.type */
  readonly messageTimestampType: MessageTimestampType;
  /** message.timestamp.before.max.ms (Long.MAX: unbounded; see messageTimestampBeforeMaxMsOf) */
  readonly messageTimestampBeforeMaxMs: bigint;
  /** message.timestamp.after.max.ms (Long.MAX: unbounded; see messageTimestampAfterMaxMsOf) */
  readonly messageTimestampAfterMaxMs: bigint;
  /** message.timestamp.difference.max.ms (deprecated by KIP-937; used while before/after are unset) */
  readonly messageTimestampDifferenceMaxMs: bigint;
  /** compression.type */
  readonly compressionType: TopicCompressionType;
  /** preallocate */
  readonly preallocate: boolean;
}

export const DEFAULT_LOG_CONFIG: LogConfig = Object.freeze({
  segmentBytes: 1073741824,
  segmentMs: 604800000,
  segmentJitterMs: 0,
  segmentIndexBytes: 10485760,
  indexIntervalBytes: 4096,
  retentionMs: 604800000,
  retentionBytes: -1,
  cleanupPolicy: Object.freeze(["delete"]) as readonly CleanupPolicy[],
  deleteRetentionMs: 86400000,
  minCleanableDirtyRatio: 0.5,
  minCompactionLagMs: 0,
  maxCompactionLagMs: NEVER_MS,
  flushMessages: LONG_MAX,
  flushMs: NEVER_MS,
  fileDeleteDelayMs: 60000,
  maxMessageBytes: 1048588,
  messageTimestampType: "CreateTime",
  messageTimestampBeforeMaxMs: LONG_MAX,
  messageTimestampAfterMaxMs: LONG_MAX,
  messageTimestampDifferenceMaxMs: LONG_MAX,
  compressionType: "producer",
  preallocate: false,
});

/** A bad topic config value; the message is one line naming the key, the value and what was expected. */
export class InvalidLogConfigError extends Error {
  constructor(
    readonly key: string,
    readonly value: string,
    readonly expected: string,
  ) {
    super(`Invalid value ${JSON.stringify(value)} for configuration ${key}: expected ${expected}`);
    this.name = "InvalidLogConfigError";
  }
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const INT_MAX = 2147483647;

/**
 * An integer setting in [min, max]. `max` NEVER_MS marks Kafka's Long settings (times, sizes): the range
 * said and checked is then [min, Long.MAX_VALUE], and values past the safe-integer range (Long.MAX means
 * "never") are kept as NEVER_MS.
 */
function parseInteger(key: string, value: string, min: number, max: number): number {
  const v = value.trim();
  const upper = max === NEVER_MS ? LONG_MAX : BigInt(max);
  const expected = `${max === NEVER_MS ? "a long" : "an integer"} in [${min}, ${upper}]`;
  if (!/^-?\d+$/.test(v)) throw new InvalidLogConfigError(key, value, expected);
  const big = BigInt(v);
  if (big < BigInt(min) || big > upper) throw new InvalidLogConfigError(key, value, expected);
  return big >= BigInt(NEVER_MS) ? NEVER_MS : Number(big);
}

function parseLong(key: string, value: string, min: bigint): bigint {
  const v = value.trim();
  if (!/^-?\d+$/.test(v)) throw new InvalidLogConfigError(key, value, `a long >= ${min}`);
  const big = BigInt(v);
  if (big < min || big > LONG_MAX)
    throw new InvalidLogConfigError(key, value, `a long in [${min}, ${LONG_MAX}]`);
  return big;
}

function parseDouble(key: string, value: string, min: number, max: number): number {
  const v = value.trim();
  const n = Number(v);
  if (v === "" || !Number.isFinite(n) || n < min || n > max) {
    throw new InvalidLogConfigError(key, value, `a number in [${min}, ${max}]`);
  }
  return n;
}

function parseBoolean(key: string, value: string): boolean {
  const v = value.trim().toLowerCase();
  if (v === "true") return true;
  if (v === "false") return false;
  throw new InvalidLogConfigError(key, value, "true or false");
}

/** Parsers for each supported key, in Kafka's names. */
const PARSERS: Record<string, (cfg: Mutable<LogConfig>, key: string, value: string) => void> = {
  "segment.bytes": (c, k, v) => {
    c.segmentBytes = parseInteger(k, v, 14, INT_MAX); // Kafka: at least LegacyRecord.RECORD_OVERHEAD_V0
  },
  "segment.ms": (c, k, v) => {
    c.segmentMs = parseInteger(k, v, 1, NEVER_MS);
  },
  "segment.jitter.ms": (c, k, v) => {
    c.segmentJitterMs = parseInteger(k, v, 0, NEVER_MS);
  },
  "segment.index.bytes": (c, k, v) => {
    c.segmentIndexBytes = parseInteger(k, v, 4, INT_MAX);
  },
  "index.interval.bytes": (c, k, v) => {
    c.indexIntervalBytes = parseInteger(k, v, 0, INT_MAX);
  },
  "retention.ms": (c, k, v) => {
    c.retentionMs = parseInteger(k, v, -1, NEVER_MS);
  },
  "retention.bytes": (c, k, v) => {
    c.retentionBytes = parseInteger(k, v, -1, NEVER_MS);
  },
  "cleanup.policy": (c, k, v) => {
    const parts = v
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "");
    if (parts.length === 0 || parts.some((p) => p !== "delete" && p !== "compact")) {
      throw new InvalidLogConfigError(k, v, "a list of delete and/or compact");
    }
    c.cleanupPolicy = [...new Set(parts as CleanupPolicy[])];
  },
  "delete.retention.ms": (c, k, v) => {
    c.deleteRetentionMs = parseInteger(k, v, 0, NEVER_MS);
  },
  "min.cleanable.dirty.ratio": (c, k, v) => {
    c.minCleanableDirtyRatio = parseDouble(k, v, 0, 1);
  },
  "min.compaction.lag.ms": (c, k, v) => {
    c.minCompactionLagMs = parseInteger(k, v, 0, NEVER_MS);
  },
  "max.compaction.lag.ms": (c, k, v) => {
    c.maxCompactionLagMs = parseInteger(k, v, 1, NEVER_MS);
  },
  "flush.messages": (c, k, v) => {
    c.flushMessages = parseLong(k, v, 1n);
  },
  "flush.ms": (c, k, v) => {
    c.flushMs = parseInteger(k, v, 0, NEVER_MS);
  },
  "file.delete.delay.ms": (c, k, v) => {
    c.fileDeleteDelayMs = parseInteger(k, v, 0, NEVER_MS);
  },
  "max.message.bytes": (c, k, v) => {
    c.maxMessageBytes = parseInteger(k, v, 0, INT_MAX);
  },
  "message.timestamp.type": (c, k, v) => {
    const t = v.trim();
    if (t !== "CreateTime" && t !== "LogAppendTime") {
      throw new InvalidLogConfigError(k, v, "CreateTime or LogAppendTime");
    }
    c.messageTimestampType = t;
  },
  "message.timestamp.before.max.ms": (c, k, v) => {
    c.messageTimestampBeforeMaxMs = parseLong(k, v, 0n);
  },
  "message.timestamp.after.max.ms": (c, k, v) => {
    c.messageTimestampAfterMaxMs = parseLong(k, v, 0n);
  },
  "message.timestamp.difference.max.ms": (c, k, v) => {
    c.messageTimestampDifferenceMaxMs = parseLong(k, v, 0n);
  },
  "compression.type": (c, k, v) => {
    const t = v.trim().toLowerCase();
    if (!TOPIC_COMPRESSION_TYPES.includes(t)) {
      throw new InvalidLogConfigError(k, v, `one of ${TOPIC_COMPRESSION_TYPES.join(", ")}`);
    }
    c.compressionType = t as TopicCompressionType;
  },
  preallocate: (c, k, v) => {
    c.preallocate = parseBoolean(k, v);
  },
};

/** The topic config keys this LogConfig understands. */
export const LOG_CONFIG_KEYS: readonly string[] = Object.keys(PARSERS);

/**
 * Builds a LogConfig from Kafka topic properties over `base` (default: Kafka's defaults). Unknown keys
 * are ignored (they belong to other layers: min.insync.replicas, compression.type, ...). Throws
 * InvalidLogConfigError naming the key, the value and what was expected.
 */
export function logConfigFrom(
  props: Record<string, string>,
  base: LogConfig = DEFAULT_LOG_CONFIG,
): LogConfig {
  const cfg: Mutable<LogConfig> = { ...base };
  for (const [key, value] of Object.entries(props)) {
    const parse = PARSERS[key];
    if (parse) parse(cfg, key, String(value));
  }
  return Object.freeze(cfg);
}

/** True when cleanup.policy contains compact. */
export function isCompacted(config: LogConfig): boolean {
  return config.cleanupPolicy.includes("compact");
}

/**
 * The effective message.timestamp.before.max.ms (Kafka 3.6+ LogConfig): while it is left at Long.MAX, the
 * deprecated message.timestamp.difference.max.ms applies.
 */
export function messageTimestampBeforeMaxMsOf(config: LogConfig): bigint {
  return config.messageTimestampBeforeMaxMs !== LONG_MAX
    ? config.messageTimestampBeforeMaxMs
    : config.messageTimestampDifferenceMaxMs;
}

/** The effective message.timestamp.after.max.ms (difference.max.ms while it is left at Long.MAX). */
export function messageTimestampAfterMaxMsOf(config: LogConfig): bigint {
  return config.messageTimestampAfterMaxMs !== LONG_MAX
    ? config.messageTimestampAfterMaxMs
    : config.messageTimestampDifferenceMaxMs;
}

/** True when cleanup.policy contains delete. */
export function isDeleteEnabled(config: LogConfig): boolean {
  return config.cleanupPolicy.includes("delete");
}

/**
 * Broker-level synonyms of each topic key (Kafka's ServerTopicConfigSynonyms), highest priority first,
 * with the factor that turns the broker unit into the topic unit (hours/minutes → ms).
 */
export const BROKER_SYNONYMS: Readonly<Record<string, ReadonlyArray<readonly [string, number]>>> = {
  "segment.bytes": [["log.segment.bytes", 1]],
  "segment.ms": [
    ["log.roll.ms", 1],
    ["log.roll.hours", 3_600_000],
  ],
  "segment.jitter.ms": [
    ["log.roll.jitter.ms", 1],
    ["log.roll.jitter.hours", 3_600_000],
  ],
  "segment.index.bytes": [["log.index.size.max.bytes", 1]],
  "index.interval.bytes": [["log.index.interval.bytes", 1]],
  "retention.ms": [
    ["log.retention.ms", 1],
    ["log.retention.minutes", 60_000],
    ["log.retention.hours", 3_600_000],
  ],
  "retention.bytes": [["log.retention.bytes", 1]],
  "cleanup.policy": [["log.cleanup.policy", 1]],
  "delete.retention.ms": [["log.cleaner.delete.retention.ms", 1]],
  "min.cleanable.dirty.ratio": [["log.cleaner.min.cleanable.ratio", 1]],
  "min.compaction.lag.ms": [["log.cleaner.min.compaction.lag.ms", 1]],
  "max.compaction.lag.ms": [["log.cleaner.max.compaction.lag.ms", 1]],
  "flush.messages": [["log.flush.interval.messages", 1]],
  "flush.ms": [
    ["log.flush.interval.ms", 1],
    ["log.flush.scheduler.interval.ms", 1],
  ],
  "file.delete.delay.ms": [["log.segment.delete.delay.ms", 1]],
  "max.message.bytes": [["message.max.bytes", 1]],
  "message.timestamp.type": [["log.message.timestamp.type", 1]],
  "message.timestamp.before.max.ms": [["log.message.timestamp.before.max.ms", 1]],
  "message.timestamp.after.max.ms": [["log.message.timestamp.after.max.ms", 1]],
  "message.timestamp.difference.max.ms": [["log.message.timestamp.difference.max.ms", 1]],
  "compression.type": [["compression.type", 1]],
  preallocate: [["log.preallocate", 1]],
};

/**
 * The broker's default LogConfig from server.properties keys (`log.segment.bytes`, `log.retention.hours`,
 * `log.flush.interval.messages`, …): for each topic key the highest-priority synonym present wins, as in
 * Kafka (log.retention.ms over .minutes over .hours). Errors name the broker key.
 */
export function brokerLogConfigFrom(props: Record<string, string>): LogConfig {
  const cfg: Mutable<LogConfig> = { ...DEFAULT_LOG_CONFIG };
  for (const [topicKey, synonyms] of Object.entries(BROKER_SYNONYMS)) {
    const found = synonyms.find(([brokerKey]) => props[brokerKey] !== undefined);
    if (!found) continue;
    const [brokerKey, factor] = found;
    const raw = String(props[brokerKey]).trim();
    let value = raw;
    if (factor !== 1) {
      if (!/^-?\d+$/.test(raw)) throw new InvalidLogConfigError(brokerKey, raw, "an integer");
      const n = BigInt(raw);
      value = n < 0n ? "-1" : String(n * BigInt(factor));
    }
    try {
      PARSERS[topicKey](cfg, topicKey, value);
    } catch (e) {
      if (e instanceof InvalidLogConfigError) throw new InvalidLogConfigError(brokerKey, raw, e.expected);
      throw e;
    }
  }
  return Object.freeze(cfg);
}
