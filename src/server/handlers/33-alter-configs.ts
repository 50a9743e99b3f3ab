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
import { configAuthorizationError, Operation, withAuthorized } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { HandlerRegistration } from "../handler.js";
import type { RequestContext } from "../request-context.js";

export function alterConfigsHandler(services: BrokerServices): HandlerRegistration {
  return {
    apiKey: ApiKey.AlterConfigs,
    minVersion: 0,
    maxVersion: 2,
    handle: async (ctx: RequestContext, request: AlterConfigsRequest): Promise<AlterConfigsResponse> => {
      // KafkaApis: ALTER_CONFIGS on the topic, or on the cluster for a broker.
      const refusal = (r: { resourceType: number; resourceName: string }) =>
        configAuthorizationError(services.auth, ctx, Operation.ALTER_CONFIGS, r.resourceType, r.resourceName);
      const results = await withAuthorized(
        request.resources,
        (r) => refusal(r) === undefined,
        (resources) => services.topicAdmin.alterConfigs(resources, request.validateOnly),
        (r) => ({ resourceType: r.resourceType, resourceName: r.resourceName, error: refusal(r) ?? null }),
      );
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
