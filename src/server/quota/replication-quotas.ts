// ReplicationQuotas: a broker's three replication quotas (the replication part of Kafka's QuotaManagers)
// and how the dynamic configs drive them (Kafka's BrokerConfigHandler / TopicConfigHandler):
// - /config/brokers/<this broker's id>: leader.replication.throttled.rate → leader,
//   follower.replication.throttled.rate → follower, replica.alter.log.dirs.io.max.bytes.per.second →
//   alterLogDirs; a key absent means Long.MAX_VALUE (no throttle). As in Kafka, only the broker's own
//   entity applies (not /config/brokers/<default>) and static server.properties values do not.
// - /config/topics/<t>: leader.replication.throttled.replicas → which partitions the leader quota covers
//   here, follower.replication.throttled.replicas → which the follower quota covers (entries naming this
//   broker, or `*`); an empty or absent value removes the topic's throttle.
// Users: the Fetch handler and ReplicaManager (leader), ReplicaFetcherThread (follower), and a log-dir
// copier (alterLogDirs: check isQuotaExceeded() before copying a chunk of a throttled partition — Kafka's
// ReplicaAlterLogDirsThread throttles every partition it moves — and record() the bytes copied).

import type { Logger } from "../../common/logger.js";
import {
  DEFAULT_REPLICATION_THROTTLED_RATE,
  parseThrottledPartitions,
  ReplicationQuotaManager,
} from "./replication-quota-manager.js";

export const LEADER_REPLICATION_THROTTLED_RATE = "leader.replication.throttled.rate";
export const FOLLOWER_REPLICATION_THROTTLED_RATE = "follower.replication.throttled.rate";
export const REPLICA_ALTER_LOG_DIRS_IO_MAX_BYTES_PER_SECOND =
  "replica.alter.log.dirs.io.max.bytes.per.second";
export const LEADER_REPLICATION_THROTTLED_REPLICAS = "leader.replication.throttled.replicas";
export const FOLLOWER_REPLICATION_THROTTLED_REPLICAS = "follower.replication.throttled.replicas";

export interface ReplicationQuotasConfig {
  readonly brokerId: number;
  /** replication.quota.window.num / replication.quota.window.size.seconds */
  readonly replicationWindows: { readonly samples: number; readonly windowSeconds: number };
  /** alter.log.dirs.replication.quota.window.num / …window.size.seconds */
  readonly alterLogDirsWindows: { readonly samples: number; readonly windowSeconds: number };
}

export class ReplicationQuotas {
  readonly leader: ReplicationQuotaManager;
  readonly follower: ReplicationQuotaManager;
  readonly alterLogDirs: ReplicationQuotaManager;

  constructor(
    private readonly config: ReplicationQuotasConfig,
    nowMs: () => number,
    private readonly log?: Logger,
  ) {
    const w = (x: { samples: number; windowSeconds: number }) => ({
      samples: x.samples,
      windowMs: x.windowSeconds * 1000,
    });
    this.leader = new ReplicationQuotaManager("LeaderReplication", w(config.replicationWindows), nowMs);
    this.follower = new ReplicationQuotaManager("FollowerReplication", w(config.replicationWindows), nowMs);
    this.alterLogDirs = new ReplicationQuotaManager(
      "AlterLogDirsReplication",
      w(config.alterLogDirsWindows),
      nowMs,
    );
  }

  /** Applies this broker's dynamic config entity (`/config/brokers/<id>`), as BrokerConfigHandler. */
  applyBrokerConfig(props: Readonly<Record<string, string>>): void {
    const rate = (key: string): bigint => {
      const raw = props[key]?.trim();
      if (raw === undefined || !/^\d+$/.test(raw)) {
        if (raw !== undefined) this.log?.error(`Invalid ${key}=${raw} ignored: expected a long >= 0`);
        return DEFAULT_REPLICATION_THROTTLED_RATE;
      }
      const v = BigInt(raw);
      return v > DEFAULT_REPLICATION_THROTTLED_RATE ? DEFAULT_REPLICATION_THROTTLED_RATE : v;
    };
    for (const [q, key] of [
      [this.leader, LEADER_REPLICATION_THROTTLED_RATE],
      [this.follower, FOLLOWER_REPLICATION_THROTTLED_RATE],
      [this.alterLogDirs, REPLICA_ALTER_LOG_DIRS_IO_MAX_BYTES_PER_SECOND],
    ] as const) {
      const next = rate(key);
      if (next !== q.upperBound) {
        q.updateQuota(next);
        this.log?.info(
          `${q.type} quota set to ${next === DEFAULT_REPLICATION_THROTTLED_RATE ? "unbounded" : `${next} B/s`} (${key})`,
        );
      }
    }
  }

  /** Applies a topic's config overrides ({} when it has none or was deleted), as TopicConfigHandler. */
  applyTopicConfig(topic: string, props: Readonly<Record<string, string>>): void {
    for (const [q, key] of [
      [this.leader, LEADER_REPLICATION_THROTTLED_REPLICAS],
      [this.follower, FOLLOWER_REPLICATION_THROTTLED_REPLICAS],
    ] as const) {
      const value = props[key];
      if (value !== undefined && value.trim() !== "") {
        q.markThrottled(topic, parseThrottledPartitions(value, this.config.brokerId));
      } else q.removeThrottle(topic);
    }
  }
}
