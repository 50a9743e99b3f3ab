// DescribeLogDirs (API key 35), Kafka's KafkaApis.handleDescribeLogDirsRequest: for each log dir, the
// partitions it holds (all, or those asked for) with their size in bytes, offset lag and is_future: a future
// replica (a replica being moved into this dir by AlterReplicaLogDirs) is listed with is_future true and
// offset_lag how far its end is behind the current replica's (Kafka's getLogEndOffsetLag; a current
// replica's lag is its distance to the high watermark, 0); v4+ also the dir's total and usable bytes
// (statfs). An unreadable dir, or one the LogManager took offline, answers KAFKA_STORAGE_ERROR; offline
// partitions are not listed (Kafka lists only online logs). A full dir (out of space: writes refused,
// reads served) answers KAFKA_STORAGE_ERROR too, with its sizes and partitions still listed.

import { statfsSync } from "node:fs";
import { ErrorCode } from "../../protocol/errors.js";
import type { DescribeLogDirsRequest } from "../../protocol/generated/messages/DescribeLogDirsRequest.js";
import {
  type DescribeLogDirsResponse,
  type DescribeLogDirsTopic,
  defaultDescribeLogDirsPartition,
  defaultDescribeLogDirsResponse,
  defaultDescribeLogDirsResult,
  defaultDescribeLogDirsTopic,
} from "../../protocol/generated/messages/DescribeLogDirsResponse.js";
import type { BrokerServices } from "../broker-services.js";
import type { Handler, HandlerRegistration } from "../handler.js";

export function describeLogDirsHandler(services: BrokerServices): HandlerRegistration {
  const handle: Handler<DescribeLogDirsRequest, DescribeLogDirsResponse> = async (ctx, request) => {
    const lm = services.logManager;
    let wanted: Set<string> | undefined;
    if (request.topics !== null) {
      wanted = new Set();
      for (const t of request.topics) for (const p of t.partitions) wanted.add(`${t.topic}-${p}`);
    }
    const logs = [
      ...lm.allLogs().map((l) => ({ ...l, isFuture: false })),
      ...lm.allFutureLogs().map((l) => ({ ...l, isFuture: true })),
    ];
    const response = defaultDescribeLogDirsResponse();
    for (const dir of lm.config.logDirs) {
      const result = { ...defaultDescribeLogDirsResult(), logDir: dir, topics: [] as DescribeLogDirsTopic[] };
      if (lm.offlineLogDirs().has(dir)) {
        result.errorCode = ErrorCode.KAFKA_STORAGE_ERROR;
        response.results.push(result);
        continue;
      }
      if (ctx.apiVersion >= 4) {
        try {
          const st = statfsSync(dir, { bigint: true });
          result.totalBytes = st.blocks * st.bsize;
          result.usableBytes = st.bavail * st.bsize;
        } catch {
          result.errorCode = ErrorCode.KAFKA_STORAGE_ERROR;
          response.results.push(result);
          continue;
        }
      }
      if (lm.isLogDirFull(dir)) result.errorCode = ErrorCode.KAFKA_STORAGE_ERROR;
      const byTopic = new Map<string, DescribeLogDirsTopic>();
      for (const { tp, log, dir: d, isFuture } of logs) {
        if (d !== dir) continue;
        if (wanted !== undefined && !wanted.has(`${tp.topic}-${tp.partition}`)) continue;
        if (lm.offlineLog(tp) !== undefined) continue;
        let topic = byTopic.get(tp.topic);
        if (topic === undefined) {
          topic = { ...defaultDescribeLogDirsTopic(), name: tp.topic, partitions: [] };
          byTopic.set(tp.topic, topic);
          result.topics.push(topic);
        }
        const p = defaultDescribeLogDirsPartition();
        p.partitionIndex = tp.partition;
        p.partitionSize = BigInt(log.size);
        p.offsetLag = services.replicaManager.logEndOffsetLag(tp, log.logEndOffset, isFuture);
        p.isFutureKey = isFuture;
        topic.partitions.push(p);
      }
      response.results.push(result);
    }
    return response;
  };
  return { apiKey: 35, handle };
}
