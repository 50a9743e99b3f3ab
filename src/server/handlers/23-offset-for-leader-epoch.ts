// OffsetForLeaderEpoch (API key 23), Kafka's KafkaApis.handleOffsetForLeaderEpochRequest: for each
// partition, the end offset of the requested leader epoch from the leader-epoch cache (the current epoch
// ends at the log end offset; an unknown epoch gives -1/-1), after checking the request's current leader
// epoch (FENCED_LEADER_EPOCH when older, UNKNOWN_LEADER_EPOCH when newer). Followers use it to find where
// their log diverges (KIP-101/279); consumers to detect log truncation (KIP-320).

import { ErrorCode, KafkaError } from "../../protocol/errors.js";
import type { OffsetForLeaderEpochRequest } from "../../protocol/generated/messages/OffsetForLeaderEpochRequest.js";
import {
  defaultEpochEndOffset,
  defaultOffsetForLeaderEpochResponse,
  defaultOffsetForLeaderTopicResult,
  type EpochEndOffset,
  type OffsetForLeaderEpochResponse,
} from "../../protocol/generated/messages/OffsetForLeaderEpochResponse.js";
import { Operation, ResourceType } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { Handler, HandlerRegistration } from "../handler.js";

const DEBUGGING_REPLICA_ID = -2;

export function offsetForLeaderEpochHandler(services: BrokerServices): HandlerRegistration {
  const handle: Handler<OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse> = async (ctx, request) => {
    const rm = services.replicaManager;
    // v0–v2 have no replica id: they come from brokers or consumers, served by the leader.
    const fetchOnlyFromLeader = !(ctx.apiVersion >= 3 && request.replicaId === DEBUGGING_REPLICA_ID);
    const response = defaultOffsetForLeaderEpochResponse();
    // KafkaApis: a replica's request needs CLUSTER_ACTION; each topic DESCRIBE (TOPIC_AUTHORIZATION_FAILED).
    if (ctx.apiVersion >= 3 && request.replicaId >= 0)
      services.auth.requireCluster(ctx, Operation.CLUSTER_ACTION);
    const describable = services.auth.filterAuthorized(
      ctx,
      Operation.DESCRIBE,
      ResourceType.TOPIC,
      request.topics.map((t) => t.topic),
    );
    for (const t of request.topics) {
      const topic = {
        ...defaultOffsetForLeaderTopicResult(),
        topic: t.topic,
        partitions: [] as EpochEndOffset[],
      };
      for (const p of t.partitions) {
        const out = defaultEpochEndOffset();
        out.partition = p.partition;
        out.leaderEpoch = -1;
        out.endOffset = -1n;
        if (!describable.has(t.topic)) {
          out.errorCode = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
          topic.partitions.push(out);
          continue;
        }
        try {
          const partition = rm.getPartitionOrException({ topic: t.topic, partition: p.partition });
          const r = partition.lastOffsetForLeaderEpoch(
            ctx.apiVersion >= 2 ? p.currentLeaderEpoch : -1,
            p.leaderEpoch,
            fetchOnlyFromLeader,
          );
          out.leaderEpoch = r.leaderEpoch;
          out.endOffset = r.endOffset;
        } catch (e) {
          if (!(e instanceof KafkaError)) throw e;
          out.errorCode = e.code;
        }
        topic.partitions.push(out);
      }
      response.topics.push(topic);
    }
    return response;
  };
  // Kafka's OffsetsForLeaderEpochRequest.getErrorResponse: the error in every partition.
  const errorResponse = (request: OffsetForLeaderEpochRequest, _v: number, errorCode: number) => ({
    ...defaultOffsetForLeaderEpochResponse(),
    topics: request.topics.map((t) => ({
      ...defaultOffsetForLeaderTopicResult(),
      topic: t.topic,
      partitions: t.partitions.map((p) => ({
        ...defaultEpochEndOffset(),
        partition: p.partition,
        errorCode,
        leaderEpoch: -1,
        endOffset: -1n,
      })),
    })),
  });
  return { apiKey: 23, handle, errorResponse };
}
