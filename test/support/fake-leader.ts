// Test-only: a fake partition leader for replica fetcher tests — a TCP server on 127.0.0.1 (port 0) that
// speaks just enough of the Kafka protocol for a ReplicaFetcherThread or an InterBrokerConnections client:
// ApiVersions (Fetch up to v12 or a lower cap, OffsetForLeaderEpoch up to v4), and Fetch and
// OffsetForLeaderEpoch answered by the test. It is NOT a broker. Every request is recorded with its connection; requests on one
// connection are answered in order, one at a time, as a broker does. A test holds an answer (ApiVersions
// through `holdApiVersions`, a Fetch by returning a promise it settles later) to place a fetcher's request,
// or its connect, at a chosen point.

import { createServer, type Server, type Socket } from "node:net";
import { decodeRequest, encodeResponse } from "../../src/protocol/framing.js";
import { type ApiDefinition, ApiKey } from "../../src/protocol/generated/api-table.js";
import {
  type ApiVersionsResponse,
  defaultApiVersionsResponse,
} from "../../src/protocol/generated/messages/ApiVersionsResponse.js";
import type { FetchRequest } from "../../src/protocol/generated/messages/FetchRequest.js";
import type { FetchResponse } from "../../src/protocol/generated/messages/FetchResponse.js";
import type { OffsetForLeaderEpochRequest } from "../../src/protocol/generated/messages/OffsetForLeaderEpochRequest.js";
import type { OffsetForLeaderEpochResponse } from "../../src/protocol/generated/messages/OffsetForLeaderEpochResponse.js";

export interface ReceivedRequest {
  readonly connection: number;
  readonly apiKey: number;
  readonly version: number;
  readonly body: unknown;
}

export type FetchAnswer = (
  request: FetchRequest,
  connection: number,
) => FetchResponse | Promise<FetchResponse>;

export class FakeLeader {
  readonly requests: ReceivedRequest[] = [];
  /** Connections accepted so far. */
  connections = 0;
  /** Connections open now (closed by the client or destroyed). */
  readonly open = new Set<Socket>();
  /** Answers Fetch requests; by default an empty answer after 50 ms. */
  onFetch: FetchAnswer = async (req) => {
    await new Promise((r) => setTimeout(r, 50));
    return emptyFetchResponse(req, 0);
  };
  /** Answers OffsetForLeaderEpoch requests (none by default: the connection is closed). */
  onOffsetForLeaderEpoch:
    | ((
        request: OffsetForLeaderEpochRequest,
      ) => OffsetForLeaderEpochResponse | Promise<OffsetForLeaderEpochResponse>)
    | undefined;
  /** While set, ApiVersions answers wait for it (a connect stays in flight). */
  holdApiVersions: Promise<void> | undefined;
  /** The highest Fetch version advertised (12: truncation on fetch; below: OffsetForLeaderEpoch first). */
  fetchMaxVersion = 12;
  private readonly server: Server;

  private constructor(server: Server) {
    this.server = server;
  }

  static async start(): Promise<FakeLeader> {
    let leader: FakeLeader | undefined;
    const server = createServer((socket) => leader?.accept(socket));
    leader = new FakeLeader(server);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    return leader;
  }

  get port(): number {
    const a = this.server.address();
    if (a === null || typeof a === "string") throw new Error("not listening");
    return a.port;
  }

  get endpoint(): { host: string; port: number } {
    return { host: "127.0.0.1", port: this.port };
  }

  /** The Fetch requests received, in order. */
  fetches(): Array<{ connection: number; body: FetchRequest }> {
    return this.requests
      .filter((r) => r.apiKey === ApiKey.Fetch)
      .map((r) => ({ connection: r.connection, body: r.body as FetchRequest }));
  }

  async close(): Promise<void> {
    for (const s of this.open) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: Socket): void {
    const connection = ++this.connections;
    this.open.add(socket);
    socket.on("close", () => this.open.delete(socket));
    socket.on("error", () => {});
    let pending = Buffer.alloc(0);
    let queue = Promise.resolve();
    socket.on("data", (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 4) {
        const size = pending.readInt32BE(0);
        if (pending.length < 4 + size) break;
        const frame = pending.subarray(4, 4 + size);
        pending = pending.subarray(4 + size);
        queue = queue
          .then(() => this.serve(socket, connection, frame))
          .catch(() => {
            socket.destroy();
          });
      }
    });
  }

  private async serve(socket: Socket, connection: number, frame: Buffer): Promise<void> {
    const decoded = decodeRequest(Buffer.from(frame));
    if (!decoded.ok) throw new Error(`request not decoded: ${decoded.kind}`);
    const req = decoded.request;
    const version = req.header.requestApiVersion;
    this.requests.push({ connection, apiKey: req.api.apiKey, version, body: req.body });
    let body: unknown;
    switch (req.api.apiKey) {
      case ApiKey.ApiVersions:
        if (this.holdApiVersions !== undefined) await this.holdApiVersions;
        body = {
          ...defaultApiVersionsResponse(),
          apiKeys: [
            { apiKey: ApiKey.ApiVersions, minVersion: 0, maxVersion: 3 },
            { apiKey: ApiKey.Fetch, minVersion: 4, maxVersion: this.fetchMaxVersion },
            { apiKey: ApiKey.OffsetForLeaderEpoch, minVersion: 0, maxVersion: 4 },
          ],
        } satisfies ApiVersionsResponse;
        break;
      case ApiKey.Fetch:
        body = await this.onFetch(req.body as FetchRequest, connection);
        break;
      case ApiKey.OffsetForLeaderEpoch:
        if (this.onOffsetForLeaderEpoch === undefined) throw new Error("no OffsetForLeaderEpoch answer");
        body = await this.onOffsetForLeaderEpoch(req.body as OffsetForLeaderEpochRequest);
        break;
      default:
        throw new Error(`no answer for ${req.api.name}`);
    }
    if (socket.destroyed) return;
    const chunks = encodeResponse(
      req.api as ApiDefinition<unknown, unknown>,
      version,
      req.header.correlationId,
      body,
    );
    socket.write(Buffer.concat(chunks));
  }
}

/**
 * An answer naming every partition the request names, with no records: what a full fetch response needs
 * (an incremental response may name fewer).
 */
export function emptyFetchResponse(req: FetchRequest, sessionId: number): FetchResponse {
  return {
    throttleTimeMs: 0,
    errorCode: 0,
    sessionId,
    responses: req.topics.map((t) => ({
      topic: t.topic,
      topicId: t.topicId,
      partitions: t.partitions.map((p) => partitionData(p.partition, p.fetchOffset, null)),
    })),
    nodeEndpoints: [],
  };
}

/** One partition's answer: `records` (or none) and a high watermark. */
export function partitionData(
  partition: number,
  highWatermark: bigint,
  records: Buffer | null,
): FetchResponse["responses"][number]["partitions"][number] {
  return {
    partitionIndex: partition,
    errorCode: 0,
    highWatermark,
    lastStableOffset: highWatermark,
    logStartOffset: 0n,
    divergingEpoch: { epoch: -1, endOffset: -1n },
    currentLeader: { leaderId: -1, leaderEpoch: -1 },
    snapshotId: { endOffset: -1n, epoch: -1 },
    abortedTransactions: null,
    preferredReadReplica: -1,
    records,
  };
}
