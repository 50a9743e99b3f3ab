// AlterPartitionManager: a leader's ISR changes, sent to the controller (Kafka's AlterPartitionManager,
// KIP-497). Expansion is proposed when a follower's fetch shows it caught up (ISR + follower); shrinking is
// checked every replica.lag.time.max.ms / 2 for followers that have not caught up for
// replica.lag.time.max.ms. One change in flight per partition; the controller writes the partition state
// znode (same leader epoch, new partition epoch) and the leader applies the ISR it answers. Each change
// the controller accepts marks IsrShrinksPerSec or IsrExpandsPerSec (Kafka marks them on that answer).

import { Logger } from "../../common/logger.js";
import { getOrCreate } from "../../common/maps.js";
import type { ScheduledTask, Scheduler } from "../../common/scheduler.js";
import { ErrorCode } from "../../protocol/errors.js";
import { Apis } from "../../protocol/generated/api-table.js";
import { InterBrokerConnections } from "../inter-broker-connections.js";
import type { InterBrokerSecurity } from "../inter-broker-security.js";
import type { IsrChangeRecorder } from "../metrics/replication-metrics.js";
import type { Partition } from "./partition.js";
import type { ReplicaManager } from "./replica-manager.js";

export interface AlterPartitionItem {
  readonly topic: string;
  readonly partition: number;
  readonly leaderEpoch: number;
  readonly newIsr: readonly number[];
  readonly partitionEpoch: number;
}

export interface AlterPartitionResult {
  readonly topic: string;
  readonly partition: number;
  readonly errorCode: number;
  readonly leaderEpoch: number;
  readonly isr: readonly number[];
  readonly partitionEpoch: number;
}

/** Where AlterPartition goes: the local controller when active, else the controller broker. */
export interface ControllerTarget {
  local():
    | ((
        brokerId: number,
        brokerEpoch: bigint,
        items: AlterPartitionItem[],
      ) => Promise<AlterPartitionResult[]>)
    | undefined;
  /** The controller's broker id as this broker's metadata knows it (-1: none). */
  controllerId(): number;
  endpointOf(brokerId: number): { host: string; port: number } | undefined;
  /** The inter-broker listener's TLS and SASL. */
  readonly security?: InterBrokerSecurity;
}

export class AlterPartitionManager {
  private readonly inFlight = new Set<string>();
  private shrinkTask: ScheduledTask | undefined;
  private readonly log: Logger;
  private readonly connections: InterBrokerConnections;

  constructor(
    private readonly brokerId: number,
    private readonly brokerEpoch: () => bigint,
    private readonly replicaManager: ReplicaManager,
    private readonly controller: ControllerTarget,
    private readonly scheduler: Scheduler,
    private readonly replicaLagTimeMaxMs: number,
    requestTimeoutMs: number,
    /** Told of every ISR change the controller accepted (IsrShrinksPerSec / IsrExpandsPerSec). */
    private readonly isrChanges?: IsrChangeRecorder,
  ) {
    this.log = new Logger("kafka.server.AlterPartitionManager", `AlterPartitionManager brokerId=${brokerId}`);
    this.connections = new InterBrokerConnections(
      `broker-${brokerId}-alter-partition`,
      (id) => controller.endpointOf(id),
      requestTimeoutMs,
      controller.security,
    );
  }

  /** Starts the periodic ISR-shrink check (Kafka's isr-expiration task, every lag / 2). */
  startup(): void {
    const interval = Math.max(100, Math.floor(this.replicaLagTimeMaxMs / 2));
    this.shrinkTask = this.scheduler.schedule(
      "isr-expiration",
      () => {
        for (const p of this.replicaManager.allPartitions()) {
          const isr = p.isrShrink(this.replicaLagTimeMaxMs);
          if (isr !== undefined) this.submit(p, isr, "Shrinking");
        }
      },
      interval,
      interval,
    );
  }

  shutdown(): void {
    this.shrinkTask?.cancel();
    this.shrinkTask = undefined;
    this.connections.close();
  }

  /** A follower fetched: propose it for the ISR if it caught up. */
  onFollowerFetch(partition: Partition, replicaId: number): void {
    const isr = partition.isrExpansion(replicaId);
    if (isr !== undefined) this.submit(partition, isr, "Expanding");
  }

  private submit(p: Partition, newIsr: number[], what: "Shrinking" | "Expanding"): void {
    if (this.inFlight.has(p.key)) return;
    this.inFlight.add(p.key);
    const item: AlterPartitionItem = {
      topic: p.topic,
      partition: p.partitionId,
      leaderEpoch: p.leaderEpoch,
      newIsr,
      partitionEpoch: p.zkVersion,
    };
    this.log.info(`${what} ISR for partition ${p.key} from ${p.isr.join(",")} to ${newIsr.join(",")}`);
    void this.send([item])
      .then((results) => {
        for (const r of results) {
          if (r.errorCode !== ErrorCode.NONE) {
            this.log.info(`Failed to alter the ISR of ${r.topic}-${r.partition}: error code ${r.errorCode}`);
            continue;
          }
          if (what === "Shrinking") this.isrChanges?.isrShrink();
          else this.isrChanges?.isrExpand();
          const partition = this.replicaManager.getPartition({ topic: r.topic, partition: r.partition });
          // A shrunk ISR can move the HW: acks=all produces waiting on it complete now, not at their timeout.
          if (partition?.applyIsrUpdate(r.leaderEpoch, r.isr, r.partitionEpoch))
            this.replicaManager.tryCompleteDelayedRequests(partition.key);
        }
      })
      .catch((e) => this.log.warn(`AlterPartition for ${p.key} failed: ${(e as Error).message}`))
      .finally(() => this.inFlight.delete(p.key));
  }

  private async send(items: AlterPartitionItem[]): Promise<AlterPartitionResult[]> {
    const local = this.controller.local();
    if (local !== undefined) return local(this.brokerId, this.brokerEpoch(), items);
    const controllerId = this.controller.controllerId();
    if (controllerId < 0) throw new Error("no controller is known");
    const conn = await this.connections.get(controllerId);
    try {
      const version = Math.min(1, conn.versionFor(Apis.AlterPartition));
      const res = await conn.send(Apis.AlterPartition, version, {
        brokerId: this.brokerId,
        brokerEpoch: this.brokerEpoch(),
        topics: [...groupByTopic(items)].map(([topicName, ps]) => ({
          topicName,
          topicId: "AAAAAAAAAAAAAAAAAAAAAA",
          partitions: ps.map((i) => ({
            partitionIndex: i.partition,
            leaderEpoch: i.leaderEpoch,
            newIsr: [...i.newIsr],
            newIsrWithEpochs: [],
            leaderRecoveryState: 0,
            partitionEpoch: i.partitionEpoch,
          })),
        })),
      });
      if (res.errorCode !== ErrorCode.NONE) {
        return items.map((i) => ({
          ...i,
          errorCode: res.errorCode,
          isr: [],
          leaderEpoch: -1,
          partitionEpoch: -1,
        }));
      }
      return res.topics.flatMap((t) =>
        t.partitions.map((p) => ({
          topic: t.topicName,
          partition: p.partitionIndex,
          errorCode: p.errorCode,
          leaderEpoch: p.leaderEpoch,
          isr: p.isr,
          partitionEpoch: p.partitionEpoch,
        })),
      );
    } catch (e) {
      this.connections.drop(controllerId);
      throw e;
    }
  }
}

export function groupByTopic(items: readonly AlterPartitionItem[]): Map<string, AlterPartitionItem[]> {
  const out = new Map<string, AlterPartitionItem[]>();
  for (const i of items) {
    const l = getOrCreate(out, i.topic, () => []);
    l.push(i);
  }
  return out;
}
