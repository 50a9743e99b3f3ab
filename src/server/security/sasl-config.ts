// SaslConfig: a SASL listener's mechanisms from Kafka's settings — `sasl.enabled.mechanisms` (or the
// listener's `listener.name.<l>.sasl.enabled.mechanisms`) and each mechanism's JAAS configuration
// (`listener.name.<l>.<mechanism>.sasl.jaas.config`, else `sasl.jaas.config`). PLAIN takes its users from
// PlainLoginModule's `user_<name>="password"` options. Mechanisms not built yet (GSSAPI, SCRAM-*,
// OAUTHBEARER) and a PLAIN listener without users are refused at startup in one line.

import { JaasConfigError, type JaasLoginModule, parseJaasConfig } from "./jaas-config.js";
import { PLAIN_LOGIN_MODULE, PlainSaslServer, plainUsers } from "./plain-sasl-server.js";
import type { SaslListenerConfig } from "./sasl-server-authenticator.js";

export class SaslConfigError extends Error {
  override readonly name = "SaslConfigError";
}

/** `get(key)`: a setting by its name (the caller looks up listener prefixes). */
export function saslListenerConfig(
  listenerName: string,
  get: (key: string) => string | undefined,
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
  const mechanisms = new Map<string, () => PlainSaslServer>();
  for (const name of names) {
    if (name !== "PLAIN")
      throw new SaslConfigError(
        `Invalid value ${raw} for configuration ${mechanismsKey}: PLAIN (${name} is not supported yet${name === "GSSAPI" ? "; GSSAPI is Kafka's default, set sasl.enabled.mechanisms=PLAIN" : ""})`,
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
  return { mechanisms };
}
