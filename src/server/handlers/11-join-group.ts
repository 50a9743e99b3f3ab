// JoinGroup (API key 11), every version 0–9: a member joins (or rejoins) a classic group and waits for the
// rebalance to complete; the leader's response carries every member's metadata. v4+ get
// MEMBER_ID_REQUIRED on a first join without a member id (KIP-394); v5+ carry group.instance.id (static
// membership, KIP-345); v9+ may be told to skip the assignment (KIP-814). v0 has no rebalance timeout: the
// session timeout stands in for it, as in Kafka.

import { ApiKey } from "../../protocol/generated/api-table.js";
import type { JoinGroupRequest } from "../../protocol/generated/messages/JoinGroupRequest.js";
import {
  defaultJoinGroupResponse,
  type JoinGroupResponse,
} from "../../protocol/generated/messages/JoinGroupResponse.js";
import { Operation } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { Handler, HandlerRegistration } from "../handler.js";
import { clientHostOf } from "./group-request-support.js";

export function joinGroupHandler(services: BrokerServices): HandlerRegistration {
  const handle: Handler<JoinGroupRequest, JoinGroupResponse> = async (ctx, request) => {
    services.auth.requireGroup(ctx, Operation.READ, request.groupId); // KafkaApis: READ on the group
    const v = ctx.apiVersion;
    const r = await services.groupCoordinator.joinGroup({
      groupId: request.groupId,
      memberId: request.memberId,
      groupInstanceId: v >= 5 ? request.groupInstanceId : null,
      requireKnownMemberId: v >= 4,
      supportSkippingAssignment: v >= 9,
      clientId: ctx.clientId ?? "",
      clientHost: clientHostOf(ctx),
      rebalanceTimeoutMs: v >= 1 ? request.rebalanceTimeoutMs : request.sessionTimeoutMs,
      sessionTimeoutMs: request.sessionTimeoutMs,
      protocolType: request.protocolType,
      protocols: request.protocols.map((p) => ({ name: p.name, metadata: p.metadata })),
      reason: v >= 8 ? request.reason : null,
    });
    return {
      ...defaultJoinGroupResponse(),
      errorCode: r.errorCode,
      generationId: r.generationId,
      protocolType: r.protocolType,
      // Before v7 the protocol name is not nullable: Kafka sends "" when there is none.
      protocolName: r.protocolName ?? (v >= 7 ? null : ""),
      leader: r.leaderId,
      skipAssignment: r.skipAssignment,
      memberId: r.memberId,
      members: r.members.map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        metadata: m.metadata,
      })),
    };
  };
  return { apiKey: ApiKey.JoinGroup, handle };
}
