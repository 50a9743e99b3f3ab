// OffsetFetch (API key 9), every version 0–9: a group's committed offsets (-1 where none). v2+ may ask for
// every partition (topics null) and carry a group-level error; v8+ ask for several groups at once. Before
// v2 a group-level error is reported on each partition. require_stable (v7+) has nothing to wait for until
// transactional offset commits exist (issue 7). v9 carries the member id and epoch, checked against a KIP-848
// consumer group's member (UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH).

import { ErrorCode } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import type { OffsetFetchRequest } from "../../protocol/generated/messages/OffsetFetchRequest.js";
import {
  defaultOffsetFetchResponse,
  defaultOffsetFetchResponseGroup,
  defaultOffsetFetchResponsePartition,
  defaultOffsetFetchResponsePartitions,
  defaultOffsetFetchResponseTopic,
  defaultOffsetFetchResponseTopics,
  type OffsetFetchResponse,
} from "../../protocol/generated/messages/OffsetFetchResponse.js";
import { Operation, ResourceType } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { OffsetFetchPartition } from "../coordinator/group/offset-metadata-manager.js";
import type { Handler, HandlerRegistration } from "../handler.js";

function byTopic(partitions: readonly OffsetFetchPartition[]): Map<string, OffsetFetchPartition[]> {
  const out = new Map<string, OffsetFetchPartition[]>();
  for (const p of partitions) {
    let l = out.get(p.topic);
    if (l === undefined) {
      l = [];
      out.set(p.topic, l);
    }
    l.push(p);
  }
  return out;
}

export function offsetFetchHandler(services: BrokerServices): HandlerRegistration {
  const groupCoordinator = services.groupCoordinator;
  const handle: Handler<OffsetFetchRequest, OffsetFetchResponse> = async (ctx, request) => {
    // Authorization (KafkaApis): DESCRIBE on the group (else GROUP_AUTHORIZATION_FAILED) and on each topic
    // (asked for: TOPIC_AUTHORIZATION_FAILED; all of the group's: the others left out).
    const auth = services.auth;
    const coordinator = {
      fetchOffsets(
        ...args: Parameters<typeof groupCoordinator.fetchOffsets>
      ): ReturnType<typeof groupCoordinator.fetchOffsets> {
        const [groupId, wanted, member, stable] = args;
        if (!auth.authorize(ctx, Operation.DESCRIBE, ResourceType.GROUP, groupId))
          return { errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, partitions: [] };
        if (wanted === null) {
          const r = groupCoordinator.fetchOffsets(groupId, null, member, stable);
          const ok = auth.filterAuthorized(
            ctx,
            Operation.DESCRIBE,
            ResourceType.TOPIC,
            r.partitions.map((p) => p.topic),
            false,
          );
          return { ...r, partitions: r.partitions.filter((p) => ok.has(p.topic)) };
        }
        const ok = auth.filterAuthorized(
          ctx,
          Operation.DESCRIBE,
          ResourceType.TOPIC,
          wanted.map((p) => p.topic),
        );
        const r = groupCoordinator.fetchOffsets(
          groupId,
          wanted.filter((p) => ok.has(p.topic)),
          member,
          stable,
        );
        const refused = wanted
          .filter((p) => !ok.has(p.topic))
          .map((p) => ({
            ...p,
            offset: -1n,
            leaderEpoch: -1,
            metadata: "",
            errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
          }));
        return { ...r, partitions: [...r.partitions, ...refused] };
      },
    };
    const v = ctx.apiVersion;
    const response = defaultOffsetFetchResponse();
    if (v >= 8) {
      for (const g of request.groups) {
        const wanted =
          g.topics?.flatMap((t) => t.partitionIndexes.map((partition) => ({ topic: t.name, partition }))) ??
          null;
        const member = v >= 9 ? { memberId: g.memberId, memberEpoch: g.memberEpoch } : undefined;
        const r = coordinator.fetchOffsets(g.groupId, wanted, member, request.requireStable);
        response.groups.push({
          ...defaultOffsetFetchResponseGroup(),
          groupId: g.groupId,
          errorCode: r.errorCode,
          topics: [...byTopic(r.partitions)].map(([name, ps]) => ({
            ...defaultOffsetFetchResponseTopics(),
            name,
            partitions: ps.map((p) => ({
              ...defaultOffsetFetchResponsePartitions(),
              partitionIndex: p.partition,
              committedOffset: p.offset,
              committedLeaderEpoch: p.leaderEpoch,
              metadata: p.metadata,
              errorCode: p.errorCode,
            })),
          })),
        });
      }
      return response;
    }
    const topics = v >= 2 ? request.topics : (request.topics ?? []);
    const wanted =
      topics?.flatMap((t) => t.partitionIndexes.map((partition) => ({ topic: t.name, partition }))) ?? null;
    const r = coordinator.fetchOffsets(request.groupId, wanted, undefined, v >= 7 && request.requireStable);
    let partitions = r.partitions;
    if (r.errorCode !== ErrorCode.NONE && v < 2) {
      // v0–1 have no group-level error: every requested partition carries it.
      partitions = (wanted ?? []).map(({ topic, partition }) => ({
        topic,
        partition,
        offset: -1n,
        leaderEpoch: -1,
        metadata: "",
        errorCode: r.errorCode,
      }));
    }
    response.errorCode = r.errorCode;
    response.topics = [...byTopic(partitions)].map(([name, ps]) => ({
      ...defaultOffsetFetchResponseTopic(),
      name,
      partitions: ps.map((p) => ({
        ...defaultOffsetFetchResponsePartition(),
        partitionIndex: p.partition,
        committedOffset: p.offset,
        committedLeaderEpoch: p.leaderEpoch,
        metadata: p.metadata,
        errorCode: p.errorCode,
      })),
    }));
    return response;
  };
  return { apiKey: ApiKey.OffsetFetch, handle };
}
