// AlterClientQuotas (API key 49), versions 0–1: Kafka's KafkaApis.handleAlterClientQuotasRequest over
// ZkAdminManager.alterClientQuotas (server/quota/client-quota-admin.ts): each entry's ops applied to its
// user / client-id entity (/config/users, /config/clients, with a change notification every broker
// follows), or only validated with validate_only; each entry answered with its own error.

import { KafkaError } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import { ErrorCode } from "../../protocol/generated/errors.js";
import type { AlterClientQuotasRequest } from "../../protocol/generated/messages/AlterClientQuotasRequest.js";
import {
  type AlterClientQuotasResponse,
  defaultAlterClientQuotasResponse,
} from "../../protocol/generated/messages/AlterClientQuotasResponse.js";
import type { BrokerServices } from "../broker-services.js";
import type { HandlerRegistration } from "../handler.js";
import { ClientQuotaAdmin } from "../quota/client-quota-admin.js";

export function alterClientQuotasHandler(services: BrokerServices): HandlerRegistration {
  const admin = new ClientQuotaAdmin(services.metadata, services.topicAdmin);
  return {
    apiKey: ApiKey.AlterClientQuotas,
    handle: async (_ctx, request: AlterClientQuotasRequest): Promise<AlterClientQuotasResponse> => {
      const entries: AlterClientQuotasResponse["entries"] = [];
      for (const entry of request.entries) {
        let errorCode: number = ErrorCode.NONE;
        let errorMessage: string | null = null;
        try {
          await admin.alter(
            entry.entity,
            entry.ops.map((o) => ({ key: o.key, value: o.remove ? null : o.value })),
            request.validateOnly,
          );
        } catch (e) {
          if (!(e instanceof KafkaError)) throw e;
          errorCode = e.code;
          errorMessage = e.message;
        }
        entries.push({
          errorCode,
          errorMessage,
          entity: entry.entity.map((x) => ({ entityType: x.entityType, entityName: x.entityName })),
        });
      }
      return { ...defaultAlterClientQuotasResponse(), entries };
    },
    errorResponse: (
      request: AlterClientQuotasRequest,
      _v: number,
      errorCode: number,
      message: string | null,
    ) => ({
      ...defaultAlterClientQuotasResponse(),
      entries: request.entries.map((entry) => ({
        errorCode,
        errorMessage: message,
        entity: entry.entity.map((x) => ({ entityType: x.entityType, entityName: x.entityName })),
      })),
    }),
  };
}
