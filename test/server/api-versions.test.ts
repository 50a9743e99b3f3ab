// ApiVersions over a real socket at every version (0–4): only APIs with a registered handler are listed,
// with the handler's range (advertised minimum for Produce-style handlers); an unknown ApiVersions
// version gets a v0 UNSUPPORTED_VERSION response with the ranges; controller-only APIs are never listed.
// Also the generic errorResponseFor.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type LogSink, setLogSink } from "../../src/common/logger.js";
import { SYSTEM_TIME } from "../../src/common/time.js";
import { decodeResponse } from "../../src/protocol/framing.js";
import { API_BY_KEY, ApiKey, Apis } from "../../src/protocol/generated/api-table.js";
import { ErrorCode } from "../../src/protocol/generated/errors.js";
import { defaultApiVersionsRequest } from "../../src/protocol/generated/messages/ApiVersionsRequest.js";
import { defaultDescribeClusterResponse } from "../../src/protocol/generated/messages/DescribeClusterResponse.js";
import { defaultFetchRequest } from "../../src/protocol/generated/messages/FetchRequest.js";
import { defaultProduceRequest } from "../../src/protocol/generated/messages/ProduceRequest.js";
import { KafkaServer } from "../../src/server/broker-server.js";
import type { BrokerServices } from "../../src/server/broker-services.js";
import type { HandlerRegistration } from "../../src/server/handler.js";
import { HANDLER_FACTORIES } from "../../src/server/handlers/index.js";
import { KafkaConfig } from "../../src/server/kafka-config.js";
import { errorResponseFor, RequestPipeline } from "../../src/server/request-pipeline.js";
import { WireClient } from "./wire-client.js";

/** Handler factories only capture their services; nothing is called on them here. */
const FAKE_SERVICES = {} as BrokerServices;

const root = mkdtempSync(join(tmpdir(), "tributary-api-versions-"));
let dirs = 0;
let prevSink: LogSink;
before(() => {
  prevSink = setLogSink(() => {});
});
after(() => {
  setLogSink(prevSink);
  rmSync(root, { recursive: true, force: true });
});

const stub = async (): Promise<never> => {
  throw new Error("not called");
};

const HANDLERS: HandlerRegistration[] = [
  { apiKey: ApiKey.Produce, minVersion: 3, advertisedMinVersion: 0, handle: stub },
  { apiKey: ApiKey.Fetch, minVersion: 4, handle: stub },
  { apiKey: ApiKey.DescribeCluster, maxVersion: 0, handle: async () => defaultDescribeClusterResponse() },
  // Controller-only (KRaft) API: may be registered, never advertised by a ZooKeeper-mode broker.
  { apiKey: ApiKey.BrokerHeartbeat, handle: stub },
];

async function withServer(
  handlers: HandlerRegistration[] | undefined,
  fn: (port: number) => Promise<void>,
): Promise<void> {
  const config = new KafkaConfig({
    "log.dirs": join(root, `d${dirs++}`),
    "metrics.http.listener": "",
    listeners: "PLAINTEXT://127.0.0.1:0",
  });
  const server = new KafkaServer(config, { handlers });
  await server.startup();
  try {
    await fn(server.boundPort());
  } finally {
    await server.shutdown();
  }
}

describe("ApiVersions", () => {
  test("every version 0–4 answers with exactly the registered APIs and their ranges", async () => {
    await withServer(HANDLERS, async (port) => {
      const c = await WireClient.connect(port);
      for (let v = 0; v <= 4; v++) {
        const req = {
          clientSoftwareName: v >= 3 ? "any client! name" : "",
          clientSoftwareVersion: "0.0-weird",
        };
        const res = await c.request(Apis.ApiVersions, v, req);
        assert.equal(res.errorCode, 0, `v${v}`);
        assert.deepEqual(
          res.apiKeys.map((a) => [a.apiKey, a.minVersion, a.maxVersion]),
          [
            [ApiKey.Produce, 0, API_BY_KEY[ApiKey.Produce]!.maxVersion],
            [ApiKey.Fetch, 4, API_BY_KEY[ApiKey.Fetch]!.maxVersion],
            [ApiKey.ApiVersions, 0, 4],
            [ApiKey.DescribeCluster, 0, 0],
          ],
          `v${v}`,
        );
        if (v >= 3) {
          assert.deepEqual(res.supportedFeatures, []);
          assert.deepEqual(res.finalizedFeatures, []);
          assert.equal(res.zkMigrationReady, false);
        }
      }
      c.close();
    });
  });

  test("with no other handler only ApiVersions itself is advertised", async () => {
    await withServer([], async (port) => {
      const c = await WireClient.connect(port);
      const res = await c.request(Apis.ApiVersions, 3, defaultApiVersionsRequest());
      assert.deepEqual(
        res.apiKeys.map((a) => [a.apiKey, a.minVersion, a.maxVersion]),
        [[ApiKey.ApiVersions, 0, 4]],
      );
      c.close();
    });
  });

  test("the broker's own handler list: Produce advertised from v0 but v0–v2 refused per partition", async () => {
    await withServer(undefined, async (port) => {
      const c = await WireClient.connect(port);
      const res = await c.request(Apis.ApiVersions, 3, defaultApiVersionsRequest());
      const byKey = new Map(res.apiKeys.map((a) => [a.apiKey, a]));
      assert.deepEqual(
        [...byKey.keys()],
        [...new Set([ApiKey.ApiVersions, ...HANDLER_FACTORIES.map((f) => f(FAKE_SERVICES).apiKey)])].sort(
          (a, b) => a - b,
        ),
      );
      assert.equal(byKey.get(ApiKey.Produce)?.minVersion, 0);
      assert.equal(byKey.get(ApiKey.Fetch)?.minVersion, 4);
      const produce = await c.request(Apis.Produce, 2, {
        ...defaultProduceRequest(),
        acks: 1,
        topicData: [{ name: "t", partitionData: [{ index: 3, records: null }] }],
      });
      assert.equal(produce.responses[0].name, "t");
      assert.equal(produce.responses[0].partitionResponses[0].index, 3);
      assert.equal(produce.responses[0].partitionResponses[0].errorCode, ErrorCode.UNSUPPORTED_VERSION);
      c.close();
    });
  });

  test("an ApiVersions version the broker does not know gets v0 UNSUPPORTED_VERSION with the ranges", async () => {
    await withServer(HANDLERS, async (port) => {
      const c = await WireClient.connect(port);
      // v5 does not exist (the spec's ApiVersions ends at v4): header v2, body never read.
      const frame = Buffer.from([0, 0, 0, 13, 0, 18, 0, 5, 0, 0, 0, 42, 0, 1, 0x41, 0, 0]);
      c.sendRaw(frame);
      const raw = await c.nextFrame();
      assert.ok(raw !== undefined, "a response, not a closed connection");
      const res = decodeResponse(Apis.ApiVersions, 0, raw);
      assert.equal(res.correlationId, 42);
      assert.equal(res.body.errorCode, ErrorCode.UNSUPPORTED_VERSION);
      const av = res.body.apiKeys.find((a) => a.apiKey === ApiKey.ApiVersions);
      assert.deepEqual([av?.minVersion, av?.maxVersion], [0, 4]);
      assert.equal(res.body.apiKeys.length, 4);
      // The connection stays usable: the client retries at a version listed.
      const ok = await c.request(Apis.ApiVersions, 3, defaultApiVersionsRequest());
      assert.equal(ok.errorCode, 0);
      c.close();
    });
  });

  test("a request above a handler's maxVersion closes the connection", async () => {
    await withServer(HANDLERS, async (port) => {
      const c = await WireClient.connect(port);
      c.send(Apis.DescribeCluster, 1, { includeClusterAuthorizedOperations: false, endpointType: 1 });
      assert.equal(await c.nextFrame(), undefined);
      assert.equal(await c.waitClosed(), true);
    });
  });

  test("the pipeline refuses duplicate handlers and empty version ranges", () => {
    assert.throws(
      () => new RequestPipeline([HANDLERS[2], HANDLERS[2]], SYSTEM_TIME),
      /two handlers for DescribeCluster/,
    );
    assert.throws(
      () =>
        new RequestPipeline(
          [{ apiKey: ApiKey.Produce, minVersion: 9, maxVersion: 8, handle: stub }],
          SYSTEM_TIME,
        ),
      /empty version range/,
    );
    assert.throws(
      () => new RequestPipeline([{ apiKey: 9999, handle: stub }], SYSTEM_TIME),
      /unknown API key/,
    );
  });
});

describe("errorResponseFor", () => {
  test("sets the top-level error code and message when the response has them", async () => {
    const chunks = await errorResponseFor(Apis.DescribeCluster as never, 0, 5, {}, ErrorCode.NOT_CONTROLLER, {
      message: "m",
    });
    assert.ok(chunks);
    const res = decodeResponse(Apis.DescribeCluster, 0, Buffer.concat(chunks).subarray(4));
    assert.equal(res.correlationId, 5);
    assert.equal(res.body.errorCode, ErrorCode.NOT_CONTROLLER);
    assert.equal(res.body.errorMessage, "m");
  });

  test("undefined when the API (or this version of it) has no top-level error field", async () => {
    assert.equal(await errorResponseFor(Apis.ListOffsets as never, 5, 1, {}, -1), undefined);
    assert.equal(await errorResponseFor(Apis.Fetch as never, 6, 1, defaultFetchRequest(), -1), undefined);
    const v7 = await errorResponseFor(Apis.Fetch as never, 7, 1, defaultFetchRequest(), -1);
    assert.ok(v7, "Fetch v7+ has a top-level error code");
  });

  test("uses the handler's own error response when it has one", async () => {
    const chunks = await errorResponseFor(
      Apis.DescribeCluster as never,
      1,
      9,
      {},
      ErrorCode.INVALID_REQUEST,
      {
        errorResponse: (_req, _v, code) => ({
          ...defaultDescribeClusterResponse(),
          errorCode: code,
          clusterId: "own",
        }),
      },
    );
    const res = decodeResponse(Apis.DescribeCluster, 1, Buffer.concat(chunks!).subarray(4));
    assert.equal(res.body.clusterId, "own");
    assert.equal(res.body.errorCode, ErrorCode.INVALID_REQUEST);
  });
});
