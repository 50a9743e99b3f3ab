// BrokerConnection: one TCP connection from a client to one broker (Kafka's NetworkClient +
// KafkaChannel for a single node). It negotiates API versions with ApiVersions on connect, pipelines
// requests (many in flight, responses matched by correlation id in order), times each request out, and
// fails every pending request with a KafkaClientError when the connection closes or fails. Reads land
// in one reused 1 MiB buffer per connection; FrameReader copies out the responses. With `sasl`
// (security.protocol=SASL_PLAINTEXT/SASL_SSL) every new connection authenticates right after ApiVersions,
// before any other request: SaslHandshake v1, then SaslAuthenticate until the mechanism is complete
// (KIP-152), as Kafka's SaslClientAuthenticator does; a refusal rejects connect() with Kafka's error
// (SASL_AUTHENTICATION_FAILED, UNSUPPORTED_SASL_MECHANISM, ILLEGAL_SASL_STATE) and the broker's message;
// a session lifetime from the broker (KIP-368) is renewed by re-authenticating on the same connection.
// An AbortSignal (`signal`) abandons a connect in progress: its socket is destroyed at once, so nothing of
// it keeps the process alive or reaches the broker afterwards (a broker shutting down aborts its own).
//
// Usage:
//   const conn = await BrokerConnection.connect("127.0.0.1", 9092, { clientId: "me" });
//   const v = conn.versionFor(Apis.Metadata);                 // min(client max, broker max)
//   const md = await conn.send(Apis.Metadata, v, { ...defaultMetadataRequest(), topics: null });
//   await conn.sendOneWay(Apis.Produce, conn.versionFor(Apis.Produce), produceAcks0); // no response
//   conn.onClose((cause) => { ... });                          // cause: KafkaClientError | undefined
//   conn.close();
// Errors: KafkaClientError with `code`/`retriable` (NETWORK_EXCEPTION when the connection is lost,
// REQUEST_TIMED_OUT after requestTimeoutMs — the connection is then closed, as Kafka's clients do).

import { connect, isIP, type OnReadOpts, type Socket } from "node:net";
import { connect as connectTls, type ConnectionOptions as TlsConnectionOptions } from "node:tls";
import { adviseHugePages, HUGE_PAGE_BYTES } from "../../common/allocator-tuning.js";
import type { SslOptions } from "../../common/ssl-engine-factory.js";
import { type FrameAllocator, FrameReader } from "../../protocol/frame-reader.js";
import { decodeResponse, encodeRequest } from "../../protocol/framing.js";
import { type ApiDefinition, ApiKey, Apis } from "../../protocol/generated/api-table.js";
import { ErrorCode } from "../../protocol/generated/errors.js";
import type { ApiVersionsResponse } from "../../protocol/generated/messages/ApiVersionsResponse.js";
import { KafkaClientError } from "../errors.js";
import { authenticateSasl, type SaslChannel } from "./sasl/sasl-client-authenticator.js";
import type { SaslClientConfig } from "./sasl/sasl-client-mechanisms.js";

export interface ConnectionOptions {
  /** `client.id` sent in every request header. Default "tributary". */
  readonly clientId?: string;
  /** `request.timeout.ms`: how long a request may wait for its response. Default 30000. */
  readonly requestTimeoutMs?: number;
  /** `socket.connection.setup.timeout.ms`: TCP connect + ApiVersions. Default 10000. */
  readonly connectTimeoutMs?: number;
  /** Largest response frame accepted. Default 1 GiB. */
  readonly maxResponseBytes?: number;
  /** ApiVersions version tried first (Kafka 3.x clients: 3). For tests of the fallback. */
  readonly apiVersionsVersion?: number;
  /** security.protocol=SSL: TLS with these options (from the ssl.* settings); absent: plaintext. */
  readonly ssl?: SslOptions;
  /** security.protocol=SASL_*: authenticate with this mechanism and these credentials on connect. */
  readonly sasl?: SaslClientConfig;
  /**
   * Aborts connect(): the socket is destroyed at once (TCP connect, TLS handshake, ApiVersions or SASL in
   * progress) and connect() rejects with NETWORK_EXCEPTION. No effect once connect() has resolved.
   */
  readonly signal?: AbortSignal;
}

export interface SendOptions {
  /** Overrides requestTimeoutMs for this request (e.g. a long-polling Fetch). */
  readonly timeoutMs?: number;
}

/** A version range a broker serves for one API. */
export interface VersionRange {
  readonly minVersion: number;
  readonly maxVersion: number;
}

interface InFlight {
  readonly correlationId: number;
  readonly api: ApiDefinition<unknown, unknown>;
  readonly version: number;
  readonly resolve: (body: unknown) => void;
  readonly reject: (e: Error) => void;
  timer: NodeJS.Timeout | undefined;
}

export const CLIENT_SOFTWARE_NAME = "tributary";
export const CLIENT_SOFTWARE_VERSION = "0.1.0";

/** The connection's read buffer: one read takes up to this much of what the socket holds. */
const READ_BUFFER_BYTES = 1024 * 1024;

/**
 * Buffers for responses that span reads. Those of at least two huge pages (large Fetch responses) get
 * transparent huge pages before they are filled: a consumer reading hundreds of MB/s otherwise spends
 * much of its time faulting in fresh 4 KiB pages (consumer-perf-test: 8 % faster, a third fewer page
 * faults; docs/benchmarks.md). Nothing changes where THP is off ("never").
 */
export const RESPONSE_FRAMES: FrameAllocator = {
  allocate(size: number): Buffer {
    const buffer = Buffer.allocUnsafe(size);
    if (size >= 2 * HUGE_PAGE_BYTES) adviseHugePages(buffer);
    return buffer;
  },
};

/** An error of the TLS layer (OpenSSL's ERR_SSL_*, Node's ERR_TLS_*, a certificate check). */
function isTlsError(e: Error): boolean {
  const code = (e as NodeJS.ErrnoException).code ?? "";
  return /^ERR_(SSL|TLS)_|CERT|SELF_SIGNED|UNABLE_TO_/.test(code);
}

export class BrokerConnection {
  readonly clientId: string;
  private readonly requestTimeoutMs: number;
  private readonly reader: FrameReader;
  /** In flight, in send order (Map keeps insertion order); responses arrive in the same order. */
  private readonly inFlight = new Map<number, InFlight>();
  private nextCorrelationId = 0;
  private closeCause: KafkaClientError | undefined;
  private isClosed = false;
  private readonly closeListeners: Array<(cause: KafkaClientError | undefined) => void> = [];
  private brokerVersions = new Map<number, VersionRange>();
  /** The ApiVersions version the broker accepted. */
  apiVersionsVersion = -1;
  /** KIP-368: the timer of the next re-authentication, and the one running (requests wait for it). */
  private reauthTimer: NodeJS.Timeout | undefined;
  private reauthentication: Promise<void> | undefined;
  /** Resolved when no request is in flight any more (a re-authentication waits for that). */
  private readonly idleWaiters: Array<() => void> = [];

  private constructor(
    readonly host: string,
    readonly port: number,
    private readonly socket: Socket,
    options: ConnectionOptions,
  ) {
    this.clientId = options.clientId ?? "tributary";
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.reader = new FrameReader(options.maxResponseBytes ?? 1024 * 1024 * 1024, RESPONSE_FRAMES);
    socket.setNoDelay(true);
    socket.on("error", (e) =>
      this.fail(
        KafkaClientError.of(
          "NETWORK_EXCEPTION",
          // TLS 1.3: a broker refusing the client's certificate says so after the handshake, in an alert.
          `${this.address}: ${options.ssl && isTlsError(e) ? "SSL handshake failed: " : ""}${e.message}`,
        ),
      ),
    );
    socket.on("close", () =>
      this.fail(KafkaClientError.of("NETWORK_EXCEPTION", `Connection to ${this.address} was closed`)),
    );
  }

  /**
   * A TLS connection (security.protocol=SSL): the broker's certificate must chain to the truststore (the
   * system's CAs without one) and, unless ssl.endpoint.identification.algorithm is empty, name `host`.
   * Decrypted bytes land in `readBuffer` as on a plaintext connection (`onread`: no Buffer allocated per
   * 16 KiB TLS record, which halves the client's TLS read cost); each chunk goes to `onRead`.
   */
  private static connectTls(
    host: string,
    port: number,
    ssl: SslOptions,
    readBuffer: Buffer,
    onRead: (n: number) => void,
  ): Socket {
    const { checkHostName, ...tls } = ssl;
    // Node's tls.connect takes net's `onread` (documented), which its type definitions leave out.
    const onread: OnReadOpts = {
      buffer: readBuffer,
      callback: (n: number) => {
        onRead(n);
        return true;
      },
    };
    const options: TlsConnectionOptions & { onread: OnReadOpts } = {
      host,
      port,
      ...tls,
      servername: isIP(host) === 0 ? host : undefined,
      ...(checkHostName === false ? { checkServerIdentity: () => undefined } : {}),
      onread,
    };
    return connectTls(options);
  }

  /** Opens a connection and negotiates API versions; rejects with a KafkaClientError. */
  static async connect(
    host: string,
    port: number,
    options: ConnectionOptions = {},
  ): Promise<BrokerConnection> {
    const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    const address = `${host}:${port}`;
    const signal = options.signal;
    const aborted = (): KafkaClientError =>
      KafkaClientError.of("NETWORK_EXCEPTION", `Connection to ${address} was aborted`);
    if (signal?.aborted) throw aborted();
    let received: ((bytes: Buffer) => void) | undefined;
    /** Bytes that arrive before the connection object exists (a broker never speaks first; kept anyway). */
    const early: Buffer[] = [];
    const readBuffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
    const ssl = options.ssl;
    const onRead = (n: number): void => {
      if (received) received(readBuffer.subarray(0, n));
      else early.push(Buffer.from(readBuffer.subarray(0, n)));
    };
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = ssl
        ? BrokerConnection.connectTls(host, port, ssl, readBuffer, onRead)
        : connect({
            host,
            port,
            // Reads land in one reused 1 MiB buffer (FrameReader copies out what it keeps) instead of a new
            // 64 KiB buffer per read: a large Fetch response takes a sixteenth of the reads.
            onread: {
              buffer: readBuffer,
              callback: (n) => {
                onRead(n);
                return true;
              },
            },
          });
      const onAbort = (): void => {
        clearTimeout(timer);
        s.destroy();
        reject(aborted());
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        s.destroy();
        reject(
          KafkaClientError.of(
            "NETWORK_EXCEPTION",
            `Connection to ${address} timed out after ${connectTimeoutMs} ms`,
          ),
        );
      }, connectTimeoutMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      // TLS: ready once the handshake is done (the broker's certificate checked).
      s.once(ssl ? "secureConnect" : "connect", () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        s.removeAllListeners("error");
        resolve(s);
      });
      let tcpConnected = false;
      if (ssl) s.once("connect", () => (tcpConnected = true));
      s.once("error", (e) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        s.destroy();
        // Kafka's SslAuthenticationException: the TLS handshake itself failed (a certificate not trusted,
        // not for this host, or refused by the broker).
        const what = ssl && (tcpConnected || isTlsError(e)) ? "SSL handshake failed" : "failed";
        reject(KafkaClientError.of("NETWORK_EXCEPTION", `Connection to ${address} ${what}: ${e.message}`));
      });
    });
    const conn = new BrokerConnection(host, port, socket, options);
    received = (bytes) => conn.onData(bytes);
    for (const bytes of early.splice(0)) conn.onData(bytes);
    // Closing the connection fails the ApiVersions / SASL request in flight at once.
    const onAbort = (): void => conn.close();
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      await conn.negotiateVersions(options.apiVersionsVersion ?? 3, connectTimeoutMs);
      if (options.sasl !== undefined) await conn.authenticate(options.sasl, connectTimeoutMs);
      if (signal?.aborted) throw aborted();
    } catch (e) {
      conn.close();
      throw signal?.aborted ? aborted() : e;
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
    return conn;
  }

  get address(): string {
    return `${this.host}:${this.port}`;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Requests sent and not yet answered. */
  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /** The range the broker advertised for an API key, if any. */
  brokerVersionRange(apiKey: number): VersionRange | undefined {
    return this.brokerVersions.get(apiKey);
  }

  /**
   * The version to use for `api`: the highest both sides support (never an unstable latest version),
   * optionally limited to [min, max]. Throws UNSUPPORTED_VERSION when there is none.
   */
  versionFor(
    api: Pick<ApiDefinition, "apiKey" | "name" | "minVersion" | "maxVersion" | "latestVersionUnstable">,
    limit: { min?: number; max?: number } = {},
  ): number {
    const broker = this.brokerVersions.get(api.apiKey);
    const clientMax = Math.min(
      api.latestVersionUnstable ? api.maxVersion - 1 : api.maxVersion,
      limit.max ?? Number.MAX_SAFE_INTEGER,
    );
    const clientMin = Math.max(api.minVersion, limit.min ?? 0);
    if (broker) {
      const v = Math.min(clientMax, broker.maxVersion);
      if (v >= Math.max(clientMin, broker.minVersion)) return v;
    }
    throw KafkaClientError.of(
      "UNSUPPORTED_VERSION",
      broker
        ? `The broker at ${this.address} supports ${api.name} versions ${broker.minVersion}-${broker.maxVersion}, this client ${clientMin}-${clientMax}`
        : `The broker at ${this.address} does not support ${api.name}`,
    );
  }

  /** Sends a request and resolves with its response body. */
  send<Req, Res>(
    api: ApiDefinition<Req, Res>,
    version: number,
    body: Req,
    options: SendOptions = {},
  ): Promise<Res> {
    // While the connection re-authenticates (KIP-368), requests wait for it.
    const gate = this.reauthentication;
    if (gate !== undefined) return gate.then(() => this.send(api, version, body, options));
    return this.request(api, version, body, options);
  }

  /** Writes a request now (the SASL exchange itself, and send() outside a re-authentication). */
  private request<Req, Res>(
    api: ApiDefinition<Req, Res>,
    version: number,
    body: Req,
    options: SendOptions = {},
  ): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      if (this.isClosed) {
        reject(this.closedError());
        return;
      }
      const correlationId = this.takeCorrelationId();
      let frame: Buffer[];
      try {
        frame = encodeRequest(api, version, correlationId, this.clientId, body);
      } catch (e) {
        reject(
          new KafkaClientError(ErrorCode.INVALID_REQUEST, `${api.name} v${version}: ${(e as Error).message}`),
        );
        return;
      }
      const entry: InFlight = {
        correlationId,
        api: api as unknown as ApiDefinition<unknown, unknown>,
        version,
        resolve: resolve as (b: unknown) => void,
        reject,
        timer: undefined,
      };
      const timeoutMs = options.timeoutMs ?? this.requestTimeoutMs;
      entry.timer = setTimeout(() => this.timeOut(entry, timeoutMs), timeoutMs);
      this.inFlight.set(correlationId, entry);
      this.write(frame);
    });
  }

  /** Sends a request that gets no response (Produce with acks=0); resolves once handed to the socket. */
  sendOneWay<Req, Res>(api: ApiDefinition<Req, Res>, version: number, body: Req): Promise<void> {
    const gate = this.reauthentication;
    if (gate !== undefined) return gate.then(() => this.sendOneWay(api, version, body));
    if (this.isClosed) return Promise.reject(this.closedError());
    let frame: Buffer[];
    try {
      frame = encodeRequest(api, version, this.takeCorrelationId(), this.clientId, body);
    } catch (e) {
      return Promise.reject(
        new KafkaClientError(ErrorCode.INVALID_REQUEST, `${api.name} v${version}: ${(e as Error).message}`),
      );
    }
    return new Promise<void>((resolve, reject) => {
      this.socket.cork();
      for (let i = 0; i < frame.length; i++) {
        if (i < frame.length - 1) this.socket.write(frame[i]);
        else
          this.socket.write(frame[i], (e) =>
            e ? reject(KafkaClientError.of("NETWORK_EXCEPTION", e.message)) : resolve(),
          );
      }
      this.socket.uncork();
    });
  }

  /** Called once when the connection closes; `cause` is undefined after close(). */
  onClose(listener: (cause: KafkaClientError | undefined) => void): void {
    if (this.isClosed) queueMicrotask(() => listener(this.closeCause));
    else this.closeListeners.push(listener);
  }

  /** Closes the connection; pending requests reject with NETWORK_EXCEPTION. */
  close(): void {
    if (this.isClosed) return;
    this.shutdown(
      undefined,
      KafkaClientError.of("NETWORK_EXCEPTION", `Connection to ${this.address} was closed`),
    );
  }

  private async negotiateVersions(firstVersion: number, timeoutMs: number): Promise<void> {
    let version = firstVersion;
    for (let attempt = 0; attempt < 3; attempt++) {
      const res = await this.send(
        Apis.ApiVersions,
        version,
        { clientSoftwareName: CLIENT_SOFTWARE_NAME, clientSoftwareVersion: CLIENT_SOFTWARE_VERSION },
        { timeoutMs },
      );
      if (res.errorCode === ErrorCode.UNSUPPORTED_VERSION && version > 0) {
        // Kafka's rule: retry with the highest ApiVersions version the broker listed, else v0.
        const listed = res.apiKeys.find((k) => k.apiKey === ApiKey.ApiVersions);
        const next = listed ? Math.min(listed.maxVersion, version - 1) : 0;
        version = Math.max(0, next);
        continue;
      }
      if (res.errorCode !== ErrorCode.NONE)
        throw new KafkaClientError(res.errorCode, `ApiVersions from ${this.address} failed`);
      this.apiVersionsVersion = version;
      this.brokerVersions = new Map(
        res.apiKeys.map((k) => [k.apiKey, { minVersion: k.minVersion, maxVersion: k.maxVersion }]),
      );
      return;
    }
    throw KafkaClientError.of("UNSUPPORTED_VERSION", `${this.address} accepted no ApiVersions version`);
  }

  /**
   * Authenticates (SaslHandshake v1 + SaslAuthenticate, sasl-client-authenticator.ts). When the broker
   * grants a session lifetime (KIP-368, connections.max.reauth.ms), re-authenticates on this connection at a
   * random point between 85 % and 95 % of it, as Kafka's clients do: new requests wait while the ones in
   * flight are answered and the exchange runs; a refused re-authentication closes the connection.
   */
  private async authenticate(config: SaslClientConfig, timeoutMs: number): Promise<void> {
    const channel: SaslChannel = {
      address: this.address,
      versionFor: (api, limit) => this.versionFor(api, limit),
      request: (api, version, body, ms) => this.request(api, version, body, { timeoutMs: ms }),
    };
    const lifetimeMs = await authenticateSasl(channel, config, timeoutMs);
    if (lifetimeMs <= 0 || this.isClosed) return;
    this.reauthTimer = setTimeout(
      () => {
        this.reauthTimer = undefined;
        this.reauthentication = this.whenIdle()
          .then(() => this.authenticate(config, timeoutMs))
          .catch((e) =>
            this.fail(
              e instanceof KafkaClientError
                ? e
                : KafkaClientError.of("SASL_AUTHENTICATION_FAILED", (e as Error).message),
            ),
          )
          .finally(() => {
            this.reauthentication = undefined;
          });
      },
      lifetimeMs * (0.85 + 0.1 * Math.random()),
    );
    this.reauthTimer.unref();
  }

  /** Resolves once no request is in flight (at once when none is, or the connection closed). */
  private whenIdle(): Promise<void> {
    if (this.inFlight.size === 0 || this.isClosed) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private notifyIdle(): void {
    if (this.inFlight.size !== 0) return;
    for (const w of this.idleWaiters.splice(0)) w();
  }

  private takeCorrelationId(): number {
    const id = this.nextCorrelationId;
    this.nextCorrelationId = (this.nextCorrelationId + 1) | 0;
    if (this.nextCorrelationId < 0) this.nextCorrelationId = 0;
    return id;
  }

  private write(frame: Buffer[]): void {
    if (frame.length === 1) {
      this.socket.write(frame[0]);
      return;
    }
    this.socket.cork();
    for (const chunk of frame) this.socket.write(chunk);
    this.socket.uncork();
  }

  /** Bytes read into the connection's reused read buffer (valid only during this call). */
  private onData(chunk: Buffer): void {
    const frames = this.reader.push(chunk, true);
    for (const frame of frames) {
      if (this.isClosed) return;
      this.onResponse(frame);
    }
    if (this.reader.failure)
      this.shutdown(
        KafkaClientError.of("NETWORK_EXCEPTION", `${this.address}: ${this.reader.failure.message}`),
        undefined,
      );
  }

  private onResponse(frame: Buffer): void {
    if (frame.length < 4) {
      this.shutdown(
        KafkaClientError.of("NETWORK_EXCEPTION", `${this.address}: response shorter than a header`),
        undefined,
      );
      return;
    }
    const correlationId = frame.readInt32BE(0);
    const first = this.inFlight.values().next();
    const entry = first.done ? undefined : first.value;
    if (!entry || entry.correlationId !== correlationId) {
      // Kafka's NetworkClient: a response out of order means the stream is unusable.
      this.shutdown(
        KafkaClientError.of(
          "NETWORK_EXCEPTION",
          `${this.address}: correlation id ${correlationId} does not match the next request (${entry?.correlationId ?? "none"})`,
        ),
        undefined,
      );
      return;
    }
    this.inFlight.delete(correlationId);
    clearTimeout(entry.timer);
    this.notifyIdle();
    let body: unknown;
    try {
      body = decodeResponse(entry.api, entry.version, frame).body;
    } catch (e) {
      // A broker that did not know our ApiVersions version answers with a v0 body (Kafka's rule).
      if (entry.api.apiKey === ApiKey.ApiVersions && entry.version > 0) {
        try {
          body = decodeResponse(entry.api, 0, frame).body as ApiVersionsResponse;
        } catch {
          body = undefined;
        }
      }
      if (body === undefined) {
        entry.reject(
          KafkaClientError.of(
            "CORRUPT_MESSAGE",
            `${this.address}: cannot decode ${entry.api.name} v${entry.version} response: ${(e as Error).message}`,
          ),
        );
        return;
      }
    }
    entry.resolve(body);
  }

  private timeOut(entry: InFlight, timeoutMs: number): void {
    if (!this.inFlight.has(entry.correlationId)) return;
    this.inFlight.delete(entry.correlationId);
    this.notifyIdle();
    entry.reject(
      KafkaClientError.of(
        "REQUEST_TIMED_OUT",
        `${entry.api.name} request to ${this.address} timed out after ${timeoutMs} ms`,
      ),
    );
    // As Kafka's clients do: the connection state is unknown after a timeout, so disconnect.
    this.shutdown(
      KafkaClientError.of("NETWORK_EXCEPTION", `Disconnected from ${this.address} after a request timeout`),
      undefined,
    );
  }

  private closedError(): KafkaClientError {
    return (
      this.closeCause ?? KafkaClientError.of("NETWORK_EXCEPTION", `Connection to ${this.address} is closed`)
    );
  }

  private fail(cause: KafkaClientError): void {
    if (!this.isClosed) this.shutdown(cause, undefined);
  }

  /** Closes once: `cause` for a failure, `pendingError` for a deliberate close. */
  private shutdown(cause: KafkaClientError | undefined, pendingError: KafkaClientError | undefined): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.closeCause = cause;
    clearTimeout(this.reauthTimer);
    const error = cause ?? pendingError ?? KafkaClientError.of("NETWORK_EXCEPTION", "closed");
    this.socket.destroy();
    const pending = [...this.inFlight.values()];
    this.inFlight.clear();
    for (const p of pending) {
      clearTimeout(p.timer);
      p.reject(error);
    }
    for (const w of this.idleWaiters.splice(0)) w();
    const listeners = this.closeListeners.splice(0);
    for (const l of listeners) l(cause);
  }
}
