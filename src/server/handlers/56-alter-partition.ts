// AlterPartition (API key 56, KIP-497), from a partition leader to the controller: a new ISR for its
// partitions. Only the active controller answers (others: NOT_CONTROLLER); the checks and the znode write
// are KafkaController.alterPartition's. Versions 0–1 (topics by name, ISR as broker ids).

import { getOrCreate } from "../../common/maps.js";
import { ErrorCode } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import type { AlterPartitionRequest } from "../../protocol/generated/messages/AlterPartitionRequest.js";
import type { AlterPartitionResponse } from "../../protocol/generated/messages/AlterPartitionResponse.js";
import { Operation } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { HandlerRegistration } from "../handler.js";
import type { RequestContext } from "../request-context.js";

export function alterPartitionHandler(services: BrokerServices): HandlerRegistration {
  return {
    apiKey: ApiKey.AlterPartition,
    minVersion: 0,
    maxVersion: 1,
    handle: async (ctx: RequestContext, request: AlterPartitionRequest): Promise<AlterPartitionResponse> => {
      services.auth.requireCluster(ctx, Operation.CLUSTER_ACTION); // from brokers only
      const controller = services.controller;
      if (!controller.isActive) return { throttleTimeMs: 0, errorCode: ErrorCode.NOT_CONTROLLER, topics: [] };
      const items = request.topics.flatMap((t) =>
        t.partitions.map((p) => ({
          topic: t.topicName,
          partition: p.partitionIndex,
          leaderEpoch: p.leaderEpoch,
          newIsr: p.newIsr,
          partitionEpoch: p.partitionEpoch,
        })),
      );
      const results = await controller.alterPartition(request.brokerId, request.brokerEpoch, items);
      const byTopic = new Map<string, AlterPartitionResponse["topics"][number]>();
      for (const r of results) {
        const t = getOrCreate(byTopic, r.topic, () => ({
          topicName: r.topic,
          topicId: "AAAAAAAAAAAAAAAAAAAAAA",
          partitions: [],
        }));
        t.partitions.push({
          partitionIndex: r.partition,
          errorCode: r.errorCode,
          leaderId: request.brokerId,
          leaderEpoch: r.leaderEpoch,
          isr: [...r.isr],
          leaderRecoveryState: 0,
          partitionEpoch: r.partitionEpoch,
        });
      }
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, topics: [...byTopic.values()] };
    },
  };
}
