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
// queued.max.requests (Kafka: the size of the broker-wide request queue) is accepted; the bound here is
// per connection (MAX_QUEUED_REQUESTS, plus socket.request.max.bytes of queued frames).
// socket.send.buffer.bytes / socket.receive.buffer.bytes are accepted but Node's net module has no
// SO_SNDBUF/SO_RCVBUF setting: the OS defaults apply (as Kafka does with -1).

import { createServer, type Server, type Socket } from "node:net";
import { Logger } from "../common/logger.js";
import type { MemoryPool } from "../common/memory-pool.js";
import type { ScheduledTask, Scheduler } from "../common/scheduler.js";
import type { Time } from "../common/time.js";
import { FrameReader } from "../protocol/frame-reader.js";
import type { EndPoint } from "./kafka-config.js";
import type { ConnectionInfo, RequestOutcome } from "./request-pipeline.js";

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

  constructor(
    readonly config: SocketServerConfig,
    private readonly processor: RequestProcessor,
    private readonly time: Time,
    private readonly scheduler: Scheduler,
    readonly memoryPool?: MemoryPool,
  ) {
    this.logger = new Logger(
      "kafka.network.SocketServer",
      `SocketServer listenerType=ZK_BROKER, nodeId=${config.brokerId}`,
    );
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
    if (idleMs > 0 && idleMs < Number.MAX_SAFE_INTEGER) {
      const period = Math.max(10, Math.min(1000, Math.floor(idleMs / 4)));
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
      const server = createServer({ noDelay: true }, (socket) => this.accept(socket, endpoint));
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
    const conn = new KafkaConnection(socket, endpoint, index, this, this.processor, this.time, this.logger);
    this.connections.add(conn);
    socket.once("close", () => this.connections.delete(conn));
  }

  private closeIdle(): void {
    const now = this.time.nanoseconds();
    const limitNs = BigInt(this.config.connectionsMaxIdleMs) * 1_000_000n;
    for (const conn of this.connections) {
      if (conn.isIdleSince(now, limitNs)) {
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
export class KafkaConnection {
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

  constructor(
    private readonly socket: Socket,
    endpoint: EndPoint,
    index: number,
    private readonly server: SocketServer,
    private readonly processor: RequestProcessor,
    private readonly time: Time,
    private readonly logger: Logger,
  ) {
    const local = `${socket.localAddress ?? ""}:${socket.localPort ?? ""}`;
    const remote = `${socket.remoteAddress ?? ""}:${socket.remotePort ?? ""}`;
    this.info = {
      listenerName: endpoint.listenerName,
      securityProtocol: endpoint.securityProtocol,
      connectionId: `${local}-${remote}-${index}`,
      clientAddress: remote,
    };
    this.reader = new FrameReader(server.config.socketRequestMaxBytes, server.memoryPool);
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
    for (const frame of frames) {
      this.queue.push({ frame, receivedNs: now });
      this.queuedBytes += frame.length;
    }
    if (this.reader.failure) this.invalidStream = true;
    this.pump();
  }

  /** Processes queued requests one at a time, in order, and sets the read state. */
  private pump(): void {
    if (this.closed) return;
    this.updateReadState();
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
    if (this.closed) {
      this.notifyIdle();
      return;
    }
    switch (outcome.kind) {
      case "response":
        this.write(outcome);
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

  private updateReadState(): void {
    const tooMuch =
      this.invalidStream ||
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
    return !this.processing && nowNs - this.lastActiveNs > limitNs;
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
