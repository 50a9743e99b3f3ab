// ConsumerGroupHeartbeat (API key 68), v0–1 (KIP-848): a member of a consumer group joins (member epoch 0),
// heartbeats with its owned partitions, or leaves (-1, or -2 for a static member that will come back);
// the answer carries its member epoch, the heartbeat interval and, when it changed, its assignment. v0 lets
// the coordinator generate the member id; from v1 the client sends its own. The state machine is in
// coordinator/group/consumer-group-coordinator.ts.

import { KafkaError } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import type { ConsumerGroupHeartbeatRequest } from "../../protocol/generated/messages/ConsumerGroupHeartbeatRequest.js";
import {
  type ConsumerGroupHeartbeatResponse,
  defaultConsumerGroupHeartbeatResponse,
} from "../../protocol/generated/messages/ConsumerGroupHeartbeatResponse.js";
import { Operation, ResourceType } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import { assignmentEntries, assignmentOf } from "../coordinator/group/consumer-group-member.js";
import type { Handler, HandlerRegistration } from "../handler.js";
import { clientHostOf } from "./group-request-support.js";

export function consumerGroupHeartbeatHandler(services: BrokerServices): HandlerRegistration {
  const handle: Handler<ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse> = async (
    ctx,
    request,
  ) => {
    // KafkaApis: READ on the group; DESCRIBE on every subscribed topic (else TOPIC_AUTHORIZATION_FAILED).
    services.auth.requireGroup(ctx, Operation.READ, request.groupId);
    const subscribed = request.subscribedTopicNames ?? [];
    if (
      services.auth.filterAuthorized(ctx, Operation.DESCRIBE, ResourceType.TOPIC, subscribed).size <
      new Set(subscribed).size
    )
      throw new KafkaError("TOPIC_AUTHORIZATION_FAILED", "Topic authorization failed.");
    const r = await services.groupCoordinator.consumerGroupHeartbeat(
      {
        apiVersion: ctx.apiVersion,
        groupId: request.groupId,
        memberId: request.memberId,
        memberEpoch: request.memberEpoch,
        instanceId: request.instanceId,
        rackId: request.rackId,
        rebalanceTimeoutMs: request.rebalanceTimeoutMs,
        subscribedTopicNames: request.subscribedTopicNames,
        subscribedTopicRegex: request.subscribedTopicRegex,
        serverAssignor: request.serverAssignor,
        ownedTopicPartitions: request.topicPartitions === null ? null : assignmentOf(request.topicPartitions),
        clientId: ctx.clientId ?? "",
        clientHost: clientHostOf(ctx),
      },
      services.metadata,
    );
    return {
      ...defaultConsumerGroupHeartbeatResponse(),
      errorCode: r.errorCode,
      errorMessage: r.errorMessage,
      memberId: r.memberId,
      memberEpoch: r.memberEpoch,
      heartbeatIntervalMs: r.heartbeatIntervalMs,
      assignment: r.assignment === null ? null : { topicPartitions: assignmentEntries(r.assignment) },
    };
  };
  return { apiKey: ApiKey.ConsumerGroupHeartbeat, handle };
}
