// ReplicaFetcherManager: the follower side of replication on one broker (Kafka's ReplicaFetcherManager /
// AbstractFetcherManager). num.replica.fetchers ReplicaFetcherThreads per leader broker, each with its own
// connection and fetch session; a partition goes to fetcher getFetcherId(topic, partition) (Kafka's hash,
// fetcher-id.ts). LeaderAndIsr adds the partitions this broker follows (checked by leader epoch, then
// fetched from their log end offset) and removes those it now leads; StopReplica removes them too.

import { Logger } from "../../common/logger.js";
import { getOrCreate } from "../../common/maps.js";
import type { Time } from "../../common/time.js";
import type { TopicPartition } from "../../common/topic-partition.js";
import { getFetcherId } from "./fetcher-id.js";
import { type ReplicaFetcherConfig, ReplicaFetcherThread } from "./replica-fetcher-thread.js";
import type { ReplicaManager } from "./replica-manager.js";

export interface FollowedPartition {
  readonly topicPartition: TopicPartition;
  readonly leaderId: number;
  readonly leaderEpoch: number;
}

/** Kafka's BrokerAndFetcherId, as a map key. */
function fetcherKey(leaderId: number, fetcherId: number): string {
  return `${leaderId}-${fetcherId}`;
}

export class ReplicaFetcherManager {
  /** By leader id and fetcher id (fetcherKey). */
  private readonly threads = new Map<string, ReplicaFetcherThread>();
  /** partition key → fetcher it is fetched by */
  private readonly fetcherOf = new Map<string, string>();
  private readonly log: Logger;

  constructor(
    private readonly replicaManager: ReplicaManager,
    private readonly config: ReplicaFetcherConfig,
    /** The leader broker's endpoint on the inter-broker listener. */
    private readonly endpointOf: (brokerId: number) => { host: string; port: number } | undefined,
    private readonly time: Time,
    /** num.replica.fetchers: fetchers per leader broker. */
    readonly numFetchers = 1,
  ) {
    this.log = new Logger(
      "kafka.server.ReplicaFetcherManager",
      `ReplicaFetcherManager on broker ${config.brokerId}`,
    );
  }

  /**
   * Starts fetching these partitions from their leaders, each first truncated by leader epoch
   * (ReplicaFetcherThread.truncate) — or to its high watermark when its log has no epochs yet.
   */
  addFetcherForPartitions(partitions: readonly FollowedPartition[]): void {
    const byFetcher = new Map<string, { leaderId: number; fetcherId: number; list: FollowedPartition[] }>();
    for (const p of partitions) {
      this.removeFetcherForPartitions([p.topicPartition]);
      if (p.leaderId < 0) continue;
      const fetcherId = getFetcherId(p.topicPartition.topic, p.topicPartition.partition, this.numFetchers);
      const f = getOrCreate(byFetcher, fetcherKey(p.leaderId, fetcherId), () => ({
        leaderId: p.leaderId,
        fetcherId,
        list: [],
      }));
      f.list.push(p);
    }
    for (const [key, { leaderId, fetcherId, list }] of byFetcher) {
      let t = this.threads.get(key);
      if (t === undefined) {
        t = new ReplicaFetcherThread(
          leaderId,
          fetcherId,
          () => this.endpointOf(leaderId),
          this.replicaManager,
          this.config,
          this.time,
          this.log.withContext(
            `ReplicaFetcher replicaId=${this.config.brokerId}, leaderId=${leaderId}, fetcherId=${fetcherId}`,
          ),
        );
        this.threads.set(key, t);
      }
      const states = [];
      for (const p of list) {
        const log = this.replicaManager.getPartition(p.topicPartition)?.log;
        if (log === undefined) continue;
        // Checked by leader epoch on the first fetch (or by OffsetForLeaderEpoch before it, with a leader
        // below Fetch v12); without epochs, truncated to the high watermark now.
        const latestEpoch = log.leaderEpochCache?.latestEpoch();
        if (latestEpoch === undefined && log.logEndOffset > log.highWatermark)
          log.truncateTo(log.highWatermark);
        states.push({
          topicPartition: p.topicPartition,
          fetchOffset: log.logEndOffset,
          currentLeaderEpoch: p.leaderEpoch,
          delayedUntilMs: 0,
          truncatingEpoch: latestEpoch,
        });
        this.fetcherOf.set(`${p.topicPartition.topic}-${p.topicPartition.partition}`, key);
      }
      if (states.length > 0) {
        this.log.info(
          `Added fetcher to broker ${leaderId} (fetcherId ${fetcherId}) for partitions ${states.map((s) => `${s.topicPartition.topic}-${s.topicPartition.partition} (offset ${s.fetchOffset})`).join(", ")}`,
        );
        t.addPartitions(states);
      }
    }
  }

  /** The fetchers running, by leader and fetcher id (Kafka's fetcherThreadMap), for tests and metrics. */
  fetchers(): ReadonlyArray<ReplicaFetcherThread> {
    return [...this.threads.values()];
  }

  /** Kafka's MaxLag (kafka.server:type=ReplicaFetcherManager,clientId=Replica): the largest over threads. */
  maxLag(): bigint {
    let max = 0n;
    for (const t of this.threads.values()) {
      const l = t.maxLag();
      if (l > max) max = l;
    }
    return max;
  }

  removeFetcherForPartitions(tps: readonly TopicPartition[]): void {
    for (const tp of tps) {
      const key = `${tp.topic}-${tp.partition}`;
      const fetcher = this.fetcherOf.get(key);
      if (fetcher === undefined) continue;
      this.fetcherOf.delete(key);
      const t = this.threads.get(fetcher);
      if (t === undefined) continue;
      t.removePartitions([tp]);
      if (t.partitionCount === 0) {
        t.shutdown();
        this.threads.delete(fetcher);
      }
    }
  }

  shutdown(): void {
    for (const t of this.threads.values()) t.shutdown();
    this.threads.clear();
    this.fetcherOf.clear();
  }
}
