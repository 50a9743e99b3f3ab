// CleanerConfig: the broker-level log cleaner settings (Kafka's CleanerConfig), with Kafka's names and
// defaults. Topic-level settings the cleaner reads (delete.retention.ms, min.cleanable.dirty.ratio,
// min.compaction.lag.ms, max.compaction.lag.ms, segment.bytes) live in the topic's LogConfig.

export interface CleanerConfig {
  /** log.cleaner.threads */
  readonly numThreads: number;
  /** log.cleaner.dedupe.buffer.size: memory for the offset maps of all cleaner threads. */
  readonly dedupeBufferSize: number;
  /** log.cleaner.io.buffer.load.factor: how full an offset map may get before a clean stops mapping. */
  readonly dedupeBufferLoadFactor: number;
  /** log.cleaner.io.buffer.size: read/write buffer size per cleaner thread. */
  readonly ioBufferSize: number;
  /** message.max.bytes: the largest batch the cleaner expects (buffers grow up to it). */
  readonly maxMessageSize: number;
  /** log.cleaner.io.max.bytes.per.second */
  readonly maxIoBytesPerSecond: number;
  /** log.cleaner.backoff.ms: sleep when no log needs cleaning. */
  readonly backoffMs: number;
  /** log.cleaner.enable */
  readonly enableCleaner: boolean;
}

export const DEFAULT_CLEANER_CONFIG: CleanerConfig = Object.freeze({
  numThreads: 1,
  dedupeBufferSize: 128 * 1024 * 1024,
  dedupeBufferLoadFactor: 0.9,
  ioBufferSize: 512 * 1024,
  maxMessageSize: 1024 * 1024 + 12,
  maxIoBytesPerSecond: Number.MAX_VALUE,
  backoffMs: 15 * 1000,
  enableCleaner: true,
});

/** Memory of one thread's offset map (Kafka divides the dedupe buffer among the threads, capped at 2 GiB). */
export function offsetMapMemoryPerThread(config: CleanerConfig): number {
  return Math.min(Math.floor(config.dedupeBufferSize / config.numThreads), 0x7fffffff);
}
