// readRecordTimestamps: the timestamp of the record at given offsets (fetch-once.ts: one small
// sessionless Fetch per partition leader). Used for "lag in seconds" (the age of the oldest unconsumed
// record = the record at a group's committed offset). A partition whose record cannot be read (no
// leader, an error, nothing at that offset yet) is answered with null; nothing here throws for one
// partition's trouble.

import type { ClusterClient } from "../network/cluster-client.js";
import { fetchOnce, type OffsetRef, refKey } from "./fetch-once.js";

export type { OffsetRef };

/** Enough for a typical first batch; a larger batch still comes back whole (KIP-74). */
const PARTITION_MAX_BYTES = 16 * 1024;

/** Timestamps (ms) of the records at `refs`, keyed `topic-partition`; null where none could be read. */
export async function readRecordTimestamps(
  cluster: ClusterClient,
  refs: readonly OffsetRef[],
  timeoutMs = 5_000,
): Promise<Map<string, bigint | null>> {
  const fetched = await fetchOnce(cluster, refs, { partitionMaxBytes: PARTITION_MAX_BYTES, timeoutMs });
  const out = new Map<string, bigint | null>();
  for (const r of refs)
    out.set(
      refKey(r.topic, r.partition),
      fetched.get(refKey(r.topic, r.partition))?.records[0]?.timestamp ?? null,
    );
  return out;
}
