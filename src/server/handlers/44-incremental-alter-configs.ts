// IncrementalAlterConfigs (API key 44), every version 0–1, Kafka's ZkAdminManager.incrementalAlterConfigs
// through TopicAdmin: SET (0), DELETE (1), APPEND (2) and SUBTRACT (3, list configs only) on a topic's
// overrides or the broker's dynamic configs, validated as AlterConfigs, validate_only.

import { ApiKey } from "../../protocol/generated/api-table.js";
import type { IncrementalAlterConfigsRequest } from "../../protocol/generated/messages/IncrementalAlterConfigsRequest.js";
import {
  defaultIncrementalAlterConfigsResponse,
  type IncrementalAlterConfigsResponse,
} from "../../protocol/generated/messages/IncrementalAlterConfigsResponse.js";
import type { BrokerServices } from "../broker-services.js";
import type { HandlerRegistration } from "../handler.js";
import type { RequestContext } from "../request-context.js";

export function incrementalAlterConfigsHandler(services: BrokerServices): HandlerRegistration {
  return {
    apiKey: ApiKey.IncrementalAlterConfigs,
    minVersion: 0,
    maxVersion: 1,
    handle: async (
      _ctx: RequestContext,
      request: IncrementalAlterConfigsRequest,
    ): Promise<IncrementalAlterConfigsResponse> => {
      const results = await services.topicAdmin.incrementalAlterConfigs(
        request.resources,
        request.validateOnly,
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
