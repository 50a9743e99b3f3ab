// DescribeUserScramCredentials (API key 50), version 0: the SCRAM mechanisms and iteration counts of
// users' credentials (never the keys), from this broker's metadata cache — any broker answers, as in
// Kafka's ZooKeeper mode. Validation and errors: security/user-scram-credential-admin.ts.

import { ApiKey } from "../../protocol/generated/api-table.js";
import type { DescribeUserScramCredentialsRequest } from "../../protocol/generated/messages/DescribeUserScramCredentialsRequest.js";
import {
  type DescribeUserScramCredentialsResponse,
  defaultDescribeUserScramCredentialsResponse,
} from "../../protocol/generated/messages/DescribeUserScramCredentialsResponse.js";
import type { BrokerServices } from "../broker-services.js";
import type { HandlerRegistration } from "../handler.js";
import { describeUserScramCredentials } from "../security/user-scram-credential-admin.js";

export function describeUserScramCredentialsHandler(services: BrokerServices): HandlerRegistration {
  return {
    apiKey: ApiKey.DescribeUserScramCredentials,
    minVersion: 0,
    maxVersion: 0,
    handle: async (
      _ctx,
      request: DescribeUserScramCredentialsRequest,
    ): Promise<DescribeUserScramCredentialsResponse> => ({
      ...defaultDescribeUserScramCredentialsResponse(),
      errorMessage: null,
      results: describeUserScramCredentials(
        {
          entityConfig: (p) => services.metadata.entityConfig(p),
          allEntityConfigs: () => services.metadata.allEntityConfigs(),
          writeUserClientConfig: (p, c) => services.topicAdmin.writeUserClientConfig(p, c),
        },
        request.users === null ? null : request.users.map((u) => u.name),
      ),
    }),
    errorResponse: (
      _r: DescribeUserScramCredentialsRequest,
      _v: number,
      errorCode: number,
      message: string | null,
    ) => ({
      ...defaultDescribeUserScramCredentialsResponse(),
      errorCode,
      errorMessage: message,
    }),
  };
}
