// AddPartitionsToTxnManager: a partition leader's check that a transactional batch belongs to an ongoing
// transaction (KIP-890 part 1; Kafka's AddPartitionsToTxnManager). The transactional id's coordinator is
// the leader of its __transaction_state partition: this broker's TransactionCoordinator when that is this
// broker, else AddPartitionsToTxn v4 with verify_only to that broker over the inter-broker listener.
// Coordinator errors a producer cannot act on (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE,
// COORDINATOR_LOAD_IN_PROGRESS, an unreachable coordinator) become NOT_ENOUGH_REPLICAS, which producers
// retry, as Kafka 3.6+ maps them.

import type { BrokerConnection } from "../../../client/network/broker-connection.js";
import type { TopicPartition } from "../../../common/topic-partition.js";
import { ErrorCode } from "../../../protocol/errors.js";
import { Apis } from "../../../protocol/generated/api-table.js";
import { InterBrokerConnections } from "../../inter-broker-connections.js";
import type { InterBrokerSecurity } from "../../inter-broker-security.js";
import { TRANSACTION_STATE_TOPIC_NAME } from "../../metadata/internal-topics.js";
import type { TransactionCoordinator } from "./transaction-coordinator.js";

export interface AddPartitionsToTxnManagerOptions {
  readonly brokerId: number;
  readonly coordinator: TransactionCoordinator;
  /** The leader of a __transaction_state partition as this broker's metadata knows it (-1: none). */
  readonly leaderOf: (tp: TopicPartition) => number;
  readonly endpointOf: (brokerId: number) => { host: string; port: number } | undefined;
  readonly requestTimeoutMs: number;
  /** The inter-broker listener's TLS and SASL. */
  readonly security?: InterBrokerSecurity;
}

const RETRIABLE_AS_NOT_ENOUGH_REPLICAS = new Set<number>([
  ErrorCode.NOT_COORDINATOR,
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
  ErrorCode.REQUEST_TIMED_OUT,
  ErrorCode.NETWORK_EXCEPTION,
]);

export class AddPartitionsToTxnManager {
  private readonly connections: InterBrokerConnections;

  constructor(private readonly options: AddPartitionsToTxnManagerOptions) {
    this.connections = new InterBrokerConnections(
      `broker-${options.brokerId}-txn-verifier`,
      options.endpointOf,
      options.requestTimeoutMs,
      options.security,
    );
  }

  /**
   * The error for appending `tp` to `transactionalId`'s transaction (NONE: it is part of it). As Kafka's
   * AddPartitionsToTxnManager: a fenced producer gets INVALID_PRODUCER_EPOCH, not the coordinator's
   * PRODUCER_FENCED (producers expect 47 on produce; librdkafka raises its fatal "fenced" error on it).
   */
  async verify(
    transactionalId: string,
    producerId: bigint,
    producerEpoch: number,
    tp: TopicPartition,
  ): Promise<number> {
    const code = await this.verifyWithCoordinator(transactionalId, producerId, producerEpoch, tp);
    if (code === ErrorCode.PRODUCER_FENCED) return ErrorCode.INVALID_PRODUCER_EPOCH;
    return RETRIABLE_AS_NOT_ENOUGH_REPLICAS.has(code) ? ErrorCode.NOT_ENOUGH_REPLICAS : code;
  }

  close(): void {
    this.connections.close();
  }

  private async verifyWithCoordinator(
    transactionalId: string,
    producerId: bigint,
    producerEpoch: number,
    tp: TopicPartition,
  ): Promise<number> {
    const { coordinator } = this.options;
    const leader = this.options.leaderOf({
      topic: TRANSACTION_STATE_TOPIC_NAME,
      partition: coordinator.partitionFor(transactionalId),
    });
    if (leader < 0) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    if (leader === this.options.brokerId) {
      const v = coordinator.verifyTransaction(transactionalId, producerId, producerEpoch, [tp]);
      return v.error !== ErrorCode.NONE
        ? v.error
        : (v.partitionErrors.get(`${tp.topic}-${tp.partition}`) ?? ErrorCode.NONE);
    }
    let conn: BrokerConnection;
    try {
      conn = await this.connections.get(leader);
    } catch {
      return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    }
    try {
      const version = conn.versionFor(Apis.AddPartitionsToTxn);
      if (version < 4) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
      const res = await conn.send(Apis.AddPartitionsToTxn, version, {
        v3AndBelowTransactionalId: "",
        v3AndBelowProducerId: 0n,
        v3AndBelowProducerEpoch: 0,
        v3AndBelowTopics: [],
        transactions: [
          {
            transactionalId,
            producerId,
            producerEpoch,
            verifyOnly: true,
            topics: [{ name: tp.topic, partitions: [tp.partition] }],
          },
        ],
      });
      if (res.errorCode !== ErrorCode.NONE) return res.errorCode;
      const p = res.resultsByTransaction[0]?.topicResults[0]?.resultsByPartition[0];
      return p?.partitionErrorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR;
    } catch {
      this.connections.drop(leader);
      return ErrorCode.REQUEST_TIMED_OUT;
    }
  }
}
