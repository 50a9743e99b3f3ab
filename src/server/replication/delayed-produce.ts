// DelayedProduce: a Produce with acks=-1 waiting until every partition it wrote to has its high watermark
// at or past the end of the append (all ISR members have the data), Kafka's DelayedProduce. Watched under
// the partitions' keys; the ReplicaManager re-checks it when a high watermark moves. On timeout, the
// partitions still waiting answer REQUEST_TIMED_OUT. With one replica the HW moves with the append, so the
// operation completes as it is created, but it goes through the purgatory so followers fit in later.

import type { TopicPartition } from "../../common/topic-partition.js";
import type { ErrorName } from "../../protocol/errors.js";
import { DelayedOperation } from "./delayed-operation-purgatory.js";
import type { Partition } from "./partition.js";

/** The outcome of producing to one partition (Kafka's PartitionResponse). */
export interface ProducePartitionResult {
  topicPartition: TopicPartition;
  error: ErrorName | "NONE";
  errorMessage: string | null;
  baseOffset: bigint;
  /** The log append time with LogAppendTime, else -1. */
  logAppendTimeMs: bigint;
  logStartOffset: bigint;
  /** Per-record errors (ProduceResponse v8+): the index of the record in the request's batches. */
  recordErrors: Array<{ batchIndex: number; message: string | null }>;
}

export interface ProducePartitionStatus {
  readonly key: string;
  /** The offset the HW must reach: last appended offset + 1. */
  readonly requiredOffset: bigint;
  acksPending: boolean;
  readonly result: ProducePartitionResult;
}

export class DelayedProduce extends DelayedOperation {
  constructor(
    delayMs: number,
    readonly statuses: readonly ProducePartitionStatus[],
    private readonly getPartition: (tp: TopicPartition) => Partition | undefined,
    private readonly respond: (results: ProducePartitionResult[]) => void,
  ) {
    super(delayMs);
  }

  tryComplete(): boolean {
    let pending = false;
    for (const s of this.statuses) {
      if (!s.acksPending) continue;
      const partition = this.getPartition(s.result.topicPartition);
      const outcome =
        partition === undefined
          ? "UNKNOWN_TOPIC_OR_PARTITION"
          : partition.checkEnoughReplicasReachOffset(s.requiredOffset);
      if (outcome === undefined) {
        pending = true;
        continue;
      }
      s.acksPending = false;
      if (outcome !== "NONE") {
        s.result.error = outcome;
        s.result.errorMessage = null;
      }
    }
    return pending ? false : this.forceComplete();
  }

  onComplete(): void {
    for (const s of this.statuses) {
      if (!s.acksPending) continue;
      s.acksPending = false;
      s.result.error = "REQUEST_TIMED_OUT";
      s.result.errorMessage = null;
    }
    this.respond(this.statuses.map((s) => s.result));
  }

  onExpiration(): void {}
}
