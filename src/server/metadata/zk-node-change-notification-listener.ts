// ZkNodeChangeNotificationListener: follows a root of sequential change notifications (such as
// /kafka-acl-changes/acl_changes_<seq>) as Kafka's kafka.common.ZkNodeChangeNotificationListener does.
// Owns the last executed change and the purge of expired notifications. On each child change of the
// root it lists the children (re-arming the watch), takes only those whose sequence number is above the
// last executed change, in sequence order, reads their data and hands them to the handler as one batch,
// then advances the last executed change; only after that does it delete the notifications older than
// changeExpirationMs (Kafka's 15 minutes), so a purge never delays a change. The cost of a change is one
// listing plus the new notifications: it does not grow with how many are stored.
// The purge walks the notifications oldest first and stops at the first one not yet expired (sequence
// order is creation order), remembering when that one expires so that no purge reads anything before then.
// Unlike Kafka's, `init()` (at start and on every new ZooKeeper session) skips what is stored: the owner
// loads its whole state right after, which already reflects every notification written before the listing.

import type { Logger } from "../../common/logger.js";
import { mapConcurrent } from "../../common/map-concurrent.js";
import type { ScheduledTask, Scheduler } from "../../common/scheduler.js";
import type { Time } from "../../common/time.js";
import { type MetadataStore, MetadataStoreError } from "./metadata-store.js";

/** Kafka's changeExpirationMs for notifications (15 minutes). */
export const CHANGE_EXPIRATION_MS = 15 * 60 * 1000;
/** Store reads and deletes kept in flight at once. */
const MAX_IN_FLIGHT = 64;
/** A failed batch is tried again after this long (and on the next child change, whichever is first). */
const RETRY_BACKOFF_MS = 1000;

export interface ChangeNotification {
  /** The child's name, e.g. acl_changes_0000000042. */
  readonly name: string;
  readonly sequence: number;
  readonly data: Buffer;
}

export interface ZkNodeChangeNotificationListenerOptions {
  readonly store: MetadataStore;
  /** The root whose children are the notifications, e.g. /kafka-acl-changes. */
  readonly seqNodeRoot: string;
  /** The children's name prefix before the 10-digit sequence number, e.g. acl_changes_. */
  readonly seqNodePrefix: string;
  /**
   * Applies one batch of new notifications, in sequence order. A notification it cannot read is its to log
   * and skip; a throw (a store failure) leaves the whole batch to be tried again.
   */
  readonly handler: (batch: readonly ChangeNotification[]) => Promise<void>;
  /**
   * Where the listing and the handler run: the owner's one-at-a-time queue, so that a batch never
   * interleaves with the owner's own loads and writes. `init` must be called from inside it too.
   */
  readonly run: (task: () => Promise<void>) => Promise<void>;
  readonly time: Time;
  readonly scheduler: Scheduler;
  readonly log: Logger;
  readonly changeExpirationMs?: number;
}

export class ZkNodeChangeNotificationListener {
  private lastExecutedChange = -1;
  /** A processing run is queued and has not started yet (child changes meanwhile need no second one). */
  private queued = false;
  private purging = false;
  /** No stored notification expires before this wall-clock time (ms): purging reads nothing until then. */
  private purgeNotBefore = 0;
  private retry: ScheduledTask | undefined;
  private closed = false;
  private readonly expirationMs: number;

  constructor(private readonly o: ZkNodeChangeNotificationListenerOptions) {
    this.expirationMs = o.changeExpirationMs ?? CHANGE_EXPIRATION_MS;
  }

  /** The sequence number of the newest notification executed (or skipped by `init`); -1 before any. */
  get lastExecuted(): number {
    return this.lastExecutedChange;
  }

  /**
   * Lists the notifications, arming the watch, and counts every one stored as executed: the caller loads
   * its full state next. Call from inside `run` (at start and after a new session).
   */
  async init(): Promise<void> {
    const sorted = await this.list();
    this.lastExecutedChange = sorted.length > 0 ? sorted[sorted.length - 1].sequence : -1;
    this.purgeNotBefore = 0;
    this.o.log.info(
      `Following ${this.o.seqNodeRoot} after ${this.lastExecutedChange < 0 ? "no notification" : sorted[sorted.length - 1].name} (${sorted.length} stored)`,
    );
  }

  close(): void {
    this.closed = true;
    this.retry?.cancel();
    this.retry = undefined;
  }

  /** The watch fired (or a retry is due): one processing run, unless one is already queued. */
  private schedule(): void {
    if (this.closed || this.queued) return;
    this.queued = true;
    void this.o
      .run(async () => {
        this.queued = false;
        if (!this.closed) await this.processNotifications();
      })
      .catch((e) => this.o.log.warn(`Processing ${this.o.seqNodeRoot} failed: ${(e as Error).message}`));
  }

  /** The notifications under the root, in sequence order; arms the child watch. */
  private async list(): Promise<Array<{ name: string; sequence: number }>> {
    let names: string[];
    try {
      names = await this.o.store.getChildren(this.o.seqNodeRoot, () => this.schedule());
    } catch (e) {
      if (e instanceof MetadataStoreError && e.code === "NoNode") return [];
      throw e;
    }
    const out: Array<{ name: string; sequence: number }> = [];
    for (const name of names) {
      if (!name.startsWith(this.o.seqNodePrefix)) continue;
      const digits = name.slice(this.o.seqNodePrefix.length);
      if (!/^\d+$/.test(digits)) continue;
      out.push({ name, sequence: Number(digits) });
    }
    return out.sort((a, b) => a.sequence - b.sequence);
  }

  private async processNotifications(): Promise<void> {
    let sorted: Array<{ name: string; sequence: number }>;
    try {
      sorted = await this.list();
      const fresh = sorted.filter((n) => n.sequence > this.lastExecutedChange);
      if (fresh.length > 0) {
        const nodes = await mapConcurrent(fresh, MAX_IN_FLIGHT, (n) =>
          this.o.store.get(`${this.o.seqNodeRoot}/${n.name}`),
        );
        const batch: ChangeNotification[] = [];
        fresh.forEach((n, i) => {
          const node = nodes[i];
          if (node === undefined) this.o.log.warn(`Read no data from ${this.o.seqNodeRoot}/${n.name}`);
          else batch.push({ ...n, data: node.data });
        });
        if (batch.length > 0) await this.o.handler(batch);
        this.lastExecutedChange = fresh[fresh.length - 1].sequence;
      }
    } catch (e) {
      if (this.closed) return;
      this.o.log.warn(
        `Processing ${this.o.seqNodeRoot} failed (trying again in ${RETRY_BACKOFF_MS} ms): ${(e as Error).message}`,
      );
      this.retry?.cancel();
      this.retry = this.o.scheduler.schedule(
        `${this.o.seqNodeRoot} retry`,
        () => {
          this.retry = undefined;
          this.schedule();
        },
        RETRY_BACKOFF_MS,
      );
      return;
    }
    // After the batch, and outside the owner's queue: the next change need not wait for it.
    const executed = sorted.filter((n) => n.sequence <= this.lastExecutedChange);
    if (!this.purging && executed.length > 0 && this.o.time.milliseconds() > this.purgeNotBefore) {
      this.purging = true;
      void this.purgeObsoleteNotifications(executed)
        .catch((e) => this.o.log.warn(`Purging ${this.o.seqNodeRoot} failed: ${(e as Error).message}`))
        .finally(() => {
          this.purging = false;
        });
    }
  }

  /** Deletes the executed notifications older than the expiration, oldest first, up to the first younger one. */
  private async purgeObsoleteNotifications(
    executed: ReadonlyArray<{ name: string; sequence: number }>,
  ): Promise<void> {
    const now = this.o.time.milliseconds();
    for (let i = 0; i < executed.length && !this.closed; i += MAX_IN_FLIGHT) {
      const chunk = executed.slice(i, i + MAX_IN_FLIGHT);
      const stats = await mapConcurrent(chunk, MAX_IN_FLIGHT, (n) =>
        this.o.store.exists(`${this.o.seqNodeRoot}/${n.name}`),
      );
      const expired: string[] = [];
      let youngest: number | undefined;
      for (let k = 0; k < chunk.length; k++) {
        const stat = stats[k];
        if (stat === undefined) continue; // another broker purged it
        if (now - stat.ctime > this.expirationMs) expired.push(chunk[k].name);
        else {
          youngest = stat.ctime;
          break;
        }
      }
      await mapConcurrent(expired, MAX_IN_FLIGHT, async (name) => {
        this.o.log.debug(`Purging change notification ${this.o.seqNodeRoot}/${name}`);
        try {
          await this.o.store.delete(`${this.o.seqNodeRoot}/${name}`);
        } catch (e) {
          if (!(e instanceof MetadataStoreError && e.code === "NoNode")) throw e;
        }
      });
      if (youngest !== undefined) {
        this.purgeNotBefore = youngest + this.expirationMs;
        return;
      }
    }
    // Every executed notification is gone; those written since are younger than `now`.
    this.purgeNotBefore = now + this.expirationMs;
  }
}
