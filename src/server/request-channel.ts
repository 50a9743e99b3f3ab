// RequestChannel: hands the socket server's requests to the request pipeline (Kafka's RequestChannel,
// between the network processors and the request handlers), and records each response's RequestMetrics
// once it is sent. Owns when requests are served:
//   - until the pipeline exists (the request handlers are built late in startup), every request waits;
//   - from then on the controller's requests (LeaderAndIsr, StopReplica, UpdateMetadata, and the
//     ApiVersions its connection starts with) are served: the broker awaits its first UpdateMetadata
//     during startup;
//   - every other request waits until request processing is enabled, at the end of startup (Kafka's
//     SocketServer.enableRequestProcessing);
//   - once closed (shutdown), waiting and new requests are answered by closing their connection.

import { ApiKey } from "../protocol/generated/api-table.js";
import type { RequestMetrics } from "./metrics/request-metrics.js";
import type { ConnectionInfo, RequestOutcome, RequestPipeline } from "./request-pipeline.js";
import type { RequestProcessor } from "./socket-server.js";

export class RequestChannel implements RequestProcessor {
  private pipeline: RequestPipeline | undefined;
  private enable!: () => void;
  private readonly processingEnabled: Promise<void>;

  constructor(private readonly requestMetrics?: RequestMetrics) {
    this.processingEnabled = new Promise((resolve) => {
      this.enable = resolve;
    });
  }

  async process(conn: ConnectionInfo, frame: Buffer, receivedNs: bigint): Promise<RequestOutcome> {
    if (!(this.pipeline !== undefined && isControlPlaneRequest(frame))) await this.processingEnabled;
    if (this.pipeline === undefined) return { kind: "close", reason: "the broker is shutting down" };
    return this.pipeline.process(conn, frame, receivedNs);
  }

  responseSent(outcome: RequestOutcome, sentNs: bigint): void {
    if (outcome.kind !== "close" && outcome.timing !== undefined)
      this.requestMetrics?.record(outcome.timing, sentNs);
  }

  /** The request handlers are built: the controller's requests are served from now on. */
  setPipeline(pipeline: RequestPipeline): void {
    this.pipeline = pipeline;
  }

  /** The end of startup: every request is served. */
  enableRequestProcessing(): void {
    this.enable();
  }

  /** Shutdown: requests still waiting, and those to come, close their connections. */
  close(): void {
    this.pipeline = undefined;
    this.enable();
  }
}

/**
 * LeaderAndIsr, StopReplica and UpdateMetadata (and the ApiVersions the controller's connection starts
 * with): the controller's requests, served before startup ends.
 */
function isControlPlaneRequest(frame: Buffer): boolean {
  if (frame.length < 2) return false;
  const k = frame.readInt16BE(0);
  return (
    k === ApiKey.LeaderAndIsr ||
    k === ApiKey.StopReplica ||
    k === ApiKey.UpdateMetadata ||
    k === ApiKey.ApiVersions
  );
}
