// AddPartitionsToTxn (API key 24), Kafka's KafkaApis.handleAddPartitionToTxnRequest:
// - v0–3 (clients): one transactional id; a partition of an unknown topic is UNKNOWN_TOPIC_OR_PARTITION
//   and the others OPERATION_NOT_ATTEMPTED; otherwise the coordinator's answer for every partition;
// - v4+ (brokers, KIP-890 part 1): several transactions, each either added or, with verify_only, checked
//   (NONE for partitions in the ongoing transaction, INVALID_TXN_STATE otherwise);
// - PRODUCER_FENCED is INVALID_PRODUCER_EPOCH below v2.

import { ErrorCode } from "../../protocol/errors.js";
import type {
  AddPartitionsToTxnRequest,
  AddPartitionsToTxnTopic,
} from "../../protocol/generated/messages/AddPartitionsToTxnRequest.js";
import {
  type AddPartitionsToTxnResponse,
  type AddPartitionsToTxnTopicResult,
  defaultAddPartitionsToTxnPartitionResult,
  defaultAddPartitionsToTxnResponse,
  defaultAddPartitionsToTxnResult,
  defaultAddPartitionsToTxnTopicResult,
} from "../../protocol/generated/messages/AddPartitionsToTxnResponse.js";
import { Operation, ResourceType } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import { producerFencedCompat } from "../coordinator/transaction/transaction-coordinator.js";
import type { Handler, HandlerRegistration } from "../handler.js";
import type { RequestContext } from "../request-context.js";

function topicResults(
  topics: readonly AddPartitionsToTxnTopic[],
  errorOf: (topic: string, partition: number) => number,
): AddPartitionsToTxnTopicResult[] {
  return topics.map((t) => ({
    ...defaultAddPartitionsToTxnTopicResult(),
    name: t.name,
    resultsByPartition: t.partitions.map((p) => ({
      ...defaultAddPartitionsToTxnPartitionResult(),
      partitionIndex: p,
      partitionErrorCode: errorOf(t.name, p),
    })),
  }));
}

function errorResponse(
  request: AddPartitionsToTxnRequest,
  version: number,
  code: number,
): AddPartitionsToTxnResponse {
  const response = defaultAddPartitionsToTxnResponse();
  if (version >= 4) return { ...response, errorCode: code };
  return { ...response, resultsByTopicV3AndBelow: topicResults(request.v3AndBelowTopics, () => code) };
}

export function addPartitionsToTxnHandler(services: BrokerServices): HandlerRegistration {
  const coordinator = services.transactionCoordinator;
  const cache = services.metadata;

  async function addPartitions(
    ctx: RequestContext,
    transactionalId: string,
    producerId: bigint,
    producerEpoch: number,
    topics: readonly AddPartitionsToTxnTopic[],
    version: number,
  ): Promise<AddPartitionsToTxnTopicResult[]> {
    // KafkaApis: WRITE on the transactional id, WRITE on each topic (the others: OPERATION_NOT_ATTEMPTED).
    const auth = services.auth;
    if (!auth.authorize(ctx, Operation.WRITE, ResourceType.TRANSACTIONAL_ID, transactionalId))
      return topicResults(topics, () => ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    const writable = auth.filterAuthorized(
      ctx,
      Operation.WRITE,
      ResourceType.TOPIC,
      topics.map((t) => t.name),
    );
    if (writable.size < new Set(topics.map((t) => t.name)).size)
      return topicResults(topics, (t) =>
        writable.has(t) ? ErrorCode.OPERATION_NOT_ATTEMPTED : ErrorCode.TOPIC_AUTHORIZATION_FAILED,
      );
    const unknown = new Set<string>();
    for (const t of topics)
      for (const p of t.partitions)
        if (cache.partitionState(t.name, p) === undefined) unknown.add(`${t.name}-${p}`);
    if (unknown.size > 0)
      return topicResults(topics, (t, p) =>
        unknown.has(`${t}-${p}`) ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.OPERATION_NOT_ATTEMPTED,
      );
    const partitions = topics.flatMap((t) => t.partitions.map((partition) => ({ topic: t.name, partition })));
    const error = await coordinator.handleAddPartitionsToTransaction(
      transactionalId,
      producerId,
      producerEpoch,
      partitions,
    );
    const code = producerFencedCompat(error, version, 2);
    return topicResults(topics, () => code);
  }

  const handle: Handler<AddPartitionsToTxnRequest, AddPartitionsToTxnResponse> = async (ctx, request) => {
    const response = defaultAddPartitionsToTxnResponse();
    if (ctx.apiVersion < 4) {
      response.resultsByTopicV3AndBelow = await addPartitions(
        ctx,
        request.v3AndBelowTransactionalId,
        request.v3AndBelowProducerId,
        request.v3AndBelowProducerEpoch,
        request.v3AndBelowTopics,
        ctx.apiVersion,
      );
      return response;
    }
    services.auth.requireCluster(ctx, Operation.CLUSTER_ACTION); // v4+: from brokers only
    for (const txn of request.transactions) {
      let results: AddPartitionsToTxnTopicResult[];
      if (txn.verifyOnly) {
        const partitions = txn.topics.flatMap((t) =>
          t.partitions.map((partition) => ({ topic: t.name, partition })),
        );
        const v = coordinator.verifyTransaction(
          txn.transactionalId,
          txn.producerId,
          txn.producerEpoch,
          partitions,
        );
        results = topicResults(txn.topics, (t, p) => v.partitionErrors.get(`${t}-${p}`) ?? v.error);
      } else {
        results = await addPartitions(
          ctx,
          txn.transactionalId,
          txn.producerId,
          txn.producerEpoch,
          txn.topics,
          ctx.apiVersion,
        );
      }
      response.resultsByTransaction.push({
        ...defaultAddPartitionsToTxnResult(),
        transactionalId: txn.transactionalId,
        topicResults: results,
      });
    }
    return response;
  };
  return { apiKey: 24, handle, errorResponse };
}
