// MemoryPool: reusable buffers for large transient byte ranges (Kafka's org.apache.kafka.common.memory
// .MemoryPool, which the broker's network layer receives requests into). A buffer is handed out for one
// request frame or one log read and given back once nothing refers to it any more (the append copied the
// bytes into the page cache, the response was written to the socket), so the next request reuses memory
// that is already mapped. On this kind of VM fresh memory costs a page fault per 4 KiB page (by default
// glibc serves allocations this large with mmap and returns them with munmap; `tributary` raises that
// threshold, src/common/allocator-tuning.ts, but a freed Buffer still waits for the garbage collector):
// writing into fresh memory runs at 3–5 GB/s against ~45 GB/s into reused memory (docs/benchmarks.md).
//
// Invariants: only sizes from `minPooledBytes` up to `maxPooledBytes` are pooled, in power-of-two size
// classes (each pooled buffer is its own ArrayBuffer of exactly the class size; `allocate` returns a view
// of its first `size` bytes); release() of anything else is ignored, as is a second release of the same
// buffer; at most `maxFreeBytes` wait in the free lists (the rest is left to the garbage collector).

export interface MemoryPoolOptions {
  /** Smaller requests are plain allocations (Node's own slab serves them cheaply). Default 64 KiB. */
  minPooledBytes?: number;
  /** Larger requests are plain allocations. Default 16 MiB. */
  maxPooledBytes?: number;
  /** Bound on the bytes kept in the free lists. Default 32 MiB. */
  maxFreeBytes?: number;
}

export class MemoryPool {
  private readonly minPooled: number;
  private readonly maxPooled: number;
  private readonly maxFree: number;
  /** Free buffers by class size. */
  private readonly free = new Map<number, ArrayBuffer[]>();
  /** Buffers handed out and not yet released. */
  private readonly inUse = new WeakSet<ArrayBuffer>();
  private freeBytes = 0;
  /** Allocations served from the free lists / fresh (for tests and metrics). */
  reused = 0;
  fresh = 0;

  constructor(options: MemoryPoolOptions = {}) {
    this.minPooled = options.minPooledBytes ?? 64 * 1024;
    this.maxPooled = options.maxPooledBytes ?? 16 * 1024 * 1024;
    this.maxFree = options.maxFreeBytes ?? 32 * 1024 * 1024;
  }

  /** A buffer of exactly `size` bytes (contents undefined). */
  allocate(size: number): Buffer {
    if (size < this.minPooled || size > this.maxPooled) return Buffer.allocUnsafe(size);
    const cls = classSize(size);
    const list = this.free.get(cls);
    let ab = list?.pop();
    if (ab !== undefined) {
      this.freeBytes -= cls;
      this.reused++;
    } else {
      ab = new ArrayBuffer(cls);
      this.fresh++;
    }
    this.inUse.add(ab);
    return Buffer.from(ab, 0, size);
  }

  /** Gives a buffer from allocate() back; anything else (a slice of a socket chunk, say) is ignored. */
  release(buffer: Buffer): void {
    const ab = buffer.buffer;
    if (!(ab instanceof ArrayBuffer) || !this.inUse.has(ab)) return;
    this.inUse.delete(ab);
    const cls = ab.byteLength;
    if (this.freeBytes + cls > this.maxFree) return;
    let list = this.free.get(cls);
    if (list === undefined) {
      list = [];
      this.free.set(cls, list);
    }
    list.push(ab);
    this.freeBytes += cls;
  }

  /** Bytes waiting in the free lists. */
  get pooledBytes(): number {
    return this.freeBytes;
  }
}

/** The smallest power of two >= size. */
function classSize(size: number): number {
  return size <= 1 ? 1 : 2 ** Math.ceil(Math.log2(size));
}
