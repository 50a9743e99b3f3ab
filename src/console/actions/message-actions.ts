// Sending a test message to a topic from the console (EFAK's "mock"): key, value and headers as text,
// to a given partition or the producer's choice, acks=all; answers with the partition and offset.

import { KafkaProducer } from "../../client/producer/kafka-producer.js";
import { HttpError } from "../http/router.js";
import { type Body, int, str, stringMap } from "./inputs.js";

export async function sendTestMessage(bootstrapServers: string, topic: string, b: Body) {
  const value = typeof b.value === "string" ? b.value : undefined;
  if (value === undefined) throw new HttpError(400, "value: expected a string");
  const key = str(b, "key", true) ?? null;
  const partition = int(b, "partition", 0, 2 ** 31 - 1, true);
  const headers = Object.entries(stringMap(b, "headers")).map(([k, v]) => ({
    key: k,
    value: Buffer.from(v),
  }));
  const producer = new KafkaProducer({
    "bootstrap.servers": bootstrapServers,
    "client.id": "tributary-console",
    acks: "all",
    "linger.ms": "0",
    "delivery.timeout.ms": "15000",
    "request.timeout.ms": "10000",
  });
  try {
    const md = await producer.send({ topic, partition, key, value, headers });
    return { topic, partition: md.partition, offset: md.offset.toString() };
  } catch (e) {
    throw new HttpError(502, (e as Error).message.split("\n")[0]);
  } finally {
    await producer.close(5_000).catch(() => {});
  }
}
