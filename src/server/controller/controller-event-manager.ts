// ControllerEventManager: the controller's single event queue (Kafka's ControllerEventManager). Every
// controller event — election, broker and topic changes, deletions, AlterPartition, ControlledShutdown,
// session expiry — runs here one at a time in arrival order, so the controller's state needs no locks.
// Events carry Kafka's event names (controller-state.ts) for the logs; a failing event is reported under
// its name and the queue goes on. Session expiry clears the queue first (clearAndPut): the events waiting
// were meant for a session that is gone; callers waiting on them get their NOT_CONTROLLER-style fallback,
// as Kafka's preempted events do.
// Metrics, as Kafka's: each event's wait in the queue (EventQueueTimeMs), the events waiting
// (EventQueueSize: not counting the one running, which Kafka's thread has taken off the queue), and each
// event's run time under its ControllerState's rate-and-time timer — a failed event is timed too, an event
// dropped by clearAndPut or after close() is not.

import { SerialEventQueue } from "../../common/serial-event-queue.js";
import type { Time } from "../../common/time.js";
import type { ControllerEventRecorder } from "../metrics/replication-metrics.js";
import { CONTROLLER_EVENT_STATES, type ControllerEventName } from "./controller-state.js";

export class ControllerEventManager {
  private readonly queue: SerialEventQueue;
  /** Events queued and not started yet (those dropped by clearAndPut are forgotten there). */
  private waiting = 0;

  constructor(
    onError: (event: string, e: unknown) => void,
    private readonly time: Time,
    private readonly stats?: ControllerEventRecorder,
  ) {
    this.queue = new SerialEventQueue(onError);
    stats?.eventQueueSize(() => this.waiting);
  }

  /**
   * Queues an event; resolves once it has run. `detail` follows the name in the logs
   * ("PartitionModifications <topic>").
   */
  put(event: ControllerEventName, process: () => Promise<void>, detail?: string): Promise<void> {
    const name = detail === undefined ? event : `${event} ${detail}`;
    return this.queue.put(name, this.timed(event, process));
  }

  /** Drops the events waiting (none of them runs) and queues this one next (Kafka's clearAndPut). */
  clearAndPut(event: ControllerEventName, process: () => Promise<void>): Promise<void> {
    this.waiting = 0;
    return this.queue.clearAndPut(event, this.timed(event, process));
  }

  /** Events waiting, the running one aside (Kafka's EventQueueSize). */
  get queueSize(): number {
    return this.waiting;
  }

  /** Resolves when every event queued so far (and any they queued) has run. */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  /** No more events run; the running one finishes. */
  async close(): Promise<void> {
    await this.queue.stop();
    this.waiting = 0;
  }

  /** `process` counted as waiting until it starts, then timed under its event's state. */
  private timed(event: ControllerEventName, process: () => Promise<void>): () => Promise<void> {
    if (this.queue.isStopped) return process;
    this.waiting++;
    const queuedNs = this.time.nanoseconds();
    return async () => {
      this.waiting--;
      const startNs = this.time.nanoseconds();
      this.stats?.eventQueueTime(Number(startNs - queuedNs) / 1e6);
      try {
        await process();
      } finally {
        this.stats?.eventProcessed(
          CONTROLLER_EVENT_STATES[event],
          Number(this.time.nanoseconds() - startNs) / 1e6,
        );
      }
    };
  }
}
