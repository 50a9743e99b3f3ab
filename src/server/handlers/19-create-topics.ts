// CreateTopics (API key 19), every version 0–7, Kafka's ZkAdminManager.createTopics through TopicAdmin:
// validation (names, partitions, replication factor, assignments, configs), validate_only, and, when
// timeout_ms > 0, waiting until every new partition has a leader (REQUEST_TIMED_OUT otherwise). From v5 a
// created topic reports its partition count, replication factor and configs; v7 its topic id.
// A single-node broker (no zookeeper.connect) whose every online log dir is full answers
// KAFKA_STORAGE_ERROR and creates nothing: acknowledging a topic whose logs cannot be created would lose
// it. (In a cluster the controller places replicas on other brokers; a full one reports its own.)

import { ErrorCode } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import type { CreateTopicsRequest } from "../../protocol/generated/messages/CreateTopicsRequest.js";
import {
  type CreatableTopicResult,
  type CreateTopicsResponse,
  defaultCreatableTopicResult,
  defaultCreateTopicsResponse,
} from "../../protocol/generated/messages/CreateTopicsResponse.js";
import type { BrokerServices } from "../broker-services.js";
import type { HandlerRegistration } from "../handler.js";
import { ZERO_UUID } from "../metadata/zk-data.js";
import { mutateWithQuota } from "../quota/controller-mutation-quota-manager.js";
import type { RequestContext } from "../request-context.js";

export function createTopicsHandler(services: BrokerServices): HandlerRegistration {
  return {
    apiKey: ApiKey.CreateTopics,
    minVersion: 0,
    maxVersion: 7,
    handle: async (ctx: RequestContext, request: CreateTopicsRequest): Promise<CreateTopicsResponse> => {
      const v = ctx.apiVersion;
      const full = v >= 1 && request.validateOnly ? undefined : singleNodeFullMessage(services);
      if (full !== undefined) {
        return {
          ...defaultCreateTopicsResponse(),
          topics: request.topics.map((t) => ({
            ...defaultCreatableTopicResult(),
            name: t.name,
            errorCode: ErrorCode.KAFKA_STORAGE_ERROR,
            errorMessage: full,
          })),
        };
      }
      const topics = request.topics.map((t) => ({
        name: t.name,
        numPartitions: t.numPartitions,
        replicationFactor: t.replicationFactor,
        assignments: t.assignments,
        configs: t.configs,
      }));
      const options = { validateOnly: v >= 1 && request.validateOnly, timeoutMs: request.timeoutMs };
      // controller_mutation_rate (server/quota): topic by topic while the client is under it.
      const quota = services.clientQuotas?.controllerMutationQuota(ctx);
      const results =
        quota === undefined
          ? await services.topicAdmin.createTopics(topics, options)
          : await mutateWithQuota(
              quota,
              topics,
              async (t) => (await services.topicAdmin.createTopics([t], options))[0],
              (_t, r) => r.numPartitions,
              (t, error) => ({
                name: t.name,
                topicId: ZERO_UUID,
                error,
                numPartitions: -1,
                replicationFactor: -1,
                configs: [],
              }),
              options.validateOnly,
            );
      return {
        ...defaultCreateTopicsResponse(),
        throttleTimeMs: quota?.throttleTime() ?? 0,
        topics: results.map(
          (r): CreatableTopicResult => ({
            ...defaultCreatableTopicResult(),
            name: r.name,
            topicId: v >= 7 ? r.topicId : ZERO_UUID,
            errorCode: r.error ? r.error.code : 0,
            errorMessage: r.error ? r.error.message : null,
            numPartitions: r.error ? -1 : r.numPartitions,
            replicationFactor: r.error ? -1 : r.replicationFactor,
            configs:
              v >= 5 && !r.error
                ? r.configs.map((c) => ({
                    name: c.name,
                    value: c.value,
                    readOnly: c.readOnly,
                    configSource: c.source,
                    isSensitive: c.isSensitive,
                  }))
                : [],
          }),
        ),
      };
    },
    errorResponse: (
      request: CreateTopicsRequest,
      _version: number,
      errorCode: number,
      message: string | null,
    ) => ({
      ...defaultCreateTopicsResponse(),
      topics: request.topics.map((t) => ({
        ...defaultCreatableTopicResult(),
        name: t.name,
        errorCode,
        errorMessage: message,
      })),
    }),
  };
}

/** Why a single-node broker cannot create logs now (every online log dir full), or undefined. */
function singleNodeFullMessage(services: BrokerServices): string | undefined {
  // (Handler tests may build services without a config or the storage side.)
  const lm = services.logManager as BrokerServices["logManager"] | undefined;
  if (lm === undefined || services.config?.zookeeperConnect !== null) return undefined;
  const online = lm.onlineLogDirs();
  if (online.length === 0 || !online.every((d) => lm.isLogDirFull(d))) return undefined;
  return `Cannot create topics: the log dirs ${online.join(",")} are full; free space (delete records or topics) first`;
}
