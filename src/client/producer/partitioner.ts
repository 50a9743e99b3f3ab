// Partitioner: Kafka's default partitioning. A record with a key goes to toPositive(murmur2(key)) mod the
// partition count (Utils.murmur2 / Utils.toPositive, bit for bit, so keys land where the Java client,
// librdkafka's murmur2_random and franz-go put them). A record without a key (or with
// partitioner.ignore.keys) uses the sticky partitioner of KIP-480/KIP-794 (Kafka's BuiltInPartitioner):
// all keyless records of a topic go to one partition until about batch.size bytes have been produced to
// it, then a new partition is picked at random among those with a leader.

/** Kafka's Utils.murmur2: MurmurHash2, seed 0x9747b28c, as a signed 32-bit int. */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  const m = 0x5bd1e995;
  let h = (0x9747b28c ^ length) | 0;
  const length4 = length >>> 2;
  for (let i = 0; i < length4; i++) {
    const i4 = i * 4;
    let k = data[i4] | (data[i4 + 1] << 8) | (data[i4 + 2] << 16) | (data[i4 + 3] << 24);
    k = Math.imul(k, m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m);
    h ^= k;
  }
  const tail = length & ~3;
  const rest = length & 3;
  if (rest === 3) h ^= data[tail + 2] << 16;
  if (rest >= 2) h ^= data[tail + 1] << 8;
  if (rest >= 1) {
    h ^= data[tail];
    h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h | 0;
}

/** Kafka's Utils.toPositive: clears the sign bit (not Math.abs, which differs for negative numbers). */
export function toPositive(n: number): number {
  return n & 0x7fffffff;
}

/** The partition of a keyed record among `numPartitions` (Kafka's BuiltInPartitioner.partitionForKey). */
export function partitionForKey(key: Uint8Array, numPartitions: number): number {
  return toPositive(murmur2(key)) % numPartitions;
}

/** Source of randomness for the sticky choice (injected so tests can fix it). */
export type RandomInt = (boundExclusive: number) => number;

const defaultRandom: RandomInt = (bound) => Math.floor(Math.random() * bound);

interface StickyState {
  partition: number;
  producedBytes: number;
}

/**
 * The sticky partitioner for keyless records (KIP-794). `partition()` returns the topic's current sticky
 * partition; `onAppend()` counts the bytes appended to it and switches to a new partition once
 * `batchSize` bytes went there (Kafka switches after "batch.size" bytes so batches fill up evenly).
 */
export class StickyPartitioner {
  private readonly state = new Map<string, StickyState>();

  constructor(
    private readonly batchSize: number,
    private readonly random: RandomInt = defaultRandom,
  ) {}

  /**
   * The sticky partition of `topic`. `available` lists the partitions that have a leader (may be empty:
   * then any of the `numPartitions` is used).
   */
  partition(topic: string, numPartitions: number, available: readonly number[]): number {
    const s = this.state.get(topic);
    if (s !== undefined && s.partition < numPartitions) return s.partition;
    return this.pick(topic, numPartitions, available, -1);
  }

  /** Records that `bytes` were appended to `partition` of `topic`; may move the sticky partition on. */
  onAppend(
    topic: string,
    partition: number,
    bytes: number,
    numPartitions: number,
    available: readonly number[],
  ): void {
    const s = this.state.get(topic);
    if (s === undefined || s.partition !== partition) return;
    s.producedBytes += bytes;
    if (s.producedBytes >= this.batchSize) this.pick(topic, numPartitions, available, partition);
  }

  private pick(topic: string, numPartitions: number, available: readonly number[], previous: number): number {
    let candidates: readonly number[] = available.length > 0 ? available : range(numPartitions);
    if (candidates.length > 1 && previous >= 0) candidates = candidates.filter((p) => p !== previous);
    const partition = candidates[this.random(candidates.length)];
    this.state.set(topic, { partition, producedBytes: 0 });
    return partition;
  }
}

function range(n: number): number[] {
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) out[i] = i;
  return out;
}
