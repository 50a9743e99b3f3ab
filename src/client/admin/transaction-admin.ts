// TransactionAdmin: the transaction half of Kafka's Admin API over a ClusterClient — listTransactions
// (ListTransactions to every broker, each answering for the __transaction_state partitions it
// coordinates; state and producer-id filters), describeTransactions (FindCoordinator key type 1, then
// DescribeTransactions at the coordinator), describeProducers (DescribeProducers at the partition leader,
// or at a given broker) and abortTransaction (WriteTxnMarkers ABORT to the partition leader, as Kafka's
// Admin.abortTransaction / AbortTransactionHandler). Retriable errors (coordinator moves and loads,
// leader changes, lost connections) are retried with retry.backoff.ms until the timeout.
//
// Usage:
//   const txns = new TransactionAdmin(admin.cluster, { timeoutMs: 5000 });
//   const byBroker = await txns.listTransactions({ states: ["Ongoing"] });   // Map brokerId → listings
//   const [d] = await txns.describeTransactions(["my-txn-id"]);
//   const producers = await txns.describeProducers("orders", 0);
//   await txns.abortTransaction({ topic, partition, producerId, producerEpoch, coordinatorEpoch });

import { Apis } from "../../protocol/generated/api-table.js";
import { ErrorCode } from "../../protocol/generated/errors.js";
import { KafkaClientError } from "../errors.js";
import type { BrokerConnection } from "../network/broker-connection.js";
import type { ClusterClient } from "../network/cluster-client.js";
import type { TopicPartitionRef } from "./admin-types.js";

/** One transaction of a coordinator (Kafka's TransactionListing). */
export interface TransactionListing {
  readonly transactionalId: string;
  readonly producerId: bigint;
  /** Kafka's state name: Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, … */
  readonly state: string;
}

/** Kafka's TransactionDescription. */
export interface TransactionDescription {
  readonly transactionalId: string;
  readonly coordinatorId: number;
  readonly state: string;
  readonly producerId: bigint;
  readonly producerEpoch: number;
  readonly transactionTimeoutMs: number;
  /** Start of the ongoing transaction; undefined when none (the broker's -1). */
  readonly transactionStartTimeMs: bigint | undefined;
  /** The partitions of the ongoing transaction, sorted by topic then partition. */
  readonly topicPartitions: readonly TopicPartitionRef[];
  /** TRANSACTIONAL_ID_NOT_FOUND, … when this id could not be described. */
  readonly error?: KafkaClientError;
}

/** Kafka's ProducerState: an active producer of one partition. */
export interface ProducerState {
  readonly producerId: bigint;
  readonly producerEpoch: number;
  readonly lastSequence: number;
  readonly lastTimestamp: bigint;
  /** Coordinator epoch of the last marker; undefined when none was written (the broker's -1). */
  readonly coordinatorEpoch: number | undefined;
  /** First offset of the producer's open transaction; undefined when none (the broker's -1). */
  readonly currentTransactionStartOffset: bigint | undefined;
}

/** Kafka's AbortTransactionSpec. */
export interface AbortTransactionSpec extends TopicPartitionRef {
  readonly producerId: bigint;
  readonly producerEpoch: number;
  readonly coordinatorEpoch: number;
}

function byTopicPartition(a: TopicPartitionRef, b: TopicPartitionRef): number {
  if (a.topic !== b.topic) return a.topic < b.topic ? -1 : 1;
  return a.partition - b.partition;
}

export class TransactionAdmin {
  readonly timeoutMs: number;

  constructor(
    readonly cluster: ClusterClient,
    options: { timeoutMs?: number } = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? cluster.defaultApiTimeoutMs;
  }

  /**
   * ListTransactions on every broker: the listings by coordinator id (brokers in id order). `states`
   * and `producerIds` filter as in Kafka's ListTransactionsOptions; `durationMs` (ListTransactions v1)
   * keeps the transactions running longer than that.
   */
  async listTransactions(
    options: { states?: readonly string[]; producerIds?: readonly bigint[]; durationMs?: bigint } = {},
  ): Promise<Map<number, TransactionListing[]>> {
    const md = await this.cluster.withRetries(
      "Metadata",
      () => this.cluster.refreshMetadata([]),
      this.timeoutMs,
    );
    const nodes = [...md.brokers.keys()].sort((a, b) => a - b);
    const duration = options.durationMs ?? -1n;
    const perBroker = await Promise.all(
      nodes.map((id) =>
        this.cluster.withRetries(
          `ListTransactions(broker ${id})`,
          async () => {
            const conn = await this.cluster.connectionTo(id);
            const version = conn.versionFor(Apis.ListTransactions, { min: duration >= 0n ? 1 : 0 });
            const res = await conn.send(Apis.ListTransactions, version, {
              stateFilters: [...(options.states ?? [])],
              producerIdFilters: [...(options.producerIds ?? [])],
              durationFilter: duration,
            });
            if (res.errorCode !== ErrorCode.NONE) throw new KafkaClientError(res.errorCode);
            return res.transactionStates.map(
              (t): TransactionListing => ({
                transactionalId: t.transactionalId,
                producerId: t.producerId,
                state: t.transactionState,
              }),
            );
          },
          this.timeoutMs,
        ),
      ),
    );
    return new Map(nodes.map((id, i) => [id, perBroker[i]]));
  }

  /** DescribeTransactions at each id's coordinator; an id-level error comes back in `error`. */
  async describeTransactions(transactionalIds: readonly string[]): Promise<TransactionDescription[]> {
    return Promise.all(
      transactionalIds.map(async (transactionalId): Promise<TransactionDescription> => {
        let coordinatorId = -1;
        try {
          return await this.cluster.withRetries(
            `DescribeTransactions(${transactionalId})`,
            async () => {
              const node = await this.cluster.findCoordinator(transactionalId, "transaction");
              coordinatorId = node.nodeId;
              const conn = await this.cluster.connectionTo(node.nodeId);
              const res = await conn.send(
                Apis.DescribeTransactions,
                conn.versionFor(Apis.DescribeTransactions),
                {
                  transactionalIds: [transactionalId],
                },
              );
              const t = res.transactionStates.find((x) => x.transactionalId === transactionalId);
              if (!t)
                throw KafkaClientError.of(
                  "UNKNOWN_SERVER_ERROR",
                  `No description of transactional id ${transactionalId}`,
                );
              if (t.errorCode !== ErrorCode.NONE) throw transactionalIdError(t.errorCode, transactionalId);
              return {
                transactionalId,
                coordinatorId: node.nodeId,
                state: t.transactionState,
                producerId: t.producerId,
                producerEpoch: t.producerEpoch,
                transactionTimeoutMs: t.transactionTimeoutMs,
                transactionStartTimeMs: t.transactionStartTimeMs < 0n ? undefined : t.transactionStartTimeMs,
                topicPartitions: t.topics
                  .flatMap((d) => d.partitions.map((partition) => ({ topic: d.topic, partition })))
                  .sort(byTopicPartition),
              };
            },
            this.timeoutMs,
          );
        } catch (e) {
          if (!(e instanceof KafkaClientError)) throw e;
          return {
            transactionalId,
            coordinatorId,
            state: "Unknown",
            producerId: -1n,
            producerEpoch: -1,
            transactionTimeoutMs: -1,
            transactionStartTimeMs: undefined,
            topicPartitions: [],
            error: e,
          };
        }
      }),
    );
  }

  /**
   * DescribeProducers for one partition at its leader (or at `brokerId`, any replica): the active
   * producers in the broker's order. Throws the partition's error.
   */
  async describeProducers(
    topic: string,
    partition: number,
    options: { brokerId?: number } = {},
  ): Promise<ProducerState[]> {
    return this.cluster.withRetries(
      `DescribeProducers(${topic}-${partition})`,
      async (attempt) => {
        const conn = await this.brokerFor(topic, partition, attempt, options.brokerId);
        const res = await conn.send(Apis.DescribeProducers, conn.versionFor(Apis.DescribeProducers), {
          topics: [{ name: topic, partitionIndexes: [partition] }],
        });
        const p = res.topics
          .find((t) => t.name === topic)
          ?.partitions.find((x) => x.partitionIndex === partition);
        if (!p)
          throw KafkaClientError.of(
            "UNKNOWN_SERVER_ERROR",
            `No producer state of partition ${topic}-${partition}`,
          );
        if (p.errorCode !== ErrorCode.NONE) throw new KafkaClientError(p.errorCode, p.errorMessage);
        return p.activeProducers.map(
          (s): ProducerState => ({
            producerId: s.producerId,
            producerEpoch: s.producerEpoch,
            lastSequence: s.lastSequence,
            lastTimestamp: s.lastTimestamp,
            coordinatorEpoch: s.coordinatorEpoch < 0 ? undefined : s.coordinatorEpoch,
            currentTransactionStartOffset: s.currentTxnStartOffset < 0n ? undefined : s.currentTxnStartOffset,
          }),
        );
      },
      this.timeoutMs,
    );
  }

  /**
   * Kafka's Admin.abortTransaction: a WriteTxnMarkers ABORT for one partition, sent to its leader with
   * the producer's id and epoch and the coordinator epoch. Throws the partition's error
   * (INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED, …); leader changes are retried.
   */
  async abortTransaction(spec: AbortTransactionSpec): Promise<void> {
    const { topic, partition } = spec;
    await this.cluster.withRetries(
      `WriteTxnMarkers(${topic}-${partition})`,
      async (attempt) => {
        const conn = await this.brokerFor(topic, partition, attempt);
        const res = await conn.send(Apis.WriteTxnMarkers, conn.versionFor(Apis.WriteTxnMarkers), {
          markers: [
            {
              producerId: spec.producerId,
              producerEpoch: spec.producerEpoch,
              transactionResult: false,
              topics: [{ name: topic, partitionIndexes: [partition] }],
              coordinatorEpoch: spec.coordinatorEpoch,
            },
          ],
        });
        const p = res.markers
          .find((m) => m.producerId === spec.producerId)
          ?.topics.find((t) => t.name === topic)
          ?.partitions.find((x) => x.partitionIndex === partition);
        if (!p)
          throw KafkaClientError.of(
            "UNKNOWN_SERVER_ERROR",
            `No marker result for partition ${topic}-${partition}`,
          );
        if (p.errorCode !== ErrorCode.NONE) throw new KafkaClientError(p.errorCode);
      },
      this.timeoutMs,
    );
  }

  /** The connection to `brokerId`, else to the partition's leader (metadata refreshed on retries). */
  private async brokerFor(
    topic: string,
    partition: number,
    attempt: number,
    brokerId?: number,
  ): Promise<BrokerConnection> {
    if (brokerId !== undefined) return this.cluster.connectionTo(brokerId);
    // topicMetadata refreshes an unknown topic, so a topic or partition missing from it does not exist.
    const t = await this.cluster.topicMetadata(topic, attempt > 0).catch((e: unknown) => {
      if (e instanceof KafkaClientError && e.code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        throw new UnknownTopicOrPartitionError(`Topic '${topic}' does not exist`);
      throw e;
    });
    const p = t.partitions.find((x) => x.partition === partition);
    if (!p) throw new UnknownTopicOrPartitionError(`Partition ${topic}-${partition} does not exist`);
    if (p.leader < 0)
      throw KafkaClientError.of("LEADER_NOT_AVAILABLE", `Partition ${topic}-${partition} has no leader`);
    return this.cluster.connectionTo(p.leader);
  }
}

function transactionalIdError(code: number, transactionalId: string): KafkaClientError {
  if (code === ErrorCode.TRANSACTIONAL_ID_NOT_FOUND)
    return KafkaClientError.of(
      "TRANSACTIONAL_ID_NOT_FOUND",
      `TransactionalId \`${transactionalId}\` not found`,
    );
  return new KafkaClientError(code);
}

/** A topic or partition that the (freshly refreshed) metadata does not list: not worth retrying. */
export class UnknownTopicOrPartitionError extends Error {
  override readonly name = "UnknownTopicOrPartitionError";
  readonly code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
}
