// KafkaServer: one broker's lifecycle (Kafka's KafkaServer in ZooKeeper mode). Owns the order in which the
// broker's parts start and stop, and nothing else:
//
//   startup:  Time/Scheduler → socket server bound (requests held until the end, so the registered
//             endpoints carry the bound ports) → metadata store + cluster id → LogManager (loads and
//             recovers logs, checks meta.properties) → metadata cache / controller / broker registration
//             → ReplicaManager → GroupCoordinator (loads the __consumer_offsets partitions it leads as
//             leadership arrives) → TransactionCoordinator (likewise __transaction_state) → BrokerServices + request pipeline → request processing enabled.
//   shutdown: socket server stops accepting and closes connections → TransactionCoordinator → GroupCoordinator → ReplicaManager (completes delayed
//             fetches/produces, checkpoints high watermarks) → handlers still running are awaited
//             (bounded) → controller, metadata cache, metadata store (ephemeral znodes go) → LogManager
//             (checkpoints, `.kafka_cleanshutdown`) → scheduler. Each step runs even when an earlier one
//             failed; the first error is reported after all ran.
//   The embedded metadata store is `<first log dir>/__tributary_metadata.json`.
//   The Prometheus endpoint (metrics.http.listener) starts just before request processing is enabled and
//   stops first on shutdown; failing to bind it leaves the broker running without metrics.
//
// Log lines follow Kafka's: "[KafkaServer id=0] starting", "... started", "... shutting down",
// "... shut down completed".

import { hostname } from "node:os";
import { Logger } from "../common/logger.js";
import { MemoryPool } from "../common/memory-pool.js";
import { type Scheduler, SystemScheduler } from "../common/scheduler.js";
import { SYSTEM_TIME, type Time } from "../common/time.js";
import { readBrokerMetadata } from "../storage/checkpoint/broker-metadata.js";
import { logConfigFrom } from "../storage/log-config.js";
import { LogManager } from "../storage/log-manager.js";
import type { BrokerServices } from "./broker-services.js";
import { GroupCoordinator } from "./coordinator/group/group-coordinator.js";
import {
  GROUP_METADATA_TOPIC_NAME,
  GroupMetadataManager,
} from "./coordinator/group/group-metadata-manager.js";
import { TransactionCoordinator } from "./coordinator/transaction/transaction-coordinator.js";
import {
  TRANSACTION_STATE_TOPIC_NAME,
  TransactionStateManager,
} from "./coordinator/transaction/transaction-state-manager.js";
import type { HandlerRegistration } from "./handler.js";
import { buildHandlers } from "./handlers/index.js";
import { type EndPoint, endpointString, type KafkaConfig } from "./kafka-config.js";
import { dynamicBrokerLogConfig } from "./metadata/config-definitions.js";
import { KafkaController } from "./metadata/controller.js";
import { EmbeddedMetadataStore } from "./metadata/embedded-metadata-store.js";
import { MetadataCache, type MetadataDelta } from "./metadata/metadata-cache.js";
import { TopicAdmin, topicAdminOptionsFrom } from "./metadata/topic-admin.js";
import { DEFAULT_BROKER_ENTITY } from "./metadata/zk-data.js";
import { BROKER_STATE, BrokerMetrics } from "./metrics/broker-metrics.js";
import { MetricsHttpServer } from "./metrics/metrics-http-server.js";
import { ProducerIdManager } from "./producer-id-manager.js";
import { ReplicaManager } from "./replication/replica-manager.js";
import type { ConnectionInfo, RequestOutcome } from "./request-pipeline.js";
import { RequestPipeline } from "./request-pipeline.js";
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
  private pipeline: RequestPipeline | undefined;
  private enableProcessing!: () => void;
  private readonly processingEnabled: Promise<void>;
  private shutdownPromise: Promise<void> | undefined;
  private readonly shutdownHooks: Array<() => void | Promise<void>> = [];
  /** Request frames and fetch reads (Kafka's MemoryPool for the network layer). */
  readonly memoryPool = new MemoryPool();
  private _advertised: EndPoint[] = [];
  private store: EmbeddedMetadataStore | undefined;
  private controller: KafkaController | undefined;
  metadataCache: MetadataCache | undefined;
  replicaManager: ReplicaManager | undefined;
  groupCoordinator: GroupCoordinator | undefined;
  transactionCoordinator: TransactionCoordinator | undefined;
  /** The broker's metrics (served on metrics.http.listener). */
  readonly metrics: BrokerMetrics;
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
    this.metrics = new BrokerMetrics(this.time);
    this.metrics.bind({
      brokerState: () => BROKER_STATE[this.state],
      replicaManager: () => this.replicaManager,
      logManager: () => this._logManager,
      metadata: () => this.metadataCache,
      isActiveController: () => this.controller?.isActive ?? false,
      connectionsByListener: () => this._socketServer?.connectionsByListener() ?? new Map(),
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

  /** advertised.listeners with ports bound (0 → the bound port) and empty hosts → this host's name. */
  get advertisedEndpoints(): readonly EndPoint[] {
    return this._advertised;
  }

  async startup(): Promise<void> {
    if (this.state !== "NotRunning") throw new Error(`KafkaServer is ${this.state}`);
    this.state = "Starting";
    this.logger.info("starting");
    try {
      if (this.config.zookeeperConnect !== null) {
        throw new Error(
          `zookeeper.connect=${this.config.zookeeperConnect}: ZooKeeper mode is not supported yet; remove it to run a single broker on the embedded metadata store`,
        );
      }
      // The socket server binds first (Kafka binds before registering the broker, so the registration
      // carries the bound ports) but holds every request until startup has finished.
      const processor = {
        process: async (conn: ConnectionInfo, frame: Buffer, receivedNs: bigint): Promise<RequestOutcome> => {
          await this.processingEnabled;
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
      );
      await this._socketServer.startup();
      this._advertised = this.resolveAdvertised();

      // The embedded metadata store (the one-node cluster's "ZooKeeper") lives in the first log dir.
      const config = this.config;
      this.store = await EmbeddedMetadataStore.open(config.logDirs[0], this.time);
      this.controller = new KafkaController(this.store, {
        brokerId: config.brokerId,
        time: this.time,
        endpoints: this._advertised,
        rack: config.brokerRack,
        deleteTopicEnable: config.deleteTopicEnable,
        preferredClusterId: this.clusterIdFromMetaProperties(),
      });
      await this.controller.startup();
      const clusterId = this.controller.clusterId;
      this.logger.info(`Cluster ID = ${clusterId}`);

      this._logManager = new LogManager(config.logManagerConfig(clusterId), this.time, this.scheduler);
      this._logManager.startup();
      this._logManager.startTasks();

      const cache = new MetadataCache(this.store, { brokerId: config.brokerId });
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
        },
        this.metrics.brokerTopicStats,
      );
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
        (markers) => rm.appendTxnMarkers(markers),
        (topic) => cache.hasTopic(topic),
        this.time,
        this.scheduler,
      );
      this.transactionCoordinator.startup();
      // Registered before start(): the first delta is the whole current state.
      cache.onChange((delta) => this.applyMetadataDelta(delta));
      await cache.start();
      await cache.idle();
      // The static layer DescribeConfigs shows carries the effective broker.id (0 on the embedded single
      // node when broker.id is unset), as Kafka's config holds the generated id.
      const topicAdmin = new TopicAdmin(this.store, cache, {
        ...topicAdminOptionsFrom(config, this.time, this.scheduler),
        staticConfig: new Map([...config.originals, ["broker.id", String(config.brokerId)]]),
      });

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
      };
      const handlers = this.options.handlers ?? buildHandlers(services);
      this.pipeline = new RequestPipeline(handlers, this.time, this.memoryPool);
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

  /**
   * Applies a metadata change to this broker (what LeaderAndIsr / StopReplica do in a cluster): topic
   * configs to the LogManager first (new logs get them), then the partitions this broker is a replica of
   * to the ReplicaManager; deleted partitions, and partitions moved away, are stopped and their logs deleted.
   */
  private applyMetadataDelta(delta: MetadataDelta): void {
    const rm = this.replicaManager;
    const lm = this._logManager;
    if (rm === undefined || lm === undefined) return;
    try {
      if (delta.brokerConfigs.size > 0) this.applyDynamicBrokerConfigs(lm);
      for (const [topic, props] of delta.topicConfigs) {
        try {
          lm.setTopicConfig(topic, logConfigFrom(props, lm.defaultLogConfig));
        } catch (e) {
          this.logger.error(`Invalid config of topic ${topic} ignored: ${(e as Error).message}`);
        }
      }
      const id = this.config.brokerId;
      const mine = delta.partitions.filter((p) => p.replicas.includes(id));
      if (mine.length > 0) rm.becomeLeaderOrFollower(mine);
      const stop = [
        ...delta.removed,
        ...delta.partitions
          .filter((p) => !p.replicas.includes(id))
          .map((p) => ({ topic: p.topic, partition: p.partition })),
      ];
      if (stop.length > 0) rm.stopReplicas(stop, true);
      this.updateCoordinatorLeadership(delta);
    } catch (e) {
      this.logger.error(`Error applying a metadata change: ${(e as Error)?.stack ?? e}`);
    }
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

  /** The group coordinator follows this broker's leadership of __consumer_offsets partitions (Kafka's onLeadershipChange). */
  private updateCoordinatorLeadership(delta: MetadataDelta): void {
    const tc = this.transactionCoordinator;
    if (tc !== undefined) {
      for (const p of delta.partitions) {
        if (p.topic !== TRANSACTION_STATE_TOPIC_NAME) continue;
        if (p.leader === this.config.brokerId) tc.onElection(p.partition, p.leaderEpoch);
        else tc.onResignation(p.partition);
      }
      for (const r of delta.removed)
        if (r.topic === TRANSACTION_STATE_TOPIC_NAME) tc.onResignation(r.partition);
    }
    const gc = this.groupCoordinator;
    if (gc === undefined) return;
    for (const p of delta.partitions) {
      if (p.topic !== GROUP_METADATA_TOPIC_NAME) continue;
      if (p.leader === this.config.brokerId) gc.onElection(p.partition);
      else gc.onResignation(p.partition);
    }
    for (const r of delta.removed) if (r.topic === GROUP_METADATA_TOPIC_NAME) gc.onResignation(r.partition);
  }

  private resolveAdvertised(): EndPoint[] {
    const bound = this.socketServer.boundEndpoints();
    return this.config.advertisedListeners.map((a) => {
      const b = bound.find((x) => x.listenerName === a.listenerName);
      const port = a.port === 0 && b !== undefined ? b.port : a.port;
      // Kafka advertises the canonical host name when a listener has no host.
      const host = a.host === "" ? hostname() : a.host;
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
    const gc = this.groupCoordinator;
    if (gc !== undefined) await step("shutting down the group coordinator", () => gc.shutdown());
    const rm = this.replicaManager;
    if (rm !== undefined) await step("shutting down the replica manager", () => rm.shutdown());
    if (socketServer !== undefined) await step("stopping the socket server", () => socketServer.shutdown());
    const controller = this.controller;
    if (controller !== undefined) await step("shutting down the controller", () => controller.shutdown());
    const cache = this.metadataCache;
    if (cache !== undefined) await step("closing the metadata cache", () => cache.close());
    const store = this.store;
    if (store !== undefined) await step("closing the metadata store", () => store.close());
    if (this._logManager !== undefined)
      await step("shutting down the log manager", () => this._logManager!.shutdown());
    this.scheduler.shutdown();
    this.state = "NotRunning";
    this.logger.info("shut down completed");
    if (errors.length > 0) throw errors[0];
  }
}
