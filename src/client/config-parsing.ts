// Client config value parsing shared by the producer and consumer configs: Kafka's ConfigException and
// the int / boolean / list value types of ConfigDef, with Kafka's wording for a bad value, plus the check
// that bootstrap.servers was given; security.protocol with the ssl.* settings (TLS to the brokers) and
// sasl.mechanism / sasl.jaas.config (SASL authentication on every connection).

import { clientSslOptions, SslConfigError, type SslOptions } from "../common/ssl-engine-factory.js";
import {
  type SaslClientConfig,
  SaslClientConfigError,
  saslClientConfig,
} from "./network/sasl/sasl-client-mechanisms.js";

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
  /** security.protocol=SSL/SASL_SSL: the TLS options from the ssl.* settings (undefined: no TLS). */
  ssl?: SslOptions;
  /** security.protocol=SASL_PLAINTEXT/SASL_SSL: sasl.mechanism and sasl.jaas.config's credentials. */
  sasl?: SaslClientConfig;
}

/** How a client reaches the brokers: TLS options and SASL credentials, each when its protocol needs it. */
export interface ClientSecurity {
  ssl?: SslOptions;
  sasl?: SaslClientConfig;
}

const SECURITY_PROTOCOLS = ["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"];

/**
 * security.protocol (PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL) with the ssl.* settings (SSL, SASL_SSL)
 * and sasl.mechanism / sasl.jaas.config (SASL_*) of a client's properties.
 */
export function securityFromProperties(props: Readonly<Record<string, string>>): ClientSecurity {
  const protocol = (props["security.protocol"] ?? "PLAINTEXT").trim().toUpperCase();
  if (!SECURITY_PROTOCOLS.includes(protocol))
    throw new ConfigException(
      `Invalid value ${props["security.protocol"]} for configuration security.protocol: one of ${SECURITY_PROTOCOLS.join(", ")}`,
    );
  const out: ClientSecurity = {};
  try {
    if (protocol === "SSL" || protocol === "SASL_SSL") out.ssl = clientSslOptions((key) => props[key]);
    if (protocol.startsWith("SASL_"))
      out.sasl = saslClientConfig(props["sasl.mechanism"], props["sasl.jaas.config"]);
  } catch (e) {
    if (e instanceof SslConfigError || e instanceof SaslClientConfigError)
      throw new ConfigException(e.message);
    throw e;
  }
  return out;
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
      // security.protocol, ssl.* and sasl.* are read together (securityFromProperties) by the builders.
      return key === "security.protocol" || key.startsWith("ssl.") || key.startsWith("sasl.");
  }
}
