// BufferPool: reuses the batch.size buffers of finished batches for new ones (Kafka's BufferPool), so a
// busy producer writes records into memory that is already mapped instead of page-faulting fresh
// megabytes for every batch. Only buffers of exactly the pooled size are kept; the bytes in use are
// bounded by buffer.memory through the RecordAccumulator's accounting.

export class BufferPool {
  private readonly free: Buffer[] = [];

  constructor(
    readonly poolableSize: number,
    private readonly maxPooled: number,
  ) {}

  /** A buffer of at least `size` bytes (a pooled one when size is the poolable size). */
  allocate(size: number): Buffer {
    if (size === this.poolableSize) {
      const b = this.free.pop();
      if (b !== undefined) return b;
    }
    return Buffer.allocUnsafe(size);
  }

  /** Returns a buffer no longer referenced by anything (the request that carried it is done). */
  deallocate(buffer: Buffer): void {
    if (buffer.length === this.poolableSize && this.free.length < this.maxPooled) this.free.push(buffer);
  }

  get pooledCount(): number {
    return this.free.length;
  }
}
