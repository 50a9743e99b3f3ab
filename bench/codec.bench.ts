// Codec benchmark (issue 2): throughput of the produce and fetch paths' byte handling for 1 MiB of
// records, next to the machine's own limits (memcpy, raw crc32c) and a peer (KafkaJS's record batch
// codec). Run with `npm run bench:codec`. Each measurement warms up, then runs for at least 1 s; one line
// per measurement, in MB/s (10^6 bytes per second) of record bytes handled.

import { createRequire } from "node:module";
import { cpus } from "node:os";
import { performance } from "node:perf_hooks";
import { decodeRequest, decodeResponse, encodeRequest, encodeResponse } from "../src/protocol/framing.js";
import { type ApiDefinition, Apis } from "../src/protocol/generated/api-table.js";
import type { FetchResponse } from "../src/protocol/generated/messages/FetchResponse.js";
import {
  defaultFetchableTopicResponse,
  defaultFetchResponse,
  defaultPartitionData,
} from "../src/protocol/generated/messages/FetchResponse.js";
import type { ProduceRequest } from "../src/protocol/generated/messages/ProduceRequest.js";
import {
  availableCrc32cImplementations,
  CRC32C_IMPLEMENTATION,
  crc32cWith,
} from "../src/protocol/records/crc32c.js";
import {
  buildRecordBatch,
  CompressionType,
  decodeBatchRecords,
  RecordBatchIterator,
  setBaseOffset,
  setPartitionLeaderEpoch,
  validateRecordBatches,
} from "../src/protocol/records/index.js";

const MiB = 1024 * 1024;
const WARMUP_MS = 300;
const RUN_MS = 1000;

function report(name: string, bytes: number, iterations: number, ms: number): void {
  const mbps = (bytes * iterations) / (ms / 1000) / 1e6;
  const perOp = (ms * 1000) / iterations;
  console.log(
    `${name.padEnd(66)} ${mbps.toFixed(0).padStart(8)} MB/s  (${perOp.toFixed(1)} µs/op, ${iterations} ops)`,
  );
}

function measure(name: string, bytes: number, fn: () => unknown): void {
  let sink: unknown;
  const warmEnd = performance.now() + WARMUP_MS;
  while (performance.now() < warmEnd) sink = fn();
  let iterations = 0;
  const start = performance.now();
  let now = start;
  while (now - start < RUN_MS) {
    for (let i = 0; i < 16; i++) sink = fn();
    iterations += 16;
    now = performance.now();
  }
  report(name, bytes, iterations, now - start);
  if (sink === Symbol.for("never")) console.log(sink);
}

async function measureAsync(name: string, bytes: number, fn: () => Promise<unknown>): Promise<void> {
  const warmEnd = performance.now() + WARMUP_MS;
  while (performance.now() < warmEnd) await fn();
  let iterations = 0;
  const start = performance.now();
  let now = start;
  while (now - start < RUN_MS) {
    await fn();
    iterations++;
    now = performance.now();
  }
  report(name, bytes, iterations, now - start);
}

// 1 MiB of records: 1 KiB values with 16-byte keys, uncompressed, in one batch.
const value = Buffer.alloc(1024);
for (let i = 0; i < value.length; i++) value[i] = (i * 31) & 0xff;
const recordCount = Math.floor(MiB / (1024 + 16 + 8));
const records = Array.from({ length: recordCount }, (_, i) => ({
  key: Buffer.from(`key-${String(i).padStart(12, "0")}`),
  value,
  timestamp: 1_700_000_000_000n + BigInt(i),
}));
const batch = buildRecordBatch({ records, producerId: 1000n, producerEpoch: 0, baseSequence: 0 });
const bytes = batch.length;

console.log(`# codec benchmark — node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}`);
console.log(`# one batch of ${recordCount} records (16 B key, 1 KiB value), ${bytes} bytes, uncompressed`);
console.log(`# crc32c: ${CRC32C_IMPLEMENTATION}`);

console.log("## machine limits");
const copyTarget = Buffer.allocUnsafe(bytes);
measure("memcpy 1 MiB (Buffer.copy)", bytes, () => batch.copy(copyTarget));
for (const implementation of availableCrc32cImplementations()) {
  const crc = crc32cWith(implementation);
  const used = implementation === CRC32C_IMPLEMENTATION ? ", used by the codec" : "";
  measure(`crc32c 1 MiB (${implementation}${used})`, bytes, () => crc(batch));
}

console.log("## (1) batch validation — produce path, no per-record work");
measure("validate 1 MiB batch (header walk + CRC32C)", bytes, () => validateRecordBatches(batch));
measure("validate + assign offset + leader epoch in place", bytes, () => {
  for (const { position } of new RecordBatchIterator(batch)) {
    setBaseOffset(batch, position, 123_456n);
    setPartitionLeaderEpoch(batch, position, 5);
  }
});

const smallBatches = Buffer.concat(
  records.map((r, i) =>
    buildRecordBatch({ records: [r], baseOffset: BigInt(i), producerId: 1000n, baseSequence: i }),
  ),
);
measure(
  `validate ${recordCount} one-record batches (${smallBatches.length} B): per-batch cost`,
  smallBatches.length,
  () => validateRecordBatches(smallBatches),
);

console.log("## (2)/(3) Produce request v9 (generated codec, framing.ts)");
// framing.ts's encodeRequest takes ApiDefinition<Req> (response type unknown); the table's entry is typed
// with its response, which strictFunctionTypes does not accept as is.
const ProduceApi = Apis.Produce as unknown as ApiDefinition<ProduceRequest>;
const produceBody: ProduceRequest = {
  transactionalId: null,
  acks: -1,
  timeoutMs: 30_000,
  topicData: [{ name: "bench-topic", partitionData: [{ index: 0, records: batch }] }],
};
const produceFrame = Buffer.concat(encodeRequest(ProduceApi, 9, 1, "bench", produceBody)).subarray(4);
measure("decode Produce v9 request carrying 1 MiB", bytes, () => {
  const r = decodeRequest(produceFrame);
  if (!r.ok) throw new Error(r.kind);
  return r;
});
measure("decode Produce v9 + validate its batches (broker produce path)", bytes, () => {
  const r = decodeRequest(produceFrame);
  if (!r.ok) throw new Error(r.kind);
  const body = r.request.body as ProduceRequest;
  for (const t of body.topicData)
    for (const p of t.partitionData) if (p.records) validateRecordBatches(p.records);
});
measure("encode Produce v9 request carrying 1 MiB (chunks for writev)", bytes, () =>
  encodeRequest(ProduceApi, 9, 1, "bench", produceBody),
);
measure("encode Produce v9 request carrying 1 MiB (one flat Buffer)", bytes, () =>
  Buffer.concat(encodeRequest(ProduceApi, 9, 1, "bench", produceBody)),
);

console.log("## (4)/(5) Fetch response v12 (generated codec, framing.ts)");
const fetchBody: FetchResponse = {
  ...defaultFetchResponse(),
  responses: [
    {
      ...defaultFetchableTopicResponse(),
      topic: "bench-topic",
      partitions: [
        {
          ...defaultPartitionData(),
          highWatermark: 1000n,
          lastStableOffset: 1000n,
          logStartOffset: 0n,
          records: batch,
        },
      ],
    },
  ],
};
const fetchFrame = Buffer.concat(encodeResponse(Apis.Fetch, 12, 1, fetchBody)).subarray(4);
measure("decode Fetch v12 response carrying 1 MiB", bytes, () => decodeResponse(Apis.Fetch, 12, fetchFrame));
measure("decode Fetch v12 + walk its batches with CRC (consumer check.crcs)", bytes, () => {
  const { body } = decodeResponse(Apis.Fetch, 12, fetchFrame);
  for (const t of body.responses) {
    for (const p of t.partitions)
      if (p.records) validateRecordBatches(p.records, { allowIncompleteTail: true });
  }
});
measure("encode Fetch v12 response carrying 1 MiB (chunks for writev)", bytes, () =>
  encodeResponse(Apis.Fetch, 12, 1, fetchBody),
);

console.log("## record-level work (not on the broker's hot paths), with a peer");
measure("build 1 MiB batch from records (Tributary buildRecordBatch)", bytes, () =>
  buildRecordBatch({ records, producerId: 1000n, producerEpoch: 0, baseSequence: 0 }),
);
measure("decode 1 MiB batch to records (Tributary decodeBatchRecords)", bytes, () =>
  decodeBatchRecords(batch),
);

const require = createRequire(import.meta.url);
const KafkaJsDecoder = require("kafkajs/src/protocol/decoder") as new (b: Buffer) => unknown;
const kafkaJsDecodeBatch = require("kafkajs/src/protocol/recordBatch/v0/decoder") as (
  d: unknown,
) => Promise<unknown>;
await measureAsync("decode 1 MiB batch to records (KafkaJS RecordBatchDecoder)", bytes, () =>
  kafkaJsDecodeBatch(new KafkaJsDecoder(batch)),
);
for (const codec of [
  CompressionType.Gzip,
  CompressionType.Snappy,
  CompressionType.Lz4,
  CompressionType.Zstd,
]) {
  const compressed = buildRecordBatch({ records, compression: codec });
  const name = ["", "gzip", "snappy", "lz4", "zstd"][codec];
  measure(`decode 1 MiB of records from a ${name} batch (${compressed.length} B)`, bytes, () =>
    decodeBatchRecords(compressed),
  );
}
