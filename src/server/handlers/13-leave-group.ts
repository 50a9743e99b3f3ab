// LeaveGroup (API key 13), every version 0–5: members leave at once instead of waiting for their session
// to time out. v0–2 name one member (its error is the top-level error); v3+ batch members, each with its
// own error, and may name static members by group.instance.id (KIP-345).

import { ErrorCode } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import type { LeaveGroupRequest } from "../../protocol/generated/messages/LeaveGroupRequest.js";
import {
  defaultLeaveGroupResponse,
  defaultMemberResponse,
  type LeaveGroupResponse,
} from "../../protocol/generated/messages/LeaveGroupResponse.js";
import { Operation } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { Handler, HandlerRegistration } from "../handler.js";

export function leaveGroupHandler(services: BrokerServices): HandlerRegistration {
  const handle: Handler<LeaveGroupRequest, LeaveGroupResponse> = async (ctx, request) => {
    services.auth.requireGroup(ctx, Operation.READ, request.groupId); // KafkaApis: READ on the group
    const v = ctx.apiVersion;
    const leaving =
      v >= 3
        ? request.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId }))
        : [{ memberId: request.memberId, groupInstanceId: null }];
    const r = services.groupCoordinator.leaveGroup(request.groupId, leaving);
    if (v < 3) {
      return {
        ...defaultLeaveGroupResponse(),
        errorCode: r.errorCode !== ErrorCode.NONE ? r.errorCode : (r.members[0]?.errorCode ?? ErrorCode.NONE),
      };
    }
    return {
      ...defaultLeaveGroupResponse(),
      errorCode: r.errorCode,
      members: r.members.map((m) => ({
        ...defaultMemberResponse(),
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        errorCode: m.errorCode,
      })),
    };
  };
  return { apiKey: ApiKey.LeaveGroup, handle };
}
