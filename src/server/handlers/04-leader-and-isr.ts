// LeaderAndIsr (API key 4), from the controller: which partitions this broker leads or follows, at which
// leader epoch, with which ISR. Fencing and application are ControllerRequests' (controller-requests.ts).

import { ApiKey } from "../../protocol/generated/api-table.js";
import type { LeaderAndIsrRequest } from "../../protocol/generated/messages/LeaderAndIsrRequest.js";
import type { LeaderAndIsrResponse } from "../../protocol/generated/messages/LeaderAndIsrResponse.js";
import { Operation } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { HandlerRegistration } from "../handler.js";
import type { RequestContext } from "../request-context.js";

export function leaderAndIsrHandler(services: BrokerServices): HandlerRegistration {
  return {
    apiKey: ApiKey.LeaderAndIsr,
    handle: async (ctx: RequestContext, request: LeaderAndIsrRequest): Promise<LeaderAndIsrResponse> => {
      services.auth.requireCluster(ctx, Operation.CLUSTER_ACTION); // from the controller only
      return services.controllerRequests.leaderAndIsr(request);
    },
  };
}
