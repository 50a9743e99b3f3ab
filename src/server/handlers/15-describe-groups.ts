// DescribeGroups (API key 15), every version 0–5: state, protocol type, chosen protocol and members of each
// group. Member metadata and assignments are given only for Stable groups (as Kafka's GroupSummary); an
// unknown group is described as Dead with no error. Authorized operations (v3+, when asked): every
// operation a group supports (no authorizer yet).

import { ErrorCode } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import type { DescribeGroupsRequest } from "../../protocol/generated/messages/DescribeGroupsRequest.js";
import {
  type DescribeGroupsResponse,
  defaultDescribedGroup,
  defaultDescribedGroupMember,
  defaultDescribeGroupsResponse,
} from "../../protocol/generated/messages/DescribeGroupsResponse.js";
import { Operation, ResourceType } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { Handler, HandlerRegistration } from "../handler.js";

export function describeGroupsHandler(services: BrokerServices): HandlerRegistration {
  const handle: Handler<DescribeGroupsRequest, DescribeGroupsResponse> = async (ctx, request) => ({
    ...defaultDescribeGroupsResponse(),
    groups: request.groups.map((groupId) => {
      // KafkaApis: DESCRIBE on each group, else GROUP_AUTHORIZATION_FAILED for it.
      if (!services.auth.authorize(ctx, Operation.DESCRIBE, ResourceType.GROUP, groupId))
        return { ...defaultDescribedGroup(), groupId, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
      const s = services.groupCoordinator.describeGroup(groupId);
      return {
        ...defaultDescribedGroup(),
        errorCode: s.errorCode,
        groupId,
        groupState: s.state,
        protocolType: s.protocolType,
        protocolData: s.protocol,
        authorizedOperations: services.auth.authorizedOperations(
          ctx,
          "group",
          groupId,
          request.includeAuthorizedOperations,
        ),
        members: s.members.map((m) => ({
          ...defaultDescribedGroupMember(),
          memberId: m.memberId,
          groupInstanceId: m.groupInstanceId,
          clientId: m.clientId,
          clientHost: m.clientHost,
          memberMetadata: m.metadata,
          memberAssignment: m.assignment,
        })),
      };
    }),
  });
  return { apiKey: ApiKey.DescribeGroups, handle };
}
