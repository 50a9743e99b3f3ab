// RequestPipeline: Kafka's KafkaApis dispatch. Owns the registry of handlers by API key (the static list
// in handlers/index.ts plus ApiVersions, which lists that registry), the version rules, and what a request
// frame turns into: a response to write, nothing (acks=0), or a closed connection.
//
// Rules, as Kafka's SocketServer / KafkaApis apply them:
// - unknown API key, or an API without a handler here → close the connection (Kafka: "not enabled");
// - an ApiVersions request at a version the broker does not serve → ApiVersions v0 response with
//   UNSUPPORTED_VERSION (35) and the supported ranges, so the client can retry;
// - any other API at a version outside what its handler accepts → close the connection; except versions
//   that are advertised but refused (Produce v0–v2) → the API's error response with UNSUPPORTED_VERSION;
// - a malformed body → close the connection, one log line;
// - a handler that throws → the API's error response with the KafkaError's code (else UNKNOWN_SERVER_ERROR)
//   in its error fields (`errorResponseFor`); when the API has no error field to carry it, close.
// A response (or its absence) carries the request's RequestTiming: the socket server reports it once the
// response is written, for the request metrics (server/metrics/request-metrics.ts).
// Memory (with the broker's MemoryPool): a Produce request's frame goes back to the pool once the request
// is handled (the append copied its batches into the log; nothing keeps a view of them), and the log reads
// a Fetch response carries go back once the response has been written (`release`). Other requests keep
// their frames: handlers may hold views into them (group member metadata, for one).

import { Logger } from "../common/logger.js";
import type { MemoryPool } from "../common/memory-pool.js";
import type { Time } from "../common/time.js";
import { errorNameOf, KafkaError } from "../protocol/errors.js";
import { type DecodedRequest, decodeRequest, encodeResponse } from "../protocol/framing.js";
import { API_BY_KEY, type ApiDefinition, ApiKey } from "../protocol/generated/api-table.js";
import { ErrorCode } from "../protocol/generated/errors.js";
import type { ApiVersion } from "../protocol/generated/messages/ApiVersionsResponse.js";
import { type HandlerRegistration, NO_RESPONSE } from "./handler.js";
import { apiVersionsErrorResponseFrame, apiVersionsHandler } from "./handlers/18-api-versions.js";
import { type RequestTiming, requestMetricNames } from "./metrics/request-metrics.js";
import { responseErrorCounts } from "./metrics/response-error-counts.js";
import type { RequestContext } from "./request-context.js";

/** What the socket server knows about the connection a request came from. */
export interface ConnectionInfo {
  readonly listenerName: string;
  readonly securityProtocol: string;
  readonly connectionId: string;
  readonly clientAddress: string;
  /** The principal (`User:<name>`): the SASL user, or an SSL listener's mapped certificate subject; absent: User:ANONYMOUS. */
  readonly principal?: string;
}

/**
 * Kafka's client quotas in KafkaApis (server/quota/request-throttling.ts): after a request is handled,
 * the throttle time its response carries, and the response to send instead (a throttled Fetch).
 */
export interface RequestThrottler {
  throttle(
    ctx: RequestContext,
    request: unknown,
    response: unknown,
    measured: { requestBytes: number; responseBytes: number; handlingNs: number; nowMs: number },
  ): ThrottleDecision | undefined;
}

export interface ThrottleDecision {
  readonly throttleMs: number;
  /** KIP-219: the client backs off itself; else (older versions) the response is held for the throttle time. */
  readonly clientThrottles: boolean;
  /** Sent in place of the handler's response (its throttle_time_ms set). */
  readonly response?: unknown;
}

/** A throttled request: its connection is muted for throttleMs (ThrottledChannel). */
export interface Throttle {
  readonly throttleMs?: number;
  /** false: hold the response until the throttle time is over (clients before KIP-219). */
  readonly clientThrottles?: boolean;
}

export type RequestOutcome =
  | ({
      readonly kind: "response";
      readonly chunks: Buffer[];
      readonly api: string;
      readonly timing?: RequestTiming;
      /** Gives the response's pooled buffers back: call once the chunks have been written. */
      readonly release?: () => void;
    } & Throttle)
  | ({ readonly kind: "none"; readonly timing?: RequestTiming } & Throttle)
  | { readonly kind: "close"; readonly reason: string };

/** What process() learnt of a request once it was decoded (for its request metrics). */
interface DecodedInfo {
  apiName?: string;
  version: number;
  body?: unknown;
  /** Error codes of the response and how often each appears (ErrorsPerSec). */
  errors?: ReadonlyMap<number, number>;
}

/** The API listeners a ZooKeeper-mode broker serves. */
const BROKER_LISTENERS = new Set(["zkBroker", "broker"]);

interface Route {
  readonly registration: HandlerRegistration;
  readonly api: ApiDefinition;
  /** Versions the handler accepts. */
  readonly min: number;
  readonly max: number;
  /** Lowest version advertised (≤ min). */
  readonly advertisedMin: number;
}

export class RequestPipeline {
  private readonly routes = new Map<number, Route>();
  private readonly logger = new Logger("kafka.server.KafkaApis");

  constructor(
    registrations: readonly HandlerRegistration[],
    private readonly time: Time,
    private readonly memoryPool?: MemoryPool,
    /** Client quotas (absent: nothing is throttled). */
    private readonly throttler?: RequestThrottler,
  ) {
    for (const r of [apiVersionsHandler(this), ...registrations]) this.register(r);
  }

  private register(r: HandlerRegistration): void {
    const api = API_BY_KEY[r.apiKey];
    if (api === undefined) throw new Error(`handler for unknown API key ${r.apiKey}`);
    if (this.routes.has(r.apiKey)) throw new Error(`two handlers for ${api.name} (${r.apiKey})`);
    const min = Math.max(api.minVersion, r.minVersion ?? api.minVersion);
    const max = Math.min(api.maxVersion, r.maxVersion ?? api.maxVersion);
    if (min > max) throw new Error(`handler for ${api.name}: empty version range ${min}-${max}`);
    const advertisedMin = Math.max(api.minVersion, Math.min(min, r.advertisedMinVersion ?? min));
    this.routes.set(r.apiKey, { registration: r, api, min, max, advertisedMin });
  }

  /** API keys with a handler, in key order. */
  apiKeys(): number[] {
    return [...this.routes.keys()].sort((a, b) => a - b);
  }

  /** ApiVersions' list: every served broker API with its advertised range. */
  supportedApis(): ApiVersion[] {
    const out: ApiVersion[] = [];
    for (const key of this.apiKeys()) {
      const route = this.routes.get(key)!;
      if (!route.api.listeners.some((l) => BROKER_LISTENERS.has(l))) continue;
      out.push({ apiKey: key, minVersion: route.advertisedMin, maxVersion: route.max });
    }
    return out;
  }

  /**
   * Turns one request frame (without its size prefix) into what to send back. Never throws. A response (or
   * the absence of one) carries the request's timing for its RequestMetrics, recorded once it is written.
   */
  async process(
    conn: ConnectionInfo,
    frame: Buffer,
    receivedNs: bigint = this.time.nanoseconds(),
  ): Promise<RequestOutcome> {
    const dequeuedNs = this.time.nanoseconds();
    const info: DecodedInfo = { version: 0 };
    const held: Buffer[] = [];
    let outcome = await this.dispatch(conn, frame, receivedNs, info, held);
    const pool = this.memoryPool;
    if (pool !== undefined) {
      if (frame.length >= 2 && frame.readInt16BE(0) === ApiKey.Produce) pool.release(frame);
      if (held.length > 0) {
        const release = (): void => {
          for (const b of held) pool.release(b);
        };
        if (outcome.kind === "response") outcome = { ...outcome, release };
        else release();
      }
    }
    if (outcome.kind === "close" || info.apiName === undefined) return outcome;
    const timing: RequestTiming = {
      names: requestMetricNames(info.apiName, info.version, info.body),
      errors: info.errors,
      version: info.version,
      receivedNs,
      dequeuedNs,
      completedNs: this.time.nanoseconds(),
    };
    return { ...outcome, timing };
  }

  private async dispatch(
    conn: ConnectionInfo,
    frame: Buffer,
    receivedNs: bigint,
    info: DecodedInfo,
    held: Buffer[],
  ): Promise<RequestOutcome> {
    const decoded = decodeRequest(frame);
    if (!decoded.ok) {
      switch (decoded.kind) {
        case "unknown-api":
          return {
            kind: "close",
            reason: `Unknown API key ${decoded.apiKey} (version ${decoded.apiVersion}, correlation id ${decoded.correlationId})`,
          };
        case "unsupported-version":
          if (decoded.api.apiKey === ApiKey.ApiVersions) {
            return this.apiVersionsUnsupported(decoded.correlationId);
          }
          return {
            kind: "close",
            reason: `Unsupported version ${decoded.apiVersion} of ${decoded.api.name} (correlation id ${decoded.correlationId})`,
          };
        default:
          return {
            kind: "close",
            reason: `Malformed request (API key ${decoded.apiKey} version ${decoded.apiVersion}, correlation id ${decoded.correlationId}): ${decoded.message}`,
          };
      }
    }
    const request = decoded.request;
    const api = request.api;
    const version = request.header.requestApiVersion;
    const correlationId = request.header.correlationId;
    info.apiName = api.name;
    info.version = version;
    info.body = request.body;
    const route = this.routes.get(api.apiKey);
    if (route === undefined) {
      return {
        kind: "close",
        reason: `Received request api key ${api.name} (${api.apiKey}) which is not enabled`,
      };
    }
    if (version > route.max || version < route.advertisedMin) {
      if (api.apiKey === ApiKey.ApiVersions) return this.apiVersionsUnsupported(correlationId);
      return {
        kind: "close",
        reason: `Unsupported version ${version} of ${api.name} (correlation id ${correlationId})`,
      };
    }
    if (version < route.min) {
      return this.errorOutcome(
        route,
        request,
        ErrorCode.UNSUPPORTED_VERSION,
        `${api.name} v${version} is not supported`,
      );
    }

    const ctx: RequestContext = {
      api,
      header: request.header,
      apiVersion: version,
      clientId: request.header.clientId,
      listenerName: conn.listenerName,
      securityProtocol: conn.securityProtocol,
      connectionId: conn.connectionId,
      clientAddress: conn.clientAddress,
      receivedNs,
      principal: conn.principal ?? "User:ANONYMOUS",
      allocateResponseBuffer: this.memoryPool && this.allocator(this.memoryPool, held),
    };
    let body: unknown;
    let handlingNs = 0n;
    try {
      // The request quota counts the time the handler held the event loop, not the time it waited.
      const start = this.time.nanoseconds();
      const pending = route.registration.handle(ctx, request.body);
      handlingNs = this.time.nanoseconds() - start;
      body = await pending;
    } catch (e) {
      const code = e instanceof KafkaError ? e.code : ErrorCode.UNKNOWN_SERVER_ERROR;
      info.errors = new Map([[code, 1]]);
      if (!(e instanceof KafkaError)) {
        this.logger.error(
          `Unexpected error handling request ${api.name} v${version} correlationId ${correlationId} from ${conn.connectionId}: ${(e as Error)?.stack ?? e}`,
        );
      }
      return this.errorOutcome(route, request, code, e instanceof Error ? e.message : String(e));
    }
    if (body === NO_RESPONSE) {
      const t = this.throttler?.throttle(ctx, request.body, undefined, {
        requestBytes: frame.length,
        responseBytes: 0,
        handlingNs: Number(handlingNs),
        nowMs: this.time.milliseconds(),
      });
      return t === undefined ? { kind: "none" } : { kind: "none", throttleMs: t.throttleMs };
    }
    info.errors = responseErrorCounts(body);
    try {
      const start = this.time.nanoseconds();
      let chunks = encodeResponse(api, version, correlationId, body);
      if (this.throttler === undefined) return { kind: "response", api: api.name, chunks };
      let responseBytes = 0;
      for (const c of chunks) responseBytes += c.length;
      const t = this.throttler.throttle(ctx, request.body, body, {
        requestBytes: frame.length,
        responseBytes,
        handlingNs: Number(handlingNs + (this.time.nanoseconds() - start)),
        nowMs: this.time.milliseconds(),
      });
      if (t === undefined) return { kind: "response", api: api.name, chunks };
      const throttled = t.response ?? body;
      if ("throttleTimeMs" in (throttled as object))
        (throttled as { throttleTimeMs: number }).throttleTimeMs = t.throttleMs;
      chunks = encodeResponse(api, version, correlationId, throttled);
      return {
        kind: "response",
        api: api.name,
        chunks,
        throttleMs: t.throttleMs,
        clientThrottles: t.clientThrottles,
      };
    } catch (e) {
      this.logger.error(
        `Cannot encode the ${api.name} v${version} response for correlationId ${correlationId}: ${(e as Error)?.stack ?? e}`,
      );
      return this.errorOutcome(route, request, ErrorCode.UNKNOWN_SERVER_ERROR, (e as Error).message);
    }
  }

  private apiVersionsUnsupported(correlationId: number): RequestOutcome {
    return {
      kind: "response",
      api: "ApiVersions",
      chunks: apiVersionsErrorResponseFrame(
        this.supportedApis(),
        correlationId,
        ErrorCode.UNSUPPORTED_VERSION,
      ),
    };
  }

  /** Allocations from the pool, remembered in `held` so the response can give them back. */
  private allocator(pool: MemoryPool, held: Buffer[]): (size: number) => Buffer {
    return (size) => {
      const b = pool.allocate(size);
      held.push(b);
      return b;
    };
  }

  private async errorOutcome(
    route: Route,
    request: DecodedRequest,
    code: number,
    message: string | null,
  ): Promise<RequestOutcome> {
    const version = request.header.requestApiVersion;
    if (route.api.apiKey === ApiKey.Produce && (request.body as { acks?: number }).acks === 0) {
      // acks=0: the client reads no response; Kafka closes the connection to tell it something failed.
      return {
        kind: "close",
        reason: `Produce with acks=0 failed with error ${errorNameOf(code)}: ${message ?? ""}`,
      };
    }
    const chunks = await errorResponseFor(
      route.api,
      version,
      request.header.correlationId,
      request.body,
      code,
      {
        errorResponse: route.registration.errorResponse,
        message,
      },
    );
    if (chunks === undefined) {
      return {
        kind: "close",
        reason: `${route.api.name} v${version} (correlation id ${request.header.correlationId}) failed with error ${errorNameOf(code)} and its response has no error field to carry it`,
      };
    }
    return { kind: "response", api: route.api.name, chunks };
  }
}

// biome-ignore lint/suspicious/noExplicitAny: generated message modules, looked up by API name
const defaultBuilders = new Map<number, (() => any) | null>();

// biome-ignore lint/suspicious/noExplicitAny: see above
async function defaultResponseBuilder(api: ApiDefinition): Promise<(() => any) | null> {
  if (defaultBuilders.has(api.apiKey)) return defaultBuilders.get(api.apiKey)!;
  let builder = null;
  try {
    const mod = await import(`../protocol/generated/messages/${api.name}Response.js`);
    builder = mod[`default${api.name}Response`] ?? null;
  } catch {
    builder = null;
  }
  defaultBuilders.set(api.apiKey, builder);
  return builder;
}

/**
 * Kafka's getErrorResponse: the encoded response frame for a failed request. With the handler's own
 * `errorResponse` (which can put the code in every partition) that is used; otherwise the API's default
 * response with its top-level `errorCode` (and `errorMessage`) set — only when that field exists at this
 * version (checked by encoding). Returns undefined when the response cannot carry the error.
 */
export async function errorResponseFor(
  api: ApiDefinition,
  version: number,
  correlationId: number,
  request: unknown,
  code: number,
  options: {
    errorResponse?: HandlerRegistration["errorResponse"];
    message?: string | null;
  } = {},
): Promise<Buffer[] | undefined> {
  const message = options.message ?? null;
  if (options.errorResponse !== undefined) {
    try {
      return encodeResponse(
        api,
        version,
        correlationId,
        options.errorResponse(request, version, code, message),
      );
    } catch {
      // fall through to the generic response
    }
  }
  const build = await defaultResponseBuilder(api);
  if (build === null) return undefined;
  const withCode = build();
  if (!("errorCode" in withCode)) return undefined;
  withCode.errorCode = code;
  if ("errorMessage" in withCode) withCode.errorMessage = message;
  const without = build();
  try {
    const a = Buffer.concat(encodeResponse(api, version, correlationId, withCode));
    const b = Buffer.concat(encodeResponse(api, version, correlationId, without));
    // The same bytes with and without the code: the field is not in this version.
    if (a.equals(b)) return undefined;
    return [a];
  } catch {
    return undefined;
  }
}
