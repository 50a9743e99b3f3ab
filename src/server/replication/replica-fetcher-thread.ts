// ReplicaFetcherThread: a follower's fetch loop against one leader broker (Kafka's ReplicaFetcherThread /
// AbstractFetcherThread); num.replica.fetchers of them per leader, each with its own connection (client id
// broker-<id>-fetcher-<fetcherId>). Sends Fetch (v12, replica id = this broker) for the partitions it
// follows on that leader in an incremental fetch session (KIP-227, fetch-session-handler.ts), appends what
// comes back as it is (offsets, leader epochs, producer state and markers kept:
// UnifiedLog.appendAsFollower), moves the follower's high watermark to min(leader HW, own LEO), and backs
// off (replica.fetch.backoff.ms) after an error. The leader learns the follower's LEO from the fetch offset.
//
// Each partition has Kafka's PartitionFetchState: fetch offset, lag, current leader epoch, delay, state
// (Truncating | Fetching) and last fetched epoch. A state is replaced, never changed in place. A partition
// is added Truncating (a partition already here at the same leader epoch keeps its state: Kafka's
// addPartitions) and becomes Fetching once its truncation is settled:
// - with a leader at Fetch v12+ and a log with leader epochs, at once — every fetch carries the epoch of
//   the follower's last batch (LastFetchedEpoch) and a diverged log is answered with a DivergingEpoch
//   {epoch, end offset}; the follower truncates to min(that end offset, its own end of that epoch) (Kafka
//   2.7+'s truncateOnFetchResponse) and, when its log ends that epoch under an older one (KIP-279), the
//   next fetch carries the older epoch until they agree;
// - with a leader below Fetch v12, after OffsetForLeaderEpoch answers (asked again per KIP-279 iteration);
// - a log without epochs truncates to its high watermark first (Kafka's truncateToHighWatermark).
// A fetch response is used for a partition only when its state still has the fetch offset and leader epoch
// the request carried and is ready to fetch (Fetching, not delayed) — Kafka's processFetchRequest rule: a
// partition removed and added again at a new leader epoch, truncated, or moved meanwhile drops the data
// (logged at DEBUG). The same holds for OffsetForLeaderEpoch answers.
// Replication throttling (follower side, Kafka's shouldFollowerThrottle): while the follower quota is
// exceeded, partitions in follower.replication.throttled.replicas that are not caught up are left out of
// the fetch (a fetch left empty waits until the quota allows bytes again, at most replica.fetch.backoff.ms);
// their bytes received are recorded.
// shutdown() is final: no connect or request starts after it, a connect in flight is aborted (its socket
// destroyed), the connection closed and the backoff wait cut short; it resolves once the loop has ended.

import { BrokerConnection } from "../../client/network/broker-connection.js";
import { type Logger, logLevelEnabled } from "../../common/logger.js";
import { getOrCreate } from "../../common/maps.js";
import type { Time } from "../../common/time.js";
import { type TopicPartition, topicPartitionKey } from "../../common/topic-partition.js";
import { ErrorCode, errorNameOf } from "../../protocol/errors.js";
import { Apis } from "../../protocol/generated/api-table.js";
import type { FetchRequest } from "../../protocol/generated/messages/FetchRequest.js";
import type { FetchResponse } from "../../protocol/generated/messages/FetchResponse.js";
import type { UnifiedLog } from "../../storage/unified-log.js";
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

/** Kafka's ReplicaState: where a partition of a fetcher stands. */
export type ReplicaState = "Truncating" | "Fetching";

/** Kafka's PartitionFetchState: one partition of a fetcher. Replaced on every change, never mutated. */
export interface PartitionFetchState {
  readonly topicPartition: TopicPartition;
  /** The offset the next fetch asks for (this log's end once truncation is settled). */
  readonly fetchOffset: bigint;
  /** Leader's high watermark minus this log's end offset at the last fetch response (MaxLag). */
  readonly lag: bigint | undefined;
  /** The leader epoch this broker knows for the partition (sent as CurrentLeaderEpoch). */
  readonly currentLeaderEpoch: number;
  /** Kafka's delay: neither fetched nor truncated before this time (ms since the epoch; 0: none). */
  readonly delayedUntilMs: number;
  readonly state: ReplicaState;
  /**
   * Fetching: the epoch of this log's last batch, the next fetch's LastFetchedEpoch (undefined: none).
   * Truncating with a leader below Fetch v12: the epoch the next OffsetForLeaderEpoch asks about
   * (undefined: this log's latest).
   */
  readonly lastFetchedEpoch: number | undefined;
}

/** What the manager hands a fetcher for a partition (Kafka's InitialFetchState). */
export interface InitialFetchState {
  readonly topicPartition: TopicPartition;
  readonly currentLeaderEpoch: number;
  /** Where fetching starts once truncation is settled: this log's end offset. */
  readonly initOffset: bigint;
}

/** Kafka's isReadyForFetch: Fetching and not delayed. */
export function isReadyForFetch(s: PartitionFetchState, nowMs: number): boolean {
  return s.state === "Fetching" && s.delayedUntilMs <= nowMs;
}

/** Kafka's isTruncating: Truncating and not delayed. */
export function isTruncating(s: PartitionFetchState, nowMs: number): boolean {
  return s.state === "Truncating" && s.delayedUntilMs <= nowMs;
}

function describeState(s: PartitionFetchState): string {
  return `FetchState(fetchOffset=${s.fetchOffset}, currentLeaderEpoch=${s.currentLeaderEpoch}, lastFetchedEpoch=${s.lastFetchedEpoch ?? "none"}, state=${s.state}, lag=${s.lag ?? "none"}, delayedUntilMs=${s.delayedUntilMs})`;
}

function latestEpochOf(log: UnifiedLog): number | undefined {
  return log.leaderEpochCache?.latestEpoch();
}

/** Highest Fetch version the fetcher sends (v12: topics by name, replica id in the request). */
const REPLICA_FETCH_VERSION = 12;
/** The first Fetch version with LastFetchedEpoch / DivergingEpoch (truncation on fetch). */
const TRUNCATION_ON_FETCH_VERSION = 12;

export class ReplicaFetcherThread {
  private readonly partitions = new Map<string, PartitionFetchState>();
  private conn: BrokerConnection | undefined;
  /** The fetch loop while it runs. */
  private loop: Promise<void> | undefined;
  private stopped = false;
  /** Aborted by shutdown(): a connect in flight ends at once. */
  private readonly stopping = new AbortController();
  /** The backoff wait in progress (cut short by shutdown() and addPartitions()). */
  private backoff: { readonly timer: NodeJS.Timeout; readonly wake: () => void } | undefined;
  private readonly session: FetchSessionHandler;
  /** Truncations decided from DivergingEpoch answers, and OffsetForLeaderEpoch requests sent. */
  truncationsOnFetch = 0;
  offsetForLeaderEpochRequests = 0;
  /** Kafka's FetcherStats of this fetcher: Fetch requests sent and record bytes received. */
  fetchRequests = 0;
  fetchedBytes = 0;
  /** Partitions of fetch (and OffsetForLeaderEpoch) responses dropped because their state changed meanwhile. */
  droppedResponses = 0;

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

  /** Whether shutdown() was called. */
  get isShutdown(): boolean {
    return this.stopped;
  }

  /** The partition's fetch state here, if it is fetched here (Kafka's fetchState). */
  fetchState(tp: TopicPartition): PartitionFetchState | undefined {
    return this.partitions.get(topicPartitionKey(tp));
  }

  /** The largest lag of its partitions as of their last fetch responses (Kafka's FetcherLagMetrics). */
  maxLag(): bigint {
    let max = 0n;
    for (const s of this.partitions.values()) if (s.lag !== undefined && s.lag > max) max = s.lag;
    return max;
  }

  /**
   * Kafka's addPartitions: a partition fetched here at the same leader epoch keeps its state (and its place
   * in the fetch session); any other gets a new state, Truncating, at `initOffset`. Returns the partitions
   * whose state is new. Nothing is added after shutdown().
   */
  addPartitions(initial: readonly InitialFetchState[]): TopicPartition[] {
    if (this.stopped) return [];
    const added: TopicPartition[] = [];
    for (const i of initial) {
      const key = topicPartitionKey(i.topicPartition);
      const current = this.partitions.get(key);
      if (current !== undefined && current.currentLeaderEpoch === i.currentLeaderEpoch) continue;
      this.partitions.set(key, {
        topicPartition: i.topicPartition,
        fetchOffset: i.initOffset,
        lag: undefined,
        currentLeaderEpoch: i.currentLeaderEpoch,
        delayedUntilMs: 0,
        state: "Truncating",
        lastFetchedEpoch: undefined,
      });
      added.push(i.topicPartition);
    }
    if (this.partitions.size > 0) {
      if (this.loop === undefined) this.loop = this.run();
      else this.wakeUp(); // Kafka signals partitionMapCond: a backoff wait ends
    }
    return added;
  }

  removePartitions(tps: readonly TopicPartition[]): void {
    for (const tp of tps) this.partitions.delete(topicPartitionKey(tp));
  }

  /**
   * Stops for good: no connect or request starts after this, a connect in flight is aborted, the
   * connection closed and a backoff wait ended. Resolves once the fetch loop has returned.
   */
  shutdown(): Promise<void> {
    if (!this.stopped) {
      this.stopped = true;
      this.partitions.clear();
      this.stopping.abort();
      this.closeConnection();
      this.wakeUp();
    }
    return this.loop ?? Promise.resolve();
  }

  private closeConnection(): void {
    this.conn?.close();
    this.conn = undefined;
  }

  private async run(): Promise<void> {
    try {
      while (!this.stopped && this.partitions.size > 0) {
        try {
          await this.doWork();
        } catch (e) {
          if (this.stopped) return;
          if (isAuthenticationFailure(e))
            this.log.error(authenticationFailureLine(this.leaderId, this.endpoint(), e as Error));
          else this.log.warn(`Error in fetch from leader ${this.leaderId}: ${(e as Error).message}`);
          this.closeConnection();
          await this.pause(this.config.backoffMs);
        }
      }
    } finally {
      this.loop = undefined;
    }
  }

  /**
   * The fetch loop's wait between attempts: real time, as the socket it waits on. Ends early on
   * shutdown() or when partitions are added.
   */
  private pause(ms: number): Promise<void> {
    if (this.stopped || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        if (this.backoff?.wake === wake) this.backoff = undefined;
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.backoff = { timer, wake };
    });
  }

  private wakeUp(): void {
    this.backoff?.wake();
  }

  private shutDownError(): Error {
    return new Error(`fetcher ${this.name} is shut down`);
  }

  private async connection(): Promise<BrokerConnection> {
    if (this.conn !== undefined && !this.conn.closed) return this.conn;
    if (this.stopped) throw this.shutDownError();
    const e = this.endpoint();
    if (e === undefined) throw new Error(`no endpoint known for leader ${this.leaderId}`);
    const conn = await BrokerConnection.connect(e.host, e.port, {
      clientId: `broker-${this.config.brokerId}-fetcher-${this.fetcherId}`,
      requestTimeoutMs: this.config.socketTimeoutMs,
      connectTimeoutMs: Math.min(10_000, this.config.socketTimeoutMs),
      ...this.config.security,
      signal: this.stopping.signal,
    });
    if (this.stopped) {
      conn.close();
      throw this.shutDownError();
    }
    this.conn = conn;
    return conn;
  }

  /** Replaces `s` (when it is still the partition's state) with `s` changed by `patch`. */
  private update(
    s: PartitionFetchState,
    patch: Partial<Omit<PartitionFetchState, "topicPartition">>,
  ): PartitionFetchState {
    const key = topicPartitionKey(s.topicPartition);
    if (this.partitions.get(key) !== s) return s;
    const next = { ...s, ...patch };
    this.partitions.set(key, next);
    return next;
  }

  /** Kafka's delayPartitions: not fetched (nor truncated) for replica.fetch.backoff.ms, unless delayed already. */
  private delay(s: PartitionFetchState): void {
    const now = this.time.milliseconds();
    if (s.delayedUntilMs > now) return;
    this.update(s, { delayedUntilMs: now + this.config.backoffMs });
  }

  private dropped(
    what: string,
    tp: TopicPartition,
    sent: string,
    current: PartitionFetchState | undefined,
  ): void {
    this.droppedResponses++;
    if (!logLevelEnabled("DEBUG")) return;
    this.log.debug(
      `Dropping the ${what} response for ${topicPartitionKey(tp)}: it answers a request made at ${sent}, the partition is now ${current === undefined ? "no longer fetched here" : describeState(current)}`,
    );
  }

  private async doWork(): Promise<void> {
    const now = this.time.milliseconds();
    if (![...this.partitions.values()].some((s) => s.delayedUntilMs <= now)) {
      await this.pause(Math.min(this.config.backoffMs, 100));
      return;
    }
    const conn = await this.connection();
    const version = Math.min(REPLICA_FETCH_VERSION, conn.versionFor(Apis.Fetch));
    const truncateOnFetch = version >= TRUNCATION_ON_FETCH_VERSION;
    const asked = await this.maybeTruncate(conn, truncateOnFetch);
    if (this.stopped) return;
    await this.maybeFetch(conn, version, truncateOnFetch, asked);
  }

  /**
   * Settles the truncation of the partitions in the Truncating state (Kafka's maybeTruncate): a log without
   * leader epochs truncates to its high watermark; with a leader at Fetch v12+ the fetch itself checks the
   * log (Fetching at once); below it, one round of OffsetForLeaderEpoch. Returns whether it sent one.
   */
  private async maybeTruncate(conn: BrokerConnection, truncateOnFetch: boolean): Promise<boolean> {
    const now = this.time.milliseconds();
    const toAsk: Array<{ state: PartitionFetchState; epoch: number }> = [];
    for (const s of [...this.partitions.values()]) {
      if (!isTruncating(s, now)) continue;
      const log = this.replicaManager.getPartition(s.topicPartition)?.log;
      if (log === undefined) continue;
      const latest = latestEpochOf(log);
      if (latest === undefined) {
        // Kafka's truncateToHighWatermark.
        if (log.logEndOffset > log.highWatermark) {
          this.log.info(
            `Truncating partition ${topicPartitionKey(s.topicPartition)} to local high watermark ${log.highWatermark}`,
          );
          log.truncateTo(log.highWatermark);
        }
        this.update(s, { fetchOffset: log.logEndOffset, state: "Fetching", lastFetchedEpoch: undefined });
      } else if (truncateOnFetch) {
        this.update(s, { fetchOffset: log.logEndOffset, state: "Fetching", lastFetchedEpoch: latest });
      } else {
        toAsk.push({ state: s, epoch: s.lastFetchedEpoch ?? latest });
      }
    }
    if (toAsk.length === 0) return false;
    await this.truncateToEpochEndOffsets(conn, toAsk);
    return true;
  }

  /** One round of OffsetForLeaderEpoch for the partitions still finding where to truncate. */
  private async truncateToEpochEndOffsets(
    conn: BrokerConnection,
    asked: ReadonlyArray<{ state: PartitionFetchState; epoch: number }>,
  ): Promise<void> {
    const byTopic = new Map<
      string,
      Array<{ partition: number; currentLeaderEpoch: number; leaderEpoch: number }>
    >();
    const askedByKey = new Map<string, PartitionFetchState>();
    for (const { state: s, epoch } of asked) {
      askedByKey.set(topicPartitionKey(s.topicPartition), s);
      getOrCreate(byTopic, s.topicPartition.topic, () => []).push({
        partition: s.topicPartition.partition,
        currentLeaderEpoch: s.currentLeaderEpoch,
        leaderEpoch: epoch,
      });
    }
    const version = Math.min(4, conn.versionFor(Apis.OffsetForLeaderEpoch));
    if (this.stopped) return;
    this.offsetForLeaderEpochRequests++;
    const res = await conn.send(Apis.OffsetForLeaderEpoch, version, {
      replicaId: this.config.brokerId,
      topics: [...byTopic].map(([topic, partitions]) => ({ topic, partitions })),
    });
    if (this.stopped) return;
    for (const t of res.topics) {
      for (const p of t.partitions) {
        const tp = { topic: t.topic, partition: p.partition };
        const key = topicPartitionKey(tp);
        const current = this.partitions.get(key);
        const sent = askedByKey.get(key);
        // Kafka: no leadership or leader epoch change happened while the request was out.
        if (
          current === undefined ||
          sent === undefined ||
          current.currentLeaderEpoch !== sent.currentLeaderEpoch ||
          current.state !== "Truncating"
        ) {
          this.dropped(
            "OffsetForLeaderEpoch",
            tp,
            sent === undefined ? "no request" : `leader epoch ${sent.currentLeaderEpoch}`,
            current,
          );
          continue;
        }
        const log = this.replicaManager.getPartition(tp)?.log;
        if (log === undefined) continue;
        if (p.errorCode !== ErrorCode.NONE) {
          this.log.info(
            `Retrying the leader epoch request for partition ${key}: the leader answered ${errorNameOf(p.errorCode)}`,
          );
          this.delay(current);
          continue;
        }
        const next = this.truncateToEpochEndOffset(
          tp,
          log,
          p.leaderEpoch,
          p.endOffset,
          "OffsetForLeaderEpoch",
        );
        this.update(current, {
          fetchOffset: log.logEndOffset,
          state: next === undefined ? "Fetching" : "Truncating",
          lastFetchedEpoch: next ?? latestEpochOf(log),
        });
      }
    }
  }

  /**
   * Kafka's getOffsetTruncationState for one partition, and the truncation it decides. Returns the epoch to
   * check next when the truncation is not complete (this log ends the leader's epoch under an older one of
   * its own: KIP-279), else undefined.
   */
  private truncateToEpochEndOffset(
    tp: TopicPartition,
    log: UnifiedLog,
    leaderEpoch: number,
    leaderEnd: bigint,
    source: "OffsetForLeaderEpoch" | "diverging epoch",
  ): number | undefined {
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
    return next;
  }

  /**
   * Kafka's maybeFetch + processFetchRequest: one Fetch for the partitions ready to fetch. With none, a
   * backoff wait — unless OffsetForLeaderEpoch was just asked (`truncating`): KIP-279's next round goes on.
   */
  private async maybeFetch(
    conn: BrokerConnection,
    version: number,
    truncateOnFetch: boolean,
    truncating: boolean,
  ): Promise<void> {
    const now = this.time.milliseconds();
    const next: SessionPartitionData[] = [];
    const quota = this.config.quota;
    // Kafka's shouldFollowerThrottle, evaluated once per fetch: the quota measures what came in so far.
    const quotaExceeded = quota?.isQuotaExceeded() === true;
    let throttledOut = false;
    for (const s of this.partitions.values()) {
      if (!isReadyForFetch(s, now)) continue;
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
        lastFetchedEpoch: truncateOnFetch ? (s.lastFetchedEpoch ?? -1) : -1,
        logStartOffset: log.logStartOffset,
        partitionMaxBytes: this.config.fetchMaxBytes,
      });
    }
    if (next.length === 0) {
      if (truncating) return;
      // Kafka waits replica.fetch.backoff.ms; when only the throttle emptied the fetch, Tributary waits just
      // until the quota allows bytes again (at most that long): a 1 s wait each time would hold the moves
      // some 10 % under the rate set.
      const wait = throttledOut ? Math.max(10, quota?.throttleTimeMs() ?? 0) : this.config.backoffMs;
      await this.pause(Math.min(wait, this.config.backoffMs));
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
    if (this.stopped) return;
    if (!this.session.handleResponse(res)) {
      // A session error: the next request is a full fetch, at once. Anything else backs off.
      if (
        res.errorCode === ErrorCode.NONE ||
        res.errorCode === ErrorCode.FETCH_SESSION_ID_NOT_FOUND ||
        res.errorCode === ErrorCode.INVALID_FETCH_SESSION_EPOCH
      )
        return;
      throw new Error(`Fetch failed with ${errorNameOf(res.errorCode)}`);
    }
    // The session's partitions as this request left them: what the leader answered for.
    const requested = new Map<string, SessionPartitionData>();
    for (const p of next) requested.set(topicPartitionKey(p), p);
    for (const t of res.responses) {
      for (const p of t.partitions) {
        const tp = { topic: t.topic, partition: p.partitionIndex };
        this.processPartition(tp, p, requested.get(topicPartitionKey(tp)));
      }
    }
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
    requested: SessionPartitionData | undefined,
  ): void {
    const key = topicPartitionKey(tp);
    const state = this.partitions.get(key);
    // Kafka's processFetchRequest: the data is used only when the partition's state is the one the request
    // was made from — removed and added again (a new leader epoch), truncated, or moved meanwhile: dropped.
    if (
      state === undefined ||
      requested === undefined ||
      requested.fetchOffset !== state.fetchOffset ||
      requested.currentLeaderEpoch !== state.currentLeaderEpoch ||
      !isReadyForFetch(state, this.time.milliseconds())
    ) {
      this.dropped(
        "fetch",
        tp,
        requested === undefined
          ? "no request"
          : `fetch offset ${requested.fetchOffset}, leader epoch ${requested.currentLeaderEpoch}`,
        state,
      );
      return;
    }
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
          const before = { offset: log.logEndOffset, epoch: latestEpochOf(log) };
          this.truncateToEpochEndOffset(tp, log, d.epoch, d.endOffset, "diverging epoch");
          const cache = log.leaderEpochCache;
          let delayed = false;
          if (log.logEndOffset === before.offset && cache !== undefined) {
            // Nothing to truncate, yet our latest epoch is newer than the leader's answer: an epoch we led
            // without writing a batch (its entry starts at our log end). Forget it, as a follower that never
            // led would not have it; the next fetch then carries the epoch of our last batch.
            if ((cache.latestEpoch() ?? -1) > d.epoch) log.dropEpochEntriesAtLogEnd();
            if (cache.latestEpoch() === before.epoch) {
              // The same fetch again would get the same answer: back off rather than spin.
              this.log.warn(
                `Leader ${this.leaderId} answered diverging epoch ${d.epoch} (end offset ${d.endOffset}) for ${key} at fetch offset ${state.fetchOffset}, which changes nothing here`,
              );
              delayed = true;
            }
          }
          // Kafka's truncateOnFetchResponse: Fetching from the truncated log end.
          const now = this.time.milliseconds();
          this.update(state, {
            fetchOffset: log.logEndOffset,
            state: "Fetching",
            lastFetchedEpoch: latestEpochOf(log),
            delayedUntilMs: delayed ? now + this.config.backoffMs : state.delayedUntilMs,
          });
          return;
        }
        const records = p.records;
        if (records !== null && records.length > 0) {
          this.fetchedBytes += records.length;
          log.appendAsFollower(records);
          if (this.config.quota?.isThrottled(tp)) this.config.quota.record(records.length);
        }
        const leo = log.logEndOffset;
        this.update(state, {
          fetchOffset: leo,
          lag: p.highWatermark > leo ? p.highWatermark - leo : 0n,
          lastFetchedEpoch: leo === state.fetchOffset ? state.lastFetchedEpoch : latestEpochOf(log),
        });
        // biome-ignore lint/complexity/useMathMinMax: bigints (Math.min takes numbers)
        const hw = p.highWatermark < leo ? p.highWatermark : leo;
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
        const spin = log.logEndOffset === state.fetchOffset && latestEpochOf(log) !== undefined;
        this.update(state, {
          fetchOffset: log.logEndOffset,
          lastFetchedEpoch: latestEpochOf(log),
          delayedUntilMs: spin ? this.time.milliseconds() + this.config.backoffMs : state.delayedUntilMs,
        });
        return;
      }
      default:
        // NOT_LEADER_OR_FOLLOWER, FENCED/UNKNOWN_LEADER_EPOCH, …: wait for the controller's next LeaderAndIsr.
        this.delay(state);
    }
  }
}
