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

/**
 * @platformatic/kafka with the connection options `connection` (tls, sasl): the admin creates `topic` (2
 * partitions) and lists it, a producer sends three records with acks=all, and a group consumer (group
 * `${topic}-group`) reads them back.
 */
export async function platformaticRoundTrip(
  bootstrap: string,
  connection: Record<string, unknown>,
  topic: string,
): Promise<void> {
  const { Admin, Consumer, ProduceAcks, Producer } = await import("@platformatic/kafka");
  const base = {
    bootstrapBrokers: [bootstrap],
    timeout: 10_000,
    retries: 20,
    retryDelay: 200,
    ...connection,
  };
  const admin = new Admin({ ...base, clientId: `${topic}-admin` });
  try {
    await admin.createTopics({ topics: [topic], partitions: 2, replicas: 1 });
    assert.ok((await admin.listTopics()).includes(topic), "the admin lists the new topic");
  } finally {
    await admin.close();
  }
  const producer = new Producer({ ...base, clientId: `${topic}-producer`, acks: ProduceAcks.ALL });
  try {
    const res = await producer.send({
      messages: ["p0", "p1", "p2"].map((v, i) => ({ topic, partition: i % 2, value: Buffer.from(v) })),
    });
    assert.ok(res.offsets && res.offsets.length > 0, "offsets acknowledged");
  } finally {
    await producer.close();
  }
  const consumer = new Consumer({
    ...base,
    clientId: `${topic}-consumer`,
    groupId: `${topic}-group`,
    maxWaitTime: 200,
  });
  try {
    const stream = await consumer.consume({ topics: [topic], mode: "earliest", autocommit: false });
    const got: string[] = [];
    const deadline = setTimeout(() => void stream.close(), 20_000);
    for await (const m of stream) {
      got.push(String(m.value));
      if (got.length >= 3) break;
    }
    clearTimeout(deadline);
    await stream.close();
    assert.deepEqual(got.sort(), ["p0", "p1", "p2"]);
  } finally {
    await consumer.close();
  }
}
