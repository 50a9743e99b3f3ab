// DescribeClientQuotas (API key 48), versions 0–1: Kafka's KafkaApis.handleDescribeClientQuotasRequest
// over ZkAdminManager.describeClientQuotas (server/quota/client-quota-admin.ts): the quota keys of the
// user / client-id entities the filter matches; a bad filter is the top-level error with null entries.

import { KafkaError } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import { ErrorCode } from "../../protocol/generated/errors.js";
import type { DescribeClientQuotasRequest } from "../../protocol/generated/messages/DescribeClientQuotasRequest.js";
import {
  type DescribeClientQuotasResponse,
  defaultDescribeClientQuotasResponse,
} from "../../protocol/generated/messages/DescribeClientQuotasResponse.js";
import type { BrokerServices } from "../broker-services.js";
import type { HandlerRegistration } from "../handler.js";
import { ClientQuotaAdmin } from "../quota/client-quota-admin.js";

export function describeClientQuotasHandler(services: BrokerServices): HandlerRegistration {
  const admin = new ClientQuotaAdmin(services.metadata, services.topicAdmin);
  const errorResponse = (
    _request: DescribeClientQuotasRequest,
    _v: number,
    errorCode: number,
    message: string | null,
  ): DescribeClientQuotasResponse => ({
    ...defaultDescribeClientQuotasResponse(),
    errorCode,
    errorMessage: message,
    entries: null,
  });
  return {
    apiKey: ApiKey.DescribeClientQuotas,
    handle: async (_ctx, request: DescribeClientQuotasRequest): Promise<DescribeClientQuotasResponse> => {
      try {
        const entries = admin.describe(request.components, request.strict);
        return { ...defaultDescribeClientQuotasResponse(), errorCode: ErrorCode.NONE, entries };
      } catch (e) {
        if (!(e instanceof KafkaError)) throw e;
        return errorResponse(request, 0, e.code, e.message);
      }
    },
    errorResponse,
  };
}
