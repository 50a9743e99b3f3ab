// ListTransactions (API key 66), Kafka's TransactionStateManager.listTransactionStates: the transactions of
// the __transaction_state partitions this broker coordinates, filtered by state names, producer ids and
// (v1) a minimum running time in ms; state names Kafka does not know come back in unknown_state_filters.
// COORDINATOR_LOAD_IN_PROGRESS while a partition is loading.

import { ErrorCode } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import type { ListTransactionsRequest } from "../../protocol/generated/messages/ListTransactionsRequest.js";
import {
  defaultListTransactionsResponse,
  defaultTransactionState,
  type ListTransactionsResponse,
} from "../../protocol/generated/messages/ListTransactionsResponse.js";
import { Operation, ResourceType } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import { transactionStateFromId } from "../coordinator/transaction/transaction-state.js";
import type { Handler, HandlerRegistration } from "../handler.js";

const STATE_NAMES = new Set(Array.from({ length: 8 }, (_, i) => transactionStateFromId(i) as string));

export function listTransactionsHandler(services: BrokerServices): HandlerRegistration {
  const handle: Handler<ListTransactionsRequest, ListTransactionsResponse> = async (ctx, request) => {
    const response = defaultListTransactionsResponse();
    const unknown = request.stateFilters.filter((s) => !STATE_NAMES.has(s));
    const known = request.stateFilters.filter((s) => STATE_NAMES.has(s));
    response.unknownStateFilters = unknown;
    // Only unknown state filters: nothing can match.
    if (request.stateFilters.length > 0 && known.length === 0) return response;
    const { error, transactions } = services.transactionCoordinator.listTransactions(
      known,
      request.producerIdFilters,
      ctx.apiVersion >= 1 ? request.durationFilter : -1n,
    );
    if (error !== ErrorCode.NONE) return { ...response, errorCode: error };
    // KafkaApis: only the transactional ids with DESCRIBE are listed.
    const listed = transactions.filter((m) =>
      services.auth.authorize(
        ctx,
        Operation.DESCRIBE,
        ResourceType.TRANSACTIONAL_ID,
        m.transactionalId,
        false,
      ),
    );
    response.transactionStates = listed.map((m) => ({
      ...defaultTransactionState(),
      transactionalId: m.transactionalId,
      producerId: m.producerId,
      transactionState: m.state,
    }));
    return response;
  };
  return { apiKey: ApiKey.ListTransactions, handle };
}
