// ReplicaFetcherManager: the follower side of replication on one broker (Kafka's ReplicaFetcherManager /
// AbstractFetcherManager). One ReplicaFetcherThread per leader broker (num.replica.fetchers = 1 for now);
// LeaderAndIsr adds the partitions this broker follows (truncated by leader epoch, then fetched from their
// log end offset) and removes those it now leads; StopReplica removes them too.

import { Logger } from "../../common/logger.js";
import { getOrCreate } from "../../common/maps.js";
import type { Time } from "../../common/time.js";
import type { TopicPartition } from "../../common/topic-partition.js";
import { type ReplicaFetcherConfig, ReplicaFetcherThread } from "./replica-fetcher-thread.js";
import type { ReplicaManager } from "./replica-manager.js";

export interface FollowedPartition {
  readonly topicPartition: TopicPartition;
  readonly leaderId: number;
  readonly leaderEpoch: number;
}

export class ReplicaFetcherManager {
  private readonly threads = new Map<number, ReplicaFetcherThread>();
  /** partition key → leader id it is fetched from */
  private readonly leaderOf = new Map<string, number>();
  private readonly log: Logger;

  constructor(
    private readonly replicaManager: ReplicaManager,
    private readonly config: ReplicaFetcherConfig,
    /** The leader broker's endpoint on the inter-broker listener. */
    private readonly endpointOf: (brokerId: number) => { host: string; port: number } | undefined,
    private readonly time: Time,
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
    const byLeader = new Map<number, FollowedPartition[]>();
    for (const p of partitions) {
      this.removeFetcherForPartitions([p.topicPartition]);
      if (p.leaderId < 0) continue;
      const l = getOrCreate(byLeader, p.leaderId, () => []);
      l.push(p);
    }
    for (const [leaderId, list] of byLeader) {
      let t = this.threads.get(leaderId);
      if (t === undefined) {
        t = new ReplicaFetcherThread(
          leaderId,
          () => this.endpointOf(leaderId),
          this.replicaManager,
          this.config,
          this.time,
          this.log.withContext(
            `ReplicaFetcher replicaId=${this.config.brokerId}, leaderId=${leaderId}, fetcherId=0`,
          ),
        );
        this.threads.set(leaderId, t);
      }
      const states = [];
      for (const p of list) {
        const log = this.replicaManager.getPartition(p.topicPartition)?.log;
        if (log === undefined) continue;
        // Truncation by leader epoch before the first fetch; without epochs, to the high watermark.
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
        this.leaderOf.set(`${p.topicPartition.topic}-${p.topicPartition.partition}`, leaderId);
      }
      if (states.length > 0) {
        this.log.info(
          `Added fetcher to broker ${leaderId} for partitions ${states.map((s) => `${s.topicPartition.topic}-${s.topicPartition.partition} (offset ${s.fetchOffset})`).join(", ")}`,
        );
        t.addPartitions(states);
      }
    }
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
      const leaderId = this.leaderOf.get(key);
      if (leaderId === undefined) continue;
      this.leaderOf.delete(key);
      const t = this.threads.get(leaderId);
      if (t === undefined) continue;
      t.removePartitions([tp]);
      if (t.partitionCount === 0) {
        t.shutdown();
        this.threads.delete(leaderId);
      }
    }
  }

  shutdown(): void {
    for (const t of this.threads.values()) t.shutdown();
    this.threads.clear();
    this.leaderOf.clear();
  }
}
