// SerialEventQueue: runs async events one at a time, in the order they were queued (the single event
// thread of Kafka's ControllerEventManager and of the broker's metadata cache). An event that throws is
// reported to `onError` and the queue goes on; after stop() nothing more runs. clearAndPut drops every event
// queued and not yet started (they settle without running, so their callers take their fallback answers)
// and queues one event that runs right after the one running now (Kafka's ControllerEventManager.clearAndPut,
// used for the session-expiry event).

export class SerialEventQueue {
  private tail: Promise<void> = Promise.resolve();
  private stopped = false;
  private pending = 0;
  /** Incremented by clearAndPut: events queued under an older generation are skipped. */
  private generation = 0;

  constructor(private readonly onError: (name: string, e: unknown) => void) {}

  /** Queues `fn`; the returned promise settles when it has run (never rejects). */
  put(name: string, fn: () => Promise<void> | void): Promise<void> {
    this.pending++;
    const generation = this.generation;
    this.tail = this.tail.then(async () => {
      try {
        if (!this.stopped && generation === this.generation) await fn();
      } catch (e) {
        if (!this.stopped) this.onError(name, e);
      } finally {
        this.pending--;
      }
    });
    return this.tail;
  }

  /** Drops the events waiting (they settle without running), then queues `fn`. */
  clearAndPut(name: string, fn: () => Promise<void> | void): Promise<void> {
    this.generation++;
    return this.put(name, fn);
  }

  /** Events queued and not finished yet. */
  get size(): number {
    return this.pending;
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  /** Resolves when every event queued so far, and any they queued, has run. */
  async idle(): Promise<void> {
    let t: Promise<void>;
    do {
      t = this.tail;
      await t;
    } while (t !== this.tail);
  }

  /** No more events run; the one running finishes. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.tail;
  }
}
