// ReplicaLogDirAdmin: the Admin API calls about the log dir of each replica (Kafka's
// Admin.alterReplicaLogDirs and describeReplicaLogDirs). AlterReplicaLogDirs goes to the broker of each
// replica; describeReplicaLogDirs asks each broker DescribeLogDirs for the partitions wanted and reports,
// per replica, the dir of its current log and of its future log (a move in progress) with their offset lags.
// Per-replica errors come back as `error: KafkaClientError` (REPLICA_NOT_AVAILABLE: the replica is not on
// the broker yet, retry; LOG_DIR_NOT_FOUND; KAFKA_STORAGE_ERROR).
//
// Usage:
//   const dirs = new ReplicaLogDirAdmin(admin.cluster);
//   await dirs.alterReplicaLogDirs([{ topic: "t", partition: 0, brokerId: 1, dir: "/data/b" }]);
//   const [info] = await dirs.describeReplicaLogDirs([{ topic: "t", partition: 0, brokerId: 1 }]);

import { ErrorCode } from "../../protocol/errors.js";
import { Apis } from "../../protocol/generated/api-table.js";
import { KafkaClientError } from "../errors.js";
import type { ClusterClient } from "../network/cluster-client.js";

/** Kafka's TopicPartitionReplica. */
export interface TopicPartitionReplica {
  readonly topic: string;
  readonly partition: number;
  readonly brokerId: number;
}

/** Kafka's TopicPartitionReplica.toString: `<topic>-<partition>-<brokerId>`. */
export function replicaName(r: TopicPartitionReplica): string {
  return `${r.topic}-${r.partition}-${r.brokerId}`;
}

export interface AlterReplicaLogDirResult extends TopicPartitionReplica {
  readonly error?: KafkaClientError;
}

/** Kafka's DescribeReplicaLogDirsResult.ReplicaLogDirInfo (null dirs and -1 lags when not found). */
export interface ReplicaLogDirInfo extends TopicPartitionReplica {
  readonly currentReplicaLogDir: string | null;
  readonly currentReplicaOffsetLag: bigint;
  readonly futureReplicaLogDir: string | null;
  readonly futureReplicaOffsetLag: bigint;
  readonly error?: KafkaClientError;
}

function byBroker<T extends TopicPartitionReplica>(replicas: readonly T[]): Map<number, T[]> {
  const m = new Map<number, T[]>();
  for (const r of replicas) {
    const l = m.get(r.brokerId);
    if (l) l.push(r);
    else m.set(r.brokerId, [r]);
  }
  return m;
}

export class ReplicaLogDirAdmin {
  constructor(readonly cluster: ClusterClient) {}

  private async ensureMetadata(): Promise<void> {
    if (this.cluster.metadata.brokers.size === 0) await this.cluster.refreshMetadata(null);
  }

  /** AlterReplicaLogDirs to each replica's broker; one result per replica, in the order given. */
  async alterReplicaLogDirs(
    assignments: ReadonlyArray<TopicPartitionReplica & { readonly dir: string }>,
  ): Promise<AlterReplicaLogDirResult[]> {
    await this.ensureMetadata();
    const outcome = new Map<string, KafkaClientError | undefined>();
    for (const [brokerId, list] of byBroker(assignments)) {
      const dirs = new Map<string, Map<string, number[]>>();
      for (const a of list) {
        const topics = dirs.get(a.dir) ?? new Map<string, number[]>();
        dirs.set(a.dir, topics);
        topics.set(a.topic, [...(topics.get(a.topic) ?? []), a.partition]);
      }
      try {
        const res = await this.cluster.withRetries(`AlterReplicaLogDirs(${brokerId})`, async () => {
          const conn = await this.cluster.connectionTo(brokerId);
          return conn.send(Apis.AlterReplicaLogDirs, conn.versionFor(Apis.AlterReplicaLogDirs), {
            dirs: [...dirs].map(([path, topics]) => ({
              path,
              topics: [...topics].map(([name, partitions]) => ({ name, partitions })),
            })),
          });
        });
        for (const t of res.results)
          for (const p of t.partitions)
            outcome.set(
              replicaName({ topic: t.topicName, partition: p.partitionIndex, brokerId }),
              p.errorCode === ErrorCode.NONE ? undefined : new KafkaClientError(p.errorCode, null),
            );
      } catch (e) {
        if (!(e instanceof KafkaClientError)) throw e;
        for (const a of list) outcome.set(replicaName(a), e);
      }
    }
    return assignments.map((a) => {
      const name = replicaName(a);
      const error = outcome.has(name)
        ? outcome.get(name)
        : KafkaClientError.of("UNKNOWN_SERVER_ERROR", `The broker did not answer for replica ${name}`);
      const r = { topic: a.topic, partition: a.partition, brokerId: a.brokerId };
      return error === undefined ? r : { ...r, error };
    });
  }

  /** The current and future log dir of each replica (DescribeLogDirs to each broker), in the order given. */
  async describeReplicaLogDirs(replicas: readonly TopicPartitionReplica[]): Promise<ReplicaLogDirInfo[]> {
    await this.ensureMetadata();
    const found = new Map<string, { current: [string, bigint] | null; future: [string, bigint] | null }>();
    const failed = new Map<number, KafkaClientError>();
    for (const [brokerId, list] of byBroker(replicas)) {
      const topics = new Map<string, number[]>();
      for (const r of list) topics.set(r.topic, [...(topics.get(r.topic) ?? []), r.partition]);
      try {
        const res = await this.cluster.withRetries(`DescribeLogDirs(${brokerId})`, async () => {
          const conn = await this.cluster.connectionTo(brokerId);
          return conn.send(Apis.DescribeLogDirs, conn.versionFor(Apis.DescribeLogDirs), {
            topics: [...topics].map(([topic, partitions]) => ({ topic, partitions })),
          });
        });
        if (res.errorCode !== ErrorCode.NONE) {
          failed.set(brokerId, new KafkaClientError(res.errorCode, null));
          continue;
        }
        for (const d of res.results) {
          if (d.errorCode !== ErrorCode.NONE) continue;
          for (const t of d.topics)
            for (const p of t.partitions) {
              const name = replicaName({ topic: t.name, partition: p.partitionIndex, brokerId });
              const e = found.get(name) ?? { current: null, future: null };
              if (p.isFutureKey) e.future = [d.logDir, p.offsetLag];
              else e.current = [d.logDir, p.offsetLag];
              found.set(name, e);
            }
        }
      } catch (e) {
        if (!(e instanceof KafkaClientError)) throw e;
        failed.set(brokerId, e);
      }
    }
    return replicas.map((r) => {
      const e = found.get(replicaName(r));
      const error = failed.get(r.brokerId);
      return {
        topic: r.topic,
        partition: r.partition,
        brokerId: r.brokerId,
        currentReplicaLogDir: e?.current?.[0] ?? null,
        currentReplicaOffsetLag: e?.current?.[1] ?? -1n,
        futureReplicaLogDir: e?.future?.[0] ?? null,
        futureReplicaOffsetLag: e?.future?.[1] ?? -1n,
        ...(error !== undefined ? { error } : {}),
      };
    });
  }
}
