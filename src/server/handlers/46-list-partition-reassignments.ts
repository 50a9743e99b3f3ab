// ListPartitionReassignments (API key 46, KIP-455), version 0: the reassignments in progress (all, or
// those of the partitions asked for) with their replicas, adding and removing replicas, from the active
// controller. Another broker answers NOT_CONTROLLER (top level).

import { getOrCreate } from "../../common/maps.js";
import { ErrorCode } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import type { ListPartitionReassignmentsRequest } from "../../protocol/generated/messages/ListPartitionReassignmentsRequest.js";
import type {
  ListPartitionReassignmentsResponse,
  OngoingTopicReassignment,
} from "../../protocol/generated/messages/ListPartitionReassignmentsResponse.js";
import { Operation } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { HandlerRegistration } from "../handler.js";
import type { RequestContext } from "../request-context.js";

export function listPartitionReassignmentsHandler(services: BrokerServices): HandlerRegistration {
  return {
    apiKey: ApiKey.ListPartitionReassignments,
    minVersion: 0,
    maxVersion: 0,
    handle: async (
      ctx: RequestContext,
      request: ListPartitionReassignmentsRequest,
    ): Promise<ListPartitionReassignmentsResponse> => {
      services.auth.requireCluster(ctx, Operation.DESCRIBE); // KafkaApis: DESCRIBE on the cluster
      const asked =
        request.topics === null
          ? undefined
          : request.topics.flatMap((t) =>
              t.partitionIndexes.map((partition) => ({ topic: t.name, partition })),
            );
      const ongoing = await services.controller.listPartitionReassignments(asked);
      if (ongoing === "NOT_CONTROLLER")
        return {
          throttleTimeMs: 0,
          errorCode: ErrorCode.NOT_CONTROLLER,
          errorMessage: "This is not the correct controller for this cluster.",
          topics: [],
        };
      const byTopic = new Map<string, OngoingTopicReassignment>();
      for (const o of ongoing)
        getOrCreate(byTopic, o.topic, () => ({ name: o.topic, partitions: [] })).partitions.push({
          partitionIndex: o.partition,
          replicas: [...o.assignment.replicas],
          addingReplicas: [...o.assignment.adding],
          removingReplicas: [...o.assignment.removing],
        });
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.NONE,
        errorMessage: null,
        topics: [...byTopic.values()],
      };
    },
  };
}
