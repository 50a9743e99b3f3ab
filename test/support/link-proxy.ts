// Test-only: a loopback TCP proxy with per-link cuts, latency and Kafka-frame faults, to break a test
// cluster's network on one machine (127.0.0.1 only, on both sides). Two kinds of route, each a listening port:
//   - a broker route stands in front of one broker's inter-broker listener (the port that broker advertises
//     for REPLICATION). Every broker connects to it, so the source of a connection is learnt from the client
//     id of its first Kafka request header: the broker's inter-broker clients name themselves
//     `broker-<id>-…` (fetchers, AlterPartition, controlled shutdown, transaction markers) or
//     `controller-<id>` (the controller's channel). Until that header has arrived, nothing is forwarded;
//   - a ZooKeeper route stands in front of one ZooKeeper server for one broker (that broker's
//     zookeeper.connect names only its own routes), so its source is known from the port. Its bytes are
//     piped as they come (no framing, no latency).
// A link is a pair of brokers (both directions) or a broker and ZooKeeper. `cut(a, b)` drops the link's
// open connections (both sockets destroyed) and blackholes new ones: accepted, read and discarded, never
// forwarded nor answered — as a partitioned peer looks to TCP, so the client waits for its own timeouts
// instead of failing fast. `heal(a, b)` ends the blackholed connections (their clients reconnect) and
// forwards new connections again. `isolate(x)` cuts x from every other broker and from ZooKeeper;
// `healAll()` heals everything. A broker's connections to itself are never cut.
//
// On a broker route the proxy follows the Kafka framing both ways: requests client→broker (size int32, api
// key int16, version int16, correlation id int32, …) and responses broker→client (size int32, correlation id
// int32, …), matched by correlation id per connection. Chunks are forwarded as they arrive (no copy; a
// header split across chunks is held until it is whole), so with nothing armed the path stays a byte pipe.
// What it can do to the requests of one api key, optionally only from broker `src` to broker `dst` (the
// route's broker), each rule armed for a count of frames or until disarmed, counting what it did:
//   - `dropResponses`: the response is swallowed (the client times out);
//   - `delayResponses`: the response is held N ms; responses after it on the connection wait behind it;
//   - `captureRequests`: a copy of each request frame is kept; `replay(captured)` sends it to the broker
//     again, on the connection it came by (or another of the same link, or a new one), under a correlation
//     id the client never used; the broker's answer is swallowed and returned to the test;
//   - `setLatency(ms, a?, b?)`: every chunk of a link (or of every inter-broker link) is held ms each way,
//     in order.

import { connect, createServer, type Server, type Socket } from "node:net";

/** The other end of a link: a broker id or ZooKeeper. */
export type Peer = number | "zk";

interface Route {
  readonly server: Server;
  readonly port: number;
}

interface Piped {
  readonly src: number | undefined;
  readonly dst: Peer;
  readonly sockets: Socket[];
  blackholed: boolean;
  framed?: FramedConnection;
}

const HOST = "127.0.0.1";
/** Longest first-request header read before the source is known (size, api key, version, id, client id). */
const MAX_HEADER_BYTES = 4 + 2 + 2 + 4 + 2 + 512;
/** Size, api key, api version, correlation id. */
const REQUEST_HEADER_BYTES = 12;
/** Size, correlation id. */
const RESPONSE_HEADER_BYTES = 8;
/** Larger frames mean the stream is not Kafka framing (TLS, garbage): the connection is piped as it is. */
const MAX_FRAME_BYTES = 512 * 1024 * 1024;
/** Correlation ids of replayed requests: far above what a client of a test cluster reaches. */
const REPLAY_CORRELATION_BASE = 0x7f000000;

/** The broker id a Kafka request frame names in its client id, or undefined (null when unknowable yet). */
export function sourceBrokerOf(head: Buffer): number | undefined | null {
  if (head.length < 14) return null;
  const len = head.readInt16BE(12);
  if (len < 0) return undefined;
  if (head.length < 14 + len) return null;
  const clientId = head.toString("utf8", 14, 14 + len);
  const m = /^(?:broker|controller)-(\d+)(?:-|$)/.exec(clientId);
  return m ? Number(m[1]) : undefined;
}

/** Which requests (and so which responses) a rule acts on. */
export interface FrameMatch {
  readonly apiKey: number;
  /** The broker sending the request (the client side of the connection). */
  readonly src?: number;
  /** The broker receiving it (the route's broker). */
  readonly dst?: number;
}

/** A rule armed for `count` frames (Infinity: until disarmed); `hits` counts the frames it acted on. */
export class FrameRule {
  hits = 0;
  private left: number;

  constructor(
    readonly match: FrameMatch,
    count: number,
  ) {
    if (!(count > 0)) throw new Error(`a frame rule needs a positive count, not ${count}`);
    this.left = count;
  }

  get armed(): boolean {
    return this.left > 0;
  }

  disarm(): void {
    this.left = 0;
  }

  /** Whether the rule acts on this frame; if so one use is spent. */
  take(apiKey: number, src: number | undefined, dst: number): boolean {
    const m = this.match;
    if (this.left <= 0 || m.apiKey !== apiKey) return false;
    if (m.src !== undefined && m.src !== src) return false;
    if (m.dst !== undefined && m.dst !== dst) return false;
    this.left--;
    this.hits++;
    return true;
  }
}

export type ResponseFault = { readonly kind: "drop" } | { readonly kind: "delay"; readonly ms: number };

export class ResponseFaultRule extends FrameRule {
  constructor(
    match: FrameMatch,
    readonly fault: ResponseFault,
    count: number,
  ) {
    super(match, count);
  }
}

/** A request frame as the client sent it (size prefix included). */
export interface CapturedRequest {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly correlationId: number;
  readonly src: number | undefined;
  readonly dst: number;
  /** The whole frame, size prefix included. */
  readonly frame: Buffer;
  /** The body after the size prefix (as decodeRequest takes it). */
  readonly body: Buffer;
  readonly atMs: number;
  /** @internal the connection it came by, and the broker port behind the route. */
  readonly connection: FramedConnection;
  readonly targetPort: number;
}

export class RequestCapture extends FrameRule {
  readonly frames: CapturedRequest[] = [];
}

/** The broker's answer to a replayed request. */
export interface ReplayAnswer {
  readonly apiKey: number;
  readonly apiVersion: number;
  /** The response frame after the size prefix (as decodeResponse takes it). */
  readonly body: Buffer;
  /** How it went: on a connection of the link, or on a connection of its own. */
  readonly via: "link" | "new-connection";
}

export class LinkProxy {
  private readonly routes: Route[] = [];
  private readonly open = new Set<Piped>();
  private readonly cuts = new Set<string>();
  private readonly faults: ResponseFaultRule[] = [];
  private readonly captures: RequestCapture[] = [];
  private readonly latencies = new Map<string, number>();
  private defaultLatencyMs = 0;
  private nextReplayId = REPLAY_CORRELATION_BASE;
  private readonly seen = new Map<string, number>();
  /**
   * Connections counted per state, for tests that check the proxy is in the path; and what the frame rules
   * did: responses dropped and delayed, requests captured, replays sent and answered, and request or response
   * headers that arrived split over chunks (the framing's slow path).
   */
  readonly counts = {
    forwarded: 0,
    blackholed: 0,
    dropped: 0,
    responsesDropped: 0,
    responsesDelayed: 0,
    requestsCaptured: 0,
    replayed: 0,
    replayAnswered: 0,
    splitHeaders: 0,
  };
  private closed = false;

  /** A route in front of broker `dst`'s inter-broker listener at 127.0.0.1:`targetPort`; its port. */
  brokerRoute(dst: number, targetPort: number): Promise<number> {
    return this.listen((client) => this.acceptBroker(client, dst, targetPort));
  }

  /** A route for broker `src` to the ZooKeeper server at 127.0.0.1:`targetPort`; its port. */
  zooKeeperRoute(src: number, targetPort: number): Promise<number> {
    return this.listen((client) => this.attach(client, src, "zk", targetPort, Buffer.alloc(0)));
  }

  /** Cuts the link between broker `a` and `b` (a broker or ZooKeeper), both directions. */
  cut(a: number, b: Peer): void {
    if (a === b) return;
    this.cuts.add(linkKey(a, b));
    for (const p of this.open) if (this.isCut(p.src, p.dst)) this.end(p, "dropped");
  }

  /** Heals one link: blackholed connections on it end, new connections are forwarded. */
  heal(a: number, b: Peer): void {
    this.cuts.delete(linkKey(a, b));
    for (const p of this.open) if (p.blackholed && !this.isCut(p.src, p.dst)) this.end(p);
  }

  /** Cuts broker `x` from every broker in `others` and from ZooKeeper. */
  isolate(x: number, others: readonly number[]): void {
    for (const o of others) this.cut(x, o);
    this.cut(x, "zk");
  }

  /** Heals every link of broker `x`. */
  rejoin(x: number): void {
    for (const key of [...this.cuts]) {
      const [a, b] = key.split("|");
      if (a === String(x) || b === String(x)) this.heal(Number(a), b === "zk" ? "zk" : Number(b));
    }
  }

  healAll(): void {
    for (const key of [...this.cuts]) {
      const [a, b] = key.split("|");
      this.heal(Number(a), b === "zk" ? "zk" : Number(b));
    }
  }

  /** True when the link between `a` (undefined: an unknown client) and `b` is cut. */
  isCut(a: number | undefined, b: Peer): boolean {
    if (a === undefined) return false;
    return a !== b && this.cuts.has(linkKey(a, b));
  }

  /** The links cut now, as `a|b` keys (b may be "zk"). */
  cutLinks(): string[] {
    return [...this.cuts].sort();
  }

  // ---- frame rules ----

  /** Swallows the responses to the next `count` matching requests (Infinity: until disarmed). */
  dropResponses(match: FrameMatch, count = 1): ResponseFaultRule {
    const rule = new ResponseFaultRule(match, { kind: "drop" }, count);
    this.faults.push(rule);
    return rule;
  }

  /** Holds the responses to the next `count` matching requests `ms` (later responses wait behind them). */
  delayResponses(match: FrameMatch, ms: number, count = 1): ResponseFaultRule {
    if (!(ms >= 0)) throw new Error(`a response delay must be at least 0 ms, not ${ms}`);
    const rule = new ResponseFaultRule(match, { kind: "delay", ms }, count);
    this.faults.push(rule);
    return rule;
  }

  /** Keeps a copy of the next `count` matching request frames (default: until disarmed). */
  captureRequests(match: FrameMatch, count = Number.POSITIVE_INFINITY): RequestCapture {
    const rule = new RequestCapture(match, count);
    this.captures.push(rule);
    return rule;
  }

  /** Disarms every response fault and capture (captured frames stay where they are). */
  disarmAll(): void {
    for (const r of [...this.faults, ...this.captures]) r.disarm();
    this.faults.length = 0;
    this.captures.length = 0;
  }

  /**
   * Sends a captured request to its broker again, under a fresh correlation id: on the connection it came
   * by when still open, else on another open connection of the same link, else on a connection of its own.
   * The broker's answer never reaches the client; it is returned.
   */
  replay(req: CapturedRequest, timeoutMs = 15_000): Promise<ReplayAnswer> {
    const id = this.nextReplayId++;
    const frame = Buffer.from(req.frame);
    frame.writeInt32BE(id, 8);
    this.counts.replayed++;
    let conn: FramedConnection | undefined = req.connection.isOpen ? req.connection : undefined;
    if (conn === undefined)
      for (const p of this.open)
        if (p.framed?.isOpen && p.src === req.src && p.dst === req.dst) {
          conn = p.framed;
          break;
        }
    const answer = conn
      ? conn.inject(frame, id).then((body) => ({ body, via: "link" as const }))
      : replayOnNewConnection(req.targetPort, frame).then((body) => ({
          body,
          via: "new-connection" as const,
        }));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, rej) => {
      timer = setTimeout(
        () => rej(new Error(`no answer to the replayed request (api key ${req.apiKey}) in ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    return Promise.race([answer, timeout])
      .then((a) => {
        this.counts.replayAnswered++;
        return { apiKey: req.apiKey, apiVersion: req.apiVersion, body: a.body, via: a.via };
      })
      .finally(() => clearTimeout(timer));
  }

  /** Requests of `apiKey` seen so far (optionally from `src`, to `dst`). */
  requestsSeen(apiKey: number, src?: number, dst?: number): number {
    let n = 0;
    for (const [k, v] of this.seen) {
      const [key, s, d] = k.split("|");
      if (Number(key) !== apiKey) continue;
      if (src !== undefined && s !== String(src)) continue;
      if (dst !== undefined && d !== String(dst)) continue;
      n += v;
    }
    return n;
  }

  // ---- latency ----

  /**
   * Holds every chunk `ms` each way on the link between brokers `a` and `b`, or, with neither given, on
   * every inter-broker link that has no latency of its own. 0 removes it. Open connections take it at once.
   */
  setLatency(ms: number, a?: number, b?: number): void {
    if (!(ms >= 0)) throw new Error(`latency must be at least 0 ms, not ${ms}`);
    if (a === undefined || b === undefined) {
      this.defaultLatencyMs = ms;
      return;
    }
    if (ms === 0) this.latencies.delete(linkKey(a, b));
    else this.latencies.set(linkKey(a, b), ms);
  }

  clearLatency(): void {
    this.defaultLatencyMs = 0;
    this.latencies.clear();
  }

  /** @internal The latency of the link from `src` (undefined: unknown) to broker `dst`. */
  latencyOf(src: number | undefined, dst: number): number {
    if (src === dst) return 0;
    if (src === undefined || this.latencies.size === 0) return this.defaultLatencyMs;
    return this.latencies.get(linkKey(src, dst)) ?? this.defaultLatencyMs;
  }

  /** @internal A request started on a connection from `src` to `dst`: the captures that want it. */
  onRequest(apiKey: number, src: number | undefined, dst: number): RequestCapture[] | undefined {
    const k = `${apiKey}|${src}|${dst}`;
    this.seen.set(k, (this.seen.get(k) ?? 0) + 1);
    if (this.captures.length === 0) return undefined;
    const out = this.captures.filter((c) => c.take(apiKey, src, dst));
    return out.length > 0 ? out : undefined;
  }

  /** @internal A response started: the fault that acts on it, if any. */
  onResponse(apiKey: number, src: number | undefined, dst: number): ResponseFault | undefined {
    for (const f of this.faults) {
      if (!f.take(apiKey, src, dst)) continue;
      if (f.fault.kind === "drop") this.counts.responsesDropped++;
      else this.counts.responsesDelayed++;
      return f.fault;
    }
    return undefined;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const p of this.open) this.end(p);
    await Promise.all(this.routes.map((r) => new Promise<void>((res) => r.server.close(() => res()))));
  }

  private async listen(onConnection: (client: Socket) => void): Promise<number> {
    const server = createServer({ noDelay: true }, (client) => {
      if (this.closed) client.destroy();
      else onConnection(client);
    });
    await new Promise<void>((res, rej) => {
      server.once("error", rej);
      server.listen(0, HOST, () => res());
    });
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("proxy bound no TCP port");
    this.routes.push({ server, port: address.port });
    return address.port;
  }

  /** Reads the first request header to learn the source broker, then attaches. */
  private acceptBroker(client: Socket, dst: number, targetPort: number): void {
    let head = Buffer.alloc(0);
    client.on("error", () => client.destroy());
    const onData = (d: Buffer) => {
      head = Buffer.concat([head, d]);
      let src = sourceBrokerOf(head);
      if (src === null && head.length < MAX_HEADER_BYTES) return;
      if (src === null) src = undefined;
      client.off("data", onData);
      client.pause();
      this.attach(client, src, dst, targetPort, head);
    };
    client.on("data", onData);
  }

  private attach(client: Socket, src: number | undefined, dst: Peer, targetPort: number, head: Buffer): void {
    client.on("error", () => client.destroy());
    client.setNoDelay(true);
    const piped: Piped = { src, dst, sockets: [client], blackholed: false };
    this.open.add(piped);
    if (this.isCut(src, dst)) {
      // Blackhole: accepted and read, never forwarded, never answered.
      client.once("close", () => this.end(piped));
      piped.blackholed = true;
      this.counts.blackholed++;
      client.on("data", () => {});
      client.resume();
      return;
    }
    this.counts.forwarded++;
    const upstream = connect({ host: HOST, port: targetPort, noDelay: true });
    piped.sockets.push(upstream);
    upstream.on("error", () => this.end(piped));
    if (dst === "zk") {
      client.once("close", () => this.end(piped));
      upstream.once("close", () => this.end(piped));
      upstream.once("connect", () => {
        if (head.length > 0) upstream.write(head);
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
      return;
    }
    const framed = new FramedConnection(this, src, dst, client, upstream, targetPort, () => this.end(piped));
    piped.framed = framed;
    client.once("close", () => framed.closed("client"));
    upstream.once("close", () => framed.closed("broker"));
    upstream.once("connect", () => {
      if (this.open.has(piped)) framed.start(head);
    });
  }

  private end(p: Piped, as?: "dropped"): void {
    if (!this.open.delete(p)) return;
    if (as === "dropped") this.counts.dropped++;
    p.framed?.close();
    for (const s of p.sockets) s.destroy();
  }
}

function linkKey(a: number, b: Peer): string {
  if (b === "zk") return `${a}|zk`;
  return a < b ? `${a}|${b}` : `${b}|${a}`;
}

/** What the framing found at the start of a frame, and what to do with its bytes. */
interface FrameSink<F> {
  /** A frame starts at `at` in `buf` (its header is whole there); undefined: not Kafka framing. */
  start(buf: Buffer, at: number): F | undefined;
  /** Bytes of the current frame, in order; `end` on its last bytes. */
  piece(bytes: Buffer, frame: F, end: boolean): void;
  /** Bytes of a stream that is not Kafka framing (from the first bad header on). */
  opaque(bytes: Buffer): void;
}

/**
 * Cuts a byte stream into size-prefixed frames without copying: every chunk is handed on in pieces (a piece
 * ends where a frame ends). Only a header split across chunks is held (and copied) until it is whole.
 */
export class FrameCursor<F> {
  private carry: Buffer | undefined;
  /** Bytes of the current frame still to come (0: at a frame boundary). */
  private left = 0;
  private current: F | undefined;
  opaque = false;
  /** Headers that arrived split over chunks. */
  splitHeaders = 0;

  constructor(
    /** Bytes of the header `start` reads (the size prefix included). */
    private readonly headerBytes: number,
    private readonly sink: FrameSink<F>,
  ) {}

  /** Whether the bytes handed on so far end at a frame boundary. */
  get atBoundary(): boolean {
    return this.left === 0;
  }

  push(chunk: Buffer): void {
    if (this.opaque) {
      this.sink.opaque(chunk);
      return;
    }
    let buf = chunk;
    if (this.carry !== undefined) {
      buf = Buffer.concat([this.carry, chunk]);
      this.carry = undefined;
    }
    let off = 0;
    while (off < buf.length) {
      if (this.left === 0) {
        if (buf.length - off < this.headerBytes) {
          this.carry = buf.subarray(off);
          this.splitHeaders++;
          return;
        }
        const size = buf.readInt32BE(off);
        const frame =
          size >= this.headerBytes - 4 && size <= MAX_FRAME_BYTES ? this.sink.start(buf, off) : undefined;
        if (frame === undefined) {
          this.opaque = true;
          this.sink.opaque(buf.subarray(off));
          return;
        }
        this.current = frame;
        this.left = 4 + size;
      }
      const take = Math.min(this.left, buf.length - off);
      this.left -= take;
      this.sink.piece(buf.subarray(off, off + take), this.current as F, this.left === 0);
      off += take;
    }
  }
}

/** Bytes to one socket, each released at its due time, in order; the source pauses while the sink is full. */
class Outbox {
  private queue: Array<{ bytes: Buffer; due: number }> = [];
  private head = 0;
  private timer: NodeJS.Timeout | undefined;
  private blocked = false;
  private idleWaiter: (() => void) | undefined;
  private closed = false;
  /** Between begin() and end(): the time then, and the bytes due by then, written at end(). */
  private batchAt: number | undefined;
  private batch: Buffer[] = [];

  constructor(
    private readonly sink: Socket,
    private readonly source: Socket,
  ) {}

  get idle(): boolean {
    return this.head === this.queue.length;
  }

  /** Gathers what one incoming chunk sends, so end() writes it at once (one write when contiguous). */
  begin(now: number): void {
    this.batchAt = now;
  }

  send(bytes: Buffer, due: number): void {
    if (this.closed) return;
    const now = this.batchAt ?? Date.now();
    if (this.idle && due <= now) {
      if (this.batchAt === undefined) this.write(bytes);
      else this.batch.push(bytes);
      return;
    }
    this.queue.push({ bytes, due });
    this.schedule();
  }

  end(): void {
    this.batchAt = undefined;
    const b = this.batch;
    if (b.length === 0 || this.closed) return;
    this.batch = [];
    if (b.length === 1) {
      this.write(b[0]);
      return;
    }
    // Pieces of one chunk, back to back in its memory: one view of them all.
    let contiguous = true;
    let total = b[0].length;
    for (let i = 1; i < b.length && contiguous; i++) {
      contiguous = b[i].buffer === b[0].buffer && b[i].byteOffset === b[i - 1].byteOffset + b[i - 1].length;
      total += b[i].length;
    }
    if (contiguous) {
      this.write(Buffer.from(b[0].buffer, b[0].byteOffset, total));
      return;
    }
    this.sink.cork();
    for (const x of b) this.write(x);
    this.sink.uncork();
  }

  /** Calls `f` once everything queued is written (at once when nothing is). */
  whenIdle(f: () => void): void {
    if (this.idle) f();
    else this.idleWaiter = f;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.queue = [];
    this.head = 0;
    this.batch = [];
    this.idleWaiter = undefined;
  }

  private readonly flush = (): void => {
    this.timer = undefined;
    if (this.closed) return;
    const now = Date.now();
    this.sink.cork();
    while (this.head < this.queue.length && this.queue[this.head].due <= now) {
      const { bytes } = this.queue[this.head++];
      this.write(bytes);
    }
    this.sink.uncork();
    if (this.idle) {
      this.queue = [];
      this.head = 0;
      const w = this.idleWaiter;
      this.idleWaiter = undefined;
      w?.();
    } else {
      if (this.head > 1024) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
      this.schedule();
    }
  };

  private schedule(): void {
    if (this.timer !== undefined || this.idle) return;
    this.timer = setTimeout(this.flush, Math.max(0, this.queue[this.head].due - Date.now()));
  }

  private write(bytes: Buffer): void {
    if (this.sink.destroyed) return;
    if (this.sink.write(bytes) || this.blocked) return;
    this.blocked = true;
    this.source.pause();
    this.sink.once("drain", () => {
      this.blocked = false;
      this.source.resume();
    });
  }
}

interface RequestFrame {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly correlationId: number;
  readonly captures: RequestCapture[] | undefined;
  readonly pieces: Buffer[] | undefined;
}

interface ResponseFrame {
  readonly kind: "forward" | "drop" | "replay";
  /** Not released before (a delayed response). */
  readonly holdUntil: number;
  readonly replay?: PendingReplay;
  readonly pieces?: Buffer[];
}

interface PendingReplay {
  resolve(body: Buffer): void;
  reject(e: Error): void;
}

const FORWARD: ResponseFrame = { kind: "forward", holdUntil: 0 };
const DROP: ResponseFrame = { kind: "drop", holdUntil: 0 };

/** One proxied connection to a broker's inter-broker listener, followed frame by frame. */
class FramedConnection {
  /** Correlation id → api key of the requests not answered yet. */
  private readonly inflight = new Map<number, number>();
  private readonly replays = new Map<number, PendingReplay>();
  private readonly injections: Buffer[] = [];
  private readonly requests: FrameCursor<RequestFrame>;
  private readonly responses: FrameCursor<ResponseFrame>;
  private readonly toBroker: Outbox;
  private readonly toClient: Outbox;
  private open = true;
  private started = false;
  /** While a chunk is handled: when its bytes are due (one clock read per chunk). */
  private chunkDue: number | undefined;

  constructor(
    private readonly proxy: LinkProxy,
    private readonly src: number | undefined,
    private readonly dst: number,
    private readonly client: Socket,
    private readonly upstream: Socket,
    private readonly targetPort: number,
    private readonly onEnd: () => void,
  ) {
    this.toBroker = new Outbox(upstream, client);
    this.toClient = new Outbox(client, upstream);
    this.requests = new FrameCursor<RequestFrame>(REQUEST_HEADER_BYTES, {
      start: (buf, at) => this.requestStarts(buf, at),
      piece: (bytes, f, end) => this.requestPiece(bytes, f, end),
      opaque: (bytes) => {
        // Not Kafka framing: nothing more is matched on this connection, bytes pass as they are.
        this.responses.opaque = true;
        this.toBroker.send(bytes, this.due());
      },
    });
    this.responses = new FrameCursor<ResponseFrame>(RESPONSE_HEADER_BYTES, {
      start: (buf, at) => this.responseStarts(buf, at),
      piece: (bytes, f, end) => this.responsePiece(bytes, f, end),
      opaque: (bytes) => this.toClient.send(bytes, this.due()),
    });
  }

  get isOpen(): boolean {
    return this.open;
  }

  /** The upstream connected: forward the first header read and everything after it. */
  start(head: Buffer): void {
    this.started = true;
    this.client.on("data", (chunk: Buffer) => this.fromClient(chunk));
    this.upstream.on("data", (chunk: Buffer) => this.fromBroker(chunk));
    if (head.length > 0) this.fromClient(head);
    this.client.resume();
  }

  /**
   * One side closed: the connection ends once what is held for the other side is written (as TCP delivers
   * what was sent before a FIN).
   */
  closed(side: "client" | "broker"): void {
    if (!this.started) this.onEnd();
    else if (side === "client") this.toBroker.whenIdle(this.onEnd);
    else this.toClient.whenIdle(this.onEnd);
  }

  /** Sends `frame` (correlation id `id`) to the broker at the next request boundary; resolves with its answer. */
  inject(frame: Buffer, id: number): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      if (!this.open) {
        reject(new Error("the connection closed"));
        return;
      }
      this.replays.set(id, { resolve, reject });
      if (this.requests.atBoundary) this.toBroker.send(frame, this.due());
      else this.injections.push(frame);
    });
  }

  close(): void {
    if (!this.open) return;
    this.open = false;
    this.toBroker.close();
    this.toClient.close();
    for (const r of this.replays.values()) r.reject(new Error("the connection closed before the answer"));
    this.replays.clear();
  }

  /** When bytes that arrive now are due at the other side (the link's latency from now). */
  private due(): number {
    return this.chunkDue ?? Date.now() + this.proxy.latencyOf(this.src, this.dst);
  }

  private fromClient(chunk: Buffer): void {
    const split = this.requests.splitHeaders;
    const now = Date.now();
    this.chunkDue = now + this.proxy.latencyOf(this.src, this.dst);
    this.toBroker.begin(now);
    try {
      this.requests.push(chunk);
    } finally {
      this.toBroker.end();
      this.chunkDue = undefined;
    }
    this.proxy.counts.splitHeaders += this.requests.splitHeaders - split;
  }

  private fromBroker(chunk: Buffer): void {
    const split = this.responses.splitHeaders;
    const now = Date.now();
    this.chunkDue = now + this.proxy.latencyOf(this.src, this.dst);
    this.toClient.begin(now);
    try {
      this.responses.push(chunk);
    } finally {
      this.toClient.end();
      this.chunkDue = undefined;
    }
    this.proxy.counts.splitHeaders += this.responses.splitHeaders - split;
  }

  private requestStarts(buf: Buffer, at: number): RequestFrame | undefined {
    const apiKey = buf.readInt16BE(at + 4);
    const apiVersion = buf.readInt16BE(at + 6);
    if (apiKey < 0 || apiKey > 1000 || apiVersion < 0 || apiVersion > 100) return undefined;
    const correlationId = buf.readInt32BE(at + 8);
    this.inflight.set(correlationId, apiKey);
    const captures = this.proxy.onRequest(apiKey, this.src, this.dst);
    return { apiKey, apiVersion, correlationId, captures, pieces: captures ? [] : undefined };
  }

  private requestPiece(bytes: Buffer, f: RequestFrame, end: boolean): void {
    this.toBroker.send(bytes, this.due());
    if (f.pieces !== undefined) {
      f.pieces.push(bytes);
      if (end && f.captures !== undefined) {
        const frame = Buffer.concat(f.pieces);
        for (const c of f.captures) {
          this.proxy.counts.requestsCaptured++;
          c.frames.push({
            apiKey: f.apiKey,
            apiVersion: f.apiVersion,
            correlationId: f.correlationId,
            src: this.src,
            dst: this.dst,
            frame,
            body: frame.subarray(4),
            atMs: Date.now(),
            connection: this,
            targetPort: this.targetPort,
          });
        }
      }
    }
    if (end && this.injections.length > 0) {
      for (const frame of this.injections.splice(0)) this.toBroker.send(frame, this.due());
    }
  }

  private responseStarts(buf: Buffer, at: number): ResponseFrame {
    const correlationId = buf.readInt32BE(at + 4);
    const replay = this.replays.get(correlationId);
    if (replay !== undefined) {
      this.replays.delete(correlationId);
      return { kind: "replay", holdUntil: 0, replay, pieces: [] };
    }
    const apiKey = this.inflight.get(correlationId);
    if (apiKey === undefined) return FORWARD;
    this.inflight.delete(correlationId);
    const fault = this.proxy.onResponse(apiKey, this.src, this.dst);
    if (fault === undefined) return FORWARD;
    if (fault.kind === "drop") return DROP;
    return { kind: "forward", holdUntil: Date.now() + fault.ms };
  }

  private responsePiece(bytes: Buffer, f: ResponseFrame, end: boolean): void {
    if (f.kind === "forward") this.toClient.send(bytes, Math.max(this.due(), f.holdUntil));
    else if (f.kind === "replay") {
      f.pieces!.push(bytes);
      if (end) f.replay!.resolve(Buffer.concat(f.pieces!).subarray(4));
    }
  }
}

/** Sends one request frame on a connection of its own to 127.0.0.1:`port`; resolves with the answer's body. */
function replayOnNewConnection(port: number, frame: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: HOST, port, noDelay: true });
    const pieces: Buffer[] = [];
    const cursor = new FrameCursor<true>(RESPONSE_HEADER_BYTES, {
      start: () => true,
      piece: (bytes, _f, end) => {
        pieces.push(bytes);
        if (end) {
          socket.destroy();
          resolve(Buffer.concat(pieces).subarray(4));
        }
      },
      opaque: () => {
        socket.destroy();
        reject(new Error("the broker's answer to the replay is not a Kafka frame"));
      },
    });
    socket.on("data", (chunk: Buffer) => cursor.push(chunk));
    socket.once("connect", () => socket.write(frame));
    socket.once("error", (e) => reject(e));
    socket.once("close", () => reject(new Error("the connection closed before the answer")));
  });
}
