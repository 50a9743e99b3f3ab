// Authorized operations (KIP-430): the 32-bit fields of Metadata (topics, cluster), DescribeCluster,
// DescribeGroups and ConsumerGroupDescribe that tell a client what it may do with a resource — bit n set
// for AclOperation code n. Asked for by the request's include_*_authorized_operations flag; otherwise
// Kafka's "not computed" value, Integer.MIN_VALUE. Without an authorizer (`authorizer.class.name` empty)
// every operation the resource type supports is authorized, as Kafka answers then; with one, the
// handlers ask it (AuthHelper.authorizedOperations).

import { Operation } from "../common/acl-binding.js";

/** Integer.MIN_VALUE: authorized operations not asked for. */
export const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;

const A = Operation;
/** Kafka's AclEntry.supportedOperations per resource type. */
const SUPPORTED: Record<"topic" | "cluster" | "group", readonly number[]> = {
  topic: [A.READ, A.WRITE, A.CREATE, A.DESCRIBE, A.DELETE, A.ALTER, A.DESCRIBE_CONFIGS, A.ALTER_CONFIGS],
  cluster: [
    A.CREATE,
    A.CLUSTER_ACTION,
    A.DESCRIBE_CONFIGS,
    A.ALTER_CONFIGS,
    A.IDEMPOTENT_WRITE,
    A.ALTER,
    A.DESCRIBE,
  ],
  group: [A.READ, A.DESCRIBE, A.DELETE],
};

/** The field's value for a resource of `type`: every supported operation when asked, else MIN_VALUE. */
export function authorizedOperations(type: keyof typeof SUPPORTED, include: boolean): number {
  if (!include) return AUTHORIZED_OPERATIONS_OMITTED;
  return SUPPORTED[type].reduce((bits, op) => bits | (1 << op), 0);
}
