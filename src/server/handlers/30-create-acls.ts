// CreateAcls (API key 30), Kafka's AclApis.handleCreateAcls: adds ACL bindings through the authorizer
// (written to the metadata store; every broker applies them from the change notification). Needs ALTER on
// the cluster; a binding with an unknown or ANY element, a CLUSTER resource not named kafka-cluster, an
// empty name or one with '/' is INVALID_REQUEST; without an authorizer SECURITY_DISABLED.

import { ErrorCode } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import type { CreateAclsRequest } from "../../protocol/generated/messages/CreateAclsRequest.js";
import type { CreateAclsResponse } from "../../protocol/generated/messages/CreateAclsResponse.js";
import { Operation } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { Handler, HandlerRegistration } from "../handler.js";
import { NO_AUTHORIZER_MESSAGE } from "./acl-request-support.js";

export function createAclsHandler(services: BrokerServices): HandlerRegistration {
  const handle: Handler<CreateAclsRequest, CreateAclsResponse> = async (ctx, request) => {
    const authorizer = services.auth.authorizer;
    const all = (errorCode: number, errorMessage: string | null): CreateAclsResponse => ({
      throttleTimeMs: 0,
      results: request.creations.map(() => ({ errorCode, errorMessage })),
    });
    if (authorizer === undefined) return all(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER_MESSAGE);
    services.auth.requireCluster(ctx, Operation.ALTER);
    const results = await authorizer.createAcls(
      request.creations.map((c) => ({
        pattern: { resourceType: c.resourceType, name: c.resourceName, patternType: c.resourcePatternType },
        entry: {
          principal: c.principal,
          host: c.host,
          operation: c.operation,
          permissionType: c.permissionType,
        },
      })),
    );
    return {
      throttleTimeMs: 0,
      results: results.map((r) =>
        r === undefined
          ? { errorCode: ErrorCode.NONE, errorMessage: null }
          : { errorCode: ErrorCode[r.error], errorMessage: r.message },
      ),
    };
  };
  return {
    apiKey: ApiKey.CreateAcls,
    handle,
    errorResponse: (
      request: CreateAclsRequest,
      _v: number,
      errorCode: number,
      errorMessage: string | null,
    ) => ({
      throttleTimeMs: 0,
      results: request.creations.map(() => ({ errorCode, errorMessage })),
    }),
  };
}
