// ControlledShutdown (API key 7), from a broker that is stopping, to the controller: leadership of the
// partitions it leads moves to other ISR members and it leaves the ISRs; the answer lists the partitions
// it still leads (none when every one had another live ISR member). A broker that is not the controller
// answers NOT_CONTROLLER; a request from an earlier incarnation of the broker, STALE_BROKER_EPOCH.

import { ErrorCode } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import type { ControlledShutdownRequest } from "../../protocol/generated/messages/ControlledShutdownRequest.js";
import type { ControlledShutdownResponse } from "../../protocol/generated/messages/ControlledShutdownResponse.js";
import { Operation } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { HandlerRegistration } from "../handler.js";
import type { RequestContext } from "../request-context.js";

export function controlledShutdownHandler(services: BrokerServices): HandlerRegistration {
  return {
    apiKey: ApiKey.ControlledShutdown,
    // v0 has no broker epoch and a different header; Kafka 3.x clients of this API (brokers) send v3.
    minVersion: 1,
    handle: async (
      ctx: RequestContext,
      request: ControlledShutdownRequest,
    ): Promise<ControlledShutdownResponse> => {
      services.auth.requireCluster(ctx, Operation.CLUSTER_ACTION); // from brokers only
      const controller = services.controller;
      if (!controller.isActive) return { errorCode: ErrorCode.NOT_CONTROLLER, remainingPartitions: [] };
      const r = await controller.controlledShutdown(request.brokerId, request.brokerEpoch);
      return {
        errorCode: r.errorCode,
        remainingPartitions: r.remainingPartitions.map((tp) => ({
          topicName: tp.topic,
          partitionIndex: tp.partition,
        })),
      };
    },
  };
}
