// Incremental fetch sessions (KIP-227), Kafka's FetchSession.scala: the FetchSessionCache of sessions
// (id, epoch, the partitions with their fetch state and the offsets last sent back), and the FetchContext
// a Fetch request gets:
// - epoch -1 (FINAL): sessionless full fetch (a session id given is closed first);
// - epoch 0 (INITIAL): full fetch that creates a new session (replacing the given one) when a cache slot
//   is free or can be freed;
// - epoch > 0: incremental fetch on an existing session: FETCH_SESSION_ID_NOT_FOUND for an unknown id,
//   INVALID_FETCH_SESSION_EPOCH for the wrong epoch, FETCH_SESSION_TOPIC_ID_ERROR when topic-id use
//   changes; the request's partitions are added/updated, forgotten ones removed, and the response carries
//   only partitions with something new (records, a changed high watermark / last stable offset / log start
//   offset, an error, or a diverging epoch).
// The cache holds max.incremental.fetch.session.cache.slots sessions; a full cache evicts the least
// recently used session idle longer than the eviction time, or, for a follower, a consumer's session.

import { randomInt } from "node:crypto";
import type { Time } from "../../common/time.js";
import type { ErrorName } from "../../protocol/errors.js";

export const INVALID_SESSION_ID = 0;
export const INITIAL_EPOCH = 0;
export const FINAL_EPOCH = -1;
export const ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA";

/** One partition of a Fetch request as the session layer sees it. */
export interface FetchRequestPartition {
  /** Topic name (may be "" in v13+ requests, which name topics by id). */
  readonly topic: string;
  readonly topicId: string;
  readonly partition: number;
  readonly fetchOffset: bigint;
  readonly currentLeaderEpoch: number;
  readonly logStartOffset: bigint;
  readonly partitionMaxBytes: number;
  readonly lastFetchedEpoch: number;
}

/** A partition of a session: its fetch state and what was last sent back (Kafka's CachedPartition). */
export interface CachedPartition {
  topic: string;
  readonly topicId: string;
  readonly partition: number;
  fetchOffset: bigint;
  currentLeaderEpoch: number;
  logStartOffset: bigint;
  partitionMaxBytes: number;
  lastFetchedEpoch: number;
  highWatermark: bigint;
  lastStableOffset: bigint;
  localLogStartOffset: bigint;
}

/** What the response says about a partition (the fields the session compares). */
export interface PartitionResponseSummary {
  readonly errorCode: number;
  readonly highWatermark: bigint;
  readonly lastStableOffset: bigint;
  readonly logStartOffset: bigint;
  readonly recordsSize: number;
  /** The response carries a DivergingEpoch (always sent, as an error is). */
  readonly diverging?: boolean;
}

export class FetchSession {
  epoch: number;
  lastUsedMs: number;

  constructor(
    readonly id: number,
    readonly privileged: boolean,
    readonly partitionMap: Map<string, CachedPartition>,
    readonly usesTopicIds: boolean,
    readonly creationMs: number,
    lastUsedMs: number,
    epoch: number,
  ) {
    this.lastUsedMs = lastUsedMs;
    this.epoch = epoch;
  }

  get size(): number {
    return this.partitionMap.size;
  }
}

export function nextEpoch(epoch: number): number {
  if (epoch < 0) return FINAL_EPOCH;
  if (epoch === 0x7fffffff) return 1;
  return epoch + 1;
}

/** The session key of a partition: by topic id when the session uses ids, else by name. */
export function sessionPartitionKey(
  usesTopicIds: boolean,
  topic: string,
  topicId: string,
  partition: number,
): string {
  return usesTopicIds ? `${topicId}:${partition}` : `${topic}:${partition}`;
}

function toCached(p: FetchRequestPartition, topic: string): CachedPartition {
  return {
    topic,
    topicId: p.topicId,
    partition: p.partition,
    fetchOffset: p.fetchOffset,
    currentLeaderEpoch: p.currentLeaderEpoch,
    logStartOffset: p.logStartOffset,
    partitionMaxBytes: p.partitionMaxBytes,
    lastFetchedEpoch: p.lastFetchedEpoch,
    highWatermark: -1n,
    lastStableOffset: -1n,
    localLogStartOffset: -1n,
  };
}

/**
 * Kafka's CachedPartition.maybeUpdateResponseData: whether the partition must be in an incremental
 * response; with update, the cached offsets take the response's values.
 */
function mustRespond(cached: CachedPartition, resp: PartitionResponseSummary, update: boolean): boolean {
  let must = false;
  if (resp.recordsSize > 0 || resp.diverging === true) must = true;
  if (cached.highWatermark !== resp.highWatermark) {
    must = true;
    if (update) cached.highWatermark = resp.highWatermark;
  }
  if (cached.localLogStartOffset !== resp.logStartOffset) {
    must = true;
    if (update) cached.localLogStartOffset = resp.logStartOffset;
  }
  if (cached.lastStableOffset !== resp.lastStableOffset) {
    must = true;
    if (update) cached.lastStableOffset = resp.lastStableOffset;
  }
  if (resp.errorCode !== 0) {
    // Errors are always sent; forgetting the HW makes the partition be sent again once the error clears.
    must = true;
    if (update) cached.highWatermark = -1n;
  }
  return must;
}

export type FetchContextKind = "error" | "sessionless" | "full" | "incremental";

/** The session side of one Fetch request (Kafka's FetchContext family in one class). */
export class FetchContext {
  private constructor(
    readonly kind: FetchContextKind,
    private readonly cache: FetchSessionCache,
    /** The partitions to read, in order (the session's order for an incremental fetch). */
    readonly partitions: CachedPartition[],
    readonly usesTopicIds: boolean,
    readonly privileged: boolean,
    readonly error: ErrorName | undefined,
    private readonly session: FetchSession | undefined,
  ) {}

  static error(cache: FetchSessionCache, error: ErrorName): FetchContext {
    return new FetchContext("error", cache, [], false, false, error, undefined);
  }

  static sessionless(
    cache: FetchSessionCache,
    partitions: CachedPartition[],
    usesTopicIds: boolean,
  ): FetchContext {
    return new FetchContext("sessionless", cache, partitions, usesTopicIds, false, undefined, undefined);
  }

  static full(
    cache: FetchSessionCache,
    partitions: CachedPartition[],
    usesTopicIds: boolean,
    privileged: boolean,
  ): FetchContext {
    return new FetchContext("full", cache, partitions, usesTopicIds, privileged, undefined, undefined);
  }

  static incremental(cache: FetchSessionCache, session: FetchSession): FetchContext {
    return new FetchContext(
      "incremental",
      cache,
      [...session.partitionMap.values()],
      session.usesTopicIds,
      session.privileged,
      undefined,
      session,
    );
  }

  /**
   * After the read: the session id to answer with and which partitions go in the response (indexes into
   * `partitions`). A full fetch creates its session here; an incremental one keeps only changed partitions
   * and moves those that returned data to the end of the session's order (Kafka's fairness rotation).
   */
  updateAndGenerateResponseData(responses: readonly PartitionResponseSummary[]): {
    sessionId: number;
    include: number[];
  } {
    const all = this.partitions.map((_, i) => i);
    switch (this.kind) {
      case "error":
        return { sessionId: INVALID_SESSION_ID, include: [] };
      case "sessionless":
        return { sessionId: INVALID_SESSION_ID, include: all };
      case "full": {
        for (let i = 0; i < this.partitions.length; i++) mustRespond(this.partitions[i], responses[i], true);
        const sessionId = this.cache.maybeCreateSession(this.privileged, this.usesTopicIds, this.partitions);
        return { sessionId, include: all };
      }
      case "incremental": {
        const session = this.session!;
        const include: number[] = [];
        for (let i = 0; i < this.partitions.length; i++) {
          const cached = this.partitions[i];
          if (mustRespond(cached, responses[i], true)) {
            include.push(i);
            if (responses[i].recordsSize > 0) {
              const key = sessionPartitionKey(
                session.usesTopicIds,
                cached.topic,
                cached.topicId,
                cached.partition,
              );
              session.partitionMap.delete(key);
              session.partitionMap.set(key, cached);
            }
          }
        }
        return { sessionId: session.id, include };
      }
    }
  }
}

export class FetchSessionCache {
  /** By id; Map order is least recently used first (touch re-inserts). */
  private readonly sessions = new Map<number, FetchSession>();
  private numPartitions = 0;
  private _evictions = 0;

  constructor(
    readonly maxEntries: number,
    readonly evictionMs: number,
    private readonly time: Time,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  get totalPartitions(): number {
    return this.numPartitions;
  }

  get evictions(): number {
    return this._evictions;
  }

  get(sessionId: number): FetchSession | undefined {
    return this.sessions.get(sessionId);
  }

  remove(sessionId: number): FetchSession | undefined {
    const s = this.sessions.get(sessionId);
    if (s === undefined) return undefined;
    this.sessions.delete(sessionId);
    this.numPartitions -= s.size;
    return s;
  }

  private touch(session: FetchSession, now: number): void {
    this.sessions.delete(session.id);
    session.lastUsedMs = now;
    this.sessions.set(session.id, session);
  }

  /**
   * A fetch context for a request (Kafka's FetchManager.newContext). `resolveTopicName` names a topic id
   * (v13+); an unknown id leaves the name "" and the caller answers UNKNOWN_TOPIC_ID for it.
   */
  newContext(
    req: {
      sessionId: number;
      sessionEpoch: number;
      partitions: readonly FetchRequestPartition[];
      forgotten: ReadonlyArray<{ topic: string; topicId: string; partitions: readonly number[] }>;
    },
    usesTopicIds: boolean,
    isFromFollower: boolean,
    resolveTopicName: (topicId: string) => string | undefined,
  ): FetchContext {
    const name = (p: { topic: string; topicId: string }): string =>
      usesTopicIds ? (resolveTopicName(p.topicId) ?? "") : p.topic;
    const isFull = req.sessionEpoch === INITIAL_EPOCH || req.sessionEpoch === FINAL_EPOCH;
    if (isFull) {
      // Forgotten topics mean nothing to a full request (Kafka ignores them too).
      if (req.sessionId !== INVALID_SESSION_ID) this.remove(req.sessionId);
      const partitions: CachedPartition[] = [];
      const seen = new Set<string>();
      for (const p of req.partitions) {
        const key = sessionPartitionKey(usesTopicIds, p.topic, p.topicId, p.partition);
        if (seen.has(key)) continue;
        seen.add(key);
        partitions.push(toCached(p, name(p)));
      }
      return req.sessionEpoch === FINAL_EPOCH
        ? FetchContext.sessionless(this, partitions, usesTopicIds)
        : FetchContext.full(this, partitions, usesTopicIds, isFromFollower);
    }
    const session = this.sessions.get(req.sessionId);
    if (session === undefined) return FetchContext.error(this, "FETCH_SESSION_ID_NOT_FOUND");
    if (session.epoch !== req.sessionEpoch) return FetchContext.error(this, "INVALID_FETCH_SESSION_EPOCH");
    if (session.usesTopicIds !== usesTopicIds)
      return FetchContext.error(this, "FETCH_SESSION_TOPIC_ID_ERROR");
    // Kafka's FetchSession.update: added/updated partitions from the request, then the forgotten ones.
    const before = session.size;
    for (const p of req.partitions) {
      const key = sessionPartitionKey(usesTopicIds, p.topic, p.topicId, p.partition);
      const cached = session.partitionMap.get(key);
      if (cached === undefined) {
        session.partitionMap.set(key, toCached(p, name(p)));
      } else {
        cached.fetchOffset = p.fetchOffset;
        cached.currentLeaderEpoch = p.currentLeaderEpoch;
        cached.logStartOffset = p.logStartOffset;
        cached.partitionMaxBytes = p.partitionMaxBytes;
        cached.lastFetchedEpoch = p.lastFetchedEpoch;
        if (cached.topic === "") cached.topic = name(p);
      }
    }
    for (const f of req.forgotten) {
      for (const partition of f.partitions) {
        session.partitionMap.delete(sessionPartitionKey(usesTopicIds, f.topic, f.topicId, partition));
      }
    }
    this.numPartitions += session.size - before;
    if (session.size === 0) {
      this.remove(session.id);
      return FetchContext.sessionless(this, [], usesTopicIds);
    }
    this.touch(session, this.time.milliseconds());
    session.epoch = nextEpoch(session.epoch);
    return FetchContext.incremental(this, session);
  }

  /**
   * Caches a new session for a full fetch when a slot is free or can be freed; returns its id, or
   * INVALID_SESSION_ID (the client then fetches without a session).
   */
  maybeCreateSession(
    privileged: boolean,
    usesTopicIds: boolean,
    partitions: readonly CachedPartition[],
  ): number {
    if (partitions.length === 0 || this.maxEntries <= 0) return INVALID_SESSION_ID;
    const now = this.time.milliseconds();
    if (this.sessions.size >= this.maxEntries && !this.tryEvict(privileged, now)) return INVALID_SESSION_ID;
    let id: number;
    do id = randomInt(1, 0x7fffffff);
    while (this.sessions.has(id));
    const map = new Map<string, CachedPartition>();
    for (const p of partitions)
      map.set(sessionPartitionKey(usesTopicIds, p.topic, p.topicId, p.partition), p);
    const session = new FetchSession(id, privileged, map, usesTopicIds, now, now, nextEpoch(INITIAL_EPOCH));
    this.sessions.set(id, session);
    this.numPartitions += session.size;
    return id;
  }

  /** Frees a slot: the least recently used stale session, else (for a follower) the LRU consumer session. */
  private tryEvict(privileged: boolean, now: number): boolean {
    for (const s of this.sessions.values()) {
      if (now - s.lastUsedMs > this.evictionMs) {
        this.remove(s.id);
        this._evictions++;
        return true;
      }
      break; // LRU order: if the oldest is not stale, none is
    }
    if (privileged) {
      for (const s of this.sessions.values()) {
        if (!s.privileged) {
          this.remove(s.id);
          this._evictions++;
          return true;
        }
      }
    }
    return false;
  }
}
