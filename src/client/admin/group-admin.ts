// GroupAdmin: the consumer-group half of Kafka's Admin API (listGroups, describeConsumerGroups,
// listConsumerGroupOffsets, alterConsumerGroupOffsets, deleteConsumerGroups, deleteConsumerGroupOffsets)
// over a ClusterClient. ListGroups goes to every broker; everything else to the group's coordinator
// (FindCoordinator), retrying COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE and
// NOT_COORDINATOR (and other retriable errors) with retry.backoff.ms until the timeout. Member
// assignments and subscriptions are decoded with the ConsumerProtocol codecs (int16 version + struct).
//
// Usage:
//   const groups = new GroupAdmin(admin.cluster, { timeoutMs: 5000 });
//   const [g] = await groups.describeGroups(["my-group"]);
//   const offsets = await groups.listConsumerGroupOffsets("my-group");   // Map "topic\0partition" → offset

import { ApiKey, Apis } from "../../protocol/generated/api-table.js";
import { ErrorCode } from "../../protocol/generated/errors.js";
import {
  ConsumerProtocolAssignmentVersions,
  readConsumerProtocolAssignment,
} from "../../protocol/generated/messages/ConsumerProtocolAssignment.js";
import {
  ConsumerProtocolSubscriptionVersions,
  readConsumerProtocolSubscription,
} from "../../protocol/generated/messages/ConsumerProtocolSubscription.js";
import { Reader } from "../../protocol/primitives/reader.js";
import { KafkaClientError } from "../errors.js";
import type { BrokerNode, ClusterClient } from "../network/cluster-client.js";
import { groupPartitionsByTopic, type TopicPartitionRef } from "./admin-types.js";

export interface GroupListing {
  readonly groupId: string;
  readonly protocolType: string;
  /** The group state (ListGroups v4+), "" when the broker does not say. */
  readonly state: string;
  /** The group type, "classic" or "consumer" (ListGroups v5+), "" when the broker does not say. */
  readonly type: string;
}

export interface GroupMemberDescription {
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly clientId: string;
  readonly host: string;
  /** The member's partitions (empty unless the group is Stable). */
  readonly assignment: readonly TopicPartitionRef[];
  /** Subscribed topics, when the member metadata is a consumer subscription. */
  readonly subscription: readonly string[];
}

export interface GroupDescription {
  readonly groupId: string;
  /** Kafka's state names: Empty, PreparingRebalance, CompletingRebalance, Stable, Dead. */
  readonly state: string;
  readonly protocolType: string;
  /** The chosen protocol: the partition assignor of a consumer group ("range", …), or "". */
  readonly partitionAssignor: string;
  readonly members: readonly GroupMemberDescription[];
  readonly coordinator: BrokerNode;
  readonly error?: KafkaClientError;
}

export interface CommittedOffset {
  readonly offset: bigint;
  /** -1 when unknown. */
  readonly leaderEpoch: number;
  readonly metadata: string;
}

export interface PartitionResult extends TopicPartitionRef {
  readonly error?: KafkaClientError;
}

export interface DeleteOffsetsResult {
  /** The group-level error (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP, …). */
  readonly error?: KafkaClientError;
  readonly partitions: readonly PartitionResult[];
}

/** "topic\0partition", the key of the offset maps. */
export function tpKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

export function parseTpKey(key: string): TopicPartitionRef {
  const i = key.lastIndexOf("\u0000");
  return { topic: key.slice(0, i), partition: Number(key.slice(i + 1)) };
}

/** ConsumerProtocol.deserializeAssignment: int16 version (newer versions read as the newest known). */
export function decodeAssignment(buf: Buffer): TopicPartitionRef[] {
  if (buf.length === 0) return [];
  const r = new Reader(buf);
  const version = r.int16();
  if (version < 0) throw KafkaClientError.of("INVALID_REQUEST", `Unsupported assignment version ${version}`);
  const a = readConsumerProtocolAssignment(r, Math.min(version, ConsumerProtocolAssignmentVersions.max));
  return a.assignedPartitions.flatMap((t) =>
    t.partitions.map((partition) => ({ topic: t.topic, partition })),
  );
}

/** ConsumerProtocol.deserializeSubscription: the subscribed topics. */
export function decodeSubscription(buf: Buffer): string[] {
  if (buf.length === 0) return [];
  const r = new Reader(buf);
  const version = r.int16();
  if (version < 0)
    throw KafkaClientError.of("INVALID_REQUEST", `Unsupported subscription version ${version}`);
  return readConsumerProtocolSubscription(r, Math.min(version, ConsumerProtocolSubscriptionVersions.max))
    .topics;
}

function groupError(code: number, groupId: string): KafkaClientError {
  if (code === ErrorCode.GROUP_ID_NOT_FOUND)
    return KafkaClientError.of("GROUP_ID_NOT_FOUND", `Group ${groupId} not found.`);
  return new KafkaClientError(code);
}

export class GroupAdmin {
  readonly timeoutMs: number;

  constructor(
    readonly cluster: ClusterClient,
    options: { timeoutMs?: number } = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? cluster.defaultApiTimeoutMs;
  }

  /**
   * ListGroups on every broker, sorted by group id. A states filter needs ListGroups v4, a types filter
   * ("classic", "consumer", "share") v5.
   */
  async listGroups(
    options: { states?: readonly string[]; types?: readonly string[] } = {},
  ): Promise<GroupListing[]> {
    const md = await this.cluster.withRetries(
      "Metadata",
      () => this.cluster.refreshMetadata(),
      this.timeoutMs,
    );
    const nodes = [...md.brokers.keys()].sort((a, b) => a - b);
    const states = options.states ?? [];
    const types = options.types ?? [];
    const perBroker = await Promise.all(
      nodes.map((id) =>
        this.cluster.withRetries(
          `ListGroups(broker ${id})`,
          async () => {
            const conn = await this.cluster.connectionTo(id);
            const min = types.length > 0 ? 5 : states.length > 0 ? 4 : 0;
            const version = conn.versionFor(Apis.ListGroups, { min });
            const res = await conn.send(Apis.ListGroups, version, {
              statesFilter: [...states],
              typesFilter: [...types],
            });
            if (res.errorCode !== ErrorCode.NONE) throw new KafkaClientError(res.errorCode);
            return res.groups.map(
              (g): GroupListing => ({
                groupId: g.groupId,
                protocolType: g.protocolType,
                state: version >= 4 ? g.groupState : "",
                type: version >= 5 ? g.groupType : "",
              }),
            );
          },
          this.timeoutMs,
        ),
      ),
    );
    const seen = new Map<string, GroupListing>();
    for (const list of perBroker) for (const g of list) seen.set(g.groupId, g);
    return [...seen.values()].sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0));
  }

  /** DescribeGroups at each group's coordinator; a group-level error is returned in `error`. */
  async describeGroups(groupIds: readonly string[]): Promise<GroupDescription[]> {
    return Promise.all(
      groupIds.map(async (groupId): Promise<GroupDescription> => {
        let coordinator: BrokerNode = { nodeId: -1, host: "", port: -1, rack: null };
        try {
          return await this.atCoordinator(groupId, "DescribeGroups", async (conn, node) => {
            coordinator = node;
            // As Kafka's admin client: ConsumerGroupDescribe first (KIP-848 groups), DescribeGroups when the
            // broker lacks it or the group is a classic one (GROUP_ID_NOT_FOUND).
            if (conn.brokerVersionRange(ApiKey.ConsumerGroupDescribe) !== undefined) {
              const res = await conn.send(
                Apis.ConsumerGroupDescribe,
                conn.versionFor(Apis.ConsumerGroupDescribe),
                {
                  groupIds: [groupId],
                  includeAuthorizedOperations: false,
                },
              );
              const g = res.groups.find((x) => x.groupId === groupId);
              if (g && g.errorCode !== ErrorCode.GROUP_ID_NOT_FOUND) {
                if (g.errorCode !== ErrorCode.NONE) throw groupError(g.errorCode, groupId);
                return {
                  groupId,
                  state: g.groupState,
                  protocolType: "consumer",
                  partitionAssignor: g.assignorName,
                  coordinator: node,
                  members: g.members.map((m) => ({
                    memberId: m.memberId,
                    groupInstanceId: m.instanceId,
                    clientId: m.clientId,
                    host: m.clientHost,
                    assignment: m.assignment.topicPartitions.flatMap((t) =>
                      t.partitions.map((partition) => ({ topic: t.topicName, partition })),
                    ),
                    subscription: m.subscribedTopicNames,
                  })),
                };
              }
            }
            const version = conn.versionFor(Apis.DescribeGroups);
            const res = await conn.send(Apis.DescribeGroups, version, {
              groups: [groupId],
              includeAuthorizedOperations: false,
            });
            const g = res.groups.find((x) => x.groupId === groupId);
            if (!g) throw KafkaClientError.of("UNKNOWN_SERVER_ERROR", `No description of group ${groupId}`);
            if (g.errorCode !== ErrorCode.NONE) throw groupError(g.errorCode, groupId);
            const consumer = g.protocolType === "consumer";
            return {
              groupId,
              state: g.groupState,
              protocolType: g.protocolType,
              partitionAssignor: g.protocolData,
              coordinator: node,
              members: g.members.map((m) => ({
                memberId: m.memberId,
                groupInstanceId: m.groupInstanceId,
                clientId: m.clientId,
                host: m.clientHost,
                assignment: consumer ? decodeAssignment(m.memberAssignment) : [],
                subscription: consumer ? decodeSubscription(m.memberMetadata) : [],
              })),
            };
          });
        } catch (e) {
          if (!(e instanceof KafkaClientError)) throw e;
          return {
            groupId,
            state: "Unknown",
            protocolType: "",
            partitionAssignor: "",
            members: [],
            coordinator,
            error: e,
          };
        }
      }),
    );
  }

  /**
   * OffsetFetch: the group's committed offsets by tpKey (all partitions when `partitions` is omitted);
   * partitions without a committed offset are left out. Throws the group-level error.
   */
  async listConsumerGroupOffsets(
    groupId: string,
    partitions?: readonly TopicPartitionRef[],
  ): Promise<Map<string, CommittedOffset>> {
    return this.atCoordinator(groupId, "OffsetFetch", async (conn) => {
      const version = conn.versionFor(Apis.OffsetFetch, { min: partitions ? 1 : 2 });
      const topics = partitions
        ? [...groupPartitionsByTopic(partitions)].map(([name, partitionIndexes]) => ({
            name,
            partitionIndexes,
          }))
        : null;
      const res = await conn.send(Apis.OffsetFetch, version, {
        groupId: version < 8 ? groupId : "",
        topics: version < 8 ? topics : [],
        groups: version >= 8 ? [{ groupId, memberId: null, memberEpoch: -1, topics }] : [],
        requireStable: false,
      });
      let errorCode = res.errorCode;
      let answered = res.topics;
      if (version >= 8) {
        const g = res.groups.find((x) => x.groupId === groupId);
        if (!g) throw KafkaClientError.of("UNKNOWN_SERVER_ERROR", `No offsets of group ${groupId}`);
        errorCode = g.errorCode;
        answered = g.topics;
      }
      if (errorCode !== ErrorCode.NONE) throw groupError(errorCode, groupId);
      const out = new Map<string, CommittedOffset>();
      for (const t of answered)
        for (const p of t.partitions) {
          if (p.errorCode !== ErrorCode.NONE) {
            const e = new KafkaClientError(p.errorCode);
            if (e.retriable) throw e;
            continue;
          }
          if (p.committedOffset < 0n) continue;
          out.set(tpKey(t.name, p.partitionIndex), {
            offset: p.committedOffset,
            leaderEpoch: p.committedLeaderEpoch,
            metadata: p.metadata ?? "",
          });
        }
      return out;
    });
  }

  /**
   * OffsetCommit as an admin (generation -1, no member id): accepted by the coordinator only for an
   * Empty (or unknown) group. Per-partition errors come back in the results; coordinator errors retry.
   */
  async alterConsumerGroupOffsets(
    groupId: string,
    offsets: ReadonlyArray<TopicPartitionRef & { offset: bigint; metadata?: string }>,
  ): Promise<PartitionResult[]> {
    return this.atCoordinator(groupId, "OffsetCommit", async (conn) => {
      const version = conn.versionFor(Apis.OffsetCommit, { min: 2 });
      const topics = new Map<string, Array<{ partition: number; offset: bigint; metadata: string }>>();
      for (const o of offsets) {
        const l = topics.get(o.topic) ?? [];
        l.push({ partition: o.partition, offset: o.offset, metadata: o.metadata ?? "" });
        topics.set(o.topic, l);
      }
      const res = await conn.send(Apis.OffsetCommit, version, {
        groupId,
        generationIdOrMemberEpoch: -1,
        memberId: "",
        groupInstanceId: null,
        retentionTimeMs: -1n,
        topics: [...topics].map(([name, parts]) => ({
          name,
          partitions: parts.map((p) => ({
            partitionIndex: p.partition,
            committedOffset: p.offset,
            committedLeaderEpoch: -1,
            commitTimestamp: -1n,
            committedMetadata: p.metadata,
          })),
        })),
      });
      const results: PartitionResult[] = [];
      for (const t of res.topics)
        for (const p of t.partitions) {
          if (p.errorCode === ErrorCode.NONE) {
            results.push({ topic: t.name, partition: p.partitionIndex });
            continue;
          }
          const e = new KafkaClientError(p.errorCode);
          // Coordinator moves and loads affect the whole request: retry it.
          if (
            p.errorCode === ErrorCode.NOT_COORDINATOR ||
            p.errorCode === ErrorCode.COORDINATOR_NOT_AVAILABLE ||
            p.errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
          )
            throw e;
          results.push({ topic: t.name, partition: p.partitionIndex, error: e });
        }
      return results;
    });
  }

  /** DeleteGroups at each group's coordinator: one result per group (error when not deleted). */
  async deleteGroups(
    groupIds: readonly string[],
  ): Promise<Array<{ groupId: string; error?: KafkaClientError }>> {
    return Promise.all(
      groupIds.map(async (groupId) => {
        try {
          await this.atCoordinator(groupId, "DeleteGroups", async (conn) => {
            const version = conn.versionFor(Apis.DeleteGroups);
            const res = await conn.send(Apis.DeleteGroups, version, { groupsNames: [groupId] });
            const r = res.results.find((x) => x.groupId === groupId);
            if (!r) throw KafkaClientError.of("UNKNOWN_SERVER_ERROR", `No result for group ${groupId}`);
            if (r.errorCode !== ErrorCode.NONE) throw new KafkaClientError(r.errorCode);
          });
          return { groupId };
        } catch (e) {
          if (!(e instanceof KafkaClientError)) throw e;
          return { groupId, error: e };
        }
      }),
    );
  }

  /** OffsetDelete: removes committed offsets of partitions the group is not subscribed to. */
  async deleteConsumerGroupOffsets(
    groupId: string,
    partitions: readonly TopicPartitionRef[],
  ): Promise<DeleteOffsetsResult> {
    try {
      return await this.atCoordinator(groupId, "OffsetDelete", async (conn) => {
        const version = conn.versionFor(Apis.OffsetDelete);
        const res = await conn.send(Apis.OffsetDelete, version, {
          groupId,
          topics: [...groupPartitionsByTopic(partitions)].map(([name, ps]) => ({
            name,
            partitions: ps.map((partitionIndex) => ({ partitionIndex })),
          })),
        });
        if (res.errorCode !== ErrorCode.NONE) throw new KafkaClientError(res.errorCode);
        const out: PartitionResult[] = [];
        for (const t of res.topics)
          for (const p of t.partitions)
            out.push(
              p.errorCode === ErrorCode.NONE
                ? { topic: t.name, partition: p.partitionIndex }
                : { topic: t.name, partition: p.partitionIndex, error: new KafkaClientError(p.errorCode) },
            );
        return { partitions: out };
      });
    } catch (e) {
      if (!(e instanceof KafkaClientError) || e.retriable) throw e;
      return { error: e, partitions: partitions.map((p) => ({ ...p, error: e })) };
    }
  }

  /**
   * Runs `fn` against the group's coordinator, finding it again after every retriable failure
   * (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS, lost connections).
   */
  private atCoordinator<T>(
    groupId: string,
    what: string,
    fn: (conn: Awaited<ReturnType<ClusterClient["connectionTo"]>>, node: BrokerNode) => Promise<T>,
  ): Promise<T> {
    return this.cluster.withRetries(
      `${what}(${groupId})`,
      async () => {
        const node = await this.cluster.findCoordinator(groupId, "group");
        const conn = await this.cluster.connectionTo(node.nodeId);
        return fn(conn, node);
      },
      this.timeoutMs,
    );
  }
}
