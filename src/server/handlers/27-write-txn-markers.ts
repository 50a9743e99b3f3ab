// WriteTxnMarkers (API key 27, v0–1), Kafka's KafkaApis.handleWriteTxnMarkersRequest: sent by a
// transaction coordinator to the partition leaders (this broker too) to end a transaction. Each marker
// (producer id and epoch, coordinator epoch, COMMIT or ABORT) becomes one control batch per listed
// partition, appended by ReplicaManager.appendTxnMarkers as the leader with origin "coordinator" and
// acks=-1. The response lists every partition of every marker with its error code, grouped by topic in
// request order: UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, INVALID_PRODUCER_EPOCH,
// TRANSACTION_COORDINATOR_FENCED, … (see appendTxnMarkers).

import type { TopicPartition } from "../../common/topic-partition.js";
import type { WriteTxnMarkersRequest } from "../../protocol/generated/messages/WriteTxnMarkersRequest.js";
import type {
  WritableTxnMarkerTopicResult,
  WriteTxnMarkersResponse,
} from "../../protocol/generated/messages/WriteTxnMarkersResponse.js";
import { Operation } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { Handler, HandlerRegistration } from "../handler.js";

/** The partitions of a marker, grouped by topic as in the request. */
function groupByTopic(
  results: ReadonlyArray<{ topicPartition: TopicPartition; errorCode: number }>,
): WritableTxnMarkerTopicResult[] {
  const byTopic = new Map<string, WritableTxnMarkerTopicResult>();
  for (const r of results) {
    let t = byTopic.get(r.topicPartition.topic);
    if (t === undefined) {
      t = { name: r.topicPartition.topic, partitions: [] };
      byTopic.set(r.topicPartition.topic, t);
    }
    t.partitions.push({ partitionIndex: r.topicPartition.partition, errorCode: r.errorCode });
  }
  return [...byTopic.values()];
}

/** Every partition of every marker with the same error code. */
export function writeTxnMarkersErrorResponse(
  request: WriteTxnMarkersRequest,
  _version: number,
  errorCode: number,
): WriteTxnMarkersResponse {
  return {
    markers: request.markers.map((m) => ({
      producerId: m.producerId,
      topics: m.topics.map((t) => ({
        name: t.name,
        partitions: t.partitionIndexes.map((partitionIndex) => ({ partitionIndex, errorCode })),
      })),
    })),
  };
}

export function writeTxnMarkersHandler(services: BrokerServices): HandlerRegistration {
  const handle: Handler<WriteTxnMarkersRequest, WriteTxnMarkersResponse> = async (ctx, request) => {
    services.auth.requireCluster(ctx, Operation.CLUSTER_ACTION); // from brokers only
    const results = await services.replicaManager.appendTxnMarkers(
      request.markers.map((m) => ({
        producerId: m.producerId,
        producerEpoch: m.producerEpoch,
        coordinatorEpoch: m.coordinatorEpoch,
        committed: m.transactionResult,
        partitions: m.topics.flatMap((t) =>
          t.partitionIndexes.map((partition) => ({ topic: t.name, partition })),
        ),
      })),
    );
    return {
      markers: results.map((r) => ({ producerId: r.producerId, topics: groupByTopic(r.results) })),
    };
  };
  return { apiKey: 27, handle, errorResponse: writeTxnMarkersErrorResponse };
}
