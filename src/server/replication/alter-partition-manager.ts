// AlterPartitionManager: a leader's ISR changes, sent to the controller (Kafka's AlterPartitionManager,
// KIP-497). Expansion is proposed when a follower's fetch shows it caught up; shrinking is checked every
// replica.lag.time.max.ms / 2 (Kafka's isr-expiration task). The Partition owns the rules and the pending
// state (partition-isr-state.ts); this class carries proposals to the controller and answers back:
//   - one change per partition is queued at a time (the Partition proposes nothing while one is pending),
//     and all queued changes go in one AlterPartition request, one request in flight (Kafka's
//     unsentIsrUpdates and inflightRequest);
//   - a change is sent until it is answered: a request that fails (timeout, connection lost, no controller
//     known, a top-level error such as NOT_CONTROLLER or STALE_BROKER_EPOCH) is sent again after
//     ALTER_PARTITION_RETRY_BACKOFF_MS, and so is a partition the Partition says to retry — each only while
//     it is still the partition's pending change (a LeaderAndIsr with a new leader epoch ends it);
//   - the answer goes to the Partition (handleAlterPartitionUpdate / handleAlterPartitionError); a change the
//     controller accepted marks IsrShrinksPerSec or IsrExpandsPerSec, and the waiting fetches and acks=all
//     produces are re-checked (the HW may move).
import { Logger } from "../../common/logger.js";
import { getOrCreate } from "../../common/maps.js";
import type { ScheduledTask, Scheduler } from "../../common/scheduler.js";
import { ErrorCode, type ErrorName, errorNameOf } from "../../protocol/errors.js";
import { Apis } from "../../protocol/generated/api-table.js";
import { InterBrokerConnections } from "../inter-broker-connections.js";
import type { InterBrokerSecurity } from "../inter-broker-security.js";
import type { IsrChangeRecorder } from "../metrics/replication-metrics.js";
import type { Partition } from "./partition.js";
import type { AlterPartitionProposal, PendingPartitionChange } from "./partition-isr-state.js";
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

/** Wait before a change is sent again after a failure (Kafka schedules the retry 50 ms out). */
export const ALTER_PARTITION_RETRY_BACKOFF_MS = 50;

/** A change waiting to be sent, or in flight. */
interface PendingItem {
  readonly partition: Partition;
  readonly state: PendingPartitionChange;
  readonly item: AlterPartitionItem;
}

export class AlterPartitionManager {
  /** Changes not sent yet, by partition key (Kafka's unsentIsrUpdates). */
  private readonly unsent = new Map<string, PendingItem>();
  /** The changes of the request in flight, by partition key. */
  private inFlight: Map<string, PendingItem> | undefined;
  private retryTask: ScheduledTask | undefined;
  private shrinkTask: ScheduledTask | undefined;
  private stopped = false;
  /** Requests in a row that got no answer (for the log). */
  private consecutiveFailures = 0;
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
          const before = p.isr;
          const proposal = p.maybeShrinkIsr(this.replicaLagTimeMaxMs);
          if (proposal !== undefined) this.submit(p, proposal, before, "Shrinking");
        }
      },
      interval,
      interval,
    );
  }

  shutdown(): void {
    this.stopped = true;
    this.shrinkTask?.cancel();
    this.shrinkTask = undefined;
    this.retryTask?.cancel();
    this.retryTask = undefined;
    this.unsent.clear();
    this.connections.close();
  }

  /** Changes queued or in flight (tests, metrics). */
  get pendingCount(): number {
    return this.unsent.size + (this.inFlight?.size ?? 0);
  }

  /** A follower fetched: propose it for the ISR if it caught up. */
  onFollowerFetch(partition: Partition, replicaId: number): void {
    const before = partition.isr;
    const proposal = partition.maybeExpandIsr(replicaId);
    if (proposal !== undefined) this.submit(partition, proposal, before, "Expanding");
  }

  private submit(
    p: Partition,
    proposal: AlterPartitionProposal,
    before: readonly number[],
    what: "Shrinking" | "Expanding",
  ): void {
    const state = p.isrState;
    if (!state.isInflight || this.stopped) return;
    this.log.info(
      `${what} ISR for partition ${p.key} from ${before.join(",")} to ${proposal.newIsr.join(",")}`,
    );
    this.unsent.set(p.key, {
      partition: p,
      state,
      item: { topic: p.topic, partition: p.partitionId, ...proposal },
    });
    this.maybePropagateIsrChanges();
  }

  /** Whether `pending` is still the partition's pending change (else it is dropped, never resent). */
  private isCurrent(pending: PendingItem): boolean {
    const p = pending.partition;
    return (
      p.isrState === pending.state &&
      this.replicaManager.getPartition(p.topicPartition) === p &&
      p.leaderEpoch === pending.item.leaderEpoch
    );
  }

  /** Sends every queued change in one request, unless one is in flight (Kafka's maybePropagateIsrChanges). */
  private maybePropagateIsrChanges(): void {
    if (this.stopped || this.inFlight !== undefined || this.unsent.size === 0) return;
    const batch = new Map<string, PendingItem>();
    for (const [key, pending] of this.unsent) if (this.isCurrent(pending)) batch.set(key, pending);
    this.unsent.clear();
    if (batch.size === 0) return;
    this.inFlight = batch;
    void this.send([...batch.values()].map((b) => b.item))
      .then(
        (results) => {
          this.consecutiveFailures = 0;
          try {
            return this.onResponse(batch, results);
          } catch (e) {
            // Never leaves the request marked in flight (nothing would be sent again).
            this.log.error(`Handling the AlterPartition answer failed: ${(e as Error).stack ?? e}`);
            return [...batch.values()];
          }
        },
        (e: unknown) => {
          // Said once per run of failures (they repeat every 50 ms while no controller answers).
          this.consecutiveFailures++;
          const line = `AlterPartition for ${[...batch.keys()].join(",")} failed: ${(e as Error).message}; will retry`;
          if (this.consecutiveFailures === 1 || this.consecutiveFailures % 100 === 0)
            this.log.info(`${line} (failure ${this.consecutiveFailures} in a row)`);
          else this.log.debug(line);
          return [...batch.values()];
        },
      )
      .then((retry) => {
        this.inFlight = undefined;
        for (const r of retry) {
          // A newer change queued meanwhile wins; a stale one is dropped.
          if (this.isCurrent(r) && !this.unsent.has(r.partition.key)) this.unsent.set(r.partition.key, r);
        }
        if (retry.length > 0) this.scheduleRetry();
        else this.maybePropagateIsrChanges();
      });
  }

  private scheduleRetry(): void {
    if (this.stopped || this.retryTask !== undefined) return;
    this.retryTask = this.scheduler.schedule(
      "send-alter-partition",
      () => {
        this.retryTask = undefined;
        this.maybePropagateIsrChanges();
      },
      ALTER_PARTITION_RETRY_BACKOFF_MS,
    );
  }

  /** Hands each partition's answer to its Partition; returns the changes to send again. */
  private onResponse(batch: Map<string, PendingItem>, results: AlterPartitionResult[]): PendingItem[] {
    const retry: PendingItem[] = [];
    const answered = new Set<string>();
    for (const r of results) {
      const key = `${r.topic}-${r.partition}`;
      const pending = batch.get(key);
      if (pending === undefined) continue;
      answered.add(key);
      const partition = pending.partition;
      if (r.errorCode === ErrorCode.NONE) {
        if (partition.handleAlterPartitionUpdate(pending.state, r.leaderEpoch, r.isr, r.partitionEpoch)) {
          this.log.info(
            `ISR of ${key} updated to ${r.isr.join(",")} and partition epoch updated to ${r.partitionEpoch}`,
          );
          if (pending.state.sent.newIsr.length < pending.state.isr.length) this.isrChanges?.isrShrink();
          else this.isrChanges?.isrExpand();
          // A shrunk ISR can move the HW: acks=all produces waiting on it complete now, not at their timeout.
          this.replicaManager.tryCompleteDelayedRequests(partition.key);
        }
        continue;
      }
      const error: ErrorName = errorNameOf(r.errorCode);
      const again = partition.handleAlterPartitionError(pending.state, error);
      this.log.info(
        `Failed to alter the ISR of ${key} to ${pending.item.newIsr.join(",")}: the controller answered ${error}${again ? "; will retry" : partition.isrState === pending.state ? "; waiting for the partition's new state from the controller" : `; partition state reset to ${partition.isrState}`}`,
      );
      if (again) retry.push(pending);
    }
    // A partition the controller did not answer is sent again (Kafka completes it with an error to retry).
    for (const [key, pending] of batch) if (!answered.has(key)) retry.push(pending);
    return retry;
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
      if (res.errorCode !== ErrorCode.NONE)
        throw new Error(`the controller answered ${errorNameOf(res.errorCode)} to the whole request`);
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
