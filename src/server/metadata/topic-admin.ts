// TopicAdmin: topic and config changes requested by clients (Kafka's ZkAdminManager + AdminZkClient +
// AdminUtils). Owns validation with Kafka's error codes and messages (topic names, partition counts,
// replication factors, explicit assignments, configs), Kafka's replica placement (random start index,
// shifted round-robin; the rack-aware variant when every alive broker has a rack), topic ids, and the
// znode writes: /config/topics/<t> + /brokers/topics/<t> (create), /admin/delete_topics/<t> (delete),
// the assignment (create partitions), /config/topics|brokers/<entity> plus a /config/changes
// notification (alter configs). The controller turns these into partition states; the MetadataCache
// serves the result. Requests with a timeout wait for the cache to show the outcome (as Kafka's
// DelayedCreatePartitions / DelayedDeleteTopics), answering REQUEST_TIMED_OUT when it does not.
// Dynamic broker configs (/config/brokers/<id>, /config/brokers/<default>) are stored, validated and
// described here; the broker server applies their log defaults (log.*, compression.type,
// message.max.bytes) to the LogManager when the metadata cache reports a change (dynamicBrokerLogConfig).

import { Logger } from "../../common/logger.js";
import type { Scheduler } from "../../common/scheduler.js";
import type { Time } from "../../common/time.js";
import { type ErrorName, KafkaError } from "../../protocol/errors.js";
import { BROKER_CONFIG_DEFS, type KafkaConfig } from "../kafka-config.js";
import {
  type BrokerConfigLayers,
  brokerConfigNames,
  ConfigResourceType,
  ConfigType,
  ConfigValidationError,
  type DescribedConfig,
  describeBrokerConfig,
  describeTopicConfig,
  TOPIC_CONFIG_DEFS,
  TOPIC_CONFIG_NAMES,
  validateBrokerConfigs,
  validateTopicConfigs,
} from "./config-definitions.js";
import { type AliveBroker, isInternalTopic, type MetadataCache } from "./metadata-cache.js";
import { type MetadataStore, MetadataStoreError, type Op } from "./metadata-store.js";
import {
  ConfigEntityChangeNotificationSequenceZNode,
  ConfigEntityZNode,
  DEFAULT_BROKER_ENTITY,
  randomUuid,
  TopicZNode,
  ZERO_UUID,
  ZkPaths,
} from "./zk-data.js";

/**
 * Most partitions one request may create, as Kafka's controller allows (MAX_PARTITIONS_PER_BATCH):
 * a bad or hostile count is refused before anything is allocated for it.
 */
export const MAX_PARTITIONS_PER_BATCH = 10_000;

function checkPartitionBatch(count: number): void {
  if (count > MAX_PARTITIONS_PER_BATCH) {
    throw new KafkaError("POLICY_VIOLATION", "Excessively large number of partitions per request.");
  }
}

export const MAX_TOPIC_NAME_LENGTH = 249;

/** Kafka's Topic.validate: throws INVALID_TOPIC_EXCEPTION with Kafka's message. */
export function validateTopicName(name: string): void {
  if (name.length === 0)
    throw new KafkaError("INVALID_TOPIC_EXCEPTION", "Topic name is illegal, it can't be empty");
  if (name === "." || name === "..") {
    throw new KafkaError("INVALID_TOPIC_EXCEPTION", 'Topic name cannot be "." or ".."');
  }
  if (name.length > MAX_TOPIC_NAME_LENGTH) {
    throw new KafkaError(
      "INVALID_TOPIC_EXCEPTION",
      `Topic name is illegal, it can't be longer than ${MAX_TOPIC_NAME_LENGTH} characters, topic name: ${name}`,
    );
  }
  if (!/^[a-zA-Z0-9._-]+$/.test(name)) {
    throw new KafkaError(
      "INVALID_TOPIC_EXCEPTION",
      `Topic name "${name}" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`,
    );
  }
}

export function isValidTopicName(name: string): boolean {
  try {
    validateTopicName(name);
    return true;
  } catch {
    return false;
  }
}

/** '.' and '_' collide in metric names: "a.b" and "a_b" cannot both exist. */
export function unifyCollisionChars(name: string): string {
  return name.replace(/\./g, "_");
}

// ---- replica assignment (Kafka's AdminUtils.assignReplicasToBrokers) ----

export interface BrokerPlacement {
  readonly id: number;
  readonly rack: string | null;
}

function replicaIndex(
  firstReplicaIndex: number,
  secondReplicaShift: number,
  replicaIdx: number,
  nBrokers: number,
): number {
  const shift = 1 + ((secondReplicaShift + replicaIdx) % (nBrokers - 1));
  return (firstReplicaIndex + shift) % nBrokers;
}

/**
 * Kafka's replica placement: the first replica of partition p on broker (p + startIndex) mod n, the others
 * shifted round-robin, the shift growing each time all brokers have led once; rack-aware (alternating
 * racks, one replica per rack while racks last) when every broker has a rack. `fixedStartIndex` and
 * `startPartitionId` are used when adding partitions; `random` returns [0, 1).
 */
export function assignReplicasToBrokers(
  brokers: readonly BrokerPlacement[],
  nPartitions: number,
  replicationFactor: number,
  random: () => number = Math.random,
  fixedStartIndex = -1,
  startPartitionId = -1,
): Map<number, number[]> {
  if (nPartitions <= 0)
    throw new KafkaError("INVALID_PARTITIONS", "Number of partitions must be larger than 0.");
  if (replicationFactor <= 0) {
    throw new KafkaError("INVALID_REPLICATION_FACTOR", "Replication factor must be larger than 0.");
  }
  if (replicationFactor > brokers.length) {
    throw new KafkaError(
      "INVALID_REPLICATION_FACTOR",
      `Replication factor: ${replicationFactor} larger than available brokers: ${brokers.length}.`,
    );
  }
  const sorted = [...brokers].sort((a, b) => a.id - b.id);
  const rackAware = sorted.length > 0 && sorted.every((b) => b.rack !== null);
  const randInt = (n: number): number => Math.floor(random() * n);
  const ret = new Map<number, number[]>();
  if (!rackAware) {
    const ids = sorted.map((b) => b.id);
    const n = ids.length;
    const startIndex = fixedStartIndex >= 0 ? fixedStartIndex : randInt(n);
    let currentPartitionId = Math.max(0, startPartitionId);
    let nextReplicaShift = fixedStartIndex >= 0 ? fixedStartIndex : randInt(n);
    for (let i = 0; i < nPartitions; i++) {
      if (currentPartitionId > 0 && currentPartitionId % n === 0) nextReplicaShift += 1;
      const first = (currentPartitionId + startIndex) % n;
      const replicas = [ids[first]];
      for (let j = 0; j < replicationFactor - 1; j++)
        replicas.push(ids[replicaIndex(first, nextReplicaShift, j, n)]);
      ret.set(currentPartitionId, replicas);
      currentPartitionId++;
    }
    return ret;
  }
  const rackOf = new Map(sorted.map((b) => [b.id, b.rack!]));
  const arranged = rackAlternatedBrokerList(sorted);
  const numRacks = new Set(rackOf.values()).size;
  const n = arranged.length;
  const startIndex = fixedStartIndex >= 0 ? fixedStartIndex : randInt(n);
  let currentPartitionId = Math.max(0, startPartitionId);
  let nextReplicaShift = fixedStartIndex >= 0 ? fixedStartIndex : randInt(n);
  for (let i = 0; i < nPartitions; i++) {
    if (currentPartitionId > 0 && currentPartitionId % n === 0) nextReplicaShift += 1;
    const first = (currentPartitionId + startIndex) % n;
    const leader = arranged[first];
    const replicas = [leader];
    const racks = new Set([rackOf.get(leader)]);
    const used = new Set([leader]);
    let k = 0;
    for (let j = 0; j < replicationFactor - 1; j++) {
      for (;;) {
        const broker = arranged[replicaIndex(first, nextReplicaShift * numRacks, k, n)];
        const rack = rackOf.get(broker);
        k++;
        if ((!racks.has(rack) || racks.size === numRacks) && (!used.has(broker) || used.size === n)) {
          replicas.push(broker);
          racks.add(rack);
          used.add(broker);
          break;
        }
      }
    }
    ret.set(currentPartitionId, replicas);
    currentPartitionId++;
  }
  return ret;
}

/** Brokers ordered so that consecutive ones are on different racks (Kafka's getRackAlternatedBrokerList). */
export function rackAlternatedBrokerList(brokers: readonly BrokerPlacement[]): number[] {
  const byRack = new Map<string, number[]>();
  for (const b of [...brokers].sort((x, y) => x.id - y.id)) {
    const list = byRack.get(b.rack!) ?? [];
    list.push(b.id);
    byRack.set(b.rack!, list);
  }
  const racks = [...byRack.keys()].sort();
  const cursors = new Map(racks.map((r) => [r, 0]));
  const out: number[] = [];
  let r = 0;
  while (out.length < brokers.length) {
    const rack = racks[r];
    const list = byRack.get(rack)!;
    const c = cursors.get(rack)!;
    if (c < list.length) {
      out.push(list[c]);
      cursors.set(rack, c + 1);
    }
    r = (r + 1) % racks.length;
  }
  return out;
}

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

export interface ConfigResourceRequest {
  readonly resourceType: number;
  readonly resourceName: string;
  /** null: every config */
  readonly configurationKeys: readonly string[] | null;
}

export interface DescribeConfigsResourceResult {
  readonly resourceType: number;
  readonly resourceName: string;
  readonly error: KafkaError | null;
  readonly configs: DescribedConfig[];
}

export interface AlterConfigsResource {
  readonly resourceType: number;
  readonly resourceName: string;
  readonly configs: ReadonlyArray<{ readonly name: string; readonly value: string | null }>;
}

/** IncrementalAlterConfigs operations. */
export const AlterConfigOp = { SET: 0, DELETE: 1, APPEND: 2, SUBTRACT: 3 } as const;

export interface IncrementalAlterConfigsResource {
  readonly resourceType: number;
  readonly resourceName: string;
  readonly configs: ReadonlyArray<{
    readonly name: string;
    readonly configOperation: number;
    readonly value: string | null;
  }>;
}

export interface AlterConfigsResult {
  readonly resourceType: number;
  readonly resourceName: string;
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

function isCode(e: unknown, code: string): boolean {
  return e instanceof MetadataStoreError && e.code === code;
}

function err(name: ErrorName, message?: string): KafkaError {
  return new KafkaError(name, message);
}

function asKafkaError(e: unknown): KafkaError {
  if (e instanceof KafkaError) return e;
  if (e instanceof ConfigValidationError) return err(e.errorName, e.message);
  return err("UNKNOWN_SERVER_ERROR", (e as Error)?.message ?? String(e));
}

export class TopicAdmin {
  private readonly log: Logger;
  private readonly staticConfig: Record<string, string>;
  private readonly random: () => number;

  constructor(
    private readonly store: MetadataStore,
    private readonly cache: MetadataCache,
    private readonly options: TopicAdminOptions,
  ) {
    this.log = options.logger ?? new Logger("kafka.server.ZkAdminManager");
    this.staticConfig =
      options.staticConfig instanceof Map
        ? Object.fromEntries(options.staticConfig)
        : { ...(options.staticConfig as Record<string, string>) };
    this.random = options.random ?? Math.random;
  }

  get autoCreateTopicsEnable(): boolean {
    return this.options.autoCreateTopicsEnable;
  }

  private aliveBrokers(): AliveBroker[] {
    return this.cache.aliveBrokers();
  }

  private brokerLayers(): BrokerConfigLayers {
    return {
      dynamicBroker: this.cache.brokerConfig(String(this.options.brokerId)),
      dynamicDefault: this.cache.brokerConfig(DEFAULT_BROKER_ENTITY),
      staticConfig: this.staticConfig,
    };
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
        error: asKafkaError(e),
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
          await this.writeNewTopic(t.name, topicId, plan.assignment, plan.config);
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
            describeTopicConfig(n, plan.config, this.brokerLayers(), false, false),
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

  private planTopic(t: NewTopic): {
    assignment: Map<number, number[]>;
    config: Record<string, string>;
    replicationFactor: number;
  } {
    validateTopicName(t.name);
    this.checkNameFree(t.name);
    const config: Record<string, string> = {};
    for (const c of t.configs) {
      if (c.value === null)
        throw err("INVALID_CONFIG", `Null value not supported for topic configs: ${c.name}`);
      config[c.name] = c.value;
    }
    const brokers = this.aliveBrokers();
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
      this.validateAssignment(assignment, 0, undefined);
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
        brokers.map((b) => ({ id: b.id, rack: b.rack })),
        numPartitions,
        replicationFactor,
        this.random,
      );
    }
    validateTopicConfigs(config);
    return { assignment, config, replicationFactor };
  }

  private checkNameFree(name: string): void {
    if (this.cache.hasTopic(name)) throw err("TOPIC_ALREADY_EXISTS", `Topic '${name}' already exists.`);
    if (this.cache.isMarkedForDeletion(name)) {
      throw err("TOPIC_ALREADY_EXISTS", `Topic '${name}' is marked for deletion.`);
    }
    const unified = unifyCollisionChars(name);
    const clash = this.cache.topicNames().find((t) => t !== name && unifyCollisionChars(t) === unified);
    if (clash !== undefined)
      throw err("INVALID_TOPIC_EXCEPTION", `Topic '${name}' collides with existing topic: ${clash}`);
  }

  /**
   * Kafka's AdminZkClient.validateReplicaAssignment: partitions `firstNew`.. consecutive, same replication
   * factor everywhere (and as `expectedRf`), no duplicate brokers, only known brokers.
   */
  private validateAssignment(
    assignment: Map<number, number[]>,
    firstNew: number,
    expectedRf: number | undefined,
  ): void {
    const ids = [...assignment.keys()].sort((a, b) => a - b);
    ids.forEach((p, i) => {
      if (p !== firstNew + i) {
        throw err(
          "INVALID_REPLICA_ASSIGNMENT",
          `Unexpected existing replica assignment for topic, partition ids must be consecutive from ${firstNew}: ${ids.join(", ")}`,
        );
      }
    });
    const alive = new Set(this.aliveBrokers().map((b) => b.id));
    const rf = expectedRf ?? assignment.get(ids[0])?.length ?? 0;
    for (const p of ids) {
      const replicas = assignment.get(p)!;
      if (replicas.length === 0)
        throw err("INVALID_REPLICA_ASSIGNMENT", `Cannot have replication factor of 0 for partition id ${p}.`);
      if (new Set(replicas).size !== replicas.length) {
        throw err(
          "INVALID_REPLICA_ASSIGNMENT",
          `Duplicate brokers not allowed in replica assignment: ${replicas.join(", ")} for partition id ${p}.`,
        );
      }
      if (replicas.length !== rf) {
        throw err(
          "INVALID_REPLICA_ASSIGNMENT",
          expectedRf === undefined
            ? "All partitions should have the same number of replicas"
            : `Inconsistent replication factor between partitions, partition 0 has ${expectedRf} while partition ${p} has ${replicas.length}.`,
        );
      }
      const unknown = replicas.filter((b) => !alive.has(b));
      if (unknown.length > 0) {
        throw err(
          "INVALID_REPLICA_ASSIGNMENT",
          `Unknown broker(s) in replica assignment: ${unknown.join(", ")}.`,
        );
      }
    }
  }

  private async writeNewTopic(
    name: string,
    topicId: string,
    assignment: Map<number, number[]>,
    config: Record<string, string>,
  ): Promise<void> {
    const ops: Op[] = [];
    const configPath = ZkPaths.configTopic(name);
    const existing = await this.store.exists(configPath);
    ops.push(
      existing
        ? { type: "set", path: configPath, data: ConfigEntityZNode.encode(config) }
        : { type: "create", path: configPath, data: ConfigEntityZNode.encode(config) },
    );
    ops.push({
      type: "create",
      path: ZkPaths.topic(name),
      data: TopicZNode.encode({
        topicId,
        partitions: assignment,
        addingReplicas: new Map(),
        removingReplicas: new Map(),
      }),
    });
    try {
      await this.store.multi(ops);
    } catch (e) {
      if (isCode(e, "NodeExists")) throw err("TOPIC_ALREADY_EXISTS", `Topic '${name}' already exists.`);
      throw e;
    }
  }

  /**
   * Auto-creation for Metadata requests (auto.create.topics.enable): creates each topic with the broker
   * defaults, without waiting. Returns, per topic, null when it was created (or already existed) or the
   * error that prevented it.
   */
  async autoCreateTopics(names: readonly string[]): Promise<Map<string, KafkaError | null>> {
    const out = new Map<string, KafkaError | null>();
    for (const n of names) {
      if (isInternalTopic(n) && !this.cache.hasTopic(n)) out.set(n, await this.createInternalTopic(n));
    }
    const todo = names.filter((n) => !this.cache.hasTopic(n) && !isInternalTopic(n));
    const results = await this.createTopics(
      todo.map((name) => ({ name, numPartitions: -1, replicationFactor: -1, assignments: [], configs: [] })),
      { validateOnly: false, timeoutMs: 0 },
    );
    for (const r of results) {
      out.set(r.name, r.error && r.error.errorName !== "TOPIC_ALREADY_EXISTS" ? r.error : null);
    }
    for (const n of names) if (!out.has(n)) out.set(n, null);
    return out;
  }

  /**
   * Creates `__consumer_offsets` or `__transaction_state` with Kafka's settings for them
   * (offsets.topic.* / transaction.state.log.*: partitions, replication factor, compaction, segment size,
   * min ISR). As Kafka, fewer alive brokers than the replication factor gives COORDINATOR_NOT_AVAILABLE.
   * Returns null when created (or already there), otherwise the error. Does not wait for leaders.
   */
  async createInternalTopic(name: string): Promise<KafkaError | null> {
    if (this.cache.hasTopic(name)) return null;
    const num = (key: string): number => Number(this.staticConfig[key] ?? BROKER_CONFIG_DEFS[key]?.default);
    let partitions: number;
    let rf: number;
    let configs: Record<string, string>;
    if (name === "__consumer_offsets") {
      partitions = num("offsets.topic.num.partitions");
      rf = num("offsets.topic.replication.factor");
      configs = {
        "cleanup.policy": "compact",
        "compression.type": "producer",
        "segment.bytes": String(num("offsets.topic.segment.bytes")),
      };
    } else if (name === "__transaction_state") {
      partitions = num("transaction.state.log.num.partitions");
      rf = num("transaction.state.log.replication.factor");
      configs = {
        "cleanup.policy": "compact",
        "compression.type": "uncompressed",
        "min.insync.replicas": String(num("transaction.state.log.min.isr")),
        "segment.bytes": String(num("transaction.state.log.segment.bytes")),
        "unclean.leader.election.enable": "false",
      };
    } else {
      return err("INVALID_REQUEST", `${name} is not an internal topic`);
    }
    const alive = this.aliveBrokers().length;
    const rfKey =
      name === "__consumer_offsets"
        ? "offsets.topic.replication.factor"
        : "transaction.state.log.replication.factor";
    if (this.options.singleNodeCluster && this.staticConfig[rfKey] === undefined && alive > 0) {
      rf = Math.min(rf, alive);
      if (name === "__transaction_state")
        configs["min.insync.replicas"] = String(Math.min(num("transaction.state.log.min.isr"), rf));
    }
    if (alive < rf) {
      return err(
        "COORDINATOR_NOT_AVAILABLE",
        `Number of alive brokers '${alive}' does not meet the required replication factor '${rf}' for the ${name} topic (configured via '${name === "__consumer_offsets" ? "offsets.topic.replication.factor" : "transaction.state.log.replication.factor"}'). This error can be ignored if the cluster is starting up and not all brokers are up yet.`,
      );
    }
    const [r] = await this.createTopics(
      [
        {
          name,
          numPartitions: partitions,
          replicationFactor: rf,
          assignments: [],
          configs: Object.entries(configs).map(([k, v]) => ({ name: k, value: v })),
        },
      ],
      { validateOnly: false, timeoutMs: 0 },
    );
    return r.error && r.error.errorName !== "TOPIC_ALREADY_EXISTS" ? r.error : null;
  }

  // ---- DeleteTopics ----

  async deleteTopics(targets: readonly DeleteTopicTarget[], timeoutMs: number): Promise<DeleteTopicResult[]> {
    const key = (t: DeleteTopicTarget): string =>
      t.name !== null && t.name !== "" ? `n:${t.name}` : `i:${t.topicId}`;
    const counts = new Map<string, number>();
    for (const t of targets) counts.set(key(t), (counts.get(key(t)) ?? 0) + 1);
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
        await this.store.create(ZkPaths.deleteTopic(name), Buffer.alloc(0));
      } catch (e) {
        if (!isCode(e, "NodeExists")) {
          fail(asKafkaError(e));
          continue;
        }
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
        results.push({ name: t.name, error: asKafkaError(e) });
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
    const path = ZkPaths.topic(t.name);
    const node = this.cache.hasTopic(t.name) ? await this.store.get(path) : undefined;
    if (!node) throw err("UNKNOWN_TOPIC_OR_PARTITION", `The topic '${t.name}' does not exist.`);
    if (this.cache.isMarkedForDeletion(t.name)) {
      throw err("INVALID_TOPIC_EXCEPTION", `The topic '${t.name}' is queued for deletion.`);
    }
    const current = TopicZNode.decode(path, node.data);
    const existing = current.partitions.size;
    if (t.count < existing) {
      throw err(
        "INVALID_PARTITIONS",
        `Topic currently has ${existing} partitions, which is higher than the requested ${t.count}.`,
      );
    }
    if (t.count === existing) throw err("INVALID_PARTITIONS", `Topic already has ${existing} partitions.`);
    const toAdd = t.count - existing;
    checkPartitionBatch(toAdd);
    const rf = current.partitions.get(0)?.length ?? 1;
    let added: Map<number, number[]>;
    if (t.assignments !== null && t.assignments.length > 0) {
      if (t.assignments.length !== toAdd) {
        throw err(
          "INVALID_REPLICA_ASSIGNMENT",
          `Increasing the number of partitions by ${toAdd} but ${t.assignments.length} assignments provided.`,
        );
      }
      added = new Map(t.assignments.map((a, i) => [existing + i, [...a]]));
      this.validateAssignment(added, existing, rf);
    } else {
      const brokers = this.aliveBrokers().map((b) => ({ id: b.id, rack: b.rack }));
      const sortedIds = brokers.map((b) => b.id).sort((a, b) => a - b);
      const leader0 = current.partitions.get(0)?.[0];
      const startIndex = leader0 === undefined ? -1 : Math.max(0, sortedIds.indexOf(leader0));
      added = assignReplicasToBrokers(brokers, toAdd, rf, this.random, startIndex, existing);
    }
    if (validateOnly) return;
    const partitions = new Map(current.partitions);
    for (const [p, r] of added) partitions.set(p, r);
    try {
      await this.store.set(path, TopicZNode.encode({ ...current, partitions }), node.stat.version);
    } catch (e) {
      // Modified concurrently (e.g. by a reassignment): re-read and re-validate.
      if (isCode(e, "BadVersion") && attempt < 3)
        return this.createPartitionsFor(t, validateOnly, attempt + 1);
      throw e;
    }
    this.log.info(
      `Creating ${toAdd} partitions for '${t.name}' with the following replica assignment: ${JSON.stringify(Object.fromEntries(added))}.`,
    );
  }

  // ---- DescribeConfigs ----

  describeConfigs(
    resources: readonly ConfigResourceRequest[],
    includeSynonyms: boolean,
    includeDocumentation: boolean,
  ): DescribeConfigsResourceResult[] {
    return resources.map((r) => {
      const result = (
        error: KafkaError | null,
        configs: DescribedConfig[] = [],
      ): DescribeConfigsResourceResult => ({
        resourceType: r.resourceType,
        resourceName: r.resourceName,
        error,
        configs,
      });
      const wanted = (names: readonly string[]): readonly string[] =>
        r.configurationKeys === null || r.configurationKeys.length === 0
          ? names
          : names.filter((n) => r.configurationKeys!.includes(n));
      try {
        switch (r.resourceType) {
          case ConfigResourceType.TOPIC: {
            validateTopicName(r.resourceName);
            if (!this.cache.hasTopic(r.resourceName)) {
              return result(err("UNKNOWN_TOPIC_OR_PARTITION", `Topic '${r.resourceName}' does not exist`));
            }
            const overrides = this.cache.topicConfig(r.resourceName);
            const layers = this.brokerLayers();
            return result(
              null,
              wanted(TOPIC_CONFIG_NAMES).map((n) =>
                describeTopicConfig(n, overrides, layers, includeSynonyms, includeDocumentation),
              ),
            );
          }
          case ConfigResourceType.BROKER: {
            const perBroker = this.checkBrokerResource(r.resourceName);
            const layers = this.brokerLayers();
            const names = perBroker ? brokerConfigNames() : Object.keys(layers.dynamicDefault).sort();
            const extra = perBroker
              ? Object.keys(layers.dynamicBroker).filter((k) => !names.includes(k))
              : [];
            return result(
              null,
              wanted([...names, ...extra]).map((n) =>
                describeBrokerConfig(n, layers, perBroker, includeSynonyms, includeDocumentation),
              ),
            );
          }
          case ConfigResourceType.BROKER_LOGGER:
            this.checkBrokerResource(r.resourceName);
            return result(null, []);
          default:
            return result(err("INVALID_REQUEST", `Unsupported resource type ${r.resourceType}`));
        }
      } catch (e) {
        return result(asKafkaError(e));
      }
    });
  }

  /** True for this broker's id, false for "" (the cluster default); INVALID_REQUEST otherwise. */
  private checkBrokerResource(name: string): boolean {
    if (name === "") return false;
    if (name === String(this.options.brokerId)) return true;
    throw err(
      "INVALID_REQUEST",
      `Unexpected broker id, expected ${this.options.brokerId} or empty string, but received ${name}`,
    );
  }

  // ---- AlterConfigs / IncrementalAlterConfigs ----

  /** AlterConfigs: replaces the entity's whole set of overrides. */
  async alterConfigs(
    resources: readonly AlterConfigsResource[],
    validateOnly: boolean,
  ): Promise<AlterConfigsResult[]> {
    return this.eachConfigResource(resources, async (r) => {
      const next: Record<string, string> = {};
      for (const c of r.configs) {
        if (c.value === null) throw err("INVALID_REQUEST", `Null value not supported for : ${c.name}`);
        next[c.name] = c.value;
      }
      await this.writeEntityConfig(r.resourceType, r.resourceName, next, validateOnly);
    });
  }

  /** IncrementalAlterConfigs: SET / DELETE / APPEND / SUBTRACT on the entity's current overrides. */
  async incrementalAlterConfigs(
    resources: readonly IncrementalAlterConfigsResource[],
    validateOnly: boolean,
  ): Promise<AlterConfigsResult[]> {
    return this.eachConfigResource(resources, async (r) => {
      const names = r.configs.map((c) => c.name);
      if (new Set(names).size !== names.length)
        throw err("INVALID_REQUEST", "Error due to duplicate config keys");
      const current = this.currentOverrides(r.resourceType, r.resourceName);
      const next = { ...current };
      for (const c of r.configs) {
        const isList = this.configTypeOf(r.resourceType, c.name) === ConfigType.LIST;
        switch (c.configOperation) {
          case AlterConfigOp.SET:
            if (c.value === null) throw err("INVALID_REQUEST", `Null value not supported for : ${c.name}`);
            next[c.name] = c.value;
            break;
          case AlterConfigOp.DELETE:
            delete next[c.name];
            break;
          case AlterConfigOp.APPEND:
          case AlterConfigOp.SUBTRACT: {
            const append = c.configOperation === AlterConfigOp.APPEND;
            if (!isList) {
              throw err(
                "INVALID_CONFIG",
                `Config value ${append ? "append" : "subtract"} is not allowed for config key: ${c.name}`,
              );
            }
            const base = next[c.name] ?? this.defaultOf(r.resourceType, c.name) ?? "";
            const items = splitList(base);
            const given = splitList(c.value ?? "");
            const result = append
              ? [...items, ...given.filter((g) => !items.includes(g))]
              : items.filter((i) => !given.includes(i));
            next[c.name] = result.join(",");
            break;
          }
          default:
            throw err("INVALID_REQUEST", `Unknown alter config operation ${c.configOperation} for ${c.name}`);
        }
      }
      await this.writeEntityConfig(r.resourceType, r.resourceName, next, validateOnly);
    });
  }

  /**
   * Applies `apply` to each resource of an Alter/IncrementalAlterConfigs request, in order: a resource
   * named twice gets INVALID_REQUEST, a failure becomes that resource's error, the others go on.
   */
  private async eachConfigResource<R extends { resourceType: number; resourceName: string }>(
    resources: readonly R[],
    apply: (r: R) => Promise<void>,
  ): Promise<AlterConfigsResult[]> {
    const dup = this.duplicates(resources);
    const out: AlterConfigsResult[] = [];
    for (const r of resources) {
      let error: KafkaError | null = null;
      if (dup.has(`${r.resourceType}/${r.resourceName}`)) {
        error = err("INVALID_REQUEST", "Error due to duplicate config resources");
      } else {
        try {
          await apply(r);
        } catch (e) {
          error = asKafkaError(e);
        }
      }
      out.push({ resourceType: r.resourceType, resourceName: r.resourceName, error });
    }
    return out;
  }

  private duplicates(resources: ReadonlyArray<{ resourceType: number; resourceName: string }>): Set<string> {
    const seen = new Set<string>();
    const dup = new Set<string>();
    for (const r of resources) {
      const k = `${r.resourceType}/${r.resourceName}`;
      if (seen.has(k)) dup.add(k);
      seen.add(k);
    }
    return dup;
  }

  private configTypeOf(resourceType: number, name: string): number | undefined {
    if (resourceType === ConfigResourceType.TOPIC) return TOPIC_CONFIG_DEFS[name]?.type;
    return describeBrokerConfig(
      name,
      { dynamicBroker: {}, dynamicDefault: {}, staticConfig: {} },
      true,
      false,
      false,
    ).configType;
  }

  private defaultOf(resourceType: number, name: string): string | undefined {
    if (resourceType === ConfigResourceType.TOPIC) return TOPIC_CONFIG_DEFS[name]?.default;
    return describeBrokerConfig(name, this.brokerLayers(), true, false, false).value ?? undefined;
  }

  private currentOverrides(resourceType: number, resourceName: string): Record<string, string> {
    if (resourceType === ConfigResourceType.TOPIC) {
      validateTopicName(resourceName);
      if (!this.cache.hasTopic(resourceName))
        throw err("UNKNOWN_TOPIC_OR_PARTITION", `Topic '${resourceName}' does not exist`);
      return this.cache.topicConfig(resourceName);
    }
    if (resourceType === ConfigResourceType.BROKER) {
      const perBroker = this.checkBrokerResource(resourceName);
      return this.cache.brokerConfig(perBroker ? resourceName : DEFAULT_BROKER_ENTITY);
    }
    throw err("INVALID_REQUEST", `Unsupported resource type ${resourceType}`);
  }

  /** Deletes /config/changes notifications older than CONFIG_CHANGE_EXPIRATION_MS (every broker has seen them). */
  private async purgeObsoleteNotifications(): Promise<void> {
    const now = this.options.time.milliseconds();
    for (const name of await this.store.getChildren(ZkPaths.configChanges)) {
      const path = `${ZkPaths.configChanges}/${name}`;
      const stat = await this.store.exists(path);
      if (stat && now - stat.ctime > CONFIG_CHANGE_EXPIRATION_MS) {
        try {
          await this.store.delete(path, stat.version);
        } catch (e) {
          if (!isCode(e, "NoNode") && !isCode(e, "BadVersion")) throw e;
        }
      }
    }
  }

  /** Validates and (unless validateOnly) writes an entity's overrides plus the change notification. */
  private async writeEntityConfig(
    resourceType: number,
    resourceName: string,
    config: Record<string, string>,
    validateOnly: boolean,
  ): Promise<void> {
    let path: string;
    let entityPath: string;
    if (resourceType === ConfigResourceType.TOPIC) {
      this.currentOverrides(resourceType, resourceName);
      validateTopicConfigs(config);
      path = ZkPaths.configTopic(resourceName);
      entityPath = `topics/${resourceName}`;
    } else if (resourceType === ConfigResourceType.BROKER) {
      const perBroker = this.checkBrokerResource(resourceName);
      validateBrokerConfigs(config, perBroker);
      const entity = perBroker ? resourceName : DEFAULT_BROKER_ENTITY;
      path = ZkPaths.configBroker(entity);
      entityPath = `brokers/${entity}`;
    } else {
      throw err("INVALID_REQUEST", `Unsupported resource type ${resourceType}`);
    }
    if (validateOnly) return;
    const data = ConfigEntityZNode.encode(config);
    const ops: Op[] = [
      (await this.store.exists(path)) ? { type: "set", path, data } : { type: "create", path, data },
      {
        type: "create",
        path: ZkPaths.configChangePrefix,
        data: ConfigEntityChangeNotificationSequenceZNode.encode(entityPath),
        options: { sequential: true },
      },
    ];
    await this.store.multi(ops);
    this.log.info(`Updated configs of ${entityPath}: ${JSON.stringify(config)}`);
    await this.purgeObsoleteNotifications();
    // The cache applies the change from its watch; wait for it so a following Describe sees it.
    await this.cache.idle();
  }
}

/** Config change notifications older than this are deleted (Kafka's changeExpirationMs, 15 minutes). */
export const CONFIG_CHANGE_EXPIRATION_MS = 15 * 60 * 1000;

function splitList(v: string): string[] {
  return v
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}
