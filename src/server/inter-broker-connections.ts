// InterBrokerConnections: one reusable connection per other broker for the requests a broker sends its
// peers outside the controller's channel and the replica fetchers (WriteTxnMarkers, the KIP-890
// AddPartitionsToTxn verification, AlterPartition) — Kafka's InterBrokerSendThread's NetworkClient role.
// Connects on first use to the broker's endpoint on the inter-broker listener; a closed or failed
// connection is dropped and the next request connects again. Connections use the inter-broker listener's
// TLS and SASL (`security`, inter-broker-security.ts); a peer refusing them is logged as an ERROR.
// close() is final (the broker is shutting down): connects in flight are aborted (their sockets destroyed
// at once), open connections closed, and every later get() rejects without connecting, so nothing of
// these connections outlives the broker's shutdown or keeps its process alive.

import { KafkaClientError } from "../client/errors.js";
import { BrokerConnection } from "../client/network/broker-connection.js";
import { Logger } from "../common/logger.js";
import {
  authenticationFailureLine,
  type InterBrokerSecurity,
  isAuthenticationFailure,
} from "./inter-broker-security.js";

const log = new Logger("org.apache.kafka.clients.NetworkClient");

export class InterBrokerConnections {
  private readonly connections = new Map<number, Promise<BrokerConnection>>();
  /** Aborted by close(): every connect in flight ends at once. */
  private readonly closing = new AbortController();

  constructor(
    private readonly clientId: string,
    private readonly endpointOf: (brokerId: number) => { host: string; port: number } | undefined,
    private readonly requestTimeoutMs: number,
    private readonly security: InterBrokerSecurity = {},
  ) {}

  /** Whether close() was called. */
  get closed(): boolean {
    return this.closing.signal.aborted;
  }

  /** The connection to `brokerId` (connecting when there is none, or it closed); rejects after close(). */
  get(brokerId: number): Promise<BrokerConnection> {
    if (this.closed) return Promise.reject(this.closedError(brokerId));
    const cached = this.connections.get(brokerId);
    if (cached !== undefined) {
      return cached.then((c) => {
        if (!c.closed) return c;
        this.drop(brokerId);
        return this.get(brokerId);
      });
    }
    const e = this.endpointOf(brokerId);
    if (e === undefined) return Promise.reject(new Error(`no endpoint known for broker ${brokerId}`));
    const p = BrokerConnection.connect(e.host, e.port, {
      clientId: this.clientId,
      requestTimeoutMs: this.requestTimeoutMs,
      ...this.security,
      signal: this.closing.signal,
    });
    this.connections.set(brokerId, p);
    p.catch((err) => {
      if (this.connections.get(brokerId) === p) this.connections.delete(brokerId);
      if (isAuthenticationFailure(err))
        log.error(`[${this.clientId}] ${authenticationFailureLine(brokerId, e, err as Error)}`);
    });
    return p;
  }

  /** Forgets (and closes) the connection to `brokerId` after a failed request. */
  drop(brokerId: number): void {
    const c = this.connections.get(brokerId);
    this.connections.delete(brokerId);
    void c?.then((conn) => conn.close()).catch(() => undefined);
  }

  /** Closes every connection and aborts those still connecting; later get() calls reject. */
  close(): void {
    this.closing.abort();
    for (const id of [...this.connections.keys()]) this.drop(id);
  }

  private closedError(brokerId: number): KafkaClientError {
    return KafkaClientError.of(
      "NETWORK_EXCEPTION",
      `[${this.clientId}] not connecting to broker ${brokerId}: shutting down`,
    );
  }
}
