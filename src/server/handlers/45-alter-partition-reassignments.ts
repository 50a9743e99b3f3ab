// AlterPartitionReassignments (API key 45, KIP-455), version 0: starts, replaces or (replicas null)
// cancels partition reassignments; run by the active controller (KafkaController.alterPartitionReassignments:
// INVALID_REPLICA_ASSIGNMENT for an empty, duplicated, negative or dead new replica, NO_REASSIGNMENT_IN_PROGRESS
// for a cancellation with nothing to cancel, UNKNOWN_TOPIC_OR_PARTITION). Another broker answers
// NOT_CONTROLLER (top level), so the admin client finds the controller.

import { getOrCreate } from "../../common/maps.js";
import { ErrorCode } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import type { AlterPartitionReassignmentsRequest } from "../../protocol/generated/messages/AlterPartitionReassignmentsRequest.js";
import type {
  AlterPartitionReassignmentsResponse,
  ReassignableTopicResponse,
} from "../../protocol/generated/messages/AlterPartitionReassignmentsResponse.js";
import { Operation } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { HandlerRegistration } from "../handler.js";
import type { RequestContext } from "../request-context.js";

export function alterPartitionReassignmentsHandler(services: BrokerServices): HandlerRegistration {
  return {
    apiKey: ApiKey.AlterPartitionReassignments,
    minVersion: 0,
    maxVersion: 0,
    handle: async (
      ctx: RequestContext,
      request: AlterPartitionReassignmentsRequest,
    ): Promise<AlterPartitionReassignmentsResponse> => {
      services.auth.requireCluster(ctx, Operation.ALTER); // KafkaApis: ALTER on the cluster
      const results = await services.controller.alterPartitionReassignments(
        request.topics.flatMap((t) =>
          t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex, replicas: p.replicas })),
        ),
      );
      if (results === "NOT_CONTROLLER")
        return {
          throttleTimeMs: 0,
          errorCode: ErrorCode.NOT_CONTROLLER,
          errorMessage: "This is not the correct controller for this cluster.",
          responses: [],
        };
      const byTopic = new Map<string, ReassignableTopicResponse>();
      for (const r of results)
        getOrCreate(byTopic, r.topic, () => ({ name: r.topic, partitions: [] })).partitions.push({
          partitionIndex: r.partition,
          errorCode: r.errorCode,
          errorMessage: r.errorMessage,
        });
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.NONE,
        errorMessage: null,
        responses: [...byTopic.values()],
      };
    },
  };
}
