// AlterReplicaLogDirs (API key 34, KIP-113), versions 0–2, Kafka's KafkaApis.handleAlterReplicaLogDirsRequest:
// moves replicas of this broker to the given log dirs (ReplicaManager.alterReplicaLogDirs: the future log,
// the copy, the swap). One result per partition asked, grouped by topic: NONE once the move started (or
// when the replica is already there), LOG_DIR_NOT_FOUND for a path not in log.dirs, KAFKA_STORAGE_ERROR
// for an offline dir or replica, REPLICA_NOT_AVAILABLE for a replica not yet on this broker (the dir is
// remembered for when it is created: an admin retries until it answers NONE), UNKNOWN_TOPIC_OR_PARTITION
// for a partition the cluster does not have. A partition named twice keeps the last dir, as Kafka's map.

import type { TopicPartition } from "../../common/topic-partition.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import type { AlterReplicaLogDirsRequest } from "../../protocol/generated/messages/AlterReplicaLogDirsRequest.js";
import type {
  AlterReplicaLogDirsResponse,
  AlterReplicaLogDirTopicResult,
} from "../../protocol/generated/messages/AlterReplicaLogDirsResponse.js";
import type { BrokerServices } from "../broker-services.js";
import type { Handler, HandlerRegistration } from "../handler.js";

function byTopic(
  results: ReadonlyArray<{ topicPartition: TopicPartition; errorCode: number }>,
): AlterReplicaLogDirTopicResult[] {
  const topics = new Map<string, AlterReplicaLogDirTopicResult>();
  for (const r of results) {
    let t = topics.get(r.topicPartition.topic);
    if (t === undefined) {
      t = { topicName: r.topicPartition.topic, partitions: [] };
      topics.set(r.topicPartition.topic, t);
    }
    t.partitions.push({ partitionIndex: r.topicPartition.partition, errorCode: r.errorCode });
  }
  return [...topics.values()];
}

/** Every partition of the request with its dir (the last one when a partition is named twice). */
function requestedDirs(
  request: AlterReplicaLogDirsRequest,
): Map<string, { tp: TopicPartition; dir: string }> {
  const out = new Map<string, { tp: TopicPartition; dir: string }>();
  for (const d of request.dirs)
    for (const t of d.topics)
      for (const partition of t.partitions)
        out.set(`${t.name}-${partition}`, { tp: { topic: t.name, partition }, dir: d.path });
  return out;
}

export function alterReplicaLogDirsHandler(services: BrokerServices): HandlerRegistration {
  const handle: Handler<AlterReplicaLogDirsRequest, AlterReplicaLogDirsResponse> = async (_ctx, request) => {
    const asked = [...requestedDirs(request).values()];
    const results = services.replicaManager.alterReplicaLogDirs(
      asked.map(({ tp, dir }) => ({ topicPartition: tp, dir })),
      (tp) => {
        const n = services.metadata.numPartitions(tp.topic);
        return n !== undefined && tp.partition >= 0 && tp.partition < n;
      },
    );
    return { throttleTimeMs: 0, results: byTopic(results) };
  };
  return {
    apiKey: ApiKey.AlterReplicaLogDirs,
    handle,
    errorResponse: (request: AlterReplicaLogDirsRequest, _version: number, errorCode: number) => ({
      throttleTimeMs: 0,
      results: byTopic(
        [...requestedDirs(request).values()].map(({ tp }) => ({ topicPartition: tp, errorCode })),
      ),
    }),
  };
}
