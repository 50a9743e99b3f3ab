// Test-only: appends one record batch with chosen record timestamps straight to a partition with a
// Produce request (acks=1) over an AdminClient's connection to broker 0 — for tests of offsets by time.

import assert from "node:assert/strict";
import type { AdminClient } from "../../src/client/admin/admin-client.js";
import { Apis } from "../../src/protocol/generated/api-table.js";
import { buildRecordBatch } from "../../src/protocol/records/index.js";

/** Appends records `v0, v1, …` with these timestamps to `topic`'s `partition`; asserts no error. */
export async function produceWithTimestamps(
  admin: AdminClient,
  topic: string,
  partition: number,
  timestamps: readonly number[],
): Promise<void> {
  const conn = await admin.cluster.connectionTo(0);
  const records = buildRecordBatch({
    records: timestamps.map((t, i) => ({ value: Buffer.from(`v${i}`), timestamp: BigInt(t) })),
    timestamp: BigInt(timestamps[0]),
  });
  const res = await conn.send(Apis.Produce, conn.versionFor(Apis.Produce, { min: 3 }), {
    transactionalId: null,
    acks: 1,
    timeoutMs: 5000,
    topicData: [{ name: topic, partitionData: [{ index: partition, records }] }],
  });
  assert.equal(res.responses[0].partitionResponses[0].errorCode, 0);
}
