// ElectLeaders (API key 43, KIP-183 / KIP-460), versions 0–2: preferred or unclean leader elections,
// run by the active controller (KafkaController.electLeaders). A null topic list means every partition, and
// then only the partitions that needed an election are answered. Another broker answers NOT_CONTROLLER
// in every partition (the admin client finds the controller and sends it there). The answer comes once
// the new leaderships were written and this broker's own metadata shows them.

import { getOrCreate } from "../../common/maps.js";
import { ErrorCode } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import type { ElectLeadersRequest } from "../../protocol/generated/messages/ElectLeadersRequest.js";
import type {
  ElectLeadersResponse,
  ReplicaElectionResult,
} from "../../protocol/generated/messages/ElectLeadersResponse.js";
import { Operation } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import { ElectionType } from "../controller/replica-leader-election.js";
import type { HandlerRegistration } from "../handler.js";
import type { RequestContext } from "../request-context.js";

function response(
  results: ReadonlyArray<{
    topic: string;
    partition: number;
    errorCode: number;
    errorMessage: string | null;
  }>,
): ElectLeadersResponse {
  const byTopic = new Map<string, ReplicaElectionResult>();
  for (const r of results) {
    const t = getOrCreate(byTopic, r.topic, () => ({ topic: r.topic, partitionResult: [] }));
    t.partitionResult.push({
      partitionId: r.partition,
      errorCode: r.errorCode,
      errorMessage: r.errorMessage,
    });
  }
  return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, replicaElectionResults: [...byTopic.values()] };
}

export function electLeadersHandler(services: BrokerServices): HandlerRegistration {
  return {
    apiKey: ApiKey.ElectLeaders,
    minVersion: 0,
    maxVersion: 2,
    handle: async (ctx: RequestContext, request: ElectLeadersRequest): Promise<ElectLeadersResponse> => {
      services.auth.requireCluster(ctx, Operation.ALTER); // KafkaApis: ALTER on the cluster
      const asked =
        request.topicPartitions === null
          ? undefined
          : request.topicPartitions.flatMap((t) =>
              t.partitions.map((partition) => ({ topic: t.topic, partition })),
            );
      if (request.electionType !== ElectionType.PREFERRED && request.electionType !== ElectionType.UNCLEAN)
        return {
          ...response(
            (asked ?? []).map((tp) => ({
              ...tp,
              errorCode: ErrorCode.INVALID_REQUEST,
              errorMessage: `Unknown election type ${request.electionType} (expected 0 for PREFERRED or 1 for UNCLEAN)`,
            })),
          ),
          errorCode: ErrorCode.INVALID_REQUEST,
        };
      const controller = services.controller;
      const results = await controller.electLeaders(asked, request.electionType);
      if (results === "NOT_CONTROLLER") {
        const notController = (asked ?? []).map((tp) => ({
          ...tp,
          errorCode: ErrorCode.NOT_CONTROLLER,
          errorMessage: "This is not the correct controller for this cluster.",
        }));
        return asked === undefined
          ? { ...response([]), errorCode: ErrorCode.NOT_CONTROLLER }
          : response(notController);
      }
      // The controller's requests to this broker (UpdateMetadata) are applied before answering, so a
      // Metadata request that follows sees the new leaders; bounded by the request's timeout.
      let timer: { cancel(): void } | undefined;
      await Promise.race([
        controller.localRequestsSent(),
        new Promise<void>((resolve) => {
          timer = services.scheduler.schedule(
            "elect-leaders-timeout",
            resolve,
            Math.max(0, request.timeoutMs),
          );
        }),
      ]);
      timer?.cancel();
      return response(results);
    },
    // Kafka's answer to a refused request (CLUSTER_AUTHORIZATION_FAILED): the error at the top and in
    // every partition asked for.
    errorResponse: (
      request: ElectLeadersRequest,
      version: number,
      errorCode: number,
      message: string | null,
    ) => ({
      ...response(
        (request.topicPartitions ?? []).flatMap((t) =>
          t.partitions.map((partition) => ({ topic: t.topic, partition, errorCode, errorMessage: message })),
        ),
      ),
      // (v0 has no top-level error code.)
      errorCode: version >= 1 ? errorCode : ErrorCode.NONE,
    }),
  };
}
