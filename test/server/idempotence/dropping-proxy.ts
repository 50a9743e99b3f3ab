// Test-only: a TCP proxy in front of a broker that loses Produce responses. Every client connection gets
// its own upstream connection; requests are forwarded as they come, and the proxy reads the request
// frames to remember which correlation ids are Produce requests. When the broker's response to one of
// them arrives, the proxy closes the client connection instead of forwarding it (with the given
// probability): the request reached the broker, the client never learns it, so it retries. The broker
// is advertised at the proxy's port (advertised.listeners), so every client connection goes through it.

import { connect, createServer, type Server, type Socket } from "node:net";
import { FrameReader } from "../../../src/protocol/frame-reader.js";

const PRODUCE = 0;

export class DroppingProxy {
  /** Produce responses not delivered (the client connection was closed instead). */
  dropped = 0;
  /** Produce responses delivered. */
  delivered = 0;
  /** While set, new client connections are closed at once (the broker looks down). */
  paused = false;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly targetPort: () => number,
    /** Whether to drop this response (called once per Produce response). */
    public shouldDrop: () => boolean,
  ) {
    server.on("connection", (client) => this.onConnection(client));
  }

  static start(port: number, targetPort: () => number, shouldDrop: () => boolean): Promise<DroppingProxy> {
    const server = createServer();
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        const addr = server.address();
        if (addr === null || typeof addr === "string") throw new Error("no address");
        resolve(new DroppingProxy(server, addr.port, targetPort, shouldDrop));
      });
    });
  }

  private onConnection(client: Socket): void {
    if (this.paused) {
      client.destroy();
      return;
    }
    const upstream = connect({ port: this.targetPort(), host: "127.0.0.1" });
    this.sockets.add(client);
    this.sockets.add(upstream);
    const requests = new FrameReader(256 * 1024 * 1024);
    const responses = new FrameReader(256 * 1024 * 1024);
    const produceIds = new Set<number>();
    let closed = false;
    const closeBoth = (): void => {
      if (closed) return;
      closed = true;
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on("error", closeBoth);
    upstream.on("error", closeBoth);
    client.on("close", closeBoth);
    upstream.on("close", closeBoth);
    client.on("data", (chunk: Buffer) => {
      for (const frame of requests.push(chunk)) {
        if (frame.length >= 8 && frame.readInt16BE(0) === PRODUCE) produceIds.add(frame.readInt32BE(4));
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      for (const frame of responses.push(chunk)) {
        if (closed) return;
        const correlationId = frame.readInt32BE(0);
        if (produceIds.delete(correlationId)) {
          if (this.shouldDrop()) {
            this.dropped++;
            closeBoth();
            return;
          }
          this.delivered++;
        }
        const size = Buffer.allocUnsafe(4);
        size.writeInt32BE(frame.length, 0);
        client.write(Buffer.concat([size, frame]));
      }
    });
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
