// RequestContext: what a handler knows about the request beyond its body — the header, the negotiated
// version, the connection and listener it came from. Built by the socket server for every request.

import type { ApiDefinition } from "../protocol/generated/api-table.js";
import type { RequestHeader } from "../protocol/generated/messages/RequestHeader.js";

export interface RequestContext {
  readonly api: ApiDefinition;
  readonly header: RequestHeader;
  /** header.requestApiVersion, the version the body was decoded at and the response is encoded at. */
  readonly apiVersion: number;
  readonly clientId: string | null;
  /** e.g. "PLAINTEXT" */
  readonly listenerName: string;
  readonly securityProtocol: string;
  /** "127.0.0.1:53412" style id of the connection, unique while it is open. */
  readonly connectionId: string;
  readonly clientAddress: string;
  /** The authenticated principal (`User:<name>`), `User:ANONYMOUS` when the connection has none. */
  readonly principal?: string;
  /** Monotonic nanoseconds when the request was read (for request metrics and timeouts). */
  readonly receivedNs: bigint;
  /**
   * Memory for bytes the response will carry as they are (a Fetch's log reads): from the broker's
   * MemoryPool, given back once the response has been written to the socket. Absent without a pool.
   */
  readonly allocateResponseBuffer?: (size: number) => Buffer;
}
