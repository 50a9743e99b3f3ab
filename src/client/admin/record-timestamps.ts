// readRecordTimestamps: the timestamp of the record at given offsets. Used for "lag in seconds" (the age
// of the oldest unconsumed record = the record at a group's committed offset). First one small
// sessionless Fetch per partition leader for all of them (fetch-once.ts). A leader returns a first batch
// larger than the partition limit only for the first partition of its response that has data (KIP-74):
// a later partition whose next batch is larger comes back with no records (Tributary) or with part of
// the batch (Kafka, whose header then gives its size). Such a partition — and one whose answer held only
// batches before the offset or control batches — is read again alone, one partition per request, so it
// is the first of its response, with a limit of at least the batch's size when the broker said it.
// Bounded: at most MAX_RETRIES more reads per partition, RETRY_CONCURRENCY requests in flight; `stats`
// counts the requests made. A partition whose record cannot be read (no leader, an error, nothing at
// that offset yet) is answered with null; nothing here throws for one partition's trouble.

import { ErrorCode } from "../../protocol/generated/errors.js";
import type { ClusterClient } from "../network/cluster-client.js";
import { type FetchedPartition, fetchOnce, type OffsetRef, refKey } from "./fetch-once.js";

export type { OffsetRef };

/** Enough for a typical first batch; a larger one is read again alone (see above). */
const PARTITION_MAX_BYTES = 16 * 1024;
/** Reads of one partition after the first, at most. */
const MAX_RETRIES = 3;
/** Single-partition reads in flight at once. */
const RETRY_CONCURRENCY = 4;

/** What reading cost: Fetch requests sent, and how many of them were single-partition retries. */
export interface TimestampReadStats {
  requests: number;
  retries: number;
}

interface Retry {
  readonly ref: OffsetRef;
  readonly at: bigint;
  readonly maxBytes: number;
}

/** The timestamp of `f`'s first record, or what to read next to find it (undefined: give up). */
function outcome(ref: OffsetRef, at: bigint, f: FetchedPartition | undefined): bigint | Retry | undefined {
  const ts = f?.records[0]?.timestamp;
  if (ts !== undefined) return ts;
  if (!f || f.errorCode !== ErrorCode.NONE) return undefined;
  // Whole batches came back without a record at or after `at` (control batches, compacted away): go on
  // after them. Otherwise the first batch did not fit: read it alone.
  const next = f.nextOffset !== undefined && f.nextOffset > at ? f.nextOffset : at;
  if (next >= f.highWatermark) return undefined;
  return { ref, at: next, maxBytes: Math.max(PARTITION_MAX_BYTES, f.truncatedBatchBytes ?? 0) };
}

/** Timestamps (ms) of the records at `refs`, keyed `topic-partition`; null where none could be read. */
export async function readRecordTimestamps(
  cluster: ClusterClient,
  refs: readonly OffsetRef[],
  timeoutMs = 5_000,
  stats: TimestampReadStats = { requests: 0, retries: 0 },
): Promise<Map<string, bigint | null>> {
  const out = new Map<string, bigint | null>();
  const fetched = await fetchOnce(cluster, refs, { partitionMaxBytes: PARTITION_MAX_BYTES, timeoutMs });
  const leaders = new Set(refs.map((r) => cluster.leaderFor(r.topic, r.partition)));
  leaders.delete(undefined);
  stats.requests += leaders.size;
  let retries: Retry[] = [];
  for (const r of refs) {
    const key = refKey(r.topic, r.partition);
    const o = outcome(r, r.offset, fetched.get(key));
    out.set(key, typeof o === "bigint" ? o : null);
    if (typeof o === "object") retries.push(o);
  }
  for (let round = 0; round < MAX_RETRIES && retries.length > 0; round++) {
    const next: Retry[] = [];
    for (let i = 0; i < retries.length; i += RETRY_CONCURRENCY) {
      await Promise.all(
        retries.slice(i, i + RETRY_CONCURRENCY).map(async (r) => {
          const key = refKey(r.ref.topic, r.ref.partition);
          stats.requests++;
          stats.retries++;
          const one = await fetchOnce(cluster, [{ ...r.ref, offset: r.at }], {
            partitionMaxBytes: r.maxBytes,
            timeoutMs,
          });
          const o = outcome(r.ref, r.at, one.get(key));
          if (typeof o === "bigint") out.set(key, o);
          else if (o !== undefined) next.push(o);
        }),
      );
    }
    retries = next;
  }
  return out;
}
