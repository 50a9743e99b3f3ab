// The broker's coordinators (Kafka's KafkaServer.startup: the group coordinator, then the transaction
// coordinator with its producer id manager), each loading its partitions of __consumer_offsets /
// __transaction_state as this broker becomes their leader (coordinatorLeadership: Kafka's
// onLeadershipChange):
//   GroupCoordinatorComponent — classic and KIP-848 groups and their offsets;
//   TransactionCoordinatorComponent — transactional ids, the markers sent to the partitions' leaders
//     (TxnMarkerRouter) and KIP-890's verification of transactional appends (AddPartitionsToTxnManager).

import type { LeadershipListener } from "../controller-requests.js";
import { GroupCoordinator } from "../coordinator/group/group-coordinator.js";
import { groupConfigFrom, offsetConfigFrom } from "../coordinator/group/group-coordinator-config.js";
import {
  GROUP_METADATA_TOPIC_NAME,
  GroupMetadataManager,
} from "../coordinator/group/group-metadata-manager.js";
import { AddPartitionsToTxnManager } from "../coordinator/transaction/add-partitions-to-txn-manager.js";
import { TransactionCoordinator } from "../coordinator/transaction/transaction-coordinator.js";
import {
  TRANSACTION_STATE_TOPIC_NAME,
  TransactionStateManager,
} from "../coordinator/transaction/transaction-state-manager.js";
import { TxnMarkerRouter } from "../coordinator/transaction/txn-marker-router.js";
import { ProducerIdManager } from "../producer-id-manager.js";
import type { MetadataCacheComponent, MetadataStoreComponent } from "./metadata-components.js";
import type { ReplicaManagerComponent } from "./replication-components.js";
import { ComponentOf, type ServerContext, started } from "./server-component.js";

export class GroupCoordinatorComponent extends ComponentOf<GroupCoordinator> {
  constructor(
    ctx: ServerContext,
    private readonly replicaManager: ReplicaManagerComponent,
  ) {
    super(ctx, "group coordinator", "shutting down the group coordinator");
  }

  startup(): void {
    const { config, time, scheduler } = this.ctx;
    const replicaManager = this.replicaManager.get();
    const groups = this.hold(
      new GroupCoordinator(
        config.brokerId,
        groupConfigFrom(config),
        new GroupMetadataManager(config.brokerId, offsetConfigFrom(config), replicaManager, time, scheduler),
        time,
        scheduler,
      ),
    );
    groups.startup();
    // Transactional offset commits become committed when their marker reaches __consumer_offsets.
    replicaManager.onTxnMarkerAppended((tp, producerId, _epoch, committed) => {
      if (tp.topic === GROUP_METADATA_TOPIC_NAME)
        groups.onTransactionCompleted(tp.partition, producerId, committed);
    });
  }

  shutdown(): void {
    this.current?.shutdown();
  }
}

/** Holds the TransactionCoordinator, with its ProducerIdManager, TxnMarkerRouter and AddPartitionsToTxnManager. */
export class TransactionCoordinatorComponent extends ComponentOf<TransactionCoordinator> {
  private _producerIdManager: ProducerIdManager | undefined;
  private txnMarkerRouter: TxnMarkerRouter | undefined;
  private _addPartitionsToTxnManager: AddPartitionsToTxnManager | undefined;

  constructor(
    ctx: ServerContext,
    private readonly replicaManager: ReplicaManagerComponent,
    private readonly metadataCache: MetadataCacheComponent,
    private readonly metadataStore: MetadataStoreComponent,
  ) {
    super(ctx, "transaction coordinator", "shutting down the transaction coordinator");
  }

  startup(): void {
    const { config, time, scheduler } = this.ctx;
    const cache = this.metadataCache.get();
    const replicaManager = this.replicaManager.get();
    const producerIdManager = new ProducerIdManager(config.brokerId, this.metadataStore.get());
    this._producerIdManager = producerIdManager;
    // Markers go to each partition's leader: this broker's ReplicaManager, or WriteTxnMarkers to another.
    const txnMarkerRouter = new TxnMarkerRouter({
      brokerId: config.brokerId,
      leaderOf: (tp) => cache.partitionState(tp.topic, tp.partition)?.leader ?? -1,
      endpointOf: (id) => cache.endpointFor(id, config.interBrokerListenerName),
      appendLocally: (markers) => replicaManager.appendTxnMarkers(markers),
      requestTimeoutMs: config.getInt("request.timeout.ms"),
      security: config.interBrokerSecurity,
    });
    this.txnMarkerRouter = txnMarkerRouter;
    const coordinator = this.hold(
      new TransactionCoordinator(
        config.brokerId,
        {
          transactionMaxTimeoutMs: config.getInt("transaction.max.timeout.ms"),
          abortTimedOutTransactionsIntervalMs: config.getInt(
            "transaction.abort.timed.out.transaction.cleanup.interval.ms",
          ),
        },
        new TransactionStateManager(
          config.brokerId,
          {
            transactionLogNumPartitions: config.getInt("transaction.state.log.num.partitions"),
            transactionalIdExpirationMs: config.getInt("transactional.id.expiration.ms"),
            removeExpiredTransactionalIdsIntervalMs: config.getInt(
              "transaction.remove.expired.transaction.cleanup.interval.ms",
            ),
            transactionLogLoadBufferSize: config.getInt("transaction.state.log.load.buffer.size"),
            requestTimeoutMs: config.getInt("request.timeout.ms"),
          },
          replicaManager,
          time,
          scheduler,
        ),
        () => producerIdManager.generateProducerId(),
        txnMarkerRouter.send,
        (topic) => cache.hasTopic(topic),
        time,
        scheduler,
      ),
    );
    coordinator.startup();
    this._addPartitionsToTxnManager = new AddPartitionsToTxnManager({
      brokerId: config.brokerId,
      coordinator,
      leaderOf: (tp) => cache.partitionState(tp.topic, tp.partition)?.leader ?? -1,
      endpointOf: (id) => cache.endpointFor(id, config.interBrokerListenerName),
      requestTimeoutMs: config.getInt("request.timeout.ms"),
      security: config.interBrokerSecurity,
    });
  }

  get producerIdManager(): ProducerIdManager {
    return started(this._producerIdManager, "transaction coordinator");
  }

  get addPartitionsToTxnManager(): AddPartitionsToTxnManager {
    return started(this._addPartitionsToTxnManager, "transaction coordinator");
  }

  /** The coordinator, then (even when that failed) the connections of the router and the verifier. */
  async shutdown(): Promise<void> {
    try {
      await this.current?.shutdown();
    } finally {
      this.txnMarkerRouter?.close();
      this._addPartitionsToTxnManager?.close();
    }
  }
}

/**
 * The coordinators follow this broker's leadership of __consumer_offsets / __transaction_state partitions
 * (Kafka's onLeadershipChange): a partition it leads now is loaded, one it no longer leads unloaded.
 */
export function coordinatorLeadership(
  groups: GroupCoordinatorComponent,
  transactions: TransactionCoordinatorComponent,
): LeadershipListener {
  const onLeadershipChange = (topic: string, partition: number, leaderEpoch: number | undefined): void => {
    if (topic === TRANSACTION_STATE_TOPIC_NAME) {
      const tc = transactions.current;
      if (leaderEpoch !== undefined) tc?.onElection(partition, leaderEpoch);
      else tc?.onResignation(partition);
    } else if (topic === GROUP_METADATA_TOPIC_NAME) {
      const gc = groups.current;
      if (leaderEpoch !== undefined) gc?.onElection(partition);
      else gc?.onResignation(partition);
    }
  };
  return {
    onBecomeLeader: (topic, partition, leaderEpoch) => onLeadershipChange(topic, partition, leaderEpoch),
    onResign: (topic, partition) => onLeadershipChange(topic, partition, undefined),
  };
}
