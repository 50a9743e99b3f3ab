// InterBrokerSecurity: how a broker connects to its peers on a listener (the inter-broker listener for
// replica fetchers, AlterPartition, ControlledShutdown and transaction markers; control.plane.listener.name
// for the controller's requests, when set), from the same settings Kafka reads:
//   - TLS (SSL and SASL_SSL listeners): the listener's `listener.name.<l>.ssl.*` settings, else `ssl.*` —
//     its truststore checks the peer's certificate and its keystore is the client certificate (mutual TLS
//     when the peer's listener has ssl.client.auth=required).
//   - SASL (SASL_PLAINTEXT and SASL_SSL): `sasl.mechanism.inter.broker.protocol` (Kafka's default GSSAPI
//     is refused in one line), which the listener must enable, and the username/password options of
//     `listener.name.<l>.<mechanism lowercase>.sasl.jaas.config` (else `sasl.jaas.config`) — for PLAIN the
//     same PlainLoginModule entry whose user_<name> options are the listener's users.
// Also says whether a failed inter-broker connection was refused authentication, so the fetchers and the
// controller log that as an ERROR naming the cause rather than retrying quietly.

import { KafkaClientError } from "../client/errors.js";
import type { ConnectionOptions } from "../client/network/broker-connection.js";
import { SaslClientConfigError, saslClientConfig } from "../client/network/sasl/sasl-client-mechanisms.js";
import { clientSslOptions, SslConfigError } from "../common/ssl-engine-factory.js";
import { ErrorCode } from "../protocol/generated/errors.js";

/** The TLS options and SASL credentials of a broker's connections to its peers (both absent: plaintext). */
export type InterBrokerSecurity = Pick<ConnectionOptions, "ssl" | "sasl">;

export class InterBrokerSecurityError extends Error {
  override readonly name = "InterBrokerSecurityError";
}

/**
 * The client side of `listenerName` (whose security protocol is `securityProtocol`); `get` reads the
 * broker's settings as written. `enabledMechanisms`: the SASL mechanisms that listener serves.
 */
export function interBrokerSecurity(
  listenerName: string,
  securityProtocol: string,
  get: (key: string) => string | undefined,
  enabledMechanisms: readonly string[],
): InterBrokerSecurity {
  const prefix = `listener.name.${listenerName.toLowerCase()}.`;
  const out: { -readonly [K in keyof InterBrokerSecurity]: InterBrokerSecurity[K] } = {};
  try {
    if (securityProtocol === "SSL" || securityProtocol === "SASL_SSL")
      out.ssl = clientSslOptions((key) => get(prefix + key) ?? get(key));
    if (securityProtocol.startsWith("SASL_")) {
      const mechanismKey = "sasl.mechanism.inter.broker.protocol";
      const mechanism = get(mechanismKey);
      const name = (mechanism ?? "GSSAPI").trim().toUpperCase();
      const jaasKey =
        get(`${prefix}${name.toLowerCase()}.sasl.jaas.config`) !== undefined
          ? `${prefix}${name.toLowerCase()}.sasl.jaas.config`
          : get("sasl.jaas.config") !== undefined
            ? "sasl.jaas.config"
            : `${prefix}${name.toLowerCase()}.sasl.jaas.config`;
      const sasl = saslClientConfig(mechanism, get(jaasKey), mechanismKey, jaasKey);
      if (!enabledMechanisms.includes(sasl.mechanism))
        throw new InterBrokerSecurityError(
          `Invalid value ${mechanism} for configuration ${mechanismKey}: ${mechanismKey} must be included in sasl.enabled.mechanisms of listener ${listenerName} (${enabledMechanisms.join(", ")}) when SASL is used for inter-broker communication`,
        );
      out.sasl = sasl;
    }
  } catch (e) {
    if (e instanceof SslConfigError || e instanceof SaslClientConfigError)
      throw new InterBrokerSecurityError(`${e.message} (inter-broker listener ${listenerName})`);
    throw e;
  }
  return out;
}

const SASL_FAILURES: ReadonlySet<number> = new Set([
  ErrorCode.SASL_AUTHENTICATION_FAILED,
  ErrorCode.UNSUPPORTED_SASL_MECHANISM,
  ErrorCode.ILLEGAL_SASL_STATE,
]);

/** True when `e` is a peer refusing this broker's credentials (SASL) or certificate (TLS). */
export function isAuthenticationFailure(e: unknown): boolean {
  if (!(e instanceof KafkaClientError)) return false;
  return SASL_FAILURES.has(e.code) || /SSL handshake failed/.test(e.message);
}

/**
 * Kafka's NetworkClient line for a connection refused authentication:
 * "Connection to node 1 (127.0.0.1:9093) failed authentication due to: Authentication failed: …".
 */
export function authenticationFailureLine(
  nodeId: number,
  endpoint: { host: string; port: number } | undefined,
  e: Error,
): string {
  const at = endpoint === undefined ? "" : ` (${endpoint.host}:${endpoint.port})`;
  return `Connection to node ${nodeId}${at} failed authentication due to: ${e.message}`;
}
