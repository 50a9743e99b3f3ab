// The broker's MemoryPool under load, over real sockets with Tributary's own producer and consumer: Produce
// frames and Fetch reads reuse pooled memory (the pool's counters say so), and no byte a client reads or
// the log stores is ever one that a later request wrote into reused memory — every record read back, while
// producing goes on, equals what was sent; and a Fetch response still waiting for a client that does not
// read keeps its memory while other fetches reuse the pool.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { ConsumerRecord } from "../../src/client/consumer/fetcher.js";
import { KafkaConsumer } from "../../src/client/consumer/kafka-consumer.js";
import { KafkaProducer } from "../../src/client/producer/kafka-producer.js";
import { type LogSink, setLogSink } from "../../src/common/logger.js";
import { Apis } from "../../src/protocol/generated/api-table.js";
import {
  defaultFetchPartition,
  defaultFetchRequest,
  defaultFetchTopic,
} from "../../src/protocol/generated/messages/FetchRequest.js";
import { decodeRecordBatches } from "../../src/protocol/records/memory-records.js";
import { KafkaServer } from "../../src/server/broker-server.js";
import { KafkaConfig } from "../../src/server/kafka-config.js";
import { WireClient } from "./wire-client.js";

const RECORDS = 6000;
const PARTITIONS = 4;
const root = mkdtempSync(join(tmpdir(), "tributary-memory-pool-"));
const prevSink: LogSink = setLogSink(() => {});
let server: KafkaServer;
before(async () => {
  server = new KafkaServer(
    new KafkaConfig({
      "log.dirs": join(root, "logs"),
      "metrics.http.listener": "",
      listeners: "PLAINTEXT://127.0.0.1:0",
      "num.partitions": String(PARTITIONS),
    }),
  );
  await server.startup();
});
after(async () => {
  await server.shutdown();
  setLogSink(prevSink);
  rmSync(root, { recursive: true, force: true });
});

/** Record i's value: 1.5–2.5 KiB whose every byte depends on i and its position. */
function recordValue(i: number): Buffer {
  const v = Buffer.allocUnsafe(1536 + ((i * 7919) % 1024));
  for (let p = 0; p < v.length; p++) v[p] = (i * 131 + p * 17) & 0xff;
  return v;
}

test("produce and fetch through pooled memory keep every byte", async () => {
  const bootstrap = `127.0.0.1:${server.boundPort()}`;
  const producer = new KafkaProducer({
    "bootstrap.servers": bootstrap,
    "batch.size": "262144",
    "linger.ms": "20",
    acks: "1",
  });
  const consumer = new KafkaConsumer({ "bootstrap.servers": bootstrap, "auto.offset.reset": "earliest" });
  try {
    // The first record creates the topic; then the consumer reads while the rest are produced.
    await producer.send({ topic: "pooled", key: "0", value: recordValue(0) });
    consumer.assign(Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: "pooled", partition })));
    const sends: Array<Promise<unknown>> = [];
    for (let i = 1; i < RECORDS; i++) {
      sends.push(producer.send({ topic: "pooled", key: String(i), value: recordValue(i) }));
      if (i % 500 === 0) await new Promise((r) => setImmediate(r));
    }
    const seen = new Map<number, ConsumerRecord>();
    const deadline = Date.now() + 60_000;
    while (seen.size < RECORDS) {
      assert.ok(Date.now() < deadline, `read ${seen.size} of ${RECORDS} records within 60 s`);
      for (const r of await consumer.poll(200)) {
        const i = Number(r.key?.toString());
        assert.ok(!seen.has(i), `record ${i} read twice`);
        seen.set(i, r);
        assert.ok(
          r.value?.equals(recordValue(i)),
          `record ${i} (offset ${r.offset} of partition ${r.partition})`,
        );
      }
    }
    await Promise.all(sends);
    const pool = server.memoryPool;
    assert.ok(pool.reused > 0, `pooled memory was reused (fresh ${pool.fresh}, reused ${pool.reused})`);
    assert.ok(pool.fresh < pool.reused, `mostly reused (fresh ${pool.fresh}, reused ${pool.reused})`);

    // Reading everything again from the log (no producing now) gives the same bytes.
    const again = new KafkaConsumer({ "bootstrap.servers": bootstrap, "auto.offset.reset": "earliest" });
    try {
      again.assign(Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: "pooled", partition })));
      let n = 0;
      while (n < RECORDS) {
        assert.ok(Date.now() < deadline, `re-read ${n} of ${RECORDS} records`);
        for (const r of await again.poll(200)) {
          const i = Number(r.key?.toString());
          assert.ok(r.value?.equals(recordValue(i)), `re-read record ${i}`);
          n++;
        }
      }
    } finally {
      await again.close();
    }
  } finally {
    await consumer.close();
    await producer.close();
  }
});

test("a response waiting for a client that does not read keeps its memory", async () => {
  // Eight pipelined fetches of 4 × 1 MiB from different offsets: far more than the kernel's socket buffers
  // hold, so most of these responses wait in the broker while the client does not read.
  const slow = await WireClient.connect(server.boundPort());
  slow.socket.pause();
  const topicId = server.metadataCache?.topicId("pooled") ?? "";
  const fetches = 8;
  for (let f = 0; f < fetches; f++) {
    const req = {
      ...defaultFetchRequest(),
      maxWaitMs: 0,
      maxBytes: 64 << 20,
      topics: [
        {
          ...defaultFetchTopic(),
          topic: "pooled",
          topicId,
          partitions: Array.from({ length: PARTITIONS }, (_, partition) => ({
            ...defaultFetchPartition(),
            partition,
            fetchOffset: BigInt(f * 40),
            partitionMaxBytes: 1 << 20,
          })),
        },
      ],
    };
    slow.send(Apis.Fetch, 12, req);
  }
  await new Promise((r) => setTimeout(r, 300));
  // Meanwhile other consumers read everything, twice, through the same pool.
  for (let round = 0; round < 2; round++) {
    const c = new KafkaConsumer({ "bootstrap.servers": `127.0.0.1:${server.boundPort()}` });
    try {
      c.assign(Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: "pooled", partition })));
      for (let p = 0; p < PARTITIONS; p++) c.seek({ topic: "pooled", partition: p }, 0n);
      let n = 0;
      const deadline = Date.now() + 30_000;
      while (n < RECORDS && Date.now() < deadline) n += (await c.poll(200)).length;
      assert.equal(n, RECORDS);
    } finally {
      await c.close();
    }
  }
  slow.socket.resume();
  let checked = 0;
  for (let f = 0; f < fetches; f++) {
    const res = await slow.receive(Apis.Fetch, 12, 30_000);
    for (const p of res.body.responses[0].partitions) {
      assert.equal(p.errorCode, 0);
      for (const { records } of decodeRecordBatches(p.records ?? Buffer.alloc(0))) {
        for (const r of records) {
          const i = Number(r.key?.toString());
          assert.ok(r.value?.equals(recordValue(i)), `fetch ${f}: record ${i} at offset ${r.offset}`);
          checked++;
        }
      }
    }
  }
  assert.ok(checked > 8 * PARTITIONS * 100, `checked ${checked} records`);
  slow.close();
});
