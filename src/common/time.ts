// Time: the one source of wall-clock and monotonic time. Core code takes a Time and never calls
// Date.now() or process.hrtime directly, so tests and simulations drive the clock (MockTime).

export interface Time {
  /** Wall-clock milliseconds since the epoch (record timestamps, file ages). */
  milliseconds(): number;
  /** Monotonic nanoseconds (durations, timeouts). */
  nanoseconds(): bigint;
}

export class SystemTime implements Time {
  milliseconds(): number {
    return Date.now();
  }

  nanoseconds(): bigint {
    return process.hrtime.bigint();
  }
}

export const SYSTEM_TIME: Time = new SystemTime();

/** A clock that only moves when told to. */
export class MockTime implements Time {
  private nowMs: number;
  private nowNs: bigint;

  constructor(startMs = 1_700_000_000_000) {
    this.nowMs = startMs;
    this.nowNs = 0n;
  }

  milliseconds(): number {
    return this.nowMs;
  }

  nanoseconds(): bigint {
    return this.nowNs;
  }

  sleep(ms: number): void {
    this.nowMs += ms;
    this.nowNs += BigInt(Math.round(ms * 1e6));
  }
}
