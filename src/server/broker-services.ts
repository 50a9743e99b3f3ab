// BrokerServices: what the API handlers are built over. The broker server creates each service once and
// passes this object to every handler factory (`server/handlers/NN-name.ts`).

import type { Scheduler } from "../common/scheduler.js";
import type { Time } from "../common/time.js";
import type { LogManager } from "../storage/log-manager.js";
import type { KafkaController } from "./controller/kafka-controller.js";
import type { ControllerRequests } from "./controller-requests.js";
import type { GroupCoordinator } from "./coordinator/group/group-coordinator.js";
import type { AddPartitionsToTxnManager } from "./coordinator/transaction/add-partitions-to-txn-manager.js";
import type { TransactionCoordinator } from "./coordinator/transaction/transaction-coordinator.js";
import type { KafkaConfig } from "./kafka-config.js";
import type { MetadataCache } from "./metadata/metadata-cache.js";
import type { TopicAdmin } from "./metadata/topic-admin.js";
import type { ProducerIdManager } from "./producer-id-manager.js";
import type { ReplicationQuotas } from "./quota/replication-quotas.js";
import type { RequestThrottling } from "./quota/request-throttling.js";
import type { ReplicaManager } from "./replication/replica-manager.js";

export interface BrokerServices {
  readonly brokerId: number;
  readonly config: KafkaConfig;
  readonly time: Time;
  readonly scheduler: Scheduler;
  readonly logManager: LogManager;
  /** Cluster metadata as this broker knows it: brokers, topics, partitions, leaders, topic configs. */
  readonly metadata: MetadataCache;
  /** Topic and config changes (CreateTopics, DeleteTopics, CreatePartitions, Alter/IncrementalAlterConfigs). */
  readonly topicAdmin: TopicAdmin;
  /** The partitions this broker hosts: produce, fetch, offsets. */
  readonly replicaManager: ReplicaManager;
  /** Consumer groups and their committed offsets (__consumer_offsets). */
  readonly groupCoordinator: GroupCoordinator;
  /** Producer ids for InitProducerId (blocks claimed from /latest_producer_id_block). */
  readonly producerIdManager: ProducerIdManager;
  /** Transactional ids and their transactions (__transaction_state). */
  readonly transactionCoordinator: TransactionCoordinator;
  /** KIP-890 verification of transactional appends with the transaction's coordinator (here or elsewhere). */
  readonly addPartitionsToTxnManager: AddPartitionsToTxnManager;
  /** This broker's controller (active or not): ControlledShutdown, and the NOT_CONTROLLER checks. */
  readonly controller: KafkaController;
  /** LeaderAndIsr / UpdateMetadata / StopReplica from the controller. */
  readonly controllerRequests: ControllerRequests;
  /**
   * The replication throttles: `leader` (Fetch from followers), `follower` (this broker's fetchers) and
   * `alterLogDirs` for moving a replica between log dirs (replica.alter.log.dirs.io.max.bytes.per.second):
   * the copier checks `alterLogDirs.isQuotaExceeded()` before each chunk and `record()`s the bytes copied.
   */
  readonly replicationQuotas: ReplicationQuotas;
  /** Client quotas (Fetch caps its size to the consumer's quota window); absent in some tests. */
  readonly clientQuotas?: RequestThrottling;
}
