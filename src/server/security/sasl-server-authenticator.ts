// SaslServerAuthenticator: a SASL_PLAINTEXT / SASL_SSL connection until it has authenticated (Kafka's
// SaslServerAuthenticator, KIP-43 and KIP-152). Before that only these are read, each frame at most
// sasl.server.max.receive.size bytes (the socket server enforces it: nothing large is allocated for an
// unauthenticated client, the CVE-2022-34917 class):
//   ApiVersions        answered as usual (clients ask before the handshake);
//   SaslHandshake      v0/v1: the mechanism, UNSUPPORTED_SASL_MECHANISM (with the enabled ones, then the
//                      connection closes) when it is not enabled;
//   SaslAuthenticate   after a v1 handshake: each client token, answered with the server's; a failure is
//                      SASL_AUTHENTICATION_FAILED with the mechanism's message (never which part was
//                      wrong), then the connection closes;
//   raw tokens         after a v0 handshake (older clients): size-prefixed tokens without a Kafka header.
// Anything else closes the connection ("Unexpected Kafka request of type … during SASL handshake"). Once
// authenticated, every frame goes to the request pipeline and the connection's principal is
// `User:<name>`.
//
// KIP-368 (`connections.max.reauth.ms`, per listener and mechanism): a positive value is the session
// lifetime, sent in the final SaslAuthenticate v1+ response (session_lifetime_ms). A request that arrives
// after the session expired closes the connection (clients that cannot re-authenticate included, as
// Kafka does) — unless it is a SaslHandshake from a client that authenticated with SaslAuthenticate v1+:
// that starts a re-authentication on the same connection (at most one a second), with the same
// mechanism and principal ("Cannot change principals during re-authentication from User.a: User.b"),
// which starts a new session.

import { decodeRequest, encodeResponse } from "../../protocol/framing.js";
import { ApiKey, Apis } from "../../protocol/generated/api-table.js";
import { ErrorCode } from "../../protocol/generated/errors.js";
import type { SaslAuthenticateRequest } from "../../protocol/generated/messages/SaslAuthenticateRequest.js";
import type { SaslHandshakeRequest } from "../../protocol/generated/messages/SaslHandshakeRequest.js";
import type { ConnectionInfo, RequestOutcome } from "../request-pipeline.js";
import { SaslAuthenticationError, type SaslServer } from "./plain-sasl-server.js";

/** What a SASL listener offers: its enabled mechanisms, each with a factory of server exchanges. */
export interface SaslListenerConfig {
  /** The factory gets `true` for a re-authentication (KIP-368), which a mechanism's messages may name. */
  readonly mechanisms: ReadonlyMap<string, (reauthentication?: boolean) => SaslServer>;
  /** Resolves once the mechanisms can authenticate (SCRAM: the credentials have been loaded). */
  readonly ready?: Promise<void>;
  /** connections.max.reauth.ms per mechanism (absent or 0: sessions do not expire). */
  readonly maxReauthMs?: ReadonlyMap<string, number>;
}

/** Kafka's KafkaChannel.MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS. */
const MIN_REAUTH_INTERVAL_NS = 1_000_000_000n;

type State = "handshake" | "authenticate" | "authenticate-raw" | "complete" | "failed";

export class SaslServerAuthenticator {
  private state: State = "handshake";
  private server: SaslServer | undefined;
  /** `User:<name>` once authenticated. */
  principal: string | undefined;
  private mechanism = "";
  /** A SaslAuthenticate v1+ was seen: the client knows session lifetimes and re-authenticates. */
  private clientSupportsReauthentication = false;
  /** When the session ends (received-time clock), undefined when it does not. */
  private sessionExpiryNs: bigint | undefined;
  private lastReauthenticationStartNs: bigint | undefined;
  /** During a re-authentication: the session's mechanism and principal, which must not change. */
  private previous: { mechanism: string; principal: string } | undefined;
  private badReauthenticationMechanism: string | undefined;

  constructor(
    private readonly config: SaslListenerConfig,
    private readonly delegate: (
      conn: ConnectionInfo,
      frame: Buffer,
      receivedNs: bigint,
    ) => Promise<RequestOutcome>,
  ) {}

  get isComplete(): boolean {
    return this.state === "complete";
  }

  async process(conn: ConnectionInfo, frame: Buffer, receivedNs: bigint): Promise<RequestOutcome> {
    if (this.state === "complete") {
      if (
        frame.length >= 2 &&
        frame.readInt16BE(0) === ApiKey.SaslHandshake &&
        this.mayReauthenticate(receivedNs)
      ) {
        this.previous = { mechanism: this.mechanism, principal: this.principal! };
        this.state = "handshake";
      } else if (this.sessionExpiryNs !== undefined && receivedNs > this.sessionExpiryNs) {
        this.state = "failed";
        return { kind: "close", reason: "the SASL session expired (connections.max.reauth.ms)" };
      } else return this.delegate(conn, frame, receivedNs);
    }
    if (this.state === "failed") return { kind: "close", reason: "SASL authentication failed" };
    if (this.config.ready !== undefined && this.state !== "handshake") await this.config.ready;
    if (this.state === "authenticate-raw") return this.rawToken(frame, receivedNs);
    const decoded = decodeRequest(frame);
    if (!decoded.ok) {
      // An ApiVersions at a version the broker does not serve still gets the pipeline's v0 answer.
      const key = decoded.kind === "unsupported-version" ? decoded.api.apiKey : decoded.apiKey;
      if (this.state === "handshake" && key === ApiKey.ApiVersions)
        return this.delegate(conn, frame, receivedNs);
      this.state = "failed";
      return { kind: "close", reason: `invalid request (${decoded.kind}) during SASL authentication` };
    }
    const { api, header } = decoded.request;
    if (this.state === "handshake" && api.apiKey === ApiKey.ApiVersions)
      return this.delegate(conn, frame, receivedNs);
    if (this.state === "handshake" && api.apiKey === ApiKey.SaslHandshake)
      return this.handshake(
        header.requestApiVersion,
        header.correlationId,
        decoded.request.body as SaslHandshakeRequest,
      );
    if (this.state === "authenticate" && api.apiKey === ApiKey.SaslAuthenticate)
      return this.authenticate(
        header.requestApiVersion,
        header.correlationId,
        decoded.request.body as SaslAuthenticateRequest,
        receivedNs,
      );
    const phase = this.state === "handshake" ? "handshake" : "authentication";
    this.state = "failed";
    return { kind: "close", reason: `Unexpected Kafka request of type ${api.name} during SASL ${phase}` };
  }

  private handshake(version: number, correlationId: number, req: SaslHandshakeRequest): RequestOutcome {
    const enabled = [...this.config.mechanisms.keys()];
    const factory = this.config.mechanisms.get(req.mechanism);
    if (factory === undefined) {
      this.state = "failed";
      // The answer goes out; the connection closes with the next request (the client gives up anyway).
      return {
        kind: "response",
        api: "SaslHandshake",
        chunks: encodeResponse(Apis.SaslHandshake, version, correlationId, {
          errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM,
          mechanisms: enabled,
        }),
      };
    }
    this.mechanism = req.mechanism;
    if (this.previous !== undefined && this.previous.mechanism !== req.mechanism)
      this.badReauthenticationMechanism = `SASL mechanism '${req.mechanism}' requested by client is not supported for re-authentication of mechanism '${this.previous.mechanism}'`;
    this.server = factory(this.previous !== undefined);
    this.state = version >= 1 ? "authenticate" : "authenticate-raw";
    return {
      kind: "response",
      api: "SaslHandshake",
      chunks: encodeResponse(Apis.SaslHandshake, version, correlationId, {
        errorCode: ErrorCode.NONE,
        mechanisms: enabled,
      }),
    };
  }

  private authenticate(
    version: number,
    correlationId: number,
    req: SaslAuthenticateRequest,
    receivedNs: bigint,
  ): RequestOutcome {
    const server = this.server!;
    if (version > 0) this.clientSupportsReauthentication = true;
    try {
      if (this.badReauthenticationMechanism !== undefined)
        throw new SaslAuthenticationError(this.badReauthenticationMechanism);
      const token = server.evaluateResponse(req.authBytes);
      const lifetimeMs = server.isComplete ? this.completed(server, receivedNs) : 0;
      return this.authenticateResponse(version, correlationId, ErrorCode.NONE, null, token, lifetimeMs);
    } catch (e) {
      if (!(e instanceof SaslAuthenticationError)) throw e;
      this.state = "failed";
      return this.authenticateResponse(
        version,
        correlationId,
        ErrorCode.SASL_AUTHENTICATION_FAILED,
        e.message,
        Buffer.alloc(0),
      );
    }
  }

  /** A v0 handshake's token: the frame is the token, the answer a size-prefixed token. */
  private rawToken(frame: Buffer, receivedNs: bigint): RequestOutcome {
    const server = this.server!;
    try {
      if (this.badReauthenticationMechanism !== undefined)
        throw new SaslAuthenticationError(this.badReauthenticationMechanism);
      const token = server.evaluateResponse(frame);
      if (server.isComplete) this.completed(server, receivedNs);
      const size = Buffer.alloc(4);
      size.writeInt32BE(token.length, 0);
      return { kind: "response", chunks: [size, token], api: "SaslToken" };
    } catch (e) {
      if (!(e instanceof SaslAuthenticationError)) throw e;
      this.state = "failed";
      return { kind: "close", reason: e.message };
    }
  }

  /** The exchange succeeded: the principal (unchanged on re-authentication) and the session lifetime. */
  private completed(server: SaslServer, receivedNs: bigint): number {
    const principal = `User:${server.authorizationId}`;
    if (this.previous !== undefined && this.previous.principal !== principal)
      throw new SaslAuthenticationError(
        `Cannot change principals during re-authentication from ${this.previous.principal.replace(":", ".")}: ${principal.replace(":", ".")}`,
      );
    this.previous = undefined;
    this.state = "complete";
    this.principal = principal;
    const lifetimeMs = this.config.maxReauthMs?.get(this.mechanism) ?? 0;
    this.sessionExpiryNs = lifetimeMs > 0 ? receivedNs + BigInt(lifetimeMs) * 1_000_000n : undefined;
    return Math.max(lifetimeMs, 0);
  }

  /** KafkaChannel.maybeBeginServerReauthentication: sessions that expire, clients that know, once a second. */
  private mayReauthenticate(nowNs: bigint): boolean {
    if (!this.clientSupportsReauthentication || this.sessionExpiryNs === undefined) return false;
    const last = this.lastReauthenticationStartNs;
    if (last !== undefined && nowNs - last < MIN_REAUTH_INTERVAL_NS) return false;
    this.lastReauthenticationStartNs = nowNs;
    return true;
  }

  private authenticateResponse(
    version: number,
    correlationId: number,
    errorCode: number,
    errorMessage: string | null,
    authBytes: Buffer,
    sessionLifetimeMs = 0,
  ): RequestOutcome {
    return {
      kind: "response",
      api: "SaslAuthenticate",
      chunks: encodeResponse(Apis.SaslAuthenticate, version, correlationId, {
        errorCode,
        errorMessage,
        authBytes,
        sessionLifetimeMs: BigInt(sessionLifetimeMs),
      }),
    };
  }
}
