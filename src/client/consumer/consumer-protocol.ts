// ConsumerProtocol: the "consumer" embedded protocol of the classic group protocol, as Kafka's
// ConsumerProtocol writes it: JoinGroup member metadata is an int16 version followed by a
// ConsumerProtocolSubscription, SyncGroup assignments an int16 version followed by a
// ConsumerProtocolAssignment (both version 3, as Kafka 3.x clients write them). A newer version than this
// client knows is read as the newest it knows, as Kafka does (later versions only append fields).

import type { TopicPartition } from "../../common/topic-partition.js";
import {
  ConsumerProtocolAssignmentVersions,
  readConsumerProtocolAssignment,
  writeConsumerProtocolAssignment,
} from "../../protocol/generated/messages/ConsumerProtocolAssignment.js";
import {
  ConsumerProtocolSubscriptionVersions,
  readConsumerProtocolSubscription,
  writeConsumerProtocolSubscription,
} from "../../protocol/generated/messages/ConsumerProtocolSubscription.js";
import { Reader } from "../../protocol/primitives/reader.js";
import { Writer } from "../../protocol/primitives/writer.js";

export const CONSUMER_PROTOCOL_TYPE = "consumer";

export interface Subscription {
  readonly topics: readonly string[];
  readonly userData: Buffer | null;
  readonly ownedPartitions: readonly TopicPartition[];
  readonly generationId: number;
  readonly rackId: string | null;
}

function byTopic(partitions: readonly TopicPartition[]): { topic: string; partitions: number[] }[] {
  const m = new Map<string, number[]>();
  for (const tp of partitions) {
    const l = m.get(tp.topic);
    if (l) l.push(tp.partition);
    else m.set(tp.topic, [tp.partition]);
  }
  return [...m].map(([topic, ps]) => ({ topic, partitions: ps }));
}

function flatten(list: readonly { topic: string; partitions: number[] }[]): TopicPartition[] {
  return list.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, partition })));
}

export function serializeSubscription(s: Subscription): Buffer {
  const version = ConsumerProtocolSubscriptionVersions.max;
  const w = new Writer();
  w.int16(version);
  writeConsumerProtocolSubscription(
    w,
    {
      topics: [...s.topics],
      userData: s.userData,
      ownedPartitions: byTopic(s.ownedPartitions),
      generationId: s.generationId,
      rackId: s.rackId,
    },
    version,
  );
  return w.toBuffer();
}

export function deserializeSubscription(buf: Buffer): Subscription {
  const r = new Reader(buf);
  const v = r.int16();
  if (v < 0) throw new Error(`Unsupported subscription version ${v}`);
  const s = readConsumerProtocolSubscription(r, Math.min(v, ConsumerProtocolSubscriptionVersions.max));
  return {
    topics: s.topics,
    userData: s.userData,
    ownedPartitions: flatten(s.ownedPartitions),
    generationId: s.generationId,
    rackId: s.rackId,
  };
}

export function serializeAssignment(
  partitions: readonly TopicPartition[],
  userData: Buffer | null = null,
): Buffer {
  const version = ConsumerProtocolAssignmentVersions.max;
  const w = new Writer();
  w.int16(version);
  writeConsumerProtocolAssignment(w, { assignedPartitions: byTopic(partitions), userData }, version);
  return w.toBuffer();
}

/** The partitions of a SyncGroup assignment (an empty buffer means none, as Kafka reads it). */
export function deserializeAssignment(buf: Buffer): TopicPartition[] {
  if (buf.length === 0) return [];
  const r = new Reader(buf);
  const v = r.int16();
  if (v < 0) throw new Error(`Unsupported assignment version ${v}`);
  return flatten(
    readConsumerProtocolAssignment(r, Math.min(v, ConsumerProtocolAssignmentVersions.max)).assignedPartitions,
  );
}
