// SaslClientAuthenticator: one SASL exchange of a client connection (Kafka's SaslClientAuthenticator, KIP-152):
// SaslHandshake v1 naming the mechanism, then SaslAuthenticate rounds carrying the mechanism's tokens until
// it is complete. The same exchange re-authenticates an authenticated connection (KIP-368). A refusal is a
// KafkaClientError with Kafka's code (SASL_AUTHENTICATION_FAILED, UNSUPPORTED_SASL_MECHANISM,
// ILLEGAL_SASL_STATE) and a message saying what was refused; the caller owns the connection.

import { type ApiDefinition, Apis } from "../../../protocol/generated/api-table.js";
import { ErrorCode } from "../../../protocol/generated/errors.js";
import { KafkaClientError } from "../../errors.js";
import { createSaslClientMechanism, type SaslClientConfig } from "./sasl-client-mechanisms.js";

/** What the exchange needs of the connection. */
export interface SaslChannel {
  readonly address: string;
  /** The version to use for `api` (BrokerConnection.versionFor). */
  versionFor(
    api: Pick<ApiDefinition, "apiKey" | "name" | "minVersion" | "maxVersion" | "latestVersionUnstable">,
    limit?: { min?: number; max?: number },
  ): number;
  request<Req, Res>(
    api: ApiDefinition<Req, Res>,
    version: number,
    body: Req,
    timeoutMs: number,
  ): Promise<Res>;
}

/** Authenticates `channel`; resolves with the session lifetime the broker granted (0: no limit). */
export async function authenticateSasl(
  channel: SaslChannel,
  config: SaslClientConfig,
  timeoutMs: number,
): Promise<number> {
  const mechanism = createSaslClientMechanism(config);
  const at = channel.address;
  const handshake = await channel.request(
    Apis.SaslHandshake,
    channel.versionFor(Apis.SaslHandshake, { min: 1 }),
    { mechanism: mechanism.name },
    timeoutMs,
  );
  if (handshake.errorCode === ErrorCode.UNSUPPORTED_SASL_MECHANISM)
    throw new KafkaClientError(
      handshake.errorCode,
      `Client SASL mechanism '${mechanism.name}' not enabled in the server, enabled mechanisms are [${handshake.mechanisms.join(", ")}] (${at})`,
    );
  if (handshake.errorCode === ErrorCode.ILLEGAL_SASL_STATE)
    throw new KafkaClientError(
      handshake.errorCode,
      `${at} does not expect a SASL handshake: is its listener SASL_PLAINTEXT or SASL_SSL? (security.protocol is SASL here)`,
    );
  if (handshake.errorCode !== ErrorCode.NONE)
    throw new KafkaClientError(handshake.errorCode, `SaslHandshake with ${at} failed`);
  const version = channel.versionFor(Apis.SaslAuthenticate);
  let token: Buffer | null = mechanism.initialResponse();
  let sessionLifetimeMs = 0;
  while (token !== null) {
    const res = await channel.request(Apis.SaslAuthenticate, version, { authBytes: token }, timeoutMs);
    if (res.errorCode !== ErrorCode.NONE)
      throw new KafkaClientError(
        res.errorCode,
        `${res.errorMessage || "SASL authentication failed"} (${mechanism.name} as ${config.credentials.username} at ${at})`,
      );
    sessionLifetimeMs = Number(res.sessionLifetimeMs ?? 0n);
    try {
      token = mechanism.evaluateChallenge(res.authBytes);
    } catch (e) {
      throw KafkaClientError.of(
        "SASL_AUTHENTICATION_FAILED",
        `${mechanism.name} with ${at}: ${(e as Error).message}`,
      );
    }
  }
  if (!mechanism.complete)
    throw KafkaClientError.of(
      "ILLEGAL_SASL_STATE",
      `${mechanism.name} with ${at}: the exchange ended before the client could verify the broker`,
    );
  return sessionLifetimeMs;
}
