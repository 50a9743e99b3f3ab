// Produce (API key 0), Kafka's KafkaApis.handleProduceRequest. Accepts v3–11 (magic 2 batches only; see
// docs/record-format.md): per partition it checks what the request itself must satisfy (a valid topic
// name, exactly one magic-2 batch, no zstd below v7, a client batch whose lastOffsetDelta + 1 equals its
// record count and that is not a control batch), then hands the bytes to the ReplicaManager, which runs
// the LogValidator (record-level errors: INVALID_TIMESTAMP, INVALID_RECORD, sent back as record_errors;
// recompression to the topic's compression.type), validates CRC and sizes (CORRUPT_MESSAGE,
// MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE), assigns offsets and waits for the ISR with acks=-1; an
// offline partition answers KAFKA_STORAGE_ERROR. A transactional batch for a partition where its producer
// has no open transaction is first verified with the transaction coordinator, on this broker or another
// (KIP-890 part 1, AddPartitionsToTxnManager: INVALID_TXN_STATE unless the partition was added to the
// ongoing transaction). acks=0 gets no response.
// Here only batch headers are read.

import { ErrorCode, type ErrorName, errorDefinition, KafkaError } from "../../protocol/errors.js";
import type { ProduceRequest } from "../../protocol/generated/messages/ProduceRequest.js";
import {
  defaultPartitionProduceResponse,
  defaultProduceResponse,
  defaultTopicProduceResponse,
  type PartitionProduceResponse,
  type ProduceResponse,
} from "../../protocol/generated/messages/ProduceResponse.js";
import {
  ATTRIBUTES_OFFSET,
  BASE_SEQUENCE_OFFSET,
  batchSizeAt,
  COMPRESSION_CODEC_MASK,
  CONTROL_FLAG_MASK,
  CompressionType,
  isRecordBatchCrcValid,
  LAST_OFFSET_DELTA_OFFSET,
  MAGIC_OFFSET,
  PRODUCER_EPOCH_OFFSET,
  PRODUCER_ID_OFFSET,
  RECORD_BATCH_MAGIC,
  RECORD_BATCH_OVERHEAD,
  RECORDS_COUNT_OFFSET,
  TRANSACTIONAL_FLAG_MASK,
} from "../../protocol/records/index.js";
import { Operation, ResourceType } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import { type Handler, type HandlerRegistration, NO_RESPONSE } from "../handler.js";
import type { ProduceEntry, ProducePartitionResult } from "../replication/replica-manager.js";

/** The oldest Produce version this broker accepts (magic 2 record batches). */
export const PRODUCE_MIN_VERSION = 3;

const LEGAL_TOPIC_CHARS = /^[a-zA-Z0-9._-]+$/;

/** Kafka's Topic.validate: why a topic name is illegal, or undefined. */
export function invalidTopicNameReason(topic: string): string | undefined {
  if (topic.length === 0) return "Topic name is illegal, it can't be empty";
  if (topic === "." || topic === "..") return 'Topic name cannot be "." or ".."';
  if (topic.length > 249)
    return `Topic name is illegal, it can't be longer than 249 characters, topic name: ${topic}`;
  if (!LEGAL_TOPIC_CHARS.test(topic))
    return `Topic name "${topic}" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`;
  return undefined;
}

/**
 * The checks Kafka makes on a v3+ produce's records before appending (ProduceRequest.validateRecords and
 * LogValidator.validateBatch for client batches), on the header only. Throws KafkaError.
 */
export function validateProduceRecords(records: Buffer | null, apiVersion: number): void {
  const oneBatch = `Produce requests with version ${apiVersion} are only allowed to contain exactly one record batch per partition`;
  if (records === null || records.length === 0) {
    throw new KafkaError(
      "INVALID_RECORD",
      `Produce requests with version ${apiVersion} must have at least one record batch per partition`,
    );
  }
  if (records.length <= MAGIC_OFFSET)
    throw new KafkaError("CORRUPT_MESSAGE", `a record batch of ${records.length} bytes is too short`);
  const magic = records.readInt8(MAGIC_OFFSET);
  if (magic !== RECORD_BATCH_MAGIC) {
    throw new KafkaError(
      magic === 0 || magic === 1 ? "INVALID_RECORD" : "CORRUPT_MESSAGE",
      magic === 0 || magic === 1
        ? "Produce requests with version 3+ are only allowed to contain record batches with magic version 2"
        : `record batch has an unknown magic ${magic}`,
    );
  }
  if (records.length < RECORD_BATCH_OVERHEAD)
    throw new KafkaError(
      "CORRUPT_MESSAGE",
      `a record batch of ${records.length} bytes is shorter than its header`,
    );
  const size = batchSizeAt(records, 0);
  if (size < RECORD_BATCH_OVERHEAD || size > records.length)
    throw new KafkaError(
      "CORRUPT_MESSAGE",
      `the record batch declares ${size} bytes, ${records.length} present`,
    );
  if (size < records.length) throw new KafkaError("INVALID_RECORD", oneBatch);
  const attributes = records.readInt16BE(ATTRIBUTES_OFFSET);
  if ((attributes & COMPRESSION_CODEC_MASK) === CompressionType.Zstd && apiVersion < 7) {
    throw new KafkaError(
      "UNSUPPORTED_COMPRESSION_TYPE",
      `Produce requests with version ${apiVersion} are not allowed to use ZStandard compression`,
    );
  }
  const lastOffsetDelta = records.readInt32BE(LAST_OFFSET_DELTA_OFFSET);
  const count = records.readInt32BE(RECORDS_COUNT_OFFSET);
  let invalid: string | undefined;
  if (lastOffsetDelta < 0) invalid = `Batch has an invalid offset range: [0, ${lastOffsetDelta}]`;
  else if (count <= 0) invalid = `Invalid reported count for record batch: ${count}`;
  else if (lastOffsetDelta + 1 !== count)
    invalid = `Inconsistent batch offset range [0, ${lastOffsetDelta}] and count of records ${count}`;
  else if (attributes & CONTROL_FLAG_MASK) invalid = "Clients are not allowed to write control records";
  else if (records.readBigInt64BE(PRODUCER_ID_OFFSET) >= 0n && records.readInt32BE(BASE_SEQUENCE_OFFSET) < 0)
    invalid = "Invalid sequence number -1 in record batch with a producer id";
  if (invalid !== undefined) {
    // Kafka checks the CRC before the client-batch rules: a corrupt batch is CORRUPT_MESSAGE.
    if (!isRecordBatchCrcValid(records, 0))
      throw new KafkaError("CORRUPT_MESSAGE", "the record batch fails its CRC32C check");
    throw new KafkaError("INVALID_RECORD", invalid);
  }
}

export function produceHandler(services: BrokerServices): HandlerRegistration {
  const handle: Handler<ProduceRequest, ProduceResponse> = async (ctx, request) => {
    const version = ctx.apiVersion;
    const replicaManager = services.replicaManager;
    const early = new Map<string, ProducePartitionResult>();
    const entries: ProduceEntry[] = [];
    const fail = (topic: string, partition: number, error: ErrorName, message: string): void => {
      early.set(`${topic}-${partition}`, {
        topicPartition: { topic, partition },
        error,
        errorMessage: message,
        baseOffset: -1n,
        logAppendTimeMs: -1n,
        logStartOffset: -1n,
        recordErrors: [],
      });
    };
    // Authorization (KafkaApis): a transactional producer needs WRITE on its transactional id (else every
    // partition is refused); each topic needs WRITE.
    const auth = services.auth;
    const txnId = request.transactionalId;
    if (txnId !== null) auth.requireTransactionalId(ctx, Operation.WRITE, txnId);
    const writable = auth.filterAuthorized(
      ctx,
      Operation.WRITE,
      ResourceType.TOPIC,
      request.topicData.map((t) => t.name),
    );
    for (const t of request.topicData) {
      const badName = invalidTopicNameReason(t.name);
      for (const p of t.partitionData) {
        if (!writable.has(t.name)) {
          fail(t.name, p.index, "TOPIC_AUTHORIZATION_FAILED", "Topic authorization failed.");
          continue;
        }
        if (badName !== undefined) {
          fail(t.name, p.index, "INVALID_TOPIC_EXCEPTION", badName);
          continue;
        }
        try {
          validateProduceRecords(p.records, version);
        } catch (e) {
          if (!(e instanceof KafkaError)) throw e;
          fail(t.name, p.index, e.errorName as ErrorName, e.message);
          continue;
        }
        const tp = { topic: t.name, partition: p.index };
        // Only a transactional batch is checked (and may wait on another broker): no await otherwise.
        const records = p.records as Buffer;
        const unverified = isTransactionalBatch(records)
          ? await unverifiedTransactionalAppend(services, request.transactionalId, tp, records)
          : undefined;
        if (unverified !== undefined) {
          fail(t.name, p.index, unverified.error, unverified.message);
          continue;
        }
        entries.push({ topicPartition: tp, records });
      }
    }
    const results = await replicaManager.appendRecords(request.timeoutMs, request.acks, entries, {
      internalTopicsAllowed: ctx.clientId === "__admin_client",
    });
    if (request.acks === 0) return NO_RESPONSE;
    const byKey = new Map<string, ProducePartitionResult>(early);
    for (const r of results) byKey.set(`${r.topicPartition.topic}-${r.topicPartition.partition}`, r);
    const response = defaultProduceResponse();
    for (const t of request.topicData) {
      const topic = {
        ...defaultTopicProduceResponse(),
        name: t.name,
        partitionResponses: [] as PartitionProduceResponse[],
      };
      for (const p of t.partitionData) {
        const r = byKey.get(`${t.name}-${p.index}`);
        const out = defaultPartitionProduceResponse();
        out.index = p.index;
        if (r !== undefined) {
          out.errorCode = r.error === "NONE" ? 0 : ErrorCode[r.error];
          out.baseOffset = r.baseOffset;
          out.logAppendTimeMs = r.logAppendTimeMs;
          out.logStartOffset = r.logStartOffset;
          out.errorMessage = r.error === "NONE" ? null : r.errorMessage;
          out.recordErrors = r.recordErrors.map((e) => ({
            batchIndex: e.batchIndex,
            batchIndexErrorMessage: e.message,
          }));
        }
        topic.partitionResponses.push(out);
      }
      response.responses.push(topic);
    }
    return response;
  };
  return { apiKey: 0, minVersion: PRODUCE_MIN_VERSION, handle };
}

/** A batch with the transactional attribute (what KIP-890 verification applies to). */
function isTransactionalBatch(records: Buffer): boolean {
  return (
    records.length >= RECORD_BATCH_OVERHEAD &&
    (records.readInt16BE(ATTRIBUTES_OFFSET) & TRANSACTIONAL_FLAG_MASK) !== 0
  );
}

/**
 * KIP-890 part 1 (transaction.partition.verification.enable, Kafka 3.6+): a transactional batch for a
 * partition where its producer has no open transaction is appended only if the transaction coordinator
 * says the partition was added to the producer's ongoing transaction — so a late retry of an earlier
 * transaction's batch cannot land in a later one. Answers INVALID_TXN_STATE (or the coordinator's error,
 * e.g. PRODUCER_FENCED) otherwise; undefined when the append may go ahead.
 */
async function unverifiedTransactionalAppend(
  services: BrokerServices,
  transactionalId: string | null,
  tp: { topic: string; partition: number },
  records: Buffer,
): Promise<{ error: ErrorName; message: string } | undefined> {
  const producerId = records.readBigInt64BE(PRODUCER_ID_OFFSET);
  const producerEpoch = records.readInt16BE(PRODUCER_EPOCH_OFFSET);
  const state = services.replicaManager.getPartition(tp)?.log?.producerStateManager.lastEntry(producerId);
  // Already verified: the producer's transaction is open on this partition with this epoch.
  if (state !== undefined && state.currentTxnFirstOffset >= 0n && state.producerEpoch === producerEpoch)
    return undefined;
  // Kafka refuses transactional records without a transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
  // this broker accepts them unverified (the log-side tests write such batches directly).
  if (transactionalId === null) return undefined;
  // The coordinator may be another broker (AddPartitionsToTxn v4 with verify_only, KIP-890).
  const code = await services.addPartitionsToTxnManager.verify(
    transactionalId,
    producerId,
    producerEpoch,
    tp,
  );
  if (code === ErrorCode.NONE) return undefined;
  return {
    error: (errorDefinition(code)?.name ?? "INVALID_TXN_STATE") as ErrorName,
    message: `Partition ${tp.topic}-${tp.partition} is not part of an ongoing transaction of ${transactionalId}`,
  };
}
