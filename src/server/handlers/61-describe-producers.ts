// DescribeProducers (API key 61), Kafka's ReplicaManager.activeProducerState: for each partition this broker
// leads, the producers in its producer state (id, epoch, last sequence, last timestamp, coordinator epoch
// of the last marker, first offset of the ongoing transaction or -1). A partition hosted but not led here
// is NOT_LEADER_OR_FOLLOWER, one that does not exist UNKNOWN_TOPIC_OR_PARTITION.

import { ErrorCode } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import type { DescribeProducersRequest } from "../../protocol/generated/messages/DescribeProducersRequest.js";
import {
  type DescribeProducersResponse,
  defaultDescribeProducersResponse,
  defaultPartitionResponse,
  defaultProducerState,
  defaultTopicResponse,
  type PartitionResponse,
} from "../../protocol/generated/messages/DescribeProducersResponse.js";
import { Operation, ResourceType } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { Handler, HandlerRegistration } from "../handler.js";

export function describeProducersHandler(services: BrokerServices): HandlerRegistration {
  function partitionResponse(topic: string, partitionIndex: number): PartitionResponse {
    const out: PartitionResponse = { ...defaultPartitionResponse(), partitionIndex };
    const p = services.replicaManager.getPartition({ topic, partition: partitionIndex });
    const log = p?.log;
    if (p === undefined || log === undefined || !p.isLeader) {
      const known = services.metadata.partitionState(topic, partitionIndex) !== undefined;
      out.errorCode = known ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
      return out;
    }
    for (const entry of log.producerStateManager.activeProducers().values()) {
      out.activeProducers.push({
        ...defaultProducerState(),
        producerId: entry.producerId,
        producerEpoch: entry.producerEpoch,
        lastSequence: entry.lastSeq(),
        lastTimestamp: entry.lastTimestamp,
        coordinatorEpoch: entry.coordinatorEpoch,
        currentTxnStartOffset: entry.currentTxnFirstOffset,
      });
    }
    return out;
  }

  const handle: Handler<DescribeProducersRequest, DescribeProducersResponse> = async (ctx, request) => {
    // KafkaApis: READ on each topic, else TOPIC_AUTHORIZATION_FAILED.
    const readable = services.auth.filterAuthorized(
      ctx,
      Operation.READ,
      ResourceType.TOPIC,
      request.topics.map((t) => t.name),
    );
    return {
      ...defaultDescribeProducersResponse(),
      topics: request.topics.map((t) => ({
        ...defaultTopicResponse(),
        name: t.name,
        partitions: t.partitionIndexes.map((i) =>
          readable.has(t.name)
            ? partitionResponse(t.name, i)
            : {
                ...defaultPartitionResponse(),
                partitionIndex: i,
                errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
              },
        ),
      })),
    };
  };
  return { apiKey: ApiKey.DescribeProducers, handle };
}
