// MetadataCache: the cluster metadata as this broker knows it, which the API handlers read (Kafka's
// ZkMetadataCache). Owns the in-memory view of: cluster id, controller id, alive brokers (endpoints per
// listener, racks), topics (ids, replica assignment, partition states), topic configs and dynamic broker
// configs, and topics queued for deletion. Brokers, the controller id and partition states come only from
// the controller's UpdateMetadata requests (updateMetadata), as in Kafka: no broker watches partition
// znodes. Topic and broker configs are read from the store (/config/topics/<t> when a topic first appears,
// then the /config/changes notifications), and /admin/delete_topics is followed for the deletion marks.
// Each applied change is delivered to onChange listeners as a delta (changed partition states, removed
// partitions, changed topic and broker configs). Events are applied one at a time, in order.

import { Logger } from "../../common/logger.js";
import type { Scheduler } from "../../common/scheduler.js";
import { SerialEventQueue } from "../../common/serial-event-queue.js";
import type { UpdateMetadataRequest } from "../../protocol/generated/messages/UpdateMetadataRequest.js";
import type { MetadataStore } from "./metadata-store.js";
import { MetadataStoreError } from "./metadata-store.js";
import { type PartitionState, partitionStateFrom } from "./partition-state.js";
import {
  type BrokerEndPoint,
  ClusterIdZNode,
  ConfigEntityChangeNotificationSequenceZNode,
  ConfigEntityZNode,
  ZkPaths,
} from "./zk-data.js";

/** UpdateMetadata's leader for partitions of a topic being deleted (Kafka's LeaderDuringDelete). */
const LEADER_DURING_DELETE = -2;
const SECURITY_PROTOCOL_NAMES = ["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"];

export interface AliveBroker {
  readonly id: number;
  readonly rack: string | null;
  readonly endpoints: readonly BrokerEndPoint[];
}

export interface MetadataDelta {
  /** Partition states that are new or changed (leader, epoch, ISR, replicas). */
  readonly partitions: PartitionState[];
  /** Partitions that no longer exist (topic deleted). */
  readonly removed: Array<{ topic: string; partition: number }>;
  /** Topic configs that were set or changed ({} when every override was removed or the topic is new). */
  readonly topicConfigs: Map<string, Record<string, string>>;
  /** Dynamic broker config entities (`/config/brokers/<id|<default>>`) that were loaded or changed. */
  readonly brokerConfigs: Set<string>;
  /**
   * User and client config entities that were loaded or changed, by entity path as the notifications
   * name them (`users/<u>`, `clients/<c>`, `users/<u>/clients/<c>`; sanitized names, `<default>`).
   */
  readonly entityConfigs: Set<string>;
}

export type MetadataListener = (delta: MetadataDelta) => void;

interface TopicEntry {
  topicId: string;
  assignment: ReadonlyMap<number, readonly number[]>;
  states: Map<number, PartitionState>;
}

export interface MetadataCacheOptions {
  readonly brokerId: number;
  readonly logger?: Logger;
}

export class MetadataCache {
  private readonly log: Logger;
  private readonly events: SerialEventQueue;
  private closed = false;
  private started = false;
  private _clusterId: string | null = null;
  private _controllerId = -1;
  private brokers = new Map<number, AliveBroker>();
  private readonly topics = new Map<string, TopicEntry>();
  private readonly topicsById = new Map<string, string>();
  private readonly topicConfigs = new Map<string, Record<string, string>>();
  private readonly brokerConfigs = new Map<string, Record<string, string>>();
  /** users/clients entities by entity path (see MetadataDelta.entityConfigs) */
  private readonly entityConfigs = new Map<string, Record<string, string>>();
  private deleting = new Set<string>();
  private lastConfigChange = -1;
  private readonly listeners = new Set<MetadataListener>();
  private pending: MutableDelta = emptyDelta();
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly store: MetadataStore,
    readonly options: MetadataCacheOptions,
  ) {
    this.log = (options.logger ?? new Logger("kafka.server.metadata.ZkMetadataCache")).withContext(
      `MetadataCache brokerId=${options.brokerId}`,
    );
    this.events = new SerialEventQueue((name, e) => {
      if (this.closed || (e instanceof MetadataStoreError && e.code === "SessionExpired")) return;
      this.log.error(`Error applying metadata event ${name}: ${(e as Error).message}`);
    });
  }

  /**
   * Loads everything and starts following the store. Listeners registered before start() receive the
   * initial state as one delta (every partition, every topic config).
   */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.enqueue("load", async () => {
      await this.loadClusterId();
      await this.loadDeletions();
      await this.loadConfigChanges(true);
      for (const name of await this.childrenOrEmpty(ZkPaths.configBrokers)) await this.loadBrokerConfig(name);
      await this.loadAllEntityConfigs();
    });
  }

  /** Resolves when every store event received so far has been applied. */
  idle(): Promise<void> {
    return this.events.idle();
  }

  /** Re-reads what the store holds after a new session (its watches are gone with the old one). */
  reloadAfterNewSession(): Promise<void> {
    return this.enqueue("new session", async () => {
      await this.loadDeletions();
      await this.loadConfigChanges();
      for (const name of await this.childrenOrEmpty(ZkPaths.configBrokers)) await this.loadBrokerConfig(name);
      await this.loadAllEntityConfigs();
      for (const t of this.topics.keys()) await this.loadTopicConfig(t);
    });
  }

  /**
   * Applies the controller's UpdateMetadata (Kafka's ZkMetadataCache.updateMetadata): the live brokers and
   * controller id are replaced; each partition state given is stored, or removed when its leader is -2 (the
   * topic is being deleted). Topics seen for the first time get their config read from the store.
   */
  updateMetadata(request: UpdateMetadataRequest): Promise<void> {
    return this.enqueue("UpdateMetadata", async () => {
      this._controllerId = request.controllerId;
      const brokers = new Map<number, AliveBroker>();
      for (const b of request.liveBrokers) {
        brokers.set(b.id, {
          id: b.id,
          rack: b.rack,
          endpoints: b.endpoints.map((e) => ({
            listenerName: e.listener,
            securityProtocol: SECURITY_PROTOCOL_NAMES[e.securityProtocol] ?? "PLAINTEXT",
            host: e.host,
            port: e.port,
          })),
        });
      }
      this.brokers = brokers;
      for (const t of request.topicStates) {
        for (const p of t.partitionStates) {
          const name = t.topicName;
          if (p.leader === LEADER_DURING_DELETE) {
            this.removePartition(name, p.partitionIndex);
            continue;
          }
          let entry = this.topics.get(name);
          if (entry && t.topicId !== ZERO_TOPIC_ID && entry.topicId !== t.topicId) {
            // Deleted and re-created under the same name: the old partitions go in their own delta.
            this.removeTopic(name);
            this.flush();
            entry = undefined;
          }
          if (!entry) {
            entry = { topicId: t.topicId, assignment: new Map(), states: new Map() };
            this.topics.set(name, entry);
            this.topicsById.set(t.topicId, name);
            if (!this.topicConfigs.has(name)) await this.loadTopicConfig(name);
          }
          (entry.assignment as Map<number, readonly number[]>).set(p.partitionIndex, p.replicas);
          const next = partitionStateFrom(name, entry.topicId, p, p.zkVersion);
          const key = `${name}/${p.partitionIndex}`;
          entry.states.set(p.partitionIndex, next);
          this.pending.partitions.delete(key);
          this.pending.partitions.set(key, next);
        }
      }
    });
  }

  /** Reads the configs of topics this cache has not loaded yet (before their logs are created). */
  loadTopicConfigs(topics: readonly string[]): Promise<void> {
    const missing = topics.filter((t) => !this.topicConfigs.has(t));
    if (missing.length === 0) return Promise.resolve();
    return this.enqueue("topic configs", async () => {
      for (const t of missing) if (!this.topicConfigs.has(t)) await this.loadTopicConfig(t, true);
    });
  }

  close(): void {
    this.closed = true;
    this.listeners.clear();
    for (const w of this.waiters) w();
    this.waiters.clear();
  }

  /** Registers a listener for deltas; returns a function that unregisters it. */
  onChange(listener: MetadataListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // ---- reads ----

  get clusterId(): string | null {
    return this._clusterId;
  }

  /** The controller's broker id, -1 when there is none. */
  get controllerId(): number {
    return this._controllerId;
  }

  aliveBrokers(): AliveBroker[] {
    return [...this.brokers.values()].sort((a, b) => a.id - b.id);
  }

  aliveBroker(id: number): AliveBroker | undefined {
    return this.brokers.get(id);
  }

  isBrokerAlive(id: number): boolean {
    return this.brokers.has(id);
  }

  /** The broker's endpoint on a listener (e.g. the listener a request came in on). */
  endpointFor(id: number, listenerName: string): BrokerEndPoint | undefined {
    return this.brokers.get(id)?.endpoints.find((e) => e.listenerName === listenerName);
  }

  topicNames(): string[] {
    return [...this.topics.keys()].sort();
  }

  hasTopic(topic: string): boolean {
    return this.topics.has(topic);
  }

  topicId(topic: string): string | undefined {
    return this.topics.get(topic)?.topicId;
  }

  topicName(topicId: string): string | undefined {
    return this.topicsById.get(topicId);
  }

  /** Replica assignment (partition → replicas), undefined for an unknown topic. */
  assignment(topic: string): ReadonlyMap<number, readonly number[]> | undefined {
    return this.topics.get(topic)?.assignment;
  }

  numPartitions(topic: string): number | undefined {
    return this.topics.get(topic)?.assignment.size;
  }

  /** The partitions of a topic that have a state (leader chosen), by partition index. */
  partitionStates(topic: string): PartitionState[] {
    const t = this.topics.get(topic);
    if (!t) return [];
    return [...t.states.values()].sort((a, b) => a.partition - b.partition);
  }

  partitionState(topic: string, partition: number): PartitionState | undefined {
    return this.topics.get(topic)?.states.get(partition);
  }

  /** Every known partition state. */
  allPartitionStates(): PartitionState[] {
    const out: PartitionState[] = [];
    for (const name of this.topicNames()) out.push(...this.partitionStates(name));
    return out;
  }

  /** The topic's config overrides (raw strings), {} when none. */
  topicConfig(topic: string): Record<string, string> {
    return { ...(this.topicConfigs.get(topic) ?? {}) };
  }

  /** Dynamic broker configs of `/config/brokers/<entity>` (broker id or "<default>"). */
  brokerConfig(entity: string): Record<string, string> {
    return { ...(this.brokerConfigs.get(entity) ?? {}) };
  }

  /**
   * The config of a user/client entity (`users/<u>`, `clients/<c>`, `users/<u>/clients/<c>`, names
   * sanitized as in ZooKeeper), {} when it has none.
   */
  entityConfig(entityPath: string): Record<string, string> {
    return { ...(this.entityConfigs.get(entityPath) ?? {}) };
  }

  /** Every user/client entity path that has a znode, with its config. */
  allEntityConfigs(): Map<string, Record<string, string>> {
    return new Map([...this.entityConfigs].map(([k, v]) => [k, { ...v }]));
  }

  isMarkedForDeletion(topic: string): boolean {
    return this.deleting.has(topic);
  }

  /**
   * Resolves true once `predicate` holds (checked after each applied change), false after `timeoutMs`
   * (or when the cache closes).
   */
  waitUntil(predicate: () => boolean, timeoutMs: number, scheduler: Scheduler): Promise<boolean> {
    if (predicate()) return Promise.resolve(true);
    if (timeoutMs <= 0 || this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const check = (): void => {
        if (this.closed || predicate()) {
          this.waiters.delete(check);
          task.cancel();
          resolve(!this.closed);
        }
      };
      const task = scheduler.schedule(
        "metadata-wait",
        () => {
          this.waiters.delete(check);
          resolve(predicate());
        },
        timeoutMs,
      );
      this.waiters.add(check);
    });
  }

  // ---- event processing ----

  private enqueue(name: string, fn: () => Promise<void>): Promise<void> {
    return this.events.put(name, async () => {
      if (this.closed) return;
      try {
        await fn();
      } finally {
        this.flush();
      }
    });
  }

  private flush(): void {
    const p = this.pending;
    if (
      p.partitions.size > 0 ||
      p.removed.length > 0 ||
      p.topicConfigs.size > 0 ||
      p.brokerConfigs.size > 0 ||
      p.entityConfigs.size > 0
    ) {
      this.pending = emptyDelta();
      const d: MetadataDelta = {
        partitions: [...p.partitions.values()],
        removed: p.removed,
        topicConfigs: p.topicConfigs,
        brokerConfigs: p.brokerConfigs,
        entityConfigs: p.entityConfigs,
      };
      for (const l of this.listeners) {
        try {
          l(d);
        } catch (e) {
          this.log.error(`Metadata listener failed: ${(e as Error).message}`);
        }
      }
    }
    for (const w of [...this.waiters]) w();
  }

  private async childrenOrEmpty(path: string, watch?: () => void): Promise<string[]> {
    try {
      return await this.store.getChildren(path, watch);
    } catch (e) {
      if (e instanceof MetadataStoreError && e.code === "NoNode") {
        if (watch) await this.store.exists(path, watch);
        return [];
      }
      throw e;
    }
  }

  private async loadClusterId(): Promise<void> {
    const n = await this.store.get(ZkPaths.clusterId);
    if (n) this._clusterId = ClusterIdZNode.decode(ZkPaths.clusterId, n.data);
    else
      await this.store.exists(
        ZkPaths.clusterId,
        () => void this.enqueue("clusterId", () => this.loadClusterId()),
      );
  }

  private removeTopic(name: string): void {
    const t = this.topics.get(name);
    if (!t) return;
    for (const p of t.assignment.keys()) this.pending.removed.push({ topic: name, partition: p });
    this.topics.delete(name);
    this.topicsById.delete(t.topicId);
    this.topicConfigs.delete(name);
    this.pending.topicConfigs.delete(name);
    for (const [k, st] of this.pending.partitions) if (st.topic === name) this.pending.partitions.delete(k);
  }

  private removePartition(name: string, partition: number): void {
    const t = this.topics.get(name);
    if (!t?.states.has(partition)) return;
    t.states.delete(partition);
    (t.assignment as Map<number, readonly number[]>).delete(partition);
    this.pending.removed.push({ topic: name, partition });
    this.pending.partitions.delete(`${name}/${partition}`);
    if (t.states.size === 0) {
      this.topics.delete(name);
      this.topicsById.delete(t.topicId);
      this.topicConfigs.delete(name);
      this.pending.topicConfigs.delete(name);
    }
  }

  private async loadDeletions(): Promise<void> {
    const names = await this.childrenOrEmpty(ZkPaths.deleteTopics, () => {
      void this.enqueue("delete_topics", () => this.loadDeletions());
    });
    this.deleting = new Set(names);
  }

  /** Follows /config/changes: re-reads the entity each new notification names. */
  private async loadConfigChanges(initial = false): Promise<void> {
    const names = await this.childrenOrEmpty(ZkPaths.configChanges, () => {
      void this.enqueue("config changes", () => this.loadConfigChanges());
    });
    const prefix = "config_change_";
    for (const name of names) {
      if (!name.startsWith(prefix)) continue;
      const seq = Number(name.slice(prefix.length));
      if (!Number.isInteger(seq) || seq <= this.lastConfigChange) continue;
      this.lastConfigChange = seq;
      if (initial) continue; // the initial load already read every entity
      const path = `${ZkPaths.configChanges}/${name}`;
      const n = await this.store.get(path);
      if (!n) continue;
      const entityPath = ConfigEntityChangeNotificationSequenceZNode.decode(path, n.data);
      const slash = entityPath.indexOf("/");
      const type = entityPath.slice(0, slash);
      const entity = entityPath.slice(slash + 1);
      if (type === "topics") await this.loadTopicConfig(entity);
      else if (type === "brokers") await this.loadBrokerConfig(entity);
      else if (type === "users" || type === "clients") await this.loadEntityConfig(entityPath);
    }
  }

  /** Reads every /config/users/<u>, /config/users/<u>/clients/<c> and /config/clients/<c> entity. */
  private async loadAllEntityConfigs(): Promise<void> {
    const seen = new Set<string>();
    for (const user of await this.childrenOrEmpty(ZkPaths.configUsers)) {
      seen.add(`users/${user}`);
      await this.loadEntityConfig(`users/${user}`);
      for (const client of await this.childrenOrEmpty(ZkPaths.configEntity(`users/${user}/clients`))) {
        seen.add(`users/${user}/clients/${client}`);
        await this.loadEntityConfig(`users/${user}/clients/${client}`);
      }
    }
    for (const client of await this.childrenOrEmpty(ZkPaths.configClients)) {
      seen.add(`clients/${client}`);
      await this.loadEntityConfig(`clients/${client}`);
    }
    for (const path of this.entityConfigs.keys()) {
      if (!seen.has(path)) {
        this.entityConfigs.delete(path);
        this.pending.entityConfigs.add(path);
      }
    }
  }

  private async loadEntityConfig(entityPath: string): Promise<void> {
    const path = ZkPaths.configEntity(entityPath);
    const n = await this.store.get(path);
    if (n) this.entityConfigs.set(entityPath, ConfigEntityZNode.decode(path, n.data));
    else this.entityConfigs.delete(entityPath);
    this.pending.entityConfigs.add(entityPath);
  }

  /**
   * Reads /config/topics/<t> for a topic the cache knows, or whose config it has loaded already (a
   * LeaderAndIsr creating its logs before UpdateMetadata announced it: a change made in between must reach
   * those logs); `force` reads it in any case.
   */
  private async loadTopicConfig(topic: string, force = false): Promise<void> {
    if (!force && !this.topics.has(topic) && !this.topicConfigs.has(topic)) return;
    const n = await this.store.get(ZkPaths.configTopic(topic));
    const config = n ? ConfigEntityZNode.decode(ZkPaths.configTopic(topic), n.data) : {};
    this.topicConfigs.set(topic, config);
    this.pending.topicConfigs.set(topic, config);
  }

  private async loadBrokerConfig(entity: string): Promise<void> {
    const n = await this.store.get(ZkPaths.configBroker(entity));
    const config = n ? ConfigEntityZNode.decode(ZkPaths.configBroker(entity), n.data) : {};
    this.brokerConfigs.set(entity, config);
    this.pending.brokerConfigs.add(entity);
  }
}

interface MutableDelta {
  /** by "topic/partition", in order of change */
  partitions: Map<string, PartitionState>;
  removed: Array<{ topic: string; partition: number }>;
  topicConfigs: Map<string, Record<string, string>>;
  brokerConfigs: Set<string>;
  entityConfigs: Set<string>;
}

function emptyDelta(): MutableDelta {
  return {
    partitions: new Map(),
    removed: [],
    topicConfigs: new Map(),
    brokerConfigs: new Set(),
    entityConfigs: new Set(),
  };
}

const ZERO_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAA";
