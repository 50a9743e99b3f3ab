// AutoTopicCreationManager: topics created because someone asked for them rather than through CreateTopics
// (Kafka's kafka.server.AutoTopicCreationManager). A Metadata request naming unknown topics creates them
// with the broker defaults when auto.create.topics.enable is set; FindCoordinator (and Metadata) create
// the internal topics with Kafka's settings for them: offsets.topic.* for __consumer_offsets,
// transaction.state.log.* for __transaction_state (partitions, replication factor, compaction, segment
// size, min ISR). Fewer alive brokers than the replication factor is COORDINATOR_NOT_AVAILABLE, as Kafka.
// The creation itself is TopicAdmin.createTopics; nothing here waits for leaders.

import { KafkaError } from "../../protocol/errors.js";
import { BROKER_CONFIG_DEFS } from "../kafka-config-def.js";
import {
  GROUP_METADATA_TOPIC_NAME,
  isInternalTopic,
  TRANSACTION_STATE_TOPIC_NAME,
} from "./internal-topics.js";
import type { MetadataCache } from "./metadata-cache.js";
import type { CreateTopicResult, NewTopic } from "./topic-admin.js";

/** What creates the topics (TopicAdmin). */
export interface TopicCreator {
  createTopics(
    topics: readonly NewTopic[],
    opts: { readonly validateOnly: boolean; readonly timeoutMs: number },
  ): Promise<CreateTopicResult[]>;
}

export interface AutoTopicCreationOptions {
  /** The broker's static configuration as given (server.properties + overrides). */
  readonly staticConfig: Readonly<Record<string, string>>;
  /**
   * The broker runs the embedded single-node cluster: internal topics whose replication factor is not set
   * explicitly get min(Kafka's default, alive brokers) replicas (see TopicAdminOptions.singleNodeCluster).
   */
  readonly singleNodeCluster: boolean;
}

/** An internal topic's settings: the broker configs it comes from and the topic configs it gets. */
interface InternalTopicSpec {
  readonly partitions: number;
  readonly replicationFactor: number;
  readonly replicationFactorKey: string;
  readonly configs: Record<string, string>;
}

export class AutoTopicCreationManager {
  constructor(
    private readonly creator: TopicCreator,
    private readonly cache: MetadataCache,
    private readonly options: AutoTopicCreationOptions,
  ) {}

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
    const results = await this.creator.createTopics(
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
   * Creates `__consumer_offsets` or `__transaction_state` with Kafka's settings for them. Returns null when
   * created (or already there), otherwise the error. Does not wait for leaders.
   */
  async createInternalTopic(name: string): Promise<KafkaError | null> {
    if (this.cache.hasTopic(name)) return null;
    const spec = this.internalTopicSpec(name);
    if (spec === undefined) {
      return new KafkaError("INVALID_REQUEST", `${name} is not an internal topic`);
    }
    const alive = this.cache.aliveBrokers().length;
    if (alive < spec.replicationFactor) {
      return new KafkaError(
        "COORDINATOR_NOT_AVAILABLE",
        `Number of alive brokers '${alive}' does not meet the required replication factor '${spec.replicationFactor}' for the ${name} topic (configured via '${spec.replicationFactorKey}'). This error can be ignored if the cluster is starting up and not all brokers are up yet.`,
      );
    }
    const [r] = await this.creator.createTopics(
      [
        {
          name,
          numPartitions: spec.partitions,
          replicationFactor: spec.replicationFactor,
          assignments: [],
          configs: Object.entries(spec.configs).map(([k, v]) => ({ name: k, value: v })),
        },
      ],
      { validateOnly: false, timeoutMs: 0 },
    );
    return r.error && r.error.errorName !== "TOPIC_ALREADY_EXISTS" ? r.error : null;
  }

  /** Kafka's settings for an internal topic (GroupCoordinator.offsetsTopicConfigs, TransactionLog). */
  private internalTopicSpec(name: string): InternalTopicSpec | undefined {
    const stat = this.options.staticConfig;
    const num = (key: string): number => Number(stat[key] ?? BROKER_CONFIG_DEFS[key]?.default);
    let spec: InternalTopicSpec;
    if (name === GROUP_METADATA_TOPIC_NAME) {
      spec = {
        partitions: num("offsets.topic.num.partitions"),
        replicationFactor: num("offsets.topic.replication.factor"),
        replicationFactorKey: "offsets.topic.replication.factor",
        configs: {
          "cleanup.policy": "compact",
          "compression.type": "producer",
          "segment.bytes": String(num("offsets.topic.segment.bytes")),
        },
      };
    } else if (name === TRANSACTION_STATE_TOPIC_NAME) {
      spec = {
        partitions: num("transaction.state.log.num.partitions"),
        replicationFactor: num("transaction.state.log.replication.factor"),
        replicationFactorKey: "transaction.state.log.replication.factor",
        configs: {
          "cleanup.policy": "compact",
          "compression.type": "uncompressed",
          "min.insync.replicas": String(num("transaction.state.log.min.isr")),
          "segment.bytes": String(num("transaction.state.log.segment.bytes")),
          "unclean.leader.election.enable": "false",
        },
      };
    } else {
      return undefined;
    }
    // The embedded single-node cluster needs no setup: an unset replication factor shrinks to the brokers
    // there are (and the transaction log's min ISR with it).
    const alive = this.cache.aliveBrokers().length;
    if (this.options.singleNodeCluster && stat[spec.replicationFactorKey] === undefined && alive > 0) {
      const rf = Math.min(spec.replicationFactor, alive);
      const configs = { ...spec.configs };
      if (name === TRANSACTION_STATE_TOPIC_NAME)
        configs["min.insync.replicas"] = String(Math.min(num("transaction.state.log.min.isr"), rf));
      spec = { ...spec, replicationFactor: rf, configs };
    }
    return spec;
  }
}
