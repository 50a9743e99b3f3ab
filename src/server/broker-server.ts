// KafkaServer: one broker's lifecycle (Kafka's KafkaServer in ZooKeeper mode). Owns the order in which the
// broker's components (server/components/) start and stop, the broker state, and the controlled shutdown:
//
//   startup:  Time/Scheduler → every log dir locked (`.lock`; one held by another broker, in any process,
//             stops the startup here, before anything in the dirs is read) → then startupOrder(): socket
//             server bound (requests held until the end, so the registered endpoints carry the bound ports)
//             → metadata store (ZooKeeper with zookeeper.connect, else the embedded store in
//             `<first log dir>/__tributary_metadata.json`), top-level znodes, cluster id, generated
//             broker.id → LogManager (loads and recovers logs in slices, checks meta.properties) and its
//             LogDirFailureHandler → ReplicaManager → GroupCoordinator and TransactionCoordinator (they load
//             their partitions as leadership arrives) → metadata cache (configs) → replica fetchers,
//             ControllerRequests, controller, AlterPartitionManager → authorizer → BrokerServices + request
//             pipeline → broker registration (/brokers/ids/<id>, the broker epoch) → controller election →
//             the first UpdateMetadata awaited (bounded; the controller's requests are served from here on)
//             → the metrics endpoint → request processing enabled.
//   shutdown: controlled shutdown (a cluster: leadership moves away first) → then shutdownOrder(): the
//             metrics endpoint → socket server stops accepting and closes connections → TransactionCoordinator
//             → GroupCoordinator → AlterPartitionManager → replica fetchers → ReplicaManager (completes
//             delayed fetches/produces, checkpoints high watermarks) → handlers still running are awaited
//             (bounded) → controller, metadata cache, authorizer, metadata store (ephemeral znodes go) →
//             LogManager (checkpoints, `.kafka_cleanshutdown`) → log dir locks released → scheduler. Each
//             step runs even when an earlier one failed; the first error is reported after all ran.
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
import { Apis } from "../protocol/generated/api-table.js";
import type { LogManager } from "../storage/log-manager.js";
import {
  coordinatorLeadership,
  GroupCoordinatorComponent,
  TransactionCoordinatorComponent,
} from "./components/coordinator-components.js";
import {
  AuthorizerComponent,
  BrokerRegistration,
  MetadataCacheComponent,
  MetadataStoreComponent,
} from "./components/metadata-components.js";
import {
  MetricsComponent,
  RequestHandlersComponent,
  RequestProcessingComponent,
  SocketServerComponent,
} from "./components/network-components.js";
import {
  AlterPartitionManagerComponent,
  ControllerComponent,
  ControllerElection,
  ControllerRequestsComponent,
  ReplicaFetchersComponent,
  ReplicaManagerComponent,
} from "./components/replication-components.js";
import {
  type ServerContext,
  type Startable,
  type Stoppable,
  shutdownInOrder,
  startInOrder,
} from "./components/server-component.js";
import { LogDirLocksComponent, LogManagerComponent } from "./components/storage-components.js";
import type { GroupCoordinator } from "./coordinator/group/group-coordinator.js";
import type { TransactionCoordinator } from "./coordinator/transaction/transaction-coordinator.js";
import { type EndPoint, endpointString } from "./end-point.js";
import type { HandlerRegistration } from "./handler.js";
import type { KafkaConfig } from "./kafka-config.js";
import type { MetadataCache } from "./metadata/metadata-cache.js";
import { BROKER_STATE, BrokerMetrics } from "./metrics/broker-metrics.js";
import { ReplicationQuotas } from "./quota/replication-quotas.js";
import { LogDirFailureHandler } from "./replication/log-dir-failure-handler.js";
import type { ReplicaManager } from "./replication/replica-manager.js";
import { RequestChannel } from "./request-channel.js";
import { CredentialCache } from "./security/credential-cache.js";
import type { SocketServer } from "./socket-server.js";

export interface KafkaServerOptions {
  readonly time?: Time;
  readonly scheduler?: Scheduler;
  /** Handlers to serve instead of the static list (tests). */
  readonly handlers?: readonly HandlerRegistration[];
}

type State = "NotRunning" | "Starting" | "Running" | "PendingControlledShutdown" | "ShuttingDown";

/** The broker's components, each given the ones it depends on. */
interface Components {
  readonly logDirLocks: LogDirLocksComponent;
  readonly socketServer: SocketServerComponent;
  readonly metadataStore: MetadataStoreComponent;
  readonly logManager: LogManagerComponent;
  readonly logDirFailureHandler: LogDirFailureHandler;
  readonly replicaManager: ReplicaManagerComponent;
  readonly groupCoordinator: GroupCoordinatorComponent;
  readonly transactionCoordinator: TransactionCoordinatorComponent;
  readonly metadataCache: MetadataCacheComponent;
  readonly replicaFetchers: ReplicaFetchersComponent;
  readonly controllerRequests: ControllerRequestsComponent;
  readonly controller: ControllerComponent;
  readonly alterPartitionManager: AlterPartitionManagerComponent;
  readonly authorizer: AuthorizerComponent;
  readonly requestHandlers: RequestHandlersComponent;
  readonly brokerRegistration: BrokerRegistration;
  readonly controllerElection: ControllerElection;
  readonly metrics: MetricsComponent;
  readonly requestProcessing: RequestProcessingComponent;
}

export class KafkaServer {
  readonly time: Time;
  readonly scheduler: Scheduler;
  readonly logger: Logger;
  private state: State = "NotRunning";
  private shutdownPromise: Promise<void> | undefined;
  private readonly shutdownHooks: Array<() => void | Promise<void>> = [];
  /** Request frames and fetch reads (Kafka's MemoryPool for the network layer). */
  readonly memoryPool = new MemoryPool();
  /** SCRAM credentials of /config/users, kept up to date from the metadata cache. */
  readonly credentialCache = new CredentialCache();
  /** The broker's metrics (served on metrics.http.listener). */
  readonly metrics: BrokerMetrics;
  /** The replication throttles (leader, follower, alter-log-dirs), driven by the dynamic configs. */
  readonly replicationQuotas: ReplicationQuotas;
  private readonly components: Components;

  constructor(
    readonly config: KafkaConfig,
    options: KafkaServerOptions = {},
  ) {
    this.time = options.time ?? SYSTEM_TIME;
    this.logger = new Logger("kafka.server.KafkaServer", `KafkaServer id=${config.brokerId}`);
    this.scheduler =
      options.scheduler ??
      new SystemScheduler((name, e) =>
        this.logger.error(`Uncaught error in scheduled task '${name}': ${(e as Error)?.stack ?? e}`),
      );
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
    this.components = this.buildComponents(options.handlers);
    const c = this.components;
    this.metrics.bind({
      replicationQuotas: () => this.replicationQuotas,
      brokerState: () => BROKER_STATE[this.state],
      replicaManager: () => c.replicaManager.current,
      logManager: () => c.logManager.current,
      metadata: () => c.metadataCache.current,
      isActiveController: () => c.controller.current?.isActive ?? false,
      connectionsByListener: () => c.socketServer.current?.connectionsByListener() ?? new Map(),
      socketServer: () => {
        const ss = c.socketServer.current;
        if (ss === undefined) return undefined;
        return {
          memoryPoolAvailable: ss.requestMemory.availableBytes,
          memoryPoolUsed: ss.requestMemory.usedBytes,
          memoryPoolWaits: ss.requestMemory.waits,
          receiveTimeouts: ss.receiveTimeoutCount,
          nearFileLimit: ss.nearFileLimitCount,
        };
      },
      replicaFetcherMaxLag: () => Number(c.replicaFetchers.current?.maxLag() ?? 0n),
    });
  }

  /** Each component, given the ones it depends on; nothing starts here. */
  private buildComponents(handlers: readonly HandlerRegistration[] | undefined): Components {
    const ctx: ServerContext = {
      config: this.config,
      time: this.time,
      scheduler: this.scheduler,
      logger: this.logger,
    };
    const config = this.config;
    const quotas = this.replicationQuotas;
    const metrics = this.metrics;
    const brokerEpoch = (): bigint => this.brokerEpoch;
    // Requests from the socket server to the request pipeline, held until the broker has started.
    const channel = new RequestChannel(metrics.requestMetrics);
    const logDirLocks = new LogDirLocksComponent(ctx);
    const socketServer = new SocketServerComponent(ctx, channel, this.memoryPool, this.credentialCache);
    const metadataStore = new MetadataStoreComponent(ctx);
    const logManager = new LogManagerComponent(ctx, logDirLocks, () => metadataStore.clusterId);
    // A log dir that goes offline, fills up or has space again tells the controller.
    const logDirFailureHandler = new LogDirFailureHandler(
      () => logManager.get(),
      this.scheduler,
      () => metadataStore.zkClient.propagateLogDirEvent(config.brokerId),
      this.logger,
    );
    const metadataCache = new MetadataCacheComponent(
      ctx,
      metadataStore,
      logManager,
      quotas,
      this.credentialCache,
    );
    const replicaManager = new ReplicaManagerComponent(ctx, logManager, metadataCache, quotas, metrics);
    const groupCoordinator = new GroupCoordinatorComponent(ctx, replicaManager);
    const transactions = new TransactionCoordinatorComponent(
      ctx,
      replicaManager,
      metadataCache,
      metadataStore,
    );
    const replicaFetchers = new ReplicaFetchersComponent(ctx, replicaManager, brokerEpoch, quotas, (id) =>
      controllerRequests.get().leaderEndpoint(id, config.interBrokerListenerName),
    );
    const controllerRequests = new ControllerRequestsComponent(
      ctx,
      brokerEpoch,
      replicaManager,
      metadataCache,
      coordinatorLeadership(groupCoordinator, transactions),
      replicaFetchers,
    );
    const controller = new ControllerComponent(ctx, metadataStore, controllerRequests, metrics, () =>
      registration.register(),
    );
    const authorizer = new AuthorizerComponent(ctx, metadataStore);
    const registration = new BrokerRegistration(ctx, metadataStore, metadataCache, logDirLocks, socketServer);
    return {
      logDirLocks,
      socketServer,
      metadataStore,
      logManager,
      logDirFailureHandler,
      replicaManager,
      groupCoordinator,
      transactionCoordinator: transactions,
      metadataCache,
      replicaFetchers,
      controllerRequests,
      controller,
      alterPartitionManager: new AlterPartitionManagerComponent(
        ctx,
        brokerEpoch,
        replicaManager,
        controller,
        metadataCache,
        metrics,
      ),
      authorizer,
      requestHandlers: new RequestHandlersComponent(
        ctx,
        {
          metadataStore,
          metadataCache,
          logManager,
          replicaManager,
          groupCoordinator,
          transactionCoordinator: transactions,
          controller,
          controllerRequests,
          authorizer,
          replicationQuotas: quotas,
          metrics,
          memoryPool: this.memoryPool,
        },
        channel,
        handlers,
      ),
      brokerRegistration: registration,
      controllerElection: new ControllerElection(ctx, controller, metadataCache),
      metrics: new MetricsComponent(ctx, metrics),
      requestProcessing: new RequestProcessingComponent(channel, socketServer),
    };
  }

  /** KafkaServer.startup after the log dirs are locked, in order; each starts once those above it have. */
  private startupOrder(): readonly Startable[] {
    const c = this.components;
    return [
      c.socketServer, // bound; requests held until requestProcessing
      c.metadataStore, // cluster id, broker.id
      c.logManager, // logs loaded (and recovered) before the broker registers, as Kafka does
      c.logDirFailureHandler,
      c.replicaManager,
      c.groupCoordinator,
      c.transactionCoordinator,
      c.metadataCache, // every config loaded and applied
      c.replicaFetchers,
      c.controllerRequests,
      c.controller, // built; runs for election at controllerElection
      c.alterPartitionManager,
      c.authorizer, // its ACLs loaded before any request is served
      c.requestHandlers, // the controller's requests are served from here on
      c.brokerRegistration,
      c.controllerElection, // then the first UpdateMetadata awaited
      c.metrics,
      c.requestProcessing, // every request served
    ];
  }

  /**
   * KafkaServer.shutdown after the controlled shutdown, in order. Not startupOrder reversed: requests stop
   * first, the coordinators and replication before the socket server's connections are awaited, the
   * metadata after it, the logs and their locks last.
   */
  private shutdownOrder(): readonly Stoppable[] {
    const c = this.components;
    return [
      c.metrics,
      c.requestProcessing, // no more connections; requests still held close theirs
      ...[...this.shutdownHooks]
        .reverse()
        .map((hook) => ({ stopping: "running a shutdown hook", shutdown: hook })),
      c.transactionCoordinator,
      c.groupCoordinator,
      c.alterPartitionManager,
      c.replicaFetchers,
      c.replicaManager, // completes delayed fetches and produces, checkpoints high watermarks
      c.socketServer, // the handlers still running awaited (bounded)
      c.controller,
      c.metadataCache,
      c.authorizer,
      c.metadataStore, // this broker's ephemeral znodes go
      c.logManager, // checkpoints, .kafka_cleanshutdown
      c.logDirLocks, // the logs are closed: another broker may use the dirs from now on
      { stopping: "shutting down the scheduler", shutdown: () => this.scheduler.shutdown() },
    ];
  }

  /** The bound port of the metrics endpoint (undefined when disabled, not started or not bound). */
  get metricsPort(): number | undefined {
    return this.components.metrics.port;
  }

  get brokerId(): number {
    return this.config.brokerId;
  }

  /** The czxid of this broker's registration znode (Kafka's broker epoch); -1 before it registers. */
  get brokerEpoch(): bigint {
    return this.components.brokerRegistration.brokerEpoch;
  }

  get socketServer(): SocketServer {
    return this.components.socketServer.get();
  }

  get logManager(): LogManager {
    return this.components.logManager.get();
  }

  get metadataCache(): MetadataCache | undefined {
    return this.components.metadataCache.current;
  }

  get replicaManager(): ReplicaManager | undefined {
    return this.components.replicaManager.current;
  }

  get groupCoordinator(): GroupCoordinator | undefined {
    return this.components.groupCoordinator.current;
  }

  get transactionCoordinator(): TransactionCoordinator | undefined {
    return this.components.transactionCoordinator.current;
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
    return this.components.socketServer.advertisedEndpoints;
  }

  async startup(): Promise<void> {
    if (this.state !== "NotRunning") throw new Error(`KafkaServer is ${this.state}`);
    this.state = "Starting";
    this.logger.info("starting");
    // Before anything reads or writes the dirs (the embedded metadata store is in the first). A dir another
    // broker holds (LogDirLockedError, naming the dir and the pid) ends the startup with nothing touched.
    try {
      this.components.logDirLocks.startup();
    } catch (e) {
      this.state = "NotRunning";
      throw e;
    }
    try {
      await startInOrder(this.startupOrder());
      this.state = "Running";
      for (const e of this.advertisedEndpoints) this.logger.info(`Advertised listener ${endpointString(e)}`);
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

  /**
   * Kafka's controlledShutdown: asks the controller to move leadership off this broker before it stops,
   * retrying (controlled.shutdown.max.retries, controlled.shutdown.retry.backoff.ms) while partitions remain
   * led here. Only in a ZooKeeper cluster; a single broker has nowhere to move leadership to.
   */
  private async controlledShutdown(): Promise<void> {
    const config = this.config;
    const cache = this.components.metadataCache.current;
    const controller = this.components.controller.current;
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
    const errors = await shutdownInOrder(this.shutdownOrder(), this.logger);
    this.state = "NotRunning";
    this.logger.info("shut down completed");
    if (errors.length > 0) throw errors[0];
  }
}
