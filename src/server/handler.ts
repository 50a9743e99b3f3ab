// The handler contract: one file per API key under server/handlers/ (`00-produce.ts`, `01-fetch.ts`,
// …). The pipeline decodes the body, calls the handler with typed data, and encodes what it returns;
// per-partition failures are error codes in the returned body, and only framing errors close a
// connection. A handler returns NO_RESPONSE when Kafka sends none (Produce with acks=0).

import type { RequestContext } from "./request-context.js";

export const NO_RESPONSE: unique symbol = Symbol("no response");

export type Handler<Req, Res> = (ctx: RequestContext, request: Req) => Promise<Res | typeof NO_RESPONSE>;

/** A handler module's registration: its API key and the handler built over the broker's services. */
export interface HandlerRegistration {
  readonly apiKey: number;
  // biome-ignore lint/suspicious/noExplicitAny: the registry is keyed by API; each handler is typed in its own file
  readonly handle: Handler<any, any>;
  /** Lowest version the handler accepts (default: the spec's minimum). */
  readonly minVersion?: number;
  /** Highest version the handler accepts (default: the spec's maximum). */
  readonly maxVersion?: number;
  /**
   * Lowest version listed in ApiVersions when below minVersion (Produce: advertised from 0, accepted from 3,
   * see docs/record-format.md). A request at a version in [advertisedMinVersion, minVersion) is answered
   * with UNSUPPORTED_VERSION through `errorResponse`, or its connection is closed when there is none.
   */
  readonly advertisedMinVersion?: number;
  /**
   * Kafka's AbstractRequest.getErrorResponse: the response to `request` with `errorCode` in every error
   * field (per partition where the API has them). Used when the handler throws; without it the pipeline
   * sets the response's top-level error code, or closes the connection when there is none.
   */
  // biome-ignore lint/suspicious/noExplicitAny: typed in each handler's file
  readonly errorResponse?: (request: any, version: number, errorCode: number, message: string | null) => any;
}
