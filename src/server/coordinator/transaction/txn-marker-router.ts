// TxnMarkerRouter: where the transaction coordinator's COMMIT/ABORT markers go in a cluster (the sending half
// of Kafka's TransactionMarkerChannelManager): each partition's markers to its current leader, as one
// WriteTxnMarkers request per leader broker over the inter-broker listener, or straight to this broker's
// ReplicaManager when it leads the partition. A partition without a known leader, or whose leader cannot
// be reached, answers NOT_LEADER_OR_FOLLOWER / the connection's error, so the channel manager retries it
// after the next metadata update, as Kafka's does.

import type { BrokerConnection } from "../../../client/network/broker-connection.js";
import { getOrCreate } from "../../../common/maps.js";
import type { TopicPartition } from "../../../common/topic-partition.js";
import { ErrorCode } from "../../../protocol/errors.js";
import { Apis } from "../../../protocol/generated/api-table.js";
import { InterBrokerConnections } from "../../inter-broker-connections.js";
import type { InterBrokerSecurity } from "../../inter-broker-security.js";
import type { AppendTxnMarkers, TxnMarkerEntry } from "./transaction-marker-channel-manager.js";

type MarkerResults = Awaited<ReturnType<AppendTxnMarkers>>;

export interface TxnMarkerRouterOptions {
  readonly brokerId: number;
  /** The partition's leader as this broker's metadata knows it (-1: none). */
  readonly leaderOf: (tp: TopicPartition) => number;
  /** A broker's endpoint on the inter-broker listener. */
  readonly endpointOf: (brokerId: number) => { host: string; port: number } | undefined;
  /** This broker's own append (ReplicaManager.appendTxnMarkers). */
  readonly appendLocally: AppendTxnMarkers;
  readonly requestTimeoutMs: number;
  /** The inter-broker listener's TLS and SASL. */
  readonly security?: InterBrokerSecurity;
}

export class TxnMarkerRouter {
  private readonly connections: InterBrokerConnections;

  constructor(private readonly options: TxnMarkerRouterOptions) {
    this.connections = new InterBrokerConnections(
      `broker-${options.brokerId}-txn-marker-sender`,
      options.endpointOf,
      options.requestTimeoutMs,
      options.security,
    );
  }

  /** Sends every entry's markers to the partitions' leaders; one result per entry, in order. */
  readonly send: AppendTxnMarkers = async (markers) => {
    // leader id → the part of each entry it leads
    const byLeader = new Map<number, TxnMarkerEntry[]>();
    const results: MarkerResults = markers.map((m) => ({ producerId: m.producerId, results: [] }));
    markers.forEach((m, i) => {
      const perLeader = new Map<number, TopicPartition[]>();
      for (const tp of m.partitions) {
        const leader = this.options.leaderOf(tp);
        if (leader < 0) {
          results[i].results.push({ topicPartition: tp, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER });
          continue;
        }
        getOrCreate(perLeader, leader, () => []).push(tp);
      }
      for (const [leader, partitions] of perLeader)
        getOrCreate(byLeader, leader, () => []).push({ ...m, partitions });
    });
    await Promise.all(
      [...byLeader].map(async ([leader, entries]) => {
        const answered = await this.sendTo(leader, entries);
        for (const a of answered) {
          const i = markers.findIndex((m) => m.producerId === a.producerId);
          if (i >= 0) results[i].results.push(...a.results);
        }
      }),
    );
    return results;
  };

  close(): void {
    this.connections.close();
  }

  private async sendTo(leader: number, entries: TxnMarkerEntry[]): Promise<MarkerResults> {
    if (leader === this.options.brokerId) return this.options.appendLocally(entries);
    const failAll = (code: number): MarkerResults =>
      entries.map((e) => ({
        producerId: e.producerId,
        results: e.partitions.map((tp) => ({ topicPartition: tp, errorCode: code })),
      }));
    let conn: BrokerConnection;
    try {
      conn = await this.connections.get(leader);
    } catch {
      return failAll(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    }
    try {
      const res = await conn.send(Apis.WriteTxnMarkers, conn.versionFor(Apis.WriteTxnMarkers), {
        markers: entries.map((e) => ({
          producerId: e.producerId,
          producerEpoch: e.producerEpoch,
          transactionResult: e.committed,
          coordinatorEpoch: e.coordinatorEpoch,
          topics: [...groupPartitions(e.partitions)].map(([name, partitionIndexes]) => ({
            name,
            partitionIndexes,
          })),
        })),
      });
      return res.markers.map((m) => ({
        producerId: m.producerId,
        results: m.topics.flatMap((t) =>
          t.partitions.map((p) => ({
            topicPartition: { topic: t.name, partition: p.partitionIndex },
            errorCode: p.errorCode,
          })),
        ),
      }));
    } catch {
      this.connections.drop(leader);
      return failAll(ErrorCode.REQUEST_TIMED_OUT);
    }
  }
}

function groupPartitions(tps: readonly TopicPartition[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const tp of tps) getOrCreate(out, tp.topic, () => []).push(tp.partition);
  return out;
}
