// IncrementalAlterConfigs (API key 44), every version 0–1, Kafka's ZkAdminManager.incrementalAlterConfigs
// through TopicAdmin: SET (0), DELETE (1), APPEND (2) and SUBTRACT (3, list configs only) on a topic's
// overrides or the broker's dynamic configs, validated as AlterConfigs, validate_only.

import { ApiKey } from "../../protocol/generated/api-table.js";
import type { IncrementalAlterConfigsRequest } from "../../protocol/generated/messages/IncrementalAlterConfigsRequest.js";
import {
  defaultIncrementalAlterConfigsResponse,
  type IncrementalAlterConfigsResponse,
} from "../../protocol/generated/messages/IncrementalAlterConfigsResponse.js";
import { configAuthorizationError, Operation, withAuthorized } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { HandlerRegistration } from "../handler.js";
import type { RequestContext } from "../request-context.js";

export function incrementalAlterConfigsHandler(services: BrokerServices): HandlerRegistration {
  return {
    apiKey: ApiKey.IncrementalAlterConfigs,
    minVersion: 0,
    maxVersion: 1,
    handle: async (
      ctx: RequestContext,
      request: IncrementalAlterConfigsRequest,
    ): Promise<IncrementalAlterConfigsResponse> => {
      // KafkaApis: ALTER_CONFIGS on the topic, or on the cluster for a broker.
      const refusal = (r: { resourceType: number; resourceName: string }) =>
        configAuthorizationError(services.auth, ctx, Operation.ALTER_CONFIGS, r.resourceType, r.resourceName);
      const results = await withAuthorized(
        request.resources,
        (r) => refusal(r) === undefined,
        (resources) => services.topicAdmin.incrementalAlterConfigs(resources, request.validateOnly),
        (r) => ({ resourceType: r.resourceType, resourceName: r.resourceName, error: refusal(r) ?? null }),
      );
      return {
        ...defaultIncrementalAlterConfigsResponse(),
        responses: results.map((r) => ({
          errorCode: r.error ? r.error.code : 0,
          errorMessage: r.error ? r.error.message : null,
          resourceType: r.resourceType,
          resourceName: r.resourceName,
        })),
      };
    },
    errorResponse: (
      request: IncrementalAlterConfigsRequest,
      _v: number,
      errorCode: number,
      message: string | null,
    ) => ({
      ...defaultIncrementalAlterConfigsResponse(),
      responses: request.resources.map((r) => ({
        errorCode,
        errorMessage: message,
        resourceType: r.resourceType,
        resourceName: r.resourceName,
      })),
    }),
  };
}
