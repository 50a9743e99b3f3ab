// TopicAdmin: the topic and config changes clients request, as the request handlers see them (Kafka's
// ZkAdminManager). The facade over the pieces that do the work: CreateTopics resolves the request
// (num.partitions / default.replication.factor for -1, explicit assignments validated by topic-validation,
// placement by replica-assignment: random start index and shifted round-robin, rack-aware when every
// alive broker has a rack) and writes through the AdminZkClient; DeleteTopics writes deletion markers;
// CreatePartitions places the new partitions after the existing ones; Describe/Alter/
// IncrementalAlterConfigs are ConfigAdmin's; Metadata auto-creation and the internal topics are the
// AutoTopicCreationManager's. The controller turns the znodes into partition states, the MetadataCache
// serves the result. Requests with a timeout wait for the cache to show the outcome (as Kafka's
// DelayedCreatePartitions / DelayedDeleteTopics), answering REQUEST_TIMED_OUT when it does not.
// A topic created a moment ago exists for every admin request: CreatePartitions reads its assignment from
// the store (as Kafka); DeleteTopics and the topic config requests, which act on what the metadata cache
// shows, first wait (up to TOPIC_METADATA_WAIT_MS) for a topic whose znode exists to reach the cache.

import { Logger } from "../../common/logger.js";
import type { Scheduler } from "../../common/scheduler.js";
import type { Time } from "../../common/time.js";
import { type ErrorName, KafkaError } from "../../protocol/errors.js";
import type { KafkaConfig } from "../kafka-config.js";
import { isStoreError, toApiError } from "./admin-errors.js";
import { AdminZkClient } from "./admin-zk-client.js";
import { AutoTopicCreationManager } from "./auto-topic-creation.js";
import {
  type AlterConfigsResource,
  type AlterConfigsResult,
  ConfigAdmin,
  type ConfigResourceRequest,
  type DescribeConfigsResourceResult,
  type IncrementalAlterConfigsResource,
} from "./config-admin.js";
import {
  ConfigResourceType,
  type DescribedConfig,
  describeTopicConfig,
  TOPIC_CONFIG_NAMES,
  validateTopicConfigs,
} from "./config-definitions.js";
import type { MetadataCache } from "./metadata-cache.js";
import type { MetadataStore } from "./metadata-store.js";
import {
  assignReplicasToBrokers,
  brokerPlacements,
  startIndexForNewPartitions,
} from "./replica-assignment.js";
import { checkPartitionBatch, isValidTopicName, validateReplicaAssignment } from "./topic-validation.js";
import { randomUuid, ZERO_UUID } from "./zk-data.js";

// ---- requests and results ----

export interface NewTopic {
  readonly name: string;
  /** -1: num.partitions */
  readonly numPartitions: number;
  /** -1: default.replication.factor */
  readonly replicationFactor: number;
  readonly assignments: ReadonlyArray<{
    readonly partitionIndex: number;
    readonly brokerIds: readonly number[];
  }>;
  readonly configs: ReadonlyArray<{ readonly name: string; readonly value: string | null }>;
}

export interface CreateTopicResult {
  readonly name: string;
  readonly topicId: string;
  readonly error: KafkaError | null;
  readonly numPartitions: number;
  readonly replicationFactor: number;
  /** The topic's configs as created (for CreateTopics v5+), empty on error. */
  readonly configs: DescribedConfig[];
}

export interface DeleteTopicTarget {
  readonly name: string | null;
  /** ZERO_UUID when deleting by name. */
  readonly topicId: string;
}

export interface DeleteTopicResult {
  readonly name: string | null;
  readonly topicId: string;
  readonly error: KafkaError | null;
}

export interface NewPartitions {
  readonly name: string;
  readonly count: number;
  readonly assignments: ReadonlyArray<readonly number[]> | null;
}

export interface TopicErrorResult {
  readonly name: string;
  readonly error: KafkaError | null;
}

export interface TopicAdminOptions {
  readonly brokerId: number;
  readonly time: Time;
  readonly scheduler: Scheduler;
  /** num.partitions */
  readonly numPartitions: number;
  /** default.replication.factor */
  readonly defaultReplicationFactor: number;
  /** auto.create.topics.enable */
  readonly autoCreateTopicsEnable: boolean;
  /** delete.topic.enable */
  readonly deleteTopicEnable: boolean;
  /** The broker's static configuration as given (server.properties + overrides). */
  readonly staticConfig: ReadonlyMap<string, string> | Readonly<Record<string, string>>;
  /** [0, 1) random source for replica placement (tests fix it). */
  readonly random?: () => number;
  readonly logger?: Logger;
  /**
   * The broker runs the embedded single-node cluster: internal topics whose replication factor is not set
   * explicitly get min(Kafka's default, alive brokers) replicas, as Kafka's single-node sample
   * server.properties sets offsets.topic.replication.factor=1, so `server-start` needs no setup.
   */
  readonly singleNodeCluster?: boolean;
}

/** TopicAdminOptions from the broker's KafkaConfig. */
export function topicAdminOptionsFrom(
  config: KafkaConfig,
  time: Time,
  scheduler: Scheduler,
): TopicAdminOptions {
  return {
    brokerId: config.brokerId,
    time,
    scheduler,
    numPartitions: config.numPartitions,
    defaultReplicationFactor: config.defaultReplicationFactor,
    autoCreateTopicsEnable: config.autoCreateTopicsEnable,
    deleteTopicEnable: config.deleteTopicEnable,
    staticConfig: config.originals,
    singleNodeCluster: config.zookeeperConnect === null,
  };
}

/**
 * How long DeleteTopics, DescribeConfigs, AlterConfigs and IncrementalAlterConfigs wait for a topic whose
 * /brokers/topics znode exists to appear in this broker's metadata cache (the controller's UpdateMetadata
 * after it made the partitions: milliseconds in a healthy cluster). Past it they answer as the cache says.
 */
export const TOPIC_METADATA_WAIT_MS = 5000;

function err(name: ErrorName, message?: string): KafkaError {
  return new KafkaError(name, message);
}

/** The names of the TOPIC resources of a config request. */
function topicResourceNames(
  resources: ReadonlyArray<{ readonly resourceType: number; readonly resourceName: string }>,
): string[] {
  return resources.filter((r) => r.resourceType === ConfigResourceType.TOPIC).map((r) => r.resourceName);
}

export class TopicAdmin {
  private readonly log: Logger;
  private readonly random: () => number;
  private readonly adminZk: AdminZkClient;
  private readonly configAdmin: ConfigAdmin;
  private readonly autoTopicCreation: AutoTopicCreationManager;

  constructor(
    store: MetadataStore,
    private readonly cache: MetadataCache,
    private readonly options: TopicAdminOptions,
  ) {
    this.log = options.logger ?? new Logger("kafka.server.ZkAdminManager");
    const staticConfig: Record<string, string> =
      options.staticConfig instanceof Map
        ? Object.fromEntries(options.staticConfig)
        : { ...(options.staticConfig as Record<string, string>) };
    this.random = options.random ?? Math.random;
    this.adminZk = new AdminZkClient(store, cache);
    this.configAdmin = new ConfigAdmin(store, cache, {
      brokerId: options.brokerId,
      time: options.time,
      staticConfig,
      logger: this.log,
    });
    this.autoTopicCreation = new AutoTopicCreationManager(this, cache, {
      staticConfig,
      singleNodeCluster: options.singleNodeCluster ?? false,
    });
  }

  get autoCreateTopicsEnable(): boolean {
    return this.options.autoCreateTopicsEnable;
  }

  // ---- CreateTopics ----

  /** Creates topics (Kafka's ZkAdminManager.createTopics); one result per requested topic, in order. */
  async createTopics(
    topics: readonly NewTopic[],
    opts: { readonly validateOnly: boolean; readonly timeoutMs: number },
  ): Promise<CreateTopicResult[]> {
    const counts = new Map<string, number>();
    for (const t of topics) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
    const results: CreateTopicResult[] = [];
    const created: Array<{ name: string; partitions: number }> = [];
    for (const t of topics) {
      const failed = (e: unknown): CreateTopicResult => ({
        name: t.name,
        topicId: ZERO_UUID,
        error: toApiError(e),
        numPartitions: -1,
        replicationFactor: -1,
        configs: [],
      });
      if ((counts.get(t.name) ?? 0) > 1) {
        results.push(
          failed(err("INVALID_REQUEST", "Create topics request contains multiple entries for the topic.")),
        );
        continue;
      }
      try {
        const plan = this.planTopic(t);
        const topicId = randomUuid();
        if (!opts.validateOnly) {
          await this.adminZk.createTopicWithAssignment(t.name, topicId, plan.assignment, plan.config);
          created.push({ name: t.name, partitions: plan.assignment.size });
          this.log.info(
            `Creating topic ${t.name} with configuration ${JSON.stringify(plan.config)} and initial partition assignment ${JSON.stringify(Object.fromEntries(plan.assignment))}`,
          );
        }
        results.push({
          name: t.name,
          topicId: opts.validateOnly ? ZERO_UUID : topicId,
          error: null,
          numPartitions: plan.assignment.size,
          replicationFactor: plan.assignment.get(0)?.length ?? plan.replicationFactor,
          configs: TOPIC_CONFIG_NAMES.map((n) =>
            describeTopicConfig(n, plan.config, this.configAdmin.brokerLayers(), false, false),
          ),
        });
      } catch (e) {
        results.push(failed(e));
      }
    }
    if (created.length > 0 && opts.timeoutMs > 0) {
      const ready = (): boolean =>
        created.every(
          (c) => this.cache.partitionStates(c.name).filter((s) => s.leader >= 0).length >= c.partitions,
        );
      await this.cache.waitUntil(ready, opts.timeoutMs, this.options.scheduler);
      return results.map((r) => {
        const c = created.find((x) => x.name === r.name);
        if (!c || r.error) return r;
        const ok = this.cache.partitionStates(c.name).filter((s) => s.leader >= 0).length >= c.partitions;
        return ok
          ? { ...r, topicId: this.cache.topicId(c.name) ?? r.topicId }
          : { ...r, error: err("REQUEST_TIMED_OUT") };
      });
    }
    return results;
  }

  /** Resolves a CreateTopics entry into the assignment and configs to write (Kafka's ZkAdminManager.createTopics). */
  private planTopic(t: NewTopic): {
    assignment: Map<number, number[]>;
    config: Record<string, string>;
    replicationFactor: number;
  } {
    this.adminZk.validateTopicCreate(t.name);
    const config: Record<string, string> = {};
    for (const c of t.configs) {
      if (c.value === null)
        throw err("INVALID_CONFIG", `Null value not supported for topic configs: ${c.name}`);
      config[c.name] = c.value;
    }
    let assignment: Map<number, number[]>;
    let replicationFactor: number;
    if (t.assignments.length > 0) {
      if (t.numPartitions !== -1 || t.replicationFactor !== -1) {
        throw err(
          "INVALID_REQUEST",
          "Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.",
        );
      }
      checkPartitionBatch(t.assignments.length);
      assignment = new Map();
      for (const a of t.assignments) assignment.set(a.partitionIndex, [...a.brokerIds]);
      validateReplicaAssignment(assignment, 0, undefined, this.aliveBrokerIds());
      replicationFactor = assignment.get(0)!.length;
    } else {
      const numPartitions = t.numPartitions === -1 ? this.options.numPartitions : t.numPartitions;
      replicationFactor =
        t.replicationFactor === -1 ? this.options.defaultReplicationFactor : t.replicationFactor;
      if (numPartitions <= 0) throw err("INVALID_PARTITIONS", "Number of partitions must be larger than 0.");
      checkPartitionBatch(numPartitions);
      if (replicationFactor <= 0)
        throw err("INVALID_REPLICATION_FACTOR", "Replication factor must be larger than 0.");
      if (replicationFactor > 32767) {
        throw err("INVALID_REPLICATION_FACTOR", "Replication factor must be smaller than 32768.");
      }
      assignment = assignReplicasToBrokers(
        brokerPlacements(this.cache.aliveBrokers()),
        numPartitions,
        replicationFactor,
        this.random,
      );
    }
    validateTopicConfigs(config);
    return { assignment, config, replicationFactor };
  }

  private aliveBrokerIds(): Set<number> {
    return new Set(this.cache.aliveBrokers().map((b) => b.id));
  }

  /**
   * Auto-creation for Metadata requests (auto.create.topics.enable): creates each topic with the broker
   * defaults, without waiting. Returns, per topic, null when it was created (or already existed) or the
   * error that prevented it.
   */
  autoCreateTopics(names: readonly string[]): Promise<Map<string, KafkaError | null>> {
    return this.autoTopicCreation.autoCreateTopics(names);
  }

  /**
   * Creates `__consumer_offsets` or `__transaction_state` with Kafka's settings for them (offsets.topic.* /
   * transaction.state.log.*); COORDINATOR_NOT_AVAILABLE when fewer brokers are alive than its replication
   * factor. Returns null when created (or already there), otherwise the error. Does not wait for leaders.
   */
  createInternalTopic(name: string): Promise<KafkaError | null> {
    return this.autoTopicCreation.createInternalTopic(name);
  }

  // ---- DeleteTopics ----

  async deleteTopics(targets: readonly DeleteTopicTarget[], timeoutMs: number): Promise<DeleteTopicResult[]> {
    const key = (t: DeleteTopicTarget): string =>
      t.name !== null && t.name !== "" ? `n:${t.name}` : `i:${t.topicId}`;
    const counts = new Map<string, number>();
    for (const t of targets) counts.set(key(t), (counts.get(key(t)) ?? 0) + 1);
    await this.awaitTopicMetadata(
      targets.flatMap((t) => (t.name !== null && t.name !== "" && t.topicId === ZERO_UUID ? [t.name] : [])),
    );
    const results: DeleteTopicResult[] = [];
    const queued: string[] = [];
    for (const t of targets) {
      const byName = t.name !== null && t.name !== "";
      const fail = (e: KafkaError): void => {
        results.push({
          name: byName ? t.name : (this.cache.topicName(t.topicId) ?? null),
          topicId: t.topicId,
          error: e,
        });
      };
      if (byName && t.topicId !== ZERO_UUID) {
        fail(err("INVALID_REQUEST", "A topic name and a topic id cannot both be set."));
        continue;
      }
      if ((counts.get(key(t)) ?? 0) > 1) {
        fail(err("INVALID_REQUEST", "Duplicate topic in request."));
        continue;
      }
      if (!this.options.deleteTopicEnable) {
        fail(err("TOPIC_DELETION_DISABLED", "Topic deletion is disabled."));
        continue;
      }
      let name: string;
      if (byName) {
        name = t.name!;
        if (!this.cache.hasTopic(name)) {
          fail(err("UNKNOWN_TOPIC_OR_PARTITION"));
          continue;
        }
      } else {
        const found = t.topicId === ZERO_UUID ? undefined : this.cache.topicName(t.topicId);
        if (found === undefined) {
          fail(err("UNKNOWN_TOPIC_ID"));
          continue;
        }
        name = found;
      }
      try {
        await this.adminZk.deleteTopic(name);
      } catch (e) {
        fail(toApiError(e));
        continue;
      }
      this.log.info(`Topic ${name} marked for deletion.`);
      queued.push(name);
      results.push({ name, topicId: this.cache.topicId(name) ?? t.topicId, error: null });
    }
    if (queued.length > 0 && timeoutMs > 0) {
      const gone = (n: string): boolean => !this.cache.hasTopic(n) && !this.cache.isMarkedForDeletion(n);
      await this.cache.waitUntil(() => queued.every(gone), timeoutMs, this.options.scheduler);
      return results.map((r) =>
        r.error === null && r.name !== null && queued.includes(r.name) && !gone(r.name)
          ? { ...r, error: err("REQUEST_TIMED_OUT") }
          : r,
      );
    }
    return results;
  }

  // ---- CreatePartitions ----

  async createPartitions(
    topics: readonly NewPartitions[],
    opts: { readonly validateOnly: boolean; readonly timeoutMs: number },
  ): Promise<TopicErrorResult[]> {
    const counts = new Map<string, number>();
    for (const t of topics) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
    const results: TopicErrorResult[] = [];
    const changed: Array<{ name: string; count: number }> = [];
    for (const t of topics) {
      if ((counts.get(t.name) ?? 0) > 1) {
        results.push({ name: t.name, error: err("INVALID_REQUEST", "Duplicate topic in request.") });
        continue;
      }
      try {
        await this.createPartitionsFor(t, opts.validateOnly);
        if (!opts.validateOnly) changed.push({ name: t.name, count: t.count });
        results.push({ name: t.name, error: null });
      } catch (e) {
        results.push({ name: t.name, error: toApiError(e) });
      }
    }
    if (changed.length > 0 && opts.timeoutMs > 0) {
      const ready = (c: { name: string; count: number }): boolean =>
        this.cache.partitionStates(c.name).filter((s) => s.leader >= 0).length >= c.count;
      await this.cache.waitUntil(() => changed.every(ready), opts.timeoutMs, this.options.scheduler);
      return results.map((r) => {
        const c = changed.find((x) => x.name === r.name);
        return c && !ready(c) ? { ...r, error: err("REQUEST_TIMED_OUT") } : r;
      });
    }
    return results;
  }

  private async createPartitionsFor(t: NewPartitions, validateOnly: boolean, attempt = 0): Promise<void> {
    // From the store, as Kafka (getFullReplicaAssignmentForTopics): found before the cache has it.
    const current = isValidTopicName(t.name) ? await this.adminZk.readTopicAssignment(t.name) : undefined;
    if (!current) throw err("UNKNOWN_TOPIC_OR_PARTITION", `The topic '${t.name}' does not exist.`);
    if (this.cache.isMarkedForDeletion(t.name)) {
      throw err("INVALID_TOPIC_EXCEPTION", `The topic '${t.name}' is queued for deletion.`);
    }
    const existingPartitions = current.assignment.partitions;
    const existing = existingPartitions.size;
    if (t.count < existing) {
      throw err(
        "INVALID_PARTITIONS",
        `Topic currently has ${existing} partitions, which is higher than the requested ${t.count}.`,
      );
    }
    if (t.count === existing) throw err("INVALID_PARTITIONS", `Topic already has ${existing} partitions.`);
    const toAdd = t.count - existing;
    checkPartitionBatch(toAdd);
    const rf = existingPartitions.get(0)?.length ?? 1;
    let added: Map<number, number[]>;
    if (t.assignments !== null && t.assignments.length > 0) {
      if (t.assignments.length !== toAdd) {
        throw err(
          "INVALID_REPLICA_ASSIGNMENT",
          `Increasing the number of partitions by ${toAdd} but ${t.assignments.length} assignments provided.`,
        );
      }
      added = new Map(t.assignments.map((a, i) => [existing + i, [...a]]));
      validateReplicaAssignment(added, existing, rf, this.aliveBrokerIds());
    } else {
      // Kafka's createNewPartitionsAssignment: continue the round-robin from partition 0's first replica.
      const brokers = brokerPlacements(this.cache.aliveBrokers());
      const leader0 = existingPartitions.get(0)?.[0];
      const startIndex = leader0 === undefined ? -1 : startIndexForNewPartitions(brokers, leader0);
      added = assignReplicasToBrokers(brokers, toAdd, rf, this.random, startIndex, existing);
    }
    if (validateOnly) return;
    try {
      await this.adminZk.createPartitionsWithAssignment(t.name, current, added);
    } catch (e) {
      // Modified concurrently (e.g. by a reassignment): re-read and re-validate.
      if (isStoreError(e, "BadVersion") && attempt < 3)
        return this.createPartitionsFor(t, validateOnly, attempt + 1);
      throw e;
    }
    this.log.info(
      `Creating ${toAdd} partitions for '${t.name}' with the following replica assignment: ${JSON.stringify(Object.fromEntries(added))}.`,
    );
  }

  // ---- DescribeConfigs / AlterConfigs / IncrementalAlterConfigs (ConfigAdmin) ----

  async describeConfigs(
    resources: readonly ConfigResourceRequest[],
    includeSynonyms: boolean,
    includeDocumentation: boolean,
  ): Promise<DescribeConfigsResourceResult[]> {
    await this.awaitTopicMetadata(topicResourceNames(resources));
    return this.configAdmin.describeConfigs(resources, includeSynonyms, includeDocumentation);
  }

  /** AlterConfigs: replaces the entity's whole set of overrides. */
  async alterConfigs(
    resources: readonly AlterConfigsResource[],
    validateOnly: boolean,
  ): Promise<AlterConfigsResult[]> {
    await this.awaitTopicMetadata(topicResourceNames(resources));
    return this.configAdmin.alterConfigs(resources, validateOnly);
  }

  /** IncrementalAlterConfigs: SET / DELETE / APPEND / SUBTRACT on the entity's current overrides. */
  async incrementalAlterConfigs(
    resources: readonly IncrementalAlterConfigsResource[],
    validateOnly: boolean,
  ): Promise<AlterConfigsResult[]> {
    await this.awaitTopicMetadata(topicResourceNames(resources));
    return this.configAdmin.incrementalAlterConfigs(resources, validateOnly);
  }

  /**
   * Waits, up to TOPIC_METADATA_WAIT_MS, until the metadata cache knows each named topic whose znode
   * exists although the cache does not show it yet: a topic created a moment ago, whose partitions the
   * controller has not yet made and announced. Requests that act on what the cache shows then find it.
   * Topics that are queued for deletion or absent from the store, and invalid names, are not waited for.
   * Only after the cache has the topic is a deletion marker safe: the controller drops a marker for a topic
   * it does not know yet (Kafka's processTopicDeletion), and the cache learns topics from the controller.
   */
  private async awaitTopicMetadata(names: readonly string[]): Promise<void> {
    const known = (n: string): boolean => this.cache.hasTopic(n) || this.cache.isMarkedForDeletion(n);
    const pending: string[] = [];
    for (const n of new Set(names)) {
      if (known(n) || !isValidTopicName(n)) continue;
      try {
        if (await this.adminZk.topicExists(n)) pending.push(n);
      } catch (e) {
        // The store unreachable: answer from the cache, as without the wait.
        this.log.debug(`Could not look up topic ${n} in the store: ${(e as Error).message}`);
      }
    }
    if (pending.length === 0) return;
    await this.cache.waitUntil(() => pending.every(known), TOPIC_METADATA_WAIT_MS, this.options.scheduler);
  }
  /** Writes a user/client config entity (SCRAM credentials, quotas): ConfigAdmin.writeUserClientConfig. */
  writeUserClientConfig(entityPath: string, config: Record<string, string>): Promise<void> {
    return this.configAdmin.writeUserClientConfig(entityPath, config);
  }
}
