// Typed access to KafkaJS's internal record-batch and message-set codecs, used as an independent
// implementation to produce known-good bytes (KafkaJS supports none and gzip natively).

import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

interface KafkaJsEncoder {
  buffer: Buffer;
  writeInt64(v: unknown): KafkaJsEncoder;
  writeInt32(v: number): KafkaJsEncoder;
  writeEncoder(e: KafkaJsEncoder): KafkaJsEncoder;
  size(): number;
}

interface KafkaJsLong {
  fromString(s: string): unknown;
}

export interface KafkaJsRecordInput {
  offsetDelta: number;
  timestampDelta: number;
  key: Buffer | null;
  value: Buffer | null;
  headers?: Record<string, Buffer>;
}

export interface KafkaJsBatchInput {
  compression: number;
  firstOffset: bigint;
  firstTimestamp: number;
  maxTimestamp: number;
  partitionLeaderEpoch: number;
  lastOffsetDelta: number;
  transactional: boolean;
  producerId: bigint;
  producerEpoch: number;
  firstSequence: number;
  records: KafkaJsRecordInput[];
}

export interface KafkaJsDecodedRecord {
  offset: string;
  timestamp: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, Buffer>;
}

export interface KafkaJsDecodedBatch {
  firstOffset: string;
  lastOffsetDelta: number;
  producerId: string;
  inTransaction: boolean;
  isControlBatch: boolean;
  records: KafkaJsDecodedRecord[];
}

const Long = require("kafkajs/src/utils/long") as KafkaJsLong;
const Encoder = require("kafkajs/src/protocol/encoder") as new () => KafkaJsEncoder;
const Decoder = require("kafkajs/src/protocol/decoder") as new (b: Buffer) => unknown;
const { RecordBatch } = require("kafkajs/src/protocol/recordBatch/v0") as {
  RecordBatch: (o: Record<string, unknown>) => Promise<KafkaJsEncoder>;
};
const RecordBatchDecoder = require("kafkajs/src/protocol/recordBatch/v0/decoder") as (
  d: unknown,
) => Promise<KafkaJsDecodedBatch>;
const Record = require("kafkajs/src/protocol/recordBatch/record/v0") as (
  o: KafkaJsRecordInput,
) => KafkaJsEncoder;
const MessageSet = require("kafkajs/src/protocol/messageSet") as (o: {
  messageVersion: number;
  compression: number;
  entries: Array<{ key: Buffer | null; value: Buffer | null; timestamp?: number }>;
}) => KafkaJsEncoder;
const MessageV1 = require("kafkajs/src/protocol/message/v1") as (o: {
  compression: number;
  timestamp: number;
  key: Buffer | null;
  value: Buffer;
}) => KafkaJsEncoder;

/** A v2 record batch encoded by KafkaJS. */
export async function kafkaJsRecordBatch(input: KafkaJsBatchInput): Promise<Buffer> {
  const enc = await RecordBatch({
    compression: input.compression,
    firstOffset: Long.fromString(input.firstOffset.toString()),
    firstTimestamp: input.firstTimestamp,
    maxTimestamp: input.maxTimestamp,
    partitionLeaderEpoch: input.partitionLeaderEpoch,
    lastOffsetDelta: input.lastOffsetDelta,
    transactional: input.transactional,
    producerId: Long.fromString(input.producerId.toString()),
    producerEpoch: input.producerEpoch,
    firstSequence: input.firstSequence,
    records: input.records.map((r) => Record(r)),
  });
  return enc.buffer;
}

/** A v2 record batch decoded by KafkaJS. */
export async function kafkaJsDecodeBatch(batch: Buffer): Promise<KafkaJsDecodedBatch> {
  return RecordBatchDecoder(new Decoder(batch));
}

/** A legacy message set (magic 0 or 1, uncompressed) encoded by KafkaJS; its offsets are -1. */
export function kafkaJsMessageSet(
  magic: 0 | 1,
  entries: Array<{ key: Buffer | null; value: Buffer | null; timestamp?: number }>,
): Buffer {
  return MessageSet({ messageVersion: magic, compression: 0, entries }).buffer;
}

/**
 * A gzip-compressed magic 1 message set built from KafkaJS parts the way its Produce v2 does: inner
 * messages with relative offsets 0..n-1, one wrapper message at `wrapperOffset`.
 */
export function kafkaJsGzipMessageSetV1(
  entries: Array<{ key: Buffer | null; value: Buffer | null; timestamp: number }>,
  wrapperOffset: bigint,
  wrapperTimestamp: number,
  gzip: (b: Buffer) => Buffer,
): Buffer {
  const inner = MessageSet({ messageVersion: 1, compression: 1, entries }).buffer;
  const wrapper = MessageV1({ compression: 1, timestamp: wrapperTimestamp, key: null, value: gzip(inner) });
  const out = new Encoder();
  out.writeInt64(Long.fromString(wrapperOffset.toString()));
  out.writeInt32(wrapper.size());
  out.writeEncoder(wrapper);
  return out.buffer;
}
