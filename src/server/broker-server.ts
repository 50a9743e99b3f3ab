// KafkaServer: one broker's lifecycle (Kafka's KafkaServer in ZooKeeper mode). Owns the order in which the
// broker's parts start and stop, and nothing else:
//
//   startup:  Time/Scheduler → every log dir locked (`.lock`; one held by another broker, in any process,
//             stops the startup here, before anything in the dirs is read) → socket server bound
//             (requests held until the end, so the registered endpoints carry the bound ports) → metadata
//             store (ZooKeeper with zookeeper.connect, else the embedded store in
//             `<first log dir>/__tributary_metadata.json`) → top-level znodes, cluster
//             id, generated broker.id → LogManager (loads and recovers logs in slices, checks
//             meta.properties) → metadata cache (configs) → ReplicaManager → GroupCoordinator and
//             TransactionCoordinator (they load their partitions as leadership arrives) → replica fetchers,
//             ControllerRequests, controller, AlterPartitionManager → BrokerServices + request pipeline →
//             broker registration (/brokers/ids/<id>, the broker epoch) → controller election → the first
//             UpdateMetadata awaited (bounded; the controller's requests are served from here on) → the
//             metrics endpoint → request processing enabled.
//   shutdown: controlled shutdown (a cluster: leadership moves away first) → socket server stops accepting
//             and closes connections → TransactionCoordinator → GroupCoordinator → replica fetchers →
//             ReplicaManager (completes delayed fetches/produces, checkpoints high watermarks) → handlers
//             still running are awaited (bounded) → controller, metadata cache, metadata store (ephemeral
//             znodes go) → LogManager (checkpoints, `.kafka_cleanshutdown`) → log dir locks released →
//             scheduler. Each step runs even when an earlier one failed; the first error is reported after
//             all ran.
//   The Prometheus endpoint (metrics.http.listener) starts just before request processing is enabled and
//   stops first on shutdown; failing to bind it leaves the broker running without metrics.
//
// Log lines follow Kafka's: "[KafkaServer id=0] starting", "... started", "... shutting down",
// "... shut down completed".

import { BrokerConnection } from "../client/network/broker-connection.js";
import { Logger } from "../common/logger.js";
import { MemoryPool } from "../common/memory-pool.js";
import { type Scheduler, SystemScheduler } from "../common/scheduler.js";
import { SYSTEM_TIME, type Time } from "../common/time.js";
import { ErrorCode, errorNameOf } from "../protocol/errors.js";
import { ApiKey, Apis } from "../protocol/generated/api-table.js";
import { readBrokerMetadata } from "../storage/checkpoint/broker-metadata.js";
import { logConfigFrom } from "../storage/log-config.js";
import { LogDirLocks } from "../storage/log-dir-lock.js";
import { releaseSpaceReservesOfFullDirs } from "../storage/log-dir-space.js";
import { LogManager } from "../storage/log-manager.js";
import { defaultAdvertisedHost } from "./advertised-host.js";
import { AuthHelper } from "./auth-helper.js";
import type { BrokerServices } from "./broker-services.js";
import { KafkaController } from "./controller/kafka-controller.js";
import { ControllerRequests } from "./controller-requests.js";
import { GroupCoordinator } from "./coordinator/group/group-coordinator.js";
import {
  GROUP_METADATA_TOPIC_NAME,
  GroupMetadataManager,
} from "./coordinator/group/group-metadata-manager.js";
import { AddPartitionsToTxnManager } from "./coordinator/transaction/add-partitions-to-txn-manager.js";
import { TransactionCoordinator } from "./coordinator/transaction/transaction-coordinator.js";
import {
  TRANSACTION_STATE_TOPIC_NAME,
  TransactionStateManager,
} from "./coordinator/transaction/transaction-state-manager.js";
import { TxnMarkerRouter } from "./coordinator/transaction/txn-marker-router.js";
import { type EndPoint, endpointString } from "./end-point.js";
import type { HandlerRegistration } from "./handler.js";
import { buildHandlers } from "./handlers/index.js";
import type { KafkaConfig } from "./kafka-config.js";
import { dynamicBrokerLogConfig } from "./metadata/config-definitions.js";
import { EmbeddedMetadataStore } from "./metadata/embedded-metadata-store.js";
import { KafkaZkClient, type PreviousRegistration } from "./metadata/kafka-zk-client.js";
import { MetadataCache, type MetadataDelta } from "./metadata/metadata-cache.js";
import type { MetadataStore } from "./metadata/metadata-store.js";
import { readRegistrationSession, writeRegistrationSession } from "./metadata/registration-session-file.js";
import { TopicAdmin, topicAdminOptionsFrom } from "./metadata/topic-admin.js";
import { DEFAULT_BROKER_ENTITY } from "./metadata/zk-data.js";
import { ZooKeeperMetadataStore } from "./metadata/zookeeper-metadata-store.js";
import { BROKER_STATE, BrokerMetrics } from "./metrics/broker-metrics.js";
import { MetricsHttpServer } from "./metrics/metrics-http-server.js";
import { ProducerIdManager } from "./producer-id-manager.js";
import { ClientQuotas } from "./quota/client-quotas.js";
import { ReplicationQuotas } from "./quota/replication-quotas.js";
import { RequestThrottling } from "./quota/request-throttling.js";
import { AlterPartitionManager } from "./replication/alter-partition-manager.js";
import { ReplicaFetcherManager } from "./replication/replica-fetcher-manager.js";
import { ReplicaManager } from "./replication/replica-manager.js";
import type { ConnectionInfo, RequestOutcome } from "./request-pipeline.js";
import { RequestPipeline } from "./request-pipeline.js";
import { AclAuthorizer, parseSuperUsers } from "./security/authorizer/acl-authorizer.js";
import { CredentialCache } from "./security/credential-cache.js";
import { SocketServer } from "./socket-server.js";

export interface KafkaServerOptions {
  readonly time?: Time;
  readonly scheduler?: Scheduler;
  /** Handlers to serve instead of the static list (tests). */
  readonly handlers?: readonly HandlerRegistration[];
}

type State = "NotRunning" | "Starting" | "Running" | "PendingControlledShutdown" | "ShuttingDown";

export class KafkaServer {
  readonly time: Time;
  readonly scheduler: Scheduler;
  readonly logger: Logger;
  private state: State = "NotRunning";
  private _socketServer: SocketServer | undefined;
  private _logManager: LogManager | undefined;
  /** The `.lock` of every log dir, held from the start of startup to the end of shutdown. */
  private logDirLocks: LogDirLocks | undefined;
  private pipeline: RequestPipeline | undefined;
  private enableProcessing!: () => void;
  private readonly processingEnabled: Promise<void>;
  private shutdownPromise: Promise<void> | undefined;
  private readonly shutdownHooks: Array<() => void | Promise<void>> = [];
  /** Request frames and fetch reads (Kafka's MemoryPool for the network layer). */
  readonly memoryPool = new MemoryPool();
  /** SCRAM credentials of /config/users, kept up to date from the metadata cache. */
  readonly credentialCache = new CredentialCache();
  private _advertised: EndPoint[] = [];
  private store: MetadataStore | undefined;
  private authorizer: AclAuthorizer | undefined;
  private zkClient: KafkaZkClient | undefined;
  private controller: KafkaController | undefined;
  /** The czxid of this broker's registration znode (Kafka's broker epoch); -1 before it registers. */
  brokerEpoch = -1n;
  metadataCache: MetadataCache | undefined;
  replicaManager: ReplicaManager | undefined;
  private replicaFetcherManager: ReplicaFetcherManager | undefined;
  private alterPartitionManager: AlterPartitionManager | undefined;
  private txnMarkerRouter: TxnMarkerRouter | undefined;
  private addPartitionsToTxnManager: AddPartitionsToTxnManager | undefined;
  groupCoordinator: GroupCoordinator | undefined;
  transactionCoordinator: TransactionCoordinator | undefined;
  /** The broker's metrics (served on metrics.http.listener). */
  readonly metrics: BrokerMetrics;
  /** The replication throttles (leader, follower, alter-log-dirs), driven by the dynamic configs. */
  readonly replicationQuotas: ReplicationQuotas;
  private metricsServer: MetricsHttpServer | undefined;

  constructor(
    readonly config: KafkaConfig,
    private readonly options: KafkaServerOptions = {},
  ) {
    this.time = options.time ?? SYSTEM_TIME;
    this.logger = new Logger("kafka.server.KafkaServer", `KafkaServer id=${config.brokerId}`);
    this.scheduler =
      options.scheduler ??
      new SystemScheduler((name, e) =>
        this.logger.error(`Uncaught error in scheduled task '${name}': ${(e as Error)?.stack ?? e}`),
      );
    this.processingEnabled = new Promise((resolve) => {
      this.enableProcessing = resolve;
    });
    this.replicationQuotas = new ReplicationQuotas(
      {
        brokerId: config.brokerId,
        replicationWindows: {
          samples: config.getInt("replication.quota.window.num"),
          windowSeconds: config.getInt("replication.quota.window.size.seconds"),
        },
        alterLogDirsWindows: {
          samples: config.getInt("alter.log.dirs.replication.quota.window.num"),
          windowSeconds: config.getInt("alter.log.dirs.replication.quota.window.size.seconds"),
        },
      },
      () => this.time.milliseconds(),
      new Logger("kafka.server.ReplicationQuotaManager", `broker=${config.brokerId}`),
    );
    this.metrics = new BrokerMetrics(this.time);
    this.metrics.bind({
      replicationQuotas: () => this.replicationQuotas,
      brokerState: () => BROKER_STATE[this.state],
      replicaManager: () => this.replicaManager,
      logManager: () => this._logManager,
      metadata: () => this.metadataCache,
      isActiveController: () => this.controller?.isActive ?? false,
      connectionsByListener: () => this._socketServer?.connectionsByListener() ?? new Map(),
      socketServer: () => {
        const ss = this._socketServer;
        if (ss === undefined) return undefined;
        return {
          memoryPoolAvailable: ss.requestMemory.availableBytes,
          memoryPoolUsed: ss.requestMemory.usedBytes,
          memoryPoolWaits: ss.requestMemory.waits,
          receiveTimeouts: ss.receiveTimeoutCount,
          nearFileLimit: ss.nearFileLimitCount,
        };
      },
      replicaFetcherMaxLag: () => Number(this.replicaFetcherManager?.maxLag() ?? 0n),
    });
  }

  /** The bound port of the metrics endpoint (undefined when disabled, not started or not bound). */
  get metricsPort(): number | undefined {
    return this.metricsServer?.port;
  }

  get brokerId(): number {
    return this.config.brokerId;
  }

  get socketServer(): SocketServer {
    if (this._socketServer === undefined) throw new Error("the socket server is not started");
    return this._socketServer;
  }

  get logManager(): LogManager {
    if (this._logManager === undefined) throw new Error("the log manager is not started");
    return this._logManager;
  }

  /** Bound port of a listener (default: the first). */
  boundPort(listenerName?: string): number {
    return this.socketServer.boundPort(listenerName);
  }

  /**
   * advertised.listeners with ports bound (0 → the bound port) and empty hosts → this host's name, or
   * localhost when that name does not lead back to this machine (advertised-host.ts).
   */
  get advertisedEndpoints(): readonly EndPoint[] {
    return this._advertised;
  }

  async startup(): Promise<void> {
    if (this.state !== "NotRunning") throw new Error(`KafkaServer is ${this.state}`);
    this.state = "Starting";
    this.logger.info("starting");
    // Before anything reads or writes the dirs (the embedded metadata store is in the first). A dir another
    // broker holds (LogDirLockedError, naming the dir and the pid) ends the startup with nothing touched.
    try {
      this.logDirLocks = LogDirLocks.acquire(this.config.logDirs);
      const storeDir = this.config.logDirs[0];
      const storeDirFailure = this.logDirLocks.failure(storeDir);
      if (this.config.zookeeperConnect === null && storeDirFailure !== undefined)
        throw new Error(
          `Cannot lock ${storeDir}, the log dir of the embedded metadata store: ${storeDirFailure.message}`,
        );
    } catch (e) {
      this.logDirLocks?.release();
      this.logDirLocks = undefined;
      this.state = "NotRunning";
      throw e;
    }
    try {
      // The socket server binds first (Kafka binds before registering the broker, so the registration
      // carries the bound ports) but holds every request until startup has finished.
      const processor = {
        process: async (conn: ConnectionInfo, frame: Buffer, receivedNs: bigint): Promise<RequestOutcome> => {
          // The controller's requests are served as soon as the pipeline exists (the broker waits for its
          // first UpdateMetadata during startup); everything else once startup has finished.
          if (!(this.pipeline !== undefined && isControlPlaneRequest(frame))) await this.processingEnabled;
          if (this.pipeline === undefined) return { kind: "close", reason: "the broker is shutting down" };
          return this.pipeline.process(conn, frame, receivedNs);
        },
        responseSent: (outcome: RequestOutcome, sentNs: bigint): void => {
          if (outcome.kind !== "close" && outcome.timing !== undefined)
            this.metrics.requestMetrics.record(outcome.timing, sentNs);
        },
      };
      this._socketServer = new SocketServer(
        this.config,
        processor,
        this.time,
        this.scheduler,
        this.memoryPool,
        this.credentialCache,
      );
      await this._socketServer.startup();
      this._advertised = await this.resolveAdvertised();

      // The metadata store: ZooKeeper (zookeeper.connect), or the embedded store in the first log dir.
      const config = this.config;
      // A full log dir gives back its space reserve before anything writes to it (the embedded metadata
      // store, in the first dir, compacts its journal at open): a broker restarted on a full disk starts.
      releaseSpaceReservesOfFullDirs(config.logDirs, config.getLong("log.dir.space.reserve.bytes"));
      const store = await this.openMetadataStore();
      this.store = store;
      const zk = new KafkaZkClient(store);
      this.zkClient = zk;
      await zk.createTopLevelPaths();
      // The embedded store re-created beside existing logs keeps their cluster id; a ZooKeeper without
      // /cluster/id is a new cluster (Kafka's getOrGenerateClusterId), and logs of another one are refused.
      const clusterId = await zk.getOrCreateClusterId(
        config.zookeeperConnect === null ? this.clusterIdFromMetaProperties() : undefined,
      );
      this.logger.info(`Cluster ID = ${clusterId}`);
      if (config.brokerId < 0) config.brokerId = await this.generateBrokerId(zk);

      // Logs are loaded (and recovered) before the broker registers, as Kafka does.
      this._logManager = new LogManager(
        { ...config.logManagerConfig(clusterId), logDirLocks: this.logDirLocks },
        this.time,
        this.scheduler,
      );
      // Sliced: the ZooKeeper session (already open) and the sockets stay served while logs load.
      await this._logManager.startupSliced();
      this._logManager.startTasks();
      // A log dir that goes offline, fills up or has space again tells the controller (Kafka's
      // LogDirFailureHandler → /log_dir_event_notification), which asks this broker about its replicas.
      // Events in one turn of the event loop (many partitions failing at once) make one notification.
      let logDirEventPending = false;
      this._logManager.addLogDirListener((dir, event) => {
        this.logger.info(`Log dir ${dir} is ${event}: telling the controller`);
        if (logDirEventPending) return;
        logDirEventPending = true;
        this.scheduler.schedule(
          "log-dir-event-notification",
          () => {
            logDirEventPending = false;
            zk.propagateLogDirEvent(config.brokerId).then(
              (path) => this.logger.info(`Told the controller about a log dir event (${path})`),
              (e) =>
                this.logger.error(
                  `Could not notify the controller about a log dir event: ${(e as Error).message}`,
                ),
            );
          },
          0,
        );
      });

      const cache = new MetadataCache(store, { brokerId: config.brokerId });
      this.metadataCache = cache;
      this.replicaManager = new ReplicaManager(
        config.brokerId,
        this._logManager,
        this.time,
        this.scheduler,
        {
          replicaHighWatermarkCheckpointIntervalMs: config.replicaHighWatermarkCheckpointIntervalMs,
          minInsyncReplicas: (topic) => {
            const v = Number(cache.topicConfig(topic)["min.insync.replicas"]);
            return Number.isInteger(v) && v > 0 ? v : config.getInt("min.insync.replicas");
          },
          fetchMaxBytes: config.getInt("fetch.max.bytes"),
          metadataCacheContains: (tp) => cache.partitionState(tp.topic, tp.partition) !== undefined,
        },
        this.metrics.brokerTopicStats,
      );
      this.replicaManager.leaderReplicationQuota = this.replicationQuotas.leader;
      // replica.alter.log.dirs.io.max.bytes.per.second bounds the copy of replicas moving between log dirs.
      this.replicaManager.setAlterLogDirsQuota(this.replicationQuotas.alterLogDirs);
      this.replicaManager.startup();
      this.groupCoordinator = new GroupCoordinator(
        config.brokerId,
        {
          groupMinSessionTimeoutMs: config.getInt("group.min.session.timeout.ms"),
          groupMaxSessionTimeoutMs: config.getInt("group.max.session.timeout.ms"),
          groupInitialRebalanceDelayMs: config.getInt("group.initial.rebalance.delay.ms"),
          groupMaxSize: config.getInt("group.max.size"),
          offsetMetadataMaxBytes: config.getInt("offset.metadata.max.bytes"),
          consumerGroup: {
            sessionTimeoutMs: config.getInt("group.consumer.session.timeout.ms"),
            heartbeatIntervalMs: config.getInt("group.consumer.heartbeat.interval.ms"),
            maxSize: config.getInt("group.consumer.max.size"),
            // Kafka takes class names (org.apache.kafka.coordinator.group.assignor.UniformAssignor) or, in 4.0,
            // the short names the clients send in ConsumerGroupHeartbeat.
            assignors: config.getList("group.consumer.assignors").map((a) =>
              a
                .trim()
                .replace(/^org\.apache\.kafka\.coordinator\.group\.assignor\.(\w+)Assignor$/, "$1")
                .toLowerCase(),
            ),
          },
        },
        new GroupMetadataManager(
          config.brokerId,
          {
            offsetsTopicNumPartitions: config.getInt("offsets.topic.num.partitions"),
            offsetsRetentionMs: config.getInt("offsets.retention.minutes") * 60_000,
            offsetsRetentionCheckIntervalMs: config.getLong("offsets.retention.check.interval.ms"),
            offsetCommitTimeoutMs: config.getInt("offsets.commit.timeout.ms"),
            offsetsLoadBufferSize: config.getInt("offsets.load.buffer.size"),
          },
          this.replicaManager,
          this.time,
          this.scheduler,
        ),
        this.time,
        this.scheduler,
      );
      this.groupCoordinator.startup();
      // Transactional offset commits become committed when their marker reaches __consumer_offsets.
      const groups = this.groupCoordinator;
      this.replicaManager.onTxnMarkerAppended((tp, producerId, _epoch, committed) => {
        if (tp.topic === GROUP_METADATA_TOPIC_NAME)
          groups.onTransactionCompleted(tp.partition, producerId, committed);
      });
      const producerIdManager = new ProducerIdManager(config.brokerId, this.store);
      // Markers go to each partition's leader: this broker's ReplicaManager, or WriteTxnMarkers to another.
      const txnMarkerRouter = new TxnMarkerRouter({
        brokerId: config.brokerId,
        leaderOf: (tp) => cache.partitionState(tp.topic, tp.partition)?.leader ?? -1,
        endpointOf: (id) => cache.endpointFor(id, config.interBrokerListenerName),
        appendLocally: (markers) => this.replicaManager!.appendTxnMarkers(markers),
        requestTimeoutMs: config.getInt("request.timeout.ms"),
        security: config.interBrokerSecurity,
      });
      this.txnMarkerRouter = txnMarkerRouter;
      const rm = this.replicaManager;
      this.transactionCoordinator = new TransactionCoordinator(
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
          rm,
          this.time,
          this.scheduler,
        ),
        () => producerIdManager.generateProducerId(),
        txnMarkerRouter.send,
        (topic) => cache.hasTopic(topic),
        this.time,
        this.scheduler,
      );
      this.transactionCoordinator.startup();
      const addPartitionsToTxnManager = new AddPartitionsToTxnManager({
        brokerId: config.brokerId,
        coordinator: this.transactionCoordinator,
        leaderOf: (tp) => cache.partitionState(tp.topic, tp.partition)?.leader ?? -1,
        endpointOf: (id) => cache.endpointFor(id, config.interBrokerListenerName),
        requestTimeoutMs: config.getInt("request.timeout.ms"),
        security: config.interBrokerSecurity,
      });
      this.addPartitionsToTxnManager = addPartitionsToTxnManager;
      // Registered before start(): the first delta is every config.
      cache.onChange((delta) => this.applyMetadataDelta(delta));
      cache.onChange((delta) => this.applyCredentialChanges(cache, delta));
      await cache.start();
      await cache.idle();
      this.credentialCache.setLoaded();
      // The static layer DescribeConfigs shows carries the effective broker.id (0 on the embedded single
      // node when broker.id is unset), as Kafka's config holds the generated id.
      const topicAdmin = new TopicAdmin(store, cache, {
        ...topicAdminOptionsFrom(config, this.time, this.scheduler),
        staticConfig: new Map([...config.originals, ["broker.id", String(config.brokerId)]]),
      });
      const fetchers = new ReplicaFetcherManager(
        this.replicaManager,
        {
          brokerId: config.brokerId,
          fetchMaxBytes: config.getInt("replica.fetch.max.bytes"),
          responseMaxBytes: config.getInt("replica.fetch.response.max.bytes"),
          maxWaitMs: config.getInt("replica.fetch.wait.max.ms"),
          minBytes: config.getInt("replica.fetch.min.bytes"),
          backoffMs: config.getInt("replica.fetch.backoff.ms"),
          socketTimeoutMs: config.getInt("replica.socket.timeout.ms"),
          brokerEpoch: () => this.brokerEpoch,
          security: config.interBrokerSecurity,
          quota: this.replicationQuotas.follower,
        },
        (id) => controllerRequests.leaderEndpoint(id, config.interBrokerListenerName),
        this.time,
        config.getInt("num.replica.fetchers"),
      );
      this.replicaFetcherManager = fetchers;
      const controllerRequests: ControllerRequests = new ControllerRequests(
        this.time,
        config.brokerId,
        () => this.brokerEpoch,
        this.replicaManager,
        cache,
        {
          onBecomeLeader: (topic, partition, leaderEpoch) =>
            this.onLeadershipChange(topic, partition, leaderEpoch),
          onResign: (topic, partition) => this.onLeadershipChange(topic, partition, undefined),
        },
        fetchers,
      );
      const controller = new KafkaController(zk, {
        brokerId: config.brokerId,
        time: this.time,
        deleteTopicEnable: config.deleteTopicEnable,
        uncleanLeaderElectionEnable: config.getBoolean("unclean.leader.election.enable"),
        // The controller's requests go to the control-plane listener when there is one (Kafka's KIP-291).
        interBrokerListenerName: config.controlPlaneListenerName ?? config.interBrokerListenerName,
        security: config.controlPlaneSecurity,
        localReceiver: controllerRequests,
        requestTimeoutMs: config.getInt("controller.socket.timeout.ms"),
        registerBroker: () => this.registerBroker(),
        stats: this.metrics.replication,
        autoLeaderRebalance: config.getBoolean("auto.leader.rebalance.enable")
          ? {
              scheduler: this.scheduler,
              imbalancePerBrokerPercentage: config.getInt("leader.imbalance.per.broker.percentage"),
              checkIntervalMs: Number(config.getLong("leader.imbalance.check.interval.seconds")) * 1000,
            }
          : undefined,
      });
      this.controller = controller;
      const alterPartitionManager = new AlterPartitionManager(
        config.brokerId,
        () => this.brokerEpoch,
        this.replicaManager,
        {
          local: () =>
            controller.isActive
              ? (id, epoch, items) => controller.alterPartition(id, epoch, items)
              : undefined,
          controllerId: () => cache.controllerId,
          endpointOf: (id) => cache.endpointFor(id, config.interBrokerListenerName),
          security: config.interBrokerSecurity,
        },
        this.scheduler,
        config.getLong("replica.lag.time.max.ms"),
        config.getInt("controller.socket.timeout.ms"),
        this.metrics.replication,
      );
      this.alterPartitionManager = alterPartitionManager;
      this.replicaManager.followerFetchListener = (p, replicaId) =>
        alterPartitionManager.onFollowerFetch(p, replicaId);
      alterPartitionManager.startup();

      // The ACL authorizer (authorizer.class.name): its cache is loaded before any request is served.
      if ((config.getString("authorizer.class.name") ?? "") !== "") {
        const authorizer = new AclAuthorizer(
          store,
          {
            superUsers: parseSuperUsers(config.getString("super.users") ?? ""),
            allowEveryoneIfNoAclFound: config.getBoolean("allow.everyone.if.no.acl.found"),
          },
          this.time,
          this.scheduler,
        );
        await authorizer.start();
        this.authorizer = authorizer;
      }

      // Client quotas (server/quota): from the user/client config entities, applied to every request.
      const clientQuotas = new ClientQuotas(
        {
          numQuotaSamples: config.getInt("quota.window.num"),
          quotaWindowSizeSeconds: config.getInt("quota.window.size.seconds"),
        },
        this.time,
      );
      clientQuotas.attach(cache);
      this.metrics.registry.register(() => clientQuotas.collect());
      const clientQuotaThrottling = new RequestThrottling(clientQuotas);
      const services: BrokerServices = {
        brokerId: config.brokerId,
        config,
        time: this.time,
        scheduler: this.scheduler,
        logManager: this._logManager,
        metadata: cache,
        topicAdmin,
        replicaManager: this.replicaManager,
        groupCoordinator: this.groupCoordinator,
        producerIdManager,
        transactionCoordinator: this.transactionCoordinator,
        addPartitionsToTxnManager,
        controller,
        controllerRequests,
        auth: new AuthHelper(this.authorizer),
        replicationQuotas: this.replicationQuotas,
        clientQuotas: clientQuotaThrottling,
      };
      const handlers = this.options.handlers ?? buildHandlers(services);
      this.pipeline = new RequestPipeline(handlers, this.time, this.memoryPool, clientQuotaThrottling);

      // Register, then run for controller; the controller's requests (to this broker too) start flowing.
      await this.registerBroker();
      store.registerStateChangeHandler({
        name: "broker-metadata",
        afterInitializingSession: () => cache.reloadAfterNewSession(),
      });
      await controller.startup();
      if (controller.isActive) await controller.localRequestsSent();
      // Until the first UpdateMetadata, this broker would answer Metadata without brokers: wait for it (bounded).
      await cache.waitUntil(() => cache.isBrokerAlive(config.brokerId), 10_000, this.scheduler);
      this.metrics.start(this.scheduler);
      if (config.metricsHttpListener !== null) {
        const server = new MetricsHttpServer(config.metricsHttpListener, () => this.metrics.scrape());
        if (await server.start()) {
          this.metricsServer = server;
          this.metrics.runtime.start();
        }
      }
      this.state = "Running";
      this.enableProcessing();
      for (const e of this._advertised) this.logger.info(`Advertised listener ${endpointString(e)}`);
      this.logger.info("started");
    } catch (e) {
      this.logger.error(
        `Fatal error during KafkaServer startup. Prepare to shutdown: ${(e as Error).message}`,
      );
      this.state = "Running";
      await this.shutdown();
      throw e;
    }
  }

  /** The cluster.id some log dir's meta.properties already carries (reused when /cluster/id is missing). */
  private clusterIdFromMetaProperties(): string | undefined {
    for (const dir of this.config.logDirs) {
      try {
        const id = readBrokerMetadata(dir)?.clusterId;
        if (id) return id;
      } catch {
        // A damaged meta.properties is reported by the LogManager.
      }
    }
    return undefined;
  }

  /** ZooKeeper when zookeeper.connect is set, else the embedded store in the first log dir. */
  private async openMetadataStore(): Promise<MetadataStore> {
    const config = this.config;
    if (config.zookeeperConnect === null) return EmbeddedMetadataStore.open(config.logDirs[0], this.time);
    const sessionTimeoutMs = config.getInt("zookeeper.session.timeout.ms");
    const connectionTimeoutMs = config.getInt("zookeeper.connection.timeout.ms") ?? sessionTimeoutMs;
    this.logger.info(`Connecting to zookeeper on ${config.zookeeperConnect}`);
    return ZooKeeperMetadataStore.connect(config.zookeeperConnect, { sessionTimeoutMs, connectionTimeoutMs });
  }

  /**
   * Kafka's getOrGenerateBrokerId for broker.id=-1: the broker.id a log dir's meta.properties holds, else
   * (broker.id.generation.enable) reserved.broker.max.id + the new version of /brokers/seqid.
   */
  private async generateBrokerId(zk: KafkaZkClient): Promise<number> {
    for (const dir of this.config.logDirs) {
      try {
        const id = readBrokerMetadata(dir)?.brokerId;
        if (id !== undefined && id >= 0) return id;
      } catch {
        // A damaged meta.properties is reported by the LogManager.
      }
    }
    if (!this.config.getBoolean("broker.id.generation.enable")) {
      throw new Error("broker.id is not set and broker.id.generation.enable is false: set broker.id");
    }
    const seq = await zk.generateBrokerSequenceId();
    const id = this.config.getInt("reserved.broker.max.id") + seq;
    this.logger.info(`Generated broker.id ${id} from /brokers/seqid`);
    return id;
  }

  /**
   * Registers (or re-registers, after a session expiry) /brokers/ids/<id>; keeps the new broker epoch.
   * On ZooKeeper, a registration still held by this broker's own previous session (recorded in its first
   * locked log dir, registration-session-file.ts) is waited for, up to 1.5 × the negotiated session
   * timeout: ZooKeeper expires a session on the first tick after the timeout, and a tick is at most half
   * of a negotiated timeout.
   */
  private async registerBroker(): Promise<void> {
    const zk = this.zkClient;
    if (zk === undefined) return;
    const brokerId = this.config.brokerId;
    const store = this.store;
    const dir = this.config.logDirs.find((d) => this.logDirLocks?.holds(d) === true);
    const previous: PreviousRegistration | undefined =
      store instanceof ZooKeeperMetadataStore && dir !== undefined
        ? {
            sessionId: readRegistrationSession(dir, brokerId),
            waitMs: Math.ceil(store.negotiatedSessionTimeoutMs * 1.5),
            record: (sessionId) => {
              try {
                writeRegistrationSession(dir, brokerId, sessionId);
              } catch (e) {
                this.logger.warn(
                  `Cannot record the registration's ZooKeeper session in ${dir}: ${(e as Error).message} (a restart within the session timeout will then be refused)`,
                );
              }
            },
            time: this.time,
            scheduler: this.scheduler,
          }
        : undefined;
    this.brokerEpoch = await zk.registerBroker(
      {
        id: brokerId,
        endpoints: this._advertised,
        rack: this.config.brokerRack,
        jmxPort: -1,
        timestampMs: this.time.milliseconds(),
        features: {},
      },
      previous,
    );
  }

  /**
   * Applies a metadata change to this broker: topic configs to the LogManager (a log created later gets
   * them), dynamic broker configs to the default LogConfig. Leadership arrives with LeaderAndIsr
   * (ControllerRequests), not here.
   */
  private applyMetadataDelta(delta: MetadataDelta): void {
    this.applyReplicationThrottles(delta);
    const lm = this._logManager;
    if (lm === undefined) return;
    try {
      if (delta.brokerConfigs.size > 0) this.applyDynamicBrokerConfigs(lm);
      for (const [topic, props] of delta.topicConfigs) {
        try {
          lm.setTopicConfig(topic, logConfigFrom(props, lm.defaultLogConfig));
        } catch (e) {
          this.logger.error(`Invalid config of topic ${topic} ignored: ${(e as Error).message}`);
        }
      }
    } catch (e) {
      this.logger.error(`Error applying a metadata change: ${(e as Error)?.stack ?? e}`);
    }
  }

  /** User entities changed: their SCRAM credentials go to the CredentialCache (Kafka's UserConfigHandler). */
  private applyCredentialChanges(cache: MetadataCache, delta: MetadataDelta): void {
    for (const path of delta.entityConfigs)
      for (const error of this.credentialCache.updateEntity(path, cache.entityConfig(path)))
        this.logger.error(error);
  }

  /**
   * The replication throttles follow this broker's dynamic config entity (the rates) and the topics'
   * throttled-replicas configs (Kafka's BrokerConfigHandler / TopicConfigHandler); a deleted topic's
   * throttle goes with it.
   */
  private applyReplicationThrottles(delta: MetadataDelta): void {
    const cache = this.metadataCache;
    if (cache === undefined) return;
    const quotas = this.replicationQuotas;
    if (delta.brokerConfigs.has(String(this.config.brokerId)))
      quotas.applyBrokerConfig(cache.brokerConfig(String(this.config.brokerId)));
    for (const [topic, props] of delta.topicConfigs) quotas.applyTopicConfig(topic, props);
    for (const { topic } of delta.removed) if (!cache.hasTopic(topic)) quotas.applyTopicConfig(topic, {});
  }

  /**
   * Dynamic broker configs changed (or were loaded at startup): the log.* defaults and compression.type /
   * message.max.bytes of /config/brokers/<default> and /config/brokers/<id> become the default of every
   * topic without an override (Kafka's DynamicLogConfig).
   */
  private applyDynamicBrokerConfigs(lm: LogManager): void {
    const cache = this.metadataCache;
    if (cache === undefined) return;
    try {
      const staticConfig: Record<string, string> = {};
      for (const [k, v] of this.config.originals) staticConfig[k] = v;
      const next = dynamicBrokerLogConfig({
        staticConfig,
        dynamicDefault: cache.brokerConfig(DEFAULT_BROKER_ENTITY),
        dynamicBroker: cache.brokerConfig(String(this.config.brokerId)),
      });
      lm.reconfigureDefaultLogConfig(next, (topic, base) => logConfigFrom(cache.topicConfig(topic), base));
    } catch (e) {
      this.logger.error(`Invalid dynamic broker config ignored: ${(e as Error).message}`);
    }
  }

  /**
   * The coordinators follow this broker's leadership of __consumer_offsets / __transaction_state partitions
   * (Kafka's onLeadershipChange): `leaderEpoch` set means it leads the partition now, undefined that it does not.
   */
  private onLeadershipChange(topic: string, partition: number, leaderEpoch: number | undefined): void {
    if (topic === TRANSACTION_STATE_TOPIC_NAME) {
      const tc = this.transactionCoordinator;
      if (leaderEpoch !== undefined) tc?.onElection(partition, leaderEpoch);
      else tc?.onResignation(partition);
    } else if (topic === GROUP_METADATA_TOPIC_NAME) {
      const gc = this.groupCoordinator;
      if (leaderEpoch !== undefined) gc?.onElection(partition);
      else gc?.onResignation(partition);
    }
  }

  /**
   * Kafka's controlledShutdown: asks the controller to move leadership off this broker before it stops,
   * retrying (controlled.shutdown.max.retries, controlled.shutdown.retry.backoff.ms) while partitions remain
   * led here. Only in a ZooKeeper cluster; a single broker has nowhere to move leadership to.
   */
  private async controlledShutdown(): Promise<void> {
    const config = this.config;
    const cache = this.metadataCache;
    const controller = this.controller;
    if (config.zookeeperConnect === null || !config.getBoolean("controlled.shutdown.enable")) return;
    if (cache === undefined || controller === undefined || this.brokerEpoch < 0n) return;
    const retries = config.getInt("controlled.shutdown.max.retries");
    const backoffMs = config.getLong("controlled.shutdown.retry.backoff.ms");
    const timeoutMs = config.getInt("request.timeout.ms");
    this.logger.info("Starting controlled shutdown");
    for (let attempt = 0; attempt <= retries; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, Number(backoffMs)));
      try {
        let errorCode: number;
        let remaining: number;
        if (controller.isActive) {
          const r = await controller.controlledShutdown(config.brokerId, this.brokerEpoch);
          errorCode = r.errorCode;
          remaining = r.remainingPartitions.length;
        } else {
          const id = cache.controllerId;
          const e = id >= 0 ? cache.endpointFor(id, config.interBrokerListenerName) : undefined;
          if (e === undefined) throw new Error("no controller is known");
          const conn = await BrokerConnection.connect(e.host, e.port, {
            clientId: `broker-${config.brokerId}-controlled-shutdown`,
            requestTimeoutMs: timeoutMs,
            ...config.interBrokerSecurity,
          });
          try {
            const r = await conn.send(Apis.ControlledShutdown, conn.versionFor(Apis.ControlledShutdown), {
              brokerId: config.brokerId,
              brokerEpoch: this.brokerEpoch,
            });
            errorCode = r.errorCode;
            remaining = r.remainingPartitions.length;
          } finally {
            conn.close();
          }
        }
        if (errorCode === ErrorCode.NONE && remaining === 0) {
          this.logger.info("Controlled shutdown request returned successfully");
          return;
        }
        this.logger.info(
          `Remaining partitions to move: ${remaining}; controlled shutdown error ${errorNameOf(errorCode)} (attempt ${attempt + 1})`,
        );
      } catch (e) {
        this.logger.warn(
          `Error during controlled shutdown, possibly because leader movement took longer than the configured controller.socket.timeout.ms and/or request.timeout.ms: ${(e as Error).message}`,
        );
      }
    }
    this.logger.warn("Proceeding to do an unclean shutdown as all the controlled shutdown attempts failed");
  }

  private async resolveAdvertised(): Promise<EndPoint[]> {
    const bound = this.socketServer.boundEndpoints();
    // Kafka advertises the host name when a listener has no host; here only a name that leads back to this
    // machine, else localhost (advertised-host.ts).
    const noHost = this.config.advertisedListeners.filter((a) => a.host === "");
    const defaultHost = noHost.length > 0 ? await defaultAdvertisedHost() : undefined;
    if (defaultHost?.fallbackReason !== undefined)
      this.logger.warn(
        `Advertising ${defaultHost.host} for ${noHost.map((a) => a.listenerName).join(", ")}: ${defaultHost.fallbackReason}; clients on other machines need advertised.listeners set`,
      );
    return this.config.advertisedListeners.map((a) => {
      const b = bound.find((x) => x.listenerName === a.listenerName);
      const port = a.port === 0 && b !== undefined ? b.port : a.port;
      const host = a.host === "" ? defaultHost!.host : a.host;
      return { ...a, host, port };
    });
  }

  /** Runs `fn` during shutdown, before the log manager stops (in reverse registration order). */
  onShutdown(fn: () => void | Promise<void>): void {
    this.shutdownHooks.push(fn);
  }

  /** Clean shutdown; safe to call more than once (later calls wait for the first). */
  shutdown(): Promise<void> {
    this.shutdownPromise ??= this.doShutdown();
    return this.shutdownPromise;
  }

  private async doShutdown(): Promise<void> {
    if (this.state === "NotRunning") return;
    if (this.state === "Running") {
      this.state = "PendingControlledShutdown";
      try {
        await this.controlledShutdown();
      } catch (e) {
        this.logger.warn(`Controlled shutdown failed: ${(e as Error).message}`);
      }
    }
    this.state = "ShuttingDown";
    this.logger.info("shutting down");
    const errors: unknown[] = [];
    const step = async (what: string, fn: () => void | Promise<void>): Promise<void> => {
      try {
        await fn();
      } catch (e) {
        this.logger.error(`Error while ${what}: ${(e as Error)?.stack ?? e}`);
        errors.push(e);
      }
    };
    const metricsServer = this.metricsServer;
    this.metricsServer = undefined;
    if (metricsServer !== undefined) await step("stopping the metrics endpoint", () => metricsServer.stop());
    this.metrics.stop();
    // Requests still held at startup are answered by closing their connections.
    this.pipeline = undefined;
    this.enableProcessing();
    // Stop taking requests; complete the delayed ones (long-polling fetches, acks=all produces) by shutting
    // the replica manager down, then wait for the handlers still running.
    const socketServer = this._socketServer;
    if (socketServer !== undefined)
      await step("stopping the socket server", () => socketServer.stopProcessingRequests());
    for (const hook of [...this.shutdownHooks].reverse()) await step("running a shutdown hook", hook);
    const tc = this.transactionCoordinator;
    if (tc !== undefined) await step("shutting down the transaction coordinator", () => tc.shutdown());
    this.txnMarkerRouter?.close();
    this.addPartitionsToTxnManager?.close();
    const gc = this.groupCoordinator;
    if (gc !== undefined) await step("shutting down the group coordinator", () => gc.shutdown());
    this.alterPartitionManager?.shutdown();
    const fetchers = this.replicaFetcherManager;
    if (fetchers !== undefined) await step("shutting down the replica fetchers", () => fetchers.shutdown());
    const rm = this.replicaManager;
    if (rm !== undefined) await step("shutting down the replica manager", () => rm.shutdown());
    if (socketServer !== undefined) await step("stopping the socket server", () => socketServer.shutdown());
    const controller = this.controller;
    if (controller !== undefined) await step("shutting down the controller", () => controller.shutdown());
    const cache = this.metadataCache;
    if (cache !== undefined) await step("closing the metadata cache", () => cache.close());
    this.authorizer?.close();
    const store = this.store;
    if (store !== undefined) await step("closing the metadata store", () => store.close());
    if (this._logManager !== undefined)
      await step("shutting down the log manager", () => this._logManager!.shutdown());
    // The logs are closed: another broker may use the dirs from now on.
    this.logDirLocks?.release();
    this.logDirLocks = undefined;
    this.scheduler.shutdown();
    this.state = "NotRunning";
    this.logger.info("shut down completed");
    if (errors.length > 0) throw errors[0];
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
