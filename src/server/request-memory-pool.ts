// RequestMemoryPool: the memory that requests being received and waiting to be handled may hold,
// broker-wide (Kafka's queued.max.request.bytes and its non-strict SimpleMemoryPool). A connection that
// reads a frame's size prefix asks the pool for that many bytes before it reads the rest; the pool grants
// while anything is left (non-strict: the last grant may go past the capacity by one request, so a request
// larger than what is free still gets in once memory frees up, never a deadlock), and the bytes come back
// when the request has been handled or its connection closed. A connection refused waits, not reading,
// in line; freed memory wakes the waiters in order. So whatever clients announce and however slowly they
// send, unfinished requests hold at most the capacity plus one request, plus the socket chunk each
// connection has already read. capacity ≤ 0: unbounded (Kafka's -1).
// Small requests (≤ SMALL_REQUEST_BYTES: metadata, heartbeats, fetches, commits) draw on a budget of their
// own (an eighth of the capacity, at least 4 MiB, added to it), so a few clients that announce huge
// requests and send them slowly hold up only other large requests, never the small ones of other clients.

export interface PoolWaiter {
  /** Called when the pool granted this waiter's request (it then resumes reading). */
  granted(): void;
}

/** Requests up to this size use the small-request budget. */
export const SMALL_REQUEST_BYTES = 64 * 1024;

class Budget {
  used = 0;
  readonly waiters: Array<{ waiter: PoolWaiter; bytes: number }> = [];

  constructor(readonly capacity: number) {}

  get bounded(): boolean {
    return this.capacity > 0;
  }

  hasRoom(): boolean {
    return !this.bounded || this.used < this.capacity;
  }

  wake(): void {
    while (this.waiters.length > 0 && this.hasRoom()) {
      const { waiter, bytes } = this.waiters.shift()!;
      this.used += bytes;
      waiter.granted();
    }
  }
}

export class RequestMemoryPool {
  private readonly large: Budget;
  private readonly small: Budget;
  /** Times a connection had to wait for memory (Tributary's count; Kafka logs nothing). */
  waits = 0;

  constructor(readonly capacity: number) {
    this.large = new Budget(capacity);
    this.small = new Budget(capacity > 0 ? Math.max(4 * 1024 * 1024, Math.floor(capacity / 8)) : -1);
  }

  private budgetFor(bytes: number): Budget {
    return bytes <= SMALL_REQUEST_BYTES ? this.small : this.large;
  }

  /** Bytes granted and not yet released (MemoryPoolUsed). */
  get usedBytes(): number {
    return this.large.used + this.small.used;
  }

  /** Bytes left before the pool refuses large requests (MemoryPoolAvailable; negative past a non-strict grant). */
  get availableBytes(): number {
    return this.large.bounded ? this.large.capacity - this.large.used : Number.MAX_SAFE_INTEGER;
  }

  get waiting(): number {
    return this.large.waiters.length + this.small.waiters.length;
  }

  /** Grants `bytes` when its budget has room and nobody waits before; false: call wait(). */
  tryAllocate(bytes: number): boolean {
    const b = this.budgetFor(bytes);
    if (!b.hasRoom() || b.waiters.length > 0) return false;
    b.used += bytes;
    return true;
  }

  /** Accounts bytes already in memory (frames that arrived whole in a chunk): granted whatever is left. */
  allocateAnyway(bytes: number): void {
    this.budgetFor(bytes).used += bytes;
  }

  /** Queues a refused request; `granted` runs once the bytes are the waiter's. */
  wait(waiter: PoolWaiter, bytes: number): void {
    this.waits++;
    this.budgetFor(bytes).waiters.push({ waiter, bytes });
  }

  /** A waiter that went away (its connection closed) leaves the line. */
  cancel(waiter: PoolWaiter): void {
    for (const b of [this.large, this.small]) {
      const i = b.waiters.findIndex((w) => w.waiter === waiter);
      if (i >= 0) b.waiters.splice(i, 1);
      b.wake();
    }
  }

  /** Gives back the memory of one request of `bytes` (granted or allocated anyway). */
  release(bytes: number): void {
    if (bytes <= 0) return;
    const b = this.budgetFor(bytes);
    b.used -= bytes;
    b.wake();
  }
}
