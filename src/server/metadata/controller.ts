// KafkaController: the cluster controller of ZooKeeper-based Kafka, on the MetadataStore. Owns, as
// Kafka's KafkaController + KafkaZkClient registration: the top-level znodes, /cluster/id (created
// once), this broker's registration (/brokers/ids/<id>, ephemeral), the controller election
// (/controller, ephemeral, with /controller_epoch bumped atomically in the same multi), and, while
// active, the partition states: new topics and new partitions get a state znode (leader = first alive
// replica in assignment order, ISR = the alive replicas, leader_epoch 0); broker changes re-elect leaders
// from the alive ISR members (leader_epoch + 1) and drop dead brokers from the ISR; topics queued at
// /admin/delete_topics are removed (znodes and config) when delete.topic.enable.
// All events are processed one at a time in arrival order (Kafka's ControllerEventManager). Partition
// state writes are compare-and-set on the znode version. Not yet: LeaderAndIsr / UpdateMetadata /
// StopReplica requests to other brokers (brokers read state through their MetadataCache watches),
// reassignment, preferred-leader election, controlled shutdown, unclean election.

import { Logger } from "../../common/logger.js";
import type { Time } from "../../common/time.js";
import { ensurePath, type MetadataStore, MetadataStoreError, type Op } from "./metadata-store.js";
import {
  type BrokerEndPoint,
  BrokerIdZNode,
  ClusterIdZNode,
  ControllerEpochZNode,
  ControllerZNode,
  type LeaderAndIsr,
  PERSISTENT_ZK_PATHS,
  randomUuid,
  TopicPartitionStateZNode,
  TopicZNode,
  ZkPaths,
} from "./zk-data.js";

export interface KafkaControllerOptions {
  readonly brokerId: number;
  readonly time: Time;
  /** This broker's advertised endpoints, as registered at /brokers/ids/<id>. */
  readonly endpoints: readonly BrokerEndPoint[];
  readonly rack: string | null;
  readonly jmxPort?: number;
  /** delete.topic.enable */
  readonly deleteTopicEnable: boolean;
  /** Used for /cluster/id when it does not exist yet (e.g. meta.properties' cluster.id). */
  readonly preferredClusterId?: string;
  readonly logger?: Logger;
}

function isCode(e: unknown, code: string): boolean {
  return e instanceof MetadataStoreError && e.code === code;
}

export class KafkaController {
  private readonly log: Logger;
  private queue: Promise<void> = Promise.resolve();
  private active = false;
  private stopped = false;
  private _epoch = 0;
  private _clusterId = "";
  private aliveBrokerIds = new Set<number>();
  private readonly watchedTopics = new Set<string>();

  constructor(
    private readonly store: MetadataStore,
    private readonly options: KafkaControllerOptions,
  ) {
    this.log = (options.logger ?? new Logger("kafka.controller.KafkaController")).withContext(
      `Controller id=${options.brokerId}`,
    );
  }

  /** True while this broker is the controller. */
  get isActive(): boolean {
    return this.active;
  }

  /** The controller epoch this broker was elected with (0 when not the controller). */
  get epoch(): number {
    return this._epoch;
  }

  get clusterId(): string {
    return this._clusterId;
  }

  /**
   * Creates the top-level paths and /cluster/id if missing, registers this broker, runs for controller
   * and, when elected, brings every partition online. Resolves when that first pass is done.
   */
  async startup(): Promise<void> {
    for (const p of PERSISTENT_ZK_PATHS) await ensurePath(this.store, p);
    this._clusterId = await this.getOrCreateClusterId();
    await this.registerBroker();
    await this.enqueue("Startup", () => this.elect());
    await this.idle();
  }

  /** Resolves when every event queued so far has been processed. */
  async idle(): Promise<void> {
    let q: Promise<void>;
    do {
      q = this.queue;
      await q;
    } while (q !== this.queue);
  }

  /** Stops processing events; the ephemeral nodes go with the store's session (store.close()). */
  async shutdown(): Promise<void> {
    this.stopped = true;
    this.active = false;
    await this.queue;
  }

  private enqueue(name: string, fn: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(async () => {
      if (this.stopped) return;
      try {
        await fn();
      } catch (e) {
        if (this.stopped || isCode(e, "SessionExpired")) return;
        this.log.error(`Error processing event ${name}: ${(e as Error).message}`);
      }
    });
    return this.queue;
  }

  private async getOrCreateClusterId(): Promise<string> {
    const existing = await this.store.get(ZkPaths.clusterId);
    if (existing) return ClusterIdZNode.decode(ZkPaths.clusterId, existing.data);
    const id = this.options.preferredClusterId ?? randomUuid();
    await ensurePath(this.store, "/cluster");
    try {
      await this.store.create(ZkPaths.clusterId, ClusterIdZNode.encode(id));
      return id;
    } catch (e) {
      if (!isCode(e, "NodeExists")) throw e;
      const again = await this.store.get(ZkPaths.clusterId);
      return ClusterIdZNode.decode(ZkPaths.clusterId, again!.data);
    }
  }

  private async registerBroker(): Promise<void> {
    const { brokerId, endpoints, rack, time } = this.options;
    const data = BrokerIdZNode.encode({
      id: brokerId,
      endpoints,
      rack,
      jmxPort: this.options.jmxPort ?? -1,
      timestampMs: time.milliseconds(),
      features: {},
    });
    try {
      await this.store.create(ZkPaths.brokerId(brokerId), data, { ephemeral: true });
    } catch (e) {
      if (isCode(e, "NodeExists")) {
        throw new Error(
          `broker.id ${brokerId} is already registered at ${ZkPaths.brokerId(brokerId)} (another broker uses this id)`,
        );
      }
      throw e;
    }
    this.log.info(`Registered broker ${brokerId} at path ${ZkPaths.brokerId(brokerId)}`);
  }

  // ---- election ----

  private async elect(): Promise<void> {
    if (this.active) return;
    const current = await this.store.get(ZkPaths.controller, () => {
      void this.enqueue("Reelect", () => this.elect());
    });
    if (current) {
      const id = ControllerZNode.decode(ZkPaths.controller, current.data);
      if (id !== this.options.brokerId) {
        this.log.info(`Broker ${id} has been elected as the controller, so stopping the election process.`);
        return;
      }
    }
    try {
      await this.store.create(ZkPaths.controllerEpoch, ControllerEpochZNode.encode(0));
    } catch (e) {
      if (!isCode(e, "NodeExists")) throw e;
    }
    const epochNode = (await this.store.get(ZkPaths.controllerEpoch))!;
    const epoch = ControllerEpochZNode.decode(ZkPaths.controllerEpoch, epochNode.data) + 1;
    try {
      await this.store.multi([
        {
          type: "create",
          path: ZkPaths.controller,
          data: ControllerZNode.encode(this.options.brokerId, this.options.time.milliseconds()),
          options: { ephemeral: true },
        },
        {
          type: "set",
          path: ZkPaths.controllerEpoch,
          data: ControllerEpochZNode.encode(epoch),
          version: epochNode.stat.version,
        },
      ]);
    } catch (e) {
      if (isCode(e, "NodeExists") || isCode(e, "BadVersion")) {
        // Someone else won; watch them.
        await this.store.exists(ZkPaths.controller, () => {
          void this.enqueue("Reelect", () => this.elect());
        });
        return;
      }
      throw e;
    }
    this._epoch = epoch;
    this.active = true;
    // Watch our own node too (deleted when the session ends or by an operator).
    await this.store.exists(ZkPaths.controller, () => {
      this.active = false;
      void this.enqueue("Reelect", () => this.elect());
    });
    this.log.info(
      `${this.options.brokerId} successfully elected as the controller. Epoch incremented to ${epoch}`,
    );
    await this.onControllerFailover();
  }

  private async onControllerFailover(): Promise<void> {
    await this.onBrokerChange();
    await this.onTopicChange();
    await this.onTopicDeletion();
  }

  // ---- brokers ----

  private async onBrokerChange(): Promise<void> {
    if (!this.active) return;
    const ids = await this.store.getChildren(ZkPaths.brokerIds, () => {
      void this.enqueue("BrokerChange", () => this.onBrokerChange());
    });
    const alive = new Set(ids.map(Number).filter((n) => Number.isInteger(n)));
    const changed =
      alive.size !== this.aliveBrokerIds.size || [...alive].some((id) => !this.aliveBrokerIds.has(id));
    this.aliveBrokerIds = alive;
    if (!changed) return;
    this.log.info(`Alive brokers: ${[...alive].sort((a, b) => a - b).join(",")}`);
    // Bring offline partitions online, move leadership off dead brokers, drop them from ISRs.
    for (const topic of await this.store.getChildren(ZkPaths.topics)) {
      await this.onPartitionModification(topic);
      await this.electLeadersFor(topic);
    }
  }

  private async electLeadersFor(topic: string): Promise<void> {
    const node = await this.store.get(ZkPaths.topic(topic));
    if (!node) return;
    const assignment = TopicZNode.decode(ZkPaths.topic(topic), node.data);
    for (const [p, replicas] of assignment.partitions) {
      for (let attempt = 0; attempt < 3; attempt++) {
        const path = ZkPaths.partitionState(topic, p);
        const st = await this.store.get(path);
        if (!st) break;
        const cur = TopicPartitionStateZNode.decode(path, st.data);
        const next = this.reelect(cur, replicas);
        if (!next) break;
        try {
          await this.store.set(path, TopicPartitionStateZNode.encode(next), st.stat.version);
          break;
        } catch (e) {
          if (!isCode(e, "BadVersion")) throw e;
        }
      }
    }
  }

  /** Kafka's OfflinePartitionLeaderElectionStrategy (clean) plus ISR shrink of dead replicas. */
  private reelect(cur: LeaderAndIsr, replicas: readonly number[]): LeaderAndIsr | undefined {
    const alive = this.aliveBrokerIds;
    const liveIsr = cur.isr.filter((b) => alive.has(b));
    if (cur.leader !== -1 && alive.has(cur.leader)) {
      if (liveIsr.length === cur.isr.length) return undefined;
      return { ...cur, isr: liveIsr, leaderEpoch: cur.leaderEpoch + 1, controllerEpoch: this._epoch };
    }
    const leader = replicas.find((r) => alive.has(r) && cur.isr.includes(r));
    if (leader !== undefined) {
      return { leader, isr: liveIsr, leaderEpoch: cur.leaderEpoch + 1, controllerEpoch: this._epoch };
    }
    if (cur.leader === -1) return undefined;
    // No live ISR member: the partition goes offline, keeping its last ISR (clean election only).
    return { ...cur, leader: -1, leaderEpoch: cur.leaderEpoch + 1, controllerEpoch: this._epoch };
  }

  // ---- topics ----

  private async onTopicChange(): Promise<void> {
    if (!this.active) return;
    const topics = await this.store.getChildren(ZkPaths.topics, () => {
      void this.enqueue("TopicChange", () => this.onTopicChange());
    });
    for (const t of topics) {
      if (!this.watchedTopics.has(t)) await this.onPartitionModification(t);
    }
    const present = new Set(topics);
    for (const t of this.watchedTopics) if (!present.has(t)) this.watchedTopics.delete(t);
  }

  /** Creates the state znodes of a topic's partitions that have none (new topic or new partitions). */
  private async onPartitionModification(topic: string): Promise<void> {
    if (!this.active) return;
    const path = ZkPaths.topic(topic);
    const watch = !this.watchedTopics.has(topic);
    const node = await this.store.get(
      path,
      watch
        ? () => {
            this.watchedTopics.delete(topic);
            void this.enqueue(`PartitionModifications ${topic}`, () => this.onPartitionModification(topic));
          }
        : undefined,
    );
    if (!node) {
      this.watchedTopics.delete(topic);
      return;
    }
    this.watchedTopics.add(topic);
    const assignment = TopicZNode.decode(path, node.data);
    const ops: Op[] = [];
    const empty = Buffer.alloc(0);
    const hasPartitionsNode = (await this.store.exists(ZkPaths.partitions(topic))) !== undefined;
    if (!hasPartitionsNode) ops.push({ type: "create", path: ZkPaths.partitions(topic), data: empty });
    const created: number[] = [];
    for (const [p, replicas] of [...assignment.partitions].sort((a, b) => a[0] - b[0])) {
      if (hasPartitionsNode && (await this.store.exists(ZkPaths.partitionState(topic, p)))) continue;
      const liveReplicas = replicas.filter((r) => this.aliveBrokerIds.has(r));
      if (liveReplicas.length === 0) {
        this.log.warn(`No live replica for new partition ${topic}-${p} (replicas ${replicas.join(",")})`);
        continue;
      }
      if (!hasPartitionsNode || !(await this.store.exists(ZkPaths.partition(topic, p)))) {
        ops.push({ type: "create", path: ZkPaths.partition(topic, p), data: empty });
      }
      ops.push({
        type: "create",
        path: ZkPaths.partitionState(topic, p),
        data: TopicPartitionStateZNode.encode({
          controllerEpoch: this._epoch,
          leader: liveReplicas[0],
          leaderEpoch: 0,
          isr: liveReplicas,
        }),
      });
      created.push(p);
    }
    if (created.length === 0) return;
    try {
      await this.store.multi(ops);
    } catch (e) {
      // The topic was deleted meanwhile, or another writer got there first: the next event settles it.
      if (isCode(e, "NoNode") || isCode(e, "NodeExists")) return;
      throw e;
    }
    this.log.info(`New partitions ${created.map((p) => `${topic}-${p}`).join(",")} are online`);
  }

  // ---- deletion ----

  private async onTopicDeletion(): Promise<void> {
    if (!this.active) return;
    const queued = await this.store.getChildren(ZkPaths.deleteTopics, () => {
      void this.enqueue("TopicDeletion", () => this.onTopicDeletion());
    });
    for (const topic of queued) {
      if (!this.options.deleteTopicEnable) {
        this.log.info(`Removing ${ZkPaths.deleteTopic(topic)} since delete.topic.enable is false`);
        try {
          await this.store.delete(ZkPaths.deleteTopic(topic));
        } catch (e) {
          if (!isCode(e, "NoNode")) throw e;
        }
        continue;
      }
      await this.deleteTopicZNodes(topic);
      this.log.info(`Deletion of topic ${topic} successfully completed`);
    }
  }

  /**
   * Removes the topic's znodes, its config and its deletion marker in one multi, so that nobody sees the
   * topic gone but still marked for deletion (or its config left behind).
   */
  private async deleteTopicZNodes(topic: string): Promise<void> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const ops: Op[] = [];
      const collect = async (path: string): Promise<void> => {
        let children: string[];
        try {
          children = await this.store.getChildren(path);
        } catch (e) {
          if (isCode(e, "NoNode")) return;
          throw e;
        }
        for (const c of children) await collect(`${path}/${c}`);
        ops.push({ type: "delete", path });
      };
      await collect(ZkPaths.topic(topic));
      if (await this.store.exists(ZkPaths.configTopic(topic)))
        ops.push({ type: "delete", path: ZkPaths.configTopic(topic) });
      if (await this.store.exists(ZkPaths.deleteTopic(topic)))
        ops.push({ type: "delete", path: ZkPaths.deleteTopic(topic) });
      try {
        if (ops.length > 0) await this.store.multi(ops);
        break;
      } catch (e) {
        // Changed underneath (a node added or already removed): collect again.
        if (!isCode(e, "NoNode") && !isCode(e, "NotEmpty")) throw e;
      }
    }
    this.watchedTopics.delete(topic);
  }
}
