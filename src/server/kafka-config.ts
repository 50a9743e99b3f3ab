// KafkaConfig: the broker's configuration (Kafka's KafkaConfig) from a server.properties file plus
// `--override key=value` pairs, with Kafka's key names and defaults for what a single broker needs.
// Owns: the table of known broker keys (type, default, valid range), the typed fields the server reads,
// listener parsing and validation, and the derived LogManagerConfig / default LogConfig.
//
// Behaviour as Kafka's:
// - Unknown keys are kept and warned about once each: "The configuration 'x' was supplied but isn't a
//   known config." (AbstractConfig.logUnused).
// - An invalid value throws ConfigException whose one-line message names the key, the value and what was
//   expected ("Invalid value abc for configuration num.partitions: expected an integer >= 1").
// - broker.id: Kafka's default -1 means "generate one from ZooKeeper" (broker.id.generation.enable). The
//   embedded single node has nobody to generate ids, so Tributary uses 0 when broker.id is unset or -1 and
//   zookeeper.connect is absent.
// - zookeeper.connect absent → the embedded (file-backed) metadata store, one-node cluster.
// - num.network.threads / num.io.threads / background.threads are accepted and validated but do not apply:
//   Node runs the network and request handling on one event loop.
// - offsets.topic.*, transaction.state.log.*, group.* and replica.* are accepted with Kafka's defaults for
//   the layers that use them later.

import { readFileSync } from "node:fs";
import { Logger } from "../common/logger.js";
import { SslConfigError, type SslOptions, serverSslOptions } from "../common/ssl-engine-factory.js";
import { parseProperties } from "../storage/checkpoint/broker-metadata.js";
import type { CleanerConfig } from "../storage/cleaner/cleaner-config.js";
import {
  BROKER_SYNONYMS,
  brokerLogConfigFrom,
  InvalidLogConfigError,
  type LogConfig,
  NEVER_MS,
} from "../storage/log-config.js";
import type { LogManagerConfig } from "../storage/log-manager.js";
import {
  type InterBrokerSecurity,
  InterBrokerSecurityError,
  interBrokerSecurity,
} from "./inter-broker-security.js";
import { type MetricsListener, parseMetricsListener } from "./metrics/metrics-http-server.js";
import { AUTHORIZER_CLASS_NAMES } from "./security/authorizer/acl-authorizer.js";
import type { CredentialCache } from "./security/credential-cache.js";
import { SaslConfigError, saslListenerConfig } from "./security/sasl-config.js";
import type { SaslListenerConfig } from "./security/sasl-server-authenticator.js";
import { SslPrincipalMapper, SslPrincipalMapperError } from "./security/ssl-principal-mapper.js";

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

type ConfigType = "int" | "long" | "short" | "double" | "boolean" | "string" | "list" | "password";

interface ConfigKey {
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
const LOG_SYNONYM_KEYS = new Set(Object.values(BROKER_SYNONYMS).flatMap((s) => s.map(([k]) => k)));

export function isKnownBrokerConfig(key: string): boolean {
  if (LISTENER_JAAS_KEY.test(key)) return true;
  const listenerSsl = LISTENER_SSL_KEY.exec(key);
  if (listenerSsl !== null) return listenerSsl[1] in BROKER_CONFIG_DEFS;
  return key in BROKER_CONFIG_DEFS || LOG_SYNONYM_KEYS.has(key);
}

export interface EndPoint {
  /** e.g. "PLAINTEXT" (upper case, as Kafka normalises listener names). */
  readonly listenerName: string;
  /** "" = all interfaces (bind) / the host's name (advertise). */
  readonly host: string;
  /** 0 = an ephemeral port (tests). */
  readonly port: number;
  readonly securityProtocol: string;
}

const LISTENER_RE = /^([^:/]*):\/\/\[?([0-9a-zA-Z\-%._:]*?)\]?:(-?[0-9]+)$/;

/** `listener.security.protocol.map`: "NAME:PROTOCOL,…". */
export function parseSecurityProtocolMap(key: string, value: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")) {
    const m = /^([^:]+):([^:]+)$/.exec(entry);
    const protocol = m?.[2].trim().toUpperCase();
    if (!m || !protocol || !["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"].includes(protocol)) {
      throw ConfigException.invalid(
        key,
        value,
        "a list of LISTENER_NAME:SECURITY_PROTOCOL with PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL",
      );
    }
    out.set(m[1].trim().toUpperCase(), protocol);
  }
  return out;
}

/** Parses `NAME://host:port,…` (Kafka's CoreUtils.listenerListToEndPoints) and checks it. */
export function parseListeners(
  key: string,
  value: string,
  protocolMap: ReadonlyMap<string, string>,
): EndPoint[] {
  const endpoints: EndPoint[] = [];
  const entries = value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  for (const entry of entries) {
    const m = LISTENER_RE.exec(entry);
    if (!m) {
      throw ConfigException.invalid(key, value, `listeners of the form NAME://host:port, got '${entry}'`);
    }
    const listenerName = m[1].toUpperCase();
    const port = Number(m[3]);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw ConfigException.invalid(key, value, `a port in [0, 65535] in '${entry}'`);
    }
    const securityProtocol = protocolMap.get(listenerName);
    if (securityProtocol === undefined) {
      throw ConfigException.invalid(
        key,
        value,
        `listener name ${listenerName} to be in listener.security.protocol.map (${[...protocolMap.keys()].join(", ")})`,
      );
    }
    endpoints.push({ listenerName, host: m[2], port, securityProtocol });
  }
  const names = new Set<string>();
  for (const e of endpoints) {
    if (names.has(e.listenerName)) {
      throw ConfigException.invalid(key, value, `each listener name once (${e.listenerName} is repeated)`);
    }
    names.add(e.listenerName);
  }
  return endpoints;
}

export function endpointString(e: EndPoint): string {
  const host = e.host.includes(":") ? `[${e.host}]` : e.host;
  return `${e.listenerName}://${host}:${e.port}`;
}

function parseValue(key: string, def: ConfigKey, raw: string): unknown {
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

export interface KafkaConfigOptions {
  /** Where the unknown-key warnings go (default: the kafka.server.KafkaConfig logger). */
  readonly logger?: Logger;
}

export class KafkaConfig {
  /** Every supplied key/value (file, then overrides), as given. */
  readonly originals: ReadonlyMap<string, string>;
  private readonly values = new Map<string, unknown>();

  /** broker.id; -1 in ZooKeeper mode until the broker generates one at startup (broker.id.generation.enable). */
  brokerId: number;
  readonly brokerRack: string | null;
  readonly zookeeperConnect: string | null;
  readonly listenerSecurityProtocolMap: ReadonlyMap<string, string>;
  readonly listeners: readonly EndPoint[];
  /** advertised.listeners, defaulting to listeners (port 0 / empty host are resolved by the server at bind). */
  readonly advertisedListeners: readonly EndPoint[];
  readonly interBrokerListenerName: string;
  /** control.plane.listener.name: where the controller sends its requests (null: the inter-broker listener). */
  readonly controlPlaneListenerName: string | null;
  /** TLS and SASL of this broker's connections to its peers on the inter-broker listener. */
  readonly interBrokerSecurity: InterBrokerSecurity;
  /** The same for the controller's connections (the control-plane listener's when set). */
  readonly controlPlaneSecurity: InterBrokerSecurity;
  readonly logDirs: readonly string[];
  readonly numPartitions: number;
  readonly defaultReplicationFactor: number;
  readonly autoCreateTopicsEnable: boolean;
  readonly deleteTopicEnable: boolean;
  readonly messageMaxBytes: number;
  readonly socketRequestMaxBytes: number;
  readonly socketSendBufferBytes: number;
  readonly socketReceiveBufferBytes: number;
  readonly socketListenBacklogSize: number;
  readonly connectionsMaxIdleMs: number;
  readonly queuedMaxRequests: number;
  readonly queuedMaxRequestBytes: number;
  readonly saslServerMaxReceiveSize: number;
  readonly socketRequestReceiveTimeoutMs: number;
  readonly logRetentionCheckIntervalMs: number;
  readonly logFlushOffsetCheckpointIntervalMs: number;
  readonly logFlushStartOffsetCheckpointIntervalMs: number;
  readonly logFlushSchedulerIntervalMs: number;
  readonly replicaHighWatermarkCheckpointIntervalMs: number;
  readonly cleanerConfig: CleanerConfig;
  /** The broker's default topic config from the log.* keys (brokerLogConfigFrom). */
  readonly defaultLogConfig: LogConfig;
  /** Keys supplied that Tributary does not know (each warned about once). */
  readonly unknownKeys: readonly string[];
  /** metrics.http.listener parsed; null when disabled (""). */
  readonly metricsHttpListener: MetricsListener | null;

  constructor(props: ReadonlyMap<string, string> | Record<string, string>, options: KafkaConfigOptions = {}) {
    const originals = props instanceof Map ? new Map(props) : new Map(Object.entries(props));
    this.originals = originals;
    const logger = options.logger ?? new Logger("kafka.server.KafkaConfig");

    const unknown: string[] = [];
    for (const key of originals.keys()) if (!isKnownBrokerConfig(key)) unknown.push(key);
    this.unknownKeys = unknown;
    for (const key of unknown)
      logger.warn(`The configuration '${key}' was supplied but isn't a known config.`);

    for (const [key, def] of Object.entries(BROKER_CONFIG_DEFS)) {
      const raw = originals.get(key);
      if (raw !== undefined) this.values.set(key, parseValue(key, def, raw));
      else if (def.default !== null) this.values.set(key, parseValue(key, def, def.default));
      else this.values.set(key, null);
    }

    const zk = this.getString("zookeeper.connect");
    this.zookeeperConnect = zk === null || zk === "" ? null : zk;
    const configuredId = this.getInt("broker.id");
    if (configuredId < -1)
      throw ConfigException.invalid("broker.id", String(configuredId), "an integer >= -1");
    // Kafka generates an id from ZooKeeper when broker.id is -1; the embedded single node uses 0.
    this.brokerId = configuredId === -1 && this.zookeeperConnect === null ? 0 : configuredId;
    this.brokerRack = this.getString("broker.rack");

    this.listenerSecurityProtocolMap = parseSecurityProtocolMap(
      "listener.security.protocol.map",
      this.getString("listener.security.protocol.map") ?? "",
    );
    this.listeners = parseListeners(
      "listeners",
      originals.get("listeners") ?? "PLAINTEXT://:9092",
      this.listenerSecurityProtocolMap,
    );
    if (this.listeners.length === 0) throw ConfigException.invalid("listeners", "", "at least one listener");
    for (const e of this.listeners) {
      if (!["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"].includes(e.securityProtocol)) {
        throw ConfigException.invalid(
          "listeners",
          originals.get("listeners") ?? "",
          `PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL listeners (${e.listenerName} uses ${e.securityProtocol})`,
        );
      }
      // A TLS or SASL listener's settings are read now: a bad one stops the broker at startup.
      if (e.securityProtocol === "SSL" || e.securityProtocol === "SASL_SSL")
        this.sslOptionsFor(e.listenerName);
      if (e.securityProtocol.startsWith("SASL_")) this.saslConfigFor(e.listenerName);
      if (e.securityProtocol === "SSL") this.sslPrincipalMapperFor(e.listenerName);
    }
    const authorizer = this.getString("authorizer.class.name") ?? "";
    if (authorizer !== "" && !AUTHORIZER_CLASS_NAMES.includes(authorizer))
      throw ConfigException.invalid(
        "authorizer.class.name",
        authorizer,
        `empty (no authorizer) or one of ${AUTHORIZER_CLASS_NAMES.join(", ")}`,
      );
    const seenPorts = new Set<number>();
    for (const e of this.listeners) {
      if (e.port !== 0 && seenPorts.has(e.port)) {
        throw ConfigException.invalid("listeners", originals.get("listeners") ?? "", "each port used once");
      }
      seenPorts.add(e.port);
    }
    const advertised = originals.get("advertised.listeners");
    this.advertisedListeners =
      advertised === undefined
        ? this.listeners
        : parseListeners("advertised.listeners", advertised, this.listenerSecurityProtocolMap);
    for (const a of this.advertisedListeners) {
      if (advertised !== undefined && (a.host === "0.0.0.0" || a.host === "::")) {
        throw ConfigException.invalid(
          "advertised.listeners",
          advertised,
          `a routable host (${endpointString(a)} uses the non-routable meta-address ${a.host})`,
        );
      }
      if (!this.listeners.some((l) => l.listenerName === a.listenerName)) {
        throw ConfigException.invalid(
          "advertised.listeners",
          advertised ?? "",
          `listener names that are in listeners (${a.listenerName} is not)`,
        );
      }
    }
    const ibl = this.getString("inter.broker.listener.name");
    if (ibl !== null) {
      if (originals.has("security.inter.broker.protocol")) {
        throw new ConfigException(
          "Only one of inter.broker.listener.name and security.inter.broker.protocol should be set.",
        );
      }
      this.interBrokerListenerName = ibl.toUpperCase();
    } else {
      this.interBrokerListenerName = this.getString("security.inter.broker.protocol") ?? "PLAINTEXT";
    }
    if (!this.advertisedListeners.some((a) => a.listenerName === this.interBrokerListenerName)) {
      throw ConfigException.invalid(
        "inter.broker.listener.name",
        this.interBrokerListenerName,
        `a listener name in advertised.listeners (${this.advertisedListeners.map((a) => a.listenerName).join(", ")})`,
      );
    }

    const cpl = this.getString("control.plane.listener.name");
    this.controlPlaneListenerName = cpl === null || cpl === "" ? null : cpl.toUpperCase();
    if (this.controlPlaneListenerName !== null) {
      if (!this.advertisedListeners.some((a) => a.listenerName === this.controlPlaneListenerName)) {
        throw ConfigException.invalid(
          "control.plane.listener.name",
          this.controlPlaneListenerName,
          `a listener name in advertised.listeners (${this.advertisedListeners.map((a) => a.listenerName).join(", ")})`,
        );
      }
      if (this.controlPlaneListenerName === this.interBrokerListenerName) {
        throw new ConfigException(
          "control.plane.listener.name, inter.broker.listener.name should be different, but both are set to " +
            this.controlPlaneListenerName,
        );
      }
    }

    // How this broker connects to its peers (in a cluster): the inter-broker (and control-plane) listener's
    // TLS and SASL, read now so that a bad setting stops the broker at startup.
    const clustered = this.zookeeperConnect !== null;
    this.interBrokerSecurity = clustered ? this.clientSecurityFor(this.interBrokerListenerName) : {};
    this.controlPlaneSecurity =
      this.controlPlaneListenerName === null || !clustered
        ? this.interBrokerSecurity
        : this.clientSecurityFor(this.controlPlaneListenerName);

    const dirs = (this.values.get("log.dirs") as string[] | null) ?? (this.values.get("log.dir") as string[]);
    if (dirs.length === 0) throw ConfigException.invalid("log.dirs", "", "at least one directory");
    this.logDirs = dirs;

    this.numPartitions = this.getInt("num.partitions");
    this.defaultReplicationFactor = this.getInt("default.replication.factor");
    this.autoCreateTopicsEnable = this.getBoolean("auto.create.topics.enable");
    this.deleteTopicEnable = this.getBoolean("delete.topic.enable");
    this.messageMaxBytes = this.getInt("message.max.bytes");
    this.socketRequestMaxBytes = this.getInt("socket.request.max.bytes");
    this.socketSendBufferBytes = this.getInt("socket.send.buffer.bytes");
    this.socketReceiveBufferBytes = this.getInt("socket.receive.buffer.bytes");
    this.socketListenBacklogSize = this.getInt("socket.listen.backlog.size");
    this.connectionsMaxIdleMs = this.getLong("connections.max.idle.ms");
    this.queuedMaxRequests = this.getInt("queued.max.requests");
    this.queuedMaxRequestBytes = Number(this.getLong("queued.max.request.bytes"));
    this.saslServerMaxReceiveSize = this.getInt("sasl.server.max.receive.size");
    this.socketRequestReceiveTimeoutMs = Number(this.getLong("socket.request.receive.timeout.ms"));
    this.logRetentionCheckIntervalMs = this.getLong("log.retention.check.interval.ms");
    this.logFlushOffsetCheckpointIntervalMs = this.getInt("log.flush.offset.checkpoint.interval.ms");
    this.logFlushStartOffsetCheckpointIntervalMs = this.getInt(
      "log.flush.start.offset.checkpoint.interval.ms",
    );
    this.logFlushSchedulerIntervalMs = this.getLong("log.flush.scheduler.interval.ms");
    this.replicaHighWatermarkCheckpointIntervalMs = this.getLong(
      "replica.high.watermark.checkpoint.interval.ms",
    );
    this.cleanerConfig = Object.freeze({
      numThreads: this.getInt("log.cleaner.threads"),
      dedupeBufferSize: this.getLong("log.cleaner.dedupe.buffer.size"),
      dedupeBufferLoadFactor: this.getDouble("log.cleaner.io.buffer.load.factor"),
      ioBufferSize: this.getInt("log.cleaner.io.buffer.size"),
      maxMessageSize: this.messageMaxBytes,
      maxIoBytesPerSecond: this.getDouble("log.cleaner.io.max.bytes.per.second"),
      backoffMs: this.getLong("log.cleaner.backoff.ms"),
      enableCleaner: this.getBoolean("log.cleaner.enable"),
    });

    // Unless configured, metrics are served where the first listener binds (all interfaces for
    // `PLAINTEXT://:9092`, loopback only for `PLAINTEXT://127.0.0.1:9092`), on the JMX exporter's port.
    const firstHost = this.listeners[0].host;
    const metricsValue =
      originals.get("metrics.http.listener") ??
      `http://${firstHost === "" ? "0.0.0.0" : firstHost.includes(":") ? `[${firstHost}]` : firstHost}:9404`;
    const metricsListener = parseMetricsListener(metricsValue);
    if (typeof metricsListener === "string")
      throw ConfigException.invalid("metrics.http.listener", metricsValue, metricsListener);
    this.metricsHttpListener = metricsListener;

    const logProps: Record<string, string> = {};
    for (const [k, v] of originals) if (LOG_SYNONYM_KEYS.has(k)) logProps[k] = v;
    try {
      this.defaultLogConfig = brokerLogConfigFrom(logProps);
    } catch (e) {
      if (e instanceof InvalidLogConfigError) throw ConfigException.invalid(e.key, e.value, e.expected);
      throw e;
    }
  }

  /** Reads a server.properties file (optional) and applies `key=value` overrides in order. */
  static load(
    file: string | undefined,
    overrides: readonly string[],
    options: KafkaConfigOptions = {},
  ): KafkaConfig {
    const props = new Map<string, string>();
    if (file !== undefined) {
      let text: string;
      try {
        text = readFileSync(file, "utf8");
      } catch (e) {
        throw new ConfigException(
          `Cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
        );
      }
      for (const [k, v] of parseProperties(text, file)) props.set(k, v);
    }
    for (const o of overrides) {
      const eq = o.indexOf("=");
      if (eq <= 0) throw new ConfigException(`Invalid --override ${o}: expected key=value`);
      props.set(o.slice(0, eq).trim(), o.slice(eq + 1));
    }
    return new KafkaConfig(props, options);
  }

  /**
   * A listener's TLS options: its `listener.name.<listener>.ssl.*` settings, else the broker's `ssl.*`
   * (Kafka's listener prefix). A bad setting is a ConfigException.
   */
  sslOptionsFor(listenerName: string): SslOptions {
    const prefix = `listener.name.${listenerName.toLowerCase()}.`;
    const get = (key: string): string | undefined =>
      this.originals.get(prefix + key) ?? this.originals.get(key);
    try {
      return serverSslOptions(get);
    } catch (e) {
      if (e instanceof SslConfigError) throw new ConfigException(e.message);
      throw e;
    }
  }

  /** An SSL listener's ssl.principal.mapping.rules (its listener-prefixed value first). */
  sslPrincipalMapperFor(listenerName: string): SslPrincipalMapper {
    const key = `listener.name.${listenerName.toLowerCase()}.ssl.principal.mapping.rules`;
    const value = this.originals.get(key) ?? this.getString("ssl.principal.mapping.rules") ?? "DEFAULT";
    try {
      return SslPrincipalMapper.fromRules(value);
    } catch (e) {
      if (e instanceof SslPrincipalMapperError)
        throw ConfigException.invalid("ssl.principal.mapping.rules", value, e.message);
      throw e;
    }
  }

  /**
   * The client side of a listener, for this broker's connections to its peers on it (inter-broker-security.ts);
   * a bad setting is a ConfigException.
   */
  clientSecurityFor(listenerName: string): InterBrokerSecurity {
    const listener = this.listeners.find((l) => l.listenerName === listenerName);
    const protocol =
      listener?.securityProtocol ?? this.listenerSecurityProtocolMap.get(listenerName) ?? "PLAINTEXT";
    const enabled = protocol.startsWith("SASL_")
      ? [...this.saslConfigFor(listenerName).mechanisms.keys()]
      : [];
    try {
      return interBrokerSecurity(listenerName, protocol, (key) => this.originals.get(key), enabled);
    } catch (e) {
      if (e instanceof InterBrokerSecurityError) throw new ConfigException(e.message);
      throw e;
    }
  }

  /**
   * A SASL listener's mechanisms (server/security/sasl-config.ts), SCRAM over `credentials`; a bad
   * setting is a ConfigException.
   */
  saslConfigFor(listenerName: string, credentials?: CredentialCache): SaslListenerConfig {
    try {
      return saslListenerConfig(listenerName, (key) => this.originals.get(key), credentials);
    } catch (e) {
      if (e instanceof SaslConfigError) throw new ConfigException(e.message);
      throw e;
    }
  }

  /** The effective value of a known key (parsed; null when unset without default), or undefined if unknown. */
  get(key: string): unknown {
    return this.values.get(key);
  }

  /** The effective value of a key as Kafka prints it (DescribeConfigs), or null when it has none. */
  valueString(key: string): string | null {
    const raw = this.originals.get(key);
    if (raw !== undefined) return raw.trim();
    return BROKER_CONFIG_DEFS[key]?.default ?? null;
  }

  /** True when the key was supplied (file or override) rather than defaulted. */
  isSupplied(key: string): boolean {
    return this.originals.has(key);
  }

  getInt(key: string): number {
    return this.values.get(key) as number;
  }

  getLong(key: string): number {
    return this.values.get(key) as number;
  }

  getDouble(key: string): number {
    return this.values.get(key) as number;
  }

  getBoolean(key: string): boolean {
    return this.values.get(key) as boolean;
  }

  getString(key: string): string | null {
    return (this.values.get(key) as string | null) ?? null;
  }

  getList(key: string): readonly string[] {
    return (this.values.get(key) as string[] | null) ?? [];
  }

  /** What the LogManager takes from this config; clusterId comes from the metadata layer. */
  logManagerConfig(clusterId: string | null): LogManagerConfig {
    return {
      logDirs: this.logDirs,
      brokerId: this.brokerId,
      clusterId,
      defaultLogConfig: this.defaultLogConfig,
      retentionCheckIntervalMs: this.logRetentionCheckIntervalMs,
      recoveryPointCheckpointIntervalMs: this.logFlushOffsetCheckpointIntervalMs,
      logStartOffsetCheckpointIntervalMs: this.logFlushStartOffsetCheckpointIntervalMs,
      flushCheckIntervalMs: this.logFlushSchedulerIntervalMs,
      cleanerConfig: this.cleanerConfig,
      logDirSpaceReserveBytes: this.getLong("log.dir.space.reserve.bytes"),
      logDirFullProbeIntervalMs: this.getLong("log.dir.full.probe.interval.ms"),
      producerIdExpirationMs: this.getInt("producer.id.expiration.ms"),
      // Kafka's internal producer.id.expiration.check.interval.ms (not described by DescribeConfigs).
      producerIdExpirationCheckIntervalMs: positiveIntOr(
        this.originals.get("producer.id.expiration.check.interval.ms"),
        600000,
      ),
    };
  }
}

/** `value` as a positive integer, else `fallback` (for internal keys outside BROKER_CONFIG_DEFS). */
function positiveIntOr(value: string | undefined, fallback: number): number {
  const n = value === undefined ? Number.NaN : Number(value.trim());
  return Number.isSafeInteger(n) && n > 0 ? n : fallback;
}
