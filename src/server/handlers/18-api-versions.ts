// ApiVersions (API key 18), every version 0–4: the APIs this broker really serves, each with the version
// range its handler accepts (or advertises, see HandlerRegistration.advertisedMinVersion), and nothing
// else. Only APIs that a ZooKeeper-mode broker serves ("zkBroker" / "broker" listeners) are listed.
// Finalized features are empty (a ZooKeeper-mode broker without the feature znode). The client software
// name and version of v3+ are accepted whatever they are.
// An ApiVersions request at a version the broker does not know is answered by the pipeline with
// `apiVersionsErrorResponse` at v0 (Kafka's rule: clients retry with a version from the ranges listed).

import { encodeResponse } from "../../protocol/framing.js";
import { ApiKey, Apis } from "../../protocol/generated/api-table.js";
import type { ApiVersionsRequest } from "../../protocol/generated/messages/ApiVersionsRequest.js";
import {
  type ApiVersion,
  type ApiVersionsResponse,
  defaultApiVersionsResponse,
} from "../../protocol/generated/messages/ApiVersionsResponse.js";
import type { HandlerRegistration } from "../handler.js";
import type { RequestContext } from "../request-context.js";

/** What the ApiVersions handler needs from the pipeline: the advertised range of every served API. */
export interface SupportedApis {
  supportedApis(): ApiVersion[];
}

export function apiVersionsResponse(apis: ApiVersion[], errorCode: number): ApiVersionsResponse {
  return {
    ...defaultApiVersionsResponse(),
    errorCode,
    apiKeys: apis.map((a) => ({ apiKey: a.apiKey, minVersion: a.minVersion, maxVersion: a.maxVersion })),
  };
}

export function apiVersionsHandler(supported: SupportedApis): HandlerRegistration {
  return {
    apiKey: ApiKey.ApiVersions,
    minVersion: 0,
    maxVersion: 4,
    handle: async (_ctx: RequestContext, _request: ApiVersionsRequest): Promise<ApiVersionsResponse> =>
      apiVersionsResponse(supported.supportedApis(), 0),
    errorResponse: (_request: ApiVersionsRequest, _version: number, errorCode: number) =>
      apiVersionsResponse(supported.supportedApis(), errorCode),
  };
}

/** The ApiVersions v0 frame answering a request at a version the broker does not serve. */
export function apiVersionsErrorResponseFrame(
  apis: ApiVersion[],
  correlationId: number,
  errorCode: number,
): Buffer[] {
  return encodeResponse(Apis.ApiVersions, 0, correlationId, apiVersionsResponse(apis, errorCode));
}
