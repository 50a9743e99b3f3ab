// SaslHandshake (API key 17), versions 0–1, as the request pipeline sees it: only after authentication or
// on a listener without SASL, so always ILLEGAL_SASL_STATE (Kafka's KafkaApis). The handshake itself is
// the SaslServerAuthenticator's (security/sasl-server-authenticator.ts), before requests reach the
// pipeline; registering it here also advertises it in ApiVersions, which clients read to choose the
// SaslAuthenticate flow.

import { ErrorCode } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import type { SaslHandshakeResponse } from "../../protocol/generated/messages/SaslHandshakeResponse.js";
import type { HandlerRegistration } from "../handler.js";

export function saslHandshakeHandler(): HandlerRegistration {
  return {
    apiKey: ApiKey.SaslHandshake,
    minVersion: 0,
    maxVersion: 1,
    handle: async (): Promise<SaslHandshakeResponse> => ({
      errorCode: ErrorCode.ILLEGAL_SASL_STATE,
      mechanisms: [],
    }),
  };
}
