// FindCoordinator (API key 10), every version 0–6: the broker coordinating a group — the leader of its
// __consumer_offsets partition (Kafka's partitionFor) on the request's listener. The first request
// creates __consumer_offsets (offsets.topic.* settings) and answers COORDINATOR_NOT_AVAILABLE until its
// partitions have leaders, as Kafka does. v4+ batch several keys. Transaction coordinators (key type 1):
// the leader of the transactional id's __transaction_state partition, the topic created the same way
// (transaction.state.log.* settings).

import { ErrorCode } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import type { FindCoordinatorRequest } from "../../protocol/generated/messages/FindCoordinatorRequest.js";
import {
  type Coordinator,
  defaultCoordinator,
  defaultFindCoordinatorResponse,
  type FindCoordinatorResponse,
} from "../../protocol/generated/messages/FindCoordinatorResponse.js";
import { Operation, ResourceType } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import { GROUP_METADATA_TOPIC_NAME } from "../coordinator/group/group-metadata-manager.js";
import { TRANSACTION_STATE_TOPIC_NAME } from "../coordinator/transaction/transaction-coordinator.js";
import type { Handler, HandlerRegistration } from "../handler.js";
import type { RequestContext } from "../request-context.js";

const GROUP_KEY_TYPE = 0;
const TRANSACTION_KEY_TYPE = 1;

export function findCoordinatorHandler(services: BrokerServices): HandlerRegistration {
  const cache = services.metadata;

  async function coordinatorFor(ctx: RequestContext, key: string, keyType: number): Promise<Coordinator> {
    const failed = (errorCode: number, errorMessage: string): Coordinator => ({
      ...defaultCoordinator(),
      key,
      nodeId: -1,
      host: "",
      port: -1,
      errorCode,
      errorMessage,
    });
    if (keyType !== GROUP_KEY_TYPE && keyType !== TRANSACTION_KEY_TYPE)
      return failed(ErrorCode.INVALID_REQUEST, `Unknown coordinator type ${keyType}`);
    const isTxn = keyType === TRANSACTION_KEY_TYPE;
    // Authorization (KafkaApis): DESCRIBE on the group / transactional id.
    if (
      !services.auth.authorize(
        ctx,
        Operation.DESCRIBE,
        isTxn ? ResourceType.TRANSACTIONAL_ID : ResourceType.GROUP,
        key,
      )
    )
      return isTxn
        ? failed(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "Transactional Id authorization failed.")
        : failed(ErrorCode.GROUP_AUTHORIZATION_FAILED, `Not authorized to access group: ${key}`);
    if (key === "")
      return failed(
        ErrorCode.INVALID_REQUEST,
        isTxn ? "The transactional id must not be empty." : "The group id must not be empty.",
      );
    const topic = isTxn ? TRANSACTION_STATE_TOPIC_NAME : GROUP_METADATA_TOPIC_NAME;
    if (!cache.hasTopic(topic)) {
      const error = await services.topicAdmin.createInternalTopic(topic);
      return failed(
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        error?.message ?? "The coordinator is not available.",
      );
    }
    const partition = isTxn
      ? services.transactionCoordinator.partitionFor(key)
      : services.groupCoordinator.partitionFor(key);
    const state = cache.partitionState(topic, partition);
    const endpoint =
      state !== undefined && state.leader >= 0
        ? cache.endpointFor(state.leader, ctx.listenerName)
        : undefined;
    if (state === undefined || endpoint === undefined) {
      return failed(ErrorCode.COORDINATOR_NOT_AVAILABLE, "The coordinator is not available.");
    }
    return {
      ...defaultCoordinator(),
      key,
      nodeId: state.leader,
      host: endpoint.host,
      port: endpoint.port,
      errorCode: ErrorCode.NONE,
      errorMessage: null,
    };
  }

  const handle: Handler<FindCoordinatorRequest, FindCoordinatorResponse> = async (ctx, request) => {
    const response = defaultFindCoordinatorResponse();
    if (ctx.apiVersion >= 4) {
      for (const key of request.coordinatorKeys) {
        response.coordinators.push(await coordinatorFor(ctx, key, request.keyType));
      }
      return response;
    }
    const c = await coordinatorFor(ctx, request.key, ctx.apiVersion >= 1 ? request.keyType : GROUP_KEY_TYPE);
    return {
      ...response,
      errorCode: c.errorCode,
      errorMessage: c.errorMessage,
      nodeId: c.nodeId,
      host: c.host,
      port: c.port,
    };
  };
  return { apiKey: ApiKey.FindCoordinator, handle };
}
