// Kafka's MessageParser implementations for `dump-log --print-data-log`: how a record's key and value become
// the `key: … payload: …` text. DecoderMessageParser runs the --key-decoder-class / --value-decoder-class
// decoders (StringDecoder, IntegerDecoder, LongDecoder); TransactionLogMessageParser
// (--transaction-log-decoder) prints __transaction_state records as TransactionLog.formatRecordKeyAndValue
// does. The __consumer_offsets parser (--offsets-decoder) is offsets-message-parser.ts.

import { readTransactionLogKey } from "../../../protocol/generated/coordinator-records/TransactionLogKey.js";
import { readTransactionLogValue } from "../../../protocol/generated/coordinator-records/TransactionLogValue.js";
import { Reader } from "../../../protocol/primitives/reader.js";
import type { DecodedRecord } from "../../../protocol/records/index.js";
import {
  type TransactionState,
  transactionStateFromId,
} from "../../../server/coordinator/transaction/transaction-state.js";
import { DumpError, UsageError } from "./dump-errors.js";

export type MessageParser = (record: DecodedRecord) => [key: string | undefined, payload: string | undefined];

export type Decoder = (bytes: Buffer) => string;

export function decoderFor(option: string, className: string | undefined): Decoder {
  const name = (className ?? "StringDecoder").split(".").pop();
  switch (name) {
    case "StringDecoder":
      return (b) => b.toString("utf8");
    case "IntegerDecoder":
      return (b) => {
        if (b.length < 4)
          throw new DumpError("java.nio.BufferUnderflowException (IntegerDecoder needs 4 bytes)");
        return String(b.readInt32BE(0));
      };
    case "LongDecoder":
      return (b) => {
        if (b.length < 8)
          throw new DumpError("java.nio.BufferUnderflowException (LongDecoder needs 8 bytes)");
        return String(b.readBigInt64BE(0));
      };
    default:
      throw new UsageError(
        `--${option}: unsupported decoder '${className}' (expected StringDecoder, IntegerDecoder or LongDecoder)`,
      );
  }
}

/** Kafka's DecoderMessageParser: key and value through the decoders; a null key or value prints nothing. */
export function decoderParser(keyDecoder: Decoder, valueDecoder: Decoder): MessageParser {
  return (r) => [
    r.key === null ? undefined : keyDecoder(r.key),
    r.value === null ? undefined : valueDecoder(r.value),
  ];
}

/** --transaction-log-decoder: __transaction_state records as Kafka's TransactionLog.formatRecordKeyAndValue prints them. */
export function parseTransactionLogRecord(r: DecodedRecord): [string | undefined, string | undefined] {
  if (r.key === null) throw new DumpError("Failed to decode transaction log record: missing key");
  const kr = new Reader(r.key);
  const version = kr.int16();
  if (version !== 0) return [`unknown::version=${version}`, undefined];
  const key = `transaction_metadata::transactionalId=${readTransactionLogKey(kr, version).transactionalId}`;
  if (r.value === null) return [key, "<DELETE>"];
  const vr = new Reader(r.value);
  const vv = vr.int16();
  if (vv < 0 || vv > 1) throw new DumpError(`Unknown version ${vv} from the transaction log message value`);
  const v = readTransactionLogValue(vr, vv);
  let state: TransactionState;
  try {
    state = transactionStateFromId(v.transactionStatus);
  } catch {
    throw new DumpError(
      `Unknown transaction state byte ${v.transactionStatus} from the transaction status message`,
    );
  }
  const partitions = (v.transactionPartitions ?? []).flatMap((tp) =>
    tp.partitionIds.map((p) => `${tp.topic}-${p}`),
  );
  return [
    key,
    `producerId:${v.producerId},producerEpoch:${v.producerEpoch},state=${state},partitions=[${partitions.join(",")}],txnLastUpdateTimestamp=${v.transactionLastUpdateTimestampMs},txnTimeoutMs=${v.transactionTimeoutMs}`,
  ];
}
