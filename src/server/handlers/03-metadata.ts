// Metadata (API key 3), every version 0–12, Kafka's KafkaApis.handleTopicMetadataRequest on a ZooKeeper-
// mode broker: alive brokers with their endpoint on the listener the request came in on, cluster id,
// controller id, and per topic its id, partitions, leader, leader epoch, replicas, ISR and offline
// replicas. topics = null (or an empty list at v0) means every topic. A missing topic is auto-created
// when auto.create.topics.enable and the request's allow_auto_topic_creation (v4+; always before) allow it,
// and answered LEADER_NOT_AVAILABLE as Kafka does; otherwise UNKNOWN_TOPIC_OR_PARTITION. Illegal names
// get INVALID_TOPIC_EXCEPTION; topic ids (v10+) are looked up (UNKNOWN_TOPIC_ID). Authorized operations
// are not computed (-2147483648). A partition whose replica on this broker is offline (its log failed:
// KAFKA_STORAGE_ERROR) lists this broker in offline_replicas, and when this broker was its leader, answers
// LEADER_NOT_AVAILABLE with leader -1, as Kafka's controller leaves a partition with no live replica.

import { CLUSTER_NAME } from "../../common/acl-binding.js";
import { ErrorCode } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import type { MetadataRequest } from "../../protocol/generated/messages/MetadataRequest.js";
import {
  defaultMetadataResponse,
  defaultMetadataResponsePartition,
  defaultMetadataResponseTopic,
  type MetadataResponse,
  type MetadataResponseBroker,
  type MetadataResponsePartition,
  type MetadataResponseTopic,
} from "../../protocol/generated/messages/MetadataResponse.js";
import { Operation, ResourceType } from "../auth-helper.js";
import { authorizedOperations } from "../authorized-operations.js";
import type { BrokerServices } from "../broker-services.js";
import type { HandlerRegistration } from "../handler.js";
import { isInternalTopic } from "../metadata/internal-topics.js";
import type { MetadataCache } from "../metadata/metadata-cache.js";
import { isValidTopicName } from "../metadata/topic-validation.js";
import { ZERO_UUID } from "../metadata/zk-data.js";
import type { RequestContext } from "../request-context.js";

/** The alive brokers as seen on `listenerName` (brokers without that listener are left out). */
export function brokersOnListener(cache: MetadataCache, listenerName: string): MetadataResponseBroker[] {
  const out: MetadataResponseBroker[] = [];
  for (const b of cache.aliveBrokers()) {
    const e = b.endpoints.find((x) => x.listenerName === listenerName);
    if (e) out.push({ nodeId: b.id, host: e.host, port: e.port, rack: b.rack });
  }
  return out;
}

/** Whether this broker's replica of the partition is offline (its log failed). */
type OfflineLocal = (topic: string, partition: number) => boolean;

function topicResponseOf(
  cache: MetadataCache,
  name: string,
  listenerName: string,
  version: number,
  offlineLocal: OfflineLocal = () => false,
  localBrokerId = -1,
): MetadataResponseTopic {
  const topicId = cache.topicId(name) ?? ZERO_UUID;
  const states = cache.partitionStates(name);
  const base = { ...defaultMetadataResponseTopic(), name, topicId, isInternal: isInternalTopic(name) };
  if (states.length === 0) return { ...base, errorCode: ErrorCode.LEADER_NOT_AVAILABLE };
  const partitions: MetadataResponsePartition[] = states.map((s) => {
    const localOffline = offlineLocal(name, s.partition);
    const offline = s.replicas.filter(
      (r) => !cache.isBrokerAlive(r) || (localOffline && r === localBrokerId),
    );
    const p: MetadataResponsePartition = {
      ...defaultMetadataResponsePartition(),
      partitionIndex: s.partition,
      leaderId: s.leader,
      leaderEpoch: version >= 7 ? s.leaderEpoch : -1,
      replicaNodes: [...s.replicas],
      isrNodes: [...s.isr],
      offlineReplicas: version >= 5 ? offline : [],
    };
    if (s.leader < 0 || !cache.isBrokerAlive(s.leader) || (localOffline && s.leader === localBrokerId)) {
      return { ...p, errorCode: ErrorCode.LEADER_NOT_AVAILABLE, leaderId: -1 };
    }
    if (!cache.endpointFor(s.leader, listenerName)) {
      return { ...p, errorCode: ErrorCode.LISTENER_NOT_FOUND, leaderId: -1 };
    }
    if (version === 0 && offline.length > 0) {
      // v0 clients get only available replicas, flagged REPLICA_NOT_AVAILABLE (Kafka's errorUnavailableEndpoints).
      return {
        ...p,
        errorCode: ErrorCode.REPLICA_NOT_AVAILABLE,
        replicaNodes: s.replicas.filter((r) => cache.isBrokerAlive(r)),
        isrNodes: s.isr.filter((r) => cache.isBrokerAlive(r)),
      };
    }
    return p;
  });
  return { ...base, partitions };
}

export function metadataHandler(services: BrokerServices): HandlerRegistration {
  const cache = services.metadata;
  // (Handler tests build services without the storage side: nothing is offline there.)
  const replicaManager = services.replicaManager as BrokerServices["replicaManager"] | undefined;
  const offlineLocal: OfflineLocal = (topic, partition) =>
    replicaManager?.getPartition({ topic, partition })?.isOffline ?? false;
  const topicResponse = (c: MetadataCache, name: string, listener: string, version: number) =>
    topicResponseOf(c, name, listener, version, offlineLocal, services.brokerId);
  return {
    apiKey: ApiKey.Metadata,
    minVersion: 0,
    maxVersion: 12,
    handle: async (ctx: RequestContext, request: MetadataRequest): Promise<MetadataResponse> => {
      const version = ctx.apiVersion;
      const listener = ctx.listenerName;
      const all = request.topics === null || (version === 0 && request.topics.length === 0);
      const topics: MetadataResponseTopic[] = [];
      // Authorization (KafkaApis): DESCRIBE on a topic to see it — all topics: the others are left out;
      // topics asked for: TOPIC_AUTHORIZATION_FAILED; auto-creating one needs CREATE (cluster or topic).
      const auth = services.auth;
      const unauthorized = (name: string | null, topicId = ZERO_UUID): MetadataResponseTopic => ({
        ...defaultMetadataResponseTopic(),
        errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        name,
        topicId,
      });
      let clusterCreate: boolean | undefined;
      const mayCreate = (name: string): boolean => {
        clusterCreate ??= auth.authorizeCluster(ctx, Operation.CREATE, false);
        return clusterCreate || auth.authorize(ctx, Operation.CREATE, ResourceType.TOPIC, name);
      };
      if (all) {
        for (const name of cache.topicNames())
          if (auth.authorize(ctx, Operation.DESCRIBE, ResourceType.TOPIC, name, false))
            topics.push(topicResponse(cache, name, listener, version));
      } else {
        const allowAuto =
          (version < 4 || request.allowAutoTopicCreation) && services.topicAdmin.autoCreateTopicsEnable;
        const toCreate: string[] = [];
        const slots: Array<MetadataResponseTopic | string> = [];
        for (const t of request.topics ?? []) {
          const byId = version >= 10 && (t.name === null || t.name === "");
          if (byId) {
            const name = t.topicId === ZERO_UUID ? undefined : cache.topicName(t.topicId);
            if (name === undefined) {
              slots.push({
                ...defaultMetadataResponseTopic(),
                errorCode: ErrorCode.UNKNOWN_TOPIC_ID,
                name: null,
                topicId: t.topicId,
              });
            } else if (!auth.authorize(ctx, Operation.DESCRIBE, ResourceType.TOPIC, name))
              slots.push(unauthorized(null, t.topicId));
            else slots.push(topicResponse(cache, name, listener, version));
            continue;
          }
          const name = t.name ?? "";
          if (!auth.authorize(ctx, Operation.DESCRIBE, ResourceType.TOPIC, name)) {
            slots.push(unauthorized(name));
          } else if (!isValidTopicName(name)) {
            slots.push({
              ...defaultMetadataResponseTopic(),
              errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION,
              name,
            });
          } else if (cache.hasTopic(name)) {
            slots.push(topicResponse(cache, name, listener, version));
          } else if (allowAuto && !mayCreate(name)) {
            slots.push(unauthorized(name));
          } else if (allowAuto) {
            toCreate.push(name);
            slots.push(name);
          } else {
            slots.push({
              ...defaultMetadataResponseTopic(),
              errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
              name,
            });
          }
        }
        const created =
          toCreate.length > 0 ? await services.topicAdmin.autoCreateTopics(toCreate) : new Map();
        for (const s of slots) {
          if (typeof s !== "string") {
            topics.push(s);
            continue;
          }
          const error = created.get(s) ?? null;
          topics.push({
            ...defaultMetadataResponseTopic(),
            name: s,
            errorCode: error ? error.code : ErrorCode.LEADER_NOT_AVAILABLE,
            isInternal: isInternalTopic(s),
          });
        }
      }
      // Authorized operations (KIP-430): the topics' from v8, the cluster's in v8–10 (when asked).
      const includeTopicOps = version >= 8 && request.includeTopicAuthorizedOperations;
      const topicOps = (t: MetadataResponseTopic): number =>
        t.errorCode === ErrorCode.TOPIC_AUTHORIZATION_FAILED
          ? authorizedOperations("topic", false)
          : auth.authorizedOperations(ctx, "topic", t.name ?? "", includeTopicOps);
      return {
        ...defaultMetadataResponse(),
        brokers: brokersOnListener(cache, listener),
        clusterId: cache.clusterId,
        controllerId: cache.controllerId,
        topics: topics.map((t) => ({ ...t, topicAuthorizedOperations: topicOps(t) })),
        clusterAuthorizedOperations: auth.authorizedOperations(
          ctx,
          "cluster",
          CLUSTER_NAME,
          version >= 8 && version <= 10 && request.includeClusterAuthorizedOperations,
        ),
      };
    },
  };
}
