// Request and response framing: the 4-byte size prefix, the request header (v0–v2) and response
// header (v0–v1) chosen by API key and version, and the body codec from the generated API table.
// Includes Kafka's exception: the ApiVersions response always uses response header v0.

import { API_BY_KEY, type ApiDefinition, ApiKey } from "./generated/api-table.js";
import {
  type RequestHeader,
  readRequestHeader,
  writeRequestHeader,
} from "./generated/messages/RequestHeader.js";
import { readResponseHeader, writeResponseHeader } from "./generated/messages/ResponseHeader.js";
import { ProtocolDecodeError } from "./primitives/errors.js";
import { Reader } from "./primitives/reader.js";
import { Writer } from "./primitives/writer.js";

export function isFlexible(api: ApiDefinition, version: number): boolean {
  return api.firstFlexibleVersion >= 0 && version >= api.firstFlexibleVersion;
}

/** Request header version for an API version (Kafka's ApiKeys.requestHeaderVersion). */
export function requestHeaderVersion(api: ApiDefinition, version: number): number {
  if (isFlexible(api, version)) return 2;
  // ControlledShutdown v0 has a header without client id.
  if (api.apiKey === ApiKey.ControlledShutdown && version === 0) return 0;
  return 1;
}

/** Response header version for an API version (Kafka's ApiKeys.responseHeaderVersion). */
export function responseHeaderVersion(api: ApiDefinition, version: number): number {
  // ApiVersions responses always use v0 so a client that sent an unsupported version can read them.
  if (api.apiKey === ApiKey.ApiVersions) return 0;
  return isFlexible(api, version) ? 1 : 0;
}

/** Why a request frame could not be decoded; the server answers each differently. */
export type RequestDecodeFailure =
  | { kind: "unknown-api"; apiKey: number; apiVersion: number; correlationId: number }
  | { kind: "unsupported-version"; api: ApiDefinition; apiVersion: number; correlationId: number }
  | { kind: "malformed"; apiKey: number; apiVersion: number; correlationId: number; message: string };

export interface DecodedRequest<T = unknown> {
  readonly api: ApiDefinition;
  readonly header: RequestHeader;
  readonly headerVersion: number;
  readonly body: T;
}

export type RequestDecodeResult =
  | { ok: true; request: DecodedRequest }
  | ({ ok: false } & RequestDecodeFailure);

/** Decodes a request frame (without its size prefix). Never throws. */
export function decodeRequest(frame: Buffer): RequestDecodeResult {
  if (frame.length < 8) {
    return {
      ok: false,
      kind: "malformed",
      apiKey: -1,
      apiVersion: -1,
      correlationId: -1,
      message: `request of ${frame.length} bytes is shorter than a header`,
    };
  }
  const apiKey = frame.readInt16BE(0);
  const apiVersion = frame.readInt16BE(2);
  const correlationId = frame.readInt32BE(4);
  const api = apiKey >= 0 ? API_BY_KEY[apiKey] : undefined;
  if (!api) return { ok: false, kind: "unknown-api", apiKey, apiVersion, correlationId };
  if (apiVersion < api.minVersion || apiVersion > api.maxVersion) {
    return { ok: false, kind: "unsupported-version", api, apiVersion, correlationId };
  }
  try {
    const r = new Reader(frame);
    const headerVersion = requestHeaderVersion(api, apiVersion);
    const header = readRequestHeader(r, headerVersion);
    const body = api.readRequest(r, apiVersion);
    return { ok: true, request: { api, header, headerVersion, body } };
  } catch (e) {
    if (e instanceof ProtocolDecodeError || e instanceof RangeError) {
      return { ok: false, kind: "malformed", apiKey, apiVersion, correlationId, message: e.message };
    }
    throw e;
  }
}

/** Encodes a request frame with its size prefix. Returns chunks (large record sets are not copied). */
export function encodeRequest<Req, Res>(
  api: ApiDefinition<Req, Res>,
  version: number,
  correlationId: number,
  clientId: string | null,
  body: Req,
): Buffer[] {
  const w = new Writer(512);
  const sizeAt = w.reserveInt32();
  writeRequestHeader(
    w,
    { requestApiKey: api.apiKey, requestApiVersion: version, correlationId, clientId },
    requestHeaderVersion(api as unknown as ApiDefinition, version),
  );
  api.writeRequest(w, body, version);
  w.patchInt32(sizeAt, w.length - 4);
  return w.toChunks();
}

/** Encodes a response frame with its size prefix. */
export function encodeResponse<Req, Res>(
  api: ApiDefinition<Req, Res>,
  version: number,
  correlationId: number,
  body: Res,
): Buffer[] {
  const w = new Writer(512);
  const sizeAt = w.reserveInt32();
  writeResponseHeader(w, { correlationId }, responseHeaderVersion(api as unknown as ApiDefinition, version));
  api.writeResponse(w, body, version);
  w.patchInt32(sizeAt, w.length - 4);
  return w.toChunks();
}

/** Decodes a response frame (without its size prefix) for a request sent at `version`. Throws ProtocolDecodeError. */
export function decodeResponse<Req, Res>(
  api: ApiDefinition<Req, Res>,
  version: number,
  frame: Buffer,
): { correlationId: number; body: Res } {
  const r = new Reader(frame);
  const header = readResponseHeader(r, responseHeaderVersion(api as unknown as ApiDefinition, version));
  const body = api.readResponse(r, version);
  if (r.remaining !== 0)
    throw new ProtocolDecodeError(`${r.remaining} unexpected bytes after the response body`);
  return { correlationId: header.correlationId, body };
}
