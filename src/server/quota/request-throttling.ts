// RequestThrottling: KafkaApis' use of the client quotas for one handled request — what it records, which
// throttle time the response carries and which manager the throttle is counted under:
// - Produce (not from a transaction marker writer): the request's size against producer_byte_rate, and
//   (acks ≠ 0) its handling time against request_percentage; the larger throttle time wins. acks=0 gets
//   no response but its connection is still muted when the byte rate is exceeded.
// - Fetch from a consumer: the response's size against consumer_byte_rate and the handling time against
//   request_percentage; a throttled fetch is answered empty (Kafka's getThrottledResponse: no partitions,
//   the session id kept only for an incremental fetch) and its bytes are not counted. Fetches from
//   followers (replica id ≥ 0) are not client-quota'd.
// - Any other API with a throttle_time_ms field: its handling time against request_percentage, except
//   the ones Kafka exempts (ApiVersions, SASL, the controller's and brokers' cluster actions);
//   CreateTopics / CreatePartitions / DeleteTopics also under controller_mutation_rate (their handlers
//   ask controllerMutationQuota() and put its throttle time in the response; the larger one wins).
// The user is the connection's principal name (User:ANONYMOUS when unauthenticated), sanitized as in
// the /config/users entity names; the client id is the request header's.

import { ApiKey } from "../../protocol/generated/api-table.js";
import { sanitizeEntityName } from "../metadata/zk-data.js";
import type { RequestContext } from "../request-context.js";
import type { RequestThrottler, ThrottleDecision } from "../request-pipeline.js";
import type { ClientQuotas } from "./client-quotas.js";
import type { ControllerMutationQuota } from "./controller-mutation-quota-manager.js";

/** APIs Kafka answers with sendResponseExemptThrottle / exempts from the request quota. */
const REQUEST_QUOTA_EXEMPT = new Set<number>([
  ApiKey.ApiVersions,
  ApiKey.SaslHandshake,
  ApiKey.SaslAuthenticate,
  ApiKey.LeaderAndIsr,
  ApiKey.StopReplica,
  ApiKey.UpdateMetadata,
  ApiKey.ControlledShutdown,
  ApiKey.WriteTxnMarkers,
  ApiKey.AlterPartition,
]);

/** The version from which each response asks the client to back off itself (KIP-219). */
const CLIENT_THROTTLES_FROM: ReadonlyMap<number, number> = new Map([
  [ApiKey.Produce, 6],
  [ApiKey.Fetch, 8],
]);

const ANONYMOUS = "User:ANONYMOUS";

/** APIs under the controller mutation quota, with the version from which it is strict. */
const CONTROLLER_MUTATIONS: ReadonlyMap<number, number> = new Map([
  [ApiKey.CreateTopics, 6],
  [ApiKey.CreatePartitions, 3],
  [ApiKey.DeleteTopics, 5],
]);

/** The sanitized user name a request is quota'd as (KafkaPrincipal name, Sanitizer.sanitize). */
export function quotaUser(ctx: RequestContext): string {
  const principal = ctx.principal ?? ANONYMOUS;
  const colon = principal.indexOf(":");
  return sanitizeEntityName(colon >= 0 ? principal.slice(colon + 1) : principal);
}

export class RequestThrottling implements RequestThrottler {
  constructor(private readonly quotas: ClientQuotas) {}

  /** The largest fetch response a consumer gets within its byte-rate quota (fetch max bytes cap). */
  maxFetchBytes(ctx: RequestContext): number {
    if (!this.quotas.fetch.quotasEnabled) return Number.MAX_SAFE_INTEGER;
    return Math.floor(this.quotas.fetch.getMaxValueInQuotaWindow(quotaUser(ctx), ctx.clientId ?? ""));
  }

  /**
   * The controller mutation quota of a CreateTopics / CreatePartitions / DeleteTopics request (strict
   * from the versions KIP-599 gave clients THROTTLING_QUOTA_EXCEEDED), undefined when none applies.
   */
  controllerMutationQuota(ctx: RequestContext): ControllerMutationQuota | undefined {
    const strictSince = CONTROLLER_MUTATIONS.get(ctx.api.apiKey);
    if (strictSince === undefined) return undefined;
    return this.quotas.controllerMutation.newQuotaFor(
      quotaUser(ctx),
      ctx.clientId ?? "",
      ctx.apiVersion >= strictSince,
    );
  }

  throttle(
    ctx: RequestContext,
    request: unknown,
    response: unknown,
    measured: { requestBytes: number; responseBytes: number; handlingNs: number; nowMs: number },
  ): ThrottleDecision | undefined {
    const q = this.quotas;
    const apiKey = ctx.api.apiKey;
    if (!q.anyEnabled || REQUEST_QUOTA_EXEMPT.has(apiKey)) return undefined;
    const user = quotaUser(ctx);
    const clientId = ctx.clientId ?? "";
    const now = measured.nowMs;
    const clientThrottles = ctx.apiVersion >= (CLIENT_THROTTLES_FROM.get(apiKey) ?? 0);

    if (apiKey === ApiKey.Produce) {
      const acks = (request as { acks: number }).acks;
      const bandwidth = q.produce.maybeRecordAndGetThrottleTimeMs(user, clientId, measured.requestBytes, now);
      const requestTime =
        acks === 0 ? 0 : q.request.maybeRecordRequestTime(user, clientId, measured.handlingNs, now);
      const ms = Math.max(bandwidth, requestTime);
      if (ms <= 0) return undefined;
      if (bandwidth > requestTime) q.produce.recordThrottle(user, clientId, bandwidth, now);
      else q.request.recordThrottle(user, clientId, requestTime, now);
      return { throttleMs: ms, clientThrottles };
    }

    if (apiKey === ApiKey.Fetch) {
      const req = request as { replicaId: number; replicaState?: { replicaId: number } };
      const replicaId = ctx.apiVersion >= 15 ? (req.replicaState?.replicaId ?? -1) : req.replicaId;
      if (replicaId >= 0) return undefined;
      const requestTime = q.request.maybeRecordRequestTime(user, clientId, measured.handlingNs, now);
      const bandwidth = q.fetch.maybeRecordAndGetThrottleTimeMs(user, clientId, measured.responseBytes, now);
      const ms = Math.max(bandwidth, requestTime);
      if (ms <= 0) return undefined;
      q.fetch.unrecordQuotaSensor(user, clientId, measured.responseBytes, now);
      if (bandwidth > requestTime) q.fetch.recordThrottle(user, clientId, bandwidth, now);
      else q.request.recordThrottle(user, clientId, requestTime, now);
      return { throttleMs: ms, clientThrottles, response: throttledFetchResponse(request, response, ms) };
    }

    if (typeof response !== "object" || response === null || !("throttleTimeMs" in response))
      return undefined;
    // CreateTopics / CreatePartitions / DeleteTopics carry their controller mutation throttle already.
    const controllerMs = CONTROLLER_MUTATIONS.has(apiKey)
      ? (response as { throttleTimeMs: number }).throttleTimeMs
      : 0;
    const requestMs = q.request.maybeRecordRequestTime(user, clientId, measured.handlingNs, now);
    const ms = Math.max(controllerMs, requestMs);
    if (ms <= 0) return undefined;
    if (requestMs >= controllerMs) q.request.recordThrottle(user, clientId, ms, now);
    return { throttleMs: ms, clientThrottles: true };
  }
}

/** FetchContext.getThrottledResponse: no partitions; the session id kept for an incremental fetch only. */
function throttledFetchResponse(request: unknown, response: unknown, throttleMs: number): unknown {
  const req = request as { sessionId: number; sessionEpoch: number };
  const res = response as { sessionId: number };
  const incremental = req.sessionId > 0 && req.sessionEpoch > 0;
  return {
    ...res,
    throttleTimeMs: throttleMs,
    errorCode: 0,
    sessionId: incremental ? res.sessionId : 0,
    responses: [],
  };
}
