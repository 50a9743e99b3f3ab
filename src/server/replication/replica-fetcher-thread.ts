// ReplicaFetcherThread: a follower's fetch loop against one leader broker (Kafka's ReplicaFetcherThread /
// AbstractFetcherThread). Sends Fetch (v12, replica id = this broker) for every partition it follows on
// that leader, appends what comes back as it is (offsets, leader epochs, producer state and markers kept:
// UnifiedLog.appendAsFollower), moves the follower's high watermark to min(leader HW, own LEO), and backs
// off (replica.fetch.backoff.ms) after an error. The leader learns the follower's LEO from the fetch offset.
// Before fetching, a partition that starts following truncates its log by leader epoch (KIP-101, with
// KIP-279's iterations): OffsetForLeaderEpoch asks the leader where the follower's latest epoch ends; the
// follower truncates to min(leader's end offset, its own end of that epoch) and, when the leader answered
// an older epoch the follower does not end the same way, asks again for that epoch until they agree. A
// log without epochs truncates to its high watermark (Kafka's fallback). Not yet: fetch sessions.

import { BrokerConnection } from "../../client/network/broker-connection.js";
import type { Logger } from "../../common/logger.js";
import { getOrCreate } from "../../common/maps.js";
import type { Time } from "../../common/time.js";
import { type TopicPartition, topicPartitionKey } from "../../common/topic-partition.js";
import { ErrorCode } from "../../protocol/errors.js";
import { Apis } from "../../protocol/generated/api-table.js";
import type { FetchRequest } from "../../protocol/generated/messages/FetchRequest.js";
import type { ReplicaManager } from "./replica-manager.js";

export interface ReplicaFetcherConfig {
  readonly brokerId: number;
  /** replica.fetch.max.bytes */
  readonly fetchMaxBytes: number;
  /** replica.fetch.response.max.bytes */
  readonly responseMaxBytes: number;
  /** replica.fetch.wait.max.ms */
  readonly maxWaitMs: number;
  /** replica.fetch.min.bytes */
  readonly minBytes: number;
  /** replica.fetch.backoff.ms */
  readonly backoffMs: number;
  /** replica.socket.timeout.ms */
  readonly socketTimeoutMs: number;
  /** The current broker epoch (Fetch's replica state). */
  readonly brokerEpoch: () => bigint;
}

export interface FetchState {
  readonly topicPartition: TopicPartition;
  fetchOffset: bigint;
  readonly currentLeaderEpoch: number;
  /** Skipped until then (after a partition error). */
  delayedUntilMs: number;
  /** Still finding its truncation point: the epoch to ask the leader about next. */
  truncatingEpoch: number | undefined;
  /** Leader's high watermark minus this log's end offset at the last fetch response (MaxLag). */
  lag?: bigint;
}

/** Highest Fetch version the fetcher sends (v12: topics by name, replica id in the request). */
const REPLICA_FETCH_VERSION = 12;

export class ReplicaFetcherThread {
  private readonly partitions = new Map<string, FetchState>();
  private conn: BrokerConnection | undefined;
  private running = false;
  private stopped = false;

  constructor(
    readonly leaderId: number,
    private readonly endpoint: () => { host: string; port: number } | undefined,
    private readonly replicaManager: ReplicaManager,
    private readonly config: ReplicaFetcherConfig,
    private readonly time: Time,
    private readonly log: Logger,
  ) {}

  get partitionCount(): number {
    return this.partitions.size;
  }

  /** The largest lag of its partitions as of their last fetch responses (Kafka's FetcherLagMetrics). */
  maxLag(): bigint {
    let max = 0n;
    for (const s of this.partitions.values()) if (s.lag !== undefined && s.lag > max) max = s.lag;
    return max;
  }

  addPartitions(states: readonly FetchState[]): void {
    for (const s of states) this.partitions.set(topicPartitionKey(s.topicPartition), s);
    if (!this.running && !this.stopped) void this.run();
  }

  removePartitions(tps: readonly TopicPartition[]): void {
    for (const tp of tps) this.partitions.delete(topicPartitionKey(tp));
  }

  shutdown(): void {
    this.stopped = true;
    this.partitions.clear();
    this.conn?.close();
    this.conn = undefined;
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      while (!this.stopped && this.partitions.size > 0) {
        try {
          await this.doWork();
        } catch (e) {
          if (this.stopped) return;
          this.log.warn(`Error in fetch from leader ${this.leaderId}: ${(e as Error).message}`);
          this.conn?.close();
          this.conn = undefined;
          await sleep(this.config.backoffMs);
        }
      }
    } finally {
      this.running = false;
    }
  }

  private async connection(): Promise<BrokerConnection> {
    if (this.conn !== undefined && !this.conn.closed) return this.conn;
    const e = this.endpoint();
    if (e === undefined) throw new Error(`no endpoint known for leader ${this.leaderId}`);
    this.conn = await BrokerConnection.connect(e.host, e.port, {
      clientId: `broker-${this.config.brokerId}-fetcher-0`,
      requestTimeoutMs: this.config.socketTimeoutMs,
      connectTimeoutMs: Math.min(10_000, this.config.socketTimeoutMs),
    });
    return this.conn;
  }

  private async doWork(): Promise<void> {
    const now = this.time.milliseconds();
    const ready = [...this.partitions.values()].filter((s) => s.delayedUntilMs <= now);
    if (ready.length === 0) {
      await sleep(Math.min(this.config.backoffMs, 100));
      return;
    }
    const conn = await this.connection();
    const truncating = ready.filter((s) => s.truncatingEpoch !== undefined);
    if (truncating.length > 0) {
      await this.truncate(conn, truncating);
      return;
    }
    const byTopic = new Map<string, FetchRequest["topics"][number]>();
    for (const s of ready) {
      const log = this.replicaManager.getPartition(s.topicPartition)?.log;
      if (log === undefined) continue;
      const t = getOrCreate(byTopic, s.topicPartition.topic, () => ({
        topic: s.topicPartition.topic,
        topicId: "AAAAAAAAAAAAAAAAAAAAAA",
        partitions: [],
      }));
      t.partitions.push({
        partition: s.topicPartition.partition,
        currentLeaderEpoch: s.currentLeaderEpoch,
        fetchOffset: s.fetchOffset,
        lastFetchedEpoch: -1,
        logStartOffset: log.logStartOffset,
        partitionMaxBytes: this.config.fetchMaxBytes,
        replicaDirectoryId: "AAAAAAAAAAAAAAAAAAAAAA",
      });
    }
    if (byTopic.size === 0) {
      await sleep(this.config.backoffMs);
      return;
    }
    const version = Math.min(REPLICA_FETCH_VERSION, conn.versionFor(Apis.Fetch));
    const id = this.config.brokerId;
    const res = await conn.send(
      Apis.Fetch,
      version,
      {
        clusterId: null,
        replicaId: version >= 15 ? -1 : id,
        // v15+ carries the replica in replica_state; v12 in replica_id (replica_state must stay default).
        replicaState:
          version >= 15
            ? { replicaId: id, replicaEpoch: this.config.brokerEpoch() }
            : { replicaId: -1, replicaEpoch: -1n },
        maxWaitMs: this.config.maxWaitMs,
        minBytes: this.config.minBytes,
        maxBytes: this.config.responseMaxBytes,
        isolationLevel: 0,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [...byTopic.values()],
        forgottenTopicsData: [],
        rackId: "",
      },
      { timeoutMs: this.config.maxWaitMs + this.config.socketTimeoutMs },
    );
    if (res.errorCode !== ErrorCode.NONE) throw new Error(`Fetch failed with error code ${res.errorCode}`);
    for (const t of res.responses) {
      for (const p of t.partitions) this.processPartition({ topic: t.topic, partition: p.partitionIndex }, p);
    }
  }

  /** One round of OffsetForLeaderEpoch for the partitions still finding where to truncate. */
  private async truncate(conn: BrokerConnection, states: readonly FetchState[]): Promise<void> {
    const byTopic = new Map<
      string,
      Array<{ partition: number; currentLeaderEpoch: number; leaderEpoch: number }>
    >();
    for (const s of states) {
      const l = getOrCreate(byTopic, s.topicPartition.topic, () => []);
      l.push({
        partition: s.topicPartition.partition,
        currentLeaderEpoch: s.currentLeaderEpoch,
        leaderEpoch: s.truncatingEpoch ?? -1,
      });
    }
    const version = Math.min(4, conn.versionFor(Apis.OffsetForLeaderEpoch));
    const res = await conn.send(Apis.OffsetForLeaderEpoch, version, {
      replicaId: this.config.brokerId,
      topics: [...byTopic].map(([topic, partitions]) => ({ topic, partitions })),
    });
    for (const t of res.topics) {
      for (const p of t.partitions) {
        const tp = { topic: t.topic, partition: p.partition };
        const state = this.partitions.get(topicPartitionKey(tp));
        const log = this.replicaManager.getPartition(tp)?.log;
        if (state === undefined || log === undefined || state.truncatingEpoch === undefined) continue;
        if (p.errorCode !== ErrorCode.NONE) {
          state.delayedUntilMs = this.time.milliseconds() + this.config.backoffMs;
          continue;
        }
        this.applyEpochEndOffset(tp, state, p.leaderEpoch, p.endOffset);
      }
    }
  }

  /** Kafka's getOffsetTruncationState for one partition, and the truncation it decides. */
  private applyEpochEndOffset(
    tp: TopicPartition,
    state: FetchState,
    leaderEpoch: number,
    leaderEnd: bigint,
  ): void {
    const log = this.replicaManager.getPartition(tp)?.log;
    if (log === undefined) return;
    const leo = log.logEndOffset;
    const min = (a: bigint, b: bigint): bigint => (a < b ? a : b);
    let target: bigint;
    let next: number | undefined;
    if (leaderEnd < 0n) {
      target = log.highWatermark; // the leader knows no epochs: Kafka falls back to the high watermark
    } else if (leaderEpoch < 0) {
      target = min(leaderEnd, leo);
    } else {
      const mine = log.leaderEpochCache?.endOffsetFor(leaderEpoch, leo);
      if (mine === undefined || mine.epoch < 0) target = min(leaderEnd, leo);
      else {
        target = min(leaderEnd, mine.endOffset);
        // An older epoch of ours than the leader's answer: ask again about it (KIP-279).
        if (mine.epoch !== leaderEpoch) next = mine.epoch;
      }
    }
    if (target < leo) {
      this.log.info(
        `Truncating partition ${topicPartitionKey(tp)} to offset ${target} (leader epoch ${leaderEpoch} ends at ${leaderEnd}; log end offset was ${leo})`,
      );
      log.truncateTo(target);
    }
    state.truncatingEpoch = next;
    state.fetchOffset = log.logEndOffset;
  }

  private processPartition(
    tp: TopicPartition,
    p: {
      errorCode: number;
      highWatermark: bigint;
      logStartOffset: bigint;
      records: Buffer | null;
    },
  ): void {
    const key = topicPartitionKey(tp);
    const state = this.partitions.get(key);
    if (state === undefined) return; // no longer followed here
    const partition = this.replicaManager.getPartition(tp);
    const log = partition?.log;
    if (partition === undefined || log === undefined || partition.isLeader) {
      this.partitions.delete(key);
      return;
    }
    switch (p.errorCode) {
      case ErrorCode.NONE: {
        const records = p.records;
        if (records !== null && records.length > 0) {
          log.appendAsFollower(records);
        }
        state.fetchOffset = log.logEndOffset;
        state.lag = p.highWatermark > log.logEndOffset ? p.highWatermark - log.logEndOffset : 0n;
        // biome-ignore lint/complexity/useMathMinMax: bigints (Math.min takes numbers)
        const hw = p.highWatermark < log.logEndOffset ? p.highWatermark : log.logEndOffset;
        if (hw > log.highWatermark) log.updateHighWatermark(hw);
        return;
      }
      case ErrorCode.OFFSET_OUT_OF_RANGE: {
        // Ahead of the leader: back to its high watermark; behind its log start: start over there.
        if (state.fetchOffset < p.logStartOffset) log.truncateFullyAndStartAt(p.logStartOffset);
        else if (p.highWatermark >= 0n && state.fetchOffset > p.highWatermark)
          log.truncateTo(p.highWatermark);
        this.log.info(
          `Fetch offset ${state.fetchOffset} of ${key} is out of range on leader ${this.leaderId}; continuing from ${log.logEndOffset}`,
        );
        state.fetchOffset = log.logEndOffset;
        return;
      }
      default:
        // NOT_LEADER_OR_FOLLOWER, FENCED/UNKNOWN_LEADER_EPOCH, …: wait for the controller's next LeaderAndIsr.
        state.delayedUntilMs = this.time.milliseconds() + this.config.backoffMs;
    }
  }
}

function sleep(ms: number): Promise<void> {
  // The fetch loop's pause between attempts: real time, as the socket it waits on.
  return new Promise((r) => setTimeout(r, ms));
}
