// ControllerChannelManager: the controller's requests to brokers (Kafka's ControllerChannelManager and
// RequestSendThread). One queue per live broker, sent in order, one at a time, on a connection to the
// broker's inter-broker listener; a failed send is retried (backing off) until it succeeds or the broker
// is removed, as Kafka's send thread does. Stopping a thread is final: a connect in progress is aborted
// and nothing is sent after it (a controller that resigns or shuts down leaves no socket behind). Requests
// to the controller's own broker are handed to the local ControlPlaneReceiver in-process (Kafka goes
// through its own socket; the effect is the same and a single broker needs no loopback connection to
// itself).

import { BrokerConnection } from "../../client/network/broker-connection.js";
import { Logger } from "../../common/logger.js";
import { type ApiDefinition, Apis } from "../../protocol/generated/api-table.js";
import type { LeaderAndIsrRequest } from "../../protocol/generated/messages/LeaderAndIsrRequest.js";
import type { LeaderAndIsrResponse } from "../../protocol/generated/messages/LeaderAndIsrResponse.js";
import type { StopReplicaRequest } from "../../protocol/generated/messages/StopReplicaRequest.js";
import type { StopReplicaResponse } from "../../protocol/generated/messages/StopReplicaResponse.js";
import type { UpdateMetadataRequest } from "../../protocol/generated/messages/UpdateMetadataRequest.js";
import type { UpdateMetadataResponse } from "../../protocol/generated/messages/UpdateMetadataResponse.js";
import {
  authenticationFailureLine,
  type InterBrokerSecurity,
  isAuthenticationFailure,
} from "../inter-broker-security.js";
import type { BrokerEndPoint } from "../metadata/zk-data.js";

/** What a broker does with the controller's requests (the handlers of API keys 4, 5 and 6). */
export interface ControlPlaneReceiver {
  leaderAndIsr(request: LeaderAndIsrRequest): Promise<LeaderAndIsrResponse>;
  updateMetadata(request: UpdateMetadataRequest): Promise<UpdateMetadataResponse>;
  stopReplica(request: StopReplicaRequest): Promise<StopReplicaResponse>;
}

export type ControlRequest =
  | {
      readonly kind: "LeaderAndIsr";
      readonly body: LeaderAndIsrRequest;
      readonly onResponse?: (r: LeaderAndIsrResponse) => void;
    }
  | {
      readonly kind: "UpdateMetadata";
      readonly body: UpdateMetadataRequest;
      readonly onResponse?: (r: UpdateMetadataResponse) => void;
    }
  | {
      readonly kind: "StopReplica";
      readonly body: StopReplicaRequest;
      readonly onResponse?: (r: StopReplicaResponse) => void;
    };

export interface ControllerChannelOptions {
  readonly controllerId: number;
  /** The listener brokers talk to each other on (inter.broker.listener.name). */
  readonly interBrokerListenerName: string;
  /** The controller's own broker, served in-process. */
  readonly localReceiver?: ControlPlaneReceiver;
  readonly requestTimeoutMs: number;
  /** The TLS and SASL of the listener the requests go to (control plane, else inter-broker). */
  readonly security?: InterBrokerSecurity;
  readonly retryBackoffMs?: number;
  readonly logger?: Logger;
}

class RequestSendThread {
  private readonly queue: ControlRequest[] = [];
  private conn: BrokerConnection | undefined;
  private running = false;
  private stopped = false;
  /** Aborts a connect in progress and the backoff wait when the thread stops (stop is final). */
  private readonly stopping = new AbortController();
  /** Bumped when the endpoint changes: a connect to the old endpoint still in progress is not used. */
  private endpointGeneration = 0;

  constructor(
    readonly brokerId: number,
    private endpoint: BrokerEndPoint | undefined,
    private readonly options: ControllerChannelOptions,
    private readonly log: Logger,
  ) {}

  enqueue(req: ControlRequest): void {
    if (this.stopped) return;
    this.queue.push(req);
    if (!this.running) void this.run();
  }

  updateEndpoint(endpoint: BrokerEndPoint | undefined): void {
    const e = this.endpoint;
    if (e?.host !== endpoint?.host || e?.port !== endpoint?.port) {
      this.endpoint = endpoint;
      this.endpointGeneration++;
      this.conn?.close();
      this.conn = undefined;
    }
  }

  stop(): void {
    this.stopped = true;
    this.queue.length = 0;
    this.stopping.abort();
    this.conn?.close();
    this.conn = undefined;
  }

  /** Resolves when the queue is empty (or the thread stopped). */
  async drained(): Promise<void> {
    while (!this.stopped && (this.running || this.queue.length > 0)) {
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  private async run(): Promise<void> {
    this.running = true;
    let failures = 0;
    try {
      while (!this.stopped && this.queue.length > 0) {
        const req = this.queue[0];
        try {
          await this.sendOne(req);
          this.queue.shift();
          failures = 0;
        } catch (e) {
          if (this.stopped) return;
          // Logged once per run of failures; retried with a backoff doubling up to 1 s.
          if (isAuthenticationFailure(e)) {
            // Refused credentials do not heal by retrying: an ERROR, again every tenth attempt.
            if (failures % 10 === 0)
              this.log.error(authenticationFailureLine(this.brokerId, this.endpoint, e as Error));
          } else if (failures === 0) {
            this.log.warn(
              `Controller ${this.options.controllerId}'s ${req.kind} request to broker ${this.brokerId} failed: ${(e as Error).message}; retrying until it succeeds or the broker is gone`,
            );
          }
          failures++;
          this.conn?.close();
          this.conn = undefined;
          const base = this.options.retryBackoffMs ?? 100;
          await this.backoff(Math.min(1000, base * 2 ** Math.min(failures - 1, 4)));
        }
      }
    } finally {
      this.running = false;
    }
  }

  /** Waits `ms`, or less when the thread stops meanwhile. */
  private backoff(ms: number): Promise<void> {
    const signal = this.stopping.signal;
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  private async sendOne(req: ControlRequest): Promise<void> {
    // (The response is awaited before the optional callback: `f?.(await x)` would skip `x` without `f`.)
    const local = this.brokerId === this.options.controllerId ? this.options.localReceiver : undefined;
    if (local !== undefined) {
      switch (req.kind) {
        case "LeaderAndIsr":
          {
            const r = await local.leaderAndIsr(req.body);
            req.onResponse?.(r);
          }
          return;
        case "UpdateMetadata":
          {
            const r = await local.updateMetadata(req.body);
            req.onResponse?.(r);
          }
          return;
        case "StopReplica":
          {
            const r = await local.stopReplica(req.body);
            req.onResponse?.(r);
          }
          return;
      }
    }
    const conn = await this.connection();
    switch (req.kind) {
      case "LeaderAndIsr":
        {
          const r = await this.send(conn, Apis.LeaderAndIsr, req.body);
          req.onResponse?.(r);
        }
        return;
      case "UpdateMetadata":
        {
          const r = await this.send(conn, Apis.UpdateMetadata, req.body);
          req.onResponse?.(r);
        }
        return;
      case "StopReplica":
        {
          const r = await this.send(conn, Apis.StopReplica, req.body);
          req.onResponse?.(r);
        }
        return;
    }
  }

  private send<Req, Res>(conn: BrokerConnection, api: ApiDefinition<Req, Res>, body: Req): Promise<Res> {
    const version = conn.versionFor(api);
    return conn.send(api, version, body);
  }

  private async connection(): Promise<BrokerConnection> {
    if (this.conn !== undefined && !this.conn.closed) return this.conn;
    const e = this.endpoint;
    if (e === undefined) {
      throw new Error(
        `broker ${this.brokerId} has no endpoint on listener ${this.options.interBrokerListenerName}`,
      );
    }
    const generation = this.endpointGeneration;
    const conn = await BrokerConnection.connect(e.host, e.port, {
      clientId: `controller-${this.options.controllerId}`,
      requestTimeoutMs: this.options.requestTimeoutMs,
      connectTimeoutMs: Math.min(10_000, this.options.requestTimeoutMs),
      signal: this.stopping.signal,
      ...this.options.security,
    });
    // Stopped, or sent elsewhere, while connecting: this connection is never used.
    if (this.stopped || generation !== this.endpointGeneration) {
      conn.close();
      throw new Error(
        this.stopped ? "the controller's channel was stopped" : `broker ${this.brokerId}'s endpoint changed`,
      );
    }
    this.conn = conn;
    this.log.info(
      `Controller ${this.options.controllerId} connected to broker ${this.brokerId} at ${e.host}:${e.port}`,
    );
    return this.conn;
  }
}

export class ControllerChannelManager {
  private readonly threads = new Map<number, RequestSendThread>();
  private readonly log: Logger;

  constructor(private readonly options: ControllerChannelOptions) {
    this.log = options.logger ?? new Logger("kafka.controller.ControllerChannelManager");
  }

  /** Adds a broker (or updates its endpoint) so requests can be queued for it. */
  addBroker(brokerId: number, endpoints: readonly BrokerEndPoint[]): void {
    const endpoint = endpoints.find((e) => e.listenerName === this.options.interBrokerListenerName);
    const t = this.threads.get(brokerId);
    if (t) {
      t.updateEndpoint(endpoint);
      return;
    }
    this.threads.set(brokerId, new RequestSendThread(brokerId, endpoint, this.options, this.log));
  }

  /** Drops the broker's queue (it died): what was queued for it is not sent. */
  removeBroker(brokerId: number): void {
    this.threads.get(brokerId)?.stop();
    this.threads.delete(brokerId);
  }

  sendRequest(brokerId: number, req: ControlRequest): void {
    const t = this.threads.get(brokerId);
    if (t === undefined) {
      this.log.warn(`Not sending ${req.kind} to broker ${brokerId}: it is not alive`);
      return;
    }
    t.enqueue(req);
  }

  /** Resolves when everything queued for `brokerId` has been sent. */
  async drained(brokerId: number): Promise<void> {
    await this.threads.get(brokerId)?.drained();
  }

  shutdown(): void {
    for (const t of this.threads.values()) t.stop();
    this.threads.clear();
  }
}
