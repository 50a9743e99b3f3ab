// Test-only: a loopback TCP proxy with per-link cuts, to partition a test cluster's network on one machine
// (127.0.0.1 only, on both sides). Two kinds of route, each a listening port of its own:
//   - a broker route stands in front of one broker's inter-broker listener (the port that broker advertises
//     for REPLICATION). Every broker connects to it, so the source of a connection is learnt from the client
//     id of its first Kafka request header: the broker's inter-broker clients name themselves
//     `broker-<id>-…` (fetchers, AlterPartition, controlled shutdown, transaction markers) or
//     `controller-<id>` (the controller's channel). Until that header has arrived, nothing is forwarded;
//   - a ZooKeeper route stands in front of one ZooKeeper server for one broker (that broker's
//     zookeeper.connect names only its own routes), so its source is known from the port.
// A link is a pair of brokers (both directions) or a broker and ZooKeeper. `cut(a, b)` drops the link's
// open connections (both sockets destroyed) and blackholes new ones: accepted, read and discarded, never
// forwarded nor answered — as a partitioned peer looks to TCP, so the client waits for its own timeouts
// instead of failing fast. `heal(a, b)` ends the blackholed connections (their clients reconnect) and
// forwards new connections again. `isolate(x)` cuts x from every other broker and from ZooKeeper;
// `healAll()` heals everything. A broker's connections to itself are never cut.

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
}

const HOST = "127.0.0.1";
/** Longest first-request header read before the source is known (size, api key, version, id, client id). */
const MAX_HEADER_BYTES = 4 + 2 + 2 + 4 + 2 + 512;

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

export class LinkProxy {
  private readonly routes: Route[] = [];
  private readonly open = new Set<Piped>();
  private readonly cuts = new Set<string>();
  /** Connections counted per state, for tests that check the proxy is in the path. */
  readonly counts = { forwarded: 0, blackholed: 0, dropped: 0 };
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
    client.once("close", () => this.end(piped));
    if (this.isCut(src, dst)) {
      // Blackhole: accepted and read, never forwarded, never answered.
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
    upstream.once("close", () => this.end(piped));
    upstream.once("connect", () => {
      if (head.length > 0) upstream.write(head);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
  }

  private end(p: Piped, as?: "dropped"): void {
    if (!this.open.delete(p)) return;
    if (as === "dropped") this.counts.dropped++;
    for (const s of p.sockets) s.destroy();
  }
}

function linkKey(a: number, b: Peer): string {
  if (b === "zk") return `${a}|zk`;
  return a < b ? `${a}|${b}` : `${b}|${a}`;
}
