// Fenced batches: the controller's writes for many partitions as few ZooKeeper multis, each one fenced by
// the controller epoch (the caller's `fencedMulti` puts a check of /controller_epoch's version first, so a
// controller that lost its epoch writes nothing). Kafka's controller pipelines one request per partition
// (KafkaZkClient.updateLeaderAndIsr, createTopicPartitionStatesRaw); here up to PARTITIONS_PER_MULTI
// partitions share one multi, bounded by MULTI_BYTES (far below ZooKeeper's jute.maxbuffer of 1 MiB), and
// MULTIS_IN_FLIGHT multis are pipelined.
// A multi is all or nothing. When one of a batch's ops fails (a partition's znode version moved on, a
// znode exists already) nothing of that batch is written, and each of its partitions is written again on
// its own (`single`, the per-partition write), so one partition's failure never fails the others. A
// ControllerMovedError, or any error that is not a MetadataStoreError, ends the whole write.

import { EventLoopSlices } from "../../common/event-loop-slices.js";
import { mapConcurrent } from "../../common/map-concurrent.js";
import { MetadataStoreError, type Op, type OpResult } from "./metadata-store.js";

/** Partitions per multi. */
export const PARTITIONS_PER_MULTI = 200;
/** Bytes of paths and data per multi (ZooKeeper refuses a request above jute.maxbuffer, 1 MiB by default). */
export const MULTI_BYTES = 256 * 1024;
/** Multis sent before the first answer arrives. */
export const MULTIS_IN_FLIGHT = 8;
/** Per-partition writes in flight once a batch failed. */
const SINGLES_IN_FLIGHT = 64;

/** One partition's outcome: its ops' results (the fencing check left out), or the store's error. */
export type FencedWriteOutcome = { readonly results: OpResult[] } | { readonly error: MetadataStoreError };

/** How many bytes a multi carries for `op` (path, data and a few fixed fields). */
function opBytes(op: Op): number {
  const data = op.type === "create" || op.type === "set" ? op.data.length : 0;
  return op.path.length + data + 16;
}

/** Item indexes cut into batches of at most PARTITIONS_PER_MULTI items and MULTI_BYTES bytes of ops. */
function batchesOf(ops: readonly Op[][]): number[][] {
  const out: number[][] = [];
  let cur: number[] = [];
  let bytes = 0;
  ops.forEach((itemOps, i) => {
    const b = itemOps.reduce((n, op) => n + opBytes(op), 0);
    if (cur.length > 0 && (cur.length >= PARTITIONS_PER_MULTI || bytes + b > MULTI_BYTES)) {
      out.push(cur);
      cur = [];
      bytes = 0;
    }
    cur.push(i);
    bytes += b;
  });
  if (cur.length > 0) out.push(cur);
  return out;
}

/**
 * Writes every item's ops, batched as the top of the file says; returns each item's outcome, in input order.
 * `fencedMulti` runs ops after the fencing check and returns the results of the check and the ops; `single`
 * writes one item on its own (it may do more than one multi) and returns its ops' results.
 */
export async function writeFencedBatches<T>(
  items: readonly T[],
  opsOf: (item: T) => Op[],
  fencedMulti: (ops: readonly Op[]) => Promise<OpResult[]>,
  single: (item: T) => Promise<OpResult[]>,
): Promise<FencedWriteOutcome[]> {
  const ops = items.map(opsOf);
  const outcomes = new Array<FencedWriteOutcome>(items.length);
  const writeAlone = async (i: number): Promise<void> => {
    try {
      outcomes[i] = { results: await single(items[i]) };
    } catch (e) {
      if (!(e instanceof MetadataStoreError)) throw e;
      outcomes[i] = { error: e };
    }
  };
  // Encoding a multi of hundreds of ops takes milliseconds: the pipelined multis take turns with the loop.
  const slices = new EventLoopSlices();
  await mapConcurrent(batchesOf(ops), MULTIS_IN_FLIGHT, async (batch) => {
    await slices.next();
    if (batch.length === 1) return writeAlone(batch[0]);
    let results: OpResult[];
    try {
      results = await fencedMulti(batch.flatMap((i) => ops[i]));
    } catch (e) {
      if (!(e instanceof MetadataStoreError)) throw e;
      // Nothing of the batch was written: each partition on its own, so only the failing one fails.
      await mapConcurrent(batch, SINGLES_IN_FLIGHT, writeAlone);
      return;
    }
    let at = results.length - batch.reduce((n, i) => n + ops[i].length, 0);
    for (const i of batch) {
      outcomes[i] = { results: results.slice(at, at + ops[i].length) };
      at += ops[i].length;
    }
  });
  return outcomes;
}
