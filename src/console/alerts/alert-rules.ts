// Alert rules from the console's configuration, one block of keys per rule name:
//   console.alert.<name>.type=group-lag | group-lag-seconds | under-replicated | offline | broker-down
//   console.alert.<name>.threshold=<number>   fires above it (lag in messages or seconds, partitions);
//                                             default 0; not used by broker-down
//   console.alert.<name>.group=<regex>        group-lag rules: which groups (default every group)
//   console.alert.<name>.cluster=<alias>      default every cluster
//   console.alert.<name>.webhook=http://…     where firing and resolved alerts are POSTed as JSON
// A bad rule is one line naming the key.

import { ConfigError } from "../console-config.js";

export const ALERT_TYPES = [
  "group-lag",
  "group-lag-seconds",
  "under-replicated",
  "offline",
  "broker-down",
] as const;
export type AlertType = (typeof ALERT_TYPES)[number];

export interface AlertRule {
  readonly name: string;
  readonly type: AlertType;
  readonly threshold: number;
  readonly group: RegExp | undefined;
  readonly cluster: string | undefined;
  readonly webhook: string | undefined;
}

const KEY = /^console\.alert\.([^.]+)\.(type|threshold|group|cluster|webhook)$/;

export function alertRulesFrom(props: Record<string, string>, aliases: readonly string[]): AlertRule[] {
  const found = new Map<string, Record<string, string>>();
  for (const [k, v] of Object.entries(props)) {
    const m = KEY.exec(k);
    if (!m) continue;
    const r = found.get(m[1]) ?? {};
    r[m[2]] = v.trim();
    found.set(m[1], r);
  }
  return [...found].map(([name, r]): AlertRule => {
    const key = (f: string) => `console.alert.${name}.${f}`;
    const type = r.type as AlertType;
    if (!ALERT_TYPES.includes(type))
      throw new ConfigError(`${key("type")}: '${r.type ?? ""}' is not one of ${ALERT_TYPES.join(", ")}`);
    const threshold = r.threshold === undefined ? 0 : Number(r.threshold);
    if (!Number.isFinite(threshold) || threshold < 0 || r.threshold === "")
      throw new ConfigError(`${key("threshold")}: '${r.threshold}' is not a number ≥ 0`);
    let group: RegExp | undefined;
    if (r.group !== undefined) {
      if (type !== "group-lag" && type !== "group-lag-seconds")
        throw new ConfigError(`${key("group")}: only group-lag and group-lag-seconds rules name groups`);
      try {
        group = new RegExp(`^(?:${r.group})$`);
      } catch {
        throw new ConfigError(`${key("group")}: '${r.group}' is not a regular expression`);
      }
    }
    if (r.cluster !== undefined && !aliases.includes(r.cluster))
      throw new ConfigError(`${key("cluster")}: no cluster with alias '${r.cluster}'`);
    if (r.webhook !== undefined) {
      let ok = false;
      try {
        ok = ["http:", "https:"].includes(new URL(r.webhook).protocol);
      } catch {}
      if (!ok) throw new ConfigError(`${key("webhook")}: '${r.webhook}' is not an http:// or https:// URL`);
    }
    return { name, type, threshold, group, cluster: r.cluster, webhook: r.webhook };
  });
}
