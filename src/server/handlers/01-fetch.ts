// Fetch (API key 1), Kafka's KafkaApis.handleFetchRequest for v4–17: the fetch session (KIP-227) decides
// which partitions are read and which go back; the ReplicaManager reads them (long polling with
// max_wait_ms/min_bytes through the fetch purgatory, response max_bytes capped by fetch.max.bytes,
// partition_max_bytes, whole batches, at least one batch for the first partition with data), bounded by
// the isolation level (read_committed: up to the last stable offset, with aborted_transactions listing the
// aborted transactions that overlap the returned batches, from the .txnindex; null under read_uncommitted;
// control batches go to clients as they are, which skip them). v12+: a partition whose last_fetched_epoch
// shows the fetcher's log diverged from this leader's is answered with DivergingEpoch and no records, at
// once (diverging-epoch.ts), for followers and any other fetcher sending it. v13+ names topics by id
// (UNKNOWN_TOPIC_ID). Record bytes go back as views of what was read from the segments. Below v10 a
// partition holding zstd batches answers UNSUPPORTED_COMPRESSION_TYPE. The record bytes of each partition in
// the response are marked as BytesOutPerSec (consumers) or ReplicationBytesOutPerSec (followers).
// Replication throttling (leader side): a follower outside the ISR gets no records of a partition in
// leader.replication.throttled.replicas while the leader quota is exceeded (ReplicaManager), and the
// record bytes of throttled partitions sent to followers are recorded against that quota here.

import type { TopicPartition } from "../../common/topic-partition.js";
import { ErrorCode } from "../../protocol/errors.js";
import type { FetchRequest } from "../../protocol/generated/messages/FetchRequest.js";
import {
  defaultFetchableTopicResponse,
  defaultFetchResponse,
  defaultPartitionData,
  type FetchableTopicResponse,
  type FetchResponse,
} from "../../protocol/generated/messages/FetchResponse.js";
import {
  ATTRIBUTES_OFFSET,
  BATCH_LENGTH_OFFSET,
  COMPRESSION_CODEC_MASK,
  CompressionType,
  LOG_OVERHEAD,
  RECORD_BATCH_OVERHEAD,
} from "../../protocol/records/index.js";
import type { FetchIsolation } from "../../storage/unified-log.js";
import type { BrokerServices } from "../broker-services.js";
import type { Handler, HandlerRegistration } from "../handler.js";
import type { FetchPartitionData, FetchPartitionInfo } from "../replication/delayed-fetch.js";
import { answerFromLastFetchedEpoch } from "../replication/diverging-epoch.js";
import { type CachedPartition, ZERO_UUID } from "../replication/fetch-session.js";
import { DEFAULT_FETCH_MAX_BYTES } from "../replication/replica-manager.js";

/** The oldest Fetch version this broker accepts (clients that read magic 2). */
export const FETCH_MIN_VERSION = 4;
/** FetchRequest.CONSUMER_REPLICA_ID / DEBUGGING_REPLICA_ID. */
export const CONSUMER_REPLICA_ID = -1;
export const DEBUGGING_REPLICA_ID = -2;

/** Whether the (whole or partial) batches in `records` include a zstd one (header reads only). */
export function containsZstdBatch(records: Buffer): boolean {
  let pos = 0;
  while (pos + RECORD_BATCH_OVERHEAD <= records.length) {
    if ((records.readInt16BE(pos + ATTRIBUTES_OFFSET) & COMPRESSION_CODEC_MASK) === CompressionType.Zstd)
      return true;
    pos += LOG_OVERHEAD + records.readInt32BE(pos + BATCH_LENGTH_OFFSET);
  }
  return false;
}

export function fetchHandler(services: BrokerServices): HandlerRegistration {
  const handle: Handler<FetchRequest, FetchResponse> = async (ctx, request) => {
    const version = ctx.apiVersion;
    const rm = services.replicaManager;
    const fetchMaxBytes = rm.config.fetchMaxBytes ?? DEFAULT_FETCH_MAX_BYTES;
    const replicaId = version >= 15 ? request.replicaState.replicaId : request.replicaId;
    const isFromFollower = replicaId >= 0;
    const usesTopicIds = version >= 13;
    const isolation: FetchIsolation = isFromFollower
      ? "log-end"
      : request.isolationLevel === 1
        ? "committed"
        : "high-watermark";

    const requestPartitions = [];
    for (const t of request.topics) {
      for (const p of t.partitions) {
        requestPartitions.push({
          topic: usesTopicIds ? "" : t.topic,
          topicId: usesTopicIds ? t.topicId : ZERO_UUID,
          partition: p.partition,
          fetchOffset: p.fetchOffset,
          currentLeaderEpoch: p.currentLeaderEpoch,
          logStartOffset: p.logStartOffset,
          partitionMaxBytes: p.partitionMaxBytes,
          lastFetchedEpoch: p.lastFetchedEpoch,
        });
      }
    }
    const forgotten = request.forgottenTopicsData.map((f) => ({
      topic: usesTopicIds ? "" : f.topic,
      topicId: usesTopicIds ? f.topicId : ZERO_UUID,
      partitions: f.partitions,
    }));
    const context = rm.fetchSessionCache.newContext(
      {
        sessionId: request.sessionId,
        sessionEpoch: request.sessionEpoch,
        partitions: requestPartitions,
        forgotten,
      },
      usesTopicIds,
      isFromFollower,
      (id) => rm.topicNameFor(id),
    );
    const response = defaultFetchResponse();
    if (context.error !== undefined) {
      response.errorCode = ErrorCode[context.error];
      response.sessionId = 0;
      return response;
    }

    // Partitions with an unknown topic id are answered without a read, and so are those whose last fetched
    // epoch shows a diverged log (DivergingEpoch) or cannot be placed (OFFSET_OUT_OF_RANGE).
    const cached = context.partitions;
    const fetchOnlyFromLeader = replicaId !== DEBUGGING_REPLICA_ID;
    const toRead: FetchPartitionInfo[] = [];
    const readIndex: number[] = new Array(cached.length).fill(-1);
    const settled: Array<FetchPartitionData | undefined> = new Array(cached.length);
    let anySettled = false;
    for (let i = 0; i < cached.length; i++) {
      const c = cached[i];
      if (c.topic === "") continue;
      if (c.lastFetchedEpoch >= 0) {
        const topicPartition = { topic: c.topic, partition: c.partition };
        settled[i] = answerFromLastFetchedEpoch(
          rm.getPartition(topicPartition),
          { ...c, topicPartition },
          fetchOnlyFromLeader,
        );
        if (settled[i] !== undefined) {
          anySettled = true;
          continue;
        }
      }
      readIndex[i] = toRead.length;
      toRead.push({
        topicPartition: { topic: c.topic, partition: c.partition },
        fetchOffset: c.fetchOffset,
        currentLeaderEpoch: c.currentLeaderEpoch,
        logStartOffset: c.logStartOffset,
        partitionMaxBytes: c.partitionMaxBytes,
      });
    }
    const results = await rm.fetchMessages(
      {
        replicaId,
        // A diverging partition is answered at once (Kafka's fetchMessages: hasDivergingEpoch).
        maxWaitMs: anySettled ? 0 : request.maxWaitMs,
        minBytes: request.minBytes,
        // A consumer under a byte-rate quota gets at most what its quota window allows (Kafka's maxQuotaWindowBytes).
        maxBytes: Math.min(
          request.maxBytes,
          fetchMaxBytes,
          isFromFollower
            ? Number.MAX_SAFE_INTEGER
            : (services.clientQuotas?.maxFetchBytes(ctx) ?? Number.MAX_SAFE_INTEGER),
        ),
        isolation,
        fetchOnlyFromLeader,
        allocate: ctx.allocateResponseBuffer,
      },
      toRead,
    );
    const data: FetchPartitionData[] = cached.map(
      (c, i) =>
        settled[i] ??
        (readIndex[i] >= 0
          ? results[readIndex[i]]
          : unknownTopicId({ topic: c.topic, partition: c.partition })),
    );
    if (version < 10) {
      for (let i = 0; i < data.length; i++) {
        if (data[i].records.length > 0 && containsZstdBatch(data[i].records)) {
          data[i] = { ...errorData(data[i].topicPartition, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE) };
        }
      }
    }
    const { sessionId, include } = context.updateAndGenerateResponseData(
      data.map((d) => ({
        errorCode: d.errorCode,
        highWatermark: d.highWatermark,
        lastStableOffset: d.lastStableOffset,
        logStartOffset: d.logStartOffset,
        recordsSize: d.records.length,
        diverging: d.divergingEpoch !== undefined,
      })),
    );
    response.sessionId = sessionId;
    const leaderQuota = isFromFollower ? rm.leaderReplicationQuota : undefined;
    let throttledBytes = 0;
    const byTopic = new Map<string, FetchableTopicResponse>();
    for (const i of include) {
      const c: CachedPartition = cached[i];
      const d = data[i];
      const topicKey = usesTopicIds ? c.topicId : c.topic;
      let topic = byTopic.get(topicKey);
      if (topic === undefined) {
        topic = {
          ...defaultFetchableTopicResponse(),
          topic: c.topic,
          topicId: usesTopicIds ? c.topicId : ZERO_UUID,
          partitions: [],
        };
        byTopic.set(topicKey, topic);
        response.responses.push(topic);
      }
      const p = defaultPartitionData();
      p.partitionIndex = c.partition;
      p.errorCode = d.errorCode;
      p.highWatermark = d.highWatermark;
      p.lastStableOffset = d.lastStableOffset;
      p.logStartOffset = d.logStartOffset;
      // Kafka: null under read_uncommitted; under read_committed the aborted transactions overlapping the
      // returned batches (producer id, first offset), for the client to drop their records.
      p.abortedTransactions =
        isolation === "committed"
          ? (d.abortedTransactions ?? []).map((t) => ({
              producerId: t.producerId,
              firstOffset: t.firstOffset,
            }))
          : null;
      if (d.divergingEpoch !== undefined)
        p.divergingEpoch = { epoch: d.divergingEpoch.epoch, endOffset: d.divergingEpoch.endOffset };
      p.preferredReadReplica = d.preferredReadReplica;
      p.records = d.records;
      topic.partitions.push(p);
      // BytesOutPerSec (consumers) / ReplicationBytesOutPerSec (followers), as Kafka's updateBytesOut.
      if (c.topic !== "") rm.brokerTopicStats.updateBytesOut(c.topic, isFromFollower, d.records.length);
      if (leaderQuota?.isThrottled({ topic: c.topic, partition: c.partition }))
        throttledBytes += d.records.length;
    }
    // Kafka's KafkaApis: the bytes of throttled partitions sent to a follower count against the leader quota.
    if (throttledBytes > 0) leaderQuota!.record(throttledBytes);
    return response;
  };
  return { apiKey: 1, minVersion: FETCH_MIN_VERSION, handle };
}

function errorData(tp: TopicPartition, errorCode: number): FetchPartitionData {
  return {
    topicPartition: tp,
    errorCode,
    highWatermark: -1n,
    lastStableOffset: -1n,
    logStartOffset: -1n,
    records: Buffer.alloc(0),
    preferredReadReplica: -1,
  };
}

function unknownTopicId(tp: TopicPartition): FetchPartitionData {
  return errorData(tp, ErrorCode.UNKNOWN_TOPIC_ID);
}
