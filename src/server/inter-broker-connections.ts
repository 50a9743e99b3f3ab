// InterBrokerConnections: one reusable connection per other broker for the requests a broker sends its
// peers outside the controller's channel and the replica fetchers (WriteTxnMarkers, the KIP-890
// AddPartitionsToTxn verification, AlterPartition) — Kafka's InterBrokerSendThread's NetworkClient role.
// Connects on first use to the broker's endpoint on the inter-broker listener; a closed or failed
// connection is dropped and the next request connects again. Connections use the inter-broker listener's
// TLS and SASL (`security`, inter-broker-security.ts); a peer refusing them is logged as an ERROR.

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

  constructor(
    private readonly clientId: string,
    private readonly endpointOf: (brokerId: number) => { host: string; port: number } | undefined,
    private readonly requestTimeoutMs: number,
    private readonly security: InterBrokerSecurity = {},
  ) {}

  /** The connection to `brokerId` (connecting when there is none, or it closed). */
  get(brokerId: number): Promise<BrokerConnection> {
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
    });
    this.connections.set(brokerId, p);
    p.catch((err) => {
      this.connections.delete(brokerId);
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

  close(): void {
    for (const id of [...this.connections.keys()]) this.drop(id);
  }
}
