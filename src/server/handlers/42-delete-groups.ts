// DeleteGroups (API key 42), every version 0–2: removes empty groups and their offsets (tombstones in
// __consumer_offsets); a group with members is NON_EMPTY_GROUP, an unknown one GROUP_ID_NOT_FOUND.

import { ErrorCode } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import type { DeleteGroupsRequest } from "../../protocol/generated/messages/DeleteGroupsRequest.js";
import {
  type DeleteGroupsResponse,
  defaultDeletableGroupResult,
  defaultDeleteGroupsResponse,
} from "../../protocol/generated/messages/DeleteGroupsResponse.js";
import { Operation, ResourceType } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { Handler, HandlerRegistration } from "../handler.js";

export function deleteGroupsHandler(services: BrokerServices): HandlerRegistration {
  const handle: Handler<DeleteGroupsRequest, DeleteGroupsResponse> = async (ctx, request) => {
    // KafkaApis: DELETE on each group, else GROUP_AUTHORIZATION_FAILED for it.
    const deletable = services.auth.filterAuthorized(
      ctx,
      Operation.DELETE,
      ResourceType.GROUP,
      request.groupsNames,
    );
    const codes = await services.groupCoordinator.deleteGroups(
      request.groupsNames.filter((g) => deletable.has(g)),
    );
    for (const g of request.groupsNames)
      if (!deletable.has(g)) codes.set(g, ErrorCode.GROUP_AUTHORIZATION_FAILED);
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
