// TransactionIndex: 34-byte entries (version 0), collecting aborted transactions for a fetch range,
// truncation, reopening and the sanity check.

import assert from "node:assert/strict";
import { appendFileSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { CorruptIndexError } from "../../src/storage/abstract-index.js";
import { TransactionIndex } from "../../src/storage/transaction-index.js";
import { tempPartitionDir } from "./storage-test-utils.js";

test("entries are version int16, producerId, firstOffset, lastOffset, lastStableOffset", () => {
  const t = tempPartitionDir("txn-index");
  mkdirSync(t.dir, { recursive: true });
  const file = join(t.dir, "00000000000000000000.txnindex");
  try {
    const idx = new TransactionIndex(0n, file);
    idx.append({ producerId: 7n, firstOffset: 0n, lastOffset: 10n, lastStableOffset: 0n });
    idx.append({ producerId: 8n, firstOffset: 5n, lastOffset: 20n, lastStableOffset: 11n });
    idx.append({ producerId: 9n, firstOffset: 21n, lastOffset: 30n, lastStableOffset: 40n });
    assert.throws(() =>
      idx.append({ producerId: 1n, firstOffset: 0n, lastOffset: 30n, lastStableOffset: 0n }),
    );
    idx.close();
    const b = readFileSync(file);
    assert.equal(b.length, 3 * 34);
    assert.equal(b.readInt16BE(34), 0);
    assert.equal(b.readBigInt64BE(34 + 2), 8n);
    assert.equal(b.readBigInt64BE(34 + 10), 5n);
    assert.equal(b.readBigInt64BE(34 + 18), 20n);
    assert.equal(b.readBigInt64BE(34 + 26), 11n);

    const reopened = new TransactionIndex(0n, file);
    reopened.sanityCheck();
    const r = reopened.collectAbortedTxns(12n, 25n);
    assert.deepEqual(
      r.abortedTransactions.map((x) => x.producerId),
      [8n, 9n],
    );
    assert.equal(r.isComplete, true);
    assert.deepEqual(
      reopened.collectAbortedTxns(0n, 5n).abortedTransactions.map((x) => x.producerId),
      [7n],
    );
    reopened.truncateTo(20n);
    assert.equal(reopened.size, 1);
    reopened.close();
    assert.equal(readFileSync(file).length, 34);
    appendFileSync(file, Buffer.alloc(5));
    assert.throws(() => new TransactionIndex(0n, file).sanityCheck(), CorruptIndexError);
  } finally {
    t.cleanup();
  }
});
