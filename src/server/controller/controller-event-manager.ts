// ControllerEventManager: the controller's single event queue (Kafka's ControllerEventManager). Every
// controller event — election, broker and topic changes, deletions, AlterPartition, ControlledShutdown,
// session expiry — runs here one at a time in arrival order, so the controller's state needs no locks.
// Events carry Kafka's event names for the logs; a failing event is reported and the queue goes on. Session
// expiry clears the queue first (clearAndPut): the events waiting were meant for a session that is gone;
// callers waiting on them get their NOT_CONTROLLER-style fallback, as Kafka's preempted events do.

import { SerialEventQueue } from "../../common/serial-event-queue.js";

export class ControllerEventManager {
  private readonly queue: SerialEventQueue;

  constructor(onError: (event: string, e: unknown) => void) {
    this.queue = new SerialEventQueue(onError);
  }

  /** Queues an event; resolves once it has run. */
  put(event: string, process: () => Promise<void>): Promise<void> {
    return this.queue.put(event, process);
  }

  /** Drops the events waiting (none of them runs) and queues this one next (Kafka's clearAndPut). */
  clearAndPut(event: string, process: () => Promise<void>): Promise<void> {
    return this.queue.clearAndPut(event, process);
  }

  /** Events waiting or running (Kafka's EventQueueSize). */
  get queueSize(): number {
    return this.queue.size;
  }

  /** Resolves when every event queued so far (and any they queued) has run. */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  /** No more events run; the running one finishes. */
  close(): Promise<void> {
    return this.queue.stop();
  }
}
