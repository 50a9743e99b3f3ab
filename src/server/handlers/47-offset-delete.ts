// OffsetDelete (API key 47), version 0: removes a group's committed offsets for some partitions. Partitions
// of topics the group's members still subscribe to are GROUP_SUBSCRIBED_TO_TOPIC; a group that is neither
// empty nor a consumer group is NON_EMPTY_GROUP; an unknown group GROUP_ID_NOT_FOUND.

import { ErrorCode } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import type { OffsetDeleteRequest } from "../../protocol/generated/messages/OffsetDeleteRequest.js";
import {
  defaultOffsetDeleteResponse,
  defaultOffsetDeleteResponsePartition,
  defaultOffsetDeleteResponseTopic,
  type OffsetDeleteResponse,
} from "../../protocol/generated/messages/OffsetDeleteResponse.js";
import { Operation, ResourceType } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import { offsetKey } from "../coordinator/group/group-metadata.js";
import type { Handler, HandlerRegistration } from "../handler.js";

export function offsetDeleteHandler(services: BrokerServices): HandlerRegistration {
  const handle: Handler<OffsetDeleteRequest, OffsetDeleteResponse> = async (ctx, request) => {
    // KafkaApis: DELETE on the group (else GROUP_AUTHORIZATION_FAILED), READ on each topic.
    services.auth.requireGroup(ctx, Operation.DELETE, request.groupId);
    const readable = services.auth.filterAuthorized(
      ctx,
      Operation.READ,
      ResourceType.TOPIC,
      request.topics.map((t) => t.name),
    );
    const wanted = request.topics.flatMap((t) =>
      t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex })),
    );
    const unknown = new Set(
      wanted
        .filter((w) => !services.metadata.hasTopic(w.topic) || !readable.has(w.topic))
        .map((w) => offsetKey(w.topic, w.partition)),
    );
    const r = await services.groupCoordinator.deleteOffsets(
      request.groupId,
      wanted.filter((w) => !unknown.has(offsetKey(w.topic, w.partition))),
    );
    const response = defaultOffsetDeleteResponse();
    response.errorCode = r.errorCode;
    if (r.errorCode !== ErrorCode.NONE) return response;
    response.topics = request.topics.map((t) => ({
      ...defaultOffsetDeleteResponseTopic(),
      name: t.name,
      partitions: t.partitions.map((p) => {
        const k = offsetKey(t.name, p.partitionIndex);
        return {
          ...defaultOffsetDeleteResponsePartition(),
          partitionIndex: p.partitionIndex,
          errorCode: !readable.has(t.name)
            ? ErrorCode.TOPIC_AUTHORIZATION_FAILED
            : unknown.has(k)
              ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
              : (r.partitions.get(k) ?? ErrorCode.NONE),
        };
      }),
    }));
    return response;
  };
  return { apiKey: ApiKey.OffsetDelete, handle };
}
