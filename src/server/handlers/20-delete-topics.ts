// DeleteTopics (API key 20), every version 0–6, Kafka's ZkAdminManager.deleteTopics through TopicAdmin:
// by name (v0–5 topic_names, v6 topics[].name) or by topic id (v6), UNKNOWN_TOPIC_OR_PARTITION /
// UNKNOWN_TOPIC_ID, TOPIC_DELETION_DISABLED when delete.topic.enable=false, INVALID_REQUEST for
// duplicates; with timeout_ms > 0 it waits until the topics are gone (REQUEST_TIMED_OUT otherwise).

import { ApiKey } from "../../protocol/generated/api-table.js";
import type { DeleteTopicsRequest } from "../../protocol/generated/messages/DeleteTopicsRequest.js";
import {
  type DeleteTopicsResponse,
  defaultDeletableTopicResult,
  defaultDeleteTopicsResponse,
} from "../../protocol/generated/messages/DeleteTopicsResponse.js";
import type { BrokerServices } from "../broker-services.js";
import type { HandlerRegistration } from "../handler.js";
import type { DeleteTopicTarget } from "../metadata/topic-admin.js";
import { ZERO_UUID } from "../metadata/zk-data.js";
import { mutateWithQuota } from "../quota/controller-mutation-quota-manager.js";
import type { RequestContext } from "../request-context.js";

function targetsOf(request: DeleteTopicsRequest, version: number): DeleteTopicTarget[] {
  if (version >= 6) return request.topics.map((t) => ({ name: t.name, topicId: t.topicId }));
  return request.topicNames.map((name) => ({ name, topicId: ZERO_UUID }));
}

export function deleteTopicsHandler(services: BrokerServices): HandlerRegistration {
  return {
    apiKey: ApiKey.DeleteTopics,
    minVersion: 0,
    maxVersion: 6,
    handle: async (ctx: RequestContext, request: DeleteTopicsRequest): Promise<DeleteTopicsResponse> => {
      const v = ctx.apiVersion;
      const targets = targetsOf(request, v);
      // controller_mutation_rate (server/quota): topic by topic while the client is under it.
      const quota = services.clientQuotas?.controllerMutationQuota(ctx);
      const partitionsOf = (t: DeleteTopicTarget): number => {
        const name = t.name ?? services.metadata.topicName(t.topicId);
        return (name && services.metadata.numPartitions(name)) || 0;
      };
      const results =
        quota === undefined
          ? await services.topicAdmin.deleteTopics(targets, request.timeoutMs)
          : await mutateWithQuota(
              quota,
              targets.map((t) => ({ target: t, partitions: partitionsOf(t) })),
              async (t) => (await services.topicAdmin.deleteTopics([t.target], request.timeoutMs))[0],
              (t) => t.partitions,
              (t, error) => ({ name: t.target.name, topicId: t.target.topicId, error }),
              false,
            );
      return {
        ...defaultDeleteTopicsResponse(),
        throttleTimeMs: quota?.throttleTime() ?? 0,
        responses: results.map((r) => ({
          ...defaultDeletableTopicResult(),
          name: v >= 6 ? r.name : (r.name ?? ""),
          topicId: v >= 6 ? r.topicId : ZERO_UUID,
          errorCode: r.error ? r.error.code : 0,
          errorMessage: v >= 5 && r.error ? r.error.message : null,
        })),
      };
    },
    errorResponse: (
      request: DeleteTopicsRequest,
      version: number,
      errorCode: number,
      message: string | null,
    ) => ({
      ...defaultDeleteTopicsResponse(),
      responses: targetsOf(request, version).map((t) => ({
        ...defaultDeletableTopicResult(),
        name: version >= 6 ? t.name : (t.name ?? ""),
        topicId: version >= 6 ? t.topicId : ZERO_UUID,
        errorCode,
        errorMessage: version >= 5 ? message : null,
      })),
    }),
  };
}
