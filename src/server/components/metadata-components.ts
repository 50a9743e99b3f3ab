// The broker's metadata components (Kafka's KafkaServer.startup: initZkClient, the cluster id and broker.id,
// the metadata cache, the authorizer, the broker's registration):
//   MetadataStoreComponent — ZooKeeper (zookeeper.connect) or the embedded store in
//     `<first log dir>/__tributary_metadata.json`, its KafkaZkClient with the top-level znodes, the cluster
//     id (Kafka's getOrGenerateClusterId) and a generated broker.id (getOrGenerateBrokerId); closed at
//     shutdown (this broker's ephemeral znodes go);
//   MetadataCacheComponent — the MetadataCache over the store, its configs loaded and applied by the
//     ConfigHandler; closed at shutdown;
//   AuthorizerComponent — the ACL authorizer (authorizer.class.name), its cache loaded before any request
//     is served;
//   BrokerRegistration — /brokers/ids/<id> and the broker epoch (its czxid), registered again by the
//     controller after a session expiry.

import { readBrokerMetadata } from "../../storage/checkpoint/broker-metadata.js";
import { releaseSpaceReservesOfFullDirs } from "../../storage/log-dir-space.js";
import { ConfigHandler } from "../config-handler.js";
import { EmbeddedMetadataStore } from "../metadata/embedded-metadata-store.js";
import { KafkaZkClient, type PreviousRegistration } from "../metadata/kafka-zk-client.js";
import { MetadataCache } from "../metadata/metadata-cache.js";
import type { MetadataStore } from "../metadata/metadata-store.js";
import { readRegistrationSession, writeRegistrationSession } from "../metadata/registration-session-file.js";
import { ZooKeeperMetadataStore } from "../metadata/zookeeper-metadata-store.js";
import type { ReplicationQuotas } from "../quota/replication-quotas.js";
import { AclAuthorizer, parseSuperUsers } from "../security/authorizer/acl-authorizer.js";
import type { CredentialCache } from "../security/credential-cache.js";
import type { SocketServerComponent } from "./network-components.js";
import { ComponentOf, type ServerContext, type Startable, started } from "./server-component.js";
import type { LogDirLocksComponent, LogManagerComponent } from "./storage-components.js";

export class MetadataStoreComponent extends ComponentOf<MetadataStore> {
  private _zkClient: KafkaZkClient | undefined;
  private _clusterId: string | undefined;

  constructor(ctx: ServerContext) {
    super(ctx, "metadata store", "closing the metadata store");
  }

  async startup(): Promise<void> {
    const { config, logger } = this.ctx;
    // A full log dir gives back its space reserve before anything writes to it (the embedded metadata
    // store, in the first dir, compacts its journal at open): a broker restarted on a full disk starts.
    releaseSpaceReservesOfFullDirs(config.logDirs, config.getLong("log.dir.space.reserve.bytes"));
    const store = this.hold(await this.openMetadataStore());
    const zk = new KafkaZkClient(store);
    this._zkClient = zk;
    await zk.createTopLevelPaths();
    // The embedded store re-created beside existing logs keeps their cluster id; a ZooKeeper without
    // /cluster/id is a new cluster (Kafka's getOrGenerateClusterId), and logs of another one are refused.
    const clusterId = await zk.getOrCreateClusterId(
      config.zookeeperConnect === null ? this.clusterIdFromMetaProperties() : undefined,
    );
    this._clusterId = clusterId;
    logger.info(`Cluster ID = ${clusterId}`);
    if (config.brokerId < 0) config.brokerId = await this.generateBrokerId(zk);
  }

  get zkClient(): KafkaZkClient {
    return started(this._zkClient, "metadata store");
  }

  /** The KafkaZkClient once the store is open, else undefined. */
  get currentZkClient(): KafkaZkClient | undefined {
    return this._zkClient;
  }

  get clusterId(): string {
    return started(this._clusterId, "metadata store");
  }

  async shutdown(): Promise<void> {
    await this.current?.close();
  }

  /** ZooKeeper when zookeeper.connect is set, else the embedded store in the first log dir. */
  private async openMetadataStore(): Promise<MetadataStore> {
    const { config, time, logger } = this.ctx;
    if (config.zookeeperConnect === null) return EmbeddedMetadataStore.open(config.logDirs[0], time);
    const sessionTimeoutMs = config.getInt("zookeeper.session.timeout.ms");
    const connectionTimeoutMs = config.getInt("zookeeper.connection.timeout.ms") ?? sessionTimeoutMs;
    logger.info(`Connecting to zookeeper on ${config.zookeeperConnect}`);
    return ZooKeeperMetadataStore.connect(config.zookeeperConnect, { sessionTimeoutMs, connectionTimeoutMs });
  }

  /** The cluster.id some log dir's meta.properties already carries (reused when /cluster/id is missing). */
  private clusterIdFromMetaProperties(): string | undefined {
    for (const dir of this.ctx.config.logDirs) {
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
   * Kafka's getOrGenerateBrokerId for broker.id=-1: the broker.id a log dir's meta.properties holds, else
   * (broker.id.generation.enable) reserved.broker.max.id + the new version of /brokers/seqid.
   */
  private async generateBrokerId(zk: KafkaZkClient): Promise<number> {
    const { config, logger } = this.ctx;
    for (const dir of config.logDirs) {
      try {
        const id = readBrokerMetadata(dir)?.brokerId;
        if (id !== undefined && id >= 0) return id;
      } catch {
        // A damaged meta.properties is reported by the LogManager.
      }
    }
    if (!config.getBoolean("broker.id.generation.enable")) {
      throw new Error("broker.id is not set and broker.id.generation.enable is false: set broker.id");
    }
    const seq = await zk.generateBrokerSequenceId();
    const id = config.getInt("reserved.broker.max.id") + seq;
    logger.info(`Generated broker.id ${id} from /brokers/seqid`);
    return id;
  }
}

export class MetadataCacheComponent extends ComponentOf<MetadataCache> {
  constructor(
    ctx: ServerContext,
    private readonly metadataStore: MetadataStoreComponent,
    private readonly logManager: LogManagerComponent,
    private readonly replicationQuotas: ReplicationQuotas,
    private readonly credentialCache: CredentialCache,
  ) {
    super(ctx, "metadata cache", "closing the metadata cache");
  }

  /**
   * The cache over the metadata store, created by its first user (the ReplicaManager, which starts before
   * this component), empty until this component starts.
   */
  override get(): MetadataCache {
    return (
      this.current ??
      this.hold(new MetadataCache(this.metadataStore.get(), { brokerId: this.ctx.config.brokerId }))
    );
  }

  /** Loads every config (applied by the ConfigHandler) and follows the store from now on. */
  async startup(): Promise<void> {
    const cache = this.get();
    // Registered before start(): the first delta is every config.
    new ConfigHandler({
      config: this.ctx.config,
      cache,
      logManager: () => this.logManager.current,
      replicationQuotas: this.replicationQuotas,
      credentialCache: this.credentialCache,
      logger: this.ctx.logger,
    }).attach();
    await cache.start();
    await cache.idle();
    this.credentialCache.setLoaded();
  }

  shutdown(): void {
    this.current?.close();
  }
}

/** current: the ACL authorizer, or undefined without one (every request allowed). */
export class AuthorizerComponent extends ComponentOf<AclAuthorizer> {
  constructor(
    ctx: ServerContext,
    private readonly metadataStore: MetadataStoreComponent,
  ) {
    super(ctx, "authorizer", "closing the authorizer");
  }

  /** With authorizer.class.name set, the ACL authorizer with its cache loaded. */
  async startup(): Promise<void> {
    const { config, time, scheduler } = this.ctx;
    if ((config.getString("authorizer.class.name") ?? "") === "") return;
    const authorizer = new AclAuthorizer(
      this.metadataStore.get(),
      {
        superUsers: parseSuperUsers(config.getString("super.users") ?? ""),
        allowEveryoneIfNoAclFound: config.getBoolean("allow.everyone.if.no.acl.found"),
      },
      time,
      scheduler,
    );
    await authorizer.start();
    this.hold(authorizer);
  }

  shutdown(): void {
    this.current?.close();
  }
}

export class BrokerRegistration implements Startable {
  /** The czxid of this broker's registration znode (Kafka's broker epoch); -1 before it registers. */
  brokerEpoch = -1n;

  constructor(
    private readonly ctx: ServerContext,
    private readonly metadataStore: MetadataStoreComponent,
    private readonly metadataCache: MetadataCacheComponent,
    private readonly logDirLocks: LogDirLocksComponent,
    private readonly socketServer: SocketServerComponent,
  ) {}

  /** Registers; from then on the metadata cache reloads what the store holds after each new session. */
  async startup(): Promise<void> {
    await this.register();
    const cache = this.metadataCache.get();
    this.metadataStore.get().registerStateChangeHandler({
      name: "broker-metadata",
      afterInitializingSession: () => cache.reloadAfterNewSession(),
    });
  }

  /**
   * Registers (or re-registers, after a session expiry) /brokers/ids/<id>; keeps the new broker epoch.
   * On ZooKeeper, a registration still held by this broker's own previous session (recorded in its first
   * locked log dir, registration-session-file.ts) is waited for, up to 1.5 × the negotiated session
   * timeout: ZooKeeper expires a session on the first tick after the timeout, and a tick is at most half
   * of a negotiated timeout.
   */
  async register(): Promise<void> {
    const zk = this.metadataStore.currentZkClient;
    if (zk === undefined) return;
    const { config, logger, time, scheduler } = this.ctx;
    const brokerId = config.brokerId;
    const store = this.metadataStore.get();
    const dir = config.logDirs.find((d) => this.logDirLocks.holds(d));
    const previous: PreviousRegistration | undefined =
      store instanceof ZooKeeperMetadataStore && dir !== undefined
        ? {
            sessionId: readRegistrationSession(dir, brokerId),
            waitMs: Math.ceil(store.negotiatedSessionTimeoutMs * 1.5),
            record: (sessionId) => {
              try {
                writeRegistrationSession(dir, brokerId, sessionId);
              } catch (e) {
                logger.warn(
                  `Cannot record the registration's ZooKeeper session in ${dir}: ${(e as Error).message} (a restart within the session timeout will then be refused)`,
                );
              }
            },
            time,
            scheduler,
          }
        : undefined;
    this.brokerEpoch = await zk.registerBroker(
      {
        id: brokerId,
        endpoints: this.socketServer.advertisedEndpoints,
        rack: config.brokerRack,
        jmxPort: -1,
        timestampMs: time.milliseconds(),
        features: {},
      },
      previous,
    );
  }
}
