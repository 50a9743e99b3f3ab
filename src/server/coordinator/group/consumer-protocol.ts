// The "consumer" embedded protocol as the group coordinator needs it (Kafka's ConsumerProtocol): the topics
// a member subscribes to, read from its JoinGroup metadata (int16 version + ConsumerProtocolSubscription).
// Used for offset expiration (KIP-211) and OffsetDelete's GROUP_SUBSCRIBED_TO_TOPIC.

import { readConsumerProtocolSubscription } from "../../../protocol/generated/messages/ConsumerProtocolSubscription.js";
import { Reader } from "../../../protocol/primitives/reader.js";
import type { GroupMetadata } from "./group-metadata.js";

export const CONSUMER_PROTOCOL_TYPE = "consumer";

/** The subscribed topics in a member's metadata, or undefined when it does not parse. */
export function subscriptionTopics(metadata: Buffer): string[] | undefined {
  try {
    const r = new Reader(metadata);
    if (r.int16() < 0) return undefined;
    // Every version starts with the topics (then user data); later versions only append fields.
    return readConsumerProtocolSubscription(r, 0).topics;
  } catch {
    return undefined;
  }
}

/** The union of the members' subscriptions for a consumer group with a chosen protocol; else undefined. */
export function groupSubscribedTopics(group: GroupMetadata): Set<string> | undefined {
  if (group.protocolType !== CONSUMER_PROTOCOL_TYPE || group.protocolName === null) return undefined;
  const out = new Set<string>();
  for (const m of group.members.values()) {
    let md: Buffer;
    try {
      md = m.metadata(group.protocolName);
    } catch {
      return undefined;
    }
    const topics = subscriptionTopics(md);
    if (topics === undefined) return undefined;
    for (const t of topics) out.add(t);
  }
  return out;
}
