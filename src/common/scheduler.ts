// Scheduler: periodic and one-shot background tasks (retention checks, checkpoint flushes, cleaner
// passes). Core code schedules through this interface; MockScheduler runs tasks when MockTime moves.

import type { MockTime } from "./time.js";

export interface ScheduledTask {
  cancel(): void;
}

export interface Scheduler {
  /** Runs `fn` after `delayMs`, then every `periodMs` if given (> 0). */
  schedule(name: string, fn: () => void | Promise<void>, delayMs: number, periodMs?: number): ScheduledTask;
  shutdown(): void;
}

export class SystemScheduler implements Scheduler {
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly onError: (name: string, e: unknown) => void = () => {}) {}

  schedule(name: string, fn: () => void | Promise<void>, delayMs: number, periodMs = 0): ScheduledTask {
    const runSafely = async (): Promise<void> => {
      try {
        await fn();
      } catch (e) {
        this.onError(name, e);
      }
    };
    let timer: NodeJS.Timeout;
    if (periodMs > 0) {
      timer = setTimeout(() => {
        this.timers.delete(timer);
        void runSafely();
        const interval = setInterval(() => void runSafely(), periodMs);
        interval.unref();
        this.timers.add(interval);
        timer = interval;
      }, delayMs);
    } else {
      timer = setTimeout(() => {
        this.timers.delete(timer);
        void runSafely();
      }, delayMs);
    }
    timer.unref();
    this.timers.add(timer);
    return {
      cancel: () => {
        clearTimeout(timer);
        clearInterval(timer);
        this.timers.delete(timer);
      },
    };
  }

  shutdown(): void {
    for (const t of this.timers) {
      clearTimeout(t);
      clearInterval(t);
    }
    this.timers.clear();
  }
}

interface MockEntry {
  name: string;
  fn: () => void | Promise<void>;
  dueMs: number;
  periodMs: number;
  cancelled: boolean;
}

/** Runs tasks only when the mock clock is advanced with `tick`. */
export class MockScheduler implements Scheduler {
  private entries: MockEntry[] = [];

  constructor(readonly time: MockTime) {}

  schedule(name: string, fn: () => void | Promise<void>, delayMs: number, periodMs = 0): ScheduledTask {
    const e: MockEntry = { name, fn, dueMs: this.time.milliseconds() + delayMs, periodMs, cancelled: false };
    this.entries.push(e);
    return {
      cancel: () => {
        e.cancelled = true;
      },
    };
  }

  /** Advances the clock by `ms`, running every task that falls due, in time order. */
  async tick(ms: number): Promise<void> {
    const target = this.time.milliseconds() + ms;
    for (;;) {
      this.entries = this.entries.filter((e) => !e.cancelled);
      const next = this.entries.filter((e) => e.dueMs <= target).sort((a, b) => a.dueMs - b.dueMs)[0];
      if (!next) break;
      this.time.sleep(Math.max(0, next.dueMs - this.time.milliseconds()));
      if (next.periodMs > 0) next.dueMs += next.periodMs;
      else next.cancelled = true;
      await next.fn();
    }
    this.time.sleep(target - this.time.milliseconds());
  }

  shutdown(): void {
    this.entries = [];
  }
}
