// The records of `__transaction_state` in Kafka's exact format (Kafka's TransactionLog serde over
// ../shared/kafka-protocol/coordinator-records/TransactionLog*.json): the key is an int16 version (0)
// followed by TransactionLogKey, the value an int16 version followed by TransactionLogValue, or null (the
// tombstone of an expired transactional id). Kafka writes value version 0 for transaction versions 0/1
// (the client protocols this coordinator speaks) and reads 0 and 1.

import {
  readTransactionLogKey,
  writeTransactionLogKey,
} from "../../../protocol/generated/coordinator-records/TransactionLogKey.js";
import {
  readTransactionLogValue,
  type TransactionLogValue,
  writeTransactionLogValue,
} from "../../../protocol/generated/coordinator-records/TransactionLogValue.js";
import { Reader } from "../../../protocol/primitives/reader.js";
import { Writer } from "../../../protocol/primitives/writer.js";
import { NO_PRODUCER_ID, TransactionMetadata, type TxnTransitMetadata } from "./transaction-metadata.js";
import { transactionStateFromId, transactionStateId } from "./transaction-state.js";

export const TRANSACTION_LOG_KEY_VERSION = 0;
export const TRANSACTION_LOG_VALUE_VERSION = 0;

export function transactionLogKey(transactionalId: string): Buffer {
  const w = new Writer(32);
  w.int16(TRANSACTION_LOG_KEY_VERSION);
  writeTransactionLogKey(w, { transactionalId }, TRANSACTION_LOG_KEY_VERSION);
  return w.toBuffer();
}

/** Kafka's TransactionLog.valueToBytes: partitions grouped by topic. */
export function transactionLogValue(t: TxnTransitMetadata): Buffer {
  if (t.txnState === "PrepareEpochFence" || t.txnState === "Dead")
    throw new RangeError(`${t.txnState} is never written to the transaction log`);
  const byTopic = new Map<string, number[]>();
  for (const tp of t.topicPartitions) {
    let ps = byTopic.get(tp.topic);
    if (ps === undefined) {
      ps = [];
      byTopic.set(tp.topic, ps);
    }
    ps.push(tp.partition);
  }
  const v: TransactionLogValue = {
    producerId: t.producerId,
    previousProducerId: -1n,
    nextProducerId: -1n,
    producerEpoch: t.producerEpoch,
    transactionTimeoutMs: t.txnTimeoutMs,
    transactionStatus: transactionStateId(t.txnState),
    transactionPartitions:
      t.txnState === "Empty" ? [] : [...byTopic].map(([topic, partitionIds]) => ({ topic, partitionIds })),
    transactionLastUpdateTimestampMs: BigInt(t.txnLastUpdateTimestamp),
    transactionStartTimestampMs: BigInt(t.txnStartTimestamp),
    clientTransactionVersion: 0,
  };
  const w = new Writer(64);
  w.int16(TRANSACTION_LOG_VALUE_VERSION);
  writeTransactionLogValue(w, v, TRANSACTION_LOG_VALUE_VERSION);
  return w.toBuffer();
}

/** Kafka's readTxnRecordKey; undefined for a key version this coordinator does not know. */
export function readTransactionLogKeyRecord(bytes: Buffer): string | undefined {
  const r = new Reader(bytes);
  const version = r.int16();
  if (version !== 0) return undefined;
  return readTransactionLogKey(r, version).transactionalId;
}

/** Kafka's readTxnRecordValue; null for a tombstone. */
export function readTransactionLogValueRecord(
  transactionalId: string,
  bytes: Buffer | null,
): TransactionMetadata | null {
  if (bytes === null) return null;
  const r = new Reader(bytes);
  const version = r.int16();
  if (version < 0 || version > 1) throw new RangeError(`unknown transaction log value version ${version}`);
  const v = readTransactionLogValue(r, version);
  const partitions = (v.transactionPartitions ?? []).flatMap((p) =>
    p.partitionIds.map((partition) => ({ topic: p.topic, partition })),
  );
  return new TransactionMetadata(
    transactionalId,
    v.producerId,
    v.previousProducerId >= 0n ? v.previousProducerId : NO_PRODUCER_ID,
    v.producerEpoch,
    -1,
    v.transactionTimeoutMs,
    transactionStateFromId(v.transactionStatus),
    partitions,
    Number(v.transactionStartTimestampMs),
    Number(v.transactionLastUpdateTimestampMs),
  );
}
