// AlterConfigs (API key 33), every version 0–2, Kafka's ZkAdminManager.alterConfigs through TopicAdmin:
// replaces the whole set of a topic's overrides (/config/topics/<t>) or of the broker's dynamic configs
// (/config/brokers/<id>, or <default> for ""), validated (INVALID_CONFIG with a one-line message,
// INVALID_REQUEST for duplicates, nulls and configs that cannot change dynamically), validate_only.

import { ApiKey } from "../../protocol/generated/api-table.js";
import type { AlterConfigsRequest } from "../../protocol/generated/messages/AlterConfigsRequest.js";
import {
  type AlterConfigsResponse,
  defaultAlterConfigsResponse,
} from "../../protocol/generated/messages/AlterConfigsResponse.js";
import type { BrokerServices } from "../broker-services.js";
import type { HandlerRegistration } from "../handler.js";
import type { RequestContext } from "../request-context.js";

export function alterConfigsHandler(services: BrokerServices): HandlerRegistration {
  return {
    apiKey: ApiKey.AlterConfigs,
    minVersion: 0,
    maxVersion: 2,
    handle: async (_ctx: RequestContext, request: AlterConfigsRequest): Promise<AlterConfigsResponse> => {
      const results = await services.topicAdmin.alterConfigs(request.resources, request.validateOnly);
      return {
        ...defaultAlterConfigsResponse(),
        responses: results.map((r) => ({
          errorCode: r.error ? r.error.code : 0,
          errorMessage: r.error ? r.error.message : null,
          resourceType: r.resourceType,
          resourceName: r.resourceName,
        })),
      };
    },
    errorResponse: (request: AlterConfigsRequest, _v: number, errorCode: number, message: string | null) => ({
      ...defaultAlterConfigsResponse(),
      responses: request.resources.map((r) => ({
        errorCode,
        errorMessage: message,
        resourceType: r.resourceType,
        resourceName: r.resourceName,
      })),
    }),
  };
}
