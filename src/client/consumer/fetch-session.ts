// FetchSessionHandler: the client side of an incremental fetch session with one broker (KIP-227, Kafka's
// FetchSessionHandler). The first request is a full fetch (session id 0, epoch 0) that asks the broker
// to create a session; later requests carry the session id and the next epoch, and list only the
// partitions that are new or whose fetch offset / max bytes changed, plus the partitions to forget. An
// error about the session (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH) or a broker that
// answers with session id 0 makes the next request a full one again.

import { ErrorCode } from "../../protocol/generated/errors.js";
import type { FetchPartition } from "../../protocol/generated/messages/FetchRequest.js";

/** What the client wants fetched for one partition. */
export interface FetchTarget {
  topic: string;
  partition: number;
  fetchOffset: bigint;
  maxBytes: number;
}

/** A target as a consumer's FetchRequest partition: no leader epoch, log start or replica directory. */
export function fetchPartition(t: FetchTarget): FetchPartition {
  return {
    partition: t.partition,
    currentLeaderEpoch: -1,
    fetchOffset: t.fetchOffset,
    lastFetchedEpoch: -1,
    logStartOffset: -1n,
    partitionMaxBytes: t.maxBytes,
    replicaDirectoryId: "AAAAAAAAAAAAAAAAAAAAAA",
  };
}

export interface FetchSessionRequest {
  sessionId: number;
  sessionEpoch: number;
  /** Partitions to put in the request. */
  toSend: FetchTarget[];
  /** Partitions the session should drop. */
  toForget: Array<{ topic: string; partition: number }>;
  full: boolean;
}

const INITIAL_EPOCH = 0;
/** Kafka's FINAL_EPOCH: closes the session. */
export const FINAL_EPOCH = -1;

function keyOf(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

export class FetchSessionHandler {
  sessionId = 0;
  nextEpoch = INITIAL_EPOCH;
  /** The partitions in the session as the broker knows them after the last successful request. */
  private sessionPartitions = new Map<string, FetchTarget>();
  private pending: Map<string, FetchTarget> | undefined;

  /** Builds the next request for the wanted partitions. */
  build(wanted: readonly FetchTarget[]): FetchSessionRequest {
    const next = new Map<string, FetchTarget>();
    for (const t of wanted) next.set(keyOf(t.topic, t.partition), t);
    this.pending = next;
    if (this.sessionId === 0 || this.nextEpoch === INITIAL_EPOCH) {
      return {
        sessionId: this.sessionId,
        sessionEpoch: INITIAL_EPOCH,
        toSend: [...next.values()],
        toForget: [],
        full: true,
      };
    }
    const toSend: FetchTarget[] = [];
    const toForget: Array<{ topic: string; partition: number }> = [];
    for (const [k, t] of next) {
      const prev = this.sessionPartitions.get(k);
      if (prev === undefined || prev.fetchOffset !== t.fetchOffset || prev.maxBytes !== t.maxBytes)
        toSend.push(t);
    }
    for (const [k, t] of this.sessionPartitions) {
      if (!next.has(k)) toForget.push({ topic: t.topic, partition: t.partition });
    }
    return { sessionId: this.sessionId, sessionEpoch: this.nextEpoch, toSend, toForget, full: false };
  }

  /** Handles the top-level result of the request built last; returns false when the session was reset. */
  handleResponse(errorCode: number, sessionId: number): boolean {
    const pending = this.pending;
    this.pending = undefined;
    if (errorCode !== ErrorCode.NONE) {
      // FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH, or any other top-level error.
      this.reset();
      return false;
    }
    if (sessionId === 0) {
      // The broker did not create a session (sessionless fetch): every request is a full one.
      this.reset();
      return true;
    }
    if (this.sessionId !== sessionId) this.sessionId = sessionId;
    this.nextEpoch = this.nextEpoch === 2147483647 ? 1 : this.nextEpoch + 1;
    if (pending) this.sessionPartitions = pending;
    return true;
  }

  /** The request failed (network): the session state is unknown, start over. */
  handleError(): void {
    this.pending = undefined;
    this.reset();
  }

  reset(): void {
    this.sessionId = 0;
    this.nextEpoch = INITIAL_EPOCH;
    this.sessionPartitions = new Map();
  }
}
