// SaslConfig: a SASL listener's mechanisms from Kafka's settings — `sasl.enabled.mechanisms` (or the
// listener's `listener.name.<l>.sasl.enabled.mechanisms`) and each mechanism's JAAS configuration
// (`listener.name.<l>.<mechanism>.sasl.jaas.config`, else `sasl.jaas.config`). PLAIN takes its users from
// PlainLoginModule's `user_<name>="password"` options. Mechanisms not built yet (GSSAPI, SCRAM-*,
// OAUTHBEARER) and a PLAIN listener without users are refused at startup in one line.

import { scramMechanismByName } from "../../common/security/scram-mechanism.js";
import { CredentialCache } from "./credential-cache.js";
import { JaasConfigError, type JaasLoginModule, parseJaasConfig } from "./jaas-config.js";
import { PLAIN_LOGIN_MODULE, PlainSaslServer, plainUsers, type SaslServer } from "./plain-sasl-server.js";
import type { SaslListenerConfig } from "./sasl-server-authenticator.js";
import { ScramSaslServer } from "./scram-sasl-server.js";

export class SaslConfigError extends Error {
  override readonly name = "SaslConfigError";
}

/**
 * `get(key)`: a setting by its name (the caller looks up listener prefixes). `credentials`: the broker's
 * SCRAM credentials (an empty cache when only validating the settings).
 */
export function saslListenerConfig(
  listenerName: string,
  get: (key: string) => string | undefined,
  credentials: CredentialCache = new CredentialCache(),
): SaslListenerConfig {
  const prefix = `listener.name.${listenerName.toLowerCase()}.`;
  const mechanismsKey =
    get(`${prefix}sasl.enabled.mechanisms`) !== undefined
      ? `${prefix}sasl.enabled.mechanisms`
      : "sasl.enabled.mechanisms";
  const raw = get(mechanismsKey) ?? "GSSAPI";
  const names = raw
    .split(",")
    .map((m) => m.trim().toUpperCase())
    .filter((m) => m !== "");
  if (names.length === 0)
    throw new SaslConfigError(
      `Invalid value ${raw} for configuration ${mechanismsKey}: at least one SASL mechanism`,
    );
  const mechanisms = new Map<string, (reauthentication?: boolean) => SaslServer>();
  const maxReauthMs = new Map<string, number>();
  let ready: Promise<void> | undefined;
  for (const name of names) {
    // KIP-368: `listener.name.<l>.<mechanism>.connections.max.reauth.ms`, else the broker's.
    const reauthKey =
      get(`${prefix}${name.toLowerCase()}.connections.max.reauth.ms`) !== undefined
        ? `${prefix}${name.toLowerCase()}.connections.max.reauth.ms`
        : "connections.max.reauth.ms";
    const reauth = (get(reauthKey) ?? "0").trim();
    if (!/^-?\d{1,15}$/.test(reauth))
      throw new SaslConfigError(
        `Invalid value ${reauth} for configuration ${reauthKey}: Not a number of type LONG`,
      );
    if (Number(reauth) > 0) maxReauthMs.set(name, Number(reauth));
    const scram = scramMechanismByName(name);
    if (scram !== undefined) {
      mechanisms.set(name, (reauthentication) => new ScramSaslServer(scram, credentials, reauthentication));
      ready = credentials.loaded;
      continue;
    }
    if (name !== "PLAIN")
      throw new SaslConfigError(
        `Invalid value ${raw} for configuration ${mechanismsKey}: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (${name} is not supported${name === "GSSAPI" ? "; GSSAPI is Kafka's default, set sasl.enabled.mechanisms" : ""})`,
      );
    const jaasKey =
      get(`${prefix}plain.sasl.jaas.config`) !== undefined
        ? `${prefix}plain.sasl.jaas.config`
        : "sasl.jaas.config";
    const text = get(jaasKey);
    if (text === undefined)
      throw new SaslConfigError(
        `Missing configuration ${prefix}plain.sasl.jaas.config: the PLAIN users of listener ${listenerName} (${PLAIN_LOGIN_MODULE} required user_alice="alice-secret";)`,
      );
    let jaas: JaasLoginModule;
    try {
      jaas = parseJaasConfig(text);
    } catch (e) {
      if (e instanceof JaasConfigError)
        throw new SaslConfigError(`Invalid value for configuration ${jaasKey}: ${e.message}`);
      throw e;
    }
    if (jaas.loginModule !== PLAIN_LOGIN_MODULE)
      throw new SaslConfigError(
        `Invalid value for configuration ${jaasKey}: expected the login module ${PLAIN_LOGIN_MODULE}, got ${jaas.loginModule}`,
      );
    const users = plainUsers(jaas.options);
    if (users.size === 0)
      throw new SaslConfigError(
        `Invalid value for configuration ${jaasKey}: no users (user_<name>="<password>" options)`,
      );
    mechanisms.set(name, () => new PlainSaslServer(users));
  }
  return { mechanisms, maxReauthMs, ...(ready === undefined ? {} : { ready }) };
}
