// The LinkProxy's Kafka framing and frame faults (test/support/link-proxy.ts), against a real in-process TCP
// server that speaks the framing: it reads size-prefixed request frames (api key, version, correlation id,
// client id, payload) and answers each, in order, with a size-prefixed response (correlation id, "echo:" +
// payload) — written whole, byte by byte (every header split over chunks), or several in one write. Clients
// name themselves `broker-<id>-…` as the brokers' inter-broker clients do, so the proxy knows the link.
// Shown: frames split over chunks and several frames per chunk pass unchanged both ways; a response of one
// api key is dropped (once, on the matching link only) or held (with the responses behind it); a captured
// request is replayed mid-stream at a frame boundary and its answer never reaches the client; latency holds
// every chunk in order; megabytes pass intact under backpressure.

import assert from "node:assert/strict";
import { connect, createServer, type Server, type Socket } from "node:net";
import { after, before, test } from "node:test";

import { LinkProxy } from "./link-proxy.js";

const HOST = "127.0.0.1";
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface ReceivedRequest {
  readonly apiKey: number;
  readonly correlationId: number;
  readonly clientId: string;
  readonly payload: string;
  readonly raw: Buffer;
}

type ResponseMode = "whole" | "bytewise" | "coalesced";

/** A broker stand-in: parses request frames with its own reader and answers each, in order. */
class EchoBroker {
  readonly received: ReceivedRequest[] = [];
  mode: ResponseMode = "whole";
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(): Promise<EchoBroker> {
    let broker: EchoBroker | undefined;
    const server = createServer({ noDelay: true }, (s) => broker!.accept(s));
    await new Promise<void>((res) => server.listen(0, HOST, () => res()));
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    broker = new EchoBroker(server, address.port);
    return broker;
  }

  private accept(s: Socket): void {
    this.sockets.add(s);
    s.on("error", () => {});
    s.once("close", () => this.sockets.delete(s));
    let buf = Buffer.alloc(0);
    let writing = Promise.resolve();
    s.on("data", (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const answers: Buffer[] = [];
      while (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) {
        const raw = buf.subarray(0, 4 + buf.readInt32BE(0));
        buf = buf.subarray(raw.length);
        const idLen = raw.readInt16BE(12);
        const req: ReceivedRequest = {
          apiKey: raw.readInt16BE(4),
          correlationId: raw.readInt32BE(8),
          clientId: raw.toString("utf8", 14, 14 + idLen),
          payload: raw.toString("utf8", 14 + idLen),
          raw: Buffer.from(raw),
        };
        this.received.push(req);
        answers.push(responseFrame(req.correlationId, `echo:${req.payload}`));
      }
      if (answers.length === 0) return;
      const mode = this.mode;
      writing = writing.then(async () => {
        if (mode === "coalesced") s.write(Buffer.concat(answers));
        else if (mode === "whole") for (const a of answers) s.write(a);
        else
          for (const a of answers)
            for (const b of a) {
              s.write(Buffer.from([b]));
              await sleep(1);
            }
      });
    });
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((res) => this.server.close(() => res()));
  }
}

function requestFrame(apiKey: number, correlationId: number, clientId: string, payload: string): Buffer {
  const id = Buffer.from(clientId);
  const body = Buffer.from(payload);
  const f = Buffer.alloc(4 + 2 + 2 + 4 + 2 + id.length + body.length);
  f.writeInt32BE(f.length - 4, 0);
  f.writeInt16BE(apiKey, 4);
  f.writeInt16BE(1, 6);
  f.writeInt32BE(correlationId, 8);
  f.writeInt16BE(id.length, 12);
  id.copy(f, 14);
  body.copy(f, 14 + id.length);
  return f;
}

function responseFrame(correlationId: number, payload: string): Buffer {
  const body = Buffer.from(payload);
  const f = Buffer.alloc(8 + body.length);
  f.writeInt32BE(f.length - 4, 0);
  f.writeInt32BE(correlationId, 4);
  body.copy(f, 8);
  return f;
}

interface Answer {
  readonly correlationId: number;
  readonly payload: string;
  readonly atMs: number;
}

/** A client of broker route: writes frames (whole or in pieces) and collects the answers it gets. */
class Client {
  readonly answers: Answer[] = [];
  private buf = Buffer.alloc(0);
  private next = 1;

  private constructor(
    readonly socket: Socket,
    readonly clientId: string,
  ) {
    socket.on("data", (chunk: Buffer) => {
      this.buf = Buffer.concat([this.buf, chunk]);
      while (this.buf.length >= 4 && this.buf.length >= 4 + this.buf.readInt32BE(0)) {
        const f = this.buf.subarray(0, 4 + this.buf.readInt32BE(0));
        this.buf = this.buf.subarray(f.length);
        this.answers.push({
          correlationId: f.readInt32BE(4),
          payload: f.toString("utf8", 8),
          atMs: Date.now(),
        });
      }
    });
    socket.on("error", () => {});
  }

  static connect(port: number, clientId: string): Promise<Client> {
    return new Promise((res, rej) => {
      const s = connect({ host: HOST, port, noDelay: true }, () => res(new Client(s, clientId)));
      s.once("error", rej);
    });
  }

  frame(apiKey: number, payload: string): { correlationId: number; bytes: Buffer } {
    const correlationId = this.next++;
    return { correlationId, bytes: requestFrame(apiKey, correlationId, this.clientId, payload) };
  }

  /** Writes `bytes` in pieces of `size` bytes, `gapMs` apart (so each arrives as a chunk of its own). */
  async writeInPieces(bytes: Buffer, size: number, gapMs = 2): Promise<void> {
    for (let i = 0; i < bytes.length; i += size) {
      this.socket.write(bytes.subarray(i, i + size));
      await sleep(gapMs);
    }
  }

  async waitForAnswers(n: number, ms = 10_000): Promise<Answer[]> {
    const deadline = Date.now() + ms;
    while (this.answers.length < n) {
      if (Date.now() > deadline) throw new Error(`${this.answers.length} of ${n} answers after ${ms} ms`);
      await sleep(5);
    }
    return this.answers;
  }
}

let broker: EchoBroker;
let proxy: LinkProxy;
let route: number;
const clients: Client[] = [];

async function client(src: number): Promise<Client> {
  const c = await Client.connect(route, `broker-${src}-test`);
  clients.push(c);
  return c;
}

before(async () => {
  broker = await EchoBroker.start();
  proxy = new LinkProxy();
  route = await proxy.brokerRoute(1, broker.port);
});

after(async () => {
  for (const c of clients) c.socket.destroy();
  await proxy.close();
  await broker.close();
});

test("frames split over chunks and several frames per chunk pass unchanged, both ways", async () => {
  broker.received.length = 0;
  const c = await client(2);
  const frames = Array.from({ length: 12 }, (_, i) =>
    c.frame(i < 6 ? 3 : 18, `payload-${i}-${"x".repeat(i * 7)}`),
  );
  const splitBefore = proxy.counts.splitHeaders;
  // The first two byte by byte (the proxy learns the source from a header that came in 1-byte chunks) …
  broker.mode = "bytewise";
  await c.writeInPieces(frames[0].bytes, 1);
  await c.writeInPieces(frames[1].bytes, 1);
  await c.waitForAnswers(2);
  // … three in one write, answered in one write …
  broker.mode = "coalesced";
  c.socket.write(Buffer.concat(frames.slice(2, 5).map((f) => f.bytes)));
  await c.waitForAnswers(5);
  // … then the rest glued together and cut every 7 bytes (headers and bodies cut anywhere).
  broker.mode = "whole";
  await c.writeInPieces(Buffer.concat(frames.slice(5).map((f) => f.bytes)), 7);
  const answers = await c.waitForAnswers(12);
  assert.deepEqual(
    broker.received.map((r) => r.raw),
    frames.map((f) => f.bytes),
    "the broker got every frame byte for byte",
  );
  assert.deepEqual(
    answers.map((a) => [a.correlationId, a.payload]),
    frames.map((f, i) => [f.correlationId, `echo:payload-${i}-${"x".repeat(i * 7)}`]),
  );
  assert.ok(
    proxy.counts.splitHeaders - splitBefore >= 10,
    `split headers seen: ${proxy.counts.splitHeaders}`,
  );
  assert.equal(proxy.requestsSeen(3, 2, 1), 6);
  assert.equal(proxy.requestsSeen(18, 2), 6);
  assert.equal(proxy.requestsSeen(18, 3), 0);
});

test("a dropped response: once, for its api key, on the matching link only", async () => {
  broker.received.length = 0;
  const a = await client(2);
  const b = await client(3);
  const rule = proxy.dropResponses({ apiKey: 56, src: 2, dst: 1 }, 1);
  const other = b.frame(56, "from-3");
  b.socket.write(other.bytes);
  await b.waitForAnswers(1);
  assert.equal(rule.hits, 0, "a request from broker 3 is not broker 2's");
  const f1 = a.frame(56, "first");
  const f2 = a.frame(1, "fetch");
  const f3 = a.frame(56, "second");
  a.socket.write(Buffer.concat([f1.bytes, f2.bytes, f3.bytes]));
  await a.waitForAnswers(2);
  await sleep(200);
  assert.deepEqual(
    a.answers.map((x) => x.correlationId),
    [f2.correlationId, f3.correlationId],
  );
  assert.equal(broker.received.length, 4, "the broker answered all four");
  assert.equal(rule.hits, 1);
  assert.equal(rule.armed, false);
  assert.equal(proxy.counts.responsesDropped, 1);
});

test("a delayed response holds the responses behind it, then the rule is spent", async () => {
  const c = await client(2);
  const rule = proxy.delayResponses({ apiKey: 4 }, 1500);
  const held = c.frame(4, "leader-and-isr");
  const behind = c.frame(6, "update-metadata");
  const sentAt = Date.now();
  c.socket.write(held.bytes);
  c.socket.write(behind.bytes);
  const answers = await c.waitForAnswers(2);
  assert.deepEqual(
    answers.map((a) => a.correlationId),
    [held.correlationId, behind.correlationId],
  );
  for (const a of answers) assert.ok(a.atMs - sentAt >= 1450, `answered after ${a.atMs - sentAt} ms`);
  assert.equal(rule.hits, 1);
  assert.equal(proxy.counts.responsesDelayed, 1);
  const again = c.frame(4, "again");
  const againAt = Date.now();
  c.socket.write(again.bytes);
  const [, , last] = await c.waitForAnswers(3);
  assert.ok(last.atMs - againAt < 1000, `not held once spent: ${last.atMs - againAt} ms`);
});

test("a captured request is replayed at a frame boundary; its answer goes to the test, not the client", async () => {
  broker.received.length = 0;
  const c = await client(0);
  const capture = proxy.captureRequests({ apiKey: 4, src: 0, dst: 1 });
  const lai = c.frame(4, "epoch-7");
  c.socket.write(lai.bytes);
  await c.waitForAnswers(1);
  assert.equal(capture.frames.length, 1);
  const captured = capture.frames[0];
  assert.deepEqual(captured.frame, lai.bytes);
  assert.equal(captured.correlationId, lai.correlationId);
  assert.equal(captured.src, 0);
  // Replayed while the client is in the middle of a frame: it goes in after that frame.
  const next = c.frame(5, "stop-replica");
  c.socket.write(next.bytes.subarray(0, 20));
  await sleep(50);
  const replayed = proxy.replay(captured);
  await sleep(50);
  c.socket.write(next.bytes.subarray(20));
  const answer = await replayed;
  assert.equal(answer.via, "link");
  const replayId = answer.body.readInt32BE(0);
  assert.notEqual(replayId, lai.correlationId);
  assert.equal(answer.body.toString("utf8", 4), "echo:epoch-7");
  await c.waitForAnswers(2);
  await sleep(200);
  assert.deepEqual(
    c.answers.map((a) => a.correlationId),
    [lai.correlationId, next.correlationId],
    "the client sees no answer it did not ask for",
  );
  assert.deepEqual(
    broker.received.map((r) => [r.apiKey, r.payload]),
    [
      [4, "epoch-7"],
      [5, "stop-replica"],
      [4, "epoch-7"],
    ],
  );
  assert.equal(broker.received[2].correlationId, replayId);
  // Once the client's connection is gone, the replay goes on a connection of its own.
  c.socket.destroy();
  await sleep(100);
  const alone = await proxy.replay(captured);
  assert.equal(alone.via, "new-connection");
  assert.equal(alone.body.toString("utf8", 4), "echo:epoch-7");
  assert.equal(broker.received.length, 4);
  capture.disarm();
  assert.equal(proxy.counts.replayed, 2);
  assert.equal(proxy.counts.replayAnswered, 2);
});

test("latency holds every chunk each way, in order", async () => {
  const c = await client(2);
  proxy.setLatency(100, 1, 2);
  try {
    const frames = Array.from({ length: 50 }, (_, i) => c.frame(1, `fetch-${i}`));
    const sentAt = Date.now();
    for (const f of frames) c.socket.write(f.bytes);
    const answers = await c.waitForAnswers(50);
    assert.deepEqual(
      answers.map((a) => a.correlationId),
      frames.map((f) => f.correlationId),
    );
    assert.deepEqual(
      answers.map((a) => a.payload),
      frames.map((_, i) => `echo:fetch-${i}`),
    );
    assert.ok(answers[0].atMs - sentAt >= 190, `first answer after ${answers[0].atMs - sentAt} ms`);
    // Another link has none.
    const d = await client(3);
    const f = d.frame(1, "no-latency");
    const at = Date.now();
    d.socket.write(f.bytes);
    const [a] = await d.waitForAnswers(1);
    assert.ok(a.atMs - at < 150, `link 1-3 answered after ${a.atMs - at} ms`);
  } finally {
    proxy.clearLatency();
  }
});

test("megabytes pass intact, with and without latency", async () => {
  broker.received.length = 0;
  const c = await client(2);
  const big = "y".repeat(1024 * 1024);
  for (const latency of [0, 20]) {
    proxy.setLatency(latency);
    const before = c.answers.length;
    for (let i = 0; i < 8; i++) c.socket.write(c.frame(1, `${i}:${big}`).bytes);
    const answers = await c.waitForAnswers(before + 8, 30_000);
    for (let i = 0; i < 8; i++) assert.equal(answers[before + i].payload, `echo:${i}:${big}`);
  }
  proxy.clearLatency();
  assert.equal(broker.received.length, 16);
});
