// The consumer's read_committed filter over real batch bytes (transactional batches from
// buildRecordBatch, COMMIT/ABORT markers from buildEndTxnMarkerBatch, as a Fetch response carries them
// with its abortedTransactions list): aborted transactions are dropped up to their ABORT marker,
// committed ones and non-transactional batches are kept, control batches are never returned, and
// read_uncommitted keeps every data batch. (The broker has no transactions before issue 7, so the
// batches cannot come from a real transactional producer yet.)

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { AbortedTransactionFilter } from "../../src/client/consumer/aborted-transactions.js";
import {
  buildEndTxnMarkerBatch,
  buildRecordBatch,
  ControlRecordType,
  decodeRecordBatches,
} from "../../src/protocol/records/index.js";

function data(baseOffset: bigint, producerId: bigint, transactional: boolean, value: string): Buffer {
  return buildRecordBatch({
    baseOffset,
    producerId,
    producerEpoch: 0,
    baseSequence: 0,
    isTransactional: transactional,
    records: [{ value: Buffer.from(value) }],
  });
}

function marker(
  baseOffset: bigint,
  producerId: bigint,
  type: typeof ControlRecordType.Commit | typeof ControlRecordType.Abort,
): Buffer {
  return buildEndTxnMarkerBatch({
    type,
    baseOffset,
    producerId,
    producerEpoch: 0,
    coordinatorEpoch: 0,
    timestamp: 0n,
  });
}

// Offsets: 0 P1 (aborted txn) · 1 P2 (committed txn) · 2 plain · 3 P1 data · 4 ABORT P1 · 5 COMMIT P2 · 6 P1 new txn.
const LOG = Buffer.concat([
  data(0n, 1n, true, "p1-aborted-a"),
  data(1n, 2n, true, "p2-committed"),
  data(2n, -1n, false, "plain"),
  data(3n, 1n, true, "p1-aborted-b"),
  marker(4n, 1n, ControlRecordType.Abort),
  marker(5n, 2n, ControlRecordType.Commit),
  data(6n, 1n, true, "p1-next-txn"),
]);

function visible(filter: AbortedTransactionFilter): string[] {
  const out: string[] = [];
  for (const { header, records } of decodeRecordBatches(LOG)) {
    if (filter.skip(header, records[0]?.key)) continue;
    for (const r of records) out.push(r.value!.toString());
  }
  return out;
}

describe("AbortedTransactionFilter", () => {
  test("read_committed drops the aborted transaction up to its ABORT marker, never returns markers", () => {
    const f = new AbortedTransactionFilter([{ producerId: 1n, firstOffset: 0n }], true);
    assert.deepEqual(visible(f), ["p2-committed", "plain", "p1-next-txn"]);
  });

  test("read_uncommitted returns every data batch and no marker", () => {
    const f = new AbortedTransactionFilter([{ producerId: 1n, firstOffset: 0n }], false);
    assert.deepEqual(visible(f), ["p1-aborted-a", "p2-committed", "plain", "p1-aborted-b", "p1-next-txn"]);
  });

  test("an aborted transaction that starts later only drops batches from its first offset", () => {
    const f = new AbortedTransactionFilter([{ producerId: 1n, firstOffset: 3n }], true);
    assert.deepEqual(visible(f), ["p1-aborted-a", "p2-committed", "plain", "p1-next-txn"]);
  });
});
