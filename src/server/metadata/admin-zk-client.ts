// AdminZkClient: the topic znode writes behind CreateTopics, DeleteTopics and CreatePartitions (Kafka's
// kafka.zk.AdminZkClient). A new topic is /config/topics/<t> plus /brokers/topics/<t> (topic id and
// assignment) in one multi; a deletion is the /admin/delete_topics/<t> marker the controller acts on; new
// partitions are the topic's assignment rewritten with a compare-and-set on its version. Also whether a
// name is free (exists, queued for deletion, or colliding with another topic's metric name) and whether a
// topic's znode exists. It decides nothing about placement or defaults (TopicAdmin) and writes no
// partition state (the controller does).

import { KafkaError } from "../../protocol/errors.js";
import { isStoreError } from "./admin-errors.js";
import type { MetadataCache } from "./metadata-cache.js";
import type { MetadataStore, Op } from "./metadata-store.js";
import { collidingTopic, validateTopicName } from "./topic-validation.js";
import { ConfigEntityZNode, type TopicAssignment, TopicZNode, ZkPaths } from "./zk-data.js";

/** A topic's /brokers/topics/<t> content and the znode version it was read at. */
export interface VersionedTopicAssignment {
  readonly assignment: TopicAssignment;
  readonly version: number;
}

export class AdminZkClient {
  constructor(
    private readonly store: MetadataStore,
    private readonly cache: MetadataCache,
  ) {}

  /**
   * Kafka's validateTopicCreate for the name: Topic.validate, then TOPIC_ALREADY_EXISTS when the topic exists
   * or is still queued for deletion, INVALID_TOPIC_EXCEPTION when it collides with another topic ("a.b" and
   * "a_b").
   */
  validateTopicCreate(name: string): void {
    validateTopicName(name);
    if (this.cache.hasTopic(name)) {
      throw new KafkaError("TOPIC_ALREADY_EXISTS", `Topic '${name}' already exists.`);
    }
    if (this.cache.isMarkedForDeletion(name)) {
      throw new KafkaError("TOPIC_ALREADY_EXISTS", `Topic '${name}' is marked for deletion.`);
    }
    const clash = collidingTopic(name, this.cache.topicNames());
    if (clash !== undefined) {
      throw new KafkaError(
        "INVALID_TOPIC_EXCEPTION",
        `Topic '${name}' collides with existing topic: ${clash}`,
      );
    }
  }

  /**
   * Writes a new topic: its config overrides (replacing a leftover /config/topics/<t>) and its assignment,
   * in one multi. TOPIC_ALREADY_EXISTS when another request created it first.
   */
  async createTopicWithAssignment(
    name: string,
    topicId: string,
    assignment: ReadonlyMap<number, readonly number[]>,
    config: Record<string, string>,
  ): Promise<void> {
    const configPath = ZkPaths.configTopic(name);
    const configData = ConfigEntityZNode.encode(config);
    const ops: Op[] = [
      (await this.store.exists(configPath))
        ? { type: "set", path: configPath, data: configData }
        : { type: "create", path: configPath, data: configData },
      {
        type: "create",
        path: ZkPaths.topic(name),
        data: TopicZNode.encode({
          topicId,
          partitions: assignment,
          addingReplicas: new Map(),
          removingReplicas: new Map(),
        }),
      },
    ];
    try {
      await this.store.multi(ops);
    } catch (e) {
      if (isStoreError(e, "NodeExists"))
        throw new KafkaError("TOPIC_ALREADY_EXISTS", `Topic '${name}' already exists.`);
      throw e;
    }
  }

  /** Queues a topic for deletion (the /admin/delete_topics/<t> marker); a topic already queued is fine. */
  async deleteTopic(name: string): Promise<void> {
    try {
      await this.store.create(ZkPaths.deleteTopic(name), Buffer.alloc(0));
    } catch (e) {
      if (!isStoreError(e, "NodeExists")) throw e;
    }
  }

  /**
   * The topic's assignment as stored, or undefined when /brokers/topics/<t> does not exist. Read from the
   * store, not the metadata cache (Kafka's getFullReplicaAssignmentForTopics): a topic just created is found
   * before the controller has made its partitions and told the brokers.
   */
  async readTopicAssignment(name: string): Promise<VersionedTopicAssignment | undefined> {
    const path = ZkPaths.topic(name);
    const node = await this.store.get(path);
    if (!node) return undefined;
    return { assignment: TopicZNode.decode(path, node.data), version: node.stat.version };
  }

  /** Whether /brokers/topics/<t> exists (Kafka's KafkaZkClient.topicExists); `name` must be a valid name. */
  async topicExists(name: string): Promise<boolean> {
    return (await this.store.exists(ZkPaths.topic(name))) !== undefined;
  }

  /**
   * Adds partitions to a topic's assignment (Kafka's createPartitionsWithAssignment): rewrites
   * /brokers/topics/<t> if it is still at `current.version`, else the store's BadVersion error.
   */
  async createPartitionsWithAssignment(
    name: string,
    current: VersionedTopicAssignment,
    added: ReadonlyMap<number, readonly number[]>,
  ): Promise<void> {
    const partitions = new Map(current.assignment.partitions);
    for (const [p, r] of added) partitions.set(p, r);
    await this.store.set(
      ZkPaths.topic(name),
      TopicZNode.encode({ ...current.assignment, partitions }),
      current.version,
    );
  }
}
