// LogDirFailureHandler: tells the controller when one of this broker's log dirs goes offline, fills up or
// has space again (Kafka's ReplicaManager.LogDirFailureHandler, which in a ZooKeeper cluster writes a
// /log_dir_event_notification znode); the controller then asks the broker about its replicas there.
// Owns the debouncing: the events of one turn of the event loop (many partitions of a dir failing at once)
// make one notification, sent from a task scheduled when the first of them arrives.

import type { Logger } from "../../common/logger.js";
import type { Scheduler } from "../../common/scheduler.js";
import type { LogDirEvent } from "../../storage/log-dir-failure-channel.js";
import type { LogManager } from "../../storage/log-manager.js";

export class LogDirFailureHandler {
  private notificationPending = false;

  constructor(
    private readonly logManager: () => LogManager,
    private readonly scheduler: Scheduler,
    /** Writes the notification (KafkaZkClient.propagateLogDirEvent); answers the znode's path. */
    private readonly propagateLogDirEvent: () => Promise<string>,
    /** The broker's logger: the lines say what this broker told the controller. */
    private readonly logger: Logger,
  ) {}

  /** Follows the LogManager's log dir events from now on. */
  startup(): void {
    this.logManager().addLogDirListener((dir, event) => this.onLogDirEvent(dir, event));
  }

  private onLogDirEvent(dir: string, event: LogDirEvent): void {
    this.logger.info(`Log dir ${dir} is ${event}: telling the controller`);
    if (this.notificationPending) return;
    this.notificationPending = true;
    this.scheduler.schedule(
      "log-dir-event-notification",
      () => {
        this.notificationPending = false;
        this.propagateLogDirEvent().then(
          (path) => this.logger.info(`Told the controller about a log dir event (${path})`),
          (e) =>
            this.logger.error(
              `Could not notify the controller about a log dir event: ${(e as Error).message}`,
            ),
        );
      },
      0,
    );
  }
}
