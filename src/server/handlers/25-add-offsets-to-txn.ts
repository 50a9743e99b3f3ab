// AddOffsetsToTxn (API key 25), Kafka's KafkaApis.handleAddOffsetsToTxnRequest: the consumer group's
// __consumer_offsets partition (Kafka's partitionFor over offsets.topic.num.partitions) joins the
// transaction, so EndTxn writes its marker there too and TxnOffsetCommit may follow. PRODUCER_FENCED is
// INVALID_PRODUCER_EPOCH below v2.

import type { AddOffsetsToTxnRequest } from "../../protocol/generated/messages/AddOffsetsToTxnRequest.js";
import {
  type AddOffsetsToTxnResponse,
  defaultAddOffsetsToTxnResponse,
} from "../../protocol/generated/messages/AddOffsetsToTxnResponse.js";
import { Operation } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import { GROUP_METADATA_TOPIC_NAME } from "../coordinator/group/group-metadata-manager.js";
import { producerFencedCompat } from "../coordinator/transaction/transaction-coordinator.js";
import type { Handler, HandlerRegistration } from "../handler.js";

export function addOffsetsToTxnHandler(services: BrokerServices): HandlerRegistration {
  const handle: Handler<AddOffsetsToTxnRequest, AddOffsetsToTxnResponse> = async (ctx, request) => {
    // KafkaApis: WRITE on the transactional id, READ on the group.
    services.auth.requireTransactionalId(ctx, Operation.WRITE, request.transactionalId);
    services.auth.requireGroup(ctx, Operation.READ, request.groupId);
    const partition = services.groupCoordinator.partitionFor(request.groupId);
    const error = await services.transactionCoordinator.handleAddPartitionsToTransaction(
      request.transactionalId,
      request.producerId,
      request.producerEpoch,
      [{ topic: GROUP_METADATA_TOPIC_NAME, partition }],
    );
    return { ...defaultAddOffsetsToTxnResponse(), errorCode: producerFencedCompat(error, ctx.apiVersion, 2) };
  };
  return { apiKey: 25, handle };
}
