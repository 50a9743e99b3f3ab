// SaslClientMechanisms: the SASL mechanisms a client can authenticate with, by the name `sasl.mechanism`
// and SaslHandshake use, each with the JAAS login module Kafka pairs with it (`sasl.jaas.config`), and
// the client config they are built from: `sasl.mechanism` plus the username/password options of
// `sasl.jaas.config` (Kafka's syntax, parsed by common/jaas-config.ts). A mechanism not listed here, a
// login module that does not match it, or a missing username/password is one line naming the setting.

import { JaasConfigError, parseJaasConfig } from "../../../common/jaas-config.js";
import { PlainClientMechanism } from "./plain-client-mechanism.js";
import type { SaslClientCredentials, SaslClientMechanism } from "./sasl-client-mechanism.js";
import { ScramClientMechanism } from "./scram-client-mechanism.js";

/** What a connection needs to authenticate: the mechanism's name and the credentials. */
export interface SaslClientConfig {
  readonly mechanism: string;
  readonly credentials: SaslClientCredentials;
}

interface MechanismEntry {
  /** The JAAS login module Kafka's clients take for this mechanism. */
  readonly loginModule: string;
  readonly create: (credentials: SaslClientCredentials) => SaslClientMechanism;
}

const PLAIN_LOGIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule";
const SCRAM_LOGIN_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule";

const MECHANISMS = new Map<string, MechanismEntry>([
  ["PLAIN", { loginModule: PLAIN_LOGIN_MODULE, create: (c) => new PlainClientMechanism(c) }],
  [
    "SCRAM-SHA-256",
    { loginModule: SCRAM_LOGIN_MODULE, create: (c) => new ScramClientMechanism("SCRAM-SHA-256", c) },
  ],
  [
    "SCRAM-SHA-512",
    { loginModule: SCRAM_LOGIN_MODULE, create: (c) => new ScramClientMechanism("SCRAM-SHA-512", c) },
  ],
  // A new mechanism is one entry here: the config parsing below and the connection's handshake use this table.
]);

/** The mechanisms this client can use, as SaslHandshake names them. */
export function supportedSaslMechanisms(): string[] {
  return [...MECHANISMS.keys()];
}

/** A fresh mechanism for one connection's exchange. */
export function createSaslClientMechanism(config: SaslClientConfig): SaslClientMechanism {
  const entry = MECHANISMS.get(config.mechanism);
  if (entry === undefined)
    throw new SaslClientConfigError(
      `Invalid value ${config.mechanism} for configuration sasl.mechanism: one of ${supportedSaslMechanisms().join(", ")}`,
    );
  return entry.create(config.credentials);
}

/** A bad sasl.* client setting; the message is one line. */
export class SaslClientConfigError extends Error {
  override readonly name = "SaslClientConfigError";
}

/**
 * The SASL config from `sasl.mechanism` (Kafka's default GSSAPI, which this client does not have) and the
 * JAAS text; `mechanismKey` and `jaasKey` name the settings in errors (a broker's
 * `sasl.mechanism.inter.broker.protocol` and `listener.name.<l>.<mechanism>.sasl.jaas.config`).
 */
export function saslClientConfig(
  mechanism: string | undefined,
  jaasText: string | undefined,
  mechanismKey = "sasl.mechanism",
  jaasKey = "sasl.jaas.config",
): SaslClientConfig {
  const name = (mechanism ?? "GSSAPI").trim().toUpperCase();
  const entry = MECHANISMS.get(name);
  if (entry === undefined)
    throw new SaslClientConfigError(
      `Invalid value ${mechanism ?? "GSSAPI"} for configuration ${mechanismKey}: one of ${supportedSaslMechanisms().join(", ")}${mechanism === undefined ? " (GSSAPI is Kafka's default; set " + mechanismKey + ")" : ""}`,
    );
  if (jaasText === undefined || jaasText.trim() === "")
    throw new SaslClientConfigError(
      `Missing configuration ${jaasKey}: the ${name} credentials (${entry.loginModule} required username="alice" password="alice-secret";)`,
    );
  let options: ReadonlyMap<string, string>;
  try {
    const jaas = parseJaasConfig(jaasText);
    if (jaas.loginModule !== entry.loginModule)
      throw new SaslClientConfigError(
        `Invalid value for configuration ${jaasKey}: ${name} needs the login module ${entry.loginModule}, got ${jaas.loginModule}`,
      );
    options = jaas.options;
  } catch (e) {
    if (e instanceof JaasConfigError)
      throw new SaslClientConfigError(`Invalid value for configuration ${jaasKey}: ${e.message}`);
    throw e;
  }
  const username = options.get("username");
  const password = options.get("password");
  if (username === undefined || password === undefined)
    throw new SaslClientConfigError(
      `Invalid value for configuration ${jaasKey}: the ${name} login module needs username="…" and password="…" options`,
    );
  return { mechanism: name, credentials: { username, password } };
}
