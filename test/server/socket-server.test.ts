// SocketServer + RequestPipeline over real sockets on 127.0.0.1 (port 0), with the generated codecs as
// the client and test handlers registered in a real KafkaServer (LogManager in a temp dir): pipelined
// requests answered in order one at a time, back-pressure with hundreds queued, oversized frames,
// unknown API keys, unsupported versions, malformed bodies, handler failures (error response or close),
// NO_RESPONSE, advertised-but-refused versions, idle expiry, several listeners.

import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type LogSink, setLogSink } from "../../src/common/logger.js";
import { KafkaError } from "../../src/protocol/errors.js";
import { ApiKey, Apis } from "../../src/protocol/generated/api-table.js";
import { ErrorCode } from "../../src/protocol/generated/errors.js";
import { defaultApiVersionsRequest } from "../../src/protocol/generated/messages/ApiVersionsRequest.js";
import {
  type DescribeClusterRequest,
  defaultDescribeClusterRequest,
} from "../../src/protocol/generated/messages/DescribeClusterRequest.js";
import {
  type DescribeClusterResponse,
  defaultDescribeClusterResponse,
} from "../../src/protocol/generated/messages/DescribeClusterResponse.js";
import { defaultListOffsetsRequest } from "../../src/protocol/generated/messages/ListOffsetsRequest.js";
import { defaultMetadataRequest } from "../../src/protocol/generated/messages/MetadataRequest.js";
import {
  defaultMetadataResponse,
  defaultMetadataResponseTopic,
} from "../../src/protocol/generated/messages/MetadataResponse.js";
import { KafkaServer } from "../../src/server/broker-server.js";
import { type HandlerRegistration, NO_RESPONSE } from "../../src/server/handler.js";
import { KafkaConfig } from "../../src/server/kafka-config.js";
import { WireClient } from "./wire-client.js";

const root = mkdtempSync(join(tmpdir(), "tributary-socket-server-"));
let dirs = 0;
const logLines: string[] = [];
let prevSink: LogSink;

before(() => {
  prevSink = setLogSink((line) => {
    logLines.push(line);
  });
});
after(() => {
  setLogSink(prevSink);
  rmSync(root, { recursive: true, force: true });
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** What the DescribeCluster test handler does, keyed by the request's endpointType (1 = answer). */
interface Probe {
  active: number;
  maxActive: number;
  handled: number[];
}

function testHandlers(probe: Probe): HandlerRegistration[] {
  return [
    {
      apiKey: ApiKey.DescribeCluster,
      // The test encodes behaviour in the clusterAuthorizedOperations flag and the correlation id.
      handle: async (
        ctx,
        req: DescribeClusterRequest,
      ): Promise<DescribeClusterResponse | typeof NO_RESPONSE> => {
        probe.active++;
        probe.maxActive = Math.max(probe.maxActive, probe.active);
        try {
          const id = ctx.header.correlationId;
          // Earlier requests take longer, so out-of-order completion would show.
          if (req.includeClusterAuthorizedOperations) await sleep(Math.max(0, 30 - id));
          probe.handled.push(id);
          if (id >= 1000 && id < 2000) throw new KafkaError("CLUSTER_AUTHORIZATION_FAILED", "no");
          if (id >= 2000 && id < 3000) throw new Error("boom");
          if (id >= 3000 && id < 4000) return NO_RESPONSE;
          return { ...defaultDescribeClusterResponse(), clusterId: `c-${id}`, controllerId: 0 };
        } finally {
          probe.active--;
        }
      },
    },
    {
      apiKey: ApiKey.ListOffsets,
      handle: async () => {
        throw new Error("ListOffsets test handler always fails");
      },
    },
    {
      // Advertised from v0, accepted from v3 (the Produce rule), with its own error response.
      apiKey: ApiKey.Metadata,
      minVersion: 3,
      advertisedMinVersion: 0,
      handle: async () => defaultMetadataResponse(),
      errorResponse: () => ({
        ...defaultMetadataResponse(),
        topics: [{ ...defaultMetadataResponseTopic(), errorCode: ErrorCode.UNSUPPORTED_VERSION, name: "x" }],
      }),
    },
  ];
}

async function startServer(
  overrides: Record<string, string> = {},
  probe: Probe = { active: 0, maxActive: 0, handled: [] },
): Promise<KafkaServer> {
  const config = new KafkaConfig({
    "log.dirs": join(root, `logs-${dirs++}`),
    "metrics.http.listener": "",
    listeners: "PLAINTEXT://127.0.0.1:0",
    ...overrides,
  });
  const server = new KafkaServer(config, { handlers: testHandlers(probe) });
  await server.startup();
  return server;
}

describe("SocketServer", () => {
  test("pipelined requests are processed one at a time and answered in request order", async () => {
    const probe: Probe = { active: 0, maxActive: 0, handled: [] };
    const server = await startServer({}, probe);
    try {
      const c = await WireClient.connect(server.boundPort());
      const req = { ...defaultDescribeClusterRequest(), includeClusterAuthorizedOperations: true };
      const ids: number[] = [];
      for (let i = 1; i <= 20; i++) ids.push(c.send(Apis.DescribeCluster, 0, req, i));
      const got: number[] = [];
      for (let i = 0; i < ids.length; i++) {
        const res = await c.receive(Apis.DescribeCluster, 0);
        assert.equal(res.body.clusterId, `c-${res.correlationId}`);
        got.push(res.correlationId);
      }
      assert.deepEqual(got, ids);
      assert.deepEqual(probe.handled, ids);
      assert.equal(probe.maxActive, 1, "one request per connection at a time (muted channel)");
      c.close();
    } finally {
      await server.shutdown();
    }
  });

  test("hundreds of pipelined requests in one write: reading pauses and resumes, all answered in order", async () => {
    const server = await startServer();
    try {
      const c = await WireClient.connect(server.boundPort());
      const chunks: Buffer[] = [];
      const { encodeRequest } = await import("../../src/protocol/framing.js");
      for (let i = 1; i <= 500; i++) {
        chunks.push(
          ...encodeRequest(Apis.DescribeCluster, 1, 5000 + i, "c", defaultDescribeClusterRequest()),
        );
      }
      c.sendRaw(Buffer.concat(chunks));
      for (let i = 1; i <= 500; i++) {
        const res = await c.receive(Apis.DescribeCluster, 1);
        assert.equal(res.correlationId, 5000 + i);
      }
      c.close();
    } finally {
      await server.shutdown();
    }
  });

  test("concurrent connections are served independently", async () => {
    const probe: Probe = { active: 0, maxActive: 0, handled: [] };
    const server = await startServer({}, probe);
    try {
      const clients = await Promise.all([1, 2, 3, 4].map(() => WireClient.connect(server.boundPort())));
      const req = { ...defaultDescribeClusterRequest(), includeClusterAuthorizedOperations: true };
      const results = await Promise.all(clients.map((c) => c.request(Apis.DescribeCluster, 0, req)));
      for (const r of results) assert.equal(r.errorCode, 0);
      assert.ok(probe.maxActive > 1, "requests of different connections overlap");
      for (const c of clients) c.close();
    } finally {
      await server.shutdown();
    }
  });

  test("a frame larger than socket.request.max.bytes closes the connection with one log line", async () => {
    const server = await startServer({ "socket.request.max.bytes": "1024" });
    try {
      const c = await WireClient.connect(server.boundPort());
      const prefix = Buffer.alloc(4);
      prefix.writeInt32BE(2000);
      c.sendRaw(prefix);
      assert.equal(await c.waitClosed(), true);
      assert.ok(
        logLines.some((l) =>
          l.includes("due to invalid request: Invalid receive (size = 2000 larger than 1024)"),
        ),
        logLines.join("\n"),
      );
      // A negative size too.
      const c2 = await WireClient.connect(server.boundPort());
      prefix.writeInt32BE(-5);
      c2.sendRaw(prefix);
      assert.equal(await c2.waitClosed(), true);
      // The broker still serves others.
      const c3 = await WireClient.connect(server.boundPort());
      const res = await c3.request(Apis.ApiVersions, 3, defaultApiVersionsRequest());
      assert.equal(res.errorCode, 0);
      c3.close();
    } finally {
      await server.shutdown();
    }
  });

  test("an unknown API key closes the connection", async () => {
    const server = await startServer();
    try {
      const c = await WireClient.connect(server.boundPort());
      const frame = Buffer.alloc(4 + 10);
      frame.writeInt32BE(10, 0);
      frame.writeInt16BE(999, 4); // api key
      frame.writeInt16BE(0, 6); // version
      frame.writeInt32BE(7, 8); // correlation id
      frame.writeInt16BE(-1, 12); // null client id
      c.sendRaw(frame);
      assert.equal(await c.nextFrame(), undefined, "no response, the connection closes");
      assert.equal(await c.waitClosed(), true);
    } finally {
      await server.shutdown();
    }
  });

  test("an API without a handler here closes the connection (not advertised, not served)", async () => {
    const server = await startServer();
    try {
      const c = await WireClient.connect(server.boundPort());
      const { defaultFindCoordinatorRequest } = await import(
        "../../src/protocol/generated/messages/FindCoordinatorRequest.js"
      );
      c.send(Apis.FindCoordinator, 1, defaultFindCoordinatorRequest());
      assert.equal(await c.nextFrame(), undefined);
      assert.equal(await c.waitClosed(), true);
    } finally {
      await server.shutdown();
    }
  });

  test("an unsupported version of an API other than ApiVersions closes the connection", async () => {
    const server = await startServer();
    try {
      const c = await WireClient.connect(server.boundPort());
      const frame = Buffer.alloc(4 + 10);
      frame.writeInt32BE(10, 0);
      frame.writeInt16BE(ApiKey.DescribeCluster, 4);
      frame.writeInt16BE(99, 6);
      frame.writeInt32BE(8, 8);
      frame.writeInt16BE(-1, 12);
      c.sendRaw(frame);
      assert.equal(await c.nextFrame(), undefined);
      assert.equal(await c.waitClosed(), true);
    } finally {
      await server.shutdown();
    }
  });

  test("a version advertised but refused gets the handler's UNSUPPORTED_VERSION response", async () => {
    const server = await startServer();
    try {
      const c = await WireClient.connect(server.boundPort());
      const res = await c.request(Apis.Metadata, 1, { ...defaultMetadataRequest(), topics: null });
      assert.equal(res.topics[0].errorCode, ErrorCode.UNSUPPORTED_VERSION);
      const ok = await c.request(Apis.Metadata, 4, defaultMetadataRequest());
      assert.deepEqual(ok.topics, []);
      c.close();
    } finally {
      await server.shutdown();
    }
  });

  test("a malformed body closes the connection with one log line", async () => {
    const server = await startServer();
    try {
      const c = await WireClient.connect(server.boundPort());
      // DescribeCluster v0 is flexible: header v2 (client id, tagged fields), then a body that is cut short.
      const frame = Buffer.from([0, 0, 0, 11, 0, 60, 0, 0, 0, 0, 0, 9, 0xff, 0xff, 0]);
      c.sendRaw(frame);
      assert.equal(await c.nextFrame(), undefined);
      assert.equal(await c.waitClosed(), true);
      assert.ok(
        logLines.some((l) => l.includes("Malformed request (API key 60 version 0, correlation id 9)")),
      );
    } finally {
      await server.shutdown();
    }
  });

  test("a handler that throws: its error code in the response's error field; no error field → close", async () => {
    const server = await startServer();
    try {
      const c = await WireClient.connect(server.boundPort());
      const req = defaultDescribeClusterRequest();
      c.send(Apis.DescribeCluster, 0, req, 1001);
      c.send(Apis.DescribeCluster, 0, req, 2001);
      c.send(Apis.DescribeCluster, 0, req, 3001); // NO_RESPONSE: nothing written
      c.send(Apis.DescribeCluster, 0, req, 4001);
      const a = await c.receive(Apis.DescribeCluster, 0);
      assert.equal(a.correlationId, 1001);
      assert.equal(a.body.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      assert.equal(a.body.errorMessage, "no");
      const b = await c.receive(Apis.DescribeCluster, 0);
      assert.equal(b.correlationId, 2001);
      assert.equal(b.body.errorCode, ErrorCode.UNKNOWN_SERVER_ERROR);
      const d = await c.receive(Apis.DescribeCluster, 0);
      assert.equal(d.correlationId, 4001, "the NO_RESPONSE request wrote nothing");
      assert.equal(d.body.errorCode, 0);
      // ListOffsets has no top-level error code: the connection is closed.
      c.send(Apis.ListOffsets, 5, defaultListOffsetsRequest());
      assert.equal(await c.nextFrame(), undefined);
      assert.equal(await c.waitClosed(), true);
    } finally {
      await server.shutdown();
    }
  });

  test("connections.max.idle.ms closes idle connections, not busy ones", async () => {
    const server = await startServer({ "connections.max.idle.ms": "400" });
    try {
      const idle = await WireClient.connect(server.boundPort());
      const busy = await WireClient.connect(server.boundPort());
      const started = Date.now();
      // Keep `busy` active every 50 ms.
      while (Date.now() - started < 1200) {
        await busy.request(Apis.ApiVersions, 3, defaultApiVersionsRequest());
        await sleep(50);
      }
      assert.equal(idle.closed, true, "the idle connection was closed");
      assert.equal(busy.closed, false, "the active connection stays open");
      busy.close();
    } finally {
      await server.shutdown();
    }
  });

  test("several listeners are bound, each answering", async () => {
    const server = await startServer({
      listeners: "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
      "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
      "inter.broker.listener.name": "INTERNAL",
    });
    try {
      const ports = server.socketServer.boundEndpoints().map((e) => e.port);
      assert.equal(ports.length, 2);
      assert.notEqual(ports[0], ports[1]);
      for (const port of ports) {
        const c = await WireClient.connect(port);
        const res = await c.request(Apis.ApiVersions, 2, defaultApiVersionsRequest());
        assert.equal(res.errorCode, 0);
        c.close();
      }
      assert.deepEqual(
        server.advertisedEndpoints.map((e) => e.port),
        ports,
        "advertised listeners carry the bound ports",
      );
    } finally {
      await server.shutdown();
    }
  });

  test("shutdown closes open connections and stops accepting", async () => {
    const server = await startServer();
    const port = server.boundPort();
    const c = await WireClient.connect(port);
    await c.request(Apis.ApiVersions, 3, defaultApiVersionsRequest());
    await server.shutdown();
    assert.equal(await c.waitClosed(), true);
    await assert.rejects(WireClient.connect(port));
  });

  test("mutated captured requests never stop the server; a well-behaved client keeps working", async () => {
    const server = await startServer();
    try {
      const captures = join(process.cwd(), "test/fixtures/captures");
      const frames: Buffer[] = [];
      for (const d of readdirSync(captures)) {
        if (!statSync(join(captures, d)).isDirectory()) continue;
        for (const f of readdirSync(join(captures, d))) {
          if (!f.endsWith(".bin")) continue;
          const raw = readFileSync(join(captures, d, f));
          frames.push(raw.length >= 4 && raw.readInt32BE(0) === raw.length - 4 ? raw.subarray(4) : raw);
        }
      }
      assert.ok(frames.length > 50);
      let seed = 42;
      const rnd = (n: number): number => {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        return seed % n;
      };
      const mutate = (frame: Buffer): Buffer => {
        let body = Buffer.from(frame);
        const kind = rnd(3);
        if (kind === 0) for (let i = 0; i <= rnd(4); i++) body[rnd(body.length)] = rnd(256);
        else if (kind === 1) body = body.subarray(0, rnd(body.length));
        else {
          const at = rnd(body.length);
          body = Buffer.concat([body.subarray(0, at), Buffer.from([rnd(256), rnd(256)]), body.subarray(at)]);
        }
        const size = Buffer.alloc(4);
        size.writeInt32BE(body.length);
        return Buffer.concat([size, body]);
      };
      const good = await WireClient.connect(server.boundPort());
      let sent = 0;
      while (sent < 3000) {
        const batch = await Promise.all(
          Array.from({ length: 10 }, async () => {
            const c = await WireClient.connect(server.boundPort());
            for (let i = 0; i < 10; i++) c.sendRaw(mutate(frames[rnd(frames.length)]));
            // Each connection ends with an answer or a close.
            const outcome = await Promise.race([c.waitClosed(2000), c.nextFrame(2000).then(() => true)]);
            c.close();
            return outcome;
          }),
        );
        assert.ok(batch.every((b) => b));
        sent += 100;
        const res = await good.request(Apis.ApiVersions, 3, defaultApiVersionsRequest());
        assert.equal(res.errorCode, 0);
      }
      good.close();
    } finally {
      await server.shutdown();
    }
  });

  test("a port in use fails startup with one clear message", async () => {
    const server = await startServer();
    try {
      const config = new KafkaConfig({
        "log.dirs": join(root, `logs-${dirs++}`),
        "metrics.http.listener": "",
        listeners: `PLAINTEXT://127.0.0.1:${server.boundPort()}`,
      });
      const second = new KafkaServer(config);
      await assert.rejects(
        second.startup(),
        /Socket server failed to bind to 127\.0\.0\.1:\d+: Address already in use/,
      );
    } finally {
      await server.shutdown();
    }
  });
});
