// AuthHelper: the authorization checks the API handlers make (Kafka's AuthHelper over the configured
// Authorizer). Without an authorizer (`authorizer.class.name` empty) everything is allowed, as Kafka.
// `require*` throw the KafkaError Kafka answers (the pipeline puts it in the response's error fields);
// `filterAuthorized` keeps the names allowed; `authorizedOperations` fills the KIP-430 fields.

import { CLUSTER_NAME, Operation, ResourceType, SUPPORTED_OPERATIONS } from "../common/acl-binding.js";
import { KafkaError } from "../protocol/errors.js";
import { authorizedOperations as allOperations } from "./authorized-operations.js";
import type { RequestContext } from "./request-context.js";
import type { AclAuthorizer } from "./security/authorizer/acl-authorizer.js";

export { Operation, ResourceType } from "../common/acl-binding.js";

export class AuthHelper {
  constructor(readonly authorizer?: AclAuthorizer) {}

  /** May the request do `op` on the resource? (Always, without an authorizer.) */
  authorize(ctx: RequestContext, op: number, type: number, name: string, logIfDenied = true): boolean {
    return this.authorizer?.authorize(ctx, op, type, name, logIfDenied) ?? true;
  }

  /** `op` on the cluster resource. */
  authorizeCluster(ctx: RequestContext, op: number, logIfDenied = true): boolean {
    return this.authorize(ctx, op, ResourceType.CLUSTER, CLUSTER_NAME, logIfDenied);
  }

  /** Kafka's authorizeClusterOperation: CLUSTER_AUTHORIZATION_FAILED unless `op` on the cluster. */
  requireCluster(ctx: RequestContext, op: number): void {
    if (!this.authorizeCluster(ctx, op))
      throw new KafkaError("CLUSTER_AUTHORIZATION_FAILED", `Request ${ctx.api.name} is not authorized.`);
  }

  /** GROUP_AUTHORIZATION_FAILED unless `op` on the group. */
  requireGroup(ctx: RequestContext, op: number, group: string): void {
    if (!this.authorize(ctx, op, ResourceType.GROUP, group))
      throw new KafkaError("GROUP_AUTHORIZATION_FAILED", `Not authorized to access group: ${group}`);
  }

  /** TRANSACTIONAL_ID_AUTHORIZATION_FAILED unless `op` on the transactional id. */
  requireTransactionalId(ctx: RequestContext, op: number, transactionalId: string): void {
    if (!this.authorize(ctx, op, ResourceType.TRANSACTIONAL_ID, transactionalId))
      throw new KafkaError("TRANSACTIONAL_ID_AUTHORIZATION_FAILED", "Transactional Id authorization failed.");
  }

  /** The names (deduplicated) on which `op` is allowed. */
  filterAuthorized(
    ctx: RequestContext,
    op: number,
    type: number,
    names: Iterable<string>,
    logIfDenied = true,
  ): Set<string> {
    const out = new Set<string>();
    const seen = new Set<string>();
    for (const n of names) {
      if (seen.has(n)) continue;
      seen.add(n);
      if (this.authorize(ctx, op, type, n, logIfDenied)) out.add(n);
    }
    return out;
  }

  /** Kafka's authorizeByResourceType (KIP-679: idempotent producers with WRITE on some topic). */
  authorizeByResourceType(ctx: RequestContext, op: number, type: number): boolean {
    return this.authorizer?.authorizeByResourceType(ctx, op, type) ?? true;
  }

  /**
   * KIP-430's field: bit n for each operation allowed on the resource, MIN_VALUE when not asked for.
   * Without an authorizer, every supported operation.
   */
  authorizedOperations(
    ctx: RequestContext,
    kind: "topic" | "cluster" | "group",
    name: string,
    include: boolean,
  ): number {
    const authorizer = this.authorizer;
    if (!include || authorizer === undefined) return allOperations(kind, include);
    const type =
      kind === "topic" ? ResourceType.TOPIC : kind === "group" ? ResourceType.GROUP : ResourceType.CLUSTER;
    // Kafka computes the cluster's only for a principal that may DESCRIBE it (else 0).
    if (kind === "cluster" && !authorizer.authorize(ctx, Operation.DESCRIBE, type, name)) return 0;
    let bits = 0;
    for (const op of SUPPORTED_OPERATIONS.get(type) ?? [])
      if (authorizer.authorize(ctx, op, type, name, false, false)) bits |= 1 << op;
    return bits;
  }
}

/**
 * Runs `work` on the allowed items only and answers `refused(item)` for the others, in request order
 * (`work` returns one result per item it was given, in order).
 */
export async function withAuthorized<T, R>(
  items: readonly T[],
  allowed: (item: T) => boolean,
  work: (allowedItems: T[]) => Promise<R[]>,
  refused: (item: T) => R,
): Promise<R[]> {
  const ok = items.map(allowed);
  const done = await work(items.filter((_, i) => ok[i]));
  let next = 0;
  return items.map((item, i) => (ok[i] ? done[next++] : refused(item)));
}

/** A topic's TOPIC_AUTHORIZATION_FAILED in the admin APIs' results. */
export function topicAuthorizationFailed(): KafkaError {
  return new KafkaError("TOPIC_AUTHORIZATION_FAILED", "Authorization failed.");
}

/** The config resource types of Describe/Alter/IncrementalAlterConfigs (ConfigResource.Type). */
const CONFIG_TOPIC = 2;

/**
 * KafkaApis' config authorization: `op` (DESCRIBE_CONFIGS / ALTER_CONFIGS) on the topic
 * (TOPIC_AUTHORIZATION_FAILED) or, for a broker or broker logger, on the cluster (CLUSTER_AUTHORIZATION_FAILED).
 * Undefined when allowed.
 */
export function configAuthorizationError(
  auth: AuthHelper,
  ctx: RequestContext,
  op: number,
  resourceType: number,
  resourceName: string,
): KafkaError | undefined {
  if (resourceType === CONFIG_TOPIC)
    return auth.authorize(ctx, op, ResourceType.TOPIC, resourceName) ? undefined : topicAuthorizationFailed();
  return auth.authorizeCluster(ctx, op)
    ? undefined
    : new KafkaError("CLUSTER_AUTHORIZATION_FAILED", "Cluster authorization failed.");
}
