// DeleteAcls (API key 31), Kafka's AclApis.handleDeleteAcls: removes the ACLs each filter matches and
// answers, per filter, the bindings removed. Needs ALTER on the cluster; a filter with an UNKNOWN element
// is INVALID_REQUEST; without an authorizer SECURITY_DISABLED.

import { type AclBindingFilter, filterUnknownField } from "../../common/acl-binding.js";
import { ErrorCode } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import type { DeleteAclsRequest } from "../../protocol/generated/messages/DeleteAclsRequest.js";
import type {
  DeleteAclsFilterResult,
  DeleteAclsResponse,
} from "../../protocol/generated/messages/DeleteAclsResponse.js";
import { Operation } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { Handler, HandlerRegistration } from "../handler.js";
import { bindingFilterOf, NO_AUTHORIZER_MESSAGE } from "./acl-request-support.js";

export function deleteAclsHandler(services: BrokerServices): HandlerRegistration {
  const errorResponse = (
    request: DeleteAclsRequest,
    _v: number,
    errorCode: number,
    errorMessage: string | null,
  ): DeleteAclsResponse => ({
    throttleTimeMs: 0,
    filterResults: request.filters.map(() => ({ errorCode, errorMessage, matchingAcls: [] })),
  });
  const handle: Handler<DeleteAclsRequest, DeleteAclsResponse> = async (ctx, request) => {
    const authorizer = services.auth.authorizer;
    if (authorizer === undefined)
      return errorResponse(request, ctx.apiVersion, ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER_MESSAGE);
    services.auth.requireCluster(ctx, Operation.ALTER);
    const filters = request.filters.map(bindingFilterOf);
    const valid: AclBindingFilter[] = [];
    const slots: Array<number | string> = filters.map((f) => {
      const unknown = filterUnknownField(f);
      if (unknown !== undefined) return unknown;
      valid.push(f);
      return valid.length - 1;
    });
    const deleted = await authorizer.deleteAcls(valid);
    const filterResults: DeleteAclsFilterResult[] = slots.map((slot) => {
      if (typeof slot === "string")
        return {
          errorCode: ErrorCode.INVALID_REQUEST,
          errorMessage: `DeleteAclsRequest contains UNKNOWN elements: ${slot}`,
          matchingAcls: [],
        };
      return {
        errorCode: ErrorCode.NONE,
        errorMessage: null,
        matchingAcls: deleted[slot].deleted.map(({ binding, error }) => ({
          errorCode: error === undefined ? ErrorCode.NONE : ErrorCode.UNKNOWN_SERVER_ERROR,
          errorMessage: error ?? null,
          resourceType: binding.pattern.resourceType,
          resourceName: binding.pattern.name,
          patternType: binding.pattern.patternType,
          principal: binding.entry.principal,
          host: binding.entry.host,
          operation: binding.entry.operation,
          permissionType: binding.entry.permissionType,
        })),
      };
    });
    return { throttleTimeMs: 0, filterResults };
  };
  return { apiKey: ApiKey.DeleteAcls, handle, errorResponse };
}
