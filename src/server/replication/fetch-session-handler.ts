// The fetcher's side of an incremental fetch session (KIP-227), Kafka's FetchSessionHandler as a replica
// fetcher uses it: one handler per fetcher connection to a leader. The first request is a full fetch
// (session id 0, epoch 0) naming every partition; when the leader answers with a session id, later
// requests are incremental (that id, epoch 1, 2, … wrapping after Integer.MAX_VALUE to 1) and name only the
// partitions added or whose fetch data changed (fetch offset, leader epochs, log start, max bytes), with
// the partitions no longer fetched in forgotten_topics_data. An incremental response names only the
// partitions with something new. FETCH_SESSION_ID_NOT_FOUND starts a new session (id 0, epoch 0); any other
// error, a transport failure, or a response naming partitions the session does not hold sends the next
// request as a full fetch that closes the old session (its id, epoch 0). A full response must name exactly
// the requested partitions. Topics are named (Fetch v12), not by id.

import { ErrorCode, errorNameOf } from "../../protocol/errors.js";
import { INITIAL_EPOCH, INVALID_SESSION_ID, nextEpoch } from "./fetch-session.js";

/** One partition's fetch data, as a request sends it (Kafka's FetchRequest.PartitionData). */
export interface SessionPartitionData {
  readonly topic: string;
  readonly partition: number;
  readonly fetchOffset: bigint;
  readonly currentLeaderEpoch: number;
  readonly lastFetchedEpoch: number;
  readonly logStartOffset: bigint;
  readonly partitionMaxBytes: number;
}

/** What one Fetch request carries of the session. */
export interface SessionFetchRequest {
  readonly sessionId: number;
  readonly sessionEpoch: number;
  /** True when this request names every partition of the session (epoch 0). */
  readonly isFull: boolean;
  /** The partitions the request names: all for a full fetch, added or changed ones otherwise. */
  readonly toSend: readonly SessionPartitionData[];
  /** Partitions leaving the session (incremental requests only). */
  readonly forgotten: ReadonlyArray<{ readonly topic: string; readonly partition: number }>;
}

/** The parts of a Fetch response the handler checks. */
export interface SessionFetchResponse {
  readonly errorCode: number;
  readonly sessionId: number;
  readonly responses: ReadonlyArray<{
    readonly topic: string;
    readonly partitions: ReadonlyArray<{ readonly partitionIndex: number }>;
  }>;
}

function key(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

function sameFetchData(a: SessionPartitionData, b: SessionPartitionData): boolean {
  return (
    a.fetchOffset === b.fetchOffset &&
    a.currentLeaderEpoch === b.currentLeaderEpoch &&
    a.lastFetchedEpoch === b.lastFetchedEpoch &&
    a.logStartOffset === b.logStartOffset &&
    a.partitionMaxBytes === b.partitionMaxBytes
  );
}

export class FetchSessionHandler {
  private sessionId = INVALID_SESSION_ID;
  private epoch = INITIAL_EPOCH;
  /** The session's partitions as the leader holds them after the last request built. */
  private sessionPartitions = new Map<string, SessionPartitionData>();

  constructor(
    /** For log lines: the leader this session is with. */
    readonly node: number,
    /** Problems (the next request is then a full fetch), and each new session the leader creates. */
    private readonly log: (message: string) => void = () => {},
  ) {}

  /** The session id in use (0 before the leader created one). */
  get currentSessionId(): number {
    return this.sessionId;
  }

  /** The epoch the next request carries. */
  get nextEpoch(): number {
    return this.epoch;
  }

  /** Whether the next request is a full fetch. */
  get nextIsFull(): boolean {
    return this.epoch === INITIAL_EPOCH || this.epoch < 0;
  }

  /** The request for the partitions to fetch now (Kafka's FetchSessionHandler.Builder.build). */
  build(next: readonly SessionPartitionData[]): SessionFetchRequest {
    const nextMap = new Map<string, SessionPartitionData>();
    for (const p of next) nextMap.set(key(p.topic, p.partition), p);
    const previous = this.sessionPartitions;
    this.sessionPartitions = nextMap;
    if (this.nextIsFull) {
      return {
        sessionId: this.sessionId,
        sessionEpoch: this.epoch,
        isFull: true,
        toSend: [...nextMap.values()],
        forgotten: [],
      };
    }
    const toSend: SessionPartitionData[] = [];
    for (const [k, p] of nextMap) {
      const prev = previous.get(k);
      if (prev === undefined || !sameFetchData(prev, p)) toSend.push(p);
    }
    const forgotten: Array<{ topic: string; partition: number }> = [];
    for (const [k, p] of previous)
      if (!nextMap.has(k)) forgotten.push({ topic: p.topic, partition: p.partition });
    return { sessionId: this.sessionId, sessionEpoch: this.epoch, isFull: false, toSend, forgotten };
  }

  /**
   * Takes the response to the last request built; false when its partition data must not be used (an
   * error, or partitions that do not match the session), and the next request is then a full fetch.
   */
  handleResponse(response: SessionFetchResponse): boolean {
    if (response.errorCode !== ErrorCode.NONE) {
      this.log(
        `Node ${this.node} was unable to process the fetch request with session ${this.sessionId} epoch ${this.epoch}: ${errorNameOf(response.errorCode)}`,
      );
      if (response.errorCode === ErrorCode.FETCH_SESSION_ID_NOT_FOUND) this.reset();
      else this.closeExisting();
      return false;
    }
    const named = new Set<string>();
    for (const t of response.responses)
      for (const p of t.partitions) named.add(key(t.topic, p.partitionIndex));
    const extra = [...named].filter((k) => !this.sessionPartitions.has(k));
    if (this.nextIsFull) {
      const omitted = [...this.sessionPartitions.keys()].filter((k) => !named.has(k));
      if (extra.length > 0 || omitted.length > 0) {
        this.log(
          `Node ${this.node} sent a full fetch response that ${extra.length > 0 ? "included partitions it was not asked for" : "omitted partitions"}`,
        );
        this.reset();
        return false;
      }
      if (response.sessionId === INVALID_SESSION_ID) this.reset();
      else {
        if (response.sessionId !== this.sessionId)
          this.log(
            `Node ${this.node} created incremental fetch session ${response.sessionId} with ${this.sessionPartitions.size} partition(s)`,
          );
        this.sessionId = response.sessionId;
        this.epoch = nextEpoch(INITIAL_EPOCH);
      }
      return true;
    }
    if (extra.length > 0) {
      this.log(
        `Node ${this.node} sent an incremental fetch response for session ${this.sessionId} naming partitions outside the session`,
      );
      this.closeExisting();
      return false;
    }
    if (response.sessionId === INVALID_SESSION_ID) this.reset();
    else this.epoch = nextEpoch(this.epoch);
    return true;
  }

  /** The request failed without a response (Kafka's handleError): the next one is a full fetch. */
  handleError(): void {
    this.closeExisting();
  }

  /** No session: the next request is a full fetch asking for a new one. */
  private reset(): void {
    this.sessionId = INVALID_SESSION_ID;
    this.epoch = INITIAL_EPOCH;
  }

  /** A full fetch that closes the current session and opens a new one. */
  private closeExisting(): void {
    this.epoch = INITIAL_EPOCH;
  }
}
