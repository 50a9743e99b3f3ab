// KafkaConfig: the broker's configuration (Kafka's KafkaConfig) from a server.properties file plus
// `--override key=value` pairs, with Kafka's key names and defaults for what a single broker needs.
// Owns: the effective value of every key, the typed fields the server reads, the checks across keys
// (listeners, advertised and inter-broker / control-plane listeners, TLS and SASL settings read at
// startup), and the derived LogManagerConfig / default LogConfig. The table of known keys and the parsing
// of one value are in kafka-config-def.ts; listener parsing in end-point.ts.
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
import { brokerLogConfigFrom, InvalidLogConfigError, type LogConfig } from "../storage/log-config.js";
import type { LogManagerConfig } from "../storage/log-manager.js";
import { type EndPoint, endpointString, parseListeners, parseSecurityProtocolMap } from "./end-point.js";
import {
  type InterBrokerSecurity,
  InterBrokerSecurityError,
  interBrokerSecurity,
} from "./inter-broker-security.js";
import {
  BROKER_CONFIG_DEFS,
  ConfigException,
  isKnownBrokerConfig,
  LOG_SYNONYM_KEYS,
  parseConfigValue,
} from "./kafka-config-def.js";
import { type MetricsListener, parseMetricsListener } from "./metrics/metrics-http-server.js";
import { AUTHORIZER_CLASS_NAMES } from "./security/authorizer/acl-authorizer.js";
import type { CredentialCache } from "./security/credential-cache.js";
import { SaslConfigError, saslListenerConfig } from "./security/sasl-config.js";
import type { SaslListenerConfig } from "./security/sasl-server-authenticator.js";
import { SslPrincipalMapper, SslPrincipalMapperError } from "./security/ssl-principal-mapper.js";

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
      if (raw !== undefined) this.values.set(key, parseConfigValue(key, def, raw));
      else if (def.default !== null) this.values.set(key, parseConfigValue(key, def, def.default));
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
