// DescribeTransactions (API key 65), Kafka's TransactionCoordinator.handleDescribeTransactions: per
// transactional id its state name, timeout, start time, producer id/epoch and the partitions of the ongoing
// transaction; TRANSACTIONAL_ID_NOT_FOUND for an unknown (or expired) id, NOT_COORDINATOR /
// COORDINATOR_LOAD_IN_PROGRESS when its __transaction_state partition is not (yet) loaded here.

import { ErrorCode } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import type { DescribeTransactionsRequest } from "../../protocol/generated/messages/DescribeTransactionsRequest.js";
import {
  type DescribeTransactionsResponse,
  defaultDescribeTransactionsResponse,
  defaultTopicData,
  defaultTransactionState,
  type TransactionState,
} from "../../protocol/generated/messages/DescribeTransactionsResponse.js";
import { Operation, ResourceType } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { Handler, HandlerRegistration } from "../handler.js";

export function describeTransactionsHandler(services: BrokerServices): HandlerRegistration {
  function describe(transactionalId: string): TransactionState {
    const out: TransactionState = { ...defaultTransactionState(), transactionalId };
    const { error, metadata } = services.transactionCoordinator.describeTransaction(transactionalId);
    if (error !== ErrorCode.NONE || metadata === undefined) return { ...out, errorCode: error };
    const byTopic = new Map<string, number[]>();
    for (const tp of metadata.partitions()) {
      const l = byTopic.get(tp.topic) ?? [];
      l.push(tp.partition);
      byTopic.set(tp.topic, l);
    }
    return {
      ...out,
      transactionState: metadata.state,
      transactionTimeoutMs: metadata.txnTimeoutMs,
      transactionStartTimeMs: BigInt(metadata.txnStartTimestamp),
      producerId: metadata.producerId,
      producerEpoch: metadata.producerEpoch,
      topics: [...byTopic].map(([topic, partitions]) => ({ ...defaultTopicData(), topic, partitions })),
    };
  }

  const handle: Handler<DescribeTransactionsRequest, DescribeTransactionsResponse> = async (
    ctx,
    request,
  ) => ({
    ...defaultDescribeTransactionsResponse(),
    // KafkaApis: DESCRIBE on each transactional id, else TRANSACTIONAL_ID_AUTHORIZATION_FAILED for it.
    transactionStates: request.transactionalIds.map((id) =>
      services.auth.authorize(ctx, Operation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, id)
        ? describe(id)
        : {
            ...defaultTransactionState(),
            transactionalId: id,
            errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
          },
    ),
  });
  return { apiKey: ApiKey.DescribeTransactions, handle };
}
