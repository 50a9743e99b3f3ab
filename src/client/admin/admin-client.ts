// AdminClient: Tributary's Admin API (Kafka's KafkaAdminClient) over ClusterClient. Topic changes go
// to the controller (NOT_CONTROLLER → refresh metadata, retry), configs to the broker they describe
// (or any broker for topics and the broker default), ListOffsets and DeleteRecords to each partition's
// leader, DescribeLogDirs to every broker. Retriable errors are retried with retry.backoff.ms until
// default.api.timeout.ms; per-resource errors come back as `error: KafkaClientError` in the results.
//
// Usage:
//   const admin = new AdminClient({ bootstrapServers: "127.0.0.1:9092" });
//   await admin.createTopics([{ name: "t", numPartitions: 4, replicationFactor: 1 }]);
//   const [t] = await admin.describeTopics(["t"]);
//   const offsets = await admin.listOffsets([{ topic: "t", partition: 0, spec: "latest" }]);
//   await admin.close();

import { Apis } from "../../protocol/generated/api-table.js";
import { ErrorCode } from "../../protocol/generated/errors.js";
import { KafkaClientError } from "../errors.js";
import type { BrokerConnection } from "../network/broker-connection.js";
import { ClusterClient, type ClusterClientOptions } from "../network/cluster-client.js";
import {
  type AlterConfigOp,
  AlterConfigOpType,
  type AlterConfigsResult,
  type BrokerLogDirs,
  type ClusterDescription,
  type ConfigResource,
  ConfigResourceType,
  type CreatePartitionsResult,
  type CreateTopicResult,
  type DeleteRecordsResultInfo,
  type DeleteTopicResult,
  type DescribeConfigsResult,
  type ListOffsetsResultInfo,
  type LogDirDescription,
  type NewPartitions,
  type NewTopic,
  type OffsetSpec,
  type TopicDescription,
  type TopicListing,
  type TopicPartitionRef,
} from "./admin-types.js";

export interface AdminClientOptions extends ClusterClientOptions {}

const ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA";

/** ListOffsets timestamps for the OffsetSpec names (ListOffsetsRequest.EARLIEST_TIMESTAMP, …). */
export const OFFSET_SPEC_TIMESTAMP = {
  latest: -1n,
  earliest: -2n,
  "max-timestamp": -3n,
  "earliest-local": -4n,
  "latest-tiered": -5n,
} as const;

/** The lowest ListOffsets version that knows a spec's special timestamp. */
function minListOffsetsVersion(spec: OffsetSpec): number {
  if (spec === "max-timestamp") return 7;
  if (spec === "earliest-local") return 8;
  if (spec === "latest-tiered") return 9;
  return 1;
}

function err(code: number, message: string | null | undefined, what?: string): KafkaClientError {
  const e = new KafkaClientError(code, message);
  if (what && !message) return new KafkaClientError(code, `${what}: ${e.message}`);
  return e;
}

function unknownTopic(topic: string): KafkaClientError {
  return KafkaClientError.of("UNKNOWN_TOPIC_OR_PARTITION", `Topic '${topic}' does not exist`);
}

function resourceTypeId(type: ConfigResource["type"]): number {
  return type === "topic"
    ? ConfigResourceType.TOPIC
    : type === "broker"
      ? ConfigResourceType.BROKER
      : ConfigResourceType.BROKER_LOGGER;
}

function specTimestamp(spec: OffsetSpec): bigint {
  return typeof spec === "string" ? OFFSET_SPEC_TIMESTAMP[spec] : BigInt(spec.timestamp);
}

export class AdminClient {
  readonly cluster: ClusterClient;
  private readonly ownsCluster: boolean;

  /** From options (the client owns its connections) or over an existing ClusterClient. */
  constructor(options: AdminClientOptions | ClusterClient) {
    if (options instanceof ClusterClient) {
      this.cluster = options;
      this.ownsCluster = false;
    } else {
      this.cluster = new ClusterClient({ clientId: "adminclient-1", ...options });
      this.ownsCluster = true;
    }
  }

  private get timeoutMs(): number {
    return this.cluster.options.requestTimeoutMs ?? 30_000;
  }

  async close(): Promise<void> {
    if (this.ownsCluster) await this.cluster.close();
  }

  // ---- topics --------------------------------------------------------------------------------------

  async createTopics(
    topics: readonly NewTopic[],
    options: { validateOnly?: boolean } = {},
  ): Promise<CreateTopicResult[]> {
    const res = await this.cluster.sendToController(
      Apis.CreateTopics,
      () => ({
        topics: topics.map((t) => ({
          name: t.name,
          numPartitions: t.assignments ? -1 : (t.numPartitions ?? -1),
          replicationFactor: t.assignments ? -1 : (t.replicationFactor ?? -1),
          assignments: (t.assignments ?? []).map((brokerIds, partitionIndex) => ({
            partitionIndex,
            brokerIds: [...brokerIds],
          })),
          configs: Object.entries(t.configs ?? {}).map(([name, value]) => ({ name, value })),
        })),
        timeoutMs: this.timeoutMs,
        validateOnly: options.validateOnly ?? false,
      }),
      (r) => r.topics.map((t) => t.errorCode),
    );
    return topics.map((t): CreateTopicResult => {
      const r = res.topics.find((x) => x.name === t.name);
      const error = topicResultError(t.name, r, `topic '${t.name}'`, false);
      if (error || !r) return { name: t.name, error };
      return {
        name: r.name,
        topicId: r.topicId,
        numPartitions: r.numPartitions,
        replicationFactor: r.replicationFactor,
        configs: (r.configs ?? []).map((c) => ({ name: c.name, value: c.value, source: c.configSource })),
      };
    });
  }

  async deleteTopics(names: readonly string[]): Promise<DeleteTopicResult[]> {
    const res = await this.cluster.sendToController(
      Apis.DeleteTopics,
      (version) => ({
        topics: version >= 6 ? names.map((name) => ({ name, topicId: ZERO_UUID })) : [],
        topicNames: version < 6 ? [...names] : [],
        timeoutMs: this.timeoutMs,
      }),
      (r) => r.responses.map((t) => t.errorCode),
    );
    return names.map((name): DeleteTopicResult => {
      const error = topicResultError(
        name,
        res.responses.find((x) => x.name === name),
        `topic '${name}'`,
        true,
      );
      return error ? { name, error } : { name };
    });
  }

  /** Every topic, sorted by name; internal topics (`__consumer_offsets`, …) only with listInternal. */
  async listTopics(options: { listInternal?: boolean } = {}): Promise<TopicListing[]> {
    const md = await this.cluster.refreshMetadata(null);
    return [...md.topics.values()]
      .filter((t) => t.errorCode === ErrorCode.NONE && (options.listInternal || !t.isInternal))
      .map((t) => ({ name: t.name, topicId: t.topicId, isInternal: t.isInternal }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Topic id, partitions with leader, replicas, isr and offline replicas; unknown topics get an error. */
  async describeTopics(names: readonly string[]): Promise<TopicDescription[]> {
    const md = names.length === 0 ? this.cluster.metadata : await this.cluster.refreshMetadata(names);
    return names.map((name): TopicDescription => {
      const t = md.topics.get(name);
      if (!t || t.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        return { name, topicId: ZERO_UUID, isInternal: false, partitions: [], error: unknownTopic(name) };
      if (t.errorCode !== ErrorCode.NONE && t.partitions.length === 0)
        return {
          name,
          topicId: t.topicId,
          isInternal: t.isInternal,
          partitions: [],
          error: err(t.errorCode, null, name),
        };
      return {
        name,
        topicId: t.topicId,
        isInternal: t.isInternal,
        partitions: t.partitions.map((p) => ({
          partition: p.partition,
          leader: p.leader,
          leaderEpoch: p.leaderEpoch,
          replicas: p.replicas,
          isr: p.isr,
          offlineReplicas: p.offlineReplicas,
          ...(p.errorCode !== ErrorCode.NONE ? { error: err(p.errorCode, null) } : {}),
        })),
      };
    });
  }

  async createPartitions(
    requests: readonly NewPartitions[],
    options: { validateOnly?: boolean } = {},
  ): Promise<CreatePartitionsResult[]> {
    const res = await this.cluster.sendToController(
      Apis.CreatePartitions,
      () => ({
        topics: requests.map((r) => ({
          name: r.topic,
          count: r.totalCount,
          assignments: r.assignments ? r.assignments.map((ids) => ({ brokerIds: [...ids] })) : null,
        })),
        timeoutMs: this.timeoutMs,
        validateOnly: options.validateOnly ?? false,
      }),
      (r) => r.results.map((t) => t.errorCode),
    );
    return requests.map((q): CreatePartitionsResult => {
      const r = res.results.find((x) => x.name === q.topic);
      const error = topicResultError(q.topic, r, `'${q.topic}'`, true);
      return error ? { topic: q.topic, error } : { topic: q.topic };
    });
  }

  // ---- configs -------------------------------------------------------------------------------------

  /** Configs of topics and brokers (broker "" = the cluster-wide default), with synonyms on request. */
  async describeConfigs(
    resources: readonly ConfigResource[],
    options: {
      includeSynonyms?: boolean;
      includeDocumentation?: boolean;
      configNames?: readonly string[];
    } = {},
  ): Promise<DescribeConfigsResult[]> {
    const answers = await this.toConfigBrokers("DescribeConfigs", resources, async (conn, group) => {
      const version = conn.versionFor(Apis.DescribeConfigs, { min: 1 });
      const res = await conn.send(Apis.DescribeConfigs, version, {
        resources: group.map((r) => ({
          resourceType: resourceTypeId(r.type),
          resourceName: r.name,
          configurationKeys: options.configNames ? [...options.configNames] : null,
        })),
        includeSynonyms: options.includeSynonyms ?? false,
        includeDocumentation: options.includeDocumentation ?? false,
      });
      return res.results;
    });
    return resources.map((r, i): DescribeConfigsResult => {
      const { answer: x, error } = answers[i];
      if (error || !x) return { resource: r, entries: [], error };
      return {
        resource: r,
        entries: x.configs.map((c) => ({
          name: c.name,
          value: c.value,
          source: c.configSource,
          isDefault: c.configSource === 5,
          isSensitive: c.isSensitive,
          isReadOnly: c.readOnly,
          synonyms: c.synonyms.map((s) => ({ name: s.name, value: s.value, source: s.source })),
          documentation: c.documentation,
        })),
      };
    });
  }

  /** IncrementalAlterConfigs: SET / DELETE / APPEND / SUBTRACT per config of each resource. */
  async incrementalAlterConfigs(
    changes: ReadonlyArray<{ resource: ConfigResource; ops: readonly AlterConfigOp[] }>,
    options: { validateOnly?: boolean } = {},
  ): Promise<AlterConfigsResult[]> {
    const byResource = new Map(changes.map((c) => [c.resource, c.ops]));
    const resources = changes.map((c) => c.resource);
    const answers = await this.toConfigBrokers("IncrementalAlterConfigs", resources, async (conn, group) => {
      const version = conn.versionFor(Apis.IncrementalAlterConfigs);
      const res = await conn.send(Apis.IncrementalAlterConfigs, version, {
        resources: group.map((r) => ({
          resourceType: resourceTypeId(r.type),
          resourceName: r.name,
          configs: (byResource.get(r) ?? []).map((o) => ({
            name: o.name,
            configOperation: AlterConfigOpType[o.op],
            value: o.op === "DELETE" ? null : (o.value ?? null),
          })),
        })),
        validateOnly: options.validateOnly ?? false,
      });
      return res.responses;
    });
    return resources.map((r, i): AlterConfigsResult => {
      const { error } = answers[i];
      return error ? { resource: r, error } : { resource: r };
    });
  }

  // ---- offsets and records ---------------------------------------------------------------------------

  /** ListOffsets to each partition's leader; isolationLevel 0 = read_uncommitted (default), 1 = read_committed. */
  async listOffsets(
    requests: ReadonlyArray<TopicPartitionRef & { spec: OffsetSpec }>,
    options: { isolationLevel?: 0 | 1 } = {},
  ): Promise<ListOffsetsResultInfo[]> {
    const minVersion = Math.max(1, ...requests.map((r) => minListOffsetsVersion(r.spec)));
    const done = await this.toLeaders("ListOffsets", requests, async (conn, batch) => {
      const version = conn.versionFor(Apis.ListOffsets, { min: minVersion });
      const res = await conn.send(Apis.ListOffsets, version, {
        replicaId: -1,
        isolationLevel: options.isolationLevel ?? 0,
        topics: groupByTopic(batch).map(([name, parts]) => ({
          name,
          partitions: parts.map((p) => ({
            partitionIndex: p.partition,
            currentLeaderEpoch: -1,
            timestamp: specTimestamp(p.spec),
            maxNumOffsets: 1,
          })),
        })),
        timeoutMs: this.timeoutMs,
      });
      return batch.map((p) => {
        const x = findPartition(res.topics, p);
        if (!x) return { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, result: undefined };
        return {
          errorCode: x.errorCode,
          result: {
            topic: p.topic,
            partition: p.partition,
            offset: version === 0 ? (x.oldStyleOffsets[0] ?? -1n) : x.offset,
            timestamp: x.timestamp,
            leaderEpoch: x.leaderEpoch,
          },
        };
      });
    });
    return leaderResults(
      requests,
      done,
      (r, error): ListOffsetsResultInfo => ({
        topic: r.topic,
        partition: r.partition,
        offset: -1n,
        timestamp: -1n,
        leaderEpoch: -1,
        error,
      }),
    );
  }

  /** DeleteRecords: moves each partition's log start offset to `offset` (-1 = the high watermark). */
  async deleteRecords(
    requests: ReadonlyArray<TopicPartitionRef & { offset: bigint }>,
  ): Promise<DeleteRecordsResultInfo[]> {
    const done = await this.toLeaders("DeleteRecords", requests, async (conn, batch) => {
      const version = conn.versionFor(Apis.DeleteRecords);
      const res = await conn.send(Apis.DeleteRecords, version, {
        topics: groupByTopic(batch).map(([name, parts]) => ({
          name,
          partitions: parts.map((p) => ({ partitionIndex: p.partition, offset: p.offset })),
        })),
        timeoutMs: this.timeoutMs,
      });
      return batch.map((p) => {
        const x = findPartition(res.topics, p);
        if (!x) return { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, result: undefined };
        return {
          errorCode: x.errorCode,
          result: { topic: p.topic, partition: p.partition, lowWatermark: x.lowWatermark },
        };
      });
    });
    return leaderResults(
      requests,
      done,
      (r, error): DeleteRecordsResultInfo => ({
        topic: r.topic,
        partition: r.partition,
        lowWatermark: -1n,
        error,
      }),
    );
  }

  // ---- brokers -------------------------------------------------------------------------------------

  /** DescribeLogDirs on each broker (all brokers by default), for all topics or the given ones. */
  async describeLogDirs(
    brokerIds?: readonly number[],
    topics?: ReadonlyArray<{ topic: string; partitions: readonly number[] }>,
  ): Promise<BrokerLogDirs[]> {
    if (this.cluster.metadata.brokers.size === 0 || brokerIds === undefined)
      await this.cluster.refreshMetadata(null);
    const ids = brokerIds ?? this.cluster.brokers().map((b) => b.nodeId);
    const out: BrokerLogDirs[] = [];
    for (const brokerId of ids) {
      try {
        const res = await this.cluster.withRetries(`DescribeLogDirs(${brokerId})`, async () => {
          const conn = await this.cluster.connectionTo(brokerId);
          const version = conn.versionFor(Apis.DescribeLogDirs);
          return conn.send(Apis.DescribeLogDirs, version, {
            topics: topics ? topics.map((t) => ({ topic: t.topic, partitions: [...t.partitions] })) : null,
          });
        });
        if (res.errorCode !== ErrorCode.NONE) {
          out.push({ brokerId, logDirs: [], error: err(res.errorCode, null, `broker ${brokerId}`) });
          continue;
        }
        out.push({
          brokerId,
          logDirs: res.results.map(
            (d): LogDirDescription => ({
              path: d.logDir,
              ...(d.errorCode !== ErrorCode.NONE ? { error: err(d.errorCode, null) } : {}),
              replicas: d.topics.flatMap((t) =>
                t.partitions.map((p) => ({
                  topic: t.name,
                  partition: p.partitionIndex,
                  size: p.partitionSize,
                  offsetLag: p.offsetLag,
                  isFuture: p.isFutureKey,
                })),
              ),
              totalBytes: d.totalBytes,
              usableBytes: d.usableBytes,
            }),
          ),
        });
      } catch (e) {
        if (!(e instanceof KafkaClientError)) throw e;
        out.push({ brokerId, logDirs: [], error: e });
      }
    }
    return out;
  }

  /** Cluster id, controller and brokers (DescribeCluster, or Metadata on a broker without it). */
  async describeCluster(): Promise<ClusterDescription> {
    return this.cluster.withRetries("DescribeCluster", async () => {
      const conn = await this.cluster.anyConnection();
      if (conn.brokerVersionRange(Apis.DescribeCluster.apiKey)) {
        const res = await conn.send(Apis.DescribeCluster, conn.versionFor(Apis.DescribeCluster), {
          includeClusterAuthorizedOperations: false,
          endpointType: 1,
        });
        if (res.errorCode !== ErrorCode.NONE) throw err(res.errorCode, res.errorMessage);
        return {
          clusterId: res.clusterId,
          controllerId: res.controllerId,
          brokers: res.brokers
            .map((b) => ({ id: b.brokerId, host: b.host, port: b.port, rack: b.rack }))
            .sort((a, b) => a.id - b.id),
        };
      }
      const md = await this.cluster.refreshMetadata([]);
      return {
        clusterId: md.clusterId ?? "",
        controllerId: md.controllerId,
        brokers: this.cluster
          .brokers()
          .map((b) => ({ id: b.nodeId, host: b.host, port: b.port, rack: b.rack })),
      };
    });
  }

  // ---- routing -------------------------------------------------------------------------------------

  /** Groups config resources by the broker that must answer them: a broker's own id, else any (-1). */
  private groupByConfigBroker(resources: readonly ConfigResource[]): Map<number, ConfigResource[]> {
    const groups = new Map<number, ConfigResource[]>();
    for (const r of resources) {
      const id = r.type !== "topic" && /^\d+$/.test(r.name) ? Number(r.name) : -1;
      const g = groups.get(id);
      if (g) g.push(r);
      else groups.set(id, [r]);
    }
    return groups;
  }

  private async configConnection(brokerId: number): Promise<BrokerConnection> {
    return brokerId < 0 ? this.cluster.anyConnection() : this.cluster.connectionTo(brokerId);
  }

  /**
   * Sends config requests to the brokers that must answer them (one request a broker, retried as a
   * whole) and finds each resource's entry in the answer: an error for a missing entry, an unknown
   * topic or an entry's error code. Results are in the order of `resources`.
   */
  private async toConfigBrokers<A extends ConfigAnswer>(
    what: string,
    resources: readonly ConfigResource[],
    send: (conn: BrokerConnection, group: ConfigResource[]) => Promise<readonly A[]>,
  ): Promise<Array<{ answer?: A; error?: KafkaClientError }>> {
    const results = new Map<ConfigResource, { answer?: A; error?: KafkaClientError }>();
    for (const [brokerId, group] of this.groupByConfigBroker(resources)) {
      const answers = await this.cluster.withRetries(what, async () =>
        send(await this.configConnection(brokerId), group),
      );
      for (const r of group) {
        const x = answers.find((y) => y.resourceType === resourceTypeId(r.type) && y.resourceName === r.name);
        if (!x) results.set(r, { error: KafkaClientError.of("UNKNOWN_SERVER_ERROR", "no result") });
        else if (x.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION && r.type === "topic")
          results.set(r, { error: unknownTopic(r.name) });
        else if (x.errorCode !== ErrorCode.NONE) results.set(r, { error: err(x.errorCode, x.errorMessage) });
        else results.set(r, { answer: x });
      }
    }
    return resources.map((r) => results.get(r)!);
  }

  /**
   * Routes partition requests to their leaders: unknown topics and partitions fail at once; a missing
   * leader or a retriable per-partition error (NOT_LEADER_OR_FOLLOWER, …) refreshes the metadata and
   * retries those partitions until default.api.timeout.ms.
   */
  private async toLeaders<Q extends TopicPartitionRef, R>(
    what: string,
    requests: readonly Q[],
    send: (
      conn: BrokerConnection,
      batch: Q[],
    ) => Promise<Array<{ errorCode: number; result: R | undefined }>>,
  ): Promise<Array<{ result?: R; error?: KafkaClientError }>> {
    const out: Array<{ result?: R; error?: KafkaClientError }> = requests.map(() => ({}));
    let pending = requests.map((_, i) => i);
    const topics = [...new Set(requests.map((r) => r.topic))];
    const deadline = this.cluster.time.milliseconds() + this.cluster.defaultApiTimeoutMs;
    // The last retriable error of each request (each partition's own: one without a leader must not be
    // reported for another).
    const lastErrors = new Map<number, KafkaClientError>();
    for (let round = 0; pending.length > 0; round++) {
      if (round > 0) {
        if (this.cluster.time.milliseconds() + this.cluster.retryBackoffMs >= deadline) break;
        await new Promise((r) => setTimeout(r, this.cluster.retryBackoffMs));
      }
      const md = await this.cluster.refreshMetadata(topics);
      const byLeader = new Map<number, number[]>();
      const retry: number[] = [];
      for (const i of pending) {
        const { topic, partition } = requests[i];
        const t = md.topics.get(topic);
        if (!t || t.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) {
          out[i].error = unknownTopic(topic);
          continue;
        }
        const p = t.partitions.find((x) => x.partition === partition);
        if (!p) {
          out[i].error = KafkaClientError.of(
            "UNKNOWN_TOPIC_OR_PARTITION",
            `Partition ${topic}-${partition} does not exist`,
          );
          continue;
        }
        if (p.leader < 0) {
          lastErrors.set(
            i,
            KafkaClientError.of("LEADER_NOT_AVAILABLE", `${topic}-${partition} has no leader`),
          );
          retry.push(i);
          continue;
        }
        const g = byLeader.get(p.leader);
        if (g) g.push(i);
        else byLeader.set(p.leader, [i]);
      }
      // A partition asked twice in one request is an INVALID_REQUEST: repeats go in later requests.
      const sends: Array<[number, number[]]> = [];
      for (const [leader, idx] of byLeader) {
        const rounds: Array<{ keys: Set<string>; idx: number[] }> = [];
        for (const i of idx) {
          const key = `${requests[i].topic}\u0000${requests[i].partition}`;
          let r = rounds.find((x) => !x.keys.has(key));
          if (!r) {
            r = { keys: new Set(), idx: [] };
            rounds.push(r);
          }
          r.keys.add(key);
          r.idx.push(i);
        }
        for (const r of rounds) sends.push([leader, r.idx]);
      }
      await Promise.all(
        sends.map(async ([leader, idx]) => {
          try {
            const conn = await this.cluster.connectionTo(leader);
            const answers = await send(
              conn,
              idx.map((i) => requests[i]),
            );
            answers.forEach((a, k) => {
              const i = idx[k];
              if (a.errorCode === ErrorCode.NONE) out[i].result = a.result;
              else {
                const e = err(a.errorCode, null);
                if (e.retriable) {
                  lastErrors.set(i, e);
                  retry.push(i);
                } else out[i].error = e;
              }
            });
          } catch (e) {
            if (!(e instanceof KafkaClientError)) throw e;
            if (e.retriable) {
              for (const i of idx) lastErrors.set(i, e);
              retry.push(...idx);
            } else for (const i of idx) out[i].error = e;
          }
        }),
      );
      pending = retry;
    }
    for (const i of pending)
      out[i].error =
        lastErrors.get(i) ??
        KafkaClientError.of(
          "REQUEST_TIMED_OUT",
          `${what}: gave up on ${requests[i].topic}-${requests[i].partition}`,
        );
    return out;
  }
}

/** Each request's result from toLeaders, or `failed` with its error. */
function leaderResults<Q, R>(
  requests: readonly Q[],
  done: ReadonlyArray<{ result?: R; error?: KafkaClientError }>,
  failed: (request: Q, error: KafkaClientError | undefined) => R,
): R[] {
  return requests.map((q, i) => done[i].result ?? failed(q, done[i].error));
}

/** The answer for one topic-partition in a response's `topics[].partitions[]`. */
function findPartition<P extends { partitionIndex: number }>(
  topics: ReadonlyArray<{ name: string; partitions: readonly P[] }>,
  tp: TopicPartitionRef,
): P | undefined {
  return topics.find((t) => t.name === tp.topic)?.partitions.find((q) => q.partitionIndex === tp.partition);
}

/** What a config response says of one resource. */
interface ConfigAnswer {
  resourceType: number;
  resourceName: string;
  errorCode: number;
  errorMessage: string | null;
}

/**
 * The error of one topic's entry in a controller's answer: none when it succeeded, UNKNOWN_SERVER_ERROR
 * when the answer has no entry for it, and (with `unknownTopicError`) the tool-facing unknown-topic
 * error for UNKNOWN_TOPIC_OR_PARTITION.
 */
function topicResultError(
  name: string,
  r: { errorCode: number; errorMessage: string | null } | undefined,
  what: string,
  unknownTopicError: boolean,
): KafkaClientError | undefined {
  if (!r) return KafkaClientError.of("UNKNOWN_SERVER_ERROR", `No result for ${what}`);
  if (unknownTopicError && r.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) return unknownTopic(name);
  if (r.errorCode !== ErrorCode.NONE) return err(r.errorCode, r.errorMessage);
  return undefined;
}

function groupByTopic<Q extends TopicPartitionRef>(batch: readonly Q[]): Array<[string, Q[]]> {
  const m = new Map<string, Q[]>();
  for (const q of batch) {
    const l = m.get(q.topic);
    if (l) l.push(q);
    else m.set(q.topic, [q]);
  }
  return [...m];
}
