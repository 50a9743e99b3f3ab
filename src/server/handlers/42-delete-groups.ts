// DeleteGroups (API key 42), every version 0–2: removes empty groups and their offsets (tombstones in
// __consumer_offsets); a group with members is NON_EMPTY_GROUP, an unknown one GROUP_ID_NOT_FOUND.

import { ApiKey } from "../../protocol/generated/api-table.js";
import type { DeleteGroupsRequest } from "../../protocol/generated/messages/DeleteGroupsRequest.js";
import {
  type DeleteGroupsResponse,
  defaultDeletableGroupResult,
  defaultDeleteGroupsResponse,
} from "../../protocol/generated/messages/DeleteGroupsResponse.js";
import type { BrokerServices } from "../broker-services.js";
import type { Handler, HandlerRegistration } from "../handler.js";

export function deleteGroupsHandler(services: BrokerServices): HandlerRegistration {
  const handle: Handler<DeleteGroupsRequest, DeleteGroupsResponse> = async (_ctx, request) => {
    const codes = await services.groupCoordinator.deleteGroups(request.groupsNames);
    return {
      ...defaultDeleteGroupsResponse(),
      results: request.groupsNames.map((groupId) => ({
        ...defaultDeletableGroupResult(),
        groupId,
        errorCode: codes.get(groupId) ?? 0,
      })),
    };
  };
  return { apiKey: ApiKey.DeleteGroups, handle };
}
