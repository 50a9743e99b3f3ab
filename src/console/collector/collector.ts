// The collector: every console.sample.interval.ms, one sample per cluster (sample-cluster.ts), kept in
// memory as the latest snapshot, written to the history store, and announced to listeners (the
// Server-Sent Events stream). History older than the retention is purged once an hour. A cluster that
// cannot be reached keeps its last snapshot and reports the error; the next interval tries again.

import { EventEmitter } from "node:events";
import { AdminClient } from "../../client/admin/admin-client.js";
import type { ClusterConfig } from "../console-config.js";
import type { HistoryStore, Sample } from "../history/history-store.js";
import { sampleCluster } from "./sample-cluster.js";
import type { ClusterSnapshot } from "./snapshot.js";

const DAY_MS = 86_400_000;
const PURGE_EVERY_MS = 3_600_000;

export interface CollectorOptions {
  readonly clusters: readonly ClusterConfig[];
  readonly intervalMs: number;
  readonly retentionDays: number;
  readonly history: HistoryStore;
  readonly now?: () => number;
}

export interface ClusterState {
  readonly config: ClusterConfig;
  readonly admin: AdminClient;
  latest: ClusterSnapshot | undefined;
  lastError: string | undefined;
  samples: number;
}

export function toHistorySample(s: ClusterSnapshot): Sample {
  const sizes = new Map<string, { logSize: number; endOffsetSum: number }>();
  for (const o of s.offsets) {
    const t = sizes.get(o.topic) ?? { logSize: 0, endOffsetSum: 0 };
    if (o.endOffset >= 0) {
      t.endOffsetSum += o.endOffset;
      t.logSize += Math.max(0, o.endOffset - Math.max(0, o.startOffset));
    }
    sizes.set(o.topic, t);
  }
  return {
    cluster: s.alias,
    ts: s.ts,
    groups: s.groups.flatMap((g) =>
      g.partitions.map((p) => ({
        group: g.groupId,
        topic: p.topic,
        partition: p.partition,
        committedOffset: p.committedOffset ?? -1,
        logEndOffset: p.logEndOffset,
        lag: p.lag,
        lagMs: p.lagMs,
      })),
    ),
    topics: [...sizes].map(([topic, v]) => ({ topic, ...v })),
    brokers: s.brokerCounters
      .filter((b) => b.error === undefined)
      .map((b) => ({
        brokerId: b.brokerId,
        messagesIn: b.messagesIn,
        bytesIn: b.bytesIn,
        bytesOut: b.bytesOut,
        requests: b.requests,
      })),
  };
}

export class Collector extends EventEmitter {
  readonly clusters = new Map<string, ClusterState>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private lastPurge = 0;
  private readonly now: () => number;

  constructor(private readonly options: CollectorOptions) {
    super();
    this.now = options.now ?? Date.now;
    for (const c of options.clusters)
      this.clusters.set(c.alias, {
        config: c,
        admin: new AdminClient({
          bootstrapServers: c.bootstrapServers,
          clientId: `tributary-console-${c.alias}`,
          // A cluster that is down fails a sample within about an interval (5 to 30 s), not Kafka's 60 s.
          defaultApiTimeoutMs: Math.min(30_000, Math.max(5_000, options.intervalMs)),
          requestTimeoutMs: Math.min(30_000, Math.max(5_000, options.intervalMs)),
          connectTimeoutMs: 5_000,
        }),
        latest: undefined,
        lastError: undefined,
        samples: 0,
      });
  }

  get history(): HistoryStore {
    return this.options.history;
  }

  /** Samples now, then every interval (a sample still running delays the next one, never overlaps). */
  start(): void {
    const tick = (): void => {
      this.running = this.sampleAll().finally(() => {
        this.running = undefined;
        if (this.timer !== undefined) this.timer = setTimeout(tick, this.options.intervalMs);
      });
    };
    this.timer = setTimeout(tick, 0);
  }

  async sampleAll(): Promise<void> {
    await Promise.all([...this.clusters.values()].map((c) => this.sampleOne(c)));
    const now = this.now();
    if (now - this.lastPurge >= PURGE_EVERY_MS) {
      this.lastPurge = now;
      await this.options.history.purge(now - this.options.retentionDays * DAY_MS).catch((e) => {
        process.stderr.write(`console: history purge failed: ${(e as Error).message}\n`);
      });
    }
  }

  private async sampleOne(c: ClusterState): Promise<void> {
    try {
      const snapshot = await sampleCluster(c.config, c.admin, this.now);
      await this.options.history.record(toHistorySample(snapshot));
      c.latest = snapshot;
      c.lastError = undefined;
      c.samples++;
      this.emit("sample", { cluster: c.config.alias, ts: snapshot.ts, samples: c.samples });
    } catch (e) {
      const line = (e as Error).message.split("\n")[0];
      if (c.lastError !== line)
        process.stderr.write(`console: sampling cluster ${c.config.alias} failed: ${line}\n`);
      c.lastError = line;
      this.emit("error-sample", { cluster: c.config.alias, error: line });
    }
  }

  async close(): Promise<void> {
    this.emit("close");
    const t = this.timer;
    this.timer = undefined;
    if (t) clearTimeout(t);
    // Closing the clients first ends a sample still waiting on a cluster that does not answer.
    await Promise.all([...this.clusters.values()].map((c) => c.admin.close().catch(() => {})));
    await this.running?.catch(() => {});
  }
}
