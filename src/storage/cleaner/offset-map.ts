// SkimpyOffsetMap: the log cleaner's dedupe map, key -> last offset seen, in a fixed block of memory
// (log.cleaner.dedupe.buffer.size divided among the cleaner threads). Owns the hashing of keys and the
// open-addressing table; the cleaner owns the load-factor policy (it stops filling at
// log.cleaner.io.buffer.load.factor and cleans what the map covers).
//
// Keys are not stored: each is replaced by its 16-byte MD5 digest (node:crypto's one-shot `hash`, or
// createHash before Node 20.12), as Kafka does. Why MD5 rather than a faster non-cryptographic hash: two
// keys with the same digest would make the cleaner drop the older key's last value, so the digest must
// not be forgeable by a producer (MurmurHash3 and xxHash have known seed-independent collisions, and
// user-chosen strings such as group ids end up in keys of compacted topics like __consumer_offsets). The
// cost: about 1 µs per key here, paid once per record when the map is built and once when a segment is
// cleaned; about half the CPU of a clean of 1M small records (0.18M records/s end to end, measured).
// `hashAlgorithm` may name another node:crypto digest of >= 16 bytes.
//
// Layout: `slots` entries of 24 bytes in one ArrayBuffer read as Uint32: four words of digest, then the
// offset + 1 as (high, low) words, so an all-zero offset field marks an empty slot (offsets are >= 0 and
// below 2^53). The slot count is the largest prime that fits the memory, and probing is double hashing
// (start from digest word 0, step from word 1), which visits every slot.

import * as nodeCrypto from "node:crypto";

/** node:crypto's one-shot hash (Node >= 20.12), or createHash on older Node 20 releases. */
const oneShotHash: (algorithm: string, data: Buffer, outputEncoding: "buffer") => Buffer =
  typeof nodeCrypto.hash === "function"
    ? (algorithm, data, outputEncoding) => nodeCrypto.hash(algorithm, data, outputEncoding)
    : (algorithm, data) => nodeCrypto.createHash(algorithm).update(data).digest();

/** Bytes of the digest kept per key. */
export const OFFSET_MAP_HASH_SIZE = 16;
/** Bytes per slot: digest + 8-byte offset. */
export const OFFSET_MAP_BYTES_PER_ENTRY = OFFSET_MAP_HASH_SIZE + 8;
const WORDS_PER_ENTRY = OFFSET_MAP_BYTES_PER_ENTRY / 4;
const TWO_32 = 4294967296;

/** The part of the map the record filter reads. */
export interface OffsetMapView {
  /** The last offset recorded for `key`, or -1n when the key is not in the map. */
  get(key: Buffer): bigint;
  /** The last offset the map covers (records above it are beyond the cleaned range); -1n when empty. */
  readonly latestOffset: bigint;
}

function isPrime(n: number): boolean {
  if (n < 2) return false;
  if (n % 2 === 0) return n === 2;
  for (let d = 3; d * d <= n; d += 2) if (n % d === 0) return false;
  return true;
}

function largestPrimeAtMost(n: number): number {
  for (let p = n; p >= 2; p--) if (isPrime(p)) return p;
  return 0;
}

export class SkimpyOffsetMap implements OffsetMapView {
  /** Number of entries the memory holds. */
  readonly slots: number;
  /** Distinct keys in the map. */
  size = 0;
  /** Highest offset put or set with updateLatestOffset; -1n when cleared. */
  latestOffset = -1n;
  /** Lookups and probes since the last clear (for the collision rate Kafka logs). */
  lookups = 0;
  probes = 0;
  private readonly words: Uint32Array;
  private readonly hashAlgorithm: string;

  /**
   * @param memoryBytes the dedupe buffer for this map (log.cleaner.dedupe.buffer.size / threads)
   * @param hashAlgorithm node:crypto digest used to replace keys (default "md5", Kafka's choice)
   */
  constructor(memoryBytes: number, hashAlgorithm = "md5") {
    const maxSlots = Math.floor(memoryBytes / OFFSET_MAP_BYTES_PER_ENTRY);
    if (!Number.isFinite(maxSlots) || maxSlots < 2) {
      throw new RangeError(
        `offset map of ${memoryBytes} bytes holds fewer than 2 entries of ${OFFSET_MAP_BYTES_PER_ENTRY} bytes`,
      );
    }
    this.slots = largestPrimeAtMost(maxSlots);
    this.words = new Uint32Array(this.slots * WORDS_PER_ENTRY);
    this.hashAlgorithm = hashAlgorithm;
    if (oneShotHash(hashAlgorithm, Buffer.alloc(0), "buffer").length < OFFSET_MAP_HASH_SIZE) {
      throw new RangeError(`digest ${hashAlgorithm} is shorter than ${OFFSET_MAP_HASH_SIZE} bytes`);
    }
  }

  /** Bytes of memory the table uses. */
  get memoryBytes(): number {
    return this.words.byteLength;
  }

  /** Fraction of slots in use (Kafka's utilization). */
  get utilization(): number {
    return this.size / this.slots;
  }

  /** Probes per lookup minus one since the last clear: 0 means no collisions. */
  get collisionRate(): number {
    return this.lookups === 0 ? 0 : (this.probes - this.lookups) / this.lookups;
  }

  /** The digest that stands for `key`. */
  digest(key: Buffer): Buffer {
    return oneShotHash(this.hashAlgorithm, key, "buffer");
  }

  /**
   * Word index of the slot holding `d`, or of the empty slot where it belongs. The map is never full
   * (put refuses the last free slot), so an empty slot is always reached.
   */
  private findSlot(d: Buffer): number {
    const h0 = d.readUInt32LE(0);
    const h1 = d.readUInt32LE(4);
    const h2 = d.readUInt32LE(8);
    const h3 = d.readUInt32LE(12);
    const slots = this.slots;
    const words = this.words;
    let slot = h0 % slots;
    const step = 1 + (h1 % (slots - 1));
    this.lookups++;
    for (;;) {
      this.probes++;
      const w = slot * WORDS_PER_ENTRY;
      if (words[w + 4] === 0 && words[w + 5] === 0) return w;
      if (words[w] === h0 && words[w + 1] === h1 && words[w + 2] === h2 && words[w + 3] === h3) return w;
      slot += step;
      if (slot >= slots) slot -= slots;
    }
  }

  /** Records `offset` as the last offset of `key` and raises latestOffset to it. */
  put(key: Buffer, offset: bigint): void {
    if (offset < 0n || offset >= 2n ** 53n - 1n) throw new RangeError(`offset ${offset} out of range`);
    const d = this.digest(key);
    const w = this.findSlot(d);
    const words = this.words;
    const empty = words[w + 4] === 0 && words[w + 5] === 0;
    if (empty) {
      if (this.size >= this.slots - 1) throw new RangeError("offset map is full");
      words[w] = d.readUInt32LE(0);
      words[w + 1] = d.readUInt32LE(4);
      words[w + 2] = d.readUInt32LE(8);
      words[w + 3] = d.readUInt32LE(12);
      this.size++;
    }
    const stored = Number(offset) + 1;
    words[w + 4] = Math.floor(stored / TWO_32);
    words[w + 5] = stored >>> 0;
    if (offset > this.latestOffset) this.latestOffset = offset;
  }

  get(key: Buffer): bigint {
    const w = this.findSlot(this.digest(key));
    const hi = this.words[w + 4];
    const lo = this.words[w + 5];
    if (hi === 0 && lo === 0) return -1n;
    return BigInt(hi * TWO_32 + lo - 1);
  }

  /** Raises latestOffset (Kafka sets it to the last offset of each batch read, and to segment ends). */
  updateLatestOffset(offset: bigint): void {
    if (offset > this.latestOffset) this.latestOffset = offset;
  }

  /** Empties the map (zeroes the memory, as Kafka does). */
  clear(): void {
    this.words.fill(0);
    this.size = 0;
    this.latestOffset = -1n;
    this.lookups = 0;
    this.probes = 0;
  }

  /**
   * clear() in pieces of `bytesPerStep`, yielding between them: zeroing the default 128 MiB takes tens of
   * milliseconds (the first time, with its page faults, ~100 ms), which a clean taking turns with the
   * event loop spreads out. The map is empty once the generator ends, not before.
   */
  *clearSteps(bytesPerStep = 8 * 1024 * 1024): Generator<void, void, void> {
    const words = this.words;
    const step = Math.max(1, Math.floor(bytesPerStep / Uint32Array.BYTES_PER_ELEMENT));
    this.size = 0;
    this.latestOffset = -1n;
    this.lookups = 0;
    this.probes = 0;
    for (let from = 0; from < words.length; from += step) {
      if (from > 0) yield;
      words.fill(0, from, Math.min(words.length, from + step));
    }
  }
}
