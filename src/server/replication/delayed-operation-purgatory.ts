// DelayedOperationPurgatory: Kafka's purgatory for requests that cannot be answered yet (a Fetch waiting
// for min.bytes, a Produce with acks=-1 waiting for the ISR). An operation is watched under one or more
// keys (a partition's `<topic>-<partition>`); whoever changes the state an operation waits on (an append,
// a high watermark move) calls checkAndComplete(key), which re-checks only the operations watching that
// key. Nothing polls. Each operation also gets one expiry task on the Scheduler, after which it is
// force-completed (onComplete, then onExpiration), as Kafka's DelayedOperation.run.
//
// Single-threaded JavaScript removes Kafka's locking: an operation completes exactly once because
// forceComplete flips `completed` before calling onComplete.

import type { ScheduledTask, Scheduler } from "../../common/scheduler.js";

const MAX_DELAY_MS = 0x7fffffff;

export abstract class DelayedOperation {
  private completed = false;
  /** @internal the expiry task, set by the purgatory */
  expiryTask: ScheduledTask | undefined;
  /** @internal the keys the operation is watched under */
  watchKeys: readonly string[] = [];

  constructor(readonly delayMs: number) {}

  /** Checks whether the operation can complete now; if so calls forceComplete() and returns true. */
  abstract tryComplete(): boolean;
  /** Does the work of completing (sends the response). Called exactly once. */
  abstract onComplete(): void;
  /** Called after onComplete when the operation completed by timing out. */
  abstract onExpiration(): void;

  get isCompleted(): boolean {
    return this.completed;
  }

  /** Completes the operation if nobody did yet; returns whether this call completed it. */
  forceComplete(): boolean {
    if (this.completed) return false;
    this.completed = true;
    this.expiryTask?.cancel();
    this.expiryTask = undefined;
    this.onComplete();
    return true;
  }
}

export class DelayedOperationPurgatory<T extends DelayedOperation> {
  private readonly watchers = new Map<string, Set<T>>();
  private pending = 0;
  private shuttingDown = false;

  constructor(
    readonly purgatoryName: string,
    private readonly scheduler: Scheduler,
  ) {}

  /**
   * Tries to complete the operation at once; otherwise watches it under every key and schedules its expiry.
   * Returns whether it completed now.
   */
  tryCompleteElseWatch(operation: T, watchKeys: readonly string[]): boolean {
    if (operation.tryComplete() || operation.isCompleted) return true;
    if (this.shuttingDown) {
      operation.forceComplete();
      return true;
    }
    operation.watchKeys = watchKeys;
    for (const key of watchKeys) {
      let set = this.watchers.get(key);
      if (set === undefined) {
        set = new Set();
        this.watchers.set(key, set);
      }
      set.add(operation);
    }
    this.pending++;
    operation.expiryTask = this.scheduler.schedule(
      `${this.purgatoryName}-expiration`,
      () => {
        if (operation.forceComplete()) {
          this.unwatch(operation);
          operation.onExpiration();
        }
      },
      // Timers hold at most 2^31-1 ms (a longer delay would fire at once).
      Math.min(Math.max(0, operation.delayMs), MAX_DELAY_MS),
    );
    return false;
  }

  /** Re-checks the operations watching `key`; returns how many completed. */
  checkAndComplete(key: string): number {
    const set = this.watchers.get(key);
    if (set === undefined) return 0;
    let completed = 0;
    for (const op of [...set]) {
      if (op.isCompleted) {
        this.unwatch(op);
      } else if (op.tryComplete()) {
        this.unwatch(op);
        completed++;
      }
    }
    return completed;
  }

  private unwatch(op: T): void {
    let removed = false;
    for (const key of op.watchKeys) {
      const set = this.watchers.get(key);
      if (set === undefined) continue;
      if (set.delete(op)) removed = true;
      if (set.size === 0) this.watchers.delete(key);
    }
    op.watchKeys = [];
    if (removed) this.pending--;
  }

  /** Operations waiting (Kafka's purgatory size metric "PurgatorySize" counts watched entries). */
  get numDelayed(): number {
    return this.pending;
  }

  /** Keys with at least one watcher. */
  get watchedKeys(): number {
    return this.watchers.size;
  }

  /** Completes every waiting operation now (their responses go out) and refuses to watch new ones. */
  shutdown(): void {
    this.shuttingDown = true;
    const all = new Set<T>();
    for (const set of this.watchers.values()) for (const op of set) all.add(op);
    for (const op of all) {
      this.unwatch(op);
      op.forceComplete();
    }
    this.watchers.clear();
    this.pending = 0;
  }
}
