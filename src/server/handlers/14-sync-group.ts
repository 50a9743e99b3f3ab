// SyncGroup (API key 14), every version 0–5: members of a generation collect their assignment, which the
// leader sends; the group becomes Stable once the assignment is written to __consumer_offsets.

import { ApiKey } from "../../protocol/generated/api-table.js";
import type { SyncGroupRequest } from "../../protocol/generated/messages/SyncGroupRequest.js";
import {
  defaultSyncGroupResponse,
  type SyncGroupResponse,
} from "../../protocol/generated/messages/SyncGroupResponse.js";
import { Operation } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { Handler, HandlerRegistration } from "../handler.js";

export function syncGroupHandler(services: BrokerServices): HandlerRegistration {
  const handle: Handler<SyncGroupRequest, SyncGroupResponse> = async (ctx, request) => {
    services.auth.requireGroup(ctx, Operation.READ, request.groupId); // KafkaApis: READ on the group
    const v = ctx.apiVersion;
    const r = await services.groupCoordinator.syncGroup({
      groupId: request.groupId,
      generationId: request.generationId,
      memberId: request.memberId,
      groupInstanceId: v >= 3 ? request.groupInstanceId : null,
      protocolType: v >= 5 ? request.protocolType : null,
      protocolName: v >= 5 ? request.protocolName : null,
      assignments: new Map(request.assignments.map((a) => [a.memberId, a.assignment])),
    });
    return {
      ...defaultSyncGroupResponse(),
      errorCode: r.errorCode,
      protocolType: r.protocolType,
      protocolName: r.protocolName,
      assignment: r.assignment,
    };
  };
  return { apiKey: ApiKey.SyncGroup, handle };
}
