// Runs the alert rules after every collector sample (and every failed sample): keeps which subjects
// fire, and on each change — a subject starts firing, or stops — writes an event to the alert history
// and POSTs it to the rule's webhook. Brokers ever seen per cluster are remembered for broker-down.

import type { Collector } from "../collector/collector.js";
import type { HistoryStore } from "../history/history-store.js";
import type { AlertRule } from "./alert-rules.js";
import { evaluate, type Firing } from "./evaluate.js";
import { type AlertEvent, deliver } from "./webhook.js";

export interface ActiveAlert extends Firing {
  readonly rule: string;
  readonly cluster: string;
  readonly since: number;
}

export class AlertManager {
  /** rule \0 cluster \0 subject → the firing alert. */
  private readonly active = new Map<string, ActiveAlert>();
  private readonly seenBrokers = new Map<string, Set<number>>();
  private queue: Promise<void> = Promise.resolve();

  constructor(
    readonly rules: readonly AlertRule[],
    private readonly collector: Collector,
    private readonly history: HistoryStore,
    private readonly now: () => number = Date.now,
  ) {
    if (rules.length === 0) return;
    collector.on("sample", (e: { cluster: string }) => this.enqueue(e.cluster));
    collector.on("error-sample", (e: { cluster: string }) => this.enqueue(e.cluster));
  }

  activeAlerts(): ActiveAlert[] {
    return [...this.active.values()].sort((a, b) => a.since - b.since);
  }

  /** Waits for the evaluations queued so far (tests, shutdown). */
  async settled(): Promise<void> {
    await this.queue;
  }

  private enqueue(cluster: string): void {
    this.queue = this.queue
      .then(() => this.check(cluster))
      .catch((e) => {
        process.stderr.write(`console: alert evaluation failed: ${(e as Error).message}\n`);
      });
  }

  private async check(alias: string): Promise<void> {
    const state = this.collector.clusters.get(alias);
    if (!state) return;
    const snapshot = state.lastError === undefined ? state.latest : undefined;
    const seen = this.seenBrokers.get(alias) ?? new Set<number>();
    this.seenBrokers.set(alias, seen);
    for (const id of snapshot?.brokerIds ?? []) seen.add(id);
    for (const rule of this.rules) {
      if (rule.cluster !== undefined && rule.cluster !== alias) continue;
      const firing = evaluate(rule, snapshot, seen);
      const prefix = `${rule.name}\u0000${alias}\u0000`;
      const now = new Set<string>();
      for (const f of firing) {
        const key = prefix + f.subject;
        now.add(key);
        if (this.active.has(key)) continue;
        this.active.set(key, { ...f, rule: rule.name, cluster: alias, since: this.now() });
        await this.emit(rule, alias, f, "firing");
      }
      for (const [key, a] of [...this.active]) {
        if (!key.startsWith(prefix) || now.has(key)) continue;
        this.active.delete(key);
        await this.emit(
          rule,
          alias,
          { subject: a.subject, value: a.value, message: `resolved: ${a.message}` },
          "resolved",
        );
      }
    }
  }

  private async emit(
    rule: AlertRule,
    cluster: string,
    f: Firing,
    state: "firing" | "resolved",
  ): Promise<void> {
    const event: AlertEvent = {
      ts: this.now(),
      rule: rule.name,
      type: rule.type,
      cluster,
      subject: f.subject,
      state,
      value: f.value,
      threshold: rule.threshold,
      message: f.message,
    };
    const delivery = rule.webhook ? await deliver(rule.webhook, event) : "no webhook";
    await this.history.alertEvent({ ...event, delivery });
  }
}
