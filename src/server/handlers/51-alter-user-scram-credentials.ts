// AlterUserScramCredentials (API key 51), version 0: upserts (from the client's salt and salted password)
// and deletes users' SCRAM credentials in /config/users/<user>, notifying every broker. Served by the
// controller only (NOT_CONTROLLER elsewhere, as Kafka's ZooKeeper-mode KafkaApis). Validation and
// errors: security/user-scram-credential-admin.ts.

import { ApiKey } from "../../protocol/generated/api-table.js";
import type { AlterUserScramCredentialsRequest } from "../../protocol/generated/messages/AlterUserScramCredentialsRequest.js";
import {
  type AlterUserScramCredentialsResponse,
  defaultAlterUserScramCredentialsResponse,
} from "../../protocol/generated/messages/AlterUserScramCredentialsResponse.js";
import type { BrokerServices } from "../broker-services.js";
import type { HandlerRegistration } from "../handler.js";
import { alterUserScramCredentials } from "../security/user-scram-credential-admin.js";

export function alterUserScramCredentialsHandler(services: BrokerServices): HandlerRegistration {
  return {
    apiKey: ApiKey.AlterUserScramCredentials,
    minVersion: 0,
    maxVersion: 0,
    handle: async (
      _ctx,
      request: AlterUserScramCredentialsRequest,
    ): Promise<AlterUserScramCredentialsResponse> => ({
      ...defaultAlterUserScramCredentialsResponse(),
      results: await alterUserScramCredentials(
        {
          entityConfig: (p) => services.metadata.entityConfig(p),
          allEntityConfigs: () => services.metadata.allEntityConfigs(),
          writeUserClientConfig: (p, c) => services.topicAdmin.writeUserClientConfig(p, c),
        },
        request,
      ),
    }),
    // Kafka's AlterUserScramCredentialsRequest.getErrorResponse: the error for every user named.
    errorResponse: (
      request: AlterUserScramCredentialsRequest,
      _v: number,
      errorCode: number,
      message: string | null,
    ) => ({
      ...defaultAlterUserScramCredentialsResponse(),
      results: [...new Set([...request.upsertions, ...request.deletions].map((a) => a.name))].map((user) => ({
        user,
        errorCode,
        errorMessage: message,
      })),
    }),
  };
}
