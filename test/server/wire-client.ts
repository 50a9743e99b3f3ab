// Test-only: a minimal Kafka client over a real socket, built on the generated codecs — send requests
// (pipelined or one by one), read responses in order, send raw bytes, observe the connection closing.

import { connect, type Socket } from "node:net";
import { FrameReader } from "../../src/protocol/frame-reader.js";
import { decodeResponse, encodeRequest } from "../../src/protocol/framing.js";
import { type ApiDefinition, Apis } from "../../src/protocol/generated/api-table.js";

export class WireClient {
  private readonly reader = new FrameReader(256 * 1024 * 1024);
  private readonly frames: Buffer[] = [];
  private waiters: Array<() => void> = [];
  private nextCorrelationId = 1;
  closed = false;
  readonly closedPromise: Promise<void>;

  private constructor(readonly socket: Socket) {
    socket.on("data", (chunk: Buffer) => {
      this.frames.push(...this.reader.push(chunk));
      this.wake();
    });
    this.closedPromise = new Promise((resolve) => {
      socket.on("close", () => {
        this.closed = true;
        this.wake();
        resolve();
      });
    });
    socket.on("error", () => {});
  }

  static connect(port: number, host = "127.0.0.1"): Promise<WireClient> {
    return new Promise((resolve, reject) => {
      const s = connect({ port, host }, () => {
        s.off("error", reject);
        resolve(new WireClient(s));
      });
      s.once("error", reject);
    });
  }

  /** Connects to a SASL listener and authenticates with PLAIN (SaslHandshake v1, SaslAuthenticate v2). */
  static async connectSasl(
    port: number,
    user: string,
    password: string,
    host = "127.0.0.1",
  ): Promise<WireClient> {
    const c = await WireClient.connect(port, host);
    const hs = await c.request(Apis.SaslHandshake, 1, { mechanism: "PLAIN" });
    if (hs.errorCode !== 0) throw new Error(`SaslHandshake failed with error ${hs.errorCode}`);
    const auth = await c.request(Apis.SaslAuthenticate, 2, {
      authBytes: Buffer.from(`\u0000${user}\u0000${password}`, "utf8"),
    });
    if (auth.errorCode !== 0) throw new Error(`SaslAuthenticate failed: ${auth.errorMessage}`);
    return c;
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Encodes a request and writes it; returns its correlation id. */
  send<Req, Res>(api: ApiDefinition<Req, Res>, version: number, body: Req, correlationId?: number): number {
    const id = correlationId ?? this.nextCorrelationId++;
    for (const c of encodeRequest(api, version, id, "wire-client", body)) this.socket.write(c);
    return id;
  }

  sendRaw(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** The next response frame (without size prefix), or undefined when the connection closed first. */
  async nextFrame(timeoutMs = 5000): Promise<Buffer | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (this.frames.length === 0) {
      if (this.closed) return undefined;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no response within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.frames.shift();
  }

  async receive<Req, Res>(
    api: ApiDefinition<Req, Res>,
    version: number,
    timeoutMs = 5000,
  ): Promise<{ correlationId: number; body: Res }> {
    const frame = await this.nextFrame(timeoutMs);
    if (frame === undefined) throw new Error("the connection closed before the response");
    return decodeResponse(api, version, frame);
  }

  async request<Req, Res>(api: ApiDefinition<Req, Res>, version: number, body: Req): Promise<Res> {
    const id = this.send(api, version, body);
    const res = await this.receive(api, version);
    if (res.correlationId !== id) throw new Error(`correlation id ${res.correlationId}, expected ${id}`);
    return res.body;
  }

  /** Resolves true if the server closes the connection within timeoutMs. */
  async waitClosed(timeoutMs = 5000): Promise<boolean> {
    if (this.closed) return true;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const r = await Promise.race([this.closedPromise.then(() => true), timeout]);
    clearTimeout(timer);
    return r;
  }

  close(): void {
    this.socket.destroy();
  }
}
