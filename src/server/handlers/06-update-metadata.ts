// UpdateMetadata (API key 6), from the controller: the live brokers and the partition states this broker
// serves Metadata from. Fencing and application are ControllerRequests' (controller-requests.ts).

import { ApiKey } from "../../protocol/generated/api-table.js";
import type { UpdateMetadataRequest } from "../../protocol/generated/messages/UpdateMetadataRequest.js";
import type { UpdateMetadataResponse } from "../../protocol/generated/messages/UpdateMetadataResponse.js";
import { Operation } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { HandlerRegistration } from "../handler.js";
import type { RequestContext } from "../request-context.js";

export function updateMetadataHandler(services: BrokerServices): HandlerRegistration {
  return {
    apiKey: ApiKey.UpdateMetadata,
    handle: async (ctx: RequestContext, request: UpdateMetadataRequest): Promise<UpdateMetadataResponse> => {
      services.auth.requireCluster(ctx, Operation.CLUSTER_ACTION); // from the controller only
      return services.controllerRequests.updateMetadata(request);
    },
  };
}
