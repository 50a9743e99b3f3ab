// Client config value parsing shared by the producer and consumer configs: Kafka's ConfigException and
// the int / boolean / list value types of ConfigDef, with Kafka's wording for a bad value, plus the check
// that bootstrap.servers was given; security.protocol and the ssl.* settings (TLS to the brokers).

import { clientSslOptions, SslConfigError, type SslOptions } from "../common/ssl-engine-factory.js";

/** A bad configuration value (Kafka's ConfigException). */
export class ConfigException extends Error {
  override readonly name = "ConfigException";
}

/** An INT config value of at least `min` (and at most Integer.MAX_VALUE). */
export function intValue(key: string, v: string, min: number): number {
  const n = Number(v.trim());
  if (!Number.isInteger(n) || n < min || n > 2147483647) {
    throw new ConfigException(`Invalid value ${v} for configuration ${key}: expected an integer >= ${min}`);
  }
  return n;
}

/** A BOOLEAN config value: true or false, any case. */
export function boolValue(key: string, v: string): boolean {
  const t = v.trim().toLowerCase();
  if (t === "true") return true;
  if (t === "false") return false;
  throw new ConfigException(
    `Invalid value ${v} for configuration ${key}: Expected value to be either true or false`,
  );
}

/** A LIST config value: comma-separated, entries trimmed, empty entries dropped. */
export function listValue(v: string): string[] {
  return v
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/** bootstrap.servers has no default: an empty list is Kafka's "Missing required configuration". */
export function requireBootstrapServers(servers: readonly string[]): void {
  if (servers.length === 0) {
    throw new ConfigException(
      'Missing required configuration "bootstrap.servers" which has no default value.',
    );
  }
}

/** The settings of Kafka's CommonClientConfigs that the producer and the consumer both take. */
export interface CommonClientConfig {
  bootstrapServers: string[];
  clientId: string;
  requestTimeoutMs: number;
  retryBackoffMs: number;
  metadataMaxAgeMs: number;
  /** security.protocol=SSL: the TLS options from the ssl.* settings (undefined: PLAINTEXT). */
  ssl?: SslOptions;
}

/**
 * security.protocol (PLAINTEXT or SSL; the SASL ones are not supported yet) and the ssl.* settings of a
 * client's properties: the TLS options when SSL, undefined when PLAINTEXT.
 */
export function sslFromProperties(props: Readonly<Record<string, string>>): SslOptions | undefined {
  const protocol = (props["security.protocol"] ?? "PLAINTEXT").trim().toUpperCase();
  if (protocol === "PLAINTEXT") return undefined;
  if (protocol !== "SSL")
    throw new ConfigException(
      `Invalid value ${props["security.protocol"]} for configuration security.protocol: PLAINTEXT or SSL (${protocol} is not supported yet)`,
    );
  try {
    return clientSslOptions((key) => props[key]);
  } catch (e) {
    if (e instanceof SslConfigError) throw new ConfigException(e.message);
    throw e;
  }
}

/** Sets `c`'s field for one of the common client properties; false when `key` is not one of them. */
export function applyCommonClientProperty(c: CommonClientConfig, key: string, value: string): boolean {
  switch (key) {
    case "bootstrap.servers":
      c.bootstrapServers = listValue(value);
      return true;
    case "client.id":
      c.clientId = value;
      return true;
    case "request.timeout.ms":
      c.requestTimeoutMs = intValue(key, value, 0);
      return true;
    case "retry.backoff.ms":
      c.retryBackoffMs = intValue(key, value, 0);
      return true;
    case "metadata.max.age.ms":
      c.metadataMaxAgeMs = intValue(key, value, 0);
      return true;
    default:
      // security.protocol and ssl.* are read together (sslFromProperties) by the config builders.
      return key === "security.protocol" || key.startsWith("ssl.");
  }
}
