// SaslAuthenticate (API key 36), versions 0–2, as the request pipeline sees it: only after authentication
// or on a listener without SASL, so always ILLEGAL_SASL_STATE (Kafka's KafkaApis). Authentication itself
// is the SaslServerAuthenticator's (security/sasl-server-authenticator.ts).

import { ErrorCode } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import type { SaslAuthenticateResponse } from "../../protocol/generated/messages/SaslAuthenticateResponse.js";
import type { HandlerRegistration } from "../handler.js";

export function saslAuthenticateHandler(): HandlerRegistration {
  return {
    apiKey: ApiKey.SaslAuthenticate,
    minVersion: 0,
    maxVersion: 2,
    handle: async (): Promise<SaslAuthenticateResponse> => ({
      errorCode: ErrorCode.ILLEGAL_SASL_STATE,
      errorMessage: "SaslAuthenticate request received after successful authentication",
      authBytes: Buffer.alloc(0),
      sessionLifetimeMs: 0n,
    }),
  };
}
