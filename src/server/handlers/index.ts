// The static list of API handlers the broker serves (Kafka's KafkaApis match over ApiKeys): one factory
// per `handlers/NN-name.ts` file, each built over the BrokerServices. ApiVersions (18) is not here: the
// RequestPipeline adds it itself, since it lists this registry. An API whose handler is not in this list
// is neither advertised in ApiVersions nor served (its requests close the connection, as Kafka does for
// APIs not enabled on a listener).
//
// Produce is advertised from v0 but accepted from v3 (docs/record-format.md: librdkafka enables its
// compression codecs only when the broker lists Produce v0–v2); a Produce v0–v2 request is answered with
// UNSUPPORTED_VERSION in every partition (`produceErrorResponse`), as Kafka 4.0 does.

import { ErrorCode } from "../../protocol/errors.js";
import type { ProduceRequest } from "../../protocol/generated/messages/ProduceRequest.js";
import {
  defaultPartitionProduceResponse,
  defaultProduceResponse,
  defaultTopicProduceResponse,
  type ProduceResponse,
} from "../../protocol/generated/messages/ProduceResponse.js";
import type { BrokerServices } from "../broker-services.js";
import type { HandlerRegistration } from "../handler.js";
import { produceHandler } from "./00-produce.js";
import { fetchHandler } from "./01-fetch.js";
import { listOffsetsHandler } from "./02-list-offsets.js";
import { metadataHandler } from "./03-metadata.js";
import { leaderAndIsrHandler } from "./04-leader-and-isr.js";
import { stopReplicaHandler } from "./05-stop-replica.js";
import { updateMetadataHandler } from "./06-update-metadata.js";
import { controlledShutdownHandler } from "./07-controlled-shutdown.js";
import { offsetCommitHandler } from "./08-offset-commit.js";
import { offsetFetchHandler } from "./09-offset-fetch.js";
import { findCoordinatorHandler } from "./10-find-coordinator.js";
import { joinGroupHandler } from "./11-join-group.js";
import { heartbeatHandler } from "./12-heartbeat.js";
import { leaveGroupHandler } from "./13-leave-group.js";
import { syncGroupHandler } from "./14-sync-group.js";
import { describeGroupsHandler } from "./15-describe-groups.js";
import { listGroupsHandler } from "./16-list-groups.js";
import { saslHandshakeHandler } from "./17-sasl-handshake.js";
import { createTopicsHandler } from "./19-create-topics.js";
import { deleteTopicsHandler } from "./20-delete-topics.js";
import { deleteRecordsHandler } from "./21-delete-records.js";
import { initProducerIdHandler } from "./22-init-producer-id.js";
import { offsetForLeaderEpochHandler } from "./23-offset-for-leader-epoch.js";
import { addPartitionsToTxnHandler } from "./24-add-partitions-to-txn.js";
import { addOffsetsToTxnHandler } from "./25-add-offsets-to-txn.js";
import { endTxnHandler } from "./26-end-txn.js";
import { writeTxnMarkersHandler } from "./27-write-txn-markers.js";
import { txnOffsetCommitHandler } from "./28-txn-offset-commit.js";
import { describeConfigsHandler } from "./32-describe-configs.js";
import { alterConfigsHandler } from "./33-alter-configs.js";
import { alterReplicaLogDirsHandler } from "./34-alter-replica-log-dirs.js";
import { describeLogDirsHandler } from "./35-describe-log-dirs.js";
import { saslAuthenticateHandler } from "./36-sasl-authenticate.js";
import { createPartitionsHandler } from "./37-create-partitions.js";
import { deleteGroupsHandler } from "./42-delete-groups.js";
import { electLeadersHandler } from "./43-elect-leaders.js";
import { incrementalAlterConfigsHandler } from "./44-incremental-alter-configs.js";
import { alterPartitionReassignmentsHandler } from "./45-alter-partition-reassignments.js";
import { listPartitionReassignmentsHandler } from "./46-list-partition-reassignments.js";
import { offsetDeleteHandler } from "./47-offset-delete.js";
import { describeClientQuotasHandler } from "./48-describe-client-quotas.js";
import { alterClientQuotasHandler } from "./49-alter-client-quotas.js";
import { describeUserScramCredentialsHandler } from "./50-describe-user-scram-credentials.js";
import { alterUserScramCredentialsHandler } from "./51-alter-user-scram-credentials.js";
import { alterPartitionHandler } from "./56-alter-partition.js";
import { describeClusterHandler } from "./60-describe-cluster.js";
import { describeProducersHandler } from "./61-describe-producers.js";
import { describeTransactionsHandler } from "./65-describe-transactions.js";
import { listTransactionsHandler } from "./66-list-transactions.js";
import { consumerGroupHeartbeatHandler } from "./68-consumer-group-heartbeat.js";
import { consumerGroupDescribeHandler } from "./69-consumer-group-describe.js";

export type HandlerFactory = (services: BrokerServices) => HandlerRegistration;

/**
 * An API only the active controller serves in ZooKeeper mode (CreateTopics, DeleteTopics,
 * CreatePartitions): any other broker answers NOT_CONTROLLER in every entry, so clients refresh their
 * metadata and send it to the controller, as Kafka's ZooKeeper-mode brokers do.
 */
function controllerOnly(factory: HandlerFactory): HandlerFactory {
  return (services) => {
    const reg = factory(services);
    const errorResponse = reg.errorResponse;
    if (errorResponse === undefined)
      throw new Error(`API ${reg.apiKey} needs an errorResponse to answer NOT_CONTROLLER`);
    return {
      ...reg,
      handle: async (ctx, request) => {
        if (!services.controller.isActive) {
          return errorResponse(
            request,
            ctx.apiVersion,
            ErrorCode.NOT_CONTROLLER,
            "This is not the correct controller for this cluster.",
          );
        }
        return reg.handle(ctx, request);
      },
    };
  };
}

/** Kafka's ProduceRequest.getErrorResponse: the error in every partition of the request. */
export function produceErrorResponse(
  request: ProduceRequest,
  _version: number,
  errorCode: number,
  message: string | null,
): ProduceResponse {
  return {
    ...defaultProduceResponse(),
    responses: request.topicData.map((t) => ({
      ...defaultTopicProduceResponse(),
      name: t.name,
      partitionResponses: t.partitionData.map((p) => ({
        ...defaultPartitionProduceResponse(),
        index: p.index,
        errorCode,
        errorMessage: message,
      })),
    })),
  };
}

const produce: HandlerFactory = (services) => ({
  errorResponse: produceErrorResponse,
  ...produceHandler(services),
  advertisedMinVersion: 0,
});

export const HANDLER_FACTORIES: readonly HandlerFactory[] = [
  produce,
  fetchHandler,
  listOffsetsHandler,
  metadataHandler,
  leaderAndIsrHandler,
  stopReplicaHandler,
  updateMetadataHandler,
  controlledShutdownHandler,
  offsetCommitHandler,
  offsetFetchHandler,
  findCoordinatorHandler,
  joinGroupHandler,
  heartbeatHandler,
  leaveGroupHandler,
  syncGroupHandler,
  describeGroupsHandler,
  listGroupsHandler,
  controllerOnly(createTopicsHandler),
  controllerOnly(deleteTopicsHandler),
  deleteRecordsHandler,
  initProducerIdHandler,
  offsetForLeaderEpochHandler,
  addPartitionsToTxnHandler,
  addOffsetsToTxnHandler,
  endTxnHandler,
  writeTxnMarkersHandler,
  txnOffsetCommitHandler,
  describeConfigsHandler,
  alterConfigsHandler,
  alterReplicaLogDirsHandler,
  describeLogDirsHandler,
  controllerOnly(createPartitionsHandler),
  deleteGroupsHandler,
  incrementalAlterConfigsHandler,
  offsetDeleteHandler,
  describeClientQuotasHandler,
  alterClientQuotasHandler,
  saslHandshakeHandler,
  saslAuthenticateHandler,
  electLeadersHandler,
  alterPartitionReassignmentsHandler,
  listPartitionReassignmentsHandler,
  describeUserScramCredentialsHandler,
  controllerOnly(alterUserScramCredentialsHandler),
  alterPartitionHandler,
  describeClusterHandler,
  describeProducersHandler,
  describeTransactionsHandler,
  listTransactionsHandler,
  consumerGroupHeartbeatHandler,
  consumerGroupDescribeHandler,
];

export function buildHandlers(services: BrokerServices): HandlerRegistration[] {
  return HANDLER_FACTORIES.map((factory) => factory(services));
}
