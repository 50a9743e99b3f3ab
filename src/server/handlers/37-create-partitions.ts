// CreatePartitions (API key 37), every version 0–3, Kafka's ZkAdminManager.createPartitions through
// TopicAdmin: INVALID_PARTITIONS when the count does not increase, UNKNOWN_TOPIC_OR_PARTITION,
// INVALID_REPLICA_ASSIGNMENT for bad explicit assignments, INVALID_REQUEST for duplicates, validate_only;
// with timeout_ms > 0 it waits until the new partitions have leaders.

import { ApiKey } from "../../protocol/generated/api-table.js";
import type { CreatePartitionsRequest } from "../../protocol/generated/messages/CreatePartitionsRequest.js";
import {
  type CreatePartitionsResponse,
  defaultCreatePartitionsResponse,
} from "../../protocol/generated/messages/CreatePartitionsResponse.js";
import type { BrokerServices } from "../broker-services.js";
import type { HandlerRegistration } from "../handler.js";
import { mutateWithQuota } from "../quota/controller-mutation-quota-manager.js";
import type { RequestContext } from "../request-context.js";

export function createPartitionsHandler(services: BrokerServices): HandlerRegistration {
  return {
    apiKey: ApiKey.CreatePartitions,
    minVersion: 0,
    maxVersion: 3,
    handle: async (
      ctx: RequestContext,
      request: CreatePartitionsRequest,
    ): Promise<CreatePartitionsResponse> => {
      const topics = request.topics.map((t) => ({
        name: t.name,
        count: t.count,
        assignments: t.assignments === null ? null : t.assignments.map((a) => a.brokerIds),
      }));
      const options = { validateOnly: request.validateOnly, timeoutMs: request.timeoutMs };
      // controller_mutation_rate (server/quota): topic by topic while the client is under it; the
      // partitions added count.
      const quota = services.clientQuotas?.controllerMutationQuota(ctx);
      const results =
        quota === undefined
          ? await services.topicAdmin.createPartitions(topics, options)
          : await mutateWithQuota(
              quota,
              topics.map((t) => ({ t, before: services.metadata.numPartitions(t.name) ?? t.count })),
              async (x) => (await services.topicAdmin.createPartitions([x.t], options))[0],
              (x) => Math.max(0, x.t.count - x.before),
              (x, error) => ({ name: x.t.name, error }),
              options.validateOnly,
            );
      return {
        ...defaultCreatePartitionsResponse(),
        throttleTimeMs: quota?.throttleTime() ?? 0,
        results: results.map((r) => ({
          name: r.name,
          errorCode: r.error ? r.error.code : 0,
          errorMessage: r.error ? r.error.message : null,
        })),
      };
    },
    errorResponse: (
      request: CreatePartitionsRequest,
      _v: number,
      errorCode: number,
      message: string | null,
    ) => ({
      ...defaultCreatePartitionsResponse(),
      results: request.topics.map((t) => ({ name: t.name, errorCode, errorMessage: message })),
    }),
  };
}
