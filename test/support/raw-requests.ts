// Test-only: requests written byte by byte, for tests that speak to a broker below any client (hostile or
// unauthenticated connections), and one KafkaJS round trip for the security tests' client matrix.

import assert from "node:assert/strict";
import type { KafkaConfig } from "kafkajs";

/** A whole Metadata v1 request frame (api 3, version 1, correlation 1, client id "x", topics null). */
export function metadataV1Frame(): Buffer {
  const frame = Buffer.alloc(4 + 15);
  frame.writeInt32BE(15, 0);
  frame.writeInt16BE(3, 4);
  frame.writeInt16BE(1, 6);
  frame.writeInt32BE(1, 8);
  frame.writeInt16BE(1, 12);
  frame.write("x", 14);
  frame.writeInt32BE(-1, 15);
  return frame;
}

/** KafkaJS with `config` produces two records to `topic` and reads its end offset back (2). */
export async function kafkajsRoundTrip(config: KafkaConfig, topic: string): Promise<void> {
  const { Kafka, logLevel } = await import("kafkajs");
  const kafka = new Kafka({ logLevel: logLevel.NOTHING, ...config });
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic, messages: [{ value: "r1" }, { value: "r2" }] });
  await producer.disconnect();
  const admin = kafka.admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  assert.equal(offsets[0].high, "2");
}
