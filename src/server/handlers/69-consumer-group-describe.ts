// ConsumerGroupDescribe (API key 69), v0–1 (KIP-848): for each group, its state, group epoch, assignment
// epoch, assignor, and every member with its subscription, current assignment and target assignment
// (topic ids with their names). A classic or unknown group id is GROUP_ID_NOT_FOUND, as in Kafka.

import { ErrorCode } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import type { ConsumerGroupDescribeRequest } from "../../protocol/generated/messages/ConsumerGroupDescribeRequest.js";
import {
  type ConsumerGroupDescribeResponse,
  defaultConsumerGroupDescribeResponse,
  defaultDescribedGroup,
  defaultMember,
} from "../../protocol/generated/messages/ConsumerGroupDescribeResponse.js";
import { Operation, ResourceType } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import { type Assignment, assignmentEntries } from "../coordinator/group/consumer-group-member.js";
import type { Handler, HandlerRegistration } from "../handler.js";

/** Kafka's value when authorized operations were not asked for. */

export function consumerGroupDescribeHandler(services: BrokerServices): HandlerRegistration {
  const withNames = (a: Assignment) => ({
    topicPartitions: assignmentEntries(a).map((e) => ({
      topicId: e.topicId,
      topicName: services.metadata.topicName(e.topicId) ?? "",
      partitions: e.partitions,
    })),
  });
  const handle: Handler<ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse> = async (
    ctx,
    request,
  ) => ({
    ...defaultConsumerGroupDescribeResponse(),
    groups: request.groupIds.map((groupId) => {
      // KafkaApis: DESCRIBE on each group, else GROUP_AUTHORIZATION_FAILED for it.
      if (!services.auth.authorize(ctx, Operation.DESCRIBE, ResourceType.GROUP, groupId))
        return { ...defaultDescribedGroup(), groupId, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
      const g = services.groupCoordinator.consumerGroupDescribe(groupId);
      return {
        ...defaultDescribedGroup(),
        errorCode: g.errorCode,
        errorMessage: g.errorMessage,
        groupId,
        groupState: g.state,
        groupEpoch: g.groupEpoch,
        assignmentEpoch: g.assignmentEpoch,
        assignorName: g.assignorName,
        authorizedOperations: services.auth.authorizedOperations(
          ctx,
          "group",
          groupId,
          request.includeAuthorizedOperations,
        ),
        members: g.members.map(({ member: m, targetAssignment }) => ({
          ...defaultMember(),
          memberId: m.memberId,
          instanceId: m.instanceId,
          rackId: m.rackId,
          memberEpoch: m.memberEpoch,
          clientId: m.clientId,
          clientHost: m.clientHost,
          subscribedTopicNames: [...m.subscribedTopicNames],
          subscribedTopicRegex: m.subscribedTopicRegex,
          assignment: withNames(m.assignedPartitions),
          targetAssignment: withNames(targetAssignment),
        })),
      };
    }),
  });
  return { apiKey: ApiKey.ConsumerGroupDescribe, handle };
}
