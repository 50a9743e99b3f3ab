// Kafka's internal topics (org.apache.kafka.common.internals.Topic): `__consumer_offsets`, kept by the group
// coordinator, and `__transaction_state`, kept by the transaction coordinator. The one list of their
// names; the Metadata response marks them isInternal, produce refuses them to clients, the tools show them
// as internal. No imports, so every layer above the server may use it.

/** The group coordinator's topic (Kafka's Topic.GROUP_METADATA_TOPIC_NAME). */
export const GROUP_METADATA_TOPIC_NAME = "__consumer_offsets";

/** The transaction coordinator's topic (Kafka's Topic.TRANSACTION_STATE_TOPIC_NAME). */
export const TRANSACTION_STATE_TOPIC_NAME = "__transaction_state";

/** Every internal topic (Kafka's Topic.INTERNAL_TOPICS). */
export const INTERNAL_TOPICS: ReadonlySet<string> = new Set([
  GROUP_METADATA_TOPIC_NAME,
  TRANSACTION_STATE_TOPIC_NAME,
]);

/** Kafka's Topic.isInternal. */
export function isInternalTopic(topic: string): boolean {
  return INTERNAL_TOPICS.has(topic);
}
