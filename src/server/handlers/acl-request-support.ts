// What the ACL handlers (DescribeAcls 29, CreateAcls 30, DeleteAcls 31) share: the request's filter fields
// as an AclBindingFilter, and Kafka's answer when no authorizer is configured (SECURITY_DISABLED).

import type { AclBindingFilter } from "../../common/acl-binding.js";

export const NO_AUTHORIZER_MESSAGE = "No Authorizer is configured on the broker";

export interface AclFilterFields {
  readonly resourceTypeFilter: number;
  readonly resourceNameFilter: string | null;
  readonly patternTypeFilter: number;
  readonly principalFilter: string | null;
  readonly hostFilter: string | null;
  readonly operation: number;
  readonly permissionType: number;
}

export function bindingFilterOf(f: AclFilterFields): AclBindingFilter {
  return {
    pattern: {
      resourceType: f.resourceTypeFilter,
      name: f.resourceNameFilter,
      patternType: f.patternTypeFilter,
    },
    entry: {
      principal: f.principalFilter,
      host: f.hostFilter,
      operation: f.operation,
      permissionType: f.permissionType,
    },
  };
}
