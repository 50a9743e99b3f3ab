// DeleteRecords (API key 21), Kafka's KafkaApis.handleDeleteRecordsRequest: moves each partition's log
// start offset up to the requested offset (-1: the high watermark); an offset beyond the high watermark is
// OFFSET_OUT_OF_RANGE. Answers the low watermark (the smallest log start offset of the replicas). Whole
// segments below it are removed by the next retention pass; reads below it are OFFSET_OUT_OF_RANGE at once.

import { ErrorCode } from "../../protocol/errors.js";
import type { DeleteRecordsRequest } from "../../protocol/generated/messages/DeleteRecordsRequest.js";
import {
  type DeleteRecordsPartitionResult,
  type DeleteRecordsResponse,
  defaultDeleteRecordsPartitionResult,
  defaultDeleteRecordsResponse,
  defaultDeleteRecordsTopicResult,
} from "../../protocol/generated/messages/DeleteRecordsResponse.js";
import { Operation, ResourceType } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { Handler, HandlerRegistration } from "../handler.js";
import { invalidTopicNameReason } from "./00-produce.js";

export function deleteRecordsHandler(services: BrokerServices): HandlerRegistration {
  const handle: Handler<DeleteRecordsRequest, DeleteRecordsResponse> = async (ctx, request) => {
    const rm = services.replicaManager;
    // KafkaApis: DELETE on each topic, else TOPIC_AUTHORIZATION_FAILED.
    const deletable = services.auth.filterAuthorized(
      ctx,
      Operation.DELETE,
      ResourceType.TOPIC,
      request.topics.map((t) => t.name),
    );
    const response = defaultDeleteRecordsResponse();
    for (const t of request.topics) {
      const topic = {
        ...defaultDeleteRecordsTopicResult(),
        name: t.name,
        partitions: [] as DeleteRecordsPartitionResult[],
      };
      const results = !deletable.has(t.name)
        ? t.partitions.map(() => ({ errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, lowWatermark: -1n }))
        : invalidTopicNameReason(t.name)
          ? t.partitions.map(() => ({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, lowWatermark: -1n }))
          : rm.deleteRecords(
              t.partitions.map((p) => ({
                topicPartition: { topic: t.name, partition: p.partitionIndex },
                offset: p.offset,
              })),
            );
      t.partitions.forEach((p, i) => {
        const out = defaultDeleteRecordsPartitionResult();
        out.partitionIndex = p.partitionIndex;
        out.errorCode = results[i].errorCode;
        out.lowWatermark = results[i].lowWatermark;
        topic.partitions.push(out);
      });
      response.topics.push(topic);
    }
    return response;
  };
  return { apiKey: 21, handle };
}
