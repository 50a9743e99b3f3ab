// KafkaConfig's ConfigDef: the table of broker keys Tributary knows (Kafka's KafkaConfig.configDef), each
// with Kafka's type, default and valid range, and the parsing of one value against it (ConfigDef.parseType):
// an invalid value is a ConfigException whose one-line message names the key, the value and what was
// expected ("Invalid value abc for configuration num.partitions: expected an integer >= 1").
// Known besides the table: every broker synonym of a topic config (log.segment.bytes, …, validated by
// brokerLogConfigFrom) and the listener-prefixed TLS/SASL keys (`listener.name.<l>.ssl.*`, …).

import { BROKER_SYNONYMS, NEVER_MS } from "../storage/log-config.js";

/** A bad configuration value or file; the message is one line. */
export class ConfigException extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigException";
  }

  static invalid(key: string, value: string, expected: string): ConfigException {
    return new ConfigException(`Invalid value ${value} for configuration ${key}: expected ${expected}`);
  }
}

export type ConfigType = "int" | "long" | "short" | "double" | "boolean" | "string" | "list" | "password";

export interface ConfigKey {
  readonly type: ConfigType;
  /** Kafka's default as its string form, or null for "no default". */
  readonly default: string | null;
  readonly min?: number;
  readonly max?: number;
  readonly oneOf?: readonly string[];
}

const INT_MAX = 2147483647;
const LONG_MAX_STR = "9223372036854775807";

const int = (def: number | null, min?: number, max?: number): ConfigKey => ({
  type: "int",
  default: def === null ? null : String(def),
  min,
  max,
});
const long = (def: number | string | null, min?: number): ConfigKey => ({
  type: "long",
  default: def === null ? null : String(def),
  min,
});
const short = (def: number, min?: number): ConfigKey => ({ type: "short", default: String(def), min });
const bool = (def: boolean): ConfigKey => ({ type: "boolean", default: String(def) });
const str = (def: string | null, oneOf?: readonly string[]): ConfigKey => ({
  type: "string",
  default: def,
  oneOf,
});
const list = (def: string | null): ConfigKey => ({ type: "list", default: def });
const double = (def: number, min?: number, max?: number): ConfigKey => ({
  type: "double",
  default: String(def),
  min,
  max,
});

export const DEFAULT_LISTENER_SECURITY_PROTOCOL_MAP =
  "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL";

/** Broker keys Tributary knows, with Kafka's types, defaults and validators (KafkaConfig.configDef). */
export const BROKER_CONFIG_DEFS: Readonly<Record<string, ConfigKey>> = {
  // ---- general ----
  "broker.id": int(-1),
  "broker.id.generation.enable": bool(true),
  "reserved.broker.max.id": int(1000, 0),
  "broker.rack": str(null),
  "message.max.bytes": int(1048588, 0),
  "num.network.threads": int(3, 1),
  "num.io.threads": int(8, 1),
  "background.threads": int(10, 1),
  "queued.max.requests": int(500, 1),
  // Kafka: -1 (unbounded). Bounded here by default, so that what clients announce or leave half-sent
  // cannot take the broker's memory (socket-server.ts, README "Limits").
  "queued.max.request.bytes": long(104857600),
  "request.timeout.ms": int(30000, 0),
  "auto.create.topics.enable": bool(true),
  "delete.topic.enable": bool(true),
  "num.partitions": int(1, 1),
  "default.replication.factor": int(1, 1),
  "min.insync.replicas": int(1, 1),
  "compression.type": str("producer", ["uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"]),
  "unclean.leader.election.enable": bool(false),
  "auto.leader.rebalance.enable": bool(true),
  "leader.imbalance.per.broker.percentage": int(10),
  "leader.imbalance.check.interval.seconds": long(300, 1),
  "controlled.shutdown.enable": bool(true),
  "controlled.shutdown.max.retries": int(3),
  "controlled.shutdown.retry.backoff.ms": long(5000),
  "controller.socket.timeout.ms": int(30000),
  "inter.broker.protocol.version": str("3.7-IV4"),
  "log.message.format.version": str("3.0-IV1"),
  "metadata.max.age.ms": long(300000),
  // ---- ZooKeeper (absent: embedded metadata store) ----
  "zookeeper.connect": str(null),
  "zookeeper.session.timeout.ms": int(18000),
  "zookeeper.connection.timeout.ms": int(null),
  "zookeeper.max.in.flight.requests": int(10, 1),
  "zookeeper.set.acl": bool(false),
  // ---- socket server ----
  listeners: list("PLAINTEXT://:9092"),
  "advertised.listeners": list(null),
  "listener.security.protocol.map": str(DEFAULT_LISTENER_SECURITY_PROTOCOL_MAP),
  "inter.broker.listener.name": str(null),
  "security.inter.broker.protocol": str("PLAINTEXT", ["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]),
  "control.plane.listener.name": str(null),
  "socket.send.buffer.bytes": int(102400),
  "socket.receive.buffer.bytes": int(102400),
  "socket.request.max.bytes": int(104857600, 1),
  // Kafka: 50. With it, thousands of clients connecting at once (a deployment's restart) see connections
  // refused or dropped; 4096 is Linux's own default cap (net.core.somaxconn).
  "socket.listen.backlog.size": int(4096, 1),
  "max.connections": int(INT_MAX, 0),
  "max.connections.per.ip": int(INT_MAX, 0),
  "max.connections.per.ip.overrides": str(""),
  "connections.max.idle.ms": long(600000),
  // Tributary's: a request whose bytes have not all arrived this long after its size prefix closes its
  // connection (0: never).
  "socket.request.receive.timeout.ms": long(30000, 0),
  "connections.max.reauth.ms": long(0),
  "fetch.max.bytes": int(57671680, 1024),
  // ---- log manager (the log.* topic defaults are parsed by brokerLogConfigFrom) ----
  "log.dirs": list(null),
  "log.dir": list("/tmp/kafka-logs"),
  "num.recovery.threads.per.data.dir": int(1, 1),
  "log.retention.check.interval.ms": long(300000, 1),
  // Tributary's full log dirs (storage/log-dir-space.ts; docs/operations.md "When a disk fills up").
  "log.dir.space.reserve.bytes": long(8388608, 0),
  "log.dir.full.probe.interval.ms": long(5000, 1),
  "log.flush.offset.checkpoint.interval.ms": int(60000, 0),
  "log.flush.start.offset.checkpoint.interval.ms": int(60000, 0),
  "log.flush.scheduler.interval.ms": long(LONG_MAX_STR),
  "log.message.timestamp.difference.max.ms": long(LONG_MAX_STR),
  "log.message.timestamp.before.max.ms": long(LONG_MAX_STR, 0),
  "log.message.timestamp.after.max.ms": long(LONG_MAX_STR, 0),
  "log.message.downconversion.enable": bool(true),
  // Tiered storage (KIP-405): accepted, not applicable (no remote storage).
  "log.local.retention.ms": long(-2, -2),
  "log.local.retention.bytes": long(-2, -2),
  "log.cleaner.enable": bool(true),
  "log.cleaner.threads": int(1, 0),
  "log.cleaner.dedupe.buffer.size": long(134217728),
  "log.cleaner.io.buffer.size": int(524288, 0),
  "log.cleaner.io.buffer.load.factor": double(0.9),
  "log.cleaner.io.max.bytes.per.second": double(Number.MAX_VALUE),
  "log.cleaner.backoff.ms": long(15000, 0),
  // ---- replication ----
  "replica.high.watermark.checkpoint.interval.ms": long(5000),
  "replica.lag.time.max.ms": long(30000),
  "replica.socket.timeout.ms": int(30000),
  "replica.socket.receive.buffer.bytes": int(65536),
  "replica.fetch.max.bytes": int(1048576, 0),
  "replica.fetch.wait.max.ms": int(500),
  "replica.fetch.min.bytes": int(1),
  "replica.fetch.response.max.bytes": int(10485760, 0),
  "replica.fetch.backoff.ms": int(1000, 0),
  "num.replica.fetchers": int(1),
  "replica.selector.class": str(null),
  "fetch.purgatory.purge.interval.requests": int(1000),
  "producer.purgatory.purge.interval.requests": int(1000),
  "delete.records.purgatory.purge.interval.requests": int(1),
  // ---- group coordinator ----
  "group.min.session.timeout.ms": int(6000),
  "group.max.session.timeout.ms": int(1800000),
  "group.initial.rebalance.delay.ms": int(3000),
  "group.max.size": int(INT_MAX, 1),
  "offset.metadata.max.bytes": int(4096),
  "offsets.load.buffer.size": int(5242880, 1),
  "offsets.topic.replication.factor": short(3, 1),
  "offsets.topic.num.partitions": int(50, 1),
  "offsets.topic.segment.bytes": int(104857600, 1),
  "offsets.topic.compression.codec": int(0),
  "offsets.retention.minutes": int(10080, 1),
  "offsets.retention.check.interval.ms": long(600000, 1),
  "offsets.commit.timeout.ms": int(5000, 1),
  "offsets.commit.required.acks": short(-1),
  // KIP-848 consumer groups (group.consumer.*)
  "group.consumer.session.timeout.ms": int(45000, 1),
  "group.consumer.heartbeat.interval.ms": int(5000, 1),
  "group.consumer.max.size": int(INT_MAX, 1),
  "group.consumer.assignors": list("uniform,range"),
  // ---- transaction coordinator ----
  "transactional.id.expiration.ms": int(604800000, 1),
  "transaction.max.timeout.ms": int(900000, 1),
  "transaction.state.log.load.buffer.size": int(5242880, 1),
  "transaction.state.log.replication.factor": short(3, 1),
  "transaction.state.log.num.partitions": int(50, 1),
  "transaction.state.log.segment.bytes": int(104857600, 1),
  "transaction.state.log.min.isr": int(2, 1),
  "transaction.abort.timed.out.transaction.cleanup.interval.ms": int(10000, 1),
  "transaction.remove.expired.transaction.cleanup.interval.ms": int(3600000, 1),
  "producer.id.expiration.ms": int(86400000, 1),
  // ---- quotas / misc accepted for later ----
  "quota.window.num": int(11, 1),
  "quota.window.size.seconds": int(1, 1),
  // Replication throttles' rate windows (server/quota/; the rates themselves are dynamic broker configs).
  "replication.quota.window.num": int(11, 1),
  "replication.quota.window.size.seconds": int(1, 1),
  "alter.log.dirs.replication.quota.window.num": int(11, 1),
  "alter.log.dirs.replication.quota.window.size.seconds": int(1, 1),
  "authorizer.class.name": str(""),
  // AclAuthorizer's own settings (server/security/authorizer/): "User:a;User:b", and the answer without ACLs.
  "super.users": str(""),
  "allow.everyone.if.no.acl.found": bool(false),
  "metric.reporters": list(""),
  "metrics.num.samples": int(2, 1),
  "metrics.sample.window.ms": long(30000, 1),
  // Tributary-specific: the Prometheus /metrics endpoint (docs/metrics.md); "" disables it.
  "metrics.http.listener": str("http://0.0.0.0:9404"),
  // ---- TLS (SSL listeners; common/ssl-engine-factory.ts; `listener.name.<l>.ssl.*` per listener) ----
  "ssl.keystore.type": str("JKS"),
  "ssl.keystore.location": str(null),
  "ssl.keystore.password": { type: "password", default: null },
  "ssl.key.password": { type: "password", default: null },
  "ssl.keystore.key": { type: "password", default: null },
  "ssl.keystore.certificate.chain": { type: "password", default: null },
  "ssl.truststore.type": str("JKS"),
  "ssl.truststore.location": str(null),
  "ssl.truststore.password": { type: "password", default: null },
  "ssl.truststore.certificates": { type: "password", default: null },
  "ssl.client.auth": str("none", ["required", "requested", "none"]),
  "ssl.enabled.protocols": list("TLSv1.2,TLSv1.3"),
  "ssl.protocol": str("TLSv1.3"),
  "ssl.cipher.suites": list(""),
  "ssl.endpoint.identification.algorithm": str("https"),
  "ssl.principal.mapping.rules": str("DEFAULT"),
  // ---- SASL (SASL_PLAINTEXT / SASL_SSL listeners; server/security/) ----
  "sasl.enabled.mechanisms": list("GSSAPI"),
  "sasl.jaas.config": { type: "password", default: null },
  "sasl.mechanism.inter.broker.protocol": str("GSSAPI"),
  // Kafka 3.x: the largest frame read from a connection that has not authenticated (CVE-2022-34917).
  "sasl.server.max.receive.size": int(524288, 1),
};

/** `listener.name.<listener>.ssl.*` / `.sasl.*`: a listener's own settings (Kafka's listener prefix). */
const LISTENER_SSL_KEY = /^listener\.name\.[a-z0-9_]+\.(ssl\.[a-z.]+|sasl\.enabled\.mechanisms)$/;
/** `listener.name.<listener>.<mechanism>.sasl.jaas.config` / `.connections.max.reauth.ms`. */
const LISTENER_JAAS_KEY =
  /^listener\.name\.[a-z0-9_]+\.[a-z0-9-]+\.(sasl\.jaas\.config|connections\.max\.reauth\.ms)$/;

// Every broker synonym of a topic config (log.segment.bytes, log.retention.hours, …) and the remaining
// log.cleaner.* keys are known too; brokerLogConfigFrom validates them.
export const LOG_SYNONYM_KEYS = new Set(Object.values(BROKER_SYNONYMS).flatMap((s) => s.map(([k]) => k)));

export function isKnownBrokerConfig(key: string): boolean {
  if (LISTENER_JAAS_KEY.test(key)) return true;
  const listenerSsl = LISTENER_SSL_KEY.exec(key);
  if (listenerSsl !== null) return listenerSsl[1] in BROKER_CONFIG_DEFS;
  return key in BROKER_CONFIG_DEFS || LOG_SYNONYM_KEYS.has(key);
}

/** One value of a known key parsed and checked against its definition (Kafka's ConfigDef.parseType). */
export function parseConfigValue(key: string, def: ConfigKey, raw: string): unknown {
  const v = raw.trim();
  const range = (): string => {
    if (def.min !== undefined && def.max !== undefined) return ` in [${def.min}, ${def.max}]`;
    if (def.min !== undefined) return ` >= ${def.min}`;
    return "";
  };
  switch (def.type) {
    case "int":
    case "short":
    case "long": {
      const what = def.type === "long" ? "a long" : def.type === "short" ? "a short" : "an integer";
      if (!/^[-+]?\d+$/.test(v)) throw ConfigException.invalid(key, raw, `${what}${range()}`);
      const big = BigInt(v);
      const lim =
        def.type === "int"
          ? [-2147483648n, 2147483647n]
          : def.type === "short"
            ? [-32768n, 32767n]
            : [-9223372036854775808n, 9223372036854775807n];
      if (big < lim[0] || big > lim[1]) throw ConfigException.invalid(key, raw, `${what}${range()}`);
      if (
        (def.min !== undefined && big < BigInt(def.min)) ||
        (def.max !== undefined && big > BigInt(def.max))
      ) {
        throw ConfigException.invalid(key, raw, `${what}${range()}`);
      }
      // Long values past the safe range mean "never"/"unlimited" wherever Kafka uses Long.MAX.
      return big > BigInt(NEVER_MS) ? NEVER_MS : Number(big);
    }
    case "double": {
      const n = Number(v);
      if (v === "" || Number.isNaN(n)) throw ConfigException.invalid(key, raw, `a number${range()}`);
      if ((def.min !== undefined && n < def.min) || (def.max !== undefined && n > def.max)) {
        throw ConfigException.invalid(key, raw, `a number${range()}`);
      }
      return n;
    }
    case "boolean": {
      const b = v.toLowerCase();
      if (b !== "true" && b !== "false") throw ConfigException.invalid(key, raw, "true or false");
      return b === "true";
    }
    case "list":
      return v
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "");
    default:
      if (def.oneOf !== undefined) {
        const match = def.oneOf.find((o) => o.toLowerCase() === v.toLowerCase());
        if (match === undefined) throw ConfigException.invalid(key, raw, `one of ${def.oneOf.join(", ")}`);
        return match;
      }
      return v;
  }
}
