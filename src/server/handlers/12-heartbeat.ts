// Heartbeat (API key 12), every version 0–4: keeps a member's session alive; REBALANCE_IN_PROGRESS tells
// it to rejoin.

import { ApiKey } from "../../protocol/generated/api-table.js";
import type { HeartbeatRequest } from "../../protocol/generated/messages/HeartbeatRequest.js";
import {
  defaultHeartbeatResponse,
  type HeartbeatResponse,
} from "../../protocol/generated/messages/HeartbeatResponse.js";
import { Operation } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { Handler, HandlerRegistration } from "../handler.js";

export function heartbeatHandler(services: BrokerServices): HandlerRegistration {
  const handle: Handler<HeartbeatRequest, HeartbeatResponse> = async (ctx, request) => {
    services.auth.requireGroup(ctx, Operation.READ, request.groupId); // KafkaApis: READ on the group
    return {
      ...defaultHeartbeatResponse(),
      errorCode: services.groupCoordinator.heartbeat(
        request.groupId,
        request.memberId,
        ctx.apiVersion >= 3 ? request.groupInstanceId : null,
        request.generationId,
      ),
    };
  };
  return { apiKey: ApiKey.Heartbeat, handle };
}
