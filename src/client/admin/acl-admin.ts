// AclAdmin: the ACL half of Kafka's Admin API over a ClusterClient — createAcls (CreateAcls), describeAcls
// (DescribeAcls with one filter) and deleteAcls (DeleteAcls with filters), each sent to any broker (every
// broker serves them: the ACLs live in the metadata store). Bindings and filters are the broker's own
// types (resource pattern + access control entry, with Kafka's codes). Retriable errors are retried with
// retry.backoff.ms until the timeout; an error answer is a KafkaClientError.
//
// Usage:
//   const acls = new AclAdmin(admin.cluster);
//   await acls.createAcls([{ pattern: { resourceType: 2, name: "t", patternType: 3 },
//                            entry: { principal: "User:alice", host: "*", operation: 3, permissionType: 3 } }]);
//   const bindings = await acls.describeAcls(ANY_BINDING_FILTER);

import type { AclBinding, AclBindingFilter } from "../../common/acl-binding.js";
import { Apis } from "../../protocol/generated/api-table.js";
import { ErrorCode } from "../../protocol/generated/errors.js";
import { KafkaClientError } from "../errors.js";
import type { ClusterClient } from "../network/cluster-client.js";

export type { AclBinding, AclBindingFilter };

/** Matches every binding (AclBindingFilter.ANY). */
export const ANY_BINDING_FILTER: AclBindingFilter = {
  pattern: { resourceType: 1, name: null, patternType: 1 },
  entry: { principal: null, host: null, operation: 1, permissionType: 1 },
};

function filterFields(f: AclBindingFilter) {
  return {
    resourceTypeFilter: f.pattern.resourceType,
    resourceNameFilter: f.pattern.name,
    patternTypeFilter: f.pattern.patternType,
    principalFilter: f.entry.principal,
    hostFilter: f.entry.host,
    operation: f.entry.operation,
    permissionType: f.entry.permissionType,
  };
}

export class AclAdmin {
  constructor(private readonly cluster: ClusterClient) {}

  /** Adds the bindings; throws the first error a binding got. */
  async createAcls(bindings: readonly AclBinding[]): Promise<void> {
    if (bindings.length === 0) return;
    const res = await this.cluster.withRetries("CreateAcls", async () => {
      const conn = await this.cluster.anyConnection();
      return conn.send(Apis.CreateAcls, conn.versionFor(Apis.CreateAcls), {
        creations: bindings.map((b) => ({
          resourceType: b.pattern.resourceType,
          resourceName: b.pattern.name,
          resourcePatternType: b.pattern.patternType,
          principal: b.entry.principal,
          host: b.entry.host,
          operation: b.entry.operation,
          permissionType: b.entry.permissionType,
        })),
      });
    });
    const failed = res.results.find((r) => r.errorCode !== ErrorCode.NONE);
    if (failed) throw new KafkaClientError(failed.errorCode, failed.errorMessage);
  }

  /** The bindings matching the filter. */
  async describeAcls(filter: AclBindingFilter): Promise<AclBinding[]> {
    const res = await this.cluster.withRetries("DescribeAcls", async () => {
      const conn = await this.cluster.anyConnection();
      return conn.send(Apis.DescribeAcls, conn.versionFor(Apis.DescribeAcls), filterFields(filter));
    });
    if (res.errorCode !== ErrorCode.NONE) throw new KafkaClientError(res.errorCode, res.errorMessage);
    return res.resources.flatMap((r) =>
      r.acls.map((a) => ({
        pattern: { resourceType: r.resourceType, name: r.resourceName, patternType: r.patternType },
        entry: {
          principal: a.principal,
          host: a.host,
          operation: a.operation,
          permissionType: a.permissionType,
        },
      })),
    );
  }

  /** Removes what the filters match; the bindings removed, per filter. Throws a filter's error. */
  async deleteAcls(filters: readonly AclBindingFilter[]): Promise<AclBinding[][]> {
    if (filters.length === 0) return [];
    const res = await this.cluster.withRetries("DeleteAcls", async () => {
      const conn = await this.cluster.anyConnection();
      return conn.send(Apis.DeleteAcls, conn.versionFor(Apis.DeleteAcls), {
        filters: filters.map(filterFields),
      });
    });
    return res.filterResults.map((r) => {
      if (r.errorCode !== ErrorCode.NONE) throw new KafkaClientError(r.errorCode, r.errorMessage);
      const failed = r.matchingAcls.find((m) => m.errorCode !== ErrorCode.NONE);
      if (failed) throw new KafkaClientError(failed.errorCode, failed.errorMessage);
      return r.matchingAcls.map((m) => ({
        pattern: { resourceType: m.resourceType, name: m.resourceName, patternType: m.patternType },
        entry: {
          principal: m.principal,
          host: m.host,
          operation: m.operation,
          permissionType: m.permissionType,
        },
      }));
    });
  }
}
