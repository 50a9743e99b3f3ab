// EventLoopSlices: a long loop on the event loop that hands it back every few milliseconds. The event loop
// is shared by ZooKeeper heartbeats, replica fetchers and clients, so a loop over thousands of partitions
// (a controller failover, a large LeaderAndIsr, a log load) takes turns instead of holding it (Kafka runs
// such loops on threads of their own).
//
//   const slices = new EventLoopSlices();
//   for (const p of partitions) { await slices.next(); work(p); }

import { performance } from "node:perf_hooks";

/** How long one turn runs before the event loop gets a turn. */
export const SLICE_MS = 20;

export class EventLoopSlices {
  private start = performance.now();

  constructor(private readonly sliceMs = SLICE_MS) {}

  /**
   * Resolves at once while the current slice lasts; once it has run `sliceMs`, on a later turn of the event
   * loop (after timers and I/O), which starts the next slice.
   */
  async next(): Promise<void> {
    if (performance.now() - this.start < this.sliceMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.start = performance.now();
  }
}
