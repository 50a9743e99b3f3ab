// OffsetCommit (API key 8), every version 0–9: a group's consumed positions, written to
// __consumer_offsets in Kafka's record format before the answer. Unknown topics are
// UNKNOWN_TOPIC_OR_PARTITION (as KafkaApis checks the metadata cache); metadata longer than
// offset.metadata.max.bytes is OFFSET_METADATA_TOO_LARGE. v1 may carry each partition's commit timestamp;
// v2–v4 a retention time (stored as the expire timestamp of OffsetCommitValue v1); v6+ the leader epoch.
// For a KIP-848 consumer group the generation id is the member epoch (STALE_MEMBER_EPOCH when it differs).

import { ErrorCode } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import type { OffsetCommitRequest } from "../../protocol/generated/messages/OffsetCommitRequest.js";
import {
  defaultOffsetCommitResponse,
  defaultOffsetCommitResponsePartition,
  defaultOffsetCommitResponseTopic,
  type OffsetCommitResponse,
} from "../../protocol/generated/messages/OffsetCommitResponse.js";
import { Operation, ResourceType } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import { type CommittedOffset, offsetKey } from "../coordinator/group/group-metadata.js";
import type { Handler, HandlerRegistration } from "../handler.js";

export function offsetCommitHandler(services: BrokerServices): HandlerRegistration {
  const handle: Handler<OffsetCommitRequest, OffsetCommitResponse> = async (ctx, request) => {
    const v = ctx.apiVersion;
    const now = BigInt(services.time.milliseconds());
    const retention = v >= 2 && v <= 4 ? request.retentionTimeMs : -1n;
    const offsets = new Map<string, CommittedOffset>();
    const codes = new Map<string, number>();
    // Authorization (KafkaApis): READ on the group (else every partition GROUP_AUTHORIZATION_FAILED),
    // READ on each topic (else TOPIC_AUTHORIZATION_FAILED).
    const auth = services.auth;
    const groupAllowed = auth.authorize(ctx, Operation.READ, ResourceType.GROUP, request.groupId);
    const readable = groupAllowed
      ? auth.filterAuthorized(
          ctx,
          Operation.READ,
          ResourceType.TOPIC,
          request.topics.map((t) => t.name),
        )
      : new Set<string>();
    for (const t of request.topics) {
      const known = services.metadata.hasTopic(t.name);
      for (const p of t.partitions) {
        const k = offsetKey(t.name, p.partitionIndex);
        if (!groupAllowed || !readable.has(t.name)) {
          codes.set(
            k,
            groupAllowed ? ErrorCode.TOPIC_AUTHORIZATION_FAILED : ErrorCode.GROUP_AUTHORIZATION_FAILED,
          );
          continue;
        }
        if (
          !known ||
          p.partitionIndex < 0 ||
          p.partitionIndex >= (services.metadata.numPartitions(t.name) ?? 0)
        ) {
          codes.set(k, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
          continue;
        }
        const commitTimestamp = v === 1 && p.commitTimestamp >= 0n ? p.commitTimestamp : now;
        offsets.set(k, {
          offset: p.committedOffset,
          leaderEpoch: v >= 6 ? p.committedLeaderEpoch : -1,
          metadata: p.committedMetadata ?? "",
          commitTimestamp,
          expireTimestamp: retention >= 0n ? commitTimestamp + retention : null,
        });
      }
    }
    const results = !groupAllowed
      ? new Map<string, number>()
      : await services.groupCoordinator.commitOffsets(
          request.groupId,
          v >= 1 ? request.memberId : "",
          v >= 7 ? request.groupInstanceId : null,
          v >= 1 ? request.generationIdOrMemberEpoch : -1,
          offsets,
        );
    for (const [k, c] of results) codes.set(k, c);
    const response = defaultOffsetCommitResponse();
    for (const t of request.topics) {
      response.topics.push({
        ...defaultOffsetCommitResponseTopic(),
        name: t.name,
        partitions: t.partitions.map((p) => ({
          ...defaultOffsetCommitResponsePartition(),
          partitionIndex: p.partitionIndex,
          errorCode: codes.get(offsetKey(t.name, p.partitionIndex)) ?? ErrorCode.UNKNOWN_SERVER_ERROR,
        })),
      });
    }
    return response;
  };
  return { apiKey: ApiKey.OffsetCommit, handle };
}
