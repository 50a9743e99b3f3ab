// fetchOnce: one sessionless Fetch per partition leader for given (topic, partition, offset) reads —
// maxWaitMs 0, read_uncommitted, `partitionMaxBytes` a partition (the broker still returns a first batch
// larger than that whole, KIP-74) — decoded into records. For tools that look at a few records (the
// console's lag in seconds and message browser), not for consuming: no fetch session, no positions.
// A partition without a leader, or whose leader fails, is answered with its error code. Each answer also
// says where the next read would start (after the last whole batch returned) and, when the bytes end in a
// batch cut short (Kafka returns part of an oversized batch for a partition that is not the first of its
// response; Tributary returns none), how large that batch is — what a caller needs to read it alone.

import { Apis } from "../../protocol/generated/api-table.js";
import { ErrorCode } from "../../protocol/generated/errors.js";
import type { FetchTopic } from "../../protocol/generated/messages/FetchRequest.js";
import { decodeRecordBatches } from "../../protocol/records/memory-records.js";
import type { DecodedRecord } from "../../protocol/records/record.js";
import { KafkaClientError } from "../errors.js";
import type { ClusterClient } from "../network/cluster-client.js";
import type { TopicPartitionRef } from "./admin-types.js";

const ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA";

export interface OffsetRef extends TopicPartitionRef {
  readonly offset: bigint;
}

export interface FetchedPartition {
  readonly errorCode: number;
  /** Records at or after the requested offset, in offset order (control records excluded). */
  readonly records: DecodedRecord[];
  readonly highWatermark: bigint;
  readonly logStartOffset: bigint;
  /** The offset after the last whole batch returned (control batches included); undefined with none. */
  readonly nextOffset?: bigint;
  /** Bytes of a batch the answer holds only part of (its header says its length); undefined without one. */
  readonly truncatedBatchBytes?: number;
}

/** LOG_OVERHEAD: a batch's (or legacy entry's) offset and length fields, before its `length` bytes. */
const LOG_OVERHEAD = 12;

/** The size of the first batch in `records` that does not end within it, or undefined. */
export function truncatedBatchBytes(records: Buffer): number | undefined {
  let pos = 0;
  while (pos + LOG_OVERHEAD <= records.length) {
    const size = LOG_OVERHEAD + records.readInt32BE(pos + 8);
    if (size <= LOG_OVERHEAD) return undefined;
    if (pos + size > records.length) return size;
    pos += size;
  }
  return undefined;
}

export function refKey(topic: string, partition: number): string {
  return `${topic}-${partition}`;
}

/** Fetches each ref once; results keyed by refKey. */
export async function fetchOnce(
  cluster: ClusterClient,
  refs: readonly OffsetRef[],
  options: { partitionMaxBytes: number; timeoutMs?: number },
): Promise<Map<string, FetchedPartition>> {
  const out = new Map<string, FetchedPartition>();
  const failed = (code: number): FetchedPartition => ({
    errorCode: code,
    records: [],
    highWatermark: -1n,
    logStartOffset: -1n,
  });
  const byLeader = new Map<number, OffsetRef[]>();
  for (const r of refs) {
    const leader = cluster.leaderFor(r.topic, r.partition);
    if (leader === undefined) {
      out.set(refKey(r.topic, r.partition), failed(ErrorCode.LEADER_NOT_AVAILABLE));
      continue;
    }
    const list = byLeader.get(leader) ?? [];
    list.push(r);
    byLeader.set(leader, list);
  }
  await Promise.all(
    [...byLeader].map(async ([leader, list]) => {
      const wanted = new Map(list.map((r) => [refKey(r.topic, r.partition), r.offset]));
      try {
        const topics = new Map<string, FetchTopic>();
        for (const r of list) {
          const t = topics.get(r.topic) ?? {
            topic: r.topic,
            topicId: cluster.topic(r.topic)?.topicId ?? ZERO_UUID,
            partitions: [],
          };
          t.partitions.push({
            partition: r.partition,
            currentLeaderEpoch: -1,
            fetchOffset: r.offset,
            lastFetchedEpoch: -1,
            logStartOffset: -1n,
            partitionMaxBytes: options.partitionMaxBytes,
            replicaDirectoryId: ZERO_UUID,
          });
          topics.set(r.topic, t);
        }
        const conn = await cluster.connectionTo(leader);
        const version = conn.versionFor(Apis.Fetch, { min: 4, max: 12 });
        const res = await conn.send(
          Apis.Fetch,
          version,
          {
            clusterId: null,
            replicaId: -1,
            replicaState: { replicaId: -1, replicaEpoch: -1n },
            maxWaitMs: 0,
            minBytes: 0,
            maxBytes: options.partitionMaxBytes * list.length,
            isolationLevel: 0,
            sessionId: 0,
            sessionEpoch: -1,
            topics: [...topics.values()],
            forgottenTopicsData: [],
            rackId: "",
          },
          { timeoutMs: options.timeoutMs ?? 5_000 },
        );
        for (const t of res.responses)
          for (const p of t.partitions) {
            const k = refKey(t.topic, p.partitionIndex);
            const offset = wanted.get(k);
            if (offset === undefined) continue;
            const batches =
              p.errorCode === ErrorCode.NONE && p.records
                ? decodeRecordBatches(p.records, { allowIncompleteTail: true })
                : [];
            const last = batches[batches.length - 1]?.header;
            const nextOffset = last ? last.baseOffset + BigInt(last.lastOffsetDelta) + 1n : undefined;
            const cut =
              p.errorCode === ErrorCode.NONE && p.records ? truncatedBatchBytes(p.records) : undefined;
            out.set(k, {
              errorCode: p.errorCode,
              records: batches
                .filter((b) => !b.header.isControl)
                .flatMap((b) => b.records.filter((r) => r.offset >= offset)),
              highWatermark: p.highWatermark,
              logStartOffset: p.logStartOffset,
              ...(nextOffset !== undefined ? { nextOffset } : {}),
              ...(cut !== undefined ? { truncatedBatchBytes: cut } : {}),
            });
          }
      } catch (e) {
        const code = e instanceof KafkaClientError ? e.code : ErrorCode.UNKNOWN_SERVER_ERROR;
        for (const k of wanted.keys()) if (!out.has(k)) out.set(k, failed(code));
      }
    }),
  );
  for (const r of refs)
    if (!out.has(refKey(r.topic, r.partition)))
      out.set(refKey(r.topic, r.partition), failed(ErrorCode.UNKNOWN_SERVER_ERROR));
  return out;
}
