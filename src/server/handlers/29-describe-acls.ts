// DescribeAcls (API key 29), Kafka's AclApis.handleDescribeAcls: the ACLs matching one filter, grouped by
// resource pattern. Needs DESCRIBE on the cluster (CLUSTER_AUTHORIZATION_FAILED); a filter with an UNKNOWN
// element is INVALID_REQUEST; without an authorizer SECURITY_DISABLED. Served by every broker from its
// ACL cache.

import { filterUnknownField, patternKey } from "../../common/acl-binding.js";
import { ErrorCode } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import type { DescribeAclsRequest } from "../../protocol/generated/messages/DescribeAclsRequest.js";
import {
  type DescribeAclsResource,
  type DescribeAclsResponse,
  defaultDescribeAclsResponse,
} from "../../protocol/generated/messages/DescribeAclsResponse.js";
import { Operation } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { Handler, HandlerRegistration } from "../handler.js";
import { bindingFilterOf, NO_AUTHORIZER_MESSAGE } from "./acl-request-support.js";

export function describeAclsHandler(services: BrokerServices): HandlerRegistration {
  const handle: Handler<DescribeAclsRequest, DescribeAclsResponse> = async (ctx, request) => {
    const response = defaultDescribeAclsResponse();
    const authorizer = services.auth.authorizer;
    if (authorizer === undefined)
      return { ...response, errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: NO_AUTHORIZER_MESSAGE };
    services.auth.requireCluster(ctx, Operation.DESCRIBE);
    const filter = bindingFilterOf(request);
    const unknown = filterUnknownField(filter);
    if (unknown !== undefined)
      return {
        ...response,
        errorCode: ErrorCode.INVALID_REQUEST,
        errorMessage: `DescribeAclsRequest contains UNKNOWN elements: ${unknown}`,
      };
    const byPattern = new Map<string, DescribeAclsResource>();
    for (const b of authorizer.acls(filter)) {
      const k = patternKey(b.pattern);
      let r = byPattern.get(k);
      if (r === undefined) {
        r = {
          resourceType: b.pattern.resourceType,
          resourceName: b.pattern.name,
          patternType: b.pattern.patternType,
          acls: [],
        };
        byPattern.set(k, r);
      }
      r.acls.push({ ...b.entry });
    }
    response.resources = [...byPattern.values()];
    return response;
  };
  return { apiKey: ApiKey.DescribeAcls, handle };
}
