// StopReplica (API key 5), from the controller: stop serving these partitions, and delete their logs when
// the topic is being deleted. Fencing and application are ControllerRequests' (controller-requests.ts).

import { ApiKey } from "../../protocol/generated/api-table.js";
import type { StopReplicaRequest } from "../../protocol/generated/messages/StopReplicaRequest.js";
import type { StopReplicaResponse } from "../../protocol/generated/messages/StopReplicaResponse.js";
import { Operation } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { HandlerRegistration } from "../handler.js";
import type { RequestContext } from "../request-context.js";

export function stopReplicaHandler(services: BrokerServices): HandlerRegistration {
  return {
    apiKey: ApiKey.StopReplica,
    handle: async (ctx: RequestContext, request: StopReplicaRequest): Promise<StopReplicaResponse> => {
      services.auth.requireCluster(ctx, Operation.CLUSTER_ACTION); // from the controller only
      return services.controllerRequests.stopReplica(request);
    },
  };
}
