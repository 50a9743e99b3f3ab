// TxnOffsetCommit (API key 28), every version 0–4: a transactional producer commits a group's offsets
// inside its transaction (send_offsets_to_transaction / sendOffsets). They are written to
// __consumer_offsets in a transactional batch of the producer and become the group's committed offsets only
// when the transaction's COMMIT marker reaches that partition (dropped on ABORT). v3+ carry the group
// member's id and generation, checked as for OffsetCommit. Unknown topics are UNKNOWN_TOPIC_OR_PARTITION.

import { ErrorCode } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import type { TxnOffsetCommitRequest } from "../../protocol/generated/messages/TxnOffsetCommitRequest.js";
import {
  defaultTxnOffsetCommitResponse,
  defaultTxnOffsetCommitResponsePartition,
  defaultTxnOffsetCommitResponseTopic,
  type TxnOffsetCommitResponse,
} from "../../protocol/generated/messages/TxnOffsetCommitResponse.js";
import { Operation, ResourceType } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import { type CommittedOffset, offsetKey } from "../coordinator/group/group-metadata.js";
import type { Handler, HandlerRegistration } from "../handler.js";

export function txnOffsetCommitHandler(services: BrokerServices): HandlerRegistration {
  const handle: Handler<TxnOffsetCommitRequest, TxnOffsetCommitResponse> = async (ctx, request) => {
    const v = ctx.apiVersion;
    const now = BigInt(services.time.milliseconds());
    const offsets = new Map<string, CommittedOffset>();
    const codes = new Map<string, number>();
    // KafkaApis: WRITE on the transactional id, READ on the group (else every partition carries that
    // error), READ on each topic (TOPIC_AUTHORIZATION_FAILED).
    const auth = services.auth;
    const refusal = !auth.authorize(
      ctx,
      Operation.WRITE,
      ResourceType.TRANSACTIONAL_ID,
      request.transactionalId,
    )
      ? ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
      : !auth.authorize(ctx, Operation.READ, ResourceType.GROUP, request.groupId)
        ? ErrorCode.GROUP_AUTHORIZATION_FAILED
        : undefined;
    const readable =
      refusal === undefined
        ? auth.filterAuthorized(
            ctx,
            Operation.READ,
            ResourceType.TOPIC,
            request.topics.map((t) => t.name),
          )
        : new Set<string>();
    for (const t of request.topics) {
      const partitions = services.metadata.numPartitions(t.name) ?? 0;
      for (const p of t.partitions) {
        const k = offsetKey(t.name, p.partitionIndex);
        if (refusal !== undefined || !readable.has(t.name)) {
          codes.set(k, refusal ?? ErrorCode.TOPIC_AUTHORIZATION_FAILED);
          continue;
        }
        if (p.partitionIndex < 0 || p.partitionIndex >= partitions) {
          codes.set(k, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
          continue;
        }
        offsets.set(k, {
          offset: p.committedOffset,
          leaderEpoch: v >= 2 ? p.committedLeaderEpoch : -1,
          metadata: p.committedMetadata ?? "",
          commitTimestamp: now,
          expireTimestamp: null,
        });
      }
    }
    const results =
      refusal !== undefined
        ? new Map<string, number>()
        : await services.groupCoordinator.commitTransactionalOffsets(
            request.groupId,
            request.producerId,
            request.producerEpoch,
            v >= 3 ? request.memberId : "",
            v >= 3 ? request.groupInstanceId : null,
            v >= 3 ? request.generationId : -1,
            offsets,
          );
    for (const [k, c] of results) codes.set(k, c);
    return {
      ...defaultTxnOffsetCommitResponse(),
      topics: request.topics.map((t) => ({
        ...defaultTxnOffsetCommitResponseTopic(),
        name: t.name,
        partitions: t.partitions.map((p) => ({
          ...defaultTxnOffsetCommitResponsePartition(),
          partitionIndex: p.partitionIndex,
          errorCode: codes.get(offsetKey(t.name, p.partitionIndex)) ?? ErrorCode.UNKNOWN_SERVER_ERROR,
        })),
      })),
    };
  };
  return { apiKey: ApiKey.TxnOffsetCommit, handle };
}
