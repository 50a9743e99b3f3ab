// InitProducerId (API key 22), Kafka's KafkaApis.handleInitProducerIdRequest with
// TransactionCoordinator.handleInitProducerId for idempotent producers:
// - producer_id/producer_epoch must both be -1 or both be set, else INVALID_REQUEST;
// - transactional_id null (enable.idempotence without transactions): always a new producer id from the
//   ProducerIdManager (blocks of 1000 in /latest_producer_id_block), epoch 0, as Kafka does;
// - transactional_id "" is INVALID_REQUEST; a transaction_timeout_ms outside (0, transaction.max.timeout.ms]
//   is INVALID_TRANSACTION_TIMEOUT (checked only for transactional ids);
// - any other transactional id goes to TransactionCoordinator.handleInitProducerId (epoch bump, fencing,
//   KIP-360 retries with the producer id/epoch, state in __transaction_state); PRODUCER_FENCED is
//   INVALID_PRODUCER_EPOCH below v4, as Kafka answers.
// Errors carry producer_id -1 and producer_epoch -1 (Kafka's initTransactionError).

import { ErrorCode, KafkaError } from "../../protocol/errors.js";
import type { InitProducerIdRequest } from "../../protocol/generated/messages/InitProducerIdRequest.js";
import {
  defaultInitProducerIdResponse,
  type InitProducerIdResponse,
} from "../../protocol/generated/messages/InitProducerIdResponse.js";
import { Operation, ResourceType } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import { producerFencedCompat } from "../coordinator/transaction/transaction-coordinator.js";
import type { Handler, HandlerRegistration } from "../handler.js";

function errorResponse(errorCode: number): InitProducerIdResponse {
  return { ...defaultInitProducerIdResponse(), errorCode, producerId: -1n, producerEpoch: -1 };
}

export function initProducerIdHandler(services: BrokerServices): HandlerRegistration {
  const handle: Handler<InitProducerIdRequest, InitProducerIdResponse> = async (ctx, request) => {
    const noId = request.producerId === -1n;
    const noEpoch = request.producerEpoch === -1;
    if (noId !== noEpoch) return errorResponse(ErrorCode.INVALID_REQUEST);
    const txnId = request.transactionalId;
    // KafkaApis: WRITE on the transactional id; an idempotent producer needs IDEMPOTENT_WRITE on the
    // cluster or WRITE on some topic (KIP-679), else CLUSTER_AUTHORIZATION_FAILED.
    const auth = services.auth;
    if (txnId !== null && !auth.authorize(ctx, Operation.WRITE, ResourceType.TRANSACTIONAL_ID, txnId))
      return errorResponse(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    if (
      txnId === null &&
      !auth.authorizeCluster(ctx, Operation.IDEMPOTENT_WRITE, false) &&
      !auth.authorizeByResourceType(ctx, Operation.WRITE, ResourceType.TOPIC)
    )
      return errorResponse(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    if (txnId === null) {
      try {
        const producerId = await services.producerIdManager.generateProducerId();
        return { ...defaultInitProducerIdResponse(), producerId, producerEpoch: 0 };
      } catch (e) {
        return errorResponse(e instanceof KafkaError ? e.code : ErrorCode.UNKNOWN_SERVER_ERROR);
      }
    }
    if (txnId.length === 0) return errorResponse(ErrorCode.INVALID_REQUEST);
    const timeout = request.transactionTimeoutMs;
    if (timeout <= 0 || timeout > services.config.getInt("transaction.max.timeout.ms"))
      return errorResponse(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
    const result = await services.transactionCoordinator.handleInitProducerId(
      txnId,
      timeout,
      noId ? undefined : { producerId: request.producerId, producerEpoch: request.producerEpoch },
    );
    if (result.error !== ErrorCode.NONE)
      return errorResponse(producerFencedCompat(result.error, ctx.apiVersion, 4));
    return {
      ...defaultInitProducerIdResponse(),
      producerId: result.producerId,
      producerEpoch: result.producerEpoch,
    };
  };
  return {
    apiKey: 22,
    handle,
    errorResponse: (_request: InitProducerIdRequest, _version: number, code: number) => errorResponse(code),
  };
}
