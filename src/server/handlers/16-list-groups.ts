// ListGroups (API key 16), every version 0–5: the groups this broker coordinates, with their protocol
// type, state (v4+, with a state filter) and type (v5+, "classic" or "consumer" for KIP-848 groups, with a
// type filter).

import { ApiKey } from "../../protocol/generated/api-table.js";
import type { ListGroupsRequest } from "../../protocol/generated/messages/ListGroupsRequest.js";
import {
  defaultListedGroup,
  defaultListGroupsResponse,
  type ListGroupsResponse,
} from "../../protocol/generated/messages/ListGroupsResponse.js";
import { Operation, ResourceType } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { Handler, HandlerRegistration } from "../handler.js";

export function listGroupsHandler(services: BrokerServices): HandlerRegistration {
  const handle: Handler<ListGroupsRequest, ListGroupsResponse> = async (ctx, request) => {
    const v = ctx.apiVersion;
    const r = services.groupCoordinator.listGroups(
      v >= 4 ? request.statesFilter : [],
      v >= 5 ? request.typesFilter : [],
    );
    // KafkaApis: every group with DESCRIBE on the cluster, else those with DESCRIBE on the group.
    const auth = services.auth;
    const all = auth.authorizeCluster(ctx, Operation.DESCRIBE, false);
    const listed = r.groups.filter(
      (g) => all || auth.authorize(ctx, Operation.DESCRIBE, ResourceType.GROUP, g.groupId, false),
    );
    return {
      ...defaultListGroupsResponse(),
      errorCode: r.errorCode,
      groups: listed.map((g) => ({
        ...defaultListedGroup(),
        groupId: g.groupId,
        protocolType: g.protocolType,
        groupState: g.state,
        groupType: g.type,
      })),
    };
  };
  return { apiKey: ApiKey.ListGroups, handle };
}
