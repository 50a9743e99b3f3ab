// ClusterClient: a client's view of a cluster (Kafka's Metadata + ManualMetadataUpdater + the
// per-node connections of NetworkClient): bootstrap servers, Metadata refreshes, brokers by id,
// partition leaders, one cached BrokerConnection per broker, FindCoordinator, and the retry loop
// (retriable KafkaClientErrors retried after `retry.backoff.ms` until the API timeout).
//
// Usage:
//   const cluster = new ClusterClient({ bootstrapServers: "127.0.0.1:9092", clientId: "me" });
//   const md = await cluster.refreshMetadata(["orders"]);        // or refreshMetadata() for all topics
//   const leader = cluster.leaderFor("orders", 0);               // broker id, or undefined
//   const conn = await cluster.connectionTo(leader!);            // cached BrokerConnection
//   const any = await cluster.anyConnection();                   // a broker (bootstrap before metadata)
//   const coordinator = await cluster.findCoordinator("group-1", "group");
//   const r = await cluster.withRetries("list offsets", async () => { ... });  // retries retriable errors
//   await cluster.close();

import { SYSTEM_TIME, type Time } from "../../common/time.js";
import { type ApiDefinition, Apis } from "../../protocol/generated/api-table.js";
import { ErrorCode } from "../../protocol/generated/errors.js";
import type { MetadataRequest } from "../../protocol/generated/messages/MetadataRequest.js";
import type { MetadataResponse } from "../../protocol/generated/messages/MetadataResponse.js";
import { KafkaClientError } from "../errors.js";
import { BrokerConnection, type ConnectionOptions } from "./broker-connection.js";

export interface ClusterClientOptions extends ConnectionOptions {
  /** `bootstrap.servers`: "host:port,host:port" or a list. */
  readonly bootstrapServers: string | readonly string[];
  /** `retry.backoff.ms`: wait between retries. Default 100. */
  readonly retryBackoffMs?: number;
  /** `default.api.timeout.ms`: bound on an operation with its retries. Default 60000. */
  readonly defaultApiTimeoutMs?: number;
  /** Clock for retry deadlines. Default the system clock. */
  readonly time?: Time;
}

export interface BrokerNode {
  readonly nodeId: number;
  readonly host: string;
  readonly port: number;
  readonly rack: string | null;
}

export interface PartitionMetadata {
  readonly partition: number;
  readonly errorCode: number;
  /** Leader broker id, -1 when there is none. */
  readonly leader: number;
  readonly leaderEpoch: number;
  readonly replicas: readonly number[];
  readonly isr: readonly number[];
  readonly offlineReplicas: readonly number[];
}

export interface TopicMetadata {
  readonly name: string;
  readonly topicId: string;
  readonly errorCode: number;
  readonly isInternal: boolean;
  /** By partition index, sorted. */
  readonly partitions: readonly PartitionMetadata[];
}

export interface ClusterMetadata {
  readonly clusterId: string | null;
  readonly controllerId: number;
  readonly brokers: ReadonlyMap<number, BrokerNode>;
  /** Topics of the last response, by name (including those answered with an error). */
  readonly topics: ReadonlyMap<string, TopicMetadata>;
}

export type CoordinatorType = "group" | "transaction";

/** "host:port" → [host, port]; IPv6 as "[::1]:9092". Throws a KafkaClientError for a bad entry. */
export function parseHostPort(entry: string): { host: string; port: number } {
  const s = entry.trim();
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(s) ?? /^([^:]+):(\d+)$/.exec(s);
  const port = m ? Number(m[2]) : Number.NaN;
  if (!m || !(port > 0 && port < 65536))
    throw KafkaClientError.of("INVALID_CONFIG", `Invalid url in bootstrap.servers: ${entry}`);
  return { host: m[1], port };
}

const ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA";

export class ClusterClient {
  readonly options: ClusterClientOptions;
  readonly bootstrap: ReadonlyArray<{ host: string; port: number }>;
  readonly retryBackoffMs: number;
  readonly defaultApiTimeoutMs: number;
  readonly time: Time;
  private current: ClusterMetadata = {
    clusterId: null,
    controllerId: -1,
    brokers: new Map(),
    topics: new Map(),
  };
  /** Connections by broker id (pending connects included, so concurrent callers share one). */
  private readonly byBroker = new Map<number, Promise<BrokerConnection>>();
  /** Connections to bootstrap addresses, used before the broker ids are known. */
  private readonly byAddress = new Map<string, Promise<BrokerConnection>>();
  private isClosed = false;
  private nextBootstrap = 0;

  constructor(options: ClusterClientOptions) {
    this.options = options;
    const list =
      typeof options.bootstrapServers === "string"
        ? options.bootstrapServers.split(",").filter((s) => s.trim() !== "")
        : [...options.bootstrapServers];
    if (list.length === 0) throw KafkaClientError.of("INVALID_CONFIG", "bootstrap.servers is empty");
    this.bootstrap = list.map(parseHostPort);
    this.retryBackoffMs = options.retryBackoffMs ?? 100;
    this.defaultApiTimeoutMs = options.defaultApiTimeoutMs ?? 60_000;
    this.time = options.time ?? SYSTEM_TIME;
  }

  /** The metadata of the last refresh. */
  get metadata(): ClusterMetadata {
    return this.current;
  }

  get clusterId(): string | null {
    return this.current.clusterId;
  }

  get controllerId(): number {
    return this.current.controllerId;
  }

  brokers(): BrokerNode[] {
    return [...this.current.brokers.values()].sort((a, b) => a.nodeId - b.nodeId);
  }

  broker(nodeId: number): BrokerNode | undefined {
    return this.current.brokers.get(nodeId);
  }

  topic(name: string): TopicMetadata | undefined {
    return this.current.topics.get(name);
  }

  /** Leader of a partition per the last refresh; undefined when unknown or leaderless. */
  leaderFor(topic: string, partition: number): number | undefined {
    const p = this.current.topics.get(topic)?.partitions.find((x) => x.partition === partition);
    return p && p.leader >= 0 ? p.leader : undefined;
  }

  /**
   * Sends Metadata for `topics` (all topics when omitted or null) and records the answer. Topics in
   * the answer replace those known; with all topics, topics no longer listed are forgotten.
   */
  async refreshMetadata(
    topics: readonly string[] | null = null,
    options: { allowAutoTopicCreation?: boolean } = {},
  ): Promise<ClusterMetadata> {
    const res = await this.withRetries("Metadata", async () => {
      const conn = await this.anyConnection();
      const version = conn.versionFor(Apis.Metadata, { min: 1 });
      const request: MetadataRequest = {
        topics: topics === null ? null : topics.map((name) => ({ topicId: ZERO_UUID, name })),
        allowAutoTopicCreation: options.allowAutoTopicCreation ?? false,
        includeClusterAuthorizedOperations: false,
        includeTopicAuthorizedOperations: false,
      };
      return conn.send(Apis.Metadata, version, request);
    });
    this.apply(res, topics === null);
    return this.current;
  }

  /**
   * Metadata of one topic, refreshing when it is unknown or `refresh` is set. Throws the topic's error
   * (UNKNOWN_TOPIC_OR_PARTITION, …) as a KafkaClientError.
   */
  async topicMetadata(topic: string, refresh = false): Promise<TopicMetadata> {
    let t = this.current.topics.get(topic);
    if (!t || refresh || t.errorCode !== ErrorCode.NONE) {
      await this.refreshMetadata([topic]);
      t = this.current.topics.get(topic);
    }
    if (!t) throw KafkaClientError.of("UNKNOWN_TOPIC_OR_PARTITION", `Topic '${topic}' does not exist`);
    if (t.errorCode !== ErrorCode.NONE)
      throw new KafkaClientError(
        t.errorCode,
        t.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION ? `Topic '${topic}' does not exist` : undefined,
      );
    return t;
  }

  /** The cached connection to a broker, opened on first use (refreshes metadata for an unknown id). */
  async connectionTo(brokerId: number): Promise<BrokerConnection> {
    this.checkOpen();
    const cached = this.byBroker.get(brokerId);
    if (cached) {
      const conn = await cached.catch(() => undefined);
      if (conn && !conn.closed) return conn;
      if (this.byBroker.get(brokerId) === cached) this.byBroker.delete(brokerId);
      return this.connectionTo(brokerId);
    }
    let node = this.current.brokers.get(brokerId);
    if (!node) {
      await this.refreshMetadata();
      node = this.current.brokers.get(brokerId);
    }
    if (!node)
      throw KafkaClientError.of("BROKER_NOT_AVAILABLE", `Broker ${brokerId} is not in the cluster metadata`);
    if (this.byBroker.has(brokerId)) return this.connectionTo(brokerId);
    // A live bootstrap connection to the same address serves as this broker's connection.
    const { host, port } = node;
    const bootstrap = this.byAddress.get(`${host}:${port}`);
    const pending = (async () => {
      const conn = await bootstrap?.catch(() => undefined);
      return conn && !conn.closed ? conn : this.open(host, port);
    })();
    this.byBroker.set(brokerId, pending);
    pending.catch(() => {
      if (this.byBroker.get(brokerId) === pending) this.byBroker.delete(brokerId);
    });
    return pending;
  }

  /**
   * A live connection to some broker: an open one if any, else the known brokers, else the bootstrap
   * servers in turn. Throws NETWORK_EXCEPTION when none can be reached.
   */
  async anyConnection(): Promise<BrokerConnection> {
    this.checkOpen();
    for (const p of [...this.byBroker.values(), ...this.byAddress.values()]) {
      const conn = await p.catch(() => undefined);
      if (conn && !conn.closed) return conn;
    }
    let lastError: unknown;
    for (const node of this.brokers()) {
      try {
        return await this.connectionTo(node.nodeId);
      } catch (e) {
        lastError = e;
      }
    }
    for (let i = 0; i < this.bootstrap.length; i++) {
      const { host, port } = this.bootstrap[(this.nextBootstrap + i) % this.bootstrap.length];
      const key = `${host}:${port}`;
      const pending = this.open(host, port);
      this.byAddress.set(key, pending);
      try {
        const conn = await pending;
        this.nextBootstrap = (this.nextBootstrap + i) % this.bootstrap.length;
        return conn;
      } catch (e) {
        if (this.byAddress.get(key) === pending) this.byAddress.delete(key);
        lastError = e;
      }
    }
    if (lastError instanceof KafkaClientError) throw lastError;
    throw KafkaClientError.of("NETWORK_EXCEPTION", `No broker reachable (${String(lastError)})`);
  }

  /** The connection to the controller (DescribeCluster/Metadata's controllerId). */
  async controllerConnection(): Promise<BrokerConnection> {
    if (this.current.controllerId < 0) await this.refreshMetadata();
    if (this.current.controllerId < 0) throw KafkaClientError.of("NOT_CONTROLLER", "No controller is known");
    return this.connectionTo(this.current.controllerId);
  }

  /**
   * Sends to the controller, retrying retriable errors; when `codes` of the answer include NOT_CONTROLLER
   * the metadata is refreshed and the request sent again (to the new controller).
   */
  async sendToController<Req, Res>(
    api: ApiDefinition<Req, Res>,
    request: (version: number) => Req,
    codes: (res: Res) => number[],
  ): Promise<Res> {
    return this.withRetries(api.name, async (attempt) => {
      if (attempt > 0 || this.current.controllerId < 0) await this.refreshMetadata([]);
      const conn = await this.controllerConnection();
      const version = conn.versionFor(api);
      const res = await conn.send(api, version, request(version));
      if (codes(res).includes(ErrorCode.NOT_CONTROLLER)) throw KafkaClientError.of("NOT_CONTROLLER");
      return res;
    });
  }

  /** The coordinator of a group or transactional id (FindCoordinator), retried while it loads. */
  async findCoordinator(key: string, type: CoordinatorType | number): Promise<BrokerNode> {
    const keyType = type === "group" ? 0 : type === "transaction" ? 1 : type;
    return this.withRetries(`FindCoordinator(${key})`, async () => {
      const conn = await this.anyConnection();
      const version = conn.versionFor(Apis.FindCoordinator);
      const res = await conn.send(Apis.FindCoordinator, version, {
        key: version < 4 ? key : "",
        keyType,
        coordinatorKeys: version >= 4 ? [key] : [],
      });
      const c =
        version >= 4
          ? res.coordinators.find((x) => x.key === key)
          : {
              nodeId: res.nodeId,
              host: res.host,
              port: res.port,
              errorCode: res.errorCode,
              errorMessage: res.errorMessage,
            };
      if (!c) throw KafkaClientError.of("COORDINATOR_NOT_AVAILABLE", `No coordinator returned for '${key}'`);
      if (c.errorCode !== ErrorCode.NONE) throw new KafkaClientError(c.errorCode, c.errorMessage);
      const node: BrokerNode = { nodeId: c.nodeId, host: c.host, port: c.port, rack: null };
      if (!this.current.brokers.has(node.nodeId)) {
        const brokers = new Map(this.current.brokers);
        brokers.set(node.nodeId, node);
        this.current = { ...this.current, brokers };
      }
      return node;
    });
  }

  /**
   * Runs `fn`, retrying retriable KafkaClientErrors after retry.backoff.ms until `timeoutMs`
   * (default.api.timeout.ms) has passed; then throws the last error. Non-retriable errors throw at once.
   */
  async withRetries<T>(
    what: string,
    fn: (attempt: number) => Promise<T>,
    timeoutMs = this.defaultApiTimeoutMs,
  ): Promise<T> {
    const deadline = this.time.milliseconds() + timeoutMs;
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn(attempt);
      } catch (e) {
        if (!(e instanceof KafkaClientError) || !e.retriable || this.isClosed) throw e;
        if (this.time.milliseconds() + this.retryBackoffMs >= deadline) {
          if (e.code === ErrorCode.REQUEST_TIMED_OUT || e.code === ErrorCode.NETWORK_EXCEPTION) throw e;
          throw new KafkaClientError(e.code, `${what}: ${e.message} (gave up after ${timeoutMs} ms)`);
        }
        await new Promise((r) => setTimeout(r, this.retryBackoffMs));
      }
    }
  }

  /** Closes every connection. */
  async close(): Promise<void> {
    this.isClosed = true;
    const all = [...this.byBroker.values(), ...this.byAddress.values()];
    this.byBroker.clear();
    this.byAddress.clear();
    for (const p of all) {
      const conn = await p.catch(() => undefined);
      conn?.close();
    }
  }

  /** The TLS and SASL settings every connection of this client uses (for connections it does not cache). */
  get security(): Pick<ConnectionOptions, "ssl" | "sasl"> {
    return { ssl: this.options.ssl, sasl: this.options.sasl };
  }

  private checkOpen(): void {
    if (this.isClosed) throw KafkaClientError.of("NETWORK_EXCEPTION", "The client is closed");
  }

  private open(host: string, port: number): Promise<BrokerConnection> {
    return BrokerConnection.connect(host, port, this.options);
  }

  private apply(res: MetadataResponse, allTopics: boolean): void {
    const brokers = new Map<number, BrokerNode>();
    for (const b of res.brokers)
      brokers.set(b.nodeId, { nodeId: b.nodeId, host: b.host, port: b.port, rack: b.rack });
    const topics = new Map<string, TopicMetadata>(allTopics ? [] : this.current.topics);
    for (const t of res.topics) {
      if (t.name === null) continue;
      topics.set(t.name, {
        name: t.name,
        topicId: t.topicId,
        errorCode: t.errorCode,
        isInternal: t.isInternal,
        partitions: t.partitions
          .map((p) => ({
            partition: p.partitionIndex,
            errorCode: p.errorCode,
            leader: p.leaderId,
            leaderEpoch: p.leaderEpoch,
            replicas: p.replicaNodes,
            isr: p.isrNodes,
            offlineReplicas: p.offlineReplicas,
          }))
          .sort((a, b) => a.partition - b.partition),
      });
    }
    // Connections to brokers that left the cluster are closed.
    for (const [id, p] of this.byBroker) {
      if (!brokers.has(id)) {
        this.byBroker.delete(id);
        void p.then((c) => c.close()).catch(() => undefined);
      }
    }
    this.current = { clusterId: res.clusterId, controllerId: res.controllerId, brokers, topics };
  }
}
