// SocketServer: Kafka's SocketServer for PLAINTEXT listeners. Owns one net.Server (Kafka's Acceptor) per
// configured listener, every open connection (Kafka's Processor + KafkaChannel, see KafkaConnection
// below), the idle-connection reaper, and the order of responses on a connection.
//
// Per connection:
// - Frames are cut by a FrameReader bounded by socket.request.max.bytes; a bad size prefix closes the
//   connection with one log line (Kafka's InvalidReceiveException), before anything is allocated for it.
//   Complete requests that arrived before it are still answered first (Kafka reads the next size prefix
//   only after the previous request's response was sent): reading stops, the connection closes once they
//   are done.
// - Requests are processed one at a time per connection, in arrival order — Kafka's "muted channel": a
//   request is handed to the pipeline only after the previous one's response was queued for writing. So
//   clients may pipeline many requests (all are read and queued), and responses leave in request order.
//   Connections are processed concurrently with one another.
// - Quota throttling (Kafka's ThrottledChannel, KIP-219): a response carrying a throttle time mutes its
//   connection for that long from when it is queued — nothing more is read or handled — so a client over
//   its quota is slowed even if it ignores throttle_time_ms; a response to a client older than KIP-219 is
//   itself held until the throttle time is over.
// - Back-pressure: reading stops (socket.pause) while more than MAX_QUEUED_REQUESTS frames or more than
//   socket.request.max.bytes of frames wait on the connection, and processing waits while more than
//   MAX_PENDING_WRITE_BYTES of responses are unsent (until 'drain'). Memory per connection stays bounded
//   even when a client never reads.
// - connections.max.idle.ms: a periodic task on the Scheduler closes connections with no request being
//   handled and no bytes read or written for that long (Kafka's Selector idle expiry).
// - Responses are written as their Buffer[] chunks between cork() and uncork() (one writev); once the last
//   chunk is handed to the kernel the processor hears of it (responseSent: request metrics) and the
//   response's pooled buffers go back to the MemoryPool (outcome.release).
// - Frames that span socket chunks are assembled in buffers from the broker's MemoryPool (when given);
//   the request pipeline decides which frames it may give back.
// - queued.max.request.bytes (RequestMemoryPool): a frame's announced size is asked of the broker-wide
//   pool as soon as its size prefix is read; a connection refused stops reading until memory is given
//   back (a request handled, a connection closed). So what clients announce or leave half-sent cannot
//   hold more than the pool (plus one request and the chunk each connection read).
// - socket.request.receive.timeout.ms (Tributary's): a request whose bytes have not all arrived that long
//   after its size prefix was granted closes the connection (slow or stalled senders give their memory
//   back). Connections closed this way, and connections opened near the process's open-file limit (where
//   the OS refuses new ones without telling the broker), are logged at most every 10 s with a count.
// queued.max.requests (Kafka: the size of the broker-wide request queue) is accepted; the bound here is
// per connection (MAX_QUEUED_REQUESTS, plus socket.request.max.bytes of queued frames).
// socket.send.buffer.bytes / socket.receive.buffer.bytes are accepted but Node's net module has no
// SO_SNDBUF/SO_RCVBUF setting: the OS defaults apply (as Kafka does with -1).

import { readFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { createServer as createTlsServer, type TLSSocket } from "node:tls";
import { trimAllocator } from "../common/allocator-tuning.js";
import { Logger } from "../common/logger.js";
import type { MemoryPool } from "../common/memory-pool.js";
import type { ScheduledTask, Scheduler } from "../common/scheduler.js";
import type { SslOptions } from "../common/ssl-engine-factory.js";
import type { Time } from "../common/time.js";
import { FrameReader } from "../protocol/frame-reader.js";
import type { EndPoint } from "./end-point.js";
import { type PoolWaiter, RequestMemoryPool } from "./request-memory-pool.js";
import type { ConnectionInfo, RequestOutcome } from "./request-pipeline.js";
import type { CredentialCache } from "./security/credential-cache.js";
import { ANONYMOUS_PRINCIPAL, sslPrincipal } from "./security/kafka-principal.js";
import { type SaslListenerConfig, SaslServerAuthenticator } from "./security/sasl-server-authenticator.js";
import type { SslPrincipalMapper } from "./security/ssl-principal-mapper.js";

/** Requests read but not yet processed on one connection before reading stops. */
export const MAX_QUEUED_REQUESTS = 64;
/** Unsent response bytes on one connection before processing waits for 'drain'. */
export const MAX_PENDING_WRITE_BYTES = 4 * 1024 * 1024;

export interface RequestProcessor {
  process(conn: ConnectionInfo, frame: Buffer, receivedNs: bigint): Promise<RequestOutcome>;
  /** A response was handed to the kernel at `sentNs` (or, for "none", the request ended): request metrics. */
  responseSent?(outcome: RequestOutcome, sentNs: bigint): void;
}

export interface SocketServerConfig {
  readonly brokerId: number;
  readonly listeners: readonly EndPoint[];
  readonly socketRequestMaxBytes: number;
  readonly connectionsMaxIdleMs: number;
  readonly socketListenBacklogSize: number;
  /** queued.max.request.bytes (≤ 0: unbounded). */
  readonly queuedMaxRequestBytes?: number;
  /** socket.request.receive.timeout.ms (≤ 0: none). */
  readonly socketRequestReceiveTimeoutMs?: number;
  /** The TLS options of an SSL listener (KafkaConfig.sslOptionsFor). */
  sslOptionsFor?(listenerName: string): SslOptions;
  /** The mechanisms of a SASL listener (KafkaConfig.saslConfigFor). */
  saslConfigFor?(listenerName: string, credentials?: CredentialCache): SaslListenerConfig;
  /** An SSL listener's ssl.principal.mapping.rules (KafkaConfig.sslPrincipalMapperFor). */
  sslPrincipalMapperFor?(listenerName: string): SslPrincipalMapper;
  /** sasl.server.max.receive.size: the largest frame read before a SASL connection authenticated. */
  readonly saslServerMaxReceiveSize?: number;
}

/** Counts events and logs them at most once per interval, with how many happened since the last line. */
class RateLimitedLog {
  private count = 0;
  private lastNs = -1n;
  total = 0;

  constructor(
    private readonly intervalNs: bigint,
    private readonly log: (line: string) => void,
  ) {}

  event(nowNs: bigint, describe: (count: number) => string): void {
    this.count++;
    this.total++;
    if (this.lastNs >= 0n && nowNs - this.lastNs < this.intervalNs) return;
    this.log(describe(this.count));
    this.count = 0;
    this.lastNs = nowNs;
  }
}

/** The soft limit on open files of this process (ulimit -n), from /proc; undefined when unknown. */
function openFilesLimit(): number | undefined {
  try {
    const m = /^Max open files\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** A listener once bound: the configured endpoint with the port the OS gave (port 0 → ephemeral). */
export interface BoundEndPoint extends EndPoint {
  readonly boundHost: string;
}

export class SocketServer {
  private readonly acceptors: Array<{ endpoint: BoundEndPoint; server: Server }> = [];
  private readonly connections = new Set<KafkaConnection>();
  private idleTask: ScheduledTask | undefined;
  private stopped = false;
  private nextConnectionIndex = 0;
  private closingAcceptors: Promise<void>[] = [];
  private readonly inFlight: Promise<void>[] = [];
  private readonly logger: Logger;
  /** queued.max.request.bytes: what requests being received and waiting may hold. */
  readonly requestMemory: RequestMemoryPool;
  private readonly receiveTimeouts: RateLimitedLog;
  private readonly nearFileLimit: RateLimitedLog;
  private readonly fileLimit = openFilesLimit();
  private trimTasks: ScheduledTask[] = [];

  constructor(
    readonly config: SocketServerConfig,
    private readonly processor: RequestProcessor,
    private readonly time: Time,
    private readonly scheduler: Scheduler,
    readonly memoryPool?: MemoryPool,
    /** The SCRAM credentials SASL listeners authenticate with. */
    private readonly credentialCache?: CredentialCache,
  ) {
    this.logger = new Logger(
      "kafka.network.SocketServer",
      `SocketServer listenerType=ZK_BROKER, nodeId=${config.brokerId}`,
    );
    this.requestMemory = new RequestMemoryPool(config.queuedMaxRequestBytes ?? -1);
    const tenSeconds = 10_000_000_000n;
    this.receiveTimeouts = new RateLimitedLog(tenSeconds, (l) => this.logger.warn(l));
    this.nearFileLimit = new RateLimitedLog(tenSeconds, (l) => this.logger.error(l));
  }

  /**
   * A connection closed with a large request unfinished (stalled, aborted): once its buffers are
   * collected, give the freed memory back to the kernel (the allocator tuning would keep it mapped).
   * A few tries over 20 s, as garbage collection frees them when it runs.
   */
  noteAbandonedRequest(bytes: number): void {
    if (bytes < 1024 * 1024 || this.stopped || this.trimTasks.length > 0) return;
    this.trimTasks = [2000, 8000, 20_000].map((delay, i, all) =>
      this.scheduler.schedule(
        "request-memory-trim",
        () => {
          trimAllocator();
          if (i === all.length - 1) this.trimTasks = [];
        },
        delay,
      ),
    );
  }

  /** Runs `fn` after `ms` (a throttled connection's unmute). */
  scheduleOnce(name: string, fn: () => void, ms: number): ScheduledTask {
    return this.scheduler.schedule(name, fn, ms);
  }

  /** Connections closed because a request did not arrive in socket.request.receive.timeout.ms. */
  get receiveTimeoutCount(): number {
    return this.receiveTimeouts.total;
  }

  /** Connections accepted with fewer than 64 open files left below the limit. */
  get nearFileLimitCount(): number {
    return this.nearFileLimit.total;
  }

  /** Binds every listener; resolves once all are listening (rejects with the bind error, e.g. EADDRINUSE). */
  async startup(): Promise<void> {
    try {
      for (const endpoint of this.config.listeners) await this.bind(endpoint);
    } catch (e) {
      await this.shutdown();
      throw e;
    }
    const idleMs = this.config.connectionsMaxIdleMs;
    const receiveMs = this.config.socketRequestReceiveTimeoutMs ?? 0;
    const limits = [idleMs, receiveMs].filter((ms) => ms > 0 && ms < Number.MAX_SAFE_INTEGER);
    if (limits.length > 0) {
      const period = Math.max(10, Math.min(1000, Math.floor(Math.min(...limits) / 4)));
      this.idleTask = this.scheduler.schedule(
        "kafka-socket-idle-expiry",
        () => this.closeIdle(),
        period,
        period,
      );
    }
  }

  private bind(endpoint: EndPoint): Promise<void> {
    return new Promise((resolve, reject) => {
      // SSL listeners (Kafka's SslTransportLayer): the handshake completes before the connection is
      // handed over; a client that fails it (no certificate when ssl.client.auth=required, an unknown
      // CA) never becomes a connection.
      const server =
        endpoint.securityProtocol === "SSL" || endpoint.securityProtocol === "SASL_SSL"
          ? createTlsServer({ ...this.tlsServerOptions(endpoint.listenerName), noDelay: true }, (socket) =>
              this.accept(socket, endpoint),
            ).on("tlsClientError", (e) =>
              this.logger.debug(`TLS handshake failed on listener ${endpoint.listenerName}: ${e.message}`),
            )
          : createServer({ noDelay: true }, (socket) => this.accept(socket, endpoint));
      const onError = (e: NodeJS.ErrnoException): void => {
        reject(
          new Error(
            `Socket server failed to bind to ${endpoint.host || "0.0.0.0"}:${endpoint.port}: ${e.code === "EADDRINUSE" ? "Address already in use" : e.message}.`,
          ),
        );
      };
      server.once("error", onError);
      server.listen(
        {
          host: endpoint.host === "" ? undefined : endpoint.host,
          port: endpoint.port,
          backlog: this.config.socketListenBacklogSize,
        },
        () => {
          server.off("error", onError);
          server.on("error", (e) =>
            this.logger.error(`Error on listener ${endpoint.listenerName}: ${e.message}`),
          );
          const address = server.address();
          const port = typeof address === "object" && address !== null ? address.port : endpoint.port;
          const boundHost = endpoint.host === "" ? "0.0.0.0" : endpoint.host;
          const bound: BoundEndPoint = { ...endpoint, port, boundHost };
          this.acceptors.push({ endpoint: bound, server });
          this.logger.info(
            `Created data-plane acceptor and processors for endpoint : ListenerName(${endpoint.listenerName})`,
          );
          this.logger.info(`Awaiting socket connections on ${boundHost}:${port}.`);
          resolve();
        },
      );
    });
  }

  private readonly saslConfigs = new Map<string, SaslListenerConfig>();

  private saslConfig(listenerName: string): SaslListenerConfig {
    let c = this.saslConfigs.get(listenerName);
    if (c === undefined) {
      c = this.config.saslConfigFor?.(listenerName, this.credentialCache);
      if (c === undefined) throw new Error(`listener ${listenerName} is SASL but has no SASL settings`);
      this.saslConfigs.set(listenerName, c);
    }
    return c;
  }

  private tlsServerOptions(listenerName: string): Omit<SslOptions, "checkHostName"> {
    const o = this.config.sslOptionsFor?.(listenerName);
    if (o === undefined) throw new Error(`listener ${listenerName} is SSL but has no TLS settings`);
    const { checkHostName: _unused, ...tlsOptions } = o;
    return tlsOptions;
  }

  /** The listeners as bound (ports resolved). */
  boundEndpoints(): BoundEndPoint[] {
    return this.acceptors.map((a) => a.endpoint);
  }

  /** The bound port of a listener (by name; default the first). */
  boundPort(listenerName?: string): number {
    const a =
      listenerName === undefined
        ? this.acceptors[0]
        : this.acceptors.find((x) => x.endpoint.listenerName === listenerName);
    if (a === undefined) throw new Error(`no bound listener ${listenerName ?? ""}`);
    return a.endpoint.port;
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  /** Open connections per listener name (every bound listener, 0 when it has none). */
  connectionsByListener(): Map<string, number> {
    const out = new Map<string, number>();
    for (const a of this.acceptors) out.set(a.endpoint.listenerName, 0);
    for (const c of this.connections) out.set(c.info.listenerName, (out.get(c.info.listenerName) ?? 0) + 1);
    return out;
  }

  private accept(socket: Socket, endpoint: EndPoint): void {
    if (this.stopped) {
      socket.destroy();
      return;
    }
    const index = this.nextConnectionIndex++;
    // A SASL listener's connection authenticates first (SaslServerAuthenticator), reading small frames only.
    let processor = this.processor;
    let maxFrameBytes = this.config.socketRequestMaxBytes;
    let authenticator: SaslServerAuthenticator | undefined;
    if (endpoint.securityProtocol.startsWith("SASL_")) {
      const sasl = this.saslConfig(endpoint.listenerName);
      const inner = this.processor;
      const auth: SaslServerAuthenticator = new SaslServerAuthenticator(sasl, (c, f, r) =>
        inner.process(auth.principal === undefined ? c : { ...c, principal: auth.principal }, f, r),
      );
      authenticator = auth;
      processor = {
        process: (c, f, r) => auth.process(c, f, r),
        responseSent: inner.responseSent ? (o, ns) => inner.responseSent!(o, ns) : undefined,
      };
      maxFrameBytes = Math.min(maxFrameBytes, this.config.saslServerMaxReceiveSize ?? 524288);
    }
    // An SSL listener's principal is the client certificate's (ssl.principal.mapping.rules).
    let principal = ANONYMOUS_PRINCIPAL;
    if (endpoint.securityProtocol === "SSL" && this.config.sslPrincipalMapperFor !== undefined) {
      try {
        principal = sslPrincipal(
          socket as TLSSocket,
          this.config.sslPrincipalMapperFor(endpoint.listenerName),
        );
      } catch (e) {
        this.logger.info(`Closing connection from ${socket.remoteAddress}: ${(e as Error).message}`);
        socket.destroy();
        return;
      }
    }
    const conn = new KafkaConnection(
      socket,
      endpoint,
      index,
      this,
      processor,
      this.time,
      this.logger,
      maxFrameBytes,
      authenticator,
      principal,
    );
    this.connections.add(conn);
    socket.once("close", () => this.connections.delete(conn));
    // The OS refuses connections past the open-file limit and the broker never hears of them: say so
    // while there is still room to.
    const limit = this.fileLimit;
    if (limit !== undefined && this.connections.size + 64 >= limit)
      this.nearFileLimit.event(
        this.time.nanoseconds(),
        (n) =>
          `${this.connections.size} connections open, close to this process's limit of ${limit} open files (ulimit -n): new connections beyond it are refused by the OS without the broker seeing them (${n} accepted this close since the last line); raise the limit`,
      );
  }

  private closeIdle(): void {
    const now = this.time.nanoseconds();
    const idleMs = this.config.connectionsMaxIdleMs;
    const limitNs = idleMs > 0 && idleMs < Number.MAX_SAFE_INTEGER ? BigInt(idleMs) * 1_000_000n : -1n;
    const receiveMs = this.config.socketRequestReceiveTimeoutMs ?? 0;
    const receiveNs = receiveMs > 0 ? BigInt(receiveMs) * 1_000_000n : -1n;
    for (const conn of this.connections) {
      if (receiveNs > 0n && conn.isReceiveOverdue(now, receiveNs)) {
        this.receiveTimeouts.event(
          now,
          (n) =>
            `Closing connection from ${conn.info.clientAddress}: a request of ${conn.partialFrameSize} bytes did not arrive within socket.request.receive.timeout.ms (${receiveMs} ms) (${n} such connection${n === 1 ? "" : "s"} closed since the last line)`,
        );
        conn.close();
      } else if (limitNs > 0n && conn.isIdleSince(now, limitNs)) {
        this.logger.debug(`Closing idle connection ${conn.info.connectionId}`);
        conn.close();
      }
    }
  }

  /**
   * Kafka's stopProcessingRequests: stop accepting, close every connection (requests queued on them are
   * dropped; those being handled finish, their responses are discarded). Returns at once.
   */
  stopProcessingRequests(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.logger.info("Stopping socket server request processors");
    this.idleTask?.cancel();
    for (const t of this.trimTasks) t.cancel();
    this.trimTasks = [];
    this.closingAcceptors = this.acceptors.map(
      (a) => new Promise<void>((resolve) => a.server.close(() => resolve())),
    );
    for (const conn of this.connections) {
      this.inFlight.push(conn.idle());
      conn.close();
    }
  }

  /** Stops (if not yet) and waits, at most maxWaitMs, for the handlers still running. */
  async shutdown(maxWaitMs = 5000): Promise<void> {
    this.stopProcessingRequests();
    let timer: ScheduledTask | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = this.scheduler.schedule("socket-server-shutdown-wait", resolve, maxWaitMs);
    });
    await Promise.race([Promise.all(this.inFlight), timeout]);
    timer?.cancel();
    await Promise.all(this.closingAcceptors);
    this.logger.info("Stopped socket server request processors");
  }
}

/** One client connection: frames in, requests processed in order, responses out. */
export class KafkaConnection implements PoolWaiter {
  readonly info: ConnectionInfo;
  private readonly reader: FrameReader;
  private readonly queue: Array<{ frame: Buffer; receivedNs: bigint }> = [];
  private queuedBytes = 0;
  private processing = false;
  private closed = false;
  /** A bad size prefix was read: no more reading; close once the requests before it are answered. */
  private invalidStream = false;
  private paused = false;
  private lastActiveNs: bigint;
  private idleWaiters: Array<() => void> = [];
  // Request memory held in the pool: every queued frame, the frame being handled (processingBytes) and
  // the in-progress frame once granted (grantedPartial); each given back by its size.
  /** The in-progress frame's granted size (-1: none granted), since when it is being received. */
  private grantedPartial = -1;
  private partialSinceNs = 0n;
  /** The size of the frame being handled (back to the pool when done). */
  private processingBytes = 0;
  private waitingForMemory = false;
  private waitedBytes = 0;
  /** ThrottledChannel: muted (nothing read or processed) until the quota throttle time is over. */
  private throttle: ScheduledTask | undefined;
  /** A response held until the throttle is over (clients that predate KIP-219). */
  private heldResponse: (RequestOutcome & { kind: "response" }) | undefined;

  constructor(
    private readonly socket: Socket,
    endpoint: EndPoint,
    index: number,
    private readonly server: SocketServer,
    private readonly processor: RequestProcessor,
    private readonly time: Time,
    private readonly logger: Logger,
    maxFrameBytes: number = server.config.socketRequestMaxBytes,
    /** A SASL connection's authenticator: the frame limit is lifted once it completes. */
    private readonly authenticator?: SaslServerAuthenticator,
    principal: string = ANONYMOUS_PRINCIPAL,
  ) {
    const local = `${socket.localAddress ?? ""}:${socket.localPort ?? ""}`;
    const remote = `${socket.remoteAddress ?? ""}:${socket.remotePort ?? ""}`;
    this.info = {
      listenerName: endpoint.listenerName,
      securityProtocol: endpoint.securityProtocol,
      connectionId: `${local}-${remote}-${index}`,
      clientAddress: remote,
      principal,
    };
    this.reader = new FrameReader(maxFrameBytes, server.memoryPool);
    this.lastActiveNs = time.nanoseconds();
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
    socket.on("error", (e: NodeJS.ErrnoException) => {
      if (e.code !== "ECONNRESET" && e.code !== "EPIPE") {
        this.logger.debug(`Connection ${this.info.connectionId} failed: ${e.message}`);
      }
      this.close();
    });
    socket.on("end", () => this.close());
    socket.on("close", () => {
      this.closed = true;
      this.notifyIdle();
    });
    socket.on("drain", () => {
      this.lastActiveNs = this.time.nanoseconds();
      this.pump();
    });
  }

  private onData(chunk: Buffer): void {
    if (this.closed) return;
    const now = this.time.nanoseconds();
    this.lastActiveNs = now;
    const frames = this.reader.push(chunk);
    const pool = this.server.requestMemory;
    for (const frame of frames) {
      this.queue.push({ frame, receivedNs: now });
      this.queuedBytes += frame.length;
      // The frame that was granted as it started is accounted already; those that came whole in this
      // chunk are in memory anyway: accounted whatever is left.
      if (this.grantedPartial >= 0) this.grantedPartial = -1;
      else {
        if (this.waitingForMemory) {
          // (Cannot happen while reading is paused for it; kept exact all the same.)
          this.waitingForMemory = false;
          pool.cancel(this);
        }
        pool.allocateAnyway(frame.length);
      }
    }
    if (this.reader.failure) this.invalidStream = true;
    const partial = this.reader.partialFrameSize;
    if (partial >= 0 && this.grantedPartial < 0 && !this.waitingForMemory) {
      if (pool.tryAllocate(partial)) this.grantPartial(partial, now);
      else {
        this.waitingForMemory = true;
        this.waitedBytes = partial;
        pool.wait(this, partial);
      }
    }
    this.pump();
  }

  /** The pool gave this connection the memory of the frame it waited for: reading goes on. */
  granted(): void {
    this.waitingForMemory = false;
    if (this.closed) {
      this.server.requestMemory.release(this.waitedBytes);
      return;
    }
    this.grantPartial(this.waitedBytes, this.time.nanoseconds());
    this.pump();
  }

  private grantPartial(size: number, nowNs: bigint): void {
    this.grantedPartial = size;
    this.partialSinceNs = nowNs;
  }

  /** The announced size of the request being received (-1 between requests). */
  get partialFrameSize(): number {
    return this.reader.partialFrameSize;
  }

  /** A granted request still incomplete after `limitNs` (socket.request.receive.timeout.ms). */
  isReceiveOverdue(nowNs: bigint, limitNs: bigint): boolean {
    return this.grantedPartial >= 0 && nowNs - this.partialSinceNs > limitNs;
  }

  /** Processes queued requests one at a time, in order, and sets the read state. */
  private pump(): void {
    if (this.closed) return;
    this.updateReadState();
    if (this.throttle !== undefined) return; // unmuted by its timer
    if (this.processing || this.queue.length === 0) {
      if (!this.processing && this.invalidStream) {
        this.logger.warn(
          `Closing socket connection to ${this.info.clientAddress} due to invalid request: ${this.reader.failure?.message}`,
        );
        this.close();
        return;
      }
      if (!this.processing) this.notifyIdle();
      return;
    }
    if (this.socket.writableLength > MAX_PENDING_WRITE_BYTES) return; // resumes on 'drain'
    const next = this.queue.shift()!;
    this.queuedBytes -= next.frame.length;
    this.processingBytes = next.frame.length;
    this.processing = true;
    this.updateReadState();
    void this.processor.process(this.info, next.frame, next.receivedNs).then(
      (outcome) => this.complete(outcome),
      (e) =>
        this.complete({ kind: "close", reason: `request processing failed: ${(e as Error)?.message ?? e}` }),
    );
  }

  private complete(outcome: RequestOutcome): void {
    this.processing = false;
    if (this.authenticator?.isComplete) this.reader.setMaxBytes(this.server.config.socketRequestMaxBytes);
    this.server.requestMemory.release(this.processingBytes);
    this.processingBytes = 0;
    if (this.closed) {
      this.notifyIdle();
      return;
    }
    const throttleMs = outcome.kind === "close" ? 0 : (outcome.throttleMs ?? 0);
    if (throttleMs > 0) this.mute(throttleMs);
    switch (outcome.kind) {
      case "response":
        if (throttleMs > 0 && outcome.clientThrottles === false) this.heldResponse = outcome;
        else this.write(outcome);
        break;
      case "close":
        this.logger.info(`Closing socket connection to ${this.info.clientAddress}: ${outcome.reason}`);
        this.close();
        return;
      default:
        this.processor.responseSent?.(outcome, this.time.nanoseconds());
        break;
    }
    this.pump();
  }

  private write(outcome: RequestOutcome & { kind: "response" }): void {
    this.lastActiveNs = this.time.nanoseconds();
    const chunks = outcome.chunks;
    const last = chunks.length - 1;
    const sent = this.processor.responseSent;
    if (last < 0) {
      outcome.release?.();
      return;
    }
    this.socket.cork();
    for (let i = 0; i < last; i++) this.socket.write(chunks[i]);
    if (sent === undefined && outcome.release === undefined) {
      this.socket.write(chunks[last]);
    } else {
      // The write callback runs once the last chunk is handed to the kernel (with an error if it never is:
      // then the pooled buffers are left to the garbage collector rather than reused).
      this.socket.write(chunks[last], (e) => {
        if (e != null) return;
        outcome.release?.();
        sent?.call(this.processor, outcome, this.time.nanoseconds());
      });
    }
    this.socket.uncork();
  }

  /**
   * Kafka's ThrottledChannel (KIP-219): the channel is muted for the throttle time from when the
   * response was queued — no more bytes are read and no queued request is handled — then unmuted.
   */
  private mute(throttleMs: number): void {
    this.throttle?.cancel();
    this.throttle = this.server.scheduleOnce(
      "throttled-channel",
      () => {
        this.throttle = undefined;
        if (this.closed) return;
        const held = this.heldResponse;
        this.heldResponse = undefined;
        if (held !== undefined) this.write(held);
        this.lastActiveNs = this.time.nanoseconds();
        this.pump();
      },
      throttleMs,
    );
    this.updateReadState();
  }

  private updateReadState(): void {
    const tooMuch =
      this.throttle !== undefined ||
      this.invalidStream ||
      this.waitingForMemory ||
      this.queue.length >= MAX_QUEUED_REQUESTS ||
      this.queuedBytes >= this.server.config.socketRequestMaxBytes ||
      this.socket.writableLength > MAX_PENDING_WRITE_BYTES;
    if (tooMuch && !this.paused) {
      this.paused = true;
      this.socket.pause();
    } else if (!tooMuch && this.paused) {
      this.paused = false;
      this.socket.resume();
    }
  }

  isIdleSince(nowNs: bigint, limitNs: bigint): boolean {
    // A connection whose queue is stuck behind unread responses counts as idle too (no bytes moved).
    return !this.processing && this.throttle === undefined && nowNs - this.lastActiveNs > limitNs;
  }

  /** Resolves when no request of this connection is being processed. */
  idle(): Promise<void> {
    if (!this.processing) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private notifyIdle(): void {
    if (this.processing) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.throttle?.cancel();
    this.throttle = undefined;
    this.heldResponse?.release?.();
    this.heldResponse = undefined;
    // Everything but the request being handled (given back when it completes) returns to the pool.
    const pool = this.server.requestMemory;
    for (const q of this.queue) pool.release(q.frame.length);
    if (this.grantedPartial >= 0) {
      pool.release(this.grantedPartial);
      this.server.noteAbandonedRequest(this.reader.pendingBytes);
    }
    this.grantedPartial = -1;
    if (this.waitingForMemory) {
      this.waitingForMemory = false;
      pool.cancel(this);
    }
    this.queue.length = 0;
    this.queuedBytes = 0;
    // Let responses already written leave first (destroySoon waits for them), else close at once.
    if (this.socket.writableLength === 0) this.socket.destroy();
    else {
      this.socket.end();
      this.socket.destroySoon();
    }
    this.notifyIdle();
  }
}
