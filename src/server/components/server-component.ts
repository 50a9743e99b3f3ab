// ServerComponent: one part of a broker that starts and stops itself — a step of Kafka's KafkaServer.startup
// and KafkaServer.shutdown. KafkaServer (broker-server.ts) builds its components, each given the components
// it depends on, and lists them twice: in start-up order and in shutdown order. A component reads what its
// dependencies started when it starts, so a test can start any subset together with what that subset needs.
// A component that starts one object holds it (ComponentOf): get() gives it, and throws ("the log manager
// is not started") until it has started; `current` gives it or undefined (metrics, a failed startup's
// shutdown).
//
// Owns the shutdown's rule (Kafka's CoreUtils.swallow around each step): every step runs even when an earlier
// one failed, each failure is logged ("Error while <what the step does>: <stack>"), and the failures are
// returned so that the caller throws the first once all steps ran.

import type { Logger } from "../../common/logger.js";
import type { Scheduler } from "../../common/scheduler.js";
import type { Time } from "../../common/time.js";
import type { KafkaConfig } from "../kafka-config.js";

/** What every component of one broker shares. */
export interface ServerContext {
  readonly config: KafkaConfig;
  readonly time: Time;
  readonly scheduler: Scheduler;
  /** The KafkaServer's logger ("[KafkaServer id=0] …"): the lines a component prints for the server. */
  readonly logger: Logger;
}

/** A step of the startup. */
export interface Startable {
  startup(): void | Promise<void>;
}

/** A step of the shutdown; does nothing for a component that has not started. */
export interface Stoppable {
  /** What the step does, as its error line says: "Error while <stopping>: …". */
  readonly stopping: string;
  shutdown(): void | Promise<void>;
}

export interface ServerComponent extends Startable, Stoppable {}

/** Starts each component once the ones before it have started; the first failure ends it. */
export async function startInOrder(components: readonly Startable[]): Promise<void> {
  for (const c of components) await c.startup();
}

/** Runs every shutdown step in order, each even when an earlier one failed; returns the failures. */
export async function shutdownInOrder(steps: readonly Stoppable[], logger: Logger): Promise<unknown[]> {
  const errors: unknown[] = [];
  for (const step of steps) {
    try {
      await step.shutdown();
    } catch (e) {
      logger.error(`Error while ${step.stopping}: ${(e as Error)?.stack ?? e}`);
      errors.push(e);
    }
  }
  return errors;
}

/**
 * A component that starts one object (a LogManager, a ReplicaManager, …) and holds it from its creation on:
 * a shutdown after a startup that failed half-way stops what was created.
 */
export abstract class ComponentOf<T> implements ServerComponent {
  private value: T | undefined;

  protected constructor(
    protected readonly ctx: ServerContext,
    /** What it starts, as its "not started" error names it: "log manager". */
    private readonly what: string,
    readonly stopping: string,
  ) {}

  abstract startup(): void | Promise<void>;
  abstract shutdown(): void | Promise<void>;

  /** What this component started; an error before that. */
  get(): T {
    return started(this.value, this.what);
  }

  /** What this component started, or undefined before. */
  get current(): T | undefined {
    return this.value;
  }

  protected hold(value: T): T {
    this.value = value;
    return value;
  }

  /** Lets go of it (stopped): current is undefined again. */
  protected release(): T | undefined {
    const value = this.value;
    this.value = undefined;
    return value;
  }
}

/** `value` once started, else an error naming what has not started. */
export function started<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`the ${what} is not started`);
  return value;
}
