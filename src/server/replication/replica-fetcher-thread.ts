// ReplicaFetcherThread: a follower's fetch loop against one leader broker (Kafka's ReplicaFetcherThread /
// AbstractFetcherThread); num.replica.fetchers of them per leader, each with its own connection (client id
// broker-<id>-fetcher-<fetcherId>). Sends Fetch (v12, replica id = this broker) for the partitions it
// follows on that leader in an incremental fetch session (KIP-227, fetch-session-handler.ts), appends what
// comes back as it is (offsets, leader epochs, producer state and markers kept:
// UnifiedLog.appendAsFollower), moves the follower's high watermark to min(leader HW, own LEO), and backs
// off (replica.fetch.backoff.ms) after an error. The leader learns the follower's LEO from the fetch offset.
// Truncation by leader epoch (KIP-101, KIP-279's iterations), as Kafka 2.7+ does it: every fetch carries
// the epoch of the follower's last batch (LastFetchedEpoch); when the leader's log diverged, the answer is a
// DivergingEpoch {epoch, end offset} and the follower truncates to min(that end offset, its own end of that
// epoch) at once (Kafka's truncateOnFetchResponse); when its own log ends that epoch under an older one, the
// next fetch carries the older epoch and the leader answers again until they agree. A leader below Fetch
// v12 gets the older way: OffsetForLeaderEpoch before the first fetch, asked again per iteration. A log
// without epochs truncates to its high watermark before fetching (Kafka's fallback).
// Replication throttling (follower side, Kafka's shouldFollowerThrottle): while the follower quota is
// exceeded, partitions in follower.replication.throttled.replicas that are not caught up are left out of
// the fetch (a fetch left empty waits until the quota allows bytes again, at most replica.fetch.backoff.ms);
// their bytes received are recorded.

import { BrokerConnection } from "../../client/network/broker-connection.js";
import type { Logger } from "../../common/logger.js";
import { getOrCreate } from "../../common/maps.js";
import type { Time } from "../../common/time.js";
import { type TopicPartition, topicPartitionKey } from "../../common/topic-partition.js";
import { ErrorCode } from "../../protocol/errors.js";
import { Apis } from "../../protocol/generated/api-table.js";
import type { FetchRequest } from "../../protocol/generated/messages/FetchRequest.js";
import type { FetchResponse } from "../../protocol/generated/messages/FetchResponse.js";
import {
  authenticationFailureLine,
  type InterBrokerSecurity,
  isAuthenticationFailure,
} from "../inter-broker-security.js";
import type { ReplicaQuota } from "../quota/replication-quota-manager.js";
import { ZERO_UUID } from "./fetch-session.js";
import { FetchSessionHandler, type SessionPartitionData } from "./fetch-session-handler.js";
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
  /** The inter-broker listener's TLS and SASL. */
  readonly security?: InterBrokerSecurity;
  /** The follower replication quota (Kafka's quotas.follower); none: unthrottled. */
  readonly quota?: ReplicaQuota;
}

export interface FetchState {
  readonly topicPartition: TopicPartition;
  fetchOffset: bigint;
  readonly currentLeaderEpoch: number;
  /** Skipped until then (after a partition error). */
  delayedUntilMs: number;
  /**
   * Still to be checked by leader epoch before fetching: the epoch to ask the leader about. Only used
   * with a leader below Fetch v12; from v12 the fetch itself carries the epoch and the field is cleared.
   */
  truncatingEpoch: number | undefined;
  /** Leader's high watermark minus this log's end offset at the last fetch response (MaxLag). */
  lag?: bigint;
}

/** Highest Fetch version the fetcher sends (v12: topics by name, replica id in the request). */
const REPLICA_FETCH_VERSION = 12;
/** The first Fetch version with LastFetchedEpoch / DivergingEpoch (truncation on fetch). */
const TRUNCATION_ON_FETCH_VERSION = 12;

export class ReplicaFetcherThread {
  private readonly partitions = new Map<string, FetchState>();
  private conn: BrokerConnection | undefined;
  private running = false;
  private stopped = false;
  private readonly session: FetchSessionHandler;
  /** Truncations decided from DivergingEpoch answers, and OffsetForLeaderEpoch requests sent. */
  truncationsOnFetch = 0;
  offsetForLeaderEpochRequests = 0;
  /** Kafka's FetcherStats of this fetcher: Fetch requests sent and record bytes received. */
  fetchRequests = 0;
  fetchedBytes = 0;

  constructor(
    readonly leaderId: number,
    readonly fetcherId: number,
    private readonly endpoint: () => { host: string; port: number } | undefined,
    private readonly replicaManager: ReplicaManager,
    private readonly config: ReplicaFetcherConfig,
    private readonly time: Time,
    private readonly log: Logger,
  ) {
    this.session = new FetchSessionHandler(leaderId, (m) => this.log.info(m));
  }

  /** Kafka's thread name, the clientId label of its FetcherStats / FetcherLagMetrics. */
  get name(): string {
    return `ReplicaFetcherThread-${this.fetcherId}-${this.leaderId}`;
  }

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
          if (isAuthenticationFailure(e))
            this.log.error(authenticationFailureLine(this.leaderId, this.endpoint(), e as Error));
          else this.log.warn(`Error in fetch from leader ${this.leaderId}: ${(e as Error).message}`);
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
      clientId: `broker-${this.config.brokerId}-fetcher-${this.fetcherId}`,
      requestTimeoutMs: this.config.socketTimeoutMs,
      connectTimeoutMs: Math.min(10_000, this.config.socketTimeoutMs),
      ...this.config.security,
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
    const version = Math.min(REPLICA_FETCH_VERSION, conn.versionFor(Apis.Fetch));
    const truncateOnFetch = version >= TRUNCATION_ON_FETCH_VERSION;
    if (truncateOnFetch) {
      for (const s of ready) s.truncatingEpoch = undefined; // the fetch's LastFetchedEpoch checks it
    } else {
      const truncating = ready.filter((s) => s.truncatingEpoch !== undefined);
      if (truncating.length > 0) {
        await this.truncate(conn, truncating);
        return;
      }
    }
    const next: SessionPartitionData[] = [];
    const quota = this.config.quota;
    // Kafka's shouldFollowerThrottle, evaluated once per fetch: the quota measures what came in so far.
    const quotaExceeded = quota?.isQuotaExceeded() === true;
    let throttledOut = false;
    for (const s of ready) {
      const log = this.replicaManager.getPartition(s.topicPartition)?.log;
      if (log === undefined) continue;
      // Not asked for while the follower quota is exceeded, unless caught up (lag 0 at the last response).
      const inSync = s.lag !== undefined && s.lag <= 0n;
      if (quotaExceeded && !inSync && quota?.isThrottled(s.topicPartition)) {
        throttledOut = true;
        continue;
      }
      next.push({
        topic: s.topicPartition.topic,
        partition: s.topicPartition.partition,
        currentLeaderEpoch: s.currentLeaderEpoch,
        fetchOffset: s.fetchOffset,
        lastFetchedEpoch: truncateOnFetch ? (log.leaderEpochCache?.latestEpoch() ?? -1) : -1,
        logStartOffset: log.logStartOffset,
        partitionMaxBytes: this.config.fetchMaxBytes,
      });
    }
    if (next.length === 0) {
      // Kafka waits replica.fetch.backoff.ms; when only the throttle emptied the fetch, Tributary waits just
      // until the quota allows bytes again (at most that long): a 1 s wait each time would hold the moves
      // some 10 % under the rate set.
      const wait = throttledOut ? Math.max(10, quota?.throttleTimeMs() ?? 0) : this.config.backoffMs;
      await sleep(Math.min(wait, this.config.backoffMs));
      return;
    }
    const built = this.session.build(next);
    const byTopic = new Map<string, FetchRequest["topics"][number]>();
    for (const p of built.toSend) {
      const t = getOrCreate(byTopic, p.topic, () => ({ topic: p.topic, topicId: ZERO_UUID, partitions: [] }));
      t.partitions.push({
        partition: p.partition,
        currentLeaderEpoch: p.currentLeaderEpoch,
        fetchOffset: p.fetchOffset,
        lastFetchedEpoch: p.lastFetchedEpoch,
        logStartOffset: p.logStartOffset,
        partitionMaxBytes: p.partitionMaxBytes,
        replicaDirectoryId: ZERO_UUID,
      });
    }
    const forgotten = new Map<string, FetchRequest["forgottenTopicsData"][number]>();
    for (const f of built.forgotten) {
      getOrCreate(forgotten, f.topic, () => ({
        topic: f.topic,
        topicId: ZERO_UUID,
        partitions: [],
      })).partitions.push(f.partition);
    }
    const id = this.config.brokerId;
    let res: FetchResponse;
    this.fetchRequests++;
    try {
      res = await conn.send(
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
          sessionId: built.sessionId,
          sessionEpoch: built.sessionEpoch,
          topics: [...byTopic.values()],
          forgottenTopicsData: [...forgotten.values()],
          rackId: "",
        },
        { timeoutMs: this.config.maxWaitMs + this.config.socketTimeoutMs },
      );
    } catch (e) {
      this.session.handleError();
      throw e;
    }
    if (!this.session.handleResponse(res)) {
      // A session error: the next request is a full fetch, at once. Anything else backs off.
      if (
        res.errorCode === ErrorCode.NONE ||
        res.errorCode === ErrorCode.FETCH_SESSION_ID_NOT_FOUND ||
        res.errorCode === ErrorCode.INVALID_FETCH_SESSION_EPOCH
      )
        return;
      throw new Error(`Fetch failed with error code ${res.errorCode}`);
    }
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
    this.offsetForLeaderEpochRequests++;
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
        state.truncatingEpoch = this.applyEpochEndOffset(
          tp,
          state,
          p.leaderEpoch,
          p.endOffset,
          "OffsetForLeaderEpoch",
        );
      }
    }
  }

  /**
   * Kafka's getOffsetTruncationState for one partition, and the truncation it decides; the fetch offset
   * becomes the new log end. Returns the epoch to check next when the truncation is not complete (this
   * log ends the leader's epoch under an older one of its own: KIP-279), else undefined.
   */
  private applyEpochEndOffset(
    tp: TopicPartition,
    state: FetchState,
    leaderEpoch: number,
    leaderEnd: bigint,
    source: "OffsetForLeaderEpoch" | "diverging epoch",
  ): number | undefined {
    const log = this.replicaManager.getPartition(tp)?.log;
    if (log === undefined) return undefined;
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
        `Truncating partition ${topicPartitionKey(tp)} to offset ${target} (${source}: leader epoch ${leaderEpoch} ends at ${leaderEnd}; log end offset was ${leo})`,
      );
      log.truncateTo(target);
    }
    state.fetchOffset = log.logEndOffset;
    return next;
  }

  private processPartition(
    tp: TopicPartition,
    p: {
      errorCode: number;
      highWatermark: bigint;
      logStartOffset: bigint;
      records: Buffer | null;
      divergingEpoch: { epoch: number; endOffset: bigint };
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
        const d = p.divergingEpoch;
        if (d.epoch >= 0 || d.endOffset >= 0n) {
          // Truncate now; the watermarks come with the next fetch, from the truncated log end (Kafka).
          this.truncationsOnFetch++;
          const before = { offset: state.fetchOffset, epoch: log.leaderEpochCache?.latestEpoch() };
          this.applyEpochEndOffset(tp, state, d.epoch, d.endOffset, "diverging epoch");
          const cache = log.leaderEpochCache;
          if (state.fetchOffset === before.offset && cache !== undefined) {
            // Nothing to truncate, yet our latest epoch is newer than the leader's answer: an epoch we led
            // without writing a batch (its entry starts at our log end). Forget it, as a follower that never
            // led would not have it; the next fetch then carries the epoch of our last batch.
            if ((cache.latestEpoch() ?? -1) > d.epoch) cache.truncateFromEnd(log.logEndOffset);
            if (cache.latestEpoch() === before.epoch) {
              // The same fetch again would get the same answer: back off rather than spin.
              this.log.warn(
                `Leader ${this.leaderId} answered diverging epoch ${d.epoch} (end offset ${d.endOffset}) for ${key} at fetch offset ${state.fetchOffset}, which changes nothing here`,
              );
              state.delayedUntilMs = this.time.milliseconds() + this.config.backoffMs;
            }
          }
          return;
        }
        const records = p.records;
        if (records !== null && records.length > 0) {
          this.fetchedBytes += records.length;
          log.appendAsFollower(records);
          if (this.config.quota?.isThrottled(tp)) this.config.quota.record(records.length);
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
        // Inside the leader's range yet out of range: the leader could not place our last fetched epoch
        // (Kafka continues from its log end too); back off rather than spin until leadership changes.
        if (log.logEndOffset === state.fetchOffset && log.leaderEpochCache?.latestEpoch() !== undefined)
          state.delayedUntilMs = this.time.milliseconds() + this.config.backoffMs;
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
