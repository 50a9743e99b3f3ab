// The broker's replication and controller components (Kafka's KafkaServer.startup: the ReplicaManager with
// its fetchers and AlterPartitionManager, the KafkaController; KafkaApis' LeaderAndIsr / UpdateMetadata /
// StopReplica handling):
//   ReplicaManagerComponent — the partitions this broker hosts, with the replication throttles; at
//     shutdown, delayed fetches and produces completed and high watermarks checkpointed;
//   ReplicaFetchersComponent — the followers' fetchers (ReplicaFetcherManager);
//   ControllerRequestsComponent — what the controller's requests do here (ControllerRequests);
//   ControllerComponent — this broker's KafkaController, built before the request handlers (which answer
//     with it) and run for election by ControllerElection once the broker has registered;
//   ControllerElection — runs for controller, then awaits this broker's first UpdateMetadata (bounded);
//   AlterPartitionManagerComponent — ISR changes sent to the controller (AlterPartition).

import { KafkaController } from "../controller/kafka-controller.js";
import { ControllerRequests, type LeadershipListener } from "../controller-requests.js";
import type { BrokerMetrics } from "../metrics/broker-metrics.js";
import type { ReplicationQuotas } from "../quota/replication-quotas.js";
import { AlterPartitionManager } from "../replication/alter-partition-manager.js";
import { ReplicaFetcherManager } from "../replication/replica-fetcher-manager.js";
import { ReplicaManager } from "../replication/replica-manager.js";
import { replicaManagerConfigFrom } from "../replication/replica-manager-config.js";
import type { MetadataCacheComponent, MetadataStoreComponent } from "./metadata-components.js";
import { ComponentOf, type ServerContext, type Startable, started } from "./server-component.js";
import type { LogManagerComponent } from "./storage-components.js";

export class ReplicaManagerComponent extends ComponentOf<ReplicaManager> {
  constructor(
    ctx: ServerContext,
    private readonly logManager: LogManagerComponent,
    private readonly metadataCache: MetadataCacheComponent,
    private readonly replicationQuotas: ReplicationQuotas,
    private readonly metrics: BrokerMetrics,
  ) {
    super(ctx, "replica manager", "shutting down the replica manager");
  }

  startup(): void {
    const { config, time, scheduler } = this.ctx;
    const replicaManager = this.hold(
      new ReplicaManager(
        config.brokerId,
        this.logManager.get(),
        time,
        scheduler,
        replicaManagerConfigFrom(config, this.metadataCache.get()),
        this.metrics.brokerTopicStats,
      ),
    );
    replicaManager.leaderReplicationQuota = this.replicationQuotas.leader;
    // replica.alter.log.dirs.io.max.bytes.per.second bounds the copy of replicas moving between log dirs.
    replicaManager.setAlterLogDirsQuota(this.replicationQuotas.alterLogDirs);
    replicaManager.startup();
  }

  shutdown(): void {
    this.current?.shutdown();
  }
}

export class ReplicaFetchersComponent extends ComponentOf<ReplicaFetcherManager> {
  constructor(
    ctx: ServerContext,
    private readonly replicaManager: ReplicaManagerComponent,
    private readonly brokerEpoch: () => bigint,
    private readonly replicationQuotas: ReplicationQuotas,
    /** A leader's endpoint on the inter-broker listener. */
    private readonly leaderEndpoint: (brokerId: number) => { host: string; port: number } | undefined,
  ) {
    super(ctx, "replica fetcher manager", "shutting down the replica fetchers");
  }

  startup(): void {
    const { config, time } = this.ctx;
    const fetchers = new ReplicaFetcherManager(
      this.replicaManager.get(),
      {
        brokerId: config.brokerId,
        fetchMaxBytes: config.getInt("replica.fetch.max.bytes"),
        responseMaxBytes: config.getInt("replica.fetch.response.max.bytes"),
        maxWaitMs: config.getInt("replica.fetch.wait.max.ms"),
        minBytes: config.getInt("replica.fetch.min.bytes"),
        backoffMs: config.getInt("replica.fetch.backoff.ms"),
        socketTimeoutMs: config.getInt("replica.socket.timeout.ms"),
        brokerEpoch: this.brokerEpoch,
        security: config.interBrokerSecurity,
        quota: this.replicationQuotas.follower,
      },
      this.leaderEndpoint,
      time,
      config.getInt("num.replica.fetchers"),
    );
    this.hold(fetchers);
  }

  async shutdown(): Promise<void> {
    await this.current?.shutdown();
  }
}

/** Nothing to stop: the controller's requests end with the socket server. */
export class ControllerRequestsComponent implements Startable {
  private controllerRequests: ControllerRequests | undefined;

  constructor(
    private readonly ctx: ServerContext,
    private readonly brokerEpoch: () => bigint,
    private readonly replicaManager: ReplicaManagerComponent,
    private readonly metadataCache: MetadataCacheComponent,
    /** The coordinators, told of this broker's leadership of their partitions. */
    private readonly leadership: LeadershipListener,
    private readonly fetchers: ReplicaFetchersComponent,
  ) {}

  startup(): void {
    this.controllerRequests = new ControllerRequests(
      this.ctx.config.brokerId,
      this.brokerEpoch,
      this.replicaManager.get(),
      this.metadataCache.get(),
      this.leadership,
      this.fetchers.get(),
    );
  }

  get(): ControllerRequests {
    return started(this.controllerRequests, "controller request handling");
  }
}

export class ControllerComponent extends ComponentOf<KafkaController> {
  constructor(
    ctx: ServerContext,
    private readonly metadataStore: MetadataStoreComponent,
    private readonly controllerRequests: ControllerRequestsComponent,
    private readonly metrics: BrokerMetrics,
    /** Registers this broker again (after a session expiry, before re-election). */
    private readonly registerBroker: () => Promise<void>,
  ) {
    super(ctx, "controller", "shutting down the controller");
  }

  /** Builds the controller; it runs for election later (ControllerElection). */
  startup(): void {
    const { config, time, scheduler } = this.ctx;
    const controller = new KafkaController(this.metadataStore.zkClient, {
      brokerId: config.brokerId,
      time,
      deleteTopicEnable: config.deleteTopicEnable,
      uncleanLeaderElectionEnable: config.getBoolean("unclean.leader.election.enable"),
      // The controller's requests go to the control-plane listener when there is one (Kafka's KIP-291).
      interBrokerListenerName: config.controlPlaneListenerName ?? config.interBrokerListenerName,
      security: config.controlPlaneSecurity,
      localReceiver: this.controllerRequests.get(),
      requestTimeoutMs: config.getInt("controller.socket.timeout.ms"),
      registerBroker: this.registerBroker,
      stats: this.metrics.replication,
      autoLeaderRebalance: config.getBoolean("auto.leader.rebalance.enable")
        ? {
            scheduler,
            imbalancePerBrokerPercentage: config.getInt("leader.imbalance.per.broker.percentage"),
            checkIntervalMs: Number(config.getLong("leader.imbalance.check.interval.seconds")) * 1000,
          }
        : undefined,
    });
    this.hold(controller);
  }

  async shutdown(): Promise<void> {
    await this.current?.shutdown();
  }
}

export class ControllerElection implements Startable {
  constructor(
    private readonly ctx: ServerContext,
    private readonly controller: ControllerComponent,
    private readonly metadataCache: MetadataCacheComponent,
  ) {}

  /** Runs for controller; the controller's requests (to this broker too) start flowing. */
  async startup(): Promise<void> {
    const { config, scheduler } = this.ctx;
    const controller = this.controller.get();
    const cache = this.metadataCache.get();
    await controller.startup();
    if (controller.isActive) await controller.localRequestsSent();
    // Until the first UpdateMetadata, this broker would answer Metadata without brokers: wait for it (bounded).
    await cache.waitUntil(() => cache.isBrokerAlive(config.brokerId), 10_000, scheduler);
  }
}

export class AlterPartitionManagerComponent extends ComponentOf<AlterPartitionManager> {
  constructor(
    ctx: ServerContext,
    private readonly brokerEpoch: () => bigint,
    private readonly replicaManager: ReplicaManagerComponent,
    private readonly controller: ControllerComponent,
    private readonly metadataCache: MetadataCacheComponent,
    private readonly metrics: BrokerMetrics,
  ) {
    super(ctx, "alter-partition manager", "shutting down the alter-partition manager");
  }

  startup(): void {
    const { config, scheduler } = this.ctx;
    const replicaManager = this.replicaManager.get();
    const controller = this.controller.get();
    const cache = this.metadataCache.get();
    const manager = new AlterPartitionManager(
      config.brokerId,
      this.brokerEpoch,
      replicaManager,
      {
        local: () =>
          controller.isActive ? (id, epoch, items) => controller.alterPartition(id, epoch, items) : undefined,
        controllerId: () => cache.controllerId,
        endpointOf: (id) => cache.endpointFor(id, config.interBrokerListenerName),
        security: config.interBrokerSecurity,
      },
      scheduler,
      config.getLong("replica.lag.time.max.ms"),
      config.getInt("controller.socket.timeout.ms"),
      this.metrics.replication,
    );
    this.hold(manager);
    replicaManager.followerFetchListener = (p, replicaId) => manager.onFollowerFetch(p, replicaId);
    manager.startup();
  }

  shutdown(): void {
    this.current?.shutdown();
  }
}
