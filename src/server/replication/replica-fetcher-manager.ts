// ReplicaFetcherManager: the follower side of replication on one broker (Kafka's ReplicaFetcherManager /
// AbstractFetcherManager). num.replica.fetchers ReplicaFetcherThreads per leader broker, each with its own
// connection and fetch session; a partition goes to fetcher getFetcherId(topic, partition) (Kafka's hash,
// fetcher-id.ts). LeaderAndIsr adds the partitions this broker follows (checked by leader epoch, then
// fetched from their log end offset) and removes those it now leads; StopReplica removes them too.
// Adding a partition already fetched from the same leader at the same leader epoch changes nothing (its
// fetch state, fetcher and fetch session stay: Kafka's addPartitions); a new leader epoch with the same
// leader replaces its state in the same fetcher; a new leader moves it to that leader's fetcher. A fetcher
// left without partitions is shut down. shutdown() is final: every fetcher stops (no connect or request
// after it), it resolves once their loops have ended, and later adds are ignored.

import { Logger } from "../../common/logger.js";
import { getOrCreate } from "../../common/maps.js";
import type { Time } from "../../common/time.js";
import { type TopicPartition, topicPartitionKey } from "../../common/topic-partition.js";
import { getFetcherId } from "./fetcher-id.js";
import {
  type InitialFetchState,
  type ReplicaFetcherConfig,
  ReplicaFetcherThread,
} from "./replica-fetcher-thread.js";
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
  private stopped = false;

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
   * Starts fetching these partitions from their leaders, each first truncated by leader epoch (or to its
   * high watermark when its log has no epochs yet). A partition fetched already from the same leader at the
   * same leader epoch keeps its fetch state; one whose leader changed leaves its old fetcher.
   */
  addFetcherForPartitions(partitions: readonly FollowedPartition[]): void {
    if (this.stopped) {
      if (partitions.length > 0)
        this.log.info(
          `Not adding fetchers for ${partitions.length} partition(s): the replica fetchers are shut down`,
        );
      return;
    }
    const byFetcher = new Map<string, { leaderId: number; fetcherId: number; list: FollowedPartition[] }>();
    for (const p of partitions) {
      const target =
        p.leaderId < 0
          ? undefined
          : fetcherKey(
              p.leaderId,
              getFetcherId(p.topicPartition.topic, p.topicPartition.partition, this.numFetchers),
            );
      const current = this.fetcherOf.get(topicPartitionKey(p.topicPartition));
      if (current !== undefined && current !== target) this.removeFetcherForPartitions([p.topicPartition]);
      if (target === undefined) continue;
      getOrCreate(byFetcher, target, () => ({
        leaderId: p.leaderId,
        fetcherId: getFetcherId(p.topicPartition.topic, p.topicPartition.partition, this.numFetchers),
        list: [],
      })).list.push(p);
    }
    for (const [key, { leaderId, fetcherId, list }] of byFetcher) {
      const initial: InitialFetchState[] = [];
      for (const p of list) {
        const log = this.replicaManager.getPartition(p.topicPartition)?.log;
        if (log === undefined) continue;
        initial.push({
          topicPartition: p.topicPartition,
          currentLeaderEpoch: p.leaderEpoch,
          initOffset: log.logEndOffset,
        });
      }
      if (initial.length === 0) continue;
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
      for (const i of initial) this.fetcherOf.set(topicPartitionKey(i.topicPartition), key);
      const added = new Set(t.addPartitions(initial).map(topicPartitionKey));
      if (added.size > 0) {
        this.log.info(
          `Added fetcher to broker ${leaderId} (fetcherId ${fetcherId}) for partitions ${initial
            .filter((i) => added.has(topicPartitionKey(i.topicPartition)))
            .map((i) => `${topicPartitionKey(i.topicPartition)} (offset ${i.initOffset})`)
            .join(", ")}`,
        );
      }
    }
  }

  /** The fetchers running, by leader and fetcher id (Kafka's fetcherThreadMap), for tests and metrics. */
  fetchers(): ReadonlyArray<ReplicaFetcherThread> {
    return [...this.threads.values()];
  }

  /** The fetcher a partition is fetched by, if any. */
  fetcherFor(tp: TopicPartition): ReplicaFetcherThread | undefined {
    const key = this.fetcherOf.get(topicPartitionKey(tp));
    return key === undefined ? undefined : this.threads.get(key);
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
      const key = topicPartitionKey(tp);
      const fetcher = this.fetcherOf.get(key);
      if (fetcher === undefined) continue;
      this.fetcherOf.delete(key);
      const t = this.threads.get(fetcher);
      if (t === undefined) continue;
      t.removePartitions([tp]);
      if (t.partitionCount === 0) {
        void t.shutdown();
        this.threads.delete(fetcher);
      }
    }
  }

  /** Stops every fetcher for good; resolves once their loops have ended. */
  async shutdown(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.log.info("shutting down");
    const stopping = [...this.threads.values()].map((t) => t.shutdown());
    this.threads.clear();
    this.fetcherOf.clear();
    await Promise.all(stopping);
    this.log.info("shutdown completed");
  }
}
