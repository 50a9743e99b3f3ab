// ListOffsets (API key 2), Kafka's KafkaApis.handleListOffsetRequest, every version: -1 latest (the high
// watermark for a consumer, the last stable offset under read_committed, the log end offset for a replica),
// -2 earliest, -3 the offset of the max timestamp (v7+), -4 earliest local; otherwise the first offset
// whose timestamp is at least the one asked (by the segments' time indexes). v0 answers Kafka's legacy
// old_style_offsets (segment base offsets). v4+ carries the leader epoch of the offset and checks the
// request's current leader epoch (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH).

import { ErrorCode, KafkaError } from "../../protocol/errors.js";
import type { ListOffsetsRequest } from "../../protocol/generated/messages/ListOffsetsRequest.js";
import {
  defaultListOffsetsPartitionResponse,
  defaultListOffsetsResponse,
  defaultListOffsetsTopicResponse,
  type ListOffsetsPartitionResponse,
  type ListOffsetsResponse,
} from "../../protocol/generated/messages/ListOffsetsResponse.js";
import type { FetchIsolation } from "../../storage/unified-log.js";
import { Operation, ResourceType } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { Handler, HandlerRegistration } from "../handler.js";

const CONSUMER_REPLICA_ID = -1;
const DEBUGGING_REPLICA_ID = -2;

export function listOffsetsHandler(services: BrokerServices): HandlerRegistration {
  const handle: Handler<ListOffsetsRequest, ListOffsetsResponse> = async (ctx, request) => {
    const version = ctx.apiVersion;
    const rm = services.replicaManager;
    const isClient = request.replicaId === CONSUMER_REPLICA_ID;
    const isolation: FetchIsolation = !isClient
      ? "log-end"
      : version >= 2 && request.isolationLevel === 1
        ? "committed"
        : "high-watermark";
    const fetchOnlyFromLeader = request.replicaId !== DEBUGGING_REPLICA_ID;
    const response = defaultListOffsetsResponse();
    // v1+: a partition asked twice is an INVALID_REQUEST for both.
    const seen = new Map<string, number>();
    if (version >= 1) {
      for (const t of request.topics)
        for (const p of t.partitions)
          seen.set(`${t.name}-${p.partitionIndex}`, (seen.get(`${t.name}-${p.partitionIndex}`) ?? 0) + 1);
    }
    // Authorization (KafkaApis): DESCRIBE on each topic, else TOPIC_AUTHORIZATION_FAILED.
    const describable = services.auth.filterAuthorized(
      ctx,
      Operation.DESCRIBE,
      ResourceType.TOPIC,
      request.topics.map((t) => t.name),
    );
    for (const t of request.topics) {
      const topic = {
        ...defaultListOffsetsTopicResponse(),
        name: t.name,
        partitions: [] as ListOffsetsPartitionResponse[],
      };
      for (const p of t.partitions) {
        const out = defaultListOffsetsPartitionResponse();
        out.partitionIndex = p.partitionIndex;
        topic.partitions.push(out);
        if (!describable.has(t.name)) {
          out.errorCode = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
          continue;
        }
        if ((seen.get(`${t.name}-${p.partitionIndex}`) ?? 0) > 1) {
          out.errorCode = ErrorCode.INVALID_REQUEST;
          continue;
        }
        try {
          const partition = rm.getPartitionOrException({ topic: t.name, partition: p.partitionIndex });
          if (version === 0) {
            out.oldStyleOffsets = partition.legacyFetchOffsetsBefore(p.timestamp, p.maxNumOffsets, isClient);
            continue;
          }
          const found =
            p.timestamp < -4n
              ? undefined
              : partition.fetchOffsetForTimestamp(
                  p.timestamp,
                  isolation,
                  version >= 4 ? p.currentLeaderEpoch : -1,
                  fetchOnlyFromLeader,
                );
          if (found !== undefined) {
            out.timestamp = found.timestamp;
            out.offset = found.offset;
            if (version >= 4) out.leaderEpoch = found.leaderEpoch ?? -1;
          }
        } catch (e) {
          if (!(e instanceof KafkaError)) throw e;
          out.errorCode = e.code;
        }
      }
      response.topics.push(topic);
    }
    return response;
  };
  return { apiKey: 2, handle };
}
