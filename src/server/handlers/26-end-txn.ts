// EndTxn (API key 26), Kafka's KafkaApis.handleEndTxnRequest with TransactionCoordinator.handleEndTransaction
// (transaction version 1): PrepareCommit/PrepareAbort is written and answered, the markers follow. Served
// up to v4: v5 is transaction version 2 (KIP-890 part 2, an epoch bump per transaction), which this
// coordinator does not offer. PRODUCER_FENCED is INVALID_PRODUCER_EPOCH below v2; the response's producer
// id/epoch (v5) stay -1.

import type { EndTxnRequest } from "../../protocol/generated/messages/EndTxnRequest.js";
import {
  defaultEndTxnResponse,
  type EndTxnResponse,
} from "../../protocol/generated/messages/EndTxnResponse.js";
import { Operation } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import { producerFencedCompat } from "../coordinator/transaction/transaction-coordinator.js";
import type { Handler, HandlerRegistration } from "../handler.js";

export function endTxnHandler(services: BrokerServices): HandlerRegistration {
  const handle: Handler<EndTxnRequest, EndTxnResponse> = async (ctx, request) => {
    services.auth.requireTransactionalId(ctx, Operation.WRITE, request.transactionalId); // KafkaApis
    const error = await services.transactionCoordinator.handleEndTransaction(
      request.transactionalId,
      request.producerId,
      request.producerEpoch,
      request.committed ? "COMMIT" : "ABORT",
    );
    return {
      ...defaultEndTxnResponse(),
      errorCode: producerFencedCompat(error, ctx.apiVersion, 2),
      producerId: -1n,
      producerEpoch: -1,
    };
  };
  return { apiKey: 26, handle, maxVersion: 4 };
}
