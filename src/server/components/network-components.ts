// The broker's network components (Kafka's KafkaServer.startup: the SocketServer bound early, the request
// handlers built late, request processing enabled last; KafkaServer.shutdown: request processing stopped
// first, the SocketServer closed near the end):
//   SocketServerComponent — every listener bound (so the registration carries the bound ports) and the
//     endpoints this broker advertises; at shutdown, the handlers still running awaited (bounded);
//   RequestHandlersComponent — the BrokerServices and the RequestPipeline over them (Kafka's KafkaApis and
//     request handler pool), with the client quotas: once built, the controller's requests are served;
//   MetricsComponent — the broker's metrics and the Prometheus endpoint (metrics.http.listener); failing to
//     bind it leaves the broker running without one;
//   RequestProcessingComponent — every request served (Kafka's enableRequestProcessing); at shutdown, no
//     more accepted, connections closed (stopProcessingRequests).

import type { MemoryPool } from "../../common/memory-pool.js";
import { defaultAdvertisedHost } from "../advertised-host.js";
import { AuthHelper } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { EndPoint } from "../end-point.js";
import type { HandlerRegistration } from "../handler.js";
import { buildHandlers } from "../handlers/index.js";
import { TopicAdmin, topicAdminOptionsFrom } from "../metadata/topic-admin.js";
import type { BrokerMetrics } from "../metrics/broker-metrics.js";
import { MetricsHttpServer } from "../metrics/metrics-http-server.js";
import { ClientQuotas } from "../quota/client-quotas.js";
import type { ReplicationQuotas } from "../quota/replication-quotas.js";
import { RequestThrottling } from "../quota/request-throttling.js";
import type { RequestChannel } from "../request-channel.js";
import { RequestPipeline } from "../request-pipeline.js";
import type { CredentialCache } from "../security/credential-cache.js";
import { SocketServer } from "../socket-server.js";
import type { GroupCoordinatorComponent, TransactionCoordinatorComponent } from "./coordinator-components.js";
import type {
  AuthorizerComponent,
  MetadataCacheComponent,
  MetadataStoreComponent,
} from "./metadata-components.js";
import type {
  ControllerComponent,
  ControllerRequestsComponent,
  ReplicaManagerComponent,
} from "./replication-components.js";
import { ComponentOf, type ServerComponent, type ServerContext, type Startable } from "./server-component.js";
import type { LogManagerComponent } from "./storage-components.js";

export class SocketServerComponent extends ComponentOf<SocketServer> {
  private advertised: EndPoint[] = [];

  constructor(
    ctx: ServerContext,
    /** Where requests go (held until the broker has started: RequestChannel). */
    private readonly processor: RequestChannel,
    private readonly memoryPool: MemoryPool,
    private readonly credentialCache: CredentialCache,
  ) {
    super(ctx, "socket server", "stopping the socket server");
  }

  /** Binds every listener (a port in use fails it), then works out the endpoints to advertise. */
  async startup(): Promise<void> {
    const { config, time, scheduler } = this.ctx;
    const server = this.hold(
      new SocketServer(config, this.processor, time, scheduler, this.memoryPool, this.credentialCache),
    );
    await server.startup();
    this.advertised = await this.resolveAdvertised(server);
  }

  /**
   * advertised.listeners with ports bound (0 → the bound port) and empty hosts → this host's name, or
   * localhost when that name does not lead back to this machine (advertised-host.ts).
   */
  get advertisedEndpoints(): readonly EndPoint[] {
    return this.advertised;
  }

  /** Kafka's stopProcessingRequests: no more connections or requests; those being handled finish. */
  stopProcessingRequests(): void {
    this.current?.stopProcessingRequests();
  }

  async shutdown(): Promise<void> {
    await this.current?.shutdown();
  }

  private async resolveAdvertised(server: SocketServer): Promise<EndPoint[]> {
    const { config, logger } = this.ctx;
    const bound = server.boundEndpoints();
    // Kafka advertises the host name when a listener has no host; here only a name that leads back to this
    // machine, else localhost (advertised-host.ts).
    const noHost = config.advertisedListeners.filter((a) => a.host === "");
    const defaultHost = noHost.length > 0 ? await defaultAdvertisedHost() : undefined;
    if (defaultHost?.fallbackReason !== undefined)
      logger.warn(
        `Advertising ${defaultHost.host} for ${noHost.map((a) => a.listenerName).join(", ")}: ${defaultHost.fallbackReason}; clients on other machines need advertised.listeners set`,
      );
    return config.advertisedListeners.map((a) => {
      const b = bound.find((x) => x.listenerName === a.listenerName);
      const port = a.port === 0 && b !== undefined ? b.port : a.port;
      const host = a.host === "" ? defaultHost!.host : a.host;
      return { ...a, host, port };
    });
  }
}

/** The components the request handlers are built over. */
export interface RequestHandlerParts {
  readonly metadataStore: MetadataStoreComponent;
  readonly metadataCache: MetadataCacheComponent;
  readonly logManager: LogManagerComponent;
  readonly replicaManager: ReplicaManagerComponent;
  readonly groupCoordinator: GroupCoordinatorComponent;
  readonly transactionCoordinator: TransactionCoordinatorComponent;
  readonly controller: ControllerComponent;
  readonly controllerRequests: ControllerRequestsComponent;
  readonly authorizer: AuthorizerComponent;
  readonly replicationQuotas: ReplicationQuotas;
  readonly metrics: BrokerMetrics;
  readonly memoryPool: MemoryPool;
}

export class RequestHandlersComponent implements Startable {
  constructor(
    private readonly ctx: ServerContext,
    private readonly parts: RequestHandlerParts,
    private readonly channel: RequestChannel,
    /** Handlers to serve instead of the static list (tests). */
    private readonly handlers?: readonly HandlerRegistration[],
  ) {}

  /** Builds the BrokerServices and the pipeline; the controller's requests are served from now on. */
  startup(): void {
    const { config, time, scheduler } = this.ctx;
    const p = this.parts;
    const cache = p.metadataCache.get();
    // Client quotas (server/quota): from the user/client config entities, applied to every request.
    const clientQuotas = new ClientQuotas(
      {
        numQuotaSamples: config.getInt("quota.window.num"),
        quotaWindowSizeSeconds: config.getInt("quota.window.size.seconds"),
      },
      time,
    );
    clientQuotas.attach(cache);
    p.metrics.registry.register(() => clientQuotas.collect());
    const clientQuotaThrottling = new RequestThrottling(clientQuotas);
    const transactions = p.transactionCoordinator;
    const services: BrokerServices = {
      brokerId: config.brokerId,
      config,
      time,
      scheduler,
      logManager: p.logManager.get(),
      metadata: cache,
      // The static layer DescribeConfigs shows carries the effective broker.id (0 on the embedded single
      // node when broker.id is unset), as Kafka's config holds the generated id.
      topicAdmin: new TopicAdmin(p.metadataStore.get(), cache, {
        ...topicAdminOptionsFrom(config, time, scheduler),
        staticConfig: new Map([...config.originals, ["broker.id", String(config.brokerId)]]),
      }),
      replicaManager: p.replicaManager.get(),
      groupCoordinator: p.groupCoordinator.get(),
      producerIdManager: transactions.producerIdManager,
      transactionCoordinator: transactions.get(),
      addPartitionsToTxnManager: transactions.addPartitionsToTxnManager,
      controller: p.controller.get(),
      controllerRequests: p.controllerRequests.get(),
      auth: new AuthHelper(p.authorizer.current),
      replicationQuotas: p.replicationQuotas,
      clientQuotas: clientQuotaThrottling,
    };
    const handlers = this.handlers ?? buildHandlers(services);
    this.channel.setPipeline(new RequestPipeline(handlers, time, p.memoryPool, clientQuotaThrottling));
  }
}

/** current: the metrics endpoint once bound. */
export class MetricsComponent extends ComponentOf<MetricsHttpServer> {
  constructor(
    ctx: ServerContext,
    private readonly metrics: BrokerMetrics,
  ) {
    super(ctx, "metrics endpoint", "stopping the metrics endpoint");
  }

  async startup(): Promise<void> {
    this.metrics.start(this.ctx.scheduler);
    const listener = this.ctx.config.metricsHttpListener;
    if (listener !== null) {
      const server = new MetricsHttpServer(listener, () => this.metrics.scrape());
      if (await server.start()) {
        this.hold(server);
        this.metrics.runtime.start();
      }
    }
  }

  /** The bound port of the metrics endpoint (undefined when disabled, not started or not bound). */
  get port(): number | undefined {
    return this.current?.port;
  }

  async shutdown(): Promise<void> {
    const server = this.release();
    try {
      if (server !== undefined) await server.stop();
    } finally {
      this.metrics.stop();
    }
  }
}

export class RequestProcessingComponent implements ServerComponent {
  readonly stopping = "stopping the socket server";

  constructor(
    private readonly channel: RequestChannel,
    private readonly socketServer: SocketServerComponent,
  ) {}

  startup(): void {
    this.channel.enableRequestProcessing();
  }

  /** Requests still held are answered by closing their connections; no more are accepted. */
  shutdown(): void {
    this.channel.close();
    this.socketServer.stopProcessingRequests();
  }
}
